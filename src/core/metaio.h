/* metaio.h - metadata I/O, next to the codec (format.h): read the metadata
 * of one physical file (header, block table, mapping, and the checksum
 * trailer through checksum.h), prepare a META1 for writing, write the header
 * and the metadata tail (block table, mapping, checksum trailer; the file is
 * cut after it). The only code besides format.c that knows how big the
 * on-disk metadata are. Works on core_meta and core_file, never on a
 * container. */
#ifndef CORE_METAIO_H
#define CORE_METAIO_H
#include "format.h"
#include "io.h"
#include "mode.h"
#include <stdint.h>

/* Decode META2 (and, for file 0 of a multi-file set, the mapping), then the
 * checksum trailer if the file has one. */
int core_meta_read_blocks(const core_src *src, core_meta *m);
/* Header and blocks, as a reader needs them (a closed file). */
int core_meta_read(const core_src *src, core_meta *m);
/* A metadata source (format.h) reading from an open file, its size taken now. */
int core_src_from_file(core_src *src, core_file *f);

/* The metadata of an open file: header (require_closed: a header that was
 * never closed fails with SHEAF_E_UNCLOSED) and, for a closed file, the rest. */
int core_meta_read_file(core_file *f, core_meta *m, int require_closed);

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
#endif
