/* wire.h - little-endian fields of wire messages and a bounded read cursor,
 * for every part that puts integers on a wire or into a file in a fixed byte
 * order (src/fgfs's messages, src/loader's two protocols). Header only: static inline
 * functions, no library, no state; C library only (no MPI, no OpenMP, no
 * other folder of sheaf), so every folder may include it (doc/design.md,
 * "Layers": src/base is rank 0). Internal: not installed. */
#ifndef SHEAF_BASE_WIRE_H
#define SHEAF_BASE_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* v at p[0..3] (p[0] the lowest byte); returns p + 4 */
static inline unsigned char *base_put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
    return p + 4;
}

/* v at p[0..7], low word first; returns p + 8 */
static inline unsigned char *base_put_le64(unsigned char *p, uint64_t v)
{
    p = base_put_le32(p, (uint32_t)v);
    return base_put_le32(p, (uint32_t)(v >> 32));
}

/* a length-prefixed byte string: 32-bit n, then the n bytes; returns the end */
static inline unsigned char *base_put_lestr(unsigned char *p, const char *s, size_t n)
{
    p = base_put_le32(p, (uint32_t)n);
    if (n)
        memcpy(p, s, n);
    return p + n;
}

static inline uint32_t base_get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t base_get_le64(const unsigned char *p)
{
    return (uint64_t)base_get_le32(p) | (uint64_t)base_get_le32(p + 4) << 32;
}

/* A cursor over a payload that refuses to read past its end: a read beyond
 * it sets bad (which stays set) and yields zeros / an empty string. */
typedef struct base_cur {
    const unsigned char *p;
    size_t left;
    int bad;
} base_cur;

static inline uint32_t base_cur_le32(base_cur *c)
{
    if (c->bad || c->left < 4) {
        c->bad = 1;
        return 0;
    }
    uint32_t v = base_get_le32(c->p);
    c->p += 4;
    c->left -= 4;
    return v;
}

static inline uint64_t base_cur_le64(base_cur *c)
{
    if (c->bad || c->left < 8) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = base_get_le64(c->p);
    c->p += 8;
    c->left -= 8;
    return v;
}

/* A length-prefixed string without NUL bytes, shorter than cap (cap >= 1),
 * into out (NUL-terminated; empty when refused). */
static inline void base_cur_str(base_cur *c, char *out, size_t cap)
{
    uint32_t n = base_cur_le32(c);
    if (c->bad || n >= cap || n > c->left || memchr(c->p, 0, n)) {
        c->bad = 1;
        out[0] = 0;
        return;
    }
    memcpy(out, c->p, n);
    out[n] = 0;
    c->p += n;
    c->left -= n;
}

#endif
