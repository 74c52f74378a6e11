/* confine.c - everything the server creates in its cache is created below the
 * cache directory's descriptor and nowhere else: the names are checked (no
 * "..", ".", empty component, absolute or over-long name) and every directory
 * on the way is opened without following a symlink - openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it (Linux >= 5.6),
 * else component by component with O_NOFOLLOW | O_DIRECTORY. So a request or
 * a peer's message naming a path with "..", or a symlink planted in the cache,
 * can neither create nor replace a file outside it. */
#define _GNU_SOURCE
#include "loader.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

/* the part of local below the cache directory, when it is a clean relative name */
static int rel_of(const struct sld_server *s, const char *local, const char **rel)
{
    size_t n = strlen(s->dir);
    if (s->dirfd < 0 || strncmp(local, s->dir, n) || local[n] != '/')
        return EINVAL;
    *rel = local + n + 1;
    return sld_path_clean(*rel, 0) ? 0 : EINVAL;
}

static int open_beneath(int root, const char *rel)
{
#ifdef SYS_openat2
    static int no_openat2;
    if (!__atomic_load_n(&no_openat2, __ATOMIC_RELAXED)) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
        long fd = syscall(SYS_openat2, root, rel, &how, sizeof how);
        if (fd >= 0)
            return (int)fd;
        if (errno != ENOSYS && errno != EPERM)
            return -1; /* EPERM: a seccomp filter */
        __atomic_store_n(&no_openat2, 1, __ATOMIC_RELAXED);
    }
#endif
    /* component by component, never through a symlink (rel is clean: no "..") */
    char buf[SLD_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int cur = fcntl(root, F_DUPFD_CLOEXEC, 0);
    for (char *c = buf, *e; cur >= 0 && c; c = e) {
        if ((e = strchr(c, '/')))
            *e++ = 0;
        int nfd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        close(cur);
        cur = nfd;
        errno = err;
    }
    return cur;
}

/* the directory rel below the cache, its missing components created 0700 */
static int dir_beneath(const struct sld_server *s, const char *rel, int *dfd)
{
    int fd = open_beneath(s->dirfd, rel);
    if (fd >= 0) {
        *dfd = fd;
        return 0;
    }
    if (errno != ENOENT)
        return errno == ELOOP || errno == EXDEV ? ENOTDIR : errno;
    char buf[SLD_PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf)
        return ENAMETOOLONG;
    int cur = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 0);
    if (cur < 0)
        return errno;
    for (char *c = buf, *e; c; c = e) {
        if ((e = strchr(c, '/')))
            *e++ = 0;
        if (mkdirat(cur, c, 0700) && errno != EEXIST) {
            int err = errno;
            close(cur);
            return err;
        }
        /* an existing component must be a directory, never a symlink */
        int nfd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        close(cur);
        if (nfd < 0)
            return err == ELOOP ? ENOTDIR : err;
        cur = nfd;
    }
    *dfd = cur;
    return 0;
}

int sld_cache_dir(const struct sld_server *s, const char *local, int *dfd)
{
    const char *rel;
    int err = rel_of(s, local, &rel);
    return err ? err : dir_beneath(s, rel, dfd);
}

int sld_cache_parent(const struct sld_server *s, const char *local, int *dfd, const char **base)
{
    const char *rel;
    int err = rel_of(s, local, &rel);
    if (err)
        return err;
    const char *sl = strrchr(rel, '/');
    if (!sl) {
        *base = rel;
        return (*dfd = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 0)) < 0 ? errno : 0;
    }
    char dir[SLD_PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", (int)(sl - rel), rel);
    *base = sl + 1;
    return dir_beneath(s, dir, dfd);
}
