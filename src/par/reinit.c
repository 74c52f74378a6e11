/* reinit.c - sion_generic_parreinit: G vote, L gather chunk sizes, master
 * rewrites the file, L scatter layout, G agree. */
#include "open_int.h"
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
            mrc = core_fail((int)q.status, "%s: sion_generic_parreinit failed on task %lld (see its message)",
                            p->fname, (long long)q.grank);
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

int sion_generic_parreinit(int sid, sion_int64 chunksize)
{
    core_clear_error();
    core_container *c = par_open_lookup(sid, "sion_generic_parreinit", 0);
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
    par_wire_rreq rq = {rc ? 0 : chunksize, p->grank, rc, par_coll_capability(api, p->lcomm)};
    int64_t req[PAR_WIRE_RREQ_N], *reqs = NULL, *lay = NULL, dummy[PAR_WIRE_WLAYOUT_N], buf[PAR_WIRE_WLAYOUT_N];
    par_wire_rreq_pack(&rq, req);
    par_wire_wlayout mine;
    par_wire_wlayout_init(&mine);
    par_wire_wlayout_pack(&mine, buf);
    int mrc = 0, cbfail = 0;
    if (p->lrank == 0) {
        reqs = malloc((size_t)p->lsize * sizeof req);
        lay = malloc((size_t)p->lsize * sizeof buf);
        if (!reqs || !lay)
            mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
    }
    if (api->gather(req, reqs ? reqs : dummy, p->lcomm, _SION_INT64, PAR_WIRE_RREQ_N, 0))
        cbfail = 1;
    if (p->lrank == 0 && lay)
        mrc = master_rewrite_step(p, reqs, mrc, cbfail, lay);
    free(reqs);
    if (api->scatter(lay ? lay : dummy, buf, p->lcomm, _SION_INT64, PAR_WIRE_WLAYOUT_N, 0))
        cbfail = 1;
    free(lay);
    int urc = par_wire_wlayout_unpack(&mine, buf, PAR_WIRE_WLAYOUT_N);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed in sion_generic_parreinit", p->fname);
    if (!rc && urc)
        rc = urc;
    if (!rc && mine.status)
        rc = mrc ? mrc : core_fail((int)mine.status, "%s: the master of file %d could not rewrite it (see its message)",
                                   p->fname, p->filenumber);
    if (!rc) {
        /* the same handle, moved to the new chunk: nothing written is kept */
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
        rc = core_place(c);
    }
    if (par_agree(api, p->gcomm, p->grank, p->gsize, rc, p->fname, "sion_generic_parreinit")) {
        core_report_error(p->grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
