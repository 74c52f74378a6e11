// sion_cxx_ompi.hpp - SIONlib 1.7 installs this header empty (there is no
// hybrid class); kept for programs that include it.
#ifndef SION_CXX_OMPI_HPP_
#define SION_CXX_OMPI_HPP_
#include "sion_cxx_common.hpp"
#endif /* SION_CXX_OMPI_HPP_ */
