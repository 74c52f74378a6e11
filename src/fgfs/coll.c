/* coll.c - helpers over the collective layer (sheaf_comm.h): all-reduce,
 * and the rule that turns a merged status word into each process's return
 * value (its own message, or EREMOTE naming the failing rank). */
#include "fgfs.h"
#include <stdlib.h>

/* sheaf_comm_allreduce, its failure recorded as FGFS's message */
int fgfs_allreduce(sheaf_fgfs_comm *c, const void *in, size_t len, const sheaf_fgfs_op *op, void **out, size_t *outlen)
{
    int rc = sheaf_comm_allreduce(c, in, len, op, out, outlen);
    return rc ? fgfs_err(SHEAF_FGFS_ECOMM, "collective layer: %s", sheaf_comm_last_error()) : SHEAF_FGFS_OK;
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

/* FGFS's names for the layer's simulator (sheaf_fgfs.h) */
int sheaf_fgfs_sim_run(int nprocs, size_t stack_kib, int (*fn)(sheaf_fgfs_comm *, int, void *), void *arg,
                       sheaf_fgfs_sim_stats *stats)
{
    int rc = sheaf_comm_sim_run(nprocs, stack_kib, fn, arg, stats);
    if (rc < 0 && rc >= SHEAF_FGFS_EREMOTE && sheaf_comm_last_error()[0])
        fgfs_err(rc, "%s", sheaf_comm_last_error());
    return rc;
}
