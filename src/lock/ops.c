/* ops.c - the one-sided primitives every algorithm is written in, over MPI
 * RMA (library/asynchronous progress) or over processor atomics on a
 * shared-memory window (truly passive on one node), and their counts. */
#define _GNU_SOURCE /* syscall() */
#include "lock.h"
#include <sched.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

static int *shm_int(struct sheaf_lock_set *S, int rank, MPI_Aint off) { return (int *)(void *)(S->peer[rank] + off); }

/* Sleeping waiters (shared memory, Linux). The window is a MAP_SHARED
 * mapping, so process-shared (non-private) futexes work across the ranks.
 * A waiter stores off+1 in its sleep word, re-reads its word and sleeps only
 * if the value is unchanged (FUTEX_WAIT re-checks it atomically); a writer
 * stores the new value, then reads the target's sleep word and wakes only
 * if it names this word. Both pairs are seq_cst (store, then load), so at
 * least one side sees the other: either the waiter sees the new value or
 * the writer sees the announcement. The uncontended path makes no system
 * call; the wait is bounded (LK_FUTEX_US), so even a lost wake cannot hang. */
int lk_futex_supported(void)
{
#if defined(__linux__) && defined(SYS_futex)
    return 1;
#else
    return 0;
#endif
}

static void lk_futex_wake(struct sheaf_lock_set *S, int rank, MPI_Aint off, int *w)
{
#if defined(__linux__) && defined(SYS_futex)
    if (S->futex && rank != S->rank &&
        __atomic_load_n(shm_int(S, rank, LK_OFF_SLEEP), __ATOMIC_SEQ_CST) == (int)off + 1)
        syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
#else
    (void)S, (void)rank, (void)off, (void)w;
#endif
}

/* sleep on the own word at off while it still holds `seen` (at most LK_FUTEX_US) */
static void lk_futex_sleep(struct sheaf_lock_set *S, MPI_Aint off, int seen)
{
#if defined(__linux__) && defined(SYS_futex)
    int *w = shm_int(S, S->rank, off), *sl = shm_int(S, S->rank, LK_OFF_SLEEP);
    __atomic_store_n(sl, (int)off + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(w, __ATOMIC_SEQ_CST) == seen) {
        struct timespec ts = {0, LK_FUTEX_US * 1000L};
        S->st.sleeps++;
        syscall(SYS_futex, w, FUTEX_WAIT, seen, &ts, NULL, 0); /* woken, timed out, EAGAIN or EINTR: re-check */
    }
    __atomic_store_n(sl, 0, __ATOMIC_SEQ_CST);
#else
    (void)S, (void)off, (void)seen;
#endif
}

/* complete the operations to `rank` of the lock_all epoch */
static int flush(struct sheaf_lock_set *S, int rank, int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        return lk_mpi_err(rc, what);
    rc = MPI_Win_flush(rank, S->win);
    return rc == MPI_SUCCESS ? SHEAF_LOCK_OK : lk_mpi_err(rc, "MPI_Win_flush");
}

int lk_read(struct sheaf_lock_set *S, int rank, MPI_Aint off, int *val, int spin)
{
    if (spin)
        S->st.spin_reads++;
    else {
        S->st.atomics++;
        S->st.rma_ops++;
    }
    if (S->shm) {
        *val = __atomic_load_n(shm_int(S, rank, off), __ATOMIC_SEQ_CST);
        return SHEAF_LOCK_OK;
    }
    int rc = MPI_Fetch_and_op(NULL, val, MPI_INT, rank, off, MPI_NO_OP, S->win);
    return flush(S, rank, rc, "MPI_Fetch_and_op(MPI_NO_OP)");
}

int lk_write(struct sheaf_lock_set *S, int rank, MPI_Aint off, int val)
{
    S->st.atomics++;
    S->st.rma_ops++;
    if (S->shm) {
        int *w = shm_int(S, rank, off);
        __atomic_store_n(w, val, __ATOMIC_SEQ_CST);
        lk_futex_wake(S, rank, off, w);
        return SHEAF_LOCK_OK;
    }
    int rc = MPI_Accumulate(&val, 1, MPI_INT, rank, off, 1, MPI_INT, MPI_REPLACE, S->win);
    return flush(S, rank, rc, "MPI_Accumulate(MPI_REPLACE)");
}

int lk_write_own(struct sheaf_lock_set *S, MPI_Aint off, int val)
{
    if (!S->shm)
        return lk_write(S, S->rank, off, val);
    S->st.atomics++;
    S->st.rma_ops++;
    /* ordered before the seq_cst swap that makes this rank reachable (its
     * release half): whoever learns my rank from the tail or from my link
     * sees this store (doc/lock.md, "Shared-memory backend") */
    __atomic_store_n(shm_int(S, S->rank, off), val, __ATOMIC_RELAXED);
    return SHEAF_LOCK_OK;
}

int lk_swap(struct sheaf_lock_set *S, int rank, MPI_Aint off, int val, int *old)
{
    S->st.atomics++;
    S->st.rma_ops++;
    if (S->shm) {
        *old = __atomic_exchange_n(shm_int(S, rank, off), val, __ATOMIC_SEQ_CST);
        return SHEAF_LOCK_OK;
    }
    int rc = MPI_Fetch_and_op(&val, old, MPI_INT, rank, off, MPI_REPLACE, S->win);
    return flush(S, rank, rc, "MPI_Fetch_and_op(MPI_REPLACE)");
}

int lk_cas(struct sheaf_lock_set *S, int rank, MPI_Aint off, int cmp, int val, int *old)
{
    S->st.atomics++;
    S->st.rma_ops++;
    if (S->shm) {
        int expected = cmp;
        __atomic_compare_exchange_n(shm_int(S, rank, off), &expected, val, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        *old = expected;
        return SHEAF_LOCK_OK;
    }
    int rc = MPI_Compare_and_swap(&val, &cmp, old, MPI_INT, rank, off, S->win);
    return flush(S, rank, rc, "MPI_Compare_and_swap");
}

int lk_epoch_begin(struct sheaf_lock_set *S, int rank, int slot)
{
    S->st.epochs++;
    if (S->shm) {
        /* the exclusive epoch of MPI_Win_lock, as a spin mutex at the home:
         * held only while one rank sets its flag and reads the others */
        int *m = shm_int(S, rank, S->off_word + (MPI_Aint)slot * (MPI_Aint)sizeof(int));
        for (;;) {
            int expected = 0;
            if (__atomic_compare_exchange_n(m, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return SHEAF_LOCK_OK;
            sched_yield();
        }
    }
    int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, S->win);
    return rc == MPI_SUCCESS ? SHEAF_LOCK_OK : lk_mpi_err(rc, "MPI_Win_lock(MPI_LOCK_EXCLUSIVE)");
}

int lk_epoch_end(struct sheaf_lock_set *S, int rank, int slot)
{
    if (S->shm) {
        int *m = shm_int(S, rank, S->off_word + (MPI_Aint)slot * (MPI_Aint)sizeof(int));
        __atomic_store_n(m, 0, __ATOMIC_RELEASE);
        return SHEAF_LOCK_OK;
    }
    int rc = MPI_Win_unlock(rank, S->win);
    return rc == MPI_SUCCESS ? SHEAF_LOCK_OK : lk_mpi_err(rc, "MPI_Win_unlock");
}

int lk_put_byte(struct sheaf_lock_set *S, int rank, MPI_Aint off, unsigned char v)
{
    S->st.puts++;
    S->st.rma_ops++;
    if (S->shm) {
        __atomic_store_n((unsigned char *)(S->peer[rank] + off), v, __ATOMIC_SEQ_CST);
        return SHEAF_LOCK_OK;
    }
    /* the origin buffer must live until the epoch ends: S->flagbuf[rank
     * of the caller] is never fetched (a rank reads only the others' flags) */
    S->flagbuf[S->rank] = v;
    int rc = MPI_Put(&S->flagbuf[S->rank], 1, MPI_BYTE, rank, off, 1, MPI_BYTE, S->win);
    return rc == MPI_SUCCESS ? SHEAF_LOCK_OK : lk_mpi_err(rc, "MPI_Put");
}

int lk_get_bytes(struct sheaf_lock_set *S, int rank, MPI_Aint off, unsigned char *buf, int n)
{
    S->st.gets++;
    S->st.rma_ops++;
    if (S->shm) {
        const unsigned char *p = (const unsigned char *)(S->peer[rank] + off);
        for (int i = 0; i < n; i++)
            buf[i] = __atomic_load_n(&p[i], __ATOMIC_SEQ_CST);
        return SHEAF_LOCK_OK;
    }
    int rc = MPI_Get(buf, n, MPI_BYTE, rank, off, n, MPI_BYTE, S->win);
    return rc == MPI_SUCCESS ? SHEAF_LOCK_OK : lk_mpi_err(rc, "MPI_Get");
}

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

void lk_relax(struct sheaf_lock_set *S, unsigned *spins)
{
    if (S->shm && (*spins)++ < LK_SPIN) {
        cpu_pause();
        return;
    }
    /* MPICH serves passive-target requests to this rank only inside MPI
     * calls: poke the progress engine while waiting. Also with the lock
     * state in shared memory: the data a lock protects may be in an RMA
     * window at this rank, and its holder must get through. */
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, LK_TAG_WAKE + 1, S->comm, &flag, MPI_STATUS_IGNORE);
    sched_yield();
}

int lk_wait_own(struct sheaf_lock_set *S, MPI_Aint off, int until_not, int until_eq, int *val)
{
    unsigned spins = 0;
    for (;;) {
        int rc = lk_read(S, S->rank, off, val, 1);
        if (rc)
            return rc;
        if (until_not ? *val != LK_NIL : *val == until_eq)
            return SHEAF_LOCK_OK;
        if (S->futex && spins >= LK_SPIN) {
            lk_futex_sleep(S, off, *val);
            /* between sleeps let MPI progress (data of the lock's holder may
             * be in an RMA window at this rank) */
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, LK_TAG_WAKE + 1, S->comm, &flag, MPI_STATUS_IGNORE);
            continue;
        }
        lk_relax(S, &spins);
    }
}
