/* lock.h - internal declarations of libsheaf_lock (only for src/lock).
 *
 * Window layout (identical on every rank, displacement unit 1 byte):
 *   LK_OFF_GRANT               int grant        MCS: the lock id a predecessor handed me, -1 while waiting
 *   LK_OFF_SLEEP               int sleep        shared memory: off+1 of the own word this rank sleeps
 *                                               on (futex), 0 = awake (not a protocol word: uncounted)
 *   LK_OFF_NEXT                int next[nlocks] MCS: my successor in the queue of each lock, -1 = none
 *   S->off_word                int word[nslots] per lock homed here: MCS tail rank (-1 free), POLL
 *                                               lock word (0 free, holder+1), FLAGS (shared memory
 *                                               only) the mutex that stands for the exclusive epoch
 *   S->off_flags               uchar flags[nslots * P]  FLAGS: rank r's flag of slot s at s*P + r
 * Lock id -> home rank id % P, slot id / P. */
#ifndef SHEAF_LOCK_INTERNAL_H
#define SHEAF_LOCK_INTERNAL_H
#include "sheaf_lock.h"
#include <stddef.h>

#define LK_MAX_LOCKS (1 << 22) /* bounds the window: 4 B next + ~2 B per lock and rank */
#define LK_OFF_GRANT 0
#define LK_OFF_SLEEP 4
#define LK_OFF_NEXT 8
#define LK_NIL (-1)
#define LK_TAG_WAKE 0x5f1a /* hand-off message of the flag array (on the set's own communicator) */

struct sheaf_lock_set {
    MPI_Comm comm; /* duplicate of the creator's communicator, MPI_ERRORS_RETURN */
    MPI_Win win;
    int rank, size;
    sheaf_lock_kind kind;
    sheaf_lock_progress_mode progress; /* SHARED, LIBRARY or ASYNC (never AUTO) */
    int shm;                           /* 1: processor atomics on MPI_Win_allocate_shared memory */
    int futex;    /* 1: shm waiters sleep on a futex after LK_SPIN steps (Linux; SHEAF_LOCK_NOFUTEX unset) */
    int lock_all; /* 1: a lock_all epoch is open for the set's lifetime (MCS, POLL over RMA) */
    int nlocks, nslots;
    MPI_Aint off_word, off_flags, winsize;
    char **peer;         /* shm: every rank's window base in this address space */
    unsigned char *held; /* nlocks: 1 while this rank holds the lock */
    int nheld;
    unsigned char *flagbuf; /* FLAGS: the other ranks' flags fetched in an epoch (size P) */
    unsigned poll_min_us, poll_max_us;
    uint64_t rng;
    sheaf_lock_stats st;
    sheaf_lock_hook_fn hook;
    void *hook_arg;
};

/* the wake message of the flag array: typed, packed to 8 bytes */
typedef struct lk_wake_msg {
    int32_t lock_id;
    int32_t from;
} lk_wake_msg;
#define LK_WAKE_BYTES 8
void lk_wake_pack(const lk_wake_msg *m, unsigned char out[LK_WAKE_BYTES]);
void lk_wake_unpack(const unsigned char in[LK_WAKE_BYTES], lk_wake_msg *m);

/* errors (error.c) */
int lk_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lk_mpi_err(int mpirc, const char *what);

/* lock id -> where (set.c) */
static inline int lk_home(const struct sheaf_lock_set *S, int id) { return id % S->size; }
static inline int lk_slot(const struct sheaf_lock_set *S, int id) { return id / S->size; }
static inline MPI_Aint lk_word_off(const struct sheaf_lock_set *S, int id)
{
    return S->off_word + (MPI_Aint)lk_slot(S, id) * (MPI_Aint)sizeof(int);
}
static inline MPI_Aint lk_next_off(int id) { return LK_OFF_NEXT + (MPI_Aint)id * (MPI_Aint)sizeof(int); }
static inline void lk_hook(struct sheaf_lock_set *S, int point, int id)
{
    if (S->hook)
        S->hook(point, id, S->hook_arg);
}

/* one-sided primitives on lock state, counted (ops.c). spin != 0: a waiting
 * rank re-reading its own word (counted in spin_reads, not rma_ops). */
int lk_read(struct sheaf_lock_set *S, int rank, MPI_Aint off, int *val, int spin);
int lk_write(struct sheaf_lock_set *S, int rank, MPI_Aint off, int val);
int lk_swap(struct sheaf_lock_set *S, int rank, MPI_Aint off, int val, int *old);
int lk_cas(struct sheaf_lock_set *S, int rank, MPI_Aint off, int cmp, int val, int *old);
/* FLAGS: an exclusive epoch at `rank` (slot's mutex in shared memory) */
int lk_epoch_begin(struct sheaf_lock_set *S, int rank, int slot);
int lk_epoch_end(struct sheaf_lock_set *S, int rank, int slot);
int lk_put_byte(struct sheaf_lock_set *S, int rank, MPI_Aint off, unsigned char v);
int lk_get_bytes(struct sheaf_lock_set *S, int rank, MPI_Aint off, unsigned char *buf, int n);
/* a rank's own word that nobody else reads before a later seq_cst operation
 * of this rank publishes it (MCS: grant and next[id] before the tail swap):
 * in shared memory a plain (relaxed) store, counted like lk_write */
int lk_write_own(struct sheaf_lock_set *S, MPI_Aint off, int val);
/* one step of a wait loop; *spins counts the steps of this wait (start at 0).
 * Shared memory: the first LK_SPIN steps only pause the core (a hand-off by
 * a running holder is seen within ~100 ns), after that every step lets MPI
 * progress and yields the core (ranks oversubscribed on few cores: a waiter
 * must not burn the time slice of a preempted holder). Over MPI RMA every
 * step lets MPI progress and yields. */
#define LK_SPIN 128
void lk_relax(struct sheaf_lock_set *S, unsigned *spins);
/* wait until the own word at off is != LK_NIL (until_not) or == until_eq;
 * its spin re-reads counted in spin_reads. Shared memory on Linux: after
 * LK_SPIN pause steps the rank announces itself in its sleep word and
 * sleeps on a futex on the word (LK_FUTEX_US bounded, then MPI progress and
 * sleep again); lk_write wakes it. Elsewhere: lk_relax steps. */
#define LK_FUTEX_US 500
int lk_wait_own(struct sheaf_lock_set *S, MPI_Aint off, int until_not, int until_eq, int *val);
/* 1 if this build and kernel can sleep on shared-memory words (set.c) */
int lk_futex_supported(void);

/* the algorithms (flags.c, mcs.c, poll.c): called with a valid, not-held (acquire)
 * or held (release) id; they do not touch S->held */
int lk_flags_acquire(struct sheaf_lock_set *S, int id);
int lk_flags_release(struct sheaf_lock_set *S, int id);
int lk_mcs_acquire(struct sheaf_lock_set *S, int id);
int lk_mcs_release(struct sheaf_lock_set *S, int id);
int lk_poll_acquire(struct sheaf_lock_set *S, int id);
int lk_poll_release(struct sheaf_lock_set *S, int id);
#endif
