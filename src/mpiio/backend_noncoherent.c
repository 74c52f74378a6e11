/* backend_noncoherent.c - the test fixture: an NFS-like client cache that is
 * private to each rank and never invalidated by other ranks' writes.
 *
 * Reads fill whole pages from the file and keep them; writes go into the
 * cached page and mark the bytes dirty (byte-granular, like NFS's dirty
 * ranges); dirty bytes reach the file only at sync, at close, when the cache
 * is full, or at an explicit invalidate (which also drops every page). So a
 * rank that cached a page keeps reading its old bytes after another rank
 * wrote newer ones: the stale reads the Linux page cache (coherent) never
 * shows. Selected with the hint sheaf_backend=noncoherent; the page size with
 * sheaf_fixture_page (default 4096). */
#include <stdio.h>
#include <stdlib.h>
#include "pagecache.h"

#define NC_MAX_PAGES 16384

static const mio_backend_ops *posix_ops_p;

static int nc_pread(mio_backend *b, void *buf, int64_t len, int64_t off)
{
    return mio_pc_read(b->priv, b, buf, len, off);
}
static int nc_pwrite(mio_backend *b, const void *buf, int64_t len, int64_t off)
{
    return mio_pc_write(b->priv, b, buf, len, off);
}
static int nc_sync(mio_backend *b) { return mio_pc_flush(b->priv, b, 0); }
static int nc_invalidate(mio_backend *b) { return mio_pc_flush(b->priv, b, 1); }
static int nc_get_size(mio_backend *b, int64_t *size)
{
    mio_pc *pc = b->priv;
    int rc = posix_ops_p->get_size(b, size);
    if (!rc && pc->dirty_end > *size)
        *size = pc->dirty_end;
    return rc;
}
static int nc_set_size(mio_backend *b, int64_t size)
{
    int rc = mio_pc_flush(b->priv, b, 1);
    return rc ? rc : posix_ops_p->set_size(b, size);
}
static int nc_preallocate(mio_backend *b, int64_t size)
{
    int rc = mio_pc_flush(b->priv, b, 0);
    return rc ? rc : posix_ops_p->preallocate(b, size);
}
static void nc_close(mio_backend *b)
{
    if (b->priv) {
        mio_pc_flush(b->priv, b, 1); /* the layer synced before and reported errors there */
        free(b->priv);
        b->priv = NULL;
    }
    posix_ops_p->close(b);
}

static int nc_drop_range(mio_backend *b, int64_t off, int64_t len) { return mio_pc_drop_range(b->priv, b, off, len); }

static const mio_backend_ops nc_ops = {nc_pread,    nc_pwrite,      nc_sync,  nc_invalidate, nc_get_size,
                                       nc_set_size, nc_preallocate, nc_close, nc_drop_range, NULL};

int mio_backend_noncoherent_open(mio_backend *b, const char *path, int flags, int64_t page)
{
    int rc = mio_backend_posix_open(b, path, flags);
    if (rc)
        return rc;
    posix_ops_p = b->ops;
    mio_pc *pc = malloc(sizeof *pc);
    if (!pc) {
        b->ops->close(b);
        snprintf(b->err, b->errlen, "%s: fixture cache: out of memory", path);
        return SHEAF_MPIIO_ENOMEM;
    }
    mio_pc_init(pc, page, NC_MAX_PAGES, posix_ops_p->pread, posix_ops_p->pwrite);
    b->priv = pc;
    b->ops = &nc_ops;
    return 0;
}
