/* dache_open.c - DACHe on top: the cache operations (mio_cache_ops) the
 * layer dispatches to, the collective creation at open (local memory, the
 * lock set, the windows, the size at open; fails on every rank or none),
 * destruction and the stats. Calls the files below it (dache_page.c: the
 * per-page protocol; dache_sync.c: flush, invalidate; dache_win.c: windows;
 * dache_coll.c: collectives), none of which calls back. */
#include <stdlib.h>
#include <string.h>
#include "dache_impl.h"

/* ---- mio_cache_ops ---- */
static int c_read(mio_cache *c, mio_backend *b, void *buf, int64_t len, int64_t off)
{
    (void)b;
    dache *d = c->priv;
    mio_seg s = {off, len};
    return mio_dache_io(d->fh, 0, &s, 1, buf);
}
static int c_write(mio_cache *c, mio_backend *b, const void *buf, int64_t len, int64_t off)
{
    (void)b;
    dache *d = c->priv;
    mio_seg s = {off, len};
    return mio_dache_io(d->fh, 1, &s, 1, (char *)buf);
}
static int c_flush(mio_cache *c, mio_backend *b)
{
    (void)b;
    return d_flush(c->priv);
}
static int c_sync(mio_cache *c, mio_backend *b)
{
    (void)b;
    return d_flush_sync(c->priv);
}
static void c_invalidate(mio_cache *c) { d_invalidate(c->priv); }
static void c_destroy(mio_cache *c)
{
    dache *d = c->priv;
    if (!d)
        return;
    if (d->locks)
        sheaf_lock_free(&d->locks);
    dwin_free(d); /* the handle's collectives are MPI's again */
    free(d->used);
    free(d->head);
    free(d->next);
    free(d);
    c->priv = NULL;
}
static int64_t *c_shared_word(mio_cache *c) { return dc_shared_word(((dache *)c->priv)->coll); }
static const mio_cache_ops dache_ops = {"dache",   c_read, c_write,       c_flush, c_invalidate,
                                        c_destroy, c_sync, c_shared_word, NULL};

/* this rank's own memory: the LRU stamps and the page -> slot map */
static int setup_local(dache *d)
{
    size_t ns = (size_t)d->nslots, nh = 1;
    while (nh < 2 * ns)
        nh *= 2;
    d->hmask = (int)nh - 1;
    d->used = calloc(ns, sizeof(uint64_t));
    d->head = malloc(sizeof(int) * nh);
    d->next = malloc(sizeof(int) * ns);
    if (!d->used || !d->head || !d->next)
        return mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe: out of memory", d->fh->path);
    for (size_t h = 0; h < nh; h++)
        d->head[h] = -1;
    return 0;
}

/* collective, after every rank's local set-up succeeded: the lock set, the
 * windows, the size at open; fails on every rank or none */
static int setup(dache *d, const mio_dache_cfg *cfg)
{
    sheaf_lock_opts o;
    sheaf_lock_opts_init(&o);
    o.kind = (sheaf_lock_kind)cfg->lock_kind;
    o.nlocks = (int)d->npages;
    o.progress = (sheaf_lock_progress_mode)cfg->progress;
    if (sheaf_lock_create(d->comm, &o, &d->locks)) /* collective: fails everywhere or nowhere */
        return mio_set_err(d->fh, SHEAF_MPIIO_EARG, "%s: DACHe: lock set: %s", d->fh->path, sheaf_lock_last_error());
    d->shm = sheaf_lock_progress_used(d->locks) == SHEAF_LOCK_PROGRESS_SHARED;
    int rc = dwin_create(d);
    if (rc)
        return rc; /* agreed there */
    /* every rank's size query (a MAX of the codes, before issue 18's fix, let
   * a rank whose query failed leave while the others went on) */
    return mio_agree(d->fh, d_size0(d));
}

static void fill_config(dache *d, sheaf_file fh, const mio_dache_cfg *cfg)
{
    d->fh = fh;
    d->comm = fh->comm;
    d->rank = fh->rank;
    d->P = fh->nprocs;
    d->page = cfg->page;
    d->nslots = cfg->nslots;
    d->npages = (cfg->max_size + cfg->page - 1) / cfg->page;
    d->nmeta = (d->npages + d->P - 1) / d->P;
    d->atomic = cfg->atomic;
    d->audit = cfg->audit;
    d->direct = cfg->direct;
    const char *br = getenv("SHEAF_DACHE_BREAK");
    d->broken = br && *br && strcmp(br, "0") != 0;
    d->meta_win = d->slot_win = MPI_WIN_NULL;
}

int mio_dache_create(sheaf_file fh, const mio_dache_cfg *cfg, int rc)
{
    dache *d = rc ? NULL : calloc(1, sizeof *d);
    if (!rc && !d)
        rc = mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe: out of memory", fh->path);
    if (d) {
        fill_config(d, fh, cfg);
        fh->cache.ops = &dache_ops;
        fh->cache.priv = d;
        fh->cache.stats = &fh->stats;
        rc = setup_local(d);
    }
    rc = mio_agree(fh,
                   rc); /* every rank's memory, one agreement (over MPI: fh->coll is MPI's until the windows exist) */
    if (!rc)
        rc = setup(d, cfg);
    if (rc) {
        if (d)
            c_destroy(&fh->cache);
        fh->cache.priv = NULL;
        return rc;
    }
    fh->have_cache = 1;
    return 0;
}

int mio_dache_stats_get(sheaf_file fh, mio_dache_stats *st)
{
    if (!fh || fh->cache_mode != MIO_CACHE_DACHE || !fh->have_cache || !st)
        return SHEAF_MPIIO_EARG;
    *st = ((dache *)fh->cache.priv)->st;
    return 0;
}
