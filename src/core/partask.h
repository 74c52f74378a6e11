/* partask.h - serial building blocks of the parallel layer (doc/parallel.md:
 * "Who does what", and the steps of each call under "Collectives per call";
 * doc/design.md, "Layers"). No MPI, no threads: a parallel layer runs the
 * master steps on each physical file's master task and the task steps on every
 * task, exchanging the arguments itself.
 *
 * Write sequence for one physical file with n tasks:
 *   master: core_par_create_file()        -> META1 on disk, starts[]/globalskip in meta
 *   (the file now exists; scatter start, chunksize, globalskip)
 *   task t: core_attach_task(write=1), core_write()..., core_detach_task()
 *   (gather block counts and block sizes)
 *   master: core_par_write_tail()         -> META2 (+ mapping on file 0), header last
 *
 * Files are named as SIONlib names them: `name` is the name the set was opened
 * with; physical file k is core_member_name(name, k) (name, name.000001, ...),
 * and every file's prefix field holds `name`. The result is byte-identical to
 * what SIONlib 1.7's parallel close writes (filenumber = k, no trailing mapping
 * word in a single-file set). */
#ifndef CORE_PARTASK_H
#define CORE_PARTASK_H
#include "container.h"
#include <stdint.h>

/* Master: create/truncate physical file `filenumber` of the set `name` (nfiles
 * files), write its META1 (start_of_varheader 0: "not closed") and close it.
 * chunksizes are rounded up to multiples of fsblksize (which must be decided
 * already, > 0), globalranks NULL means 0..ntasks-1. out_meta receives the
 * header and the layout (starts[], globalskip, chunksizes as stored); it is
 * the caller's, release it with core_meta_free() after core_par_write_tail(). */
int core_par_create_file(const char *name, const core_mode *mode, int32_t ntasks, const int64_t *chunksizes,
                         const int64_t *globalranks, int32_t fsblksize, int32_t filenumber, int32_t nfiles,
                         core_meta *out_meta);
/* The same with the physical file's path given (a generic API's own naming);
 * `name` is still the set name stored in the prefix field. */
int core_par_create_file_at(const char *path, const char *name, const core_mode *mode, int32_t ntasks,
                            const int64_t *chunksizes, const int64_t *globalranks, int32_t fsblksize,
                            int32_t filenumber, int32_t nfiles, core_meta *out_meta);

/* Master: finish physical file m->filenumber of the set `name` (opened without
 * truncation). blockcount[t] (>= 0) is the number of blocks of local task t;
 * blocksizes is the flat concatenation of the tasks' block tables in task
 * order (what a gatherv delivers): task t's entries start at
 * sum(blockcount[0..t-1]). mapping (2*mapping_size int32: file, local task,
 * indexed by global task) is required for file 0 of a multi-file set, optional
 * for a single-file set (written after the block sizes, as SIONlib's mapped
 * close does; ignored unless it covers every task), and must be NULL for the
 * other files of a set. Writes META2, the mapping, then the header; m gets the
 * block table and the mapping. */
int core_par_write_tail(const char *name, core_meta *m, const int64_t *blockcount, const int64_t *blocksizes,
                        const int32_t *mapping, int32_t mapping_size);
/* The same with the physical file's path given (NULL: the default member name). */
int core_par_write_tail_at(const char *path, const char *name, core_meta *m, const int64_t *blockcount,
                           const int64_t *blocksizes, const int32_t *mapping, int32_t mapping_size);
/* The same, with the block table entries beyond a task's block count set to
 * unused (0, as SIONlib's parallel close writes them; -1 as its mapped close). */
int core_par_write_tail_fill(const char *path, const char *name, core_meta *m, const int64_t *blockcount,
                             const int64_t *blocksizes, const int32_t *mapping, int32_t mapping_size, int64_t unused);

/* Read the metadata of one closed physical file (header, block table, mapping). */
int core_meta_read_path(const char *path, core_meta *m);

/* File system block size to use for a new file at path: st_blksize of the
 * file if it exists, else of its directory (statvfs as fallback); values
 * <= 0, above SION_MAX_FSBLOCKSIZE or not a power of two give SION_DEFAULT_FSBLOCKSIZE
 * (core_fsblksize_detected_ok). */
int32_t core_fsblksize_for(const char *path);

/* Task: a container holding exactly one task over the existing physical file
 * `name` (the member's own path), opened without truncation (write: O_RDWR;
 * read: read-only), positioned at the task's chunk. core_write, core_read,
 * core_seek, core_eof, core_flush work on it unchanged. Read mode takes the
 * task's block table (nblocks entries; both ignored in write mode). The
 * keyval mode is mode->keyval (NOTSET -> none), the data order mode->data_big. */
int core_attach_task(core_container **out, const char *name, const core_mode *mode, int write, int64_t start,
                     int64_t chunksize, int64_t globalskip, int64_t globalrank, int64_t nblocks,
                     const int64_t *blocksizes);

/* Several tasks at once (a mapped open: one process, several logical tasks,
 * possibly in different physical files). Tasks with the same path share one
 * open file. The container's tasks are in spec order; core_seek takes their
 * global ranks. */
typedef struct core_attach_spec {
    const char *path; /* physical file holding the task */
    int64_t start, chunksize, globalskip, globalrank;
    int64_t nblocks; /* read mode: the task's block table */
    const int64_t *blocksizes;
    const uint32_t *crcs; /* read mode: stored block checksums (nblocks), NULL: none */
} core_attach_spec;
int core_attach_tasks(core_container **out, const char *name, const core_mode *mode, int write, int32_t n,
                      const core_attach_spec *spec);

/* A read-only copy of an attached read container with file handles of its
 * own (sion_dup): all its tasks, or only global task only_grank (>= 0). */
int core_dup(core_container **out, core_container *c, int64_t only_grank);

/* Task: sync, hand back the task's block table (*blocksizes malloc'd, *nblocks
 * entries; either pointer may be NULL to drop it) and close and free c
 * without writing any metadata. Always frees an attached c (a container not
 * made by core_attach_task is refused and left alone); on failure nothing is
 * handed back. (core_close on an attached container also writes no metadata.) */
int core_detach_task(core_container *c, int64_t *nblocks, int64_t **blocksizes);
#endif
