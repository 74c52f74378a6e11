/* lebuf.h - little-endian fields and a bounded read cursor, shared by the
 * load server's client protocol (proto.c) and the overlay's (netproto.c).
 * Internal to src/loader. */
#ifndef SHEAF_LOADER_LEBUF_H
#define SHEAF_LOADER_LEBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline unsigned char *put32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
  return p + 4;
}

static inline unsigned char *put64(unsigned char *p, uint64_t v)
{
  p = put32(p, (uint32_t)v);
  return put32(p, (uint32_t)(v >> 32));
}

static inline unsigned char *putstr(unsigned char *p, const char *s, size_t n)
{
  p = put32(p, (uint32_t)n);
  memcpy(p, s, n);
  return p + n;
}

static inline uint32_t get32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const unsigned char *p)
{
  return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* a cursor over a payload that refuses to read past its end: a read beyond
 * it sets bad and yields zeros / an empty string */
struct cur { const unsigned char *p; size_t left; int bad; };

static inline uint32_t cur32(struct cur *c)
{
  if (c->bad || c->left < 4) { c->bad = 1; return 0; }
  uint32_t v = get32(c->p);
  c->p += 4; c->left -= 4;
  return v;
}

static inline uint64_t cur64(struct cur *c)
{
  if (c->bad || c->left < 8) { c->bad = 1; return 0; }
  uint64_t v = get64(c->p);
  c->p += 8; c->left -= 8;
  return v;
}

/* a length-prefixed string without NUL bytes, shorter than cap */
static inline void curstr(struct cur *c, char *out, size_t cap)
{
  uint32_t n = cur32(c);
  if (c->bad || n >= cap || n > c->left || memchr(c->p, 0, n)) { c->bad = 1; out[0] = 0; return; }
  memcpy(out, c->p, n);
  out[n] = 0;
  c->p += n; c->left -= n;
}

#endif
