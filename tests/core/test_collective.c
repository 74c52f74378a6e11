/* test_collective.c - collector groups and packed layouts (core/collective.c):
 * automatic grouping (about one block per collector, SIONlib's caps), fixed
 * group sizes, merge mode, the environment (SION_COLLSIZE / SION_COLLNUM),
 * and invalid arguments. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include "collective.h"
#include "sheaf.h"
#include "sion_generic.h"

#define N 600

static int64_t cs[N];
static int32_t col[N], gs[N];

static void fill(int n, int64_t v)
{
    for (int i = 0; i < n; i++)
        cs[i] = v;
}

static void test_auto_small_one_group(void **st)
{
    (void)st;
    fill(16, 256); /* 16 x 256 B = one block: one collector, no padding */
    assert_int_equal(core_coll_layout("t", 16, cs, 4096, -1, 0, 1, col, gs, NULL), 0);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(col[i], 0);
        assert_int_equal(gs[i], 16);
        assert_int_equal(cs[i], 256);
    }
    fill(16, 300); /* 4800 B: two collectors of ~one block each, every group block-aligned */
    assert_int_equal(core_coll_layout("t", 16, cs, 4096, -1, 0, 1, col, gs, NULL), 0);
    int64_t sum = 0;
    for (int i = 0; i < 16; i++) {
        sum += cs[i];
        if (i + 1 == 16 || col[i + 1] != col[i])
            assert_int_equal(sum % 4096, 0);
    }
    assert_int_equal(sum, 8192);
    assert_int_equal(col[15], 13); /* greedy: 13 x 300 fit one block */
}

static void test_auto_caps(void **st)
{
    (void)st;
    fill(16, 65536); /* 1 MiB over 16 tasks: capped at 4 collectors -> groups of 4 */
    assert_int_equal(core_coll_layout("t", 16, cs, 4096, -1, 0, 1, col, gs, NULL), 0);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(col[i], i / 4 * 4);
        assert_int_equal(gs[i], 4);
        assert_int_equal(cs[i], 65536);
    }
    fill(512, 1 << 20); /* 512 tasks: at most 32 collectors */
    assert_int_equal(core_coll_layout("t", 512, cs, 4096, -1, 0, 1, col, gs, NULL), 0);
    int ncoll = 0;
    for (int i = 0; i < 512; i++)
        ncoll += col[i] == i;
    assert_int_equal(ncoll, 32);
}

static void test_fixed_and_padding(void **st)
{
    (void)st;
    /* collsize 4 over 8 x 700 B (SIONlib 1.7): 2 collectors, at most
     * ceil(5600/4096) = 2; capacity floor(5600/2) rounded up = 4096; greedy:
     * 5 x 700 = 3500 fit, the 6th does not -> groups 0-4 and 5-7, the last
     * chunk of each padded to the block */
    fill(8, 700);
    int64_t span[8];
    assert_int_equal(core_coll_layout("t", 8, cs, 4096, 4, 0, 1, col, gs, span), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(span[i], 4096);
        assert_int_equal(col[i], i < 5 ? 0 : 5);
        assert_int_equal(gs[i], i < 5 ? 5 : 3);
        assert_int_equal(cs[i], i == 4 ? 4096 - 4 * 700 : i == 7 ? 4096 - 2 * 700 : 700);
    }
    int32_t nc = 0;
    fill(8, 700);
    assert_int_equal(core_coll_capacity(8, cs, 4096, 4, &nc), 4096);
    assert_int_equal(nc, 2);
    /* read mode keeps stored sizes; 5 x 100 B with collsize 2 is capped at
     * ceil(500/4096) = 1 collector */
    fill(5, 100);
    assert_int_equal(core_coll_layout("t", 5, cs, 4096, 2, 0, 0, col, gs, NULL), 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(col[i], 0);
        assert_int_equal(gs[i], 5);
        assert_int_equal(cs[i], 100);
    }
    /* collsize 2 over 4 x 5000 B: 2 collectors (max ceil(20000/4096) = 5),
     * capacity floor(20000/2) = 10000 -> 12288: groups 0-1 and 2-3 */
    fill(4, 5000);
    assert_int_equal(core_coll_layout("t", 4, cs, 4096, 2, 0, 1, col, gs, span), 0);
    assert_int_equal(col[1], 0);
    assert_int_equal(col[2], 2);
    assert_int_equal(cs[1], 12288 - 5000);
    assert_int_equal(cs[3], 12288 - 5000);
    /* the capacity rounds the quotient down first: 8193 B over 2 collectors
     * is floor(4096.5) = 4096 per collector, not 8192 */
    cs[0] = 4096, cs[1] = 4097;
    assert_int_equal(core_coll_capacity(2, cs, 4096, 1, &nc), 4096);
    assert_int_equal(nc, 2);
    assert_int_equal(core_coll_layout("t", 2, cs, 4096, 1, 0, 0, col, gs, NULL), 0);
    assert_int_equal(col[1], 1);
    /* all chunks empty: one group (SIONlib would divide by zero) */
    fill(3, 0);
    assert_int_equal(core_coll_layout("t", 3, cs, 4096, -1, 0, 1, col, gs, NULL), 0);
    assert_int_equal(gs[0], 3);
}

static void test_capability(void **st)
{
    (void)st;
    /* SIONlib's hybrid shape (test_ompicol2): 8 x 100 B, fsblksize 16,
     * collsize 2; tasks 0 and 4 (thread 0 of each process) can collect, the
     * others only send and always join: 2 groups of 4, nothing to pad */
    int32_t cap[8];
    for (int i = 0; i < 8; i++)
        cap[i] = i % 4 == 0 ? SION_CAPABILITY_FULL : SION_CAPABILITY_ONLY_SENDER;
    fill(8, 100);
    assert_int_equal(core_coll_layout_cap("t", 8, cs, cap, 16, 2, 0, 1, col, gs, NULL), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(col[i], i / 4 * 4);
        assert_int_equal(gs[i], 4);
        assert_int_equal(cs[i], 100);
    }
    /* without capabilities: 4 collectors, share 208: groups of 2, padded */
    fill(8, 100);
    assert_int_equal(core_coll_layout("t", 8, cs, 16, 2, 0, 1, col, gs, NULL), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(col[i], i / 2 * 2);
        assert_int_equal(cs[i], i % 2 ? 108 : 100);
    }
}

static void test_merge(void **st)
{
    (void)st;
    fill(4, 1000); /* merge: the collector's chunk holds the group, senders keep aligned chunks */
    assert_int_equal(core_coll_layout("t", 4, cs, 4096, 2, 1, 1, col, gs, NULL), 0);
    assert_int_equal(cs[0], 4096);
    assert_int_equal(cs[1], 4096);
    assert_int_equal(cs[2], 4096);
    assert_int_equal(cs[3], 4096);
    fill(2, 3000);
    assert_int_equal(core_coll_layout("t", 2, cs, 4096, 2, 1, 1, col, gs, NULL), 0);
    assert_int_equal(cs[0], 8192);
}

static void test_env(void **st)
{
    (void)st;
    core_mode m;
    assert_int_equal(core_mode_parse("bw", &m), 0);
    int csz = 0;
    unsetenv("SION_COLLSIZE");
    unsetenv("SION_COLLNUM");
    unsetenv("LSION_COLLSIZE");
    unsetenv("LSION_COLLNUM");
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 0);
    assert_int_equal(core_mode_parse("bw,collsize=3", &m), 0); /* collsize alone: off (SIONlib) */
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 0);
    assert_int_equal(core_mode_parse("bw,collective,collsize=3", &m), 0);
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 1);
    assert_int_equal(csz, 3);
    setenv("SION_COLLSIZE", "0", 1); /* the environment switches it off */
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 0);
    setenv("SION_COLLSIZE", "100", 1); /* clamped to the task count */
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 1);
    assert_int_equal(csz, 8);
    setenv("SION_COLLSIZE", "-1", 1);
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 1);
    assert_int_equal(csz, -1);
    unsetenv("SION_COLLSIZE");
    setenv("SION_COLLNUM", "3", 1); /* 3 collectors for 8 tasks: groups of 3 */
    assert_int_equal(core_mode_parse("bw", &m), 0);
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 1);
    assert_int_equal(csz, 3);
    unsetenv("SION_COLLNUM");
    /* SIONlib 1.7.6's names (its library prefix L: its test scripts export these) */
    unsetenv("LSION_COLLSIZE");
    unsetenv("LSION_COLLNUM");
    setenv("LSION_COLLSIZE", "4", 1);
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 1);
    assert_int_equal(csz, 4);
    setenv("SION_COLLSIZE", "0", 1); /* sheaf's own name wins */
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 0);
    unsetenv("SION_COLLSIZE");
    unsetenv("LSION_COLLSIZE");
    setenv("LSION_COLLNUM", "2", 1);
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 1);
    assert_int_equal(csz, 4);
    unsetenv("LSION_COLLNUM");
    assert_int_equal(core_coll_wanted(&m, 8, &csz), 0);
}

static void test_bad(void **st)
{
    (void)st;
    fill(2, 10);
    assert_int_equal(core_coll_layout("t", 0, cs, 4096, -1, 0, 1, col, gs, NULL), SHEAF_E_ARG);
    assert_int_equal(core_coll_layout("t", 2, cs, 0, -1, 0, 1, col, gs, NULL), SHEAF_E_ARG);
    cs[1] = -5;
    assert_int_equal(core_coll_layout("t", 2, cs, 4096, -1, 0, 1, col, gs, NULL), SHEAF_E_ARG);
    cs[1] = INT64_MAX / 2;
    assert_int_equal(core_coll_layout("t", 2, cs, 4096, -1, 0, 1, col, gs, NULL), SHEAF_E_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_small_one_group),
        cmocka_unit_test(test_auto_caps),
        cmocka_unit_test(test_fixed_and_padding),
        cmocka_unit_test(test_capability),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
