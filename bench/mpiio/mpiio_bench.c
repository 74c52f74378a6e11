/* mpiio_bench.c - sheaf's MPI-IO layer side by side with the MPI library's
 * own MPI-IO (ROMIO in MPICH, OMPIO in Open MPI), same number of aggregators.
 *
 *   mpiio_bench WORKLOAD MODE DIR [AGGS] [SCALE] [GRID]
 *     WORKLOAD subarray | btio | sliding
 *     MODE     mpi (MPI_File_*, hints cb_nodes=AGGS, cb_config_list=*:*)
 *              percall | pfr | nocache (sheaf_file_*, sheaf_cache=...)
 *   One line: workload, mode, ranks, aggregators, MB moved, write and read
 *   time and bandwidth, and the file-system calls and bytes of all ranks
 *   (counted by fscount.so when preloaded, else -1). Every read is verified.
 *
 * subarray: a 2-D array of doubles, each rank one block of a 2 x (P/2)
 *   grid; write_all + sync, then read_all, REPS times.
 * btio: N^3 cells of 40 bytes (5 doubles, as BT), diagonal multipartition of
 *   2x2x2 blocks over the ranks, STEPS time steps appended, then read back.
 * sliding: GRID x GRID (default 8x8) tiles of a 2-D array; every rank reads
 *   and writes the tile at (rank + iteration) mod GRID^2 until every rank has done every tile
 *   (Coloma 2007 fig 3.4). Time = whole loop (reported as write time). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>
#include "sheaf_mpiio.h"

static int rank, np, use_mpi, aggs;
static MPI_File mf;
static sheaf_file sf;
static int errors;

static void die(const char *what, int rc)
{
    fprintf(stderr, "[rank %d] %s failed (%d): %s\n", rank, what, rc,
            sf ? sheaf_file_errmsg(sf) : sheaf_mpiio_open_errmsg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}
static void b_open(const char *path, const char *mode)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char a[16];
    snprintf(a, sizeof a, "%d", aggs);
    MPI_Info_set(info, "cb_nodes", a);
    MPI_Info_set(info, "cb_config_list", "*:*");
    MPI_Info_set(info, "cb_buffer_size", "4194304");
    if (use_mpi) {
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &mf);
        if (rc)
            die("MPI_File_open", rc);
    } else {
        MPI_Info_set(info, "sheaf_cache", strcmp(mode, "percall") == 0 ? "none" : mode);
        MPI_Info_set(info, "sheaf_fr_alignment", "4096");
        MPI_Info_set(info, "sheaf_cache_size", "67108864");
        int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &sf);
        if (rc)
            die("sheaf_file_open", rc);
    }
    MPI_Info_free(&info);
}
static void b_view(MPI_Offset d, MPI_Datatype ft)
{
    if (use_mpi)
        MPI_File_set_view(mf, d, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    else if (sheaf_file_set_view(sf, d, MPI_BYTE, ft))
        die("set_view", -1);
}
static void b_write(void *b, int n)
{
    if (use_mpi)
        MPI_File_write_at_all(mf, 0, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
    else if (sheaf_file_write_at_all(sf, 0, b, n, MPI_BYTE))
        die("write_at_all", -1);
}
static void b_read(void *b, int n)
{
    if (use_mpi)
        MPI_File_read_at_all(mf, 0, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
    else if (sheaf_file_read_at_all(sf, 0, b, n, MPI_BYTE))
        die("read_at_all", -1);
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
static unsigned char val(int64_t i, int s) { return (unsigned char)(i * 31 + s * 7 + 1); }

typedef struct tm {
    double w, r;
    int64_t bytes;
} tm;

static tm subarray(int scale, int reps)
{
    int n = 512 * scale; /* n x n doubles */
    int px = 2, py = np / 2, sizes[2] = {n, n * 8}, subs[2] = {n / px, n * 8 / py};
    int starts[2] = {(rank % px) * subs[0], (rank / px) * subs[1]};
    MPI_Datatype ft;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    int bytes = subs[0] * subs[1];
    unsigned char *b = malloc((size_t)bytes), *r = malloc((size_t)bytes);
    tm t = {0, 0, (int64_t)bytes * np * reps};
    b_view(0, ft);
    for (int k = 0; k < reps; k++) {
        for (int i = 0; i < bytes; i++)
            b[i] = val(i + rank * 7, k);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        b_write(b, bytes);
        b_sync();
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        b_read(r, bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        t.w += t1 - t0;
        t.r += MPI_Wtime() - t1;
        errors += memcmp(b, r, (size_t)bytes) != 0;
    }
    MPI_Type_free(&ft);
    free(b);
    free(r);
    return t;
}

static tm btio(int scale, int steps)
{
    int N = 32 * scale, H = N / 2, E = 40;
    int nblk = 0;
    int64_t *off = malloc(sizeof(int64_t) * (size_t)N * N * 8);
    int *len = malloc(sizeof(int) * (size_t)N * N * 8);
    for (int c = 0; c < 8; c++) {
        int ci = c & 1, cj = (c >> 1) & 1, ck = c >> 2;
        if ((ci + 2 * ((cj + ck) & 1) + 4 * ck) % np != rank % np)
            continue;
        for (int k = 0; k < H; k++)
            for (int j = 0; j < H; j++) {
                off[nblk] = (((int64_t)(ck * H + k) * N + (cj * H + j)) * N + ci * H) * E;
                len[nblk++] = H * E;
            }
    }
    for (int i = 1; i < nblk; i++)
        for (int j = i; j > 0 && off[j] < off[j - 1]; j--) {
            int64_t x = off[j];
            off[j] = off[j - 1];
            off[j - 1] = x;
            int l = len[j];
            len[j] = len[j - 1];
            len[j - 1] = l;
        }
    MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)(nblk + 1));
    for (int i = 0; i < nblk; i++)
        d[i] = (MPI_Aint)off[i];
    MPI_Datatype hx, ft;
    MPI_Type_create_hindexed(nblk, len, d, MPI_BYTE, &hx);
    int64_t step = (int64_t)N * N * N * E;
    MPI_Type_create_resized(hx, 0, (MPI_Aint)step, &ft);
    MPI_Type_commit(&ft);
    int bytes = nblk * H * E;
    unsigned char *b = malloc((size_t)bytes + 1), *r = malloc((size_t)bytes + 1);
    int64_t tot = 0;
    MPI_Allreduce(&(int64_t){bytes}, &tot, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    tm t = {0, 0, tot * steps};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < bytes; i++)
            b[i] = val(i + rank * 3, s);
        b_view(step * s, ft);
        b_write(b, bytes);
    }
    b_sync();
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        b_view(step * s, ft);
        b_read(r, bytes);
        for (int i = 0; i < bytes; i++)
            errors += r[i] != val(i + rank * 3, s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t.w = t1 - t0;
    t.r = MPI_Wtime() - t1;
    MPI_Type_free(&hx);
    MPI_Type_free(&ft);
    free(off);
    free(len);
    free(d);
    free(b);
    free(r);
    return t;
}

static void b_size(MPI_Offset s)
{
    if (use_mpi)
        MPI_File_set_size(mf, s);
    else if (sheaf_file_set_size(sf, s))
        die("set_size", -1);
}

static tm sliding(int scale, int G)
{
    int TW = 256 * scale, TH = 128, L = TW * G, tile = TW * TH, T = G * G;
    unsigned char *b = malloc((size_t)tile);
    int *last = malloc(sizeof(int) * (size_t)T);
    for (int i = 0; i < T; i++)
        last[i] = -1;
    tm t = {0, 0, (int64_t)tile * np * T * 2};
    /* the file exists in full first: the MPI library's data sieving may write
   * undefined bytes into not yet written tiles past the end of the file */
    b_size((MPI_Offset)L * TH * G);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < T; it++) {
        int k = (rank + it) % T, sizes[2] = {TH * G, L}, subs[2] = {TH, TW}, st[2] = {(k / G) * TH, (k % G) * TW};
        MPI_Datatype ty;
        MPI_Type_create_subarray(2, sizes, subs, st, MPI_ORDER_C, MPI_BYTE, &ty);
        MPI_Type_commit(&ty);
        b_view(0, ty);
        b_read(b, tile);
        for (int i = 0; i < tile; i++)
            errors += b[i] != (last[k] < 0 ? 0 : val(i + k, last[k]));
        for (int i = 0; i < tile; i++)
            b[i] = val(i + k, it);
        b_write(b, tile);
        for (int r = 0; r < np; r++)
            last[(r + it) % T] = it;
        MPI_Type_free(&ty);
    }
    b_sync();
    MPI_Barrier(MPI_COMM_WORLD);
    t.w = MPI_Wtime() - t0;
    free(b);
    free(last);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpiio_bench subarray|btio|sliding mpi|percall|pfr|nocache DIR [AGGS] [SCALE] [GRID]\n");
        MPI_Finalize();
        return 2;
    }
    const char *wl = argv[1], *mode = argv[2];
    use_mpi = strcmp(mode, "mpi") == 0;
    aggs = argc > 4 ? atoi(argv[4]) : np;
    int scale = argc > 5 ? atoi(argv[5]) : 1;
    int grid = argc > 6 ? atoi(argv[6]) : 8;
    if (scale < 1 || grid < 2 || aggs < 1) {
        if (rank == 0)
            fprintf(stderr, "mpiio_bench: AGGS, SCALE >= 1 and GRID >= 2\n");
        MPI_Finalize();
        return 2;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/bench-%s-%s.dat", argv[3], wl, mode);
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    void (*get)(uint64_t *) = (void (*)(uint64_t *))dlsym(RTLD_DEFAULT, "fscount_get");
    uint64_t c0[4] = {0}, c1[4] = {0};
    if (get)
        get(c0);
    b_open(path, mode);
    tm t = !strcmp(wl, "subarray") ? subarray(scale, 3) : !strcmp(wl, "btio") ? btio(scale, 4) : sliding(scale, grid);
    b_close();
    if (get)
        get(c1);
    int64_t mine[4], all[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        mine[i] = get ? (int64_t)(c1[i] - c0[i]) : -1;
    MPI_Reduce(mine, all, 4, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    int errs = 0;
    MPI_Reduce(&errors, &errs, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double mb = t.bytes / 1e6;
        printf("%-8s %-7s np %d aggs %d MB %.1f write_s %.3f read_s %.3f write_MBps %.1f read_MBps %.1f "
               "fs_reads %lld fs_read_MB %.2f fs_writes %lld fs_write_MB %.2f errors %d\n",
               wl, mode, np, aggs, mb, t.w, t.r, t.w > 0 ? mb / t.w : 0, t.r > 0 ? mb / t.r : 0, (long long)all[0],
               all[1] / 1e6, (long long)all[2], all[3] / 1e6, errs);
        unlink(path);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}
