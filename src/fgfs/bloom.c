/* bloom.c - hashing (xxHash, compiled in: XXH_INLINE_ALL keeps every xxHash
 * symbol private to this file and adds no run-time dependency), the Bloom
 * filter used to estimate how many distinct names (servers) a path maps to
 * (FGFS IV-E), and the streamed file hash of the consistency check. */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "fgfs.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t fgfs_hash64(const void *p, size_t n) { return XXH3_64bits(p, n); }

/* m = k n / ln 2 puts the filter at 50% density with n names (the paper's
 * sizing); never below FGFS_BLOOM_MIN_BITS, so that few names are estimated
 * at low density, where the estimate is exact to a few percent. */
size_t fgfs_bloom_bits(uint64_t names)
{
    double m = ceil((double)FGFS_BLOOM_K * (double)names / log(2.0));
    if (m < FGFS_BLOOM_MIN_BITS)
        m = FGFS_BLOOM_MIN_BITS;
    if (m > (double)(1u << 30))
        m = (double)(1u << 30);
    size_t b = (size_t)m;
    return (b + 63) / 64 * 64;
}

/* k = 2 positions from the two halves of one 128-bit hash */
void fgfs_bloom_add(uint8_t *bits, size_t m, const char *name, size_t len)
{
    XXH128_hash_t h = XXH3_128bits(name, len);
    uint64_t pos[FGFS_BLOOM_K] = {h.low64 % m, h.high64 % m};
    for (int i = 0; i < FGFS_BLOOM_K; i++)
        bits[pos[i] / 8] |= (uint8_t)(1u << (pos[i] % 8));
}

size_t fgfs_bloom_count(const uint8_t *bits, size_t m)
{
    size_t t = 0;
    for (size_t i = 0; i < m / 8; i++)
        t += (size_t)__builtin_popcount(bits[i]);
    return t;
}

/* maximum likelihood: n = ln(1 - t/m) / (k ln(1 - 1/m)) */
double fgfs_bloom_estimate(size_t t, size_t m)
{
    if (t == 0)
        return 0.0;
    if (t >= m)
        return HUGE_VAL;
    return log1p(-(double)t / (double)m) / ((double)FGFS_BLOOM_K * log1p(-1.0 / (double)m));
}

int fgfs_hash_file(const char *path, uint64_t *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fgfs_err(SHEAF_FGFS_EIO, "%s: cannot open for the consistency hash: %s", path, strerror(errno));
    XXH3_state_t *st = XXH3_createState();
    enum { BUF = 1 << 16 };
    char *buf = malloc(BUF);
    int rc = SHEAF_FGFS_OK;
    if (!st || !buf || XXH3_64bits_reset(st) != XXH_OK)
        rc = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory for the consistency hash", path);
    while (!rc) {
        ssize_t r = read(fd, buf, BUF);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = fgfs_err(SHEAF_FGFS_EIO, "%s: read failed: %s", path, strerror(errno));
        else if (r == 0)
            break;
        else
            XXH3_64bits_update(st, buf, (size_t)r);
    }
    if (!rc)
        *out = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    free(buf);
    close(fd);
    return rc;
}
