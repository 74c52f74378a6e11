/* format.h - SIONlib container format (versions 2-5): decode and encode the
 * on-disk metadata of ONE physical file (META1 header, META2 block table,
 * multi-file mapping). See shared/spec/sionlib-format.md section 4.
 *
 * Decoding never trusts the file: every count is checked against the file
 * size before anything is allocated, so a hostile file cannot make the reader
 * allocate more than a small multiple of its own size. Pure functions,
 * thread-safe on distinct core_meta objects. */
#ifndef CORE_FORMAT_H
#define CORE_FORMAT_H
#include <stdint.h>
#include <stddef.h>

#define CORE_PREFIX_LEN 1024
#define CORE_META1_FIXED 1088 /* header size is 1088 + 16*ntasks */
#define CORE_LIB_VERSION 1007 /* 1000*main + sub, as SIONlib 1.7 writes */
#define CORE_LIB_PATCH 6

/* Where metadata is read from: a file, or a memory buffer (fuzzing, tests). */
typedef struct core_src {
    void *ctx;
    int64_t size;     /* total size in bytes */
    const char *name; /* for messages */
    /* read exactly n bytes at off; return 0 or a SHEAF_E_* code with message */
    int (*pread)(void *ctx, void *buf, size_t n, int64_t off);
} core_src;

typedef struct core_meta {
    int swap;     /* metadata byte order differs from this host */
    int meta_big; /* writer's (metadata) byte order: 1 big */
    int data_big; /* declared user-data order: 1 big */
    int32_t version, patch, format;
    int32_t fsblksize, ntasks, nfiles, filenumber;
    int64_t flag1, flag2;
    char prefix[CORE_PREFIX_LEN + 1];
    int64_t *globalranks; /* [ntasks] */
    int64_t *chunksizes;  /* [ntasks], as stored */
    int32_t maxchunks;
    int64_t start_of_varheader;
    /* META2 (closed files only) */
    int64_t *blockcount; /* [ntasks] */
    int64_t *blocksizes; /* [maxchunks*ntasks], entry b*ntasks+t */
    /* mapping (file 0 of a multi-file set; -1 when absent) */
    int32_t mapping_size;
    int32_t *mapping; /* [2*mapping_size]: file, local task */
    /* checksums (checksum.h): one CRC-32C per task and block, task-major; NULL when none */
    uint32_t *crcs;
    int64_t ncrcs;
    int64_t *crc_first; /* [ntasks]: index of each task's first CRC in crcs (readers) */
    /* derived layout */
    int64_t header_size; /* H */
    int64_t data_start;  /* S0 = roundup(H, fsblksize) */
    int64_t globalskip;
    int64_t *starts; /* [ntasks] first chunk offset of each task */
    /* core_meta_write_tail: when > 0, the metadata never start past this offset
     * unless the last block row does (recovery: the input's real size, so
     * hostile chunk sizes cannot make it write a huge sparse file) */
    int64_t tail_max;
} core_meta;

/* Header size H for ntasks tasks. */
int64_t core_meta1_size(int32_t ntasks);

/* Decode META1 and derive layout. With require_closed, a header whose
 * start_of_varheader is 0 fails with SHEAF_E_UNCLOSED. */
int core_meta_read_header(const core_src *src, core_meta *m, int require_closed);
/* Decode META2 (and, for file 0 of a multi-file set, the mapping); *end:
 * the first byte after them (where a checksum trailer may follow: metaio.h
 * reads the whole metadata of a file). */
int core_meta_decode_blocks(const core_src *src, core_meta *m, int64_t *end);
void core_meta_free(core_meta *m);

/* Compute S0, globalskip and starts[] from fsblksize/chunksizes/format. */
int core_meta_layout(core_meta *m, const char *name);

/* Bytes one block of task t can hold (its chunk size after alignment). */
int64_t core_meta_capacity(const core_meta *m, int32_t t);

/* Encoders write into caller buffers in the byte order given by m->meta_big.
 * Sizes: core_meta1_size(ntasks); 8*ntasks*(1+maxchunks); 4 + 8*mapping_size. */
void core_meta_encode_header(const core_meta *m, unsigned char *buf);
void core_meta_encode_blocks(const core_meta *m, unsigned char *buf);
size_t core_meta_encode_mapping(const core_meta *m, unsigned char *buf);

/* A source reading from a memory buffer (ctx = core_membuf). */
typedef struct core_membuf {
    const unsigned char *data;
    size_t len;
} core_membuf;
void core_src_from_memory(core_src *src, core_membuf *mb, const char *name);
#endif
