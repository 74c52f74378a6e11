/* test_semantics.c - SIONlib usage patterns of the serial API that a
 * demanding user relies on: reading and writing through the exported FILE* /
 * descriptor, block bookkeeping (empty blocks in the middle of a task), the
 * argument conventions of sion_open / sion_open_rank, degenerate containers,
 * use after close, and I/O errors in the middle of a write. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../helpers/vecpath.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "sion.h"
#include "sheaf.h"
#include "../helpers/testutil.h"

static int setup(void **st)
{
    (void)st;
    sheaf_set_error_printing(0);
    return 0;
}

static void expect_error_mentions(const char *a, const char *b)
{
    const char *e = sheaf_last_error();
    if (a && !strstr(e, a))
        fail_msg("error message \"%s\" does not mention \"%s\"", e, a);
    if (b && !strstr(e, b))
        fail_msg("error message \"%s\" does not mention \"%s\"", e, b);
}

/* A 2-task container, chunk 1024 (fsblksize 512): task 0 holds 2500 bytes in
 * blocks 1024/1024/452, task 1 holds 700 bytes in one block. */
static const int64_t g_len[2] = {2500, 700};
static void write_two_tasks(const char *path, const char *mode)
{
    int ntasks = 2, nf = 1;
    sion_int32 bs = 512;
    sion_int64 csv[2] = {1024, 1000}, *cs = csv;
    int sid = sion_open((char *)path, mode, &ntasks, &nf, &cs, &bs, NULL, NULL);
    if (sid < 0)
        fail_msg("open %s: %s", path, sheaf_last_error());
    unsigned char b[2500];
    for (int t = 0; t < 2; t++) {
        assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        tu_fill(b, t, 0, (size_t)g_len[t]);
        assert_int_equal(sion_fwrite(b, 1, (size_t)g_len[t], sid), (size_t)g_len[t]);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

/* The read loop of the SIONlib documentation and examples:
 *   while (!sion_feof(sid)) { n = sion_bytes_avail_in_block(sid); fread(buf, 1, n, fp); }
 * The library must notice what was consumed through the FILE* (or, in posix
 * mode, the descriptor of sion_get_fd): SIONlib reads the position back. */
static void test_read_loop_through_fileptr(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/rloop.sion", dir);
    for (int posix = 0; posix <= 1; posix++) {
        write_two_tasks(path, posix ? "wb,posix" : "wb");
        int nt = 0, nf = 0;
        FILE *fp = NULL;
        int sid = sion_open(path, posix ? "rb,posix" : "rb", &nt, &nf, NULL, NULL, NULL, &fp);
        assert_true(sid >= 0);
        assert_int_equal(nt, 2);
        if (posix)
            assert_null(fp);
        else
            assert_non_null(fp);
        for (int t = 1; t >= 0; t--) {
            assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
            unsigned char buf[4096];
            int64_t off = 0;
            int rounds = 0;
            while (!sion_feof(sid)) {
                if (++rounds > 20)
                    fail_msg("posix=%d task %d: sion_feof never became 1 (read %lld of %lld bytes through the %s)",
                             posix, t, (long long)off, (long long)g_len[t], posix ? "fd" : "FILE*");
                sion_int64 n = sion_bytes_avail_in_block(sid);
                assert_true(n > 0);
                assert_true(off + n <= g_len[t]);
                ssize_t got;
                if (posix)
                    got = read(sion_get_fd(sid), buf + off, (size_t)n);
                else
                    got = (ssize_t)fread(buf + off, 1, (size_t)n, fp);
                assert_true(got == (ssize_t)n);
                off += n;
            }
            assert_true(off == g_len[t]);
            for (int64_t i = 0; i < off; i++)
                assert_int_equal(buf[i], tu_pat(t, i));
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    tu_rmtree(dir);
    free(dir);
}

/* Part of a block read through the FILE*: position, bytes left in the block
 * and a following sion_fread all continue from where the FILE* stands. */
static void test_raw_read_then_library_calls(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/mix.sion", dir);
    for (int posix = 0; posix <= 1; posix++) {
        write_two_tasks(path, "wb");
        int nt = 0, nf = 0;
        FILE *fp = NULL;
        int sid = sion_open(path, posix ? "rb,posix" : "rb", &nt, &nf, NULL, NULL, NULL, &fp);
        assert_true(sid >= 0);
        assert_int_equal(sion_seek(sid, 0, 1, 0), SION_SUCCESS); /* task 0, block 1 */
        sion_int64 p0 = sion_get_position(sid);
        assert_true(p0 > 0);
        unsigned char b[1024];
        if (posix)
            assert_true(read(sion_get_fd(sid), b, 100) == 100);
        else
            assert_true(fread(b, 1, 100, fp) == 100);
        for (int i = 0; i < 100; i++)
            assert_int_equal(b[i], tu_pat(0, 1024 + i));
        assert_true(sion_get_position(sid) == p0 + 100);
        assert_true(sion_bytes_avail_in_block(sid) == 1024 - 100);
        int blk = -1;
        sion_int64 pos = -1;
        assert_int_equal(sion_get_current_location(sid, &blk, &pos, NULL, NULL), SION_SUCCESS);
        assert_int_equal(blk, 1);
        assert_true(pos == 100);
        /* the library continues where the raw read stopped, across the block end */
        assert_int_equal(sion_fread(b, 1, 1000, sid), 1000);
        for (int i = 0; i < 1000; i++)
            if (b[i] != tu_pat(0, 1124 + i))
                fail_msg("posix=%d: byte %d after the raw read differs", posix, i);
        /* switching tasks keeps the raw-read cursor of the task left behind */
        assert_int_equal(sion_seek(sid, 0, 2, 0), SION_SUCCESS);
        if (posix)
            assert_true(read(sion_get_fd(sid), b, 52) == 52);
        else
            assert_true(fread(b, 1, 52, fp) == 52);
        assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        assert_int_equal(sion_seek(sid, 0, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        assert_true(sion_bytes_avail_in_block(sid) == 452 - 52);
        assert_int_equal(sion_fread(b, 1, 400, sid), 400);
        assert_int_equal(b[0], tu_pat(0, 2048 + 52));
        assert_int_equal(sion_feof(sid), 1);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    tu_rmtree(dir);
    free(dir);
}

/* Interleaved tasks written through the exported FILE* or fd after
 * sion_ensure_free_space, mixed with sion_fwrite; position and free space
 * reported in between. */
static void test_raw_write_interleaved(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/rw.sion", dir);
    for (int posix = 0; posix <= 1; posix++) {
        int ntasks = 3, nf = 1;
        sion_int32 bs = 512;
        sion_int64 csv[3] = {512, 700, 512}, *cs = csv;
        FILE *fp = NULL;
        int sid = sion_open(path, posix ? "wb,posix" : "wb", &ntasks, &nf, &cs, &bs, NULL, &fp);
        assert_true(sid >= 0);
        assert_true(cs[0] == 512 && cs[1] == 700 && cs[2] == 512); /* not written back (SIONlib) */
        int64_t len[3] = {0, 0, 0};
        int64_t s0 = 1536; /* 1088 + 16*3 rounded up to 512 */
        int64_t start[3] = {s0, s0 + 512, s0 + 1536}, gskip = 2048;
        unsigned char b[600];
        for (int round = 0; round < 6; round++) {
            for (int t = 0; t < 3; t++) {
                assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
                int64_t n = 100 + 37 * t + 11 * round;
                tu_fill(b, t, len[t], (size_t)n);
                if ((round + t) % 2) {
                    assert_int_equal(sion_ensure_free_space(sid, n), SION_SUCCESS);
                    int64_t chunk = (cs[t] + bs - 1) / bs * bs; /* the aligned size (cs stays as given) */
                    int64_t blk = 0, inblk = 0, rest = len[t];
                    /* model: records never split (all n <= chunk) */
                    (void)rest;
                    sion_int64 avail = sion_bytes_avail_in_block(sid);
                    assert_true(avail >= n && avail <= chunk);
                    int cb = -1;
                    sion_int64 cp = -1;
                    assert_int_equal(sion_get_current_location(sid, &cb, &cp, NULL, NULL), SION_SUCCESS);
                    blk = cb;
                    inblk = cp;
                    assert_true(inblk == chunk - avail);
                    assert_true(sion_get_position(sid) == start[t] + blk * gskip + inblk);
                    if (posix)
                        assert_true(write(sion_get_fd(sid), b, (size_t)n) == (ssize_t)n);
                    else
                        assert_true(fwrite(b, 1, (size_t)n, fp) == (size_t)n);
                    assert_true(sion_get_position(sid) == start[t] + blk * gskip + inblk + n);
                    assert_true(sion_bytes_avail_in_block(sid) == avail - n);
                } else {
                    assert_int_equal(sion_fwrite(b, 1, (size_t)n, sid), (size_t)n);
                }
                len[t] += n;
                assert_true(sion_get_bytes_written(sid) == len[t]);
            }
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);
        int nt, nff;
        sid = sion_open(path, "rb", &nt, &nff, NULL, NULL, NULL, NULL);
        assert_true(sid >= 0);
        for (int t = 0; t < 3; t++) {
            assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
            unsigned char *r = malloc((size_t)len[t] + 10);
            assert_true(sion_fread(r, 1, (size_t)len[t] + 10, sid) == (size_t)len[t]);
            for (int64_t i = 0; i < len[t]; i++)
                if (r[i] != tu_pat(t, i))
                    fail_msg("posix=%d task %d byte %lld differs", posix, t, (long long)i);
            free(r);
            assert_int_equal(sion_feof(sid), 1);
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    tu_rmtree(dir);
    free(dir);
}

/* Set one entry of the META2 block size table of a closed single-file container. */
static void patch_blocksize(const char *path, int ntasks, int64_t block, int task, int64_t value)
{
    size_t n;
    unsigned char *d = tu_read_file(path, &n);
    assert_non_null(d);
    int64_t sov;
    int64_t hoff = 1076 + 16 * (int64_t)ntasks + 4;
    memcpy(&sov, d + hoff, 8);
    int64_t off = sov + 8 * ntasks + 8 * (block * ntasks + task);
    assert_true(off + 8 <= (int64_t)n);
    memcpy(d + off, &value, 8);
    assert_int_equal(tu_write_file(path, d, n), 0);
    free(d);
}

/* Blocks holding 0 bytes between non-empty ones (a SIONlib writer produces
 * them with sion_ensure_free_space and then nothing written): reads, feof
 * and absolute seeks skip them. */
static void test_empty_block_in_the_middle(void **st)
{
    (void)st;
    if (sion_get_endianness() != 0)
        skip();
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/hole.sion", dir);
    int ntasks = 2, nf = 1;
    sion_int32 bs = 512;
    sion_int64 csv[2] = {512, 512}, *cs = csv;
    int sid = sion_open(path, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL);
    assert_true(sid >= 0);
    unsigned char b[2048];
    /* task 0: blocks 0..3 of 512, 512, 512, 100 */
    tu_fill(b, 0, 0, 1636);
    assert_int_equal(sion_fwrite(b, 1, 1636, sid), 1636);
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    tu_fill(b, 1, 0, 10);
    assert_int_equal(sion_fwrite(b, 1, 10, sid), 10);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* blocks 1 and 2 of task 0 become empty: its stream is block 0 (0..511) + block 3 */
    patch_blocksize(path, 2, 1, 0, 0);
    patch_blocksize(path, 2, 2, 0, 0);
    unsigned char exp[612];
    memcpy(exp, b, 0);
    tu_fill(exp, 0, 0, 512);
    tu_fill(exp + 512, 0, 1536, 100);

    int nt, nff;
    FILE *fp = NULL;
    sid = sion_open(path, "rb", &nt, &nff, NULL, NULL, NULL, &fp);
    if (sid < 0)
        fail_msg("open: %s", sheaf_last_error());
    /* one read across the empty blocks */
    unsigned char r[700];
    assert_int_equal(sion_fread(r, 1, 700, sid), 612);
    assert_memory_equal(r, exp, 612);
    assert_int_equal(sion_feof(sid), 1);
    /* feof-driven loop through the FILE* */
    assert_int_equal(sion_seek(sid, 0, 0, 0), SION_SUCCESS);
    int64_t off = 0;
    int rounds = 0;
    while (!sion_feof(sid) && rounds++ < 10) {
        sion_int64 n = sion_bytes_avail_in_block(sid);
        assert_true(n > 0);
        if (off + n > 612)
            fail_msg("feof loop through the FILE*: %lld bytes read, %lld more offered, only 612 exist", (long long)off,
                     (long long)n);
        assert_true(fread(r + off, 1, (size_t)n, fp) == (size_t)n);
        off += n;
    }
    assert_true(off == 612);
    assert_memory_equal(r, exp, 612);
    /* absolute seeks land in the right block */
    assert_int_equal(sion_seek(sid, 0, SION_ABSOLUTE_POS, 512), SION_SUCCESS);
    int blk = -1;
    sion_int64 pos = -1;
    assert_int_equal(sion_get_current_location(sid, &blk, &pos, NULL, NULL), SION_SUCCESS);
    assert_int_equal(blk, 3);
    assert_true(pos == 0);
    assert_int_equal(sion_fread(r, 1, 1, sid), 1);
    assert_int_equal(r[0], exp[512]);
    assert_int_equal(sion_seek(sid, 0, SION_ABSOLUTE_POS, 511), SION_SUCCESS);
    assert_int_equal(sion_fread(r, 1, 2, sid), 2);
    assert_memory_equal(r, exp + 511, 2);
    assert_int_equal(sion_seek(sid, 0, SION_END_POS, -100), SION_SUCCESS);
    assert_int_equal(sion_fread(r, 1, 100, sid), 100);
    assert_memory_equal(r, exp + 512, 100);
    /* seek into an empty block: the next read continues behind it */
    assert_int_equal(sion_seek(sid, 0, 1, 0), SION_SUCCESS);
    assert_true(sion_bytes_avail_in_block(sid) == 0);
    assert_int_equal(sion_feof(sid), 0);
    assert_true(sion_bytes_avail_in_block(sid) == 100);
    assert_int_equal(sion_fread(r, 1, 50, sid), 50);
    assert_memory_equal(r, exp + 512, 50);
    assert_int_equal(sion_seek(sid, 0, 2, 1), SION_NOT_SUCCESS);
    /* rank switch with a saved cursor at the end of block 0 */
    assert_int_equal(sion_seek(sid, 0, 0, 512), SION_SUCCESS);
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_fread(r, 1, 100, sid), 100);
    assert_memory_equal(r, exp + 512, 100);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* chunksizes / globalranks on read: NULL, pointer to NULL, caller array. */
static void test_open_read_array_conventions(void **st)
{
    (void)st;
    char p[4096];
    vec_path("serial5.sion", p, sizeof p);
    const sion_int64 ecs[5] = {4096, 8192, 4096, 4096, 20480};
    int nt = -1, nf = -1;
    sion_int32 bs = -1;
    /* NULL: nothing returned */
    int sid = sion_open(p, "rb", &nt, &nf, NULL, &bs, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(nt, 5);
    assert_int_equal(nf, 1);
    assert_int_equal(bs, 4096);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* pointer to NULL: malloc'd, caller frees (ASan checks) */
    sion_int64 *cs = NULL;
    int *gr = NULL;
    sid = sion_open(p, "rb", &nt, &nf, &cs, &bs, &gr, NULL);
    assert_true(sid >= 0);
    assert_non_null(cs);
    assert_non_null(gr);
    for (int t = 0; t < 5; t++) {
        assert_true(cs[t] == ecs[t]);
        assert_int_equal(gr[t], 100 + t);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(cs);
    free(gr);
    /* caller arrays: filled in place */
    sion_int64 csa[5] = {0}, *csp = csa;
    int gra[5] = {0}, *grp = gra;
    sid = sion_open(p, "rb", &nt, &nf, &csp, &bs, &grp, NULL);
    assert_true(sid >= 0);
    assert_true(csp == csa && grp == gra);
    for (int t = 0; t < 5; t++) {
        assert_true(csa[t] == ecs[t]);
        assert_int_equal(gra[t], 100 + t);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* ntasks/nfiles/fsblksize may be NULL too */
    sid = sion_open(p, "rb", NULL, NULL, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* failing opens leave pointer-to-NULL arrays NULL (nothing to free) */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s.missing", p);
    cs = NULL;
    gr = NULL;
    assert_int_equal(sion_open(missing, "rb", &nt, &nf, &cs, &bs, &gr, NULL), -1);
    assert_null(cs);
    assert_null(gr);
}

/* multi6: open every rank alone; the mapping, file numbers and data. */
static void test_multifile_open_rank(void **st)
{
    (void)st;
    char p[4096];
    vec_path("multi6.sion", p, sizeof p);
    int nt = 0, nf = 0;
    int sid = sion_open(p, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(nt, 6);
    assert_int_equal(nf, 3);
    int msize = 0, numfiles = 0;
    sion_int32 *map = NULL;
    assert_int_equal(sion_get_mapping(sid, &msize, &map, &numfiles), SION_SUCCESS);
    assert_int_equal(msize, 6);
    assert_int_equal(numfiles, 3);
    sion_int32 mapc[12];
    memcpy(mapc, map, sizeof mapc);
    /* as written by SIONlib: 2 tasks per file in rank order */
    for (int g = 0; g < 6; g++) {
        assert_int_equal(mapc[2 * g], g / 2);
        assert_int_equal(mapc[2 * g + 1], g % 2);
    }
    FILE *fp0 = sion_get_fp(sid);
    for (int g = 0; g < 6; g++) {
        FILE *fpg = NULL;
        assert_int_equal(sion_seek_fp(sid, g, SION_CURRENT_BLK, SION_CURRENT_POS, &fpg), SION_SUCCESS);
        assert_int_equal(sion_get_filenumber(sid), 0); /* SIONlib: a serial open of the set is file 0 */
        assert_true(fpg == sion_get_fp(sid));
        if (g >= 2)
            assert_true(fpg != fp0);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);

    for (int posix = 0; posix <= 1; posix++)
        for (int g = 0; g < 6; g++) {
            int rank = g;
            sion_int64 chunk = 0;
            sion_int32 bs = 0;
            FILE *fp = NULL;
            sid = sion_open_rank(p, posix ? "rb,posix" : "rb", &chunk, &bs, &rank, &fp);
            if (sid < 0)
                fail_msg("open_rank %d: %s", g, sheaf_last_error());
            assert_int_equal(rank, g);
            assert_true(chunk == 8192);
            assert_int_equal(bs, 4096);
            if (posix)
                assert_null(fp);
            else
                assert_non_null(fp);
            assert_int_equal(sion_get_filenumber(sid), g / 2);
            if (!posix)
                assert_true(sion_get_fp(sid) == fp);
            int64_t len = 3000 * (g + 1), off = 0;
            unsigned char *b = malloc((size_t)len);
            /* SIONlib loop through the handle returned by open_rank */
            int rounds = 0;
            while (!sion_feof(sid)) {
                if (++rounds > 10)
                    fail_msg("open_rank %d posix=%d: feof never 1 after %lld bytes", g, posix, (long long)off);
                sion_int64 n = sion_bytes_avail_in_block(sid);
                assert_true(n > 0 && off + n <= len);
                if (posix)
                    assert_true(read(sion_get_fd(sid), b + off, (size_t)n) == (ssize_t)n);
                else
                    assert_true(fread(b + off, 1, (size_t)n, fp) == (size_t)n);
                off += n;
            }
            assert_true(off == len);
            for (int64_t i = 0; i < len; i++)
                if (b[i] != tu_pat(g, i))
                    fail_msg("open_rank %d: byte %lld differs", g, (long long)i);
            free(b);
            assert_int_equal(sion_close(sid), SION_SUCCESS);
        }
}

/* Degenerate writes: nothing written at all, one task, chunk size 0 for some
 * tasks, fsblksize detection. */
static void test_degenerate_writes(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    /* zero bytes in every task */
    snprintf(path, sizeof path, "%s/empty.sion", dir);
    int ntasks = 3, nf = 1;
    sion_int32 bs = -1;
    sion_int64 csv[3] = {100, 5000, 1}, *cs = csv;
    int sid = sion_open(path, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL);
    assert_true(sid >= 0);
    assert_true(bs > 0);                                      /* detected and written back */
    assert_true(cs[0] == 100 && cs[1] == 5000 && cs[2] == 1); /* the caller's, as in SIONlib */
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    int nt, nff;
    sion_int32 rbs = 0;
    sid = sion_open(path, "rb", &nt, &nff, NULL, &rbs, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(rbs, bs);
    for (int t = 0; t < 3; t++) {
        unsigned char b[4];
        assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        assert_int_equal(sion_feof(sid), 1);
        assert_true(sion_bytes_avail_in_block(sid) == 0);
        assert_int_equal(sion_fread(b, 1, 4, sid), 0);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);

    /* one task, chunk size 0 in some tasks */
    snprintf(path, sizeof path, "%s/zero.sion", dir);
    ntasks = 4;
    bs = 512;
    sion_int64 cz[4] = {0, 600, 0, 0}, *czp = cz;
    sid = sion_open(path, "wb", &ntasks, &nf, &czp, &bs, NULL, NULL);
    assert_true(sid >= 0);
    assert_true(cz[0] == 0 && cz[1] == 600 && cz[2] == 0 && cz[3] == 0); /* as given (SIONlib) */
    unsigned char b[1500];
    tu_fill(b, 1, 0, 1500);
    assert_int_equal(sion_fwrite(b, 1, 1, sid), 0);
    expect_error_mentions(path, "chunk size 0");
    assert_int_equal(sion_ensure_free_space(sid, 1), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_fwrite(b, 1, 1500, sid), 1500);
    assert_int_equal(sion_seek(sid, 3, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_fwrite(b, 1, 1, sid), 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    sid = sion_open(path, "rb", &nt, &nff, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(nt, 4);
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    unsigned char r[1600];
    assert_int_equal(sion_fread(r, 1, 1600, sid), 1500);
    assert_memory_equal(r, b, 1500);
    for (int t = 0; t < 4; t += (t == 0 ? 2 : 1)) {
        assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        assert_int_equal(sion_feof(sid), 1);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);

    /* every task with chunk size 0 */
    snprintf(path, sizeof path, "%s/allzero.sion", dir);
    ntasks = 2;
    sion_int64 c0[2] = {0, 0}, *c0p = c0;
    sid = sion_open(path, "wb", &ntasks, &nf, &c0p, &bs, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    sid = sion_open(path, "rb", &nt, &nff, NULL, NULL, NULL, NULL);
    if (sid < 0)
        fail_msg("reading back a container of empty chunks: %s", sheaf_last_error());
    assert_int_equal(sion_feof(sid), 1);
    assert_int_equal(sion_close(sid), SION_SUCCESS);

    /* ntasks = 1 written, closed and read */
    snprintf(path, sizeof path, "%s/one.sion", dir);
    ntasks = 1;
    sion_int64 c1[1] = {10}, *c1p = c1;
    int g1[1] = {77}, *g1p = g1;
    sid = sion_open(path, "wb", &ntasks, &nf, &c1p, &bs, &g1p, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_fwrite(b, 1, 1500, sid), 1500);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    int *rg = NULL;
    sid = sion_open(path, "rb", &nt, &nff, NULL, NULL, &rg, NULL);
    assert_true(sid >= 0);
    assert_int_equal(nt, 1);
    assert_int_equal(rg[0], 77);
    assert_int_equal(sion_fread(r, 1, 1600, sid), 1500);
    assert_memory_equal(r, b, 1500);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(rg);
    tu_rmtree(dir);
    free(dir);
}

/* Every call on a closed sid returns its documented error value. */
static void test_use_after_close(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/closed.sion", dir);
    write_two_tasks(path, "wb");
    for (int w = 0; w <= 1; w++) {
        int nt = 2, nf = 1;
        sion_int32 bs = 512;
        sion_int64 csv[2] = {1024, 1024}, *cs = csv;
        int sid = w ? sion_open(path, "wb", &nt, &nf, &cs, &bs, NULL, NULL)
                    : sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
        assert_true(sid >= 0);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
        assert_int_equal(sion_close(sid), SION_NOT_SUCCESS);
        expect_error_mentions("invalid sid", NULL);
        unsigned char b[4] = {0};
        assert_int_equal(sion_fwrite(b, 1, 1, sid), 0);
        assert_int_equal(sion_fread(b, 1, 1, sid), 0);
        assert_int_equal(sion_feof(sid), -1);
        assert_int_equal(sion_seek(sid, 0, SION_CURRENT_BLK, SION_CURRENT_POS), SION_NOT_SUCCESS);
        FILE *fp = (FILE *)1;
        assert_int_equal(sion_seek_fp(sid, 0, SION_CURRENT_BLK, SION_CURRENT_POS, &fp), SION_NOT_SUCCESS);
        assert_true(sion_bytes_avail_in_block(sid) == SION_SIZE_NOT_VALID);
        assert_true(sion_get_position(sid) == SION_SIZE_NOT_VALID);
        assert_int_equal(sion_ensure_free_space(sid, 1), SION_NOT_SUCCESS);
        assert_int_equal(sion_flush(sid), SION_NOT_SUCCESS);
        assert_int_equal(sion_get_mapping(sid, NULL, NULL, NULL), SION_NOT_SUCCESS);
        assert_int_equal(sion_get_current_location(sid, NULL, NULL, NULL, NULL), SION_NOT_SUCCESS);
        assert_int_equal(sion_get_current_locations(sid, NULL, NULL, NULL), SION_NOT_SUCCESS);
        assert_null(sion_get_fp(sid));
        assert_int_equal(sion_get_fd(sid), -1);
        assert_true(sion_get_bytes_written(sid) == -1);
        assert_true(sion_get_bytes_read(sid) == -1);
    }
    /* the file written by the write-mode open above (nothing written) reads back empty */
    int nt, nf;
    int sid = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_feof(sid), 1);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* A write error in the middle (file size limit reached): sion_fwrite or
 * sion_close must fail and name the file; the process must not die and the
 * error must not be lost. Run in a child (RLIMIT_FSIZE is per process). */
enum { VIA_FWRITE, VIA_RAW, VIA_RAW_NOCHECK };
static int write_past_limit(const char *path, int posix, int via)
{
    signal(SIGXFSZ, SIG_IGN);
    sheaf_set_error_printing(0);
    int ntasks = 2, nf = 1;
    sion_int32 bs = 4096;
    sion_int64 csv[2] = {65536, 65536}, *cs = csv;
    FILE *fp = NULL;
    int sid = sion_open((char *)path, posix ? "wb,posix" : "wb", &ntasks, &nf, &cs, &bs, NULL, &fp);
    if (sid < 0)
        return 10;
    struct rlimit rl = {100000, 100000};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 11;
    static unsigned char b[65536];
    memset(b, 7, sizeof b);
    int failed = 0;
    for (int k = 0; k < 8 && !failed; k++) {
        sion_seek(sid, k % 2, SION_CURRENT_BLK, SION_CURRENT_POS);
        if (via == VIA_FWRITE) {
            if (sion_fwrite(b, 1, 30000, sid) != 30000) {
                failed = 1;
                if (!strstr(sheaf_last_error(), path))
                    return 12;
            }
        } else {
            if (sion_ensure_free_space(sid, 30000) != SION_SUCCESS) {
                failed = 1;
                if (!strstr(sheaf_last_error(), path))
                    return 13;
                break;
            }
            if (posix)
                (void)!write(sion_get_fd(sid), b, 30000);
            else
                (void)!fwrite(b, 1, 30000, fp);
            /* VIA_RAW_NOCHECK: the application ignores the short write, as
             * many do; the library has to notice at the latest at close */
        }
    }
    int rc = sion_close(sid);
    if (rc == SION_SUCCESS)
        return failed ? 0 : 20; /* 20: silent success */
    if (!strstr(sheaf_last_error(), path))
        return 21;
    return 0;
}

static void test_write_error_midway(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    for (int posix = 0; posix <= 1; posix++)
        for (int via = VIA_FWRITE; via <= VIA_RAW_NOCHECK; via++) {
            snprintf(path, sizeof path, "%s/limit%d%d.sion", dir, posix, via);
            pid_t pid = fork();
            assert_true(pid >= 0);
            if (pid == 0)
                _exit(write_past_limit(path, posix, via));
            int status = 0;
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (WIFSIGNALED(status))
                fail_msg("posix=%d via=%d: child killed by signal %d", posix, via, WTERMSIG(status));
            if (WEXITSTATUS(status) != 0)
                fail_msg("posix=%d via=%d: child reported %d (20 = close succeeded after lost data, "
                         "12/13/21 = message without the file name)",
                         posix, via, WEXITSTATUS(status));
            /* whatever was written must not read as a valid complete container */
            int nt, nf;
            int sid = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
            if (sid >= 0) {
                sion_close(sid);
                fail_msg("posix=%d via=%d: a container whose write failed opens as valid", posix, via);
            }
        }
    tu_rmtree(dir);
    free(dir);
}

/* A chunk size near INT64_MAX is refused with a message, not rounded up into
 * a signed overflow (undefined behaviour; UBSan aborts the sanitizer build). */
static void test_huge_chunksize_refused(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/huge.sion", dir);
    const sion_int64 huge[3] = {INT64_MAX, INT64_MAX - 5, (sion_int64)1 << 62};
    for (int k = 0; k < 3; k++) {
        int ntasks = 2, nf = 1;
        sion_int32 bs = 4096;
        sion_int64 csv[2] = {huge[k], 10}, *cs = csv;
        int sid = sion_open(path, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL);
        if (sid >= 0) {
            sion_close(sid);
            fail_msg("chunk size %lld accepted", (long long)huge[k]);
        }
        expect_error_mentions(path, "chunk size");
    }
    tu_rmtree(dir);
    free(dir);
}

/* A member of a multi-file set opened on its own reports its own file number. */
static void test_member_opened_alone(void **st)
{
    (void)st;
    char p[4096];
    for (int k = 1; k <= 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "multi6.sion.%06d", k);
        int nt = 0, nf = 0, *gr = NULL;
        int sid = sion_open((char *)vec_path(name, p, sizeof p), "rb", &nt, &nf, NULL, NULL, &gr, NULL);
        assert_true(sid >= 0);
        assert_int_equal(nt, 2);
        assert_int_equal(gr[0], 2 * k);
        assert_int_equal(gr[1], 2 * k + 1);
        for (int t = 0; t < 2; t++) {
            assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
            assert_int_equal(sion_get_filenumber(sid), k);
            unsigned char b[16];
            assert_int_equal(sion_fread(b, 1, 16, sid), 16);
            for (int i = 0; i < 16; i++)
                assert_int_equal(b[i], tu_pat(2 * k + t, i));
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);
        free(gr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_loop_through_fileptr),   cmocka_unit_test(test_raw_read_then_library_calls),
        cmocka_unit_test(test_raw_write_interleaved),       cmocka_unit_test(test_empty_block_in_the_middle),
        cmocka_unit_test(test_open_read_array_conventions), cmocka_unit_test(test_multifile_open_rank),
        cmocka_unit_test(test_degenerate_writes),           cmocka_unit_test(test_use_after_close),
        cmocka_unit_test(test_write_error_midway),          cmocka_unit_test(test_huge_chunksize_refused),
        cmocka_unit_test(test_member_opened_alone),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
