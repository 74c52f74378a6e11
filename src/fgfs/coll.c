/* coll.c - helpers over the collective interface: all-reduce as reduce +
 * bcast, and the rule that turns a merged status word into each process's
 * return value (its own message, or EREMOTE naming the failing rank). */
#include "fgfs.h"
#include <stdlib.h>

/* The root always broadcasts, an empty message when the reduction failed
 * there (no valid message is empty), so that every member returns. */
int fgfs_allreduce(sheaf_fgfs_comm *c, const void *in, size_t len, const sheaf_fgfs_op *op, void **out,
                   size_t *outlen)
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
        return fgfs_err(SHEAF_FGFS_ECOMM, "collective layer: %s failed (reduce %d, bcast %d)", op->name, rc, brc);
    }
    *out = res;
    *outlen = rl;
    return SHEAF_FGFS_OK;
}

int fgfs_status_result(const fgfs_status_word *sw, int myrank, int mycode, const char *what)
{
    if (mycode)
        return mycode; /* this process's own message stands */
    if (!sw->code)
        return SHEAF_FGFS_OK;
    if (sw->rank < 0)
        return fgfs_err(sw->code, "%s: a bound was exceeded while combining the processes' messages (code %d)", what,
                        sw->code);
    return fgfs_err(SHEAF_FGFS_EREMOTE, "%s: process %d failed (code %d); its message is on that process", what,
                    sw->rank, sw->code);
}
