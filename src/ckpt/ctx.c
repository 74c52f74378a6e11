/* ctx.c - libsheaf_ckpt: the context (init: the callbacks of
 * ck_proto_init, proto.c), options, field declarations. Dispatches; the
 * helpers the step files share are in util.c, below. */
#if defined(__GNUC__) && !defined(__clang__)
/* messages are cut at their buffer's size on purpose; MPI_Testall with
 * MPI_STATUSES_IGNORE is not an array access (GCC's false positive) */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include "ckpt.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t parse_bytes(const char *v, int *ok)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    uint64_t m = 1;
    if (*end == 'K' || *end == 'k')
        m = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        m = 1024 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        m = 1024ull * 1024 * 1024, end++;
    *ok = end != v && *end == 0;
    return (uint64_t)x * m;
}

static int set_option(ck_cfg *cfg, const char *k, const char *v, char *err, size_t n)
{
    int ok = 1;
    char *end;
    if (!strcmp(k, "strategy")) {
        for (cfg->strategy = 0; cfg->strategy < 4 && strcmp(v, ck_strategy_names[cfg->strategy]); cfg->strategy++)
            ;
        ok = cfg->strategy < 4;
    } else if (!strncmp(k, "hint.", 5)) {
        ok = cfg->nhints < 16 && strlen(k + 5) < 64 && strlen(v) < 128 && k[5];
        if (ok) {
            snprintf(cfg->hint_keys[cfg->nhints], 64, "%s", k + 5);
            snprintf(cfg->hint_vals[cfg->nhints++], 128, "%s", v);
        }
    } else if (!strcmp(k, "handoff")) {
        cfg->handoff = !strcmp(v, "auto") ? CK_HANDOFF_AUTO : !strcmp(v, "shm") ? CK_HANDOFF_SHM : CK_HANDOFF_SEND;
        ok = !strcmp(v, "auto") || !strcmp(v, "shm") || !strcmp(v, "send");
    } else if (!strcmp(k, "container")) {
        ok = !strcmp(v, "sion") || !strcmp(v, "posix");
        cfg->sion_container = !strcmp(v, "sion");
    } else if (!strcmp(k, "slot")) {
        cfg->slot = parse_bytes(v, &ok);
        ok = ok && cfg->slot <= (1ull << 40); /* a window's size is an MPI_Aint */
    } else if (!strcmp(k, "buffer")) {
        cfg->buffer = parse_bytes(v, &ok);
    } else if (!strcmp(k, "timeout")) {
        cfg->timeout = strtod(v, &end);
        ok = end != v && !*end && cfg->timeout > 0;
    } else {
        long x = strtol(v, &end, 10);
        ok = end != v && !*end && x >= 0 && x < (1L << 24);
        if (!strcmp(k, "nf"))
            cfg->nf = (int)x;
        else if (!strcmp(k, "ng"))
            cfg->ng = (int)x;
        else if (!strcmp(k, "dedicated"))
            cfg->dedicated = x != 0;
        else if (!strcmp(k, "durable"))
            cfg->durable = x != 0;
        else if (!strcmp(k, "subdirs"))
            cfg->subdirs = (int)x;
        else if (!strcmp(k, "keep"))
            cfg->keep = (int)x;
        else
            ok = -1;
    }
    if (ok == 1)
        return 0;
    snprintf(err, n, ok < 0 ? "unknown option '%s'" : "bad value '%s' for option '%s'", ok < 0 ? k : v, k);
    return EINVAL;
}

int ck_options(ck_cfg *cfg, const char *opts, char *err, size_t n)
{
    if (!opts)
        return 0;
    char buf[2048];
    if (strlen(opts) >= sizeof buf) {
        snprintf(err, n, "options longer than %zu bytes", sizeof buf - 1);
        return EINVAL;
    }
    snprintf(buf, sizeof buf, "%s", opts);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) {
            snprintf(err, n, "option '%s' without '='", t);
            return EINVAL;
        }
        *eq = 0;
        int rc = set_option(cfg, t, eq + 1, err, n);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_cfg(sheaf_ckpt_ctx *c)
{
    ck_cfg *g = &c->cfg;
    if (g->ng <= 0)
        g->ng = c->np >= 8 ? c->np / 8 : 1;
    if (g->nf <= 0)
        g->nf = g->strategy == CK_RBIO ? g->ng : 1;
    if (g->ng > c->np || g->nf > c->np || (g->strategy == CK_RBIO && g->nf > g->ng))
        return ck_fail(c, EINVAL, "ng=%d, nf=%d do not fit %d ranks (nf <= ng <= ranks for rbio)", g->ng, g->nf, c->np);
    if (g->strategy == CK_RBIO && g->dedicated && c->np / g->ng < 2)
        return ck_fail(c, EINVAL, "rbio with dedicated writers needs at least 2 ranks per group");
    return 0;
}

/* init's callbacks (ck_proto_init): the context's communicator and
 * options, the parameters every rank must share, rbio's communicators */
typedef struct init_x {
    sheaf_ckpt_ctx *c;
    MPI_Comm comm;
    const char *base, *app, *options;
} init_x;

static int init_configure(void *v, int64_t *params, int *np, char *err, size_t n)
{
    init_x *x = v;
    sheaf_ckpt_ctx *c = x->c;
    MPI_Comm_dup(x->comm, &c->comm);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->np);
    c->cfg.durable = 1;
    c->rcs = c->rank == 0 ? calloc((size_t)c->np, sizeof *c->rcs) : NULL; /* checked with the options */
    c->cfg.timeout = 60;
    c->cfg.buffer = 256u << 20;
    int rc = 0;
    *np = 0;
    if (!x->base || strlen(x->base) >= sizeof c->base - 64 || (x->app && strlen(x->app) > SHEAF_CKPT_APP_MAX))
        return snprintf(err, n, "base directory or application name missing or too long"), EINVAL;
    snprintf(c->base, sizeof c->base, "%s", x->base);
    snprintf(c->app, sizeof c->app, "%s", x->app ? x->app : "");
    rc = ck_options(&c->cfg, x->options, err, n);
    if (!rc)
        rc = ck_options(&c->cfg, getenv("SHEAF_CKPT_OPTIONS"), err, n);
    const char *s = getenv("SHEAF_CKPT_STRATEGY");
    if (!rc && s && *s) {
        char o[64];
        snprintf(o, sizeof o, "strategy=%.40s", s);
        rc = ck_options(&c->cfg, o, err, n);
    }
    if (!rc && c->rank == 0 && !c->rcs)
        rc = ENOMEM, snprintf(err, n, "no memory for %d result codes", c->np);
    if (!rc && check_cfg(c))
        rc = EINVAL, snprintf(err, n, "%s", c->err);
    if (!rc && c->cfg.nhints) {
        MPI_Info_create(&c->info);
        for (int i = 0; i < c->cfg.nhints; i++)
            MPI_Info_set(c->info, c->cfg.hint_keys[i], c->cfg.hint_vals[i]);
    }
    if (!rc && c->rank == 0) /* step-N.tmp of an earlier run: never checkpoints, removed */
        ck_remove_stale(c->base);
    /* what decides the collective calls of every step: the same on every rank */
    const ck_cfg *g = &c->cfg;
    int64_t p[] = {g->strategy,       g->nf,      g->ng,      g->dedicated,
                   g->sion_container, g->durable, g->handoff, (int64_t)g->slot};
    *np = (int)(sizeof p / sizeof *p);
    memcpy(params, p, sizeof p);
    return rc;
}

static int init_need_setup(void *v) { return ((init_x *)v)->c->cfg.strategy == CK_RBIO; }

static int init_setup(void *v, char *err, size_t n)
{
    sheaf_ckpt_ctx *c = ((init_x *)v)->c;
    int rc = ck_rbio_setup(c);
    if (rc)
        snprintf(err, n, "%s", c->err);
    return rc;
}

static const ck_init_ops init_ops = {init_configure, init_setup, init_need_setup};

/* Three agreements over the caller's communicator (proto.c): the
 * allocation, the options (with the parameters that must be equal), rbio's
 * setup; one MPI_Allreduce each when all went well. */
static int ckpt_init(MPI_Comm comm, const char *base, const char *app, const char *options, sheaf_ckpt_ctx **out)
{
    *out = NULL;
    sheaf_ckpt_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->comm = MPI_COMM_NULL;
        c->info = MPI_INFO_NULL;
        for (int i = 0; i < 2; i++)
            c->slot[i].gat_req = c->slot[i].err_req = c->slot[i].bc_req = c->slot[i].prep_req = MPI_REQUEST_NULL;
        c->rb.wcomm = c->rb.fcomm = c->rb.shm.gcomm = c->ccomm = MPI_COMM_NULL;
        c->rb.shm.win = MPI_WIN_NULL;
    }
    sheaf_comm_mpi_ref_t ref;
    ck_ag a;
    ck_ag_init(&a, sheaf_comm_mpi_ref(&ref, comm));
    init_x x = {c, comm, base, app, options};
    int all = ck_proto_init(&a, c ? 0 : ENOMEM, &init_ops, &x);
    if (all) {
        ckf_err(all, "sheaf_ckpt_init(%s): %s", base ? base : "(null)", a.msg);
        if (c && c->comm != MPI_COMM_NULL)
            sheaf_ckpt_finalize(&c);
        free(c);
        return all;
    }
    ck_ag_init(&c->ag, sheaf_comm_mpi_ref(&c->cref, c->comm));
    /* the compute ranks: all but rbio's dedicated writers (collective; never fails in practice:
     * MPI_COMM_NULL is then returned to the application) */
    int color = c->cfg.strategy == CK_RBIO && c->rb.role == SHEAF_CKPT_DEDICATED ? MPI_UNDEFINED : 0;
    if (MPI_Comm_split(c->comm, color, c->rank, &c->ccomm) != MPI_SUCCESS)
        c->ccomm = MPI_COMM_NULL;
    *out = c;
    return 0;
}

int sheaf_ckpt_init(MPI_Comm comm, const char *base, const char *app, const char *options, sheaf_ckpt_ctx **out)
{
    return ck_pub(ckpt_init(comm, base, app, options, out));
}

static int ckpt_declare(sheaf_ckpt_ctx *c, const char *name, int type, uint64_t count, const void *data, int *index)
{
    if (!name || !*name || strlen(name) > SHEAF_CKPT_NAME_MAX || !ckf_type_size(type) || (count && !data) || c->seq)
        return ck_fail(c, EINVAL, "declare '%s': bad name, type %d, data, or declared after the first write",
                       name ? name : "(null)", type);
    if ((uint64_t)c->nfields >= CKF_MAX_FIELDS)
        return ck_fail(c, EINVAL, "more than %u fields", CKF_MAX_FIELDS);
    for (int f = 0; f < c->nfields; f++)
        if (!strcmp(c->fields[f].name, name))
            return ck_fail(c, EINVAL, "field '%s' declared twice", name);
    if (c->nfields == c->capfields) {
        int nc = c->capfields ? 2 * c->capfields : 8;
        ck_fielddecl *n = realloc(c->fields, (size_t)nc * sizeof *n);
        if (!n)
            return ck_fail(c, ENOMEM, "no memory for field '%s'", name);
        c->fields = n;
        c->capfields = nc;
    }
    ck_fielddecl *d = &c->fields[c->nfields];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->type = type;
    d->es = ckf_type_size(type);
    d->count = count;
    d->data = data;
    if (index)
        *index = c->nfields;
    c->nfields++;
    return 0;
}

static int ckpt_update(sheaf_ckpt_ctx *c, int index, uint64_t count, const void *data)
{
    if (index < 0 || index >= c->nfields || (count && !data))
        return ck_fail(c, EINVAL, "update: no field %d or no data", index);
    c->fields[index].count = count;
    c->fields[index].data = data;
    return 0;
}

int sheaf_ckpt_latest_mpi(MPI_Comm comm, const char *base, uint64_t *step)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    struct {
        uint64_t step;
        int rc;
        char msg[256];
    } s = {0, 0, ""};
    if (rank == 0) {
        s.rc = sheaf_ckpt_latest(base, &s.step);
        snprintf(s.msg, sizeof s.msg, "%s", sheaf_ckpt_errmsg());
    }
    MPI_Bcast(&s, sizeof s, MPI_BYTE, 0, comm);
    s.msg[255] = 0;
    *step = s.step;
    if (s.rc)
        ckf_err(s.rc, "%s", s.msg);
    return ck_pub(s.rc); /* sheaf_ckpt_latest's code is negative already */
}

int sheaf_ckpt_declare(sheaf_ckpt_ctx *c, const char *name, int type, uint64_t count, const void *data, int *index)
{
    return ck_pub(ckpt_declare(c, name, type, count, data, index));
}

int sheaf_ckpt_update(sheaf_ckpt_ctx *c, int index, uint64_t count, const void *data)
{
    return ck_pub(ckpt_update(c, index, count, data));
}

MPI_Comm sheaf_ckpt_compute_comm(const sheaf_ckpt_ctx *c) { return c ? c->ccomm : MPI_COMM_NULL; }
int sheaf_ckpt_handoff(const sheaf_ckpt_ctx *c)
{
    if (!c || c->cfg.strategy != CK_RBIO)
        return SHEAF_CKPT_HANDOFF_NONE;
    return c->rb.shm.on ? SHEAF_CKPT_HANDOFF_SHM : c->rb.prog ? SHEAF_CKPT_HANDOFF_THREAD : SHEAF_CKPT_HANDOFF_SEND;
}
int sheaf_ckpt_role(const sheaf_ckpt_ctx *c) { return c->cfg.strategy == CK_RBIO ? c->rb.role : SHEAF_CKPT_RANK; }
void sheaf_ckpt_get_stats(const sheaf_ckpt_ctx *c, sheaf_ckpt_stats *st) { *st = c->st; }
const char *sheaf_ckpt_error(const sheaf_ckpt_ctx *c) { return c->err; }
