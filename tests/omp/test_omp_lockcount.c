/* test_omp_lockcount.c - the lock callbacks of sion_lock_register_lock_callbacks
 * are called as often as SIONlib 1.7.6 calls them (its test_lock___1 prints
 * the counts): per call, with 1, 2 and 4 threads (argv[2], default 2).
 * The expected numbers were measured with SIONlib 1.7.6's OpenMP library
 * built from its public source: registration 1 per thread and the query
 * sion_lock_user_callbacks_defined 1 per thread; a sid-taking call 2 per
 * thread (type, then object); the first open 23 once more (SIONlib's OpenMP
 * API: created, 11 callbacks registered with 2 lookups each); a write open
 * 6 per thread + 2, a read open 6 per thread + 8, a close 7 per thread.
 * Usage: test_omp_lockcount DIR [threads] */
#include "sion.h"
#include "sion_omp.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_count;
static omp_lock_t g_lk;
static int ulock(void *d)
{
    (void)d;
    omp_set_lock(&g_lk);
    g_count++;
    return 0;
}
static int uunlock(void *d)
{
    (void)d;
    omp_unset_lock(&g_lk);
    return 0;
}

static int g_fail, g_last;
static void expect(const char *what, int per_thread, int once, int n)
{
    int got = g_count - g_last, want = per_thread * n + once;
    if (got != want) {
        printf("FAIL %s: %d lock callbacks with %d threads, SIONlib 1.7.6 makes %d\n", what, got, n, want);
        g_fail = 1;
    } else {
        printf("ok   %s: %d\n", what, got);
    }
    g_last = g_count;
}

#define STEP(what, per, once, stmt)                                                                                    \
    do {                                                                                                               \
        stmt;                                                                                                          \
        _Pragma("omp barrier") _Pragma("omp master") expect(what, per, once, n);                                       \
        _Pragma("omp barrier")                                                                                         \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [threads]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 2;
    if (n < 1 || n > 64)
        return 2;
    omp_set_num_threads(n);
    omp_set_dynamic(0);
    char fa[4096], fb[4096];
    snprintf(fa, sizeof fa, "%s/lockcount_a.sion", argv[1]);
    snprintf(fb, sizeof fb, "%s/lockcount_b.sion", argv[1]);
    omp_init_lock(&g_lk);
    int before = -1;
#pragma omp parallel
    {
#pragma omp master
        before = sion_lock_user_callbacks_defined();
#pragma omp barrier
        sion_lock_register_lock_callbacks(ulock, uunlock, NULL);
#pragma omp barrier
        sion_lock_user_callbacks_defined();
    }
    if (before != 0) {
        printf("FAIL callbacks defined before registration: %d\n", before);
        g_fail = 1;
    }
    expect("prolog (register + query per thread)", 2, 0, n);
#pragma omp parallel
    {
        sion_int64 cs = 100;
        sion_int32 fsb = 10;
        int gr, sid = -1;
        char *nf = NULL, buf[100];
        FILE *fp = NULL;
        memset(buf, 'a', sizeof buf);
        STEP("first open, write", 6, 2 + 23, sid = sion_paropen_omp(fa, "bw", &cs, &fsb, &gr, &fp, &nf));
        free(nf); /* the file name each open hands back (the caller frees it) */
        nf = NULL;
        STEP("close, write", 7, 0, sion_parclose_omp(sid));
        cs = 112;
        fsb = 16;
        STEP("open, write", 6, 2, sid = sion_paropen_omp(fb, "bw", &cs, &fsb, &gr, &fp, &nf));
        free(nf); /* the file name each open hands back (the caller frees it) */
        nf = NULL;
        STEP("sion_ensure_free_space", 2, 0, sion_ensure_free_space(sid, 100));
        STEP("fwrite (no sion call)", 0, 0, fwrite(buf, 1, 100, fp));
        STEP("sion_get_bytes_written", 2, 0, sion_get_bytes_written(sid));
        STEP("close, write", 7, 0, sion_parclose_omp(sid));
        STEP("open, read", 6, 8, sid = sion_paropen_omp(fb, "br", &cs, &fsb, &gr, &fp, &nf));
        free(nf); /* the file name each open hands back (the caller frees it) */
        nf = NULL;
        if (sid < 0) {
#pragma omp critical
            g_fail = 1;
        }
        STEP("sion_feof", 2, 0, sion_feof(sid));
        STEP("sion_bytes_avail_in_block", 2, 0, sion_bytes_avail_in_block(sid));
        STEP("close, read", 7, 0, sion_parclose_omp(sid));
        /* a bad sid: SIONlib's first lookup (its type) fails, the second is not made */
        STEP("sion_feof(bad sid)", 1, 0, sion_feof(12345));
    }
    printf("%s: %d lock callbacks in all with %d threads\n", g_fail ? "FAILED" : "passed", g_count, n);
    return g_fail;
}
