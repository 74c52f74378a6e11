/* overlay.c - a load server's place in the overlay: the secret, the TCP
 * listener bound to the address the launcher gave, the links to its parents
 * (made by a helper thread, so that servers of a forest whose parents wait on
 * each other never block each other's handshakes) and the front end's side
 * (sheaf_loader_fe_*). Accepting and refusing peers is handshake.c's. */
#define _GNU_SOURCE
#include "loader.h"
#include "net.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int split_hosts(const char *hosts, int size, char ***out)
{
    char **a = calloc((size_t)size, sizeof *a);
    if (!a)
        return -1;
    const char *p = hosts;
    int n = 0;
    while (p && *p && n < size) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (!len || len > 300 || !(a[n] = strndup(p, len)))
            break;
        n++;
        p = c ? c + 1 : NULL;
    }
    if (n != size || (p && *p)) {
        for (int i = 0; i < n; i++)
            free(a[i]);
        free(a);
        return -1;
    }
    *out = a;
    return 0;
}

void sld_net_free(struct sld_net *n)
{
    if (!n)
        return;
    sld_policy_free(n);
    sln_free_inflight(n);
    for (int i = 0; n->addrs && i < n->size; i++)
        free(n->addrs[i]);
    free(n->addrs);
    for (int t = 0; n->parents && t < n->roots; t++)
        sln_link_free(n->parents[t]);
    free(n->parents);
    for (int i = 0; i < n->npeers; i++)
        sln_link_free(n->peers[i]);
    free(n->peers);
    if (n->lfd >= 0)
        close(n->lfd);
    explicit_bzero(n->key, sizeof n->key);
    free(n);
}

struct sld_net *sld_net_create(const struct sheaf_loader_overlay *ov, char *err, size_t errlen)
{
    if (!ov || ov->size < 1 || ov->size > SLN_MAX_RANKS || ov->rank < 0 || ov->rank >= ov->size || ov->roots < 1 ||
        ov->roots > ov->size || !ov->hosts || !ov->secret_file) {
        snprintf(err, errlen, "sheaf-ld: bad overlay configuration (rank, size, roots, hosts, secret)");
        return NULL;
    }
    struct sld_net *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(err, errlen, "sheaf-ld: out of memory");
        return NULL;
    }
    n->lfd = -1;
    n->ep = -1;
    n->rank = ov->rank;
    n->size = ov->size;
    n->roots = ov->roots;
    n->push = ov->push;
    n->use_fgfs = !ov->copy_all;
    n->timeout_ms = ov->timeout_ms > 0 ? ov->timeout_ms : 20000;
    if (split_hosts(ov->hosts, ov->size, &n->addrs)) {
        snprintf(err, errlen, "sheaf-ld: the host list does not name %d host:port entries", ov->size);
        free(n);
        return NULL;
    }
    n->parents = calloc((size_t)n->roots, sizeof *n->parents);
    if (!n->parents || sln_secret_load(ov->secret_file, n->key, err, errlen)) {
        if (!n->parents)
            snprintf(err, errlen, "sheaf-ld: out of memory");
        sld_net_free(n);
        return NULL;
    }
    const char *bind = ov->bind && ov->bind[0] ? ov->bind : n->addrs[n->rank];
    n->lfd = sln_listen(bind);
    if (n->lfd < 0) {
        snprintf(err, errlen, "sheaf-ld: cannot listen on %s: %s", bind, strerror(errno));
        sld_net_free(n);
        return NULL;
    }
    return n;
}

/* the helper thread: one authenticated link per tree in which we have a parent */
void *sld_net_connect_parents(void *arg)
{
    struct sld_net *n = arg;
    for (int t = 0; t < n->roots; t++) {
        int p = sln_parent(n->rank, n->size, t);
        if (p < 0)
            continue;
        int fd = sln_dial(n->addrs[p], n->timeout_ms);
        if (fd >= 0 && sln_auth_connect(fd, n->key, (uint32_t)t, (uint32_t)n->rank, n->timeout_ms)) {
            fprintf(stderr, "sheaf-ld[%d]: parent %d (%s) refused the handshake\n", n->rank, p, n->addrs[p]);
            close(fd);
            fd = -1;
        } else if (fd < 0) {
            fprintf(stderr, "sheaf-ld[%d]: cannot reach parent %d at %s\n", n->rank, p, n->addrs[p]);
        }
        if (fd < 0)
            continue;
        struct sln_link *l = calloc(1, sizeof *l);
        if (!l) {
            close(fd);
            continue;
        }
        l->kind = 1;
        l->fd = fd;
        l->tree = (uint32_t)t;
        l->rank = (uint32_t)p;
        l->parent = 1;
        n->parents[t] = l;
    }
    return NULL;
}

/* whether every tree that has a parent for us got its link */
int sld_net_complete(const struct sld_net *n)
{
    for (int t = 0; t < n->roots; t++)
        if (sln_parent(n->rank, n->size, t) >= 0 && !n->parents[t])
            return 0;
    return 1;
}

/* ---- the front end (the launcher) ---- */

int sheaf_loader_secret_create(const char *path, char *err, size_t errlen)
{
    return sln_secret_create(path, err, errlen);
}

int sheaf_loader_fe_open(const char *addr, const char *secret_file, int timeout_ms, char *err, size_t errlen)
{
    unsigned char key[SLN_KEY];
    if (sln_secret_load(secret_file, key, err, errlen))
        return -1;
    int fd = sln_dial(addr, timeout_ms);
    if (fd < 0) {
        snprintf(err, errlen, "sheaf-ld: cannot reach the root server at %s", addr);
    } else if (sln_auth_connect(fd, key, 0, SLN_FRONTEND_RANK, timeout_ms)) {
        snprintf(err, errlen, "sheaf-ld: the root server at %s refused the handshake", addr);
        close(fd);
        fd = -1;
    }
    explicit_bzero(key, sizeof key);
    return fd;
}

int sheaf_loader_fe_preload(int fd, const char *path)
{
    struct sln_get g = {SLN_K_FILE, {0}};
    if (snprintf(g.path, sizeof g.path, "%s", path) >= (int)sizeof g.path || path[0] != '/')
        return -1;
    unsigned char b[SLD_HDR_SIZE + 8 + SLD_PATH_MAX];
    size_t bl = sln_pack_get(SLN_PRELOAD, &g, b, sizeof b);
    uint32_t type, len;
    struct sln_get a;
    if (!bl || sln_send_all(fd, b, bl) || sln_recv_frame_fd(fd, b, sizeof b, &type, &len) || type != SLN_ACK ||
        sln_unpack_get(b + SLD_HDR_SIZE, len, &a) == -1)
        return -1;
    return 0;
}

int sheaf_loader_fe_stats(int fd, unsigned long long *counters, int n, int *rank)
{
    unsigned char b[SLD_HDR_SIZE + 8 + 8 * SLD_NCOUNTERS];
    size_t bl = sln_pack_empty(SLN_STATS, b, sizeof b);
    uint32_t type, len;
    struct sln_stats m;
    if (n < 0 || n > SLD_NCOUNTERS || !bl || sln_send_all(fd, b, bl) ||
        sln_recv_frame_fd(fd, b, sizeof b, &type, &len) || type != SLN_STATS ||
        sln_unpack_stats(b + SLD_HDR_SIZE, len, &m) || m.n < (uint32_t)n)
        return -1;
    for (int i = 0; i < n; i++)
        counters[i] = m.c[i];
    if (rank)
        *rank = (int)m.rank;
    return 0;
}

int sheaf_loader_fe_shutdown(int fd)
{
    unsigned char b[SLD_HDR_SIZE];
    size_t bl = sln_pack_empty(SLN_SHUTDOWN, b, sizeof b);
    int r = sln_send_all(fd, b, bl);
    close(fd);
    return r;
}
