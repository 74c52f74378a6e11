/* fscount.c - LD_PRELOAD library counting the file-system calls a process
 * makes on files under $FSCOUNT_PREFIX (pread/pwrite/read/write and their
 * 64-bit and vector forms), so the MPI library's own MPI-IO (ROMIO, OMPIO) and
 * sheaf's layer are counted the same way. The benchmark asks for the counts
 * through fscount_get (found with dlsym; absent when not preloaded). */
#undef _FILE_OFFSET_BITS /* open and open64 are both defined here, each as itself */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <stdlib.h>

#define MAXFD 4096
static unsigned char watched[MAXFD];
static uint64_t n_rd, n_wr, b_rd, b_wr;

void fscount_get(uint64_t out[4]);
void fscount_get(uint64_t out[4])
{
    out[0] = n_rd;
    out[1] = b_rd;
    out[2] = n_wr;
    out[3] = b_wr;
}

static void watch(int fd, const char *path)
{
    const char *pre = getenv("FSCOUNT_PREFIX");
    if (fd >= 0 && fd < MAXFD)
        watched[fd] = pre && path && strncmp(path, pre, strlen(pre)) == 0;
}
#define REAL(name, ret, ...)                                                                                           \
    static ret (*real_##name)(__VA_ARGS__);                                                                            \
    if (!real_##name)                                                                                                  \
    real_##name = dlsym(RTLD_NEXT, #name)

int open(const char *p, int flags, ...)
{
    REAL(open, int, const char *, int, ...);
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    int fd = real_open(p, flags, mode);
    watch(fd, p);
    return fd;
}
int open64(const char *p, int flags, ...)
{
    REAL(open64, int, const char *, int, ...);
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    int fd = real_open64(p, flags, mode);
    watch(fd, p);
    return fd;
}
int close(int fd)
{
    REAL(close, int, int);
    if (fd >= 0 && fd < MAXFD)
        watched[fd] = 0;
    return real_close(fd);
}
static int w(int fd) { return fd >= 0 && fd < MAXFD && watched[fd]; }
#define COUNT(is_wr, r)                                                                                                \
    do {                                                                                                               \
        if ((r) > 0) {                                                                                                 \
            if (is_wr) {                                                                                               \
                n_wr++;                                                                                                \
                b_wr += (uint64_t)(r);                                                                                 \
            } else {                                                                                                   \
                n_rd++;                                                                                                \
                b_rd += (uint64_t)(r);                                                                                 \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)
ssize_t pread(int fd, void *b, size_t n, off_t o)
{
    REAL(pread, ssize_t, int, void *, size_t, off_t);
    ssize_t r = real_pread(fd, b, n, o);
    if (w(fd))
        COUNT(0, r);
    return r;
}
ssize_t pread64(int fd, void *b, size_t n, off_t o)
{
    REAL(pread64, ssize_t, int, void *, size_t, off_t);
    ssize_t r = real_pread64(fd, b, n, o);
    if (w(fd))
        COUNT(0, r);
    return r;
}
ssize_t pwrite(int fd, const void *b, size_t n, off_t o)
{
    REAL(pwrite, ssize_t, int, const void *, size_t, off_t);
    ssize_t r = real_pwrite(fd, b, n, o);
    if (w(fd))
        COUNT(1, r);
    return r;
}
ssize_t pwrite64(int fd, const void *b, size_t n, off_t o)
{
    REAL(pwrite64, ssize_t, int, const void *, size_t, off_t);
    ssize_t r = real_pwrite64(fd, b, n, o);
    if (w(fd))
        COUNT(1, r);
    return r;
}
ssize_t read(int fd, void *b, size_t n)
{
    REAL(read, ssize_t, int, void *, size_t);
    ssize_t r = real_read(fd, b, n);
    if (w(fd))
        COUNT(0, r);
    return r;
}
ssize_t write(int fd, const void *b, size_t n)
{
    REAL(write, ssize_t, int, const void *, size_t);
    ssize_t r = real_write(fd, b, n);
    if (w(fd))
        COUNT(1, r);
    return r;
}
ssize_t preadv(int fd, const struct iovec *v, int c, off_t o)
{
    REAL(preadv, ssize_t, int, const struct iovec *, int, off_t);
    ssize_t r = real_preadv(fd, v, c, o);
    if (w(fd))
        COUNT(0, r);
    return r;
}
ssize_t pwritev(int fd, const struct iovec *v, int c, off_t o)
{
    REAL(pwritev, ssize_t, int, const struct iovec *, int, off_t);
    ssize_t r = real_pwritev(fd, v, c, o);
    if (w(fd))
        COUNT(1, r);
    return r;
}
ssize_t readv(int fd, const struct iovec *v, int c)
{
    REAL(readv, ssize_t, int, const struct iovec *, int);
    ssize_t r = real_readv(fd, v, c);
    if (w(fd))
        COUNT(0, r);
    return r;
}
ssize_t writev(int fd, const struct iovec *v, int c)
{
    REAL(writev, ssize_t, int, const struct iovec *, int);
    ssize_t r = real_writev(fd, v, c);
    if (w(fd))
        COUNT(1, r);
    return r;
}
ssize_t preadv64(int fd, const struct iovec *v, int c, off64_t o)
{
    REAL(preadv64, ssize_t, int, const struct iovec *, int, off64_t);
    ssize_t r = real_preadv64(fd, v, c, o);
    if (w(fd))
        COUNT(0, r);
    return r;
}
ssize_t pwritev64(int fd, const struct iovec *v, int c, off64_t o)
{
    REAL(pwritev64, ssize_t, int, const struct iovec *, int, off64_t);
    ssize_t r = real_pwritev64(fd, v, c, o);
    if (w(fd))
        COUNT(1, r);
    return r;
}
