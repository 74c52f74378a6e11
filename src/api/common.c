/* common.c - data calls and information getters shared by all opens. */
#define _FILE_OFFSET_BITS 64
#include "../sid/sid.h"
#include "../core/journal.h"
#include "../core/error.h"
#include "sion.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t sion_fwrite(const void *data, size_t size, size_t nitems, int sid)
{
    LOOKUP(sid, "sion_fwrite", 0);
    if (size == 0 || nitems == 0)
        return 0;
    if (!data) {
        core_fail(SHEAF_E_ARG, "%s: sion_fwrite with a NULL buffer", c->name);
        FAIL(0);
    }
    if (nitems > SIZE_MAX / size) {
        core_fail(SHEAF_E_ARG, "%s: sion_fwrite size overflow (%zu x %zu)", c->name, size, nitems);
        FAIL(0);
    }
    if (core_write(c, data, (uint64_t)size * nitems))
        FAIL(0);
    return nitems;
}

size_t sion_fread(void *data, size_t size, size_t nitems, int sid)
{
    LOOKUP(sid, "sion_fread", 0);
    if (size == 0 || nitems == 0)
        return 0;
    if (!data) {
        core_fail(SHEAF_E_ARG, "%s: sion_fread with a NULL buffer", c->name);
        FAIL(0);
    }
    if (nitems > SIZE_MAX / size) {
        core_fail(SHEAF_E_ARG, "%s: sion_fread size overflow (%zu x %zu)", c->name, size, nitems);
        FAIL(0);
    }
    uint64_t got = 0;
    if (core_read(c, data, (uint64_t)size * nitems, &got))
        FAIL(0);
    return (size_t)(got / size);
}

int sion_feof(int sid)
{
    LOOKUP(sid, "sion_feof", -1);
    int r = core_eof(c);
    if (r < 0)
        FAIL(-1);
    return r;
}

int sion_ensure_free_space(int sid, sion_int64 bytes)
{
    LOOKUP(sid, "sion_ensure_free_space", SION_NOT_SUCCESS);
    if (core_ensure_space(c, bytes))
        FAIL(SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

sion_int64 sion_bytes_avail_in_block(int sid)
{
    LOOKUP(sid, "sion_bytes_avail_in_block", SION_SIZE_NOT_VALID);
    return core_avail_in_block(c);
}

sion_int64 sion_bytes_avail_in_chunk(int sid) { return sion_bytes_avail_in_block(sid); }

int sion_seek(int sid, int rank, int blocknr, sion_int64 posinblk)
{
    LOOKUP(sid, "sion_seek", SION_NOT_SUCCESS);
    const sid_par_ops *ops = sid_par_ops_of(c);
    int parallel = c->par != NULL; /* opened by the parallel layer */
    int32_t own = ops && ops->one_task && ops->one_task(c) ? c->cur : c->only_task;
    if (own >= 0 && rank != SION_CURRENT_RANK) {
        /* as SIONlib (_sion_seek_on_current_rank_*): on a handle on one task
         * (a non-mapped parallel handle, a sion_open_rank handle) the rank is
         * the task's rank in its physical file (its global rank only in a
         * one-file set) */
        core_task *t = &c->tasks[own];
        if (rank != t->lrank) {
            core_fail(SHEAF_E_ARG,
                      "%s: sion_seek: rank %d is not this task's rank in its file (%d of file %d); "
                      "a %s handle takes the file-local rank or SION_CURRENT_RANK",
                      c->name, rank, t->lrank, c->files[t->file].m.filenumber,
                      parallel ? "parallel" : "sion_open_rank");
            FAIL(SION_NOT_SUCCESS);
        }
        rank = SION_CURRENT_RANK;
    }
    if (core_seek(c, rank, blocknr, posinblk))
        FAIL(SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

int sion_seek_fp(int sid, int rank, int blocknr, sion_int64 posinblk, FILE **fileptr)
{
    int rc = sion_seek(sid, rank, blocknr, posinblk);
    if (rc == SION_SUCCESS && fileptr) {
        core_container *c = api_lookup(sid, "sion_seek_fp");
        *fileptr = c->files[c->tasks[c->cur].file].f.fp;
    }
    return rc;
}

int sion_flush(int sid)
{
    LOOKUP(sid, "sion_flush", SION_NOT_SUCCESS);
    /* write mode: durable (data fsync'ed, progress journaled: see core/journal.h),
     * and what the parallel layer writes for the task (buddy copies) as well */
    const sid_par_ops *ops = sid_par_ops_of(c);
    if (c->mode.write ? core_durable_flush(c) || (ops && ops->flush && ops->flush(c)) : core_flush(c))
        FAIL(SION_NOT_SUCCESS);
    /* SIONlib's value (_sion_flush_block): success only if the cursor is past
     * the start of the current block; a flush in an empty block gives
     * SION_NOT_SUCCESS without a message (everything is flushed all the same) */
    return c->tasks[c->cur].cur_pos > 0 ? SION_SUCCESS : SION_NOT_SUCCESS;
}

sion_int64 sion_get_position(int sid)
{
    LOOKUP(sid, "sion_get_position", SION_SIZE_NOT_VALID);
    int64_t pos;
    if (core_position(c, &pos))
        FAIL(SION_SIZE_NOT_VALID);
    return pos;
}

/* Fill the x_* arrays handed out by sion_get_locations and
 * sion_get_current_locations with the tasks SIONlib's handle would describe:
 * a sion_open_rank handle the tasks of the physical file holding its task, any
 * other handle all of its tasks. Blocks a task does not use are -1 where
 * SIONlib's arrays are filled in memory (write mode, a serial open of a
 * multi-file set) and 0 where it reads them from the file (the writers store
 * 0). Current positions are absolute offsets in the task's physical file. */
static int export_view(core_container *c, int32_t *nout)
{
    int32_t n = c->ntasks, *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    if (!idx)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", c->name);
    if (c->only_task >= 0) { /* the tasks of one file, in their order in that file (local rank) */
        int32_t f = c->tasks[c->only_task].file, k = 0;
        for (int32_t i = 0; i < c->ntasks; i++)
            if (c->tasks[i].file == f)
                k++;
        for (int32_t i = 0; i < k; i++)
            idx[i] = -1;
        int bylrank = 1;
        for (int32_t i = 0; i < c->ntasks && bylrank; i++) {
            int32_t l = c->tasks[i].lrank;
            if (c->tasks[i].file != f)
                continue;
            if (l < 0 || l >= k || idx[l] >= 0)
                bylrank = 0; /* not a permutation: keep the global order */
            else
                idx[l] = i;
        }
        for (int32_t i = 0, j = 0; !bylrank && i < c->ntasks; i++)
            if (c->tasks[i].file == f)
                idx[j++] = i;
        n = k;
    } else {
        for (int32_t i = 0; i < n; i++)
            idx[i] = i;
    }
    int64_t unused = !c->attached && (c->mode.write || c->nfiles > 1) ? -1 : 0;
    int64_t maxb = 1;
    for (int32_t i = 0; i < n; i++)
        if (c->tasks[idx[i]].nblocks > maxb)
            maxb = c->tasks[idx[i]].nblocks;
    free(c->x_chunks);
    free(c->x_granks);
    free(c->x_bcount);
    free(c->x_bsizes);
    free(c->x_curpos);
    free(c->x_curblk);
    size_t sz = (size_t)(n > 0 ? n : 1) * sizeof(int64_t);
    c->x_chunks = malloc(sz);
    c->x_granks = malloc(sz);
    c->x_bcount = malloc(sz);
    c->x_curpos = malloc(sz);
    c->x_curblk = malloc(sz);
    c->x_bsizes = malloc(sz * (size_t)maxb);
    if (!c->x_chunks || !c->x_granks || !c->x_bcount || !c->x_bsizes || !c->x_curpos || !c->x_curblk) {
        free(idx);
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", c->name);
    }
    for (int64_t k = 0; k < (int64_t)n * maxb; k++)
        c->x_bsizes[k] = unused;
    for (int32_t i = 0; i < n; i++) {
        core_task *tk = &c->tasks[idx[i]];
        c->x_chunks[i] = tk->chunksize;
        c->x_granks[i] = tk->globalrank;
        c->x_bcount[i] = tk->nblocks;
        c->x_curpos[i] = tk->start + tk->cur_block * c->files[tk->file].m.globalskip + tk->cur_pos;
        c->x_curblk[i] = tk->cur_block;
        for (int64_t b = 0; b < tk->nblocks; b++)
            c->x_bsizes[b * n + i] = tk->bsize[b];
    }
    free(idx);
    c->x_maxchunks = (int32_t)maxb;
    *nout = n;
    return 0;
}

int sion_get_locations(int sid, int *ntasks, int *maxchunks, sion_int64 *globalskip, sion_int64 *start_of_varheader,
                       sion_int64 **chunksizes, sion_int64 **globalranks, sion_int64 **blockcount,
                       sion_int64 **blocksizes)
{
    LOOKUP(sid, "sion_get_locations", SION_NOT_SUCCESS);
    if (c->mode.write && core_sync(c))
        FAIL(SION_NOT_SUCCESS);
    int32_t n = 0;
    if (export_view(c, &n))
        FAIL(SION_NOT_SUCCESS);
    /* globalskip and start_of_varheader: of the physical file the view is
     * about (a sion_open_rank handle: the rank's file; a serial multi-file
     * open: the file of task 0, as SIONlib's master handle has them) */
    core_meta *m0 = &c->files[c->tasks[c->only_task >= 0 ? c->only_task : 0].file].m;
    if (ntasks)
        *ntasks = n;
    if (maxchunks)
        *maxchunks = c->x_maxchunks;
    if (globalskip)
        *globalskip = m0->globalskip;
    if (start_of_varheader)
        *start_of_varheader =
            c->mode.write ? m0->data_start + (int64_t)c->x_maxchunks * m0->globalskip : m0->start_of_varheader;
    /* int64_t and sion_int64 have the same size and representation on every
     * supported platform (checked in CMake); hand out the internal arrays. */
    if (chunksizes)
        *chunksizes = (sion_int64 *)(void *)c->x_chunks;
    if (globalranks)
        *globalranks = (sion_int64 *)(void *)c->x_granks;
    if (blockcount)
        *blockcount = (sion_int64 *)(void *)c->x_bcount;
    if (blocksizes)
        *blocksizes = (sion_int64 *)(void *)c->x_bsizes;
    return SION_SUCCESS;
}

int sion_get_current_location(int sid, int *currentblocknr, sion_int64 *currentpos, int *maxchunks,
                              sion_int64 **chunksizes)
{
    LOOKUP(sid, "sion_get_current_location", SION_NOT_SUCCESS);
    if (core_sync(c))
        FAIL(SION_NOT_SUCCESS);
    core_task *t = &c->tasks[c->cur];
    if (currentblocknr)
        *currentblocknr = (int)t->cur_block;
    if (currentpos)
        *currentpos = t->cur_pos;
    if (maxchunks)
        *maxchunks = (int)t->nblocks;
    if (chunksizes)
        *chunksizes = (sion_int64 *)(void *)t->bsize;
    return SION_SUCCESS;
}

int sion_get_current_locations(int sid, int *ntasks, sion_int64 **currentpos, sion_int64 **currentblocknr)
{
    LOOKUP(sid, "sion_get_current_locations", SION_NOT_SUCCESS);
    int32_t n = 0;
    if (core_sync(c) || export_view(c, &n))
        FAIL(SION_NOT_SUCCESS);
    if (ntasks)
        *ntasks = n;
    if (currentpos)
        *currentpos = (sion_int64 *)(void *)c->x_curpos;
    if (currentblocknr)
        *currentblocknr = (sion_int64 *)(void *)c->x_curblk;
    return SION_SUCCESS;
}

int sion_get_mapping(int sid, int *mapping_size, sion_int32 **mapping, int *numfiles)
{
    LOOKUP(sid, "sion_get_mapping", SION_NOT_SUCCESS);
    if (mapping_size)
        *mapping_size = c->mapping ? c->ntasks : -1;
    if (mapping)
        *mapping = c->mapping;
    if (numfiles)
        *numfiles = c->files[0].m.nfiles;
    return SION_SUCCESS;
}

int sion_get_number_of_files(int sid)
{
    LOOKUP(sid, "sion_get_number_of_files", SION_SIZE_NOT_VALID);
    return c->files[0].m.nfiles;
}

int sion_get_filenumber(int sid)
{
    LOOKUP(sid, "sion_get_filenumber", SION_SIZE_NOT_VALID);
    /* SIONlib's: the number in the set of the file the handle is on (as its
     * header says: the serial writer stores 1, a parallel writer 0..n-1); a
     * serial open of a whole multi-file set is 0, whatever task is current */
    if (c->attached) /* a parallel handle: its files carry their number in the set */
        return c->files[c->tasks[c->cur].file].m.filenumber;
    if (c->only_task >= 0) /* sion_open_rank: the file that holds the task */
        return c->files[c->tasks[c->only_task].file].m.filenumber;
    if (c->nfiles > 1)
        return 0;
    return c->files[0].m.filenumber;
}

int sion_is_serial_opened(int sid)
{
    LOOKUP(sid, "sion_is_serial_opened", SION_SIZE_NOT_VALID);
    return c->attached ? 0 : 1; /* parallel opens and their duplicates are attached tasks */
}

int sion_using_hints(int sid)
{
    LOOKUP(sid, "sion_using_hints", SION_SIZE_NOT_VALID);
    return 0;
}

int sion_get_file_endianness(int sid)
{
    LOOKUP(sid, "sion_get_file_endianness", -1);
    return c->data_big;
}

int sion_endianness_swap_needed(int sid)
{
    LOOKUP(sid, "sion_endianness_swap_needed", -1);
    return c->data_big != sion_get_endianness();
}

sion_int64 sion_get_bytes_written(int sid)
{
    LOOKUP(sid, "sion_get_bytes_written", SION_SIZE_NOT_VALID);
    if (!c->mode.write || core_sync(c))
        return SION_SIZE_NOT_VALID;
    return core_task_total(&c->tasks[c->cur]);
}

sion_int64 sion_get_bytes_read(int sid)
{
    LOOKUP(sid, "sion_get_bytes_read", SION_SIZE_NOT_VALID);
    if (c->mode.write)
        return SION_SIZE_NOT_VALID;
    /* SIONlib's: the cursor's offset in the current task's data (blocks before
     * the current one plus the position in it), not a running total */
    if (core_sync(c))
        FAIL(SION_SIZE_NOT_VALID);
    core_task *t = &c->tasks[c->cur];
    int64_t pos = t->cur_pos;
    for (int64_t b = 0; b < t->cur_block; b++)
        pos += t->bsize[b];
    return pos;
}

int sion_get_version(int *main_version, int *sub_version, int *patch_level, int *fileformat_version)
{
    if (main_version)
        *main_version = SION_MAIN_VERSION;
    if (sub_version)
        *sub_version = SION_SUB_VERSION;
    if (patch_level)
        *patch_level = SION_VERSION_PATCHLEVEL;
    if (fileformat_version)
        *fileformat_version = SION_FILEFORMAT_VERSION;
    return SION_SUCCESS;
}

int sion_is_thread_safe(void) { return 1; }

int sion_get_sizeof(int sid, int *numbytes, int *numfds)
{
    if (numbytes)
        *numbytes = SION_SIZE_NOT_VALID; /* as SIONlib, also on a bad sid */
    if (numfds)
        *numfds = SION_SIZE_NOT_VALID;
    core_clear_error();
    /* not LOOKUP: as SIONlib, also a mapped open's process that owns no task
     * (its sid has only the set's state: no file open, numfds 0) */
    core_container *c = api_lookup(sid, "sion_get_sizeof");
    if (!c)
        FAIL(SION_SIZE_NOT_VALID);
    api_lock_ticks(1); /* SIONlib's second lookup (LOOKUP) */
    size_t n = sizeof *c + (size_t)c->nfiles * sizeof *c->files + (size_t)c->ntasks * sizeof *c->tasks;
    for (int32_t t = 0; t < c->ntasks; t++)
        n += (size_t)c->tasks[t].cap * 8;
    if (numbytes)
        *numbytes = n > INT32_MAX ? INT32_MAX : (int)n;
    if (numfds)
        *numfds = c->ntasks < 1 ? 0 : c->nfiles;
    return SION_SUCCESS;
}

int sion_get_keyval_mode(int sid)
{
    LOOKUP(sid, "sion_get_keyval_mode", SION_KEYVAL_UNKNOWN);
    return c->keyval;
}

char *sion_keyval_type_to_str(int type)
{
    switch (type) {
    case SION_KEYVAL_NONE:
        return "SION_KEYVAL_NONE";
    case SION_KEYVAL_INLINE:
        return "SION_KEYVAL_INLINE";
    case SION_KEYVAL_META:
        return "SION_KEYVAL_META";
    case SION_KEYVAL_HASH:
        return "SION_KEYVAL_HASH";
    case SION_KEYVAL_UNKNOWN:
        return "SION_KEYVAL_UNKNOWN";
    case SION_KEYVAL_NOTSET:
        return "SION_KEYVAL_NOTSET";
    default:
        return "unknown";
    }
}

FILE *sion_get_fp(int sid)
{
    LOOKUP(sid, "sion_get_fp", NULL);
    return c->files[c->tasks[c->cur].file].f.fp;
}

int sion_get_fd(int sid)
{
    LOOKUP(sid, "sion_get_fd", -1);
    return c->files[c->tasks[c->cur].file].f.fd;
}

/* The FILE* stays owned by sheaf; these SIONlib hooks for compression layers
 * are accepted for source compatibility but have no effect. */
int sion_set_fp_closed(int sid)
{
    LOOKUP(sid, "sion_set_fp_closed", SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

int sion_set_second_fp(int sid, FILE *fileptr)
{
    LOOKUP(sid, "sion_set_second_fp", SION_NOT_SUCCESS);
    (void)fileptr;
    core_fail(SHEAF_E_ARG, "%s: sion_set_second_fp is not supported by sheaf", c->name);
    FAIL(SION_NOT_SUCCESS);
}

int sion_unset_second_fp(int sid)
{
    LOOKUP(sid, "sion_unset_second_fp", SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

int sion_optimize_fp_buffer(int sid)
{
    LOOKUP(sid, "sion_optimize_fp_buffer", SION_NOT_SUCCESS);
    /* setvbuf is only allowed before the first I/O on a stream: a no-op here */
    return SION_SUCCESS;
}

int sion_lock_register_lock_callbacks(int lock(void *), int unlock(void *), void *lock_data)
{
    core_clear_error();
    if (api_set_lock_callbacks(lock, unlock, lock_data)) {
        core_report_error_rc(-1, SION_NOT_SUCCESS);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}

int sion_lock_user_callbacks_defined(void) { return api_lock_callbacks_defined(); }

/* ---- I/O information (buddy mode) ----------------------------------------
 * As SIONlib: NULL for a sid not opened in buddy mode; in buddy read mode an
 * empty list; in buddy write mode the physical files this task writes into
 * and its bytes there: its file (SION_ROLE_WRITER), then per copy level the
 * copy member holding its data (SION_ROLE_SENDER: written by its partner
 * tasks) and the copy member its group collects (SION_ROLE_COLLECTOR for the
 * task writing it, SION_ROLE_NOWRITER for the others; 0 bytes: its own entry
 * there is empty). roles selects which roles are listed. */
static sion_io_stat_t *io_info_alloc(int n)
{
    sion_io_stat_t *p = calloc(1, sizeof *p);
    size_t k = n > 0 ? (size_t)n : 1;
    if (p) {
        p->names = calloc(k, sizeof *p->names);
        p->sizes = calloc(k, sizeof *p->sizes);
        p->roles = calloc(k, sizeof *p->roles);
    }
    if (!p || !p->names || !p->sizes || !p->roles) {
        sion_free_io_info(p);
        core_fail(SHEAF_E_NOMEM, "sion_get_io_info: out of memory");
        return NULL;
    }
    return p;
}

/* Add an entry; 0 or an error. */
static int io_info_add(sion_io_stat_t *p, const char *name, int64_t n, int role)
{
    int i = p->nfiles;
    if (!(p->names[i] = strdup(name ? name : "")))
        return core_fail(SHEAF_E_NOMEM, "sion_get_io_info: out of memory");
    p->sizes[i] = n > 0 ? (size_t)n : 0;
    p->roles[i] = role;
    p->nfiles = i + 1;
    return 0;
}

sion_io_stat_t *sion_get_io_info(int sid)
{
    return sion_get_io_info_by_spec(sid, SION_ROLE_COLLECTOR | SION_ROLE_WRITER | SION_ROLE_NOWRITER,
                                    SION_GET_IO_INFO_FLAG_NONE);
}

sion_io_stat_t *sion_get_io_info_by_spec(int sid, int roles, int flag)
{
    (void)flag; /* SIONlib defines only SION_GET_IO_INFO_FLAG_NONE */
    LOOKUP(sid, "sion_get_io_info", NULL);
    const sid_par_ops *ops = sid_par_ops_of(c);
    int nx = ops && ops->io_files ? ops->io_files(c, NULL, 0) : -1;
    if (nx < 0)
        return NULL; /* not in buddy mode: nothing to report (SIONlib's answer) */
    sid_io_file *x = calloc((size_t)nx + 1, sizeof *x);
    sion_io_stat_t *p = x ? io_info_alloc(nx + 1) : NULL;
    if (!p) {
        free(x);
        if (!x)
            core_fail(SHEAF_E_NOMEM, "sion_get_io_info: out of memory");
        FAIL(NULL);
    }
    nx = ops->io_files(c, x, nx);
    int rc = 0;
    if (c->mode.write && (roles & SION_ROLE_WRITER))
        rc = core_sync(c) ? -1 : io_info_add(p, c->name, core_task_total(&c->tasks[c->cur]), SION_ROLE_WRITER);
    for (int i = 0; !rc && i < nx; i++)
        if (roles & x[i].role)
            rc = io_info_add(p, x[i].name, x[i].bytes, x[i].role);
    free(x);
    if (rc) {
        sion_free_io_info(p);
        FAIL(NULL);
    }
    return p;
}

int sion_free_io_info(sion_io_stat_t *p)
{
    if (!p)
        return SION_SUCCESS;
    for (int i = 0; p->names && i < p->nfiles; i++)
        free((char *)p->names[i]);
    free(p->names);
    free(p->sizes);
    free(p->roles);
    free(p);
    return SION_SUCCESS;
}
