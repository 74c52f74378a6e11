/* agree.c - libsheaf_ckpt: one agreement of a sequence ("first failure
 * wins") over sheaf_comm_agree, and the test hook that injects a failure at
 * a named step. Below every other file of the writer; no MPI. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
#include "proto.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

ck_hook_fn ck_hook = NULL;
void *ck_hook_arg = NULL;

void ck_ag_init(ck_ag *a, sheaf_comm *comm)
{
    a->comm = comm;
    a->who = sheaf_comm_rank(comm);
    a->code = 0;
    a->rank = -1;
    a->msg[0] = 0;
}

int ck_ag_step(ck_ag *a, const char *step, int rc, const char *msg, int64_t *vals, int n)
{
    char inj[160], mine[SHEAF_COMM_MSGLEN];
    if (ck_hook) { /* sees every step; injects where this member did not fail already */
        int h = ck_hook(step, sheaf_comm_rank(a->comm), ck_hook_arg);
        if (h && !rc) {
            snprintf(inj, sizeof inj, "%s: failure injected on rank %d", step, a->who);
            rc = h;
            msg = inj;
        }
    }
    if (rc) /* the failing member names itself: the others do not know its who */
        snprintf(mine, sizeof mine, "rank %d: %s", a->who, msg && *msg ? msg : step);
    sheaf_comm_agreement out;
    int code = sheaf_comm_agree(a->comm, rc, rc ? mine : NULL, vals, n, &out);
    if (code && !a->code) { /* the first failure of the sequence stays */
        /* codes inside are errno values (the public calls negate them); the
         * layer's own failure (no failing rank, SHEAF_COMM_ECOMM) is EPROTO */
        a->code = out.rank >= 0 ? code : EPROTO;
        a->rank = out.rank;
        if (out.rank >= 0)
            snprintf(a->msg, sizeof a->msg, "%s", out.msg);
        else
            snprintf(a->msg, sizeof a->msg, "%s: the agreement failed: %s", step, out.msg);
    }
    return a->code;
}
