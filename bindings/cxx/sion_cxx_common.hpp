// sion_cxx_common.hpp - SIONlib 1.7's common C++ header: the base class.
#ifndef SION_CXX_COMMON_HPP_
#define SION_CXX_COMMON_HPP_
#include "sion.h"
#include "sion_cxx_base.hpp"
#endif /* SION_CXX_COMMON_HPP_ */
