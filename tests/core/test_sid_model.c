/* test_sid_model.c - SIONlib's id reuse (src/sid/sid.c, take()) against a
 * model of its rule written here as SIONlib's source states it, with the
 * plain scan: keep two slots free (grow by two), take the lowest slot never
 * used since the table was last emptied, else the first closed slot
 * cyclically after the last closed one; all closed empties the table.
 * 160,000 random opens and closes (seeded, several table sizes up to ~10^4
 * ids open at once) must hand out exactly the model's ids, and every open id
 * must look up its own object. Then 5*10^4 ids open with one in two closed and
 * reopened in turn (the reuse search over a large table; the plain scan made
 * that O(n^2)): the ids again equal the model's. No timing is asserted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/sid/sid.h"
#include "sheaf.h"

/* the model: state per slot (0 fresh, 1 open, -1 closed) */
static signed char *m_st;
static int m_size, m_cap, m_nfree, m_fresh, m_last = -1;

static int m_take(void)
{
    if (m_nfree < 2) {
        if (m_size + 2 > m_cap) {
            m_cap = m_cap ? 2 * m_cap : 16;
            m_st = realloc(m_st, (size_t)m_cap);
            assert_non_null(m_st);
        }
        m_st[m_size] = m_st[m_size + 1] = 0;
        m_size += 2;
        m_nfree += 2;
    }
    int id = -1;
    if (m_fresh < m_size)
        id = m_fresh++;
    else
        for (int k = 1; k <= m_size && id < 0; k++) {
            int i = (int)(((long long)m_last + k) % m_size);
            if (m_st[i] < 0)
                id = i;
        }
    assert_true(id >= 0);
    m_st[id] = 1;
    m_nfree--;
    return id;
}

static void m_put(int id)
{
    m_st[id] = -1;
    m_nfree++;
    m_last = id;
    if (m_nfree == m_size)
        m_size = m_nfree = m_fresh = 0;
}

enum { MAXOPEN = 50000 };
static int g_objs[MAXOPEN];
static int g_open[MAXOPEN]; /* ids open now */
static int g_nopen;

static void open_one(void)
{
    int want = m_take();
    int got = api_register_kind(API_KIND_GENERIC_API, &g_objs[want % MAXOPEN]);
    assert_int_equal(got, want);
    g_open[g_nopen++] = got;
}

static void close_at(int k)
{
    int id = g_open[k];
    assert_ptr_equal(api_release_kind(id, API_KIND_GENERIC_API), &g_objs[id % MAXOPEN]);
    m_put(id);
    g_open[k] = g_open[--g_nopen];
}

static void close_all(void)
{
    while (g_nopen)
        close_at(g_nopen - 1);
}

static void random_ops(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (int round = 0; round < 4; round++) {
        int target = round == 0 ? 8 : round == 1 ? 100 : round == 2 ? 2000 : 10000;
        for (int op = 0; op < 40000; op++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = seed >> 8;
            if (g_nopen == 0 || (g_nopen < target && r % 3 != 0))
                open_one();
            else
                close_at((int)(r % (unsigned)g_nopen));
        }
        for (int k = 0; k < g_nopen; k++)
            assert_ptr_equal(api_lookup_kind(g_open[k], API_KIND_GENERIC_API, "test"), &g_objs[g_open[k] % MAXOPEN]);
        close_all(); /* the table empties: ids start at 0 again */
    }
}

static void large_table(void **state)
{
    (void)state;
    while (g_nopen < MAXOPEN)
        open_one();
    /* close every other id, then reopen as many: each reuse searches the table */
    for (int k = MAXOPEN - 2; k >= 0; k -= 2)
        close_at(k);
    while (g_nopen < MAXOPEN)
        open_one();
    close_all();
}

int main(void)
{
    setenv("SHEAF_SID_NOREUSE", "0", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_ops), cmocka_unit_test(large_table)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(m_st);
    return rc;
}
