/* open.c - sion_generic_paropen / parclose / parreinit: one task per caller.
 *
 * The protocol (collectives in order; doc/parallel.md has the table):
 *   write open : G gather split -> G bcast verdict -> create local group ->
 *                L gather chunk sizes -> master creates the file (META1) ->
 *                L scatter layout -> tasks attach -> G agree (gather + bcast)
 *   read open  : task 0 reads file 0 -> G bcast header facts -> G scatter
 *                (file, lrank, lsize) -> create local group -> master reads its
 *                file -> L scatter task layout -> L scatterv block tables ->
 *                tasks attach -> G agree
 *   write close: tasks detach -> L gather block counts -> L gatherv block
 *                sizes -> (multi-file) G gather mapping to file 0's master ->
 *                masters write META2 (+ mapping) and the header -> G agree
 *   read close : detach -> G agree
 * Every task takes part in every collective even after a local failure, so
 * a failure never leaves another task waiting; G agree turns it into a
 * failure of the call on all tasks. */
#include "openargs.h"
#include "../sid/sid.h"
#include "../core/endian.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOCAL_LAYOUT (5 + PAR_COLL_FIELDS) /* status, start, chunk size, global skip, coalescing roles, checksums */
#define READ_LAYOUT (9 + PAR_COLL_FIELDS)  /* status, start, chunk size, global skip, global rank, nblocks,
                                            * keyval, data_big, coalescing roles, checksums */
#define LOCAL_CK (4 + PAR_COLL_FIELDS)     /* write: the master's decision on checksums */
#define READ_CK (8 + PAR_COLL_FIELDS)      /* read: the file has checksums */

static const char *shown(const char *fname) { return fname ? fname : "(null)"; }

static int valid_rw_mode(const char *mode, core_mode *md, const char *fname)
{
    int rc = core_mode_parse(mode, md);
    if (rc)
        return rc;
    if (!md->explicit_rw)
        return core_fail(SHEAF_E_ARG, "%s: file mode \"%s\" says neither write (w, wb, bw) nor read (r, rb, br)",
                         fname, mode ? mode : "(null)");
    return 0;
}

static par_state *state_new(const par_api *api, const char *fname, void *gcomm, int grank, int gsize)
{
    par_state *p = calloc(1, sizeof *p);
    if (!p || !(p->fname = strdup(fname))) {
        free(p);
        core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        return NULL;
    }
    p->api = *api;
    p->gcomm = gcomm;
    p->grank = grank;
    p->gsize = gsize;
    p->meta.mapping_size = -1;
    p->file0master = -1;
    p->collector = -1;
    return p;
}

/* Finish a failed or closing open: free the local group and the state. */
static void state_drop(par_state *p)
{
    if (!p)
        return;
    if (p->lcomm)
        p->api.free_lcg(p->lcomm);
    par_state_free(p);
}

static int export_and_register(core_container *c, par_state *p, const char *path, FILE **fileptr, char **newfname,
                               int *sid_out)
{
    c->par = p;
    if (newfname) {
        *newfname = strdup(path);
        if (!*newfname)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
    }
    if (fileptr)
        *fileptr = c->files[0].f.fp;
    int sid = api_register(c);
    if (sid < 0) {
        if (newfname) { free(*newfname); *newfname = NULL; }
        return sid;
    }
    *sid_out = sid;
    return 0;
}

/* Master of a write open or reinit: decide coalescing (which may repack cs),
 * then create the file. roles receives the coalescing roles (empty: off). */
static int master_create(par_state *p, const char *path, const core_mode *md, int ls, int64_t *cs,
                         const int32_t *caps, const int64_t *gr, int32_t fsb, par_coll_roles *roles)
{
    core_mode m2;
    int on = par_coll_plan(&p->api, md, &m2, ls, cs, caps, fsb, 1, roles, p->grank, p->fname);
    if (on < 0)
        return on;
    int rc = core_par_create_file_at(path, p->fname, &m2, ls, cs, gr, fsb, p->filenumber, p->nfiles, &p->meta);
    if (!rc)
        p->have_meta = 1;
    return rc;
}

/* ---- write open ---------------------------------------------------------- */
typedef struct write_root_ctx {
    const par_api *api;
    const char *fname;
} write_root_ctx;

/* Task 0 of a write open, once every task's options agree: the split, and
 * fsblksize (-1: detected from the directory of file 0). */
static void write_root(void *ctx, const int64_t *all, int gsize, par_open_verdict *v)
{
    const write_root_ctx *w = ctx;
    v->reason = par_check_split(all, gsize, &v->who, &v->file0master);
    int64_t fsb = par_open_req_get(all, 0, PO_FSBLK);
    if (!v->reason && fsb <= 0) {
        char *p0 = par_member_path(w->api, w->fname, 0);
        fsb = p0 ? core_fsblksize_for(p0) : -1;
        free(p0);
    }
    if (!v->reason && (fsb <= 0 || !core_fsblksize_ok(fsb))) {
        v->reason = SPLIT_FSBLK;
        v->who = fsb;
    }
    v->fsblksize = fsb;
}

static int open_write(const par_api *api, const char *fname, const core_mode *md, int mode_rc, sion_int64 *chunksize,
                      sion_int32 *fsblksize, void *gcomm, int grank, int gsize, int *filenumber, int *numfiles,
                      const int *lrank, const int *lsize, FILE **fileptr, char **newfname)
{
    int rc = mode_rc;
    if (!rc && (!chunksize || !filenumber || !numfiles || !lrank || !lsize))
        rc = core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen for writing needs chunksize, filenumber, numfiles, "
                       "lrank and lsize", fname);
    if (!rc && *chunksize < 0)
        rc = core_fail(SHEAF_E_ARG, "%s: negative chunk size %lld on task %d", fname, (long long)*chunksize, grank);
    if (!rc && *chunksize > INT64_MAX / 4)
        rc = core_fail(SHEAF_E_ARG, "%s: chunk size %lld on task %d too large", fname, (long long)*chunksize, grank);
    if (!rc && (*numfiles < 1 || *filenumber < 0 || *filenumber >= *numfiles || *numfiles > gsize))
        rc = core_fail(SHEAF_E_ARG, "%s: task %d: file %d of %d files is not possible with %d tasks", fname, grank,
                       *filenumber, *numfiles, gsize);
    if (!rc && (*lsize < 1 || *lrank < 0 || *lrank >= *lsize || *lsize > gsize))
        rc = core_fail(SHEAF_E_ARG, "%s: task %d: local rank %d of %d is not possible", fname, grank, *lrank, *lsize);
    if (!rc && fsblksize) /* every task checks its own argument: each gets the full message */
        rc = core_fsblksize_check(fname, *fsblksize);

    /* G1 + G2: arguments and options to task 0, which checks the split and
     * that they agree, and decides fsblksize; the verdict back */
    par_open_req req0;
    par_open_req_init(&req0, rc, 1, md, numfiles, fsblksize, filenumber, lrank, lsize);
    write_root_ctx wctx = {api, fname};
    par_open_verdict v;
    int xcb = 0, xrc = par_open_exchange(api, fname, gcomm, grank, gsize, &req0, write_root, &wctx, &v, &xcb);
    /* A callback that reports failure but delivered its data marks this task
     * failed; the protocol goes on with the data, so that no task waits for
     * one that left early, and the agreement fails the call everywhere. */
    if (xcb && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: sion_generic_paropen: a collective callback failed on task %d", fname,
                       grank);
    if (xrc)
        return rc ? rc : xrc;

    par_state *p = state_new(api, fname, gcomm, grank, gsize);
    int32_t fsb = (int32_t)v.fsblksize;
    int lr = *lrank, ls = *lsize, fn = *filenumber, nf = *numfiles;
    if (p) {
        p->write = 1;
        p->lrank = lr; p->lsize = ls; p->filenumber = fn; p->nfiles = nf;
        p->file0master = (int)v.file0master;
        p->fsblksize = fsb;
        p->mode = *md;
    } else {
        rc = SHEAF_E_NOMEM; /* still take part in the collectives below */
    }
    void *lcomm = NULL;
    if (api->create_lcg(&lcomm, gcomm, grank, gsize, lr, ls, fn, nf)) {
        state_drop(p);
        return core_fail(SHEAF_E_IO, "%s: the create_local_commgroup callback failed on task %d", fname, grank);
    }
    if (p)
        p->lcomm = lcomm;

    /* L1: chunk sizes to the master */
    /* chunk size, global rank, capability for coalescing (SIONlib gathers it too) */
    int64_t req[3] = {rc ? 0 : *chunksize, grank, par_coll_capability(api, lcomm)}, *reqs = NULL,
            ldummy[LOCAL_LAYOUT];
    int64_t *lay = NULL, mylay[LOCAL_LAYOUT] = {SHEAF_E_IO, 0, 0, 0, -1, 1, 0, 0, 0, 0};
    par_coll_roles roles = {NULL, NULL, NULL};
    int cbfail = 0, mrc = 0;
    char *path = par_member_path(api, fname, fn);
    if (!path && !rc)
        rc = SHEAF_E_NOMEM;
    if (lr == 0) {
        reqs = malloc((size_t)ls * sizeof req);
        lay = malloc((size_t)ls * sizeof mylay);
        if (!reqs || !lay)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", fname, fn);
    }
    if (api->gather(req, reqs ? reqs : ldummy, lcomm, _SION_INT64, 3, 0))
        cbfail = 1;
    if (lr == 0 && lay) {
        int64_t *cs = NULL, *gr = NULL;
        int32_t *caps = NULL;
        if (!mrc && !cbfail && path) {
            cs = malloc((size_t)ls * sizeof *cs);
            gr = malloc((size_t)ls * sizeof *gr);
            caps = malloc((size_t)ls * sizeof *caps);
            if (!cs || !gr || !caps)
                mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", fname, fn);
        }
        if (!mrc && !cbfail && path && p) {
            for (int t = 0; t < ls; t++) {
                cs[t] = reqs[3 * t];
                gr[t] = reqs[3 * t + 1];
                caps[t] = (int32_t)reqs[3 * t + 2];
            }
            mrc = master_create(p, path, md, ls, cs, caps, gr, fsb, &roles);
        } else if (!mrc) {
            mrc = SHEAF_E_IO;
        }
        free(cs);
        free(gr);
        free(caps);
        for (int t = 0; t < ls; t++) {
            int64_t *e = lay + LOCAL_LAYOUT * t;
            e[0] = mrc;
            e[1] = mrc ? 0 : p->meta.starts[t];
            e[2] = mrc ? 0 : p->meta.chunksizes[t];
            e[3] = mrc ? 0 : p->meta.globalskip;
            par_coll_fill(e + 4, t, mrc ? NULL : &roles, mrc ? NULL : p->meta.starts, md->cmerge);
            e[LOCAL_CK] = md->checksum;
        }
        par_coll_roles_free(&roles);
    }
    free(reqs);
    /* L2: the layout back (the file exists once this arrives) */
    if (api->scatter(lay ? lay : ldummy, mylay, lcomm, _SION_INT64, LOCAL_LAYOUT, 0))
        cbfail = 1;
    free(lay);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback of the local group failed on task %d", fname, grank);
    if (!rc && mylay[0])
        rc = mrc ? mrc : core_fail((int)mylay[0], "%s: the master of file %d could not create it (see its message)",
                                   fname, fn);
    core_container *c = NULL;
    int sid = -1;
    core_mode wmd = *md;
    wmd.checksum = (int)mylay[LOCAL_CK]; /* the master decides, so the close's exchange matches */
    if (!rc) {
        par_coll_set(p, mylay + 4);
        p->mode.checksum = wmd.checksum;
    }
    if (!rc)
        rc = core_attach_task(&c, path, &wmd, 1, mylay[1], mylay[2], mylay[3], grank, 0, NULL);
    if (!rc) {
        c->fsblksize = fsb;
        par_label_task(c, 0, fn, lr, nf);
        rc = export_and_register(c, p, path, fileptr, newfname, &sid);
    }
    /* G3 + G4: agree */
    int arc = par_agree(api, gcomm, grank, gsize, rc, fname, "sion_generic_paropen");
    if (arc) {
        if (sid >= 0) {
            api_release(sid);
            if (newfname) { free(*newfname); *newfname = NULL; }
        }
        if (c) {
            c->par = NULL;
            core_detach_task(c, NULL, NULL);
        }
        state_drop(p);
        free(path);
        return arc;
    }
    free(path);
    /* *chunksize stays as given: SIONlib 1.7.6 does not write the aligned size back (checked) */
    if (fsblksize)
        *fsblksize = fsb;
    return sid;
}

/* ---- read open ----------------------------------------------------------- */
typedef struct read_root_ctx {
    const par_api *api;
    const char *fname;
    core_meta *m0;
} read_root_ctx;

/* Task 0 of a read open, once every task's options agree: read file 0. */
static void read_root(void *ctx, const int64_t *all, int gsize, par_open_verdict *v)
{
    (void)all; (void)gsize;
    const read_root_ctx *r = ctx;
    core_meta *m0 = r->m0;
    /* SIONlib's task 0 opens file 0 serially here, with a sid of its own:
     * use that number up, so that the sids a program sees are SIONlib's */
    api_skip_ids(1);
    char *p0 = par_member_path(r->api, r->fname, 0);
    int r0 = p0 ? core_meta_read_path(p0, m0) : SHEAF_E_NOMEM;
    if (!r0 && m0->filenumber != 0 && m0->nfiles > 1)
        r0 = core_fail(SHEAF_E_ARG, "%s: is file %d of a %d-file set; open the set by its first file", p0,
                       m0->filenumber, m0->nfiles);
    if (!r0 && m0->nfiles > 1 && m0->mapping_size < m0->nfiles)
        r0 = core_fail(SHEAF_E_FORMAT, "%s: multi-file set of %d files without a task mapping", p0, m0->nfiles);
    free(p0);
    if (r0) {
        v->reason = SPLIT_ROOT;
        v->status = r0;
        return;
    }
    v->nfiles = m0->nfiles > 1 ? m0->nfiles : 1;
    v->ntasks = m0->nfiles > 1 ? m0->mapping_size : m0->ntasks;
    v->fsblksize = m0->fsblksize;
}

static int open_read(const par_api *api, const char *fname, const core_mode *md, int mode_rc, sion_int64 *chunksize,
                     sion_int32 *fsblksize, void *gcomm, int grank, int gsize, int *filenumber, int *numfiles,
                     int *lrank_out, int *lsize_out, FILE **fileptr, char **newfname, int *agreed)
{
    int rc = mode_rc;
    /* G1 + G2: every task's options to task 0 (they must agree), which
     * reads file 0: nfiles, tasks, fsblksize in the verdict */
    core_meta m0;
    memset(&m0, 0, sizeof m0);
    m0.mapping_size = -1;
    read_root_ctx rctx = {api, fname, &m0};
    par_open_req req0;
    par_open_req_init(&req0, rc, 0, md, NULL, NULL, NULL, NULL, NULL);
    par_open_verdict v;
    int xcb = 0, xrc = par_open_exchange(api, fname, gcomm, grank, gsize, &req0, read_root, &rctx, &v, &xcb);
    /* the same on every task: the options agreed (a buddy read may try the copies) */
    *agreed = !v.cbfail && (v.reason == SPLIT_OK || v.reason == SPLIT_ROOT);
    if (xcb && !rc) /* go on with what it delivered (see open_write) */
        rc = core_fail(SHEAF_E_IO, "%s: sion_generic_paropen: a collective callback failed on task %d", fname, grank);
    if (xrc) {
        core_meta_free(&m0);
        return rc ? rc : xrc;
    }
    if (v.ntasks != gsize) {
        core_meta_free(&m0);
        return core_fail(SHEAF_E_ARG, "%s: the container holds %lld tasks but is opened by %d; "
                         "to read it with a different number of tasks use a mapped open "
                         "(sion_paropen_mapped_mpi / sion_generic_paropen_mapped)", fname, (long long)v.ntasks, gsize);
    }
    int64_t head[4] = {0, v.nfiles, v.ntasks, v.fsblksize};
    int nf = (int)head[1];
    /* S1: (status, file, lrank, lsize) of each task from the mapping */
    int32_t *map = NULL, gdummy[4], mine[4] = {0, 0, grank, gsize};
    if (grank == 0) {
        map = malloc((size_t)gsize * sizeof mine);
        int32_t *lsz = nf > 1 ? calloc((size_t)nf, sizeof *lsz) : NULL;
        int bad = !map || (nf > 1 && !lsz);
        for (int g = 0; g < gsize && !bad && nf > 1; g++) {
            int32_t f = m0.mapping[2 * g], l = m0.mapping[2 * g + 1];
            if (f < 0 || f >= nf || l < 0 || l >= gsize)
                bad = 1;
            else
                lsz[f]++;
        }
        if (!bad && nf > 1) { /* each (file, lrank) exactly once: lrank < tasks of that file, no repeats */
            int64_t *base = calloc((size_t)nf + 1, sizeof *base);
            unsigned char *seen = calloc((size_t)gsize, 1);
            bad = !base || !seen;
            for (int k = 0; k < nf && !bad; k++)
                base[k + 1] = base[k] + lsz[k];
            for (int g = 0; g < gsize && !bad; g++) {
                int32_t f = m0.mapping[2 * g], l = m0.mapping[2 * g + 1];
                if (l >= lsz[f] || seen[base[f] + l])
                    bad = 1;
                else
                    seen[base[f] + l] = 1;
            }
            free(base);
            free(seen);
        }
        for (int g = 0; g < gsize && map; g++) {
            int32_t *e = map + 4 * g;
            e[0] = bad ? SHEAF_E_FORMAT : 0;
            e[1] = bad || nf == 1 ? 0 : m0.mapping[2 * g];
            e[2] = bad || nf == 1 ? g : m0.mapping[2 * g + 1];
            e[3] = bad ? 1 : nf == 1 ? gsize : lsz[e[1]];
        }
        free(lsz);
    }
    core_meta_free(&m0);
    int cb = api->scatter(map ? map : gdummy, mine, gcomm, _SION_INT32, 4, 0);
    free(map);
    if (cb && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: sion_generic_paropen: the scatter callback failed on task %d", fname, grank);
    if (mine[0]) /* same verdict on every task */
        return core_fail(SHEAF_E_FORMAT, "%s: the task mapping in the first file is inconsistent", fname);
    int fn = mine[1], lr = mine[2], ls = mine[3];

    par_state *p = state_new(api, fname, gcomm, grank, gsize);
    if (p) {
        p->lrank = lr; p->lsize = ls; p->filenumber = fn; p->nfiles = nf;
        p->fsblksize = (int32_t)head[3];
        p->mode = *md;
    } else if (!rc) {
        rc = SHEAF_E_NOMEM;
    }
    void *lcomm = NULL;
    if (api->create_lcg(&lcomm, gcomm, grank, gsize, lr, ls, fn, nf)) {
        state_drop(p);
        return core_fail(SHEAF_E_IO, "%s: the create_local_commgroup callback failed on task %d", fname, grank);
    }
    if (p)
        p->lcomm = lcomm;
    char *path = par_member_path(api, fname, fn);
    if (!path && !rc)
        rc = SHEAF_E_NOMEM;

    /* master: its file's metadata -> L1 layout, L2 block tables */
    int64_t *lay = NULL, mylay[READ_LAYOUT] = {SHEAF_E_IO, 0, 0, 0, 0, 0, 0, 0, -1, 1, 0, 0, 0, 0}, ldummy[READ_LAYOUT];
    par_coll_roles roles = {NULL, NULL, NULL};
    int64_t *flat = NULL;
    int *counts = NULL;
    int mrc = 0, cbfail = 0;
    core_meta m;
    memset(&m, 0, sizeof m);
    m.mapping_size = -1;
    if (lr == 0) {
        lay = malloc((size_t)ls * sizeof mylay);
        counts = calloc((size_t)ls, sizeof *counts);
        if (!lay || !counts)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", fname, fn);
        if (!mrc)
            mrc = path ? core_meta_read_path(path, &m) : SHEAF_E_NOMEM;
        if (!mrc && (m.ntasks != ls || (nf > 1 && (m.nfiles != nf || m.filenumber != fn))))
            mrc = core_fail(SHEAF_E_FORMAT, "%s: holds %d tasks as file %d of %d, the set's mapping expects %d tasks "
                            "as file %d of %d", path, m.ntasks, m.filenumber, m.nfiles, ls, fn, nf);
        int64_t total = 0;
        for (int t = 0; t < ls && !mrc; t++) {
            if (m.blockcount[t] > INT32_MAX || total > INT64_MAX / 16)
                mrc = core_fail(SHEAF_E_FORMAT, "%s: block table too large", path);
            total += m.blockcount[t];
        }
        if (!mrc && m.crcs)
            total *= 2; /* block sizes and their checksums */
        if (!mrc && total > INT32_MAX)
            mrc = core_fail(SHEAF_E_FORMAT, "%s: block table too large to distribute", path);
        if (!mrc && !(flat = malloc((size_t)(total ? total : 1) * sizeof *flat)))
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
        int kv = (int)(m.format >= 5 ? (m.flag1 >> 32) : 0);
        core_mode m2;
        /* older formats cannot be read collectively (SIONlib); checksummed files are read
         * individually, each task verifying its own blocks */
        if (!mrc && m.format >= 4 && !m.crcs) {
            int on = par_coll_plan(api, md, &m2, ls, m.chunksizes, NULL, (int32_t)m.fsblksize, 0, &roles, grank,
                                   fname);
            if (on < 0)
                mrc = on;
        }
        int64_t k = 0, ck = 0;
        for (int t = 0; t < ls && lay; t++) {
            int64_t *e = lay + READ_LAYOUT * t;
            memset(e, 0, sizeof mylay);
            e[0] = mrc;
            if (mrc)
                continue;
            e[1] = m.starts[t];
            e[2] = core_meta_capacity(&m, t);
            e[3] = m.globalskip;
            e[4] = m.globalranks[t];
            e[5] = m.blockcount[t];
            e[6] = kv ? kv : SION_KEYVAL_NONE;
            e[7] = m.data_big;
            par_coll_fill(e + 8, t, &roles, m.starts, md->cmerge);
            e[READ_CK] = m.crcs != NULL;
            counts[t] = (int)m.blockcount[t] * (m.crcs ? 2 : 1);
            for (int64_t b = 0; b < m.blockcount[t]; b++)
                flat[k++] = m.blocksizes[b * m.ntasks + t];
            for (int64_t b = 0; m.crcs && b < m.blockcount[t]; b++)
                flat[k++] = m.crcs[ck + b];
            ck += m.blockcount[t];
        }
    }
    par_coll_roles_free(&roles);
    if (api->scatter(lay ? lay : ldummy, mylay, lcomm, _SION_INT64, READ_LAYOUT, 0))
        cbfail = 1;
    free(lay);
    int64_t nb = !mylay[0] ? mylay[5] : 0; /* as the master announced it, callback failure or not */
    int with_ck = !mylay[0] && mylay[READ_CK];
    int64_t *mine_b = malloc((size_t)(nb > 0 ? (with_ck ? 2 : 1) * nb : 1) * sizeof *mine_b);
    if (!mine_b && !rc)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (lr == 0 && mrc) /* the tasks know from the status they received */
        for (int t = 0; t < ls && counts; t++)
            counts[t] = 0;
    if (api->scatterv(mine_b ? mine_b : ldummy, flat ? flat : ldummy, lcomm, _SION_INT64, counts,
                      mine_b ? (int)nb * (with_ck ? 2 : 1) : 0, 0))
        cbfail = 1;
    free(flat);
    free(counts);
    core_meta_free(&m);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback of the local group failed on task %d", fname, grank);
    if (!rc && mylay[0])
        rc = mrc ? mrc : core_fail((int)mylay[0], "%s: the master of file %d could not read it (see its message)",
                                   fname, fn);
    if (!rc && md->keyval != SION_KEYVAL_NOTSET && md->keyval != SION_KEYVAL_UNKNOWN && md->keyval != mylay[6])
        rc = core_fail(SHEAF_E_ARG, "%s: mode asks for key-value mode %s but the file has %s", fname,
                       sion_keyval_type_to_str(md->keyval), sion_keyval_type_to_str((int)mylay[6]));
    core_container *c = NULL;
    int sid = -1;
    if (!rc)
        par_coll_set(p, mylay + 8);
    uint32_t *crcs = NULL;
    if (!rc && with_ck && nb > 0) {
        if (!(crcs = malloc((size_t)nb * sizeof *crcs)))
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        for (int64_t b = 0; crcs && b < nb; b++)
            crcs[b] = (uint32_t)mine_b[nb + b];
    }
    if (!rc) {
        core_attach_spec sp = {path, mylay[1], mylay[2], mylay[3], mylay[4], nb, mine_b, crcs};
        rc = core_attach_tasks(&c, path, md, 0, 1, &sp);
    }
    free(crcs);
    free(mine_b);
    if (!rc) {
        c->keyval = (int)mylay[6];
        c->data_big = (int)mylay[7];
        c->fsblksize = (int32_t)head[3];
        par_label_task(c, 0, fn, lr, nf);
        rc = export_and_register(c, p, path, fileptr, newfname, &sid);
    }
    int arc = par_agree(api, gcomm, grank, gsize, rc, fname, "sion_generic_paropen");
    if (arc) {
        if (sid >= 0) {
            api_release(sid);
            if (newfname) { free(*newfname); *newfname = NULL; }
        }
        if (c) {
            c->par = NULL;
            core_close(c);
        }
        state_drop(p);
        free(path);
        return arc;
    }
    free(path);
    if (chunksize) *chunksize = mylay[2];
    if (fsblksize) *fsblksize = (int32_t)head[3];
    if (filenumber) *filenumber = fn;
    if (numfiles) *numfiles = nf;
    if (lrank_out) *lrank_out = lr;
    if (lsize_out) *lsize_out = ls;
    return sid;
}

/* ---- buddy copies (buddy.c has the rest) ---------------------------------- */
static int close_sid(int sid);

/* After the write open of the container: open its buddy copies (buddy.c);
 * on failure (agreed, so on all tasks) release them and close the container. */
static int open_buddies_write(const par_api *api, const char *fname, const core_mode *md, int sid,
                              sion_int64 chunk_req, sion_int32 *fsblksize, void *gcomm, int grank, int gsize,
                              int *filenumber, int *numfiles, const int *lrank, const int *lsize)
{
    (void)api; (void)fsblksize; (void)gcomm; (void)grank; (void)gsize; (void)filenumber; (void)numfiles;
    (void)lrank; (void)lsize;
    if (sid < 0)
        return sid;
    core_container *c = api_lookup(sid, "sion_generic_paropen");
    par_state *p = c->par; /* a sid this open just registered */
    int levels = md->buddy > PAR_BUDDY_MAX ? PAR_BUDDY_MAX : md->buddy;
    int rc = par_buddy_open_write(p, levels, chunk_req, fname);
    if (!rc)
        return sid;
    int keep = sheaf_last_error_code();
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", sheaf_last_error());
    par_buddy_free(p);
    close_sid(sid);
    return core_fail(keep ? keep : SHEAF_E_IO, "%s", msg);
}

/* Read open in buddy mode: the container, else the first buddy copy that opens. */
static int open_buddy_read(const par_api *api, const char *fname, const core_mode *md, int sid,
                           sion_int64 *chunksize, sion_int32 *fsblksize, void *gcomm, int grank, int gsize,
                           int *filenumber, int *numfiles, int *lrank, int *lsize, FILE **fileptr, char **newfname)
{
    if (sid >= 0) {
        core_container *c = api_lookup(sid, "sion_generic_paropen");
        if (c && c->par) /* opened with buddy (sion_get_io_info) */
            ((par_state *)c->par)->mode.buddy = md->buddy;
        return sid;
    }
    char why[1024];
    snprintf(why, sizeof why, "%s", sheaf_last_error());
    int levels = md->buddy > PAR_BUDDY_MAX ? PAR_BUDDY_MAX : md->buddy;
    for (int b = 1; b <= levels; b++) {
        char *bn = par_buddy_name(fname, b);
        if (!bn)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        int bsid = par_buddy_open_read(api, fname, md, b, gcomm, grank, gsize, chunksize, fsblksize, filenumber,
                                       numfiles, lrank, lsize, fileptr, newfname);
        if (bsid >= 0) {
            if (grank == 0)
                core_warn(grank, "%s: cannot be read (%s); reading its buddy copy %s", fname, why, bn);
            free(bn);
            return bsid;
        }
        free(bn);
    }
    return core_fail(SHEAF_E_NOTFOUND, "%s: neither the container nor any of its %d buddy copies can be read "
                     "(container: %s)", fname, levels, why);
}

int sion_generic_paropen(int aid, const char *fname, const char *mode, sion_int64 *chunksize, sion_int32 *fsblksize,
                         void *gcommgroup, int grank, int gsize, int *filenumber, int *numfiles, const int *lrank,
                         const int *lsize, FILE **fileptr, char **newfname)
{
    core_clear_error();
    par_api api;
    const char *nm = shown(fname);
    if (par_api_get(aid, &api, nm))
        goto fail;
    if (gsize < 1 || grank < 0 || grank >= gsize) {
        core_fail(SHEAF_E_ARG, "%s: task %d of %d tasks is not possible", nm, grank, gsize);
        goto fail;
    }
    core_mode md;
    int mrc = fname && *fname ? valid_rw_mode(mode, &md, nm) : core_fail(SHEAF_E_ARG, "no file name given");
    if (mrc)
        memset(&md, 0, sizeof md);
    /* a mode every task parses the same way decides the path; a task whose
     * mode fails still follows its w/r so that it meets the others */
    int write = mrc ? (mode && strchr(mode, 'w') != NULL) : md.write;
    int sid, agreed = 1;
    sion_int64 chunk_req = chunksize ? *chunksize : 0;
    if (write)
        sid = open_write(&api, nm, &md, mrc, chunksize, fsblksize, gcommgroup, grank, gsize, filenumber, numfiles,
                         lrank, lsize, fileptr, newfname);
    else /* SIONlib hands lrank/lsize back in read mode through these pointers */
        sid = open_read(&api, nm, &md, mrc, chunksize, fsblksize, gcommgroup, grank, gsize, filenumber, numfiles,
                        (int *)(uintptr_t)lrank, (int *)(uintptr_t)lsize, fileptr, newfname, &agreed);
    /* buddy levels are among the options every task agreed on (a write that
     * failed tries no copy; a read whose options disagreed neither) */
    if (!mrc && md.buddy > 0 && agreed)
        sid = write ? open_buddies_write(&api, nm, &md, sid, chunk_req, fsblksize, gcommgroup, grank, gsize,
                                         filenumber, numfiles, lrank, lsize)
                    : open_buddy_read(&api, nm, &md, sid, chunksize, fsblksize, gcommgroup, grank, gsize, filenumber,
                                      numfiles, (int *)(uintptr_t)lrank, (int *)(uintptr_t)lsize, fileptr, newfname);
    if (sid >= 0)
        return sid;
fail:
    core_report_error_rc(grank, SION_ID_UNDEF);
    return SION_ID_UNDEF;
}

/* ---- close --------------------------------------------------------------- */
static int close_sid(int sid) { return sion_generic_parclose(sid); }

/* Look up a parallel (non-mapped) sid; NULL with a message otherwise. */
static core_container *par_lookup(int sid, const char *call, int mapped)
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

int sion_generic_parclose(int sid)
{
    core_clear_error();
    core_container *c = par_lookup(sid, "sion_generic_parclose", 0);
    if (!c) { /* SIONlib: SION_ID_NOT_VALID for a sid that is not open (e.g. closed already) */
        core_report_error_rc(-1, SION_ID_NOT_VALID);
        return SION_ID_NOT_VALID;
    }
    par_state *p = c->par;
    const par_api *api = &p->api;
    int brc = p->write && p->nbuddy ? par_buddy_close_write(p) : 0; /* the copies first; agreed below */
    par_buddy_free(p);
    api_release(sid);
    c->par = NULL;
    int rc = brc;
    if (p->write) {
        /* the task's data and block table */
        int r0 = core_sync(c);
        if (!rc)
            rc = r0;
        int ck = p->mode.checksum; /* decided by the master at open: every task sends sizes + checksums */
        if (!rc && ck)
            rc = core_cksum_finish_task(c, 0);
        int64_t nb = c->tasks[0].nblocks;
        int64_t *bs = malloc((size_t)nb * (ck ? 2 : 1) * sizeof *bs);
        if (bs) {
            memcpy(bs, c->tasks[0].bsize, (size_t)nb * sizeof *bs);
            for (int64_t b = 0; ck && b < nb; b++)
                bs[nb + b] = c->tasks[0].crc_on ? c->tasks[0].bcrc[b] : 0;
        } else if (!rc) {
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
        }
        int r2 = core_detach_task(c, NULL, NULL);
        if (!rc)
            rc = r2;
        if (!bs)
            nb = 0;
        /* L1 + L2: block counts and sizes to the master */
        int64_t mine[2] = {nb, rc}, *cnt = NULL, dummy[2];
        int64_t *flat = NULL;
        int *counts = NULL, cbfail = 0, mrc = 0;
        if (p->lrank == 0) {
            cnt = malloc((size_t)p->lsize * sizeof mine);
            counts = malloc((size_t)p->lsize * sizeof *counts);
            if (!cnt || !counts)
                mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
        }
        if (nb > INT32_MAX / 2)
            nb = 0;
        if (api->gather(mine, cnt ? cnt : dummy, p->lcomm, _SION_INT64, 2, 0))
            cbfail = 1;
        int64_t total = 0, *bcount = NULL;
        if (p->lrank == 0 && cnt && counts) {
            bcount = malloc((size_t)p->lsize * sizeof *bcount);
            for (int t = 0; t < p->lsize; t++) {
                counts[t] = (int)cnt[2 * t] * (ck ? 2 : 1); /* as each task announced it */
                total += counts[t];
                if (bcount)
                    bcount[t] = cnt[2 * t];
            }
            flat = malloc((size_t)(total ? total : 1) * sizeof *flat);
            if (!flat || !bcount) {
                mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
                for (int t = 0; t < p->lsize; t++)
                    counts[t] = 0;
            }
        }
        if (api->gatherv(bs ? bs : dummy, flat ? flat : dummy, p->lcomm, _SION_INT64, counts,
                         bs ? (int)nb * (ck ? 2 : 1) : 0, 0))
            cbfail = 1;
        free(bs);
        if (p->lrank == 0 && ck && flat && bcount && !mrc) /* [sizes, checksums] per task -> two tables */
            mrc = split_checksums(p, flat, bcount);
        /* G: the mapping to the task writing file 0 (multi-file only) */
        int32_t *map = NULL, me[2] = {p->filenumber, p->lrank}, mdummy[2];
        if (p->nfiles > 1) {
            if (p->grank == p->file0master && !(map = malloc((size_t)p->gsize * sizeof me)))
                mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory for the task mapping", p->fname);
            if (api->gather(me, map ? map : mdummy, p->gcomm, _SION_INT32, 2, p->file0master))
                cbfail = 1;
        }
        if (p->lrank == 0) {
            if (!mrc && cbfail)
                mrc = core_fail(SHEAF_E_IO, "%s: a collective callback failed while closing", p->fname);
            if (!mrc && p->have_meta) {
                char *path = par_member_path(api, p->fname, p->filenumber);
                /* the metadata is written even when a task failed: what the others
                 * wrote stays readable */
                mrc = path ? core_par_write_tail_at(path, p->fname, &p->meta, bcount, flat,
                                                    p->filenumber == 0 && p->nfiles > 1 ? map : NULL, p->gsize)
                           : SHEAF_E_NOMEM;
                free(path);
            }
            for (int t = 0; t < p->lsize && cnt && !mrc; t++)
                if (cnt[2 * t + 1] && !rc)
                    rc = core_fail((int)cnt[2 * t + 1], "%s: task %d of file %d failed writing its data", p->fname,
                                   t, p->filenumber);
            if (!rc)
                rc = mrc;
        }
        if (!rc && cbfail)
            rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed while closing", p->fname);
        free(map);
        free(cnt);
        free(counts);
        free(flat);
        free(bcount);
    } else {
        int r0 = core_close(c);
        if (!rc)
            rc = r0;
    }
    int arc = par_agree(api, p->gcomm, p->grank, p->gsize, rc, p->fname, "sion_generic_parclose");
    int grank = p->grank;
    state_drop(p);
    if (arc) {
        core_report_error(grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}

int sion_generic_parreinit(int sid, sion_int64 chunksize)
{
    core_clear_error();
    core_container *c = par_lookup(sid, "sion_generic_parreinit", 0);
    if (!c) { /* SIONlib: SION_ID_NOT_VALID for a sid that is not open */
        core_report_error_rc(-1, SION_ID_NOT_VALID);
        return SION_ID_NOT_VALID;
    }
    par_state *p = c->par;
    const par_api *api = &p->api;
    int rc = 0;
    if (!p->write)
        rc = core_fail(SHEAF_E_ARG, "%s: sion_generic_parreinit needs a container opened for writing", p->fname);
    else if (p->nbuddy) /* the same on every task (buddy levels are agreed): no collective is entered */
        rc = core_fail(SHEAF_E_ARG, "%s: sion_generic_parreinit of a container with buddy copies is not supported",
                       p->fname);
    else if (chunksize < 0 || chunksize > INT64_MAX / 4)
        rc = core_fail(SHEAF_E_ARG, "%s: invalid chunk size %lld for reinit", p->fname, (long long)chunksize);
    /* what was written so far goes out of the buffers before the master truncates */
    if (p->write) {
        int r2 = core_flush(c);
        if (!rc)
            rc = r2;
    }
    /* nothing changes unless every task can go on: a refused reinit leaves the
     * container as it was */
    int vcb = 0;
    if (par_vote(api, p->gcomm, p->grank, p->gsize, rc, p->fname, "sion_generic_parreinit", &vcb)) {
        core_report_error(p->grank);
        return SION_NOT_SUCCESS;
    }
    if (vcb && !rc) /* only this task's callback failed: go on, its master refuses below */
        rc = core_fail(SHEAF_E_IO, "%s: sion_generic_parreinit: a collective callback failed on task %d", p->fname,
                       p->grank);
    int64_t req[4] = {rc ? 0 : chunksize, p->grank, rc, par_coll_capability(api, p->lcomm)}, *reqs = NULL,
            dummy[LOCAL_LAYOUT];
    int64_t *lay = NULL, mylay[LOCAL_LAYOUT] = {SHEAF_E_IO, 0, 0, 0, -1, 1, 0, 0, 0, 0};
    par_coll_roles roles = {NULL, NULL, NULL};
    int mrc = 0, cbfail = 0;
    if (p->lrank == 0) {
        reqs = malloc((size_t)p->lsize * sizeof req);
        lay = malloc((size_t)p->lsize * sizeof mylay);
        if (!reqs || !lay)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
    }
    if (api->gather(req, reqs ? reqs : dummy, p->lcomm, _SION_INT64, 4, 0))
        cbfail = 1;
    if (p->lrank == 0 && lay) {
        int64_t *cs = malloc((size_t)p->lsize * sizeof *cs), *gr = malloc((size_t)p->lsize * sizeof *gr);
        int32_t *caps = malloc((size_t)p->lsize * sizeof *caps);
        if (!cs || !gr || !caps)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
        for (int t = 0; t < p->lsize && !mrc && !cbfail; t++) {
            cs[t] = reqs[4 * t];
            gr[t] = reqs[4 * t + 1];
            caps[t] = (int32_t)reqs[4 * t + 3];
            if (reqs[4 * t + 2])
                mrc = core_fail((int)reqs[4 * t + 2], "%s: sion_generic_parreinit failed on task %lld (see its "
                                "message)", p->fname, (long long)reqs[4 * t + 1]);
        }
        if (!mrc && cbfail)
            mrc = SHEAF_E_IO;
        if (!mrc) {
            char *path = par_member_path(api, p->fname, p->filenumber);
            core_meta_free(&p->meta);
            p->have_meta = 0;
            mrc = path ? master_create(p, path, &p->mode, p->lsize, cs, caps, gr, p->fsblksize, &roles)
                       : SHEAF_E_NOMEM;
            free(path);
        }
        for (int t = 0; t < p->lsize; t++) {
            int64_t *e = lay + LOCAL_LAYOUT * t;
            e[0] = mrc;
            e[1] = mrc ? 0 : p->meta.starts[t];
            e[2] = mrc ? 0 : p->meta.chunksizes[t];
            e[3] = mrc ? 0 : p->meta.globalskip;
            par_coll_fill(e + 4, t, mrc ? NULL : &roles, mrc ? NULL : p->meta.starts, p->mode.cmerge);
        }
        free(cs);
        free(gr);
        free(caps);
        par_coll_roles_free(&roles);
    }
    free(reqs);
    if (api->scatter(lay ? lay : dummy, mylay, p->lcomm, _SION_INT64, LOCAL_LAYOUT, 0))
        cbfail = 1;
    free(lay);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed in sion_generic_parreinit", p->fname);
    if (!rc && mylay[0])
        rc = mrc ? mrc : core_fail((int)mylay[0], "%s: the master of file %d could not rewrite it (see its message)",
                                   p->fname, p->filenumber);
    if (!rc) {
        /* the same handle, moved to the new chunk: nothing written is kept */
        core_task *t = &c->tasks[0];
        t->start = mylay[1];
        t->chunksize = mylay[2];
        t->nblocks = 1;
        t->bsize[0] = 0;
        if (t->crc_on)
            t->bcrc[0] = 0, t->bcrclen[0] = 0;
        t->cur_block = 0;
        t->cur_pos = 0;
        c->files[0].m.globalskip = mylay[3];
        if (c->files[0].jfd1) { /* the master removed the journal with the old data: start a new one */
            close(c->files[0].jfd1 - 1);
            c->files[0].jfd1 = 0;
        }
        par_coll_set(p, mylay + 4);
        rc = core_place(c);
    }
    if (par_agree(api, p->gcomm, p->grank, p->gsize, rc, p->fname, "sion_generic_parreinit")) {
        core_report_error(p->grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
