/* server.c - the per-node load server: one epoll loop over the listening Unix
 * socket, a signalfd and the client connections (same uid only, SO_PEERCRED). */
#define _GNU_SOURCE
#include "loader.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SLD_MAX_CLIENTS 4096

struct client {
  int fd;
  size_t inlen, outlen, outoff;
  unsigned char in[SLD_MSG_MAX];
  unsigned char out[SLD_MSG_MAX];
};

static char listen_tag, signal_tag;

static int listen_on(const char *path)
{
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a.sun_path) { errno = ENAMETOOLONG; return -1; }
  memcpy(a.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 256)) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

static void drop(int ep, struct client *c, int *nclients)
{
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  free(c);
  (*nclients)--;
}

static void accept_all(struct sld_server *s, int ep, int lfd, int *nclients)
{
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    struct ucred cr;
    socklen_t l = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) || cr.uid != getuid() ||
        *nclients >= SLD_MAX_CLIENTS) {
      s->c[SLD_C_REFUSED]++;
      close(fd);
      continue;
    }
    struct client *c = calloc(1, sizeof *c);
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
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
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };
      epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
      return 1;
    }
    if (r <= 0) return -1;
    c->outoff += (size_t)r;
  }
  c->outlen = c->outoff = 0;
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
  epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
  return 0;
}

/* serves the complete requests in c->in; -1 drops the client, 1 stops the server */
static int serve_input(struct sld_server *s, int ep, struct client *c)
{
  int stop = 0;
  while (c->inlen >= SLD_HDR_SIZE && c->outlen == 0) {
    uint32_t type, len;
    if (sld_unpack_header(c->in, &type, &len)) return -1;
    if (c->inlen < SLD_HDR_SIZE + len) break;
    struct sld_request rq;
    struct sld_reply rp;
    if (sld_unpack_request(type, c->in + SLD_HDR_SIZE, len, &rq)) return -1;
    sld_cache_serve(s, &rq, &rp);
    if (rq.op == SLD_OP_SHUTDOWN) stop = 1;
    c->outlen = sld_pack_reply(&rp, c->out, sizeof c->out);
    c->outoff = 0;
    memmove(c->in, c->in + SLD_HDR_SIZE + len, c->inlen - SLD_HDR_SIZE - len);
    c->inlen -= SLD_HDR_SIZE + len;
    if (flush_out(ep, c) < 0) return -1;
  }
  return stop;
}

static int on_client(struct sld_server *s, int ep, struct client *c, uint32_t events)
{
  if (events & EPOLLOUT) {
    int r = flush_out(ep, c);
    if (r) return r < 0 ? -1 : 0;
    return serve_input(s, ep, c);
  }
  ssize_t r = recv(c->fd, c->in + c->inlen, sizeof c->in - c->inlen, MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  if (r <= 0) return -1;
  c->inlen += (size_t)r;
  return serve_input(s, ep, c);
}

static int run_loop(struct sld_server *s, int lfd, int sfd)
{
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return -1;
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listen_tag };
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  ev.data.ptr = &signal_tag;
  epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
  int nclients = 0, stop = 0;
  struct epoll_event evs[64];
  while (!stop) {
    int n = epoll_wait(ep, evs, 64, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < n; i++) {
      if (evs[i].data.ptr == &listen_tag) accept_all(s, ep, lfd, &nclients);
      else if (evs[i].data.ptr == &signal_tag) stop = 1;
      else {
        struct client *c = evs[i].data.ptr;
        int r = on_client(s, ep, c, evs[i].events);
        if (r > 0) stop = 1;
        if (r < 0 || (evs[i].events & (EPOLLHUP | EPOLLERR) && !(evs[i].events & EPOLLIN)))
          drop(ep, c, &nclients);
      }
    }
  }
  /* the remaining clients: a closed socket makes them fall back */
  close(ep);
  return 0;
}

int sheaf_loader_serve(const char *cache_base, int strip, int ready_fd, char *err, size_t errlen)
{
  struct sld_server *s = calloc(1, sizeof *s);
  if (!s) { snprintf(err, errlen, "sheaf-ld: out of memory"); return -1; }
  s->strip = strip;
  if (sld_cachedir_create(s, cache_base, err, errlen)) { free(s); return -1; }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  int lfd = listen_on(s->sock);
  int rc = 0;
  if (sfd < 0 || lfd < 0) {
    snprintf(err, errlen, "sheaf-ld: cannot listen on %s: %s", s->sock, strerror(errno));
    rc = -1;
  } else {
    if (ready_fd >= 0) {
      dprintf(ready_fd, "%s\n", s->sock);
      close(ready_fd);
    }
    rc = run_loop(s, lfd, sfd);
    if (rc) snprintf(err, errlen, "sheaf-ld: event loop failed: %s", strerror(errno));
  }
  if (lfd >= 0) close(lfd);
  if (sfd >= 0) close(sfd);
  sld_remove_tree(s->dir);
  sld_cache_free(s);
  free(s);
  return rc;
}

int sheaf_loader_request(const char *socket, int op, const char *path, char *out, size_t outlen,
                         int timeout_ms)
{
  struct sld_request rq;
  struct sld_reply rp;
  memset(&rq, 0, sizeof rq);
  rq.op = (uint32_t)op;
  if (snprintf(rq.path, sizeof rq.path, "%s", path ? path : "") >= (int)sizeof rq.path) return ENAMETOOLONG;
  int fd = sld_connect(socket, timeout_ms);
  if (fd < 0) return -1;
  int r = sld_call(fd, &rq, &rp);
  close(fd);
  if (r) return -1;
  if (out && outlen) snprintf(out, outlen, "%s", rp.path);
  return rp.status;
}

int sheaf_loader_stats(const char *socket, unsigned long long *counters, int n, int timeout_ms)
{
  struct sld_request rq;
  struct sld_reply rp;
  memset(&rq, 0, sizeof rq);
  rq.op = SLD_OP_STATS;
  int fd = sld_connect(socket, timeout_ms);
  if (fd < 0) return -1;
  int r = sld_call(fd, &rq, &rp);
  close(fd);
  if (r) return -1;
  for (int i = 0; i < n && i < SLD_NCOUNTERS; i++) counters[i] = rp.counters[i];
  return 0;
}

const char *sheaf_loader_counter_name(int i)
{
  return sld_counter_name(i);
}
