/* bloom.c - hashing (xxHash, compiled in: XXH_INLINE_ALL keeps every xxHash
 * symbol private to this file and adds no run-time dependency), the Bloom
 * filter used to estimate how many distinct names (servers) a path maps to
 * (FGFS IV-E), and the streamed file hash of the consistency check. */
#define _DEFAULT_SOURCE /* d_type, DT_* (readdir) */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "fgfs.h"
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* one directory entry of the listing digest */
typedef struct dent {
    char *name;
    char type;
} dent;
static int dent_cmp(const void *a, const void *b) { return strcmp(((const dent *)a)->name, ((const dent *)b)->name); }

static char type_of(int dfd, const struct dirent *d)
{
    unsigned char t = d->d_type;
    struct stat sb;
    if (t == DT_UNKNOWN && !fstatat(dfd, d->d_name, &sb, AT_SYMLINK_NOFOLLOW))
        t = S_ISREG(sb.st_mode)    ? DT_REG
            : S_ISDIR(sb.st_mode)  ? DT_DIR
            : S_ISLNK(sb.st_mode)  ? DT_LNK
            : S_ISFIFO(sb.st_mode) ? DT_FIFO
            : S_ISSOCK(sb.st_mode) ? DT_SOCK
            : S_ISCHR(sb.st_mode)  ? DT_CHR
            : S_ISBLK(sb.st_mode)  ? DT_BLK
                                   : DT_UNKNOWN;
    switch (t) {
    case DT_REG:
        return 'f';
    case DT_DIR:
        return 'd';
    case DT_LNK:
        return 'l';
    case DT_FIFO:
        return 'p';
    case DT_SOCK:
        return 's';
    case DT_CHR:
        return 'c';
    case DT_BLK:
        return 'b';
    default:
        return '?';
    }
}

/* A directory's digest: XXH3-64 over its entries sorted by name, each as
 * "TYPE NAME\0" (TYPE one of f d l p s c b ?), "." and ".." left out; the
 * entries' contents are not read. Bounded: FGFS_DIR_MAX_ENTRIES entries and
 * FGFS_DIR_MAX_BYTES bytes of names, else ELIMIT naming the directory. */
static int hash_dir(int fd, const char *path, uint64_t *out)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return fgfs_err(SHEAF_FGFS_EIO, "%s: cannot list the directory: %s", path, strerror(e));
    }
    dent *v = NULL;
    size_t n = 0, cap = 0, bytes = 0;
    int rc = SHEAF_FGFS_OK;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno)
                rc = fgfs_err(SHEAF_FGFS_EIO, "%s: reading the directory failed: %s", path, strerror(errno));
            break;
        }
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t l = strlen(e->d_name);
        if (n >= FGFS_DIR_MAX_ENTRIES || bytes + l + 3 > FGFS_DIR_MAX_BYTES) {
            rc = fgfs_err(SHEAF_FGFS_ELIMIT, "%s: the directory has more than %d entries or %d bytes of names", path,
                          FGFS_DIR_MAX_ENTRIES, FGFS_DIR_MAX_BYTES);
            break;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            dent *nv = realloc(v, nc * sizeof *v);
            if (!nv) {
                rc = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory listing the directory", path);
                break;
            }
            v = nv, cap = nc;
        }
        if (!(v[n].name = strdup(e->d_name))) {
            rc = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory listing the directory", path);
            break;
        }
        v[n++].type = type_of(dirfd(d), e);
        bytes += l + 3;
    }
    closedir(d);
    if (!rc) {
        if (n) /* an empty directory has no array (qsort's base must not be NULL) */
            qsort(v, n, sizeof *v, dent_cmp);
        XXH3_state_t *st = XXH3_createState();
        if (!st || XXH3_64bits_reset(st) != XXH_OK)
            rc = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory for the directory digest", path);
        else {
            XXH3_64bits_update(st, "dir\n", 4); /* a directory never hashes like a file */
            for (size_t i = 0; i < n; i++) {
                char hdr[2] = {v[i].type, ' '};
                XXH3_64bits_update(st, hdr, 2);
                XXH3_64bits_update(st, v[i].name, strlen(v[i].name) + 1);
            }
            *out = XXH3_64bits_digest(st);
        }
        XXH3_freeState(st);
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
    return rc;
}

int fgfs_hash_file(const char *path, uint64_t *out)
{
    int fd, orc = fgfs_open_input(path, "file to hash for the consistency check", 1, &fd);
    if (orc)
        return orc;
    struct stat sb;
    if (!fstat(fd, &sb) && S_ISDIR(sb.st_mode))
        return hash_dir(fd, path, out);
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
