/* sheaf_ckpt.h - coordinated application checkpoints on MPI (libsheaf_ckpt).
 *
 * Declare the fields once (name, element type, element count on this rank:
 * counts may differ by rank), then call sheaf_ckpt_write(step) at every
 * checkpoint and read at restart with the serial reader (sheaf_ckpt_read.h,
 * any number of ranks). Strategies (doc/ckpt.md), chosen at run time:
 *   fpp   one file per rank (POSIX), optionally spread over subdirectories
 *   coio  MPI-IO split-collective writes (write_at_all_begin/end) into nf
 *         files, ranks in nf contiguous groups, ROMIO hints passed through
 *   rbio  ranks split into ng groups; each group's first rank is its writer
 *         (dedicated, or also carrying its own data); workers copy their data
 *         into a shared-memory slot (writer on their node) or MPI_Isend them
 *         from a double buffer, and return; writers reorder into
 *         field order and write nf = ng files (one per writer) or nf < ng
 *         (collective among the writers of a file), or a sheaf container
 *   sion  each rank's data as its task in a sheaf (SIONlib) container
 *
 * Options: "key=value,..." given to sheaf_ckpt_init, then the environment
 * SHEAF_CKPT_OPTIONS (same syntax) and SHEAF_CKPT_STRATEGY (wins):
 *   strategy=fpp|coio|rbio|sion   nf=N  ng=N  dedicated=0|1
 *   container=posix|sion (rbio writers)  buffer=BYTES[K|M|G] (rbio writer
 *   buffer bound, default 256M)  durable=0|1 (fsync before commit, default 1)
 *   timeout=SECONDS (bound on every wait for other ranks, default 60)
 *   subdirs=N (fpp)  keep=N (complete checkpoints kept, 0 = all; default 0)
 *   hint.NAME=VALUE (an MPI_Info hint for the MPI-IO files, e.g.
 *   hint.romio_cb_write=enable)
 *   handoff=auto|shm|send (rbio: workers hand their data to a writer on their
 *   node through a shared window, auto = wherever every group is on one node)
 *
 * Commit: a checkpoint is written into <base>/step-<N>.tmp and renamed to
 * <base>/step-<N> with its manifest only when every rank succeeded; the
 * previous one stays untouched until then. Errors: every call returns 0 or a
 * negative code, -errno (-EINVAL, -EIO, -ETIMEDOUT, ...; until issue 29
 * positive errno values: compare with -E..., never with > 0), the
 * same on every rank of the communicator (a
 * failure of one writer is reported to every rank with the failing rank's
 * message: by the write itself for fpp, coio, sion; for rbio at the rank's
 * next write if the result is known by then, at the latest at the write after
 * or at sheaf_ckpt_wait / finalize); waits for other ranks are
 * bounded by `timeout` (-ETIMEDOUT: the context is then unusable and the
 * application should MPI_Abort). Nothing here aborts or exits. */
#ifndef SHEAF_CKPT_H
#define SHEAF_CKPT_H
#include "sheaf_ckpt_read.h"
#include "sheaf_export.h"
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sheaf_ckpt_ctx sheaf_ckpt_ctx;

enum sheaf_ckpt_role { SHEAF_CKPT_RANK = 0, SHEAF_CKPT_WORKER = 1, SHEAF_CKPT_WRITER = 2, SHEAF_CKPT_DEDICATED = 3 };

/* Time spent in the last sheaf_ckpt_write and sheaf_ckpt_wait of this rank. */
typedef struct sheaf_ckpt_stats {
    double blocked_s;   /* inside the last sheaf_ckpt_write */
    double perceived_s; /* rbio workers: copying (shared window: the copy into the slot, without waits for
                         * the writer; send mode: from entering write until the Isends returned) */
    double wait_s;      /* inside the last sheaf_ckpt_wait (or the commit of the previous step) */
    double io_s;        /* writers: open + write + sync + close of the last step */
    uint64_t bytes;     /* this rank's bytes of the last step */
} sheaf_ckpt_stats;

/* Collective over comm. base: directory of the checkpoints (created).
 * app: application name stored in the files (<= 63 bytes). */
SHEAF_API int sheaf_ckpt_init(MPI_Comm comm, const char *base, const char *app, const char *options,
                              sheaf_ckpt_ctx **ctx);
/* Declare a field (not collective; every rank declares the same names and
 * types in the same order, counts may differ; a dedicated rbio writer
 * declares count 0). data stays the application's: its current contents are
 * taken at every sheaf_ckpt_write. Returns the field index in *index. */
SHEAF_API int sheaf_ckpt_declare(sheaf_ckpt_ctx *ctx, const char *name, int type, uint64_t count, const void *data,
                                 int *index);
/* Change a field's data pointer and count (e.g. after a reallocation). */
SHEAF_API int sheaf_ckpt_update(sheaf_ckpt_ctx *ctx, int index, uint64_t count, const void *data);
/* Collective: checkpoint `step` (steps increase). fpp, coio, sion: returns
 * when committed and durable. rbio: workers return once their data are
 * copied out of the fields (into their slot of a shared window, or sent with
 * MPI_Isend); rank 0 commits when every writer is done; the other ranks
 * learn the result at a later write or at sheaf_ckpt_wait. */
SHEAF_API int sheaf_ckpt_write(sheaf_ckpt_ctx *ctx, uint64_t step);
/* Collective: complete and commit the pending checkpoint; on return 0 it is
 * listed, and durable when durable=1. */
SHEAF_API int sheaf_ckpt_wait(sheaf_ckpt_ctx *ctx);
/* Collective: wait, then free the context (*ctx = NULL). */
SHEAF_API int sheaf_ckpt_finalize(sheaf_ckpt_ctx **ctx);
/* Collective: the newest complete checkpoint under base as rank 0 sees it
 * (-ENOENT on every rank if none). */
SHEAF_API int sheaf_ckpt_latest_mpi(MPI_Comm comm, const char *base, uint64_t *step);

SHEAF_API int sheaf_ckpt_role(const sheaf_ckpt_ctx *ctx);
/* The compute ranks, for the application's own communication: with rbio
 * and dedicated=1 every rank but the dedicated writers (MPI_COMM_NULL on
 * those), otherwise all ranks of the context (a communicator of its own, in
 * rank order). Valid until sheaf_ckpt_finalize; do not free it. */
SHEAF_API MPI_Comm sheaf_ckpt_compute_comm(const sheaf_ckpt_ctx *ctx);
/* How this rank's rbio data reach its writer (doc/ckpt.md, "Asynchrony"):
 * SHM through a shared window (writer on the same node: no MPI call needed),
 * THREAD MPI_Isend moved by the library's progress thread (the MPI was
 * initialised with MPI_THREAD_MULTIPLE), SEND MPI_Isend that moves when this
 * rank next enters MPI; NONE: not rbio. The same on a writer as its group. */
enum sheaf_ckpt_handoff {
    SHEAF_CKPT_HANDOFF_NONE = 0,
    SHEAF_CKPT_HANDOFF_SHM = 1,
    SHEAF_CKPT_HANDOFF_THREAD = 2,
    SHEAF_CKPT_HANDOFF_SEND = 3
};
SHEAF_API int sheaf_ckpt_handoff(const sheaf_ckpt_ctx *ctx);
SHEAF_API const char *sheaf_ckpt_strategy_name(const sheaf_ckpt_ctx *ctx);
SHEAF_API void sheaf_ckpt_get_stats(const sheaf_ckpt_ctx *ctx, sheaf_ckpt_stats *st);
/* Message of the last failure of this context ("" if none). A failed
 * sheaf_ckpt_init (no context) and sheaf_ckpt_latest_mpi (on every rank)
 * leave theirs in sheaf_ckpt_errmsg() (sheaf_ckpt_read.h). */
SHEAF_API const char *sheaf_ckpt_error(const sheaf_ckpt_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
