/* preload.c - libsheaf_monitor_preload.so: the POSIX functions it interposes
 * (include/sheaf_monitor_preload.h). Each wrapper finds the descriptor's
 * record in a fixed table (no lock), calls the real function, times it with
 * the vDSO clock (no system call of its own) and counts. Calls the monitor
 * makes itself (its log) and calls while monitoring is off go straight to
 * the C library. errno is what the real call left. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sheaf_monitor_preload.h"

__attribute__((constructor)) static void mon_ctor(void)
{
    if (!mon_real.ready)
        mon_resolve();
    mon_init();
}

__attribute__((destructor)) static void mon_dtor(void)
{
    if (mon_g.pid == (int)getpid())
        mon_snapshot(1);
}

/* the last snapshot before exec or _exit; not in a vfork child (it shares the parent's memory) */
static void mon_final(void)
{
    if (mon_g.on && !mon_busy && mon_g.pid == (int)getpid())
        mon_snapshot(1);
}

static void opened(int fd, const char *path, int dirfd, uint64_t t0)
{
    uint64_t t1 = mon_now_ns();
    int e = errno;
    mon_frec *r = mon_lookup(path, dirfd);
    if (r) {
        mon_count_meta(r, MC_OPENS, t1 - t0);
        if (r->kind != MON_K_FILE)
            mon_count_add(r, MC_FILES, 1);
        mon_fd_set(fd, r, 0);
        mon_tick(t1);
    }
    errno = e;
}

#define MODE_ARG(flags)                                                                                                \
    mode_t mode = 0;                                                                                                   \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                                                             \
        va_list ap;                                                                                                    \
        va_start(ap, flags);                                                                                           \
        mode = (mode_t)va_arg(ap, int);                                                                                \
        va_end(ap);                                                                                                    \
    }

#define OPEN_BODY(call, path, dirfd)                                                                                   \
    MON_READY();                                                                                                       \
    if (!MON_ON())                                                                                                     \
        return call;                                                                                                   \
    uint64_t t0 = mon_now_ns();                                                                                        \
    int fd = call;                                                                                                     \
    if (fd >= 0)                                                                                                       \
        opened(fd, path, dirfd, t0);                                                                                   \
    return fd;

int MON_FN(open)(const char *path, int flags, ...)
{
    MODE_ARG(flags);
    OPEN_BODY(mon_real.open(path, flags, mode), path, AT_FDCWD);
}
int MON_FN(open64)(const char *path, int flags, ...)
{
    MODE_ARG(flags);
    OPEN_BODY(mon_real.open64(path, flags, mode), path, AT_FDCWD);
}
int MON_FN(openat)(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG(flags);
    OPEN_BODY(mon_real.openat(dirfd, path, flags, mode), path, dirfd);
}
int MON_FN(openat64)(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG(flags);
    OPEN_BODY(mon_real.openat64(dirfd, path, flags, mode), path, dirfd);
}
int MON_FN(creat)(const char *path, mode_t mode) { OPEN_BODY(mon_real.creat(path, mode), path, AT_FDCWD); }
int MON_FN(creat64)(const char *path, mode_t mode) { OPEN_BODY(mon_real.creat64(path, mode), path, AT_FDCWD); }

int MON_FN(close)(int fd)
{
    MON_READY();
    mon_frec *r = MON_ON() ? mon_fd_rec(fd) : NULL;
    if (!r)
        return mon_real.close(fd);
    uint64_t t0 = mon_now_ns();
    mon_fd_set(fd, NULL, 0);
    int rc = mon_real.close(fd);
    int e = errno;
    uint64_t t1 = mon_now_ns();
    mon_count_meta(r, -1, t1 - t0);
    mon_tick(t1);
    errno = e;
    return rc;
}

/* descriptors closed together (e.g. before an exec): their slots are freed,
 * so a descriptor number reused by a pipe or socket is not counted as the file */
int MON_FN(close_range)(unsigned int first, unsigned int last, int flags)
{
    MON_READY();
    int rc = mon_real.close_range(first, last, flags);
    if (rc == 0 && mon_g.on && !(flags & CLOSE_RANGE_CLOEXEC))
        for (unsigned int fd = first; fd <= last && fd < MON_FD_MAX; fd++)
            if (mon_fds[fd].rec)
                mon_fd_set((int)fd, NULL, 0);
    return rc;
}

static int duped(int fd, int nfd)
{
    mon_frec *r = mon_fd_rec(fd);
    if (nfd >= 0 && nfd != fd && nfd < MON_FD_MAX)
        mon_fd_set(nfd, r, r ? __atomic_load_n(&mon_fds[fd].pos, __ATOMIC_RELAXED) : 0);
    return nfd;
}
int MON_FN(dup)(int fd)
{
    MON_READY();
    return MON_ON() ? duped(fd, mon_real.dup(fd)) : mon_real.dup(fd);
}
int MON_FN(dup2)(int fd, int fd2)
{
    MON_READY();
    return MON_ON() ? duped(fd, mon_real.dup2(fd, fd2)) : mon_real.dup2(fd, fd2);
}
int MON_FN(dup3)(int fd, int fd2, int flags)
{
    MON_READY();
    return MON_ON() ? duped(fd, mon_real.dup3(fd, fd2, flags)) : mon_real.dup3(fd, fd2, flags);
}

/* a read or write at the descriptor's offset (pos 1) or at off (pos 0) */
#define RW_BODY(call, wr, posarg, offv, bufp)                                                                          \
    MON_READY();                                                                                                       \
    mon_frec *r = MON_ON() ? mon_fd_rec(fd) : NULL;                                                                    \
    if (!r)                                                                                                            \
        return call;                                                                                                   \
    uint64_t t0 = mon_now_ns();                                                                                        \
    ssize_t got = call;                                                                                                \
    uint64_t t1 = mon_now_ns();                                                                                        \
    if (got >= 0) {                                                                                                    \
        int e = errno;                                                                                                 \
        uint64_t at = (posarg) ? mon_fd_advance(fd, (uint64_t)got) : (uint64_t)(offv);                                 \
        mon_count_rw(r, wr, at, (uint64_t)got, bufp, t1 - t0, t1, 0);                                                  \
        mon_tick(t1);                                                                                                  \
        errno = e;                                                                                                     \
    }                                                                                                                  \
    return got;

ssize_t MON_FN(read)(int fd, void *buf, size_t n) { RW_BODY(mon_real.read(fd, buf, n), 0, 1, 0, buf); }
ssize_t MON_FN(__read_chk)(int fd, void *buf, size_t n, size_t buflen)
{
    RW_BODY(mon_real.__read_chk(fd, buf, n, buflen), 0, 1, 0, buf);
}
ssize_t MON_FN(write)(int fd, const void *buf, size_t n) { RW_BODY(mon_real.write(fd, buf, n), 1, 1, 0, buf); }
ssize_t MON_FN(pread)(int fd, void *buf, size_t n, off_t off)
{
    RW_BODY(mon_real.pread(fd, buf, n, off), 0, 0, off, buf);
}
ssize_t MON_FN(pread64)(int fd, void *buf, size_t n, off64_t off)
{
    RW_BODY(mon_real.pread64(fd, buf, n, off), 0, 0, off, buf);
}
ssize_t MON_FN(pwrite)(int fd, const void *buf, size_t n, off_t off)
{
    RW_BODY(mon_real.pwrite(fd, buf, n, off), 1, 0, off, buf);
}
ssize_t MON_FN(pwrite64)(int fd, const void *buf, size_t n, off64_t off)
{
    RW_BODY(mon_real.pwrite64(fd, buf, n, off), 1, 0, off, buf);
}
ssize_t MON_FN(readv)(int fd, const struct iovec *iov, int iovcnt)
{
    RW_BODY(mon_real.readv(fd, iov, iovcnt), 0, 1, 0, iovcnt > 0 ? iov[0].iov_base : NULL);
}
ssize_t MON_FN(writev)(int fd, const struct iovec *iov, int iovcnt)
{
    RW_BODY(mon_real.writev(fd, iov, iovcnt), 1, 1, 0, iovcnt > 0 ? iov[0].iov_base : NULL);
}

static void *mapped(void *p, size_t len, int flags, int fd, uint64_t t0)
{
    mon_frec *r = (flags & MAP_ANONYMOUS) ? NULL : mon_fd_rec(fd);
    if (r && p != MAP_FAILED) {
        int e = errno;
        uint64_t t1 = mon_now_ns();
        mon_count_meta(r, MC_MMAPS, t1 - t0);
        mon_count_add(r, MC_MMAP_BYTES, len);
        errno = e;
    }
    return p;
}
void *MON_FN(mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    MON_READY();
    if (!MON_ON())
        return mon_real.mmap(addr, len, prot, flags, fd, off);
    uint64_t t0 = mon_now_ns();
    return mapped(mon_real.mmap(addr, len, prot, flags, fd, off), len, flags, fd, t0);
}
void *MON_FN(mmap64)(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    MON_READY();
    if (!MON_ON())
        return mon_real.mmap64(addr, len, prot, flags, fd, off);
    uint64_t t0 = mon_now_ns();
    return mapped(mon_real.mmap64(addr, len, prot, flags, fd, off), len, flags, fd, t0);
}

/* a metadata call on a descriptor: counted on success */
#define FD_META(call, counter, setpos)                                                                                 \
    MON_READY();                                                                                                       \
    mon_frec *r = MON_ON() ? mon_fd_rec(fd) : NULL;                                                                    \
    if (!r)                                                                                                            \
        return call;                                                                                                   \
    uint64_t t0 = mon_now_ns();                                                                                        \
    __typeof__(call) rc = call;                                                                                        \
    int e = errno;                                                                                                     \
    if (rc >= 0) {                                                                                                     \
        if (setpos)                                                                                                    \
            __atomic_store_n(&mon_fds[fd].pos, (uint64_t)rc, __ATOMIC_RELAXED);                                        \
        uint64_t t1 = mon_now_ns();                                                                                    \
        mon_count_meta(r, counter, t1 - t0);                                                                           \
        mon_tick(t1);                                                                                                  \
    }                                                                                                                  \
    errno = e;                                                                                                         \
    return rc;

off_t MON_FN(lseek)(int fd, off_t off, int whence) { FD_META(mon_real.lseek(fd, off, whence), MC_SEEKS, 1); }
off64_t MON_FN(lseek64)(int fd, off64_t off, int whence) { FD_META(mon_real.lseek64(fd, off, whence), MC_SEEKS, 1); }
int MON_FN(fstat)(int fd, struct stat *st) { FD_META(mon_real.fstat(fd, st), MC_STATS, 0); }
int MON_FN(fstat64)(int fd, struct stat64 *st) { FD_META(mon_real.fstat64(fd, st), MC_STATS, 0); }
int MON_FN(fsync)(int fd) { FD_META(mon_real.fsync(fd), MC_FSYNCS, 0); }
int MON_FN(fdatasync)(int fd) { FD_META(mon_real.fdatasync(fd), MC_FSYNCS, 0); }

/* a stat by name: counted on the path's record when it succeeds */
#define PATH_META(call, path, dirfd)                                                                                   \
    MON_READY();                                                                                                       \
    if (!MON_ON())                                                                                                     \
        return call;                                                                                                   \
    uint64_t t0 = mon_now_ns();                                                                                        \
    int rc = call;                                                                                                     \
    if (rc == 0) {                                                                                                     \
        int e = errno;                                                                                                 \
        uint64_t t1 = mon_now_ns();                                                                                    \
        mon_frec *r = mon_lookup(path, dirfd);                                                                         \
        if (r) {                                                                                                       \
            mon_count_meta(r, MC_STATS, t1 - t0);                                                                      \
            mon_tick(t1);                                                                                              \
        }                                                                                                              \
        errno = e;                                                                                                     \
    }                                                                                                                  \
    return rc;

int MON_FN(stat)(const char *path, struct stat *st) { PATH_META(mon_real.stat(path, st), path, AT_FDCWD); }
int MON_FN(lstat)(const char *path, struct stat *st) { PATH_META(mon_real.lstat(path, st), path, AT_FDCWD); }
int MON_FN(stat64)(const char *path, struct stat64 *st) { PATH_META(mon_real.stat64(path, st), path, AT_FDCWD); }
int MON_FN(lstat64)(const char *path, struct stat64 *st) { PATH_META(mon_real.lstat64(path, st), path, AT_FDCWD); }
int MON_FN(fstatat)(int dirfd, const char *path, struct stat *st, int flags)
{
    if (!*path && (flags & AT_EMPTY_PATH)) {
        int fd = dirfd;
        FD_META(mon_real.fstatat(dirfd, path, st, flags), MC_STATS, 0);
    }
    PATH_META(mon_real.fstatat(dirfd, path, st, flags), path, dirfd);
}
int MON_FN(fstatat64)(int dirfd, const char *path, struct stat64 *st, int flags)
{
    if (!*path && (flags & AT_EMPTY_PATH)) {
        int fd = dirfd;
        FD_META(mon_real.fstatat64(dirfd, path, st, flags), MC_STATS, 0);
    }
    PATH_META(mon_real.fstatat64(dirfd, path, st, flags), path, dirfd);
}

int MON_FN(chdir)(const char *path)
{
    MON_READY();
    int rc = mon_real.chdir(path);
    if (rc == 0 && mon_g.on) {
        int e = errno;
        pthread_mutex_lock(&mon_g.lock);
        mon_busy++;
        if (!getcwd(mon_g.cwd, sizeof mon_g.cwd))
            mon_g.cwd[0] = 0;
        mon_busy--;
        pthread_mutex_unlock(&mon_g.lock);
        errno = e;
    }
    return rc;
}

int MON_FN(execve)(const char *path, char *const argv[], char *const envp[])
{
    MON_READY();
    mon_final();
    return mon_real.execve(path, argv, envp);
}
int MON_FN(execv)(const char *path, char *const argv[])
{
    MON_READY();
    mon_final();
    return mon_real.execv(path, argv);
}
int MON_FN(execvp)(const char *file, char *const argv[])
{
    MON_READY();
    mon_final();
    return mon_real.execvp(file, argv);
}
void MON_FN(_exit)(int status)
{
    MON_READY();
    mon_final();
    mon_real._exit(status);
    __builtin_unreachable();
}
void MON_FN(_Exit)(int status)
{
    MON_READY();
    mon_final();
    mon_real._Exit(status);
    __builtin_unreachable();
}
