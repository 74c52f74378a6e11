/* ompcheck.h - the CHECK of the OpenMP test programs (header-only): any
 * thread may fail a check; the message (with the last sheaf error of that
 * thread) and the count `failures` are updated in an omp critical section. */
#ifndef SHEAF_OMPCHECK_H
#define SHEAF_OMPCHECK_H
#include <stdio.h>
#include "sion.h"

static int failures;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            _Pragma("omp critical")                                                                                    \
            {                                                                                                          \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                   \
                fprintf(stderr, __VA_ARGS__);                                                                          \
                fprintf(stderr, " [%s]\n", sheaf_last_error());                                                        \
                failures++;                                                                                            \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

#endif
