/* mapped_int.h - what the files of the mapped open share (internal to
 * src/par): mapped.c (entry points), mapped_write.c, mapped_read.c; the
 * steps and helpers declared here are mapped_step.c's, below them. The
 * messages are wire.h's par_wire_m*. */
#ifndef PAR_MAPPED_INT_H
#define PAR_MAPPED_INT_H
#include "ctx.h"
#include "wire.h"
#include "../core/partask.h"

/* Rank 0's view of a mapped write, kept from open to close. */
typedef struct mapped_root {
    int64_t ntotal; /* logical tasks */
    int nfiles;
    int *pcount;         /* logical tasks per process (gsize) */
    par_wire_mwrec *rec; /* per logical task, in gather order */
    core_meta *meta;     /* per file */
} mapped_root;

void par_mapped_root_free(mapped_root *r);
/* The tasks of this process (n of them) attached to their files (none: an
 * empty container that only the mapped close accepts). */
int par_mapped_attach_own(core_container **c, const char *fname, const core_mode *md, int write, int32_t n,
                          const core_attach_spec *sp);

/* What the count step hands on. */
typedef struct mapped_counts {
    int *pcount;           /* rank 0: the count of each process (malloc'd; -1: "distribute for me") */
    int *pblocks;          /* rank 0: the block entries of each process (malloc'd) */
    int64_t total, blocks; /* every task: their sums, from the verdict */
} mapped_counts;
/* Rank 0, once the heads agree: allocate for total records and blocks entries (0 or a code). */
typedef int (*mapped_alloc_fn)(void *actx, int64_t total, int64_t blocks);

/* Step "counts" of every mapped call (G gather of par_wire_mhead + G bcast of
 * par_wire_mverdict): each process's count, block entries, status and (an
 * open, with_opts) options to rank 0, which checks that the options agree
 * and that the sums stay within limit, and allocates (alloc). Returns the
 * verdict (0 ok; else the same code on every task, recorded in the context
 * with a message naming the cause). mine->status is taken from the context. */
int par_mapped_count_step(par_ctx *x, par_wire_mhead *mine, int with_opts, int64_t limit, mapped_alloc_fn alloc,
                          void *actx, mapped_counts *mc);
void par_mapped_counts_free(mapped_counts *mc);
/* Step "verdict" (G bcast from rank 0) of the mapped opens: rank 0's verdict
 * v (a message of table msg, int64, its status at *status) to every task;
 * a task that cannot unpack it fails. Returns 1 when it is OK; else the
 * context takes the verdict ("task 0 refused the <what> (see its message)"). */
int par_mapped_verdict_step(par_ctx *x, const par_wire_msg *msg, void *v, int64_t *status, const char *what);
/* counts[g] = per[g] * k on rank 0 when ok, zeros otherwise (NULL off rank 0). */
int *par_mapped_scaled_counts(const int *per, int gsize, int k, int ok, int grank);
/* A new mapped state for the sid (NULL with a message: out of memory). */
par_state *par_mapped_state_new(const par_ctx *x, const core_mode *md, int write, int nlocal, int nfiles, int32_t fsb);

/* The mapped opens' arguments, as the caller gave them. */
typedef struct mapped_args {
    const par_api *api;
    const char *fname;
    const core_mode *md;
    int mode_rc;
    int *numFiles;
    void *gcomm;
    int grank, gsize;
    int *nlocaltasks;
    int **globalranks;
    sion_int64 **chunksizes;
    int **mapping_filenrs, **mapping_lranks;
    sion_int32 *fsblksize;
    FILE **fileptr;
} mapped_args;

int par_mapped_write(const mapped_args *a);
/* Write close of a mapped sid (frees c); its status, recorded in x. */
int par_mapped_close_write(par_ctx *x, core_container *c, par_state *p);
int par_mapped_read(const mapped_args *a);
#endif
