/* msg.c - the messages FGFS processes exchange, as typed structs with one
 * pack and one unpack each (little-endian, status word first), and the
 * reduction operators over them. Unpack checks every length against the
 * input; combine operators never trust their inputs either. */
#include "fgfs.h"
#include "../base/wire.h"
#include <stdlib.h>
#include <string.h>

static void sw_pack(const fgfs_status_word *s, uint8_t *p)
{
    base_put_le32(p, (uint32_t)s->code);
    base_put_le32(p + 4, (uint32_t)s->rank);
}
static void sw_unpack(const uint8_t *p, fgfs_status_word *s)
{
    s->code = (int32_t)base_get_le32(p);
    s->rank = (int32_t)base_get_le32(p + 4);
}

/* the failure of the lowest rank wins */
void fgfs_sw_merge(fgfs_status_word *a, const fgfs_status_word *b)
{
    if (b->code && (!a->code || b->rank < a->rank))
        *a = *b;
}

/* ---- triage: AND of "local", OR of "local", min/max of the name hash ---- */
void fgfs_triage_pack(const fgfs_triage_msg *m, uint8_t *out)
{
    sw_pack(&m->st, out);
    base_put_le32(out + 8, m->all_local);
    base_put_le32(out + 12, m->any_local);
    base_put_le64(out + 16, m->hmin);
    base_put_le64(out + 24, m->hmax);
}
int fgfs_triage_unpack(const uint8_t *in, size_t len, fgfs_triage_msg *m)
{
    if (len != FGFS_TRIAGE_LEN)
        return -1;
    sw_unpack(in, &m->st);
    m->all_local = base_get_le32(in + 8);
    m->any_local = base_get_le32(in + 12);
    m->hmin = base_get_le64(in + 16);
    m->hmax = base_get_le64(in + 24);
    return 0;
}
static int triage_combine(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg)
{
    fgfs_triage_msg x, y;
    if (fgfs_triage_unpack(a, alen, &x) || fgfs_triage_unpack(b, blen, &y))
        return -1;
    fgfs_sw_merge(&x.st, &y.st);
    x.all_local = x.all_local && y.all_local;
    x.any_local = x.any_local || y.any_local;
    x.hmin = y.hmin < x.hmin ? y.hmin : x.hmin;
    x.hmax = y.hmax > x.hmax ? y.hmax : x.hmax;
    fgfs_triage_pack(&x, out);
    *outlen = FGFS_TRIAGE_LEN;
    return 0;
}
const sheaf_fgfs_op fgfs_op_triage = {"fgfs-triage", FGFS_TRIAGE_LEN, triage_combine, NULL};

/* ---- Bloom filter: OR ---- */
size_t fgfs_bloom_msg_len(uint32_t mbits) { return 16 + mbits / 8; }
void fgfs_bloom_pack(const fgfs_bloom_msg *m, uint8_t *out)
{
    sw_pack(&m->st, out);
    base_put_le32(out + 8, m->mbits);
    base_put_le32(out + 12, 0);
    if (out + 16 != m->bits)
        memcpy(out + 16, m->bits, m->mbits / 8);
}
int fgfs_bloom_unpack(const uint8_t *in, size_t len, fgfs_bloom_msg *m)
{
    if (len < 16)
        return -1;
    sw_unpack(in, &m->st);
    m->mbits = base_get_le32(in + 8);
    if (m->mbits % 64 || len != fgfs_bloom_msg_len(m->mbits))
        return -1;
    m->bits = (uint8_t *)in + 16;
    return 0;
}
static int bloom_combine(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg)
{
    fgfs_bloom_msg x, y;
    if (fgfs_bloom_unpack(a, alen, &x) || fgfs_bloom_unpack(b, blen, &y) || x.mbits != y.mbits)
        return -1;
    uint8_t *o = out;
    fgfs_sw_merge(&x.st, &y.st);
    for (size_t i = 0; i < x.mbits / 8; i++)
        o[16 + i] = x.bits[i] | y.bits[i];
    x.bits = o + 16;
    fgfs_bloom_pack(&x, o);
    *outlen = alen;
    return 0;
}
const sheaf_fgfs_op fgfs_op_bloom_or = {"fgfs-bloom-or", 16 + (1u << 27), bloom_combine, NULL};

/* ---- consistency: min/max of the representatives' file hashes ---- */
void fgfs_hash_pack(const fgfs_hash_msg *m, uint8_t *out)
{
    sw_pack(&m->st, out);
    base_put_le32(out + 8, m->have);
    base_put_le32(out + 12, 0);
    base_put_le64(out + 16, m->hmin);
    base_put_le64(out + 24, m->hmax);
}
int fgfs_hash_unpack(const uint8_t *in, size_t len, fgfs_hash_msg *m)
{
    if (len != FGFS_HASH_LEN)
        return -1;
    sw_unpack(in, &m->st);
    m->have = base_get_le32(in + 8);
    m->pad = 0;
    m->hmin = base_get_le64(in + 16);
    m->hmax = base_get_le64(in + 24);
    return 0;
}
static int hash_combine(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg)
{
    fgfs_hash_msg x, y;
    if (fgfs_hash_unpack(a, alen, &x) || fgfs_hash_unpack(b, blen, &y))
        return -1;
    fgfs_sw_merge(&x.st, &y.st);
    if (y.have) {
        x.hmin = !x.have || y.hmin < x.hmin ? y.hmin : x.hmin;
        x.hmax = !x.have || y.hmax > x.hmax ? y.hmax : x.hmax;
        x.have += y.have;
    }
    fgfs_hash_pack(&x, out);
    *outlen = FGFS_HASH_LEN;
    return 0;
}
const sheaf_fgfs_op fgfs_op_hash = {"fgfs-hash-minmax", FGFS_HASH_LEN, hash_combine, NULL};

/* ---- group tables: sorted {members, rep, name}; merge by name ---- */
#define GT_HDR 12
#define GE_HDR 10

int fgfs_group_pack1(const fgfs_status_word *st, const char *name, uint32_t rep, uint8_t **out, size_t *len)
{
    size_t nl = name ? strlen(name) : 0;
    if (nl > 0xFFFF)
        return fgfs_err(SHEAF_FGFS_ELIMIT, "name of %zu bytes exceeds 65535", nl);
    size_t l = GT_HDR + (name ? GE_HDR + nl : 0);
    uint8_t *p = malloc(l);
    if (!p)
        return fgfs_err(SHEAF_FGFS_ENOMEM, "out of memory for a group message");
    sw_pack(st, p);
    base_put_le32(p + 8, name ? 1 : 0);
    if (name) {
        base_put_le32(p + 12, 1);
        base_put_le32(p + 16, rep);
        p[20] = (uint8_t)(nl & 0xFF);
        p[21] = (uint8_t)(nl >> 8);
        memcpy(p + 22, name, nl);
    }
    *out = p;
    *len = l;
    return SHEAF_FGFS_OK;
}

typedef struct {
    const uint8_t *p, *end;
    uint32_t left;
} gcur;

static int gcur_open(gcur *c, const uint8_t *in, size_t len, fgfs_status_word *st)
{
    if (len < GT_HDR)
        return -1;
    sw_unpack(in, st);
    c->left = base_get_le32(in + 8);
    c->p = in + GT_HDR;
    c->end = in + len;
    return 0;
}
/* next entry, -1 malformed, 0 done, 1 entry */
static int gcur_next(gcur *c, fgfs_group_entry *e)
{
    if (!c->left)
        return c->p == c->end ? 0 : -1;
    if ((size_t)(c->end - c->p) < GE_HDR)
        return -1;
    e->members = base_get_le32(c->p);
    e->rep = base_get_le32(c->p + 4);
    e->len = (uint16_t)(c->p[8] | c->p[9] << 8);
    if ((size_t)(c->end - c->p - GE_HDR) < e->len)
        return -1;
    e->name = (const char *)c->p + GE_HDR;
    c->p += GE_HDR + e->len;
    c->left--;
    return 1;
}
static int ecmp(const fgfs_group_entry *a, const fgfs_group_entry *b)
{
    int r = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);
    return r ? r : (a->len > b->len) - (a->len < b->len);
}

int fgfs_group_unpack(const uint8_t *in, size_t len, fgfs_group_table *t)
{
    gcur c;
    memset(t, 0, sizeof *t);
    if (gcur_open(&c, in, len, &t->st) || c.left > len / GE_HDR)
        return -1;
    t->e = calloc(c.left ? c.left : 1, sizeof *t->e);
    if (!t->e)
        return -1;
    int r;
    while ((r = gcur_next(&c, &t->e[t->n])) == 1) {
        if (t->n && ecmp(&t->e[t->n - 1], &t->e[t->n]) >= 0)
            break; /* not strictly sorted */
        t->n++;
    }
    if (r != 0) {
        fgfs_group_table_free(t);
        return -1;
    }
    return 0;
}
void fgfs_group_table_free(fgfs_group_table *t)
{
    free(t->e);
    free(t->raw);
    t->raw = NULL;
    t->e = NULL;
    t->n = 0;
}

static int emit(uint8_t *o, size_t *w, size_t cap, const fgfs_group_entry *e)
{
    if (*w + GE_HDR + e->len > cap)
        return -1;
    base_put_le32(o + *w, e->members);
    base_put_le32(o + *w + 4, e->rep);
    o[*w + 8] = (uint8_t)(e->len & 0xFF);
    o[*w + 9] = (uint8_t)(e->len >> 8);
    memcpy(o + *w + GE_HDR, e->name, e->len);
    *w += GE_HDR + e->len;
    return 0;
}

/* arg: the size_t bound. Overflow is not a failure of the operator: the
 * result becomes an empty table with status ELIMIT, so every process
 * learns it from the same message. */
int fgfs_op_group_merge(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg)
{
    size_t cap = *(const size_t *)arg;
    gcur x, y;
    fgfs_status_word sx, sy;
    if (gcur_open(&x, a, alen, &sx) || gcur_open(&y, b, blen, &sy) || cap < GT_HDR)
        return -1;
    fgfs_sw_merge(&sx, &sy);
    uint8_t *o = out;
    size_t w = GT_HDR;
    uint32_t n = 0;
    fgfs_group_entry ex, ey;
    int rx = gcur_next(&x, &ex), ry = gcur_next(&y, &ey), over = sx.code != 0;
    while (!over && rx == 1 && ry == 1) {
        int c = ecmp(&ex, &ey);
        if (c == 0) {
            ex.members += ey.members;
            ex.rep = ey.rep < ex.rep ? ey.rep : ex.rep;
            over = emit(o, &w, cap, &ex);
            rx = gcur_next(&x, &ex), ry = gcur_next(&y, &ey);
        } else if (c < 0) {
            over = emit(o, &w, cap, &ex);
            rx = gcur_next(&x, &ex);
        } else {
            over = emit(o, &w, cap, &ey);
            ry = gcur_next(&y, &ey);
        }
        n++;
    }
    for (; !over && rx == 1; rx = gcur_next(&x, &ex), n++)
        over = emit(o, &w, cap, &ex);
    for (; !over && ry == 1; ry = gcur_next(&y, &ey), n++)
        over = emit(o, &w, cap, &ey);
    if (!over && (rx < 0 || ry < 0))
        return -1;
    if (over) {
        if (!sx.code)
            sx.code = SHEAF_FGFS_ELIMIT, sx.rank = -1;
        n = 0;
        w = GT_HDR;
    }
    sw_pack(&sx, o);
    base_put_le32(o + 8, n);
    *outlen = w;
    return 0;
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int fgfs_group_packn(const fgfs_status_word *st, const char **names, size_t n, uint32_t rep, uint8_t **out, size_t *len)
{
    size_t l = GT_HDR;
    if (n)
        qsort(names, n, sizeof *names, cmpstr);
    for (size_t i = 0; i < n; i++) {
        if (strlen(names[i]) > 0xFFFF)
            return fgfs_err(SHEAF_FGFS_ELIMIT, "name of %zu bytes exceeds 65535", strlen(names[i]));
        l += GE_HDR + strlen(names[i]);
    }
    uint8_t *p = malloc(l);
    if (!p)
        return fgfs_err(SHEAF_FGFS_ENOMEM, "out of memory for a group message of %zu names", n);
    size_t w = GT_HDR;
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && !strcmp(names[i], names[i - 1]))
            continue;
        fgfs_group_entry e = {1, rep, (uint16_t)strlen(names[i]), names[i]};
        emit(p, &w, l, &e);
        k++;
    }
    sw_pack(st, p);
    base_put_le32(p + 8, k);
    *out = p;
    *len = w;
    return SHEAF_FGFS_OK;
}
