/* cachedir.c - the server's cache directory: <base>/sheaf-ld.<uid>.<pid>,
 * mode 0700, created without following symlinks; the directories of servers
 * that died (their pid no longer runs) are removed when the next one starts. */
#define _GNU_SOURCE
#include "loader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#define TMPFS_MAGIC_ 0x01021994

const char *sld_default_base(void)
{
    struct statfs fs;
    if (!statfs("/dev/shm", &fs) && fs.f_type == TMPFS_MAGIC_ && !access("/dev/shm", W_OK))
        return "/dev/shm";
    const char *t = getenv("TMPDIR");
    return t && t[0] == '/' ? t : "/tmp";
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

int sld_remove_tree(const char *path)
{
    /* FTW_PHYS: symlinks are removed, never followed */
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

void sld_cleanup_stale(const char *base)
{
    char prefix[64], path[SLD_PATH_MAX];
    snprintf(prefix, sizeof prefix, "sheaf-ld.%u.", (unsigned)getuid());
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t pl = strlen(prefix);
        if (strncmp(e->d_name, prefix, pl))
            continue;
        char *end;
        long pid = strtol(e->d_name + pl, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* still running */
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", base, e->d_name) >= (int)sizeof path)
            continue;
        if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
            continue;
        sld_remove_tree(path);
    }
    closedir(d);
}

int sld_cachedir_create(struct sld_server *s, const char *base, char *err, size_t errlen)
{
    s->dirfd = -1;
    if (!base || !base[0])
        base = sld_default_base();
    sld_cleanup_stale(base);
    if (snprintf(s->dir, sizeof s->dir, "%s/sheaf-ld.%u.%ld", base, (unsigned)getuid(), (long)getpid()) >=
            (int)sizeof s->dir ||
        snprintf(s->sock, sizeof s->sock, "%s/sock", s->dir) >= (int)sizeof s->sock) {
        snprintf(err, errlen, "sheaf-ld: cache directory name under %s is too long", base);
        return -1;
    }
    /* mkdir never follows a symlink in its last component (EEXIST instead) */
    if (mkdir(s->dir, 0700)) {
        snprintf(err, errlen, "sheaf-ld: cannot create cache directory %s: %s", s->dir, strerror(errno));
        return -1;
    }
    struct stat st;
    s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s->dirfd < 0 || fstat(s->dirfd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        snprintf(err, errlen, "sheaf-ld: cache directory %s is not a private directory", s->dir);
        return -1;
    }
    /* a symlink to itself: the clients' realpath of it fails with ELOOP, which
   * is how a client makes the application's libc set that errno */
    char loop[SLD_PATH_MAX];
    if (snprintf(loop, sizeof loop, "%s/%s", s->dir, SLD_ELOOP_NAME) >= (int)sizeof loop ||
        symlink(SLD_ELOOP_NAME, loop)) {
        snprintf(err, errlen, "sheaf-ld: cannot create %s/%s: %s", s->dir, SLD_ELOOP_NAME, strerror(errno));
        sld_remove_tree(s->dir);
        return -1;
    }
    return 0;
}
