/* handshake.c - the accepting side of the overlay's handshake as state per
 * connection in the server's event loop: a connecting peer never blocks the
 * loop (a silent or slow peer costs a slot, not time). Each pending connection
 * has a deadline (the handshake's bound: min(timeout, 5 s)); at most
 * SLN_MAX_PENDING are pending, more are refused at once. Refusals are counted
 * always and logged at most SLN_LOG_BURST lines per SLN_LOG_WINDOW_MS, then a
 * line with the number left out. A peer that passed is admitted here too
 * (sld_net_admit: one of our children, a group member or the front end). */
#define _GNU_SOURCE
#include "loader.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#define SLN_LOG_BURST 10
#define SLN_LOG_WINDOW_MS 10000L

/* one connection in its handshake (kind 2 for the event loop) */
struct sln_pend {
    int kind;
    int fd;
    int stage; /* 0: HELLO awaited, 1: PROOF awaited */
    long deadline;
    size_t have;
    unsigned char buf[256];
    struct sln_hello hello;
    struct sln_challenge chal;
    char who[80];
};

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* a refusal: counted, logged within the rate limit */
void sld_net_refuse(struct sld_server *s, const char *who, const char *why)
{
    struct sld_net *n = s->net;
    long t = now_ms();
    s->c[SLD_C_NET_REFUSED]++;
    if (t - n->log_start >= SLN_LOG_WINDOW_MS)
        sld_net_log_flush(s, 1);
    if (n->log_lines < SLN_LOG_BURST) {
        n->log_lines++;
        fprintf(stderr, "sheaf-ld[%d]: refused peer %s: %s\n", n->rank, who, why);
    } else {
        n->log_suppressed++;
    }
}

void sld_net_log_flush(struct sld_server *s, int force)
{
    struct sld_net *n = s->net;
    long t = now_ms();
    if (!force && t - n->log_start < SLN_LOG_WINDOW_MS)
        return;
    if (n->log_suppressed)
        fprintf(stderr, "sheaf-ld[%d]: %lu more refused peers not logged (at most %d lines in %ld s)\n", n->rank,
                n->log_suppressed, SLN_LOG_BURST, SLN_LOG_WINDOW_MS / 1000);
    n->log_suppressed = 0;
    n->log_lines = 0;
    n->log_start = t;
}

static void pend_free(struct sld_server *s, int ep, struct sln_pend *p, const char *why)
{
    struct sld_net *n = s->net;
    if (why)
        sld_net_refuse(s, p->who, why);
    if (p->fd >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
        close(p->fd);
    }
    for (int i = 0; i < n->npend; i++)
        if (n->pend[i] == p) {
            n->pend[i] = n->pend[--n->npend];
            break;
        }
    free(p);
}

void sld_hs_accept(struct sld_server *s, int ep)
{
    struct sld_net *n = s->net;
    for (;;) {
        int fd = accept4(n->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        char who[80];
        sld_net_peer_name(fd, who, sizeof who);
        struct sln_pend *p = n->npend < SLN_MAX_PENDING ? calloc(1, sizeof *p) : NULL;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
        if (!p || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
            free(p);
            close(fd);
            sld_net_refuse(s, who, n->npend >= SLN_MAX_PENDING ? "too many handshakes pending" : "out of memory");
            continue;
        }
        p->kind = 2;
        p->fd = fd;
        p->deadline = now_ms() + (n->timeout_ms < 5000 ? n->timeout_ms : 5000);
        memcpy(p->who, who, sizeof who);
        n->pend[n->npend++] = p;
    }
}

/* a whole frame of the handshake in p->buf: 1; 0 when more must come; -1 bad */
static int read_frame(struct sln_pend *p, uint32_t *type, uint32_t *len)
{
    for (;;) {
        size_t need = SLD_HDR_SIZE;
        if (p->have >= SLD_HDR_SIZE) {
            if (sln_unpack_header(p->buf, type, len) || *len > sizeof p->buf - SLD_HDR_SIZE)
                return -1;
            need += *len;
            if (p->have == need)
                return 1;
        }
        ssize_t r = recv(p->fd, p->buf + p->have, need - p->have, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 0;
        if (r <= 0)
            return -1;
        p->have += (size_t)r;
    }
}

static int send_now(int fd, const unsigned char *b, size_t n)
{
    /* a handshake frame is small: it fits a fresh socket's buffer, or the peer is refused */
    ssize_t r = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    return r == (ssize_t)n ? 0 : -1;
}

struct sln_link *sld_hs_event(struct sld_server *s, int ep, struct sln_pend *p)
{
    static const char *bad = "the handshake failed (wrong secret, replay or garbage)";
    struct sld_net *n = s->net;
    uint32_t type, len;
    int r = read_frame(p, &type, &len);
    if (r == 0)
        return NULL;
    if (r < 0) {
        pend_free(s, ep, p, bad);
        return NULL;
    }
    unsigned char out[128];
    p->have = 0;
    if (p->stage == 0) {
        if (type != SLN_HELLO || sln_unpack_hello(p->buf + SLD_HDR_SIZE, len, &p->hello) ||
            sln_auth_challenge(n->key, &p->hello, &p->chal)) {
            pend_free(s, ep, p, bad);
            return NULL;
        }
        size_t k = sln_pack_challenge(&p->chal, out, sizeof out);
        if (!k || send_now(p->fd, out, k)) {
            pend_free(s, ep, p, bad);
            return NULL;
        }
        p->stage = 1;
        return NULL;
    }
    struct sln_proof pr;
    if (type != SLN_PROOF || sln_unpack_proof(p->buf + SLD_HDR_SIZE, len, &pr) ||
        sln_auth_check(n->key, &p->hello, &p->chal, &pr)) {
        pend_free(s, ep, p, bad);
        return NULL;
    }
    size_t k = sln_pack_empty(SLN_WELCOME, out, sizeof out);
    if (!k || send_now(p->fd, out, k)) {
        pend_free(s, ep, p, bad);
        return NULL;
    }
    /* authenticated: the link is blocking with timeouts from now on, like every link */
    int fd = p->fd;
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    p->fd = -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
        close(fd);
        pend_free(s, ep, p, "cannot make its link blocking");
        return NULL;
    }
    char who[80];
    memcpy(who, p->who, sizeof who);
    uint32_t tree = p->hello.tree, rank = p->hello.rank;
    pend_free(s, ep, p, NULL);
    return sld_net_admit(s, fd, tree, rank, who);
}

int sld_hs_tick(struct sld_server *s, int ep)
{
    struct sld_net *n = s->net;
    long t = now_ms(), next = -1;
    for (int i = 0; i < n->npend;) {
        struct sln_pend *p = n->pend[i];
        if (p->deadline <= t) {
            pend_free(s, ep, p, "no handshake before its deadline (silent or slow peer)");
            continue; /* the last one moved to i */
        }
        if (next < 0 || p->deadline - t < next)
            next = p->deadline - t;
        i++;
    }
    if (n->log_suppressed) {
        sld_net_log_flush(s, 0);
        long w = n->log_start + SLN_LOG_WINDOW_MS - t;
        if (n->log_suppressed && (next < 0 || w < next))
            next = w > 0 ? w : 0;
    }
    return next < 0 ? -1 : (int)next + 1;
}

void sld_hs_free_all(struct sld_server *s, int ep)
{
    struct sld_net *n = s->net;
    while (n->npend > 0)
        pend_free(s, ep, n->pend[n->npend - 1], NULL);
    sld_net_log_flush(s, 1);
}

/* ---- admission: an authenticated peer becomes a link ---- */

static int add_peer(struct sld_net *n, struct sln_link *l)
{
    if (n->npeers == n->cappeers) {
        int nc = n->cappeers ? 2 * n->cappeers : 16;
        struct sln_link **np = realloc(n->peers, (size_t)nc * sizeof *np);
        if (!np)
            return -1;
        n->peers = np;
        n->cappeers = nc;
    }
    n->peers[n->npeers++] = l;
    return 0;
}

void sld_net_peer_name(int fd, char *out, size_t cap)
{
    struct sockaddr_storage a;
    socklen_t l = sizeof a;
    char h[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (!getpeername(fd, (struct sockaddr *)&a, &l)) {
        if (a.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, h, sizeof h);
            port = ntohs(((struct sockaddr_in *)&a)->sin_port);
        } else if (a.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&a)->sin6_addr, h, sizeof h);
            port = ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
        }
    }
    snprintf(out, cap, "%s:%d", h, port);
}

/* an authenticated peer must be one of our children in the tree it names
 * (not yet connected) or the front end */
struct sln_link *sld_net_admit(struct sld_server *s, int fd, uint32_t tree, uint32_t rank, const char *who)
{
    struct sld_net *n = s->net;
    const char *why = NULL;
    if (rank == SLN_FRONTEND_RANK ? tree != 0
        : tree >= SLN_GROUP_TREE  ? (tree - SLN_GROUP_TREE >= (uint32_t)n->ngm ||
                                    n->grep[tree - SLN_GROUP_TREE] != n->rank || rank >= (uint32_t)n->size)
                                  : (tree >= (uint32_t)n->roots || rank >= (uint32_t)n->size ||
                                    sln_parent((int)rank, n->size, (int)tree) != n->rank))
        why = "it is not a child (or group member) of this server";
    for (int i = 0; !why && rank != SLN_FRONTEND_RANK && i < n->npeers; i++)
        if (!n->peers[i]->dead && n->peers[i]->rank == rank && n->peers[i]->tree == tree)
            why = "that child is connected already";
    struct sln_link *l = why ? NULL : calloc(1, sizeof *l);
    if (!why && (!l || add_peer(n, l))) {
        free(l);
        l = NULL;
        why = "out of memory";
    }
    if (why) {
        sld_net_refuse(s, who, why);
        close(fd);
        return NULL;
    }
    sln_set_timeouts(fd, n->timeout_ms);
    l->kind = 1;
    l->fd = fd;
    l->tree = tree;
    l->rank = rank;
    return l;
}
