/* close.c - sion_generic_parclose, one function per step of doc/parallel.md's
 * close table. Write: sync_step (local: the task's data and block table,
 * detach), counts_step (L gather of par_wire_ccount), sizes_step (L gatherv
 * of the block sizes), mapping_step (multi-file: G gather of par_wire_cmap to
 * file 0's master), tail_step (masters write META2 and the header), G agree.
 * Read: detach, G agree. The per-call context (ctx.h) carries the first
 * failure; every task makes every exchange call. */
#include "open_int.h"
#include "ctx.h"
#include "../sid/sid.h"
#include "../core/endian.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Look up a parallel (non-mapped) sid; NULL with a message otherwise. */
core_container *par_open_lookup(int sid, const char *call, int mapped)
{
    core_container *c = api_lookup(sid, call);
    if (!c)
        return NULL;
    par_state *p = c->par;
    if (c->dup) {
        core_fail(SHEAF_E_ARG, "%s: sid %d is a duplicate (sion_dup); release it with sion_dedup", call, sid);
        return NULL;
    }
    if (!p) {
        core_fail(SHEAF_E_ARG, "%s: sid %d was opened with the serial API; close it with sion_close", call, sid);
        return NULL;
    }
    if (p->mapped != mapped) {
        core_fail(SHEAF_E_ARG, "%s: sid %d was opened with %s", call, sid,
                  p->mapped ? "a mapped open: use the mapped close" : "a non-mapped open: use the non-mapped close");
        return NULL;
    }
    return c;
}

/* Master of a checksummed file at close: flat holds, per task, its block
 * sizes then its block checksums; keep the sizes in flat (task order, as
 * core_par_write_tail_at wants them) and the checksums in meta.crcs. */
static int split_checksums(par_state *p, int64_t *flat, const int64_t *bcount)
{
    int64_t total = 0;
    for (int t = 0; t < p->lsize; t++)
        total += bcount[t];
    free(p->meta.crcs);
    p->meta.crcs = malloc((size_t)(total ? total : 1) * sizeof *p->meta.crcs);
    if (!p->meta.crcs)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory for the checksums", p->fname);
    p->meta.ncrcs = total;
    int64_t in = 0, out = 0;
    for (int t = 0; t < p->lsize; t++) {
        for (int64_t b = 0; b < bcount[t]; b++)
            flat[out + b] = flat[in + b];
        for (int64_t b = 0; b < bcount[t]; b++)
            p->meta.crcs[out + b] = (uint32_t)flat[in + bcount[t] + b];
        in += 2 * bcount[t];
        out += bcount[t];
    }
    return 0;
}

/* One task's write close: the context and what the steps hand on. */
typedef struct wclose {
    par_ctx *x;
    par_state *p;
    int ck;          /* blocks carry checksums (decided by the master at open) */
    int64_t nb, *bs; /* this task's block table: nb sizes, then nb checksums when ck */
    /* master of a file */
    int mfail;       /* it cannot write the file's metadata */
    int64_t *bcount; /* [lsize] block counts as announced */
    int *counts;     /* [lsize] elements each task sends in the gatherv */
    int64_t *flat;   /* the gathered block tables */
    int32_t *map;    /* file 0's master of a multi-file set: the task mapping */
    par_rootmem rm;  /* the master's bcount, counts, flat (rootbuf.c) */
} wclose;

static void master_fail(wclose *w, int code, const char *what)
{
    if (!w->mfail)
        par_ctx_fail(w->x, code, "%s: %s on the master of file %d", w->x->fname, what, w->p->filenumber);
    w->mfail = 1;
}

/* Step "sync" (local): the task's data out, its block table copied, detach. */
static void sync_step(wclose *w, core_container *c)
{
    par_ctx *x = w->x;
    par_ctx_step(x, "sync");
    par_ctx_take(x, core_sync(c));
    if (par_ctx_ok(x) && w->ck)
        par_ctx_take(x, core_cksum_finish_task(c, 0));
    int64_t nb = c->tasks[0].nblocks;
    if ((w->bs = malloc((size_t)(nb ? nb : 1) * (w->ck ? 2 : 1) * sizeof *w->bs))) {
        memcpy(w->bs, c->tasks[0].bsize, (size_t)nb * sizeof *w->bs);
        for (int64_t b = 0; w->ck && b < nb; b++)
            w->bs[nb + b] = c->tasks[0].crc_on ? c->tasks[0].bcrc[b] : 0;
    } else {
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    }
    par_ctx_take(x, core_detach_task(c, NULL, NULL));
    w->nb = w->bs ? nb : 0;
    if (w->nb > INT32_MAX / 2) { /* more than one gatherv count can carry: this task fails and sends none */
        par_ctx_fail(x, SHEAF_E_ARG, "%s: %lld blocks: more than a parallel close can gather (%d)", x->fname,
                     (long long)w->nb, INT32_MAX / 2);
        free(w->bs);
        w->bs = NULL;
        w->nb = 0;
    }
}

/* Step "counts" (L gather): block count and status to the master, which
 * learns which tasks failed and how much each sends next. */
static void counts_step(wclose *w)
{
    par_ctx *x = w->x;
    par_ctx_step(x, "counts");
    int ls = x->lsize;
    par_wire_ccount me = {w->nb, x->rc};
    int64_t buf[PAR_WIRE_CCOUNT_N], *all = NULL;
    par_wire_ccount_pack(&me, buf);
    if (x->lrank == 0) { /* out of memory: the call fails, but the gatherv below gets the announced counts */
        all = par_rootmem_alloc(&w->rm, (size_t)ls * sizeof buf, "counts");
        w->counts = par_rootmem_alloc(&w->rm, (size_t)ls * sizeof *w->counts, "counts: elements");
        w->bcount = par_rootmem_alloc(&w->rm, (size_t)ls * sizeof *w->bcount, "counts: blocks");
        if (!all || !w->counts || !w->bcount || w->rm.short_of_memory)
            master_fail(w, SHEAF_E_NOMEM, "out of memory");
    }
    if (par_ctx_gather(x, 1, buf, all, _SION_INT64, PAR_WIRE_CCOUNT_N, 0) && x->lrank == 0)
        w->mfail = 1;
    int64_t total = 0;
    for (int t = 0; x->lrank == 0 && all && w->counts && w->bcount && t < ls; t++) {
        par_wire_ccount e = {0, SHEAF_E_IO};
        if (par_wire_ccount_unpack(&e, all + PAR_WIRE_CCOUNT_N * t, PAR_WIRE_CCOUNT_N))
            master_fail(w, SHEAF_E_FORMAT, "a bad close count"); /* the gatherv below still takes what was announced */
        w->bcount[t] = e.nblocks;
        w->counts[t] = (int)all[PAR_WIRE_CCOUNT_N * t] * (w->ck ? 2 : 1); /* as each task announced it */
        total += w->counts[t];
        if (e.status)
            par_ctx_fail(x, (int)e.status, "%s: local task %d of file %d failed writing its data (see its message)",
                         x->fname, t, w->p->filenumber);
    }
    par_rootmem_free(&w->rm, all);
    if (x->lrank == 0 && w->counts &&
        !(w->flat = par_rootmem_alloc(&w->rm, (size_t)(total > 0 ? total : 1) * sizeof *w->flat, "sizes"))) {
        master_fail(w, SHEAF_E_NOMEM, "out of memory"); /* the gatherv's counts disagree (doc/parallel.md, "Limits") */
        memset(w->counts, 0, (size_t)ls * sizeof *w->counts);
    }
    if (w->rm.short_of_memory)
        master_fail(w, SHEAF_E_NOMEM, "out of memory");
}

/* Step "sizes" (L gatherv): the block tables (sizes, then checksums) to the master. */
static void sizes_step(wclose *w)
{
    par_ctx *x = w->x;
    par_ctx_step(x, "sizes");
    int64_t dummy[1];
    if (par_ctx_gatherv(x, 1, w->bs ? w->bs : dummy, w->flat ? w->flat : dummy, _SION_INT64, w->counts,
                        w->bs ? (int)w->nb * (w->ck ? 2 : 1) : 0, 0) &&
        x->lrank == 0)
        w->mfail = 1;
    free(w->bs);
    w->bs = NULL;
    if (x->lrank == 0 && w->ck && w->flat && w->bcount && !w->mfail) { /* [sizes, checksums] per task -> two tables */
        int rc = split_checksums(w->p, w->flat, w->bcount);
        if (rc) {
            par_ctx_take(x, rc);
            w->mfail = 1;
        }
    }
}

/* Step "mapping" (G gather, multi-file sets only): every task's place to the
 * master of file 0, which writes the set's task mapping. */
static void mapping_step(wclose *w)
{
    par_ctx *x = w->x;
    par_state *p = w->p;
    par_ctx_step(x, "mapping");
    if (p->nfiles <= 1)
        return;
    par_wire_cmap me = {p->filenumber, p->lrank};
    int32_t buf[PAR_WIRE_CMAP_N];
    par_wire_cmap_pack(&me, buf);
    int root = p->grank == p->file0master;
    if (root && !(w->map = par_root_malloc((size_t)p->gsize * sizeof buf, "mapping")))
        master_fail(w, SHEAF_E_NOMEM, "out of memory for the task mapping");
    if (par_ctx_gather(x, 0, buf, w->map, _SION_INT32, PAR_WIRE_CMAP_N, p->file0master) && root)
        w->mfail = 1;
    for (int g = 0; w->map && g < p->gsize; g++) {
        par_wire_cmap e;
        if (par_wire_cmap_unpack(&e, w->map + PAR_WIRE_CMAP_N * g, PAR_WIRE_CMAP_N) || e.filenumber >= p->nfiles) {
            master_fail(w, SHEAF_E_FORMAT, "a bad task mapping entry");
            break;
        }
    }
}

/* Step "tail" (masters): META2 (+ the mapping) and the header, written even
 * when a task failed, so that what the others wrote stays readable. */
static void tail_step(wclose *w)
{
    par_ctx *x = w->x;
    par_state *p = w->p;
    par_ctx_step(x, "tail");
    if (x->lrank != 0 || w->mfail || !p->have_meta)
        return;
    char *path = par_member_path(&p->api, p->fname, p->filenumber);
    int rc = path ? core_par_write_tail_at(path, p->fname, &p->meta, w->bcount, w->flat,
                                           p->filenumber == 0 && p->nfiles > 1 ? w->map : NULL, p->gsize)
                  : SHEAF_E_NOMEM;
    free(path);
    par_ctx_take(x, rc);
}

/* The write close of one task (c freed); its status before the agreement. */
static void write_close(par_ctx *x, par_state *p, core_container *c)
{
    wclose w;
    memset(&w, 0, sizeof w);
    par_rootmem_init(&w.rm);
    w.p = p;
    w.ck = p->mode.checksum; /* decided by the master at open: every task sends sizes + checksums */
    x->lcomm = p->lcomm;
    x->lrank = p->lrank;
    x->lsize = p->lsize;
    w.x = x;
    sync_step(&w, c);
    counts_step(&w);
    sizes_step(&w);
    mapping_step(&w);
    tail_step(&w);
    free(w.bs);
    par_rootmem_free(&w.rm, w.bcount);
    par_rootmem_free(&w.rm, w.counts);
    par_rootmem_free(&w.rm, w.flat);
    par_rootmem_end(&w.rm);
    free(w.map);
}

int sion_generic_parclose(int sid)
{
    core_clear_error();
    core_container *c = par_open_lookup(sid, "sion_generic_parclose", 0);
    if (!c) { /* SIONlib: SION_ID_NOT_VALID for a sid that is not open (e.g. closed already) */
        core_report_error_rc(-1, SION_ID_NOT_VALID);
        return SION_ID_NOT_VALID;
    }
    par_state *p = c->par;
    api_lock_ticks(5); /* SIONlib's close: 7 table operations per task, sheaf's 2 (open.c) */
    par_ctx x;
    par_ctx_init(&x, &p->api, p->fname, "sion_generic_parclose", p->gcomm, p->grank, p->gsize);
    if (p->write && p->nbuddy) /* the copies first; agreed below */
        par_buddy_close_write(&x, p);
    par_buddy_free(p);
    api_release(sid);
    c->par = NULL;
    if (p->write) {
        write_close(&x, p, c);
    } else {
        par_ctx_step(&x, "close");
        par_ctx_take(&x, core_close(c));
    }
    par_ctx_step(&x, "agree");
    int arc = par_ctx_agree(&x);
    int grank = p->grank;
    par_open_state_drop(p);
    if (arc) {
        par_ctx_restore(&x);
        core_report_error(grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
