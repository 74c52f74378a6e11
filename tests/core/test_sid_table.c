/* test_sid_table.c - the table of open ids (src/sid/sid.c) with many ids, in
 * the mode SHEAF_SID_NOREUSE=1 (set by main before the first id; SIONlib's
 * reuse is test_sid_reuse): 10^4 ids closed oldest first, newest first and
 * every other one: each close returns the object its id was registered with,
 * a closed id is never valid again ("it was closed"), the ids still open look
 * up their own objects, and ids are never handed out twice (also after
 * closes). The whole test runs in well under a second: look-ups and closes
 * are O(1) (the old sorted table's memmove per close moved n^2/2 entries). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/sid/sid.h"
#include "sheaf.h"

enum { N = 10000 };
static int g_obj[3 * N];

static int reg(int i) { return api_register_kind(API_KIND_GENERIC_API, &g_obj[i]); }

static void *look(int id) { return api_lookup_kind(id, API_KIND_GENERIC_API, "test"); }

static void register_n(int *ids, int first, int n, int prev)
{
    for (int i = 0; i < n; i++) {
        ids[i] = reg(first + i);
        assert_true(ids[i] > prev); /* increasing: never a number handed out before */
        prev = ids[i];
    }
}

static void expect_closed(int id)
{
    assert_null(look(id));
    assert_non_null(strstr(sheaf_last_error(), "it was closed"));
    assert_null(api_release_kind(id, API_KIND_GENERIC_API)); /* a second close finds nothing */
}

static void test_oldest_first(void **st)
{
    (void)st;
    int *ids = malloc(N * sizeof *ids);
    register_n(ids, 0, N, -1);
    for (int i = 0; i < N; i++) {
        assert_ptr_equal(api_release_kind(ids[i], API_KIND_GENERIC_API), &g_obj[i]);
        if (i % 997 == 0) { /* lookups after closes: the closed and the open */
            expect_closed(ids[i]);
            if (i + 1 < N)
                assert_ptr_equal(look(ids[i + 1]), &g_obj[i + 1]);
            assert_ptr_equal(look(ids[N - 1]), &g_obj[N - 1]);
        }
    }
    for (int i = 0; i < N; i += 101)
        expect_closed(ids[i]);
    free(ids);
}

static void test_newest_first_and_interleaved(void **st)
{
    (void)st;
    int *ids = malloc(2 * N * sizeof *ids);
    register_n(ids, 0, N, -1);
    for (int i = N - 1; i >= N / 2; i--)
        assert_ptr_equal(api_release_kind(ids[i], API_KIND_GENERIC_API), &g_obj[i]);
    /* every other one of the rest, then N new ids while half of those are open */
    for (int i = 0; i < N / 2; i += 2)
        assert_ptr_equal(api_release_kind(ids[i], API_KIND_GENERIC_API), &g_obj[i]);
    register_n(ids + N, N, N, ids[N - 1]);
    for (int i = 0; i < N / 2; i++) {
        if (i % 2)
            assert_ptr_equal(look(ids[i]), &g_obj[i]);
        else
            expect_closed(ids[i]);
    }
    for (int i = N / 2; i < N; i += 97)
        expect_closed(ids[i]);
    for (int i = N; i < 2 * N; i++)
        assert_ptr_equal(look(ids[i]), &g_obj[i]);
    /* the wrong kind is not found, and not closed by a release of the other kind */
    assert_null(api_lookup_kind(ids[1], API_KIND_SID, "test"));
    assert_null(api_release_kind(ids[1], API_KIND_SID));
    assert_ptr_equal(look(ids[1]), &g_obj[1]);
    for (int i = 1; i < N / 2; i += 2)
        assert_ptr_equal(api_release_kind(ids[i], API_KIND_GENERIC_API), &g_obj[i]);
    for (int i = 2 * N - 1; i >= N; i -= 2) /* the rest from both ends */
        assert_ptr_equal(api_release_kind(ids[i], API_KIND_GENERIC_API), &g_obj[i]);
    for (int i = N; i < 2 * N; i += 2)
        assert_ptr_equal(api_release_kind(ids[i], API_KIND_GENERIC_API), &g_obj[i]);
    for (int i = 0; i < 2 * N; i += 89)
        expect_closed(ids[i]);
    /* after everything closed: the next id is still a new number */
    int id = reg(0);
    assert_true(id > ids[2 * N - 1]);
    assert_ptr_equal(api_release_kind(id, API_KIND_GENERIC_API), &g_obj[0]);
    free(ids);
}

int main(void)
{
    setenv("SHEAF_SID_NOREUSE", "1", 1); /* read at the first id */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oldest_first),
        cmocka_unit_test(test_newest_first_and_interleaved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
