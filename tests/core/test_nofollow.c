/* test_nofollow.c - files the library creates are never created, truncated or
 * appended to through a symbolic link planted at their name (issue 11): the
 * container of a serial "wb" open (ANSI and POSIX), and the journal
 * "<file>.sheafj" appended to by sion_flush. The open (or flush) fails with a
 * message naming the file and saying it is a symbolic link, and the link's
 * target keeps its bytes. The tasks of a parallel open attach to the file
 * their master created, and the master writes its metadata at the close:
 * neither follows a link that replaced the file in between. Multi-file members and buddy copies:
 * tests/par/test_par_nofollow.c; tool outputs: tests/tools/test_tools.py. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../helpers/testutil.h"
#include "sion.h"
#include "sheaf.h"
#include "partask.h"

static char *g_dir;
static const char precious[] = "precious bytes that must survive";

static void plant(const char *link, const char *target)
{
    assert_int_equal(tu_write_file(target, precious, sizeof precious), 0);
    unlink(link);
    assert_int_equal(symlink(target, link), 0);
}

static void expect_intact(const char *target)
{
    size_t n = 0;
    unsigned char *d = tu_read_file(target, &n);
    assert_non_null(d);
    assert_int_equal(n, sizeof precious);
    assert_memory_equal(d, precious, n);
    free(d);
}

static void expect_link_message(const char *link)
{
    const char *e = sheaf_last_error();
    if (!strstr(e, link) || !strstr(e, "is a symbolic link"))
        fail_msg("message \"%s\" does not name %s as a symbolic link", e, link);
}

static int open_write(const char *fn, const char *mode)
{
    int nt = 2, nf = 1, gr[2] = {0, 1}, *grp = gr;
    sion_int64 cs[2] = {1000, 1000}, *csp = cs;
    sion_int32 fsb = 512;
    FILE *fp = NULL;
    return sion_open((char *)fn, mode, &nt, &nf, &csp, &fsb, &grp, &fp);
}

static void test_container_link(void **st)
{
    (void)st;
    const char *modes[2] = {"wb", "wb,posix"};
    for (int k = 0; k < 2; k++) {
        char fn[4200], target[4200];
        snprintf(fn, sizeof fn, "%s/c%d.sion", g_dir, k);
        snprintf(target, sizeof target, "%s/victim%d", g_dir, k);
        plant(fn, target);
        assert_int_equal(open_write(fn, modes[k]), -1);
        expect_link_message(fn);
        expect_intact(target);
    }
}

/* A dangling link: following it would create the target. */
static void test_dangling_link(void **st)
{
    (void)st;
    char fn[4200], target[4200];
    snprintf(fn, sizeof fn, "%s/dangling.sion", g_dir);
    snprintf(target, sizeof target, "%s/not-there", g_dir);
    assert_int_equal(symlink(target, fn), 0);
    assert_int_equal(open_write(fn, "wb"), -1);
    expect_link_message(fn);
    assert_true(access(target, F_OK) != 0);
}

/* The journal: planted after the open (which removes a stale journal), before the flush. */
static void test_journal_link(void **st)
{
    (void)st;
    char fn[4200], j[4300], target[4200];
    snprintf(fn, sizeof fn, "%s/j.sion", g_dir);
    snprintf(j, sizeof j, "%s.sheafj", fn);
    snprintf(target, sizeof target, "%s/victim-journal", g_dir);
    int sid = open_write(fn, "wb");
    assert_true(sid >= 0);
    plant(j, target);
    assert_int_equal(sion_fwrite("data", 1, 4, sid), 4);
    assert_int_not_equal(sion_flush(sid), SION_SUCCESS);
    expect_link_message(j);
    expect_intact(target);
    sion_close(sid);
    expect_intact(target);
}

/* A regular file at the names is still overwritten, as SIONlib does. */
static void test_regular_overwritten(void **st)
{
    (void)st;
    char fn[4200];
    snprintf(fn, sizeof fn, "%s/plain.sion", g_dir);
    assert_int_equal(tu_write_file(fn, precious, sizeof precious), 0);
    int sid = open_write(fn, "wb");
    assert_true(sid >= 0);
    assert_int_equal(sion_fwrite("data", 1, 4, sid), 4);
    assert_int_equal(sion_flush(sid), SION_SUCCESS);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    size_t n = 0;
    unsigned char *d = tu_read_file(fn, &n);
    assert_non_null(d);
    assert_true(memcmp(d, "sion", 4) == 0);
    free(d);
}

/* A parallel open: the master created the file, a link replaced it before a task
 * attached for writing (core_attach_task) and before the close (core_par_write_tail). */
static void test_attach_link(void **st)
{
    (void)st;
    char fn[4200], target[4200], moved[4300];
    snprintf(fn, sizeof fn, "%s/par.sion", g_dir);
    snprintf(target, sizeof target, "%s/victim-par", g_dir);
    snprintf(moved, sizeof moved, "%s.moved", fn);
    core_mode wm;
    assert_int_equal(core_mode_parse("wb", &wm), 0);
    int64_t cs[1] = {4096}, gr[1] = {0};
    core_meta m;
    memset(&m, 0, sizeof m);
    assert_int_equal(core_par_create_file(fn, &wm, 1, cs, gr, 4096, 0, 1, &m), 0);
    assert_int_equal(rename(fn, moved), 0);
    plant(fn, target);
    core_container *c = NULL;
    assert_int_not_equal(core_attach_task(&c, fn, &wm, 1, m.starts[0], m.chunksizes[0], m.globalskip, 0, 0, NULL), 0);
    expect_link_message(fn);
    int64_t bc[1] = {1}, bs[1] = {0};
    assert_int_not_equal(core_par_write_tail(fn, &m, bc, bs, NULL, 0), 0);
    expect_link_message(fn);
    expect_intact(target);
    core_meta_free(&m);
}

int main(void)
{
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container_link), cmocka_unit_test(test_dangling_link),
        cmocka_unit_test(test_journal_link),   cmocka_unit_test(test_regular_overwritten),
        cmocka_unit_test(test_attach_link),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    free(g_dir);
    return rc;
}
