/* perf_bench.c - ROMIO's test/perf.c analogue: every rank writes then reads
 * one contiguous block (4 MiB by default, SIZE in the environment) at offset
 * rank * SIZE with the independent MPI_File_write_at / read_at, NTIMES (5)
 * times, the file opened before and closed after each access (outside the
 * timed part, as perf does: a cold cache each time); for each it keeps the slowest rank's time of the best repetition,
 * and prints the bandwidth over all ranks (MB/s = 1e6 bytes/s), without file
 * sync, like perf's first two numbers.
 *
 *   perf_bench MODE DIR
 *     MODE  mpi         the MPI library's MPI-IO (ROMIO in MPICH)
 *           dache       sheaf_cache=dache (requests >= sheaf_dache_direct_size,
 *                       1 MiB by default, bypass the page copies)
 *           dache-pages sheaf_cache=dache, sheaf_dache_direct_size=0 (every
 *                       byte through 64 KiB pages: before issue 30)
 * Every byte read is checked (errors counted in the output line). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "sheaf_mpiio.h"

static int me, np;

typedef struct io {
    int sheaf;
    MPI_File f;
    sheaf_file s;
} io;

static int io_open(io *x, const char *mode, const char *path)
{
    MPI_Info info;
    MPI_Info_create(&info);
    x->sheaf = strncmp(mode, "dache", 5) == 0;
    int rc;
    if (x->sheaf) {
        MPI_Info_set(info, "sheaf_cache", "dache");
        if (!strcmp(mode, "dache-pages"))
            MPI_Info_set(info, "sheaf_dache_direct_size", "0");
        rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &x->s);
        if (rc && me == 0)
            fprintf(stderr, "open: %s\n", sheaf_mpiio_open_errmsg());
    } else {
        rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &x->f);
    }
    MPI_Info_free(&info);
    return rc;
}

static int io_at(io *x, int w, MPI_Offset off, char *buf, int n)
{
    if (x->sheaf)
        return w ? sheaf_file_write_at(x->s, off, buf, n, MPI_BYTE) : sheaf_file_read_at(x->s, off, buf, n, MPI_BYTE);
    MPI_Status st;
    return w ? MPI_File_write_at(x->f, off, buf, n, MPI_BYTE, &st) : MPI_File_read_at(x->f, off, buf, n, MPI_BYTE, &st);
}

static void io_close(io *x)
{
    if (x->sheaf)
        sheaf_file_close(&x->s);
    else
        MPI_File_close(&x->f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3) {
        if (me == 0)
            fprintf(stderr, "usage: perf_bench mpi|dache|dache-pages DIR\n");
        MPI_Finalize();
        return 2;
    }
    const char *env = getenv("SIZE");
    int n = env ? atoi(env) : 4 << 20, ntimes = 5;
    if (n <= 0)
        n = 4 << 20;
    char path[512];
    snprintf(path, sizeof path, "%s/perf-%s.dat", argv[2], argv[1]);
    if (me == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    char *buf = malloc((size_t)n);
    long errors = 0;
    double best[2] = {1e30, 1e30};
    MPI_Offset off = (MPI_Offset)me * n;
    for (int t = 0; t < ntimes; t++)
        for (int w = 1; w >= 0; w--) {
            io x; /* opened and closed around each access, as perf does: a cold cache every time */
            if (!buf || io_open(&x, argv[1], path)) {
                if (me == 0)
                    fprintf(stderr, "perf_bench: cannot open %s\n", path);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            if (w)
                for (int i = 0; i < n; i++)
                    buf[i] = (char)(me + t + i);
            else
                memset(buf, 0, (size_t)n);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            int rc = io_at(&x, w, off, buf, n);
            double dt = MPI_Wtime() - t0, mx = 0;
            io_close(&x); /* outside the time (perf: the write without file sync) */
            if (rc)
                errors++;
            if (!w)
                for (int i = 0; i < n; i++)
                    errors += buf[i] != (char)(me + t + i);
            MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (mx < best[w])
                best[w] = mx;
        }
    long all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        double mb = (double)n * np / 1e6;
        printf("perf mode=%s ranks=%d size=%d write_MBps=%.0f read_MBps=%.0f errors=%ld\n", argv[1], np, n,
               mb / best[1], mb / best[0], all);
        remove(path);
    }
    free(buf);
    MPI_Finalize();
    return all != 0;
}
