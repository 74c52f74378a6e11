/* container.h - opening and closing containers: create a single-file
 * container for writing, open a closed one (a single file or a multi-file
 * set) for reading, close (a write close writes the metadata). The umbrella
 * header of the serial core: it also brings the in-memory state (handle.h),
 * the block checksums (checksum.h), the metadata I/O (metaio.h) and the
 * per-task streams (stream.h).
 *
 * This is the serial core. It knows nothing about processes: the parallel
 * layer (src/par) opens one core_container per task or per file and
 * exchanges the block tables itself. Not thread-safe: one container, one
 * thread at a time.
 *
 * Reliability hook: every byte count a task has written reaches the block table
 * through core_sync() (called by write, ensure_space, seek, flush and close);
 * the journal and the per-block checksums hook in there, without touching the
 * format. */
#ifndef CORE_CONTAINER_H
#define CORE_CONTAINER_H
#include "handle.h"
#include "checksum.h"
#include "metaio.h"
#include "stream.h"
#include <stdint.h>

/* Create a single-file container for writing (serial API). chunksizes are
 * rounded up to *fsblksize multiples; *fsblksize <= 0 is detected and written
 * back. META1 is written at once (start_of_varheader 0 until close). */
int core_create(core_container **out, const char *name, const core_mode *mode, int32_t ntasks,
                const int64_t *chunksizes, const int64_t *globalranks, int32_t *fsblksize);

/* Open a closed container (and, from file 0, all members of its set) for reading. */
int core_open_read(core_container **out, const char *name, const core_mode *mode);

/* The same, with the members of a multi-file set named by fn(ctx, name, k)
 * (malloc'd result; NULL = out of memory) instead of name / name.%06d. */
int core_open_read_named(core_container **out, const char *name, const core_mode *mode, core_name_fn fn, void *ctx);

/* Open for reading but expose only global task `rank`. */
int core_open_read_rank(core_container **out, const char *name, const core_mode *mode, int32_t rank);

/* Write mode: finish metadata and close all files. Read: close. Always frees c. */
int core_close(core_container *c);

/* ---- building blocks shared with the parallel primitives (partask.c) ---- */
/* Validate the arguments of a create (name, ntasks, chunk sizes, core_fsblksize_check). */
int core_create_check(const char *name, int32_t ntasks, const int64_t *chunksizes, int32_t fsblksize);
/* A file system block size given to a write open: <= 0 means "detect"; otherwise a power
 * of two up to SION_MAX_FSBLOCKSIZE (32 MiB: SIONlib's own limit, and above the largest
 * block sizes of GPFS (16 MiB) and the stripe sizes Lustre reports as st_blksize; a
 * larger alignment only wastes space per chunk). _ok: 1 if valid; _check: 0, or
 * SHEAF_E_ARG with a message naming the file. */
/* A block size given to a write open: <= 0 (detect) or up to SION_MAX_FSBLOCKSIZE. */
int core_fsblksize_ok(int64_t fsblksize);
/* A detected block size worth using: a power of two up to SION_MAX_FSBLOCKSIZE. */
int core_fsblksize_detected_ok(int64_t d);
int core_fsblksize_check(const char *name, int64_t fsblksize);
/* Physical file k of the set named base: base itself for k = 0, else base.%06d.
 * malloc'd, NULL when out of memory. */
char *core_member_name(const char *base, int32_t k);

/* Read the closed metadata of one physical file into c->files[0].m (c->files
 * allocated if needed; the file is closed again). */
int core_read_member_meta(core_container *c, const char *path);

#endif
