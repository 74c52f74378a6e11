/* mapped_int.h - what the files of the mapped open share (internal to
 * src/par): mapped.c (entry points, the count step), mapped_write.c,
 * mapped_read.c. */
#ifndef PAR_MAPPED_INT_H
#define PAR_MAPPED_INT_H
#include "par.h"
#include "../core/partask.h"

#define WREC 4   /* write record: global rank, chunk size, file, local rank */
#define WLAY 3   /* write layout: start, chunk size, global skip */
#define RREC 9   /* read record: grank, file, lrank, start, chunk, gskip, nblocks, keyval, data_big */

/* Options of a mapped open that must be the same on every task. */
enum { MO_WRITE, MO_NFILES, MO_FSBLK, MO_KEYVAL, MO_N };
#define HEAD_N (2 + MO_N)

/* Rank 0's view of a mapped write, kept from open to close. */
typedef struct mapped_root {
    int64_t ntotal;         /* logical tasks */
    int nfiles;
    int *pcount;            /* logical tasks per process (gsize) */
    int64_t *rec;           /* WREC per logical task, in gather order */
    core_meta *meta;        /* per file */
} mapped_root;

void par_mapped_root_free(mapped_root *r);
/* The tasks of this process (n of them) attached to their files (none: an
 * empty container that only the mapped close accepts). */
int par_mapped_attach_own(core_container **c, const char *fname, const core_mode *md, int write, int32_t n,
                          const core_attach_spec *sp);
/* First step of every mapped call: gather (count, status, options) to rank 0,
 * bcast (status, total, disagreement); mapped.c has the details. */
int par_mapped_count_phase(const par_api *api, const char *fname, void *gcomm, int grank, int gsize, int64_t count,
                           int rc, const int64_t *opts, int **pcount, int64_t limit,
                           int (*alloc)(void *ctx, int64_t total), void *ctx, int64_t *total_out, int *cbfail_out);
/* counts[g] = pcount[g] * k on rank 0 when ok, zeros otherwise (NULL off rank 0). */
int *par_mapped_scaled_counts(const int *pcount, int gsize, int k, int ok, int grank);
int par_mapped_write(const par_api *api, const char *fname, const core_mode *md, int rc, int *numFiles,
                     void *gcomm, int grank, int gsize, int nlocal, const int *granks, sion_int64 *chunks,
                     const int *fnrs, const int *lranks, sion_int32 *fsblksize, FILE **fileptr);
/* Write close of a mapped sid (frees c). */
int par_mapped_close_write(core_container *c, par_state *p);
int par_mapped_read(const par_api *api, const char *fname, const core_mode *md, int rc, int *numFiles,
                    void *gcomm, int grank, int gsize, int *nlocaltasks, int **globalranks,
                    sion_int64 **chunksizes, int **mapping_filenrs, int **mapping_lranks, sion_int32 *fsblksize,
                    FILE **fileptr);
#endif
