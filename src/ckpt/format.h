/* format.h - the checkpoint unit format (doc/ckpt.md), shared by the serial
 * reader (libsheaf_ckpt_read) and the MPI writer (libsheaf_ckpt); compiled
 * into both, hidden. No MPI here. All integers little-endian on disk. */
#ifndef SHEAF_CKPT_FORMAT_H
#define SHEAF_CKPT_FORMAT_H
#include "sheaf_ckpt_read.h"
#include <stddef.h>
#include <stdint.h>

#define CKF_MAGIC "SHEAFCK1"
#define CKF_VERSION 1u
#define CKF_FIXED 112u      /* bytes before the field table */
#define CKF_FIELD_ENTRY 64u /* bytes per field table entry */
#define CKF_RANK_ENTRY 16u  /* bytes per (field, rank): count, checksum */
#define CKF_BLOCK_HDR 16u   /* "FBLK", u32 field, u64 bytes */
#define CKF_MAX_FIELDS 1024u
#define CKF_MAX_RANKS (1u << 24)
#define CKF_MANIFEST "manifest"

typedef struct ckf_field {
    char name[SHEAF_CKPT_NAME_MAX + 1];
    uint32_t type, elemsize;
    uint64_t block_offset, block_bytes;
} ckf_field;

/* A unit's header, decoded. counts/sums are [f * nranks + r]. */
typedef struct ckf_header {
    uint64_t step, first_rank, total_ranks;
    uint32_t nfields, nranks, header_bytes;
    char app[SHEAF_CKPT_APP_MAX + 1];
    ckf_field *fields;
    uint64_t *counts, *sums;
} ckf_header;

/* Bytes of the header for nfields fields and nranks ranks (a multiple of 8). */
uint64_t ckf_header_size(uint32_t nfields, uint32_t nranks);
/* Fill block offsets/bytes of h from its counts (fields[].elemsize set). */
void ckf_layout(ckf_header *h);
/* Encode h into buf (ckf_header_size bytes). */
void ckf_encode(const ckf_header *h, unsigned char *buf);
/* Decode and check a header read from `name` (buf of len bytes, at least the
 * fixed part): 0 or EINVAL with the message set. Allocates h's arrays. */
int ckf_decode(const unsigned char *buf, uint64_t len, uint64_t file_size, const char *name, ckf_header *h);
/* Bytes needed to decode: 0 and *need set from the fixed part. */
int ckf_peek_size(const unsigned char *buf, uint64_t len, const char *name, uint64_t *need);
void ckf_header_free(ckf_header *h);
/* The 16-byte block header of field f. */
void ckf_block_hdr(uint32_t f, uint64_t bytes, unsigned char out[16]);

/* The data checksum (doc/ckpt.md): over the little-endian bytes. */
uint64_t ckf_hash(const void *data, uint64_t n, uint64_t seed);
#define CKF_HASH_SEED 0x5348454146434b31ull
/* The same checksum over data given in pieces (bounded memory). */
typedef struct ckf_hstate {
    uint64_t h, n;
    unsigned char t[8];
    unsigned tl;
} ckf_hstate;
void ckf_hash_begin(ckf_hstate *s, uint64_t seed);
void ckf_hash_add(ckf_hstate *s, const void *data, uint64_t n);
uint64_t ckf_hash_end(ckf_hstate *s);

/* Host <-> little-endian for elements of size es (no-op on little-endian hosts). */
int ckf_host_is_le(void);
void ckf_swap_elems(void *data, uint64_t n, size_t es);
void ckf_put_u32(unsigned char *p, uint32_t v);
void ckf_put_u64(unsigned char *p, uint64_t v);
uint32_t ckf_get_u32(const unsigned char *p);
uint64_t ckf_get_u64(const unsigned char *p);

/* The manifest: a short text file naming the units. */
typedef struct ckf_unit {
    char kind;        /* 'p' plain file, 's' task of a sheaf container */
    const char *path; /* relative to the checkpoint directory; points into the manifest's text */
    int64_t task;     /* sion task, -1 for plain */
    uint64_t first_rank, nranks;
} ckf_unit;
typedef struct ckf_manifest {
    char app[SHEAF_CKPT_APP_MAX + 1];
    char strategy[16];
    uint64_t step, nranks;
    uint32_t nunits;
    ckf_unit *units;
    char *text; /* owns the units' paths (the parsed manifest, NUL-cut in place) */
} ckf_manifest;
/* Text of m in a malloc'd string (NULL on ENOMEM). */
char *ckf_manifest_text(const ckf_manifest *m);
/* Parse text (len bytes + a NUL) in place: m takes ownership of text (freed by
 * ckf_manifest_free, also on failure); the units' paths point into it. The
 * unit table is 40 bytes per unit line of >= CKF_UNIT_LINE_MIN bytes, so the
 * memory is at most ~3.3x the text. 0 or EINVAL/ENOMEM naming `name`. */
#define CKF_UNIT_LINE_MIN 18u /* "unit sion a 0 0 1\n" */
#define CKF_PATH_MAX 255u
int ckf_manifest_parse(char *text, size_t len, const char *name, ckf_manifest *m);
void ckf_manifest_free(ckf_manifest *m);
/* "step-%020llu" */
void ckf_step_dirname(uint64_t step, char *out, size_t n);

/* thread-local error message of both libraries */
/* element size of a SHEAF_CKPT_* type, 0 for an unknown one (the table
 * sheaf_ckpt_type_size answers from) */
size_t ckf_type_size(int type);
int ckf_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ckf_errmsg(void);

/* paths.c: the longest path (with its NUL) the libraries build; longer is an
 * error, never a cut path */
#define CKF_PATH_BYTES 4096u
/* out = dir "/" name (name NULL: dir alone): 0, or ENAMETOOLONG with a
 * message naming the path when it needs more than n or CKF_PATH_BYTES bytes */
int ckf_join(char *out, size_t n, const char *dir, const char *name);
/* Remove dir and everything under it through directory fds, never following
 * a symlink (one is removed itself); 0 when dir is absent, else an errno with
 * a message (ckf_errmsg) */
int ckf_rmtree(const char *dir);
#endif
