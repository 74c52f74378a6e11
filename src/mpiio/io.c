/* io.c - reads and writes: explicit offset or individual pointer,
 * independent or collective. The user's buffer (any memory datatype) is
 * staged contiguously with MPI_Pack/MPI_Unpack unless it already is; the view
 * turns the request into file segments; collective calls go to the two-phase
 * engine (coll.c), independent ones straight to the backend. */
#include <stdlib.h>
#include <string.h>
#include "dache.h"

typedef struct req {
    char *data;    /* contiguous bytes */
    char *staging; /* allocated when the memory type is not contiguous */
    int64_t bytes;
    mio_seg *segs;
    size_t nseg;
    mio_seg one; /* segs points here for a contiguous view (nothing allocated) */
} req;

/* the memory type's size, lower bound and whether `count` of it are one
 * contiguous run of bytes in order. A predefined (named) type is, and its
 * handle is never freed: its size is kept in the handle (fh->tc_*), so the
 * common call (MPI_BYTE, MPI_INT, ...) makes no MPI call here. */
static int mem_type(sheaf_file fh, MPI_Datatype t, int count, int *size, MPI_Aint *lb, int *contig)
{
    *lb = 0;
    *contig = 1;
    if (t == fh->tc_type)
        return *size = fh->tc_size, 0;
    if (MPI_Type_size(t, size) != MPI_SUCCESS || *size < 0)
        return -1;
    int ni, na, nd, comb;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb == MPI_COMBINER_NAMED) {
        fh->tc_type = t;
        fh->tc_size = *size;
        return 0;
    }
    MPI_Aint tlb, text, elb, eext;
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_get_extent(t, &elb, &eext);
    *lb = tlb;
    if ((MPI_Aint)*size != text || (count > 1 && eext != text))
        return *contig = 0, 0;
    /* size == true extent also holds for a permutation of the bytes (HDF5's
   * memory types for chunked collective I/O are): in order only if the
   * flattened type's segments follow each other */
    mio_flat f;
    memset(&f, 0, sizeof f);
    char e[128];
    *contig = mio_flatten(t, &f, e, sizeof e) == 0;
    for (size_t i = 1; *contig && i < f.n; i++)
        *contig = f.seg[i].off == f.seg[i - 1].off + f.seg[i - 1].len;
    mio_flat_free(&f);
    return 0;
}

/* view bytes [vpos, vpos+n) in the file: one segment without allocating
 * when the filetype is one contiguous run (the default view) */
static int map_view(sheaf_file fh, int64_t vpos, int64_t n, req *r)
{
    const mio_flat *ft = &fh->ftype;
    if (ft->n == 1 && ft->seg[0].off == 0 && ft->seg[0].len == ft->extent) {
        r->one.off = fh->disp + vpos;
        r->one.len = n;
        r->segs = &r->one;
        r->nseg = 1;
        return 0;
    }
    return mio_view_segments(fh, vpos, n, &r->segs, &r->nseg);
}

/* validate, stage and map one request; on error the message is in fh->err */
static int prepare(sheaf_file fh, int64_t off_etypes, const void *buf, int count, MPI_Datatype t, int is_write, req *r)
{
    memset(r, 0, sizeof *r);
    if (count < 0)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: negative count %d", fh->path, count);
    if (t == MPI_DATATYPE_NULL)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: null datatype", fh->path);
    if (off_etypes < 0)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: negative offset %lld", fh->path, (long long)off_etypes);
    if (is_write && (fh->amode & MPI_MODE_RDONLY))
        return mio_set_err(fh, SHEAF_MPIIO_EMODE, "%s: write on a read-only handle", fh->path);
    if (!is_write && (fh->amode & MPI_MODE_WRONLY))
        return mio_set_err(fh, SHEAF_MPIIO_EMODE, "%s: read on a write-only handle", fh->path);
    int tsize, contig;
    MPI_Aint lb;
    if (mem_type(fh, t, count, &tsize, &lb, &contig))
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: invalid datatype", fh->path);
    r->bytes = (int64_t)tsize * count;
    if (r->bytes % fh->etype_size)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: %lld bytes are not a whole number of etypes (%lld bytes)",
                           fh->path, (long long)r->bytes, (long long)fh->etype_size);
    if (r->bytes == 0)
        return 0;
    if (!buf)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: null buffer", fh->path);
    if (contig) {
        r->data = (char *)buf + lb;
    } else {
        r->staging = malloc((size_t)r->bytes);
        if (!r->staging)
            return mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: out of memory (%lld bytes)", fh->path, (long long)r->bytes);
        r->data = r->staging;
        if (is_write) {
            int pos = 0;
            if (MPI_Pack(buf, count, t, r->staging, (int)r->bytes, &pos, MPI_COMM_SELF) != MPI_SUCCESS ||
                pos != r->bytes)
                return mio_set_err(fh, SHEAF_MPIIO_EMPI, "%s: packing the memory datatype failed", fh->path);
        }
    }
    return map_view(fh, off_etypes * fh->etype_size, r->bytes, r);
}

static int finish(sheaf_file fh, req *r, void *buf, int count, MPI_Datatype t, int is_write, int rc)
{
    if (!rc && !is_write && r->staging) {
        int pos = 0;
        if (MPI_Unpack(r->staging, (int)r->bytes, &pos, buf, count, t, MPI_COMM_SELF) != MPI_SUCCESS)
            rc = mio_set_err(fh, SHEAF_MPIIO_EMPI, "%s: unpacking into the memory datatype failed", fh->path);
    }
    free(r->staging);
    if (r->segs != &r->one)
        free(r->segs);
    return rc;
}

/* independent I/O on a PFR handle breaks the single-owner rule: refuse, or
 * write back and drop this rank's caches around the access (hint) */
static int indep_guard(sheaf_file fh, int before, int is_write)
{
    if (fh->cache_mode == MIO_CACHE_NONE)
        return 0;
    if (fh->cache_mode == MIO_CACHE_PFR && fh->indep_policy == MIO_INDEP_REFUSE)
        return mio_set_err(fh, SHEAF_MPIIO_EMODE,
                           "%s: independent I/O on a Persistent File Realms handle "
                           "(hint sheaf_independent=serve or sync allows it)",
                           fh->path);
    int rc = 0;
    if (before) {
        if (fh->have_cache) {
            rc = fh->cache.ops->flush(&fh->cache, &fh->be);
            fh->cache.ops->invalidate(&fh->cache);
        }
        if (!rc)
            rc = fh->be.ops->invalidate(&fh->be);
    } else if (is_write) {
        rc = fh->be.ops->sync(&fh->be);
    }
    return rc;
}

/* served: bytes of another rank's realm straight to the file. A read first
 * drops the backend's client copy of the range (NFS-like caches: the owner's
 * write-back is in the file, not in this rank's client cache); a write is
 * pushed to the file the same way and joins the hull of bytes written behind
 * the owners, whose cached copies are dropped at the next collective call or
 * sync (the agreement that call makes anyway) */
static int direct_io(sheaf_file fh, int is_write, char *p, int64_t len, int64_t off)
{
    int rc = 0;
    if (!is_write && fh->be.ops->drop_range)
        rc = fh->be.ops->drop_range(&fh->be, off, len);
    if (!rc)
        rc = is_write ? mio_fs_write(&fh->be, p, len, off) : mio_fs_read(&fh->be, p, len, off);
    if (!rc && is_write && fh->be.ops->drop_range)
        rc = fh->be.ops->drop_range(&fh->be, off, len);
    if (!rc && is_write) {
        if (off < fh->ext_lo)
            fh->ext_lo = off;
        if (off + len > fh->ext_hi)
            fh->ext_hi = off + len;
    }
    return rc;
}

/* sheaf_independent=serve (doc/mpiio.md section 4): no communication, so no
 * rank waits for another. Once the persistent realms are fixed, the pieces in
 * this rank's own realm go through its realm cache (the only rank that
 * caches them), written through when the handle writes through (serve
 * implies it: a collective write leaves no dirty bytes another rank's direct
 * read could miss); every other piece is direct_io. Before the first
 * collective call no rank caches anything: everything is direct. */
static int served_io(sheaf_file fh, int is_write, req *r)
{
    int own_ok = fh->have_cache && fh->realms_fixed && fh->my_agg >= 0 && fh->pfr.fr > 0;
    int rc = 0, cached = 0;
    int64_t p = 0;
    for (size_t i = 0; !rc && i < r->nseg; i++) {
        int64_t off = r->segs[i].off, len = r->segs[i].len;
        while (!rc && len > 0) {
            int64_t n = len;
            int own = 0;
            if (own_ok) {
                int64_t g = (off - fh->pfr.base) / fh->pfr.fr, end = fh->pfr.base + (g + 1) * fh->pfr.fr;
                if (end - off < n)
                    n = end - off;
                own = (int)(g % fh->naggs) == fh->my_agg;
            }
            if (own) {
                rc = is_write ? fh->cache.ops->write(&fh->cache, &fh->be, r->data + p, n, off)
                              : fh->cache.ops->read(&fh->cache, &fh->be, r->data + p, n, off);
                cached |= is_write;
                fh->stats.indep_cached_bytes += (uint64_t)n;
            } else {
                rc = direct_io(fh, is_write, r->data + p, n, off);
                fh->stats.indep_direct_bytes += (uint64_t)n;
            }
            off += n, len -= n, p += n;
        }
    }
    if (!rc && cached && fh->write_through) {
        rc = fh->cache.ops->flush(&fh->cache, &fh->be);
        if (!rc && fh->be.ops->drop_range)
            rc = fh->be.ops->sync(&fh->be);
    }
    if (!rc && is_write && r->nseg > 0) {
        int64_t e = r->segs[r->nseg - 1].off + r->segs[r->nseg - 1].len;
        if (e > fh->known_end)
            fh->known_end = e;
    }
    return rc;
}

static int indep_io(sheaf_file fh, int64_t off, void *buf, int count, MPI_Datatype t, int is_write)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    req r;
    int rc = prepare(fh, off, buf, count, t, is_write, &r);
    if (fh->cache_mode == MIO_CACHE_DACHE) {
        if (!rc)
            rc = mio_dache_io(fh, is_write, r.segs, r.nseg, r.data);
        return finish(fh, &r, buf, count, t, is_write, rc);
    }
    if (fh->indep_policy == MIO_INDEP_SERVE) {
        if (!rc && r.bytes > 0)
            rc = served_io(fh, is_write, &r);
        return finish(fh, &r, buf, count, t, is_write, rc);
    }
    if (!rc && r.bytes > 0)
        rc = indep_guard(fh, 1, is_write);
    int64_t p = 0;
    for (size_t i = 0; !rc && i < r.nseg; i++) {
        rc = is_write ? mio_fs_write(&fh->be, r.data + p, r.segs[i].len, r.segs[i].off)
                      : mio_fs_read(&fh->be, r.data + p, r.segs[i].len, r.segs[i].off);
        p += r.segs[i].len;
    }
    if (!rc && r.bytes > 0)
        rc = indep_guard(fh, 0, is_write);
    return finish(fh, &r, buf, count, t, is_write, rc);
}

/* DACHe: a collective call goes through the cache page by page like an
 * independent one (doc/mpiio.md: no two-phase under dache); bytes written
 * behind the layer drop every cached page first */
static int dache_coll(sheaf_file fh, int is_write, req *r, int rc)
{
    int any = (int)mio_allreduce(fh, fh->external_write, 1);
    fh->external_write = 0;
    if (any) {
        int r2 = fh->cache.ops->flush(&fh->cache, &fh->be);
        fh->cache.ops->invalidate(&fh->cache);
        if (!r2)
            r2 = fh->be.ops->invalidate(&fh->be);
        if (!rc)
            rc = r2;
    }
    if (!rc)
        rc = mio_dache_io(fh, is_write, r->segs, r->nseg, r->data);
    fh->stats.coll_calls++;
    return mio_agree(fh, rc);
}

static int coll_io(sheaf_file fh, int64_t off, void *buf, int count, MPI_Datatype t, int is_write)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    req r;
    int rc = prepare(fh, off, buf, count, t, is_write, &r);
    if (fh->cache_mode == MIO_CACHE_DACHE)
        rc = dache_coll(fh, is_write, &r, rc);
    else
        rc = mio_coll_io(fh, is_write, rc ? NULL : r.segs, rc ? 0 : r.nseg, r.data, rc);
    return finish(fh, &r, buf, count, t, is_write, rc);
}

static int64_t advance(sheaf_file fh, int count, MPI_Datatype t)
{
    int s = 0;
    if (t != MPI_DATATYPE_NULL)
        MPI_Type_size(t, &s);
    return count > 0 && s > 0 ? (int64_t)s * count / fh->etype_size : 0;
}

int sheaf_file_read_at(sheaf_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype t)
{
    return indep_io(fh, off, buf, count, t, 0);
}
int sheaf_file_write_at(sheaf_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype t)
{
    return indep_io(fh, off, (void *)buf, count, t, 1);
}
int sheaf_file_read_at_all(sheaf_file fh, MPI_Offset off, void *buf, int count, MPI_Datatype t)
{
    return coll_io(fh, off, buf, count, t, 0);
}
int sheaf_file_write_at_all(sheaf_file fh, MPI_Offset off, const void *buf, int count, MPI_Datatype t)
{
    return coll_io(fh, off, (void *)buf, count, t, 1);
}
int sheaf_file_read(sheaf_file fh, void *buf, int count, MPI_Datatype t)
{
    int rc = indep_io(fh, fh ? fh->pos : 0, buf, count, t, 0);
    if (!rc)
        fh->pos += advance(fh, count, t);
    return rc;
}
int sheaf_file_write(sheaf_file fh, const void *buf, int count, MPI_Datatype t)
{
    int rc = indep_io(fh, fh ? fh->pos : 0, (void *)buf, count, t, 1);
    if (!rc)
        fh->pos += advance(fh, count, t);
    return rc;
}
int sheaf_file_read_all(sheaf_file fh, void *buf, int count, MPI_Datatype t)
{
    int rc = coll_io(fh, fh ? fh->pos : 0, buf, count, t, 0);
    if (!rc)
        fh->pos += advance(fh, count, t);
    return rc;
}
int sheaf_file_write_all(sheaf_file fh, const void *buf, int count, MPI_Datatype t)
{
    int rc = coll_io(fh, fh ? fh->pos : 0, (void *)buf, count, t, 1);
    if (!rc)
        fh->pos += advance(fh, count, t);
    return rc;
}
