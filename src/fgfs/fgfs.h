/* fgfs.h - internals of libsheaf_fgfs (only for src/fgfs). Every symbol here
 * is hidden (the library builds with -fvisibility=hidden; only
 * SHEAF_API in include/sheaf_fgfs*.h is exported). */
#ifndef FGFS_H
#define FGFS_H
#include "sheaf_fgfs.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define FGFS_MAX_INPUT (16u << 20) /* bytes of mountinfo read */
#define FGFS_MAX_ENTRIES 65536
#define FGFS_PATH 4096
#define FGFS_MAX_LOOPS 64

/* ---- errors (error.c) ---- */
/* Record a message for this thread and return code. */
int fgfs_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- mount table (mountinfo.c) ---- */
typedef struct fgfs_mount {
    const char *mp, *root, *fstype, *source, *opts,
        *mopts;          /* decoded, in the table's arena; opts: super options, mopts: mount options */
    unsigned id, parent; /* mount ID and parent mount ID (fields 1 and 2) */
    unsigned dev_major, dev_minor;
    sheaf_fgfs_kind kind;
    size_t mplen;
} fgfs_mount;

struct sheaf_fgfs_mounts {
    fgfs_mount *e;
    int n, skipped;
    char *arena;
    char *loop_dev[FGFS_MAX_LOOPS], *loop_file[FGFS_MAX_LOOPS];
    int nloops;
};
sheaf_fgfs_kind fgfs_kind_of(const char *fstype);
/* Open path for reading, never blocking (FIFOs, devices): only a regular
 * file, or a directory when allow_dir, else EINVAL naming path and what. */
int fgfs_open_input(const char *path, const char *what, int allow_dir, int *out);
/* Index of the mount that holds absolute normalised path p, -1 if none. */
int fgfs_mount_lookup(const sheaf_fgfs_mounts *m, const char *p);

/* ---- paths and names (uri.c) ---- */
/* Lexical normalisation of an absolute path into out (collapse //, ., ..). */
int fgfs_normalize(const char *in, char *out, size_t n);

/* ---- Bloom filter (bloom.c) ---- */
#define FGFS_BLOOM_K 2
#define FGFS_BLOOM_MIN_BITS 4096
size_t fgfs_bloom_bits(uint64_t names); /* m for `names` at 50% density, >= MIN_BITS, multiple of 64 */
void fgfs_bloom_add(uint8_t *bits, size_t m, const char *name, size_t len);
size_t fgfs_bloom_count(const uint8_t *bits, size_t m);
double fgfs_bloom_estimate(size_t t, size_t m); /* maximum-likelihood n; HUGE_VAL when saturated */
uint64_t fgfs_hash64(const void *p, size_t n);
/* XXH3-64 of a regular file's contents, or of a directory's sorted entry
 * names and types (bounded below); anything else is EINVAL, EIO names the path */
int fgfs_hash_file(const char *path, uint64_t *out);
#define FGFS_DIR_MAX_ENTRIES 1000000
#define FGFS_DIR_MAX_BYTES (64 << 20)

/* ---- typed messages (msg.c); all little-endian, status first ---- */
typedef struct fgfs_status_word {
    int32_t code;
    int32_t rank;
} fgfs_status_word; /* code 0: ok; rank of first failure */
void fgfs_sw_merge(fgfs_status_word *a, const fgfs_status_word *b);

typedef struct fgfs_triage_msg { /* level 1: AND / OR / min-max, fixed 32 bytes */
    fgfs_status_word st;
    uint32_t all_local, any_local;
    uint64_t hmin, hmax;
} fgfs_triage_msg;
#define FGFS_TRIAGE_LEN 32
void fgfs_triage_pack(const fgfs_triage_msg *m, uint8_t *out);
int fgfs_triage_unpack(const uint8_t *in, size_t len, fgfs_triage_msg *m);
extern const sheaf_fgfs_op fgfs_op_triage;

typedef struct fgfs_bloom_msg { /* level 2: OR of m-bit filters */
    fgfs_status_word st;
    uint32_t mbits;
    uint8_t *bits; /* mbits/8 bytes (points into the packed buffer after unpack) */
} fgfs_bloom_msg;
size_t fgfs_bloom_msg_len(uint32_t mbits);
void fgfs_bloom_pack(const fgfs_bloom_msg *m, uint8_t *out);
int fgfs_bloom_unpack(const uint8_t *in, size_t len, fgfs_bloom_msg *m);
extern const sheaf_fgfs_op fgfs_op_bloom_or;

/* Group table: status, count, then entries sorted by name:
 * {u32 members, u32 rep, u16 len, name bytes}. Merge op combines by name. */
typedef struct fgfs_group_entry {
    uint32_t members, rep;
    uint16_t len;
    const char *name;
} fgfs_group_entry;
typedef struct fgfs_group_table {
    fgfs_status_word st;
    uint32_t n;
    fgfs_group_entry *e; /* names point into the packed buffer */
    void *raw;           /* that buffer when the table owns it (freed with it) */
} fgfs_group_table;
/* Pack a one-entry table (or an empty one when name is NULL). malloc'd. */
int fgfs_group_pack1(const fgfs_status_word *st, const char *name, uint32_t rep, uint8_t **out, size_t *len);
int fgfs_group_unpack(const uint8_t *in, size_t len, fgfs_group_table *t); /* t->e malloc'd */
void fgfs_group_table_free(fgfs_group_table *t);
/* Pack a table of n names (sorted and deduplicated here; members 1, rep). */
int fgfs_group_packn(const fgfs_status_word *st, const char **names, size_t n, uint32_t rep, uint8_t **out,
                     size_t *len);
int fgfs_op_group_merge(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg);

typedef struct fgfs_hash_msg { /* consistency: min/max of the representatives' hashes */
    fgfs_status_word st;
    uint32_t have, pad;
    uint64_t hmin, hmax;
} fgfs_hash_msg;
#define FGFS_HASH_LEN 32
void fgfs_hash_pack(const fgfs_hash_msg *m, uint8_t *out);
int fgfs_hash_unpack(const uint8_t *in, size_t len, fgfs_hash_msg *m);
extern const sheaf_fgfs_op fgfs_op_hash;

/* ---- collective helpers over the interface (coll.c) ---- */
/* Reduce to 0 then bcast: everyone gets the result (malloc'd). */
int fgfs_allreduce(sheaf_fgfs_comm *c, const void *in, size_t len, const sheaf_fgfs_op *op, void **out, size_t *outlen);
/* Turn a merged status word into this process's return value (message). */
int fgfs_status_result(const fgfs_status_word *sw, int myrank, int mycode, const char *what);

/* ---- context (context.c) and queries (query.c, async.c, select.c) ---- */
typedef struct fgfs_async_entry {
    char *mp;
    sheaf_fgfs_status st;
} fgfs_async_entry;

struct sheaf_fgfs_ctx {
    sheaf_fgfs_comm *comm;
    int rank, size;
    sheaf_fgfs_config cfg;
    sheaf_fgfs_mounts *owned;
    const sheaf_fgfs_mounts *mounts;
    char host[256];
    size_t bloom_bits;
    fgfs_async_entry *amap;
    int namap;
};
/* Collective (context.c, sheaf_comm_agree: one exchange when all went
 * well); every process returns an error when one had mycode != 0. */
int fgfs_agree(sheaf_fgfs_ctx *ctx, int mycode, const char *what);
/* Resolve path for this process (uses the context's table, host, flags). */
int fgfs_ctx_resolve(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_name *nm);
/* The collective queries (query.c). The collective classification of one name (sync step). mycode: this
 * process's own failure (0 when nm is valid). */
int fgfs_classify(sheaf_fgfs_ctx *ctx, const sheaf_fgfs_name *nm, int mycode, const char *path, sheaf_fgfs_status *st);
/* The same, stopping after triage level max_level (1: fully local / unique
 * / "at least two names", no Bloom filter). */
int fgfs_classify_to(sheaf_fgfs_ctx *ctx, const sheaf_fgfs_name *nm, int mycode, const char *path,
                     sheaf_fgfs_status *st, int max_level);
/* The same from a name and its locality (uri ignored when mycode != 0). */
int fgfs_classify_uri(sheaf_fgfs_ctx *ctx, const char *uri, int local, int mycode, const char *path,
                      sheaf_fgfs_status *st, int max_level);
/* Exact grouping of names: table for everyone (t->e malloc'd). */
int fgfs_group(sheaf_fgfs_ctx *ctx, const char *name, int mycode, const char *path, fgfs_group_table *t);
int fgfs_group_find(const fgfs_group_table *t, const char *name);
int fgfs_async_build(sheaf_fgfs_ctx *ctx);
/* ASYNC: the class of a resolved name from the map (local). */
int fgfs_async_lookup(const sheaf_fgfs_ctx *ctx, const sheaf_fgfs_name *nm, sheaf_fgfs_status *st);
/* Sorted union of the processes' mount points (pseudo excepted). */
int fgfs_mount_union(sheaf_fgfs_ctx *ctx, fgfs_group_table *t);

#endif
