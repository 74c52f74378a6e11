/* netproto.c - pack/unpack of the overlay's messages (see netproto.h). */
#include "netproto.h"
#include "../base/wire.h"

#include <stdlib.h>
#include <string.h>

#define SLN_NAME_MAX 255

static unsigned char *putbytes(unsigned char *p, const unsigned char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

static size_t frame(unsigned char *buf, uint32_t type, unsigned char *end)
{
    size_t len = (size_t)(end - buf);
    base_put_le32(buf, SLN_MAGIC);
    base_put_le32(buf + 4, type);
    base_put_le32(buf + 8, (uint32_t)(len - SLD_HDR_SIZE));
    return len;
}

static void cbytes(base_cur *c, unsigned char *out, size_t n)
{
    if (c->bad || c->left < n) {
        c->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, c->p, n);
    c->p += n;
    c->left -= n;
}

size_t sln_pack_hello(const struct sln_hello *m, unsigned char *buf, size_t cap)
{
    if (cap < SLD_HDR_SIZE + 8 + SLN_NONCE)
        return 0;
    unsigned char *p = base_put_le32(buf + SLD_HDR_SIZE, m->tree);
    p = base_put_le32(p, m->rank);
    return frame(buf, SLN_HELLO, putbytes(p, m->nonce, SLN_NONCE));
}

size_t sln_pack_challenge(const struct sln_challenge *m, unsigned char *buf, size_t cap)
{
    if (cap < SLD_HDR_SIZE + SLN_NONCE + SLN_MAC)
        return 0;
    unsigned char *p = putbytes(buf + SLD_HDR_SIZE, m->nonce, SLN_NONCE);
    return frame(buf, SLN_CHALLENGE, putbytes(p, m->mac, SLN_MAC));
}

size_t sln_pack_proof(const struct sln_proof *m, unsigned char *buf, size_t cap)
{
    if (cap < SLD_HDR_SIZE + SLN_MAC)
        return 0;
    return frame(buf, SLN_PROOF, putbytes(buf + SLD_HDR_SIZE, m->mac, SLN_MAC));
}

size_t sln_pack_empty(uint32_t type, unsigned char *buf, size_t cap)
{
    if (cap < SLD_HDR_SIZE)
        return 0;
    return frame(buf, type, buf + SLD_HDR_SIZE);
}

size_t sln_pack_get(uint32_t type, const struct sln_get *m, unsigned char *buf, size_t cap)
{
    size_t n = strnlen(m->path, SLD_PATH_MAX);
    if (n >= SLD_PATH_MAX || cap < SLD_HDR_SIZE + 8 + n)
        return 0;
    unsigned char *p = base_put_le32(buf + SLD_HDR_SIZE, m->kind);
    return frame(buf, type, base_put_lestr(p, m->path, n));
}

size_t sln_obj_size(const struct sln_obj *m)
{
    size_t n =
        SLD_HDR_SIZE + 12 + 8 + strnlen(m->path, SLD_PATH_MAX) + strnlen(m->real, SLD_PATH_MAX) + 16 * 8 + 16 + 4;
    if (m->kind == SLN_K_DIR)
        for (uint32_t i = 0; i < m->n; i++)
            n += 5 + strlen(m->names[i]);
    return n;
}

size_t sln_pack_obj(const struct sln_obj *m, unsigned char *buf, size_t cap)
{
    size_t pn = strnlen(m->path, SLD_PATH_MAX), rn = strnlen(m->real, SLD_PATH_MAX);
    size_t need = sln_obj_size(m);
    if (pn >= SLD_PATH_MAX || rn >= SLD_PATH_MAX || cap < need || need - SLD_HDR_SIZE > SLN_FRAME_MAX)
        return 0;
    unsigned char *p = buf + SLD_HDR_SIZE;
    p = base_put_le32(p, m->kind);
    p = base_put_le32(p, m->flags);
    p = base_put_le32(p, (uint32_t)m->status);
    p = base_put_lestr(p, m->path, pn);
    p = base_put_lestr(p, m->real, rn);
    const struct sld_stat *s = &m->st;
    const uint64_t u[] = {s->dev,
                          s->ino,
                          s->mode,
                          s->nlink,
                          s->uid,
                          s->gid,
                          s->rdev,
                          s->size,
                          s->blksize,
                          s->blocks,
                          (uint64_t)s->atime_sec,
                          (uint64_t)s->atime_nsec,
                          (uint64_t)s->mtime_sec,
                          (uint64_t)s->mtime_nsec,
                          (uint64_t)s->ctime_sec,
                          (uint64_t)s->ctime_nsec};
    for (size_t i = 0; i < 16; i++)
        p = base_put_le64(p, u[i]);
    p = base_put_le64(p, m->mode);
    p = base_put_le64(p, m->size);
    uint32_t n = m->kind == SLN_K_DIR ? m->n : 0;
    p = base_put_le32(p, n);
    for (uint32_t i = 0; i < n; i++) {
        *p++ = m->types[i];
        p = base_put_lestr(p, m->names[i], strlen(m->names[i]));
    }
    return frame(buf, SLN_OBJ, p);
}

size_t sln_pack_coll(uint32_t type, const struct sln_coll *m, unsigned char *buf, size_t cap)
{
    if (m->len > SLN_FRAME_MAX - 8 || cap < SLD_HDR_SIZE + 8 + (size_t)m->len)
        return 0;
    unsigned char *p = base_put_le32(buf + SLD_HDR_SIZE, m->seq);
    p = base_put_le32(p, m->len);
    if (m->len)
        p = putbytes(p, m->data, m->len);
    return frame(buf, type, p);
}

size_t sln_pack_stats(const struct sln_stats *m, unsigned char *buf, size_t cap)
{
    if (m->n > SLD_NCOUNTERS || cap < SLD_HDR_SIZE + 8 + 8 * (size_t)m->n)
        return 0;
    unsigned char *p = base_put_le32(buf + SLD_HDR_SIZE, m->rank);
    p = base_put_le32(p, m->n);
    for (uint32_t i = 0; i < m->n; i++)
        p = base_put_le64(p, m->c[i]);
    return frame(buf, SLN_STATS, p);
}

int sln_unpack_header(const unsigned char *buf, uint32_t *type, uint32_t *len)
{
    if (base_get_le32(buf) != SLN_MAGIC)
        return -1;
    *type = base_get_le32(buf + 4);
    *len = base_get_le32(buf + 8);
    return *len > SLN_FRAME_MAX ? -1 : 0;
}

int sln_unpack_hello(const unsigned char *p, size_t len, struct sln_hello *m)
{
    base_cur c = {p, len, 0};
    m->tree = base_cur_le32(&c);
    m->rank = base_cur_le32(&c);
    cbytes(&c, m->nonce, SLN_NONCE);
    return c.bad || c.left ? -1 : 0;
}

int sln_unpack_challenge(const unsigned char *p, size_t len, struct sln_challenge *m)
{
    base_cur c = {p, len, 0};
    cbytes(&c, m->nonce, SLN_NONCE);
    cbytes(&c, m->mac, SLN_MAC);
    return c.bad || c.left ? -1 : 0;
}

int sln_unpack_proof(const unsigned char *p, size_t len, struct sln_proof *m)
{
    base_cur c = {p, len, 0};
    cbytes(&c, m->mac, SLN_MAC);
    return c.bad || c.left ? -1 : 0;
}

int sln_unpack_get(const unsigned char *p, size_t len, struct sln_get *m)
{
    base_cur c = {p, len, 0};
    m->kind = base_cur_le32(&c);
    base_cur_str(&c, m->path, sizeof m->path);
    if (m->kind < SLN_K_DIR || m->kind > SLN_K_FILE)
        c.bad = 1;
    return c.bad || c.left ? -1 : 0;
}

void sln_obj_free(struct sln_obj *m)
{
    if (m->names)
        for (uint32_t i = 0; i < m->n; i++)
            free(m->names[i]);
    free(m->names);
    free(m->types);
    m->names = NULL;
    m->types = NULL;
    m->n = 0;
}

static void cnames(base_cur *c, struct sln_obj *m, uint32_t n)
{
    /* every name costs at least 6 bytes on the wire: n is bounded by the payload */
    if (c->bad || n > c->left / 6) {
        c->bad = 1;
        return;
    }
    if (!n)
        return;
    m->names = calloc(n, sizeof *m->names);
    m->types = calloc(n, 1);
    if (!m->names || !m->types) {
        c->bad = 1;
        return;
    }
    char name[SLN_NAME_MAX + 1];
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        cbytes(c, &m->types[i], 1);
        base_cur_str(c, name, sizeof name);
        if (c->bad || !sld_path_clean(name, 0) || strchr(name, '/') || (i && strcmp(m->names[i - 1], name) >= 0)) {
            c->bad = 1; /* names are sorted, distinct, one component each, never "." or ".." */
            break;
        }
        if (!(m->names[i] = strdup(name)))
            c->bad = 1;
        else
            m->n = i + 1;
    }
}

int sln_unpack_obj(const unsigned char *p, size_t len, struct sln_obj *m)
{
    base_cur c = {p, len, 0};
    memset(m, 0, sizeof *m);
    m->kind = base_cur_le32(&c);
    m->flags = base_cur_le32(&c);
    m->status = (int32_t)base_cur_le32(&c);
    base_cur_str(&c, m->path, sizeof m->path);
    base_cur_str(&c, m->real, sizeof m->real);
    struct sld_stat *s = &m->st;
    s->dev = base_cur_le64(&c);
    s->ino = base_cur_le64(&c);
    s->mode = base_cur_le64(&c);
    s->nlink = base_cur_le64(&c);
    s->uid = base_cur_le64(&c);
    s->gid = base_cur_le64(&c);
    s->rdev = base_cur_le64(&c);
    s->size = base_cur_le64(&c);
    s->blksize = base_cur_le64(&c);
    s->blocks = base_cur_le64(&c);
    s->atime_sec = (int64_t)base_cur_le64(&c);
    s->atime_nsec = (int64_t)base_cur_le64(&c);
    s->mtime_sec = (int64_t)base_cur_le64(&c);
    s->mtime_nsec = (int64_t)base_cur_le64(&c);
    s->ctime_sec = (int64_t)base_cur_le64(&c);
    s->ctime_nsec = (int64_t)base_cur_le64(&c);
    m->mode = base_cur_le64(&c);
    m->size = base_cur_le64(&c);
    uint32_t n = base_cur_le32(&c);
    if (m->kind < SLN_K_DIR || m->kind > SLN_K_FILE || (n && m->kind != SLN_K_DIR) || m->path[0] != '/' ||
        m->status < 0 || m->status > 4095)
        c.bad = 1;
    /* a FILE is named by its real path, and a listing's or a resolution's real
   * path may name things in the cache: clean absolute paths only (no "..",
   * ".", "//"), so that no peer steers the server outside its cache */
    if ((m->kind == SLN_K_FILE && !sld_path_clean(m->path, 1)) ||
        ((m->kind == SLN_K_DIR || m->kind == SLN_K_REAL) && !m->status && !sld_path_clean(m->real, 1)))
        c.bad = 1;
    cnames(&c, m, n);
    if (c.bad || c.left) {
        sln_obj_free(m);
        return -1;
    }
    return 0;
}

int sln_unpack_coll(const unsigned char *p, size_t len, struct sln_coll *m)
{
    base_cur c = {p, len, 0};
    m->seq = base_cur_le32(&c);
    m->len = base_cur_le32(&c);
    if (c.bad || m->len != c.left)
        return -1;
    m->data = (unsigned char *)c.p;
    return 0;
}

int sln_unpack_stats(const unsigned char *p, size_t len, struct sln_stats *m)
{
    base_cur c = {p, len, 0};
    memset(m, 0, sizeof *m);
    m->rank = base_cur_le32(&c);
    m->n = base_cur_le32(&c);
    if (c.bad || m->n > SLD_NCOUNTERS || c.left != 8 * (size_t)m->n)
        return -1;
    for (uint32_t i = 0; i < m->n; i++)
        m->c[i] = base_cur_le64(&c);
    return c.bad ? -1 : 0;
}
