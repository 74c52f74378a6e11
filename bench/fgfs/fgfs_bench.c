/* fgfs_bench.c - synchronous vs asynchronous FGFS queries: where does the
 * asynchronous mode (all mount points classified once at init, then local
 * look-ups) overtake the synchronous one (collective per query)? The paper
 * puts the crossover at about the number of mount points.
 *   fgfs-bench sim [-P procs] [-q Q1,Q2,...] [--json]   in-process layer, P
 *       simulated processes on P/2 nodes with 6 mount points (simnodes.h)
 *   mpiexec -n N fgfs-bench mpi [-q ...] [--json]       MPI, this machine's table
 * For each query count Q: the time of init + Q status queries in each mode
 * (queries cycle over files under the different mount points), the
 * collectives (sim) and the mount points classified by the async init. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "simnodes.h"
#ifdef FGFS_BENCH_MPI
#include "sheaf_fgfs_mpi.h"
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct job {
    simnodes *sn; /* NULL: this machine's table */
    int mode, q, failed, mounts;
    char paths[8][600];
    int npaths;
} job;

static int queries(sheaf_fgfs_comm *c, int rank, void *arg)
{
    job *j = arg;
    char host[32];
    sheaf_fgfs_config cfg = {j->mode, 16, 0, 0, NULL, NULL, 0, NULL};
    if (j->sn) {
        simnodes_host(j->sn, rank, host, sizeof host);
        cfg.mounts = simnodes_table(j->sn, rank);
        cfg.host = host;
        cfg.flags = SHEAF_FGFS_NOREALPATH;
    }
    sheaf_fgfs_ctx *ctx = NULL;
    sheaf_fgfs_status st;
    if (sheaf_fgfs_init(c, &cfg, &ctx)) {
        j->failed++;
        return 0;
    }
    if (rank == 0)
        j->mounts = sheaf_fgfs_async_count(ctx);
    for (int i = 0; i < j->q; i++)
        if (sheaf_fgfs_status_of(ctx, j->paths[i % j->npaths], &st))
            j->failed++;
    sheaf_fgfs_finalize(ctx);
    return 0;
}

static int parse_q(const char *s, int *q, int max)
{
    int n = 0;
    for (char *e; *s && n < max; s = *e ? e + 1 : e)
        q[n++] = (int)strtol(s, &e, 10);
    return n;
}

int main(int argc, char **argv)
{
    int P = 1024, json = 0, qs[64], nq = 0, mpi = argc > 1 && !strcmp(argv[1], "mpi"), rank = 0;
    if (argc < 2 || (strcmp(argv[1], "sim") && !mpi)) {
        fprintf(stderr, "usage: fgfs-bench sim|mpi [-P procs] [-q Q1,Q2,...] [--json]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-P") && i + 1 < argc)
            P = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-q") && i + 1 < argc)
            nq = parse_q(argv[++i], qs, 64);
        else if (!strcmp(argv[i], "--json"))
            json = 1;
    }
    if (!nq)
        nq = parse_q("1,2,3,4,6,8,10,12,16,24,32,48,64", qs, 64);
    job j = {0};
    simnodes sn;
    char base[] = "/tmp/fgfs-bench-XXXXXX";
#ifdef FGFS_BENCH_MPI
    sheaf_fgfs_comm comm;
    if (mpi) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &P);
        if (sheaf_fgfs_comm_mpi(MPI_COMM_WORLD, &comm))
            return 1;
        const char *p[] = {"/", "/tmp", "/dev/shm", "/proc/self", "/sys/fs/cgroup", "/etc/hosts"};
        for (int i = 0; i < 6; i++)
            snprintf(j.paths[i], sizeof j.paths[i], "%s", p[i]);
        j.npaths = 6;
    }
#else
    if (mpi) {
        fprintf(stderr, "fgfs-bench: built without MPI\n");
        return 2;
    }
#endif
    if (!mpi) {
        if (!mkdtemp(base) || simnodes_init(&sn, P / 2 > 0 ? P / 2 : 1, P > 1 ? 2 : 1, 64, base))
            return 1;
        j.sn = &sn;
        snprintf(j.paths[0], sizeof j.paths[0], "%s/f", sn.local);
        snprintf(j.paths[1], sizeof j.paths[1], "%s/f", sn.one);
        snprintf(j.paths[2], sizeof j.paths[2], "%s/f", sn.half);
        snprintf(j.paths[3], sizeof j.paths[3], "%s/f", sn.many_mp);
        snprintf(j.paths[4], sizeof j.paths[4], "%s-bind/f", sn.local);
        snprintf(j.paths[5], sizeof j.paths[5], "/usr/lib/f");
        j.npaths = 6;
    }
    if (rank == 0 && !json)
        printf("# %s, %d processes; time of init + Q status queries\n%6s %12s %12s %10s %10s %7s\n",
               mpi ? "MPI" : "in-process layer", P, "Q", "sync_s", "async_s", "sync_coll", "async_coll", "mounts");
    for (int k = 0; k < nq; k++) {
        double t[2];
        long coll[2] = {0, 0};
        for (int mode = 0; mode < 2; mode++) {
            j.mode = mode, j.q = qs[k];
            sheaf_fgfs_sim_stats st = {0};
            double t0 = now();
#ifdef FGFS_BENCH_MPI
            if (mpi) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = now();
                queries(&comm, rank, &j);
                double mine = now() - t0, mx = 0;
                MPI_Allreduce(&mine, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                t[mode] = mx;
                continue;
            }
#endif
            if (sheaf_fgfs_sim_run(P, 32, queries, &j, &st))
                return 1;
            t[mode] = now() - t0;
            coll[mode] = st.collectives;
        }
        if (rank != 0)
            continue;
        if (json)
            printf("{\"layer\": \"%s\", \"P\": %d, \"Q\": %d, \"sync_s\": %.6f, \"async_s\": %.6f, \"sync_coll\": %ld, "
                   "\"async_coll\": %ld, \"mounts\": %d}\n",
                   mpi ? "mpi" : "sim", P, qs[k], t[0], t[1], coll[0], coll[1], j.mounts);
        else
            printf("%6d %12.6f %12.6f %10ld %10ld %7d\n", qs[k], t[0], t[1], coll[0], coll[1], j.mounts);
        fflush(stdout);
    }
    if (j.failed)
        fprintf(stderr, "fgfs-bench: %d queries failed: %s\n", j.failed, sheaf_fgfs_last_error());
#ifdef FGFS_BENCH_MPI
    if (mpi) {
        comm.ops->free_comm(&comm);
        MPI_Finalize();
    }
#endif
    if (!mpi) {
        simnodes_free(&sn);
        rmdir(base);
    }
    return j.failed ? 1 : 0;
}
