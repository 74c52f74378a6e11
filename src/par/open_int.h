/* open_int.h - what the files of the non-mapped parallel open share
 * (internal to src/par): open.c (entry, buddy wrappers), open_write.c,
 * open_read.c, close.c, reinit.c; the shared helpers declared here are
 * open_task.c's, below all of them. */
#ifndef PAR_OPEN_INT_H
#define PAR_OPEN_INT_H
#include "openargs.h"
#include "wire.h"
#include "ctx.h"

#define LOCAL_LAYOUT (5 + PAR_COLL_FIELDS) /* status, start, chunk size, global skip, coalescing roles, checksums */
#define READ_LAYOUT                                                                                                    \
    (9 + PAR_COLL_FIELDS)              /* status, start, chunk size, global skip, global rank, nblocks,
                                            * keyval, data_big, coalescing roles, checksums */
#define LOCAL_CK (4 + PAR_COLL_FIELDS) /* write: the master's decision on checksums */
#define READ_CK (8 + PAR_COLL_FIELDS)  /* read: the file has checksums */

/* A new state for one task's open (NULL with a message: out of memory). */
par_state *par_open_state_new(const par_api *api, const char *fname, void *gcomm, int grank, int gsize);
/* Finish a failed or closing open: free the local group and the state. */
void par_open_state_drop(par_state *p);
/* Hang p on c, hand out the file pointer / name, register the sid. */
int par_open_register(core_container *c, par_state *p, const char *path, FILE **fileptr, char **newfname, int *sid_out);
/* Master of a write open or reinit: decide coalescing, create the file. */
int par_open_master_create(par_state *p, const char *path, const core_mode *md, int ls, int64_t *cs,
                           const int32_t *caps, const int64_t *gr, int32_t fsb, par_coll_roles *roles);
/* Master: every task's write layout (status mrc; on success its place in
 * p->meta and the coalescing roles) packed into lay (ls records). */
void par_open_pack_wlayouts(const par_state *p, int mrc, const par_coll_roles *roles, int cmerge, int checksum, int ls,
                            int64_t *lay);
/* Undo an open on this task after the agreed failure: release its sid (if
 * registered), free *newfname (newfname non-NULL: handed out), and detach
 * from (detach: a write's file stays for the others) or close the container. */
void par_open_undo(int sid, core_container *c, int detach, char **newfname);
/* Look up a parallel sid (mapped or not); NULL with a message otherwise. */
core_container *par_open_lookup(int sid, const char *call, int mapped);
/* The arguments of one sion_generic_paropen, as the caller gave them
 * (the read open hands lrank/lsize back through the same pointers). */
typedef struct par_open_args {
    const par_api *api;
    const char *fname;
    const core_mode *md;
    int mode_rc; /* the mode string's parse result */
    sion_int64 *chunksize;
    sion_int32 *fsblksize;
    void *gcomm;
    int grank, gsize;
    int *filenumber, *numfiles, *lrank, *lsize;
    FILE **fileptr;
    char **newfname;
} par_open_args;

/* What one task's write or read open holds from step to step, whichever
 * the direction (open_write.c's wopen and open_read.c's ropen start with it). */
typedef struct par_open_task {
    par_ctx x;
    const par_open_args *a;
    par_state *p;
    int fn, nf; /* its file, the set's files */
    int32_t fsb;
    char *path; /* its file's path */
} par_open_task;

/* Step "local group" of the write and read opens: the task's state (o->p,
 * NULL when out of memory: recorded in o->x, the task still takes part), the
 * local group of its file (o->x.lrank, o->x.lsize) and the file's path; then
 * (a binding whose create_lcg is not agreed) a vote (G gather + G bcast).
 * Returns 0, or the agreed code (< 0, the same on every task; what the step
 * made is freed) when the open must end here. */
int par_open_local_group(par_open_task *o);
/* An open that failed on every task: free o's state and its local group
 * (also one made while the state could not be allocated) and its path;
 * returns the context's code (its message made current again). */
int par_open_task_undo(par_open_task *o);

/* The write and read opens (the sid, or a negative code agreed on every
 * task). *agreed (read): the options agreed on every task, so a buddy read
 * may try the copies. */
int par_open_write(const par_open_args *a);
int par_open_read(const par_open_args *a, int *agreed);
/* Read open of copy level `level` of set a->fname (buddy_read.c): each task
 * opens its own entry; agreed; the sid or a negative code. */
int par_buddy_open_read(const par_open_args *a, int level);
#endif
