/* test_lock.c - sion_lock_register_lock_callbacks, in the style of SIONlib's
 * test_lock___1: counting callbacks over a mutex, registered once per process,
 * called around every operation on the table of open sids, balanced, never
 * nested, and used from several threads at once. */
#include <pthread.h>
#include <stdint.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sion.h"
#include "sheaf.h"
#include "../helpers/testutil.h"

static pthread_mutex_t g_mx = PTHREAD_MUTEX_INITIALIZER;
static int g_locks, g_unlocks, g_depth, g_maxdepth; /* changed only under g_mx */

static int user_lock(void *data)
{
    pthread_mutex_lock((pthread_mutex_t *)data);
    g_locks++;
    if (++g_depth > g_maxdepth)
        g_maxdepth = g_depth;
    return 0;
}

static int user_unlock(void *data)
{
    g_unlocks++;
    g_depth--;
    pthread_mutex_unlock((pthread_mutex_t *)data);
    return 0;
}

static char *g_dir;

/* Write n bytes of 'A' + k into <dir>/lock<k>.sion and read them back; 0 if right. */
static int roundtrip(int k, size_t n)
{
    char fn[4200], buf[256], back[256];
    snprintf(fn, sizeof fn, "%s/lock%d.sion", g_dir, k);
    memset(buf, 'A' + k % 26, sizeof buf);
    int nt = 1, nf = 1, gr = 0, *grp = &gr;
    sion_int64 cs = 1000, *csp = &cs;
    sion_int32 bs = 512;
    int sid = sion_open(fn, "wb", &nt, &nf, &csp, &bs, &grp, NULL);
    if (sid < 0 || sion_fwrite(buf, 1, n, sid) != n || sion_close(sid) != SION_SUCCESS)
        return 1;
    sid = sion_open(fn, "rb", &nt, &nf, NULL, &bs, NULL, NULL);
    if (sid < 0)
        return 1;
    size_t got = sion_fread(back, 1, n, sid);
    int bad = got != n || memcmp(back, buf, n) != 0;
    return sion_close(sid) != SION_SUCCESS || bad;
}

static void test_register(void **st)
{
    (void)st;
    assert_int_equal(sion_lock_user_callbacks_defined(), 0);
    assert_int_equal(sion_lock_register_lock_callbacks(NULL, user_unlock, &g_mx), SION_NOT_SUCCESS);
    assert_non_null(strstr(sheaf_last_error(), "must not be NULL"));
    assert_int_equal(sion_lock_user_callbacks_defined(), 0);

    assert_int_equal(sion_lock_register_lock_callbacks(user_lock, user_unlock, &g_mx), SION_SUCCESS);
    assert_int_equal(g_locks, 1); /* the registration runs under the new lock, as in SIONlib */
    assert_int_equal(g_unlocks, 1);
    assert_int_equal(sion_lock_user_callbacks_defined(), 1);
    /* the query too, once registered (SIONlib's _sion_lock_user_callbacks_defined
     * takes its lock: test_lock___1's prolog counts 2 per thread) */
    assert_int_equal(g_locks, 2);
    assert_int_equal(g_unlocks, 2);

    /* once per process */
    assert_int_equal(sion_lock_register_lock_callbacks(user_lock, user_unlock, &g_mx), SION_NOT_SUCCESS);
    assert_non_null(strstr(sheaf_last_error(), "registered already"));
    assert_int_equal(g_locks, 3);
    assert_int_equal(g_unlocks, 3);
}

static void test_called_around_sid_table(void **st)
{
    (void)st;
    int before = g_locks;
    assert_int_equal(roundtrip(0, 100), 0);
    assert_true(g_locks >= before + 4); /* at least: two opens, two closes */
    assert_int_equal(g_locks, g_unlocks);
    assert_int_equal(g_depth, 0);
    assert_int_equal(g_maxdepth, 1); /* never taken twice by one operation */

    /* a call on a bad sid looks the table up under the lock too */
    before = g_locks;
    (void)sion_feof(123456);
    assert_true(g_locks > before);
    assert_int_equal(g_locks, g_unlocks);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg, bad = 0;
    for (int i = 0; i < 20; i++)
        bad += roundtrip(10 + id * 20 + i, (size_t)(1 + (id * 37 + i * 11) % 250));
    return (void *)(intptr_t)bad;
}

static void test_threads(void **st)
{
    (void)st;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        assert_int_equal(pthread_join(th[i], &r), 0);
        assert_int_equal((int)(intptr_t)r, 0);
    }
    assert_int_equal(g_locks, g_unlocks);
    assert_int_equal(g_depth, 0);
    assert_int_equal(g_maxdepth, 1);
    printf("lock callbacks: %d locks, %d unlocks\n", g_locks, g_unlocks);
}

int main(void)
{
    sheaf_set_error_printing(0);
    g_dir = tu_mkdtemp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register), /* first: nothing registered yet */
        cmocka_unit_test(test_called_around_sid_table),
        cmocka_unit_test(test_threads),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(g_dir);
    return rc;
}
