/* conn.c - one request/reply over the server's Unix socket, with timeouts so
 * that a dead or stuck server makes the caller fall back, never hang.
 * Compiled into the audit client too: libc only, no allocation. */
#include "loader.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef SOCK_CLOEXEC
#define SOCK_CLOEXEC 02000000
#endif

int sld_connect(const char *sock, int timeout_ms)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (!sock || strlen(sock) >= sizeof a.sun_path)
        return -1;
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    if (timeout_ms <= 0)
        timeout_ms = 20000; /* never wait forever */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int xfer(int fd, unsigned char *buf, size_t n, int wr)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = wr ? send(fd, buf + done, n - done, MSG_NOSIGNAL) : recv(fd, buf + done, n - done, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1; /* error, timeout (EAGAIN) or closed */
        done += (size_t)r;
    }
    return 0;
}

int sld_call(int fd, const struct sld_request *rq, struct sld_reply *rp)
{
    unsigned char buf[SLD_MSG_MAX];
    size_t n = sld_pack_request(rq, buf, sizeof buf);
    uint32_t type, len;
    if (!n || xfer(fd, buf, n, 1) || xfer(fd, buf, SLD_HDR_SIZE, 0))
        return -1;
    if (sld_unpack_header(buf, &type, &len) || type != SLD_OP_REPLY || xfer(fd, buf, len, 0) ||
        sld_unpack_reply(buf, len, rp))
        return -1;
    return 0;
}
