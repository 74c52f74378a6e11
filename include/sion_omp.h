/* sion_omp.h - the OpenMP layer (libsheaf_omp): every thread of one parallel
 * region is one task of a single-file container. Compile with -fopenmp and
 * -DSION_OMP (`sionconfig --cflags --omp`).
 *
 * Call from inside a parallel region, by every thread of the team (the
 * calls contain barriers). Built on the generic API; collective counts and
 * error agreement as stated in sion_generic.h. Each thread gets its own sid.
 * The team is the innermost enclosing parallel region; nested regions that
 * open containers at the same time are not supported. */
#ifndef SION_OMP_H
#define SION_OMP_H
#include "sheaf_export.h"
#include <stdio.h>
#include "sion_datatypes.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Write: *chunksize per thread (aligned inside, left as given, as in SIONlib), *fsblksize -1 =
 * detected; *globalrank is set to the thread number. Read: the team size
 * must equal the number of tasks that wrote; *chunksize, *fsblksize outputs.
 * newfname (may be NULL) receives a malloc'd file name. Returns a sid or -1
 * on every thread. */
SHEAF_API int sion_paropen_omp(const char *fname, const char *file_mode, sion_int64 *chunksize, sion_int32 *fsblksize,
                               int *globalrank, FILE **fileptr, char **newfname);
/* Close; every thread of the same team. SION_SUCCESS or SION_NOT_SUCCESS on all. */
SHEAF_API int sion_parclose_omp(int sid);

#ifdef __cplusplus
}
#endif
#endif
