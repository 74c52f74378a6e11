/* binding.c - the table of binding.h: libsheaf's internal interface to its
 * own parallel bindings (libsheaf_mpi, _omp, _ompi), exported as
 * sheaf__binding_v1. Each entry forwards to the core or the parallel layer,
 * so the last error, its printing and the sid table stay single. */
#include "binding.h"
#include "par.h"
#include "../core/error.h"
#include "../core/mode.h"
#include <stdio.h>

static int b_vfail(int code, const char *fmt, va_list ap)
{
    char msg[1536];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return core_fail(code, "%s", msg);
}

static void b_vwarn(int rank, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    core_warn(rank, "%s", msg);
}

static int b_mode_write(const char *file_mode, int *write)
{
    core_mode m;
    int rc = core_mode_parse(file_mode, &m);
    *write = rc == 0 && m.explicit_rw && m.write;
    return rc;
}

static const sheaf__binding_v1_table g_table = {
    .vfail = b_vfail,
    .clear_error = core_clear_error,
    .report_error = core_report_error,
    .vwarn = b_vwarn,
    .mode_write = b_mode_write,
    .global_group = par_global_group,
};

const sheaf__binding_v1_table *sheaf__binding_v1(void) { return &g_table; }
