/* open.c - sion_generic_paropen: the entry, the buddy wrappers, and the helpers
 * the write open (open_write.c), read open (open_read.c), close (close.c) and
 * reinit (reinit.c) share (open_int.h).
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

par_state *par_open_state_new(const par_api *api, const char *fname, void *gcomm, int grank, int gsize)
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
void par_open_state_drop(par_state *p)
{
    if (!p)
        return;
    if (p->lcomm)
        p->api.free_lcg(p->lcomm);
    par_state_free(p);
}

int par_open_register(core_container *c, par_state *p, const char *path, FILE **fileptr, char **newfname,
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
int par_open_master_create(par_state *p, const char *path, const core_mode *md, int ls, int64_t *cs,
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

void par_open_pack_wlayouts(const par_state *p, int mrc, const par_coll_roles *roles, int cmerge, int checksum,
                            int ls, int64_t *lay)
{
    for (int t = 0; t < ls; t++) {
        par_wire_wlayout e;
        memset(&e, 0, sizeof e);
        e.status = mrc;
        if (!mrc) {
            e.start = p->meta.starts[t];
            e.chunksize = p->meta.chunksizes[t];
            e.globalskip = p->meta.globalskip;
        }
        par_coll_fill(e.coll, t, mrc ? NULL : roles, mrc ? NULL : p->meta.starts, cmerge);
        e.checksum = checksum;
        par_wire_wlayout_pack(&e, lay + PAR_WIRE_WLAYOUT_N * t);
    }
}

/* The task's state for step "local group" (NULL when out of memory). */
static par_state *local_state(const par_open_task *o)
{
    const par_open_args *a = o->a;
    par_state *p = par_open_state_new(a->api, a->fname, a->gcomm, a->grank, a->gsize);
    if (p) {
        p->lrank = o->x.lrank; p->lsize = o->x.lsize; p->filenumber = o->fn; p->nfiles = o->nf;
        p->fsblksize = o->fsb;
        p->mode = *a->md;
    }
    return p;
}

int par_open_task_undo(par_open_task *o)
{
    if (o->p)
        par_open_state_drop(o->p); /* frees its local group */
    else if (o->x.lcomm)
        o->a->api->free_lcg(o->x.lcomm);
    o->p = NULL;
    o->x.lcomm = NULL;
    free(o->path);
    o->path = NULL;
    return par_ctx_restore(&o->x);
}

int par_open_local_group(par_open_task *o)
{
    par_ctx *x = &o->x;
    const par_open_args *a = o->a;
    par_ctx_step(x, "local group");
    par_state *p = o->p = local_state(o);
    if (!p)
        par_ctx_take(x, SHEAF_E_NOMEM); /* still take part in the collectives below */
    int cbfail = a->api->create_lcg(&x->lcomm, a->gcomm, a->grank, a->gsize, x->lrank, x->lsize, o->fn, o->nf) != 0;
    if (cbfail) {
        x->lcomm = NULL;
        par_ctx_fail(x, SHEAF_E_IO, "%s: the create_local_commgroup callback failed on task %d", a->fname,
                     a->grank);
    }
    if (p)
        p->lcomm = x->lcomm;
    if (!(o->path = par_member_path(a->api, a->fname, o->fn)))
        par_ctx_take(x, SHEAF_E_NOMEM);
    /* a task without its local group cannot take part in the local
     * exchanges that follow: unless the binding promises that the callback
     * fails on every task or none, every task learns of it here (G gather +
     * G bcast; the first failing task's code on every task) */
    if (a->api->lcg_agreed ? cbfail : par_ctx_vote(x) != 0)
        return par_open_task_undo(o);
    return 0;
}

void par_open_undo(int sid, core_container *c, int detach, char **newfname)
{
    if (sid >= 0)
        api_release(sid);
    if (newfname) {
        free(*newfname);
        *newfname = NULL;
    }
    if (!c)
        return;
    c->par = NULL;
    if (detach)
        core_detach_task(c, NULL, NULL);
    else
        core_close(c);
}

/* ---- buddy copies (buddy.c has the rest) ---------------------------------- */

/* After the write open of the container: open its buddy copies (buddy.c);
 * on failure (agreed, so on all tasks) release them and close the container. */
static int open_buddies_write(const par_open_args *a, int sid, sion_int64 chunk_req)
{
    if (sid < 0)
        return sid;
    core_container *c = api_lookup(sid, "sion_generic_paropen");
    par_state *p = c->par; /* a sid this open just registered */
    int levels = a->md->buddy > PAR_BUDDY_MAX ? PAR_BUDDY_MAX : a->md->buddy;
    int rc = par_buddy_open_write(p, levels, chunk_req, a->fname);
    if (!rc)
        return sid;
    int keep = sheaf_last_error_code();
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", sheaf_last_error());
    par_buddy_free(p);
    sion_generic_parclose(sid);
    return core_fail(keep ? keep : SHEAF_E_IO, "%s", msg);
}

/* Read open in buddy mode: the container, else the first buddy copy that opens. */
static int open_buddy_read(const par_open_args *a, int sid)
{
    if (sid >= 0) {
        core_container *c = api_lookup(sid, "sion_generic_paropen");
        if (c && c->par) /* opened with buddy (sion_get_io_info) */
            ((par_state *)c->par)->mode.buddy = a->md->buddy;
        return sid;
    }
    char why[1024];
    snprintf(why, sizeof why, "%s", sheaf_last_error());
    int levels = a->md->buddy > PAR_BUDDY_MAX ? PAR_BUDDY_MAX : a->md->buddy;
    for (int b = 1; b <= levels; b++) {
        char *bn = par_buddy_name(a->fname, b);
        if (!bn)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", a->fname);
        int bsid = par_buddy_open_read(a, b);
        if (bsid >= 0) {
            if (a->grank == 0)
                core_warn(a->grank, "%s: cannot be read (%s); reading its buddy copy %s", a->fname, why, bn);
            free(bn);
            return bsid;
        }
        free(bn);
    }
    return core_fail(SHEAF_E_NOTFOUND, "%s: neither the container nor any of its %d buddy copies can be read "
                     "(container: %s)", a->fname, levels, why);
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
    /* SIONlib hands lrank/lsize back in read mode through these pointers */
    par_open_args a = {&api, nm, &md, mrc, chunksize, fsblksize, gcommgroup, grank, gsize, filenumber, numfiles,
                       (int *)(uintptr_t)lrank, (int *)(uintptr_t)lsize, fileptr, newfname};
    sid = write ? par_open_write(&a) : par_open_read(&a, &agreed);
    /* buddy levels are among the options every task agreed on (a write that
     * failed tries no copy; a read whose options disagreed neither) */
    if (!mrc && md.buddy > 0 && agreed)
        sid = write ? open_buddies_write(&a, sid, chunk_req) : open_buddy_read(&a, sid);
    if (sid >= 0)
        return sid;
fail:
    core_report_error_rc(grank, SION_ID_UNDEF);
    return SION_ID_UNDEF;
}
