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
    /* checksums (checksum.h), allocated with bsize when crc_on */
    int crc_on;
    uint32_t *bcrc;      /* per block: write: running CRC-32C; read: the stored one */
    int64_t *bcrclen;    /* write: bytes the running CRC covers; read: 0 unchecked, 1 verified, -1 damaged */
} core_task;

typedef struct core_pfile {
    core_file f;
    core_meta m;
    int jfd1;            /* journal descriptor + 1 (0: not open), journal.c */
} core_pfile;

typedef struct core_kv core_kv;
/* Names member k of a set (malloc'd; NULL = failure): see core_open_read_named. */
typedef char *(*core_name_fn)(void *ctx, const char *base, int32_t k); /* key-value index, keyval.c */

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
    int32_t *mapping;    /* [2*ntasks] (file, lrank) when nfiles > 1 */
    /* arrays handed out by the information getters (built on demand, src/api/common.c) */
    int64_t *x_chunks, *x_granks, *x_bcount, *x_bsizes, *x_curpos, *x_curblk;
    int32_t x_maxchunks;
    core_kv *kv;         /* inline key-value index (keyval.c), NULL until used */
    void *par;           /* state of a parallel open (src/par), NULL for serial opens */
    int dup;             /* made by sion_dup: released with sion_dedup */
    uint64_t only_key;   /* dup with SION_DUP_RANK_KEY: the one key readable */
    int key_only;
    core_name_fn member_name; /* during core_open_read_named only */
    void *member_ctx;
    int cksum;           /* write: keep block checksums; read: the file has them (verified on read) */
    int attached;        /* one task attached to a file written in parallel (partask.c):
                          * closing it never writes metadata, its master does */
} core_container;

/* Create a single-file container for writing (serial API). chunksizes are
 * rounded up to *fsblksize multiples; *fsblksize <= 0 is detected and written
 * back. META1 is written at once (start_of_varheader 0 until close). */
int core_create(core_container **out, const char *name, const core_mode *mode, int32_t ntasks,
                const int64_t *chunksizes, const int64_t *globalranks, int32_t *fsblksize);

/* Open a closed container (and, from file 0, all members of its set) for reading. */
int core_open_read(core_container **out, const char *name, const core_mode *mode);

/* The same, with the members of a multi-file set named by fn(ctx, name, k)
 * (malloc'd result; NULL = out of memory) instead of name / name.%06d. */
int core_open_read_named(core_container **out, const char *name, const core_mode *mode, core_name_fn fn,
                         void *ctx);

/* Open for reading but expose only global task `rank`. */
int core_open_read_rank(core_container **out, const char *name, const core_mode *mode, int32_t rank);

/* Write mode: finish metadata and close all files. Read: close. Always frees c. */
int core_close(core_container *c);

/* Release the key-value index (keyval.c); called when c is freed. */
void core_kv_free(core_container *c);

/* ---- building blocks shared with the parallel primitives (partask.c) ---- */
/* Allocate an empty container / free one (closing its files, no metadata written). */
core_container *core_container_new(const char *name, const core_mode *mode);
void core_container_free(core_container *c);
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
/* Fill a META1 for writing (format 5, host order, keyval from mode, filenumber 1 and
 * nfiles 1 as the serial writer stores them): chunk sizes rounded up to multiples of
 * bs (> 0), globalranks NULL means 0..ntasks-1; computes starts[]/globalskip. */
int core_meta_init_write(core_meta *m, const char *prefix, const core_mode *mode, int32_t ntasks,
                         const int64_t *chunksizes, const int64_t *globalranks, int32_t bs);
/* Encode m's header and write it at offset 0 of f. */
int core_meta_write_header(core_file *f, const core_meta *m);
/* Set m->maxchunks = max(1, blockcount[]) and allocate m->blockcount (a copy of
 * blockcount) and a zeroed m->blocksizes[maxchunks*ntasks] for the caller to fill. */
int core_meta_alloc_blocks(core_meta *m, const int64_t *blockcount, const char *name);
/* Write META2 at start_of_varheader (derived from maxchunks), then what follows
 * it, then the header (maxchunks, start_of_varheader) last, and flush.
 * serial: a 4-byte zero mapping size follows (serial sion_close). Otherwise (parallel
 * close): file 0 of a multi-file set gets m->mapping_size + m->mapping, every other
 * file nothing. */
int core_meta_write_tail(core_file *f, core_meta *m, int serial);
/* Physical file k of the set named base: base itself for k = 0, else base.%06d.
 * malloc'd, NULL when out of memory. */
char *core_member_name(const char *base, int32_t k);

/* A metadata source (format.h) reading from an open file, its size taken now. */
int core_src_from_file(core_src *src, core_file *f);

/* Read the closed metadata of one physical file into c->files[0].m (c->files
 * allocated if needed; the file is closed again). */
int core_read_member_meta(core_container *c, const char *path);


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
/* Checksums: complete the CRC of every block of task t (blocks partly written
 * through the raw handle are read back); read: verify block b of task t
 * once (fails naming task, block and offset when the data are damaged). */
int core_cksum_finish_task(core_container *c, int32_t t);
int core_cksum_verify_block(core_container *c, int32_t t, int64_t b);
/* Read: take the stored CRCs of task t (nblocks entries) from m's table. */
void core_cksum_take(core_task *t, const uint32_t *crcs);
#endif
