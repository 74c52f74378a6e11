/* mpi_sid_test.c - the sids an MPI program sees, as SIONlib 1.7.6 hands them
 * out (src/sid/sid.c): the MPI layer's API id takes 0, then small numbers
 * reused after a close in SIONlib's order. In a read open task 0 first opens
 * file 0 serially with a number of its own (taken and given back), so the
 * numbers differ between task 0 and the others, as in SIONlib. The sequence
 * of writes (W) and reads (R) is that of SIONlib's test_coll___1, whose task 0
 * prints 2, 1, 3 for its last three reads; then a dup, a generic API id, a
 * read while both are open, and a write. Each rank checks its own expected
 * list, a closed sid not yet handed out again is refused ("it was closed"),
 * and the data read back is checked. Run with 2 or more ranks; exits 0 and
 * prints "sid: OK" on rank 0 on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sion.h"
#include "sheaf.h"

static int g_rank, g_bad;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "rank %d: ", g_rank);                                                                      \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            g_bad++;                                                                                                   \
        }                                                                                                              \
    } while (0)

static const char *g_file = "sidtest.sion";
static int g_seq[32], g_n;

static int popen_(const char *mode)
{
    int nf = 1;
    MPI_Comm lcomm = MPI_COMM_WORLD;
    sion_int64 chunk = 100;
    sion_int32 bs = 512;
    int grank = g_rank;
    int sid = sion_paropen_mpi((char *)g_file, mode, &nf, MPI_COMM_WORLD, &lcomm, &chunk, &bs, &grank, NULL, NULL);
    CHECK(sid >= 0, "sion_paropen_mpi(%s): %d (%s)", mode, sid, sheaf_last_error());
    if (g_n < 32)
        g_seq[g_n++] = sid;
    return sid;
}

static void W(void)
{
    int sid = popen_("bw");
    char b[40];
    memset(b, 'a' + g_rank % 26, sizeof b);
    CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b, "fwrite");
    CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "parclose (write)");
}

static int R(int keep)
{
    int sid = popen_("br");
    char b[40];
    CHECK(sion_fread(b, 1, sizeof b, sid) == sizeof b && b[0] == 'a' + g_rank % 26 && b[39] == b[0], "read back");
    if (!keep)
        CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "parclose (read)");
    return sid;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sheaf_set_error_printing(0);
    W();
    W();
    W();
    R(0);
    W();
    R(0);
    W();
    R(0);
    R(0);
    R(0);
    /* a stale sid: the last read's number is closed and not handed out again yet */
    int stale = g_seq[g_n - 1];
    CHECK(sion_get_bytes_read(stale) == SION_SIZE_NOT_VALID, "stale sid %d accepted", stale);
    CHECK(strstr(sheaf_last_error(), "it was closed") != NULL, "stale sid %d: \"%s\"", stale, sheaf_last_error());
    int s = R(1);
    int d = sion_dup(s, SION_DUP_ALL, 0, 0);
    CHECK(d >= 0, "sion_dup: %d (%s)", d, sheaf_last_error());
    g_seq[g_n++] = d;
    int aid = sion_generic_create_api("sidtest");
    CHECK(aid >= 0, "sion_generic_create_api: %d", aid);
    g_seq[g_n++] = aid;
    CHECK(sion_dedup(d) == SION_SUCCESS, "dedup");
    CHECK(sion_parclose_mpi(s) == SION_SUCCESS, "parclose (dup'ed)");
    int s2 = R(1);
    CHECK(sion_generic_free_api(aid) == SION_SUCCESS, "free api");
    CHECK(sion_parclose_mpi(s2) == SION_SUCCESS, "parclose");
    W();
    /* SIONlib's numbers (its sion_fd.c rule; test_coll___1's task 0 prints the
     * 10th, 9th... : 2, 1, 3 for C.1, C.2 and the next read) */
    static const int root[] = {1, 2, 3, 2, 3, 2, 3, 2, 1, 3, 2, 3, 4, 1, 2};
    static const int other[] = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 1};
    const int *want = g_rank == 0 ? root : other;
    int nwant = (int)(sizeof root / sizeof *root);
    CHECK(g_n == nwant, "%d ids recorded, expected %d", g_n, nwant);
    for (int i = 0; i < g_n && i < nwant; i++)
        CHECK(g_seq[i] == want[i], "id #%d is %d, SIONlib's is %d", i, g_seq[i], want[i]);
    if (g_bad) {
        fprintf(stderr, "rank %d: ids:", g_rank);
        for (int i = 0; i < g_n; i++)
            fprintf(stderr, " %d", g_seq[i]);
        fputc('\n', stderr);
    }
    int bad = g_bad, all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) {
        remove(g_file);
        if (!all)
            printf("sid: OK\n");
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
