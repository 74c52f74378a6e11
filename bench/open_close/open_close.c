/* open_close.c - time one parallel open + close of a container (issue 19).
 *
 * Uses SIONlib's MPI API only (sion.h), so the same source is built against
 * sheaf (target sheaf-open-close) and, by bench/open_close/run.sh, against a
 * SIONlib installation given in SIONLIB_PREFIX.
 *
 * usage: open_close DIR write|read REPS [NUMFILES]
 *   write: 1 + REPS times open "bw" + 1 KiB per rank + close of DIR/oc.sion;
 *   read: the same with "br" (run write first). Rank 0 prints one line per
 *   open: the slowest rank's time from before its open to after its close,
 *   in milliseconds, after a barrier. The first open of the launch is
 *   printed as "write-first" / "read-first" (the first open of a
 *   communicator and file split: it creates the local communicator, and MPI
 *   sets up its connections), the REPS others as "write" / "read" (repeated
 *   opens of the same pair: sheaf reuses its cached communicator). */
#include <mpi.h>
#include "sion.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BYTES = 1024 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4 || (strcmp(argv[2], "write") && strcmp(argv[2], "read"))) {
        if (rank == 0)
            fprintf(stderr, "usage: %s DIR write|read REPS [NUMFILES]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    int write = !strcmp(argv[2], "write"), reps = atoi(argv[3]), nfreq = argc > 4 ? atoi(argv[4]) : 1;
    char fname[4096], buf[BYTES];
    snprintf(fname, sizeof fname, "%s/oc.sion", argv[1]);
    for (int i = 0; i < BYTES; i++)
        buf[i] = (char)(rank + i);
    int bad = 0;
    for (int r = -1; r < reps; r++) {
        int nf = nfreq, grank = 0;
        sion_int64 chunk = BYTES;
        sion_int32 fsblk = -1;
        MPI_Comm lc = MPI_COMM_WORLD; /* SIONlib wants a non-NULL lComm */
        FILE *fp = NULL;
        char *newfname = NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int sid = sion_paropen_mpi(fname, write ? "bw" : "br", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, &fp,
                                   &newfname);
        if (sid < 0) {
            bad = 1;
            break;
        }
        size_t n = write ? sion_fwrite(buf, 1, BYTES, sid) : sion_fread(buf, 1, BYTES, sid);
        if (n != BYTES)
            bad = 1;
        if (sion_parclose_mpi(sid) != SION_SUCCESS)
            bad = 1;
        double dt = MPI_Wtime() - t0, mx = 0;
        free(newfname);
        MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%s%s %d %.3f\n", write ? "write" : "read", r < 0 ? "-first" : "", size, mx * 1e3);
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && anybad)
        fprintf(stderr, "open_close: an open, transfer or close failed\n");
    MPI_Finalize();
    return anybad ? 1 : 0;
}
