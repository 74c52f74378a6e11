/* ompi_count_test.c - communicators per open of the hybrid binding
 * (sion_paropen_ompi: OpenMP threads x MPI ranks; issue 19).
 *
 * Linked with tests/mpi/pmpi_count.c (PMPI counting shim), it opens, writes
 * (numFiles=1, then numFiles=2 when there are 2 ranks or more) and reads back
 * a container ROUNDS times each on one user communicator (a duplicate of
 * MPI_COMM_WORLD), every thread of every rank a task of 512 bytes, and
 * checks on every rank: no MPI_Comm_dup at all (the global group is gComm
 * itself); the first open of a file split creates exactly one communicator
 * (MPI_Comm_split), every later open of the same pair none (the communicator
 * cache), and a read of a one-file set none at all (its split, every rank in
 * order, is the one-file write's: src/mpi/commcache.h, CC_READ); the bytes
 * read are the bytes written; MPI_Comm_free of the user communicator frees
 * the cached communicators (one per distinct pair); with expect=, the MPI
 * collective calls of each open + close (so that a collective added to the
 * open's success path is seen).
 *
 * usage: ompi_count_test DIR NTHREADS [expect=w1:C/R,r1:C/R,w2:C/R,r2:C/R]
 *   (wN/rN: write/read with numFiles=N; C: the first open's collective
 *   calls, R: every later one's, maximum over the ranks). Exit 0 = all
 *   checks hold. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "../mpi/pmpi_count.h"
#include <mpi.h>
#include <omp.h>
#include "sion.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BYTES = 512, ROUNDS = 5 };

static int g_rank, g_size, g_fail;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            _Pragma("omp critical")                                                                                    \
            {                                                                                                          \
                fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, __LINE__);                                       \
                fprintf(stderr, __VA_ARGS__);                                                                          \
                fputc('\n', stderr);                                                                                   \
                g_fail = 1;                                                                                            \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

static void fill(char *b, int task)
{
    for (int i = 0; i < BYTES; i++)
        b[i] = (char)(task * 37 + i * 11);
}

/* One open + write or read + close by every thread; the counts of the
 * process (all its threads) in c. */
static void one_round(const char *fname, int write, int nf_req, MPI_Comm comm, int nt, long c[PC_N])
{
    PMPI_Barrier(comm);
    pc_reset();
#pragma omp parallel num_threads(nt)
    {
        int nf = nf_req, grank = -1;
        sion_int64 chunk = BYTES;
        sion_int32 fsb = -1;
        FILE *fp = NULL;
        char want[BYTES], got[BYTES];
        int sid = sion_paropen_ompi(fname, write ? "bw" : "br", &nf, comm, NULL, &chunk, &fsb, &grank, &fp, NULL);
        CHECK(sid >= 0, "sion_paropen_ompi(%s, %s) = %d", fname, write ? "bw" : "br", sid);
        if (sid >= 0) {
            fill(want, grank);
            if (write) {
                CHECK(sion_fwrite(want, 1, BYTES, sid) == BYTES, "sion_fwrite");
            } else {
                memset(got, 0, sizeof got);
                CHECK(sion_fread(got, 1, BYTES, sid) == BYTES, "sion_fread");
                CHECK(!memcmp(got, want, BYTES), "task %d: bytes read differ from those written", grank);
            }
            CHECK(sion_parclose_ompi(sid) == SION_SUCCESS, "sion_parclose_ompi");
        }
    }
    pc_snapshot(c);
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *dir = argc > 1 ? argv[1] : ".";
    int nt = argc > 2 ? atoi(argv[2]) : 2;
    const char *expect = argc > 3 && !strncmp(argv[3], "expect=", 7) ? argv[3] + 7 : NULL;
    if (nt < 1)
        nt = 1;
    MPI_Comm user;
    PMPI_Comm_dup(MPI_COMM_WORLD, &user);
    int splits = 0; /* distinct (kind, file split) pairs opened */
    for (int nf = 1; nf <= (g_size > 1 ? 2 : 1); nf++) {
        char fname[4200];
        snprintf(fname, sizeof fname, "%s/ompicount-%d-%d.sion", dir, g_size, nf);
        for (int write = 1; write >= 0; write--) {
            int shared = !write && nf == 1; /* the one-file write's split */
            splits += !shared;
            for (int round = 0; round < ROUNDS; round++) {
                long c[PC_N], mx[PC_N];
                one_round(fname, write, nf, user, nt, c);
                PMPI_Allreduce(c, mx, PC_N, MPI_LONG, MPI_MAX, user);
                long made = pc_created(mx), want = round == 0 && !shared ? 1 : 0;
                if (g_rank == 0)
                    printf("P=%d x %d threads, %s nf=%d open#%d: communicators created %ld (dup %ld, split %ld), "
                           "collectives %ld\n",
                           g_size, nt, write ? "write" : "read", nf, round + 1, made, mx[PC_COMM_DUP],
                           mx[PC_COMM_SPLIT], pc_collectives(mx));
                CHECK(mx[PC_COMM_DUP] == 0, "open#%d: %ld MPI_Comm_dup calls (gComm needs none)", round + 1,
                      mx[PC_COMM_DUP]);
                CHECK(made == want, "%s nf=%d open#%d: %ld communicators created, expected %ld",
                      write ? "write" : "read", nf, round + 1, made, want);
                char name[8];
                snprintf(name, sizeof name, "%c%d", write ? 'w' : 'r', nf);
                long coll = pc_expected(expect, name, round > 0);
                CHECK(coll < 0 || pc_collectives(mx) == coll, "%s open#%d: %ld MPI collective calls, expected %ld",
                      name, round + 1, pc_collectives(mx), coll);
            }
        }
        if (g_rank == 0)
            remove(fname);
        if (g_rank == 0 && nf > 1) {
            char more[4300];
            snprintf(more, sizeof more, "%s.%06d", fname, 1);
            remove(more);
        }
    }
    pc_reset();
    PMPI_Comm_free(&user);
    long c[PC_N];
    pc_snapshot(c);
    CHECK(c[PC_COMM_FREE] == splits, "MPI_Comm_free(user) freed %ld cached communicators, expected %d", c[PC_COMM_FREE],
          splits);
    int bad = g_fail, anybad = 0;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("%s\n", anybad ? "FAILED" : "OK");
    MPI_Finalize();
    return anybad ? 1 : 0;
}
