/* lock_storm.c - mutual exclusion under back-to-back acquires (libsheaf_lock).
 *
 *   lock_storm [progress=shared|library|auto] [kinds=flags,mcs,mcs-swap,poll] [k=K]
 *
 * Every rank acquires lock 0 K times with nothing between a release and the
 * next acquire, so that the tail swaps (MCS) and test-and-set swaps (polling)
 * of the ranks that run at once collide as often as the machine allows; see
 * run_storm. Exit 0 when every rank passed, 77 when the ranks are not on one
 * node, 1 on a failed check, 3 when no acquire happened for 20 s. */
#define _POSIX_C_SOURCE 200809L /* sigaction, alarm, write */
#include "sheaf_lock.h"
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np, failures;
static sheaf_lock_progress_mode progress = SHEAF_LOCK_PROGRESS_SHARED;

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

static void must(int rc, const char *what)
{
    CHECK(rc == SHEAF_LOCK_OK, "%s: %d %s", what, rc, sheaf_lock_last_error());
    if (rc != SHEAF_LOCK_OK)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

static sheaf_lock_set *make_set(MPI_Comm comm, sheaf_lock_kind kind, int nlocks)
{
    sheaf_lock_opts o;
    sheaf_lock_opts_init(&o);
    o.kind = kind;
    o.nlocks = nlocks;
    o.progress = progress;
    sheaf_lock_set *s = NULL;
    int rc = sheaf_lock_create(comm, &o, &s);
    CHECK(rc == SHEAF_LOCK_OK, "create %s: %d %s", sheaf_lock_kind_name(kind), rc, sheaf_lock_last_error());
    return s;
}

/* ---- storm ---- */
/* every rank acquires lock 0 K times back to back, nothing between release and
 * the next acquire: the tail swaps of the ranks running at once collide as
 * often as the machine allows. In the critical section an occupancy word in
 * shared memory (processor atomics: a check that costs nanoseconds, so the
 * section stays short and the swaps many) must be 0 on entry, and a plain
 * load+store counter must end at N*K. An acquire whose swap is not atomic
 * (a load and a store) lets two ranks in at once or loses a waiter (its
 * predecessor's link is overwritten: the run stops at the alarm). Ranks of one
 * node only (else 77). */
static int storm_skipped;
static long *storm_count, storm_seen = -1;
/* every 20 s while this rank is in the loop: the shared counter must have
 * moved (the other ranks may have finished; a lost waiter never returns) */
static void storm_alarm(int sig)
{
    (void)sig;
    long v = __atomic_load_n(storm_count, __ATOMIC_SEQ_CST);
    if (v == storm_seen) {
        static const char m[] = "FAIL storm: no acquire for 20 s (a waiter lost: its link or the tail overwritten)\n";
        if (write(1, m, sizeof m - 1) < 0) {
        }
        _exit(3);
    }
    storm_seen = v;
    alarm(20);
}

static void run_storm(sheaf_lock_kind kind, int K)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nn, local, all_local;
    MPI_Comm_size(node, &nn);
    local = nn == np;
    MPI_Allreduce(&local, &all_local, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_local) {
        storm_skipped = 1;
        MPI_Comm_free(&node);
        return;
    }
    long *base, *w;
    MPI_Win win;
    MPI_Win_allocate_shared(me == 0 ? 2 * (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, node, &base, &win);
    MPI_Aint sz;
    int du;
    MPI_Win_shared_query(win, 0, &sz, &du, &w);
    if (me == 0) {
        __atomic_store_n(&w[0], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&w[1], 0, __ATOMIC_SEQ_CST);
    }
    sheaf_lock_set *s = make_set(MPI_COMM_WORLD, kind, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    long overlaps = 0;
    storm_count = &w[1];
    storm_seen = -1;
    struct sigaction sa; /* not signal(): strict C11 gives System V semantics (reset after one alarm) */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = storm_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(20);
    for (int i = 0; s && i < K; i++) {
        must(sheaf_lock_acquire(s, 0), "acquire");
        overlaps += __atomic_fetch_add(&w[0], 1, __ATOMIC_SEQ_CST) != 0;
        __atomic_store_n(&w[1], __atomic_load_n(&w[1], __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
        __atomic_fetch_sub(&w[0], 1, __ATOMIC_SEQ_CST);
        must(sheaf_lock_release(s, 0), "release");
    }
    alarm(0);
    MPI_Barrier(MPI_COMM_WORLD);
    long all = 0;
    MPI_Allreduce(&overlaps, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        long n = __atomic_load_n(&w[1], __ATOMIC_SEQ_CST);
        CHECK(all == 0, "storm %s: %ld acquires found another rank inside", sheaf_lock_kind_name(kind), all);
        CHECK(n == (long)np * K, "storm %s: counter %ld, expected %ld", sheaf_lock_kind_name(kind), n, (long)np * K);
        printf(
            "storm %-8s %s: %d ranks x %d back-to-back acquires: 0 overlaps expected, %ld seen; counter %ld of %ld\n",
            sheaf_lock_kind_name(kind), sheaf_lock_progress_name(sheaf_lock_progress_used(s)), np, K, all, n,
            (long)np * K);
    }
    if (s)
        must(sheaf_lock_free(&s), "free");
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
    const char *kinds = "flags,mcs,mcs-swap,poll";
    int K = 30000;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "progress=", 9))
            progress = !strcmp(argv[i] + 9, "library") ? SHEAF_LOCK_PROGRESS_LIBRARY
                       : !strcmp(argv[i] + 9, "auto")  ? SHEAF_LOCK_PROGRESS_AUTO
                                                       : SHEAF_LOCK_PROGRESS_SHARED;
        else if (!strncmp(argv[i], "kinds=", 6))
            kinds = argv[i] + 6;
        else if (!strncmp(argv[i], "k=", 2))
            K = atoi(argv[i] + 2);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static const sheaf_lock_kind all[] = {SHEAF_LOCK_FLAGS, SHEAF_LOCK_MCS, SHEAF_LOCK_MCS_SWAP, SHEAF_LOCK_POLL};
    for (int i = 0; i < 4 && !storm_skipped; i++) {
        const char *name = sheaf_lock_kind_name(all[i]), *p = strstr(kinds, name);
        size_t l = strlen(name);
        while (p && ((p != kinds && p[-1] != ',') || (p[l] != ',' && p[l] != '\0')))
            p = strstr(p + 1, name);
        if (p)
            run_storm(all[i], K);
    }
    int bad = failures, allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (storm_skipped) {
        if (me == 0)
            printf("SKIP: storm: the ranks are not on one node (its check uses shared memory)\n");
        MPI_Finalize();
        return 77;
    }
    if (me == 0)
        printf("storm: %s (%d failed checks)\n", allbad ? "FAILED" : "OK", allbad);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
