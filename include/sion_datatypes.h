/* sion_datatypes.h - fixed-width integer types used by the SIONlib API.
 * SIONlib defines these as macros (not typedefs); sheaf keeps that so code
 * that #undefs or stringifies them keeps compiling. */
#ifndef SION_DATATYPES_H
#define SION_DATATYPES_H
#include "sion_platform.h"
#define sion_int32 int
#define sion_uint32 unsigned int
#define sion_int64 long long
#define sion_uint64 unsigned long long
#endif
