/* mapped.c - sion_generic_paropen_mapped / parclose_mapped: each task of the
 * global group handles several logical tasks (m:n).
 *
 * Global rank 0 coordinates: it gathers every logical task's description,
 * creates and finishes all physical files (write) or reads the whole set
 * (read), and scatters each process its tasks' layout. Memory O(N logical
 * tasks) on rank 0 only, O(own tasks) elsewhere; a constant number of
 * collectives, all over the global group:
 *   write open : gather (count, status), bcast (can rank 0 take them),
 *                gatherv (task records), bcast verdict, scatterv (layouts),
 *                agree (gather + bcast)
 *   write close: gather (block total, status), bcast (can rank 0 take them),
 *                gatherv (block counts), gatherv (block sizes), agree
 *   read open  : gather (count), bcast (can rank 0 take them), gatherv
 *                (wanted tasks), bcast verdict, scatter (own task count),
 *                scatterv (task records), scatterv (block tables), agree
 * (A bcast before each gatherv makes its counts agree on all tasks even when
 * rank 0 cannot take the data.)
 *   read close : agree
 * A process may own no logical task (write: none given; read: none
 * requested, or none left by the automatic distribution when there are more
 * processes than tasks), as in SIONlib: it takes part in the collectives and
 * gets a sid that only the mapped close accepts. */
#include "par.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

#define WREC 4   /* write record: global rank, chunk size, file, local rank */
#define WLAY 3   /* write layout: start, chunk size, global skip */
#define RREC 9   /* read record: grank, file, lrank, start, chunk, gskip, nblocks, keyval, data_big */

/* Rank 0's view of a mapped write, kept from open to close. */
typedef struct mapped_root {
    int64_t ntotal;         /* logical tasks */
    int nfiles;
    int *pcount;            /* logical tasks per process (gsize) */
    int64_t *rec;           /* WREC per logical task, in gather order */
    core_meta *meta;        /* per file */
} mapped_root;

static void root_free(mapped_root *r)
{
    if (!r)
        return;
    for (int k = 0; r->meta && k < r->nfiles; k++)
        core_meta_free(&r->meta[k]);
    free(r->meta);
    free(r->pcount);
    free(r->rec);
    free(r);
}

/* The tasks of this process (n of them) attached to their files; with no
 * task (SIONlib allows a process to own none) an empty container that only
 * the mapped close accepts. */
static int attach_own(core_container **c, const char *fname, const core_mode *md, int write, int32_t n,
                      const core_attach_spec *sp)
{
    if (n > 0)
        return core_attach_tasks(c, fname, md, write, n, sp);
    core_mode m = *md;
    m.write = write;
    if (!(*c = core_container_new(fname, &m)))
        return SHEAF_E_NOMEM;
    (*c)->attached = 1;
    return 0;
}

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

/* Options of a mapped open that must be the same on every task. */
enum { MO_WRITE, MO_NFILES, MO_FSBLK, MO_KEYVAL, MO_N };
static const char *const mo_names[MO_N] = {"the file mode (read or write)", "the number of files (numFiles)",
                                           "the file system block size (fsblksize)", "the key-value mode (keyval)"};
#define HEAD_N (2 + MO_N)

/* First step of every mapped call: gather (count, status, options) of each
 * process to rank 0, which checks that the options agree (opts NULL: a close,
 * nothing to compare), allocates what it needs (alloc(total) returns 0 or a
 * code) and broadcasts (status, total, disagreement). On rank 0 *pcount
 * receives the counts (malloc'd). Returns the agreed status (0 ok) on every
 * task, with a message naming a disagreement. */
static int count_phase(const par_api *api, const char *fname, void *gcomm, int grank, int gsize, int64_t count,
                       int rc, const int64_t *opts, int **pcount, int64_t limit,
                       int (*alloc)(void *ctx, int64_t total), void *ctx, int64_t *total_out, int *cbfail_out)
{
    int64_t head[HEAD_N] = {count, rc}, *heads = NULL, dummy[HEAD_N];
    int64_t verdict[6] = {0, 0, -1, -1, 0, 0}; /* status, total, disagreeing task, option, its value, task 0's */
    if (opts && !rc)
        memcpy(head + 2, opts, MO_N * sizeof *opts);
    int culprit = -1;
    if (grank == 0) {
        heads = malloc((size_t)gsize * sizeof head);
        *pcount = malloc((size_t)gsize * sizeof **pcount);
        if (!heads || !*pcount)
            verdict[0] = core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
    }
    int cbfail = api->gather(head, heads ? heads : dummy, gcomm, _SION_INT64, HEAD_N, 0) != 0;
    *cbfail_out = grank != 0 && cbfail; /* a task whose callback failed goes on and fails at the agreement */
    if (grank == 0 && !verdict[0]) {
        for (int g = 0; g < gsize; g++) {
            const int64_t *e = heads + HEAD_N * g;
            if (e[1] && !verdict[0]) {
                verdict[0] = e[1];
                culprit = g;
            }
            for (int f = 0; f < MO_N && !verdict[0] && !heads[1]; f++)
                if (e[2 + f] != heads[2 + f]) {
                    verdict[0] = SHEAF_E_ARG;
                    verdict[2] = g;
                    verdict[3] = f;
                    verdict[4] = e[2 + f];
                    verdict[5] = heads[2 + f];
                }
            (*pcount)[g] = (int)e[0];           /* -1: "distribute for me" (mapped read) */
            verdict[1] += e[0] > 0 ? e[0] : 0;
        }
        if (!verdict[0] && verdict[1] > limit)
            verdict[0] = core_fail(SHEAF_E_ARG, "%s: %lld entries are too many for one mapped call", fname,
                                   (long long)verdict[1]);
        if (!verdict[0] && cbfail)
            verdict[0] = core_fail(SHEAF_E_IO, "%s: the gather callback failed on task 0", fname);
        if (!verdict[0])
            verdict[0] = alloc(ctx, verdict[1]);
    }
    free(heads);
    if (api->bcast(verdict, gcomm, _SION_INT64, 6, 0))
        *cbfail_out = 1; /* go on with what it delivered */
    *total_out = verdict[1];
    if (verdict[0] && verdict[2] >= 0 && verdict[3] >= 0 && verdict[3] < MO_N) {
        int f = (int)verdict[3];
        if (f == MO_WRITE)
            return core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen_mapped: the tasks disagree on %s: task 0 opens "
                             "for %s, task %lld for %s (it must be the same on every task)", fname, mo_names[f],
                             verdict[5] ? "writing" : "reading", (long long)verdict[2],
                             verdict[4] ? "writing" : "reading");
        return core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen_mapped: the tasks disagree on %s: task 0 gives %lld, "
                         "task %lld gives %lld (it must be the same on every task)", fname, mo_names[f],
                         (long long)verdict[5], (long long)verdict[2], (long long)verdict[4]);
    }
    if (verdict[0] && !rc) {
        if (grank == 0 && culprit > 0)
            return core_fail((int)verdict[0], "%s: the mapped call failed on task %d (see its message)", fname,
                             culprit);
        if (grank != 0)
            return core_fail((int)verdict[0], "%s: a mapped call failed on another task (task 0 reports it)", fname);
    }
    return (int)verdict[0];
}

/* counts[g] = pcount[g] * k on rank 0 when ok, zeros otherwise (NULL off rank 0). */
static int *scaled_counts(const int *pcount, int gsize, int k, int ok, int grank)
{
    if (grank != 0)
        return NULL;
    int *c = calloc((size_t)gsize, sizeof *c);
    for (int i = 0; c && ok && i < gsize; i++)
        c[i] = pcount[i] > 0 ? pcount[i] * k : 0;
    return c;
}

static int alloc_records(void *ctx, int64_t total)
{
    mapped_root *r = ctx;
    r->ntotal = total;
    r->rec = malloc((size_t)(total ? total : 1) * WREC * sizeof *r->rec);
    return r->rec ? 0 : core_fail(SHEAF_E_NOMEM, "out of memory on task 0 for %lld task records", (long long)total);
}

static int mapped_write(const par_api *api, const char *fname, const core_mode *md, int rc, int *numFiles,
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
    int cst = count_phase(api, fname, gcomm, grank, gsize, nlocal, rc ? rc : st, opts, &pcount, INT32_MAX / WREC,
                          alloc_records, r, &ntotal, &cbf);
    if (!cst && cbf && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed on task %d", fname, grank);
    if (r) {
        r->pcount = pcount;
        r->nfiles = *numFiles;
    }
    if (cst) {
        root_free(r);
        free(myrec);
        return rc ? rc : cst;
    }
    int *cnt = scaled_counts(pcount, gsize, WREC, 1, grank);
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
    cnt = scaled_counts(pcount, gsize, WLAY, ok, grank);
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
            rc = attach_own(&c, fname, md, 1, nlocal, sp);
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
        root_free(r);
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

static int close_mapped_write(core_container *c, par_state *p)
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
    int st = count_phase(api, p->fname, p->gcomm, p->grank, p->gsize, rc ? 0 : nl, rc, NULL, &pc1, INT32_MAX,
                         alloc_blockcounts, &x, &got, &cbf);
    cbfail |= cbf;
    if (!st) {
        int *cnt = scaled_counts(pc1, p->gsize, 1, 1, p->grank);
        if (api->gatherv(nbs, x.allnb ? x.allnb : dummy, p->gcomm, _SION_INT64, cnt, nl, 0))
            cbfail = 1;
        free(cnt);
        st = count_phase(api, p->fname, p->gcomm, p->grank, p->gsize, total, 0, NULL, &pc2, INT32_MAX, alloc_blocksizes,
                         &allbs, &got, &cbf);
        cbfail |= cbf;
    }
    if (!st) {
        int *cnt = scaled_counts(pc2, p->gsize, 1, 1, p->grank);
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

static int mapped_read(const par_api *api, const char *fname, const core_mode *md, int rc, int *numFiles,
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
    int cst = count_phase(api, fname, gcomm, grank, gsize, rc ? 0 : nreq, rc ? rc : st, opts, &pcount, INT32_MAX,
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
    int *cnt = scaled_counts(pcount, gsize, 1, 1, grank);
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
            rc = attach_own(&c, fname, md, 0, n, sp);
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

int sion_generic_paropen_mapped(int aid, char *fname, const char *mode, int *numFiles, void *gcommgroup, int grank,
                                int gsize, int *nlocaltasks, int **globalranks, sion_int64 **chunksizes,
                                int **mapping_filenrs, int **mapping_lranks, sion_int32 *fsblksize, FILE **fileptr)
{
    core_clear_error();
    par_api api;
    const char *nm = fname ? fname : "(null)";
    if (par_api_get(aid, &api, nm))
        goto fail;
    if (gsize < 1 || grank < 0 || grank >= gsize) {
        core_fail(SHEAF_E_ARG, "%s: task %d of %d tasks is not possible", nm, grank, gsize);
        goto fail;
    }
    core_mode md;
    memset(&md, 0, sizeof md);
    int rc = (!fname || !*fname) ? core_fail(SHEAF_E_ARG, "no file name given") : core_mode_parse(mode, &md);
    if (!rc && !md.explicit_rw)
        rc = core_fail(SHEAF_E_ARG, "%s: file mode \"%s\" says neither write (w, wb, bw) nor read (r, rb, br)", nm,
                       mode ? mode : "(null)");
    if (!rc && (!numFiles || !nlocaltasks))
        rc = core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen_mapped needs numFiles and nlocaltasks", nm);
    int write = rc ? (mode && strchr(mode, 'w') != NULL) : md.write;
    int sid;
    if (write && !rc && (md.checksum || md.buddy || md.collective)) {
        if (grank == 0)
            core_warn(grank, "%s: a mapped write keeps no checksums, no buddy copies and does no coalescing "
                      "(mode keys ignored)", nm);
        md.checksum = md.buddy = md.collective = 0;
    }
    if (write) {
        int nl = rc ? 0 : *nlocaltasks;
        if (!rc && (nl < 0 || (nl > 0 && (!globalranks || !*globalranks || !chunksizes || !*chunksizes ||
                                          !mapping_filenrs || !*mapping_filenrs || !mapping_lranks ||
                                          !*mapping_lranks))))
            rc = core_fail(SHEAF_E_ARG, "%s: a mapped write needs nlocaltasks >= 0 and the arrays globalranks, "
                           "chunksizes, mapping_filenrs and mapping_lranks", nm);
        if (rc)
            nl = 0;
        int zero = 1;
        sid = mapped_write(&api, nm, &md, rc, rc ? &zero : numFiles, gcommgroup, grank, gsize, nl,
                           nl ? *globalranks : NULL, nl ? *chunksizes : NULL, nl ? *mapping_filenrs : NULL,
                           nl ? *mapping_lranks : NULL, fsblksize, fileptr);
    } else {
        sid = mapped_read(&api, nm, &md, rc, numFiles, gcommgroup, grank, gsize, nlocaltasks, globalranks,
                          chunksizes, mapping_filenrs, mapping_lranks, fsblksize, fileptr);
    }
    if (sid >= 0)
        return sid;
fail:
    core_report_error_rc(grank, SION_ID_UNDEF);
    return SION_ID_UNDEF;
}

int sion_generic_parclose_mapped(int sid)
{
    core_clear_error();
    core_container *c = api_lookup(sid, "sion_generic_parclose_mapped");
    par_state *p = c ? c->par : NULL;
    if (c && (!p || !p->mapped || c->dup)) {
        core_fail(SHEAF_E_ARG, "%s: sion_generic_parclose_mapped: sid %d was not opened with a mapped open", c->name,
                  sid);
        c = NULL;
    }
    if (!c) { /* SIONlib: SION_ID_NOT_VALID, as the non-mapped close */
        core_report_error_rc(-1, SION_ID_NOT_VALID);
        return SION_ID_NOT_VALID;
    }
    api_release(sid);
    c->par = NULL;
    int rc;
    if (p->write) {
        rc = close_mapped_write(c, p); /* frees c */
    } else {
        rc = core_close(c);
    }
    int arc = par_agree(&p->api, p->gcomm, p->grank, p->gsize, rc, p->fname, "sion_generic_parclose_mapped");
    int grank = p->grank;
    root_free(p->root);
    p->root = NULL;
    par_state_free(p);
    if (arc) {
        core_report_error(grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
