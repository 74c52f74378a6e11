// sion_cxx_omp.hpp - SIONlib 1.7 installs this header empty (there is no
// OpenMP class); kept for programs that include it.
#ifndef SION_CXX_OMP_HPP_
#define SION_CXX_OMP_HPP_
#include "sion_cxx_common.hpp"
#endif /* SION_CXX_OMP_HPP_ */
