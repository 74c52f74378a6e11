/* mpi_fgfs_nomem.c - the MPI collective layer when one rank lacks memory
 * for a broadcast: every rank must return a failure (none may hang inside
 * MPI_Bcast), and the communicator stays usable. Rank 2 (inside the
 * broadcast tree at 4 ranks) cannot allocate the 777777-byte buffer; rank 1
 * cannot allocate the buffer of a short (one-collective) broadcast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sheaf_fgfs_mpi.h"

#define ODD 777777
#define SMALL 3331 /* maxlen of a short broadcast: its members' buffer (one collective) */
extern void *__libc_malloc(size_t);
static int fail_odd;
void *malloc(size_t n)
{
    if (fail_odd && (n == ODD || n == SMALL))
        return NULL;
    return __libc_malloc(n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sheaf_fgfs_comm c;
    if (sheaf_fgfs_comm_mpi(MPI_COMM_WORLD, &c)) {
        fprintf(stderr, "comm_mpi: %s\n", sheaf_fgfs_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int round = 0; round < 2; round++) {
        void *buf = NULL;
        size_t len = 0;
        if (rank == 0) {
            buf = calloc(1, ODD);
            memset(buf, 'x', ODD);
            len = ODD;
        }
        fail_odd = round == 0 && rank == 2;
        int rc = c.ops->bcast(&c, &buf, &len, 1u << 20, 0);
        fail_odd = 0;
        int want_fail = round == 0 && size > 2;
        if (want_fail ? rc == 0 : rc != 0 || len != ODD || ((char *)buf)[ODD - 1] != 'x') {
            fprintf(stderr, "rank %d round %d: bcast returned %d, expected %s\n", rank, round, rc,
                    want_fail ? "a failure" : "success");
            bad = 1;
        }
        if (rank == 0 || rc == 0)
            free(buf);
    }
    /* a short message (one MPI_Allreduce): rank 1 has no buffer, every rank fails, then all work */
    for (int round = 0; round < 2; round++) {
        void *buf = NULL;
        size_t len = 0;
        char text[100];
        memset(text, 'y', sizeof text);
        if (rank == 0)
            buf = text, len = sizeof text;
        fail_odd = round == 0 && rank == 1;
        int rc = c.ops->bcast(&c, &buf, &len, SMALL, 0);
        fail_odd = 0;
        int want_fail = round == 0;
        if (want_fail ? rc == 0 : rc != 0 || len != sizeof text || ((char *)buf)[99] != 'y') {
            fprintf(stderr, "rank %d short round %d: bcast returned %d, expected %s\n", rank, round, rc,
                    want_fail ? "a failure" : "success");
            bad = 1;
        }
        if (rank != 0 && rc == 0)
            free(buf);
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    c.ops->free_comm(&c);
    if (rank == 0)
        printf("mpi_fgfs_nomem: %s\n", anybad ? "FAILED" : "ok");
    MPI_Finalize();
    return anybad;
}
