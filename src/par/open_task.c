/* open_task.c - the helpers the write open (open_write.c), read open
 * (open_read.c), close (close.c), reinit (reinit.c), the mapped opens and the
 * buddy read (buddy_read.c) share (open_int.h): a task's state, its
 * registration and undo, step "local group", the master's file creation and
 * the packing of write layouts. Below every caller: it calls none of them
 * (open.c, the entry, sits on top and dispatches). */
#include "open_int.h"
#include "ctx.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/partask.h"
#include <stdlib.h>
#include <string.h>

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

int par_open_register(core_container *c, par_state *p, const char *path, FILE **fileptr, char **newfname, int *sid_out)
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
        if (newfname) {
            free(*newfname);
            *newfname = NULL;
        }
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

void par_open_pack_wlayouts(const par_state *p, int mrc, const par_coll_roles *roles, int cmerge, int checksum, int ls,
                            int64_t *lay)
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
        p->lrank = o->x.lrank;
        p->lsize = o->x.lsize;
        p->filenumber = o->fn;
        p->nfiles = o->nf;
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
        par_ctx_fail(x, SHEAF_E_IO, "%s: the create_local_commgroup callback failed on task %d", a->fname, a->grank);
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
