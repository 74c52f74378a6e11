/* sion_generic.h - the generic parallel API: build your own parallel layer.
 *
 * sheaf's parallel logic lives here, with no MPI dependency. A program (or a
 * tool with its own communication layer) describes how its tasks talk by
 * registering callbacks on an "API" object, then opens containers
 * collectively through it. sheaf's MPI, OpenMP and hybrid layers are
 * themselves generic APIs (sion_mpi.h, sion_omp.h, sion_ompi.h).
 *
 * Callback conventions (SIONlib 1.7): every callback returns 0
 * (SION_STD_SUCCESS) on success, non-zero on failure. `datatype` is one of
 * _SION_INT32, _SION_INT64, _SION_CHAR; counts are in elements. A callback
 * is collective over the group it is given: every task of the group calls it
 * with the same root. Argument order exactly as SIONlib 1.7 calls them:
 *   bcastr(data, group, type, n, root)
 *   gatherr(in = each task's n elements, out = the root's array, ...)
 *   gathervr(in = each task's nelem elements, out = the root's array, ...,
 *            counts = per-task counts (valid on the root), nelem, root)
 *   scatterr(in = the ROOT's array (read on the root only), out = each
 *            task's n elements, ...)  -- as MPI_Scatter(in, ..., out, ...)
 *   scattervr(in = each task's nelem elements, out = the ROOT's array,
 *             counts (root), nelem, root)  -- note: the other way round from
 *             scatterr, as in SIONlib (MPI_Scatterv(out, counts, ..., in, ...)).
 * A layer written for SIONlib (e.g. its test_genapi_INC_MPI_api.c) therefore
 * works unchanged.
 *
 * Collectives per call (P tasks in the global group, p in a file's local
 * group; each row is one callback invocation on every task of that group):
 *   sion_generic_paropen, write : global 2 gather + 2 bcast, local 1 gather + 1 scatter
 *   sion_generic_paropen, read  : global 2 gather + 2 bcast (+ 1 scatter for a multi-file
 *                                 set), local 1 scatter + 1 scatterv (the block tables)
 *   sion_generic_parclose, write: local 1 gather + 1 gatherv, global 1 gather + 1 bcast
 *                                 (+ 1 global gather of the mapping for a multi-file set)
 *   sion_generic_parclose, read : global 1 gather + 1 bcast
 *   sion_generic_parreinit      : global 2 gather + 2 bcast, local 1 gather + 1 scatter
 * plus one create_local_commgroup per open and one free_local_commgroup per
 * close (reinit keeps the local group). No barrier is used.
 * The exact table, with the data each one moves, is in doc/parallel.md and
 * is checked by tests/par with a counting callback layer. Memory: O(1) per
 * task, O(p) on a file's master, O(P) only on the task that writes file 0's
 * mapping (multi-file) and on global rank 0 while it validates the split.
 *
 * Errors: a failure on any task (bad argument, file not creatable, I/O error)
 * becomes a failure of the call on every task of the global group; no task
 * is left waiting in a collective. Values that must be the same on every
 * task (read or write; keyval, collective, collsize, cmerge, buddy; writing
 * also numFiles, fsblksize, checksum, endianness) are compared by task 0 in
 * the first exchange: a difference fails the open on every task with
 * "the tasks disagree on <what>: task 0 gives <x>, task <n> gives <y>".
 * Chunk sizes may differ per task (>= 0). Thread-safety: API objects may be created
 * and used from several threads; one sid is used by one thread at a time. */
#ifndef SION_GENERIC_H
#define SION_GENERIC_H
#include "sheaf_export.h"
#include <stdio.h>
#include "sion_datatypes.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Capabilities returned by a get_capability callback (collective I/O). */
#define SION_CAPABILITY_FULL 2
#define SION_CAPABILITY_ONLY_SENDER 1
#define SION_CAPABILITY_NONE 0

typedef int (*sion_generic_create_lcg_cb)(void **local_group, void *global_group, int grank, int gsize, int lrank,
                                          int lsize, int filenumber, int numfiles);
typedef int (*sion_generic_free_lcg_cb)(void *local_group);
typedef int (*sion_generic_barrier_cb)(void *group);
typedef int (*sion_generic_bcastr_cb)(void *data, void *group, int datatype, int nelem, int root);
typedef int (*sion_generic_gatherr_cb)(void *in, void *out, void *group, int datatype, int nelem, int root);
typedef int (*sion_generic_gathervr_cb)(void *in, void *out, void *group, int datatype, int *counts, int nelem,
                                        int root);
typedef int (*sion_generic_scatterr_cb)(void *in, void *out, void *group, int datatype, int nelem, int root);
typedef int (*sion_generic_scattervr_cb)(void *in, void *out, void *group, int datatype, int *counts, int nelem,
                                         int root);
typedef char *(*sion_generic_multi_filename_cb)(const char *fname, int filenumber);
typedef int (*sion_generic_gather_execute_cb)(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize,
                                              void *group, int collector, int first, int last, int sid,
                                              int process(const void *, sion_int64 *, int));
typedef int (*sion_generic_execute_scatter_cb)(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize,
                                               void *group, int collector, int first, int last, int sid,
                                               int process(void *, sion_int64 *, int));
typedef int (*sion_generic_capability_cb)(void *group);

/* Create an API object named `name` (copied; for messages). Returns its id
 * (aid >= 0) or -1 when out of memory / name NULL. */
SHEAF_API int sion_generic_create_api(char *name);
/* Release an API object. SION_SUCCESS, or SION_NOT_SUCCESS for an unknown aid. */
SHEAF_API int sion_generic_free_api(int aid);

/* Register one callback. Each returns SION_SUCCESS, or SION_NOT_SUCCESS for an
 * unknown aid or a NULL callback. The API can open containers once
 * create/free local group, barrier, bcast, gather, gatherv, scatter and
 * scatterv are registered ("STD" level); gather_and_execute,
 * execute_and_scatter and get_capability complete the "FULL" level used by
 * collective I/O.
 * gather_and_execute / execute_and_scatter contract (as SIONlib): called by
 * every task of the local group in each sion_coll_* call (a task outside
 * first..last, or in a group of one, returns at once unless the layer
 * synchronizes the whole group); spec = {file offset, length} (length <= 0:
 * nothing). The collector (local rank `collector`) calls process(buf, piece,
 * sid) for each sender first..last in order, for pieces of at most fsblksize
 * bytes with piece = {offset of the piece, its length}; for reads process
 * fills buf and the layer delivers it to the sender's outdata. Writes: after
 * the last sender the layer calls process(NULL, {-1, 0}, sid) once more (a
 * piece without data), which makes sheaf write out what it combined, so that
 * the verdict covers it. Return 0 on a task when its group's I/O succeeded
 * (sheaf's layers pass the collector's verdict on to its senders). */
SHEAF_API int sion_generic_register_create_local_commgroup_cb(int aid, sion_generic_create_lcg_cb cb);
SHEAF_API int sion_generic_register_free_local_commgroup_cb(int aid, sion_generic_free_lcg_cb cb);
SHEAF_API int sion_generic_register_barrier_cb(int aid, sion_generic_barrier_cb cb);
SHEAF_API int sion_generic_register_bcastr_cb(int aid, sion_generic_bcastr_cb cb);
SHEAF_API int sion_generic_register_gatherr_cb(int aid, sion_generic_gatherr_cb cb);
SHEAF_API int sion_generic_register_gathervr_cb(int aid, sion_generic_gathervr_cb cb);
SHEAF_API int sion_generic_register_scatterr_cb(int aid, sion_generic_scatterr_cb cb);
SHEAF_API int sion_generic_register_scattervr_cb(int aid, sion_generic_scattervr_cb cb);
/* Optional: name of physical file `filenumber` (malloc'd; sheaf frees it).
 * Default: fname for file 0, fname.%06d for the others. A set named another
 * way can only be read back through an API with the same callback. */
SHEAF_API int sion_generic_register_get_multi_filename_cb(int aid, sion_generic_multi_filename_cb cb);
SHEAF_API int sion_generic_register_gather_and_execute_cb(int aid, sion_generic_gather_execute_cb cb);
SHEAF_API int sion_generic_register_execute_and_scatter_cb(int aid, sion_generic_execute_scatter_cb cb);
SHEAF_API int sion_generic_register_get_capability_cb(int aid, sion_generic_capability_cb cb);

/* Collective open over gcommgroup (gsize tasks; this one is grank).
 * mode: "w"/"wb"/"bw" or "r"/"rb"/"br" (one of them is required) plus the
 *   keys of sion_open (ansi/posix, keyval, endianness=...).
 * Write: *chunksize (>= 0; rounded up to *fsblksize inside; as in SIONlib the
 *   caller's value is not changed),
 *   *fsblksize (-1: detected by grank 0 from the directory of fname and
 *   used by all; else a size up to SION_MAX_FSBLOCKSIZE, 32 MiB, or
 *   the open fails on every task, each task given a bad value saying so), *filenumber, *numfiles (this task's physical file, 0 <=
 *   filenumber < numfiles, same numfiles on all tasks), *lrank, *lsize (its
 *   place in that file; the tasks of a file have lrank 0..lsize-1) are inputs.
 *   Each physical file is created by its lrank-0 task (its "master").
 * Read: all of them are outputs (single file: lrank = grank); gsize must
 *   equal the number of tasks that wrote the container (else use
 *   sion_generic_paropen_mapped).
 * fileptr: the exported FILE* (ansi mode), or NULL in posix mode. newfname
 *   (may be NULL): malloc'd name of this task's physical file.
 * Returns a sid, or -1 on every task with a message naming the file and the cause. */
SHEAF_API int sion_generic_paropen(int aid, const char *fname, const char *mode, sion_int64 *chunksize,
                                   sion_int32 *fsblksize, void *gcommgroup, int grank, int gsize, int *filenumber,
                                   int *numfiles, const int *lrank, const int *lsize, FILE **fileptr, char **newfname);
/* Collective close. Write: the masters write the block tables (and file 0 the
 * mapping), as SIONlib's parallel close does. Returns SION_SUCCESS on every
 * task, or SION_NOT_SUCCESS on every task when any task failed; the sid is
 * released either way. A sid that is not an open parallel sid (e.g. a second
 * close of the same sid) gives SION_ID_NOT_VALID (-1) at once, locally, with
 * a message, as SIONlib's (the same for sion_generic_parclose_mapped). */
SHEAF_API int sion_generic_parclose(int sid);
/* Collective, write mode: restart the container with new chunk sizes before
 * data are kept: every task's data written so far is discarded, the layout
 * is recomputed, META1 rewritten and each task positioned at its new chunk.
 * A sid that is not an open parallel sid: SION_ID_NOT_VALID (-1), as SIONlib. */
SHEAF_API int sion_generic_parreinit(int sid, sion_int64 chunksize);

/* Mapped open: each task of gcommgroup handles *nlocaltasks logical tasks.
 * Write: *numFiles > 0; globalranks, chunksizes, mapping_filenrs,
 *   mapping_lranks are arrays of *nlocaltasks inputs (the logical tasks'
 *   global ranks 0..N-1, chunk sizes (aligned inside, the caller's array is
 *   left as given, as in SIONlib), physical file
 *   and rank in that file). Global rank 0 creates and finishes all physical
 *   files (it holds O(N) metadata; meant for moderate N).
 * Read: *nlocaltasks >= 0 with (*globalranks)[] says which logical tasks this
 *   process reads; *nlocaltasks < 0 lets sheaf distribute all tasks in
 *   contiguous ranges. Outputs: *nlocaltasks, *globalranks (allocated when
 *   distributing), *chunksizes, *mapping_filenrs, *mapping_lranks (malloc'd,
 *   caller frees), *numFiles, *fsblksize.
 * A process may own no logical task (write: *nlocaltasks = 0; read: 0
 *   requested, or none left by the automatic distribution): it takes part
 *   in the collectives and gets a sid that only the mapped close accepts.
 * Switch between the owned logical tasks with sion_seek(sid, grank, ...).
 * Returns a sid or -1 on every task. */
SHEAF_API int sion_generic_paropen_mapped(int aid, char *fname, const char *mode, int *numFiles, void *gcommgroup,
                                          int grank, int gsize, int *nlocaltasks, int **globalranks,
                                          sion_int64 **chunksizes, int **mapping_filenrs, int **mapping_lranks,
                                          sion_int32 *fsblksize, FILE **fileptr);
SHEAF_API int sion_generic_parclose_mapped(int sid);

/* Collective (coalescing) I/O. Called by every task of the physical file
 * (each with its own size; 0 is fine). Enabled at open by the mode key
 * "collective" (with "collsize=N": N tasks per collector; "cmerge" /
 * "collectivemerge": merge mode; these two alone do not enable it, as in
 * SIONlib 1.7), or the environment (SION_COLLSIZE: > 0 tasks per
 * collector, -1 automatic, 0 off; SION_COLLNUM: number of collectors), and
 * only when the API has gather_and_execute and execute_and_scatter (else a
 * warning and individual I/O). The file's master splits its tasks into
 * groups of consecutive tasks exactly as SIONlib: ceil(tasks / collsize)
 * collectors (automatic: at most 32/16/8/8/8/4 collectors for >=
 * 512/256/128/64/32/16 tasks), never more than one per file-system block of
 * chunk space; each collector's share is floor(chunk bytes / collectors)
 * rounded up to a block, and a task joins the current group while the
 * group's chunks fit in that share; a task whose get_capability callback
 * returns SION_CAPABILITY_ONLY_SENDER always joins (the capability is
 * gathered at write opens, as SIONlib). Written chunks of a group
 * are packed (each exactly the requested chunk size) and the group's last
 * chunk is padded to the next block boundary, so many small tasks share
 * blocks. In a call every task accounts its own bytes (a new block when the
 * current one is full, exactly as sion_fwrite) and the collector does the
 * file I/O for the group, serving senders one at a time through one buffer
 * of max(fsblksize, 64 KiB) (at most 16 MiB). Falls back per task to the
 * individual call when the data are larger than the task's chunk (write) or
 * leave the current block (read); files not opened for coalescing, mapped
 * opens and key-value containers use sion_fwrite / sion_fread. Individual
 * calls may be mixed in freely. cmerge: the group's data go, in task order,
 * into the collector's own stream (senders' streams stay empty); reading a
 * merged container is individual. Returns nitems on success; 0 on every
 * task of a group whose collector failed (message names the file).
 * Refused on sion_dup copies. Collective over the file's tasks: not for
 * concurrent use of one sid by several threads. */
SHEAF_API size_t sion_coll_fwrite(const void *data, size_t size, size_t nitems, int sid);
SHEAF_API size_t sion_coll_fread(void *data, size_t size, size_t nitems, int sid);

#ifdef __cplusplus
}
#endif
#endif
