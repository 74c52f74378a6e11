/* stream.c - the per-task logical stream: write, read, seek, end-of-file.
 * A task's stream is the concatenation of its blocks; block b lives at
 * start + b*globalskip of the task's physical file. */
#define _FILE_OFFSET_BITS 64
#include "stream.h"
#include "checksum.h"
#include "error.h"
#include "sion_const.h"

static core_task *cur_task(core_container *c) { return &c->tasks[c->cur]; }

static core_file *task_file(core_container *c, const core_task *t) { return core_task_file(c, t); }

static int64_t block_offset(core_container *c, const core_task *t, int64_t b) { return core_block_offset(c, t, b); }

int64_t core_task_total(const core_task *t)
{
    int64_t s = 0;
    for (int64_t b = 0; b < t->nblocks; b++)
        s += t->bsize[b];
    return s;
}

int core_place(core_container *c)
{
    core_task *t = cur_task(c);
    return core_file_seek(task_file(c, t), block_offset(c, t, t->cur_block) + t->cur_pos);
}

/* Read mode: learn what the application read through the exported FILE* or
 * fd. SIONlib takes the cursor from the file position, which is what makes its
 * documented loop "n = sion_bytes_avail_in_block(sid); fread(buf, 1, n, fp);
 * ... while (!sion_feof(sid))" work. The library itself always leaves the file
 * at the cursor, so this changes nothing unless the application moved it. A
 * position outside the current block's chunk is not ours to interpret. */
/* Offset of the physical file's position from the start of the current block. */
static int pos_in_block(core_container *c, core_task *t, int64_t *rel)
{
    int64_t pos;
    int rc = core_file_tell(task_file(c, t), &pos);
    if (!rc)
        *rel = pos - block_offset(c, t, t->cur_block);
    return rc;
}

static int read_sync(core_container *c)
{
    core_task *t = cur_task(c);
    int64_t rel;
    int rc = pos_in_block(c, t, &rel);
    if (rc)
        return rc;
    if (rel >= 0 && rel <= t->chunksize)
        t->cur_pos = rel < t->bsize[t->cur_block] ? rel : t->bsize[t->cur_block];
    return 0;
}

/* Learn what the application wrote (write mode) or read (read mode) through
 * the exported FILE* or fd. */
/* Write mode: take what the application wrote through the raw handle into
 * the block table; *rel receives the file position relative to the block. */
static int write_sync(core_container *c, int64_t *rel)
{
    core_task *t = cur_task(c);
    int rc = pos_in_block(c, t, rel);
    if (rc)
        return rc;
    int64_t used = *rel > t->chunksize ? t->chunksize : *rel; /* wrote past its chunk through the raw handle */
    if (used > t->bsize[t->cur_block]) {
        t->bsize[t->cur_block] = used;
        t->cur_pos = used;
    }
    return 0;
}

int core_sync(core_container *c)
{
    int64_t rel;
    return c->mode.write ? write_sync(c, &rel) : read_sync(c);
}

static int new_block(core_container *c, core_task *t)
{
    int rc = core_task_grow(t, t->nblocks + 1, c->name);
    if (rc)
        return rc;
    t->bsize[t->nblocks] = 0;
    t->nblocks++;
    t->cur_block = t->nblocks - 1;
    t->cur_pos = 0;
    return core_place(c);
}

int core_ensure_space(core_container *c, int64_t n)
{
    if (!c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: sion_ensure_free_space on a container opened for reading", c->name);
    core_task *t = cur_task(c);
    if (n < 0 || n > t->chunksize)
        return core_fail(SHEAF_E_ARG, "%s: cannot reserve %lld bytes in task %d, its chunk size is %lld", c->name,
                         (long long)n, c->cur, (long long)t->chunksize);
    int rc = core_sync(c);
    if (rc)
        return rc;
    if (t->bsize[t->cur_block] + n > t->chunksize)
        return new_block(c, t);
    return 0;
}

int core_write(core_container *c, const void *buf, uint64_t n)
{
    if (!c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: write on a container opened for reading", c->name);
    core_task *t = cur_task(c);
    if (n == 0)
        return 0;
    if (t->chunksize == 0)
        return core_fail(SHEAF_E_ARG, "%s: task %d has chunk size 0, nothing can be written", c->name, c->cur);
    int64_t rel;
    int rc = write_sync(c, &rel);
    if (rc)
        return rc;
    /* keep a record that fits in one chunk in one piece, as SIONlib does;
     * otherwise continue at the end of the current block. One position
     * query per call: from here on the file is at the end of the block. */
    if (n <= (uint64_t)t->chunksize && t->bsize[t->cur_block] + (int64_t)n > t->chunksize)
        rc = new_block(c, t);
    else if (rel != t->bsize[t->cur_block])
        rc = core_place(c);
    if (rc)
        return rc;
    const char *p = buf;
    core_file *f = task_file(c, t);
    while (n > 0) {
        int64_t room = t->chunksize - t->bsize[t->cur_block];
        if (room == 0) {
            if ((rc = new_block(c, t)))
                return rc;
            continue;
        }
        int64_t want = (uint64_t)room < n ? room : (int64_t)n;
        if ((rc = core_file_write(f, p, (size_t)want)))
            return rc;
        core_cksum_update(t, p, want);
        t->bsize[t->cur_block] += want;
        t->cur_pos = t->bsize[t->cur_block];
        p += want;
        n -= (uint64_t)want;
    }
    return 0;
}

int core_read(core_container *c, void *buf, uint64_t n, uint64_t *got)
{
    *got = 0;
    if (c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: read on a container opened for writing", c->name);
    core_task *t = cur_task(c);
    core_file *f = task_file(c, t);
    char *p = buf;
    int rc = read_sync(c), moved = 0;
    if (rc)
        return rc;
    while (n > 0) {
        int64_t avail = t->bsize[t->cur_block] - t->cur_pos;
        if (avail <= 0) {
            if (t->cur_block + 1 >= t->nblocks)
                break;
            t->cur_block++;
            t->cur_pos = 0;
            moved = 1;
            continue;
        }
        moved = 0;
        int64_t want = (uint64_t)avail < n ? avail : (int64_t)n;
        if (t->crc_on && t->bcrclen[t->cur_block] != 1 && (rc = core_cksum_verify_block(c, c->cur, t->cur_block)))
            return rc;
        rc = core_file_pread(f, p, (size_t)want, block_offset(c, t, t->cur_block) + t->cur_pos);
        if (rc)
            return rc;
        t->cur_pos += want;
        *got += (uint64_t)want;
        p += want;
        n -= (uint64_t)want;
    }
    /* stopped behind skipped (empty) blocks: keep the file at the cursor */
    return moved ? core_place(c) : 0;
}

int core_eof(core_container *c)
{
    core_task *t = cur_task(c);
    if (c->mode.write) /* the cursor is always at the end of the data (SIONlib: 1 as well) */
        return 1;
    int rc0 = read_sync(c);
    if (rc0)
        return rc0;
    while (t->cur_pos >= t->bsize[t->cur_block]) {
        if (t->cur_block + 1 >= t->nblocks)
            return 1;
        t->cur_block++;
        t->cur_pos = 0;
        int rc = core_place(c);
        if (rc)
            return rc;
    }
    return 0;
}

int64_t core_avail_in_block(core_container *c)
{
    core_task *t = cur_task(c);
    if (c->mode.write) {
        if (core_sync(c))
            return SION_SIZE_NOT_VALID;
        return t->chunksize - t->bsize[t->cur_block];
    }
    if (read_sync(c))
        return SION_SIZE_NOT_VALID;
    return t->bsize[t->cur_block] - t->cur_pos;
}

int core_position(core_container *c, int64_t *pos)
{
    core_task *t = cur_task(c);
    int rc = core_sync(c);
    if (rc)
        return rc;
    *pos = block_offset(c, t, t->cur_block) + t->cur_pos;
    return 0;
}

int core_flush(core_container *c)
{
    int rc = core_sync(c);
    if (rc)
        return rc;
    core_task *t = cur_task(c);
    return core_file_flush(task_file(c, t));
}

/* Resolve an absolute offset in the task's stream to (block, pos). */
static int seek_absolute(core_container *c, core_task *t, int64_t off)
{
    int64_t total = core_task_total(t);
    if (off < 0 || off > total)
        return core_fail(SHEAF_E_ARG, "%s: seek to byte %lld of task %d, which holds %lld bytes", c->name,
                         (long long)off, c->cur, (long long)total);
    int64_t b = 0;
    while (b + 1 < t->nblocks && off >= t->bsize[b]) {
        off -= t->bsize[b];
        b++;
    }
    t->cur_block = b;
    t->cur_pos = off;
    return 0;
}

int core_seek(core_container *c, int32_t rank, int64_t blocknr, int64_t pos)
{
    if (c->attached && rank != SION_CURRENT_RANK) {
        /* a parallel handle: rank is a global task number, held by this handle or not */
        int32_t i = 0;
        while (i < c->ntasks && c->tasks[i].globalrank != rank)
            i++;
        if (i == c->ntasks) {
            if (c->ntasks == 1)
                return core_fail(SHEAF_E_ARG, "%s: this parallel handle holds task %lld only, cannot seek to task %d",
                                 c->name, (long long)c->tasks[0].globalrank, rank);
            return core_fail(SHEAF_E_ARG, "%s: task %d is not one of the %d tasks of this handle", c->name, rank,
                             c->ntasks);
        }
        rank = i;
    }
    if (rank != SION_CURRENT_RANK && (rank < 0 || rank >= c->ntasks))
        return core_fail(SHEAF_E_ARG, "%s: seek to task %d, the container has tasks 0..%d", c->name, rank,
                         c->ntasks - 1);
    if (c->only_task >= 0 && rank != SION_CURRENT_RANK && rank != c->only_task)
        return core_fail(SHEAF_E_ARG, "%s: opened for task %d only, cannot seek to task %d", c->name, c->only_task,
                         rank);
    int rc;
    if (c->mode.write) {
        if (blocknr != SION_CURRENT_BLK || pos != SION_CURRENT_POS)
            return core_fail(SHEAF_E_ARG,
                             "%s: in write mode only the task can be changed by a seek "
                             "(block and position must be SION_CURRENT_BLK / SION_CURRENT_POS)",
                             c->name);
        if ((rc = core_sync(c)))
            return rc;
        if (rank != SION_CURRENT_RANK)
            c->cur = rank;
        return core_place(c);
    }
    if ((rc = read_sync(c))) /* keep what was read through the FILE* of the task left */
        return rc;
    int32_t prev = c->cur;
    if (rank != SION_CURRENT_RANK)
        c->cur = rank;
    core_task *t = cur_task(c);
    if (blocknr == SION_ABSOLUTE_POS) {
        rc = seek_absolute(c, t, pos);
    } else if (blocknr == SION_END_POS) {
        rc = pos > 0
                 ? core_fail(SHEAF_E_ARG, "%s: SION_END_POS needs an offset <= 0, got %lld", c->name, (long long)pos)
                 : seek_absolute(c, t, core_task_total(t) + pos);
    } else {
        int64_t b = blocknr == SION_CURRENT_BLK ? t->cur_block : blocknr;
        if (b < 0 || b >= t->nblocks) {
            rc = core_fail(SHEAF_E_ARG, "%s: task %d has blocks 0..%lld, cannot seek to block %lld", c->name, c->cur,
                           (long long)t->nblocks - 1, (long long)blocknr);
        } else {
            int64_t p = pos == SION_CURRENT_POS ? (b == t->cur_block ? t->cur_pos : 0) : pos;
            if (p < 0 || p > t->bsize[b]) {
                rc = core_fail(SHEAF_E_ARG, "%s: position %lld outside block %lld of task %d (%lld bytes)", c->name,
                               (long long)pos, (long long)b, c->cur, (long long)t->bsize[b]);
            } else {
                t->cur_block = b;
                t->cur_pos = p;
                /* a saved cursor at a block end moves on to the next block */
                if (rank != SION_CURRENT_RANK && blocknr == SION_CURRENT_BLK && pos == SION_CURRENT_POS &&
                    p == t->bsize[b] && b + 1 < t->nblocks) {
                    t->cur_block = b + 1;
                    t->cur_pos = 0;
                }
                rc = 0;
            }
        }
    }
    if (rc) {
        c->cur = prev;
        return rc;
    }
    return core_place(c);
}
