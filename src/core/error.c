/* error.c - thread-local last-error record and SIONlib-style printing. */
#include "error.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char tl_msg[1536];
static _Thread_local int tl_code;

static void vrecord(int code, const char *fmt, va_list ap)
{
    tl_code = code;
    vsnprintf(tl_msg, sizeof tl_msg, fmt, ap);
}

int core_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrecord(code, fmt, ap);
    va_end(ap);
    return code;
}

int core_fail_errno(int code, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vrecord(code, fmt, ap);
    va_end(ap);
    size_t n = strlen(tl_msg);
    if (n < sizeof tl_msg - 1)
        snprintf(tl_msg + n, sizeof tl_msg - n, ": %s", strerror(errnum));
    return code;
}

void core_clear_error(void)
{
    tl_code = 0;
    tl_msg[0] = '\0';
}

const char *sheaf_last_error(void) { return tl_msg; }
int sheaf_last_error_code(void) { return tl_code; }

/* -1: not decided yet (SION_ERROR_MSG is read on first use); atomic because
 * tasks in different threads report errors at the same time. */
static _Atomic int g_print = -1;

static int print_enabled(void)
{
    int p = atomic_load(&g_print);
    if (p < 0) {
        const char *e = getenv("SION_ERROR_MSG");
        int want = !(e && strcmp(e, "0") == 0);
        int expected = -1;
        atomic_compare_exchange_strong(&g_print, &expected, want); /* an explicit setting wins */
        p = atomic_load(&g_print);
    }
    return p;
}

int sheaf_set_error_printing(int on)
{
    int old = print_enabled();
    atomic_store(&g_print, on ? 1 : 0);
    return old;
}

void core_report_error(int rank) { core_report_error_rc(rank, tl_code); }

void core_report_error_rc(int rank, int rc)
{
    if (!print_enabled() || tl_code == 0)
        return;
    fprintf(stderr, "SION_ERROR_RETURN on rank %d, rc=%d: %s\n", rank, rc, tl_msg);
}

void core_warn(int rank, const char *fmt, ...)
{
    if (!print_enabled())
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "SION_ERROR_WARN on rank %d, rc=0: %s\n", rank, msg);
}
