/* shared.c - the shared file pointer of a sheaf_file and the calls that use
 * it: read/write_shared (independent), read/write_ordered (collective),
 * seek_shared (collective), get_position_shared.
 *
 * The pointer is one int64 counter of etypes of the current view, hosted by
 * rank 0 in a window created at the collective open (doc/mpiio.md section 10)
 * - for a DACHe handle in shared memory, in DACHe's area of rank 0's slot
 * window instead (no window of its own):
 *   shm: every rank on one node: MPI_Win_allocate_shared, processor atomics
 *        on the counter (truly passive: rank 0 need not be inside MPI);
 *   rma: otherwise, or hint sheaf_shared_fp=rma: MPI_Win_allocate, one
 *        MPI_Win_lock_all epoch for the handle's life, MPI_Fetch_and_op +
 *        MPI_Win_flush (needs progress at rank 0, as DACHe's rma transport).
 * A shared access claims its etypes with one fetch-and-add and then is an
 * explicit-offset access (sheaf_file_read_at/write_at: through DACHe on a
 * dache handle); an ordered access is an exclusive scan of the sizes, one
 * fetch-and-add of the total by rank 0, a broadcast, and the explicit-offset
 * collective. Bad input is refused before the pointer moves. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "mpiio_impl.h"

static int mpi_fail(sheaf_file fh, const char *what, int mrc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mrc, s, &len);
    return mio_set_err(fh, SHEAF_MPIIO_EMPI, "%s: shared file pointer: %s failed: %s", fh->path, what, s);
}

/* every rank on one node (the same answer everywhere: an allmin over the
 * collective layer, one MPI_Allreduce; a rank whose split failed says no) */
static int node_local(MPI_Comm comm, int nprocs)
{
    MPI_Comm node;
    int n = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    int64_t all = n == nprocs;
    sheaf_comm_mpi_ref_t ref;
    if (sheaf_comm_allmin(sheaf_comm_mpi_ref(&ref, comm), &all, 1))
        return 0;
    return all != 0;
}

/* Only a handle that can use it gets the window (its creation is a few
 * collectives on every open): a dache handle (the interposition library sends
 * every shared/ordered call of a dache file here) or one opened with the
 * hint sheaf_shared_fp. One agreement (sheaf_comm_agree over the caller's
 * communicator: one MPI_Allreduce) on every rank's success, whether any rank
 * wants it and whether any forces rma. */
int mio_shared_create(sheaf_file fh, MPI_Comm comm, MPI_Info info, int rc)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int force_rma = 0, want = fh && fh->cache_mode == MIO_CACHE_DACHE;
    if (!rc && mio_hint_get(info, "sheaf_shared_fp", v, sizeof v)) {
        want = 1;
        if (strcmp(v, "rma") == 0)
            force_rma = 1;
        else if (strcmp(v, "auto") != 0)
            rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: hint sheaf_shared_fp: invalid value '%s' (auto, rma)", fh->path,
                             v);
    }
    int64_t mx[2] = {-(int64_t)force_rma, -(int64_t)want}; /* maxima */
    sheaf_comm_mpi_ref_t ref;
    int arc = mio_agree_in(sheaf_comm_mpi_ref(&ref, comm), fh, rc, mx, 2);
    if (arc || !mx[1])
        return rc ? rc : arc;
    int rma = mx[0] != 0;
    /* DACHe in shared memory has a word every rank reaches (rank 0's slot
   * window, zeroed at its creation): no window of its own */
    int64_t *w = !rma && fh->have_cache && fh->cache.ops->shared_word ? fh->cache.ops->shared_word(&fh->cache) : NULL;
    if (w) {
        fh->sh_shm = fh->sh_have = 1;
        fh->sh_ptr = w;
        return 0;
    }
    fh->sh_shm = !rma && node_local(fh->comm, fh->nprocs);
    MPI_Aint sz = fh->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0;
    void *base = NULL;
    int mrc = fh->sh_shm ? MPI_Win_allocate_shared(sz, sizeof(int64_t), MPI_INFO_NULL, fh->comm, &base, &fh->sh_win)
                         : MPI_Win_allocate(sz, sizeof(int64_t), MPI_INFO_NULL, fh->comm, &base, &fh->sh_win);
    if (mrc != MPI_SUCCESS) {
        fh->sh_win = MPI_WIN_NULL;
        return mpi_fail(fh, "creating the window", mrc);
    }
    if (fh->sh_shm) {
        MPI_Aint qsz;
        int du;
        mrc = MPI_Win_shared_query(fh->sh_win, 0, &qsz, &du, &fh->sh_ptr);
        if (mrc == MPI_SUCCESS && fh->rank == 0)
            __atomic_store_n(fh->sh_ptr, 0, __ATOMIC_SEQ_CST);
    } else {
        fh->sh_ptr = base;
        if (fh->rank == 0)
            *fh->sh_ptr = 0;
        mrc = MPI_Win_lock_all(MPI_MODE_NOCHECK, fh->sh_win);
        fh->sh_locked = mrc == MPI_SUCCESS;
    }
    MPI_Barrier(fh->comm);
    fh->sh_have = mrc == MPI_SUCCESS;
    return mrc == MPI_SUCCESS ? 0 : mpi_fail(fh, "setting the window up", mrc);
}

void mio_shared_free(sheaf_file fh)
{
    fh->sh_have = 0;
    fh->sh_ptr = NULL;
    if (fh->sh_win == MPI_WIN_NULL)
        return;
    if (fh->sh_locked)
        MPI_Win_unlock_all(fh->sh_win);
    MPI_Win_free(&fh->sh_win);
    fh->sh_win = MPI_WIN_NULL;
    fh->sh_ptr = NULL;
}

/* old value into *old, then counter += add (add 0: a plain atomic read) */
static int sh_fetch_add(sheaf_file fh, int64_t add, int64_t *old)
{
    if (!fh->sh_have)
        return mio_set_err(
            fh, SHEAF_MPIIO_EMPI,
            "%s: no shared file pointer (open with sheaf_cache=dache or the hint sheaf_shared_fp=auto|rma)", fh->path);
    if (fh->sh_shm) {
        *old = __atomic_fetch_add(fh->sh_ptr, add, __ATOMIC_SEQ_CST);
        return 0;
    }
    int mrc = MPI_Fetch_and_op(&add, old, MPI_INT64_T, 0, 0, add ? MPI_SUM : MPI_NO_OP, fh->sh_win);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Win_flush(0, fh->sh_win);
    return mrc == MPI_SUCCESS ? 0 : mpi_fail(fh, "MPI_Fetch_and_op", mrc);
}

/* rank 0 only; callers make it collective (an agreement after it) */
static int sh_store(sheaf_file fh, int64_t val)
{
    if (!fh->sh_have)
        return mio_set_err(
            fh, SHEAF_MPIIO_EMPI,
            "%s: no shared file pointer (open with sheaf_cache=dache or the hint sheaf_shared_fp=auto|rma)", fh->path);
    if (fh->sh_shm) {
        __atomic_store_n(fh->sh_ptr, val, __ATOMIC_SEQ_CST);
        return 0;
    }
    int64_t old;
    int mrc = MPI_Fetch_and_op(&val, &old, MPI_INT64_T, 0, 0, MPI_REPLACE, fh->sh_win);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Win_flush(0, fh->sh_win);
    return mrc == MPI_SUCCESS ? 0 : mpi_fail(fh, "MPI_Fetch_and_op (store)", mrc);
}

int mio_shared_reset(sheaf_file fh)
{
    if (!fh->sh_have)
        return 0; /* the same on every rank: decided together at open */
    int rc = fh->rank == 0 ? sh_store(fh, 0) : 0;
    return mio_agree(fh, rc);
}

/* the largest pointer (in etypes) whose byte offset still fits, with room for a request */
static int64_t max_position(sheaf_file fh) { return (INT64_MAX / 4 - fh->disp) / fh->etype_size; }

/* checks before the pointer moves; *n = etypes the request covers */
static int request_etypes(sheaf_file fh, int count, MPI_Datatype t, int is_write, int64_t *n)
{
    *n = 0;
    int size = 0;
    if (count < 0)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: negative count %d", fh->path, count);
    if (t == MPI_DATATYPE_NULL || MPI_Type_size(t, &size) != MPI_SUCCESS || size < 0)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: null or invalid datatype", fh->path);
    int64_t bytes = (int64_t)size * count;
    if (bytes % fh->etype_size)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: %lld bytes are not a whole number of etypes (%lld bytes)",
                           fh->path, (long long)bytes, (long long)fh->etype_size);
    if (is_write && (fh->amode & MPI_MODE_RDONLY))
        return mio_set_err(fh, SHEAF_MPIIO_EMODE, "%s: write on a read-only handle", fh->path);
    if (!is_write && (fh->amode & MPI_MODE_WRONLY))
        return mio_set_err(fh, SHEAF_MPIIO_EMODE, "%s: read on a write-only handle", fh->path);
    *n = bytes / fh->etype_size;
    return 0;
}

static int shared_io(sheaf_file fh, void *buf, int count, MPI_Datatype t, int is_write)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int64_t n, at;
    int rc = request_etypes(fh, count, t, is_write, &n);
    if (!rc && fh->cache_mode == MIO_CACHE_PFR && fh->indep_policy == MIO_INDEP_REFUSE)
        rc = mio_set_err(fh, SHEAF_MPIIO_EMODE,
                         "%s: shared-pointer (independent) I/O on a Persistent File Realms "
                         "handle (hint sheaf_independent=serve or sync allows it)",
                         fh->path);
    if (!rc)
        rc = sh_fetch_add(fh, n, &at);
    if (!rc && at > max_position(fh) - n)
        rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: shared file pointer %lld + %lld etypes beyond the largest offset",
                         fh->path, (long long)at, (long long)n);
    if (rc)
        return rc;
    return is_write ? sheaf_file_write_at(fh, at, buf, count, t) : sheaf_file_read_at(fh, at, buf, count, t);
}

static int ordered_io(sheaf_file fh, void *buf, int count, MPI_Datatype t, int is_write)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int64_t n = 0, pre = 0, total = 0, base = 0;
    int rc = mio_agree(fh, request_etypes(fh, count, t, is_write, &n));
    if (rc)
        return rc;
    MPI_Exscan(&n, &pre, 1, MPI_INT64_T, MPI_SUM, fh->comm);
    if (fh->rank == 0)
        pre = 0;
    MPI_Allreduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, fh->comm);
    if (fh->rank == 0) {
        rc = sh_fetch_add(fh, total, &base);
        if (!rc && base > max_position(fh) - total)
            rc = mio_set_err(fh, SHEAF_MPIIO_EARG,
                             "%s: shared file pointer %lld + %lld etypes beyond the largest offset", fh->path,
                             (long long)base, (long long)total);
    }
    rc = mio_agree(fh, rc);
    if (rc)
        return rc;
    MPI_Bcast(&base, 1, MPI_INT64_T, 0, fh->comm);
    return is_write ? sheaf_file_write_at_all(fh, base + pre, buf, count, t)
                    : sheaf_file_read_at_all(fh, base + pre, buf, count, t);
}

int sheaf_file_read_shared(sheaf_file fh, void *buf, int count, MPI_Datatype t)
{
    return shared_io(fh, buf, count, t, 0);
}
int sheaf_file_write_shared(sheaf_file fh, const void *buf, int count, MPI_Datatype t)
{
    return shared_io(fh, (void *)buf, count, t, 1);
}
int sheaf_file_read_ordered(sheaf_file fh, void *buf, int count, MPI_Datatype t)
{
    return ordered_io(fh, buf, count, t, 0);
}
int sheaf_file_write_ordered(sheaf_file fh, const void *buf, int count, MPI_Datatype t)
{
    return ordered_io(fh, (void *)buf, count, t, 1);
}

int sheaf_file_get_position_shared(sheaf_file fh, MPI_Offset *off)
{
    if (!fh || !off)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int64_t v = 0;
    int rc = sh_fetch_add(fh, 0, &v);
    if (!rc)
        *off = v;
    return rc;
}

/* the end of the file in etypes of the view (every rank's knowledge) */
static int end_etypes(sheaf_file fh, int64_t *end)
{
    int64_t keep = fh->pos, mine = 0;
    int rc = sheaf_file_seek(fh, 0, MPI_SEEK_END);
    if (!rc)
        mine = fh->pos;
    fh->pos = keep;
    MPI_Allreduce(&mine, end, 1, MPI_INT64_T, MPI_MAX, fh->comm);
    return rc;
}

int sheaf_file_seek_shared(sheaf_file fh, MPI_Offset off, int whence)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int64_t mine[2] = {off, whence}, root[2] = {off, whence}, end = 0, cur = 0;
    MPI_Bcast(root, 2, MPI_INT64_T, 0, fh->comm);
    int rc = 0;
    if (root[0] != mine[0] || root[1] != mine[1])
        rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: seek_shared: offset or whence differ from rank 0's", fh->path);
    else if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: seek_shared: invalid whence %d", fh->path, whence);
    rc = mio_agree(fh, rc); /* also: every rank's earlier shared accesses are complete */
    if (rc)
        return rc;
    if (whence == MPI_SEEK_END)
        rc = mio_agree(fh, end_etypes(fh, &end));
    if (rc)
        return rc;
    if (fh->rank == 0) {
        if (whence == MPI_SEEK_CUR)
            rc = sh_fetch_add(fh, 0, &cur);
        int64_t base = whence == MPI_SEEK_SET ? 0 : whence == MPI_SEEK_CUR ? cur : end;
        if (!rc && (off < -base || off > max_position(fh) - base))
            rc = mio_set_err(fh, SHEAF_MPIIO_EARG,
                             "%s: seek_shared to %lld%+lld etypes: negative or beyond the largest "
                             "offset",
                             fh->path, (long long)base, (long long)off);
        if (!rc)
            rc = sh_store(fh, base + off);
    }
    return mio_agree(fh, rc);
}
