/* agree.c - the bottom of libsheaf_mpiio's call graph: the handle's error
 * message and its collectives (every agreement, the small reductions).
 *
 * Every agreement goes through sheaf_comm_agree (include/sheaf_comm.h) on
 * the handle's communicator `fh->coll`, chosen at open: sheaf_comm_mpi_ref
 * of the handle's MPI communicator (one MPI_Allreduce per agreement when all
 * went well, no allocation), or DACHe's own collectives in shared memory
 * once its windows exist (dache_coll.c: no MPI call). A failing rank keeps
 * its code and message; every other rank gets SHEAF_MPIIO_EREMOTE with a
 * message naming the lowest failing rank and quoting its message. Calls
 * nothing else of the folder. */
#include <stdarg.h>
#include <stdio.h>
#include "mpiio_impl.h"

int mio_set_err(sheaf_file fh, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fh->err, sizeof fh->err, fmt, ap);
    va_end(ap);
    return code;
}

sheaf_comm *mio_coll_mpi(sheaf_file fh)
{
    fh->coll = sheaf_comm_mpi_ref(&fh->coll_mpi, fh->comm);
    return fh->coll;
}

int mio_agree_in(sheaf_comm *c, sheaf_file fh, int rc, int64_t *vals, int n)
{
    sheaf_comm_agreement a;
    const char *msg = fh && fh->err[0] ? fh->err : rc == SHEAF_MPIIO_ENOMEM ? "out of memory" : "";
    int all = sheaf_comm_agree(c, rc, rc ? msg : NULL, vals, n, &a);
    if (!all)
        return 0;
    if (rc)
        return rc;
    const char *path = fh && fh->path ? fh->path : "sheaf_mpiio";
    if (a.rank < 0) {
        if (fh)
            mio_set_err(fh, SHEAF_MPIIO_EMPI, "%s: the agreement of a collective call failed: %s", path, a.msg);
        return SHEAF_MPIIO_EMPI;
    }
    if (fh)
        mio_set_err(fh, SHEAF_MPIIO_EREMOTE, "%s: rank %d failed this collective call (code %d): %s", path, a.rank,
                    a.code, a.msg);
    return SHEAF_MPIIO_EREMOTE;
}

int mio_agree_vals(sheaf_file fh, int rc, int64_t *vals, int n) { return mio_agree_in(fh->coll, fh, rc, vals, n); }

int mio_agree(sheaf_file fh, int rc) { return mio_agree_in(fh->coll, fh, rc, NULL, 0); }

int64_t mio_allreduce(sheaf_file fh, int64_t v, int is_max)
{
    int64_t x = is_max ? -v : v; /* a maximum is the minimum of the negated values */
    if (sheaf_comm_allmin(fh->coll, &x, 1))
        return v;
    return is_max ? -x : x;
}
