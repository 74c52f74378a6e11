/* c_writer.c - an MPI C program that writes a container for the Python tests
 * to read (tests/python/mpi_prog.py): task t holds 3000 + 1000*t bytes of the
 * vectors' pattern (t*131 + i*7 + (i>>8)) mod 256, chunk size 2048 (several
 * blocks per task). usage: mpiexec -n N c_writer FILE */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "sion.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, numfiles = 1, rc = 1;
    sion_int64 chunk = 2048;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = 3000 + 1000 * (size_t)rank;
    unsigned char *buf = malloc(n);
    if (argc == 2 && buf) {
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)((rank * 131 + i * 7 + (i >> 8)) % 256);
        int grank = 0;
        int sid = sion_paropen_mpi(argv[1], "bw", &numfiles, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, NULL);
        if (sid >= 0) {
            rc = sion_fwrite(buf, 1, n, sid) == n ? 0 : 1;
            if (sion_parclose_mpi(sid) != SION_SUCCESS)
                rc = 1;
        }
    }
    free(buf);
    if (rc)
        fprintf(stderr, "c_writer: rank %d failed\n", rank);
    MPI_Finalize();
    return rc;
}
