/* sheaf_lock.h - passive distributed lock managers on MPI one-sided
 * communication (libsheaf_lock; design and proofs of fairness: doc/lock.md).
 *
 * A lock set is created collectively over a communicator and holds `nlocks`
 * mutexes. Lock `id` lives at home rank id % P, slot id / P (striped). No
 * rank runs server code: lock state sits in an RMA window (or a shared-memory
 * window) and every acquire/release is a few one-sided operations by the
 * caller. Three algorithms, chosen per set:
 *
 *   SHEAF_LOCK_FLAGS     MPI-2 flag array (Latham et al. 2005): one byte per
 *                        rank per lock at the home; acquire = put my flag +
 *                        get the others in one exclusive epoch; a contended
 *                        acquirer waits for a wake message; release clears
 *                        its flag and wakes the next waiter in circularly
 *                        ascending rank order from its own rank (bounded
 *                        waiting: at most P-1 hand-offs before any waiter).
 *   SHEAF_LOCK_MCS       MPI-3 MCS queue (Mellor-Crummey & Scott): tail rank
 *                        at the home, swapped with MPI_Fetch_and_op; each
 *                        waiter links itself behind its predecessor and spins
 *                        on its own grant word; release by
 *                        MPI_Compare_and_swap, waiting for a successor that has
 *                        swapped but not yet linked. FIFO (arrival order).
 *   SHEAF_LOCK_MCS_SWAP  the same queue with the swap-only release (no
 *                        compare-and-swap, the Portals-era variant): a release
 *                        that races with an arrival re-submits the detached
 *                        queue on behalf of its tail (counted as a repair).
 *   SHEAF_LOCK_POLL      test-and-set by atomic swap, re-reads with
 *                        randomized exponential back-off; release is one
 *                        atomic write. Unfair; for comparison.
 *
 * Progress (doc/lock.md, "Progress"): SHEAF_LOCK_PROGRESS_SHARED keeps the
 * lock state in MPI_Win_allocate_shared memory and uses processor atomics
 * (truly passive; all ranks on one node); _LIBRARY uses MPI RMA and makes
 * progress while it waits (a rank outside MPI delays requests to locks it
 * homes until it calls MPI or sheaf_lock_progress); _ASYNC is _LIBRARY under
 * an MPI with asynchronous progress (MPICH: MPIR_CVAR_ASYNC_PROGRESS=1 and
 * MPI_THREAD_MULTIPLE, which sheaf_lock_create checks); _AUTO picks SHARED
 * when every rank is on one node, LIBRARY otherwise.
 *
 * Errors: every call returns SHEAF_LOCK_OK (0) or a SHEAF_LOCK_E* code and
 * leaves a message in sheaf_lock_last_error() (thread-local). The codes are
 * negative (sheaf's one sign: 0 success, negative failure; until issue 29
 * they were positive - same names; test `rc != 0` or `rc < 0`).
 * Collective calls fail on every rank or on none (sheaf_comm_agree,
 * include/sheaf_comm.h): the lowest failing rank's code on every rank, the
 * failing rank with its own message, the others with a message naming that
 * rank and quoting its message. Thread-safety: one thread per lock set. */
#ifndef SHEAF_LOCK_H
#define SHEAF_LOCK_H
#include <mpi.h>
#include <stdint.h>
#include "sheaf_export.h"
#ifdef __cplusplus
extern "C" {
#endif

enum {
    SHEAF_LOCK_OK = 0,
    SHEAF_LOCK_EINVAL = -1,   /* bad argument (NULL, nlocks <= 0, unknown kind, ranks disagree) */
    SHEAF_LOCK_ERANGE = -2,   /* lock id outside [0, nlocks) */
    SHEAF_LOCK_ENOTHELD = -3, /* release of a lock this rank does not hold */
    SHEAF_LOCK_EHELD = -4,    /* acquire of a lock this rank already holds */
    SHEAF_LOCK_EBUSY = -5,    /* free while some rank still holds a lock */
    SHEAF_LOCK_EMPI = -6,     /* an MPI call failed (message has MPI's text) */
    SHEAF_LOCK_ENOMEM = -7,   /* out of memory */
    SHEAF_LOCK_EPROTO = -8    /* inconsistent lock state or message (a bug or memory corruption) */
};

typedef enum { SHEAF_LOCK_FLAGS = 1, SHEAF_LOCK_MCS = 2, SHEAF_LOCK_MCS_SWAP = 3, SHEAF_LOCK_POLL = 4 } sheaf_lock_kind;

typedef enum {
    SHEAF_LOCK_PROGRESS_AUTO = 0,
    SHEAF_LOCK_PROGRESS_LIBRARY = 1,
    SHEAF_LOCK_PROGRESS_ASYNC = 2,
    SHEAF_LOCK_PROGRESS_SHARED = 3
} sheaf_lock_progress_mode;

typedef struct sheaf_lock_opts {
    sheaf_lock_kind kind;              /* default SHEAF_LOCK_MCS */
    int nlocks;                        /* default 1; same on every rank */
    sheaf_lock_progress_mode progress; /* default SHEAF_LOCK_PROGRESS_AUTO */
    unsigned poll_backoff_min_us;      /* SHEAF_LOCK_POLL: first back-off range (default 1) */
    unsigned poll_backoff_max_us;      /* ... grows x2 per failed poll up to this (default 64) */
} sheaf_lock_opts;

/* Operation counts of one rank in one lock set (since creation or the last
 * reset). rma_ops = puts + gets + atomics: every operation of the protocol on
 * lock state, wherever it lives (the rank's own fields too), except the reads
 * of a waiting rank's own grant/next word while it spins (spin_reads). */
typedef struct sheaf_lock_stats {
    uint64_t acquires, releases;
    uint64_t contended;                  /* acquires that had to wait */
    uint64_t puts, gets;                 /* plain transfers (flag array) */
    uint64_t atomics;                    /* swap, compare-and-swap, atomic read/write */
    uint64_t rma_ops;                    /* puts + gets + atomics */
    uint64_t polls;                      /* SHEAF_LOCK_POLL: re-reads of the lock word (in gets/atomics) */
    uint64_t spin_reads;                 /* reads of the own grant/next word while waiting (not in rma_ops) */
    uint64_t epochs;                     /* exclusive access epochs (flag array) */
    uint64_t wakes_sent, wakes_received; /* hand-off messages (flag array) */
    uint64_t handoffs;                   /* releases that passed the lock to a waiter */
    uint64_t release_races;              /* MCS: release found the tail moved but no successor linked */
    uint64_t repairs;                    /* MCS_SWAP: detached queues re-submitted on behalf of their tail */
    uint64_t sleeps;                     /* shared memory (Linux): futex sleeps of a waiter on its own word */
} sheaf_lock_stats;

typedef struct sheaf_lock_set sheaf_lock_set;

/* Test hooks, called on the calling rank at these points (they may use MPI
 * on other communicators, sleep, read the counters; they must not acquire or
 * release locks of the set). */
enum {
    SHEAF_LOCK_HOOK_ENQUEUED = 1,    /* a contended acquirer is registered (flag set / linked / first swap failed) */
    SHEAF_LOCK_HOOK_MCS_SWAPPED = 2, /* MCS: the tail swap returned a predecessor; before the link */
    SHEAF_LOCK_HOOK_RELEASE_RACE =
        3, /* MCS: the tail CAS failed (MCS_SWAP: the swap returned another rank; before the re-submit swap) */
    SHEAF_LOCK_HOOK_ACQUIRED = 4, /* the lock is held (before acquire returns) */
    SHEAF_LOCK_HOOK_POLL = 5      /* POLL: before each re-read of the lock word (after the back-off) */
};
typedef void (*sheaf_lock_hook_fn)(int point, int lock_id, void *arg);

SHEAF_API void sheaf_lock_opts_init(sheaf_lock_opts *opts);
/* Collective over comm. Validates opts on every rank (they must agree). */
SHEAF_API int sheaf_lock_create(MPI_Comm comm, const sheaf_lock_opts *opts, sheaf_lock_set **out);
/* Collective. Fails with SHEAF_LOCK_EBUSY on every rank (nothing freed) while
 * some rank holds a lock of the set; on success *set becomes NULL. */
SHEAF_API int sheaf_lock_free(sheaf_lock_set **set);
SHEAF_API int sheaf_lock_acquire(sheaf_lock_set *set, int lock_id);
SHEAF_API int sheaf_lock_release(sheaf_lock_set *set, int lock_id);
/* Where lock_id lives: home rank (in the set's communicator) and slot there. */
SHEAF_API int sheaf_lock_home(const sheaf_lock_set *set, int lock_id, int *rank, int *slot);
/* 1 if this rank holds lock_id, 0 if not, or a (negative) SHEAF_LOCK_E* code for a bad id. */
SHEAF_API int sheaf_lock_held(const sheaf_lock_set *set, int lock_id);
/* Serve remote requests now (SHEAF_LOCK_PROGRESS_LIBRARY: call it in long
 * computations outside MPI so that locks homed here stay responsive). */
SHEAF_API int sheaf_lock_progress(sheaf_lock_set *set);
SHEAF_API sheaf_lock_progress_mode sheaf_lock_progress_used(const sheaf_lock_set *set);
SHEAF_API sheaf_lock_kind sheaf_lock_kind_of(const sheaf_lock_set *set);
SHEAF_API int sheaf_lock_stats_get(const sheaf_lock_set *set, sheaf_lock_stats *out);
SHEAF_API void sheaf_lock_stats_reset(sheaf_lock_set *set);
SHEAF_API int sheaf_lock_set_hook(sheaf_lock_set *set, sheaf_lock_hook_fn fn, void *arg);
SHEAF_API const char *sheaf_lock_kind_name(sheaf_lock_kind kind);
SHEAF_API const char *sheaf_lock_progress_name(sheaf_lock_progress_mode mode);
SHEAF_API const char *sheaf_lock_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
