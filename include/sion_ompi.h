/* sion_ompi.h - the hybrid MPI + OpenMP layer (libsheaf_ompi): every thread
 * of every MPI rank is a task; task id = rank * nthreads + thread, task count
 * = size * nthreads (every rank must run the same number of threads).
 * Compile with -fopenmp and include <mpi.h> before sion.h (or -DSION_OMPI).
 *
 * Call from inside a parallel region, by every thread of every rank of gComm.
 * MPI must be initialised with at least MPI_THREAD_FUNNELED: only the master
 * thread of each rank calls MPI. numFiles/lComm as for sion_paropen_mpi, the
 * split happens at MPI-process granularity (all threads of a rank share its
 * file). Collective counts and error agreement as in sion_generic.h.
 * Reading a multi-file container needs files that hold whole processes
 * (all threads of a rank in one file, in thread order), as the hybrid
 * writer makes them; otherwise the open fails. */
#ifndef SION_OMPI_H
#define SION_OMPI_H
#include <mpi.h>
#include <stdio.h>
#include "sion_datatypes.h"
#ifdef __cplusplus
extern "C" {
#endif

int sion_paropen_ompi(const char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm,
                      const MPI_Comm *lComm, sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank,
                      FILE **fileptr, char **newfname);
int sion_parclose_ompi(int sid);

#ifdef __cplusplus
}
#endif
#endif
