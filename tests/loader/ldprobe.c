/* ldprobe.c - tests of the load server through its public API
 * (include/sheaf_loader.h), each with a server of its own in a temporary base:
 *   ldprobe peer BASE     a client of another uid is refused (root only: the
 *                         child becomes nobody but keeps CAP_DAC_OVERRIDE, so
 *                         that only the server's SO_PEERCRED check stops it)
 *   ldprobe garbage BASE  malformed frames close their connection; the server
 *                         goes on serving; counters as expected
 *   ldprobe stale BASE    the cache of a dead server is removed at the next
 *                         start, without following a symlink out of it
 *   ldprobe realpath BASE the REALPATH request: answers as realpath(3) (path or
 *                         errno), each path resolved once; malformed and
 *                         oversized requests close the connection
 * Exit 0 pass, 1 fail, 77 skipped (reason printed). */
#define _GNU_SOURCE
#include "sheaf_loader.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        fprintf(stderr, "ldprobe: FAIL: " __VA_ARGS__);                                                                \
        fputc('\n', stderr);                                                                                           \
        return 1;                                                                                                      \
    } while (0)

static pid_t start(const char *base, char *sock, size_t cap)
{
    int p[2];
    if (pipe(p))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char err[256];
        close(p[0]);
        _exit(sheaf_loader_serve(base, 1, p[1], err, sizeof err) ? 1 : 0);
    }
    close(p[1]);
    ssize_t r = read(p[0], sock, cap - 1);
    close(p[0]);
    if (r <= 1)
        return -1;
    sock[r - 1] = 0;
    return pid;
}

static int stop(const char *sock, pid_t pid)
{
    int st = 0;
    if (sheaf_loader_request(sock, SHEAF_LOADER_SHUTDOWN, NULL, NULL, 0, 5000) != 0)
        kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static unsigned long long counter(const char *sock, const char *name)
{
    unsigned long long c[SHEAF_LOADER_NCOUNTERS];
    if (sheaf_loader_stats(sock, c, SHEAF_LOADER_NCOUNTERS, 5000))
        return ~0ull;
    for (int i = 0; i < SHEAF_LOADER_NCOUNTERS; i++)
        if (!strcmp(sheaf_loader_counter_name(i), name))
            return c[i];
    return ~0ull;
}

static int peer(const char *base)
{
    if (geteuid() != 0) {
        printf("SKIP: needs root to become another user\n");
        return 77;
    }
    char sock[4096];
    pid_t srv = start(base, sock, sizeof sock);
    if (srv < 0)
        FAIL("server did not start");
    if (sheaf_loader_request(sock, SHEAF_LOADER_STAT, "/", NULL, 0, 5000) != 0)
        FAIL("same uid refused");
    pid_t c = fork();
    if (c == 0) {
        prctl(PR_SET_KEEPCAPS, 1);
        if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
            _exit(3);
        struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct d[2];
        memset(d, 0, sizeof d);
        d[0].effective = d[0].permitted = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
        if (syscall(SYS_capset, &h, d))
            _exit(4);
        int r = sheaf_loader_request(sock, SHEAF_LOADER_STAT, "/", NULL, 0, 5000);
        _exit(r == -1 ? 0 : 2);
    }
    int st = 0;
    waitpid(c, &st, 0);
    unsigned long long refused = counter(sock, "refused");
    int rc = stop(sock, srv);
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 4) {
        printf("SKIP: cannot become nobody with CAP_DAC_OVERRIDE here (%d)\n", WEXITSTATUS(st));
        return 77;
    }
    if (WEXITSTATUS(st) != 0)
        FAIL("the server answered a client of another uid");
    if (refused != 1)
        FAIL("refused counter %llu, expected 1", refused);
    if (rc != 0)
        FAIL("server exit %d", rc);
    printf("peer: uid 65534 refused (refused=1), uid 0 served\n");
    return 0;
}

static int raw(const char *sock, const void *buf, size_t n)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof a.sun_path)
        return -4;
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -2;
    }
    if (write(fd, buf, n) != (ssize_t)n) {
        close(fd);
        return -3;
    }
    char b[16];
    ssize_t r = read(fd, b, sizeof b); /* 0: the server closed it */
    close(fd);
    return (int)r;
}

static int garbage(const char *base)
{
    char sock[4096];
    pid_t srv = start(base, sock, sizeof sock);
    if (srv < 0)
        FAIL("server did not start");
    unsigned char bad_magic[16] = {1, 2, 3, 4, 1, 0, 0, 0, 4, 0, 0, 0};
    unsigned char huge[12] = {'S', 'H', 'L', 'D', 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f};
    /* valid header, op LOOKUP, string length larger than the payload */
    unsigned char trunc[20] = {'S', 'H', 'L', 'D', 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 200, 0, 0, 0};
    unsigned char badop[20] = {'S', 'H', 'L', 'D', 99, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    unsigned char nul[22] = {'S', 'H', 'L', 'D', 2, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, '/', 0};
    struct {
        const char *what;
        const void *b;
        size_t n;
    } cases[] = {{"bad magic", bad_magic, sizeof bad_magic},
                 {"huge length", huge, sizeof huge},
                 {"truncated string", trunc, sizeof trunc},
                 {"unknown op", badop, sizeof badop},
                 {"NUL in path", nul, sizeof nul}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int r = raw(sock, cases[i].b, cases[i].n);
        if (r != 0)
            FAIL("%s: connection not closed by the server (%d)", cases[i].what, r);
    }
    char out[4096];
    if (sheaf_loader_request(sock, SHEAF_LOADER_LOOKUP, "relative/path.so", out, sizeof out, 5000) != EINVAL)
        FAIL("relative path not refused with EINVAL");
    if (sheaf_loader_request(sock, SHEAF_LOADER_STAT, "/nonexistent-dir-xyz/a.so", NULL, 0, 5000) != ENOENT)
        FAIL("missing file not ENOENT");
    if (sheaf_loader_request(sock, SHEAF_LOADER_LOOKUP, "/proc/self/status", out, sizeof out, 5000) == 0 &&
        strncmp(out, base, strlen(base)))
        FAIL("copy outside the cache: %s", out);
    unsigned long long listings = counter(sock, "listings");
    if (sheaf_loader_request(sock, SHEAF_LOADER_STAT, "/nonexistent-dir-xyz/b.so", NULL, 0, 5000) != ENOENT ||
        counter(sock, "listings") != listings)
        FAIL("a second miss in the same directory read the file system again");
    int rc = stop(sock, srv);
    if (rc != 0)
        FAIL("server exit %d", rc);
    struct stat st;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", sock);
    *strrchr(dir, '/') = 0;
    if (!lstat(dir, &st))
        FAIL("cache directory %s left after shutdown", dir);
    printf("garbage: 5 malformed frames dropped, server alive, cache removed at exit\n");
    return 0;
}

static int stale(const char *base)
{
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char d[4096], f[4200], l[4200], keep[4096];
    snprintf(d, sizeof d, "%s/sheaf-ld.%u.%d", base, (unsigned)getuid(), (int)dead);
    snprintf(keep, sizeof keep, "%s/keep", base);
    int fd = open(keep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || close(fd))
        FAIL("cannot create %s", keep);
    if (mkdir(d, 0700))
        FAIL("mkdir %s: %s", d, strerror(errno));
    snprintf(f, sizeof f, "%s/f", d);
    mkdir(f, 0700);
    snprintf(l, sizeof l, "%s/f/outside", d);
    if (symlink(base, l))
        FAIL("symlink");
    char sock[4096];
    pid_t srv = start(base, sock, sizeof sock);
    if (srv < 0)
        FAIL("server did not start");
    struct stat st;
    int gone = lstat(d, &st) != 0;
    int kept = lstat(keep, &st) == 0;
    stop(sock, srv);
    if (!gone)
        FAIL("stale cache %s not removed", d);
    if (!kept)
        FAIL("a file outside the stale cache was removed through its symlink");
    printf("stale: cache of dead pid %d removed, symlink not followed\n", (int)dead);
    return 0;
}

static int touch(const char *p)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    return fd < 0 ? -1 : close(fd);
}

/* one REALPATH request against realpath(3) of the same path */
static int rp_same(const char *sock, const char *path)
{
    char out[4096], want[PATH_MAX];
    errno = 0;
    char *w = realpath(path, want);
    int werr = w ? 0 : errno;
    int r = sheaf_loader_request(sock, SHEAF_LOADER_REALPATH, path, out, sizeof out, 5000);
    if (r != werr)
        FAIL("realpath %s: server %d, realpath(3) %d", path, r, werr);
    if (!r && strcmp(out, want))
        FAIL("realpath %s: server %s, realpath(3) %s", path, out, want);
    return 0;
}

static int realpath_op(const char *base)
{
    char t[4096], p[4300], q[4300];
    snprintf(t, sizeof t, "%s/rp", base);
    mkdir(t, 0700);
    snprintf(p, sizeof p, "%s/real", t);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/real/m.py", t);
    snprintf(q, sizeof q, "%s/link", t);
    unlink(q);
    if (touch(p) || symlink("real", q))
        FAIL("cannot build %s", t);
    snprintf(q, sizeof q, "%s/loop", t);
    unlink(q);
    if (symlink("loop", q))
        FAIL("symlink %s", q);
    char sock[4096];
    pid_t srv = start(base, sock, sizeof sock);
    if (srv < 0)
        FAIL("server did not start");
    const char *cases[] = {"link/m.py",   "real/m.py",  "link",   "real/nothere.py", "nodir/x.py",
                           "real/m.py/x", "real/m.py/", "loop",   "loop/x.py",       "link/../real/./m.py",
                           "real/",       "link/.",     "link/.."};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", t, cases[i]);
        if (rp_same(sock, p))
            return 1;
    }
    /* ENOENT from the listing: no realpath call, no second listing */
    snprintf(p, sizeof p, "%s/real/gone.py", t);
    unsigned long long rps = counter(sock, "realpaths"), lst = counter(sock, "listings");
    if (sheaf_loader_request(sock, SHEAF_LOADER_REALPATH, p, NULL, 0, 5000) != ENOENT ||
        counter(sock, "realpaths") != rps || counter(sock, "listings") != lst)
        FAIL("a missing name of a listed directory: not ENOENT from the listing");
    /* every path resolved once: asking all again reads nothing */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", t, cases[i]);
        if (rp_same(sock, p))
            return 1;
    }
    if (counter(sock, "realpaths") != rps || counter(sock, "listings") != lst || counter(sock, "stats") != 0)
        FAIL("a repeated realpath read the file system again");
    char out[4096];
    if (sheaf_loader_request(sock, SHEAF_LOADER_REALPATH, "real/m.py", out, sizeof out, 5000) != EINVAL ||
        sheaf_loader_request(sock, SHEAF_LOADER_REALPATH, "", out, sizeof out, 5000) != EINVAL)
        FAIL("a relative or empty path not refused with EINVAL");
    /* malformed REALPATH frames: the connection is closed, the server goes on */
    static unsigned char big[12 + 8 + 4096];
    memcpy(big, "SHLD\x07\0\0\0", 8);
    big[8] = (8 + 4096) & 0xff;
    big[9] = (8 + 4096) >> 8; /* payload: flags, string */
    big[16] = 4096 & 0xff;
    big[17] = 4096 >> 8; /* a path of SLD_PATH_MAX bytes */
    memset(big + 20, 'a', 4096);
    big[20] = '/';
    unsigned char huge[12] = {'S', 'H', 'L', 'D', 7, 0, 0, 0, 0, 0, 1, 0};
    unsigned char trunc[20] = {'S', 'H', 'L', 'D', 7, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0};
    unsigned char nul[22] = {'S', 'H', 'L', 'D', 7, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, '/', 0};
    struct {
        const char *what;
        const void *b;
        size_t n;
    } bad[] = {{"oversized path", big, sizeof big},
               {"frame over SLD_MSG_MAX", huge, sizeof huge},
               {"truncated string", trunc, sizeof trunc},
               {"NUL in path", nul, sizeof nul}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = raw(sock, bad[i].b, bad[i].n);
        if (r != 0)
            FAIL("realpath, %s: connection not closed by the server (%d)", bad[i].what, r);
    }
    snprintf(p, sizeof p, "%s/link/m.py", t);
    if (rp_same(sock, p))
        return 1;
    int rc = stop(sock, srv);
    if (rc != 0)
        FAIL("server exit %d", rc);
    printf("realpath: %zu paths as realpath(3) (ENOENT, ENOTDIR, ELOOP, symlinks, ., .., trailing /), "
           "each resolved once, 4 malformed requests refused\n",
           sizeof cases / sizeof cases[0]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ldprobe peer|garbage|stale|realpath BASE\n");
        return 2;
    }
    if (mkdir(argv[2], 0700) && errno != EEXIST)
        FAIL("mkdir %s", argv[2]);
    if (!strcmp(argv[1], "peer"))
        return peer(argv[2]);
    if (!strcmp(argv[1], "garbage"))
        return garbage(argv[2]);
    if (!strcmp(argv[1], "stale"))
        return stale(argv[2]);
    if (!strcmp(argv[1], "realpath"))
        return realpath_op(argv[2]);
    return 2;
}
