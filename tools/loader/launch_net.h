/* launch_net.h - sheaf-launch across nodes: one sheaf-ld-server per host
 * (through --rsh, mpiexec or srun), the job's secret, preload, shutdown. */
#ifndef SHEAF_LAUNCH_NET_H
#define SHEAF_LAUNCH_NET_H

#include <limits.h>
#include <sys/types.h>

struct net_opts {
    const char *hosts, *hostfile, *rsh, *how, *secret, *server, *socket, *cache_dir;
    const char *starter; /* the mpiexec/mpirun/srun command of those modes (words) */
    int port, roots, push, timeout, strip, copy_all;
};

struct net_job {
    int n;          /* servers */
    char **addrs;   /* host:port per rank */
    char **names;   /* host per rank (for rsh/mpiexec/srun) */
    pid_t *pids;    /* rsh: one per rank; else pids[0] = the mpiexec/srun */
    int *stdin_fds; /* rsh: the write ends the servers watch */
    int npids;
    int fe;    /* the front end's link to rank 0, or -1 */
    int ready; /* servers that said ready */
    char secret[PATH_MAX];
    int own_secret;        /* the launcher created the secret (and removes it) */
    char socket[PATH_MAX]; /* the clients' socket path (same on every host) */
};

/* parses the host list, makes the secret, starts the servers, waits for
 * them (bounded), opens the front end's link; 0, or -1 (nothing left running) */
int net_start(const struct net_opts *o, struct net_job *j);
/* pushes the paths of a list (one a line, or ldd output) to every server */
int net_preload(struct net_job *j, const char *list);
/* stops the servers (shutdown through the overlay, then signals), removes the secret */
void net_stop(struct net_job *j, int timeout_ms);

#endif
