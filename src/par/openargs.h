/* openargs.h - the first exchange of a parallel open (internal).
 *
 * Every task of a (non-mapped) parallel open sends task 0 one record: its
 * status, its place in the split and the options that must be the same on
 * every task (read or write, numFiles, fsblksize, keyval, checksum,
 * collective options, buddy, endianness). Task 0 compares them, does its
 * role's work (write: checks the split and detects fsblksize; read: reads
 * file 0's header) and broadcasts one verdict record. Read and write opens
 * start with the same gather and the same bcast, so tasks that disagree on
 * the mode still meet, and all of them fail with a message naming the
 * disagreement. Cost: 1 G gather + 1 G bcast (O(P) memory on task 0). */
#ifndef PAR_OPENARGS_H
#define PAR_OPENARGS_H
#include "par.h"
#include "../core/mode.h"

/* Options that must agree on every task (write-only ones are 0 in a read). */
enum {
    PO_WRITE,
    PO_NFILES,
    PO_FSBLK,
    PO_KEYVAL,
    PO_CHECKSUM,
    PO_COLL,
    PO_COLLSIZE,
    PO_CMERGE,
    PO_BUDDY,
    PO_ENDIAN,
    PO_N
};

/* One task's record. */
typedef struct par_open_req {
    int64_t status;                   /* 0, or this task's error code (its message stays with it) */
    int64_t filenumber, lrank, lsize; /* write: its place in the split */
    int64_t opt[PO_N];
} par_open_req;

/* Why task 0 refuses (reason of the verdict). */
enum {
    SPLIT_OK,
    SPLIT_TASK,
    SPLIT_NUMFILES,
    SPLIT_LSIZE,
    SPLIT_LRANK,
    SPLIT_EMPTYFILE,
    SPLIT_NOMEM,
    SPLIT_FSBLK,
    SPLIT_DISAGREE,
    SPLIT_ROOT
};

/* The verdict task 0 broadcasts. */
typedef struct par_open_verdict {
    int64_t reason;         /* SPLIT_* */
    int64_t who;            /* the task (or file, or value) the reason is about */
    int64_t field, v0, v1;  /* SPLIT_DISAGREE: option PO_*, task 0's value, task who's value */
    int64_t cbfail;         /* task 0's gather callback failed */
    int64_t fsblksize;      /* write: decided once; read: the container's */
    int64_t file0master;    /* write: grank of file 0's master */
    int64_t status;         /* SPLIT_ROOT: task 0's error code (its message on task 0) */
    int64_t nfiles, ntasks; /* read: from file 0 */
} par_open_verdict;

/* The record of this task: status rc, write flag, the mode's options and
 * (write) numfiles/fsblksize/filenumber/lrank/lsize (NULL-safe). */
void par_open_req_init(par_open_req *r, int rc, int write, const core_mode *md, const int *numfiles,
                       const sion_int32 *fsblksize, const int *filenumber, const int *lrank, const int *lsize);

/* Task 0's work once the records agree: all = the gathered records packed
 * (par_open_req_get). Fills v (reason/who, fsblksize, ...). */
typedef void (*par_open_root_fn)(void *ctx, const int64_t *all, int gsize, par_open_verdict *v);
int64_t par_open_req_get(const int64_t *all, int g,
                         int field); /* field: -1 status, -2 file, -3 lrank, -4 lsize, or PO_* */

/* The exchange: gather of the records to task 0, comparison, root(ctx) on
 * task 0 when they agree, bcast of the verdict (into *v on every task).
 * Returns 0 when the verdict is OK; otherwise the error code with a message
 * (on every task) naming the cause. *cbfail: this task's own callback
 * reported failure (the caller goes on and fails at the agreement). */
int par_open_exchange(const par_api *api, const char *fname, void *gcomm, int grank, int gsize,
                      const par_open_req *mine, par_open_root_fn root, void *ctx, par_open_verdict *v, int *cbfail);

/* Task 0, write: check the split; returns SPLIT_* with *who set. */
int par_check_split(const int64_t *all, int gsize, int64_t *who, int64_t *file0master);
#endif
