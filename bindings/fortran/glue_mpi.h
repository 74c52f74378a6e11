/* glue_mpi.h - internal to bindings/fortran: the C functions the bind(c)
 * interfaces of sion_f90_mpi / sion_f90_ompi call (glue_mpi.c). */
#ifndef SHEAF_F90_GLUE_MPI_H
#define SHEAF_F90_GLUE_MPI_H
#include <stdint.h>
#include <mpi.h>

int sheaf_f90_paropen_mpi(const char *fname, const char *mode, int *nfiles, MPI_Fint gcomm, MPI_Fint lcomm,
                          int64_t *chunksize, int32_t *fsblksize, int *globalrank, char **newfname);
int sheaf_f90_paropen_ompi(const char *fname, const char *mode, int *nfiles, MPI_Fint gcomm, MPI_Fint lcomm,
                           int64_t *chunksize, int32_t *fsblksize, int *globalrank, char **newfname);
int sheaf_f90_paropen_mapped_mpi(const char *fname, const char *mode, int *nfiles, MPI_Fint gcomm, int *nlocaltasks,
                                 int *globalranks, int64_t *chunksizes, int *filenrs, int *lranks, int32_t *fsblksize,
                                 int write);
#endif
