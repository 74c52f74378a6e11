/* testutil.h - shared helpers for the sheaf unit tests (header-only):
 * deterministic PRNG, the MANIFEST data pattern, temp directories, file
 * helpers and a small SHA-256. */
#ifndef SHEAF_TESTUTIL_H
#define SHEAF_TESTUTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <dirent.h>

/* ---- PRNG (splitmix64) ---- */
static uint64_t tu_rng_state;
static inline void tu_seed(uint64_t s) { tu_rng_state = s; }
static inline uint64_t tu_rand(void)
{
    uint64_t z = (tu_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [lo, hi] */
static inline int64_t tu_range(int64_t lo, int64_t hi) { return lo + (int64_t)(tu_rand() % (uint64_t)(hi - lo + 1)); }

/* Seed from $SHEAF_TEST_SEED or a fixed default; printed so runs can be replayed. */
static inline uint64_t tu_seed_from_env(const char *what, uint64_t dflt)
{
    const char *e = getenv("SHEAF_TEST_SEED");
    uint64_t s = e ? strtoull(e, NULL, 0) : dflt;
    printf("[ SEED     ] %s: seed %llu (set SHEAF_TEST_SEED to replay)\n", what, (unsigned long long)s);
    tu_seed(s);
    return s;
}

/* ---- MANIFEST pattern: byte i of task t ---- */
static inline unsigned char tu_pat(int64_t t, int64_t i) { return (unsigned char)((t * 131 + i * 7 + (i >> 8)) & 255); }
static inline void tu_fill(unsigned char *buf, int64_t t, int64_t off, size_t n)
{
    for (size_t k = 0; k < n; k++)
        buf[k] = tu_pat(t, off + (int64_t)k);
}

/* ---- temp dirs and files ---- */
static inline char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/sheaf-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(p)) {
        perror("mkdtemp");
        abort();
    }
    return p;
}
static inline void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[4096];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}
static inline unsigned char *tu_read_file(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseeko(f, 0, SEEK_END);
    long long n = (long long)ftello(f);
    fseeko(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}
static inline int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int rc = (len && fwrite(data, 1, len, f) != len) ? -1 : 0;
    if (fclose(f))
        rc = -1;
    return rc;
}

/* ---- SHA-256 ---- */
typedef struct {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t n;
} tu_sha256;
static const uint32_t tu_k256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
#define TU_ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static inline void tu_sha_block(tu_sha256 *s, const unsigned char *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = TU_ROR(w[i - 15], 7) ^ TU_ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = TU_ROR(w[i - 2], 17) ^ TU_ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = s->h[0];
    b = s->h[1];
    c = s->h[2];
    d = s->h[3];
    e = s->h[4];
    f = s->h[5];
    g = s->h[6];
    h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (TU_ROR(e, 6) ^ TU_ROR(e, 11) ^ TU_ROR(e, 25)) + ((e & f) ^ (~e & g)) + tu_k256[i] + w[i];
        uint32_t t2 = (TU_ROR(a, 2) ^ TU_ROR(a, 13) ^ TU_ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}
static inline void tu_sha_init(tu_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->len = 0;
    s->n = 0;
}
static inline void tu_sha_update(tu_sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->len += n;
    while (n > 0) {
        size_t k = 64 - s->n < n ? 64 - s->n : n;
        memcpy(s->buf + s->n, p, k);
        s->n += k;
        p += k;
        n -= k;
        if (s->n == 64) {
            tu_sha_block(s, s->buf);
            s->n = 0;
        }
    }
}
static inline void tu_sha_hex(tu_sha256 *s, char out[65])
{
    uint64_t bits = s->len * 8;
    unsigned char pad = 0x80, z = 0;
    tu_sha_update(s, &pad, 1);
    while (s->n != 56)
        tu_sha_update(s, &z, 1);
    unsigned char l[8];
    for (int i = 0; i < 8; i++)
        l[i] = (unsigned char)(bits >> (56 - 8 * i));
    tu_sha_update(s, l, 8);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08x", s->h[i]);
}
static inline void tu_sha256_hex(const void *data, size_t n, char out[65])
{
    tu_sha256 s;
    tu_sha_init(&s);
    tu_sha_update(&s, data, n);
    tu_sha_hex(&s, out);
}
#endif
