/* test_hostile.c - crafted input against the recovery and open paths (issue 11):
 * `sheaf recover` / `sheaf verify` on an unclosed header that names millions
 * of member files or a block table far larger than the file (memory must stay
 * bounded by the file: each case runs in a child under an address-space
 * limit), file system block sizes that are not powers of two or above 32 MiB,
 * and containers that are not regular files (a FIFO must fail at
 * once, never block). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "../helpers/testutil.h"
#include "sion.h"
#include "sheaf.h"
#include "crc32c.h"
#include "endian.h"

#if defined(__SANITIZE_ADDRESS__)
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_ASAN 1
#endif
#endif

static char *g_dir;

/* A closed 3-task container (fsblksize 512, chunks given), 100 bytes per task. */
static void make_container(const char *fn, const sion_int64 *chunks)
{
    int nt = 3, nf = 1, gr[3] = {0, 1, 2}, *grp = gr;
    sion_int64 cs[3] = {chunks[0], chunks[1], chunks[2]}, *csp = cs;
    sion_int32 fsb = 512;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, "bw", &nt, &nf, &csp, &fsb, &grp, &fp);
    assert_true(sid >= 0);
    unsigned char buf[100];
    for (int t = 0; t < 3; t++) {
        sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
        tu_fill(buf, t, 0, sizeof buf);
        if (chunks[t] > 0)
            assert_int_equal(sion_fwrite(buf, 1, sizeof buf, sid), sizeof buf);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

/* Header fields of a little-endian format-5 file with ntasks tasks. */
#define H_NFILES 28
#define H_FILENO 32
static size_t h_sov(int ntasks) { return 52 + 1024 + 16 * (size_t)ntasks + 4; }

static void patch32(unsigned char *d, size_t off, uint32_t v) { core_put_le32(d + off, v); }

/* Runs fn(arg) in a child whose address space is limited to 768 MiB (ASan
 * builds have their own limit: max_allocation_size_mb=256 in the test's
 * environment); returns the child's exit status, 100 + signal if it died. */
static int bounded(int (*fn)(const char *), const char *arg)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
#ifndef TU_ASAN
        struct rlimit rl = {(rlim_t)768 << 20, (rlim_t)768 << 20};
        setrlimit(RLIMIT_AS, &rl);
#endif
        _exit(fn(arg));
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* 0: recover and its dry run (what `sheaf verify` runs) fail with the expected
 * code and message; 1..: which check failed */
static int g_want_code;
static const char *g_want_msg;
static int recover_fails(const char *fn)
{
    sheaf_recover_summary s;
    int flags[3] = {SHEAF_RECOVER_DRY_RUN, 0, SHEAF_RECOVER_SALVAGE};
    for (int i = 0; i < 3; i++) {
        int rc = sheaf_recover(fn, flags[i], NULL, NULL, &s);
        if (rc != g_want_code) {
            fprintf(stderr, "recover flags %d: rc %d, want %d: %s\n", flags[i], rc, g_want_code, sheaf_last_error());
            return 1 + i;
        }
        if (!strstr(sheaf_last_error(), g_want_msg)) {
            fprintf(stderr, "recover flags %d: message \"%s\" lacks \"%s\"\n", flags[i], sheaf_last_error(),
                    g_want_msg);
            return 10 + i;
        }
    }
    return 0;
}

/* A 6 KB unclosed file 0 whose header announces 20 million member files: the
 * red team's case. Before the fix, recover calloc'ed 20M headers (24 GB). */
static void test_recover_huge_file_count(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/nfiles.sion", g_dir);
    const sion_int64 cs[3] = {512, 512, 512};
    make_container(fn, cs);
    size_t n = 0;
    unsigned char *d = tu_read_file(fn, &n);
    assert_non_null(d);
    assert_true(n < 8192);
    if (n < h_sov(3) + 8)
        fail_msg("%s: only %zu bytes", fn, n);
    patch32(d, H_NFILES, 20000000);
    patch32(d, H_FILENO, 0);
    core_put_le64(d + h_sov(3), 0); /* never closed */
    assert_int_equal(tu_write_file(fn, d, n), 0);
    free(d);
    g_want_code = SHEAF_E_NOTFOUND;
    g_want_msg = "nfiles.sion.000001: member 1 of the 20000000-file set is missing";
    assert_int_equal(bounded(recover_fails, fn), 0);
}

static int recover_ok(const char *fn)
{
    sheaf_recover_summary s;
    int rc = sheaf_recover(fn, 0, NULL, NULL, &s);
    if (rc) {
        fprintf(stderr, "recover: %s\n", sheaf_last_error());
        return 1;
    }
    return s.lost >= 7 ? 0 : 2;
}

static void append_record(const char *j, int32_t task, int64_t nb, int64_t first, int64_t lastv)
{
    size_t L = 36 + 8 * (size_t)nb;
    unsigned char *r = calloc(1, L);
    assert_non_null(r);
    memcpy(r, "SHJ1", 4);
    core_put_le32(r + 4, (uint32_t)L);
    core_put_le32(r + 8, (uint32_t)task);
    core_put_le64(r + 16, (uint64_t)task);
    core_put_le64(r + 24, (uint64_t)nb);
    core_put_le64(r + 32, (uint64_t)first);
    core_put_le64(r + 32 + 8 * (size_t)(nb - 1), (uint64_t)lastv);
    core_put_le32(r + L - 4, core_crc32c(0, r, L - 4));
    FILE *f = fopen(j, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(r, 1, L, f), L);
    fclose(f);
    free(r);
}

/* An unclosed little-endian format-5 header: ntasks tasks, global ranks 0.., the
 * given chunk sizes (all tasks after the first: rest), and the file extended to size. */
static void craft_unclosed(const char *fn, int32_t ntasks, int32_t fsblksize, int64_t first, int64_t rest, off_t size)
{
    size_t n = h_sov(ntasks) + 8;
    unsigned char *d = calloc(1, n);
    assert_non_null(d);
    memcpy(d, "sion", 4); /* bytes 4..7: little-endian metadata and data */
    patch32(d, 8, 1007);
    patch32(d, 12, 6);
    patch32(d, 16, 5);
    patch32(d, 20, (uint32_t)fsblksize);
    patch32(d, 24, (uint32_t)ntasks);
    patch32(d, H_NFILES, 1);
    size_t off = 52 + 1024;
    for (int32_t t = 0; t < ntasks; t++)
        core_put_le64(d + off + 8 * (size_t)t, (uint64_t)t);
    off += 8 * (size_t)ntasks;
    for (int32_t t = 0; t < ntasks; t++)
        core_put_le64(d + off + 8 * (size_t)t, (uint64_t)(t ? rest : first));
    assert_int_equal(tu_write_file(fn, d, n), 0);
    free(d);
    assert_int_equal(truncate(fn, size), 0);
}

/* Chunk sizes of 0 (globalskip 0): a journal record naming 100000 blocks for a
 * task whose chunk holds nothing. Before the fix the claim was kept (a block
 * table of 3 x 100000 entries) or the recovery failed; now each such task has
 * one empty block, the claim is counted as lost and the file stays small. */
static void test_recover_zero_chunks(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/zero.sion", g_dir);
    craft_unclosed(fn, 3, 512, 0, 0, 4096);
    snprintf(j, sizeof j, "%s.sheafj", fn);
    append_record(j, 0, 1, 0, 0);
    append_record(j, 1, 100000, 0, 7);
    assert_int_equal(bounded(recover_ok, fn), 0);
    struct stat sb;
    assert_int_equal(stat(fn, &sb), 0);
    assert_true(sb.st_size < 8192);
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *chunks = NULL, *bs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    int sid = sion_open(fn, "rb", &nt, &nf, &chunks, &fsb, &gr, &fp);
    assert_true(sid >= 0);
    assert_int_equal(nt, 3);
    int ntl = 0, maxchunks = 0;
    sion_int64 skip = 0, sov = 0, *lcs = NULL, *lgr = NULL, *bc = NULL;
    assert_int_equal(sion_get_locations(sid, &ntl, &maxchunks, &skip, &sov, &lcs, &lgr, &bc, &bs), SION_SUCCESS);
    assert_int_equal(maxchunks, 1);
    assert_int_equal(bc[1], 1);
    assert_int_equal(bs[1], 0);
    sion_close(sid);
    free(chunks);
    free(gr);
}

/* 300 tasks, one with a 1-byte chunk, the rest 0 bytes (fsblksize 1): every
 * block of task 0 is one byte, so a journal record of a million blocks fits a
 * 1 MiB file, and the block table to write would be 300 x 1M entries (2.4 GB).
 * Refused with a message; before the fix it was allocated. */
static void test_recover_huge_table(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/table.sion", g_dir);
    craft_unclosed(fn, 300, 1, 1, 0, (off_t)8192 + (1 << 20));
    snprintf(j, sizeof j, "%s.sheafj", fn);
    append_record(j, 0, 1000000, 1, 1);
    g_want_code = SHEAF_E_FORMAT;
    g_want_msg = "table.sion: the rebuilt block table (300 tasks x ";
    assert_int_equal(bounded(recover_fails, fn), 0);
}

/* A FIFO where a container is expected: every open fails at once with a message
 * (before the fix, the read opens blocked forever waiting for a writer). alarm()
 * turns a regression into a failure, not a hang. */
static void expect_not_regular(const char *what, const char *name)
{
    const char *e = sheaf_last_error();
    if (!strstr(e, name) || !strstr(e, "is not a regular file (a FIFO)"))
        fail_msg("%s: message \"%s\" does not say that %s is a FIFO", what, e, name);
}

static void test_fifo_container(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/fifo.sion", g_dir);
    assert_int_equal(mkfifo(fn, 0600), 0);
    alarm(20);
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    assert_int_equal(sion_open(fn, "rb", &nt, &nf, &cs, &fsb, &gr, &fp), -1);
    expect_not_regular("sion_open rb", fn);
    assert_int_equal(sion_open(fn, "rb,posix", &nt, &nf, &cs, &fsb, &gr, &fp), -1);
    expect_not_regular("sion_open rb,posix", fn);
    sion_int64 rcs = 0;
    int rk = 0;
    assert_int_equal(sion_open_rank(fn, "rb", &rcs, &fsb, &rk, &fp), -1);
    expect_not_regular("sion_open_rank", fn);
    /* writing over a FIFO: refused too, not a stream of data into a pipe */
    int wnt = 1, wnf = 1, wgr = 0, *wgrp = &wgr;
    sion_int64 wcs = 100, *wcsp = &wcs;
    sion_int32 wfsb = 512;
    assert_int_equal(sion_open(fn, "wb", &wnt, &wnf, &wcsp, &wfsb, &wgrp, &fp), -1);
    expect_not_regular("sion_open wb", fn);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, SHEAF_RECOVER_DRY_RUN, NULL, NULL, &s), SHEAF_E_ARG);
    expect_not_regular("sheaf_recover", fn);
    alarm(0);
    unlink(fn);
}

/* The journal of an unclosed container is a FIFO: recover fails naming it. */
static void test_fifo_journal(void **st)
{
    (void)st;
    char fn[4200], j[4300];
    snprintf(fn, sizeof fn, "%s/fifoj.sion", g_dir);
    craft_unclosed(fn, 3, 512, 512, 512, 4096);
    snprintf(j, sizeof j, "%s.sheafj", fn);
    assert_int_equal(mkfifo(j, 0600), 0);
    alarm(20);
    sheaf_recover_summary s;
    assert_int_equal(sheaf_recover(fn, SHEAF_RECOVER_DRY_RUN, NULL, NULL, &s), SHEAF_E_ARG);
    expect_not_regular("sheaf_recover (journal)", j);
    alarm(0);
    unlink(j);
}

/* fsblksize of a serial write open: any size up to 32 MiB (SIONlib's tests use
 * 10, 100, 2500), or -1 (detect). */
static void test_fsblksize_serial(void **st)
{
    (void)st;
    const struct {
        sion_int32 v;
        const char *want;
    } bad[] = {
        {1 << 30, "file system block size 1073741824 is larger than 33554432 bytes"},
        {(1 << 25) + 1, "is larger than 33554432 bytes"},
    };
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/fsblk.sion", g_dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int nt = 1, nf = 1, gr = 0, *grp = &gr;
        sion_int64 cs = 100, *csp = &cs;
        sion_int32 fsb = bad[i].v;
        FILE *fp = NULL;
        assert_int_equal(sion_open(fn, "wb", &nt, &nf, &csp, &fsb, &grp, &fp), -1);
        if (!strstr(sheaf_last_error(), fn) || !strstr(sheaf_last_error(), bad[i].want))
            fail_msg("fsblksize %d: message \"%s\" lacks \"%s\"", (int)bad[i].v, sheaf_last_error(), bad[i].want);
        assert_true(access(fn, F_OK) != 0); /* nothing created */
    }
    const sion_int32 good[] = {1 << 25, 4096, -1, 3, 10, 2500, 1000000};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int nt = 1, nf = 1, gr = 0, *grp = &gr;
        sion_int64 cs = 100, *csp = &cs;
        sion_int32 fsb = good[i];
        FILE *fp = NULL;
        int sid = sion_open(fn, "wb", &nt, &nf, &csp, &fsb, &grp, &fp);
        assert_true(sid >= 0);
        if (good[i] > 0)
            assert_int_equal(fsb, good[i]); /* taken as given */
        else
            assert_true(fsb > 0 && (fsb & (fsb - 1)) == 0); /* detected */
        assert_int_equal(sion_close(sid), SION_SUCCESS);
        unlink(fn);
    }
}

int main(void)
{
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recover_huge_file_count),
        cmocka_unit_test(test_recover_zero_chunks),
        cmocka_unit_test(test_recover_huge_table),
        cmocka_unit_test(test_fifo_container),
        cmocka_unit_test(test_fifo_journal),
        cmocka_unit_test(test_fsblksize_serial),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    free(g_dir);
    return rc;
}
