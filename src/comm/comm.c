/* comm.c - libsheaf_comm's calls: dispatch to the implementation's table,
 * and what is built on it (allreduce, allmin without a native one, agree).
 * Helpers below it: error.c (messages); the implementations (sim.c here,
 * comm_mpi.c in libsheaf_comm_mpi, the loader's overlay) are reached only
 * through the table. */
#include "comm.h"
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define AGREE_MAXVALS 62
#define MSG_VALUES (SHEAF_COMM_MSGLEN / 7)

int sheaf_comm_rank(const sheaf_comm *c) { return c->ops->rank(c); }
int sheaf_comm_size(const sheaf_comm *c) { return c->ops->size(c); }
int sheaf_comm_barrier(sheaf_comm *c) { return c->ops->barrier(c); }

int sheaf_comm_bcast(sheaf_comm *c, void **buf, size_t *len, size_t maxlen, int root)
{
    return c->ops->bcast(c, buf, len, maxlen, root);
}

int sheaf_comm_reduce(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out, size_t *outlen,
                      int root)
{
    return c->ops->reduce(c, in, len, op, out, outlen, root);
}

int sheaf_comm_split(sheaf_comm *c, int color, int key, sheaf_comm *out) { return c->ops->split(c, color, key, out); }

void sheaf_comm_free(sheaf_comm *c)
{
    if (c && c->ops && c->impl)
        c->ops->free_comm(c);
}

/* The root always broadcasts, an empty message when the reduction failed
 * there (no valid result is empty), so that every member returns. */
int sheaf_comm_allreduce(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out, size_t *outlen)
{
    void *res = NULL;
    size_t rl = 0;
    int root = c->ops->rank(c) == 0;
    int rc = c->ops->reduce(c, in, len, op, &res, &rl, 0);
    if (rc || (root && !res)) {
        free(res);
        res = NULL;
        rl = 0;
    }
    if (!root)
        res = NULL, rl = 0;
    int brc = c->ops->bcast(c, &res, &rl, op->max_len, 0);
    if (brc || rl == 0) {
        if (root || !brc)
            free(res);
        return comm_err(SHEAF_COMM_ECOMM, "sheaf_comm: all-reduce %s failed (reduce %d, bcast %d)", op->name, rc, brc);
    }
    *out = res;
    *outlen = rl;
    return SHEAF_COMM_OK;
}

static int min_combine(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg)
{
    (void)arg;
    if (alen != blen || alen % sizeof(int64_t))
        return 1; /* members passed different counts */
    const unsigned char *pa = a, *pb = b;
    unsigned char *po = out;
    for (size_t i = 0; i < alen; i += sizeof(int64_t)) {
        int64_t x, y;
        memcpy(&x, pa + i, sizeof x);
        memcpy(&y, pb + i, sizeof y);
        memcpy(po + i, y < x ? &y : &x, sizeof x);
    }
    *outlen = alen;
    return 0;
}

int comm_allmin_generic(sheaf_comm *c, int64_t *v, int n)
{
    const sheaf_comm_op op = {"minimum", 64 * sizeof(int64_t), min_combine, NULL};
    void *res = NULL;
    size_t rl = 0;
    int rc = sheaf_comm_allreduce(c, v, (size_t)n * sizeof *v, &op, &res, &rl);
    if (!rc && rl == (size_t)n * sizeof *v)
        memcpy(v, res, rl);
    else if (!rc)
        rc = comm_err(SHEAF_COMM_ECOMM, "sheaf_comm: minimum of %d values came back with %zu bytes", n, rl);
    free(res);
    return rc;
}

int sheaf_comm_allmin(sheaf_comm *c, int64_t *v, int n)
{
    if (n < 1 || n > 64 || !v)
        return comm_err(SHEAF_COMM_EINVAL, "sheaf_comm_allmin: %d values (1..64 allowed)%s", n, v ? "" : ", no buffer");
    return c->ops->allmin ? c->ops->allmin(c, v, n) : comm_allmin_generic(c, v, n);
}

static void set_result(sheaf_comm_agreement *out, int code, int rank, const char *msg)
{
    if (!out)
        return;
    out->code = code;
    out->rank = rank;
    snprintf(out->msg, sizeof out->msg, "%s", msg ? msg : "");
}

/* The failing member with the lowest rank tells the others why, in one
 * more allmin: it contributes its message, 7 bytes to a value (the top byte
 * stays 0, so every value is below INT64_MAX), the others INT64_MAX, the
 * identity of the minimum. No allocation on any member: the agreement
 * still works when the failure was running out of memory. */
static int winner_message(sheaf_comm *c, int me, int winner, const char *msg, char *dst)
{
    int64_t v[MSG_VALUES];
    size_t len = me == winner && msg ? strnlen(msg, SHEAF_COMM_MSGLEN - 1) : 0;
    for (int i = 0; i < MSG_VALUES; i++) {
        uint64_t x = 0;
        for (int k = 0; k < 7; k++) {
            size_t at = (size_t)i * 7 + (size_t)k;
            x = x << 8 | (at < len ? (unsigned char)msg[at] : 0u);
        }
        v[i] = me == winner ? (int64_t)x : INT64_MAX;
    }
    int rc = sheaf_comm_allmin(c, v, MSG_VALUES);
    if (rc)
        return rc;
    for (int i = 0; i < MSG_VALUES; i++)
        for (int k = 0; k < 7; k++)
            dst[i * 7 + k] = (char)((uint64_t)v[i] >> (8 * (6 - k)) & 0xffu);
    dst[SHEAF_COMM_MSGLEN - 1] = '\0';
    return 0;
}

int sheaf_comm_agree(sheaf_comm *c, int rc, const char *msg, int64_t *vals, int n, sheaf_comm_agreement *out)
{
    if (!c || !c->ops || n < 0 || n > AGREE_MAXVALS || (n && !vals)) {
        set_result(out, SHEAF_COMM_EINVAL, -1, "sheaf_comm_agree: bad arguments");
        return comm_err(SHEAF_COMM_EINVAL, "sheaf_comm_agree: %s", !c || !c->ops ? "no communicator" : "bad values");
    }
    int me = c->ops->rank(c);
    int64_t v[AGREE_MAXVALS + 1];
    /* lowest failing rank in the high word, its code in the low word: the
     * minimum carries the first failure's code with it */
    v[0] = rc ? (int64_t)(((uint64_t)(uint32_t)me << 32) | (uint32_t)rc) : INT64_MAX;
    if (n)
        memcpy(v + 1, vals, (size_t)n * sizeof *v);
    int lrc = sheaf_comm_allmin(c, v, n + 1);
    if (lrc) {
        /* the layer's own message, said once (agreements in a row after a
         * broken layer must not wrap it again and again) */
        char why[SHEAF_COMM_MSGLEN];
        snprintf(why, sizeof why, "%s", sheaf_comm_last_error());
        if (strncmp(why, "sheaf_comm_agree: ", 18) != 0)
            comm_err(SHEAF_COMM_ECOMM, "sheaf_comm_agree: the exchange failed (%d): %s", lrc, why);
        set_result(out, SHEAF_COMM_ECOMM, -1, sheaf_comm_last_error());
        return SHEAF_COMM_ECOMM;
    }
    if (n)
        memcpy(vals, v + 1, (size_t)n * sizeof *v);
    if (v[0] == INT64_MAX) {
        set_result(out, 0, -1, NULL);
        return 0;
    }
    int winner = (int)(v[0] >> 32), code = (int)(int32_t)(uint32_t)(v[0] & 0xffffffffu);
    char text[SHEAF_COMM_MSGLEN];
    if (winner_message(c, me, winner, msg, text))
        snprintf(text, sizeof text, "rank %d failed (code %d); its message could not be sent: %s", winner, code,
                 sheaf_comm_last_error());
    set_result(out, code, winner, text);
    return code;
}
