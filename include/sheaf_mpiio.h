/* sheaf_mpiio.h - sheaf's MPI-IO layer (libsheaf_mpiio): collective two-phase
 * I/O with Persistent File Realms (Coloma 2007, chapters 3-4).
 *
 * A sheaf_file is opened collectively on a communicator, gets a file view
 * (displacement, etype, any derived filetype) and is read and written with
 * explicit offsets or the individual file pointer, independently or
 * collectively. Collective calls go through a two-phase engine: aggregator
 * ranks own file realms and are the only ranks that touch those bytes of the
 * file system in that call. With sheaf_cache=pfr the realms are fixed at the
 * first collective call for the life of the handle (anchored at offset 0,
 * cyclic over the whole file) and every aggregator keeps the pages of its
 * realm between calls (write-back at sync/close): caching without locks.
 *
 * Every function returns SHEAF_MPIIO_OK (0) or a negative SHEAF_MPIIO_E* code;
 * sheaf_file_errmsg() gives the message (naming the file and the cause). A
 * collective call that fails on one rank fails on every rank (the same code,
 * SHEAF_MPIIO_EREMOTE on the ranks that did not fail themselves).
 *
 * Hints (MPI_Info keys, at open; doc/mpiio.md lists them all):
 *   sheaf_cache        none (per-call realms, default) | pfr | nocache |
 *                      dache (a coherent cache over every rank's memory,
 *                      independent and collective I/O mixed; see below)
 *   sheaf_realms       percall | persistent (default: persistent for pfr/nocache)
 *   sheaf_pfr_size     aar (default) | fsize | <bytes>
 *   sheaf_fr_alignment realm boundaries rounded to this many bytes (fs block)
 *   sheaf_independent  refuse (default) | sync: independent I/O on a PFR handle
 *   sheaf_cache_size   bytes of realm pages an aggregator keeps (pfr)
 *   sheaf_page_size    bytes per cached page (pfr)
 *   cb_nodes           number of aggregators (default: one per host name)
 *   cb_buffer_size     bytes of file span an aggregator handles per round
 *   sheaf_backend      posix (default) | noncoherent (test fixture, see doc)
 *   sheaf_write_through true: collective writes also write back the realm
 *                      pages they dirtied (the pages stay cached, clean)
 *   sheaf_dache_slots  dache: page slots per rank (default 64)
 *   sheaf_dache_page_size dache: bytes per page, a power of two (default 64K)
 *   sheaf_dache_max_size dache: largest file size served (default 1G; sizes
 *                      the page metadata, at most 4M pages)
 *   sheaf_dache_lock   dache: mcs (default) | mcs_swap | flags | poll
 *   sheaf_dache_progress dache: auto (default) | shared | library | async
 *   sheaf_dache_atomic dache: true = page-granular two-phase locking
 *   sheaf_dache_audit  dache: true = check the single-copy invariant at
 *                      every sync (an error if it does not hold)
 *   sheaf_audit_log    path prefix: every file-system call is logged to
 *                      <prefix>.<rank> as "R|W offset length" lines
 */
#ifndef SHEAF_MPIIO_H
#define SHEAF_MPIIO_H
#include <mpi.h>
#include <stdint.h>
#include "sheaf_export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHEAF_MPIIO_OK 0
#define SHEAF_MPIIO_EARG (-1)    /* bad argument (handle, count, datatype, hint) */
#define SHEAF_MPIIO_EIO (-2)     /* the file system call failed (errno in the message) */
#define SHEAF_MPIIO_ENOMEM (-3)  /* out of memory, or a datatype beyond the flattening limit */
#define SHEAF_MPIIO_EREMOTE (-4) /* another rank of the collective call failed */
#define SHEAF_MPIIO_EMODE (-5)   /* not allowed in this mode (write on read-only, independent on PFR) */
#define SHEAF_MPIIO_EMPI (-6)    /* an MPI call failed */

typedef struct sheaf_file_s *sheaf_file;

/* Counters of one handle (this rank), for tests and benchmarks. */
typedef struct sheaf_mpiio_stats {
    uint64_t fs_reads, fs_writes;           /* calls to the file-system backend */
    uint64_t fs_read_bytes, fs_write_bytes; /* bytes they moved */
    uint64_t coll_calls;                    /* collective reads and writes */
    uint64_t rounds_total;                  /* two-phase rounds over all collective calls */
    uint64_t rounds_last;                   /* rounds of the last collective call */
    uint64_t cache_hits, cache_misses;      /* realm pages found / loaded (pfr) */
    int64_t realm_size;                     /* realm (stripe) size of the last collective call */
    int naggs;                              /* aggregators */
    int is_aggregator;                      /* this rank is one */
    uint64_t cache_remote_hits;             /* dache: hits in another rank's cache (in cache_hits) */
    uint64_t cache_evictions;               /* dache: pages this rank evicted */
    /* pfr with sheaf_independent=serve: bytes of independent calls served by
     * this rank's realm cache (its own realm) and straight in the file */
    uint64_t indep_cached_bytes, indep_direct_bytes;
} sheaf_mpiio_stats;

SHEAF_API int sheaf_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, sheaf_file *fh);
SHEAF_API int sheaf_file_close(sheaf_file *fh);
SHEAF_API int sheaf_file_set_view(sheaf_file fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype);

/* explicit offsets (in etypes, relative to the view) */
SHEAF_API int sheaf_file_read_at(sheaf_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_write_at(sheaf_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_read_at_all(sheaf_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_write_at_all(sheaf_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type);
/* individual file pointer */
SHEAF_API int sheaf_file_read(sheaf_file fh, void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_write(sheaf_file fh, const void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_read_all(sheaf_file fh, void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_write_all(sheaf_file fh, const void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_seek(sheaf_file fh, MPI_Offset off, int whence);
SHEAF_API int sheaf_file_get_position(sheaf_file fh, MPI_Offset *off);
/* shared file pointer (one per open, in etypes of the current view, reset to
 * 0 by set_view; hint sheaf_shared_fp = auto (default: shared memory on one
 * node) | rma; a handle has one when it is a dache handle or was opened with
 * that hint, else these calls return SHEAF_MPIIO_EMPI "no shared file
 * pointer"). _shared calls are independent; seek_shared is collective (the
 * same offset and whence on every rank; MPI_SEEK_SET/CUR/END): a position that
 * is negative or whose byte offset would not fit is SHEAF_MPIIO_EARG on every
 * rank. _ordered calls are collective, in rank order from the shared pointer. */
SHEAF_API int sheaf_file_read_shared(sheaf_file fh, void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_write_shared(sheaf_file fh, const void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_seek_shared(sheaf_file fh, MPI_Offset off, int whence);
SHEAF_API int sheaf_file_read_ordered(sheaf_file fh, void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_write_ordered(sheaf_file fh, const void *buf, int count, MPI_Datatype type);
SHEAF_API int sheaf_file_get_position_shared(sheaf_file fh, MPI_Offset *off);

/* collective: write back every rank's cached data and the backend's */
SHEAF_API int sheaf_file_sync(sheaf_file fh);
/* size in bytes (this rank's knowledge: the file system's size and the end of
 * every collective write so far) */
SHEAF_API int sheaf_file_get_size(sheaf_file fh, MPI_Offset *size);
SHEAF_API int sheaf_file_set_size(sheaf_file fh, MPI_Offset size);    /* collective */
SHEAF_API int sheaf_file_preallocate(sheaf_file fh, MPI_Offset size); /* collective */

/* bytes of the file were written behind the layer's back (another MPI-IO
 * handle, POSIX): every rank's caches are dropped at the next collective call */
SHEAF_API int sheaf_file_note_external_write(sheaf_file fh);

SHEAF_API const char *sheaf_file_errmsg(sheaf_file fh);
/* the message of the last failed sheaf_file_open on this thread */
SHEAF_API const char *sheaf_mpiio_open_errmsg(void);
SHEAF_API int sheaf_file_stats(sheaf_file fh, sheaf_mpiio_stats *st);

#ifdef __cplusplus
}
#endif
#endif
