/* open_write.c - the write open of sion_generic_paropen (one task per caller):
 * steps G gather split, G bcast verdict, create local group, L gather chunk
 * sizes, master creates the file, L scatter layout, attach, G agree. */
#include "open_int.h"
#include "../sid/sid.h"
#include "../core/endian.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Master, step "master creates the file": the gathered requests (reqs, ls of
 * them; mrc: a failure so far, then nothing is created) -> the file and every
 * task's layout packed into lay. Returns the master's status. */
static int master_create_step(par_state *p, const char *path, const core_mode *md, int ls, const int64_t *reqs,
                              int mrc, int32_t fsb, int64_t *lay)
{
    par_coll_roles roles = {NULL, NULL, NULL};
    int64_t *cs = NULL, *gr = NULL;
    int32_t *caps = NULL;
    if (!mrc) {
        cs = malloc((size_t)ls * sizeof *cs);
        gr = malloc((size_t)ls * sizeof *gr);
        caps = malloc((size_t)ls * sizeof *caps);
        if (!cs || !gr || !caps)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
    }
    for (int t = 0; t < ls && !mrc; t++) {
        par_wire_wreq q;
        mrc = par_wire_wreq_unpack(&q, reqs + PAR_WIRE_WREQ_N * t, PAR_WIRE_WREQ_N);
        if (!mrc) {
            cs[t] = q.chunksize;
            gr[t] = q.grank;
            caps[t] = (int32_t)q.capability;
        }
    }
    if (!mrc)
        mrc = par_open_master_create(p, path, md, ls, cs, caps, gr, fsb, &roles);
    free(cs);
    free(gr);
    free(caps);
    par_open_pack_wlayouts(p, mrc, &roles, md->cmerge, md->checksum, ls, lay);
    par_coll_roles_free(&roles);
    return mrc;
}

int par_open_write(const par_api *api, const char *fname, const core_mode *md, int mode_rc, sion_int64 *chunksize,
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

    par_state *p = par_open_state_new(api, fname, gcomm, grank, gsize);
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
        par_open_state_drop(p);
        return core_fail(SHEAF_E_IO, "%s: the create_local_commgroup callback failed on task %d", fname, grank);
    }
    if (p)
        p->lcomm = lcomm;

    /* L1: chunk size, global rank, capability for coalescing (SIONlib gathers it too) to the master */
    par_wire_wreq wq = {rc ? 0 : *chunksize, grank, par_coll_capability(api, lcomm)};
    int64_t req[PAR_WIRE_WREQ_N], *reqs = NULL, *lay = NULL, ldummy[PAR_WIRE_WLAYOUT_N], buf[PAR_WIRE_WLAYOUT_N];
    par_wire_wreq_pack(&wq, req);
    par_wire_wlayout mine;
    par_wire_wlayout_init(&mine);
    par_wire_wlayout_pack(&mine, buf); /* what stays when the scatter delivers nothing */
    int cbfail = 0, mrc = 0;
    char *path = par_member_path(api, fname, fn);
    if (!path && !rc)
        rc = SHEAF_E_NOMEM;
    if (lr == 0) {
        reqs = malloc((size_t)ls * sizeof req);
        lay = malloc((size_t)ls * sizeof buf);
        if (!reqs || !lay)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", fname, fn);
    }
    if (api->gather(req, reqs ? reqs : ldummy, lcomm, _SION_INT64, PAR_WIRE_WREQ_N, 0))
        cbfail = 1;
    if (lr == 0 && lay)
        mrc = master_create_step(p, path, md, ls, reqs, mrc ? mrc : (cbfail || !path || !p) ? SHEAF_E_IO : 0, fsb,
                                 lay);
    free(reqs);
    /* L2: the layout back (the file exists once this arrives) */
    if (api->scatter(lay ? lay : ldummy, buf, lcomm, _SION_INT64, PAR_WIRE_WLAYOUT_N, 0))
        cbfail = 1;
    free(lay);
    int urc = par_wire_wlayout_unpack(&mine, buf, PAR_WIRE_WLAYOUT_N);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback of the local group failed on task %d", fname, grank);
    if (!rc && urc)
        rc = urc;
    if (!rc && mine.status)
        rc = mrc ? mrc : core_fail((int)mine.status, "%s: the master of file %d could not create it (see its message)",
                                   fname, fn);
    core_container *c = NULL;
    int sid = -1;
    core_mode wmd = *md;
    wmd.checksum = (int)mine.checksum; /* the master decides, so the close's exchange matches */
    if (!rc) {
        par_coll_set(p, mine.coll);
        p->mode.checksum = wmd.checksum;
    }
    if (!rc)
        rc = core_attach_task(&c, path, &wmd, 1, mine.start, mine.chunksize, mine.globalskip, grank, 0, NULL);
    if (!rc) {
        c->fsblksize = fsb;
        par_label_task(c, 0, fn, lr, nf);
        rc = par_open_register(c, p, path, fileptr, newfname, &sid);
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
        par_open_state_drop(p);
        free(path);
        return arc;
    }
    free(path);
    /* *chunksize stays as given: SIONlib 1.7.6 does not write the aligned size back (checked) */
    if (fsblksize)
        *fsblksize = fsb;
    return sid;
}
