/* io.c - ANSI and POSIX file backends with full error reporting. */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include "io.h"
#include "error.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Why an open of name failed (errno e): a symbolic link that O_NOFOLLOW refused is named as such. */
static int open_failed(const char *name, int creating, int nofollow, int e)
{
    struct stat ls;
    if (nofollow && (e == ELOOP || e == EMLINK) && lstat(name, &ls) == 0 && S_ISLNK(ls.st_mode))
        return core_fail(SHEAF_E_IO,
                         "cannot %s %s: it is a symbolic link (sheaf never creates or writes a "
                         "file it made through a link; remove it or give the real path)",
                         creating ? "create" : "write", name);
    return core_fail_errno(e == ENOENT ? SHEAF_E_NOTFOUND : SHEAF_E_IO, e, "cannot %s %s", creating ? "create" : "open",
                           name);
}

int core_open_regular(const char *name, int flags, int *fd_out)
{
    *fd_out = -1;
    int creating = (flags & O_CREAT) != 0, trunc = (flags & O_TRUNC) != 0;
    int nofollow = creating || (flags & O_NOFOLLOW) != 0;
    /* O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; the descriptor
     * is used only once fstat says it is a regular file, and blocks again from then on.
     * O_TRUNC waits for that check too. */
    int fd;
    do {
        fd = open(name, (flags & ~O_TRUNC) | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0), 0666);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return open_failed(name, creating, nofollow, errno);
    struct stat st;
    int rc = 0, fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0)
        rc = core_fail_errno(SHEAF_E_IO, errno, "cannot stat %s", name);
    else if (S_ISDIR(st.st_mode))
        rc = core_fail(SHEAF_E_ARG, "%s is a directory, not a container file", name);
    else if (!S_ISREG(st.st_mode))
        rc = core_fail(SHEAF_E_ARG, "%s is not a regular file (%s): sheaf %s only regular files", name,
                       S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a special file",
                       (flags & O_ACCMODE) == O_RDONLY ? "reads" : "writes");
    else if (trunc && ftruncate(fd, 0) != 0)
        rc = core_fail_errno(SHEAF_E_IO, errno, "cannot truncate %s", name);
    else if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        rc = core_fail_errno(SHEAF_E_IO, errno, "%s: cannot clear O_NONBLOCK", name);
    if (rc) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

/* how: 0 read, 1 create/truncate for writing, 2 existing file for reading and writing,
 * 3 the same, never through a symbolic link */
static int file_open(core_file *f, const char *name, int how, int posix)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->posix = posix;
    f->name = strdup(name);
    if (!f->name)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
    int fd, rc = core_open_regular(name,
                                   how == 1   ? (O_RDWR | O_CREAT | O_TRUNC)
                                   : how == 2 ? O_RDWR
                                   : how == 3 ? (O_RDWR | O_NOFOLLOW)
                                              : O_RDONLY,
                                   &fd);
    if (rc) {
        free(f->name);
        f->name = NULL;
        return rc;
    }
    f->fd = fd;
    if (!posix) {
        f->fp = fdopen(fd, how == 1 ? "w+b" : how >= 2 ? "r+b" : "rb");
        if (!f->fp) {
            int e = errno;
            close(fd);
            free(f->name);
            f->name = NULL;
            return core_fail_errno(SHEAF_E_IO, e, "cannot open stream on %s", name);
        }
    }
    return 0;
}

int core_file_open(core_file *f, const char *name, int write, int posix)
{
    return file_open(f, name, write ? 1 : 0, posix);
}

int core_file_open_rw(core_file *f, const char *name, int posix, int nofollow)
{
    return file_open(f, name, nofollow ? 3 : 2, posix);
}

int core_file_close(core_file *f)
{
    int rc = 0;
    if (f->fp) {
        if (fclose(f->fp) != 0)
            rc = core_fail_errno(SHEAF_E_IO, errno, "%s: error while closing", f->name);
    } else if (f->fd >= 0) {
        if (close(f->fd) != 0 && errno != EINTR)
            rc = core_fail_errno(SHEAF_E_IO, errno, "%s: error while closing", f->name);
    }
    f->fp = NULL;
    f->fd = -1;
    free(f->name);
    f->name = NULL;
    return rc;
}

int core_file_seek(core_file *f, int64_t off)
{
    if (off < 0)
        return core_fail(SHEAF_E_ARG, "%s: negative file offset %lld", f->name, (long long)off);
    if (f->fp) {
        /* a seek writes out stdio's buffer first: name that failure for what it is */
        if (fflush(f->fp) != 0)
            return core_fail_errno(SHEAF_E_IO, errno, "%s: writing buffered data failed", f->name);
        if (fseeko(f->fp, (off_t)off, SEEK_SET) != 0)
            return core_fail_errno(SHEAF_E_IO, errno, "%s: cannot seek to %lld", f->name, (long long)off);
    } else if (lseek(f->fd, (off_t)off, SEEK_SET) < 0) {
        return core_fail_errno(SHEAF_E_IO, errno, "%s: cannot seek to %lld", f->name, (long long)off);
    }
    return 0;
}

int core_file_tell(core_file *f, int64_t *off)
{
    off_t o = f->fp ? ftello(f->fp) : lseek(f->fd, 0, SEEK_CUR);
    if (o < 0)
        return core_fail_errno(SHEAF_E_IO, errno, "%s: cannot get file position", f->name);
    *off = (int64_t)o;
    return 0;
}

int core_file_write(core_file *f, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
        if (f->fp) {
            size_t w = fwrite(p, 1, chunk, f->fp);
            if (w == 0) {
                int e = errno ? errno : EIO;
                if (e == EINTR) {
                    clearerr(f->fp);
                    continue;
                }
                return core_fail_errno(SHEAF_E_IO, e, "%s: write of %zu bytes failed", f->name, n);
            }
            p += w;
            n -= w;
        } else {
            ssize_t w = write(f->fd, p, chunk);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                return core_fail_errno(SHEAF_E_IO, errno, "%s: write of %zu bytes failed", f->name, n);
            }
            if (w == 0)
                return core_fail(SHEAF_E_IO, "%s: write returned 0 (no space?)", f->name);
            p += w;
            n -= (size_t)w;
        }
    }
    return 0;
}

int core_file_read(core_file *f, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
        if (f->fp) {
            size_t r = fread(p, 1, chunk, f->fp);
            if (r == 0) {
                if (ferror(f->fp)) {
                    int e = errno ? errno : EIO;
                    if (e == EINTR) {
                        clearerr(f->fp);
                        continue;
                    }
                    return core_fail_errno(SHEAF_E_IO, e, "%s: read failed", f->name);
                }
                return core_fail(SHEAF_E_FORMAT, "%s: unexpected end of file", f->name);
            }
            p += r;
            n -= r;
        } else {
            ssize_t r = read(f->fd, p, chunk);
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                return core_fail_errno(SHEAF_E_IO, errno, "%s: read failed", f->name);
            }
            if (r == 0)
                return core_fail(SHEAF_E_FORMAT, "%s: unexpected end of file", f->name);
            p += r;
            n -= (size_t)r;
        }
    }
    return 0;
}

int core_file_pread(core_file *f, void *buf, size_t n, int64_t off)
{
    int rc = core_file_seek(f, off);
    return rc ? rc : core_file_read(f, buf, n);
}

int core_file_flush(core_file *f)
{
    if (f->fp && fflush(f->fp) != 0)
        return core_fail_errno(SHEAF_E_IO, errno, "%s: flush failed", f->name);
    return 0;
}

int core_file_sync(core_file *f)
{
    int rc = core_file_flush(f);
    if (rc)
        return rc;
    while (fsync(f->fd) != 0) {
        if (errno != EINTR)
            return core_fail_errno(SHEAF_E_IO, errno, "%s: fsync failed", f->name);
    }
    return 0;
}

int core_file_size(core_file *f, int64_t *size)
{
    struct stat st;
    if (f->fp)
        fflush(f->fp);
    if (fstat(f->fd, &st) != 0)
        return core_fail_errno(SHEAF_E_IO, errno, "%s: cannot stat", f->name);
    *size = (int64_t)st.st_size;
    return 0;
}

int64_t core_file_fs_blksize(core_file *f)
{
    /* st_blksize first, as SIONlib does; statvfs as the fallback */
    struct stat st;
    if (fstat(f->fd, &st) == 0 && st.st_blksize > 0)
        return (int64_t)st.st_blksize;
    struct statvfs vs;
    if (fstatvfs(f->fd, &vs) == 0 && vs.f_bsize > 0)
        return (int64_t)vs.f_bsize;
    return 0;
}
