/* dache.h - DACHe, the Direct Access Cache (Coloma 2007, ch. 5 and 7): a
 * coherent client-side page cache over the ranks of a sheaf_file, on MPI
 * one-sided communication and the passive locks of libsheaf_lock (internal;
 * design and invariants: doc/mpiio.md "DACHe").
 *
 * Single-copy invariant: a file page is cached in at most one slot of one
 * rank. Page p's metadata entry (owner rank, slot, dirty range, pin count)
 * lives on rank p % P at index p / P of the metadata window; lock p of the
 * lock set guards it. Every rank owns `nslots` page slots in the slot window,
 * readable and writable by every rank. */
#ifndef SHEAF_MPIIO_DACHE_H
#define SHEAF_MPIIO_DACHE_H
#include <stdint.h>
#include "mpiio_impl.h"

/* one metadata entry: 8 x int32 (32 bytes). owner..gen are written under the
 * page's lock (one MPI_Accumulate REPLACE of DM_NPUT ints); pin is changed
 * only by atomic adds (pin under the lock, unpin without it; over MPI RMA
 * only: in shared memory a remote hit copies under the lock and never pins).
 * wb: 1 once any rank has written bytes of the page to the file (a page
 * beyond the file's size at open with wb 0 is all zeros: loaded without a
 * read, doc/mpiio.md "Zero-fill"). gen: the flush generation the dirty
 * range [dlo, dhi) belongs to; a range of an older generation is empty (a
 * flush makes every range clean by counting the generation up, writing no
 * entry: d_range). */
enum { DM_OWNER = 0, DM_SLOT = 1, DM_DLO = 2, DM_DHI = 3, DM_WB = 4, DM_GEN = 5, DM_NPUT = 6, DM_PIN = 6, DM_INTS = 8 };
#define DM_NONE (-1)

typedef struct mio_dache_cfg {
    int64_t page;     /* bytes per page, a power of two */
    int nslots;       /* page slots per rank (the cache size) */
    int64_t max_size; /* largest file offset the cache can serve (sizes the metadata) */
    int lock_kind;    /* sheaf_lock_kind */
    int progress;     /* sheaf_lock_progress_mode */
    int atomic;       /* page-granular two-phase locking for every request */
    int audit;        /* run mio_dache_audit at every sheaf_file_sync */
    int64_t direct;   /* requests of at least this many bytes bypass the page copies (0: never) */
} mio_dache_cfg;

typedef struct mio_dache_stats {
    uint64_t local_hits, remote_hits, misses, evictions, writebacks, pin_waits, direct;
    uint64_t zero_fills;   /* misses loaded without a read (zero-fill rule) */
    uint64_t flush_writes; /* file-system write calls of the flushes (one per contiguous run) */
    uint64_t home_inserts; /* misses inserted at another rank (the page's home or the next with room;
                          * this rank's slots full; shared memory) */
    uint64_t adopted;      /* pages another rank inserted into this rank's slots, found by this rank */
} mio_dache_stats;

/* parse the sheaf_dache_* hints into cfg (defaults first) */
int mio_dache_hints(MPI_Info info, mio_dache_cfg *cfg, char *err, size_t errlen);
/* collective (fh->comm); rc: this rank's state so far (its first agreement
 * carries it); fails on every rank or none; installs fh->cache */
int mio_dache_create(sheaf_file fh, const mio_dache_cfg *cfg, int rc);
/* hints.c: every value that must be the same on every rank (the layer's
 * hints, the access mode, cb_nodes, the backend, DACHe's hints; cfg NULL:
 * defaults of 0) as minimum/maximum pairs (the maximum negated) into v, for
 * one agreement; returns the count (at most 62). mio_hints_check: after the
 * agreement, the first hint whose minimum and maximum differ fails with a
 * message naming it and both values (the same result on every rank). */
int mio_hints_pack(sheaf_file fh, int cb_nodes, int nc, int64_t fpage, const mio_dache_cfg *cfg, int64_t *v);
int mio_hints_check(sheaf_file fh, const int64_t *v);
/* a request of this rank: file segments (sorted), data contiguous in buf.
 * Independent; collective calls use it too (doc/mpiio.md). */
int mio_dache_io(sheaf_file fh, int is_write, const mio_seg *segs, size_t nseg, char *buf);
/* Test-only, collective at a quiescent point (no rank inside a read or
 * write of the handle): every page has at most one owner, its entry names
 * the slot whose tag is the page, no pins are left. Returns the number of
 * violations found on all ranks (0 when sound), or a negative error code. */
int64_t mio_dache_audit(sheaf_file fh);
int mio_dache_stats_get(sheaf_file fh, mio_dache_stats *st);
#endif
