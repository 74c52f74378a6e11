/* test_debug.c - sion_debug.h as SIONlib declares it: the DPRINTF family of
 * macros (with and without SION_DEBUG, see test_debug_on.c), _SION_DEFAULT_RANK,
 * and void sion_debug_on / sion_debug_off / sion_dclose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sion.h"
#include "sion_debug.h"

/* SIONlib's return types, checked at compile time */
_Static_assert(_Generic(&sion_debug_on, void (*)(int, const char *) : 1, default : 0),
               "void sion_debug_on(int, const char *)");
_Static_assert(_Generic(&sion_debug_off, void (*)(void) : 1, default : 0), "void sion_debug_off(void)");
_Static_assert(_Generic(&sion_dclose, void (*)(void) : 1, default : 0), "void sion_dclose(void)");
_Static_assert(_SION_DEFAULT_RANK == -1, "_SION_DEFAULT_RANK is -1");

/* in test_debug_on.c, compiled with -DSION_DEBUG */
int debug_macros_on(const char *file);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Without SION_DEBUG the macros expand to nothing: their arguments are not
 * compiled (SIONlib's test programs name variables that do not exist there). */
static void macros_off_expand_to_nothing(void **state)
{
    (void)state;
    int evaluated = 0;
    const char *path = "test_debug_off.log";
    remove(path);
    sion_debug_on(2047, path);
    DPRINTF((1, "not printed %d\n", no_such_variable));
    DPRINTFP((256, "f", commgroup->rank, "not printed\n"));
    DPRINTFTS(no_rank, "step");
    DPRINTFTS2(no_rank, "step");
    ONLY_DEBUG(evaluated = 1;)
    assert_int_equal(evaluated, 0);
    assert_int_equal(sion_isdebug(), 1);
    sion_debug_off();
    assert_int_equal(sion_isdebug(), 0);
    char *s = slurp(path);
    assert_non_null(s);
    assert_string_equal(s, "");
    remove(path);
}

static void macros_on_print(void **state)
{
    (void)state;
    const char *path = "test_debug_on.log";
    remove(path);
    assert_int_equal(debug_macros_on(path), 1);
    char *s = slurp(path);
    assert_non_null(s);
    assert_non_null(strstr(s, "plain 7\n"));
    assert_non_null(strstr(s, "[myfunc] with rank 3\n"));
    assert_non_null(strstr(s, "step=open"));
    assert_non_null(strstr(s, "timestamp="));
    assert_null(strstr(s, "step=masked"));     /* DPRINTFTS2 has mask 256, not in 128|1|2 */
    assert_null(strstr(s, "not in the mask")); /* mask 4 */
    remove(path);
}

/* sion.h alone (sion_common.h) defines the macros empty, as SIONlib's does;
 * checked in test_debug_common.c, which includes only sion.h */
int debug_macros_from_sion_h(void);

static int thread_seven(void) { return 7; }

static void sionlib_debug_helpers(void **state)
{
    (void)state;
    assert_int_equal(debug_macros_from_sion_h(), 0);
    assert_int_equal(_lsion_debug_init(), 1);
    _sion_debug_set_lock_cb(NULL, NULL);
    const char *path = "test_debug_thread.log";
    remove(path);
    assert_int_equal(_lsion_debug_set_query_thread_num_function(thread_seven), 1);
    sion_debug_on(1, path);
    sion_dprintfp(1, "fn", _SION_DEFAULT_RANK, "x\n");
    sion_debug_off();
    assert_int_equal(_lsion_debug_set_query_thread_num_function(NULL), 1);
    char *s = slurp(path);
    assert_non_null(s);
    assert_string_equal(s, "SION[ 7][fn] x\n");
    remove(path);
}

/* SIONlib-internal names its test programs declare themselves */
char *_lsion_buddy_role_to_str(unsigned int flag);

static void sionlib_internal_names(void **state)
{
    (void)state;
    assert_string_equal(_lsion_buddy_role_to_str(SION_ROLE_WRITER), "SION_ROLE_WRITER");
    assert_string_equal(_lsion_buddy_role_to_str(SION_ROLE_COLLECTOR), "SION_ROLE_COLLECTOR");
    assert_string_equal(_lsion_buddy_role_to_str(SION_ROLE_COLLECTOR_READER), "SION_ROLE_COLLECTOR_READER");
    assert_string_equal(_lsion_buddy_role_to_str(SION_ROLE_NONE), "SION_ROLE_NONE");
    assert_string_equal(_lsion_buddy_role_to_str(3), "undef");
}

static void dclose_turns_debugging_off(void **state)
{
    (void)state;
    sion_debug_on(1, "stderr");
    assert_int_equal(sion_isdebug(), 1);
    assert_ptr_equal(sion_get_dfile(), stderr);
    sion_dclose();
    assert_int_equal(sion_isdebug(), 0);
    assert_null(sion_get_dfile());
    assert_int_equal(sion_dprintf(1, "x"), 0);
    /* a file that cannot be opened leaves debugging off */
    sion_debug_on(1, "/nonexistent-dir/x/debug.log");
    assert_int_equal(sion_isdebug(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(macros_off_expand_to_nothing), cmocka_unit_test(macros_on_print),
        cmocka_unit_test(dclose_turns_debugging_off),   cmocka_unit_test(sionlib_debug_helpers),
        cmocka_unit_test(sionlib_internal_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
