/* journal.h - crash consistency: the progress journal beside a physical file.
 *
 * sion_flush makes a task's data durable: the data file is fsync'ed, then a
 * record with the task's block table is appended (O_APPEND, one write) to
 * "<physical file>.sheafj" and that is fsync'ed too. After a crash (any task
 * or all of them killed before the close wrote the metadata),
 * core_recover_file() rebuilds the metadata from the last record of each
 * task: every byte written before a task's last successful flush comes back.
 * The container file itself stays a plain format-5 file (SIONlib reads it
 * once recovered); a clean close fsyncs the file and removes the journal, and
 * an open for writing removes a stale one. One journal per physical file, no
 * per-task files. Records (little-endian), two versions:
 *   "SHJ1" | u32 length L | i32 task index in the file | i32 0 |
 *   i64 global rank | i64 nblocks | i64 blocksize[nblocks] | u32 crc32c of bytes [0, L-4)
 *   "SHJ2": the same, and u32 blockcrc[nblocks] (CRC-32C of each block's
 *   blocksize bytes) between the block sizes and the record's CRC; written
 *   for tasks in checksum mode, so that recovery keeps the protection.
 * Tasks without checksums still write SHJ1 (what earlier versions read);
 * the reader takes both. A torn or damaged record is skipped (the reader
 * resynchronizes on the next "SHJ1"/"SHJ2"); the last valid record of a
 * task wins. Not thread-safe per container; different containers (tasks)
 * may append concurrently. */
#ifndef CORE_JOURNAL_H
#define CORE_JOURNAL_H
#include "handle.h"
#include <stdint.h>

/* "<path>.sheafj", malloc'd (NULL: out of memory). */
char *core_journal_path(const char *path);
/* Remove the journal of path if there is one (ENOENT is success). */
int core_journal_remove(const char *path);
/* Flush: make the tasks of c durable (fsync of their files) and append one
 * record per task to the journal of each task's physical file. */
int core_journal_flush(core_container *c);
/* sion_flush of a write container: take in what went through the exported
 * handle (core_sync), then core_journal_flush. */
int core_durable_flush(core_container *c);
/* Close of a container whose tasks flushed: fsync'ed metadata may replace
 * the journal. Returns 1 when a journal exists for path, 0 if not. */
int core_journal_exists(const char *path);

/* The last valid record of each task of one physical file. */
typedef struct core_journal_state {
    int32_t ntasks;
    int64_t *nblocks;         /* [ntasks]; 0 = no record for the task */
    int64_t **bsize;          /* [ntasks] -> nblocks entries (malloc'd each) */
    uint32_t **bcrc;          /* [ntasks] -> nblocks block CRCs (SHJ2 record), NULL: none journaled */
    int64_t records, damaged; /* valid records read, damaged/torn ones skipped */
} core_journal_state;
/* Read the journal of path for a file of ntasks tasks whose META1 lists
 * globalranks; records naming another global rank for a task are ignored.
 * Missing journal: SHEAF_E_NOTFOUND. Journals above 1 GiB are refused. */
int core_journal_load(const char *path, int32_t ntasks, const int64_t *globalranks, core_journal_state *st);
void core_journal_state_free(core_journal_state *st);
/* The parser under core_journal_load: n bytes of a journal (fuzzing, tests);
 * st zeroed by the caller, released with core_journal_state_free; `name`
 * for messages. */
int core_journal_parse(const unsigned char *raw, size_t n, int32_t ntasks, const int64_t *globalranks,
                       core_journal_state *st, const char *name);
#endif
