/* binding.h - what sheaf's own parallel bindings (src/mpi, src/omp, src/ompi:
 * libsheaf_mpi, libsheaf_omp, libsheaf_ompi) need from libsheaf beyond the
 * public API. Internal: not installed, not for programs.
 *
 * libsheaf exports only its API (SHEAF_API, include/sheaf_export.h). The
 * bindings are separate shared libraries on top of it; they use the public
 * generic API (sion_generic.h) for everything but the few things below, which
 * act on libsheaf's own state or report failures into it (a copy compiled
 * into a binding would have its own, invisible error record):
 *   - the calling thread's last error (thread-local in libsheaf, read by
 *     sheaf_last_error) and SIONlib-style printing of it and of warnings
 *     (which follows sheaf_set_error_printing / SION_ERROR_MSG);
 *   - the parsing of a file_mode string (read or write, buddy levels), so
 *     that a binding agrees with the generic layer on it before entering it;
 *   - files=auto (sion_paropen_mpi): the names of a set's physical files and
 *     the layout stored in its first file (tasks, files, mapping), read
 *     through the core's bounds-checked decoder;
 *   - the global group a parallel sid was opened with (from the one sid
 *     table), so that a binding can release its group after the close;
 *   - the promise that the binding's create_local_commgroup fails on every
 *     task or on none (set_lcg_agreed), which spares the open the vote it
 *     makes after that callback for any other binding (doc/parallel.md).
 * They are reached through one table of function pointers returned by one
 * exported function, sheaf__binding_v2: the only exported name of libsheaf
 * outside the public headers (the exports test allows SHEAF_API names in this
 * header, and only names starting with "sheaf__"). One versioned entry point
 * instead of several internal exports: the interface between two libraries
 * that are built and installed together is named in one place, and a change
 * of the table gets a new name (v1 -> v2: set_lcg_agreed), so a binding built
 * against another libsheaf fails to load instead of misbehaving.
 *
 * Thread-safety: all functions may be called from any thread. */
#ifndef PAR_BINDING_H
#define PAR_BINDING_H
#include "sheaf_export.h"
#include "sion.h"
#include "sion_generic.h"
#include <stdarg.h>
#include <stdint.h>

/* What the first physical file of a set says about the set (plain values:
 * no core structure crosses the libraries). */
typedef struct sheaf__binding_v2_set {
    int nfiles;       /* physical files of the set */
    int ntasks;       /* tasks stored in this file */
    int mapping_size; /* tasks of the set in the mapping; -1: no mapping */
    int32_t *mapping; /* [2*mapping_size]: file, local task; malloc'd (free()), NULL without one */
} sheaf__binding_v2_set;

typedef struct sheaf__binding_v2_table {
    /* Record the thread's last error (printf-style message) and return code (< 0). */
    int (*vfail)(int code, const char *fmt, va_list ap);
    /* Clear the thread's last error. */
    void (*clear_error)(void);
    /* Print the thread's last error the SIONlib way, if printing is on. */
    void (*report_error)(int rank);
    /* Print a warning ("SION_ERROR_WARN on rank <rank>, rc=0: ..."), if printing is on. */
    void (*vwarn)(int rank, const char *fmt, va_list ap);
    /* Parse a file_mode: 0 and *write = 1 for an explicit write mode (w, wb,
     * bw), else 0, *buddy = the buddy levels (0: none; buddy may be NULL);
     * or a negative SHEAF_E_* code with the message recorded (*write = 0). */
    int (*mode_parse)(const char *file_mode, int *write, int *buddy);
    /* Name of physical file k of set fname (fname, fname.000001, ...);
     * malloc'd, NULL when out of memory. */
    char *(*member_name)(const char *fname, int k);
    /* Read the metadata of physical file `path` into *out: 0, or a negative
     * SHEAF_E_* code with the message recorded (*out empty, mapping NULL). */
    int (*set_read)(const char *path, sheaf__binding_v2_set *out);
    /* The global group object parallel sid was opened with (NULL when sid is
     * not an open parallel sid, or a dup). */
    void *(*global_group)(int sid);
    /* Promise that API aid's create_local_commgroup callback fails on every
     * task or on none: the parallel opens then make no vote after it (an
     * MPI communicator split fails on every rank or none). 0, or a negative
     * SHEAF_E_* code (aid unknown). */
    int (*set_lcg_agreed)(int aid);
} sheaf__binding_v2_table;

/* The table (static, never NULL). Internal: for libsheaf_mpi, _omp, _ompi only. */
SHEAF_API const sheaf__binding_v2_table *sheaf__binding_v2(void);

/* ---- the bindings' side: short calls through the table ---- */
#if defined(__GNUC__)
#define BINDING_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define BINDING_PRINTF(a, b)
#endif

static inline int binding_fail(int code, const char *fmt, ...) BINDING_PRINTF(2, 3);
static inline int binding_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = sheaf__binding_v2()->vfail(code, fmt, ap);
    va_end(ap);
    return rc;
}

static inline void binding_warn(int rank, const char *fmt, ...) BINDING_PRINTF(2, 3);
static inline void binding_warn(int rank, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sheaf__binding_v2()->vwarn(rank, fmt, ap);
    va_end(ap);
}

static inline void binding_clear_error(void) { sheaf__binding_v2()->clear_error(); }
static inline void binding_report_error(int rank) { sheaf__binding_v2()->report_error(rank); }
static inline int binding_mode_parse(const char *file_mode, int *write, int *buddy)
{
    return sheaf__binding_v2()->mode_parse(file_mode, write, buddy);
}
static inline char *binding_member_name(const char *fname, int k) { return sheaf__binding_v2()->member_name(fname, k); }
static inline int binding_set_read(const char *path, sheaf__binding_v2_set *out)
{
    return sheaf__binding_v2()->set_read(path, out);
}
static inline void *binding_global_group(int sid) { return sheaf__binding_v2()->global_group(sid); }

/* Piece size of the bindings' gather_and_execute / execute_and_scatter
 * callbacks: one file-system block (64 KiB if unknown), at most 4 MiB. */
static inline int64_t binding_coll_piece(int64_t fsblksize)
{
    int64_t p = fsblksize > 0 ? fsblksize : 65536;
    return p > (4 << 20) ? (4 << 20) : p;
}
/* The callbacks of one binding, registered together by binding_create_api. */
typedef struct binding_callbacks {
    sion_generic_create_lcg_cb create_lcg;
    sion_generic_free_lcg_cb free_lcg;
    sion_generic_barrier_cb barrier;
    sion_generic_bcastr_cb bcast;
    sion_generic_gatherr_cb gather;
    sion_generic_gathervr_cb gatherv;
    sion_generic_scatterr_cb scatter;
    sion_generic_scattervr_cb scatterv;
    sion_generic_gather_execute_cb gather_exec;
    sion_generic_execute_scatter_cb exec_scatter;
    sion_generic_capability_cb capability;
    int lcg_agreed; /* 1: create_lcg fails on every task or none (set_lcg_agreed) */
} binding_callbacks;

/* A generic API named `name` with every callback of cb registered: its id,
 * or -1 (out of memory, or a registration refused: nothing is left behind). */
static inline int binding_create_api(const char *name, const binding_callbacks *cb)
{
    int aid = sion_generic_create_api((char *)name);
    if (aid < 0)
        return -1;
    int ok = sion_generic_register_create_local_commgroup_cb(aid, cb->create_lcg) == SION_SUCCESS &&
             sion_generic_register_free_local_commgroup_cb(aid, cb->free_lcg) == SION_SUCCESS &&
             sion_generic_register_barrier_cb(aid, cb->barrier) == SION_SUCCESS &&
             sion_generic_register_bcastr_cb(aid, cb->bcast) == SION_SUCCESS &&
             sion_generic_register_gatherr_cb(aid, cb->gather) == SION_SUCCESS &&
             sion_generic_register_gathervr_cb(aid, cb->gatherv) == SION_SUCCESS &&
             sion_generic_register_scatterr_cb(aid, cb->scatter) == SION_SUCCESS &&
             sion_generic_register_scattervr_cb(aid, cb->scatterv) == SION_SUCCESS &&
             sion_generic_register_gather_and_execute_cb(aid, cb->gather_exec) == SION_SUCCESS &&
             sion_generic_register_execute_and_scatter_cb(aid, cb->exec_scatter) == SION_SUCCESS &&
             sion_generic_register_get_capability_cb(aid, cb->capability) == SION_SUCCESS &&
             (!cb->lcg_agreed || sheaf__binding_v2()->set_lcg_agreed(aid) == 0);
    if (!ok) {
        sion_generic_free_api(aid);
        return -1;
    }
    return aid;
}

#endif
