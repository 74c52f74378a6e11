/* mapped_step.c - what the mapped write and read (mapped_write.c,
 * mapped_read.c) and the mapped close share (mapped_int.h): the first step
 * "counts" (par_mapped_count_step), the opens' step "verdict", the new state
 * of a mapped sid, the attach of a process's own tasks and rank 0's view.
 * Below every caller: it calls none of them (mapped.c, the entry points,
 * sits on top and dispatches). */
#include "mapped_int.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

void par_mapped_root_free(mapped_root *r)
{
    if (!r)
        return;
    for (int k = 0; r->meta && k < r->nfiles; k++)
        core_meta_free(&r->meta[k]);
    free(r->meta);
    free(r->pcount);
    free(r->rec);
    free(r);
}

/* The tasks of this process (n of them) attached to their files; with no
 * task (SIONlib allows a process to own none) an empty container that only
 * the mapped close accepts. */
int par_mapped_attach_own(core_container **c, const char *fname, const core_mode *md, int write, int32_t n,
                          const core_attach_spec *sp)
{
    if (n > 0)
        return core_attach_tasks(c, fname, md, write, n, sp);
    core_mode m = *md;
    m.write = write;
    if (!(*c = core_container_new(fname, &m)))
        return SHEAF_E_NOMEM;
    (*c)->attached = 1;
    return 0;
}

static const char *const mo_names[MO_N] = {"the file mode (read or write)", "the number of files (numFiles)",
                                           "the file system block size (fsblksize)", "the key-value mode (keyval)"};

int par_mapped_verdict_step(par_ctx *x, const par_wire_msg *msg, void *v, int64_t *status, const char *what)
{
    par_ctx_step(x, "verdict");
    int64_t out[PAR_WIRE_MAX_N];
    int n = par_wire_msg_count(msg);
    par_wire_pack(msg, v, out);
    par_ctx_bcast(x, 0, out, _SION_INT64, n, 0);
    if (x->grank != 0 && par_wire_unpack(msg, v, out, n))
        *status = par_ctx_take(x, SHEAF_E_FORMAT);
    if (*status) /* as delivered: a task whose callback failed still follows the others */
        par_ctx_verdict(x, (int)*status, "%s: task 0 refused the %s (see its message)", x->fname, what);
    return !*status;
}

void par_mapped_counts_free(mapped_counts *mc)
{
    free(mc->pcount);
    free(mc->pblocks);
    mc->pcount = mc->pblocks = NULL;
}

/* Rank 0, step "counts": the verdict on the gathered heads (fills mc's
 * per-process counts and v). */
static void judge_heads(par_ctx *x, const int64_t *heads, int with_opts, int64_t limit, mapped_alloc_fn alloc,
                        void *actx, mapped_counts *mc, par_wire_mverdict *v)
{
    par_wire_mhead h0, e;
    memset(&h0, 0, sizeof h0);
    for (int g = 0; g < x->gsize; g++) {
        memset(&e, 0, sizeof e);
        if (par_wire_mhead_unpack(&e, heads + PAR_WIRE_MHEAD_N * g, PAR_WIRE_MHEAD_N)) {
            v->status = par_ctx_take(x, SHEAF_E_FORMAT);
            return;
        }
        if (g == 0)
            h0 = e;
        if (e.status) {
            v->status = e.status;
            v->who = g;
            return;
        }
        for (int f = 0; f < MO_N && with_opts; f++)
            if (e.opt[f] != h0.opt[f]) {
                *v = (par_wire_mverdict){SHEAF_E_ARG, 0, 0, g, f, e.opt[f], h0.opt[f]};
                return;
            }
        mc->pcount[g] = (int)e.count; /* -1: "distribute for me" (mapped read) */
        mc->pblocks[g] = (int)e.blocks;
        v->total += e.count > 0 ? e.count : 0;
        v->blocks += e.blocks;
    }
    if (v->total > limit || v->blocks > INT32_MAX)
        v->status = par_ctx_fail(x, SHEAF_E_ARG,
                                 "%s: %lld entries (%lld block entries) are too many for one mapped "
                                 "call",
                                 x->fname, (long long)v->total, (long long)v->blocks);
    else
        v->status = par_ctx_take(x, alloc(actx, v->total, v->blocks));
}

/* Every task, step "counts": the verdict as delivered -> the context. */
static int take_verdict(par_ctx *x, const par_wire_mverdict *v)
{
    if (!v->status)
        return 0;
    int code = (int)v->status;
    if (v->who >= 0 && v->field >= 0) {
        int f = (int)v->field;
        if (f == MO_WRITE)
            return par_ctx_verdict(x, code,
                                   "%s: sion_generic_paropen_mapped: the tasks disagree on %s: task 0 "
                                   "opens for %s, task %lld for %s (it must be the same on every task)",
                                   x->fname, mo_names[f], v->value0 ? "writing" : "reading", (long long)v->who,
                                   v->value ? "writing" : "reading");
        return par_ctx_verdict(x, code,
                               "%s: sion_generic_paropen_mapped: the tasks disagree on %s: task 0 gives "
                               "%lld, task %lld gives %lld (it must be the same on every task)",
                               x->fname, mo_names[f], (long long)v->value0, (long long)v->who, (long long)v->value);
    }
    if (v->who >= 0)
        return par_ctx_verdict(x, code, "%s: %s failed on task %lld (see its message)", x->fname, x->call,
                               (long long)v->who);
    return par_ctx_verdict(x, code, "%s: %s: task 0 refused (see its message)", x->fname, x->call);
}

int par_mapped_count_step(par_ctx *x, par_wire_mhead *mine, int with_opts, int64_t limit, mapped_alloc_fn alloc,
                          void *actx, mapped_counts *mc)
{
    par_ctx_step(x, "counts");
    int64_t head[PAR_WIRE_MHEAD_N], out[PAR_WIRE_MVERDICT_N], *heads = NULL;
    par_wire_mverdict v = {0, 0, 0, -1, -1, 0, 0};
    mine->status = x->rc;
    if (!with_opts || x->rc)
        memset(mine->opt, 0, sizeof mine->opt);
    par_wire_mhead_pack(mine, head);
    if (x->grank == 0) {
        heads = par_root_malloc((size_t)x->gsize * sizeof head, "counts");
        mc->pcount = malloc((size_t)x->gsize * sizeof *mc->pcount);
        mc->pblocks = malloc((size_t)x->gsize * sizeof *mc->pblocks);
        if (!heads || !mc->pcount || !mc->pblocks)
            v.status = par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory on task 0", x->fname);
    }
    int cbfail = par_ctx_gather(x, 0, head, heads, _SION_INT64, PAR_WIRE_MHEAD_N, 0);
    if (x->grank == 0 && !v.status)
        v.status = cbfail ? x->rc : 0;
    if (x->grank == 0 && !v.status)
        judge_heads(x, heads, with_opts, limit, alloc, actx, mc, &v);
    free(heads);
    par_wire_mverdict_pack(&v, out);
    par_ctx_bcast(x, 0, out, _SION_INT64, PAR_WIRE_MVERDICT_N, 0); /* a failed callback: go on with what it delivered */
    if (par_wire_mverdict_unpack(&v, out, PAR_WIRE_MVERDICT_N))
        v.status = par_ctx_take(x, SHEAF_E_FORMAT);
    mc->total = v.total;
    mc->blocks = v.blocks;
    return take_verdict(x, &v);
}

/* counts[g] = per[g] * k on rank 0 when ok, zeros otherwise (NULL off rank 0). */
int *par_mapped_scaled_counts(const int *per, int gsize, int k, int ok, int grank)
{
    if (grank != 0)
        return NULL;
    int *c = calloc((size_t)gsize, sizeof *c);
    for (int i = 0; c && ok && i < gsize; i++)
        c[i] = per[i] > 0 ? per[i] * k : 0;
    return c;
}

par_state *par_mapped_state_new(const par_ctx *x, const core_mode *md, int write, int nlocal, int nfiles, int32_t fsb)
{
    par_state *p = calloc(1, sizeof *p);
    if (!p || !(p->fname = strdup(x->fname))) {
        free(p);
        core_fail(SHEAF_E_NOMEM, "%s: out of memory", x->fname);
        return NULL;
    }
    p->api = *x->api;
    p->gcomm = x->gcomm;
    p->grank = x->grank;
    p->gsize = x->gsize;
    p->write = write;
    p->mapped = 1;
    p->nlocal = nlocal;
    p->nfiles = nfiles;
    p->fsblksize = fsb;
    p->mode = *md;
    p->meta.mapping_size = -1;
    p->file0master = -1;
    p->collector = -1;
    return p;
}
