/* ops.c - the one-sided primitives every algorithm is written in, over MPI
 * RMA (library/asynchronous progress) or over processor atomics on a
 * shared-memory window (truly passive on one node), and their counts. */
#include "lock.h"
#include <sched.h>

static int *shm_int(struct sheaf_lock_set *S, int rank, MPI_Aint off)
{
    return (int *)(void *)(S->peer[rank] + off);
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
        __atomic_store_n(shm_int(S, rank, off), val, __ATOMIC_SEQ_CST);
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
        __atomic_compare_exchange_n(shm_int(S, rank, off), &expected, val, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
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
