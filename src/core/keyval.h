/* keyval.h - inline key-value records on top of the per-task streams
 * (shared/spec/sionlib-format.md 4.6).
 *
 * A task's stream is a sequence of records: key (uint64), length (int64), both
 * in the writer's byte order (swapped when the physical file's metadata is
 * swapped), then `length` payload bytes. Records may straddle blocks.
 *
 * Reading uses a per-task key manager built lazily: the stream is scanned
 * forward only as far as a call needs, every record found is cached (stream
 * offset of its payload, length, key), and each key keeps a read cursor, so
 * repeated look-ups never rescan. Every length is checked against the bytes
 * left in the task's stream before anything is read; nothing is allocated
 * from a length found in the file.
 *
 * All functions work on the current task (c->cur). Not thread-safe: one
 * container, one thread at a time (as the rest of the core). */
#ifndef CORE_KEYVAL_H
#define CORE_KEYVAL_H
#include "stream.h"
#include <stdint.h>

#define CORE_KV_HEADER 16 /* key + length */

/* 0 if c is an inline key-value container, else SHEAF_E_ARG naming `call`. */
int core_kv_check(core_container *c, const char *call);

/* Write mode: append one record. Header and payload fill the current block up
 * to its chunk size and continue in the next block, as SIONlib writes them. */
int core_kv_write(core_container *c, uint64_t key, const void *buf, uint64_t n);

/* Read up to nitems items of `size` bytes from the next unread bytes of `key`,
 * never crossing from one record into the next in one call. *items = whole
 * items read; 0 with return 0 means the key's data is exhausted. A key that
 * does not occur at all is an error. */
int core_kv_read(core_container *c, uint64_t key, void *buf, uint64_t size, uint64_t nitems, uint64_t *items);

/* Records in file order. next: 1 = a record (and key's cursor is placed at its
 * start), 0 = no more records, < 0 error. */
int core_kv_iter_reset(core_container *c);
int core_kv_iter_next(core_container *c, uint64_t *key, uint64_t *len);

/* entry: occurrence index (>= 0), SION_CURRENT_BLOCK or SION_ABSOLUTE_POS. */
int core_kv_seek(core_container *c, uint64_t key, int64_t entry, int64_t pos);

/* Scan the whole stream of the current task. */
int core_kv_full_scan(core_container *c);

/* Distinct keys (order of first appearance); reset scans the whole stream.
 * next: 1 = a key, 0 = no more, < 0 error. */
int core_kv_keylist_reset(core_container *c);
int core_kv_keylist_next(core_container *c, uint64_t *key);

/* Records and payload bytes of `key` in the current task (full scan).
 * A key that does not occur yields 0 / 0 and returns 0. */
int core_kv_stat(core_container *c, uint64_t key, int64_t *nrec, int64_t *total);

/* Number of distinct keys of the current task (full scan), and the i-th key
 * (order of first appearance) with its statistics. For tools. */
int core_kv_nkeys(core_container *c, int64_t *nkeys);
int core_kv_key_at(core_container *c, int64_t i, uint64_t *key, int64_t *nrec, int64_t *total);

/* Release the key managers (called when the container is freed). */
void core_kv_free(core_container *c);
#endif
