/* glue_mpi.c - the C side of sion_f90_mpi and sion_f90_ompi: Fortran passes
 * communicators as integer handles (MPI_Fint), which only C can turn into
 * MPI_Comm (MPI_Comm_f2c). Everything else goes to the public API
 * (sion_mpi.h, sion_ompi.h) unchanged. Internal to libsheaf_f90_mpi /
 * libsheaf_f90_ompi (hidden; called through the modules' bind(c) interfaces).
 * The names start with sheaf_f90_ so that they collide with nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "sion.h"
#include "glue_mpi.h"

#ifdef SHEAF_F90_OMPI
#include "sion_ompi.h"
#define PAROPEN sion_paropen_ompi
#define GLUE_OPEN sheaf_f90_paropen_ompi
#else
#define PAROPEN sion_paropen_mpi
#define GLUE_OPEN sheaf_f90_paropen_mpi
#endif

int GLUE_OPEN(const char *fname, const char *mode, int *nfiles, MPI_Fint gcomm, MPI_Fint lcomm, int64_t *chunksize,
              int32_t *fsblksize, int *globalrank, char **newfname)
{
    MPI_Comm g = MPI_Comm_f2c(gcomm);
    MPI_Comm l = MPI_Comm_f2c(lcomm);
    sion_int64 cs = *chunksize;
    int sid = PAROPEN(fname, mode, nfiles, g, &l, &cs, fsblksize, globalrank, NULL, newfname);
    *chunksize = cs;
    return sid;
}

#ifndef SHEAF_F90_OMPI
/* Copy n values of a malloc'd output array into the caller's array of cap
 * values and free it. */
static void take_int(int *dst, int cap, int *src, int n)
{
    if (src && dst && src != dst)
        memcpy(dst, src, (size_t)(n < cap ? n : cap) * sizeof *dst);
    if (src != dst)
        free(src);
}

static void take_i64(int64_t *dst, int cap, sion_int64 *src, int n)
{
    if (src && dst)
        for (int i = 0; i < n && i < cap; i++)
            dst[i] = src[i];
    free(src);
}

int sheaf_f90_paropen_mapped_mpi(const char *fname, const char *mode, int *nfiles, MPI_Fint gcomm, int *nlocaltasks,
                                 int *globalranks, int64_t *chunksizes, int *filenrs, int *lranks, int32_t *fsblksize,
                                 int write)
{
    MPI_Comm g = MPI_Comm_f2c(gcomm);
    int cap = *nlocaltasks;
    char *name = strdup(fname);
    if (!name)
        return -1;
    int sid;
    if (write) {
        /* every array is an input; sion_int64 is int64_t's width */
        int *gr = globalranks, *fn = filenrs, *lr = lranks;
        sion_int64 *cs = (sion_int64 *)chunksizes;
        sid = sion_paropen_mapped_mpi(name, mode, nfiles, g, nlocaltasks, &gr, &cs, &fn, &lr, fsblksize, NULL);
    } else {
        int *gr = cap > 0 ? globalranks : NULL, *fn = NULL, *lr = NULL;
        sion_int64 *cs = NULL;
        sid = sion_paropen_mapped_mpi(name, mode, nfiles, g, nlocaltasks, &gr, &cs, &fn, &lr, fsblksize, NULL);
        if (sid >= 0) {
            int n = *nlocaltasks;
            take_int(globalranks, cap, gr, n);
            take_i64(chunksizes, cap, cs, n);
            take_int(filenrs, cap, fn, n);
            take_int(lranks, cap, lr, n);
        }
    }
    free(name);
    return sid;
}
#endif
