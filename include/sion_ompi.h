/* sion_ompi.h - the hybrid MPI + OpenMP layer (libsheaf_ompi): every thread
 * of every MPI rank is a task; task id = rank * nthreads + thread, task count
 * = size * nthreads (every rank must run the same number of threads).
 * Compile with -fopenmp and include <mpi.h> before sion.h (or -DSION_OMPI).
 *
 * Call from inside a parallel region, by every thread of every rank of gComm.
 * Only the master thread of each rank calls MPI: initialise MPI with
 * MPI_THREAD_FUNNELED (MPI_Init_thread). As in SIONlib, a plain MPI_Init
 * (MPI_THREAD_SINGLE) is accepted when the OpenMP master thread is the one
 * that initialised MPI (a warning, once, on rank 0); otherwise the open fails
 * on every rank. The ranks must agree on read/write and numFiles (else the
 * open fails on every rank, naming the disagreement). numFiles/lComm as for sion_paropen_mpi, the
 * split happens at MPI-process granularity (all threads of a rank share its
 * file). Collective counts and error agreement as in sion_generic.h.
 * Reading a multi-file container needs files that hold whole processes
 * (all threads of a rank in one file, in thread order), as the hybrid
 * writer makes them; otherwise the open fails. */
#ifndef SION_OMPI_H
#define SION_OMPI_H
#include "sheaf_export.h"
#include <mpi.h>
#include <stdio.h>
#include "sion_datatypes.h"
#include "sion_datatypes_mpi.h"
#ifdef __cplusplus
extern "C" {
#endif

SHEAF_API int sion_paropen_ompi(const char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm,
                                const MPI_Comm *lComm, sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank,
                                FILE **fileptr, char **newfname);
SHEAF_API int sion_parclose_ompi(int sid);

#ifdef __cplusplus
}
#endif
#endif
