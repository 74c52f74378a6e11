/* sion_cxx.h - SIONlib 1.7's C++ interface (sheaf, header-only over the C
 * API of sion.h). In C++: SION_Base, sionlib::serial::SIONFile and, when MPI
 * is visible (<mpi.h> included first, or -DSION_MPI), sionlib::mpi::SIONFile.
 * In C this header is sion.h. */
#ifndef SION_SION_CXX_H
#define SION_SION_CXX_H

#include "sion.h"

#ifdef __cplusplus
#include "sion_cxx_common.hpp"
#include "sion_cxx_serial.hpp"
#ifdef SION_OMP
#include "sion_cxx_omp.hpp"
#endif
#if defined(MPI_VERSION) || defined(SION_MPI)
#include "sion_cxx_mpi.hpp"
#endif
#if defined(MPI_VERSION) || defined(SION_OMPI)
#include "sion_cxx_ompi.hpp"
#endif
#endif

#endif
