/* mapped_write.c - the write side of the mapped open and close (m logical
 * tasks on n processes): rank 0 creates and finishes every file. */
#include "mapped_int.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

/* ---- write ---------------------------------------------------------------- */

/* Rank 0: validate the records, create the files, fill lay (WLAY per record). */
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
    unsigned char *gseen = calloc((size_t)n, 1);
    int rc = 0;
    r->meta = calloc((size_t)nf, sizeof *r->meta);
    if (!cnt || !base || !byslot || !gseen || !r->meta) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
        goto out;
    }
    for (int k = 0; k < nf; k++)
        r->meta[k].mapping_size = -1;
    for (int64_t i = 0; i < n && !rc; i++) {
        const int64_t *e = r->rec + WREC * i;
        if (e[0] < 0 || e[0] >= n || gseen[e[0]])
            rc = core_fail(SHEAF_E_ARG, "%s: global rank %lld is out of range 0..%lld or given twice", fname,
                           (long long)e[0], (long long)n - 1);
        else if (e[1] < 0 || e[1] > INT64_MAX / 4)
            rc = core_fail(SHEAF_E_ARG, "%s: invalid chunk size %lld for task %lld", fname, (long long)e[1],
                           (long long)e[0]);
        else if (e[2] < 0 || e[2] >= nf)
            rc = core_fail(SHEAF_E_ARG, "%s: task %lld is mapped to file %lld, there are %d files", fname,
                           (long long)e[0], (long long)e[2], nf);
        else {
            gseen[e[0]] = 1;
            cnt[e[2]]++;
        }
    }
    for (int k = 0; k < nf && !rc; k++) {
        if (!cnt[k])
            rc = core_fail(SHEAF_E_ARG, "%s: physical file %d has no tasks", fname, k);
        base[k + 1] = base[k] + cnt[k];
    }
    for (int64_t i = 0; i < n && !rc; i++)
        byslot[i] = -1;
    for (int64_t i = 0; i < n && !rc; i++) {
        const int64_t *e = r->rec + WREC * i;
        if (e[3] < 0 || e[3] >= cnt[e[2]] || byslot[base[e[2]] + e[3]] >= 0)
            rc = core_fail(SHEAF_E_ARG, "%s: task %lld: local rank %lld in file %lld is out of range 0..%lld or taken",
                           fname, (long long)e[0], (long long)e[3], (long long)e[2], (long long)cnt[e[2]] - 1);
        else
            byslot[base[e[2]] + e[3]] = i;
    }
    if (!rc && *fsb <= 0) {
        char *p0 = par_member_path(api, fname, 0);
        *fsb = p0 ? core_fsblksize_for(p0) : SION_DEFAULT_FSBLOCKSIZE;
        free(p0);
    }
    for (int k = 0; k < nf && !rc; k++) {
        int64_t m = cnt[k];
        int64_t *cs = malloc((size_t)m * sizeof *cs), *gr = malloc((size_t)m * sizeof *gr);
        char *path = par_member_path(api, fname, k);
        if (!cs || !gr || !path)
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
        for (int64_t l = 0; l < m && !rc; l++) {
            const int64_t *e = r->rec + WREC * byslot[base[k] + l];
            cs[l] = e[1];
            gr[l] = e[0];
        }
        if (!rc)
            rc = core_par_create_file_at(path, fname, md, (int32_t)m, cs, gr, *fsb, k, nf, &r->meta[k]);
        for (int64_t l = 0; l < m && !rc; l++) {
            int64_t *o = lay + WLAY * byslot[base[k] + l];
            o[0] = r->meta[k].starts[l];
            o[1] = r->meta[k].chunksizes[l];
            o[2] = r->meta[k].globalskip;
        }
        free(cs);
        free(gr);
        free(path);
    }
out:
    free(cnt);
    free(base);
    free(byslot);
    free(gseen);
    return rc;
}

static int alloc_records(void *ctx, int64_t total)
{
    mapped_root *r = ctx;
    r->ntotal = total;
    r->rec = malloc((size_t)(total ? total : 1) * WREC * sizeof *r->rec);
    return r->rec ? 0 : core_fail(SHEAF_E_NOMEM, "out of memory on task 0 for %lld task records", (long long)total);
}

int par_mapped_write(const par_api *api, const char *fname, const core_mode *md, int rc, int *numFiles,
                        void *gcomm, int grank, int gsize, int nlocal, const int *granks, sion_int64 *chunks,
                        const int *fnrs, const int *lranks, sion_int32 *fsblksize, FILE **fileptr)
{
    if (!rc && *numFiles < 1)
        rc = core_fail(SHEAF_E_ARG, "%s: a mapped write needs *numFiles > 0 (got %d)", fname, *numFiles);
    if (!rc && fsblksize)
        rc = core_fsblksize_check(fname, *fsblksize);
    for (int i = 0; i < nlocal && !rc; i++)
        if (chunks[i] < 0)
            rc = core_fail(SHEAF_E_ARG, "%s: negative chunk size %lld for logical task %d", fname,
                           (long long)chunks[i], granks[i]);
    int64_t *myrec = NULL, dummy[WREC];
    if (!rc && !(myrec = malloc((size_t)(nlocal ? nlocal : 1) * WREC * sizeof *myrec)))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (rc)
        nlocal = 0;
    for (int i = 0; i < nlocal; i++) {
        int64_t *e = myrec + WREC * i;
        e[0] = granks[i];
        e[1] = chunks[i];
        e[2] = fnrs[i];
        e[3] = lranks[i];
    }
    mapped_root *r = grank == 0 ? calloc(1, sizeof *r) : NULL;
    int *pcount = NULL, cbfail = 0;
    int64_t ntotal = 0;
    int st = (grank == 0 && !r) ? core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname) : 0;
    int cbf = 0;
    int64_t opts[MO_N] = {1, *numFiles, fsblksize && *fsblksize > 0 ? *fsblksize : -1, md->keyval};
    int cst = par_mapped_count_phase(api, fname, gcomm, grank, gsize, nlocal, rc ? rc : st, opts, &pcount, INT32_MAX / WREC,
                          alloc_records, r, &ntotal, &cbf);
    if (!cst && cbf && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed on task %d", fname, grank);
    if (r) {
        r->pcount = pcount;
        r->nfiles = *numFiles;
    }
    if (cst) {
        par_mapped_root_free(r);
        free(myrec);
        return rc ? rc : cst;
    }
    int *cnt = par_mapped_scaled_counts(pcount, gsize, WREC, 1, grank);
    if (grank == 0 && !cnt)
        st = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname); /* receives nothing; verdict fails below */
    if (api->gatherv(myrec ? myrec : dummy, r && r->rec ? r->rec : dummy, gcomm, _SION_INT64, cnt, nlocal * WREC, 0))
        cbfail = 1;
    free(cnt);
    int64_t verdict[4] = {0, fsblksize ? *fsblksize : -1, *numFiles, ntotal}; /* status, fsblksize, nfiles, N */
    int64_t *lay = NULL;
    if (grank == 0) {
        int32_t fsb = (int32_t)verdict[1];
        lay = malloc((size_t)(ntotal ? ntotal : 1) * WLAY * sizeof *lay);
        verdict[0] = st       ? st
                     : cbfail ? core_fail(SHEAF_E_IO, "%s: the gatherv callback failed on task 0", fname)
                     : !lay   ? core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname)
                              : root_create(api, fname, md, r, &fsb, lay);
        verdict[1] = fsb;
    }
    if (api->bcast(verdict, gcomm, _SION_INT64, 4, 0))
        cbfail = 1;
    int ok = !verdict[0]; /* as delivered: a task whose callback failed still follows the others */
    int64_t *mylay = malloc((size_t)(nlocal ? nlocal : 1) * WLAY * sizeof *mylay);
    cnt = par_mapped_scaled_counts(pcount, gsize, WLAY, ok, grank);
    if (api->scatterv(mylay ? mylay : dummy, lay ? lay : dummy, gcomm, _SION_INT64, cnt, ok ? nlocal * WLAY : 0, 0))
        cbfail = 1;
    free(cnt);
    free(lay);
    if (!rc && verdict[0])
        rc = grank == 0 ? (int)verdict[0]
                        : core_fail((int)verdict[0], "%s: task 0 refused the mapped open (see its message)", fname);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed in the mapped open", fname);
    if (!rc && !mylay)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    core_container *c = NULL;
    par_state *p = NULL;
    int sid = -1;
    core_attach_spec *sp = NULL;
    char **paths = NULL;
    if (!rc) {
        sp = calloc((size_t)(nlocal ? nlocal : 1), sizeof *sp);
        paths = calloc((size_t)(nlocal ? nlocal : 1), sizeof *paths);
        if (!sp || !paths)
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        for (int i = 0; i < nlocal && !rc; i++) {
            if (!(paths[i] = par_member_path(api, fname, fnrs[i])))
                rc = SHEAF_E_NOMEM;
            sp[i] = (core_attach_spec){paths[i], mylay[WLAY * i], mylay[WLAY * i + 1], mylay[WLAY * i + 2],
                                       granks[i], 0, NULL, NULL};
        }
        if (!rc)
            rc = par_mapped_attach_own(&c, fname, md, 1, nlocal, sp);
    }
    if (!rc && (!(p = calloc(1, sizeof *p)) || !(p->fname = strdup(fname))))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (!rc) {
        p->api = *api;
        p->gcomm = gcomm;
        p->grank = grank;
        p->gsize = gsize;
        p->write = 1;
        p->mapped = 1;
        p->nlocal = nlocal;
        p->nfiles = (int)verdict[2];
        p->fsblksize = (int32_t)verdict[1];
        p->mode = *md;
        p->meta.mapping_size = -1;
        p->root = r;
        for (int i = 0; i < nlocal; i++)
            par_label_task(c, i, fnrs[i], lranks[i], p->nfiles);
        c->par = p;
        c->fsblksize = p->fsblksize;
        sid = api_register(c);
        if (sid < 0)
            rc = sid;
    }
    for (int i = 0; paths && i < nlocal; i++)
        free(paths[i]);
    free(paths);
    free(sp);
    free(myrec);
    int arc = par_agree(api, gcomm, grank, gsize, rc, fname, "sion_generic_paropen_mapped");
    if (arc) {
        if (sid >= 0)
            api_release(sid);
        if (c) {
            c->par = NULL;
            core_close(c);
        }
        if (p)
            p->root = NULL;
        par_state_free(p);
        par_mapped_root_free(r);
        free(mylay);
        return arc;
    }
    /* the caller's chunk sizes stay as given: SIONlib 1.7.6 does not write the aligned sizes back (checked) */
    free(mylay);
    if (fsblksize)
        *fsblksize = (int32_t)verdict[1];
    if (fileptr)
        *fileptr = c->nfiles > 0 ? c->files[0].f.fp : NULL;
    return sid;
}

/* Rank 0: write every file's block table (and file 0's mapping). allnb: the
 * block count of each logical task, allbs: their block sizes, both in gather
 * order (process by process, each process's tasks in its order). */
static int root_finish(const par_api *api, const char *fname, mapped_root *r, const int64_t *allnb,
                       const int64_t *allbs)
{
    int64_t n = r->ntotal;
    int nf = r->nfiles, rc = 0;
    int64_t *off = malloc((size_t)n * sizeof *off);     /* record -> first block size */
    int64_t *slot = malloc((size_t)n * sizeof *slot);   /* (file base + lrank) -> record */
    int64_t *base = calloc((size_t)nf + 1, sizeof *base);
    int32_t *map = malloc((size_t)n * 2 * sizeof *map); /* file 0 gets it even alone, as SIONlib */
    if (!off || !slot || !base || !map) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
        goto out;
    }
    for (int64_t i = 0, k = 0; i < n; i++) {
        off[i] = k;
        k += allnb[i];
    }
    for (int k = 0; k < nf; k++)
        base[k + 1] = base[k] + r->meta[k].ntasks;
    for (int64_t i = 0; i < n; i++) {
        const int64_t *e = r->rec + WREC * i;
        slot[base[e[2]] + e[3]] = i;
        if (map) {
            map[2 * e[0]] = (int32_t)e[2];
            map[2 * e[0] + 1] = (int32_t)e[3];
        }
    }
    for (int k = 0; k < nf; k++) {
        int64_t m = r->meta[k].ntasks, tot = 0;
        for (int64_t l = 0; l < m; l++)
            tot += allnb[slot[base[k] + l]];
        int64_t *bc = malloc((size_t)m * sizeof *bc), *flat = malloc((size_t)(tot ? tot : 1) * sizeof *flat);
        char *path = par_member_path(api, fname, k);
        int r2 = (!bc || !flat || !path) ? core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname) : 0;
        for (int64_t l = 0, q = 0; l < m && !r2; l++) {
            int64_t i = slot[base[k] + l];
            bc[l] = allnb[i];
            memcpy(flat + q, allbs + off[i], (size_t)allnb[i] * sizeof *flat);
            q += allnb[i];
        }
        if (!r2) /* every file is finished even when one fails */
            r2 = core_par_write_tail_fill(path, fname, &r->meta[k], bc, flat, k == 0 ? map : NULL, (int32_t)n,
                                          -1); /* unused block entries: -1, as SIONlib's mapped close */
        if (!rc)
            rc = r2;
        free(bc);
        free(flat);
        free(path);
    }
out:
    free(off);
    free(slot);
    free(base);
    free(map);
    return rc;
}

typedef struct close_ctx {
    int64_t ntotal, *allnb;
} close_ctx;

static int alloc_blockcounts(void *ctx, int64_t total)
{
    close_ctx *x = ctx;
    if (total != x->ntotal)
        return core_fail(SHEAF_E_ARG, "mapped close: %lld logical tasks report, %lld were opened", (long long)total,
                         (long long)x->ntotal);
    x->allnb = malloc((size_t)(total ? total : 1) * sizeof *x->allnb);
    return x->allnb ? 0 : core_fail(SHEAF_E_NOMEM, "out of memory on task 0");
}

static int alloc_blocksizes(void *ctx, int64_t total)
{
    int64_t **pp = ctx;
    *pp = malloc((size_t)(total ? total : 1) * sizeof **pp);
    return *pp ? 0 : core_fail(SHEAF_E_NOMEM, "out of memory on task 0");
}

int par_mapped_close_write(core_container *c, par_state *p)
{
    const par_api *api = &p->api;
    mapped_root *r = p->root;
    int rc = c->ntasks > 0 ? core_sync(c) : 0, cbfail = 0; /* a process may own no task */
    int64_t total = 0, dummy[2];
    for (int i = 0; i < c->ntasks; i++)
        total += c->tasks[i].nblocks;
    size_t nt = c->ntasks > 0 ? (size_t)c->ntasks : 1; /* a process may own no task */
    int64_t *nbs = malloc(nt * sizeof *nbs), *bs = malloc((size_t)(total ? total : 1) * sizeof *bs);
    if (!nbs || !bs)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
    for (int i = 0, k = 0; i < c->ntasks && !rc; i++) {
        nbs[i] = c->tasks[i].nblocks;
        for (int64_t b = 0; b < c->tasks[i].nblocks; b++)
            bs[k++] = c->tasks[i].bsize[b];
    }
    for (int k = 0; k < c->nfiles; k++) {
        int r2 = core_file_close(&c->files[k].f);
        if (!rc)
            rc = r2;
    }
    int nl = c->ntasks;
    core_container_free(c);
    /* block counts, then block sizes, each after a count phase */
    close_ctx x = {r ? r->ntotal : 0, NULL};
    int *pc1 = NULL, *pc2 = NULL;
    int64_t got = 0, *allbs = NULL;
    int cbf = 0;
    int st = par_mapped_count_phase(api, p->fname, p->gcomm, p->grank, p->gsize, rc ? 0 : nl, rc, NULL, &pc1, INT32_MAX,
                         alloc_blockcounts, &x, &got, &cbf);
    cbfail |= cbf;
    if (!st) {
        int *cnt = par_mapped_scaled_counts(pc1, p->gsize, 1, 1, p->grank);
        if (api->gatherv(nbs, x.allnb ? x.allnb : dummy, p->gcomm, _SION_INT64, cnt, nl, 0))
            cbfail = 1;
        free(cnt);
        st = par_mapped_count_phase(api, p->fname, p->gcomm, p->grank, p->gsize, total, 0, NULL, &pc2, INT32_MAX, alloc_blocksizes,
                         &allbs, &got, &cbf);
        cbfail |= cbf;
    }
    if (!st) {
        int *cnt = par_mapped_scaled_counts(pc2, p->gsize, 1, 1, p->grank);
        if (api->gatherv(bs, allbs ? allbs : dummy, p->gcomm, _SION_INT64, cnt, (int)total, 0))
            cbfail = 1;
        free(cnt);
        if (p->grank == 0)
            st = cbfail ? core_fail(SHEAF_E_IO, "%s: a gatherv callback failed", p->fname)
                        : root_finish(api, p->fname, r, x.allnb, allbs);
    }
    free(pc1);
    free(pc2);
    free(x.allnb);
    free(allbs);
    free(nbs);
    free(bs);
    if (!rc)
        rc = st;
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed in the mapped close", p->fname);
    return rc;
}
