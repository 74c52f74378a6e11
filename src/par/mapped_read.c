/* mapped_read.c - the read side of the mapped open: rank 0 reads the set and
 * assigns the logical tasks. */
#include "mapped_int.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

/* ---- read ----------------------------------------------------------------- */

typedef struct read_root {
    core_container *set;    /* the whole set, opened by rank 0 */
    int64_t *want;          /* requested global ranks, gather order */
    int64_t *heads2;        /* per process: (tasks, blocks) it gets; zeros until assigned */
    int gsize;
} read_root;

static int alloc_wanted(void *ctx, int64_t total)
{
    read_root *rr = ctx;
    rr->want = malloc((size_t)(total ? total : 1) * sizeof *rr->want);
    /* the root's scatter buffer must exist whatever the verdict: allocated here, before it */
    rr->heads2 = calloc((size_t)rr->gsize * 2, sizeof *rr->heads2);
    return rr->want && rr->heads2 ? 0 : core_fail(SHEAF_E_NOMEM, "out of memory on task 0");
}

/* Rank 0: decide which tasks each process reads and build their records.
 * Out: per process (ntasks, nblocks) in heads2, records rec (RREC each) and
 * block sizes blk, in process order. */
static int root_assign(read_root *rr, const int *pcount, int gsize, int64_t *heads2, int64_t **rec_out,
                       int64_t **blk_out, const char *fname)
{
    core_container *set = rr->set;
    int64_t n = set->ntasks, nauto = 0, nwant = 0, nrec = 0, nblk = 0;
    for (int g = 0; g < gsize; g++) {
        if (pcount[g] < 0)
            nauto++;
        else
            nwant += pcount[g];
    }
    for (int64_t i = 0; i < nwant; i++)
        if (rr->want[i] < 0 || rr->want[i] >= n)
            return core_fail(SHEAF_E_ARG, "%s: task %lld requested, the container holds tasks 0..%lld", fname,
                             (long long)rr->want[i], (long long)n - 1);
    nrec = nwant + (nauto ? n : 0);
    if (nrec > INT32_MAX / RREC)
        return core_fail(SHEAF_E_ARG, "%s: too many tasks requested", fname);
    int64_t *rec = malloc((size_t)(nrec ? nrec : 1) * RREC * sizeof *rec);
    if (!rec)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
    int ck = set->cksum; /* the container has checksums: they travel with the block sizes */
    int64_t q = 0, w = 0, a = 0;
    for (int g = 0; g < gsize; g++) {
        int64_t lo, hi;
        if (pcount[g] < 0) { /* contiguous share of all tasks */
            lo = a * n / nauto;
            hi = (a + 1) * n / nauto;
            a++;
        } else {
            lo = 0;
            hi = pcount[g];
        }
        heads2[2 * g] = hi - lo;
        heads2[2 * g + 1] = 0;
        for (int64_t j = lo; j < hi; j++, q++) {
            int64_t t = pcount[g] < 0 ? j : rr->want[w++];
            core_task *tk = &set->tasks[t];
            int64_t *e = rec + RREC * q;
            e[0] = t;
            e[1] = tk->file;
            e[2] = tk->lrank;
            e[3] = tk->start;
            e[4] = tk->chunksize;
            e[5] = set->files[tk->file].m.globalskip;
            e[6] = tk->nblocks;
            e[7] = set->keyval;
            e[8] = set->data_big;
            heads2[2 * g + 1] += tk->nblocks * (ck ? 2 : 1); /* block sizes (and their checksums) */
            nblk += tk->nblocks * (ck ? 2 : 1);
        }
    }
    int64_t *blk = nblk <= INT32_MAX ? malloc((size_t)(nblk ? nblk : 1) * sizeof *blk) : NULL;
    if (!blk) {
        free(rec);
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0 for %lld block entries", fname, (long long)nblk);
    }
    for (int64_t i = 0, k = 0; i < q; i++) {
        core_task *tk = &set->tasks[rec[RREC * i]];
        memcpy(blk + k, tk->bsize, (size_t)tk->nblocks * sizeof *blk);
        k += tk->nblocks;
        for (int64_t b = 0; ck && b < tk->nblocks; b++)
            blk[k++] = tk->crc_on ? tk->bcrc[b] : 0;
    }
    *rec_out = rec;
    *blk_out = blk;
    return 0;
}

static char *member_path(void *ctx, const char *base, int32_t k)
{
    return par_member_path(ctx, base, k);
}

int par_mapped_read(const par_api *api, const char *fname, const core_mode *md, int rc, int *numFiles,
                       void *gcomm, int grank, int gsize, int *nlocaltasks, int **globalranks,
                       sion_int64 **chunksizes, int **mapping_filenrs, int **mapping_lranks, sion_int32 *fsblksize,
                       FILE **fileptr)
{
    int nreq = rc ? 0 : *nlocaltasks;
    if (!rc && nreq > 0 && (!globalranks || !*globalranks))
        rc = core_fail(SHEAF_E_ARG, "%s: mapped read of %d tasks needs their global ranks", fname, nreq);
    if (rc)
        nreq = 0;
    int64_t *want = malloc((size_t)(nreq > 0 ? nreq : 1) * sizeof *want), dummy[RREC];
    if (!want && !rc)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    for (int i = 0; i < nreq && want; i++)
        want[i] = (*globalranks)[i];
    read_root rr = {NULL, NULL, NULL, gsize};
    int st = 0;
    if (grank == 0)
        st = core_open_read_named(&rr.set, fname, md, member_path, (void *)api);
    int *pcount = NULL, cbfail = 0;
    int64_t got = 0;
    int cbf = 0;
    int64_t opts[MO_N] = {0, 0, 0, md->keyval};
    int cst = par_mapped_count_phase(api, fname, gcomm, grank, gsize, rc ? 0 : nreq, rc ? rc : st, opts, &pcount, INT32_MAX,
                          alloc_wanted, &rr, &got, &cbf);
    if (!cst && cbf && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed on task %d", fname, grank);
    if (cst) {
        free(want);
        free(pcount);
        free(rr.want);
        free(rr.heads2);
        if (rr.set)
            core_close(rr.set);
        return rc ? rc : cst;
    }
    int *cnt = par_mapped_scaled_counts(pcount, gsize, 1, 1, grank);
    if (api->gatherv(want ? want : dummy, rr.want ? rr.want : dummy, gcomm, _SION_INT64, cnt, nreq > 0 ? nreq : 0, 0))
        cbfail = 1;
    free(cnt);
    free(want);
    int64_t verdict[5] = {0, 0, 0, 0, 0}; /* status, N, nfiles, fsblksize, checksums */
    int64_t *heads2 = NULL, *rec = NULL, *blk = NULL;
    if (grank == 0) {
        heads2 = rr.heads2;
        verdict[0] = cbfail ? core_fail(SHEAF_E_IO, "%s: the gatherv callback failed on task 0", fname)
                            : root_assign(&rr, pcount, gsize, heads2, &rec, &blk, fname);
        if (verdict[0])
            memset(heads2, 0, (size_t)gsize * 2 * sizeof *heads2);
        verdict[1] = rr.set->ntasks;
        verdict[2] = rr.set->nfiles;
        verdict[3] = rr.set->fsblksize;
        verdict[4] = rr.set->cksum;
    }
    if (api->bcast(verdict, gcomm, _SION_INT64, 5, 0))
        cbfail = 1;
    int ok = !verdict[0]; /* as delivered: a task whose callback failed still follows the others */
    int64_t mine[2] = {0, 0};
    if (api->scatter(heads2 ? heads2 : dummy, mine, gcomm, _SION_INT64, 2, 0))
        cbfail = 1;
    if (!ok)
        mine[0] = mine[1] = 0;
    int64_t *myrec = malloc((size_t)(mine[0] > 0 ? mine[0] : 1) * RREC * sizeof *myrec);
    int64_t *myblk = malloc((size_t)(mine[1] > 0 ? mine[1] : 1) * sizeof *myblk);
    if (!myrec || !myblk) /* cannot take part in the scatterv: the agreement below fails everyone */
        ok = 0;
    int *c1 = NULL, *c2 = NULL;
    if (grank == 0) {
        c1 = calloc((size_t)gsize, sizeof *c1);
        c2 = calloc((size_t)gsize, sizeof *c2);
        for (int g = 0; c1 && c2 && ok && g < gsize; g++) {
            c1[g] = (int)heads2[2 * g] * RREC;
            c2[g] = (int)heads2[2 * g + 1];
        }
    }
    if (api->scatterv(myrec ? myrec : dummy, rec ? rec : dummy, gcomm, _SION_INT64, c1,
                      ok ? (int)mine[0] * RREC : 0, 0))
        cbfail = 1;
    if (api->scatterv(myblk ? myblk : dummy, blk ? blk : dummy, gcomm, _SION_INT64, c2, ok ? (int)mine[1] : 0, 0))
        cbfail = 1;
    free(c1);
    free(c2);
    free(heads2);
    free(rec);
    free(blk);
    free(pcount);
    free(rr.want);
    if (rr.set)
        core_close(rr.set);
    if (!rc && verdict[0])
        rc = grank == 0 ? (int)verdict[0]
                        : core_fail((int)verdict[0], "%s: task 0 refused the mapped read (see its message)", fname);
    if (!rc && (cbfail || !ok))
        rc = core_fail(SHEAF_E_IO, "%s: a collective step of the mapped read failed", fname);
    int n = (int)mine[0];
    core_container *c = NULL;
    par_state *p = NULL;
    core_attach_spec *sp = NULL;
    char **paths = NULL;
    int *og = NULL, *of = NULL, *ol = NULL;
    sion_int64 *oc = NULL;
    int sid = -1;
    if (!rc) {
        sp = calloc((size_t)(n ? n : 1), sizeof *sp);
        paths = calloc((size_t)(n ? n : 1), sizeof *paths);
        og = malloc((size_t)(n ? n : 1) * sizeof *og);
        of = malloc((size_t)(n ? n : 1) * sizeof *of);
        ol = malloc((size_t)(n ? n : 1) * sizeof *ol);
        oc = malloc((size_t)(n ? n : 1) * sizeof *oc);
        if (!sp || !paths || !og || !of || !ol || !oc)
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        for (int i = 0, k = 0; i < n && !rc; i++) {
            const int64_t *e = myrec + RREC * i;
            if (!(paths[i] = par_member_path(api, fname, (int)e[1])))
                rc = SHEAF_E_NOMEM;
            sp[i] = (core_attach_spec){paths[i], e[3], e[4], e[5], e[0], e[6], myblk + k, NULL};
            k += e[6];
            if (verdict[4] && e[6] > 0) { /* the task's checksums follow its block sizes */
                uint32_t *cr = malloc((size_t)e[6] * sizeof *cr);
                if (!cr) {
                    rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
                    break;
                }
                for (int64_t b = 0; b < e[6]; b++)
                    cr[b] = (uint32_t)myblk[k + b];
                k += e[6];
                sp[i].crcs = cr;
            }
            og[i] = (int)e[0];
            of[i] = (int)e[1];
            ol[i] = (int)e[2];
            oc[i] = e[4];
        }
        if (!rc)
            rc = par_mapped_attach_own(&c, fname, md, 0, n, sp);
    }
    if (!rc && (!(p = calloc(1, sizeof *p)) || !(p->fname = strdup(fname))))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (!rc) {
        c->keyval = (int)myrec[7];
        c->data_big = (int)myrec[8];
        c->fsblksize = (int32_t)verdict[3];
        p->api = *api;
        p->gcomm = gcomm;
        p->grank = grank;
        p->gsize = gsize;
        p->mapped = 1;
        p->nlocal = n;
        p->nfiles = (int)verdict[2];
        p->fsblksize = (int32_t)verdict[3];
        p->mode = *md;
        p->meta.mapping_size = -1;
        for (int i = 0; i < n; i++)
            par_label_task(c, i, of[i], ol[i], p->nfiles);
        c->par = p;
        sid = api_register(c);
        if (sid < 0)
            rc = sid;
    }
    for (int i = 0; paths && i < n; i++)
        free(paths[i]);
    for (int i = 0; sp && i < n; i++)
        free((void *)sp[i].crcs);
    free(paths);
    free(sp);
    free(myrec);
    free(myblk);
    int arc = par_agree(api, gcomm, grank, gsize, rc, fname, "sion_generic_paropen_mapped");
    if (arc) {
        if (sid >= 0)
            api_release(sid);
        if (c) {
            c->par = NULL;
            core_close(c);
        }
        par_state_free(p);
        free(og); free(of); free(ol); free(oc);
        return arc;
    }
    *nlocaltasks = n;
    if (*globalranks && nreq > 0 && nreq == n) {
        free(og); /* the caller's array already lists them */
    } else {
        *globalranks = og;
    }
    if (chunksizes) *chunksizes = oc; else free(oc);
    if (mapping_filenrs) *mapping_filenrs = of; else free(of);
    if (mapping_lranks) *mapping_lranks = ol; else free(ol);
    if (numFiles) *numFiles = (int)verdict[2];
    if (fsblksize) *fsblksize = (int32_t)verdict[3];
    if (fileptr) *fileptr = c->nfiles > 0 ? c->files[0].f.fp : NULL;
    return sid;
}
