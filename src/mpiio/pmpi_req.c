/* pmpi_req.c - libsheaf-mpiio-pmpi.so: the nonblocking, split collective,
 * shared-pointer and ordered calls (both int and _c forms from one macro,
 * pmpi_impl.h).
 *
 * Sheaf serves all of them on every taken-over file (a dache file through
 * DACHe's cache, the other modes through the realms and sheaf_independent=
 * serve), so no byte reaches the file behind a cache:
 *  - nonblocking calls do their I/O at the call (blocking inside) and hand
 *    back a generalized request that is already complete (MPI_Grequest_start
 *    + MPI_Grequest_complete); MPI_Wait/Test/Waitall return its status with
 *    the byte count. An error comes back at the call (the request is then
 *    MPI_REQUEST_NULL);
 *  - split collectives do the collective at _begin and keep the count for
 *    _end's status (one at a time per handle, as MPI says);
 *  - shared and ordered calls use sheaf's shared file pointer (shared.c). */
#include <stdlib.h>
#include "pmpi_impl.h"

typedef struct done_req {
    MPI_Count bytes;
} done_req;

static int query_fn(void *extra, MPI_Status *st)
{
    done_req *d = extra;
    MPI_Status_set_elements_x(st, MPI_BYTE, d->bytes);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}
static int free_fn(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}
static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete; /* always complete: nothing to cancel */
    return MPI_SUCCESS;
}

int pmpi_done_req(pmpi_entry *e, int rc, MPI_Datatype t, MPI_Count count, MPI_Request *req)
{
    if (!req)
        return MPI_ERR_REQUEST;
    *req = MPI_REQUEST_NULL;
    MPI_Status st;
    int mrc = pmpi_done(e, rc, t, count, &st);
    if (mrc != MPI_SUCCESS)
        return mrc;
    done_req *d = malloc(sizeof *d);
    if (!d)
        return MPI_ERR_NO_MEM;
    MPI_Get_elements_x(&st, MPI_BYTE, &d->bytes);
    mrc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, d, req);
    if (mrc != MPI_SUCCESS) {
        free(d);
        *req = MPI_REQUEST_NULL;
        return mrc;
    }
    return MPI_Grequest_complete(*req);
}

/* nonblocking: individual pointer, explicit offset, collective or not */
PMPI_RW_PTR(i, , , REQ)
PMPI_RW_PTR(i, _all, _all, REQ)
PMPI_RW_AT(i, _at, _at, REQ)
PMPI_RW_AT(i, _at_all, _at_all, REQ)

/* shared and ordered pointers: sheaf's own (the real handle's is never used) */
PMPI_RW_PTR(, _shared, _shared, ST)
PMPI_RW_PTR(i, _shared, _shared, REQ)
PMPI_RW_PTR(, _ordered, _ordered, ST)

/* split collectives: done at _begin, the status kept for _end */
PMPI_RW_PTR(, _all_begin, _all, BEGIN)
PMPI_RW_AT(, _at_all_begin, _at_all, BEGIN)
PMPI_RW_PTR(, _ordered_begin, _ordered, BEGIN)

#define SPLIT_END(NAME, CONST)                                                                                         \
    int MPI_File_##NAME##_end(MPI_File fh, CONST void *buf, MPI_Status *st)                                            \
    {                                                                                                                  \
        pmpi_entry *e = pmpi_route(fh, "MPI_File_" #NAME "_end");                                                      \
        if (!e)                                                                                                        \
            return PMPI_File_##NAME##_end(fh, buf, st);                                                                \
        return pmpi_ended(e, st);                                                                                      \
    }
#define SPLIT_END_RW(S) SPLIT_END(read##S, PMPI_NOCONST) SPLIT_END(write##S, const)
SPLIT_END_RW(_all)
SPLIT_END_RW(_at_all)
SPLIT_END_RW(_ordered)

int MPI_File_seek_shared(MPI_File fh, MPI_Offset off, int whence)
{
    pmpi_entry *e = pmpi_route(fh, "MPI_File_seek_shared");
    if (!e)
        return PMPI_File_seek_shared(fh, off, whence);
    return pmpi_to_mpi(e, sheaf_file_seek_shared(e->sf, off, whence));
}
int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *off)
{
    pmpi_entry *e = pmpi_route(fh, "MPI_File_get_position_shared");
    if (!e)
        return PMPI_File_get_position_shared(fh, off);
    return pmpi_to_mpi(e, sheaf_file_get_position_shared(e->sf, off));
}
