/* container.h - an open container: its physical files, its tasks and their
 * block tables, and the cursor of each task.
 *
 * This is the serial core. It knows nothing about processes: a parallel layer
 * (later) opens one core_container per task or per file and exchanges the
 * block tables itself. Not thread-safe: one container, one thread at a time.
 *
 * Reliability hook: every byte count a task has written reaches the block table
 * through core_sync() (called by write, ensure_space, seek, flush and close);
 * a journal or per-block checksum is added there, without touching the format. */
#ifndef CORE_CONTAINER_H
#define CORE_CONTAINER_H
#include "format.h"
#include "io.h"
#include "mode.h"
#include <stdint.h>

typedef struct core_task {
    int64_t chunksize;   /* capacity of each block */
    int64_t globalrank;
    int64_t start;       /* file offset of block 0 */
    int32_t file;        /* index into container.files */
    int32_t lrank;       /* task index inside that physical file */
    int64_t nblocks;     /* blocks in use (>= 1) */
    int64_t cap;         /* allocated entries of bsize */
    int64_t *bsize;      /* bytes held by each block */
    int64_t cur_block;   /* cursor */
    int64_t cur_pos;
} core_task;

typedef struct core_pfile {
    core_file f;
    core_meta m;
} core_pfile;

typedef struct core_kv core_kv; /* key-value index, keyval.c */

typedef struct core_container {
    char *name;          /* name given to open (physical file 0) */
    core_mode mode;
    int32_t nfiles;
    core_pfile *files;
    int32_t ntasks;      /* global tasks covered */
    core_task *tasks;
    int32_t cur;         /* current task */
    int32_t only_task;   /* >= 0: opened with open_rank, only this task */
    int32_t fsblksize;
    int keyval;          /* SION_KEYVAL_* */
    int data_big;        /* declared user-data order */
    int64_t bytes_read;
    int32_t *mapping;    /* [2*ntasks] (file, lrank) when nfiles > 1 */
    /* arrays handed out by the information getters (built on demand) */
    int64_t *x_chunks, *x_granks, *x_bcount, *x_bsizes, *x_curpos, *x_curblk;
    int32_t x_maxchunks;
    core_kv *kv;         /* inline key-value index (keyval.c), NULL until used */
} core_container;

/* Create a single-file container for writing (serial API). chunksizes are
 * rounded up to *fsblksize multiples; *fsblksize <= 0 is detected and written
 * back. META1 is written at once (start_of_varheader 0 until close). */
int core_create(core_container **out, const char *name, const core_mode *mode, int32_t ntasks,
                const int64_t *chunksizes, const int64_t *globalranks, int32_t *fsblksize);

/* Open a closed container (and, from file 0, all members of its set) for reading. */
int core_open_read(core_container **out, const char *name, const core_mode *mode);

/* Open for reading but expose only global task `rank`. */
int core_open_read_rank(core_container **out, const char *name, const core_mode *mode, int32_t rank);

/* Write mode: finish metadata and close all files. Read: close. Always frees c. */
int core_close(core_container *c);

/* Release the key-value index (keyval.c); called when c is freed. */
void core_kv_free(core_container *c);

/* Fill x_* arrays for the information getters. */
int core_export_locations(core_container *c);

/* ---- per-task streams (stream.c) ---- */
int core_sync(core_container *c);
int core_write(core_container *c, const void *buf, uint64_t n);
int core_read(core_container *c, void *buf, uint64_t n, uint64_t *got);
int core_ensure_space(core_container *c, int64_t n);
int core_seek(core_container *c, int32_t rank, int64_t blocknr, int64_t pos);
int core_eof(core_container *c);                 /* 1 eof, 0 not, < 0 error */
int64_t core_avail_in_block(core_container *c);
int core_position(core_container *c, int64_t *pos);
int core_flush(core_container *c);
int64_t core_task_total(const core_task *t);     /* bytes held by all blocks */
/* Make room for n entries in a task's block table. */
int core_task_grow(core_task *t, int64_t n, const char *name);
/* Position the physical file at the cursor of the current task. */
int core_place(core_container *c);
#endif
