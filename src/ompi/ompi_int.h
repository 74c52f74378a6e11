/* ompi_int.h - what the files of the hybrid binding share (internal): the
 * group object (a communicator of whole processes plus this process's thread
 * team) and the coalescing I/O callbacks (ompi_coll.c). */
#ifndef SHEAF_OMPI_INT_H
#define SHEAF_OMPI_INT_H
#include <mpi.h>
#include <stddef.h>
#include "sion_datatypes.h"
#include "../omp/teamcomm.h"
#include "../par/binding.h"
#include "../mpi/commcache.h"

typedef struct hy_group {
    MPI_Comm comm;           /* processes of the group */
    int owned;               /* local group: comm goes back to the cache (cc_release) with the group */
    cc_entry *lease;         /* its cache entry (NULL: not cached) */
    int cc_how;              /* global group: CC_* for the local group split off it (commcache.h) */
    cc_entry *spare;         /* global group: the cache entry reserved before the agreement (cc_reserve) */
    struct hy_group *lspare; /* global group: the local group object, allocated before the agreement */
    int nprocs, prank, nthreads;
    team_group *team; /* this process's threads */
    char *buf;        /* master's staging buffer */
    size_t cap;
    int *pc, *pd;  /* per-process counts/displacements (bytes), master of the root process */
    int mpirc;     /* result of the master's MPI call, read by all threads */
    int broken;    /* local group of a process whose threads straddle files: every callback fails */
    int straddled; /* global group: this process's threads straddle the files of the read */
} hy_group;

/* The generic API's gather_and_execute / execute_and_scatter callbacks. */
int hy_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group, int collector,
                   int first, int last, int sid, int process(const void *, sion_int64 *, int));
int hy_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group, int collector,
                    int first, int last, int sid, int process(void *, sion_int64 *, int));
#endif
