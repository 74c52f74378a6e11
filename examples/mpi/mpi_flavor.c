/* mpi_flavor.c - not compiled: examples/mpi/Makefile runs it through the
 * preprocessor of its $(MPICC) to learn which MPI that wrapper belongs to,
 * and refuses a sheaf_mpi built for the other one (doc/install.md). */
#include <mpi.h>
#if defined(OMPI_MAJOR_VERSION)
sheaf_mpi_flavor = openmpi
#elif defined(MPICH_VERSION)
sheaf_mpi_flavor = mpich
#else
sheaf_mpi_flavor = unknown
#endif
