/* sion_mpi_example.c - SIONlib's MPI usage pattern: every rank writes its own
 * data into one shared container (or numFiles physical files), closes it,
 * opens it again for reading and checks the data.
 *
 *   mpiexec -n 4 ./sion_mpi_example [file] [numFiles]
 *
 * Builds against sheaf or SIONlib alike:
 *   mpicc $(sionconfig --cflags --mpi) -c sion_mpi_example.c
 *   mpicc sion_mpi_example.o $(sionconfig --libs --mpi) -o sion_mpi_example
 * Prints "sion_mpi_example: OK ..." on rank 0 and exits 0 when every rank
 * read back what it wrote. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sion.h"

#define NBYTES 10000 /* per rank, more than one chunk */
#define PIECE 1000

static unsigned char pattern(int rank, int i) { return (unsigned char)(rank * 31 + i * 7 + (i >> 8)); }

int main(int argc, char **argv)
{
    char *fname = argc > 1 ? argv[1] : "sion_mpi_example.sion";
    int numFiles = argc > 2 ? atoi(argv[2]) : 1;
    int rank, size, globalrank, sid, errors = 0, total = 0;
    MPI_Comm lComm = MPI_COMM_NULL;
    sion_int64 chunksize = 4000;
    sion_int32 fsblksize = -1;
    FILE *fp = NULL;
    char *newfname = NULL;
    unsigned char *data, *back;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (numFiles > size)
        numFiles = size;
    data = malloc(NBYTES);
    back = malloc(NBYTES);
    if (!data || !back)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < NBYTES; i++)
        data[i] = pattern(rank, i);

    /* ---- write ---- */
    globalrank = rank;
    sid = sion_paropen_mpi(fname, "bw", &numFiles, MPI_COMM_WORLD, &lComm, &chunksize, &fsblksize, &globalrank, &fp,
                           &newfname);
    if (sid < 0) {
        fprintf(stderr, "rank %d: sion_paropen_mpi(bw) failed\n", rank);
        MPI_Finalize();
        return 1;
    }
    for (int off = 0; off < NBYTES; off += PIECE)
        if (sion_fwrite(data + off, 1, PIECE, sid) != PIECE)
            errors++;
    if (sion_parclose_mpi(sid) != SION_SUCCESS)
        errors++;
    free(newfname);
    newfname = NULL;

    /* ---- read back ---- */
    int rfiles = 0;
    sion_int64 rchunk = 0;
    sid = sion_paropen_mpi(fname, "br", &rfiles, MPI_COMM_WORLD, &lComm, &rchunk, &fsblksize, &globalrank, &fp,
                           &newfname);
    if (sid < 0) {
        fprintf(stderr, "rank %d: sion_paropen_mpi(br) failed\n", rank);
        MPI_Finalize();
        return 1;
    }
    if (rfiles != numFiles || globalrank != rank)
        errors++;
    size_t pos = 0;
    while (!sion_feof(sid)) {
        sion_int64 avail = sion_bytes_avail_in_block(sid);
        if (avail <= 0 || pos + (size_t)avail > NBYTES) {
            errors++;
            break;
        }
        size_t got = sion_fread(back + pos, 1, (size_t)avail, sid);
        if (got != (size_t)avail) {
            errors++;
            break;
        }
        pos += got;
    }
    if (pos != NBYTES || memcmp(data, back, NBYTES) != 0)
        errors++;
    if (sion_parclose_mpi(sid) != SION_SUCCESS)
        errors++;
    free(newfname);

    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("sion_mpi_example: OK (%d tasks, %d file(s), %d bytes each)\n", size, numFiles, NBYTES);
        else
            printf("sion_mpi_example: FAILED (%d errors)\n", total);
    }
    free(data);
    free(back);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
