/* reinit.c - sion_generic_parreinit, one function per step of
 * doc/parallel.md: check (local: arguments, flush), vote (G gather + G bcast:
 * a reinit refused on any task changes nothing), requests_step (L gather of
 * par_wire_rreq; the master rewrites the file), layout_step (L scatter of
 * par_wire_wlayout, the task moves to its new chunk), G agree. */
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

/* Master, step "master rewrites the file": the gathered requests (reqs;
 * mrc: a failure so far) -> the file truncated and laid out anew for the new
 * chunk sizes, every task's layout packed into lay. Returns its status. */
static int master_rewrite_step(par_state *p, const int64_t *reqs, int mrc, int cbfail, int64_t *lay)
{
    par_coll_roles roles = {NULL, NULL, NULL};
    int64_t *cs = malloc((size_t)p->lsize * sizeof *cs), *gr = malloc((size_t)p->lsize * sizeof *gr);
    int32_t *caps = malloc((size_t)p->lsize * sizeof *caps);
    if (!mrc && (!cs || !gr || !caps))
        mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
    for (int t = 0; t < p->lsize && !mrc && !cbfail; t++) {
        par_wire_rreq q;
        mrc = par_wire_rreq_unpack(&q, reqs + PAR_WIRE_RREQ_N * t, PAR_WIRE_RREQ_N);
        if (mrc)
            break;
        cs[t] = q.chunksize;
        gr[t] = q.grank;
        caps[t] = (int32_t)q.capability;
        if (q.status)
            mrc = core_fail((int)q.status, "%s: sion_generic_parreinit failed on task %lld (see its message)", p->fname,
                            (long long)q.grank);
    }
    if (!mrc && cbfail)
        mrc = SHEAF_E_IO;
    if (!mrc) {
        char *path = par_member_path(&p->api, p->fname, p->filenumber);
        core_meta_free(&p->meta);
        p->have_meta = 0;
        mrc = path ? par_open_master_create(p, path, &p->mode, p->lsize, cs, caps, gr, p->fsblksize, &roles)
                   : SHEAF_E_NOMEM;
        free(path);
    }
    par_open_pack_wlayouts(p, mrc, &roles, p->mode.cmerge, p->mode.checksum, p->lsize, lay);
    free(cs);
    free(gr);
    free(caps);
    par_coll_roles_free(&roles);
    return mrc;
}

/* Step "check" (local): the arguments; what was written so far goes out of
 * the buffers before the master truncates. */
static void check_step(par_ctx *x, par_state *p, core_container *c, sion_int64 chunksize)
{
    par_ctx_step(x, "check");
    if (!p->write)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: sion_generic_parreinit needs a container opened for writing", p->fname);
    else if (p->nbuddy) /* the same on every task (buddy levels are agreed): no collective is entered */
        par_ctx_fail(x, SHEAF_E_ARG, "%s: sion_generic_parreinit of a container with buddy copies is not supported",
                     p->fname);
    else if (chunksize < 0 || chunksize > INT64_MAX / 4)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: invalid chunk size %lld for reinit", p->fname, (long long)chunksize);
    if (p->write)
        par_ctx_take(x, core_flush(c));
}

/* Step "requests" (L gather): new chunk size, global rank, status and
 * capability to the master, which rewrites the file ("master rewrites the
 * file"). Returns the master's layouts (NULL elsewhere). */
static int64_t *requests_step(par_ctx *x, par_state *p, sion_int64 chunksize)
{
    par_ctx_step(x, "requests");
    par_wire_rreq rq = {par_ctx_ok(x) ? chunksize : 0, p->grank, x->rc, par_coll_capability(x->api, p->lcomm)};
    int64_t req[PAR_WIRE_RREQ_N], *reqs = NULL, *lay = NULL;
    par_wire_rreq_pack(&rq, req);
    int mrc = 0;
    if (p->lrank == 0) {
        reqs = par_root_malloc((size_t)p->lsize * sizeof req, "requests");
        lay = par_root_malloc((size_t)p->lsize * PAR_WIRE_WLAYOUT_N * sizeof *lay, "layout");
        if (!reqs || !lay)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
        par_ctx_take(x, mrc); /* still takes part: par_ctx_gather with no buffer (rootbuf.c) */
    }
    int cbfail = par_ctx_gather(x, 1, req, reqs, _SION_INT64, PAR_WIRE_RREQ_N, 0);
    if (p->lrank == 0 && lay) { /* no reqs: x->rc is set, it packs the failure */
        par_ctx_step(x, "rewrite");
        mrc = master_rewrite_step(p, reqs, x->rc, cbfail, lay); /* its code goes out */
    }
    par_ctx_take(x, mrc);
    free(reqs);
    return lay;
}

/* Step "layout" (L scatter): the new layout; the same handle moves to the
 * new chunk (nothing written is kept). */
static void layout_step(par_ctx *x, par_state *p, core_container *c, int64_t *lay)
{
    par_ctx_step(x, "layout");
    int64_t buf[PAR_WIRE_WLAYOUT_N];
    par_wire_wlayout mine;
    par_wire_wlayout_init(&mine);
    par_wire_wlayout_pack(&mine, buf);
    par_ctx_scatter(x, 1, lay, buf, _SION_INT64, PAR_WIRE_WLAYOUT_N, 0);
    free(lay);
    par_ctx_take(x, par_wire_wlayout_unpack(&mine, buf, PAR_WIRE_WLAYOUT_N));
    if (mine.status)
        par_ctx_fail(x, (int)mine.status, "%s: the master of file %d could not rewrite it (see its message)", p->fname,
                     p->filenumber);
    if (!par_ctx_ok(x))
        return;
    core_task *t = &c->tasks[0];
    t->start = mine.start;
    t->chunksize = mine.chunksize;
    t->nblocks = 1;
    t->bsize[0] = 0;
    if (t->crc_on)
        t->bcrc[0] = 0, t->bcrclen[0] = 0;
    t->cur_block = 0;
    t->cur_pos = 0;
    c->files[0].m.globalskip = mine.globalskip;
    if (c->files[0].jfd1) { /* the master removed the journal with the old data: start a new one */
        close(c->files[0].jfd1 - 1);
        c->files[0].jfd1 = 0;
    }
    par_coll_set(p, mine.coll);
    par_ctx_take(x, core_place(c));
}

int sion_generic_parreinit(int sid, sion_int64 chunksize)
{
    core_clear_error();
    core_container *c = par_open_lookup(sid, "sion_generic_parreinit", 0);
    if (!c) { /* SIONlib: SION_ID_NOT_VALID for a sid that is not open */
        core_report_error_rc(-1, SION_ID_NOT_VALID);
        return SION_ID_NOT_VALID;
    }
    par_state *p = c->par;
    par_ctx x;
    par_ctx_init(&x, &p->api, p->fname, "sion_generic_parreinit", p->gcomm, p->grank, p->gsize);
    x.lcomm = p->lcomm;
    x.lrank = p->lrank;
    x.lsize = p->lsize;
    check_step(&x, p, c, chunksize);
    /* nothing changes unless every task can go on: a refused reinit leaves the container as it was */
    par_ctx_step(&x, "vote");
    if (par_ctx_vote(&x)) {
        core_report_error(p->grank);
        return SION_NOT_SUCCESS;
    }
    layout_step(&x, p, c, requests_step(&x, p, chunksize));
    par_ctx_step(&x, "agree");
    if (par_ctx_agree(&x)) {
        core_report_error(p->grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
