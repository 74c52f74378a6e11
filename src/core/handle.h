/* handle.h - the in-memory state of an open container: its physical files,
 * its tasks with their block tables and cursors. Allocation, release, the
 * growth of a task's block table and where a block lives in its file.
 *
 * The lowest module that knows core_container: the streams (stream.h), the
 * checksums (checksum.h), key-value records (keyval.h), the journal
 * (journal.h) and the opens and closes (container.h) build on it; it calls
 * none of them (a key-value index is released through c->kv_release).
 * Module order of src/core: README.md. Not thread-safe: one container, one
 * thread at a time. */
#ifndef CORE_HANDLE_H
#define CORE_HANDLE_H
#include "format.h"
#include "io.h"
#include "mode.h"
#include <stdint.h>

typedef struct core_task {
    int64_t chunksize; /* capacity of each block */
    int64_t globalrank;
    int64_t start;     /* file offset of block 0 */
    int32_t file;      /* index into container.files */
    int32_t lrank;     /* task index inside that physical file */
    int64_t nblocks;   /* blocks in use (>= 1) */
    int64_t cap;       /* allocated entries of bsize */
    int64_t *bsize;    /* bytes held by each block */
    int64_t cur_block; /* cursor */
    int64_t cur_pos;
    /* checksums (checksum.h), allocated with bsize when crc_on */
    int crc_on;
    uint32_t *bcrc;   /* per block: write: running CRC-32C; read: the stored one */
    int64_t *bcrclen; /* write: bytes the running CRC covers; read: 0 unchecked, 1 verified, -1 damaged */
} core_task;

typedef struct core_pfile {
    core_file f;
    core_meta m;
    int jfd1; /* journal descriptor + 1 (0: not open), journal.c */
} core_pfile;

typedef struct core_kv core_kv;
typedef struct core_container core_container;
/* Names member k of a set (malloc'd; NULL = failure): see core_open_read_named. */
typedef char *(*core_name_fn)(void *ctx, const char *base, int32_t k); /* key-value index, keyval.c */

struct core_container {
    char *name; /* name given to open (physical file 0) */
    core_mode mode;
    int32_t nfiles;
    core_pfile *files;
    int32_t ntasks; /* global tasks covered */
    core_task *tasks;
    int32_t cur;       /* current task */
    int32_t only_task; /* >= 0: opened with open_rank, only this task */
    int32_t fsblksize;
    int keyval;       /* SION_KEYVAL_* */
    int data_big;     /* declared user-data order */
    int32_t *mapping; /* [2*ntasks] (file, lrank) when nfiles > 1 */
    /* arrays handed out by the information getters (built on demand, src/api/common.c) */
    int64_t *x_chunks, *x_granks, *x_bcount, *x_bsizes, *x_curpos, *x_curblk;
    int32_t x_maxchunks;
    core_kv *kv;                           /* inline key-value index (keyval.c), NULL until used */
    void (*kv_release)(core_container *c); /* set by keyval.c with kv: frees it (called by
                                            * core_container_free, which sits below keyval) */
    void *par;                             /* state of a parallel open (src/par), NULL for serial opens */
    int dup;                               /* made by sion_dup: released with sion_dedup */
    uint64_t only_key;                     /* dup with SION_DUP_RANK_KEY: the one key readable */
    int key_only;
    core_name_fn member_name; /* during core_open_read_named only */
    void *member_ctx;
    int cksum;    /* write: keep block checksums; read: the file has them (verified on read) */
    int attached; /* one task attached to a file written in parallel (partask.c):
                          * closing it never writes metadata, its master does */
};

/* Allocate an empty container / free one (closing its files, no metadata written). */
core_container *core_container_new(const char *name, const core_mode *mode);
void core_container_free(core_container *c);
/* Make room for n entries in a task's block table (and its CRCs when crc_on). */
int core_task_grow(core_task *t, int64_t n, const char *name);

/* The physical file of task t, and the file offset of its block b. */
static inline core_file *core_task_file(core_container *c, const core_task *t) { return &c->files[t->file].f; }
static inline int64_t core_block_offset(const core_container *c, const core_task *t, int64_t b)
{
    return t->start + b * c->files[t->file].m.globalskip;
}
#endif
