/* link.c - the overlay's TCP connections (blocking, every wait bounded by
 * SO_RCVTIMEO/SO_SNDTIMEO), its frames, and the binomial trees. */
#define _GNU_SOURCE
#include "net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

void sln_set_timeouts(int fd, int timeout_ms)
{
    if (timeout_ms <= 0)
        timeout_ms = 20000;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int sln_send_all(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int recv_all(int fd, unsigned char *p, size_t n)
{
    while (n) {
        ssize_t r = recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1; /* error, timeout or closed */
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int sln_recv_frame_fd(int fd, unsigned char *buf, size_t cap, uint32_t *type, uint32_t *len)
{
    if (cap < SLD_HDR_SIZE || recv_all(fd, buf, SLD_HDR_SIZE) || sln_unpack_header(buf, type, len) ||
        *len > cap - SLD_HDR_SIZE)
        return -1;
    return recv_all(fd, buf + SLD_HDR_SIZE, *len);
}

int sln_recv_frame(struct sln_link *l, uint32_t *type, uint32_t *len)
{
    unsigned char hdr[SLD_HDR_SIZE];
    if (recv_all(l->fd, hdr, SLD_HDR_SIZE) || sln_unpack_header(hdr, type, len))
        return -1;
    if (l->cap < SLD_HDR_SIZE + (size_t)*len) {
        size_t nc = SLD_HDR_SIZE + (size_t)*len;
        unsigned char *nb = realloc(l->buf, nc);
        if (!nb)
            return -1;
        l->buf = nb;
        l->cap = nc;
    }
    memcpy(l->buf, hdr, SLD_HDR_SIZE);
    return recv_all(l->fd, l->buf + SLD_HDR_SIZE, *len);
}

void sln_link_free(struct sln_link *l)
{
    if (!l)
        return;
    if (l->fd >= 0)
        close(l->fd);
    free(l->buf);
    free(l);
}

/* "host:port" (host may be [v6]) into its parts */
static int split_addr(const char *addr, char *host, size_t hcap, char *port, size_t pcap)
{
    const char *c = strrchr(addr, ':');
    if (!c || !c[1])
        return -1;
    size_t hn = (size_t)(c - addr);
    const char *h = addr;
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
        h++;
        hn -= 2;
    }
    if (!hn || hn >= hcap || strlen(c + 1) >= pcap)
        return -1;
    memcpy(host, h, hn);
    host[hn] = 0;
    snprintf(port, pcap, "%s", c + 1);
    return 0;
}

static struct addrinfo *resolve(const char *addr, int passive)
{
    char host[256], port[16];
    if (split_addr(addr, host, sizeof host, port, sizeof port))
        return NULL;
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    if (getaddrinfo(host, port, &hints, &ai))
        return NULL;
    return ai;
}

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

int sln_dial(const char *addr, int timeout_ms)
{
    long end = now_ms() + (timeout_ms > 0 ? timeout_ms : 20000);
    int delay = 10;
    for (;;) {
        struct addrinfo *ai = resolve(addr, 0);
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
            int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0)
                continue;
            sln_set_timeouts(fd, timeout_ms);
            if (!connect(fd, a->ai_addr, a->ai_addrlen)) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                freeaddrinfo(ai);
                return fd;
            }
            close(fd);
        }
        if (ai)
            freeaddrinfo(ai);
        if (now_ms() + delay > end)
            return -1;
        usleep((useconds_t)delay * 1000); /* the peer may not listen yet */
        if (delay < 200)
            delay *= 2;
    }
}

int sln_listen(const char *addr)
{
    struct addrinfo *ai = resolve(addr, 1);
    if (!ai) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    int fd = -1, e = EADDRNOTAVAIL;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 256)) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        errno = e;
    return fd;
}

/* binomial tree over the ranks relative to the root (rank `tree`): the
 * parent of relative rank r clears r's lowest set bit; depth ceil(log2 size) */
int sln_parent(int rank, int size, int tree)
{
    int r = (rank - tree % size + size) % size;
    if (!r)
        return -1;
    r &= r - 1;
    return (r + tree) % size;
}

int sln_children(int rank, int size, int tree, int *out, int cap)
{
    int r = (rank - tree % size + size) % size, n = 0;
    int low = r ? (r & -r) : 1 << 30;
    for (int b = 1; b < low && r + b < size; b <<= 1)
        if (n < cap)
            out[n++] = (r + b + tree) % size;
    return n;
}

int sln_tree_of(const char *path, int roots)
{
    if (roots <= 1)
        return 0;
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the path */
    for (const char *p = path; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (int)(h % (uint64_t)roots);
}
