/* poll.c - the polling lock (Coloma 2007, section 6.1): test-and-set by atomic
 * swap, re-reads of the lock word with randomized exponential back-off, one
 * atomic write to release. For comparison: no fairness (whoever swaps first
 * after a release wins) and every waiter keeps reading the home, so the
 * operations per hand-off grow with the number of waiters and the hold time. */
#include "lock.h"
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static uint64_t next_rand(struct sheaf_lock_set *S)
{
    uint64_t x = S->rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    S->rng = x;
    return x;
}

/* wait a random time in [0, range) microseconds. With the lock state in
 * shared memory longer waits sleep (the core goes to the holder). Over MPI
 * RMA they spin with progress: measured with MPICH 4.0.2 (ch4:ucx) on this
 * box, an origin that sleeps 0.5 ms between one-sided reads gets 18 reads
 * per 0.9 s instead of 3200 (doc/lock.md, "Progress"). */
static void backoff(struct sheaf_lock_set *S, unsigned range)
{
    unsigned t = range ? (unsigned)(next_rand(S) % range) : 0;
    unsigned spins = LK_SPIN; /* the back-off is the spin: always progress and yield */
    lk_relax(S, &spins);
    if (S->shm && t >= 20) {
        struct timespec ts = {0, (long)t * 1000};
        nanosleep(&ts, NULL);
        lk_relax(S, &spins);
        return;
    }
    double until = now_us() + (double)t;
    while (now_us() < until)
        lk_relax(S, &spins);
}

int lk_poll_acquire(struct sheaf_lock_set *S, int id)
{
    int home = lk_home(S, id), old, v;
    MPI_Aint word = lk_word_off(S, id);
    int rc = lk_swap(S, home, word, S->rank + 1, &old);
    if (rc || old == 0)
        return rc;
    S->st.contended++;
    lk_hook(S, SHEAF_LOCK_HOOK_ENQUEUED, id);
    unsigned range = S->poll_min_us;
    for (;;) {
        /* read until free, only then swap again (halves the traffic) */
        do {
            backoff(S, range);
            if (range < S->poll_max_us)
                range = range * 2 > S->poll_max_us ? S->poll_max_us : range * 2;
            lk_hook(S, SHEAF_LOCK_HOOK_POLL, id); /* a test may gate each poll (tests/lock: handoff) */
            S->st.polls++;
            rc = lk_read(S, home, word, &v, 0);
            if (rc)
                return rc;
        } while (v != 0);
        rc = lk_swap(S, home, word, S->rank + 1, &old);
        if (rc || old == 0)
            return rc;
    }
}

int lk_poll_release(struct sheaf_lock_set *S, int id) { return lk_write(S, lk_home(S, id), lk_word_off(S, id), 0); }
