/* mpi_internal.h - what the files of libsheaf_mpi share (internal):
 *   mpi_callbacks.c  the generic layer's callbacks (groups, gathers, scatters)
 *   mpi_collbuf.c    the coalescing callbacks (gather_and_execute,
 *                    execute_and_scatter: point-to-point in a local group)
 *   mpi_group.c      group objects, the list of open sids, failure messages
 *                    and the agreement over gComm (sheaf_comm_agree)
 *   mpi_auto.c       the mode key files=auto (FGFS storage groups)
 *   sion_mpi.c       the public sion_*_mpi calls
 *   commcache.c      the split communicators kept between opens */
#ifndef SHEAF_MPI_INTERNAL_H
#define SHEAF_MPI_INTERNAL_H
#include "sion.h"
#include "sion_mpi.h"
#include "../par/binding.h"
#include "commcache.h"

/* A group object: the global group (one per open, kept in the list of open
 * sids until its close; comm is the caller's gComm, not owned) or a local
 * group (one per physical file; comm owned: given back to the communicator
 * cache, or freed, with the group). */
typedef struct mpi_group {
    MPI_Comm comm;
    int owned;                /* 1: comm is released (cc_release) with the group */
    cc_entry *lease;          /* local group: its cache entry (NULL: not cached) */
    int cc_how;               /* global group: CC_* for the next local group split off it */
    cc_entry *spare;          /* global group: the cache entry reserved for its local group (cc_reserve) */
    struct mpi_group *lspare; /* global group: its local group object, allocated before the agreement */
    int sid;
    struct mpi_group *next;
} mpi_group;

/* The communicator of a group object (MPI_COMM_NULL for none). */
static inline MPI_Comm mpi_group_comm(void *group) { return group ? ((mpi_group *)group)->comm : MPI_COMM_NULL; }

/* mpi_callbacks.c: the process's API id, or -1 (out of memory). */
int mpi_api_id(void);
/* Test hook (tests/mpi/mpi_vcoll_test.c, linked statically): fn is asked
 * before every allocation of the gatherv/scatterv root's displacements
 * (what: "gatherv" or "scatterv"); non-zero: the allocation fails. NULL: off. */
void mpi_set_alloc_fault_hook(int (*fn)(const char *what));

/* mpi_collbuf.c: the coalescing callbacks */
int mpi_cb_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                       int collector, int first, int last, int sid, int process(const void *, sion_int64 *, int));
int mpi_cb_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group, int collector,
                        int first, int last, int sid, int process(void *, sion_int64 *, int));

/* mpi_group.c */
int mpi_fail(const char *call, const char *fname, int code, const char *what, int mpirc);
int mpi_check(const char *call, const char *fname, MPI_Comm gComm);
mpi_group *mpi_group_new(const char *call, const char *fname, MPI_Comm comm);
void mpi_group_free(mpi_group *g);
void mpi_group_register(mpi_group *g, int sid);
mpi_group *mpi_group_unregister(int sid);
int mpi_agree(const char *call, const char *fname, MPI_Comm comm, int localrc, int minmax[4]);
void mpi_split_by_count(int rank, int size, int numfiles, int *filenumber, int *lrank, int *lsize);
int mpi_open_failed(mpi_group *g, int rank);

/* mpi_auto.c: files=auto */
typedef struct auto_desc {
    int group, ngroups; /* this rank's storage group, number of groups */
} auto_desc;
int mpi_mode_strip_auto(const char *mode, char **out, int *found);
int mpi_auto_groups(const char *call, const char *fname, MPI_Comm comm, auto_desc *d);
int mpi_auto_split_write(const char *call, const char *fname, MPI_Comm comm, int rank, const auto_desc *d, int req,
                         MPI_Comm *lc);
int mpi_auto_read_check(const char *call, const char *fname, MPI_Comm comm, int rank, int size, const auto_desc *d,
                        MPI_Comm *lc);

#endif
