/* ctx.c - the per-call context and its failure agreement (ctx.h). */
#include "ctx.h"
#include "../core/error.h"
#include "sion.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static par_fault_fn fault_hook;

void par_set_fault_hook(par_fault_fn fn) { fault_hook = fn; }

void par_ctx_init(par_ctx *x, const par_api *api, const char *fname, const char *call, void *gcomm, int grank,
                  int gsize)
{
    memset(x, 0, sizeof *x);
    x->api = api;
    x->fname = fname;
    x->call = call;
    x->step = "";
    x->gcomm = gcomm;
    x->grank = grank;
    x->gsize = gsize;
    x->lsize = 1;
}

static void keep(par_ctx *x, int code)
{
    x->rc = code ? code : SHEAF_E_IO;
    snprintf(x->msg, sizeof x->msg, "%s", sheaf_last_error());
}

int par_ctx_fail(par_ctx *x, int code, const char *fmt, ...)
{
    if (x->rc)
        return x->rc;
    char buf[PAR_CTX_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    core_fail(code ? code : SHEAF_E_IO, "%s", buf);
    keep(x, code);
    return x->rc;
}

int par_ctx_take(par_ctx *x, int rc)
{
    if (rc && !x->rc)
        keep(x, rc);
    return x->rc;
}

int par_ctx_step(par_ctx *x, const char *step)
{
    x->step = step;
    if (fault_hook && !x->rc) {
        char msg[PAR_CTX_MSG] = "";
        int code = fault_hook(x->call, step, x->grank, msg, sizeof msg);
        if (code)
            par_ctx_fail(x, code, "%s", msg);
    }
    return !x->rc;
}

int par_ctx_verdict(par_ctx *x, int code, const char *fmt, ...)
{
    if (x->rc) { /* its own first message, the agreed code */
        x->rc = code;
        return code;
    }
    char buf[PAR_CTX_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    core_fail(code, "%s", buf);
    keep(x, code);
    return code;
}

int par_ctx_restore(const par_ctx *x)
{
    if (x->rc)
        core_fail(x->rc, "%s", x->msg);
    return x->rc;
}

static int cb_result(par_ctx *x, int failed, int local)
{
    if (failed)
        par_ctx_fail(x, SHEAF_E_IO, "%s: %s: a collective callback of the %s group failed on task %d (step %s)",
                     x->fname, x->call, local ? "local" : "global", x->grank, x->step);
    return failed ? 1 : 0;
}

int par_ctx_gather(par_ctx *x, int local, void *in, void *out, int type, int n, int root)
{
    int am_root = (local ? x->lrank : x->grank) == root, skipped = 0;
    if (am_root && !out)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: %s: out of memory for the receive buffer of step %s on task %d", x->fname,
                     x->call, x->step, x->grank);
    int rc = par_gather_root_safe(x->api, local ? x->lcomm : x->gcomm, in, out, type, n, root, am_root,
                                  local ? x->lsize : x->gsize, &skipped);
    return skipped ? 1 : cb_result(x, rc, local);
}

int par_ctx_gatherv(par_ctx *x, int local, void *in, void *out, int type, int *counts, int n, int root)
{
    return cb_result(x, x->api->gatherv(in, out, local ? x->lcomm : x->gcomm, type, counts, n, root) != 0, local);
}

int par_ctx_scatter(par_ctx *x, int local, void *in, void *out, int type, int n, int root)
{
    int am_root = (local ? x->lrank : x->grank) == root, skipped = 0;
    if (am_root && !in)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: %s: out of memory for the send buffer of step %s on task %d", x->fname,
                     x->call, x->step, x->grank);
    int rc = par_scatter_root_safe(x->api, local ? x->lcomm : x->gcomm, in, out, type, n, root, am_root,
                                   local ? x->lsize : x->gsize, &skipped);
    return skipped ? 1 : cb_result(x, rc, local);
}

int par_ctx_scatterv(par_ctx *x, int local, void *in, void *out, int type, int *counts, int n, int root)
{
    return cb_result(x, x->api->scatterv(in, out, local ? x->lcomm : x->gcomm, type, counts, n, root) != 0, local);
}

int par_ctx_bcast(par_ctx *x, int local, void *data, int type, int n, int root)
{
    return cb_result(x, x->api->bcast(data, local ? x->lcomm : x->gcomm, type, n, root) != 0, local);
}

int par_ctx_vote(par_ctx *x)
{
    int64_t mine = x->rc, res[2] = {0, -1}, *all = NULL;
    int rootfail = 0, skipped = 0;
    if (x->grank == 0 && !(all = par_root_malloc((size_t)(x->gsize > 0 ? x->gsize : 1) * sizeof *all, "vote")))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: %s: out of memory for the receive buffer of the vote on task 0", x->fname,
                     x->call); /* still takes part (rootbuf.c); the verdict is its failure */
    /* this task's vote left with the gather: a failure of its own callback
     * can no longer reach the others (doc/parallel.md, "Limits") */
    int cbfail =
        par_gather_root_safe(x->api, x->gcomm, &mine, all, _SION_INT64, 1, 0, x->grank == 0, x->gsize, &skipped);
    if (cbfail && x->grank == 0)
        rootfail = 1;
    for (int i = 0; x->grank == 0 && all && !rootfail && i < x->gsize; i++)
        if (all[i]) {
            res[0] = all[i];
            res[1] = i;
            break;
        }
    if (x->grank == 0 && !all) { /* task 0's own failure (out of memory or before) */
        res[0] = x->rc;
        res[1] = 0;
    } else if (x->grank == 0 && rootfail) {
        res[0] = SHEAF_E_IO;
        res[1] = -1;
    }
    free(all);
    cbfail |= x->api->bcast(res, x->gcomm, _SION_INT64, 2, 0) != 0;
    if (res[0] == 0) {
        if (cbfail) /* only here: the others may have succeeded */
            par_ctx_fail(x, SHEAF_E_IO, "%s: %s: a collective callback failed on task %d", x->fname, x->call, x->grank);
        return 0;
    }
    int code = (int)res[0] < 0 ? (int)res[0] : SHEAF_E_IO;
    if (x->rc) /* this task's own first message, the agreed code */
        core_fail(code, "%s", x->msg);
    else if (res[1] >= 0)
        core_fail(code, "%s: %s failed on task %lld (see its message)", x->fname, x->call, (long long)res[1]);
    else
        core_fail(code, "%s: %s: a collective callback failed on task 0", x->fname, x->call);
    keep(x, code); /* the verdict: par_ctx_restore gives it back after cleanup */
    return code;
}

int par_ctx_agree(par_ctx *x)
{
    int v = par_ctx_vote(x);
    if (v)
        return v;
    /* failed after its vote left (its own agreement callback): nothing more
     * can be done here (doc/parallel.md, "Limits") */
    return x->rc ? par_ctx_restore(x) : 0;
}
