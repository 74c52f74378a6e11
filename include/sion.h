/* sion.h - sheaf's SIONlib-compatible API. Include this header, as with SIONlib.
 * Chain (as in SIONlib 1.7): sion_const.h, sion_common.h, sion_generic.h,
 * sion_serial.h, then sion_omp.h (if SION_OMP is defined), sion_mpi.h and
 * sion_ompi.h (if <mpi.h> was included first, or SION_MPI / SION_OMPI). sheaf's extensions are in sheaf.h (also included). */
#ifndef SION_H
#define SION_H
#include "sion_const.h"
#include "sion_common.h"
#include "sion_generic.h"
#include "sion_serial.h"
#if defined(SION_OMP)
#include "sion_omp.h"
#endif
#if defined(MPI_VERSION) || defined(SION_MPI)
#include "sion_mpi.h"
#endif
#if defined(MPI_VERSION) || defined(SION_OMPI)
#include "sion_ompi.h"
#endif
#include "sion_libversion_rep.h"
#include "sheaf.h"
#endif
