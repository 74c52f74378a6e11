/* format.c - encode/decode of the checkpoint unit header and the manifest,
 * the data checksum and byte order (doc/ckpt.md). */
#include "format.h"
#include "errrec.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ckf_type_size(int t)
{
    static const unsigned char sizes[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8}; /* SHEAF_CKPT_U8 .. F64 */
    return t >= 1 && t <= SHEAF_CKPT_F64 ? sizes[t] : 0;
}

#ifdef CKF_ERR_ELSEWHERE
/* libsheaf_ckpt.so's copy: the record is libsheaf_ckpt_read's (errrec.h) */
int ckf_err(int code, const char *fmt, ...)
{
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    sheaf__ckpt_errset(b);
    return code;
}

const char *ckf_errmsg(void) { return sheaf_ckpt_errmsg(); }
#else
static _Thread_local char errbuf[512];

int ckf_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return code;
}

const char *ckf_errmsg(void) { return errbuf; }

void sheaf__ckpt_errset(const char *msg) { snprintf(errbuf, sizeof errbuf, "%s", msg ? msg : ""); }
#endif

int ckf_host_is_le(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

void ckf_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
void ckf_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
uint32_t ckf_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
uint64_t ckf_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void ckf_swap_elems(void *data, uint64_t n, size_t es)
{
    if (ckf_host_is_le() || es < 2)
        return;
    unsigned char *p = data;
    for (uint64_t i = 0; i < n; i++, p += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* 64-bit words (little-endian, the tail zero-padded): h ^= w; h *= P;
 * h ^= h >> 29; finally h ^= n. Streamed: ckf_hash_add in pieces of any size
 * gives the same value as one ckf_hash of the concatenation. */
static uint64_t hash_word(uint64_t h, uint64_t w)
{
    const uint64_t P = 0x100000001b3ull * 0x9e3779b1ull | 1u;
    h ^= w;
    h *= P;
    return h ^ (h >> 29);
}

void ckf_hash_begin(ckf_hstate *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->h = seed;
}

void ckf_hash_add(ckf_hstate *s, const void *data, uint64_t n)
{
    const unsigned char *p = data;
    s->n += n;
    while (n && s->tl) { /* complete a word begun by the previous piece */
        s->t[s->tl++] = *p++;
        n--;
        if (s->tl == 8) {
            s->h = hash_word(s->h, ckf_get_u64(s->t));
            s->tl = 0;
        }
    }
    for (; n >= 8; n -= 8, p += 8)
        s->h = hash_word(s->h, ckf_get_u64(p));
    memcpy(s->t, p, (size_t)n);
    s->tl = (unsigned)n;
}

uint64_t ckf_hash_end(ckf_hstate *s)
{
    uint64_t h = s->h;
    if (s->tl) {
        unsigned char t[8] = {0};
        memcpy(t, s->t, s->tl);
        h = hash_word(h, ckf_get_u64(t));
    }
    return h ^ s->n;
}

uint64_t ckf_hash(const void *data, uint64_t n, uint64_t seed)
{
    ckf_hstate s;
    ckf_hash_begin(&s, seed);
    ckf_hash_add(&s, data, n);
    return ckf_hash_end(&s);
}

uint64_t ckf_header_size(uint32_t nfields, uint32_t nranks)
{
    uint64_t s = CKF_FIXED + (uint64_t)nfields * CKF_FIELD_ENTRY + (uint64_t)nfields * nranks * CKF_RANK_ENTRY + 8;
    return s;
}

void ckf_layout(ckf_header *h)
{
    uint64_t off = ckf_header_size(h->nfields, h->nranks);
    h->header_bytes = (uint32_t)off;
    for (uint32_t f = 0; f < h->nfields; f++) {
        uint64_t elems = 0;
        for (uint32_t r = 0; r < h->nranks; r++)
            elems += h->counts[(uint64_t)f * h->nranks + r];
        h->fields[f].block_offset = off;
        h->fields[f].block_bytes = elems * h->fields[f].elemsize;
        off += CKF_BLOCK_HDR + h->fields[f].block_bytes;
    }
}

void ckf_block_hdr(uint32_t f, uint64_t bytes, unsigned char out[16])
{
    memcpy(out, "FBLK", 4);
    ckf_put_u32(out + 4, f);
    ckf_put_u64(out + 8, bytes);
}

void ckf_encode(const ckf_header *h, unsigned char *buf)
{
    uint64_t size = ckf_header_size(h->nfields, h->nranks);
    memset(buf, 0, (size_t)size);
    memcpy(buf, CKF_MAGIC, 8);
    ckf_put_u32(buf + 8, CKF_VERSION);
    ckf_put_u32(buf + 12, (uint32_t)size);
    ckf_put_u64(buf + 16, h->step);
    ckf_put_u32(buf + 24, h->nfields);
    ckf_put_u32(buf + 28, h->nranks);
    ckf_put_u64(buf + 32, h->first_rank);
    ckf_put_u64(buf + 40, h->total_ranks);
    memcpy(buf + 48, h->app, strnlen(h->app, SHEAF_CKPT_APP_MAX));
    unsigned char *p = buf + CKF_FIXED;
    for (uint32_t f = 0; f < h->nfields; f++, p += CKF_FIELD_ENTRY) {
        memcpy(p, h->fields[f].name, strnlen(h->fields[f].name, SHEAF_CKPT_NAME_MAX));
        ckf_put_u32(p + 40, h->fields[f].type);
        ckf_put_u32(p + 44, h->fields[f].elemsize);
        ckf_put_u64(p + 48, h->fields[f].block_offset);
        ckf_put_u64(p + 56, h->fields[f].block_bytes);
    }
    uint64_t nr = (uint64_t)h->nfields * h->nranks;
    for (uint64_t i = 0; i < nr; i++, p += CKF_RANK_ENTRY) {
        ckf_put_u64(p, h->counts[i]);
        ckf_put_u64(p + 8, h->sums[i]);
    }
    ckf_put_u64(p, ckf_hash(buf, size - 8, CKF_HASH_SEED));
}

int ckf_peek_size(const unsigned char *buf, uint64_t len, const char *name, uint64_t *need)
{
    if (len < CKF_FIXED || memcmp(buf, CKF_MAGIC, 8) != 0)
        return ckf_err(EINVAL, "%s: not a sheaf checkpoint unit (bad magic or shorter than %u bytes)", name, CKF_FIXED);
    if (ckf_get_u32(buf + 8) != CKF_VERSION)
        return ckf_err(EINVAL, "%s: unit format version %u, this library reads %u", name, ckf_get_u32(buf + 8),
                       CKF_VERSION);
    uint32_t nf = ckf_get_u32(buf + 24), nr = ckf_get_u32(buf + 28);
    if (nf > CKF_MAX_FIELDS || nr == 0 || nr > CKF_MAX_RANKS)
        return ckf_err(EINVAL, "%s: header claims %u fields and %u ranks (limits %u, 1..%u)", name, nf, nr,
                       CKF_MAX_FIELDS, CKF_MAX_RANKS);
    *need = ckf_header_size(nf, nr);
    if (ckf_get_u32(buf + 12) != *need)
        return ckf_err(EINVAL, "%s: header size %u does not match %u fields x %u ranks", name, ckf_get_u32(buf + 12),
                       nf, nr);
    return 0;
}

static int decode_tables(const unsigned char *buf, uint64_t file_size, const char *name, ckf_header *h)
{
    const unsigned char *p = buf + CKF_FIXED;
    uint64_t expect = h->header_bytes;
    for (uint32_t f = 0; f < h->nfields; f++, p += CKF_FIELD_ENTRY) {
        ckf_field *fd = &h->fields[f];
        memcpy(fd->name, p, SHEAF_CKPT_NAME_MAX);
        fd->name[SHEAF_CKPT_NAME_MAX] = 0;
        fd->type = ckf_get_u32(p + 40);
        fd->elemsize = ckf_get_u32(p + 44);
        fd->block_offset = ckf_get_u64(p + 48);
        fd->block_bytes = ckf_get_u64(p + 56);
        /* an unknown type has size 0, which an elemsize of 0 would match:
         * refused, the reader divides by elemsize */
        if (fd->elemsize == 0 || ckf_type_size((int)fd->type) != fd->elemsize || fd->block_offset != expect ||
            fd->block_bytes > file_size || fd->block_offset + CKF_BLOCK_HDR + fd->block_bytes > file_size)
            return ckf_err(EINVAL,
                           "%s: field %u ('%s'): bad type %u/%u or block at %" PRIu64 " +%" PRIu64
                           " outside the %" PRIu64 "-byte unit",
                           name, f, fd->name, fd->type, fd->elemsize, fd->block_offset, fd->block_bytes, file_size);
        expect = fd->block_offset + CKF_BLOCK_HDR + fd->block_bytes;
    }
    for (uint32_t f = 0; f < h->nfields; f++) {
        uint64_t sum = 0;
        for (uint32_t r = 0; r < h->nranks; r++, p += CKF_RANK_ENTRY) {
            uint64_t i = (uint64_t)f * h->nranks + r;
            h->counts[i] = ckf_get_u64(p);
            h->sums[i] = ckf_get_u64(p + 8);
            if (h->counts[i] > h->fields[f].block_bytes)
                return ckf_err(EINVAL, "%s: rank %u of field %u claims %" PRIu64 " elements", name, r, f, h->counts[i]);
            sum += h->counts[i];
            if (sum > h->fields[f].block_bytes) /* keeps sum * elemsize from wrapping */
                return ckf_err(EINVAL, "%s: field %u: rank counts exceed its block of %" PRIu64 " bytes", name, f,
                               h->fields[f].block_bytes);
        }
        if (sum * h->fields[f].elemsize != h->fields[f].block_bytes)
            return ckf_err(
                EINVAL, "%s: field %u: rank counts (%" PRIu64 " elements) do not fill its block of %" PRIu64 " bytes",
                name, f, sum, h->fields[f].block_bytes);
    }
    return 0;
}

int ckf_decode(const unsigned char *buf, uint64_t len, uint64_t file_size, const char *name, ckf_header *h)
{
    memset(h, 0, sizeof *h);
    uint64_t need;
    int rc = ckf_peek_size(buf, len, name, &need);
    if (rc)
        return rc;
    if (len < need || need > file_size)
        return ckf_err(EINVAL, "%s: truncated header (%" PRIu64 " of %" PRIu64 " bytes)", name,
                       len < file_size ? len : file_size, need);
    if (ckf_get_u64(buf + need - 8) != ckf_hash(buf, need - 8, CKF_HASH_SEED))
        return ckf_err(EINVAL, "%s: header checksum mismatch", name);
    h->header_bytes = (uint32_t)need;
    h->step = ckf_get_u64(buf + 16);
    h->nfields = ckf_get_u32(buf + 24);
    h->nranks = ckf_get_u32(buf + 28);
    h->first_rank = ckf_get_u64(buf + 32);
    h->total_ranks = ckf_get_u64(buf + 40);
    memcpy(h->app, buf + 48, SHEAF_CKPT_APP_MAX);
    h->app[SHEAF_CKPT_APP_MAX] = 0;
    if (h->first_rank + h->nranks > h->total_ranks || h->total_ranks > CKF_MAX_RANKS)
        return ckf_err(EINVAL, "%s: ranks %" PRIu64 "+%u beyond the %" PRIu64 " ranks of the checkpoint", name,
                       h->first_rank, h->nranks, h->total_ranks);
    uint64_t nr = (uint64_t)h->nfields * h->nranks;
    h->fields = calloc(h->nfields ? h->nfields : 1, sizeof *h->fields);
    h->counts = calloc(nr ? nr : 1, sizeof *h->counts);
    h->sums = calloc(nr ? nr : 1, sizeof *h->sums);
    if (!h->fields || !h->counts || !h->sums) {
        ckf_header_free(h);
        return ckf_err(ENOMEM, "%s: no memory for the header tables", name);
    }
    rc = decode_tables(buf, file_size, name, h);
    if (rc)
        ckf_header_free(h);
    return rc;
}

void ckf_header_free(ckf_header *h)
{
    free(h->fields);
    free(h->counts);
    free(h->sums);
    h->fields = NULL;
    h->counts = h->sums = NULL;
}

void ckf_step_dirname(uint64_t step, char *out, size_t n) { snprintf(out, n, "step-%020" PRIu64, step); }

char *ckf_manifest_text(const ckf_manifest *m)
{
    size_t cap = 256 + (size_t)m->nunits * 320;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    size_t o = (size_t)snprintf(
        t, cap, "sheaf-ckpt-manifest 1\napp %s\nstrategy %s\nstep %" PRIu64 "\nranks %" PRIu64 "\nunits %u\n",
        m->app[0] ? m->app : "-", m->strategy, m->step, m->nranks, m->nunits);
    for (uint32_t u = 0; u < m->nunits && o < cap; u++) {
        const ckf_unit *x = &m->units[u];
        o += (size_t)snprintf(t + o, cap - o, "unit %s %s %" PRId64 " %" PRIu64 " %" PRIu64 "\n",
                              x->kind == 's' ? "sion" : "plain", x->path, x->task, x->first_rank, x->nranks);
    }
    if (o < cap)
        snprintf(t + o, cap - o, "end\n");
    return t;
}

static int bad_manifest(ckf_manifest *m, const char *name, const char *what)
{
    ckf_manifest_free(m);
    return ckf_err(EINVAL, "%s: bad manifest (%s)", name, what);
}

/* The next line of the text at *p (len bytes left), NUL-cut in place at its
 * '\n' so that sscanf never scans past it (glibc's sscanf takes the strlen of
 * its input: on the whole text that would be quadratic). NULL at the end or
 * when the line has no '\n'. */
static char *next_line(char **p, const char *end)
{
    char *l = *p, *nl = l < end ? memchr(l, '\n', (size_t)(end - l)) : NULL;
    if (!nl)
        return NULL;
    *nl = 0;
    *p = nl + 1;
    return l;
}

static int parse_unit(char *l, ckf_unit *x)
{
    char kind[8];
    int ps = 0, pe = 0, k = 0;
    if (sscanf(l, "unit %7s %n%*s%n %" SCNd64 " %" SCNu64 " %" SCNu64 "%n", kind, &ps, &pe, &x->task, &x->first_rank,
               &x->nranks, &k) != 4 ||
        k == 0 || l[k] != 0 || pe <= ps || pe - ps > (int)CKF_PATH_MAX)
        return -1;
    l[pe] = 0; /* the path, cut in place */
    x->path = l + ps;
    x->kind = !strcmp(kind, "sion") ? 's' : !strcmp(kind, "plain") ? 'p' : 0;
    return 0;
}

int ckf_manifest_parse(char *text, size_t len, const char *name, ckf_manifest *m)
{
    memset(m, 0, sizeof *m);
    m->text = text;
    char *p = text, *end = text + len, *l;
    unsigned nunits = 0;
    int n = 0;
    /* a missing line gives NULL: each is checked before sscanf sees it */
#define LINE() ((l = next_line(&p, end)) != NULL)
    if (!LINE() || sscanf(l, "sheaf-ckpt-manifest 1%n", &n) != 0 || n == 0 || l[n] || !LINE() ||
        sscanf(l, "app %63s", m->app) != 1 || !LINE() || sscanf(l, "strategy %15s", m->strategy) != 1 || !LINE() ||
        sscanf(l, "step %" SCNu64, &m->step) != 1 || !LINE() || sscanf(l, "ranks %" SCNu64, &m->nranks) != 1 ||
        !LINE() || sscanf(l, "units %u", &nunits) != 1)
        return bad_manifest(m, name, "header lines");
#undef LINE
    /* the writer's strategies only (ck_strategy_names): the tools print it */
    if (strcmp(m->strategy, "fpp") && strcmp(m->strategy, "coio") && strcmp(m->strategy, "rbio") &&
        strcmp(m->strategy, "sion"))
        return bad_manifest(m, name, "strategy");
    /* every unit line takes at least CKF_UNIT_LINE_MIN bytes of the text: a
     * count the text cannot hold is refused before the table is allocated, so
     * the table is bounded by the manifest's real size */
    if (nunits == 0 || nunits > CKF_MAX_RANKS || m->nranks == 0 || m->nranks > CKF_MAX_RANKS ||
        nunits > (size_t)(end - p) / CKF_UNIT_LINE_MIN)
        return bad_manifest(m, name, "unit or rank count");
    m->units = calloc(nunits, sizeof *m->units);
    if (!m->units) {
        ckf_manifest_free(m);
        return ckf_err(ENOMEM, "%s: no memory for %u units", name, nunits);
    }
    m->nunits = nunits;
    uint64_t next = 0;
    for (unsigned u = 0; u < nunits; u++) {
        ckf_unit *x = &m->units[u];
        if (!(l = next_line(&p, end)) || parse_unit(l, x))
            return bad_manifest(m, name, "unit line");
        if (!x->kind || x->first_rank != next || x->nranks == 0 || x->nranks > m->nranks || strstr(x->path, "..") ||
            x->path[0] == '/' || (x->kind == 's') != (x->task >= 0))
            return bad_manifest(m, name, "unit kind, path or rank range");
        next += x->nranks;
    }
    if (next != m->nranks || !(l = next_line(&p, end)) || strcmp(l, "end"))
        return bad_manifest(m, name, "units do not cover the ranks, or no end line");
    return 0;
}

void ckf_manifest_free(ckf_manifest *m)
{
    free(m->units);
    free(m->text);
    m->text = NULL;
    m->units = NULL;
    m->nunits = 0;
}
