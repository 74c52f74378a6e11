/* mapped_read.c - the read side of the mapped open: rank 0 reads the set and
 * assigns the logical tasks. One function per step of doc/parallel.md's
 * mapped read table, on the per-call context (ctx.h): check (local; rank 0
 * opens the set), counts (G gather + G bcast), wanted (G gatherv), verdict
 * (G bcast; rank 0 assigns the tasks), share (G scatter), records (G
 * scatterv), blocks (G scatterv), attach, agree. */
#include "mapped_int.h"
#include "open_int.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

/* One process's mapped read open: the context and what the steps hand on. */
typedef struct mropen {
    par_ctx x;
    const mapped_args *a;
    int nreq;
    int64_t *want; /* the global ranks it asks for (nreq) */
    mapped_counts mc;
    /* rank 0 */
    core_container *set; /* the whole set */
    int64_t *allwant;    /* requested global ranks, gather order */
    int64_t *shares;     /* per process: its par_wire_mrshare, packed; zeros until assigned */
    int64_t *rec, *blk;  /* per process in order: packed par_wire_mrrec, block tables */
    /* every process */
    par_wire_mrverdict v;
    par_wire_mrshare share;
    par_wire_mrrec *recs; /* [share.ntasks] */
    int64_t *myblk;       /* [share.nblocks] */
    core_container *c;
    par_state *p;
    int sid;
    int *og, *of, *ol; /* the caller's outputs */
    sion_int64 *oc;
} mropen;

static int alloc_wanted(void *actx, int64_t total, int64_t blocks)
{
    (void)blocks;
    mropen *w = actx;
    w->allwant = malloc((size_t)(total ? total : 1) * sizeof *w->allwant);
    /* the root's scatter buffer must exist whatever the verdict: allocated here, before it */
    w->shares = calloc((size_t)w->x.gsize * PAR_WIRE_MRSHARE_N, sizeof *w->shares);
    return w->allwant && w->shares ? 0 : core_fail(SHEAF_E_NOMEM, "out of memory on task 0");
}

/* Rank 0: the record of task t of the set into rec. */
static void pack_record(const core_container *set, int64_t t, int64_t *rec)
{
    const core_task *tk = &set->tasks[t];
    par_wire_mrrec e = {t,           tk->file,      tk->lrank,
                        tk->start,   tk->chunksize, set->files[tk->file].m.globalskip,
                        tk->nblocks, set->keyval,   set->data_big};
    par_wire_mrrec_pack(&e, rec);
}

/* Rank 0: which tasks process g reads ([*lo, *hi) of the set, or of the
 * wanted list when it asked for tasks). */
static void share_of(const int *pcount, int g, int64_t n, int64_t nauto, int64_t *a, int64_t *lo, int64_t *hi)
{
    if (pcount[g] < 0) { /* contiguous share of all tasks */
        *lo = *a * n / nauto;
        *hi = (*a + 1) * n / nauto;
        (*a)++;
    } else {
        *lo = 0;
        *hi = pcount[g];
    }
}

/* Rank 0: the block tables of the q assigned records (rec) into w->blk. */
static int pack_blocks(mropen *w, int64_t q, int64_t nblk)
{
    core_container *set = w->set;
    int ck = set->cksum; /* the container has checksums: they travel with the block sizes */
    int64_t *blk = nblk <= INT32_MAX ? malloc((size_t)(nblk ? nblk : 1) * sizeof *blk) : NULL;
    if (!blk)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0 for %lld block entries", w->x.fname,
                         (long long)nblk);
    for (int64_t i = 0, k = 0; i < q; i++) {
        core_task *tk = &set->tasks[w->rec[PAR_WIRE_MRREC_N * i]];
        memcpy(blk + k, tk->bsize, (size_t)tk->nblocks * sizeof *blk);
        k += tk->nblocks;
        for (int64_t b = 0; ck && b < tk->nblocks; b++)
            blk[k++] = tk->crc_on ? tk->bcrc[b] : 0;
    }
    w->blk = blk;
    return 0;
}

/* Rank 0: decide which tasks each process reads and build their records
 * (w->rec), shares (w->shares) and block tables (w->blk), in process order. */
static int root_assign(mropen *w)
{
    const int *pcount = w->mc.pcount;
    int gsize = w->x.gsize;
    int64_t n = w->set->ntasks, nauto = 0, nwant = 0, nblk = 0;
    for (int g = 0; g < gsize; g++) {
        if (pcount[g] < 0)
            nauto++;
        else
            nwant += pcount[g];
    }
    for (int64_t i = 0; i < nwant; i++)
        if (w->allwant[i] < 0 || w->allwant[i] >= n)
            return core_fail(SHEAF_E_ARG, "%s: task %lld requested, the container holds tasks 0..%lld", w->x.fname,
                             (long long)w->allwant[i], (long long)n - 1);
    int64_t nrec = nwant + (nauto ? n : 0);
    if (nrec > INT32_MAX / PAR_WIRE_MRREC_N)
        return core_fail(SHEAF_E_ARG, "%s: too many tasks requested", w->x.fname);
    if (!(w->rec = malloc((size_t)(nrec ? nrec : 1) * PAR_WIRE_MRREC_N * sizeof *w->rec)))
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", w->x.fname);
    int64_t q = 0, wi = 0, a = 0, per = w->set->cksum ? 2 : 1;
    for (int g = 0; g < gsize; g++) {
        int64_t lo, hi;
        share_of(pcount, g, n, nauto, &a, &lo, &hi);
        par_wire_mrshare s = {hi - lo, 0};
        for (int64_t j = lo; j < hi; j++, q++) {
            int64_t t = pcount[g] < 0 ? j : w->allwant[wi++];
            pack_record(w->set, t, w->rec + PAR_WIRE_MRREC_N * q);
            s.nblocks += w->set->tasks[t].nblocks * per; /* block sizes (and their checksums) */
        }
        nblk += s.nblocks;
        par_wire_mrshare_pack(&s, w->shares + PAR_WIRE_MRSHARE_N * g);
    }
    return pack_blocks(w, q, nblk);
}

static char *member_path(void *ctx, const char *base, int32_t k) { return par_member_path(ctx, base, k); }

/* Step "check" (local): the wanted tasks; rank 0 opens the whole set. */
static void check_step(mropen *w)
{
    const mapped_args *a = w->a;
    par_ctx *x = &w->x;
    par_ctx_take(x, a->mode_rc);
    par_ctx_step(x, "check");
    int nreq = par_ctx_ok(x) ? *a->nlocaltasks : 0;
    if (par_ctx_ok(x) && nreq > 0 && (!a->globalranks || !*a->globalranks))
        par_ctx_fail(x, SHEAF_E_ARG, "%s: mapped read of %d tasks needs their global ranks", x->fname, nreq);
    w->nreq = par_ctx_ok(x) ? nreq : 0;
    if (!(w->want = malloc((size_t)(w->nreq > 0 ? w->nreq : 1) * sizeof *w->want)))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    for (int i = 0; i < w->nreq && w->want; i++)
        w->want[i] = (*a->globalranks)[i];
    if (x->grank == 0 && par_ctx_ok(x)) {
        par_ctx_step(x, "read set");
        par_ctx_take(x, core_open_read_named(&w->set, x->fname, a->md, member_path, (void *)x->api));
    }
}

/* Steps "wanted" (G gatherv: the requested global ranks to rank 0, which
 * assigns the tasks) and "verdict" (G bcast). Returns 1 when it is OK. */
static int wanted_step(mropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "wanted");
    int64_t dummy[1];
    int *cnt = par_mapped_scaled_counts(w->mc.pcount, x->gsize, 1, 1, x->grank);
    par_ctx_gatherv(x, 0, w->want ? w->want : dummy, w->allwant ? w->allwant : dummy, _SION_INT64, cnt,
                    w->nreq > 0 && w->want ? w->nreq : 0, 0);
    free(cnt);
    if (x->grank == 0) {
        par_ctx_step(x, "assign");
        if (par_ctx_ok(x))
            par_ctx_take(x, root_assign(w));
        if (!par_ctx_ok(x))
            memset(w->shares, 0, (size_t)x->gsize * PAR_WIRE_MRSHARE_N * sizeof *w->shares);
        w->v = (par_wire_mrverdict){x->rc, w->set->ntasks, w->set->nfiles, w->set->fsblksize, w->set->cksum != 0};
    }
    return par_mapped_verdict_step(x, &par_wire_mrverdict_msg, &w->v, &w->v.status, "mapped read");
}

/* Step "share" (G scatter): how many tasks and block entries this process gets. */
static void share_step(mropen *w, int ok)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "share");
    int64_t buf[PAR_WIRE_MRSHARE_N] = {0, 0};
    par_ctx_scatter(x, 0, w->shares, buf, _SION_INT64, PAR_WIRE_MRSHARE_N, 0);
    memset(&w->share, 0, sizeof w->share);
    if (ok && par_wire_mrshare_unpack(&w->share, buf, PAR_WIRE_MRSHARE_N))
        par_ctx_take(x, SHEAF_E_FORMAT);
}

/* Steps "records" and "blocks" (G scatterv each): this process's logical
 * tasks and their block tables. */
static void records_step(mropen *w, int ok)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "records");
    int64_t nt = w->share.ntasks, nb = w->share.nblocks, dummy[1];
    int64_t *myrec = malloc((size_t)(nt > 0 ? nt : 1) * PAR_WIRE_MRREC_N * sizeof *myrec);
    w->myblk = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *w->myblk);
    w->recs = calloc((size_t)(nt > 0 ? nt : 1), sizeof *w->recs);
    if (!myrec || !w->myblk || !w->recs) { /* cannot take part in the scatterv: the agreement fails everyone */
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
        ok = 0;
    }
    int *c1 = NULL, *c2 = NULL;
    if (x->grank == 0) {
        c1 = calloc((size_t)x->gsize, sizeof *c1);
        c2 = calloc((size_t)x->gsize, sizeof *c2);
        for (int g = 0; c1 && c2 && ok && g < x->gsize; g++) {
            c1[g] = (int)w->shares[PAR_WIRE_MRSHARE_N * g] * PAR_WIRE_MRREC_N;
            c2[g] = (int)w->shares[PAR_WIRE_MRSHARE_N * g + 1];
        }
    }
    par_ctx_scatterv(x, 0, myrec ? myrec : dummy, w->rec ? w->rec : dummy, _SION_INT64, c1,
                     ok ? (int)nt * PAR_WIRE_MRREC_N : 0, 0);
    par_ctx_step(x, "blocks");
    par_ctx_scatterv(x, 0, w->myblk ? w->myblk : dummy, w->blk ? w->blk : dummy, _SION_INT64, c2, ok ? (int)nb : 0, 0);
    free(c1);
    free(c2);
    for (int64_t i = 0; i < nt && par_ctx_ok(x); i++)
        par_ctx_take(x, par_wire_mrrec_unpack(&w->recs[i], myrec + PAR_WIRE_MRREC_N * i, PAR_WIRE_MRREC_N));
    free(myrec);
}

/* Step "attach", its specs: the task's file, chunk and block table (with
 * its checksums when the set has them). Returns 0 or a code. */
static int fill_specs(mropen *w, core_attach_spec *sp, char **paths, int n)
{
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        const par_wire_mrrec *e = &w->recs[i];
        if (k + e->nblocks * (w->v.checksum ? 2 : 1) > w->share.nblocks)
            return core_fail(SHEAF_E_FORMAT, "%s: the block tables task 0 sent are short", w->x.fname);
        if (!(paths[i] = par_member_path(w->x.api, w->x.fname, (int)e->filenumber)))
            return SHEAF_E_NOMEM;
        sp[i] = (core_attach_spec){paths[i], e->start,   e->chunksize, e->globalskip,
                                   e->grank, e->nblocks, w->myblk + k, NULL};
        k += e->nblocks;
        if (w->v.checksum && e->nblocks > 0) { /* the task's checksums follow its block sizes */
            uint32_t *cr = malloc((size_t)e->nblocks * sizeof *cr);
            if (!cr)
                return core_fail(SHEAF_E_NOMEM, "%s: out of memory", w->x.fname);
            for (int64_t b = 0; b < e->nblocks; b++)
                cr[b] = (uint32_t)w->myblk[k + b];
            k += e->nblocks;
            sp[i].crcs = cr;
        }
        w->og[i] = (int)e->grank;
        w->of[i] = (int)e->filenumber;
        w->ol[i] = (int)e->lrank;
        w->oc[i] = e->chunksize;
    }
    return 0;
}

/* Step "attach" (local): this process's logical tasks, its sid. */
static void attach_step(mropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "attach");
    int n = (int)w->share.ntasks;
    size_t m = (size_t)(n ? n : 1);
    core_attach_spec *sp = calloc(m, sizeof *sp);
    char **paths = calloc(m, sizeof *paths);
    w->og = malloc(m * sizeof *w->og);
    w->of = malloc(m * sizeof *w->of);
    w->ol = malloc(m * sizeof *w->ol);
    w->oc = malloc(m * sizeof *w->oc);
    if (!sp || !paths || !w->og || !w->of || !w->ol || !w->oc)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    if (par_ctx_ok(x))
        par_ctx_take(x, fill_specs(w, sp, paths, n));
    if (par_ctx_ok(x))
        par_ctx_take(x, par_mapped_attach_own(&w->c, x->fname, w->a->md, 0, n, sp));
    if (par_ctx_ok(x) && !(w->p = par_mapped_state_new(x, w->a->md, 0, n, (int)w->v.nfiles, (int32_t)w->v.fsblksize)))
        par_ctx_take(x, SHEAF_E_NOMEM);
    if (par_ctx_ok(x)) {
        w->c->keyval = n > 0 ? (int)w->recs[0].keyval : w->c->keyval;
        w->c->data_big = n > 0 ? (int)w->recs[0].data_big : w->c->data_big;
        w->c->fsblksize = (int32_t)w->v.fsblksize;
        for (int i = 0; i < n; i++)
            par_label_task(w->c, i, w->of[i], w->ol[i], w->p->nfiles);
        w->c->par = w->p;
        if ((w->sid = api_register(w->c)) < 0)
            par_ctx_take(x, w->sid);
        else if (x->grank == 0) /* SIONlib's task 0 then opens file 0 serially with a sid of its own
                                 * (freed again): use that number up, so that the sids a program
                                 * sees next are SIONlib's (test_genapi_2's sion_dup: 1) */
            api_skip_ids(1);
    }
    for (int i = 0; paths && i < n; i++)
        free(paths[i]);
    for (int i = 0; sp && i < n; i++)
        free((void *)sp[i].crcs);
    free(paths);
    free(sp);
}

/* Step "agree": the sid and the caller's outputs on every process, or the agreed failure. */
static int agree_step(mropen *w)
{
    par_ctx *x = &w->x;
    const mapped_args *a = w->a;
    par_ctx_step(x, "agree");
    if (par_ctx_agree(x)) {
        par_open_undo(w->sid, w->c, 0, NULL);
        par_state_free(w->p);
        free(w->og);
        free(w->of);
        free(w->ol);
        free(w->oc);
        return par_ctx_restore(x);
    }
    int n = (int)w->share.ntasks;
    *a->nlocaltasks = n;
    if (*a->globalranks && w->nreq > 0 && w->nreq == n)
        free(w->og); /* the caller's array already lists them */
    else
        *a->globalranks = w->og;
    if (a->chunksizes)
        *a->chunksizes = w->oc;
    else
        free(w->oc);
    if (a->mapping_filenrs)
        *a->mapping_filenrs = w->of;
    else
        free(w->of);
    if (a->mapping_lranks)
        *a->mapping_lranks = w->ol;
    else
        free(w->ol);
    if (a->numFiles)
        *a->numFiles = (int)w->v.nfiles;
    if (a->fsblksize)
        *a->fsblksize = (int32_t)w->v.fsblksize;
    if (a->fileptr)
        *a->fileptr = w->c->nfiles > 0 ? w->c->files[0].f.fp : NULL;
    return w->sid;
}

static void release(mropen *w)
{
    free(w->want);
    par_mapped_counts_free(&w->mc);
    free(w->allwant);
    free(w->shares);
    free(w->rec);
    free(w->blk);
    free(w->recs);
    free(w->myblk);
    if (w->set)
        core_close(w->set);
    w->want = w->allwant = w->shares = w->rec = w->blk = w->myblk = NULL;
    w->recs = NULL;
    w->set = NULL;
}

int par_mapped_read(const mapped_args *a)
{
    mropen w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.sid = -1;
    par_ctx_init(&w.x, a->api, a->fname, "sion_generic_paropen_mapped", a->gcomm, a->grank, a->gsize);
    check_step(&w);
    par_wire_mhead h = {w.nreq, 0, 0, {0, 0, 0, a->md->keyval}};
    if (par_mapped_count_step(&w.x, &h, 1, INT32_MAX, alloc_wanted, &w, &w.mc)) {
        release(&w);
        return par_ctx_restore(&w.x);
    }
    int ok = wanted_step(&w);
    share_step(&w, ok);
    records_step(&w, ok);
    attach_step(&w);
    release(&w);
    return agree_step(&w);
}
