/* mpiio_impl.h - internals of libsheaf_mpiio (not installed).
 *
 * Pieces: flatten.c (datatypes -> offset/length lists), backend_*.c (every
 * file-system access: the I/O backend interface), realm.c (aggregators,
 * realm maps, size policies), cache.c (caching modes: the PFR realm-page
 * cache), coll.c (the two-phase engine), file.c (the sheaf_file_* API on
 * top), view.c (positions in the view), agree.c (errors and agreements, at
 * the bottom). */
#ifndef SHEAF_MPIIO_IMPL_H
#define SHEAF_MPIIO_IMPL_H
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "sheaf_mpiio.h"
#include "sheaf_comm_mpi.h"

/* ---- flattened datatypes ---- */
typedef struct mio_seg {
    int64_t off, len;
} mio_seg;
typedef struct mio_flat {
    mio_seg *seg;
    size_t n, cap;
    int64_t size;   /* bytes of data in one instance */
    int64_t extent; /* extent (tiling stride) */
    int64_t lb;
} mio_flat;
#define MIO_FLAT_MAX_SEGS ((size_t)1 << 24)
int mio_flatten(MPI_Datatype t, mio_flat *out, char *err, size_t errlen);
void mio_flat_free(mio_flat *f);
int mio_flat_push(mio_flat *f, int64_t off, int64_t len);

/* ---- I/O backend: every file-system access of the layer ---- */
struct iovec;
typedef struct mio_backend mio_backend;
typedef struct mio_backend_ops {
    int (*pread)(mio_backend *b, void *buf, int64_t len, int64_t off); /* zero-fills past EOF */
    int (*pwrite)(mio_backend *b, const void *buf, int64_t len, int64_t off);
    int (*sync)(mio_backend *b);       /* write back (and fsync) */
    int (*invalidate)(mio_backend *b); /* drop cached clean data */
    int (*get_size)(mio_backend *b, int64_t *size);
    int (*set_size)(mio_backend *b, int64_t size);
    int (*preallocate)(mio_backend *b, int64_t size);
    void (*close)(mio_backend *b);
    /* write back and drop the backend's client-cached bytes of [off, off+len)
   * (NULL: nothing cached, e.g. POSIX on a coherent page cache); DACHe calls
   * it after a write-back and before a page load */
    int (*drop_range)(mio_backend *b, int64_t off, int64_t len);
    /* one vectored write of the file-contiguous range starting at off from n
   * memory pieces (NULL: mio_fs_writev gathers into one buffer and pwrites) */
    int (*pwritev)(mio_backend *b, const struct iovec *iov, int n, int64_t off);
} mio_backend_ops;
struct mio_backend {
    const mio_backend_ops *ops;
    int fd;
    const char *path;
    char *err;
    size_t errlen; /* the handle's message buffer */
    sheaf_mpiio_stats *stats;
    int audit_fd; /* -1: no audit log */
    void *priv;
};
int mio_backend_posix_open(mio_backend *b, const char *path, int flags);
int mio_backend_noncoherent_open(mio_backend *b, const char *path, int flags, int64_t page);
/* counted and audited entry points used by the layer */
int mio_fs_read(mio_backend *b, void *buf, int64_t len, int64_t off);
int mio_fs_write(mio_backend *b, const void *buf, int64_t len, int64_t off);
/* n pieces of memory to the file-contiguous range at off: one counted write
 * (DACHe's flush; n <= MIO_IOV_MAX) */
#define MIO_IOV_MAX 1024
int mio_fs_writev(mio_backend *b, const struct iovec *iov, int n, int64_t off);

/* ---- realms ---- */
enum { MIO_REALMS_PERCALL = 0, MIO_REALMS_PERSISTENT = 1 };
enum { MIO_PFR_AAR = 0, MIO_PFR_FSIZE = 1, MIO_PFR_USER = 2 };
typedef struct mio_realms {
    int64_t base; /* realms start here (0 for PFR) */
    int64_t fr;   /* stripe size */
    int64_t end;  /* percall: end of the AAR (no cyclic wrap); PFR: INT64_MAX */
} mio_realms;
static inline int mio_agg_of(const mio_realms *r, int naggs, int64_t x)
{
    return (int)(((x - r->base) / r->fr) % naggs);
}
int64_t mio_pfr_size(int policy, int64_t user, int64_t aar_lo, int64_t aar_hi, int64_t fsize, int naggs, int64_t align);
int64_t mio_percall_size(int64_t aar_lo, int64_t aar_hi, int naggs, int64_t align, int64_t *base);
int mio_pick_aggregators(MPI_Comm comm, int cb_nodes, int **ranks, int *n);

/* ---- caching modes (PFR realm pages; DACHe: dache.h) ---- */
typedef struct mio_cache mio_cache;
typedef struct mio_cache_ops {
    const char *name;
    /* aggregator side: read/write file bytes [off, off+len) of its own realm */
    int (*read)(mio_cache *c, mio_backend *b, void *buf, int64_t len, int64_t off);
    int (*write)(mio_cache *c, mio_backend *b, const void *buf, int64_t len, int64_t off);
    int (*flush)(mio_cache *c, mio_backend *b); /* write back dirty pages */
    void (*invalidate)(mio_cache *c);           /* drop every page (after flush) */
    void (*destroy)(mio_cache *c);
    /* optional, collective: flush, sync the backend and agree on the result
   * (what sheaf_file_sync and close need; without it: flush, the backend's
   * sync, mio_agree; the cache's own collectives, if any, are the handle's
   * fh->coll, agree.c) */
    int (*sync)(mio_cache *c, mio_backend *b);
    /* optional: an int64 in memory every rank of the handle reaches with
   * processor atomics (DACHe in shared memory), initialized to 0 at the
   * cache's creation, for the shared file pointer; NULL: none */
    int64_t *(*shared_word)(mio_cache *c);
    /* optional: write back and drop the cached pages meeting [off, off+len)
   * (NULL: callers flush and invalidate everything) */
    int (*drop_range)(mio_cache *c, mio_backend *b, int64_t off, int64_t len);
} mio_cache_ops;
struct mio_cache {
    const mio_cache_ops *ops;
    sheaf_mpiio_stats *stats;
    void *priv;
};
int mio_cache_pages_create(mio_cache *c, int64_t page, int64_t max_bytes);

/* ---- the file handle ---- */
enum { MIO_CACHE_NONE = 0, MIO_CACHE_PFR = 1, MIO_CACHE_NOCACHE = 2, MIO_CACHE_DACHE = 3 };
/* independent I/O on a pfr handle: refuse; sync (write back and drop this
 * rank's caches around it); serve (own realm through the realm cache, other
 * realms straight to the file, their owners' copies dropped at the next
 * collective call or sync: io.c served_io) */
enum { MIO_INDEP_REFUSE = 0, MIO_INDEP_SYNC = 1, MIO_INDEP_SERVE = 2 };
struct sheaf_file_s {
    MPI_Comm comm;
    /* the handle's collectives (agree.c): &coll_mpi.comm (sheaf_comm_mpi_ref of
   * comm) from open on, DACHe's shared-memory ones once its windows exist
   * (dache_coll.c), the MPI one again when DACHe goes */
    sheaf_comm *coll;
    sheaf_comm_mpi_ref_t coll_mpi;
    int rank, nprocs;
    char *path;
    int amode;
    mio_backend be;
    int cache_mode, realm_mode, pfr_policy, indep_policy;
    int64_t pfr_user, align, cb_buffer, cache_bytes, page;
    int *aggs, naggs, my_agg; /* my_agg: index in aggs or -1 */
    int realms_fixed;
    mio_realms pfr; /* the persistent map once fixed */
    mio_cache cache;
    int have_cache;
    /* view */
    int64_t disp, etype_size;
    mio_flat ftype;
    int64_t *ft_pre;   /* data bytes before each filetype segment */
    int64_t pos;       /* individual pointer, in etypes */
    int64_t known_end; /* end of the collective writes so far */
    int delete_on_close;
    int write_through;  /* flush dirty realm pages after every collective write */
    int external_write; /* note_external_write since the last collective call */
    /* hull of the file bytes this rank wrote behind the realms' owners (served
   * independent writes to other realms; note_external_write: everything)
   * since the last collective call or sync; ext_lo > ext_hi: none */
    int64_t ext_lo, ext_hi;
    MPI_Datatype tc_type;
    int tc_size; /* last predefined memory type seen and its size (io.c) */
    /* shared file pointer (shared.c): an int64 of etypes on rank 0 */
    MPI_Win sh_win;
    int64_t *sh_ptr;
    int sh_shm, sh_locked;
    int sh_have; /* a shared file pointer exists (own window, or the cache's word) */
    sheaf_mpiio_stats stats;
    char err[512];
};

int mio_hint_get(MPI_Info info, const char *key, char *val, int len);
int mio_parse_hints(sheaf_file fh, MPI_Info info, int *cb_nodes, int *noncoherent, int64_t *fixture_page, char *audit,
                    size_t auditlen, char *err, size_t errlen);
int mio_set_err(sheaf_file fh, int code, const char *fmt, ...) /* agree.c */
    __attribute__((format(printf, 3, 4)));
/* file byte ranges of view bytes [vpos, vpos+n) (vpos counted in data bytes of the view) */
int mio_view_segments(sheaf_file fh, int64_t vpos, int64_t n, mio_seg **segs, size_t *nseg);
/* the two-phase engine: segs in file order, data contiguous in buf */
int mio_coll_io(sheaf_file fh, int is_write, const mio_seg *segs, size_t nseg, char *buf, int local_err);
/* someone wrote file bytes [lo, hi) behind the realms' owners: write back and
 * drop this rank's realm pages there (all of them when hi is INT64_MAX) and
 * the backend's client cache (coll.c; callers agree on the result) */
int mio_drop_external(sheaf_file fh, int64_t lo, int64_t hi);
/* the hull of every rank's external writes, agreed with rc (one agreement),
 * then dropped everywhere; the hull is reset (coll.c) */
int mio_agree_external(sheaf_file fh, int rc);
/* ---- agree.c: errors and the handle's collectives (the bottom of the folder) ---- */
/* fh->coll = the MPI communicator of the handle (sheaf_comm_mpi_ref); returns it */
sheaf_comm *mio_coll_mpi(sheaf_file fh);
/* agree on a result over c (sheaf_comm_agree; vals: n values reduced to their
 * minimum in the same exchange): 0 when every rank was fine; a failing rank
 * keeps rc (and fh->err, its message), the others get SHEAF_MPIIO_EREMOTE
 * naming the lowest failing rank and quoting its message (fh may be NULL at
 * open: then only the code) */
int mio_agree_in(sheaf_comm *c, sheaf_file fh, int rc, int64_t *vals, int n);
int mio_agree_vals(sheaf_file fh, int rc, int64_t *vals, int n); /* over fh->coll */
int mio_agree(sheaf_file fh, int rc);                            /* over fh->coll, no values */
/* MIN (is_max 0) or MAX of v over the handle's ranks (fh->coll; v itself if the layer fails) */
int64_t mio_allreduce(sheaf_file fh, int64_t v, int is_max);
/* the shared file pointer (shared.c): created at the collective open (rc:
 * this rank's state so far; nothing is created unless every rank is fine),
 * freed with the handle (collective), reset to 0 by set_view (collective) */
int mio_shared_create(sheaf_file fh, MPI_Comm comm, MPI_Info info, int rc);
void mio_shared_free(sheaf_file fh);
int mio_shared_reset(sheaf_file fh);
#endif
