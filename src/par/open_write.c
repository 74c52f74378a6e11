/* open_write.c - the write open of sion_generic_paropen (one task per caller),
 * one function per step of doc/parallel.md's write table: check_step (local),
 * options_step (G gather + G bcast), local_group_step, requests_step (L
 * gather; the master creates the file), layout_step (L scatter), attach_step,
 * agree_step (G agree). The per-call context (ctx.h) carries the first
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
static int master_create_step(par_state *p, const char *path, const core_mode *md, int ls, const int64_t *reqs, int mrc,
                              int32_t fsb, int64_t *lay)
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

/* One task's write open: the context and what the steps hand on. */
typedef struct wopen {
    par_open_task o; /* first: what every open holds */
    par_wire_wlayout mine;
    core_container *c;
    int sid;
} wopen;

/* Step "check" (local): this task's own arguments. */
static void check_step(wopen *w)
{
    const par_open_args *a = w->o.a;
    par_ctx *x = &w->o.x;
    par_ctx_take(x, a->mode_rc);
    par_ctx_step(x, "check");
    if (!par_ctx_ok(x))
        return;
    if (!a->chunksize || !a->filenumber || !a->numfiles || !a->lrank || !a->lsize) {
        par_ctx_fail(x, SHEAF_E_ARG,
                     "%s: sion_generic_paropen for writing needs chunksize, filenumber, numfiles, "
                     "lrank and lsize",
                     a->fname);
        return;
    }
    int g = a->grank, nf = *a->numfiles, fn = *a->filenumber, lr = *a->lrank, ls = *a->lsize;
    if (*a->chunksize < 0)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: negative chunk size %lld on task %d", a->fname, (long long)*a->chunksize, g);
    else if (*a->chunksize > INT64_MAX / 4)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: chunk size %lld on task %d too large", a->fname, (long long)*a->chunksize, g);
    else if (nf < 1 || fn < 0 || fn >= nf || nf > a->gsize)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: task %d: file %d of %d files is not possible with %d tasks", a->fname, g, fn,
                     nf, a->gsize);
    else if (ls < 1 || lr < 0 || lr >= ls || ls > a->gsize)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: task %d: local rank %d of %d is not possible", a->fname, g, lr, ls);
    else if (a->fsblksize) /* every task checks its own argument: each gets the full message */
        par_ctx_take(x, core_fsblksize_check(a->fname, *a->fsblksize));
}

/* Step "options" (G gather + G bcast): arguments and options to task 0,
 * which checks the split and that they agree, and decides fsblksize.
 * Returns non-zero when the verdict fails the open (the same on every task). */
static int options_step(wopen *w, par_open_verdict *v)
{
    const par_open_args *a = w->o.a;
    par_ctx_step(&w->o.x, "options");
    par_open_req req;
    par_open_req_init(&req, w->o.x.rc, 1, a->md, a->numfiles, a->fsblksize, a->filenumber, a->lrank, a->lsize);
    write_root_ctx wctx = {a->api, a->fname};
    int xcb = 0,
        xrc = par_open_exchange(a->api, a->fname, a->gcomm, a->grank, a->gsize, &req, write_root, &wctx, v, &xcb);
    /* a callback that reports failure but delivered its data: go on with the
     * data, so that no task waits for one that left early */
    if (xcb)
        par_ctx_fail(&w->o.x, SHEAF_E_IO, "%s: sion_generic_paropen: a collective callback failed on task %d", a->fname,
                     a->grank);
    if (xrc && w->o.x.rc) /* its own first message, the agreed code */
        w->o.x.rc = xrc;
    else if (xrc)
        par_ctx_take(&w->o.x, xrc);
    return xrc;
}

/* Step "local group": the task's state and the local group of its file.
 * Returns the agreed code when the open ends here (on every task). */
static int local_group_step(wopen *w, const par_open_verdict *v)
{
    const par_open_args *a = w->o.a;
    w->o.fn = *a->filenumber;
    w->o.nf = *a->numfiles;
    w->o.fsb = (int32_t)v->fsblksize;
    w->o.x.lrank = *a->lrank;
    w->o.x.lsize = *a->lsize;
    int rc = par_open_local_group(&w->o);
    if (rc)
        return rc;
    if (w->o.p) {
        w->o.p->write = 1;
        w->o.p->file0master = (int)v->file0master;
    }
    return 0;
}

/* Step "requests" (L gather): chunk size, global rank and capability for
 * coalescing (SIONlib gathers it too) to the master, which creates the file
 * ("master creates the file"). Returns the master's layouts (NULL elsewhere). */
static int64_t *requests_step(wopen *w)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "requests");
    int ls = x->lsize;
    par_wire_wreq wq = {par_ctx_ok(x) ? *w->o.a->chunksize : 0, x->grank, par_coll_capability(x->api, x->lcomm)};
    int64_t req[PAR_WIRE_WREQ_N], *reqs = NULL, *lay = NULL;
    par_wire_wreq_pack(&wq, req);
    int mrc = 0;
    if (x->lrank == 0) {
        reqs = par_root_malloc((size_t)ls * sizeof req, "requests");
        lay = par_root_malloc((size_t)ls * PAR_WIRE_WLAYOUT_N * sizeof *lay, "layout");
        if (!reqs || !lay)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", x->fname, w->o.fn);
        par_ctx_take(x, mrc); /* still takes part: par_ctx_gather with no buffer (rootbuf.c) */
    }
    par_ctx_gather(x, 1, req, reqs, _SION_INT64, PAR_WIRE_WREQ_N, 0);
    if (x->lrank == 0 && lay) { /* no reqs: x->rc is set, it packs the failure */
        par_ctx_step(x, "create");
        mrc = master_create_step(w->o.p, w->o.path, w->o.a->md, ls, reqs, x->rc, w->o.fsb, lay); /* its code goes out */
        par_ctx_take(x, mrc);
    } else {
        par_ctx_take(x, mrc);
    }
    free(reqs);
    return lay;
}

/* Step "layout" (L scatter): the task's place in the file (it exists once
 * this arrives). */
static void layout_step(wopen *w, int64_t *lay)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "layout");
    int64_t buf[PAR_WIRE_WLAYOUT_N];
    par_wire_wlayout_init(&w->mine);
    par_wire_wlayout_pack(&w->mine, buf); /* what stays when the scatter delivers nothing */
    par_ctx_scatter(x, 1, lay, buf, _SION_INT64, PAR_WIRE_WLAYOUT_N, 0);
    free(lay);
    par_ctx_take(x, par_wire_wlayout_unpack(&w->mine, buf, PAR_WIRE_WLAYOUT_N));
    if (w->mine.status)
        par_ctx_fail(x, (int)w->mine.status, "%s: the master of file %d could not create it (see its message)",
                     x->fname, w->o.fn);
}

/* Step "attach" (local): the task's chunk, its sid. */
static void attach_step(wopen *w)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "attach");
    if (!par_ctx_ok(x))
        return;
    core_mode wmd = *w->o.a->md;
    wmd.checksum = (int)w->mine.checksum; /* the master decides, so the close's exchange matches */
    par_coll_set(w->o.p, w->mine.coll);
    w->o.p->mode.checksum = wmd.checksum;
    int rc = core_attach_task(&w->c, w->o.path, &wmd, 1, w->mine.start, w->mine.chunksize, w->mine.globalskip, x->grank,
                              0, NULL);
    if (!rc) {
        w->c->fsblksize = w->o.fsb;
        par_label_task(w->c, 0, w->o.fn, x->lrank, w->o.nf);
        rc = par_open_register(w->c, w->o.p, w->o.path, w->o.a->fileptr, w->o.a->newfname, &w->sid);
    }
    par_ctx_take(x, rc);
}

/* Step "agree" (G gather + G bcast): the sid on every task, or the agreed
 * failure (everything this open made released). */
static int agree_step(wopen *w)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "agree");
    int arc = par_ctx_agree(x);
    if (arc) {
        par_open_undo(w->sid, w->c, 1, w->sid >= 0 ? w->o.a->newfname : NULL);
        return par_open_task_undo(&w->o); /* state, local group, path */
    }
    free(w->o.path);
    /* *chunksize stays as given: SIONlib 1.7.6 does not write the aligned size back (checked) */
    if (w->o.a->fsblksize)
        *w->o.a->fsblksize = w->o.fsb;
    return w->sid;
}

int par_open_write(const par_open_args *a)
{
    wopen w;
    memset(&w, 0, sizeof w);
    w.o.a = a;
    w.sid = -1;
    par_ctx_init(&w.o.x, a->api, a->fname, "sion_generic_paropen", a->gcomm, a->grank, a->gsize);
    check_step(&w);
    par_open_verdict v;
    if (options_step(&w, &v))
        return par_ctx_restore(&w.o.x);
    int rc = local_group_step(&w, &v);
    if (rc)
        return rc;
    layout_step(&w, requests_step(&w));
    attach_step(&w);
    return agree_step(&w);
}
