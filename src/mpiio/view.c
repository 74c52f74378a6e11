/* view.c - positions in the file view: the file segments of a range of view
 * bytes, the size, the individual file pointer (seek, position). Below
 * file.c (open, set_view), io.c and shared.c; calls only agree.c. */
#include <string.h>
#include "mpiio_impl.h"

int mio_view_segments(sheaf_file fh, int64_t vpos, int64_t n, mio_seg **segs, size_t *nseg)
{
    mio_flat out;
    memset(&out, 0, sizeof out);
    const mio_flat *ft = &fh->ftype;
    int64_t tile = vpos / ft->size, in = vpos % ft->size;
    size_t lo = 0, hi = ft->n;
    while (hi - lo > 1) { /* last segment starting at or before `in` data bytes */
        size_t mid = (lo + hi) / 2;
        if (fh->ft_pre[mid] <= in)
            lo = mid;
        else
            hi = mid;
    }
    size_t i = lo;
    int64_t skip = in - fh->ft_pre[i];
    while (n > 0) {
        int64_t len = ft->seg[i].len - skip;
        if (len > n)
            len = n;
        if (mio_flat_push(&out, fh->disp + tile * ft->extent + ft->seg[i].off + skip, len)) {
            mio_flat_free(&out);
            return mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: request of %lld bytes: more than %zu file segments",
                               fh->path, (long long)n, (size_t)MIO_FLAT_MAX_SEGS);
        }
        n -= len;
        skip = 0;
        if (++i == ft->n) {
            i = 0;
            tile++;
        }
    }
    *segs = out.seg;
    *nseg = out.n;
    return 0;
}

/* data bytes of the view that lie before file offset `off` */
static int64_t view_bytes_before(sheaf_file fh, int64_t off)
{
    const mio_flat *ft = &fh->ftype;
    if (off <= fh->disp)
        return 0;
    int64_t rel = off - fh->disp, tiles = rel / ft->extent, rem = rel % ft->extent, n = tiles * ft->size;
    for (size_t i = 0; i < ft->n && ft->seg[i].off < rem; i++)
        n += ft->seg[i].off + ft->seg[i].len <= rem ? ft->seg[i].len : rem - ft->seg[i].off;
    return n;
}

int sheaf_file_get_size(sheaf_file fh, MPI_Offset *size)
{
    if (!fh || !size)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int64_t s = 0;
    int rc = fh->be.ops->get_size(&fh->be, &s);
    if (rc)
        return rc;
    if (fh->known_end > s)
        s = fh->known_end;
    *size = s;
    return 0;
}

int sheaf_file_seek(sheaf_file fh, MPI_Offset off, int whence)
{
    if (!fh)
        return SHEAF_MPIIO_EARG;
    fh->err[0] = 0;
    int64_t base = 0;
    if (whence == MPI_SEEK_CUR)
        base = fh->pos;
    else if (whence == MPI_SEEK_END) {
        MPI_Offset sz;
        int rc = sheaf_file_get_size(fh, &sz);
        if (rc)
            return rc;
        base = view_bytes_before(fh, sz) / fh->etype_size;
    } else if (whence != MPI_SEEK_SET) {
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: seek: invalid whence %d", fh->path, whence);
    }
    if (base + off < 0)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: seek to a negative position", fh->path);
    fh->pos = base + off;
    return 0;
}

int sheaf_file_get_position(sheaf_file fh, MPI_Offset *off)
{
    if (!fh || !off)
        return SHEAF_MPIIO_EARG;
    *off = fh->pos;
    return 0;
}
