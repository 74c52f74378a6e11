/* romio_style.c - an unmodified MPI-IO program in the style of ROMIO's own
 * tests (noncontiguous views and memory, subarrays, write_all then read_all,
 * independent and nonblocking calls, sizes). It knows nothing of sheaf: the
 * test runs it once on the MPI library's MPI-IO and once with
 * libsheaf-mpiio-pmpi.so in front (link order or LD_PRELOAD, SHEAF_MPIIO=pfr)
 * and compares the files it writes. Exit status 1 when a read-back differs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, np, errs;
#define EXPECT(c, what)                                                                                                \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "[rank %d] %s\n", rank, what);                                                             \
            errs++;                                                                                                    \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2) {
        MPI_Finalize();
        return 2;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_Info_set(info, "cb_nodes", "2");
    MPI_File fh;
    MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "open failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* 1. interleaved vector view, every other int of memory */
    enum { NB = 64, B = 5 };
    /* the whole extent exists first: ROMIO's data sieving may write undefined
   * bytes into the holes of a view that lie past the end of the file */
    MPI_Offset total = (MPI_Offset)NB * B * np * sizeof(int) + 128 + (MPI_Offset)4 * np * 6 * 10 * 8;
    MPI_File_set_size(fh, total);
    MPI_Datatype fv, ft, mv;
    MPI_Type_vector(NB, B, B * np, MPI_INT, &fv);
    MPI_Type_create_resized(fv, 0, (MPI_Aint)NB * B * np * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_vector(NB * B, 1, 2, MPI_INT, &mv);
    MPI_Type_commit(&mv);
    int *w = malloc(sizeof(int) * NB * B * 2), *r = calloc(NB * B * 2, sizeof(int));
    for (int i = 0; i < NB * B * 2; i++)
        w[i] = rank * 100000 + i;
    MPI_File_set_view(fh, rank * B * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, w, 1, mv, MPI_STATUS_IGNORE);
    /* sync-barrier-sync: Open MPI 4.1's OMPIO returned old bytes now and then
   * on a read_all right after write_all without it */
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    MPI_Status st;
    MPI_File_read_all(fh, r, 1, mv, &st);
    int cnt = -1;
    MPI_Get_count(&st, mv, &cnt);
    EXPECT(cnt == 1, "read_all status count");
    for (int i = 0; i < NB * B; i++)
        EXPECT(r[2 * i] == w[2 * i], "vector read_all");
    /* 2. 3-D subarray per rank (np split along the slowest dimension), write_all then read_all */
    int gs[3] = {4 * np, 6, 10}, ss[3] = {4, 6, 5}, st3[3] = {4 * rank, 0, 3};
    MPI_Datatype sub;
    MPI_Type_create_subarray(3, gs, ss, st3, MPI_ORDER_C, MPI_DOUBLE, &sub);
    MPI_Type_commit(&sub);
    MPI_Offset base = (MPI_Offset)NB * B * np * sizeof(int) + 128;
    double d[4 * 6 * 5], e[4 * 6 * 5];
    for (int i = 0; i < 120; i++)
        d[i] = rank + i / 1000.0;
    MPI_File_set_view(fh, base, MPI_DOUBLE, sub, "native", MPI_INFO_NULL);
    MPI_File_write_at_all(fh, 0, d, 120, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at_all(fh, 0, e, 120, MPI_DOUBLE, MPI_STATUS_IGNORE);
    EXPECT(memcmp(d, e, sizeof d) == 0, "subarray read_at_all");
    /* 3. independent and nonblocking writes, then everything read back collectively */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    char tag[16];
    snprintf(tag, sizeof tag, "rank%02d", rank);
    MPI_File_write_at(fh, base - 128 + 16 * rank, tag, 6, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_Request req;
    int v = 4242 + rank;
    MPI_File_iwrite_at(fh, base - 64 + 4 * rank, &v, 1, MPI_INT, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_Offset size;
    MPI_File_get_size(fh, &size);
    EXPECT(size == total, "get_size");
    char *all = malloc((size_t)size);
    MPI_Offset q = (size + np - 1) / np, lo = q * rank, n = lo + q > size ? size - lo : q;
    MPI_File_read_at_all(fh, lo, all, (int)(n > 0 ? n : 0), MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Offset tagoff = base - 128 + 16 * rank;
    char got[8] = {0};
    MPI_File_read_at(fh, tagoff, got, 6, MPI_CHAR, MPI_STATUS_IGNORE);
    EXPECT(memcmp(got, tag, 6) == 0, "independent write read back");
    int back = 0;
    MPI_File_read_at_all(fh, base - 64 + 4 * rank, &back, 1, MPI_INT, MPI_STATUS_IGNORE);
    EXPECT(back == v, "iwrite_at read back collectively");
#if MPI_VERSION >= 4
    /* 4. an MPI-4 large-count independent write over bytes a collective read has
   * just brought into the aggregators' caches: the next collective read must
   * see it (an interposition that missed the _c calls returned cached bytes) */
    MPI_File_read_at_all(fh, tagoff, got, 6, MPI_CHAR, MPI_STATUS_IGNORE);
    char tag2[16];
    snprintf(tag2, sizeof tag2, "RANK%02d", rank);
    MPI_File_write_at_c(fh, tagoff, tag2, (MPI_Count)6, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    memset(got, 0, sizeof got);
    MPI_File_read_at_all(fh, tagoff, got, 6, MPI_CHAR, MPI_STATUS_IGNORE);
    EXPECT(memcmp(got, tag2, 6) == 0, "write_at_c read back collectively");
#endif
    MPI_File_close(&fh);
    long long sum = 0;
    for (MPI_Offset i = 0; i < n; i++)
        sum += (unsigned char)all[i] * (i + lo + 1);
    long long tot = 0;
    MPI_Reduce(&sum, &tot, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int anyerr = 0;
    MPI_Allreduce(&errs, &anyerr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("romio_style: size %lld checksum %lld errors %d\n", (long long)size, tot, anyerr);
    MPI_Type_free(&fv);
    MPI_Type_free(&ft);
    MPI_Type_free(&mv);
    MPI_Type_free(&sub);
    MPI_Info_free(&info);
    free(w);
    free(r);
    free(all);
    MPI_Finalize();
    return anyerr ? 1 : 0;
}
