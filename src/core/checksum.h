/* checksum.h - opt-in data and metadata checksums (mode key "checksum").
 *
 * A writer in checksum mode keeps a CRC-32C per task and block (updated as
 * it writes; blocks also written through the exported FILE* or fd are read
 * back at close) and appends a trailer after the standard metadata of each
 * physical file, then marks bit 0 of the header's flag2 (a field SIONlib
 * leaves unused). SIONlib ignores both, so the file stays a plain format-5
 * container. Trailer (little-endian), at the very end of the file:
 *   u32 crc[n]  (task-major: task 0's blocks, then task 1's ...)
 *   u32 crc of the header as written (META1, core_meta1_size bytes)
 *   u32 crc of everything from start_of_varheader up to the trailer
 *       (META2 and the multi-file mapping)
 *   u32 crc of the three items above | u32 algorithm (1 = CRC-32C)
 *   u64 n | "SHEAFCK1"
 * A reader finds the trailer from the end of the file, checks it and the
 * metadata against it (damage fails the open with SHEAF_E_FORMAT naming
 * what is damaged) and verifies each block the first time it is read; a
 * mismatch fails that read with the task, block and file offset. Thread-safe
 * on distinct objects. */
#ifndef CORE_CHECKSUM_H
#define CORE_CHECKSUM_H
#include "format.h"
#include "handle.h"
#include "io.h"
#include <stdint.h>

#define CORE_FLAG2_CHECKSUM 1
#define CORE_CKSUM_TRAILER_FIXED 32

/* Trailer bytes for m (m->crcs with m->ncrcs entries), given the encoded
 * header and the bytes from start_of_varheader on (META2 + mapping). */
size_t core_cksum_trailer_size(const core_meta *m);
void core_cksum_encode(const core_meta *m, const unsigned char *hdr, size_t hlen, const unsigned char *meta2,
                       size_t m2len, unsigned char *out);
/* After META2 was read: find and check the trailer; fills m->crcs/ncrcs
 * (NULL/0 when the file has none). meta2_end: first byte after META2 and
 * mapping. Fails on a damaged trailer, damaged metadata, or a missing
 * trailer that flag2 announces. */
int core_cksum_load(const core_src *src, core_meta *m, int64_t meta2_end);
/* ---- block CRCs of the tasks of an open container ---- */
/* Write: complete the CRC of every block of task t (blocks partly written
 * through the raw handle are read back); read: verify block b of task t
 * once (fails naming task, block and offset when the data are damaged). */
int core_cksum_finish_task(core_container *c, int32_t t);
int core_cksum_verify_block(core_container *c, int32_t t, int64_t b);
/* Read: take the stored CRCs of task t (nblocks entries) from m's table. */
void core_cksum_take(core_task *t, const uint32_t *crcs);
/* Write: n bytes just written at the end of the current block of t: keep
 * its running CRC in step (as long as no bytes came through the raw handle). */
void core_cksum_update(core_task *t, const void *data, int64_t n);

/* CRC-32C of len bytes at off of f (read back through the descriptor, after
 * flushing stdio); memory bounded (1 MiB window). */
int core_cksum_range(core_file *f, int64_t off, int64_t len, uint32_t *crc);
#endif
