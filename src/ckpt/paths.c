/* paths.c - checked path joins and race-free removal of a step directory.
 *
 * ckf_join never cuts a path: one longer than CKF_PATH_BYTES is an error
 * (ENAMETOOLONG) naming it. ckf_rmtree walks a tree through directory fds
 * (openat / unlinkat / fdopendir, O_NOFOLLOW | O_DIRECTORY): an entry is first
 * unlinked as a file; only what unlinkat refuses as a directory is opened, and
 * opened without following a symlink, so a directory swapped for a symlink
 * between two calls is removed as a link and its target is never touched. */
#include "format.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { RM_MAX_DEPTH = 16 }; /* step dirs hold one level of subdirectories */

int ckf_join(char *out, size_t n, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = name ? strlen(name) : 0;
    size_t need = a + (name ? 1 + b : 0) + 1;
    if (need > n || need > CKF_PATH_BYTES) {
        if (n)
            out[0] = 0;
        return ckf_err(ENAMETOOLONG, "%.200s%s%s%.60s: path of %zu bytes is longer than the limit (%u bytes)", dir,
                       a > 200 ? "..." : "", name ? "/" : "", name ? name : "", need - 1, (unsigned)CKF_PATH_BYTES - 1);
    }
    memcpy(out, dir, a);
    if (name) {
        out[a] = '/';
        memcpy(out + a + 1, name, b);
    }
    out[need - 1] = 0;
    return 0;
}

/* remove every entry of the directory open as fd (fd is consumed) */
static int rm_entries(int fd, int depth, const char *top)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return ckf_err(e, "%s: fdopendir: %s", top, strerror(e));
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, ".."))
            continue;
        if (!unlinkat(dirfd(d), nm, 0) || errno == ENOENT)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            int x = errno;
            rc = rc ? rc : ckf_err(x, "%s: unlink %s: %s", top, nm, strerror(x));
            continue;
        }
        if (depth >= RM_MAX_DEPTH) {
            rc = rc ? rc : ckf_err(ELOOP, "%s: %s: deeper than %d levels", top, nm, RM_MAX_DEPTH);
            continue;
        }
        int sub = openat(dirfd(d), nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) { /* swapped for a non-directory since: unlink that (a link is not followed) */
            int x = errno;
            if (unlinkat(dirfd(d), nm, 0) && errno != ENOENT)
                rc = rc ? rc : ckf_err(x, "%s: open %s: %s", top, nm, strerror(x));
            continue;
        }
        int r = rm_entries(sub, depth + 1, top);
        rc = rc ? rc : r;
        if (unlinkat(dirfd(d), nm, AT_REMOVEDIR) && errno != ENOENT && !rc) {
            int x = errno;
            rc = ckf_err(x, "%s: rmdir %s: %s", top, nm, strerror(x));
        }
    }
    closedir(d);
    return rc;
}

int ckf_rmtree(const char *dir)
{
    if (strlen(dir) >= CKF_PATH_BYTES)
        return ckf_join(NULL, 0, dir, NULL);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        if (errno == ENOTDIR || errno == ELOOP) /* a file or a symlink: remove it, not its target */
            return unlink(dir) && errno != ENOENT ? ckf_err(errno, "%s: unlink: %s", dir, strerror(errno)) : 0;
        return ckf_err(errno, "%s: %s", dir, strerror(errno));
    }
    int rc = rm_entries(fd, 0, dir);
    if (rmdir(dir) && errno != ENOENT && !rc)
        rc = ckf_err(errno, "%s: rmdir: %s", dir, strerror(errno));
    return rc;
}
