/* dache_bench.c - DACHe (sheaf_cache=dache) against the MPI library's own
 * independent MPI-IO (MPI_File_read_at/write_at: ROMIO in MPICH, OMPIO in
 * Open MPI), file-system calls counted by fscount.so (LD_PRELOAD).
 *
 *   dache_bench WORKLOAD MODE DIR [PROGRESS]
 *     WORKLOAD sliding | strided
 *     MODE     mpi | dache   (PROGRESS: sheaf_dache_progress, default auto)
 *
 * sliding (the Fig 5.3 analogue, independent reads): a 1 MiB file of 4 x 4
 *   tiles (16 rows of 4 KiB each); every rank reads every tile, starting at
 *   tile `rank` and sliding by one per step, one read per tile row (4 KiB,
 *   one page). Direct MPI-IO reads N x 256 times; DACHe (4 KiB pages, 1024
 *   slots per rank: the ranks' caches together hold the file) reads each
 *   page from the file once, then serves it from whichever rank has it.
 * strided (small-strided writes): STEPS time steps (16, or the environment's
 *   STEPS; run_dache.sh runs 16 and 256 by default), each of E elements of 32
 *   bytes per rank interleaved over the ranks (element k of rank r at
 *   (k*N + r)*32), written one independent call per element (each rank
 *   starts at a different element and wraps, so that ranks do not walk the
 *   same page at the same time), then the file is closed (DACHe: flushed).
 *   Direct MPI-IO writes once per element; DACHe once per contiguous run of
 *   dirty pages (plus write-backs of evicted pages). DACHe's cache: 1024
 *   slots per rank, or 32 * STEPS (twice a rank's share of the file) when
 *   that is more - a cache sized for the working set, as a user would.
 * One line per run: workload, mode, ranks, io_s (the accesses and a
 * collective sync: the data is in the file; MPI_File_sync / sheaf_file_sync:
 * DACHe's flush, and an fsync on both sides) = acc_s (the accesses, to a
 * barrier) + sync_s,
 * open_s and close_s (set-up and tear-down: DACHe allocates three windows and
 * its lock set at open), file-system reads and writes of all ranks from open
 * to close, verification errors (every byte read or written is checked). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <mpi.h>
#include "sheaf_mpiio.h"

#define ROW 4096
#define TROWS 16
#define GRID 4
#define ESZ 32
#define NEL 2048
#define STEPS_DEFAULT 16

static int rank, np, use_mpi, errors, STEPS = STEPS_DEFAULT; /* STEPS: env STEPS (strided) */
static MPI_File mf;
static sheaf_file sf;

static void die(const char *what, int rc)
{
    fprintf(stderr, "[rank %d] %s failed (%d): %s\n", rank, what, rc,
            sf ? sheaf_file_errmsg(sf) : sheaf_mpiio_open_errmsg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}
static void b_open(const char *path, const char *progress)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (use_mpi) {
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &mf);
        if (rc)
            die("MPI_File_open", rc);
    } else {
        MPI_Info_set(info, "sheaf_cache", "dache");
        MPI_Info_set(info, "sheaf_dache_page_size", "4096");
        char slots[32]; /* 1024 (4 MiB per rank), or twice a rank's share of the strided file */
        snprintf(slots, sizeof slots, "%d", STEPS * 32 > 1024 ? STEPS * 32 : 1024);
        MPI_Info_set(info, "sheaf_dache_slots", slots);
        char maxs[32]; /* 16 MiB, or what STEPS needs */
        int64_t need = (int64_t)STEPS * NEL * np * ESZ;
        snprintf(maxs, sizeof maxs, "%lld", (long long)(need > ((int64_t)16 << 20) ? need : (int64_t)16 << 20));
        MPI_Info_set(info, "sheaf_dache_max_size", maxs);
        MPI_Info_set(info, "sheaf_dache_progress", progress);
        int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &sf);
        if (rc)
            die("sheaf_file_open", rc);
    }
    MPI_Info_free(&info);
}
static void b_read_at(int64_t off, void *b, int n)
{
    if (use_mpi)
        MPI_File_read_at(mf, off, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
    else if (sheaf_file_read_at(sf, off, b, n, MPI_BYTE))
        die("read_at", -1);
}
static void b_write_at(int64_t off, const void *b, int n)
{
    if (use_mpi)
        MPI_File_write_at(mf, off, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
    else if (sheaf_file_write_at(sf, off, b, n, MPI_BYTE))
        die("write_at", -1);
}
static void b_sync(void)
{
    if (use_mpi)
        MPI_File_sync(mf);
    else if (sheaf_file_sync(sf))
        die("sync", -1);
}
static void b_close(void)
{
    if (use_mpi)
        MPI_File_close(&mf);
    else if (sheaf_file_close(&sf))
        die("close", -1);
}
static unsigned char val(int64_t i) { return (unsigned char)(i * 31 + (i >> 8) * 7 + 1); }

/* the sliding window's file, written before the measurement (not counted) */
static void make_file(const char *path)
{
    if (rank == 0) {
        int64_t n = (int64_t)ROW * TROWS * GRID * GRID;
        unsigned char *b = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++)
            b[i] = val(i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, b, (size_t)n) != n)
            die("creating the file", -1);
        close(fd);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void sliding(void)
{
    int T = GRID * GRID, L = ROW * GRID; /* a file row holds GRID tile rows */
    unsigned char *b = malloc(ROW);
    for (int it = 0; it < T; it++) {
        int k = (rank + it) % T, ty = k / GRID, tx = k % GRID;
        for (int r = 0; r < TROWS; r++) {
            int64_t off = ((int64_t)ty * TROWS + r) * L + (int64_t)tx * ROW;
            b_read_at(off, b, ROW);
            for (int i = 0; i < ROW; i++)
                errors += b[i] != val(off + i);
        }
    }
    free(b);
}

static void strided(void)
{
    unsigned char e[ESZ];
    for (int s = 0; s < STEPS; s++) {
        int64_t base = (int64_t)s * NEL * np * ESZ;
        for (int j = 0; j < NEL; j++) {
            int k = (j + rank * (NEL / np)) % NEL;
            int64_t off = base + ((int64_t)k * np + rank) * ESZ;
            for (int i = 0; i < ESZ; i++)
                e[i] = val(off + i);
            b_write_at(off, e, ESZ);
        }
    }
}

static void verify_strided(const char *path)
{
    if (rank != 0)
        return;
    int64_t n = (int64_t)STEPS * NEL * np * ESZ;
    unsigned char *b = malloc((size_t)n);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, b, (size_t)n) != n)
        errors++;
    else
        for (int64_t i = 0; i < n; i++)
            errors += b[i] != val(i);
    if (fd >= 0)
        close(fd);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4 || (strcmp(argv[1], "sliding") && strcmp(argv[1], "strided")) ||
        (strcmp(argv[2], "mpi") && strcmp(argv[2], "dache"))) {
        if (rank == 0)
            fprintf(stderr, "usage: dache_bench sliding|strided mpi|dache DIR [PROGRESS]\n");
        MPI_Finalize();
        return 2;
    }
    const char *wl = argv[1], *mode = argv[2], *progress = argc > 4 ? argv[4] : "auto";
    use_mpi = !strcmp(mode, "mpi");
    const char *st = getenv("STEPS");
    if (st && atoi(st) > 0 && atoi(st) <= 4096)
        STEPS = atoi(st);
    char path[1024];
    snprintf(path, sizeof path, "%s/dache-%s-%s.dat", argv[3], wl, mode);
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(wl, "sliding"))
        make_file(path);
    void (*get)(uint64_t *) = (void (*)(uint64_t *))dlsym(RTLD_DEFAULT, "fscount_get");
    uint64_t c0[4] = {0}, c1[4] = {0};
    if (get)
        get(c0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    b_open(path, progress);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    if (!strcmp(wl, "sliding"))
        sliding();
    else
        strided();
    MPI_Barrier(MPI_COMM_WORLD);
    double ta = MPI_Wtime();
    b_sync();
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    b_close();
    MPI_Barrier(MPI_COMM_WORLD);
    double t3 = MPI_Wtime(), t = t3 - t0;
    if (get)
        get(c1);
    if (!strcmp(wl, "strided"))
        verify_strided(path);
    int64_t mine[4], all[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        mine[i] = get ? (int64_t)(c1[i] - c0[i]) : -1;
    MPI_Reduce(mine, all, 4, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    int errs = 0;
    MPI_Reduce(&errors, &errs, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%-8s %-6s np %d steps %d progress %s io_s %.3f acc_s %.3f sync_s %.3f open_s %.3f close_s %.3f total_s "
               "%.3f fs_reads %lld fs_read_MB %.2f fs_writes %lld fs_write_MB %.2f "
               "errors %d\n",
               wl, mode, np, STEPS, use_mpi ? "-" : progress, t2 - t1, ta - t1, t2 - ta, t1 - t0, t3 - t2, t,
               (long long)all[0], all[1] / 1e6, (long long)all[2], all[3] / 1e6, errs);
        unlink(path);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}
