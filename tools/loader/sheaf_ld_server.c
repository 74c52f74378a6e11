/* sheaf-ld-server - one load server of an overlay across nodes (doc/loader.md
 * "Overlay"). sheaf-launch starts one per host (through --rsh, mpiexec or
 * srun); tests start them directly. Prints "sheaf-ld ready RANK SOCKET" on
 * stdout when its links to its parents are up.
 *   sheaf-ld-server --rank R|env --hosts H:P,H:P,... --secret FILE [options] */
#define _GNU_SOURCE
#include "sheaf_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: sheaf-ld-server --rank R --hosts H:P,H:P,... --secret FILE [options]\n"
               "  --rank R|env       this server's rank; env: from PMI_RANK, OMPI_COMM_WORLD_RANK,\n"
               "                     SLURM_PROCID or PMIX_RANK (one server per host through mpiexec/srun)\n"
               "  --hosts LIST       host:port of every rank, in rank order\n"
               "  --secret FILE      the job's secret (0600)\n"
               "  --bind ADDR:PORT   listen here (default: this rank's entry of --hosts)\n"
               "  --roots K          K trees, each owning a hash range of paths (default 1)\n"
               "  --overlay push|pull  SPMD: what one server reads goes to all; MPMD: only to askers (default push)\n"
               "  --socket PATH      the local clients' socket (default <cache dir>/sock)\n"
               "  --cache-dir DIR    where the node cache goes\n"
               "  --strip=yes|no     copies of ELF files hold only their loaded extents (default yes)\n"
               "  --timeout MS       bound of every network wait (default 20000)\n"
               "  --watch-stdin      stop when stdin reaches its end (the launcher's rsh link closed)\n"
               "  --copy-all         no classification: every file through the overlay (alias\n"
               "                     --no-fgfs). Default (--fgfs): classify the mount points with the\n"
               "                     global file status at start-up (over the overlay): node-local,\n"
               "                     per-node and well-distributed files are passed through\n");
}

static int env_rank(void)
{
    const char *names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

/* "%r" -> the rank (several simulated nodes on one host) */
static const char *expand(const char *in, int rank, char *out, size_t cap)
{
    if (!in)
        return NULL;
    size_t k = 0;
    for (const char *p = in; *p && k + 12 < cap; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            k += (size_t)snprintf(out + k, cap - k, "%d", rank);
            p++;
        } else
            out[k++] = *p;
    }
    out[k] = 0;
    return out;
}

static void *watch_stdin(void *arg)
{
    (void)arg;
    char b[256];
    for (;;) {
        ssize_t r = read(0, b, sizeof b);
        if (r == 0 || (r < 0 && errno != EINTR))
            break;
    }
    kill(getpid(), SIGTERM); /* the server's signalfd sees it */
    return NULL;
}

/* stdin watched (its end stops the server) or /dev/null; stdout becomes
 * /dev/null, and the descriptor returned is the old stdout, where only the
 * ready line goes (the launcher's pipe) */
static int setup_stdio(int watch)
{
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (watch) {
        /* block the signals first: the server's thread inherits the mask */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        sigprocmask(SIG_BLOCK, &set, NULL);
        pthread_t th;
        pthread_create(&th, NULL, watch_stdin, NULL);
        pthread_detach(th);
    } else if (devnull >= 0) {
        dup2(devnull, 0);
    }
    int ready = dup(1);
    if (devnull >= 0)
        dup2(devnull, 1); /* only the ready line goes to the launcher's pipe */
    return ready;
}

int main(int argc, char **argv)
{
    struct sheaf_loader_overlay ov = {.rank = -1, .roots = 1, .push = 1, .timeout_ms = 20000};
    const char *cache = NULL, *sock = NULL;
    int strip = 1, watch = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VAL(name) (!strcmp(a, name) && v && (i++, 1))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (VAL("--rank"))
            ov.rank = !strcmp(v, "env") ? env_rank() : atoi(v);
        else if (VAL("--hosts"))
            ov.hosts = v;
        else if (VAL("--secret"))
            ov.secret_file = v;
        else if (VAL("--bind"))
            ov.bind = v;
        else if (VAL("--roots"))
            ov.roots = atoi(v);
        else if (VAL("--overlay")) {
            if (strcmp(v, "push") && strcmp(v, "pull")) {
                usage(stderr);
                return 2;
            }
            ov.push = !strcmp(v, "push");
        } else if (VAL("--socket"))
            sock = v;
        else if (VAL("--cache-dir"))
            cache = v;
        else if (!strcmp(a, "--strip=no"))
            strip = 0;
        else if (!strcmp(a, "--strip=yes"))
            strip = 1;
        else if (VAL("--timeout"))
            ov.timeout_ms = atoi(v);
        else if (!strcmp(a, "--watch-stdin"))
            watch = 1;
        else if (!strcmp(a, "--fgfs"))
            ov.copy_all = 0; /* the default */
        else if (!strcmp(a, "--copy-all") || !strcmp(a, "--no-fgfs"))
            ov.copy_all = 1;
        else {
            fprintf(stderr, "sheaf-ld-server: unknown option or missing value: %s\n", a);
            usage(stderr);
            return 2;
        }
#undef VAL
    }
    if (!ov.hosts || !ov.secret_file || ov.rank < 0) {
        usage(stderr);
        return 2;
    }
    int n = 1;
    for (const char *p = ov.hosts; *p; p++)
        n += *p == ',';
    ov.size = n;
    if (ov.timeout_ms <= 0)
        ov.timeout_ms = 20000;
    int ready = setup_stdio(watch);
    char err[512], sockx[4096], cachex[4096];
    sock = expand(sock, ov.rank, sockx, sizeof sockx);
    cache = expand(cache, ov.rank, cachex, sizeof cachex);
    if (sheaf_loader_serve_net(cache, sock, strip, &ov, ready, err, sizeof err)) {
        fprintf(stderr, "sheaf-ld-server[%d]: %s\n", ov.rank, err);
        return 1;
    }
    return 0;
}
