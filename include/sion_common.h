/* sion_common.h - calls shared by every kind of open (serial, and later parallel).
 *
 * A container ("SION file set") holds the logical files of N tasks. An open
 * returns a small integer id, the sid (>= 0). Each task's data is a stream
 * stored in one or more *blocks*; block b of task t lives at
 * start[t] + b*globalskip in its physical file and holds at most chunksize[t]
 * bytes. Unlike SIONlib 1.7, sheaf lets one sion_fwrite or sion_fread span
 * chunks and blocks: the data is cut at block ends and the file stays format 5.
 *
 * Sids are numbered as SIONlib numbers them: the first serial open of a
 * process gets 0; an MPI program's first sid is 1 (the MPI layer's generic API
 * id takes 0: API ids and sids share the numbers); a serial open of an n-file
 * set uses n+1 numbers; a parallel read open uses one more number on global
 * task 0, which SIONlib spends on a look at file 0. Closed numbers are handed
 * out again as SIONlib does: only when no fresh number is left (and from 0
 * once all ids are closed); until then a closed sid is refused with a message
 * saying it was closed, afterwards it names the newer open, as in SIONlib.
 * SHEAF_SID_NOREUSE=1 in the environment makes every closed sid invalid for
 * good (numbers then only increase).
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
#include "sheaf_export.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "sion_datatypes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t key;
    sion_int64 num_blocks;
    sion_int64 total_size;
} sion_key_stat_t;

typedef struct {
    int nfiles;
    const char **names;
    size_t *sizes;
    int *roles;
} sion_io_stat_t;

/* ---- data ---------------------------------------------------------------- */

/* Write size*nitems bytes to the current task. A write that fits into one
 * chunk but not into the current block's free space starts the next block (as
 * SIONlib does, so the record stays in one piece); a write larger than a chunk
 * fills the current block and continues in following blocks.
 * Returns nitems, or 0 on error (read handle, I/O error, bad sid). */
SHEAF_API size_t sion_fwrite(const void *data, size_t size, size_t nitems, int sid);

/* Read up to size*nitems bytes of the current task, crossing block ends as
 * needed. Returns the number of complete items read (fewer at end of data),
 * 0 on error. */
SHEAF_API size_t sion_fread(void *data, size_t size, size_t nitems, int sid);

/* 1 if the current task has no unread bytes left (all blocks consumed), else 0.
 * If only the current block is exhausted, moves to the next block and returns 0.
 * Write mode: always 1 (the cursor is at the end of the data; as SIONlib).
 * Returns -1 on a bad sid. */
SHEAF_API int sion_feof(int sid);

/* Write mode: make sure `bytes` can be written contiguously at the current
 * position; starts the next block if the current one cannot take them.
 * Needed before writing through the exported FILE* / fd yourself.
 * Fails (SION_NOT_SUCCESS) if bytes > chunk size or the handle reads. */
SHEAF_API int sion_ensure_free_space(int sid, sion_int64 bytes);

/* Unread bytes left in the current block (read mode); free bytes left in the
 * current block (write mode: SIONlib 1.7 returns a meaningless negative value
 * there, see README). SION_SIZE_NOT_VALID on a bad sid. */
SHEAF_API sion_int64 sion_bytes_avail_in_block(int sid);
SHEAF_API sion_int64 sion_bytes_avail_in_chunk(int sid);

/* Move the cursor. rank: task index or SION_CURRENT_RANK. blocknr: block index,
 * SION_CURRENT_BLK, SION_ABSOLUTE_POS (posinblk counts over the task's whole
 * stream) or SION_END_POS (posinblk <= 0 from the end). posinblk: offset in the
 * block or SION_CURRENT_POS. In write mode only the rank may change (serial).
 * Parallel (non-mapped) handles: rank must be SION_CURRENT_RANK or the task's
 * rank in its physical file (as in SIONlib; in a one-file set that is its rank
 * in the communicator); so do sion_open_rank handles (the rank's position in
 * its file, not the rank passed to the open); mapped handles take global ranks.
 * Returns SION_SUCCESS or SION_NOT_SUCCESS (out of range, misuse). */
SHEAF_API int sion_seek(int sid, int rank, int blocknr, sion_int64 posinblk);
/* Same, and returns the FILE* of the physical file now in use (ansi mode). */
SHEAF_API int sion_seek_fp(int sid, int rank, int blocknr, sion_int64 posinblk, FILE **fileptr);

/* Write mode: make what the sid's task(s) wrote so far durable. The bytes written
 * (also through the exported FILE* or fd) are taken into the block table in memory,
 * the stdio buffer is flushed, the physical file is fsync'ed, then one record per task
 * with its block table (and, in "checksum" mode, its block CRCs) is appended to the
 * journal "<file>.sheafj" and fdatasync'ed;
 * buddy copies are flushed the same way. After a crash, sheaf recover (sheaf_recover in
 * sheaf.h) restores every byte written before the last successful sion_flush. The
 * container's own metadata are still written only at close. Costs two fsyncs per
 * physical file: call it at checkpoint granularity. Not collective (each task flushes
 * its own data). Read mode: flushes the stdio buffer, nothing to make durable.
 * Returns SIONlib's value: SION_SUCCESS if the cursor is past the start of
 * the current block, SION_NOT_SUCCESS without a message if it is at the start
 * (nothing written in a new block yet; the flush is done all the same), and
 * SION_NOT_SUCCESS with a message (naming the file) on an error or a bad sid: a
 * write, fsync or the journal append failed, or the journal's name is a symbolic
 * link or not a regular file. See doc/reliability.md. */
SHEAF_API int sion_flush(int sid);

/* Absolute offset of the cursor in its physical file; SION_SIZE_NOT_VALID on error. */
SHEAF_API sion_int64 sion_get_position(int sid);

/* ---- information --------------------------------------------------------- */

/* Pointers into the sid's internal arrays (do not free; valid until the next
 * call of this function or sion_get_current_locations, or the close).
 * For a multi-file set opened serially the arrays cover all global tasks
 * (globalskip and start_of_varheader: of the file holding task 0); for a
 * sion_open_rank handle, the tasks of the physical file holding its task; for
 * a parallel handle, its own task(s) (SIONlib: NULL arrays there, see README).
 * blocksizes[ntasks*block + task]; entries of blocks a task does not use are
 * -1 in write mode and for a serial open of a multi-file set, and 0 (as the
 * file stores them) otherwise, as in SIONlib. */
SHEAF_API int sion_get_locations(int sid, int *ntasks, int *maxchunks, sion_int64 *globalskip,
                                 sion_int64 *start_of_varheader, sion_int64 **chunksizes, sion_int64 **globalranks,
                                 sion_int64 **blockcount, sion_int64 **blocksizes);
/* Cursor of the current task: block, position in block, blocks used and their sizes. */
SHEAF_API int sion_get_current_location(int sid, int *currentblocknr, sion_int64 *currentpos, int *maxchunks,
                                        sion_int64 **chunksizes);
/* Cursor of every task (serial opens): arrays of ntasks, internal, do not
 * free: the absolute offset of each task's cursor in its physical file (as
 * SIONlib), and its block. SIONlib updates the current task's entries only
 * when another task is selected; sheaf's are always up to date. */
SHEAF_API int sion_get_current_locations(int sid, int *ntasks, sion_int64 **sion_currentpos,
                                         sion_int64 **sion_currentblocknr);
/* (file, local task) pairs per global task; *mapping_size = -1 for a single file. */
SHEAF_API int sion_get_mapping(int sid, int *mapping_size, sion_int32 **mapping, int *numfiles);
/* These four return -1 (SION_SIZE_NOT_VALID) on a bad sid, as SIONlib.
 * sion_get_filenumber: the number in the set of the physical file the handle
 * is on, as its header says (1 for a file written by the serial sion_open,
 * 0..n-1 for parallel writers); 0 for a serial open of a whole multi-file set. */
SHEAF_API int sion_get_number_of_files(int sid);
SHEAF_API int sion_get_filenumber(int sid);
SHEAF_API int sion_is_serial_opened(int sid);
SHEAF_API int sion_using_hints(int sid);

SHEAF_API int sion_get_file_endianness(int sid);    /* declared user-data order: 1 big, 0 little */
SHEAF_API int sion_get_endianness(void);            /* host order: 1 big, 0 little */
SHEAF_API int sion_endianness_swap_needed(int sid); /* 1 if user data order != host order */
/* Byte-reverse n elements of `size` bytes from source into target (may alias);
 * with do_swap == 0 it copies. Thread-safe. */
SHEAF_API void sion_swap(void *target, void *source, int size, int n, int do_swap);

SHEAF_API sion_int64 sion_get_bytes_written(int sid); /* write mode, else -1 */
/* Read mode: the cursor's offset in the current task's data (bytes of the blocks
 * before the current one plus the position in it; SIONlib's definition, not a
 * running total of the bytes read), else -1. */
SHEAF_API sion_int64 sion_get_bytes_read(int sid);

SHEAF_API int sion_get_version(int *main_version, int *sub_version, int *patch_level, int *fileformat_version);
SHEAF_API int sion_is_thread_safe(void);
/* -1 (and -1 in both outputs) on a bad sid. */
SHEAF_API int sion_get_sizeof(int sid, int *numbytes, int *numfds);

SHEAF_API int sion_get_keyval_mode(int sid);
SHEAF_API char *sion_keyval_type_to_str(int type);

/* ---- key-value records (mode "keyval" / "keyval=inline") -------------------
 * In a key-value container each task's stream is a sequence of records
 * (key: uint64, length: int64, payload), written in the writer's byte order;
 * records may straddle blocks. Keys are local to a task; a key may occur in
 * many records, and reading a key concatenates its records in file order.
 * All calls work on the *current task* (change it with sion_seek(sid, rank,
 * SION_CURRENT_BLK, SION_CURRENT_POS) on a serial open).
 *
 * Reading builds a per-task index lazily: the stream is scanned only as far
 * as a call needs, and found records are cached, so look-ups never rescan.
 * A record whose length is negative or runs past the end of the task's
 * stream (corrupt or truncated file) makes the call fail with a message
 * naming the file, the task and the stream offset; nothing is read past the
 * task's data. Key-value calls move the task's raw cursor (sion_fread after
 * them continues at an unspecified position of the raw stream); plain
 * sion_fread / sion_seek still see the raw stream including record headers.
 *
 * Every call fails (returning the value given below, with a message, see
 * sheaf_last_error()) on an invalid sid, or on a container that is not in
 * inline key-value mode. Reading calls fail on a write handle and vice versa.
 * Thread-safety: as every call on a sid: different sids may be used
 * concurrently, the same sid from one thread at a time. Parallel opens are
 * not supported yet (serial sion_open / sion_open_rank only). */

/* Write mode: append one record with `key` and size*nitems payload bytes to
 * the current task. The record (header and payload) fills the current block
 * up to its chunk size and continues in the next block.
 * Returns nitems; 0 on error (read handle, not key-value, I/O error, bad sid,
 * NULL data) or when size*nitems is 0 (nothing is written then). */
SHEAF_API size_t sion_fwrite_key(const void *data, uint64_t key, size_t size, size_t nitems, int sid);

/* Read mode: read up to nitems items of `size` bytes from the next unread
 * bytes of `key` in the current task. One call never crosses from one record
 * of the key into the next: it returns fewer whole items at a record's end;
 * the next call continues with the key's next record. Returns the number of
 * items read; 0 when all data of the key has been read (no error), or on
 * error: the key does not occur in the task, fewer than `size` bytes remain in
 * the current record (items never span records), corrupt record, bad sid. */
SHEAF_API size_t sion_fread_key(void *data, uint64_t key, size_t size, size_t nitems, int sid);

/* Read mode: restart the record iterator of the current task at the first
 * record. SION_SUCCESS, or SION_NOT_SUCCESS on error. */
SHEAF_API int sion_fread_key_iterator_reset(int sid);
/* Read mode: advance to the next record in file order; *key and *size receive
 * its key and payload length, and that key's read cursor is placed at the
 * start of this record (so sion_fread_key(.., *key, ..) reads it).
 * SION_SUCCESS, or SION_NOT_SUCCESS after the last record (no message) or on
 * error (corrupt record: message). */
SHEAF_API int sion_fread_key_iterator_next(int sid, uint64_t *key, size_t *size);

/* Read mode: place the read cursor of `key`:
 *   entrynum >= 0: record number entrynum of the key (0 = first occurrence),
 *                  posinentry = offset in it (0..length-1: inside the data,
 *                  as in SIONlib);
 *   SION_CURRENT_BLOCK: the key's current record; posinentry an offset in it
 *                  or SION_CURRENT_POS (no move; SION_CURRENT_POS is allowed
 *                  only with SION_CURRENT_BLOCK). As in SIONlib, a record
 *                  read to its end is no longer current: the key's next
 *                  record is (fails after the key's last record);
 *   SION_ABSOLUTE_POS: posinentry counts over all records of the key
 *                  (0..total bytes of the key - 1).
 * SION_SUCCESS, or SION_NOT_SUCCESS (key absent, entry or position out of
 * range, corrupt record). */
SHEAF_API int sion_seek_key(int sid, uint64_t key, int entrynum, sion_int64 posinentry);

/* Read mode: scan (and index) the whole stream of the current task.
 * SION_SUCCESS, or SION_NOT_SUCCESS on a corrupt/truncated record. */
SHEAF_API int sion_key_full_scan(int sid);

/* Read mode: iterate over the distinct keys of the current task in the order
 * of their first occurrence. reset scans the whole stream first.
 * next: SION_SUCCESS with *key set, SION_NOT_SUCCESS after the last key (no
 * message) or on error. */
SHEAF_API int sion_key_list_iterator_reset(int sid);
SHEAF_API int sion_key_list_iterator_next(int sid, uint64_t *key);

/* Read mode: statistics of `key` in the current task (scans the whole
 * stream): stat->key, stat->num_blocks = number of records with that key,
 * stat->total_size = their payload bytes. A key that does not occur yields
 * 0 / 0 and SION_SUCCESS. SION_NOT_SUCCESS on error (NULL stat, corrupt
 * record, bad sid). */
SHEAF_API int sion_key_get_stat(int sid, uint64_t key, sion_key_stat_t *stat);

/* ---- low-level file access ------------------------------------------------ */
SHEAF_API FILE *sion_get_fp(int sid); /* NULL in posix mode */
SHEAF_API int sion_get_fd(int sid);   /* -1 on error */
SHEAF_API int sion_set_fp_closed(int sid);
SHEAF_API int sion_set_second_fp(int sid, FILE *fileptr);
SHEAF_API int sion_unset_second_fp(int sid);
SHEAF_API int sion_optimize_fp_buffer(int sid);

/* Locking callbacks, as in SIONlib: once registered (once per process; a
 * second registration or NULL callbacks return SION_NOT_SUCCESS with a
 * message), lock(lock_data) and unlock(lock_data) are called around every
 * operation on the table of open sids (open, look-up of a sid, close), and
 * once by the registration itself. sheaf keeps its own mutex too (taken
 * inside the user's lock), so the callbacks add to thread-safety and never
 * replace it. The callbacks must not call sion_* functions. */
SHEAF_API int sion_lock_register_lock_callbacks(int lock(void *), int unlock(void *), void *lock_data);
SHEAF_API int sion_lock_user_callbacks_defined(void);

/* Buddy/io-info (populated only in buddy mode, which sheaf does not have yet: NULL). */
SHEAF_API sion_io_stat_t *sion_get_io_info(int sid);
SHEAF_API sion_io_stat_t *sion_get_io_info_by_spec(int sid, int roles, int flag);
SHEAF_API int sion_free_io_info(sion_io_stat_t *p);
/* The name of a SION_ROLE_* value ("SION_ROLE_COLLECTOR", ...; "undef" for
 * others). A SIONlib-internal name, in no SIONlib header: SIONlib's own test
 * programs declare it themselves to print what sion_get_io_info reports, so
 * sheaf exports it; declared here so that it is part of the checked API. */
SHEAF_API char *_lsion_buddy_role_to_str(unsigned int flag);

/* dup / dedup (read mode of a parallel or mapped open): a copy of the sid with
 * file handles of its own, so that several threads read the same container
 * at once (one sid per thread). mode: SION_DUP_ALL (all tasks of the sid),
 * SION_DUP_RANK (only global task `rank`), SION_DUP_RANK_KEY (only task
 * `rank`, and of its key-value records only those with `key`: the iterators
 * skip other keys, reads/seeks/stats of other keys are refused). The copy is
 * positioned at the start of its (first) task. Collective calls
 * (sion_parclose_*, sion_parreinit_*, sion_coll_*) are refused on a copy;
 * release it with sion_dedup. Returns the new sid, or -1 (serial or write
 * opens, unknown task). Thread-safe with respect to other sids; the sid being
 * duplicated must not be used by another thread during the call. */
SHEAF_API int sion_dup(int sid, int mode, int rank, uint64_t key);
/* Release a duplicate: SION_SUCCESS, SION_NOT_SUCCESS for an open sid that is
 * not a duplicate, SION_ID_NOT_VALID (-1) for a sid that is not open (as SIONlib). */
SHEAF_API int sion_dedup(int sid);

#ifdef __cplusplus
}
#endif

/* Debugging macros, empty unless sion_debug.h defined them first (as SIONlib's
 * sion_common.h: code that includes only sion.h may use DPRINTFP((...)) and
 * gets nothing; sion_debug.h defines the real ones, see there). DPRINTTS is
 * SIONlib's spelling here. */
#ifndef DPRINTF
#define DPRINTF(A)
#define DPRINTFP(A)
#define DPRINTTS(A, B)
#define DPRINTFTS2(A, B)
#endif
#endif
