/* dache_impl.h - internals shared by dache_open.c (cache operations,
 * creation), dache_page.c (the per-page protocol), dache_win.c (windows and
 * one-sided primitives), dache_sync.c (flush, invalidate, audit) and
 * dache_coll.c (collectives in shared memory). Only for src/mpiio. */
#ifndef SHEAF_MPIIO_DACHE_IMPL_H
#define SHEAF_MPIIO_DACHE_IMPL_H
#include "dache.h"
#include "sheaf_lock.h"

typedef struct dache {
    sheaf_file fh;
    MPI_Comm comm; /* the handle's communicator */
    int rank, P;
    int64_t page, npages, nmeta; /* npages over max_size; nmeta entries per rank */
    int64_t size0;               /* file size at open / the last invalidation (zero-fill rule) */
    int32_t gen;                 /* flush generation: counted up by every flush, the same on every rank */
    int64_t *hipg;               /* 1 + the highest page this rank has cached (bounds the flush's scan) */
    int nslots;
    int shm, epochs, atomic, audit, broken;
    sheaf_lock_set *locks; /* lock p guards page p's entry (home p % P) */
    MPI_Win meta_win, slot_win;
    int32_t *meta_base;
    char *meta_win_base; /* meta_base as the window gave it */
    int32_t **meta_peer; /* shm: every rank's entries */
    char *slot_base;
    char **slot_peer;        /* shm: every rank's slots */
    int64_t *tag;            /* per local slot: the page cached there, -1 free (in the slot window:
                                 * shm: another rank inserting into a slot it claimed writes it) */
    int32_t *ldlo, *ldhi;    /* per local slot: bytes this rank wrote (remote writers: the entry's range);
                                 * in the slot window after the slots (shm: read by the flush of every rank) */
    uint64_t *used, tick;    /* LRU */
    int *head, *next, hmask; /* local page -> slot map (chained hash over the slots) */
    uint64_t *freebits;      /* per local slot: 1 = free (slot window; claimed by atomic bit clear) */
    int nwords;              /* words of freebits */
    void *coll;              /* shm: the node collectives' area (rank 0's slot window), else NULL */
    sheaf_comm sc;           /* shm: the handle's collectives on that area (fh->coll, dache_coll.c) */
    int64_t direct;          /* direct-path threshold in bytes (0: never) */
    int64_t run_off, run_n;  /* the direct path's pending run of uncached bytes (file offset, length) */
    char *run_buf;           /* and its data */
    mio_dache_stats st;
} dache;

/* [lo, hi) |= [lo2, hi2) (empty when hi <= lo) */
static inline void d_union(int32_t *lo, int32_t *hi, int32_t lo2, int32_t hi2)
{
    if (hi2 <= lo2)
        return;
    if (*hi <= *lo) {
        *lo = lo2;
        *hi = hi2;
        return;
    }
    if (lo2 < *lo)
        *lo = lo2;
    if (hi2 > *hi)
        *hi = hi2;
}

/* the entry's dirty range of the current flush generation (older: empty) */
static inline void d_range(const dache *d, const int32_t *m, int32_t *lo, int32_t *hi)
{
    if (m[DM_GEN] == d->gen)
        *lo = m[DM_DLO], *hi = m[DM_DHI];
    else
        *lo = *hi = 0;
}

/* dache_win.c */
int dwin_create(dache *d);
void dwin_free(dache *d);
int dm_get(dache *d, int64_t pg, int32_t m[DM_INTS]);
int dm_put(dache *d, int64_t pg, const int32_t m[DM_INTS]); /* owner, slot, dlo, dhi */
int dm_pin(dache *d, int64_t pg, int32_t delta);
char *ds_local(dache *d, int slot);
/* rank r's per-slot dirty ranges and highest page, in the slot window (shm: any rank; else only r itself) */
int32_t *ds_ranges(dache *d, int r); /* lo[nslots] then hi[nslots] */
int64_t *ds_hipg(dache *d, int r);
int64_t *ds_tags(dache *d, int r);
uint64_t *ds_free(dache *d, int r);
/* claim a free slot of rank r (shm: any rank; else only this one): its index, -1 if none */
int d_claim(dache *d, int r);
void d_unclaim(dache *d, int r, int s);
void ds_sync(dache *d);
int ds_xfer(dache *d, int owner, int slot, int64_t in, int64_t n, char *buf, int is_write);
void d_relax(dache *d);

/* dache_page.c */
int d_find(const dache *d, int64_t pg); /* local slot caching pg, or -1 */
void d_drop_slot(dache *d, int s);      /* slot s is free again (map, free list) */
int d_lock(dache *d, int64_t pg);
int d_unlock(dache *d, int64_t pg, int rc);
/* write bytes [lo, hi) of local slot s (page pg) to the file and push them
 * through the backend's client cache */
int d_writeback(dache *d, int64_t pg, int s, int64_t lo, int64_t hi);

/* dache_coll.c: DACHe's collectives in shared memory with sleeping waiters
 * (a sheaf_comm_ops implementation: rank, size, barrier, bcast, allmin).
 * dc_comm: d->sc on d->coll, which the handle uses as fh->coll while the
 * windows live. d_allreduce and d_barrier are the handle's fh->coll (the MPI
 * communicator before the windows exist and over RMA). */
enum { DC_MIN = 0, DC_MAX = 1 };
size_t dc_bytes(int P); /* the area's size for P ranks (a multiple of 64) */
void dc_init(void *area);
int64_t *dc_shared_word(void *area); /* NULL for NULL */
sheaf_comm *dc_comm(dache *d);
int64_t d_allreduce(dache *d, int64_t v, int op);
void d_barrier(dache *d);

/* dache_sync.c */
int d_flush(dache *d);      /* collective */
int d_flush_sync(dache *d); /* collective: flush, sync the backend, the same result on every rank */
int d_invalidate(dache *d); /* collective, after d_flush */
int d_size0(dache *d);      /* collective: d->size0 = the largest file size any rank sees */
#endif
