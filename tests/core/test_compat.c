/* test_compat.c - values the serial API returns where programs written for
 * SIONlib 1.7 look at them, asserted as SIONlib 1.7.6 gives them (read from its
 * sources, src/lib/sion_common.c, sion_internal.c, sion_fd.c,
 * sion_keyvalue_keymngr.c; see README "Differences from SIONlib 1.7" for the
 * few places where sheaf deliberately differs): sid numbers and stale sids,
 * sion_get_bytes_read, sion_get_current_locations, the write-mode answers of
 * sion_feof / sion_flush, chunk sizes an open writes back, unused block
 * entries and file numbers in the getters (single file, multi-file set,
 * sion_open_rank), the getters' values on a bad sid, and the current record
 * of sion_seek_key (SIONlib's test/parallel/test_keyval_2 TEST D).
 * The serial values were also checked against SIONlib 1.7.6 built from the
 * mirror (probe programs printing the same calls' results).
 * The first test must stay first: it checks the first sid of the process. */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../helpers/vecpath.h"
#include "sion.h"
#include "sheaf.h"
#include "../helpers/testutil.h"

static void expect_msg(const char *part)
{
    const char *m = sheaf_last_error();
    if (!m || !strstr(m, part))
        fail_msg("error message \"%s\" does not mention \"%s\"", m ? m : "(none)", part);
}

/* Two tasks, chunk sizes {500, 100} (512 each once aligned): task 0 gets two
 * blocks (400 + 300 bytes), task 1 one (40 bytes). Returns the write sid. */
static int write_two_tasks(const char *path, sion_int64 *cs)
{
    int ntasks = 2, nf = 1, gr[2] = {0, 1}, *grp = gr;
    sion_int32 bs = 512;
    unsigned char b[600];
    int sid = sion_open((char *)path, "wb", &ntasks, &nf, &cs, &bs, &grp, NULL);
    assert_true(sid >= 0);
    tu_fill(b, 0, 0, 400);
    assert_int_equal(sion_fwrite(b, 1, 400, sid), 400);
    tu_fill(b, 0, 400, 300);
    assert_int_equal(sion_fwrite(b, 1, 300, sid), 300); /* does not fit: block 1 */
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    tu_fill(b, 1, 0, 40);
    assert_int_equal(sion_fwrite(b, 1, 40, sid), 40);
    return sid;
}

/* sid numbers, as SIONlib 1.7.6's sion_fd.c hands them out: the first serial
 * sid of a process is 0 (the MPI layer's API id takes 0 first, so an MPI
 * program's first sid is 1: API ids and sids share one table); a closed
 * number is handed out again, but only when no fresh one is left (the table
 * keeps two free slots, growing by two), and once all are closed the table
 * starts again at 0. A closed sid not yet handed out again is refused with a
 * message. (test_sid_reuse has longer sequences.) */
static void test_sid_numbers(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/sids.sion", dir);
    sion_int64 cs[2] = {500, 100};
    int sid = write_two_tasks(path, cs);
    assert_int_equal(sid, 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    assert_int_equal(sion_close(sid), SION_NOT_SUCCESS); /* second close: refused */
    expect_msg("it was closed");
    int nt = 0, nf = 0;
    int sid2 = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid2, 0); /* all were closed: SIONlib starts again at 0 */
    int aid = sion_generic_create_api("compat");
    assert_int_equal(aid, 1); /* API ids come from the same numbers */
    assert_int_equal(sion_close(aid), SION_NOT_SUCCESS);
    expect_msg("generic api id");
    int sid3 = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid3, 2);
    assert_int_equal(sion_close(sid2), SION_SUCCESS);
    assert_true(sion_get_bytes_read(0) == SION_SIZE_NOT_VALID); /* not handed out again yet */
    expect_msg("invalid sid 0: it was closed");
    unsigned char b[8];
    assert_int_equal(sion_fread(b, 1, 8, 0), 0);
    int sid4 = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid4, 3);                   /* a fresh number before the closed 0 */
    assert_true(sion_get_bytes_read(sid3) == 0); /* the other opens are untouched */
    assert_int_equal(sion_generic_free_api(aid), SION_SUCCESS);
    assert_int_equal(sion_close(sid3), SION_SUCCESS);
    assert_int_equal(sion_close(sid4), SION_SUCCESS);
    /* a serial open of a 3-file set takes 4 numbers as SIONlib's does: file
     * 0's handle (0, kept for ever, as SIONlib), the set (1: returned), files
     * 1 and 2 (2, 3; given back at the close) */
    char p[4096];
    int sid5 = sion_open((char *)vec_path("multi6.sion", p, sizeof p), "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid5, 1);
    assert_true(sion_get_bytes_read(0) == SION_SIZE_NOT_VALID);
    expect_msg("internal handle");
    assert_true(sion_get_bytes_read(2) == SION_SIZE_NOT_VALID);
    expect_msg("internal handle");
    assert_int_equal(sion_close(sid5), SION_SUCCESS);
    int sid6 = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid6, 4); /* 0 is still held: the table was not emptied */
    assert_true(sion_get_bytes_read(2) == SION_SIZE_NOT_VALID);
    expect_msg("it was closed");
    assert_int_equal(sion_close(sid6), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* Write mode: the caller's chunk sizes stay as given, sion_feof is 1,
 * sion_flush is SION_SUCCESS only with bytes in the current block, the file
 * number is 1 (what the serial writer stores), unused block entries are -1. */
static void test_write_mode_values(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/w.sion", dir);
    int ntasks = 2, nf = 1, gr[2] = {0, 1}, *grp = gr;
    sion_int32 bs = 512;
    sion_int64 csv[2] = {500, 100}, *cs = csv;
    int sid = sion_open(path, "wb", &ntasks, &nf, &cs, &bs, &grp, NULL);
    assert_true(sid >= 0);
    assert_true(csv[0] == 500 && csv[1] == 100); /* not rounded up in the caller's array */
    assert_int_equal(sion_feof(sid), 1);
    assert_int_equal(sion_flush(sid), SION_NOT_SUCCESS); /* nothing in the current block */
    assert_int_equal(sion_get_filenumber(sid), 1);
    unsigned char b[600];
    tu_fill(b, 0, 0, 400);
    assert_int_equal(sion_fwrite(b, 1, 400, sid), 400);
    assert_int_equal(sion_flush(sid), SION_SUCCESS);
    assert_int_equal(sion_feof(sid), 1);
    assert_int_equal(sion_fwrite(b, 1, 300, sid), 300); /* block 1 */
    assert_true(sion_get_bytes_written(sid) == 700);
    /* sheaf's value; SIONlib returns the negated size of the last write here */
    assert_true(sion_bytes_avail_in_block(sid) == 512 - 300);
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_flush(sid), SION_NOT_SUCCESS); /* task 1 has written nothing */
    int n = 0, mc = 0;
    sion_int64 gskip = 0, sov = 0, *c2, *g2, *bc, *bsz;
    assert_int_equal(sion_get_locations(sid, &n, &mc, &gskip, &sov, &c2, &g2, &bc, &bsz), SION_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(mc, 2);
    assert_true(c2[0] == 512 && c2[1] == 512); /* the aligned sizes, inside */
    assert_true(bc[0] == 2 && bc[1] == 1);
    assert_true(bsz[0] == 400 && bsz[1] == 0 && bsz[2] == 300);
    assert_true(bsz[3] == -1); /* task 1 has no block 1 */
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* Read mode: sion_get_bytes_read is the cursor's offset in the current task
 * (not a running total), sion_get_current_locations gives absolute offsets,
 * unused block entries read from the file are 0, the file number is the one
 * in the header (1 for the serial writer). */
static void test_read_positions(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/r.sion", dir);
    sion_int64 cs[2] = {500, 100};
    assert_int_equal(sion_close(write_two_tasks(path, cs)), SION_SUCCESS);
    int nt = 0, nf = 0;
    int sid = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_get_filenumber(sid), 1);
    sion_int64 start0 = sion_get_position(sid);
    int n = 0, mc = 0;
    sion_int64 gskip = 0, sov = 0, *c2, *g2, *bc, *bsz;
    assert_int_equal(sion_get_locations(sid, &n, &mc, &gskip, &sov, &c2, &g2, &bc, &bsz), SION_SUCCESS);
    assert_true(bsz[0] == 400 && bsz[1] == 40 && bsz[2] == 300 && bsz[3] == 0);
    sion_int64 start1 = start0 + c2[0];
    unsigned char b[600];
    assert_true(sion_get_bytes_read(sid) == 0);
    assert_int_equal(sion_fread(b, 1, 10, sid), 10);
    assert_true(sion_get_bytes_read(sid) == 10);
    assert_int_equal(sion_fread(b, 1, 390, sid), 390);
    assert_int_equal(sion_feof(sid), 0); /* moves on to block 1 */
    assert_true(sion_get_bytes_read(sid) == 400);
    assert_int_equal(sion_fread(b, 1, 5, sid), 5);
    assert_true(sion_get_bytes_read(sid) == 405);
    assert_int_equal(sion_seek(sid, 1, 0, 30), SION_SUCCESS);
    assert_true(sion_get_bytes_read(sid) == 30); /* task 1's own position */
    assert_int_equal(sion_seek(sid, 0, 1, 7), SION_SUCCESS);
    assert_true(sion_get_bytes_read(sid) == 407);
    sion_int64 *cp, *cb;
    assert_int_equal(sion_get_current_locations(sid, &n, &cp, &cb), SION_SUCCESS);
    assert_int_equal(n, 2);
    assert_true(cp[1] == start1 + 30 && cb[1] == 0); /* absolute offset in the file */
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_get_current_locations(sid, &n, &cp, &cb), SION_SUCCESS);
    assert_true(cp[0] == start0 + gskip + 7 && cb[0] == 1);
    assert_int_equal(sion_flush(sid), SION_SUCCESS); /* read mode: 1 past the block start */
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* multi6 (MANIFEST.json): 6 tasks in 3 files of 2, chunk size 8192, task t
 * holds 3000*(t+1) bytes. SIONlib's serial open of the set is file 0 and its
 * arrays fill unused blocks with -1; a sion_open_rank handle describes the
 * file that holds its task. */
static void test_multifile_and_open_rank(void **st)
{
    (void)st;
    char p[4096];
    int nt = 0, nf = 0;
    int sid = sion_open((char *)vec_path("multi6.sion", p, sizeof p), "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    int n = 0, mc = 0;
    sion_int64 gskip = 0, sov = 0, *c2, *g2, *bc, *bsz;
    assert_int_equal(sion_get_locations(sid, &n, &mc, &gskip, &sov, &c2, &g2, &bc, &bsz), SION_SUCCESS);
    assert_int_equal(n, 6);
    assert_int_equal(mc, 3); /* task 5: 18000 bytes in blocks of 8192 */
    assert_true(bc[0] == 1 && bc[5] == 3);
    assert_true(bsz[0] == 3000 && bsz[6 + 0] == -1 && bsz[12 + 5] == 8000); /* written as 5000+5000+8000 */
    for (int t = 0; t < 6; t++) {
        assert_int_equal(sion_seek(sid, t, 0, 0), SION_SUCCESS);
        assert_int_equal(sion_get_filenumber(sid), 0);
    }
    assert_int_equal(sion_get_number_of_files(sid), 3);
    assert_int_equal(sion_close(sid), SION_SUCCESS);

    sion_int64 chunk = 0;
    sion_int32 bs = 0;
    int rank = 5;
    sid = sion_open_rank((char *)vec_path("multi6.sion", p, sizeof p), "rb", &chunk, &bs, &rank, NULL);
    assert_true(sid >= 0);
    assert_true(chunk == 8192);
    assert_int_equal(sion_get_filenumber(sid), 2);
    assert_int_equal(sion_get_number_of_files(sid), 3);
    assert_int_equal(sion_get_locations(sid, &n, &mc, &gskip, &sov, &c2, &g2, &bc, &bsz), SION_SUCCESS);
    assert_int_equal(n, 2); /* the tasks of file 2 */
    assert_int_equal(mc, 3);
    assert_true(g2[0] == 4 && g2[1] == 5);
    assert_true(c2[0] == 8192 && c2[1] == 8192);
    unsigned char b[100];
    assert_int_equal(sion_fread(b, 1, 100, sid), 100);
    assert_true(sion_get_bytes_read(sid) == 100);
    /* sion_seek takes the task's rank in its file (SIONlib's open_rank handle
     * has rank = local rank 1 and refuses its global rank 5) */
    assert_int_equal(sion_seek(sid, 5, 0, 10), SION_NOT_SUCCESS);
    expect_msg("rank 5");
    assert_int_equal(sion_seek(sid, 1, 0, 10), SION_SUCCESS);
    assert_true(sion_get_bytes_read(sid) == 10);
    assert_int_equal(sion_seek(sid, SION_CURRENT_RANK, 0, 20), SION_SUCCESS);
    assert_true(sion_get_bytes_read(sid) == 20);
    assert_int_equal(sion_seek(sid, 0, 0, 0), SION_NOT_SUCCESS); /* another task of the file */
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

/* A sid that is not open: SIONlib's return values (sion_common.c). */
static void test_bad_sid_values(void **st)
{
    (void)st;
    int bad[3] = {-1, 424242, 0}; /* 0 was closed by test_sid_numbers */
    for (int i = 0; i < 3; i++) {
        int s = bad[i], a = 7, b = 7;
        sion_int64 x = 7, *px = NULL;
        sion_int32 *map = NULL;
        unsigned char buf[4];
        assert_int_equal(sion_get_number_of_files(s), -1);
        assert_int_equal(sion_get_filenumber(s), -1);
        assert_int_equal(sion_is_serial_opened(s), -1);
        assert_int_equal(sion_using_hints(s), -1);
        assert_int_equal(sion_get_file_endianness(s), -1);
        assert_int_equal(sion_get_sizeof(s, &a, &b), -1);
        assert_true(a == -1 && b == -1);
        assert_true(sion_get_bytes_read(s) == -1 && sion_get_bytes_written(s) == -1);
        assert_int_equal(sion_feof(s), -1);
        assert_true(sion_bytes_avail_in_block(s) == -1 && sion_get_position(s) == -1);
        assert_int_equal(sion_get_locations(s, &a, &b, &x, &x, &px, &px, &px, &px), SION_NOT_SUCCESS);
        assert_int_equal(sion_get_current_location(s, &a, &x, &b, &px), SION_NOT_SUCCESS);
        assert_int_equal(sion_get_current_locations(s, &a, &px, &px), SION_NOT_SUCCESS);
        assert_int_equal(sion_get_mapping(s, &a, &map, &b), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek(s, 0, 0, 0), SION_NOT_SUCCESS);
        assert_int_equal(sion_flush(s), SION_NOT_SUCCESS);
        assert_int_equal(sion_ensure_free_space(s, 1), SION_NOT_SUCCESS);
        assert_int_equal(sion_close(s), SION_NOT_SUCCESS);
        assert_int_equal(sion_fwrite(buf, 1, 4, s), 0);
        assert_int_equal(sion_fread(buf, 1, 4, s), 0);
        assert_int_equal(sion_get_keyval_mode(s), SION_KEYVAL_UNKNOWN);
        assert_null(sion_get_fp(s));
        assert_int_equal(sion_get_fd(s), -1);
        assert_int_equal(sion_generic_parclose(s), SION_ID_NOT_VALID);
        assert_int_equal(sion_generic_parreinit(s, 100), SION_ID_NOT_VALID);
        assert_int_equal(sion_dedup(s), SION_ID_NOT_VALID);
        assert_int_equal(sion_dup(s, SION_DUP_ALL, 0, 0), SION_ID_NOT_VALID);
    }
}

/* SIONlib's test_keyval_2 TEST D, serially: key 4711 has 10 records of 10
 * bytes, record i = "ABCDEFGHIJ..." shifted by i. After a record has been
 * read to its end, the key's current record is its next one. */
static void test_seek_key_current_block(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/keys.sion", dir);
    int ntasks = 1, nf = 1, gr = 0, *grp = &gr;
    sion_int32 bs = 10;
    sion_int64 c1 = 200, *cs = &c1;
    char abc[100], buf[100];
    for (int i = 0; i < 100; i++)
        abc[i] = (char)('A' + i % 26);
    int sid = sion_open(path, "wb,keyval=inline", &ntasks, &nf, &cs, &bs, &grp, NULL);
    assert_true(sid >= 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(sion_fwrite_key(abc + i, 4711, 1, 10, sid), 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(sion_fwrite_key(abc, 5611 + (uint64_t)i, 1, 10 + (size_t)i, sid), 10 + (size_t)i);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    sid = sion_open(path, "rb,keyval=inline", &ntasks, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    /* the expected values are SIONlib's test_keyval_2_stdout_0.log */
    struct {
        int entry;
        long pos;
        size_t size, n, got;
        const char *val;
    } step[6] = {{4, 0, 1, 10, 10, "EFGHIJKLMN"},
                 {4, 1, 1, 9, 9, "FGHIJKLMN"},
                 {SION_ABSOLUTE_POS, 82, 1, 8, 8, "KLMNOPQR"},
                 {SION_CURRENT_BLOCK, 5, 1, 5, 5, "OPQRS"},
                 {SION_ABSOLUTE_POS, 42, 1, 10, 8, "GHIJKLMN"},
                 {SION_ABSOLUTE_POS, 43, 4, 2, 1, "HIJK"}};
    for (int k = 0; k < 6; k++) {
        assert_int_equal(sion_seek_key(sid, 4711, step[k].entry, step[k].pos), SION_SUCCESS);
        size_t got = sion_fread_key(buf, 4711, step[k].size, step[k].n, sid);
        assert_int_equal(got, step[k].got);
        buf[got * step[k].size] = '\0';
        assert_string_equal(buf, step[k].val);
    }
    /* the key's last record read to its end: no current record any more */
    assert_int_equal(sion_seek_key(sid, 4711, 9, 0), SION_SUCCESS);
    assert_int_equal(sion_fread_key(buf, 4711, 1, 10, sid), 10);
    assert_int_equal(sion_seek_key(sid, 4711, SION_CURRENT_BLOCK, 0), SION_NOT_SUCCESS);
    assert_int_equal(sion_fread_key(buf, 4711, 1, 3, sid), 0);
    assert_int_equal(sion_seek_key(sid, 4711, SION_CURRENT_BLOCK, SION_CURRENT_POS), SION_NOT_SUCCESS);
    /* positions must lie inside the data: the end of a record or of the key is refused */
    assert_int_equal(sion_seek_key(sid, 4711, 4, 10), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek_key(sid, 4711, SION_ABSOLUTE_POS, 100), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek_key(sid, 4711, SION_ABSOLUTE_POS, 99), SION_SUCCESS);
    assert_int_equal(sion_fread_key(buf, 4711, 1, 10, sid), 1);
    assert_int_equal(buf[0], 'S');
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* The SION_ERROR_RETURN line a call prints, captured from stderr. */
static int stderr_saved = -1;
static char stderr_path[4200];
static void capture_begin(const char *dir)
{
    snprintf(stderr_path, sizeof stderr_path, "%s/stderr.txt", dir);
    fflush(stderr);
    stderr_saved = dup(2);
    FILE *f = fopen(stderr_path, "w");
    assert_non_null(f);
    assert_int_equal(dup2(fileno(f), 2), 2);
    fclose(f);
}
static void capture_end(char *out, size_t n)
{
    fflush(stderr);
    assert_int_equal(dup2(stderr_saved, 2), 2);
    close(stderr_saved);
    FILE *f = fopen(stderr_path, "r");
    assert_non_null(f);
    size_t k = fread(out, 1, n - 1, f);
    out[k] = '\0';
    fclose(f);
}

/* The generic API calls print rc=<the value they return>, as SIONlib's
 * _sion_errorprint(SION_NOT_SUCCESS, ...) does: 0 for the register and free
 * calls on an api id that is not open. */
static void test_generic_api_error_rc(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), out[2048];
    int old = sheaf_set_error_printing(1);
    int aid = sion_generic_create_api("rc");
    assert_true(aid >= 0);
    assert_int_equal(sion_generic_free_api(aid), SION_SUCCESS);
    capture_begin(dir);
    int r1 = sion_generic_free_api(aid);
    int r2 = sion_generic_register_barrier_cb(aid, NULL);
    capture_end(out, sizeof out);
    assert_int_equal(r1, SION_NOT_SUCCESS);
    assert_int_equal(r2, SION_NOT_SUCCESS);
    if (strstr(out, "rc=-1") || !strstr(out, "sion_generic_free_api") || !strstr(out, "rc=0"))
        fail_msg("expected rc=0 lines only, got:\n%s", out);
    sheaf_set_error_printing(old);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sid_numbers), /* first: the process's first sid */
        cmocka_unit_test(test_write_mode_values),
        cmocka_unit_test(test_read_positions),
        cmocka_unit_test(test_multifile_and_open_rank),
        cmocka_unit_test(test_bad_sid_values),
        cmocka_unit_test(test_seek_key_current_block),
        cmocka_unit_test(test_generic_api_error_rc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
