/* binding.c - the table of binding.h: libsheaf's internal interface to its
 * own parallel bindings (libsheaf_mpi, _omp, _ompi), exported as
 * sheaf__binding_v2. Each entry forwards to the core or the parallel layer,
 * so the last error, its printing and the sid table stay single. */
#include "binding.h"
#include "par.h"
#include "../core/error.h"
#include "../core/mode.h"
#include "../core/partask.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int b_mode_parse(const char *file_mode, int *write, int *buddy)
{
    core_mode m;
    int rc = core_mode_parse(file_mode, &m);
    *write = rc == 0 && m.explicit_rw && m.write;
    if (buddy)
        *buddy = rc == 0 ? m.buddy : 0;
    return rc;
}

static char *b_member_name(const char *fname, int k) { return core_member_name(fname, k); }

static int b_set_read(const char *path, sheaf__binding_v2_set *out)
{
    core_meta m;
    memset(&m, 0, sizeof m);
    m.mapping_size = -1;
    out->nfiles = out->ntasks = 0;
    out->mapping_size = -1;
    out->mapping = NULL;
    int rc = core_meta_read_path(path, &m);
    if (rc == 0) {
        out->nfiles = m.nfiles;
        out->ntasks = m.ntasks;
        if (m.mapping && m.mapping_size >= 0) {
            size_t n = 2 * (size_t)m.mapping_size;
            if (!(out->mapping = malloc((n ? n : 1) * sizeof *out->mapping)))
                rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
            else {
                memcpy(out->mapping, m.mapping, n * sizeof *out->mapping);
                out->mapping_size = m.mapping_size;
            }
        }
    }
    core_meta_free(&m);
    return rc;
}

static const sheaf__binding_v2_table g_table = {
    .vfail = b_vfail,
    .clear_error = core_clear_error,
    .report_error = core_report_error,
    .vwarn = b_vwarn,
    .mode_parse = b_mode_parse,
    .member_name = b_member_name,
    .set_read = b_set_read,
    .global_group = par_global_group,
    .set_lcg_agreed = par_api_set_lcg_agreed,
};

const sheaf__binding_v2_table *sheaf__binding_v2(void) { return &g_table; }
