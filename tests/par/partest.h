/* partest.h - small thread-safe test harness for the tests/par programs
 * (header-only). cmocka's asserts longjmp and are not usable from task
 * threads, so checks record failures (with file:line, task rank and a
 * message) and the test continues; main() reports and sets the exit code. */
#ifndef PARTEST_H
#define PARTEST_H
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sion.h"
#include "threadcomm.h"

static atomic_int pt_failures;
static _Thread_local int pt_rank = -1;

static int pt_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char m[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (pt_rank >= 0)
        fprintf(stderr, "FAIL %s:%d [task %d] (%s): %s\n", file, line, pt_rank, cond, m);
    else
        fprintf(stderr, "FAIL %s:%d (%s): %s\n", file, line, cond, m);
    fflush(stderr);
    atomic_fetch_add(&pt_failures, 1);
    return 0;
}
/* CHECK(cond, fmt, ...): record a failure with a message when cond is false;
 * evaluates to cond. */
#define CHECK(cond, ...) ((cond) ? 1 : pt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__))

/* ---- data pattern: byte i of task t in a set with salt s ---- */
static inline unsigned char pt_byte(unsigned salt, int64_t t, int64_t i)
{
    uint64_t x = (uint64_t)salt * 0x9E3779B97F4A7C15ull + (uint64_t)t * 0xBF58476D1CE4E5B9ull + (uint64_t)(i >> 3);
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 32;
    return (unsigned char)((x >> (8 * (i & 7))) & 255);
}
static inline void pt_fill(unsigned char *b, unsigned salt, int64_t t, int64_t off, size_t n)
{
    for (size_t k = 0; k < n; k++)
        b[k] = pt_byte(salt, t, off + (int64_t)k);
}
/* index of the first byte of b[0..n) that differs from the pattern, or -1 */
static inline int64_t pt_mismatch(const unsigned char *b, unsigned salt, int64_t t, int64_t off, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (b[k] != pt_byte(salt, t, off + (int64_t)k))
            return (int64_t)k;
    return -1;
}
static inline uint64_t pt_fnv(const unsigned char *b, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < n; k++)
        h = (h ^ b[k]) * 1099511628211ull;
    return h;
}

/* ---- deterministic per-thread PRNG (splitmix64) ---- */
static inline uint64_t pt_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int64_t pt_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(pt_rand(s) % (uint64_t)(hi - lo + 1));
}
static inline uint64_t pt_seed(void)
{
    const char *e = getenv("SHEAF_TEST_SEED");
    return e ? strtoull(e, NULL, 0) : 20261123ull;
}

/* ---- temp dir: $TMPDIR, else the working directory ---- */
static char pt_dir[4096];
static inline const char *pt_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(pt_dir, sizeof pt_dir, "%s/sheaf-par-XXXXXX", base && *base ? base : ".");
    if (!mkdtemp(pt_dir)) {
        perror("mkdtemp");
        exit(2);
    }
    return pt_dir;
}
static inline void pt_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[8192];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            if (strlen(dir) + strlen(e->d_name) + 2 > sizeof p)
                continue;
            memcpy(p, dir, strlen(dir));
            p[strlen(dir)] = '/';
            strcpy(p + strlen(dir) + 1, e->d_name);
            struct stat st;
            if (!lstat(p, &st) && S_ISDIR(st.st_mode))
                pt_rmtree(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}
static inline int pt_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}
static inline long long pt_fsize(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}
/* number of entries in dir (without . and ..) */
static inline int pt_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* Physical file name of member f of set `base` (sheaf's default naming). */
static inline void pt_member(char *out, size_t len, const char *base, int f)
{
    if (f == 0)
        snprintf(out, len, "%s", base);
    else
        snprintf(out, len, "%s.%06d", base, f);
}

/* ---- test driver ---- */
typedef struct {
    const char *name;
    void (*fn)(void);
} pt_test;
static inline int pt_main(const pt_test *tests, int n, int argc, char **argv)
{
    if (getenv("SION_ERROR_MSG") == NULL)
        sheaf_set_error_printing(0);
    int failed_tests = 0;
    for (int i = 0; i < n; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1]))
            continue;
        int before = atomic_load(&pt_failures);
        int vbefore = tc_violations();
        printf("[ RUN      ] %s\n", tests[i].name);
        fflush(stdout);
        tests[i].fn();
        int nv = tc_violations() - vbefore;
        if (nv)
            pt_fail(__FILE__, __LINE__, "tc_violations() == 0",
                    "%d collective protocol violation(s) by the library; first: %s", nv, tc_first_violation());
        int nf = atomic_load(&pt_failures) - before;
        printf("[ %s ] %s%s\n", nf ? "  FAILED" : "      OK", tests[i].name, nf ? " (see FAIL lines on stderr)" : "");
        fflush(stdout);
        if (nf)
            failed_tests++;
    }
    printf("%d test(s) failed\n", failed_tests);
    return failed_tests ? 1 : 0;
}
#endif
