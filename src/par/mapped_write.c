/* mapped_write.c - the write side of the mapped open and close (m logical
 * tasks on n processes): rank 0 creates and finishes every file. One
 * function per step of doc/parallel.md's mapped tables, on the per-call
 * context (ctx.h); the messages are wire.h's par_wire_m*.
 *   open : check (local), counts (G gather + G bcast), records (G gatherv;
 *          rank 0 creates the files), verdict (G bcast), layout (G scatterv),
 *          attach, agree
 *   close: sync (local), counts (G gather + G bcast: tasks and block entries
 *          in one head), block counts (G gatherv), block sizes (G gatherv;
 *          rank 0 writes every file's tail), agree (mapped.c) */
#include "mapped_int.h"
#include "open_int.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

/* ---- rank 0: the files ----------------------------------------------------- */

/* Rank 0: check the records (each global rank once, files and local ranks
 * in range, each (file, lrank) once); fills cnt (tasks per file), base
 * (prefix sums) and byslot (record index by file base + lrank). */
static int root_check(const char *fname, const mapped_root *r, int64_t *cnt, int64_t *base, int64_t *byslot)
{
    int64_t n = r->ntotal;
    int nf = r->nfiles;
    unsigned char *gseen = calloc((size_t)n, 1);
    if (!gseen)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
    int rc = 0;
    for (int64_t i = 0; i < n && !rc; i++) {
        const par_wire_mwrec *e = &r->rec[i];
        if (e->grank < 0 || e->grank >= n || gseen[e->grank])
            rc = core_fail(SHEAF_E_ARG, "%s: global rank %lld is out of range 0..%lld or given twice", fname,
                           (long long)e->grank, (long long)n - 1);
        else if (e->filenumber < 0 || e->filenumber >= nf)
            rc = core_fail(SHEAF_E_ARG, "%s: task %lld is mapped to file %lld, there are %d files", fname,
                           (long long)e->grank, (long long)e->filenumber, nf);
        else {
            gseen[e->grank] = 1;
            cnt[e->filenumber]++;
        }
    }
    free(gseen);
    for (int k = 0; k < nf && !rc; k++) {
        if (!cnt[k])
            rc = core_fail(SHEAF_E_ARG, "%s: physical file %d has no tasks", fname, k);
        base[k + 1] = base[k] + cnt[k];
    }
    for (int64_t i = 0; i < n && !rc; i++)
        byslot[i] = -1;
    for (int64_t i = 0; i < n && !rc; i++) {
        const par_wire_mwrec *e = &r->rec[i];
        int64_t f = e->filenumber;
        if (e->lrank < 0 || e->lrank >= cnt[f] || byslot[base[f] + e->lrank] >= 0)
            rc = core_fail(SHEAF_E_ARG, "%s: task %lld: local rank %lld in file %lld is out of range 0..%lld or taken",
                           fname, (long long)e->grank, (long long)e->lrank, (long long)f, (long long)cnt[f] - 1);
        else
            byslot[base[f] + e->lrank] = i;
    }
    return rc;
}

/* Rank 0: create file k (its m tasks: records byslot[0..m-1]) and pack their layouts into lay. */
static int root_create_file(const par_api *api, const char *fname, const core_mode *md, mapped_root *r, int k,
                            int64_t m, const int64_t *byslot, int32_t fsb, int64_t *lay)
{
    int64_t *cs = malloc((size_t)m * sizeof *cs), *gr = malloc((size_t)m * sizeof *gr);
    char *path = par_member_path(api, fname, k);
    int rc = (!cs || !gr || !path) ? core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname) : 0;
    for (int64_t l = 0; l < m && !rc; l++) {
        cs[l] = r->rec[byslot[l]].chunksize;
        gr[l] = r->rec[byslot[l]].grank;
    }
    if (!rc)
        rc = core_par_create_file_at(path, fname, md, (int32_t)m, cs, gr, fsb, k, r->nfiles, &r->meta[k]);
    for (int64_t l = 0; l < m && !rc; l++) {
        par_wire_mwlayout o = {r->meta[k].starts[l], r->meta[k].chunksizes[l], r->meta[k].globalskip};
        par_wire_mwlayout_pack(&o, lay + PAR_WIRE_MWLAYOUT_N * byslot[l]);
    }
    free(cs);
    free(gr);
    free(path);
    return rc;
}

/* Rank 0: validate the records, create the files, fill lay (one layout per record). */
static int root_create(const par_api *api, const char *fname, const core_mode *md, mapped_root *r, int32_t *fsb,
                       int64_t *lay)
{
    int64_t n = r->ntotal;
    int nf = r->nfiles;
    if (n < 1)
        return core_fail(SHEAF_E_ARG, "%s: mapped open with no logical tasks", fname);
    if (nf > n)
        return core_fail(SHEAF_E_ARG, "%s: %d files for %lld logical tasks", fname, nf, (long long)n);
    int64_t *cnt = calloc((size_t)nf, sizeof *cnt), *base = calloc((size_t)nf + 1, sizeof *base);
    int64_t *byslot = malloc((size_t)n * sizeof *byslot); /* record index by (file, lrank) */
    r->meta = calloc((size_t)nf, sizeof *r->meta);
    int rc = (!cnt || !base || !byslot || !r->meta) ? core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname)
                                                    : root_check(fname, r, cnt, base, byslot);
    for (int k = 0; r->meta && k < nf; k++)
        r->meta[k].mapping_size = -1;
    if (!rc && *fsb <= 0) {
        char *p0 = par_member_path(api, fname, 0);
        *fsb = p0 ? core_fsblksize_for(p0) : SION_DEFAULT_FSBLOCKSIZE;
        free(p0);
    }
    for (int k = 0; k < nf && !rc; k++)
        rc = root_create_file(api, fname, md, r, k, cnt[k], byslot + base[k], *fsb, lay);
    free(cnt);
    free(base);
    free(byslot);
    return rc;
}

/* ---- the open --------------------------------------------------------------- */

/* One process's mapped write open: the context and what the steps hand on. */
typedef struct mwopen {
    par_ctx x;
    const mapped_args *a;
    int nlocal, nfiles;
    mapped_root *r; /* rank 0 */
    int64_t *raw;   /* rank 0: the gathered records, packed */
    mapped_counts mc;
    par_wire_mwverdict v;
    par_wire_mwlayout *lay; /* [nlocal] */
    core_container *c;
    par_state *p;
    int sid;
} mwopen;

static int alloc_records(void *actx, int64_t total, int64_t blocks)
{
    (void)blocks;
    mwopen *w = actx;
    w->r->ntotal = total;
    w->r->rec = calloc((size_t)(total ? total : 1), sizeof *w->r->rec);
    w->raw = malloc((size_t)(total ? total : 1) * PAR_WIRE_MWREC_N * sizeof *w->raw);
    return w->r->rec && w->raw
               ? 0
               : core_fail(SHEAF_E_NOMEM, "out of memory on task 0 for %lld task records", (long long)total);
}

/* Step "check" (local): the arguments of this process. */
static void check_step(mwopen *w)
{
    const mapped_args *a = w->a;
    par_ctx *x = &w->x;
    par_ctx_take(x, a->mode_rc);
    par_ctx_step(x, "check");
    int nl = par_ctx_ok(x) ? *a->nlocaltasks : 0;
    if (par_ctx_ok(x) && (nl < 0 || (nl > 0 && (!a->globalranks || !*a->globalranks || !a->chunksizes ||
                                                !*a->chunksizes || !a->mapping_filenrs || !*a->mapping_filenrs ||
                                                !a->mapping_lranks || !*a->mapping_lranks))))
        par_ctx_fail(x, SHEAF_E_ARG,
                     "%s: a mapped write needs nlocaltasks >= 0 and the arrays globalranks, "
                     "chunksizes, mapping_filenrs and mapping_lranks",
                     x->fname);
    if (par_ctx_ok(x) && *a->numFiles < 1)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: a mapped write needs *numFiles > 0 (got %d)", x->fname, *a->numFiles);
    if (par_ctx_ok(x) && a->fsblksize)
        par_ctx_take(x, core_fsblksize_check(x->fname, *a->fsblksize));
    for (int i = 0; i < nl && par_ctx_ok(x); i++)
        if ((*a->chunksizes)[i] < 0 || (*a->chunksizes)[i] > INT64_MAX / 4)
            par_ctx_fail(x, SHEAF_E_ARG, "%s: invalid chunk size %lld for logical task %d", x->fname,
                         (long long)(*a->chunksizes)[i], (*a->globalranks)[i]);
    w->nlocal = par_ctx_ok(x) ? nl : 0;
    w->nfiles = par_ctx_ok(x) ? *a->numFiles : 0;
    if (x->grank == 0 && !(w->r = calloc(1, sizeof *w->r)))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
}

/* Step "records" (G gatherv): each logical task's record to rank 0, which
 * creates the files ("create"). Returns rank 0's layouts (NULL elsewhere). */
static int64_t *records_step(mwopen *w)
{
    par_ctx *x = &w->x;
    const mapped_args *a = w->a;
    par_ctx_step(x, "records");
    int64_t *mine = malloc((size_t)(w->nlocal ? w->nlocal : 1) * PAR_WIRE_MWREC_N * sizeof *mine), dummy[1];
    int n = mine ? w->nlocal : 0;
    if (!mine)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    for (int i = 0; i < n; i++) {
        par_wire_mwrec e = {(*a->globalranks)[i], (*a->chunksizes)[i], (*a->mapping_filenrs)[i],
                            (*a->mapping_lranks)[i]};
        par_wire_mwrec_pack(&e, mine + PAR_WIRE_MWREC_N * i);
    }
    int *cnt = par_mapped_scaled_counts(w->mc.pcount, x->gsize, PAR_WIRE_MWREC_N, 1, x->grank);
    if (x->grank == 0 && !cnt)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname); /* receives nothing; the verdict fails */
    par_ctx_gatherv(x, 0, mine ? mine : dummy, w->raw ? w->raw : dummy, _SION_INT64, cnt, n * PAR_WIRE_MWREC_N, 0);
    free(cnt);
    free(mine);
    if (x->grank != 0)
        return NULL;
    par_ctx_step(x, "create");
    mapped_root *r = w->r;
    r->pcount = w->mc.pcount;
    w->mc.pcount = NULL;
    r->nfiles = w->nfiles;
    for (int64_t i = 0; i < r->ntotal && par_ctx_ok(x); i++)
        par_ctx_take(x, par_wire_mwrec_unpack(&r->rec[i], w->raw + PAR_WIRE_MWREC_N * i, PAR_WIRE_MWREC_N));
    int64_t *lay = malloc((size_t)(r->ntotal ? r->ntotal : 1) * PAR_WIRE_MWLAYOUT_N * sizeof *lay);
    if (!lay)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory on task 0", x->fname);
    int32_t fsb = a->fsblksize ? *a->fsblksize : -1;
    if (par_ctx_ok(x))
        par_ctx_take(x, root_create(x->api, x->fname, a->md, r, &fsb, lay));
    w->v = (par_wire_mwverdict){x->rc, fsb, w->nfiles, r->ntotal};
    return lay;
}

/* Step "verdict" (G bcast): rank 0's verdict on the set. Returns 1 when it is OK. */
static int verdict_step(mwopen *w)
{
    return par_mapped_verdict_step(&w->x, &par_wire_mwverdict_msg, &w->v, &w->v.status, "mapped open");
}

/* Step "layout" (G scatterv): each logical task's place in its file. */
static void layout_step(mwopen *w, int64_t *lay, int ok)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "layout");
    int n = ok ? w->nlocal : 0;
    int64_t *mine = malloc((size_t)(w->nlocal ? w->nlocal : 1) * PAR_WIRE_MWLAYOUT_N * sizeof *mine), dummy[1];
    int *cnt =
        par_mapped_scaled_counts(x->grank == 0 ? w->r->pcount : NULL, x->gsize, PAR_WIRE_MWLAYOUT_N, ok, x->grank);
    par_ctx_scatterv(x, 0, mine ? mine : dummy, lay ? lay : dummy, _SION_INT64, cnt, mine ? n * PAR_WIRE_MWLAYOUT_N : 0,
                     0);
    free(cnt);
    free(lay);
    if (!mine)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    w->lay = calloc((size_t)(w->nlocal ? w->nlocal : 1), sizeof *w->lay);
    if (!w->lay)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    for (int i = 0; i < n && par_ctx_ok(x); i++)
        par_ctx_take(x, par_wire_mwlayout_unpack(&w->lay[i], mine + PAR_WIRE_MWLAYOUT_N * i, PAR_WIRE_MWLAYOUT_N));
    free(mine);
}

/* Step "attach" (local): this process's logical tasks, its sid. */
static void attach_step(mwopen *w)
{
    par_ctx *x = &w->x;
    const mapped_args *a = w->a;
    par_ctx_step(x, "attach");
    int n = w->nlocal;
    core_attach_spec *sp = par_ctx_ok(x) ? calloc((size_t)(n ? n : 1), sizeof *sp) : NULL;
    char **paths = sp ? calloc((size_t)(n ? n : 1), sizeof *paths) : NULL;
    if (par_ctx_ok(x) && !paths)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    for (int i = 0; i < n && par_ctx_ok(x); i++) {
        if (!(paths[i] = par_member_path(x->api, x->fname, (*a->mapping_filenrs)[i])))
            par_ctx_take(x, SHEAF_E_NOMEM);
        sp[i] = (core_attach_spec){
            paths[i], w->lay[i].start, w->lay[i].chunksize, w->lay[i].globalskip, (*a->globalranks)[i], 0, NULL, NULL};
    }
    if (par_ctx_ok(x))
        par_ctx_take(x, par_mapped_attach_own(&w->c, x->fname, a->md, 1, n, sp));
    if (par_ctx_ok(x) && !(w->p = par_mapped_state_new(x, a->md, 1, n, (int)w->v.nfiles, (int32_t)w->v.fsblksize)))
        par_ctx_take(x, SHEAF_E_NOMEM);
    if (par_ctx_ok(x)) {
        w->p->root = w->r;
        for (int i = 0; i < n; i++)
            par_label_task(w->c, i, (*a->mapping_filenrs)[i], (*a->mapping_lranks)[i], w->p->nfiles);
        w->c->par = w->p;
        w->c->fsblksize = w->p->fsblksize;
        if ((w->sid = api_register(w->c)) < 0)
            par_ctx_take(x, w->sid);
    }
    for (int i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    free(sp);
}

/* Step "agree": the sid on every process, or the agreed failure. */
static int agree_step(mwopen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "agree");
    free(w->lay);
    if (par_ctx_agree(x)) {
        par_open_undo(w->sid, w->c, 0, NULL);
        if (w->p)
            w->p->root = NULL;
        par_state_free(w->p);
        par_mapped_root_free(w->r);
        return par_ctx_restore(x);
    }
    /* the caller's chunk sizes stay as given: SIONlib 1.7.6 does not write the aligned sizes back (checked) */
    if (w->a->fsblksize)
        *w->a->fsblksize = (int32_t)w->v.fsblksize;
    if (w->a->fileptr)
        *w->a->fileptr = w->c->nfiles > 0 ? w->c->files[0].f.fp : NULL;
    return w->sid;
}

int par_mapped_write(const mapped_args *a)
{
    mwopen w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.sid = -1;
    par_ctx_init(&w.x, a->api, a->fname, "sion_generic_paropen_mapped", a->gcomm, a->grank, a->gsize);
    check_step(&w);
    par_wire_mhead h = {
        w.nlocal, 0, 0, {1, w.nfiles, a->fsblksize && *a->fsblksize > 0 ? *a->fsblksize : -1, a->md->keyval}};
    if (par_mapped_count_step(&w.x, &h, 1, INT32_MAX / PAR_WIRE_MWREC_N, alloc_records, &w, &w.mc)) {
        par_mapped_counts_free(&w.mc);
        par_mapped_root_free(w.r);
        free(w.raw);
        return par_ctx_restore(&w.x);
    }
    int64_t *lay = records_step(&w);
    free(w.raw);
    par_mapped_counts_free(&w.mc);
    int ok = verdict_step(&w);
    layout_step(&w, lay, ok);
    attach_step(&w);
    return agree_step(&w);
}

/* ---- the close ------------------------------------------------------------- */

/* Rank 0: file k's block table out of the gathered ones, and its tail. */
static int root_finish_file(const par_api *api, const char *fname, mapped_root *r, int k, const int64_t *slot,
                            const int64_t *off, const int64_t *allnb, const int64_t *allbs, const int32_t *map)
{
    int64_t m = r->meta[k].ntasks, tot = 0;
    for (int64_t l = 0; l < m; l++)
        tot += allnb[slot[l]];
    int64_t *bc = malloc((size_t)(m > 0 ? m : 1) * sizeof *bc);
    int64_t *flat = malloc((size_t)(tot > 0 ? tot : 1) * sizeof *flat);
    char *path = par_member_path(api, fname, k);
    int rc = (!bc || !flat || !path) ? core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname) : 0;
    for (int64_t l = 0, q = 0; l < m && !rc; l++) {
        int64_t i = slot[l];
        bc[l] = allnb[i];
        memcpy(flat + q, allbs + off[i], (size_t)allnb[i] * sizeof *flat);
        q += allnb[i];
    }
    if (!rc)
        rc = core_par_write_tail_fill(path, fname, &r->meta[k], bc, flat, k == 0 ? map : NULL, (int32_t)r->ntotal,
                                      -1); /* unused block entries: -1, as SIONlib's mapped close */
    free(bc);
    free(flat);
    free(path);
    return rc;
}

/* Rank 0: write every file's block table (and file 0's mapping). allnb: the
 * block count of each logical task, allbs: their block sizes, both in gather
 * order (process by process, each process's tasks in its order). */
static int root_finish(const par_api *api, const char *fname, mapped_root *r, const int64_t *allnb,
                       const int64_t *allbs)
{
    int64_t n = r->ntotal;
    int nf = r->nfiles, rc = 0;
    int64_t *off = malloc((size_t)n * sizeof *off);   /* record -> first block size */
    int64_t *slot = malloc((size_t)n * sizeof *slot); /* (file base + lrank) -> record */
    int64_t *base = calloc((size_t)nf + 1, sizeof *base);
    int32_t *map = malloc((size_t)n * 2 * sizeof *map); /* file 0 gets it even alone, as SIONlib */
    if (!off || !slot || !base || !map)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
    for (int64_t i = 0, k = 0; i < n && !rc; i++) {
        off[i] = k;
        k += allnb[i];
    }
    for (int k = 0; k < nf && !rc; k++)
        base[k + 1] = base[k] + r->meta[k].ntasks;
    for (int64_t i = 0; i < n && !rc; i++) {
        const par_wire_mwrec *e = &r->rec[i];
        slot[base[e->filenumber] + e->lrank] = i;
        map[2 * e->grank] = (int32_t)e->filenumber;
        map[2 * e->grank + 1] = (int32_t)e->lrank;
    }
    for (int k = 0; k < nf && base && off && slot && map; k++) { /* every file is finished even when one fails */
        int r2 = root_finish_file(api, fname, r, k, slot + base[k], off, allnb, allbs, map);
        if (!rc)
            rc = r2;
    }
    free(off);
    free(slot);
    free(base);
    free(map);
    return rc;
}

/* One process's mapped write close. */
typedef struct mwclose {
    par_ctx *x;
    par_state *p;
    int nl;
    int64_t nblk, *nbs, *bs; /* its block counts (nl) and sizes (nblk) */
    int64_t *allnb, *allbs;  /* rank 0 */
    mapped_counts mc;
} mwclose;

static int alloc_close(void *actx, int64_t total, int64_t blocks)
{
    mwclose *w = actx;
    mapped_root *r = w->p->root;
    if (!r || total != r->ntotal)
        return core_fail(SHEAF_E_ARG, "mapped close: %lld logical tasks report, %lld were opened", (long long)total,
                         (long long)(r ? r->ntotal : 0));
    w->allnb = malloc((size_t)(total ? total : 1) * sizeof *w->allnb);
    w->allbs = malloc((size_t)(blocks ? blocks : 1) * sizeof *w->allbs);
    return w->allnb && w->allbs ? 0 : core_fail(SHEAF_E_NOMEM, "out of memory on task 0");
}

/* Step "sync" (local): the data out, the block tables copied, the files closed (c freed). */
static void sync_step(mwclose *w, core_container *c)
{
    par_ctx *x = w->x;
    par_ctx_step(x, "sync");
    par_ctx_take(x, c->ntasks > 0 ? core_sync(c) : 0); /* a process may own no task */
    for (int i = 0; i < c->ntasks; i++)
        w->nblk += c->tasks[i].nblocks;
    size_t nt = c->ntasks > 0 ? (size_t)c->ntasks : 1;
    w->nbs = malloc(nt * sizeof *w->nbs);
    w->bs = malloc((size_t)(w->nblk ? w->nblk : 1) * sizeof *w->bs);
    if (!w->nbs || !w->bs)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    for (int i = 0, k = 0; i < c->ntasks && par_ctx_ok(x); i++) {
        w->nbs[i] = c->tasks[i].nblocks;
        for (int64_t b = 0; b < c->tasks[i].nblocks; b++)
            w->bs[k++] = c->tasks[i].bsize[b];
    }
    for (int k = 0; k < c->nfiles; k++)
        par_ctx_take(x, core_file_close(&c->files[k].f));
    w->nl = c->ntasks;
    core_container_free(c);
}

/* Steps "block counts" and "block sizes" (G gatherv each), then rank 0
 * writes every file's tail ("tail"). */
static void blocks_step(mwclose *w)
{
    par_ctx *x = w->x;
    int64_t dummy[1];
    par_ctx_step(x, "block counts");
    int *cnt = par_mapped_scaled_counts(w->mc.pcount, x->gsize, 1, 1, x->grank);
    par_ctx_gatherv(x, 0, w->nbs ? w->nbs : dummy, w->allnb ? w->allnb : dummy, _SION_INT64, cnt, w->nl, 0);
    free(cnt);
    par_ctx_step(x, "block sizes");
    cnt = par_mapped_scaled_counts(w->mc.pblocks, x->gsize, 1, 1, x->grank);
    par_ctx_gatherv(x, 0, w->bs ? w->bs : dummy, w->allbs ? w->allbs : dummy, _SION_INT64, cnt, (int)w->nblk, 0);
    free(cnt);
    par_ctx_step(x, "tail");
    if (x->grank == 0 && par_ctx_ok(x))
        par_ctx_take(x, root_finish(x->api, x->fname, w->p->root, w->allnb, w->allbs));
}

int par_mapped_close_write(par_ctx *x, core_container *c, par_state *p)
{
    mwclose w;
    memset(&w, 0, sizeof w);
    w.x = x;
    w.p = p;
    sync_step(&w, c);
    /* one head carries both counts, so one gather + bcast serves both gathervs */
    par_wire_mhead h = {par_ctx_ok(x) ? w.nl : 0, par_ctx_ok(x) ? w.nblk : 0, 0, {0, 0, 0, 0}};
    if (!par_mapped_count_step(x, &h, 0, INT32_MAX, alloc_close, &w, &w.mc))
        blocks_step(&w);
    par_mapped_counts_free(&w.mc);
    free(w.allnb);
    free(w.allbs);
    free(w.nbs);
    free(w.bs);
    return x->rc;
}
