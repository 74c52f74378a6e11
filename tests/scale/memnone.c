/* memnone.c - no counting malloc (sanitizer builds): heap numbers stay 0. */
#include "simcomm.h"
const int sim_mem_hooked = 0;
