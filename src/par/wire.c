/* wire.c - pack/unpack of the typed messages of the parallel protocol (wire.h). */
#include "wire.h"
#include "../core/error.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A received field outside [lo, hi]: the message is refused with its name. */
static int in_range(const char *msg, const char *field, int64_t v, int64_t lo, int64_t hi)
{
    if (v >= lo && v <= hi)
        return 0;
    return core_fail(SHEAF_E_FORMAT, "parallel protocol: message %s: field %s = %lld outside [%lld, %lld]", msg, field,
                     (long long)v, (long long)lo, (long long)hi);
}

static int short_msg(const char *msg, int64_t n, int64_t want)
{
    return core_fail(SHEAF_E_FORMAT, "parallel protocol: message %s: %lld elements, %lld needed", msg, (long long)n,
                     (long long)want);
}

/* ---- one engine: every message is a table of fields ------------------------
 *
 * A message is a struct of fields of one element type (int64, or int32 for
 * the placement and the close mapping), in wire order; its table names each
 * field, its offset in the struct and its range. pack copies the fields out in
 * table order; unpack checks the length, then every field's range (a message
 * whose table is "gated" carries only its status when that is not 0: the
 * rest is not checked then), then a cross-field check where the message has
 * one, and only then copies: a refused message leaves the struct as it was. */

typedef struct wire_field {
    const char *name;
    size_t off; /* offsetof in the message's struct */
    int64_t lo, hi;
} wire_field;

struct wire_msg {
    const char *label; /* the message's name in errors */
    const wire_field *f;
    int nf;
    int esize;                                                /* 8: int64 fields and elements; 4: int32 */
    int gated;                                                /* field 0 is a status: not 0, only it is checked */
    int (*check)(const struct wire_msg *w, const int64_t *v); /* cross-field (NULL: none) */
};
typedef struct wire_msg wire_msg;

#define WIRE_MAX_FIELDS PAR_WIRE_MAX_N

static int64_t get_field(const wire_msg *w, const void *m, int i)
{
    const char *b = (const char *)m + w->f[i].off;
    if (w->esize == 8) {
        int64_t v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, b, sizeof v);
    return v;
}

static void set_field(const wire_msg *w, void *m, int i, int64_t v)
{
    char *b = (char *)m + w->f[i].off;
    if (w->esize == 8) {
        memcpy(b, &v, sizeof v);
    } else {
        int32_t v32 = (int32_t)v;
        memcpy(b, &v32, sizeof v32);
    }
}

static void pack_msg(const wire_msg *w, const void *m, void *out)
{
    for (int i = 0; i < w->nf; i++) {
        int64_t v = get_field(w, m, i);
        if (w->esize == 8) {
            ((int64_t *)out)[i] = v;
        } else {
            ((int32_t *)out)[i] = (int32_t)v;
        }
    }
}

static int unpack_msg(const wire_msg *w, void *m, const void *in, int64_t n)
{
    if (!in || n < w->nf)
        return short_msg(w->label, n, w->nf);
    int64_t v[WIRE_MAX_FIELDS] = {0};
    for (int i = 0; i < w->nf; i++)
        v[i] = w->esize == 8 ? ((const int64_t *)in)[i] : ((const int32_t *)in)[i];
    int all = !(w->gated && v[0] != 0);
    for (int i = 0; i < (all ? w->nf : 1); i++) {
        int rc = in_range(w->label, w->f[i].name, v[i], w->f[i].lo, w->f[i].hi);
        if (rc)
            return rc;
    }
    if (all && w->check) {
        int rc = w->check(w, v);
        if (rc)
            return rc;
    }
    for (int i = 0; i < w->nf; i++)
        set_field(w, m, i, v[i]);
    return 0;
}

int par_wire_msg_count(const wire_msg *w) { return w->nf; }
void par_wire_pack(const wire_msg *w, const void *m, void *out) { pack_msg(w, m, out); }
int par_wire_unpack(const wire_msg *w, void *m, const void *in, int64_t n) { return unpack_msg(w, m, in, n); }

/* A message's table and its pack/unpack: ET the element type, N its count. */
#define WIRE_MSG(type, ET, N, label, gated, check, ...)                                                                \
    static const wire_field type##_f[] = {__VA_ARGS__};                                                                \
    _Static_assert(sizeof type##_f / sizeof *type##_f == (N) && (N) <= WIRE_MAX_FIELDS, #type ": fields");             \
    _Static_assert(sizeof(par_wire_##type) == (N) * sizeof(ET), #type ": every field in the table");                   \
    const wire_msg par_wire_##type##_msg = {label, type##_f, (N), (int)sizeof(ET), gated, check};                      \
    void par_wire_##type##_pack(const par_wire_##type *m, ET *out) { pack_msg(&par_wire_##type##_msg, m, out); }       \
    int par_wire_##type##_unpack(par_wire_##type *m, const ET *in, int64_t n)                                          \
    {                                                                                                                  \
        return unpack_msg(&par_wire_##type##_msg, m, in, n);                                                           \
    }

#define F(T, field, name, ...)                                                                                         \
    {                                                                                                                  \
        name, offsetof(par_wire_##T, field), __VA_ARGS__                                                               \
    }                                              /* __VA_ARGS__: lo, hi */
#define ST(T) F(T, status, "status", INT32_MIN, 0) /* 0 or a (negative) error code that fits an int */
#define NN(T, field, name) F(T, field, name, 0, INT64_MAX)
#define I32 INT32_MIN, INT32_MAX
/* The coalescing sub-record (coll.c's par_coll_fill): collector (-1: off),
 * group size, group span, collector start, merge flag. */
#define COLL(T)                                                                                                        \
    F(T, coll[0], "collector", -1, INT32_MAX), F(T, coll[1], "group size", 1, INT32_MAX),                              \
        NN(T, coll[2], "group span"), NN(T, coll[3], "collector start"), F(T, coll[4], "merge", 0, 1)
_Static_assert(PAR_COLL_FIELDS == 5, "COLL names five coalescing fields");

/* ---- the plain protocol ---- */
WIRE_MSG(wreq, int64_t, PAR_WIRE_WREQ_N, "write request", 0, NULL, F(wreq, chunksize, "chunk size", 0, INT64_MAX / 4),
         F(wreq, grank, "global rank", 0, INT32_MAX), F(wreq, capability, "capability", I32))

WIRE_MSG(rreq, int64_t, PAR_WIRE_RREQ_N, "reinit request", 0, NULL, F(rreq, chunksize, "chunk size", 0, INT64_MAX / 4),
         F(rreq, grank, "global rank", 0, INT32_MAX), ST(rreq), F(rreq, capability, "capability", I32))

/* A layout whose status is an error carries nothing else of use: only the
 * status is checked then (the task fails with it). */
WIRE_MSG(wlayout, int64_t, PAR_WIRE_WLAYOUT_N, "write layout", 1, NULL, ST(wlayout), NN(wlayout, start, "start"),
         NN(wlayout, chunksize, "chunk size"), NN(wlayout, globalskip, "global skip"), COLL(wlayout),
         F(wlayout, checksum, "checksum", 0, INT32_MAX))

WIRE_MSG(rlayout, int64_t, PAR_WIRE_RLAYOUT_N, "read layout", 1, NULL, ST(rlayout), NN(rlayout, start, "start"),
         NN(rlayout, chunksize, "chunk size"), NN(rlayout, globalskip, "global skip"),
         NN(rlayout, grank, "global rank"), F(rlayout, nblocks, "block count", 0, INT32_MAX),
         F(rlayout, keyval, "key-value mode", I32), F(rlayout, data_big, "data_big", I32), COLL(rlayout),
         F(rlayout, checksum, "checksum", 0, 1))

static int place_check(const wire_msg *w, const int64_t *v) /* the local rank inside the local size */
{
    return in_range(w->label, "local rank", v[2], 0, v[3] - 1);
}
WIRE_MSG(place, int32_t, PAR_WIRE_PLACE_N, "task placement", 1, place_check, ST(place),
         F(place, filenumber, "file number", 0, INT32_MAX), F(place, lrank, "local rank", 0, INT32_MAX),
         F(place, lsize, "local size", 1, INT32_MAX))

WIRE_MSG(ccount, int64_t, PAR_WIRE_CCOUNT_N, "close count", 0, NULL,
         F(ccount, nblocks, "block count", 0, INT32_MAX / 2), ST(ccount))

WIRE_MSG(cmap, int32_t, PAR_WIRE_CMAP_N, "close mapping", 0, NULL, F(cmap, filenumber, "file", 0, INT32_MAX),
         F(cmap, lrank, "local rank", 0, INT32_MAX))

static void layout_init(int64_t *status, int64_t *coll)
{
    *status = SHEAF_E_IO;
    coll[0] = -1;
    coll[1] = 1;
}

void par_wire_wlayout_init(par_wire_wlayout *m)
{
    memset(m, 0, sizeof *m);
    layout_init(&m->status, m->coll);
}

void par_wire_rlayout_init(par_wire_rlayout *m)
{
    memset(m, 0, sizeof *m);
    layout_init(&m->status, m->coll);
}

/* ---- mapped opens and closes ---- */
WIRE_MSG(mhead, int64_t, PAR_WIRE_MHEAD_N, "mapped head", 0, NULL, F(mhead, count, "count", -1, INT32_MAX),
         F(mhead, blocks, "blocks", 0, INT32_MAX), ST(mhead), F(mhead, opt[MO_WRITE], "write", 0, 1),
         F(mhead, opt[MO_NFILES], "numFiles", I32), F(mhead, opt[MO_FSBLK], "fsblksize", -1, INT32_MAX),
         F(mhead, opt[MO_KEYVAL], "keyval", I32))

WIRE_MSG(mverdict, int64_t, PAR_WIRE_MVERDICT_N, "mapped verdict", 0, NULL, ST(mverdict), NN(mverdict, total, "total"),
         NN(mverdict, blocks, "blocks"), F(mverdict, who, "task", -1, INT32_MAX),
         F(mverdict, field, "option", -1, MO_N - 1), F(mverdict, value, "value", INT64_MIN, INT64_MAX),
         F(mverdict, value0, "task 0's value", INT64_MIN, INT64_MAX))

/* ranks and files as given (task 0 checks them against the set and names the task) */
WIRE_MSG(mwrec, int64_t, PAR_WIRE_MWREC_N, "mapped write record", 0, NULL, F(mwrec, grank, "global rank", I32),
         F(mwrec, chunksize, "chunk size", 0, INT64_MAX / 4), F(mwrec, filenumber, "file", I32),
         F(mwrec, lrank, "local rank", I32))

WIRE_MSG(mwverdict, int64_t, PAR_WIRE_MWVERDICT_N, "mapped write verdict", 0, NULL, ST(mwverdict),
         F(mwverdict, fsblksize, "fsblksize", -1, INT32_MAX), F(mwverdict, nfiles, "numFiles", I32),
         NN(mwverdict, ntotal, "tasks"))

WIRE_MSG(mwlayout, int64_t, PAR_WIRE_MWLAYOUT_N, "mapped write layout", 0, NULL, NN(mwlayout, start, "start"),
         NN(mwlayout, chunksize, "chunk size"), NN(mwlayout, globalskip, "global skip"))

WIRE_MSG(mrverdict, int64_t, PAR_WIRE_MRVERDICT_N, "mapped read verdict", 0, NULL, ST(mrverdict),
         F(mrverdict, ntasks, "tasks", 0, INT32_MAX), F(mrverdict, nfiles, "files", 0, INT32_MAX),
         F(mrverdict, fsblksize, "fsblksize", 0, INT32_MAX), F(mrverdict, checksum, "checksums", 0, 1))

WIRE_MSG(mrshare, int64_t, PAR_WIRE_MRSHARE_N, "mapped read share", 0, NULL,
         F(mrshare, ntasks, "tasks", 0, INT32_MAX / PAR_WIRE_MRREC_N), F(mrshare, nblocks, "blocks", 0, INT32_MAX))

WIRE_MSG(mrrec, int64_t, PAR_WIRE_MRREC_N, "mapped read record", 0, NULL, F(mrrec, grank, "global rank", 0, INT32_MAX),
         F(mrrec, filenumber, "file", 0, INT32_MAX), F(mrrec, lrank, "local rank", 0, INT32_MAX),
         NN(mrrec, start, "start"), NN(mrrec, chunksize, "chunk size"), NN(mrrec, globalskip, "global skip"),
         F(mrrec, nblocks, "blocks", 0, INT32_MAX), F(mrrec, keyval, "keyval", I32),
         F(mrrec, data_big, "data order", -1, 1))

/* ---- buddy copies ---- */
WIRE_MSG(bhead, int64_t, PAR_WIRE_BHEAD_N, "buddy head", 0, NULL, ST(bhead), F(bhead, nblocks, "blocks", 0, INT32_MAX),
         NN(bhead, capacity, "capacity"), F(bhead, fsblksize, "fsblksize", 0, INT32_MAX),
         F(bhead, keyval, "keyval", I32), F(bhead, data_big, "data order", -1, 1))

WIRE_MSG(verdict, int64_t, PAR_WIRE_VERDICT_N, "verdict", 0, NULL, ST(verdict), F(verdict, who, "task", -1, INT32_MAX))

WIRE_MSG(bwreq, int64_t, PAR_WIRE_BWREQ_N, "buddy request", 0, NULL, NN(bwreq, chunksize, "chunk size"),
         F(bwreq, grank, "global rank", 0, INT32_MAX), ST(bwreq))

WIRE_MSG(bwlayout, int64_t, PAR_WIRE_BWLAYOUT_N, "buddy layout", 0, NULL, ST(bwlayout), NN(bwlayout, start, "start"),
         NN(bwlayout, chunksize, "chunk size"), NN(bwlayout, globalskip, "global skip"))

WIRE_MSG(bseen, int64_t, PAR_WIRE_BSEEN_N, "buddy members", 0, NULL, F(bseen, members, "members", -1, INT32_MAX))

WIRE_MSG(bsees, int64_t, PAR_WIRE_BSEES_N, "buddy sight", 0, NULL, F(bsees, sees, "sees its member", 0, 1), ST(bsees))

WIRE_MSG(bdirect, int64_t, PAR_WIRE_BDIRECT_N, "buddy direct verdict", 0, NULL, ST(bdirect),
         F(bdirect, who, "task", -1, INT32_MAX), F(bdirect, direct, "direct", 0, 1))

int par_wire_array_unpack(const char *msg, const char *field, int64_t lo, int64_t hi, int64_t *out, const int64_t *in,
                          int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (in_range(msg, field, in[i], lo, hi))
            return SHEAF_E_FORMAT;
    if (n > 0)
        memmove(out, in, (size_t)n * sizeof *out);
    return 0;
}
