/* sion_datatypes_mpi.h - MPI datatypes matching sion_int32 / sion_int64
 * (SIONlib 1.7): SION_MPI_INT32 is MPI_INT, SION_MPI_INT64 MPI_LONG_LONG
 * (sion_datatypes.h defines sion_int32 as int and sion_int64 as long long
 * on every platform sheaf supports). Defined only when MPI is visible
 * (<mpi.h> included first, or SION_MPI / SION_OMPI defined), as in SIONlib.
 * Included by sion_mpi.h and sion_ompi.h. */
#ifndef SION_DATATYPES_MPI_H
#define SION_DATATYPES_MPI_H
#if defined(MPI_VERSION) || defined(SION_MPI) || defined(SION_OMPI)
#include <mpi.h>
#define SION_MPI_INT32 MPI_INT
#define SION_MPI_INT64 MPI_LONG_LONG
#endif
#endif
