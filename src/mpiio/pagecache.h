/* pagecache.h - a bounded write-back page store (internal), used by the PFR
 * realm cache (cache.c) and by the non-coherent client-cache fixture
 * (backend_noncoherent.c). Pages load lazily from `rd`; written bytes are
 * tracked per byte and only dirty runs are written back through `wr`, so the
 * store never writes bytes it did not get from a write. */
#ifndef SHEAF_MPIIO_PAGECACHE_H
#define SHEAF_MPIIO_PAGECACHE_H
#include <stddef.h>
#include <stdint.h>
#include "mpiio_impl.h"

typedef int (*mio_pc_rd)(mio_backend *b, void *buf, int64_t len, int64_t off);
typedef int (*mio_pc_wr)(mio_backend *b, const void *buf, int64_t len, int64_t off);
typedef struct mio_pc_page mio_pc_page;
#define MIO_PC_BUCKETS 1024
typedef struct mio_pc {
    int64_t page;
    size_t npages, max_pages;
    uint64_t tick;
    int64_t dirty_end;
    uint64_t hits, misses;
    mio_pc_rd rd;
    mio_pc_wr wr;
    mio_pc_page *bucket[MIO_PC_BUCKETS];
} mio_pc;

void mio_pc_init(mio_pc *pc, int64_t page, size_t max_pages, mio_pc_rd rd, mio_pc_wr wr);
int mio_pc_read(mio_pc *pc, mio_backend *b, void *buf, int64_t len, int64_t off);
int mio_pc_write(mio_pc *pc, mio_backend *b, const void *buf, int64_t len, int64_t off);
/* write back every dirty run; drop != 0 also frees every page */
int mio_pc_flush(mio_pc *pc, mio_backend *b, int drop);
/* write back the dirty bytes of the pages meeting [off, off+len) and free them */
int mio_pc_drop_range(mio_pc *pc, mio_backend *b, int64_t off, int64_t len);
/* free every page, dirty or not (after a flush, or when giving up) */
void mio_pc_drop(mio_pc *pc);
#endif
