/* hints.c - the MPI_Info hints of sheaf_file_open (doc/mpiio.md lists them).
 * A value that does not parse is an error (SHEAF_MPIIO_EARG naming the key),
 * never silently ignored; unknown keys are left to MPI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dache.h"

int mio_hint_get(MPI_Info info, const char *key, char *val, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return 0;
    if (MPI_Info_get(info, key, len - 1, val, &flag) != MPI_SUCCESS)
        return 0;
    return flag;
}

static int parse_size(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || x < 0)
        return -1;
    if (*end == 'k' || *end == 'K') {
        x *= 1024;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        x *= 1024 * 1024;
        end++;
    }
    if (*end)
        return -1;
    *v = x;
    return 0;
}

static int bad(char *err, size_t errlen, const char *key, const char *val)
{
    snprintf(err, errlen, "hint %s: invalid value '%s'", key, val);
    return SHEAF_MPIIO_EARG;
}

/* the defaults, before any hint: SHEAF_MPIIO=pfr|nocache picks the mode */
static void hint_defaults(sheaf_file fh, int *cb_nodes, int *noncoherent, int64_t *fixture_page, char *audit)
{
    const char *env = getenv("SHEAF_MPIIO");
    fh->cache_mode = MIO_CACHE_NONE;
    if (env && strcmp(env, "pfr") == 0)
        fh->cache_mode = MIO_CACHE_PFR;
    if (env && strcmp(env, "nocache") == 0)
        fh->cache_mode = MIO_CACHE_NOCACHE;
    fh->pfr_policy = MIO_PFR_AAR;
    fh->indep_policy = MIO_INDEP_REFUSE;
    fh->align = 1;
    fh->cb_buffer = 16 << 20;
    fh->cache_bytes = 64 << 20;
    fh->page = 64 << 10;
    *cb_nodes = 0;
    *noncoherent = 0;
    *fixture_page = 4096;
    audit[0] = 0;
}

/* the size hints, each within its bounds; SHEAF_MPIIO_EARG naming the hint */
static int parse_sizes(sheaf_file fh, MPI_Info info, int64_t *fixture_page, char *err, size_t errlen)
{
    char v[MPI_MAX_INFO_VAL + 1];
    struct {
        const char *key;
        int64_t *dst;
        int64_t min, max;
    } sizes[] = {
        {"sheaf_fr_alignment", &fh->align, 1, (int64_t)1 << 40},
        {"cb_buffer_size", &fh->cb_buffer, 1, (int64_t)1 << 30},
        {"sheaf_cache_size", &fh->cache_bytes, 1, (int64_t)1 << 40},
        {"sheaf_page_size", &fh->page, 1, (int64_t)1 << 26},
        {"sheaf_fixture_page", fixture_page, 1, (int64_t)1 << 26},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (mio_hint_get(info, sizes[i].key, v, sizeof v)) {
            int64_t x;
            if (parse_size(v, &x) || x < sizes[i].min || x > sizes[i].max)
                return bad(err, errlen, sizes[i].key, v);
            *sizes[i].dst = x;
        }
    return 0;
}

/* sheaf_independent: refuse, sync, serve (0), else -1 */
static int parse_indep(sheaf_file fh, const char *v)
{
    static const char *const names[] = {"refuse", "sync", "serve"};
    static const int policy[] = {MIO_INDEP_REFUSE, MIO_INDEP_SYNC, MIO_INDEP_SERVE};
    for (int i = 0; i < 3; i++)
        if (!strcmp(v, names[i]))
            return fh->indep_policy = policy[i], 0;
    return -1;
}

/* fills the mode fields of fh (defaults first); cb_nodes and backend choice out */
int mio_parse_hints(sheaf_file fh, MPI_Info info, int *cb_nodes, int *noncoherent, int64_t *fixture_page, char *audit,
                    size_t auditlen, char *err, size_t errlen)
{
    char v[MPI_MAX_INFO_VAL + 1];
    hint_defaults(fh, cb_nodes, noncoherent, fixture_page, audit);
    if (mio_hint_get(info, "sheaf_cache", v, sizeof v)) {
        if (!strcmp(v, "none"))
            fh->cache_mode = MIO_CACHE_NONE;
        else if (!strcmp(v, "pfr"))
            fh->cache_mode = MIO_CACHE_PFR;
        else if (!strcmp(v, "nocache"))
            fh->cache_mode = MIO_CACHE_NOCACHE;
        else if (!strcmp(v, "dache"))
            fh->cache_mode = MIO_CACHE_DACHE;
        else
            return bad(err, errlen, "sheaf_cache", v);
    }
    fh->realm_mode = fh->cache_mode == MIO_CACHE_NONE || fh->cache_mode == MIO_CACHE_DACHE ? MIO_REALMS_PERCALL
                                                                                           : MIO_REALMS_PERSISTENT;
    if (mio_hint_get(info, "sheaf_realms", v, sizeof v)) {
        if (!strcmp(v, "percall"))
            fh->realm_mode = MIO_REALMS_PERCALL;
        else if (!strcmp(v, "persistent"))
            fh->realm_mode = MIO_REALMS_PERSISTENT;
        else
            return bad(err, errlen, "sheaf_realms", v);
    }
    if (fh->cache_mode == MIO_CACHE_PFR && fh->realm_mode != MIO_REALMS_PERSISTENT) {
        snprintf(err, errlen, "hint sheaf_cache=pfr needs persistent realms (sheaf_realms=percall given)");
        return SHEAF_MPIIO_EARG;
    }
    if (mio_hint_get(info, "sheaf_pfr_size", v, sizeof v)) {
        if (!strcmp(v, "aar"))
            fh->pfr_policy = MIO_PFR_AAR;
        else if (!strcmp(v, "fsize"))
            fh->pfr_policy = MIO_PFR_FSIZE;
        else if (parse_size(v, &fh->pfr_user) == 0 && fh->pfr_user > 0)
            fh->pfr_policy = MIO_PFR_USER;
        else
            return bad(err, errlen, "sheaf_pfr_size", v);
    }
    if (mio_hint_get(info, "sheaf_independent", v, sizeof v) && parse_indep(fh, v))
        return bad(err, errlen, "sheaf_independent", v);
    if (parse_sizes(fh, info, fixture_page, err, errlen))
        return SHEAF_MPIIO_EARG;
    if (mio_hint_get(info, "cb_nodes", v, sizeof v)) {
        /* 0 is "unset" (one aggregator per node), as ROMIO ignores a cb_nodes
         * that is not positive: programs set it to nprocs/2, 0 at 1 rank */
        int64_t x;
        if (parse_size(v, &x) || x < 0 || x > (1 << 24))
            return bad(err, errlen, "cb_nodes", v);
        *cb_nodes = (int)x;
    }
    if (mio_hint_get(info, "sheaf_backend", v, sizeof v)) {
        if (!strcmp(v, "posix"))
            *noncoherent = 0;
        else if (!strcmp(v, "noncoherent"))
            *noncoherent = 1;
        else
            return bad(err, errlen, "sheaf_backend", v);
    }
    fh->write_through = 0;
    if (mio_hint_get(info, "sheaf_write_through", v, sizeof v)) {
        if (!strcmp(v, "true"))
            fh->write_through = 1;
        else if (!strcmp(v, "false"))
            fh->write_through = 0;
        else
            return bad(err, errlen, "sheaf_write_through", v);
    }
    /* served independent I/O reads other realms in the file: collective
     * writes must leave no dirty bytes in the owners' caches (io.c) */
    if (fh->indep_policy == MIO_INDEP_SERVE)
        fh->write_through = 1;
    if (mio_hint_get(info, "sheaf_audit_log", v, sizeof v))
        snprintf(audit, auditlen, "%s", v);
    if (fh->cache_bytes < fh->page)
        fh->cache_bytes = fh->page;
    return 0;
}

/* ---- what must agree across the ranks (doc/mpiio.md "Hints") ---- */
enum {
    H_CACHE,
    H_REALMS,
    H_PFR,
    H_PFR_SIZE,
    H_INDEP,
    H_ALIGN,
    H_CBBUF,
    H_CSIZE,
    H_PAGE,
    H_FPAGE,
    H_CBNODES,
    H_BACKEND,
    H_WT,
    H_AMODE,
    H_DPAGE,
    H_DSLOTS,
    H_DMAX,
    H_DLOCK,
    H_DPROG,
    H_DATOMIC,
    H_DAUDIT,
    H_N
};
static const char *const h_names[H_N] = {"sheaf_cache",
                                         "sheaf_realms",
                                         "sheaf_pfr_size (policy)",
                                         "sheaf_pfr_size",
                                         "sheaf_independent",
                                         "sheaf_fr_alignment",
                                         "cb_buffer_size",
                                         "sheaf_cache_size",
                                         "sheaf_page_size",
                                         "sheaf_fixture_page",
                                         "cb_nodes",
                                         "sheaf_backend",
                                         "sheaf_write_through",
                                         "access mode",
                                         "sheaf_dache_page_size",
                                         "sheaf_dache_slots",
                                         "sheaf_dache_max_size",
                                         "sheaf_dache_lock",
                                         "sheaf_dache_progress",
                                         "sheaf_dache_atomic",
                                         "sheaf_dache_audit"};

int mio_hints_pack(sheaf_file fh, int cb_nodes, int nc, int64_t fpage, const mio_dache_cfg *cfg, int64_t *v)
{
    int64_t x[H_N] = {0};
    if (fh) {
        x[H_CACHE] = fh->cache_mode, x[H_REALMS] = fh->realm_mode, x[H_PFR] = fh->pfr_policy;
        x[H_PFR_SIZE] = fh->pfr_policy == MIO_PFR_USER ? fh->pfr_user : 0, x[H_INDEP] = fh->indep_policy;
        x[H_ALIGN] = fh->align, x[H_CBBUF] = fh->cb_buffer, x[H_CSIZE] = fh->cache_bytes, x[H_PAGE] = fh->page;
        x[H_WT] = fh->write_through, x[H_AMODE] = fh->amode;
    }
    x[H_FPAGE] = fpage, x[H_CBNODES] = cb_nodes, x[H_BACKEND] = nc;
    if (cfg) {
        x[H_DPAGE] = cfg->page, x[H_DSLOTS] = cfg->nslots, x[H_DMAX] = cfg->max_size, x[H_DLOCK] = cfg->lock_kind;
        x[H_DPROG] = cfg->progress, x[H_DATOMIC] = cfg->atomic, x[H_DAUDIT] = cfg->audit;
    }
    for (int i = 0; i < H_N; i++)
        v[2 * i] = x[i], v[2 * i + 1] = -x[i]; /* minimum, maximum */
    return 2 * H_N;
}

static void h_value(int i, int64_t x, char *out, size_t len)
{
    static const char *const cache[] = {"none", "pfr", "nocache", "dache"};
    if (i == H_CACHE && x >= 0 && x < 4)
        snprintf(out, len, "%s", cache[x]);
    else if (i == H_BACKEND)
        snprintf(out, len, "%s", x ? "noncoherent" : "posix");
    else if (i == H_CBNODES && x == 0)
        snprintf(out, len, "unset");
    else if (i == H_AMODE)
        snprintf(out, len, "0x%llx", (long long)x);
    else
        snprintf(out, len, "%lld", (long long)x);
}

int mio_hints_check(sheaf_file fh, const int64_t *v)
{
    for (int i = 0; i < H_N; i++)
        if (v[2 * i] != -v[2 * i + 1]) {
            char lo[32], hi[32];
            h_value(i, v[2 * i], lo, sizeof lo);
            h_value(i, -v[2 * i + 1], hi, sizeof hi);
            return mio_set_err(fh, SHEAF_MPIIO_EARG,
                               "%s: hint %s is not the same on every rank (%s on some, %s on "
                               "others): the open fails on every rank",
                               fh->path, h_names[i], lo, hi);
        }
    return 0;
}
