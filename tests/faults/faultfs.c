/* faultfs.c - LD_PRELOAD shim that injects I/O faults into the calls sheaf
 * makes in posix mode (write, pwrite, fsync, fdatasync), for the fault tests.
 * Only descriptors whose path contains $FAULTFS_MATCH are affected.
 *   FAULTFS_MODE=eio|enospc  after $FAULTFS_AFTER bytes written to matching
 *                            files by this process, every further write (and
 *                            fsync) fails with EIO / ENOSPC
 *   FAULTFS_MODE=flaky       writes randomly fail with EINTR before writing or
 *                            are cut short (a correct caller retries and loses
 *                            nothing); fsync randomly fails with EINTR
 * Counts go to stderr at exit when FAULTFS_VERBOSE is set. Test code only;
 * stdio (FILE*) writes inside glibc do not pass through here. */
#undef _FILE_OFFSET_BITS /* we define both pwrite and pwrite64 ourselves */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static const char *match;
static int mode; /* 0 off, 1 eio, 2 enospc, 3 flaky */
static long long after, written;
static atomic_long injected;
static unsigned long long rng = 88172645463325252ull;

static void init(void)
{
    if (real_write)
        return;
    real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    real_pwrite = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    match = getenv("FAULTFS_MATCH");
    const char *m = getenv("FAULTFS_MODE"), *a = getenv("FAULTFS_AFTER");
    mode = !m ? 0 : !strcmp(m, "eio") ? 1 : !strcmp(m, "enospc") ? 2 : !strcmp(m, "flaky") ? 3 : 0;
    after = a ? atoll(a) : 0;
}

static int matches(int fd)
{
    if (!match || !*match || fd < 0)
        return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return strstr(path, match) != NULL;
}

static unsigned rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)rng;
}

/* 0: go on with n bytes (maybe shortened); -1: fail with errno set */
static int decide(int fd, size_t *n)
{
    if (!mode || !matches(fd))
        return 0;
    if (mode == 3) {
        unsigned r = rnd() % 8;
        if (r == 0) {
            atomic_fetch_add(&injected, 1);
            errno = EINTR;
            return -1;
        }
        if (r == 1 && *n > 1) {
            atomic_fetch_add(&injected, 1);
            *n = 1 + rnd() % (*n - 1);
        }
        return 0;
    }
    if (written >= after) {
        atomic_fetch_add(&injected, 1);
        errno = mode == 1 ? EIO : ENOSPC;
        return -1;
    }
    if (written + (long long)*n > after)
        *n = (size_t)(after - written); /* the write that hits the limit is cut short */
    return 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    init();
    if (decide(fd, &n))
        return -1;
    ssize_t w = real_write(fd, buf, n);
    if (w > 0 && mode && matches(fd))
        written += w;
    return w;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    init();
    if (decide(fd, &n))
        return -1;
    ssize_t w = real_pwrite(fd, buf, n, off);
    if (w > 0 && mode && matches(fd))
        written += w;
    return w;
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) { return pwrite(fd, buf, n, (off_t)off); }

static int sync_fault(int fd)
{
    if (!mode || !matches(fd))
        return 0;
    if (mode == 3 && rnd() % 4 == 0) {
        atomic_fetch_add(&injected, 1);
        errno = EINTR;
        return -1;
    }
    if (mode != 3 && written >= after) {
        atomic_fetch_add(&injected, 1);
        errno = mode == 1 ? EIO : ENOSPC;
        return -1;
    }
    return 0;
}

int fsync(int fd)
{
    init();
    return sync_fault(fd) ? -1 : real_fsync(fd);
}

int fdatasync(int fd)
{
    init();
    return sync_fault(fd) ? -1 : real_fdatasync(fd);
}

__attribute__((destructor)) static void report(void)
{
    if (getenv("FAULTFS_VERBOSE"))
        fprintf(stderr, "faultfs: %ld fault(s) injected\n", atomic_load(&injected));
}
