/* wire.c - pack/unpack of the typed messages of the parallel protocol (wire.h). */
#include "wire.h"
#include "../core/error.h"
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

/* A status is 0 or a (negative) error code that fits an int. */
static int check_status(const char *msg, int64_t v) { return in_range(msg, "status", v, INT32_MIN, 0); }

/* The coalescing sub-record (coll.c's par_coll_fill): collector (-1: off),
 * group size, group span, collector start, merge flag. */
static int check_coll(const char *msg, const int64_t *e)
{
    int rc = in_range(msg, "collector", e[0], -1, INT32_MAX);
    if (!rc)
        rc = in_range(msg, "group size", e[1], 1, INT32_MAX);
    if (!rc)
        rc = in_range(msg, "group span", e[2], 0, INT64_MAX);
    if (!rc)
        rc = in_range(msg, "collector start", e[3], 0, INT64_MAX);
    if (!rc)
        rc = in_range(msg, "merge", e[4], 0, 1);
    return rc;
}

void par_wire_wreq_pack(const par_wire_wreq *m, int64_t *out)
{
    out[0] = m->chunksize;
    out[1] = m->grank;
    out[2] = m->capability;
}

int par_wire_wreq_unpack(par_wire_wreq *m, const int64_t *in, int64_t n)
{
    if (!in || n < PAR_WIRE_WREQ_N)
        return short_msg("write request", n, PAR_WIRE_WREQ_N);
    int rc = in_range("write request", "chunk size", in[0], 0, INT64_MAX / 4);
    if (!rc)
        rc = in_range("write request", "global rank", in[1], 0, INT32_MAX);
    if (!rc)
        rc = in_range("write request", "capability", in[2], INT32_MIN, INT32_MAX);
    if (rc)
        return rc;
    m->chunksize = in[0];
    m->grank = in[1];
    m->capability = in[2];
    return 0;
}

void par_wire_rreq_pack(const par_wire_rreq *m, int64_t *out)
{
    out[0] = m->chunksize;
    out[1] = m->grank;
    out[2] = m->status;
    out[3] = m->capability;
}

int par_wire_rreq_unpack(par_wire_rreq *m, const int64_t *in, int64_t n)
{
    if (!in || n < PAR_WIRE_RREQ_N)
        return short_msg("reinit request", n, PAR_WIRE_RREQ_N);
    int rc = in_range("reinit request", "chunk size", in[0], 0, INT64_MAX / 4);
    if (!rc)
        rc = in_range("reinit request", "global rank", in[1], 0, INT32_MAX);
    if (!rc)
        rc = check_status("reinit request", in[2]);
    if (!rc)
        rc = in_range("reinit request", "capability", in[3], INT32_MIN, INT32_MAX);
    if (rc)
        return rc;
    m->chunksize = in[0];
    m->grank = in[1];
    m->status = in[2];
    m->capability = in[3];
    return 0;
}

void par_wire_wlayout_init(par_wire_wlayout *m)
{
    memset(m, 0, sizeof *m);
    m->status = SHEAF_E_IO;
    m->coll[0] = -1;
    m->coll[1] = 1;
}

void par_wire_wlayout_pack(const par_wire_wlayout *m, int64_t *out)
{
    out[0] = m->status;
    out[1] = m->start;
    out[2] = m->chunksize;
    out[3] = m->globalskip;
    memcpy(out + 4, m->coll, sizeof m->coll);
    out[4 + PAR_COLL_FIELDS] = m->checksum;
}

/* A layout whose status is an error carries nothing else of use: only the
 * status is checked then (the task fails with it). */
int par_wire_wlayout_unpack(par_wire_wlayout *m, const int64_t *in, int64_t n)
{
    static const char msg[] = "write layout";
    if (!in || n < PAR_WIRE_WLAYOUT_N)
        return short_msg(msg, n, PAR_WIRE_WLAYOUT_N);
    int rc = check_status(msg, in[0]);
    if (!rc && !in[0]) {
        rc = in_range(msg, "start", in[1], 0, INT64_MAX);
        if (!rc)
            rc = in_range(msg, "chunk size", in[2], 0, INT64_MAX);
        if (!rc)
            rc = in_range(msg, "global skip", in[3], 0, INT64_MAX);
        if (!rc)
            rc = check_coll(msg, in + 4);
        if (!rc)
            rc = in_range(msg, "checksum", in[4 + PAR_COLL_FIELDS], 0, INT32_MAX);
    }
    if (rc)
        return rc;
    m->status = in[0];
    m->start = in[1];
    m->chunksize = in[2];
    m->globalskip = in[3];
    memcpy(m->coll, in + 4, sizeof m->coll);
    m->checksum = in[4 + PAR_COLL_FIELDS];
    return 0;
}

void par_wire_rlayout_init(par_wire_rlayout *m)
{
    memset(m, 0, sizeof *m);
    m->status = SHEAF_E_IO;
    m->coll[0] = -1;
    m->coll[1] = 1;
}

void par_wire_rlayout_pack(const par_wire_rlayout *m, int64_t *out)
{
    out[0] = m->status;
    out[1] = m->start;
    out[2] = m->chunksize;
    out[3] = m->globalskip;
    out[4] = m->grank;
    out[5] = m->nblocks;
    out[6] = m->keyval;
    out[7] = m->data_big;
    memcpy(out + 8, m->coll, sizeof m->coll);
    out[8 + PAR_COLL_FIELDS] = m->checksum;
}

static int check_rlayout(const int64_t *in)
{
    static const char msg[] = "read layout";
    int rc = in_range(msg, "start", in[1], 0, INT64_MAX);
    if (!rc)
        rc = in_range(msg, "chunk size", in[2], 0, INT64_MAX);
    if (!rc)
        rc = in_range(msg, "global skip", in[3], 0, INT64_MAX);
    if (!rc)
        rc = in_range(msg, "global rank", in[4], 0, INT64_MAX);
    if (!rc)
        rc = in_range(msg, "block count", in[5], 0, INT32_MAX);
    if (!rc)
        rc = in_range(msg, "key-value mode", in[6], INT32_MIN, INT32_MAX);
    if (!rc)
        rc = in_range(msg, "data_big", in[7], INT32_MIN, INT32_MAX);
    if (!rc)
        rc = check_coll(msg, in + 8);
    if (!rc)
        rc = in_range(msg, "checksum", in[8 + PAR_COLL_FIELDS], 0, 1);
    return rc;
}

int par_wire_rlayout_unpack(par_wire_rlayout *m, const int64_t *in, int64_t n)
{
    if (!in || n < PAR_WIRE_RLAYOUT_N)
        return short_msg("read layout", n, PAR_WIRE_RLAYOUT_N);
    int rc = check_status("read layout", in[0]);
    if (!rc && !in[0])
        rc = check_rlayout(in);
    if (rc)
        return rc;
    m->status = in[0];
    m->start = in[1];
    m->chunksize = in[2];
    m->globalskip = in[3];
    m->grank = in[4];
    m->nblocks = in[5];
    m->keyval = in[6];
    m->data_big = in[7];
    memcpy(m->coll, in + 8, sizeof m->coll);
    m->checksum = in[8 + PAR_COLL_FIELDS];
    return 0;
}

void par_wire_place_pack(const par_wire_place *m, int32_t *out)
{
    out[0] = m->status;
    out[1] = m->filenumber;
    out[2] = m->lrank;
    out[3] = m->lsize;
}

int par_wire_place_unpack(par_wire_place *m, const int32_t *in, int64_t n)
{
    static const char msg[] = "task placement";
    if (!in || n < PAR_WIRE_PLACE_N)
        return short_msg(msg, n, PAR_WIRE_PLACE_N);
    int rc = check_status(msg, in[0]);
    if (!rc && !in[0]) {
        rc = in_range(msg, "file number", in[1], 0, INT32_MAX);
        if (!rc)
            rc = in_range(msg, "local size", in[3], 1, INT32_MAX);
        if (!rc)
            rc = in_range(msg, "local rank", in[2], 0, (int64_t)in[3] - 1);
    }
    if (rc)
        return rc;
    m->status = in[0];
    m->filenumber = in[1];
    m->lrank = in[2];
    m->lsize = in[3];
    return 0;
}

void par_wire_ccount_pack(const par_wire_ccount *m, int64_t *out)
{
    out[0] = m->nblocks;
    out[1] = m->status;
}

int par_wire_ccount_unpack(par_wire_ccount *m, const int64_t *in, int64_t n)
{
    if (!in || n < PAR_WIRE_CCOUNT_N)
        return short_msg("close count", n, PAR_WIRE_CCOUNT_N);
    int rc = in_range("close count", "block count", in[0], 0, INT32_MAX / 2);
    if (!rc)
        rc = check_status("close count", in[1]);
    if (rc)
        return rc;
    m->nblocks = in[0];
    m->status = in[1];
    return 0;
}

void par_wire_cmap_pack(const par_wire_cmap *m, int32_t *out)
{
    out[0] = m->filenumber;
    out[1] = m->lrank;
}

int par_wire_cmap_unpack(par_wire_cmap *m, const int32_t *in, int64_t n)
{
    if (!in || n < PAR_WIRE_CMAP_N)
        return short_msg("close mapping", n, PAR_WIRE_CMAP_N);
    int rc = in_range("close mapping", "file", in[0], 0, INT32_MAX);
    if (!rc)
        rc = in_range("close mapping", "local rank", in[1], 0, INT32_MAX);
    if (rc)
        return rc;
    m->filenumber = in[0];
    m->lrank = in[1];
    return 0;
}

/* ---- mapped messages: all int64 fields, checked against a table ---------- */

typedef struct wire_field {
    const char *name;
    int64_t lo, hi;
} wire_field;

static void pack_fields(int64_t *const *src, int nf, int64_t *out)
{
    for (int i = 0; i < nf; i++)
        out[i] = *src[i];
}

/* Check every field first, then copy: a refused message leaves dst as it was. */
static int unpack_fields(const char *msg, const wire_field *f, int nf, int64_t *const *dst, const int64_t *in,
                         int64_t n)
{
    if (!in || n < nf)
        return short_msg(msg, n, nf);
    for (int i = 0; i < nf; i++) {
        int rc = in_range(msg, f[i].name, in[i], f[i].lo, f[i].hi);
        if (rc)
            return rc;
    }
    for (int i = 0; i < nf; i++)
        *dst[i] = in[i];
    return 0;
}

#define ST {"status", INT32_MIN, 0}
#define I32 INT32_MIN, INT32_MAX
#define NN(name) {name, 0, INT64_MAX}
#define FIELDS(m, ...) int64_t *const f_[] = {__VA_ARGS__}; (void)(m)
#define WIRE_FN(type, label, table, ...)                                                                             \
    void par_wire_##type##_pack(const par_wire_##type *m0, int64_t *out)                                            \
    {                                                                                                                \
        par_wire_##type *m = (par_wire_##type *)(uintptr_t)m0;                                                       \
        FIELDS(m, __VA_ARGS__);                                                                                      \
        pack_fields(f_, (int)(sizeof f_ / sizeof *f_), out);                                                         \
    }                                                                                                                \
    int par_wire_##type##_unpack(par_wire_##type *m, const int64_t *in, int64_t n)                                  \
    {                                                                                                                \
        FIELDS(m, __VA_ARGS__);                                                                                      \
        return unpack_fields(label, table, (int)(sizeof f_ / sizeof *f_), f_, in, n);                                \
    }

static const wire_field mhead_f[] = {{"count", -1, INT32_MAX}, {"blocks", 0, INT32_MAX}, ST, {"write", 0, 1},
                                     {"numFiles", I32}, {"fsblksize", -1, INT32_MAX}, {"keyval", I32}};
WIRE_FN(mhead, "mapped head", mhead_f, &m->count, &m->blocks, &m->status, &m->opt[0], &m->opt[1], &m->opt[2],
        &m->opt[3])

static const wire_field mverdict_f[] = {ST, NN("total"), NN("blocks"), {"task", -1, INT32_MAX},
                                        {"option", -1, MO_N - 1}, {"value", INT64_MIN, INT64_MAX},
                                        {"task 0's value", INT64_MIN, INT64_MAX}};
WIRE_FN(mverdict, "mapped verdict", mverdict_f, &m->status, &m->total, &m->blocks, &m->who, &m->field, &m->value,
        &m->value0)

/* ranks and files as given (task 0 checks them against the set and names the task) */
static const wire_field mwrec_f[] = {{"global rank", I32}, {"chunk size", 0, INT64_MAX / 4}, {"file", I32},
                                     {"local rank", I32}};
WIRE_FN(mwrec, "mapped write record", mwrec_f, &m->grank, &m->chunksize, &m->filenumber, &m->lrank)

static const wire_field mwverdict_f[] = {ST, {"fsblksize", -1, INT32_MAX}, {"numFiles", I32}, NN("tasks")};
WIRE_FN(mwverdict, "mapped write verdict", mwverdict_f, &m->status, &m->fsblksize, &m->nfiles, &m->ntotal)

static const wire_field mwlayout_f[] = {NN("start"), NN("chunk size"), NN("global skip")};
WIRE_FN(mwlayout, "mapped write layout", mwlayout_f, &m->start, &m->chunksize, &m->globalskip)

static const wire_field mrverdict_f[] = {ST, {"tasks", 0, INT32_MAX}, {"files", 0, INT32_MAX},
                                         {"fsblksize", 0, INT32_MAX}, {"checksums", 0, 1}};
WIRE_FN(mrverdict, "mapped read verdict", mrverdict_f, &m->status, &m->ntasks, &m->nfiles, &m->fsblksize,
        &m->checksum)

static const wire_field mrshare_f[] = {{"tasks", 0, INT32_MAX / PAR_WIRE_MRREC_N}, {"blocks", 0, INT32_MAX}};
WIRE_FN(mrshare, "mapped read share", mrshare_f, &m->ntasks, &m->nblocks)

static const wire_field mrrec_f[] = {{"global rank", 0, INT32_MAX}, {"file", 0, INT32_MAX},
                                     {"local rank", 0, INT32_MAX},  NN("start"),
                                     NN("chunk size"),              NN("global skip"),
                                     {"blocks", 0, INT32_MAX},      {"keyval", I32},
                                     {"data order", -1, 1}};
WIRE_FN(mrrec, "mapped read record", mrrec_f, &m->grank, &m->filenumber, &m->lrank, &m->start, &m->chunksize,
        &m->globalskip, &m->nblocks, &m->keyval, &m->data_big)

static const wire_field bhead_f[] = {ST, {"blocks", 0, INT32_MAX}, NN("capacity"), {"fsblksize", 0, INT32_MAX},
                                     {"keyval", I32}, {"data order", -1, 1}};
WIRE_FN(bhead, "buddy head", bhead_f, &m->status, &m->nblocks, &m->capacity, &m->fsblksize, &m->keyval,
        &m->data_big)

static const wire_field verdict_f[] = {ST, {"task", -1, INT32_MAX}};
WIRE_FN(verdict, "verdict", verdict_f, &m->status, &m->who)

static const wire_field bwreq_f[] = {NN("chunk size"), {"global rank", 0, INT32_MAX}, ST};
WIRE_FN(bwreq, "buddy request", bwreq_f, &m->chunksize, &m->grank, &m->status)

static const wire_field bwlayout_f[] = {ST, NN("start"), NN("chunk size"), NN("global skip")};
WIRE_FN(bwlayout, "buddy layout", bwlayout_f, &m->status, &m->start, &m->chunksize, &m->globalskip)

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
