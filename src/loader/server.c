/* server.c - the per-node load server: one epoll loop over the listening Unix
 * socket, a signalfd and the client connections (same uid only, SO_PEERCRED). */
#define _GNU_SOURCE
#include "loader.h"
#include "net.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SLD_MAX_CLIENTS 4096

struct client {
    int kind; /* 0 (links of the overlay: 1, handshakes: 2) */
    int fd;
    int parked; /* its request waits for an object from a parent */
    struct client *pprev, *pnext;
    size_t inlen, outlen, outoff;
    unsigned char in[SLD_MSG_MAX];
    unsigned char out[SLD_MSG_MAX];
};

static char listen_tag, signal_tag, tcp_tag;

static int listen_on(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 256)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* the clients whose request waits for an object from a parent (asked again when one arrives) */
static struct client *parked_head;

static void park(struct client *c)
{
    if (c->parked)
        return;
    c->parked = 1;
    c->pprev = NULL;
    c->pnext = parked_head;
    if (parked_head)
        parked_head->pprev = c;
    parked_head = c;
}

static void unpark(struct client *c)
{
    if (!c->parked)
        return;
    c->parked = 0;
    if (c->pprev)
        c->pprev->pnext = c->pnext;
    else
        parked_head = c->pnext;
    if (c->pnext)
        c->pnext->pprev = c->pprev;
    c->pprev = c->pnext = NULL;
}

static void drop(int ep, struct client *c, int *nclients)
{
    unpark(c);
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
    (*nclients)--;
}

static void accept_all(struct sld_server *s, int ep, int lfd, int *nclients)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        struct ucred cr;
        socklen_t l = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) || cr.uid != getuid() || *nclients >= SLD_MAX_CLIENTS) {
            s->c[SLD_C_REFUSED]++;
            close(fd);
            continue;
        }
        struct client *c = calloc(1, sizeof *c);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (!c || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        (*nclients)++;
        s->c[SLD_C_CLIENTS]++;
    }
}

/* sends what is pending; 0 when all is out, 1 when the socket is full, -1 on error */
static int flush_out(int ep, struct client *c)
{
    while (c->outoff < c->outlen) {
        ssize_t r = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
            epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
            return 1;
        }
        if (r <= 0)
            return -1;
        c->outoff += (size_t)r;
    }
    c->outlen = c->outoff = 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    return 0;
}

/* serves the complete requests in c->in; -1 drops the client, 1 stops the server */
static int serve_input(struct sld_server *s, int ep, struct client *c)
{
    int stop = 0;
    while (c->inlen >= SLD_HDR_SIZE && c->outlen == 0) {
        uint32_t type, len;
        if (sld_unpack_header(c->in, &type, &len))
            return -1;
        if (c->inlen < SLD_HDR_SIZE + len)
            break;
        struct sld_request rq;
        struct sld_reply rp;
        if (sld_unpack_request(type, c->in + SLD_HDR_SIZE, len, &rq))
            return -1;
        uint64_t requests = s->c[SLD_C_REQUESTS], hits = s->c[SLD_C_HITS];
        s->wouldblock = 0;
        sld_cache_serve(s, &rq, &rp);
        if (s->dead)
            return -1;       /* no parent: no answer, the client falls back */
        if (s->wouldblock) { /* asked again when the object arrives (counted once) */
            s->c[SLD_C_REQUESTS] = requests;
            s->c[SLD_C_HITS] = hits;
            park(c);
            return 0;
        }
        unpark(c);
        if (rq.op == SLD_OP_SHUTDOWN)
            stop = 1;
        c->outlen = sld_pack_reply(&rp, c->out, sizeof c->out);
        c->outoff = 0;
        memmove(c->in, c->in + SLD_HDR_SIZE + len, c->inlen - SLD_HDR_SIZE - len);
        c->inlen -= SLD_HDR_SIZE + len;
        if (flush_out(ep, c) < 0)
            return -1;
    }
    return stop;
}

static int on_client(struct sld_server *s, int ep, struct client *c, uint32_t events)
{
    if (events & EPOLLOUT) {
        int r = flush_out(ep, c);
        if (r)
            return r < 0 ? -1 : 0;
        return serve_input(s, ep, c);
    }
    ssize_t r = recv(c->fd, c->in + c->inlen, sizeof c->in - c->inlen, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (r <= 0)
        return -1;
    c->inlen += (size_t)r;
    return serve_input(s, ep, c);
}

/* ---- the overlay in the event loop ---- */

static long mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

struct netstate {
    pthread_t th;
    int joining;   /* the parent thread runs */
    int fgfs_wait; /* waiting for the children of tree 0, then FGFS */
    long fgfs_deadline;
    volatile int done;
    int ready_fd;
};

static struct netstate *g_ns;

static void *parents_then_flag(void *arg)
{
    struct sld_server *s = arg;
    sld_net_connect_parents(s->net);
    __atomic_store_n(&g_ns->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void announce(struct sld_server *s, int ready_fd, const char *sock)
{
    if (ready_fd < 0)
        return;
    if (s->net)
        dprintf(ready_fd, "sheaf-ld ready %d %s\n", s->net->rank, sock);
    else
        dprintf(ready_fd, "%s\n", sock);
    close(ready_fd);
}

/* the parent links are up (or failed): into the loop, then ready; -1: stop */
static int parents_joined(struct sld_server *s, int ep, struct netstate *ns, const char *sock)
{
    pthread_join(ns->th, NULL);
    ns->joining = 0;
    struct sld_net *n = s->net;
    if (!sld_net_complete(n)) {
        fprintf(stderr,
                "sheaf-ld[%d]: not every parent link is up: this server stops (its clients "
                "fall back to the file system)\n",
                n->rank);
        return -1;
    }
    for (int t = 0; t < n->roots; t++) {
        if (!n->parents[t])
            continue;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = n->parents[t]};
        epoll_ctl(ep, EPOLL_CTL_ADD, n->parents[t]->fd, &ev);
    }
    if (n->use_fgfs) {
        ns->fgfs_wait = 1; /* ready after the classification */
        ns->fgfs_deadline = mono_ms() + n->timeout_ms;
        return 0;
    }
    announce(s, ns->ready_fd, sock);
    ns->ready_fd = -1;
    return 0;
}

/* FGFS at start-up is collective over every server: it starts when all the
 * children of tree 0 are linked (or their time is up: the collective then
 * fails everywhere and every path goes through the overlay) */
static void fgfs_step(struct sld_server *s, int ep, struct netstate *ns, const char *sock)
{
    struct sld_net *n = s->net;
    int kids[64], nk = sln_children(n->rank, n->size, 0, kids, 64), have = 0;
    for (int i = 0; i < nk; i++)
        for (int j = 0; j < n->npeers; j++)
            if (!n->peers[j]->dead && n->peers[j]->tree == 0 && n->peers[j]->rank == (uint32_t)kids[i])
                have++;
    if (have < nk && mono_ms() < ns->fgfs_deadline)
        return;
    ns->fgfs_wait = 0;
    sld_policy_init(s);
    for (int i = 0; i < n->npeers; i++) {
        if (n->peers[i]->dead)
            continue;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = n->peers[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, n->peers[i]->fd, &ev);
    }
    announce(s, ns->ready_fd, sock);
    ns->ready_fd = -1;
}

/* a pending handshake progressed: a new link joins the loop (before the FGFS
 * collectives the children's frames are theirs, not the loop's) */
static void on_pending(struct sld_server *s, int ep, struct sln_pend *p)
{
    struct sln_link *l = sld_hs_event(s, ep, p);
    if (!l)
        return;
    if (g_ns && (g_ns->fgfs_wait || g_ns->joining) && s->net->use_fgfs)
        return;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l};
    epoll_ctl(ep, EPOLL_CTL_ADD, l->fd, &ev);
}

/* whether a link still has bytes to read: an event of this loop's batch can
 * be stale (a file's DATA frames are read right after its OBJ, and the
 * FGFS collectives read tree 0's frames themselves); a blocking read on a
 * drained link would wait for the timeout and drop a healthy link */
static int link_readable(int fd)
{
    char c;
    ssize_t r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    return 1; /* data, end of stream or an error: the read below tells */
}

/* a frame on a link; a failed parent link stops the server, a child's drops the child */
static void on_link(struct sld_server *s, struct sln_link *l)
{
    uint32_t type, len;
    if (l->dead || !link_readable(l->fd))
        return;
    if (sln_recv_frame(l, &type, &len) || sln_on_frame(s, l, type, len)) {
        if (l->parent) {
            if (!s->net->stop && !s->dead)
                fprintf(stderr,
                        "sheaf-ld[%d]: the link to parent %u failed: this node's clients fall back "
                        "to the file system\n",
                        s->net->rank, l->rank);
            s->dead = 1;
        } else if (l->rank != SLN_FRONTEND_RANK && !s->net->stop) {
            fprintf(stderr, "sheaf-ld[%d]: child %u left or misbehaved: dropped\n", s->net->rank, l->rank);
        }
        if (l->fd >= 0)
            close(l->fd);
        l->fd = -1;
        l->dead = 1;
    }
}

/* dead child links out of the peer list (after a batch of events) */
static void sweep(struct sld_net *n)
{
    sln_purge_parked(n);
    int k = 0;
    for (int i = 0; i < n->npeers; i++) {
        if (n->peers[i]->dead)
            sln_link_free(n->peers[i]);
        else
            n->peers[k++] = n->peers[i];
    }
    n->npeers = k;
}

#define LOOP_DEAD (-2)

/* how long the loop may sleep: handshakes past their deadline are refused,
 * the parents must answer in time, a join or an FGFS start-up is polled
 * every 10 ms; LOOP_DEAD when the server lost its parents */
static int loop_wait(struct sld_server *s, int ep, struct netstate *ns)
{
    int wait = s->net ? sld_hs_tick(s, ep) : -1;
    if (s->net) {
        int live = sln_liveness(s);
        if (s->dead)
            return LOOP_DEAD;
        if (live >= 0 && (wait < 0 || live < wait))
            wait = live;
    }
    if (ns && (ns->joining || ns->fgfs_wait) && (wait < 0 || wait > 10))
        wait = 10;
    return wait;
}

/* objects arrived: the parked children's GETs, preloads and clients asked
 * again; 1 when a client asked the server to stop */
static int rerun_parked(struct sld_server *s, int ep, int *nclients)
{
    int stop = 0;
    while (s->net->progress && !s->dead && !stop) {
        sln_rerun(s);
        for (struct client *c = parked_head, *next; c && !stop; c = next) {
            next = c->pnext;
            int r = serve_input(s, ep, c);
            if (r > 0)
                stop = 1;
            if (r < 0)
                drop(ep, c, nclients);
        }
    }
    return stop;
}

static int run_loop(struct sld_server *s, int lfd, int sfd, struct netstate *ns, const char *sock)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        return -1;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.ptr = &signal_tag;
    epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
    if (s->net) {
        ev.data.ptr = &tcp_tag;
        epoll_ctl(ep, EPOLL_CTL_ADD, s->net->lfd, &ev);
    }
    int nclients = 0, stop = 0;
    if (s->net)
        s->net->ep = ep;
    parked_head = NULL;
    struct epoll_event evs[64];
    while (!stop) {
        int wait = loop_wait(s, ep, ns);
        if (wait == LOOP_DEAD)
            break;
        int n = epoll_wait(ep, evs, 64, wait);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (ns && ns->joining && __atomic_load_n(&ns->done, __ATOMIC_ACQUIRE) && parents_joined(s, ep, ns, sock))
            break;
        for (int i = 0; i < n && !stop; i++) {
            void *p = evs[i].data.ptr;
            if (p == &listen_tag)
                accept_all(s, ep, lfd, &nclients);
            else if (p == &signal_tag)
                stop = 1;
            else if (p == &tcp_tag)
                sld_hs_accept(s, ep);
            else if (*(int *)p == 2)
                on_pending(s, ep, p);
            else if (*(int *)p == 1)
                on_link(s, p);
            else {
                struct client *c = p;
                int r = on_client(s, ep, c, evs[i].events);
                if (r > 0)
                    stop = 1;
                if (r < 0 || (evs[i].events & (EPOLLHUP | EPOLLERR) && !(evs[i].events & EPOLLIN)))
                    drop(ep, c, &nclients);
            }
            if (s->dead || (s->net && s->net->stop))
                stop = 1;
        }
        if (s->net) {
            if (ns && ns->fgfs_wait)
                fgfs_step(s, ep, ns, sock);
            if (!stop)
                stop = rerun_parked(s, ep, &nclients);
            sweep(s->net);
            if (s->dead || s->net->stop)
                stop = 1;
        }
    }
    /* the remaining clients: a closed socket makes them fall back */
    if (s->net)
        sld_hs_free_all(s, ep);
    close(ep);
    return 0;
}

/* a Unix socket at a path the launcher chose: its directory must be ours and
 * private; a stale socket of ours is replaced */
static int check_socket_path(const char *path, char *err, size_t errlen)
{
    char dir[SLD_PATH_MAX];
    struct stat st;
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir || !strrchr(dir, '/')) {
        snprintf(err, errlen, "sheaf-ld: the socket path %s is not absolute", path);
        return -1;
    }
    *strrchr(dir, '/') = 0;
    if (dir[0] && mkdir(dir, 0700) && errno != EEXIST) {
        snprintf(err, errlen, "sheaf-ld: cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir[0] ? dir : "/", &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(err, errlen,
                 "sheaf-ld: the directory of the socket %s must be ours and not writable "
                 "by others",
                 path);
        return -1;
    }
    if (!lstat(path, &st)) {
        int live = sld_connect(path, 1000);
        if (live >= 0) {
            close(live);
            snprintf(err, errlen, "sheaf-ld: a server listens on %s already", path);
            return -1;
        }
        if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid() || unlink(path)) {
            snprintf(err, errlen, "sheaf-ld: %s exists and is not a stale socket of ours", path);
            return -1;
        }
    }
    return 0;
}

static int serve(struct sld_server *s, const char *sockpath, int ready_fd, char *err, size_t errlen)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (sockpath) {
        if (check_socket_path(sockpath, err, errlen))
            return -1;
        snprintf(s->sock, sizeof s->sock, "%s", sockpath);
    }
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    int lfd = listen_on(s->sock);
    int rc = 0;
    struct netstate ns = {.ready_fd = ready_fd};
    if (sfd < 0 || lfd < 0) {
        snprintf(err, errlen, "sheaf-ld: cannot listen on %s: %s", s->sock, strerror(errno));
        rc = -1;
    } else {
        if (s->net) {
            g_ns = &ns;
            if (pthread_create(&ns.th, NULL, parents_then_flag, s)) {
                snprintf(err, errlen, "sheaf-ld: cannot start a thread");
                rc = -1;
            } else {
                ns.joining = 1;
            }
        } else {
            announce(s, ready_fd, s->sock);
        }
        if (!rc)
            rc = run_loop(s, lfd, sfd, s->net ? &ns : NULL, s->sock);
        if (rc)
            snprintf(err, errlen, "sheaf-ld: event loop failed: %s", strerror(errno));
        if (ns.joining)
            pthread_join(ns.th, NULL);
        g_ns = NULL;
    }
    if (lfd >= 0)
        close(lfd);
    if (sfd >= 0)
        close(sfd);
    if (sockpath) {
        unlink(s->sock);
        char dir[SLD_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", s->sock);
        if (strrchr(dir, '/')) {
            *strrchr(dir, '/') = 0;
            rmdir(dir);
        } /* if empty and ours */
    }
    if (ns.ready_fd >= 0 && s->net)
        close(ns.ready_fd);
    return rc;
}

int sheaf_loader_serve(const char *cache_base, int strip, int ready_fd, char *err, size_t errlen)
{
    struct sld_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "sheaf-ld: out of memory");
        return -1;
    }
    s->strip = strip;
    if (sld_cachedir_create(s, cache_base, err, errlen)) {
        if (s->dirfd >= 0)
            close(s->dirfd);
        free(s);
        return -1;
    }
    int rc = serve(s, NULL, ready_fd, err, errlen);
    sld_remove_tree(s->dir);
    close(s->dirfd);
    sld_cache_free(s);
    free(s);
    return rc;
}

int sheaf_loader_serve_net(const char *cache_base, const char *socket_path, int strip,
                           const struct sheaf_loader_overlay *ov, int ready_fd, char *err, size_t errlen)
{
    struct sld_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "sheaf-ld: out of memory");
        return -1;
    }
    s->strip = strip;
    if (!(s->net = sld_net_create(ov, err, errlen))) {
        free(s);
        return -1;
    }
    if (sld_cachedir_create(s, cache_base, err, errlen)) {
        if (s->dirfd >= 0)
            close(s->dirfd);
        sld_net_free(s->net);
        free(s);
        return -1;
    }
    int rc = serve(s, socket_path, ready_fd, err, errlen);
    sld_remove_tree(s->dir);
    close(s->dirfd);
    sld_cache_free(s);
    sld_net_free(s->net);
    free(s);
    return rc;
}
