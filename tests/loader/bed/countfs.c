/* countfs.c - a read-only, counting FUSE pass-through file system (libfuse3,
 * low-level API): the "shared file system" of the loader measurement bed.
 *
 *   countfs [options] SOURCE MOUNTPOINT
 *     --dump FILE         counts as JSON, written on SIGUSR1 and at unmount
 *     --trace FILE        one TSV line per counted request (op pid name errno bytes)
 *     --latency-us N      sleep N us in every metadata request (lookup, getattr,
 *                         readlink, open, opendir, readdir, statfs)
 *     --read-latency-us N sleep N us in every READ request
 *     --keep-cache        let the kernel keep file pages across opens (one
 *                         page cache for the machine); default: every open
 *                         drops them, so each process reads the bytes itself
 *     --ready FILE        create FILE once mounted
 *
 * Kernel caching of names and attributes is off (entry/attr timeout 0, no
 * negative entries): every path walk, stat and failed search reaches the
 * server, as on NFS/Lustre without client caching. Requests are served by
 * one thread, like one metadata server. Counts are per client process (the
 * pid of each request), per node (the pid's UTS namespace, named by the host
 * name inside it) and in total. Runs in the foreground; ends when unmounted
 * (umount MOUNTPOINT) or on SIGINT/SIGTERM. Exit 0, or 1 with a message. */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <fuse_lowlevel.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "countfs_stats.h"

static int srcfd = -1;
static unsigned meta_lat_us, read_lat_us;
static int keep_cache;
static const char *dump_path;

/* ---- inode table: node id -> path relative to SOURCE ("." is the root) ---- */
static char **paths; /* paths[ino - 1] */
static size_t npaths, cappaths;
static size_t *hslots; /* open addressing: ino or 0 */
static size_t nslots;

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int rehash(size_t n)
{
    size_t *ns = calloc(n, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < npaths; i++) {
        size_t j = hash_str(paths[i]) & (n - 1);
        while (ns[j])
            j = (j + 1) & (n - 1);
        ns[j] = i + 1;
    }
    free(hslots);
    hslots = ns;
    nslots = n;
    return 0;
}

/* intern: node id of path (added if new); 0 on out of memory */
static fuse_ino_t intern(const char *path)
{
    size_t j = hash_str(path) & (nslots - 1);
    for (; hslots[j]; j = (j + 1) & (nslots - 1))
        if (strcmp(paths[hslots[j] - 1], path) == 0)
            return hslots[j];
    if (npaths == cappaths) {
        size_t nc = cappaths ? cappaths * 2 : 256;
        char **np = realloc(paths, nc * sizeof *np);
        if (!np)
            return 0;
        paths = np;
        cappaths = nc;
    }
    char *d = strdup(path);
    if (!d)
        return 0;
    paths[npaths++] = d;
    hslots[j] = npaths;
    if (npaths * 2 > nslots && rehash(nslots * 2) != 0)
        return 0;
    return npaths;
}

static const char *path_of(fuse_ino_t ino) { return ino >= 1 && ino <= npaths ? paths[ino - 1] : NULL; }

/* ---- helpers ---- */
static pid_t req_pid(fuse_req_t req) { return fuse_req_ctx(req)->pid; }

static void lat(unsigned us)
{
    if (us) {
        struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}

/* account: count one request of kind op (and its failure for lookups) */
static void account(fuse_req_t req, enum cfs_op op, const char *tag, const char *name, int err)
{
    pid_t pid = req_pid(req);
    cfs_count(pid, op, 1);
    if (op == CFS_LOOKUP && err == ENOENT)
        cfs_count(pid, CFS_LOOKUP_ENOENT, 1);
    cfs_trace(tag, pid, name ? name : "?", err, 0);
    lat(meta_lat_us);
}

static int stat_ino(fuse_ino_t ino, struct stat *st)
{
    const char *p = path_of(ino);
    if (!p)
        return ESTALE;
    if (fstatat(srcfd, p, st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno;
    st->st_ino = ino;
    return 0;
}

/* ---- operations ---- */
static void cfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    const char *pp = path_of(parent);
    char p[PATH_MAX];
    int err = 0;
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    if (!pp)
        err = ESTALE;
    else if (snprintf(p, sizeof p, "%s%s%s", strcmp(pp, ".") ? pp : "", strcmp(pp, ".") ? "/" : "", name) >=
             (int)sizeof p)
        err = ENAMETOOLONG;
    else if (fstatat(srcfd, p, &e.attr, AT_SYMLINK_NOFOLLOW) != 0)
        err = errno;
    else if (!(e.ino = intern(p)))
        err = ENOMEM;
    account(req, CFS_LOOKUP, "lookup", pp && err != ENAMETOOLONG ? p : name, err);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    e.attr.st_ino = e.ino;
    e.generation = 1;
    e.attr_timeout = 0;
    e.entry_timeout = 0;
    fuse_reply_entry(req, &e);
}

static void cfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct stat st;
    int err = stat_ino(ino, &st);
    account(req, CFS_GETATTR, "getattr", path_of(ino), err);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_attr(req, &st, 0);
}

static void cfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
    const char *p = path_of(ino);
    char buf[PATH_MAX];
    ssize_t n = p ? readlinkat(srcfd, p, buf, sizeof buf - 1) : -1;
    int err = !p ? ESTALE : n < 0 ? errno : 0;
    account(req, CFS_READLINK, "readlink", p, err);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    buf[n] = 0;
    fuse_reply_readlink(req, buf);
}

static void cfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    const char *p = path_of(ino);
    int err = 0, fd = -1;
    if (!p)
        err = ESTALE;
    else if ((fi->flags & O_ACCMODE) != O_RDONLY)
        err = EROFS;
    else if ((fd = openat(srcfd, p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        err = errno;
    account(req, CFS_OPEN, "open", p, err);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = (uint64_t)fd;
    fi->keep_cache = keep_cache ? 1 : 0;
    if (fuse_reply_open(req, fi) != 0)
        close(fd);
}

static void cfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    pid_t pid = req_pid(req);
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    ssize_t n = pread((int)fi->fh, buf, size, off);
    int err = n < 0 ? errno : 0;
    cfs_count(pid, CFS_READ, 1);
    if (n > 0)
        cfs_count(pid, CFS_READ_BYTES, (uint64_t)n);
    cfs_trace("read", pid, path_of(ino) ? path_of(ino) : "?", err, n > 0 ? (uint64_t)n : 0);
    lat(read_lat_us);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_buf(req, buf, (size_t)n);
    free(buf);
}

static void cfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    close((int)fi->fh);
    fuse_reply_err(req, 0);
}

struct dirh {
    DIR *d;
    off_t off; /* position of the next entry */
};

static void cfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    const char *p = path_of(ino);
    int err = 0, fd = -1;
    struct dirh *h = calloc(1, sizeof *h);
    if (!h)
        err = ENOMEM;
    else if (!p)
        err = ESTALE;
    else if ((fd = openat(srcfd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        err = errno;
    else if (!(h->d = fdopendir(fd))) {
        err = errno;
        close(fd);
    }
    account(req, CFS_OPENDIR, "opendir", p, err);
    if (err) {
        free(h);
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)h;
    if (fuse_reply_open(req, fi) != 0) {
        closedir(h->d);
        free(h);
    }
}

static void cfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
    account(req, CFS_READDIR, "readdir", path_of(ino), 0);
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    if (off != h->off) {
        seekdir(h->d, off);
        h->off = off;
    }
    size_t used = 0;
    for (;;) {
        errno = 0;
        long pos = telldir(h->d);
        struct dirent *de = readdir(h->d);
        if (!de)
            break;
        struct stat st = {.st_ino = de->d_ino ? de->d_ino : 1, .st_mode = (mode_t)DTTOIF(de->d_type)};
        off_t next = telldir(h->d);
        size_t need = fuse_add_direntry(req, buf + used, size - used, de->d_name, &st, next);
        if (need > size - used) {
            seekdir(h->d, pos);
            break;
        }
        used += need;
        h->off = next;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void cfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
    closedir(h->d);
    free(h);
    fuse_reply_err(req, 0);
}

static void cfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
    struct statvfs sv;
    int err = fstatvfs(srcfd, &sv) != 0 ? errno : 0;
    account(req, CFS_STATFS, "statfs", path_of(ino), err);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops ops = {
    .lookup = cfs_lookup,
    .getattr = cfs_getattr,
    .readlink = cfs_readlink,
    .open = cfs_open,
    .read = cfs_read,
    .release = cfs_release,
    .opendir = cfs_opendir,
    .readdir = cfs_readdir,
    .releasedir = cfs_releasedir,
    .statfs = cfs_statfs,
};

/* dump_thread: the only thread that takes SIGUSR1 (blocked elsewhere) */
static void *dump_thread(void *arg)
{
    sigset_t *set = arg;
    for (;;) {
        int sig;
        if (sigwait(set, &sig) == 0 && sig == SIGUSR1 && dump_path && cfs_dump(dump_path, 0) != 0)
            fprintf(stderr, "countfs: %s: %s\n", dump_path, strerror(errno));
    }
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: countfs [--dump FILE] [--trace FILE] [--latency-us N] "
                    "[--read-latency-us N] [--keep-cache] [--ready FILE] SOURCE MOUNTPOINT\n");
    return 1;
}

static int parse_us(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > 10000000UL || s[0] == '-')
        return -1;
    *out = (unsigned)v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *trace = NULL, *ready = NULL, *pos[2];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--dump") && more)
            dump_path = argv[++i];
        else if (!strcmp(a, "--trace") && more)
            trace = argv[++i];
        else if (!strcmp(a, "--ready") && more)
            ready = argv[++i];
        else if (!strcmp(a, "--latency-us") && more) {
            if (parse_us(argv[++i], &meta_lat_us) != 0)
                return usage();
        } else if (!strcmp(a, "--read-latency-us") && more) {
            if (parse_us(argv[++i], &read_lat_us) != 0)
                return usage();
        } else if (!strcmp(a, "--keep-cache"))
            keep_cache = 1;
        else if (a[0] == '-' || npos == 2)
            return usage();
        else
            pos[npos++] = a;
    }
    if (npos != 2)
        return usage();
    srcfd = open(pos[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (srcfd < 0) {
        fprintf(stderr, "countfs: %s: %s\n", pos[0], strerror(errno));
        return 1;
    }
    if (rehash(1024) != 0 || intern(".") != FUSE_ROOT_ID) {
        fprintf(stderr, "countfs: out of memory\n");
        return 1;
    }
    if (trace && cfs_trace_open(trace) != 0) {
        fprintf(stderr, "countfs: %s: %s\n", trace, strerror(errno));
        return 1;
    }
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_t dt;
    if (pthread_create(&dt, NULL, dump_thread, &set) != 0) {
        fprintf(stderr, "countfs: cannot start the dump thread\n");
        return 1;
    }
    pthread_detach(dt);

    char fsname[PATH_MAX + 64];
    snprintf(fsname, sizeof fsname, "-oro,allow_other,fsname=countfs:%s,subtype=countfs", pos[0]);
    char *fargv[] = {argv[0], fsname, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(2, fargv);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
    if (!se) {
        fuse_opt_free_args(&args);
        fprintf(stderr, "countfs: cannot create the FUSE session\n");
        return 1;
    }
    /* injected latency: sleep as exactly as the kernel allows (1 ns timer
     * slack instead of 50 us on the serving thread) */
    if (meta_lat_us || read_lat_us)
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    int rc = 1;
    if (fuse_set_signal_handlers(se) != 0)
        fprintf(stderr, "countfs: cannot install signal handlers\n");
    else if (fuse_session_mount(se, pos[1]) != 0)
        fprintf(stderr, "countfs: cannot mount %s (needs /dev/fuse and root)\n", pos[1]);
    else {
        if (ready) {
            int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
            if (fd >= 0)
                close(fd);
        }
        rc = fuse_session_loop(se) < 0 ? 1 : 0;
        fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    fuse_opt_free_args(&args);
    if (dump_path && cfs_dump(dump_path, 1) != 0) {
        fprintf(stderr, "countfs: %s: %s\n", dump_path, strerror(errno));
        rc = 1;
    }
    return rc;
}
