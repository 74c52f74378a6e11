/* sion_common.h - calls shared by every kind of open (serial, and later parallel).
 *
 * A container ("SION file set") holds the logical files of N tasks. An open
 * returns a small integer id, the sid (>= 0). Each task's data is a stream
 * stored in one or more *blocks*; block b of task t lives at
 * start[t] + b*globalskip in its physical file and holds at most chunksize[t]
 * bytes. Unlike SIONlib 1.7, sheaf lets one sion_fwrite or sion_fread span
 * chunks and blocks: the data is cut at block ends and the file stays format 5.
 *
 * Errors: every call that fails records a message naming the file and the
 * cause (see sheaf_last_error() in sheaf.h) and, unless disabled with
 * SION_ERROR_MSG=0 / sheaf_set_error_printing(0), prints
 * "SION_ERROR_RETURN on rank <r>, rc=<rc>: <msg>" to stderr as SIONlib does.
 * Return values on error are SIONlib's: SION_NOT_SUCCESS (int status calls),
 * SION_ID_UNDEF (ids), SION_SIZE_NOT_VALID (sizes), 0 (fwrite/fread-like).
 *
 * Thread-safety: calls on *different* sids may run concurrently (the sid table
 * is locked); calls on the *same* sid must not. sion_swap, sion_get_version,
 * sion_get_endianness and sion_keyval_type_to_str are always thread-safe.
 */
#ifndef SION_COMMON_H
#define SION_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "sion_datatypes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t   key;
    sion_int64 num_blocks;
    sion_int64 total_size;
} sion_key_stat_t;

typedef struct {
    int          nfiles;
    const char **names;
    size_t      *sizes;
    int         *roles;
} sion_io_stat_t;

/* ---- data ---------------------------------------------------------------- */

/* Write size*nitems bytes to the current task. A write that fits into one
 * chunk but not into the current block's free space starts the next block (as
 * SIONlib does, so the record stays in one piece); a write larger than a chunk
 * fills the current block and continues in following blocks.
 * Returns nitems, or 0 on error (read handle, I/O error, bad sid). */
size_t sion_fwrite(const void *data, size_t size, size_t nitems, int sid);

/* Read up to size*nitems bytes of the current task, crossing block ends as
 * needed. Returns the number of complete items read (fewer at end of data),
 * 0 on error. */
size_t sion_fread(void *data, size_t size, size_t nitems, int sid);

/* 1 if the current task has no unread bytes left (all blocks consumed), else 0.
 * If only the current block is exhausted, moves to the next block and returns 0.
 * Returns SION_NOT_SUCCESS-compatible -1 on a bad sid. */
int sion_feof(int sid);

/* Write mode: make sure `bytes` can be written contiguously at the current
 * position; starts the next block if the current one cannot take them.
 * Needed before writing through the exported FILE* / fd yourself.
 * Fails (SION_NOT_SUCCESS) if bytes > chunk size or the handle reads. */
int sion_ensure_free_space(int sid, sion_int64 bytes);

/* Unread bytes left in the current block (read mode); free bytes left in the
 * current block (write mode). SION_SIZE_NOT_VALID on a bad sid. */
sion_int64 sion_bytes_avail_in_block(int sid);
sion_int64 sion_bytes_avail_in_chunk(int sid);

/* Move the cursor. rank: task index or SION_CURRENT_RANK. blocknr: block index,
 * SION_CURRENT_BLK, SION_ABSOLUTE_POS (posinblk counts over the task's whole
 * stream) or SION_END_POS (posinblk <= 0 from the end). posinblk: offset in the
 * block or SION_CURRENT_POS. In write mode only the rank may change (serial).
 * Returns SION_SUCCESS or SION_NOT_SUCCESS (out of range, misuse). */
int sion_seek(int sid, int rank, int blocknr, sion_int64 posinblk);
/* Same, and returns the FILE* of the physical file now in use (ansi mode). */
int sion_seek_fp(int sid, int rank, int blocknr, sion_int64 posinblk, FILE **fileptr);

/* Record the bytes written so far in the metadata kept in memory and flush the
 * stdio buffer. (No fsync; the on-disk metadata is written at close.) */
int sion_flush(int sid);

/* Absolute offset of the cursor in its physical file; SION_SIZE_NOT_VALID on error. */
sion_int64 sion_get_position(int sid);

/* ---- information --------------------------------------------------------- */

/* Pointers into the sid's internal arrays (do not free; valid until close).
 * For a multi-file set opened serially the arrays cover all global tasks.
 * blocksizes[ntasks*block + task]. */
int sion_get_locations(int sid, int *ntasks, int *maxchunks, sion_int64 *globalskip,
                       sion_int64 *start_of_varheader, sion_int64 **chunksizes,
                       sion_int64 **globalranks, sion_int64 **blockcount,
                       sion_int64 **blocksizes);
/* Cursor of the current task: block, position in block, blocks used and their sizes. */
int sion_get_current_location(int sid, int *currentblocknr, sion_int64 *currentpos,
                              int *maxchunks, sion_int64 **chunksizes);
/* Cursor of every task (serial opens): arrays of ntasks, internal, do not free. */
int sion_get_current_locations(int sid, int *ntasks, sion_int64 **sion_currentpos,
                               sion_int64 **sion_currentblocknr);
/* (file, local task) pairs per global task; *mapping_size = -1 for a single file. */
int sion_get_mapping(int sid, int *mapping_size, sion_int32 **mapping, int *numfiles);
int sion_get_number_of_files(int sid);
int sion_get_filenumber(int sid);
int sion_is_serial_opened(int sid);
int sion_using_hints(int sid);

int sion_get_file_endianness(int sid);      /* declared user-data order: 1 big, 0 little */
int sion_get_endianness(void);              /* host order: 1 big, 0 little */
int sion_endianness_swap_needed(int sid);   /* 1 if user data order != host order */
/* Byte-reverse n elements of `size` bytes from source into target (may alias);
 * with do_swap == 0 it copies. Thread-safe. */
void sion_swap(void *target, void *source, int size, int n, int do_swap);

sion_int64 sion_get_bytes_written(int sid); /* write mode, else -1 */
sion_int64 sion_get_bytes_read(int sid);    /* read mode, else -1 */

int sion_get_version(int *main_version, int *sub_version, int *patch_level, int *fileformat_version);
int sion_is_thread_safe(void);
int sion_get_sizeof(int sid, int *numbytes, int *numfds);

int   sion_get_keyval_mode(int sid);
char *sion_keyval_type_to_str(int type);

/* ---- low-level file access ------------------------------------------------ */
FILE *sion_get_fp(int sid);       /* NULL in posix mode */
int   sion_get_fd(int sid);       /* -1 on error */
int   sion_set_fp_closed(int sid);
int   sion_set_second_fp(int sid, FILE *fileptr);
int   sion_unset_second_fp(int sid);
int   sion_optimize_fp_buffer(int sid);

/* Locking callbacks (used when the application serialises library calls itself). */
int sion_lock_register_lock_callbacks(int lock(void *), int unlock(void *), void *lock_data);
int sion_lock_user_callbacks_defined(void);

/* Buddy/io-info (populated only in buddy mode, which sheaf does not have yet: NULL). */
sion_io_stat_t *sion_get_io_info(int sid);
sion_io_stat_t *sion_get_io_info_by_spec(int sid, int roles, int flag);
int sion_free_io_info(sion_io_stat_t *p);

#ifdef __cplusplus
}
#endif
#endif
