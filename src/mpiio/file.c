/* file.c - sheaf_file open/close, the file view, sync, sizes, the error
 * messages of the API. On top of the folder: its helpers (errors and
 * agreements: agree.c) sit below it and never call back here. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dache.h"

static _Thread_local char open_err[512];

const char *sheaf_file_errmsg(sheaf_file fh) { return fh ? fh->err : "sheaf_mpiio: null file handle"; }
const char *sheaf_mpiio_open_errmsg(void) { return open_err; }

static void free_handle(sheaf_file fh)
{
    if (!fh)
        return;
    if (fh->have_cache)
        fh->cache.ops->destroy(&fh->cache);
    mio_shared_free(fh);
    if (fh->be.ops)
        fh->be.ops->close(&fh->be);
    if (fh->be.audit_fd >= 0)
        close(fh->be.audit_fd);
    mio_flat_free(&fh->ftype);
    free(fh->ft_pre);
    free(fh->aggs);
    if (fh->comm != MPI_COMM_NULL)
        MPI_Comm_free(&fh->comm);
    free(fh->path);
    free(fh);
}

static int os_flags(int amode, int *flags)
{
    int acc = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0);
    if (acc != 1)
        return -1;
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return -1;
    /* write-only handles are opened read-write: data sieving reads inside the realm */
    *flags = (amode & MPI_MODE_RDONLY) ? O_RDONLY : O_RDWR;
    return 0;
}

static int set_default_view(sheaf_file fh);

static int open_backend(sheaf_file fh, int flags, int nc, int64_t fpage)
{
    fh->be.err = fh->err;
    fh->be.errlen = sizeof fh->err;
    fh->be.stats = &fh->stats;
    return nc ? mio_backend_noncoherent_open(&fh->be, fh->path, flags, fpage)
              : mio_backend_posix_open(&fh->be, fh->path, flags);
}

/* The open's agreement (over the caller's communicator: fh and its
 * duplicate may be missing): every rank's state so far and every value that
 * must be the same everywhere (mio_hints_pack: the hints, the access mode,
 * DACHe's hints) as minima and maxima - one MPI_Allreduce, so a mismatch
 * fails on every rank with a message naming the hint (never a hang in a
 * later collective). Then, with the same values everywhere: the aggregators
 * (collective for cb_nodes unset) and DACHe (created collectively, failing
 * everywhere or nowhere). rc is this rank's state so far, returned updated. */
static int open_agreed(sheaf_file fh, MPI_Comm comm, MPI_Info info, int cb_nodes, int nc, int64_t fpage, int rc)
{
    mio_dache_cfg cfg;
    int want = fh && fh->cache_mode == MIO_CACHE_DACHE;
    if (!rc && want)
        rc = mio_dache_hints(info, &cfg, fh->err, sizeof fh->err);
    int64_t v[62];
    int n = mio_hints_pack(fh, cb_nodes, nc, fpage, want ? &cfg : NULL, v);
    sheaf_comm_mpi_ref_t ref;
    int hrc = mio_agree_in(sheaf_comm_mpi_ref(&ref, comm), fh, rc, v, n);
    if (hrc)
        return rc ? rc : hrc;
    rc = mio_hints_check(fh, v);
    if (rc)
        return rc; /* the same on every rank */
    rc = mio_pick_aggregators(fh->comm, cb_nodes, &fh->aggs, &fh->naggs);
    if (rc)
        rc = mio_set_err(fh, rc, "%s: out of memory", fh->path);
    fh->my_agg = -1;
    for (int i = 0; fh->aggs && i < fh->naggs; i++)
        if (fh->aggs[i] == fh->rank)
            fh->my_agg = i;
    return want ? mio_dache_create(fh, &cfg, rc) : rc; /* else agreed at the end of the open */
}

int sheaf_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, sheaf_file *out)
{
    open_err[0] = 0;
    if (!out || comm == MPI_COMM_NULL || !path || !*path) {
        snprintf(open_err, sizeof open_err, "sheaf_file_open: null communicator, path or handle pointer");
        return SHEAF_MPIIO_EARG;
    }
    *out = NULL;
    sheaf_file fh = calloc(1, sizeof *fh);
    int rc = 0, flags = 0, cb_nodes = 0, nc = 0;
    int64_t fpage = 4096;
    char audit[MPI_MAX_INFO_VAL + 1];
    if (fh) {
        fh->comm = MPI_COMM_NULL;
        fh->sh_win = MPI_WIN_NULL;
        fh->tc_type = MPI_DATATYPE_NULL;
        fh->ext_lo = INT64_MAX;
        fh->be.fd = -1;
        fh->be.audit_fd = -1;
        fh->path = strdup(path);
    }
    if (!fh || !fh->path)
        rc = SHEAF_MPIIO_ENOMEM;
    /* collective: every rank duplicates, even one that has already failed */
    MPI_Comm dup = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS && !rc)
        rc = SHEAF_MPIIO_EMPI;
    if (fh) {
        fh->comm = dup;
        mio_coll_mpi(fh);
    } else if (dup != MPI_COMM_NULL)
        MPI_Comm_free(&dup);
    if (!rc) {
        MPI_Comm_rank(fh->comm, &fh->rank);
        MPI_Comm_size(fh->comm, &fh->nprocs);
        fh->amode = amode;
        rc = mio_parse_hints(fh, info, &cb_nodes, &nc, &fpage, audit, sizeof audit, fh->err, sizeof fh->err);
    }
    if (!rc && os_flags(amode, &flags))
        rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: invalid access mode 0x%x", path, (unsigned)amode);
    /* every rank takes part in every collective below, failed or not */
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    /* rank 0 creates, then the others open */
    if (rank == 0 && !rc) {
        int f0 = flags | (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
        rc = open_backend(fh, f0, nc, fpage);
    }
    int rc0 = rc;
    MPI_Bcast(&rc0, 1, MPI_INT, 0, comm);
    if (rank != 0 && !rc && !rc0)
        rc = open_backend(fh, flags, nc, fpage);
    if (!rc && audit[0]) {
        char p[MPI_MAX_INFO_VAL + 32];
        snprintf(p, sizeof p, "%s.%d", audit, fh->rank);
        fh->be.audit_fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fh->be.audit_fd < 0)
            rc = mio_set_err(fh, SHEAF_MPIIO_EIO, "%s: cannot open the audit log %s", path, p);
    }
    if (!rc)
        rc = set_default_view(fh);
    rc = open_agreed(fh, comm, info, cb_nodes, nc, fpage, rc);
    rc = mio_shared_create(fh, comm, info, rc); /* after DACHe: may use its shared memory */
    /* over the caller's communicator: fh (and its duplicate) may be missing */
    sheaf_comm_mpi_ref_t ref;
    int all = mio_agree_in(sheaf_comm_mpi_ref(&ref, comm), fh, rc, NULL, 0);
    if (all) {
        if (rc)
            snprintf(open_err, sizeof open_err, "%s", fh && fh->err[0] ? fh->err : "sheaf_file_open: out of memory");
        else
            snprintf(open_err, sizeof open_err, "%s", fh->err);
        free_handle(fh);
        return all;
    }
    fh->delete_on_close = (amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
    fh->stats.naggs = fh->naggs;
    fh->stats.is_aggregator = fh->my_agg >= 0;
    *out = fh;
    return 0;
}

static int flush_all(sheaf_file fh)
{
    int rc = 0;
    if (fh->have_cache)
        rc = fh->cache.ops->flush(&fh->cache, &fh->be);
    int r2 = fh->be.ops->sync(&fh->be);
    return rc ? rc : r2;
}

/* collective: every byte written reaches the file, the same result everywhere */
static int sync_agreed(sheaf_file fh)
{
    if (fh->have_cache && fh->cache.ops->sync)
        return fh->cache.ops->sync(&fh->cache, &fh->be);
    /* bytes written behind the realms' owners (served independent writes)
     * are dropped from their caches here: sync-barrier-sync makes them
     * visible to every rank's later accesses */
    return mio_agree_external(fh, flush_all(fh));
}

int sheaf_file_sync(sheaf_file fh)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    return sync_agreed(fh);
}

int sheaf_file_close(sheaf_file *pfh)
{
    if (!pfh || !*pfh)
        return SHEAF_MPIIO_EARG;
    sheaf_file fh = *pfh;
    fh->err[0] = 0;
    int rc = sync_agreed(fh);
    if (fh->delete_on_close) {
        /* every rank has written back (the agreement above); the file is gone
     * before close returns anywhere */
        if (fh->rank == 0)
            unlink(fh->path);
        MPI_Barrier(fh->comm);
    }
    if (rc) { /* the message lives in the handle, which goes away */
        snprintf(open_err, sizeof open_err, "%s", fh->err);
    }
    free_handle(fh);
    *pfh = NULL;
    return rc;
}

/* ---- the view ---- */
static int install_view(sheaf_file fh, int64_t disp, int64_t esize, mio_flat *ft)
{
    int64_t *pre = malloc(sizeof(int64_t) * (ft->n + 1));
    if (!pre)
        return SHEAF_MPIIO_ENOMEM;
    int64_t acc = 0;
    for (size_t i = 0; i < ft->n; i++) {
        pre[i] = acc;
        acc += ft->seg[i].len;
    }
    pre[ft->n] = acc;
    mio_flat_free(&fh->ftype);
    free(fh->ft_pre);
    fh->ftype = *ft;
    fh->ft_pre = pre;
    fh->disp = disp;
    fh->etype_size = esize;
    fh->pos = 0;
    return 0;
}

static int set_default_view(sheaf_file fh)
{
    mio_flat ft;
    memset(&ft, 0, sizeof ft);
    ft.size = ft.extent = 1;
    if (mio_flat_push(&ft, 0, 1))
        return SHEAF_MPIIO_ENOMEM;
    int rc = install_view(fh, 0, 1, &ft);
    if (rc)
        mio_flat_free(&ft);
    return rc;
}

static int check_filetype(sheaf_file fh, const mio_flat *ft, int64_t esize)
{
    if (ft->size <= 0 || ft->extent <= 0)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: set_view: filetype of size %lld and extent %lld", fh->path,
                           (long long)ft->size, (long long)ft->extent);
    if (ft->size % esize)
        return mio_set_err(fh, SHEAF_MPIIO_EARG,
                           "%s: set_view: filetype size %lld is not a multiple of the etype size %lld", fh->path,
                           (long long)ft->size, (long long)esize);
    int64_t end = 0;
    for (size_t i = 0; i < ft->n; i++) {
        if (ft->seg[i].off < end || ft->seg[i].off < 0)
            return mio_set_err(fh, SHEAF_MPIIO_EARG,
                               "%s: set_view: filetype displacements are negative or not "
                               "monotonically increasing (segment %zu at %lld)",
                               fh->path, i, (long long)ft->seg[i].off);
        end = ft->seg[i].off + ft->seg[i].len;
    }
    /* a tile spans [lb, lb + extent): HDF5's hindexed filetypes start past 0 */
    if (end > ft->lb + ft->extent)
        return mio_set_err(fh, SHEAF_MPIIO_EARG,
                           "%s: set_view: filetype data (to byte %lld) beyond its upper bound "
                           "%lld: tiles would overlap",
                           fh->path, (long long)end, (long long)(ft->lb + ft->extent));
    return 0;
}

int sheaf_file_set_view(sheaf_file fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int rc = 0;
    mio_flat ft;
    memset(&ft, 0, sizeof ft);
    int esize = 0;
    if (etype == MPI_DATATYPE_NULL || filetype == MPI_DATATYPE_NULL)
        rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: set_view: null datatype", fh->path);
    else if (disp < 0)
        rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: set_view: negative displacement %lld", fh->path, (long long)disp);
    if (!rc) {
        MPI_Type_size(etype, &esize);
        if (esize <= 0)
            rc = mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: set_view: etype of size %d", fh->path, esize);
    }
    if (!rc) {
        char e[256];
        rc = mio_flatten(filetype, &ft, e, sizeof e);
        if (rc)
            mio_set_err(fh, rc, "%s: set_view: filetype: %s", fh->path, e);
    }
    if (!rc)
        rc = check_filetype(fh, &ft, esize);
    /* collective: a view is changed everywhere or nowhere */
    rc = mio_agree(fh, rc);
    if (!rc)
        rc = mio_agree(fh, install_view(fh, disp, esize, &ft));
    if (rc)
        mio_flat_free(&ft);
    else
        rc = mio_shared_reset(fh); /* MPI: set_view resets the shared pointer too */
    return rc;
}

int sheaf_file_set_size(sheaf_file fh, MPI_Offset size)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int rc = size < 0 ? mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: set_size: negative size", fh->path) : 0;
    if (!rc && fh->amode & MPI_MODE_RDONLY)
        rc = mio_set_err(fh, SHEAF_MPIIO_EMODE, "%s: set_size on a read-only handle", fh->path);
    rc = mio_agree(fh, rc);
    if (rc)
        return rc;
    rc = flush_all(fh);
    if (fh->have_cache)
        fh->cache.ops->invalidate(&fh->cache);
    rc = mio_agree(fh, rc);
    if (rc)
        return rc;
    if (fh->rank == 0)
        rc = fh->be.ops->set_size(&fh->be, size);
    rc = mio_agree(fh, rc);
    if (!rc)
        rc = mio_agree(fh, fh->be.ops->invalidate(&fh->be));
    if (!rc)
        fh->known_end = size;
    return rc;
}

int sheaf_file_preallocate(sheaf_file fh, MPI_Offset size)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int rc = size < 0 ? mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: preallocate: negative size", fh->path) : 0;
    if (!rc && fh->amode & MPI_MODE_RDONLY)
        rc = mio_set_err(fh, SHEAF_MPIIO_EMODE, "%s: preallocate on a read-only handle", fh->path);
    rc = mio_agree(fh, rc);
    if (rc)
        return rc;
    if (fh->rank == 0)
        rc = fh->be.ops->preallocate(&fh->be, size);
    return mio_agree(fh, rc);
}

int sheaf_file_note_external_write(sheaf_file fh)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->external_write = 1;
    fh->ext_lo = 0, fh->ext_hi = INT64_MAX;
    return 0;
}

int sheaf_file_stats(sheaf_file fh, sheaf_mpiio_stats *st)
{
    if (!fh || !st)
        return SHEAF_MPIIO_EARG;
    *st = fh->stats;
    return 0;
}
