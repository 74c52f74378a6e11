/* proto.c - libsheaf_ckpt: the control protocol of init, a step's open and
 * a shared unit (proto.h), over sheaf_comm through agree.c; the bytes move
 * in the callbacks (ctx.c, io.c over MPI; the simulator's test). No MPI. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
#include "proto.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

int ck_proto_init(ck_ag *a, int alloc_rc, const ck_init_ops *ops, void *x)
{
    if (ck_ag_step(a, "init.alloc", alloc_rc, "no memory for the checkpoint context", NULL, 0))
        return a->code;
    char msg[256] = "";
    int64_t p[CK_PARAMS_MAX] = {0}, v[2 * CK_PARAMS_MAX];
    int np = 0;
    int rc = ops->configure(x, p, &np, msg, sizeof msg);
    if (np < 0 || np > CK_PARAMS_MAX)
        np = 0, rc = rc ? rc : EINVAL, snprintf(msg, sizeof msg, "internal: bad parameter count");
    for (int i = 0; i < np; i++) {
        v[2 * i] = p[i];
        v[2 * i + 1] = p[i] == INT64_MIN ? INT64_MAX : -p[i];
    }
    if (ck_ag_step(a, "init.options", rc, msg, v, 2 * np))
        return a->code;
    for (int i = 0; i < np; i++)
        if (v[2 * i] != -v[2 * i + 1]) { /* the same result on every member: the values are agreed */
            a->code = EINVAL;
            snprintf(a->msg, sizeof a->msg, "the ranks were given different options (parameter %d: %lld..%lld)", i,
                     (long long)v[2 * i], (long long)-v[2 * i + 1]);
            return a->code;
        }
    if (ops->setup && (!ops->need_setup || ops->need_setup(x))) {
        msg[0] = 0;
        rc = ops->setup(x, msg, sizeof msg);
        ck_ag_step(a, "init.setup", rc, msg, NULL, 0);
    }
    return a->code;
}

int ck_proto_dirs(ck_ag *a, int drc, const char *msg) { return ck_ag_step(a, "step.dirs", drc, msg, NULL, 0); }

int ck_proto_shared(ck_ag *a, const ck_shared_ops *ops, void *x, uint32_t nfields, char *msg, size_t mn)
{
    msg[0] = 0;
    if (ck_ag_step(a, "shared.sizes", ops->sizes(x, msg, mn), msg, NULL, 0) ||
        ck_ag_step(a, "shared.header", ops->plan(x, msg, mn), msg, NULL, 0)) {
        snprintf(msg, mn, "%s", a->msg);
        return a->code;
    }
    int orc = ops->open(x, msg, mn), rc = orc;
    for (uint32_t f = 0; f < nfields; f++) {
        if (!orc)
            rc = ops->write_field(x, f, msg, mn);
        if (ck_ag_step(a, "shared.data", rc, msg, NULL, 0))
            break;
    }
    rc = a->code ? 0 : orc;
    if (!rc && !a->code && sheaf_comm_rank(a->comm) == 0)
        rc = ops->write_headers(x, msg, mn);
    ck_ag_step(a, "shared.headers", rc, msg, NULL, 0);
    if (a->code)
        snprintf(msg, mn, "%s", a->msg);
    rc = a->code;
    if (!orc)
        rc = ops->close(x, a->code, msg, mn);
    return rc;
}
