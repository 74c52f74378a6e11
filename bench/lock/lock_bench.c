/* lock_bench.c - throughput and RMA operations per hand-off of the lock
 * managers (include/sheaf_lock.h) under full contention and without
 * contention (Coloma 2007, Fig. 6.5), at the job's rank count.
 *
 *   mpiexec -n P lock_bench [progress=shared|library|async] [kinds=flags,mcs,mcs-swap,poll]
 *                           [n=ITER] [hold=US]
 *
 * contended:   every rank takes lock 0 (home rank 0) n times, holding it
 *              `hold` microseconds (a busy wait inside MPI)
 * uncontended: rank r takes lock (r+1) % P, homed at the next rank
 * Prints one line per kind and mode: acquisitions per second (all ranks),
 * RMA operations per acquire+release, per hand-off (contended), spin reads,
 * polls. Each acquisition increments a counter at the lock's home by a
 * get and a put under the lock; exit status 1 if the counters do not sum
 * to P*n or a rank did not count exactly n acquires. */
#include "sheaf_lock.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;

static void hold(double us)
{
    double until = MPI_Wtime() + us * 1e-6;
    int f;
    while (MPI_Wtime() < until)
        MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
}

static int run(sheaf_lock_kind kind, sheaf_lock_progress_mode prog, int contended, int n, double hold_us)
{
    sheaf_lock_opts o;
    sheaf_lock_opts_init(&o);
    o.kind = kind;
    o.nlocks = np;
    o.progress = prog;
    sheaf_lock_set *s;
    if (sheaf_lock_create(MPI_COMM_WORLD, &o, &s) != SHEAF_LOCK_OK) {
        if (me == 0)
            fprintf(stderr, "lock_bench: %s\n", sheaf_lock_last_error());
        return 1;
    }
    int id = contended ? 0 : (me + 1) % np, home = id % np;
    /* a counter per lock at its home, read and written back under the lock
     * (not atomically): the total shows mutual exclusion */
    long *ctr, *hctr = NULL;
    MPI_Win cw;
    int shm = sheaf_lock_progress_used(s) == SHEAF_LOCK_PROGRESS_SHARED;
    if (shm) { /* shared memory: loads and stores, like the lock state */
        MPI_Aint sz;
        int du;
        MPI_Win_allocate_shared(64, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &ctr, &cw);
        MPI_Win_shared_query(cw, home, &sz, &du, &hctr);
    } else
        MPI_Win_allocate(64, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &ctr, &cw);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, cw);
    ctr[0] = 0;
    MPI_Win_unlock(me, cw);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, cw);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        long v;
        if (sheaf_lock_acquire(s, id)) {
            fprintf(stderr, "lock_bench: rank %d: %s\n", me, sheaf_lock_last_error());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (shm) {
            v = __atomic_load_n(hctr, __ATOMIC_ACQUIRE);
            __atomic_store_n(hctr, v + 1, __ATOMIC_RELEASE);
        } else {
            MPI_Get(&v, 1, MPI_LONG, home, 0, 1, MPI_LONG, cw);
            MPI_Win_flush(home, cw);
            v++;
            MPI_Put(&v, 1, MPI_LONG, home, 0, 1, MPI_LONG, cw);
            MPI_Win_flush(home, cw);
        }
        if (hold_us > 0)
            hold(hold_us);
        if (sheaf_lock_release(s, id)) {
            fprintf(stderr, "lock_bench: rank %d: %s\n", me, sheaf_lock_last_error());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    double mine = MPI_Wtime() - t0, t;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_unlock_all(cw);
    long total = 0, local = __atomic_load_n(ctr, __ATOMIC_ACQUIRE);
    MPI_Reduce(&local, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Win_free(&cw);
    MPI_Reduce(&mine, &t, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    sheaf_lock_stats st;
    sheaf_lock_stats_get(s, &st);
    unsigned long long v[6] = {st.rma_ops, st.handoffs, st.spin_reads, st.polls, st.acquires, st.contended}, sum[6];
    MPI_Reduce(v, sum, 6, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int bad = st.acquires != (uint64_t)n;
    sheaf_lock_free(&s);
    if (me == 0 && total != (long)np * n) {
        printf("FAIL: %s: counters sum %ld, expected %ld\n", sheaf_lock_kind_name(kind), total, (long)np * n);
        bad = 1;
    }
    if (me == 0) {
        double acq = (double)sum[4];
        printf("%-8s %-7s %-11s %2d ranks %5d x %5.0f us: %9.0f acq/s  %5.2f rma/acq+rel  %6.2f rma/hand-off  "
               "%8.1f spins/acq  %7.1f polls/acq  %4.0f%% contended\n",
               sheaf_lock_kind_name(kind), sheaf_lock_progress_name(prog), contended ? "contended" : "uncontended", np,
               n, hold_us, acq / t, (double)sum[0] / acq, sum[1] ? (double)sum[0] / (double)sum[1] : 0.0,
               (double)sum[2] / acq, (double)sum[3] / acq, 100.0 * (double)sum[5] / acq);
        fflush(stdout);
    }
    return bad;
}

/* is `name` one of the comma-separated words of `list`? */
static int has_kind(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && !strncmp(p, name, l))
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

int main(int argc, char **argv)
{
    sheaf_lock_progress_mode prog = SHEAF_LOCK_PROGRESS_SHARED;
    const char *kinds = "flags,mcs,mcs-swap,poll";
    int n = 200;
    double hold_us = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "progress=", 9))
            prog = !strcmp(argv[i] + 9, "library") ? SHEAF_LOCK_PROGRESS_LIBRARY
                   : !strcmp(argv[i] + 9, "async") ? SHEAF_LOCK_PROGRESS_ASYNC
                                                   : SHEAF_LOCK_PROGRESS_SHARED;
        else if (!strncmp(argv[i], "kinds=", 6))
            kinds = argv[i] + 6;
        else if (!strncmp(argv[i], "n=", 2))
            n = atoi(argv[i] + 2);
        else if (!strncmp(argv[i], "hold=", 5))
            hold_us = atof(argv[i] + 5);
    }
    int got;
    MPI_Init_thread(&argc, &argv, prog == SHEAF_LOCK_PROGRESS_ASYNC ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static const sheaf_lock_kind all[] = {SHEAF_LOCK_FLAGS, SHEAF_LOCK_MCS, SHEAF_LOCK_MCS_SWAP, SHEAF_LOCK_POLL};
    int bad = 0;
    for (int k = 0; k < 4; k++) {
        if (!has_kind(kinds, sheaf_lock_kind_name(all[k])))
            continue;
        for (int c = 1; c >= 0; c--)
            bad |= run(all[k], prog, c, n, hold_us);
    }
    int allbad;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return allbad;
}
