/* sion_generic.h - generic parallel API (callback-driven).
 * The generic layer arrives with the parallel-opens work; this header exists
 * so that sion.h includes the same chain as SIONlib 1.7. */
#ifndef SION_GENERIC_H
#define SION_GENERIC_H
#include "sion_datatypes.h"
#endif
