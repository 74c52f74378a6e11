/* fdshare.c - many descriptors on few open files, for the scale simulation.
 *
 * Each sheaf task keeps its own descriptor of its physical file from open to
 * close; 10^5 simulated tasks in one process need 10^5 descriptors, more
 * than RLIMIT_NOFILE allows here (20000, and no CAP_SYS_RESOURCE to raise it).
 * This file replaces the descriptor calls the library makes (the symbols
 * libsheaf.a imports: open64, close, read, write, pread64, lseek64, fstat64,
 * fsync, fdatasync, ftruncate64, fcntl64, fstatvfs64) in the test executable:
 * a file opened under the prefix set by fds_share_under() gets a VIRTUAL
 * descriptor (>= FDS_BASE) with its own position and flags, all virtual
 * descriptors of one path share one real descriptor (reference counted), and
 * read/write become pread/pwrite at the virtual position. Every call still
 * reaches the kernel as one system call on the same file (no data is
 * dropped: the files on disk are byte-for-byte what the library wrote), so
 * the simulation's I/O is real; only the number of open file objects is
 * reduced. Everything else passes through to the system call unchanged.
 * Linux x86-64 / aarch64 only (syscall numbers, struct stat == stat64);
 * one OS thread (no locking). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dlfcn.h>
#include "fdshare.h"

#define FDS_BASE (1 << 24) /* above any real descriptor (fs.nr_open <= 2^20 by default) */

typedef struct shared {
    char *path;
    int real, refs;
    struct shared *next;
} shared;
typedef struct vfd {
    shared *f;
    int64_t pos;
    int flags, used;
} vfd;

static char *g_prefix;
static size_t g_plen;
static vfd *g_v;
static int g_nv, g_capv, *g_free, g_nfree;
static shared *g_tab[4096];
static long g_peak_real, g_real, g_peak_virtual, g_virtual;

void fds_share_under(const char *prefix)
{
    free(g_prefix);
    g_prefix = prefix ? strdup(prefix) : NULL;
    g_plen = g_prefix ? strlen(g_prefix) : 0;
}
void fds_stats(long *peak_virtual, long *peak_real)
{
    *peak_virtual = g_peak_virtual;
    *peak_real = g_peak_real;
}

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h & 4095;
}
static vfd *lookup(int fd)
{
    if (fd < FDS_BASE || fd - FDS_BASE >= g_nv || !g_v[fd - FDS_BASE].used)
        return NULL;
    return &g_v[fd - FDS_BASE];
}

int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (!g_prefix || strncmp(path, g_prefix, g_plen))
        return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
    unsigned h = hash(path);
    shared *f = g_tab[h];
    while (f && strcmp(f->path, path))
        f = f->next;
    if (f) {
        if ((flags & O_CREAT) && (flags & O_EXCL)) {
            errno = EEXIST;
            return -1;
        }
        if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY && syscall(SYS_ftruncate, f->real, 0))
            return -1;
    } else {
        int real = (int)syscall(SYS_openat, AT_FDCWD, path, (flags & ~O_ACCMODE) | O_RDWR, mode);
        if (real < 0 && (errno == EACCES || errno == EROFS))
            real = (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
        if (real < 0)
            return -1;
        f = calloc(1, sizeof *f);
        if (!f || !(f->path = strdup(path))) {
            free(f);
            syscall(SYS_close, real);
            errno = ENOMEM;
            return -1;
        }
        f->real = real;
        f->next = g_tab[h];
        g_tab[h] = f;
        if (++g_real > g_peak_real)
            g_peak_real = g_real;
    }
    int i;
    if (g_nfree) {
        i = g_free[--g_nfree];
    } else {
        if (g_nv == g_capv) {
            int nc = g_capv ? 2 * g_capv : 1024;
            vfd *nv = realloc(g_v, (size_t)nc * sizeof *nv);
            int *nf = realloc(g_free, (size_t)nc * sizeof *nf);
            if (nv)
                g_v = nv;
            if (nf)
                g_free = nf;
            if (!nv || !nf) {
                errno = ENOMEM;
                return -1;
            }
            g_capv = nc;
        }
        i = g_nv++;
    }
    f->refs++;
    g_v[i] = (vfd){f, 0, flags & ~(O_CREAT | O_EXCL | O_TRUNC), 1};
    if (++g_virtual > g_peak_virtual)
        g_peak_virtual = g_virtual;
    return FDS_BASE + i;
}

int close(int fd)
{
    vfd *v = lookup(fd);
    if (!v)
        return (int)syscall(SYS_close, fd);
    shared *f = v->f;
    v->used = 0;
    g_free[g_nfree++] = fd - FDS_BASE;
    g_virtual--;
    if (--f->refs)
        return 0;
    shared **pp = &g_tab[hash(f->path)];
    while (*pp != f)
        pp = &(*pp)->next;
    *pp = f->next;
    int rc = (int)syscall(SYS_close, f->real);
    free(f->path);
    free(f);
    g_real--;
    return rc;
}

ssize_t read(int fd, void *buf, size_t n)
{
    vfd *v = lookup(fd);
    if (!v)
        return syscall(SYS_read, fd, buf, n);
    ssize_t r = syscall(SYS_pread64, v->f->real, buf, n, (off_t)v->pos);
    if (r > 0)
        v->pos += r;
    return r;
}
ssize_t write(int fd, const void *buf, size_t n)
{
    vfd *v = lookup(fd);
    if (!v)
        return syscall(SYS_write, fd, buf, n);
    if ((v->flags & O_ACCMODE) == O_RDONLY) {
        errno = EBADF;
        return -1;
    }
    if (v->flags & O_APPEND) {
        struct stat st;
        if (syscall(SYS_fstat, v->f->real, &st))
            return -1;
        v->pos = st.st_size;
    }
    ssize_t r = syscall(SYS_pwrite64, v->f->real, buf, n, (off_t)v->pos);
    if (r > 0)
        v->pos += r;
    return r;
}
ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    vfd *v = lookup(fd);
    return syscall(SYS_pread64, v ? v->f->real : fd, buf, n, off);
}
off64_t lseek64(int fd, off64_t off, int whence)
{
    vfd *v = lookup(fd);
    if (!v)
        return syscall(SYS_lseek, fd, off, whence);
    int64_t base = 0;
    if (whence == SEEK_CUR)
        base = v->pos;
    else if (whence == SEEK_END) {
        struct stat st;
        if (syscall(SYS_fstat, v->f->real, &st))
            return -1;
        base = st.st_size;
    } else if (whence != SEEK_SET) {
        return syscall(SYS_lseek, v->f->real, off, whence); /* SEEK_DATA / SEEK_HOLE: on the real file */
    }
    if (base + off < 0) {
        errno = EINVAL;
        return -1;
    }
    v->pos = base + off;
    return v->pos;
}
int fstat64(int fd, struct stat64 *st)
{
    vfd *v = lookup(fd);
    return (int)syscall(SYS_fstat, v ? v->f->real : fd, st);
}
int fsync(int fd)
{
    vfd *v = lookup(fd);
    return (int)syscall(SYS_fsync, v ? v->f->real : fd);
}
int fdatasync(int fd)
{
    vfd *v = lookup(fd);
    return (int)syscall(SYS_fdatasync, v ? v->f->real : fd);
}
int ftruncate64(int fd, off64_t len)
{
    vfd *v = lookup(fd);
    return (int)syscall(SYS_ftruncate, v ? v->f->real : fd, len);
}
int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    vfd *v = lookup(fd);
    if (!v)
        return (int)syscall(SYS_fcntl, fd, cmd, arg);
    switch (cmd) {
    case F_GETFL:
        return v->flags;
    case F_SETFL:
        v->flags = (v->flags & O_ACCMODE) | ((int)arg & ~O_ACCMODE);
        return 0;
    case F_GETFD:
        return FD_CLOEXEC;
    case F_SETFD:
        return 0;
    default:
        return (int)syscall(SYS_fcntl, v->f->real, cmd, arg);
    }
}
int fstatvfs64(int fd, struct statvfs64 *out)
{
    vfd *v = lookup(fd);
    struct statfs s;
    if (syscall(SYS_fstatfs, v ? v->f->real : fd, &s))
        return -1;
    memset(out, 0, sizeof *out);
    out->f_bsize = (unsigned long)s.f_bsize;
    out->f_frsize = (unsigned long)(s.f_frsize ? s.f_frsize : s.f_bsize);
    out->f_blocks = s.f_blocks;
    out->f_bfree = s.f_bfree;
    out->f_bavail = s.f_bavail;
    out->f_files = s.f_files;
    out->f_ffree = s.f_ffree;
    out->f_favail = s.f_ffree;
    out->f_namemax = (unsigned long)s.f_namelen;
    return 0;
}

/* fdopen on a virtual descriptor: a stdio stream over it (fopencookie);
 * sheaf's master writes metadata through a stream on its descriptor. */
#include <stdio.h>
static ssize_t ck_read(void *c, char *b, size_t n) { return read((int)(intptr_t)c, b, n); }
static ssize_t ck_write(void *c, const char *b, size_t n) { return write((int)(intptr_t)c, b, n); }
static int ck_seek(void *c, off64_t *off, int whence)
{
    off64_t r = lseek64((int)(intptr_t)c, *off, whence);
    if (r < 0)
        return -1;
    *off = r;
    return 0;
}
static int ck_close(void *c) { return close((int)(intptr_t)c); }
FILE *fdopen(int fd, const char *mode)
{
    if (!lookup(fd)) {
        /* glibc's own, under its versioned name */
        static FILE *(*real)(int, const char *);
        if (!real)
            real = (FILE * (*)(int, const char *)) dlsym(RTLD_NEXT, "fdopen");
        return real ? real(fd, mode) : NULL;
    }
    cookie_io_functions_t io = {ck_read, ck_write, ck_seek, ck_close};
    return fopencookie((void *)(intptr_t)fd, mode, io);
}
