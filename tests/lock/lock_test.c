/* lock_test.c - MPI tests of libsheaf_lock (include/sheaf_lock.h).
 *
 *   lock_test SCENARIO [progress=library|shared|async|auto] [kinds=flags,mcs,mcs-swap,poll] [k=K]
 *
 * count    every rank increments remote counters K times under the locks
 *          (a non-atomic get, yield, put: lost updates without mutual
 *          exclusion); lock 0 by all, then 2P+1 striped locks: exactly N*K
 * handoff  propagation (Coloma Fig. 6.6): rank 0 holds, the others queue,
 *          then the lock passes through all; for 2..P ranks: RMA operations
 *          per waiter exactly constant for MCS and the flag array; polling
 *          scripted through the POLL hook (rank 0 gates every poll): waiter w
 *          polls exactly w+1 times, w+4 operations (growing, no timing)
 * order    a deterministic arrival sequence (rank 0 lets one rank at a time
 *          queue): MCS hands off in arrival order, the flag array circularly
 *          from the releaser
 * race     MCS release race forced by a delay between the tail swap and the
 *          link (test hooks): no lost waiter, the race/repair path counted;
 *          MCS_SWAP with an usurper; then K random delays, counter N*K
 * badinput error codes and messages for bad ids, double release, release of
 *          a lock not held, free while held, bad or disagreeing options
 * Prints what it checks; exit 0 when every rank passed. */
#include "sheaf_lock.h"
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_GO 101
#define TAG_ENQ 102
#define TAG_SWAPPED 103
#define TAG_ACQ 104
#define TAG_LINK 105
#define TAG_POLL 106
#define TAG_REL 107
#define TAG_DONE 108

static int me, np, failures;
static sheaf_lock_progress_mode progress = SHEAF_LOCK_PROGRESS_LIBRARY;
static MPI_Comm tcomm;                       /* the test's own messages */
static unsigned poll_min = 2, poll_max = 64; /* SHEAF_LOCK_POLL back-off range (us) */

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            printf("FAIL rank %d %s:%d: ", me, __FILE__, __LINE__);                                                    \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
            fflush(stdout);                                                                                            \
        }                                                                                                              \
    } while (0)

static sheaf_lock_set *make_set(MPI_Comm comm, sheaf_lock_kind kind, int nlocks)
{
    sheaf_lock_opts o;
    sheaf_lock_opts_init(&o);
    o.kind = kind;
    o.nlocks = nlocks;
    o.progress = progress;
    o.poll_backoff_min_us = poll_min;
    o.poll_backoff_max_us = poll_max;
    sheaf_lock_set *s = NULL;
    int rc = sheaf_lock_create(comm, &o, &s);
    CHECK(rc == SHEAF_LOCK_OK, "create %s: %d %s", sheaf_lock_kind_name(kind), rc, sheaf_lock_last_error());
    return s;
}

static void must(int rc, const char *what)
{
    CHECK(rc == SHEAF_LOCK_OK, "%s: %d %s", what, rc, sheaf_lock_last_error());
    if (rc != SHEAF_LOCK_OK)
        MPI_Abort(MPI_COMM_WORLD, 2); /* a broken lock would hang the others: stop the run */
}

/* ---- counters: an RMA window of longs, one per lock, at the lock's home ---- */
typedef struct {
    MPI_Win win;
    long *base;
} counters;

static void counters_open(counters *c, MPI_Comm comm, int n)
{
    MPI_Win_allocate(((MPI_Aint)n * (MPI_Aint)sizeof(long) + 63) / 64 * 64, sizeof(long), MPI_INFO_NULL, comm, &c->base,
                     &c->win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, c->win);
    for (int i = 0; i < n; i++)
        c->base[i] = 0;
    MPI_Win_unlock(me, c->win);
    MPI_Barrier(comm);
    MPI_Win_lock_all(0, c->win);
}

static void counters_close(counters *c)
{
    MPI_Win_unlock_all(c->win);
    MPI_Win_free(&c->win);
}

/* read-modify-write that loses updates unless the caller holds the lock */
static long bump(counters *c, int rank, int idx)
{
    long v = 0;
    MPI_Get(&v, 1, MPI_LONG, rank, idx, 1, MPI_LONG, c->win);
    MPI_Win_flush(rank, c->win);
    long old = v;
    sched_yield();
    v++;
    MPI_Put(&v, 1, MPI_LONG, rank, idx, 1, MPI_LONG, c->win);
    MPI_Win_flush(rank, c->win);
    return old;
}

static long peek(counters *c, int rank, int idx)
{
    long v = -1;
    MPI_Get(&v, 1, MPI_LONG, rank, idx, 1, MPI_LONG, c->win);
    MPI_Win_flush(rank, c->win);
    return v;
}

/* ---- count ---- */
/* shared memory on Linux: a contended MCS waiter sleeps on a futex (doc/lock.md);
 * SHEAF_LOCK_NOFUTEX=1 (the comparison setting) spins and yields: no sleep */
static void check_sleeps(sheaf_lock_set *s, sheaf_lock_kind kind, const sheaf_lock_stats *st)
{
    unsigned long long mine = st->sleeps, all = 0, contended = st->contended, call = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&contended, &call, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sheaf_lock_progress_used(s) != SHEAF_LOCK_PROGRESS_SHARED) {
        CHECK(all == 0, "%s: %llu futex sleeps over MPI RMA", sheaf_lock_kind_name(kind), all);
        return;
    }
    const char *nf = getenv("SHEAF_LOCK_NOFUTEX");
    int futex = !(nf && *nf);
#if !defined(__linux__)
    futex = 0;
#endif
    if (!futex)
        CHECK(all == 0, "%s: %llu futex sleeps with SHEAF_LOCK_NOFUTEX set", sheaf_lock_kind_name(kind), all);
    else if (kind == SHEAF_LOCK_MCS && np > 2)
        CHECK(all > 0, "%s: %llu contended acquires but no waiter slept", sheaf_lock_kind_name(kind), call);
    if (me == 0)
        printf("count %-8s: %llu contended acquires, %llu futex sleeps (futex %s)\n", sheaf_lock_kind_name(kind), call,
               all, futex ? "on" : "off");
}

static void run_count(sheaf_lock_kind kind, int K)
{
    int nl = 2 * np + 1;
    sheaf_lock_set *s = make_set(MPI_COMM_WORLD, kind, nl);
    if (!s)
        return;
    counters c;
    counters_open(&c, MPI_COMM_WORLD, nl + 1);
    int home, slot;
    for (int id = 0; id < nl; id++) {
        must(sheaf_lock_home(s, id, &home, &slot), "home");
        CHECK(home == id % np && slot == id / np, "lock %d at %d/%d", id, home, slot);
    }
    /* one lock, full contention */
    for (int i = 0; i < K; i++) {
        must(sheaf_lock_acquire(s, 0), "acquire 0");
        CHECK(sheaf_lock_held(s, 0) == 1, "held");
        bump(&c, 0, 0);
        must(sheaf_lock_release(s, 0), "release 0");
    }
    /* many locks: iteration i takes lock (i + rank) % nl, its counter at the lock's home */
    for (int i = 0; i < K; i++) {
        int id = (i + me) % nl;
        must(sheaf_lock_acquire(s, id), "acquire");
        bump(&c, id % np, 1 + id / np);
        must(sheaf_lock_release(s, id), "release");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        long one = peek(&c, 0, 0), total = 0;
        for (int id = 0; id < nl; id++)
            total += peek(&c, id % np, 1 + id / np);
        CHECK(one == (long)np * K, "%s lock 0: counter %ld, expected %ld", sheaf_lock_kind_name(kind), one,
              (long)np * K);
        CHECK(total == (long)np * K, "%s %d locks: counters sum %ld, expected %ld", sheaf_lock_kind_name(kind), nl,
              total, (long)np * K);
        printf("count %-8s %s: %d ranks x %d: lock 0 counter %ld, %d striped locks sum %ld (expected %ld each)\n",
               sheaf_lock_kind_name(kind), sheaf_lock_progress_name(sheaf_lock_progress_used(s)), np, K, one, nl, total,
               (long)np * K);
    }
    sheaf_lock_stats st;
    must(sheaf_lock_stats_get(s, &st), "stats");
    CHECK(st.acquires == (uint64_t)2 * K && st.releases == (uint64_t)2 * K, "acquires %llu releases %llu",
          (unsigned long long)st.acquires, (unsigned long long)st.releases);
    check_sleeps(s, kind, &st);
    counters_close(&c);
    must(sheaf_lock_free(&s), "free");
}

/* ---- handoff (propagation) ---- */
typedef struct {
    sheaf_lock_set *s;
    sheaf_lock_stats at_enq;
    int notify;          /* send TAG_ENQ to rank 0 of tcomm when enqueued */
    int acq_notify;      /* send TAG_ACQ to rank 0 when acquired */
    int race_go;         /* RELEASE_RACE: send TAG_GO to this rank, wait for its TAG_ACQ */
    int link_hold;       /* MCS_SWAPPED: send TAG_SWAPPED to rank 0, link only after its TAG_LINK */
    int link_release_to; /* RELEASE_RACE: then send TAG_LINK to this rank */
    int rand_delay;      /* MCS_SWAPPED: random delay (race stress) */
    int poll_gate;       /* POLL: send TAG_POLL to rank 0, poll only after its TAG_GO */
    unsigned seed;
} hookctx;

static void hold_for(double us)
{
    double until = MPI_Wtime() + us * 1e-6;
    int flag;
    while (MPI_Wtime() < until) /* stay inside MPI: the home serves requests */
        MPI_Iprobe(MPI_ANY_SOURCE, 999, tcomm, &flag, MPI_STATUS_IGNORE);
}

static void sleep_us(long us) /* outside MPI */
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void test_hook(int point, int id, void *arg)
{
    hookctx *h = arg;
    int wr;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    if (point == SHEAF_LOCK_HOOK_ENQUEUED && h->notify) {
        sheaf_lock_stats_get(h->s, &h->at_enq);
        MPI_Send(&wr, 1, MPI_INT, 0, TAG_ENQ, tcomm);
    }
    if (point == SHEAF_LOCK_HOOK_ACQUIRED && h->acq_notify)
        MPI_Send(&wr, 1, MPI_INT, 0, TAG_ACQ, tcomm);
    if (point == SHEAF_LOCK_HOOK_RELEASE_RACE && h->race_go > 0) {
        int who;
        MPI_Send(&wr, 1, MPI_INT, h->race_go, TAG_GO, tcomm);
        MPI_Recv(&who, 1, MPI_INT, h->race_go, TAG_ACQ, tcomm, MPI_STATUS_IGNORE);
    }
    if (point == SHEAF_LOCK_HOOK_RELEASE_RACE && h->link_release_to > 0)
        MPI_Send(&wr, 1, MPI_INT, h->link_release_to, TAG_LINK, tcomm);
    if (point == SHEAF_LOCK_HOOK_MCS_SWAPPED && h->link_hold) {
        int go;
        MPI_Send(&wr, 1, MPI_INT, 0, TAG_SWAPPED, tcomm);
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_LINK, tcomm, MPI_STATUS_IGNORE);
    }
    if (point == SHEAF_LOCK_HOOK_POLL && h->poll_gate) {
        int go;
        MPI_Send(&wr, 1, MPI_INT, 0, TAG_POLL, tcomm);
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, tcomm, MPI_STATUS_IGNORE);
    }
    if (point == SHEAF_LOCK_HOOK_MCS_SWAPPED && h->rand_delay && rand_r(&h->seed) % 4 == 0)
        sleep_us((long)(rand_r(&h->seed) % 300));
}

#define HOLD_US 30000 /* each holder keeps the lock 30 ms */

/* k ranks of the world take part; returns the RMA operations per waiter
 * (sum over waiters of their acquire+release operations / (k-1)) on rank 0 */
static double propagation(sheaf_lock_kind kind, int k, uint64_t *maxw, uint64_t *minw)
{
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me < k ? 0 : MPI_UNDEFINED, me, &sub);
    double per = 0;
    *maxw = 0, *minw = UINT64_MAX;
    if (sub != MPI_COMM_NULL) {
        sheaf_lock_set *s = make_set(sub, kind, 1);
        hookctx h = {.s = s, .race_go = -1, .link_release_to = -1};
        must(sheaf_lock_set_hook(s, test_hook, &h), "hook");
        uint64_t mine = 0;
        if (me == 0) {
            must(sheaf_lock_acquire(s, 0), "acquire");
            MPI_Barrier(sub);
            for (int i = 1; i < k; i++) {
                int who;
                MPI_Recv(&who, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ENQ, tcomm, MPI_STATUS_IGNORE);
            }
            hold_for(HOLD_US);
            must(sheaf_lock_release(s, 0), "release");
        } else {
            MPI_Barrier(sub);
            sheaf_lock_stats_reset(s);
            h.notify = 1;
            must(sheaf_lock_acquire(s, 0), "acquire");
            hold_for(HOLD_US);
            must(sheaf_lock_release(s, 0), "release");
            sheaf_lock_stats st;
            sheaf_lock_stats_get(s, &st);
            mine = st.rma_ops;
            CHECK(st.contended == 1, "waiter %d not contended", me);
            if (kind == SHEAF_LOCK_FLAGS)
                CHECK(st.wakes_received == 1 && st.epochs == 2, "flags: wakes %llu epochs %llu",
                      (unsigned long long)st.wakes_received, (unsigned long long)st.epochs);
        }
        uint64_t sum = 0, mx = 0, mn = 0, in = me ? mine : 0, inmin = me ? mine : (uint64_t)INT64_MAX;
        MPI_Reduce(&in, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, sub);
        MPI_Reduce(&in, &mx, 1, MPI_UINT64_T, MPI_MAX, 0, sub);
        MPI_Reduce(&inmin, &mn, 1, MPI_UINT64_T, MPI_MIN, 0, sub);
        if (me == 0) {
            per = (double)sum / (k - 1);
            *maxw = mx, *minw = mn;
            /* exact counts (lock.h, mcs.c, flags.c): MCS waiter = grant reset, next
             * reset, tail swap, link; release = next read + grant write (the last: CAS/swap) */
            if (kind == SHEAF_LOCK_MCS || kind == SHEAF_LOCK_MCS_SWAP)
                CHECK(mx == 6 && mn == 6, "%s k=%d: waiter ops min %llu max %llu, expected 6",
                      sheaf_lock_kind_name(kind), k, (unsigned long long)mn, (unsigned long long)mx);
            /* flag array: per epoch one put + a get on each side of the own flag */
            if (kind == SHEAF_LOCK_FLAGS) {
                uint64_t expect = 0;
                for (int r = 1; r < k; r++)
                    expect += 2 * (1 + (r > 0) + (r < k - 1));
                CHECK(sum == expect && mx <= 6, "flags k=%d: waiter ops sum %llu (expected %llu) max %llu", k,
                      (unsigned long long)sum, (unsigned long long)expect, (unsigned long long)mx);
            }
        }
        must(sheaf_lock_free(&s), "free");
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return per;
}

/* Polling, scripted (no timing): every re-read of the lock word waits at the
 * POLL hook for rank 0's go, so rank 0 decides who polls when. Rank 0 holds
 * the lock; each waiter fails its swap and parks before its first poll. Round
 * 0: each waiter polls once (held). Rank 0 releases. Round j = 1..k-1: rank 0
 * lets every waiter still waiting poll once, in rank order: the first finds
 * the lock free and takes it, the others find it held; then the holder
 * releases. Waiter w takes the lock in round w after exactly w+1 polls; its
 * RMA operations: the failed swap, w+1 reads, the winning swap, the release
 * write = w+4. Per waiter they grow with the waiters (the cost of polling);
 * MCS and the flag array stay constant (propagation above). */
static void poll_scripted(int k, uint64_t *sum_out)
{
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me < k ? 0 : MPI_UNDEFINED, me, &sub);
    *sum_out = 0;
    if (sub != MPI_COMM_NULL) {
        sheaf_lock_set *s = make_set(sub, SHEAF_LOCK_POLL, 1);
        hookctx h = {.s = s, .race_go = -1, .link_release_to = -1};
        must(sheaf_lock_set_hook(s, test_hook, &h), "hook");
        uint64_t mine = 0;
        if (me == 0) {
            int who, waiting[64] = {0}, go = 1;
            must(sheaf_lock_acquire(s, 0), "acquire");
            MPI_Barrier(sub);
            for (int i = 1; i < k; i++) { /* everyone parked before its first poll */
                MPI_Recv(&who, 1, MPI_INT, MPI_ANY_SOURCE, TAG_POLL, tcomm, MPI_STATUS_IGNORE);
                waiting[who] = 1;
            }
            for (int w = 1; w < k; w++) { /* round 0: a poll each, the lock held */
                MPI_Send(&go, 1, MPI_INT, w, TAG_GO, tcomm);
                MPI_Recv(&who, 1, MPI_INT, w, TAG_POLL, tcomm, MPI_STATUS_IGNORE);
            }
            must(sheaf_lock_release(s, 0), "release");
            for (int round = 1; round < k; round++) {
                int holder = -1;
                for (int w = 1; w < k; w++) {
                    if (!waiting[w])
                        continue;
                    MPI_Status st;
                    MPI_Send(&go, 1, MPI_INT, w, TAG_GO, tcomm);
                    MPI_Recv(&who, 1, MPI_INT, w, MPI_ANY_TAG, tcomm, &st);
                    if (st.MPI_TAG == TAG_ACQ) {
                        CHECK(holder < 0, "poll k=%d round %d: ranks %d and %d both took the lock", k, round, holder,
                              w);
                        holder = w;
                        waiting[w] = 0;
                    }
                }
                CHECK(holder == round, "poll k=%d round %d: rank %d took the lock, expected %d", k, round, holder,
                      round);
                if (holder < 0)
                    MPI_Abort(MPI_COMM_WORLD, 2);
                MPI_Send(&go, 1, MPI_INT, holder, TAG_REL, tcomm);
                MPI_Recv(&who, 1, MPI_INT, holder, TAG_DONE, tcomm, MPI_STATUS_IGNORE);
            }
        } else {
            int go;
            MPI_Barrier(sub);
            sheaf_lock_stats_reset(s);
            h.poll_gate = 1;
            h.acq_notify = 1;
            must(sheaf_lock_acquire(s, 0), "acquire");
            h.poll_gate = h.acq_notify = 0;
            MPI_Recv(&go, 1, MPI_INT, 0, TAG_REL, tcomm, MPI_STATUS_IGNORE);
            must(sheaf_lock_release(s, 0), "release");
            MPI_Send(&me, 1, MPI_INT, 0, TAG_DONE, tcomm);
            sheaf_lock_stats st;
            sheaf_lock_stats_get(s, &st);
            mine = st.rma_ops;
            CHECK(st.contended == 1 && st.polls == (uint64_t)me + 1 && st.rma_ops == (uint64_t)me + 4,
                  "poll k=%d waiter %d: contended %llu polls %llu rma ops %llu, expected 1, %d, %d", k, me,
                  (unsigned long long)st.contended, (unsigned long long)st.polls, (unsigned long long)st.rma_ops,
                  me + 1, me + 4);
        }
        MPI_Reduce(&mine, sum_out, 1, MPI_UINT64_T, MPI_SUM, 0, sub);
        must(sheaf_lock_free(&s), "free");
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run_handoff(sheaf_lock_kind kind)
{
    uint64_t mx = 0, mn = 0, sum = 0;
    for (int k = 2; k <= np && k < 64; k++) {
        if (kind == SHEAF_LOCK_POLL) {
            /* scripted: exact counts, whatever the scheduler does */
            poll_scripted(k, &sum);
            if (me == 0) {
                uint64_t want = 0;
                for (int w = 1; w < k; w++)
                    want += (uint64_t)w + 4;
                CHECK(sum == want, "poll k=%d: waiter ops sum %llu, expected %llu", k, (unsigned long long)sum,
                      (unsigned long long)want);
                printf("handoff poll     %s: %d ranks: %.1f RMA ops per waiter (scripted polls: waiter w polls w+1 "
                       "times; sum %llu, expected %llu)\n",
                       sheaf_lock_progress_name(progress), k, (double)sum / (k - 1), (unsigned long long)sum,
                       (unsigned long long)want);
            }
            continue;
        }
        double per = propagation(kind, k, &mx, &mn);
        if (me == 0)
            printf("handoff %-8s %s: %d ranks: %.1f RMA ops per waiter (acquire+release; min %llu max %llu)\n",
                   sheaf_lock_kind_name(kind), sheaf_lock_progress_name(progress), k, per, (unsigned long long)mn,
                   (unsigned long long)mx);
    }
}

/* ---- order ---- */
static void run_order(sheaf_lock_kind kind)
{
    sheaf_lock_set *s = make_set(MPI_COMM_WORLD, kind, 1);
    counters c;
    counters_open(&c, MPI_COMM_WORLD, 1);
    hookctx h = {.s = s, .race_go = -1, .link_release_to = -1};
    must(sheaf_lock_set_hook(s, test_hook, &h), "hook");
    long pos = -1;
    int n = np - 1;
    if (me == 0) {
        must(sheaf_lock_acquire(s, 0), "acquire");
        pos = bump(&c, 0, 0);
        for (int i = 0; i < n; i++) { /* arrival sequence 2, 3, ..., P-1, 1 */
            int r = (i + 1) % n + 1, who = 0;
            MPI_Send(&i, 1, MPI_INT, r, TAG_GO, tcomm);
            MPI_Recv(&who, 1, MPI_INT, r, TAG_ENQ, tcomm, MPI_STATUS_IGNORE);
        }
        must(sheaf_lock_release(s, 0), "release");
    } else {
        int i;
        MPI_Recv(&i, 1, MPI_INT, 0, TAG_GO, tcomm, MPI_STATUS_IGNORE);
        h.notify = 1;
        must(sheaf_lock_acquire(s, 0), "acquire");
        pos = bump(&c, 0, 0);
        must(sheaf_lock_release(s, 0), "release");
    }
    long all[256];
    MPI_Gather(&pos, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (me == 0) {
        char line[512];
        int o = 0;
        long bypos[256];
        for (int r = 0; r < np; r++)
            bypos[all[r] >= 0 && all[r] < np ? all[r] : 0] = r;
        for (int p = 0; p < np; p++)
            o += snprintf(line + o, sizeof line - (size_t)o, " %ld", bypos[p]);
        printf("order %-8s %s: arrival 0 (holder),", sheaf_lock_kind_name(kind), sheaf_lock_progress_name(progress));
        for (int i = 0; i < n; i++)
            printf(" %d", (i + 1) % n + 1);
        printf("; acquired in order%s\n", line);
        for (int i = 0; i < n; i++) {
            int r = (i + 1) % n + 1;
            if (kind == SHEAF_LOCK_MCS || kind == SHEAF_LOCK_MCS_SWAP)
                CHECK(all[r] == i + 1, "%s: rank %d arrived %d-th but acquired at %ld", sheaf_lock_kind_name(kind), r,
                      i + 1, all[r]);
        }
        if (kind == SHEAF_LOCK_FLAGS)
            for (int r = 1; r < np; r++)
                CHECK(all[r] == r, "flags: rank %d acquired at %ld, expected %d (circular from 0)", r, all[r], r);
    }
    counters_close(&c);
    must(sheaf_lock_free(&s), "free");
}

/* ---- race ---- */
static void run_race(sheaf_lock_kind kind, int K)
{
    sheaf_lock_set *s = make_set(MPI_COMM_WORLD, kind, 1);
    counters c;
    counters_open(&c, MPI_COMM_WORLD, 1);
    hookctx h = {.s = s, .race_go = -1, .link_release_to = -1, .seed = 12345u + (unsigned)me};
    must(sheaf_lock_set_hook(s, test_hook, &h), "hook");
    /* 1. deterministic: rank 1 swaps itself into the tail and links only when
     * rank 0 has found the race in its release (hooks, messages). With 3+ ranks and the
     * swap-only release, rank 2 takes the free lock between rank 0's two swaps
     * (the usurper), and the detached queue (rank 1) goes behind it. */
    int usurp = kind == SHEAF_LOCK_MCS_SWAP && np >= 3;
    long expect = 2 + usurp;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        must(sheaf_lock_acquire(s, 0), "acquire");
        bump(&c, 0, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        int who;
        MPI_Recv(&who, 1, MPI_INT, 1, TAG_SWAPPED, tcomm, MPI_STATUS_IGNORE);
        h.race_go = usurp ? 2 : -1;
        h.link_release_to = 1;
        sheaf_lock_stats_reset(s);
        must(sheaf_lock_release(s, 0), "release");
        h.race_go = -1;
        h.link_release_to = -1;
        sheaf_lock_stats st;
        sheaf_lock_stats_get(s, &st);
        CHECK(st.release_races == 1, "%s: release_races %llu, expected 1", sheaf_lock_kind_name(kind),
              (unsigned long long)st.release_races);
        if (kind == SHEAF_LOCK_MCS_SWAP)
            CHECK(st.repairs == 1, "mcs-swap: repairs %llu, expected 1", (unsigned long long)st.repairs);
        printf("race %-8s %s: release raced with a late link%s: races %llu repairs %llu handoffs %llu\n",
               sheaf_lock_kind_name(kind), sheaf_lock_progress_name(progress), usurp ? " and an usurper" : "",
               (unsigned long long)st.release_races, (unsigned long long)st.repairs, (unsigned long long)st.handoffs);
    } else if (me == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        h.link_hold = 1; /* swap, then link only when rank 0 is inside its racing release */
        must(sheaf_lock_acquire(s, 0), "acquire");
        h.link_hold = 0;
        long pos = bump(&c, 0, 0);
        CHECK(pos == expect - 1, "%s: rank 1 acquired at %ld, expected %ld", sheaf_lock_kind_name(kind), pos,
              expect - 1);
        must(sheaf_lock_release(s, 0), "release");
    } else if (me == 2 && usurp) {
        MPI_Barrier(MPI_COMM_WORLD);
        int go;
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, tcomm, MPI_STATUS_IGNORE);
        h.acq_notify = 1;
        must(sheaf_lock_acquire(s, 0), "acquire (usurper)");
        h.acq_notify = 0;
        long pos = bump(&c, 0, 0);
        CHECK(pos == 1, "mcs-swap: the usurper acquired at %ld, expected 1", pos);
        hold_for(20000); /* usually past rank 0's re-submit (if not, rank 2's release is clean and
                          * rank 0 hands over directly: the order is the same) */
        must(sheaf_lock_release(s, 0), "release (usurper)");
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long v = me == 0 ? peek(&c, 0, 0) : 0;
    if (me == 0)
        CHECK(v == expect, "%s: counter %ld after the race, expected %ld (a lost waiter?)", sheaf_lock_kind_name(kind),
              v, expect);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody starts the stress before the peek */
    /* 2. stress: every rank K times, random delays between swap and link */
    h.rand_delay = 1;
    sheaf_lock_stats_reset(s);
    for (int i = 0; i < K; i++) {
        must(sheaf_lock_acquire(s, 0), "acquire");
        bump(&c, 0, 0);
        must(sheaf_lock_release(s, 0), "release");
    }
    sheaf_lock_stats st;
    sheaf_lock_stats_get(s, &st);
    unsigned long long races = 0, mine = st.release_races;
    MPI_Reduce(&mine, &races, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        v = peek(&c, 0, 0);
        CHECK(v == expect + (long)np * K, "%s stress: counter %ld, expected %ld", sheaf_lock_kind_name(kind), v,
              expect + (long)np * K);
        printf("race %-8s %s: stress %d ranks x %d with random link delays: counter %ld (expected %ld), %llu races\n",
               sheaf_lock_kind_name(kind), sheaf_lock_progress_name(progress), np, K, v, expect + (long)np * K, races);
    }
    counters_close(&c);
    must(sheaf_lock_free(&s), "free");
}

/* ---- badinput ---- */
static void expect_err(int rc, int code, const char *needle, const char *what)
{
    const char *m = sheaf_lock_last_error();
    CHECK(rc == code, "%s: code %d, expected %d (%s)", what, rc, code, m);
    CHECK(m && strstr(m, needle), "%s: message '%s' lacks '%s'", what, m ? m : "(null)", needle);
}

static void run_badinput(sheaf_lock_kind kind)
{
    sheaf_lock_set *s = make_set(MPI_COMM_WORLD, kind, 3);
    expect_err(sheaf_lock_acquire(s, -1), SHEAF_LOCK_ERANGE, "lock id -1 outside [0, 3)", "acquire(-1)");
    expect_err(sheaf_lock_acquire(s, 3), SHEAF_LOCK_ERANGE, "lock id 3 outside", "acquire(nlocks)");
    expect_err(sheaf_lock_release(s, 7), SHEAF_LOCK_ERANGE, "lock id 7 outside", "release(7)");
    expect_err(sheaf_lock_release(s, 1), SHEAF_LOCK_ENOTHELD, "does not hold lock 1", "release of a lock not held");
    expect_err(sheaf_lock_acquire(NULL, 0), SHEAF_LOCK_EINVAL, "lock set is NULL", "acquire(NULL)");
    expect_err(sheaf_lock_release(NULL, 0), SHEAF_LOCK_EINVAL, "lock set is NULL", "release(NULL)");
    CHECK(sheaf_lock_held(s, 5) == SHEAF_LOCK_ERANGE && SHEAF_LOCK_ERANGE < 0, "held(5)");
    /* each rank its own lock id (striped over the homes), then double release */
    int id = me % 3;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me < 3) {
        must(sheaf_lock_acquire(s, id), "acquire");
        expect_err(sheaf_lock_acquire(s, id), SHEAF_LOCK_EHELD, "already holds lock", "acquire of a held lock");
        must(sheaf_lock_release(s, id), "release");
        expect_err(sheaf_lock_release(s, id), SHEAF_LOCK_ENOTHELD, "already released", "double release");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* free while rank 0 holds a lock: EBUSY everywhere, nothing freed */
    if (me == 0)
        must(sheaf_lock_acquire(s, 2), "acquire");
    int rc = sheaf_lock_free(&s);
    expect_err(rc, SHEAF_LOCK_EBUSY, "still holds", "free while held");
    CHECK(s != NULL, "set freed despite EBUSY");
    if (me == 0)
        must(sheaf_lock_release(s, 2), "release");
    /* the set still works after the errors */
    must(sheaf_lock_acquire(s, 0), "acquire after errors");
    must(sheaf_lock_release(s, 0), "release after errors");
    must(sheaf_lock_free(&s), "free");
    CHECK(s == NULL, "set not NULL after free");
    expect_err(sheaf_lock_free(&s), SHEAF_LOCK_EINVAL, "no lock set", "free(NULL)");
}

static void run_badopts(void)
{
    sheaf_lock_opts o;
    sheaf_lock_set *s = (sheaf_lock_set *)&o; /* must be reset to NULL */
    sheaf_lock_opts_init(&o);
    o.nlocks = 0;
    expect_err(sheaf_lock_create(MPI_COMM_WORLD, &o, &s), SHEAF_LOCK_EINVAL, "nlocks 0 outside", "nlocks 0");
    CHECK(s == NULL, "out not NULL after a failed create");
    sheaf_lock_opts_init(&o);
    o.nlocks = me == 0 ? 3 : 4;
    expect_err(sheaf_lock_create(MPI_COMM_WORLD, &o, &s), np > 1 ? SHEAF_LOCK_EINVAL : SHEAF_LOCK_OK,
               np > 1 ? "disagree on nlocks" : "", "ranks disagree");
    if (np == 1)
        sheaf_lock_free(&s);
    sheaf_lock_opts_init(&o);
    o.kind = (sheaf_lock_kind)99;
    expect_err(sheaf_lock_create(MPI_COMM_WORLD, &o, &s), SHEAF_LOCK_EINVAL, "unknown lock kind 99", "kind 99");
    sheaf_lock_opts_init(&o);
    if (me == np - 1) /* bad on one rank only: every rank fails */
        o.poll_backoff_min_us = 100, o.poll_backoff_max_us = 10;
    int rc = sheaf_lock_create(MPI_COMM_WORLD, &o, &s);
    expect_err(rc, SHEAF_LOCK_EINVAL, me == np - 1 ? "back-off range" : "another rank", "bad on one rank");
    if (me != np - 1) { /* the others quote the failing rank's message and name it (sheaf_comm_agree) */
        char who[32];
        snprintf(who, sizeof who, "rank %d", np - 1);
        expect_err(rc, SHEAF_LOCK_EINVAL, "back-off range", "bad on one rank: its message elsewhere");
        expect_err(rc, SHEAF_LOCK_EINVAL, who, "bad on one rank: its rank elsewhere");
    }
    int level;
    MPI_Query_thread(&level);
    if (level != MPI_THREAD_MULTIPLE) {
        sheaf_lock_opts_init(&o);
        o.progress = SHEAF_LOCK_PROGRESS_ASYNC;
        expect_err(sheaf_lock_create(MPI_COMM_WORLD, &o, &s), SHEAF_LOCK_EINVAL, "MPI_THREAD_MULTIPLE",
                   "async without threads");
    }
    expect_err(sheaf_lock_create(MPI_COMM_WORLD, NULL, &s), SHEAF_LOCK_EINVAL, "opts is NULL", "opts NULL");
    expect_err(sheaf_lock_create(MPI_COMM_NULL, &o, &s), SHEAF_LOCK_EINVAL, "MPI_COMM_NULL", "comm NULL");
    if (me == 0)
        printf("badinput: bad options refused on every rank with messages, e.g. \"%s\"\n", sheaf_lock_last_error());
}

static int parse_kinds(const char *list, sheaf_lock_kind *out)
{
    static const sheaf_lock_kind all[] = {SHEAF_LOCK_FLAGS, SHEAF_LOCK_MCS, SHEAF_LOCK_MCS_SWAP, SHEAF_LOCK_POLL};
    int n = 0;
    for (int i = 0; i < 4; i++) {
        const char *name = sheaf_lock_kind_name(all[i]);
        size_t len = strlen(name);
        for (const char *p = list; p && *p;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            if ((l == len && !strncmp(p, name, l)) || (l == 3 && !strncmp(p, "all", 3))) {
                out[n++] = all[i];
                break;
            }
            p = e ? e + 1 : NULL;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *scenario = argc > 1 ? argv[1] : "count";
    const char *kinds = "all";
    int K = 40;
    for (int i = 2; i < argc; i++) {
        if (!strncmp(argv[i], "progress=", 9)) {
            const char *v = argv[i] + 9;
            progress = !strcmp(v, "shared")  ? SHEAF_LOCK_PROGRESS_SHARED
                       : !strcmp(v, "async") ? SHEAF_LOCK_PROGRESS_ASYNC
                       : !strcmp(v, "auto")  ? SHEAF_LOCK_PROGRESS_AUTO
                                             : SHEAF_LOCK_PROGRESS_LIBRARY;
        } else if (!strncmp(argv[i], "kinds=", 6))
            kinds = argv[i] + 6;
        else if (!strncmp(argv[i], "k=", 2))
            K = atoi(argv[i] + 2);
    }
    int want = progress == SHEAF_LOCK_PROGRESS_ASYNC ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, got;
    MPI_Init_thread(&argc, &argv, want, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_dup(MPI_COMM_WORLD, &tcomm);
    sheaf_lock_kind list[4];
    int nk = parse_kinds(kinds, list);
    if (progress == SHEAF_LOCK_PROGRESS_ASYNC && got != MPI_THREAD_MULTIPLE) {
        if (me == 0)
            printf("SKIP: this MPI gives thread level %d, not MPI_THREAD_MULTIPLE\n", got);
        MPI_Finalize();
        return 77;
    }
    for (int i = 0; i < nk; i++) {
        if (!strcmp(scenario, "count"))
            run_count(list[i], K);
        else if (!strcmp(scenario, "handoff"))
            run_handoff(list[i]);
        else if (!strcmp(scenario, "order") && np >= 2)
            run_order(list[i]);
        else if (!strcmp(scenario, "race") && np >= 2 && (list[i] == SHEAF_LOCK_MCS || list[i] == SHEAF_LOCK_MCS_SWAP))
            run_race(list[i], K);
        else if (!strcmp(scenario, "badinput"))
            run_badinput(list[i]);

        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!strcmp(scenario, "badinput"))
        run_badopts();

    int bad = failures, allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s: %s (%d failed checks)\n", scenario, allbad ? "FAILED" : "OK", allbad);
    MPI_Comm_free(&tcomm);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
