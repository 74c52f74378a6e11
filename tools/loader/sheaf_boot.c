/* sheaf-boot - the static bootstrapper of sheaf's loader. The launcher puts it
 * in front of the executable of a launch line, so that on every rank:
 *   1. the environment of the audit client is set (LD_AUDIT, SHEAF_LD_*): it
 *      travels in argv, so no launcher needs to forward environment variables;
 *   2. the executable itself is served by the node's load server (rtld-audit
 *      cannot see how the kernel loads it), and the node-local copy is
 *      executed with the original argv[0] (a #! script runs from its original
 *      path, so that the interpreter sees the name the user gave);
 *   3. when the server cannot be reached, the original is executed.
 * Statically linked: it loads no library from the shared file system.
 * Usage: sheaf-boot --socket S --audit LIB [--prefixes P] [--suffixes X]
 *                   [--log F] [--timeout MS] -- EXE [ARGS...]            */
#define _GNU_SOURCE
#include "sheaf_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE                                                                                                          \
    "usage: sheaf-boot --socket S --audit LIB [--prefixes P] [--pydirs D] [--suffixes X] "                             \
    "[--log F] [--timeout MS] -- EXE [ARGS...]\n"

/* a bad command line: the usage on stderr, 127 (as a launch line whose
 * command cannot be run) */
static int usage(void)
{
    fputs(USAGE, stderr);
    return 127;
}

/* --help / -h: the usage and what the options mean on stdout, exit 0 */
static int help(void)
{
    fputs(USAGE "Run EXE through sheaf's loader: sets LD_AUDIT=LIB and the loader's environment,\n"
                "asks the node's load server at socket S for a node-local copy of EXE and runs it\n"
                "(the original when the server cannot be reached). sheaf-launch puts it in front\n"
                "of each launch line; it is not meant to be run by hand.\n"
                "  --socket S    the load server's socket (\"%r\" is replaced by SHEAF_LD_RANK)\n"
                "  --audit LIB   the rtld-audit library (libsheaf_audit.so)\n"
                "  --prefixes P  --pydirs D  --suffixes X  which paths the server serves\n"
                "  --log F       the audit client's log file\n"
                "  --timeout MS  how long to wait for the server (default 20000)\n"
                "Exit status: EXE's; 127 for a bad command line or EXE not found, 126 when EXE\n"
                "cannot be executed.\n",
          stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* EXE as an absolute path: as given with a '/', else the first PATH hit */
static int resolve(const char *exe, char *out, size_t cap)
{
    if (strchr(exe, '/')) {
        if (exe[0] == '/')
            return snprintf(out, cap, "%s", exe) < (int)cap ? 0 : -1;
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return -1;
        return snprintf(out, cap, "%s/%s", cwd, exe) < (int)cap ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && snprintf(out, cap, "%.*s/%s", (int)n, p, exe) < (int)cap && !access(out, X_OK)) {
            if (out[0] != '/') {
                char rel[PATH_MAX], cwd[PATH_MAX];
                snprintf(rel, sizeof rel, "%s", out);
                if (!getcwd(cwd, sizeof cwd) || snprintf(out, cap, "%s/%s", cwd, rel) >= (int)cap)
                    return -1;
            }
            return 0;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return -1;
}

static int is_script(const char *path)
{
    char b[2] = {0, 0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, b, 2);
    close(fd);
    return r == 2 && b[0] == '#' && b[1] == '!';
}

static int setenv_append(const char *name, const char *val)
{
    const char *old = getenv(name);
    if (!old || !old[0])
        return setenv(name, val, 1);
    size_t n = strlen(old) + strlen(val) + 2;
    char *v = malloc(n);
    if (!v)
        return -1;
    snprintf(v, n, "%s:%s", val, old);
    int r = setenv(name, v, 1);
    free(v);
    return r;
}

int main(int argc, char **argv)
{
    const char *sock = NULL, *audit = NULL;
    int i = 1, timeout = 20000;
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
        return help();
    for (; i < argc && strcmp(argv[i], "--"); i += 2) {
        if (i + 1 >= argc)
            return usage();
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "--socket"))
            sock = v;
        else if (!strcmp(o, "--audit"))
            audit = v;
        else if (!strcmp(o, "--prefixes"))
            setenv(SHEAF_LOADER_ENV_PREFIXES, v, 1);
        else if (!strcmp(o, "--pydirs"))
            setenv(SHEAF_LOADER_ENV_PYDIRS, v, 1);
        else if (!strcmp(o, "--suffixes"))
            setenv(SHEAF_LOADER_ENV_SUFFIXES, v, 1);
        else if (!strcmp(o, "--log"))
            setenv(SHEAF_LOADER_ENV_LOG, v, 1);
        else if (!strcmp(o, "--timeout")) {
            timeout = atoi(v);
            if (timeout <= 0)
                timeout = 20000; /* 0 would mean: wait forever */
            setenv(SHEAF_LOADER_ENV_TIMEOUT, v, 1);
        } else
            return usage();
    }
    if (i + 1 >= argc || !sock || !audit)
        return usage();
    char **app = argv + i + 1;
    /* "%r" in the socket: the simulated node's server (SHEAF_LD_RANK, default 0) */
    char sockx[PATH_MAX];
    size_t k = 0;
    const char *rk = getenv("SHEAF_LD_RANK");
    for (const char *p = sock; *p && k + 12 < sizeof sockx; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            k += (size_t)snprintf(sockx + k, sizeof sockx - k, "%s", rk ? rk : "0");
            p++;
        } else
            sockx[k++] = *p;
    }
    sockx[k] = 0;
    sock = sockx;
    setenv(SHEAF_LOADER_ENV_SOCKET, sock, 1);
    setenv_append("LD_AUDIT", audit);
    char exe[PATH_MAX], local[PATH_MAX];
    if (resolve(app[0], exe, sizeof exe)) {
        fprintf(stderr, "sheaf-boot: %s: command not found\n", app[0]);
        return 127;
    }
    /* the server reads the executable (the original is never touched here:
   * whether it is a #! script is read from the copy, which has its bytes) */
    const char *run = exe;
    if (sheaf_loader_request(sock, SHEAF_LOADER_LOOKUP, exe, local, sizeof local, timeout) == 0 && !is_script(local))
        run = local;
    execv(run, app);
    if (run != exe)
        execv(exe, app); /* the copy failed to start: the original */
    fprintf(stderr, "sheaf-boot: cannot execute %s: %s\n", exe, strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
