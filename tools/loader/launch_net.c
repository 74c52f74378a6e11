/* launch_net.c - sheaf-launch across nodes (doc/loader.md "Launch across
 * nodes"): one sheaf-ld-server per host, started
 *   rsh:      `CMD HOST sheaf-ld-server --rank R ...` per host (CMD like ssh),
 *   mpich:    `mpiexec -n N -ppn 1 -hosts H1,... sheaf-ld-server --rank env ...`,
 *   openmpi:  `mpirun -n N --map-by ppr:1:node --host H1,... sheaf-ld-server --rank env ...`,
 *   srun:     `srun -N N -n N --ntasks-per-node=1 --nodelist=H1,... sheaf-ld-server --rank env ...`;
 * every server gets its rank, the host list (it binds to its own entry), the
 * secret's path and the clients' socket path; the launcher waits (bounded)
 * for their "ready" lines, links to rank 0 as the front end (preload,
 * shutdown). No LaunchMON, MPIR or PMIx. */
#define _GNU_SOURCE
#include "launch_net.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NET_MAX_HOSTS 65536

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* one entry "host" or "host:port"; a host named twice without ports gets one server */
static int add_host(struct net_job *j, const char *w, int port)
{
    char addr[300], name[300];
    const char *c = strrchr(w, ':');
    int has_port = c && c[1] && strspn(c + 1, "0123456789") == strlen(c + 1) && w[0] != '[' ? 1 : 0;
    if (w[0] == '[')
        has_port = strstr(w, "]:") != NULL;
    if (has_port) {
        snprintf(name, sizeof name, "%.*s", (int)(strrchr(w, ':') - w), w);
        snprintf(addr, sizeof addr, "%s", w);
    } else {
        snprintf(name, sizeof name, "%s", w);
        snprintf(addr, sizeof addr, "%s:%d", w, port);
    }
    for (int i = 0; i < j->n; i++)
        if (!strcmp(j->addrs[i], addr))
            return 0;
    if (j->n >= NET_MAX_HOSTS)
        return -1;
    char **a = realloc(j->addrs, (size_t)(j->n + 1) * sizeof *a);
    if (!a)
        return -1;
    j->addrs = a;
    char **nm = realloc(j->names, (size_t)(j->n + 1) * sizeof *nm);
    if (!nm)
        return -1;
    j->names = nm;
    if (!(j->addrs[j->n] = strdup(addr)) || !(j->names[j->n] = strdup(name)))
        return -1;
    j->n++;
    return 0;
}

static int parse_hosts(const struct net_opts *o, struct net_job *j)
{
    if (o->hosts) {
        char *dup = strdup(o->hosts), *save = NULL;
        if (!dup)
            return -1;
        for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save))
            if (*w && add_host(j, w, o->port)) {
                free(dup);
                return -1;
            }
        free(dup);
    }
    if (o->hostfile) {
        FILE *f = fopen(o->hostfile, "r");
        if (!f) {
            fprintf(stderr, "sheaf-launch: cannot read the host file %s: %s\n", o->hostfile, strerror(errno));
            return -1;
        }
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *w = line + strspn(line, " \t");
            w[strcspn(w, " \t\r\n#")] = 0; /* "host slots=4" and comments: the host */
            if (*w && add_host(j, w, o->port)) {
                fclose(f);
                return -1;
            }
        }
        fclose(f);
    }
    if (j->n == 0) {
        fprintf(stderr, "sheaf-launch: the host list is empty\n");
        return -1;
    }
    return 0;
}

/* the server's arguments after its program name (rank: a number or "env") */
static int server_args(const struct net_opts *o, const struct net_job *j, const char *rank, char **out, char *hostlist,
                       size_t cap, char *tmo, char *roots)
{
    size_t k = 0;
    hostlist[0] = 0;
    for (int i = 0; i < j->n; i++) {
        size_t l = strlen(hostlist);
        if (snprintf(hostlist + l, cap - l, "%s%s", i ? "," : "", j->addrs[i]) >= (int)(cap - l))
            return -1;
    }
    out[k++] = "--rank";
    out[k++] = (char *)rank;
    out[k++] = "--hosts";
    out[k++] = hostlist;
    out[k++] = "--secret";
    out[k++] = (char *)j->secret;
    out[k++] = "--roots";
    out[k++] = roots;
    out[k++] = "--overlay";
    out[k++] = o->push ? "push" : "pull";
    out[k++] = "--socket";
    out[k++] = (char *)j->socket;
    out[k++] = "--timeout";
    out[k++] = tmo;
    if (o->cache_dir) {
        out[k++] = "--cache-dir";
        out[k++] = (char *)o->cache_dir;
    }
    if (!o->strip)
        out[k++] = "--strip=no";
    if (o->copy_all)
        out[k++] = "--copy-all";
    out[k] = NULL;
    return (int)k;
}

/* the words of cmd; *dup holds them (free both when done) */
static char **split_words(const char *cmd, int *n, char **dup)
{
    char *save = NULL;
    char **w = calloc(strlen(cmd) / 2 + 2, sizeof *w);
    *dup = strdup(cmd);
    *n = 0;
    if (!*dup || !w) {
        free(*dup);
        free(w);
        *dup = NULL;
        return NULL;
    }
    for (char *t = strtok_r(*dup, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
        w[(*n)++] = t;
    return w;
}

static pid_t spawn(char **argv, int *out_fd, int *in_fd)
{
    int po[2], pi[2] = {-1, -1};
    if (pipe2(po, O_CLOEXEC))
        return -1;
    if (in_fd && pipe2(pi, O_CLOEXEC)) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        if (in_fd)
            dup2(pi[0], 0);
        else {
            int dn = open("/dev/null", O_RDONLY);
            if (dn >= 0)
                dup2(dn, 0);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "sheaf-launch: cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    if (in_fd)
        close(pi[0]);
    if (pid < 0) {
        close(po[0]);
        if (in_fd)
            close(pi[1]);
        return -1;
    }
    *out_fd = po[0];
    if (in_fd)
        *in_fd = pi[1];
    return pid;
}

/* reads "sheaf-ld ready R SOCK" lines from fds until every server is ready,
 * every fd is at its end, or the deadline */
static void wait_ready(struct net_job *j, int *fds, int nfds, int timeout_ms)
{
    if (j->n <= 0 || nfds < 0)
        return;
    char *seen = calloc((size_t)j->n, 1);
    char **buf = calloc((size_t)nfds, sizeof *buf);
    size_t *len = calloc((size_t)nfds, sizeof *len);
    struct pollfd *pf = calloc((size_t)nfds + 1, sizeof *pf);
    if (!seen || !buf || !len || !pf)
        goto out;
    for (int i = 0; i < nfds; i++) {
        pf[i].fd = fds[i];
        pf[i].events = POLLIN;
        buf[i] = calloc(1, 4096);
    }
    long end = now_ms() + timeout_ms;
    int open_fds = nfds;
    while (j->ready < j->n && open_fds > 0 && now_ms() < end) {
        if (poll(pf, (nfds_t)nfds, (int)(end - now_ms())) <= 0)
            continue;
        for (int i = 0; i < nfds; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)) || !buf[i])
                continue;
            ssize_t r = read(pf[i].fd, buf[i] + len[i], 4095 - len[i]);
            if (r <= 0) {
                pf[i].fd = -1;
                open_fds--;
                continue;
            }
            len[i] += (size_t)r;
            buf[i][len[i]] = 0;
            char *nl;
            while ((nl = strchr(buf[i], '\n'))) {
                *nl = 0;
                int rank;
                if (sscanf(buf[i], "sheaf-ld ready %d", &rank) == 1 && rank >= 0 && rank < j->n && !seen[rank]) {
                    seen[rank] = 1;
                    j->ready++;
                }
                len[i] -= (size_t)(nl + 1 - buf[i]);
                memmove(buf[i], nl + 1, len[i] + 1);
            }
            if (len[i] >= 4095)
                len[i] = 0; /* not a line of ours */
        }
    }
    for (int r = 0; r < j->n; r++)
        if (!seen[r])
            fprintf(stderr,
                    "sheaf-launch: the load server of %s (rank %d) did not start: the processes "
                    "there read the file system directly\n",
                    j->names[r], r);
out:
    for (int i = 0; buf && i < nfds; i++)
        free(buf[i]);
    free(buf);
    free(len);
    free(pf);
    free(seen);
}

static int make_secret(const struct net_opts *o, struct net_job *j)
{
    char err[512];
    if (o->secret && !access(o->secret, F_OK)) {
        snprintf(j->secret, sizeof j->secret, "%s", o->secret); /* the servers check it (0600, ours) */
        return 0;
    }
    if (o->secret) {
        snprintf(j->secret, sizeof j->secret, "%s", o->secret);
    } else {
        const char *home = getenv("HOME");
        /* on a shared file system, so that every host reads it */
        snprintf(j->secret, sizeof j->secret, "%s/.sheaf-ld.%ld.secret", home && *home ? home : ".", (long)getpid());
    }
    if (sheaf_loader_secret_create(j->secret, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    j->own_secret = 1;
    return 0;
}

/* The servers' arguments that do not depend on the rank (server_args). */
struct srv_common {
    char hostlist[1 << 16], tmo[32], roots[32];
};

/* --server-launch rsh: one remote shell per host, its stdin watched by the
 * server; *nfds of fds[] receive the servers' ready pipes. */
static int start_rsh(const struct net_opts *o, struct net_job *j, char **argv, int *fds, int *nfds,
                     struct srv_common *c)
{
    int nw;
    char *wd = NULL, rank[32];
    char **w = split_words(o->rsh ? o->rsh : "ssh", &nw, &wd);
    if (!w || nw > 32) {
        free(w);
        free(wd);
        return -1;
    }
    for (int r = 0; r < j->n; r++) {
        int k = 0;
        for (int i = 0; i < nw; i++)
            argv[k++] = w[i];
        argv[k++] = j->names[r];
        argv[k++] = (char *)o->server;
        snprintf(rank, sizeof rank, "%d", r);
        int a = server_args(o, j, rank, argv + k, c->hostlist, sizeof c->hostlist, c->tmo, c->roots);
        if (a < 0)
            return -1;
        argv[k + a] = "--watch-stdin";
        argv[k + a + 1] = NULL;
        pid_t p = spawn(argv, &fds[*nfds], &j->stdin_fds[r]);
        if (p > 0) {
            j->pids[j->npids++] = p;
            (*nfds)++;
        } else
            j->stdin_fds[r] = -1;
    }
    free(w);
    free(wd);
    return 0;
}

/* --server-launch srun, openmpi or mpich: one parallel start of a server per
 * host (its rank from the environment); fds[0] receives the ready pipe. */
static int start_parallel(const struct net_opts *o, struct net_job *j, const char *how, char **argv, int *fds,
                          int *nfds, struct srv_common *c)
{
    char names[1 << 16] = "", n[32];
    for (int r = 0; r < j->n; r++) {
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", r ? "," : "", j->names[r]);
    }
    snprintf(n, sizeof n, "%d", j->n);
    char nodelist[(1 << 16) + 16];
    int k = 0, nw = 0;
    const char *const *pre = NULL;
    size_t npre = 0;
    snprintf(nodelist, sizeof nodelist, "--nodelist=%s", names);
    const char *srun[] = {"srun", "-N", n, "-n", n, "--ntasks-per-node=1", nodelist};
    const char *ompi[] = {"mpirun", "-n", n, "--map-by", "ppr:1:node", "--host", names};
    const char *mpich[] = {"mpiexec", "-n", n, "-ppn", "1", "-hosts", names};
    if (!strcmp(how, "srun")) {
        pre = srun;
        npre = sizeof srun / sizeof *srun;
    } else if (!strcmp(how, "openmpi")) {
        pre = ompi;
        npre = sizeof ompi / sizeof *ompi;
    } else if (!strcmp(how, "mpich")) {
        pre = mpich;
        npre = sizeof mpich / sizeof *mpich;
    } else {
        fprintf(stderr, "sheaf-launch: --server-launch must be rsh, mpich, openmpi or srun\n");
        return -1;
    }
    /* --starter: the command instead of the first word (e.g. mpiexec.mpich, a wrapper) */
    char *swd = NULL;
    char **sw = o->starter ? split_words(o->starter, &nw, &swd) : NULL;
    if (o->starter && (!sw || nw > 32)) {
        free(sw);
        free(swd);
        return -1;
    }
    if (sw)
        for (int i = 0; i < nw; i++)
            argv[k++] = sw[i];
    else
        argv[k++] = (char *)pre[0];
    for (size_t i = 1; i < npre; i++)
        argv[k++] = (char *)pre[i];
    argv[k++] = (char *)o->server;
    if (server_args(o, j, "env", argv + k, c->hostlist, sizeof c->hostlist, c->tmo, c->roots) < 0)
        return -1;
    pid_t p = spawn(argv, &fds[0], NULL);
    free(sw);
    free(swd);
    if (p > 0) {
        j->pids[j->npids++] = p;
        *nfds = 1;
    }
    for (int r = 0; r < j->n; r++)
        j->stdin_fds[r] = -1;
    return 0;
}

int net_start(const struct net_opts *o, struct net_job *j)
{
    memset(j, 0, sizeof *j);
    j->fe = -1;
    if (parse_hosts(o, j) || make_secret(o, j))
        return -1;
    if (o->socket) {
        snprintf(j->socket, sizeof j->socket, "%s", o->socket);
    } else {
        const char *base = o->cache_dir ? o->cache_dir : !access("/dev/shm", W_OK) ? "/dev/shm" : "/tmp";
        snprintf(j->socket, sizeof j->socket, "%s/sheaf-ldjob.%u.%ld/sock", base, (unsigned)getuid(), (long)getpid());
    }
    struct srv_common c;
    snprintf(c.tmo, sizeof c.tmo, "%d", o->timeout);
    snprintf(c.roots, sizeof c.roots, "%d", o->roots);
    const char *how = o->how ? o->how : o->rsh ? "rsh" : getenv("SLURM_JOB_ID") ? "srun" : "mpich";
    int nfds = 0, *fds = calloc((size_t)j->n, sizeof *fds);
    j->pids = calloc((size_t)j->n, sizeof *j->pids);
    j->stdin_fds = calloc((size_t)j->n, sizeof *j->stdin_fds);
    char **argv = calloc((size_t)64 + 8, sizeof *argv);
    if (!fds || !j->pids || !j->stdin_fds || !argv)
        return -1;
    if (!strcmp(how, "rsh") ? start_rsh(o, j, argv, fds, &nfds, &c) : start_parallel(o, j, how, argv, fds, &nfds, &c))
        return -1;
    wait_ready(j, fds, nfds, o->timeout > 30000 ? o->timeout : 30000);
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    free(fds);
    free(argv);
    if (j->ready) {
        char err[512];
        j->fe = sheaf_loader_fe_open(j->addrs[0], j->secret, o->timeout, err, sizeof err);
        if (j->fe < 0)
            fprintf(stderr, "%s\n", err);
    }
    return 0;
}

int net_preload(struct net_job *j, const char *list)
{
    FILE *f = fopen(list, "r");
    if (!f) {
        fprintf(stderr, "sheaf-launch: cannot read the preload list %s: %s\n", list, strerror(errno));
        return -1;
    }
    char line[PATH_MAX + 256];
    int n = 0;
    while (j->fe >= 0 && fgets(line, sizeof line, f)) {
        char *s = strstr(line, "=> ");
        s = s ? s + 3 : line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s != '/')
            continue;
        s[strcspn(s, " \t\r\n")] = 0;
        if (sheaf_loader_fe_preload(j->fe, s)) {
            fprintf(stderr, "sheaf-launch: preload stopped at %s: the root server does not answer\n", s);
            close(j->fe);
            j->fe = -1;
            break;
        }
        n++;
    }
    fclose(f);
    return n;
}

void net_stop(struct net_job *j, int timeout_ms)
{
    if (j->fe >= 0)
        sheaf_loader_fe_shutdown(j->fe);
    j->fe = -1;
    for (int r = 0; j->stdin_fds && r < j->n; r++)
        if (j->stdin_fds[r] >= 0)
            close(j->stdin_fds[r]); /* rsh servers stop at the end of stdin */
    long end = now_ms() + timeout_ms;
    int left = j->npids;
    for (int sig = 0; left > 0;) {
        for (int i = 0; i < j->npids; i++)
            if (j->pids[i] > 0 && waitpid(j->pids[i], NULL, WNOHANG) == j->pids[i]) {
                j->pids[i] = 0;
                left--;
            }
        if (!left)
            break;
        if (now_ms() > end) {
            sig = sig ? SIGKILL : SIGTERM;
            for (int i = 0; i < j->npids; i++)
                if (j->pids[i] > 0)
                    kill(j->pids[i], sig);
            end = now_ms() + 2000;
        }
        usleep(10000);
    }
    if (j->own_secret)
        unlink(j->secret);
    for (int i = 0; i < j->n; i++) {
        free(j->addrs[i]);
        free(j->names[i]);
    }
    free(j->addrs);
    free(j->names);
    free(j->pids);
    free(j->stdin_fds);
}
