/* cache.c - caching modes of the aggregators. The PFR mode keeps the pages of
 * the aggregator's own realm between collective calls (bounded, LRU,
 * write-back at sync/close/eviction). It is safe without locks only because
 * persistent realms make the aggregator the only rank that ever touches those
 * bytes. A later mode (DACHe, issue 18: a distributed cache with passive
 * locks) implements the same mio_cache_ops. */
#include <stdlib.h>
#include "pagecache.h"

static int pages_read(mio_cache *c, mio_backend *b, void *buf, int64_t len, int64_t off)
{
    mio_pc *pc = c->priv;
    uint64_t h = pc->hits, m = pc->misses;
    int rc = mio_pc_read(pc, b, buf, len, off);
    c->stats->cache_hits += pc->hits - h;
    c->stats->cache_misses += pc->misses - m;
    return rc;
}
static int pages_write(mio_cache *c, mio_backend *b, const void *buf, int64_t len, int64_t off)
{
    return mio_pc_write(c->priv, b, buf, len, off);
}
static int pages_flush(mio_cache *c, mio_backend *b) { return mio_pc_flush(c->priv, b, 0); }
static void pages_invalidate(mio_cache *c) { mio_pc_drop(c->priv); /* callers flush first */ }
static int pages_drop_range(mio_cache *c, mio_backend *b, int64_t off, int64_t len)
{
    return mio_pc_drop_range(c->priv, b, off, len);
}
static void pages_destroy(mio_cache *c)
{
    if (c->priv)
        pages_invalidate(c);
    free(c->priv);
    c->priv = NULL;
}

static const mio_cache_ops pages_ops = {"pfr-pages",   pages_read, pages_write, pages_flush,     pages_invalidate,
                                        pages_destroy, NULL,       NULL,        pages_drop_range};

int mio_cache_pages_create(mio_cache *c, int64_t page, int64_t max_bytes)
{
    mio_pc *pc = malloc(sizeof *pc);
    if (!pc)
        return SHEAF_MPIIO_ENOMEM;
    size_t maxp = (size_t)(max_bytes / page);
    mio_pc_init(pc, page, maxp ? maxp : 1, mio_fs_read, mio_fs_write);
    c->ops = &pages_ops;
    c->priv = pc;
    return 0;
}
