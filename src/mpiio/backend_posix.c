/* backend_posix.c - the I/O backend interface's plain POSIX implementation
 * (pread/pwrite/fsync/ftruncate on one descriptor per rank), and the counted,
 * audited entry points every file-system access of the layer goes through. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "mpiio_impl.h"

static int fail(mio_backend *b, const char *what, int64_t off, int e)
{
    snprintf(b->err, b->errlen, "%s: %s at offset %lld: %s", b->path, what, (long long)off, strerror(e));
    return SHEAF_MPIIO_EIO;
}

static int px_pread(mio_backend *b, void *buf, int64_t len, int64_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = pread(b->fd, p, (size_t)len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fail(b, "pread", off, errno);
        if (r == 0) {
            memset(p, 0, (size_t)len);
            break;
        } /* past EOF: zeros */
        p += r;
        off += r;
        len -= r;
    }
    return 0;
}

static int px_pwrite(mio_backend *b, const void *buf, int64_t len, int64_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t r = pwrite(b->fd, p, (size_t)len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return fail(b, "pwrite", off, r < 0 ? errno : EIO);
        p += r;
        off += r;
        len -= r;
    }
    return 0;
}

static int px_pwritev(mio_backend *b, const struct iovec *iov, int n, int64_t off)
{
    struct iovec v[MIO_IOV_MAX];
    if (n > MIO_IOV_MAX)
        return fail(b, "pwritev (too many pieces)", off, EINVAL);
    memcpy(v, iov, sizeof(struct iovec) * (size_t)n);
    struct iovec *p = v;
    while (n > 0) {
        ssize_t r = pwritev(b->fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return fail(b, "pwritev", off, r < 0 ? errno : EIO);
        off += r;
        while (n > 0 && (size_t)r >= p->iov_len) {
            r -= (ssize_t)p->iov_len;
            p++;
            n--;
        }
        if (n > 0) {
            p->iov_base = (char *)p->iov_base + r;
            p->iov_len -= (size_t)r;
        }
    }
    return 0;
}

static int px_sync(mio_backend *b)
{
    if (fsync(b->fd) != 0 && errno != EINVAL)
        return fail(b, "fsync", 0, errno);
    return 0;
}
static int px_invalidate(mio_backend *b)
{
    (void)b;
    return 0;
} /* the Linux page cache is coherent */
static int px_get_size(mio_backend *b, int64_t *size)
{
    struct stat st;
    if (fstat(b->fd, &st) != 0)
        return fail(b, "fstat", 0, errno);
    *size = st.st_size;
    return 0;
}
static int px_set_size(mio_backend *b, int64_t size)
{
    if (ftruncate(b->fd, (off_t)size) != 0)
        return fail(b, "ftruncate", size, errno);
    return 0;
}
static int px_preallocate(mio_backend *b, int64_t size)
{
    int64_t cur;
    int rc = px_get_size(b, &cur);
    if (rc || cur >= size)
        return rc;
    int e = posix_fallocate(b->fd, 0, (off_t)size);
    if (e == EOPNOTSUPP || e == EINVAL)
        return px_set_size(b, size);
    if (e)
        return fail(b, "posix_fallocate", size, e);
    return 0;
}
static void px_close(mio_backend *b)
{
    if (b->fd >= 0)
        close(b->fd);
    b->fd = -1;
}

static const mio_backend_ops posix_ops = {px_pread,    px_pwrite,      px_sync,  px_invalidate, px_get_size,
                                          px_set_size, px_preallocate, px_close, NULL,          px_pwritev};

int mio_backend_posix_open(mio_backend *b, const char *path, int flags)
{
    b->ops = &posix_ops;
    b->path = path;
    b->fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (b->fd < 0) {
        snprintf(b->err, b->errlen, "%s: open: %s", path, strerror(errno));
        return SHEAF_MPIIO_EIO;
    }
    return 0;
}

static void audit(mio_backend *b, char op, int64_t off, int64_t len)
{
    if (b->audit_fd < 0)
        return;
    char line[64];
    int n = snprintf(line, sizeof line, "%c %lld %lld\n", op, (long long)off, (long long)len);
    if (write(b->audit_fd, line, (size_t)n) != n) { /* the log is best effort */
    }
}

int mio_fs_read(mio_backend *b, void *buf, int64_t len, int64_t off)
{
    if (len <= 0)
        return 0;
    b->stats->fs_reads++;
    b->stats->fs_read_bytes += (uint64_t)len;
    audit(b, 'R', off, len);
    return b->ops->pread(b, buf, len, off);
}

int mio_fs_write(mio_backend *b, const void *buf, int64_t len, int64_t off)
{
    if (len <= 0)
        return 0;
    b->stats->fs_writes++;
    b->stats->fs_write_bytes += (uint64_t)len;
    audit(b, 'W', off, len);
    return b->ops->pwrite(b, buf, len, off);
}

int mio_fs_writev(mio_backend *b, const struct iovec *iov, int n, int64_t off)
{
    int64_t len = 0;
    for (int i = 0; i < n; i++)
        len += (int64_t)iov[i].iov_len;
    if (len <= 0)
        return 0;
    b->stats->fs_writes++;
    b->stats->fs_write_bytes += (uint64_t)len;
    audit(b, 'W', off, len);
    if (b->ops->pwritev)
        return b->ops->pwritev(b, iov, n, off);
    char *bb = malloc((size_t)len);
    if (!bb) {
        snprintf(b->err, b->errlen, "%s: out of memory gathering %lld bytes to write", b->path, (long long)len);
        return SHEAF_MPIIO_ENOMEM;
    }
    for (int64_t i = 0, p = 0; i < n; p += (int64_t)iov[i].iov_len, i++)
        memcpy(bb + p, iov[i].iov_base, iov[i].iov_len);
    int rc = b->ops->pwrite(b, bb, len, off);
    free(bb);
    return rc;
}
