/* ckpt_demo.c - checkpoint/restart of an MPI program, two ways side by side:
 * (a) all ranks into one sheaf container (sion_paropen_mpi ... sion_parclose_mpi),
 * (b) one file per rank (the classic pattern: fopen/fwrite/fclose per rank).
 * Each rank owns a state of doubles (a different size per rank), runs a few
 * steps, checkpoints both ways, then "restarts": reads both back and checks
 * them against the checksum taken before the checkpoint. Rank 0 prints the
 * files created and the time of each phase (maximum over ranks).
 *
 * Usage: mpiexec -n N ckpt_demo [-s MiB_per_rank] [-d DIR] [--fsync]
 * Exit status 0 only when every rank restored exactly its state both ways.
 *
 * Crash and recovery (sheaf's journal, doc/reliability.md):
 *   mpiexec -n N ckpt_demo --crash ...    write the container, sion_flush (data
 *                                         durable), then every rank dies (SIGKILL)
 *                                         before sion_parclose_mpi
 *   sheaf recover DIR/state.sion          close it from the journal
 *   mpiexec -n N ckpt_demo --restart ...  read it back and check every rank's state */
#include <mpi.h>
#include "sion.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static double now(void) { return MPI_Wtime(); }

/* max over ranks of a phase time, on rank 0 */
static double tmax(double t)
{
    double m = 0;
    MPI_Reduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}

static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    if (d)
        closedir(d);
    return n;
}

/* --crash: checkpoint into the container, make it durable with sion_flush,
 * then die before the close. --restart: read the (recovered) container
 * and compare every rank's state with its checksum. */
static int crash_or_restart(int crash, const char *cname, const double *state, size_t bytes, uint64_t sum, int rank,
                            int size)
{
    int nf = 1, grank;
    sion_int64 chunk = (sion_int64)bytes;
    sion_int32 fsb = -1;
    FILE *fp;
    /* SIONlib needs somewhere to put the local communicator (it refuses NULL
     * when numFiles > 0); sheaf accepts both */
    MPI_Comm lcomm = MPI_COMM_NULL;
    if (crash) {
        int sid = sion_paropen_mpi(cname, "bw", &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsb, &grank, &fp, NULL);
        int ok = sid >= 0 && sion_fwrite(state, 1, bytes, sid) == bytes && sion_flush(sid) == SION_SUCCESS;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("%d ranks wrote and flushed %s; now every rank dies before the close (%s)\n", size, cname,
                   ok ? "flush ok" : "FLUSH FAILED");
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
        raise(SIGKILL);
    }
    char *back = malloc(bytes + 1);
    int sid = sion_paropen_mpi(cname, "br", &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsb, &grank, &fp, NULL);
    size_t got = sid >= 0 ? sion_fread(back, 1, bytes, sid) : 0;
    int ok = sid >= 0 && got == bytes && fnv1a(back, bytes) == sum && sion_feof(sid) == 1;
    if (sid >= 0 && sion_parclose_mpi(sid) != SION_SUCCESS)
        ok = 0;
    free(back);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("restart from %s: %d ranks, every state %s\nckpt_demo: %s\n", cname, size, all ? "exact" : "WRONG",
               all ? "OK" : "FAIL");
    return all ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double mib = 4;
    const char *dir = "ckpt_demo_out";
    int dosync = 0, crash = 0, restart = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc)
            mib = atof(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--fsync"))
            dosync = 1;
        else if (!strcmp(argv[i], "--crash"))
            crash = 1;
        else if (!strcmp(argv[i], "--restart"))
            restart = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [-s MiB_per_rank] [-d DIR] [--fsync] [--crash | --restart]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (rank == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST) {
        perror(dir);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char fppdir[1024], cname[1024], fname[1100];
    snprintf(fppdir, sizeof fppdir, "%s/per_rank", dir);
    snprintf(cname, sizeof cname, "%s/state.sion", dir);
    if (rank == 0 && mkdir(fppdir, 0777) != 0 && errno != EEXIST) {
        perror(fppdir);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* the state: sizes differ per rank (0.5x .. 1.5x of -s) */
    size_t n = (size_t)(mib * 1024 * 1024 / sizeof(double) * (0.5 + (double)(rank % 5) / 4.0));
    double *state = malloc(n * sizeof *state), *back = malloc(n * sizeof *back + 1);
    if (!state || !back)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t i = 0; i < n; i++)
        state[i] = (double)rank + (double)i * 1e-3;
    for (int step = 0; step < 3; step++) /* "simulate" */
        for (size_t i = 0; i < n; i++)
            state[i] = state[i] * 0.999 + 0.5 * (double)step;
    size_t bytes = n * sizeof *state;
    uint64_t sum = fnv1a(state, bytes);
    long long total = 0, mine = (long long)bytes;
    MPI_Reduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int bad = 0;
    double t[2][6]; /* method x (open, write, close, open, read, close) */
    if (crash || restart) {
        int code = crash_or_restart(crash, cname, state, bytes, sum, rank, size);
        free(state);
        free(back);
        MPI_Finalize();
        return code;
    }

    /* (a) one container */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    int nf = 1, grank;
    sion_int64 chunk = (sion_int64)bytes;
    sion_int32 fsb = -1;
    FILE *fp;
    MPI_Comm lcomm = MPI_COMM_NULL; /* SIONlib refuses a NULL lComm with numFiles > 0 */
    int sid = sion_paropen_mpi(cname, "bw", &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsb, &grank, &fp, NULL);
    double t1 = now();
    if (sid < 0 || sion_fwrite(state, 1, bytes, sid) != bytes)
        bad = 1;
    if (sid >= 0 && dosync && sion_flush(sid) != SION_SUCCESS)
        bad = 1;
    if (sid >= 0 && dosync)
        fsync(fileno(fp));
    double t2 = now();
    if (sid < 0 || sion_parclose_mpi(sid) != SION_SUCCESS)
        bad = 1;
    double t3 = now();
    t[0][0] = t1 - t0;
    t[0][1] = t2 - t1;
    t[0][2] = t3 - t2;

    /* (b) one file per rank */
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(fname, sizeof fname, "%s/state.%05d", fppdir, rank);
    t0 = now();
    FILE *f = fopen(fname, "wb");
    t1 = now();
    if (!f || fwrite(state, 1, bytes, f) != bytes)
        bad = 1;
    if (f && dosync && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        bad = 1;
    t2 = now();
    if (f && fclose(f) != 0)
        bad = 1;
    t3 = now();
    t[1][0] = t1 - t0;
    t[1][1] = t2 - t1;
    t[1][2] = t3 - t2;

    /* restart (a) */
    MPI_Barrier(MPI_COMM_WORLD);
    memset(back, 0, bytes);
    t0 = now();
    sion_int64 rchunk;
    sion_int32 rfsb;
    sid = sion_paropen_mpi(cname, "br", &nf, MPI_COMM_WORLD, &lcomm, &rchunk, &rfsb, &grank, &fp, NULL);
    t1 = now();
    size_t got = 0;
    while (sid >= 0 && !sion_feof(sid) && got < bytes) {
        size_t a = (size_t)sion_bytes_avail_in_block(sid);
        if (a > bytes - got)
            a = bytes - got;
        got += sion_fread((char *)back + got, 1, a, sid);
    }
    t2 = now();
    if (sid < 0 || sion_parclose_mpi(sid) != SION_SUCCESS)
        bad = 1;
    t3 = now();
    int ok_a = got == bytes && fnv1a(back, bytes) == sum;
    t[0][3] = t1 - t0;
    t[0][4] = t2 - t1;
    t[0][5] = t3 - t2;

    /* restart (b) */
    MPI_Barrier(MPI_COMM_WORLD);
    memset(back, 0, bytes);
    t0 = now();
    f = fopen(fname, "rb");
    t1 = now();
    got = f ? fread(back, 1, bytes, f) : 0;
    t2 = now();
    if (f)
        fclose(f);
    t3 = now();
    int ok_b = got == bytes && fnv1a(back, bytes) == sum;
    t[1][3] = t1 - t0;
    t[1][4] = t2 - t1;
    t[1][5] = t3 - t2;

    int okv[2] = {ok_a && !bad, ok_b}, allok[2];
    MPI_Reduce(okv, allok, 2, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
    double m[2][6];
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 6; j++)
            m[k][j] = tmax(t[k][j]);
    if (rank == 0) {
        int nc = count_files(dir, "state.sion"), np = count_files(fppdir, "state.");
        printf("checkpoint of %d ranks, %.1f MiB in all%s\n", size, (double)total / 1048576.0,
               dosync ? " (fsync before close)" : " (page cache; --fsync to sync)");
        printf("%-22s %6s %9s %9s %9s | %9s %9s %9s  %s\n", "method", "files", "open", "write", "close", "open", "read",
               "close", "restart");
        const char *names[2] = {"sheaf container", "one file per rank"};
        int files[2] = {nc, np};
        for (int k = 0; k < 2; k++)
            printf("%-22s %6d %8.4fs %8.4fs %8.4fs | %8.4fs %8.4fs %8.4fs  %s\n", names[k], files[k], m[k][0], m[k][1],
                   m[k][2], m[k][3], m[k][4], m[k][5], allok[k] ? "exact" : "WRONG");
        printf("(times: maximum over ranks; files: created in %s)\n", dir);
        printf("%s\n", allok[0] && allok[1] ? "ckpt_demo: OK" : "ckpt_demo: FAIL");
    }
    int exitv = 0;
    if (rank == 0)
        exitv = allok[0] && allok[1] ? 0 : 1;
    MPI_Bcast(&exitv, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(state);
    free(back);
    MPI_Finalize();
    return exitv;
}
