/* mpi_count_test.c - MPI calls per parallel open + close (issue 19).
 *
 * Linked with pmpi_count.c (a PMPI counting shim), it writes a container of
 * 1 KiB per rank and reads it back, counting on every rank the MPI calls made
 * between the start of sion_paropen_mpi and the end of sion_parclose_mpi:
 * communicator creations (MPI_Comm_split/dup/create) and collective calls
 * (creations and frees included). Four scenarios: w1/r1 (one physical file),
 * w2/r2 (numFiles=2), each run twice (the second open of the same
 * communicator and file split), and the bytes read are checked.
 *
 * usage: mpi_count_test base=DIR [expect=w1:C,w2:C,r1:C,r2:C] [maxcreate=N]
 *   Prints one line per scenario (rank 0, maximum over ranks); with expect=
 *   every scenario's collective count must equal C, with maxcreate= no open
 *   may create more than N communicators. Exit 0 = all checks hold. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "pmpi_count.h"
#include <mpi.h>
#include "sion.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size, g_fail;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            g_fail = 1;                                                                    \
        }                                                                                  \
    } while (0)

enum { BYTES = 1024 };

static void fill(char *b, int rank)
{
    for (int i = 0; i < BYTES; i++)
        b[i] = (char)(rank * 131 + i * 7);
}

/* One open + I/O + close; counts of the open..close span in c. */
static int one_round(const char *fname, int write, int nf_req, long c[PC_N])
{
    char buf[BYTES], want[BYTES];
    fill(want, g_rank);
    int nf = nf_req, grank = -1;
    sion_int64 chunk = BYTES;
    sion_int32 fsblk = -1;
    MPI_Comm lc = MPI_COMM_NULL;
    FILE *fp = NULL;
    PMPI_Barrier(MPI_COMM_WORLD);
    pc_reset();
    int sid = sion_paropen_mpi(fname, write ? "bw" : "br", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, &fp,
                               NULL);
    CHECK(sid >= 0, "sion_paropen_mpi(%s, %s, nf=%d) = %d", fname, write ? "bw" : "br", nf_req, sid);
    if (sid < 0) {
        pc_snapshot(c);
        return 1;
    }
    if (write) {
        CHECK(sion_fwrite(want, 1, BYTES, sid) == BYTES, "sion_fwrite of %d bytes", BYTES);
    } else {
        memset(buf, 0, sizeof buf);
        CHECK(nf == nf_req, "read open: numFiles = %d, written with %d", nf, nf_req);
        CHECK(sion_fread(buf, 1, BYTES, sid) == BYTES, "sion_fread of %d bytes", BYTES);
        CHECK(!memcmp(buf, want, BYTES), "bytes read differ from the bytes written by rank %d", g_rank);
    }
    CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "sion_parclose_mpi(%d)", sid);
    pc_snapshot(c);
    return 0;
}

static long expected(const char *spec, const char *name)
{
    if (!spec)
        return -1;
    const char *p = strstr(spec, name);
    return p && p[strlen(name)] == ':' ? atol(p + strlen(name) + 1) : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *base = ".", *expect = NULL;
    long maxcreate = -1;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "base=", 5))
            base = argv[i] + 5;
        else if (!strncmp(argv[i], "expect=", 7))
            expect = argv[i] + 7;
        else if (!strncmp(argv[i], "maxcreate=", 10))
            maxcreate = atol(argv[i] + 10);
    }
    char dir[4096] = "";
    if (g_rank == 0) {
        snprintf(dir, sizeof dir, "%s/mpicount.XXXXXX", base);
        if (!mkdtemp(dir)) {
            fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
            dir[0] = '\0';
        }
    }
    PMPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!dir[0])
        MPI_Abort(MPI_COMM_WORLD, 2);
    static const struct { const char *name; int write, nf; } sc[] = {
        {"w1", 1, 1}, {"r1", 0, 1}, {"w2", 1, 2}, {"r2", 0, 2},
    };
    for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
        int nf = sc[s].nf > g_size ? g_size : sc[s].nf;
        char fname[4200];
        snprintf(fname, sizeof fname, "%s/c%d.sion", dir, nf);
        for (int round = 0; round < 2; round++) {
            long c[PC_N], mx[PC_N], coll, made;
            one_round(fname, sc[s].write, nf, c);
            PMPI_Allreduce(c, mx, PC_N, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
            coll = pc_collectives(mx);
            made = pc_created(mx);
            if (g_rank == 0) {
                printf("P=%d %s nf=%d open#%d: collectives %ld, communicators created %ld (", g_size, sc[s].name, nf,
                       round + 1, coll, made);
                for (int k = 0, first = 1; k < PC_N; k++)
                    if (mx[k]) {
                        printf("%s%s %ld", first ? "" : ", ", pc_names[k], mx[k]);
                        first = 0;
                    }
                printf(")\n");
            }
            long want = expected(expect, sc[s].name);
            CHECK(want < 0 || coll == want, "%s open#%d: %ld collective calls, expected %ld", sc[s].name, round + 1,
                  coll, want);
            CHECK(maxcreate < 0 || made <= maxcreate, "%s open#%d: %ld communicators created, at most %ld allowed",
                  sc[s].name, round + 1, made, maxcreate);
        }
    }
    int bad = g_fail, anybad = 0;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
        printf("%s\n", anybad ? "FAILED" : "OK");
    }
    MPI_Finalize();
    return anybad ? 1 : 0;
}
