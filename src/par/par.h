/* par.h - the generic parallel layer (internal): API objects holding the
 * communication callbacks, and the per-sid state of a parallel open.
 * No MPI here; bindings (src/mpi, src/omp, src/ompi) register callbacks.
 * The protocol of each collective call is documented in doc/parallel.md. */
#ifndef PAR_PAR_H
#define PAR_PAR_H
#include "../core/container.h"
#include "sion_generic.h"

typedef struct par_api {
    char *name;
    sion_generic_create_lcg_cb create_lcg;
    sion_generic_free_lcg_cb free_lcg;
    sion_generic_barrier_cb barrier;
    sion_generic_bcastr_cb bcast;
    sion_generic_gatherr_cb gather;
    sion_generic_gathervr_cb gatherv;
    sion_generic_scatterr_cb scatter;
    sion_generic_scattervr_cb scatterv;
    sion_generic_multi_filename_cb filename;
    sion_generic_gather_execute_cb gather_exec;
    sion_generic_execute_scatter_cb exec_scatter;
    sion_generic_capability_cb capability;
    /* 1: the binding promises that create_lcg fails on every task or on none
     * (sheaf's MPI and OpenMP bindings); else the open votes after it. */
    int lcg_agreed;
} par_api;

/* Install the hooks through which src/api reaches a parallel sid's state
 * (sidops.c, src/sid/sid.h); called by every way into a parallel open. */
void par_install_sid_ops(void);

/* Copy of API object aid (callbacks); fails with a message naming `fname`
 * when aid is unknown or the STD level is not registered. */
int par_api_get(int aid, par_api *out, const char *fname);
/* Mark API aid's create_lcg as agreed (par_api.lcg_agreed; binding.h):
 * 0, or a negative code when aid is unknown. */
int par_api_set_lcg_agreed(int aid);

/* State of one task's parallel open, hung on core_container.par. */
typedef struct par_state {
    par_api api;         /* callbacks copied at open (the aid may be freed meanwhile) */
    char *fname;         /* set name given to the open */
    void *gcomm, *lcomm; /* global group (caller's), local group (ours) */
    int grank, gsize, lrank, lsize, filenumber, nfiles;
    int write, mapped;
    int file0master; /* write: grank of the task writing file 0's mapping */
    int have_meta;   /* write, local master: meta holds the file's layout */
    core_meta meta;
    /* mapped opens: the logical tasks this process handles */
    int nlocal;
    void *root; /* mapped write, global rank 0: all tasks' records and file layouts (mapped.c) */
    int32_t fsblksize;
    core_mode mode;
    /* coalescing I/O (coll.c): set from the layout the file's master scattered */
    int coll;          /* 1: sion_coll_* go through the collector */
    int collector;     /* local rank of this task's collector (-1: none) */
    int groupsize;     /* tasks in the group (collector + senders) */
    int64_t span;      /* bytes of chunk space of the group in one block row */
    int64_t collstart; /* file offset of the collector's block 0 */
    int merge;         /* cmerge: the group's data goes into the collector's stream */
    char *cbuf;        /* collector: write-combining buffer (cbuf_cap bytes) */
    int64_t cbuf_cap, cbuf_len, cbuf_off;
    int coll_rc; /* collector: first failure inside a process callback */
    /* buddy checkpointing (buddy.c): one entry per copy level, closed with this one */
    int nbuddy;
    struct par_buddy *blev[9];
    int *buddy_m0; /* per level: global rank writing copy member 0 (its mapping) */
    int buddy_cur; /* level whose data a gather_and_execute is moving (-1: none) */
} par_state;

/* ---- buddy checkpointing (buddy.c) ---- */
#define PAR_BUDDY_MAX 9
typedef struct par_buddy par_buddy;
/* Name of buddy copy set `level` (1..N): "<fname>_BUDDY_<level-1, 2 digits>", as SIONlib numbers
 * its copies from _BUDDY_00; malloc'd (NULL: out of memory). */
char *par_buddy_name(const char *fname, int level);
/* After the write open of the container (p: its state, every task): open the
 * copy levels 1..levels, SIONlib's layout (partner tasks write each copy);
 * agreed: the same result on every task. */
int par_buddy_open_write(par_state *p, int levels, int64_t chunk, const char *fname);
/* sion_coll_fwrite: the n bytes just written (rc_in: this task's result so
 * far; a failed task still takes part) go to the partners; collective. */
int par_buddy_coll_write(core_container *c, int sid, const void *data, int64_t n, int rc_in);
/* sion_flush (through the hooks of sidops.c): the copy members this task writes become durable. */
int par_buddy_flush(core_container *c);
/* Close: the copy members get their metadata; collective, on the close's
 * context x (ctx.h: its steps "buddy mapping", "buddy counts", "buddy sizes",
 * "buddy tail"); not agreed (the container's close agrees on it). */
struct par_ctx;
void par_buddy_close_write(struct par_ctx *x, par_state *p);
/* Release the levels (groups, files) without writing anything. */
void par_buddy_free(par_state *p);
/* Read open of a copy level: par_buddy_open_read in open_int.h. */
/* sion_get_io_info (through the hooks of sidops.c): level l's copy member this task sends into
 * and the one it collects (NULL names when not there), its bytes, whether it
 * writes the collected one. */
void par_buddy_info(par_state *p, int l, const char **send_name, int64_t *send_bytes, const char **coll_name,
                    int *coll_writer);

/* ---- coalescing I/O (coll.c) ---- */
#define PAR_COLL_FIELDS 5 /* per-task layout entries: collector, group size, group span, collector start, merge */
/* The roles a file's master decides (coalescing off: all NULL). */
typedef struct par_coll_roles {
    int32_t *collector; /* [ls] local rank of each task's collector */
    int32_t *groupsize; /* [ls] tasks in its group */
    int64_t *span;      /* [ls] chunk bytes of its group in one block row */
} par_coll_roles;
/* Master of a file: decide whether its ls tasks use coalescing I/O (mode,
 * environment, and the API having gather_and_execute + execute_and_scatter;
 * a warning when asked for but not possible); caps: each task's capability
 * (NULL: all full; only writes gather them, as SIONlib). When on: in write mode cs[]
 * becomes the packed layout and md_out->packed is set; roles are filled
 * (release with par_coll_roles_free). Returns 1 on, 0 off, < 0 error. */
int par_coll_plan(const par_api *api, const core_mode *md, core_mode *md_out, int32_t ls, int64_t *cs,
                  const int32_t *caps, int32_t fsb, int write, par_coll_roles *roles, int grank, const char *fname);
/* This task's capability for coalescing I/O (the API's get_capability
 * callback on the local group; SION_CAPABILITY_FULL without one). */
int par_coll_capability(const par_api *api, void *lcomm);
void par_coll_roles_free(par_coll_roles *roles);
/* Fill the PAR_COLL_FIELDS layout entries of task t (roles NULL or empty:
 * coalescing off; starts: the file's chunk starts). */
void par_coll_fill(int64_t *e, int32_t t, const par_coll_roles *roles, const int64_t *starts, int merge);
/* Task: take its entries from the scattered layout. */
void par_coll_set(par_state *p, const int64_t *e);

/* Name of physical file k of the set (API callback or fname / fname.%06d);
 * malloc'd or NULL (message set). */
char *par_member_path(const par_api *api, const char *fname, int k);
void par_state_free(par_state *p);
/* The global group object a parallel sid was opened with (NULL if the sid is
 * not a parallel open): lets a binding release its group after the close
 * (the bindings reach it through binding.h). */
void *par_global_group(int sid);
/* After an attach: record task i's physical file number and local rank (and
 * the set's file count) in c, for the information getters. */
void par_label_task(core_container *c, int i, int filenumber, int lrank, int nfiles);

#endif
