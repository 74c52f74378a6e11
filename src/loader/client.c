/* client.c - the audit client's configuration (environment), its connection
 * to the node's load server and the mapping between original and cached
 * paths. A server that cannot be reached, answers garbage or times out
 * disables the client for the rest of the process: every call then goes to
 * the file system as without the loader. */
#define _GNU_SOURCE
#include "client.h"
#include "loader.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct {
    int inited, enabled;
    char sock[SLD_PATH_MAX];
    char cache[SLD_PATH_MAX]; /* the server's cache directory (dirname of sock) */
    size_t cachelen;
    char prefixes[SLD_PATH_MAX];
    char pydirs[SLD_PATH_MAX]; /* inferred Python directories: stats, listings; files by suffix */
    char suffixes[1024];
    int timeout_ms;
    int fd;
    pid_t pid;
    int logfd;
} g = {.fd = -1, .logfd = -1};

static atomic_flag lock = ATOMIC_FLAG_INIT;
static atomic_long owner;    /* thread holding the lock (re-entry falls back) */
static atomic_int owner_pid; /* its process: a lock inherited through fork is broken */

void slc_init(void)
{
    if (g.inited)
        return;
    g.inited = 1;
    const char *s = getenv(SHEAF_LOADER_ENV_SOCKET);
    if (!s || s[0] != '/' || strlen(s) >= sizeof g.sock)
        return;
    strcpy(g.sock, s);
    strcpy(g.cache, s);
    char *sl = strrchr(g.cache, '/');
    *sl = 0;
    g.cachelen = strlen(g.cache);
    const char *p = getenv(SHEAF_LOADER_ENV_PREFIXES);
    if (p)
        snprintf(g.prefixes, sizeof g.prefixes, "%s", p);
    const char *y = getenv(SHEAF_LOADER_ENV_PYDIRS);
    if (y && strlen(y) < sizeof g.pydirs) /* never a cut entry */
        strcpy(g.pydirs, y);
    const char *x = getenv(SHEAF_LOADER_ENV_SUFFIXES);
    if (x)
        snprintf(g.suffixes, sizeof g.suffixes, "%s", x);
    const char *t = getenv(SHEAF_LOADER_ENV_TIMEOUT);
    g.timeout_ms = t ? atoi(t) : 0;
    if (g.timeout_ms <= 0)
        g.timeout_ms = 20000;
    const char *l = getenv(SHEAF_LOADER_ENV_LOG);
    if (l && l[0] == '/')
        g.logfd = open(l, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (g.logfd >= 0 && g.logfd < 100) {
        /* keep it away from the descriptors programs close or reuse */
        int hi = fcntl(g.logfd, F_DUPFD_CLOEXEC, 900);
        if (hi >= 0) {
            close(g.logfd);
            g.logfd = hi;
        }
    }
    g.enabled = 1;
}

int slc_enabled(void) { return g.enabled; }

const char *slc_cache_dir(void) { return g.cache; }

static int take_lock(void)
{
    long me = syscall(SYS_gettid);
    if (atomic_load(&owner) == me)
        return -1; /* re-entered (signal handler): fall back */
    pid_t pid = getpid();
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire)) {
        int op = atomic_load(&owner_pid);
        if (op != 0 && op != pid) {
            /* held by a thread of the parent when it forked: that thread does not exist here */
            atomic_store(&owner_pid, pid);
            break;
        }
        sched_yield();
    }
    atomic_store(&owner, me);
    atomic_store(&owner_pid, pid);
    return 0;
}

static void drop_lock(void)
{
    atomic_store(&owner, 0);
    atomic_store(&owner_pid, 0);
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

int slc_ask(int op, const char *orig, struct sld_reply *rp)
{
    if (!g.enabled)
        return -1;
    struct sld_request rq;
    rq.op = (uint32_t)op;
    rq.flags = 0;
    size_t n = strlen(orig);
    if (n >= sizeof rq.path)
        return -1;
    memcpy(rq.path, orig, n + 1);
    if (take_lock())
        return -1;
    pid_t pid = getpid();
    if (g.fd >= 0 && g.pid != pid) { /* forked: our own connection */
        close(g.fd);
        g.fd = -1;
    }
    if (g.fd < 0) {
        int fd = sld_connect(g.sock, g.timeout_ms);
        if (fd >= 0 && fd < 100) {
            int hi = fcntl(fd, F_DUPFD_CLOEXEC, 901);
            if (hi >= 0) {
                close(fd);
                fd = hi;
            }
        }
        g.fd = fd;
        g.pid = pid;
    }
    int r = g.fd >= 0 ? sld_call(g.fd, &rq, rp) : -1;
    if (r) {
        g.enabled = 0; /* dead or unreachable server: the file system from now on */
        static const char msg[] = "sheaf-ld: the load server does not answer: this process reads "
                                  "the file system directly\n";
        ssize_t w = write(2, msg, sizeof msg - 1); /* once: the client is off from here on */
        (void)w;
        if (g.fd >= 0)
            close(g.fd);
        g.fd = -1;
    }
    drop_lock();
    return r;
}

/* lexical normalisation: '//' and '/./' collapse, '/x/..' is removed */
static int normalise(char *p)
{
    char *w = p;
    const char *r = p;
    while (*r) {
        while (*r == '/')
            r++;
        if (!*r)
            break;
        const char *e = strchr(r, '/');
        size_t n = e ? (size_t)(e - r) : strlen(r);
        if (n == 1 && r[0] == '.') {
            r += n;
            continue;
        }
        if (n == 2 && r[0] == '.' && r[1] == '.') {
            while (w > p && *--w != '/') {
            }
            r += n;
            continue;
        }
        *w++ = '/';
        memmove(w, r, n);
        w += n;
        r += n;
    }
    if (w == p)
        *w++ = '/';
    *w = 0;
    return 0;
}

const char *slc_uncached(const char *local)
{
    if (!g.cachelen || strncmp(local, g.cache, g.cachelen) || local[g.cachelen] != '/')
        return NULL;
    const char *rest = local + g.cachelen + 1;
    if ((rest[0] == 'f' || rest[0] == 'd') && rest[1] == '/')
        return rest + 1;
    return NULL;
}

int slc_original(const char *path, char *out, size_t cap)
{
    size_t n = strlen(path);
    if (path[0] == '/') {
        if (n >= cap)
            return -1;
        memcpy(out, path, n + 1);
    } else {
        if (!getcwd(out, cap))
            return -1;
        size_t c = strlen(out);
        if (c + 1 + n >= cap)
            return -1;
        out[c] = '/';
        memcpy(out + c + 1, path, n + 1);
    }
    normalise(out);
    const char *o = slc_uncached(out);
    if (o)
        memmove(out, o, strlen(o) + 1);
    return 0;
}

int slc_dir_only(const char *path)
{
    size_t n = strlen(path);
    if (!n || !strcmp(path, "/"))
        return 0;
    const char *last = strrchr(path, '/');
    last = last ? last + 1 : path;
    return !last[0] || !strcmp(last, ".") || !strcmp(last, "..");
}

static int has_suffix(const char *s, size_t n, const char *suf, size_t k)
{
    return k && n >= k && !memcmp(s + n - k, suf, k);
}

/* libfoo.so, libfoo.so.1, libfoo.so.1.2.3 */
static int is_solib(const char *name)
{
    const char *so = strstr(name, ".so");
    while (so) {
        const char *r = so + 3;
        if (!*r)
            return 1;
        if (*r == '.') {
            while (*r == '.' || (*r >= '0' && *r <= '9'))
                r++;
            if (!*r)
                return 1;
        }
        so = strstr(so + 3, ".so");
    }
    return 0;
}

static int in_list(const char *path, const char *list, int prefix)
{
    size_t n = strlen(path);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ':');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        while (prefix && k > 1 && p[k - 1] == '/')
            k--;
        if (prefix ? (k && n >= k && !memcmp(path, p, k) && (path[k] == '/' || !path[k] || k == 1))
                   : has_suffix(path, n, p, k))
            return 1;
        p += k;
        while (*p == '/')
            p++;
        if (*p == ':')
            p++;
    }
    return 0;
}

int slc_wanted(const char *orig, int isdir)
{
    if (!g.enabled || orig[0] != '/')
        return 0;
    if (!strncmp(orig, "/proc/", 6) || !strncmp(orig, "/sys/", 5) || !strncmp(orig, "/dev/", 5))
        return 0;
    if (!strncmp(orig, g.cache, g.cachelen) && (orig[g.cachelen] == '/' || !orig[g.cachelen]))
        return 0;
    if (in_list(orig, g.prefixes, 1))
        return 1;
    if (isdir) /* below an inferred Python directory: its stat and listing, never a data file's bytes */
        return in_list(orig, g.pydirs, 1);
    const char *base = strrchr(orig, '/') + 1;
    size_t n = strlen(base);
    return is_solib(base) || has_suffix(base, n, ".py", 3) || has_suffix(base, n, ".pyc", 4) ||
           in_list(base, g.suffixes, 0);
}

void slc_nx(const char *orig, char *out, size_t cap) { snprintf(out, cap, "%s%s", SLC_NX_PREFIX, orig); }

void slc_log(const char *what, const char *orig, const char *result)
{
    if (g.logfd < 0)
        return;
    char line[2 * SLD_PATH_MAX + 64];
    int n = snprintf(line, sizeof line, "%ld %s %s %s\n", (long)getpid(), what, orig, result);
    if (n > 0 && (size_t)n < sizeof line) {
        ssize_t w = write(g.logfd, line, (size_t)n);
        (void)w;
    }
}
