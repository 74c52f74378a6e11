/* wrap.c - the libc calls that interpreters use to find and read modules,
 * redirected through the load server. Each wrapper maps the path to its
 * original, asks the server when the path is one the loader serves (slc_wanted),
 * and then calls the application's own libc function (recorded at binding
 * time) on the node-local copy, on a path that does not exist (ENOENT from the
 * cached listing), or on the original (anything else): errno is always set by
 * the application's libc. stat results are the original's, from the cache. */
#define _GNU_SOURCE
#include "client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);
typedef int (*stat_fn)(const char *, struct stat *);
typedef int (*fstatat_fn)(int, const char *, struct stat *, int);
typedef int (*xstat_fn)(int, const char *, struct stat *);
typedef int (*statx_fn)(int, const char *, int, unsigned int, struct statx *);
typedef int (*access_fn)(const char *, int);
typedef ssize_t (*readlink_fn)(const char *, char *, size_t);
typedef DIR *(*opendir_fn)(const char *);

enum {
    W_OPEN,
    W_OPEN64,
    W_OPENAT,
    W_OPENAT64,
    W_FOPEN,
    W_FOPEN64,
    W_STAT,
    W_STAT64,
    W_LSTAT,
    W_LSTAT64,
    W_FSTATAT,
    W_FSTATAT64,
    W_NEWFSTATAT,
    W_XSTAT,
    W_XSTAT64,
    W_LXSTAT,
    W_LXSTAT64,
    W_STATX,
    W_ACCESS,
    W_READLINK,
    W_OPENDIR,
    W_N
};

static uintptr_t real[W_N];

/* a local path on which the application's libc fails with `err` (ENOENT: below
 * a prefix that does not exist; ENOTDIR: below a character device) */
static void errpath(int err, const char *path, char *out, size_t cap)
{
    if (err == ENOTDIR)
        snprintf(out, cap, "/dev/null/%s", "sheaf-ld");
    else
        slc_nx(path[0] == '/' ? path : "/", out, cap);
}

/* the path to use for a call on `path`: `out` set to the local copy, to a
 * nonexistent path, or left empty (use the original). op: LOOKUP or LISTDIR */
static void redirect(int op, const char *path, char *out, size_t cap)
{
    char orig[SLD_PATH_MAX];
    struct sld_reply rp;
    out[0] = 0;
    if (!path || !slc_enabled() || (op != SLD_OP_LISTDIR && slc_dir_only(path)) ||
        slc_original(path, orig, sizeof orig))
        return;
    if (!slc_wanted(orig, op == SLD_OP_LISTDIR) || slc_ask(op, orig, &rp))
        return;
    if (rp.status == 0) {
        snprintf(out, cap, "%s", rp.path);
        slc_log(op == SLD_OP_LISTDIR ? "opendir" : "open", orig, rp.path);
    } else if (rp.status == ENOENT || rp.status == ENOTDIR) {
        errpath(rp.status, orig, out, cap);
        slc_log(op == SLD_OP_LISTDIR ? "opendir" : "open", orig, rp.status == ENOENT ? "ENOENT" : "ENOTDIR");
    }
}

/* stat from the cache: 1 served (buf filled), 0 fall through; *missing set
 * to ENOENT or ENOTDIR when the listings say the original cannot exist */
static int cached_stat(const char *path, int follow, struct sld_stat *st, int *missing)
{
    char orig[SLD_PATH_MAX];
    struct sld_reply rp;
    *missing = 0;
    if (!path || !slc_enabled() || slc_dir_only(path) || slc_original(path, orig, sizeof orig))
        return 0;
    if (!slc_wanted(orig, 1) && !slc_wanted(orig, 0))
        return 0;
    if (slc_ask(follow ? SLD_OP_STAT : SLD_OP_LSTAT, orig, &rp))
        return 0;
    if (rp.status == ENOENT || rp.status == ENOTDIR) {
        *missing = rp.status;
        return 0;
    }
    if (rp.status)
        return 0;
    *st = rp.st;
    return 1;
}

static void fill_stat(struct stat *b, const struct sld_stat *s)
{
    memset(b, 0, sizeof *b);
    b->st_dev = s->dev;
    b->st_ino = s->ino;
    b->st_mode = (mode_t)s->mode;
    b->st_nlink = (nlink_t)s->nlink;
    b->st_uid = (uid_t)s->uid;
    b->st_gid = (gid_t)s->gid;
    b->st_rdev = s->rdev;
    b->st_size = (off_t)s->size;
    b->st_blksize = (blksize_t)s->blksize;
    b->st_blocks = (blkcnt_t)s->blocks;
    b->st_atim.tv_sec = s->atime_sec;
    b->st_atim.tv_nsec = s->atime_nsec;
    b->st_mtim.tv_sec = s->mtime_sec;
    b->st_mtim.tv_nsec = s->mtime_nsec;
    b->st_ctim.tv_sec = s->ctime_sec;
    b->st_ctim.tv_nsec = s->ctime_nsec;
}

static int readonly(int flags)
{
    return (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC | O_DIRECTORY
#ifdef O_TMPFILE
                                                         | O_TMPFILE
#endif
                                                         ));
}

#define PATHBUF char np[SLD_PATH_MAX + sizeof SLC_NX_PREFIX]

static int do_open(int w, const char *path, int flags, mode_t mode)
{
    PATHBUF;
    np[0] = 0;
    if (readonly(flags))
        redirect(SLD_OP_LOOKUP, path, np, sizeof np);
    return ((open_fn)real[w])(np[0] ? np : path, flags, mode);
}

static int w_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return do_open(W_OPEN, path, flags, m);
}

static int w_open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return do_open(W_OPEN64, path, flags, m);
}

static int do_openat(int w, int dfd, const char *path, int flags, mode_t mode)
{
    PATHBUF;
    np[0] = 0;
    if (readonly(flags) && path && (path[0] == '/' || dfd == AT_FDCWD))
        redirect(SLD_OP_LOOKUP, path, np, sizeof np);
    return ((openat_fn)real[w])(dfd, np[0] ? np : path, flags, mode);
}

static int w_openat(int dfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return do_openat(W_OPENAT, dfd, path, flags, m);
}

static int w_openat64(int dfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return do_openat(W_OPENAT64, dfd, path, flags, m);
}

static FILE *do_fopen(int w, const char *path, const char *mode)
{
    PATHBUF;
    np[0] = 0;
    if (mode && mode[0] == 'r' && !strchr(mode, '+'))
        redirect(SLD_OP_LOOKUP, path, np, sizeof np);
    return ((fopen_fn)real[w])(np[0] ? np : path, mode);
}

static FILE *w_fopen(const char *p, const char *m) { return do_fopen(W_FOPEN, p, m); }
static FILE *w_fopen64(const char *p, const char *m) { return do_fopen(W_FOPEN64, p, m); }

/* the stat family: served from the cache, a nonexistent path for ENOENT */
static int do_stat(int w, const char *path, struct stat *buf, int follow)
{
    struct sld_stat s;
    int missing;
    if (cached_stat(path, follow, &s, &missing)) {
        fill_stat(buf, &s);
        return 0;
    }
    PATHBUF;
    if (missing)
        errpath(missing, path, np, sizeof np);
    return ((stat_fn)real[w])(missing ? np : path, buf);
}

static int w_stat(const char *p, struct stat *b) { return do_stat(W_STAT, p, b, 1); }
static int w_stat64(const char *p, struct stat *b) { return do_stat(W_STAT64, p, b, 1); }
static int w_lstat(const char *p, struct stat *b) { return do_stat(W_LSTAT, p, b, 0); }
static int w_lstat64(const char *p, struct stat *b) { return do_stat(W_LSTAT64, p, b, 0); }

static int do_xstat(int w, int ver, const char *path, struct stat *buf, int follow)
{
    struct sld_stat s;
    int missing;
    if (ver == 1 && cached_stat(path, follow, &s, &missing)) { /* _STAT_VER_LINUX */
        fill_stat(buf, &s);
        return 0;
    }
    return ((xstat_fn)real[w])(ver, path, buf);
}

static int w_xstat(int v, const char *p, struct stat *b) { return do_xstat(W_XSTAT, v, p, b, 1); }
static int w_xstat64(int v, const char *p, struct stat *b) { return do_xstat(W_XSTAT64, v, p, b, 1); }
static int w_lxstat(int v, const char *p, struct stat *b) { return do_xstat(W_LXSTAT, v, p, b, 0); }
static int w_lxstat64(int v, const char *p, struct stat *b) { return do_xstat(W_LXSTAT64, v, p, b, 0); }

static int do_fstatat(int w, int dfd, const char *path, struct stat *buf, int flags)
{
    struct sld_stat s;
    int missing = 0;
    if (path && path[0] && (path[0] == '/' || dfd == AT_FDCWD) && !(flags & ~AT_SYMLINK_NOFOLLOW)) {
        if (cached_stat(path, !(flags & AT_SYMLINK_NOFOLLOW), &s, &missing)) {
            fill_stat(buf, &s);
            return 0;
        }
    }
    PATHBUF;
    if (missing)
        errpath(missing, path, np, sizeof np);
    return ((fstatat_fn)real[w])(dfd, missing ? np : path, buf, flags);
}

static int w_fstatat(int d, const char *p, struct stat *b, int f) { return do_fstatat(W_FSTATAT, d, p, b, f); }
static int w_fstatat64(int d, const char *p, struct stat *b, int f) { return do_fstatat(W_FSTATAT64, d, p, b, f); }
static int w_newfstatat(int d, const char *p, struct stat *b, int f) { return do_fstatat(W_NEWFSTATAT, d, p, b, f); }

static int w_statx(int dfd, const char *path, int flags, unsigned int mask, struct statx *bx)
{
    struct sld_stat s;
    int missing = 0;
    if (path && path[0] && (path[0] == '/' || dfd == AT_FDCWD) &&
        !(flags & ~(AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT)) &&
        cached_stat(path, !(flags & AT_SYMLINK_NOFOLLOW), &s, &missing)) {
        memset(bx, 0, sizeof *bx);
        bx->stx_mask = STATX_BASIC_STATS;
        bx->stx_blksize = (uint32_t)s.blksize;
        bx->stx_nlink = (uint32_t)s.nlink;
        bx->stx_uid = (uint32_t)s.uid;
        bx->stx_gid = (uint32_t)s.gid;
        bx->stx_mode = (uint16_t)s.mode;
        bx->stx_ino = s.ino;
        bx->stx_size = s.size;
        bx->stx_blocks = s.blocks;
        bx->stx_atime.tv_sec = s.atime_sec;
        bx->stx_atime.tv_nsec = (uint32_t)s.atime_nsec;
        bx->stx_mtime.tv_sec = s.mtime_sec;
        bx->stx_mtime.tv_nsec = (uint32_t)s.mtime_nsec;
        bx->stx_ctime.tv_sec = s.ctime_sec;
        bx->stx_ctime.tv_nsec = (uint32_t)s.ctime_nsec;
        bx->stx_rdev_major = major(s.rdev);
        bx->stx_rdev_minor = minor(s.rdev);
        bx->stx_dev_major = major(s.dev);
        bx->stx_dev_minor = minor(s.dev);
        return 0;
    }
    PATHBUF;
    if (missing)
        errpath(missing, path, np, sizeof np);
    return ((statx_fn)real[W_STATX])(dfd, missing ? np : path, flags, mask, bx);
}

static int w_access(const char *path, int mode)
{
    struct sld_stat s;
    int missing = 0;
    if (mode == F_OK && cached_stat(path, 1, &s, &missing))
        return 0;
    PATHBUF;
    if (missing)
        errpath(missing, path, np, sizeof np);
    return ((access_fn)real[W_ACCESS])(missing ? np : path, mode);
}

/* a link that resolves into the cache (/proc/self/exe of a bootstrapped
 * program) reads as the original; a served path that is not a symlink (the
 * cached lstat: CPython reads the script's path) fails with EINVAL from a
 * readlink of "/", a missing one with ENOENT/ENOTDIR, without the tree */
static ssize_t w_readlink(const char *path, char *buf, size_t size)
{
    char tmp[SLD_PATH_MAX];
    struct sld_stat s;
    int missing = 0;
    if (path && path[0] && cached_stat(path, 0, &s, &missing) && !S_ISLNK(s.mode))
        return ((readlink_fn)real[W_READLINK])("/", tmp, sizeof tmp);
    PATHBUF;
    if (missing) {
        errpath(missing, path, np, sizeof np);
        return ((readlink_fn)real[W_READLINK])(np, tmp, sizeof tmp);
    }
    ssize_t r = ((readlink_fn)real[W_READLINK])(path, tmp, sizeof tmp - 1);
    if (r < 0)
        return r;
    tmp[r] = 0;
    const char *o = slc_enabled() ? slc_uncached(tmp) : NULL;
    const char *src = o ? o : tmp;
    size_t n = o ? strlen(o) : (size_t)r;
    if (n > size)
        n = size;
    memcpy(buf, src, n);
    return (ssize_t)n;
}

static DIR *w_opendir(const char *path)
{
    PATHBUF;
    redirect(SLD_OP_LISTDIR, path, np, sizeof np);
    return ((opendir_fn)real[W_OPENDIR])(np[0] ? np : path);
}

static const struct {
    const char *name;
    int id;
    void *fn;
} table[] = {
    {"open", W_OPEN, (void *)w_open},
    {"open64", W_OPEN64, (void *)w_open64},
    {"openat", W_OPENAT, (void *)w_openat},
    {"openat64", W_OPENAT64, (void *)w_openat64},
    {"fopen", W_FOPEN, (void *)w_fopen},
    {"fopen64", W_FOPEN64, (void *)w_fopen64},
    {"stat", W_STAT, (void *)w_stat},
    {"stat64", W_STAT64, (void *)w_stat64},
    {"lstat", W_LSTAT, (void *)w_lstat},
    {"lstat64", W_LSTAT64, (void *)w_lstat64},
    {"fstatat", W_FSTATAT, (void *)w_fstatat},
    {"fstatat64", W_FSTATAT64, (void *)w_fstatat64},
    {"newfstatat", W_NEWFSTATAT, (void *)w_newfstatat},
    {"__xstat", W_XSTAT, (void *)w_xstat},
    {"__xstat64", W_XSTAT64, (void *)w_xstat64},
    {"__lxstat", W_LXSTAT, (void *)w_lxstat},
    {"__lxstat64", W_LXSTAT64, (void *)w_lxstat64},
    {"statx", W_STATX, (void *)w_statx},
    {"access", W_ACCESS, (void *)w_access},
    {"readlink", W_READLINK, (void *)w_readlink},
    {"opendir", W_OPENDIR, (void *)w_opendir},
};

uintptr_t slc_wrapper_for(const char *name, uintptr_t realfn)
{
    if (!name || !realfn)
        return 0;
    uintptr_t rp = slc_realpath_wrapper_for(name, realfn);
    if (rp)
        return rp;
    if (name[0] != 'o' && name[0] != 'f' && name[0] != 's' && name[0] != 'l' && name[0] != '_' && name[0] != 'a' &&
        name[0] != 'r' && name[0] != 'n')
        return 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name))
            continue;
        if (!real[table[i].id])
            real[table[i].id] = realfn;
        return (uintptr_t)table[i].fn;
    }
    return 0;
}
