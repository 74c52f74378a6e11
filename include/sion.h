/* sion.h - sheaf's SIONlib-compatible API. Include this header, as with SIONlib.
 * Chain (as in SIONlib 1.7): sion_const.h, sion_common.h, sion_generic.h,
 * sion_serial.h; sion_omp.h / sion_mpi.h / sion_ompi.h join when the parallel
 * layers exist. sheaf's extensions are in sheaf.h (also included). */
#ifndef SION_H
#define SION_H
#include "sion_const.h"
#include "sion_common.h"
#include "sion_generic.h"
#include "sion_serial.h"
#include "sion_libversion_rep.h"
#include "sheaf.h"
#endif
