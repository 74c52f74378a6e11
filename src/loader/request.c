/* request.c - the calls the launcher and the bootstrapper make to a load
 * server over its Unix socket (kept apart from the server, so that the static
 * bootstrapper links only these). */
#include "loader.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sheaf_loader_request(const char *socket, int op, const char *path, char *out, size_t outlen, int timeout_ms)
{
    struct sld_request rq;
    struct sld_reply rp;
    memset(&rq, 0, sizeof rq);
    rq.op = (uint32_t)op;
    if (snprintf(rq.path, sizeof rq.path, "%s", path ? path : "") >= (int)sizeof rq.path)
        return ENAMETOOLONG;
    int fd = sld_connect(socket, timeout_ms);
    if (fd < 0)
        return -1;
    int r = sld_call(fd, &rq, &rp);
    close(fd);
    if (r)
        return -1;
    if (out && outlen)
        snprintf(out, outlen, "%s", rp.path);
    return rp.status;
}

int sheaf_loader_stats(const char *socket, unsigned long long *counters, int n, int timeout_ms)
{
    struct sld_request rq;
    struct sld_reply rp;
    memset(&rq, 0, sizeof rq);
    rq.op = SLD_OP_STATS;
    int fd = sld_connect(socket, timeout_ms);
    if (fd < 0)
        return -1;
    int r = sld_call(fd, &rq, &rp);
    close(fd);
    if (r)
        return -1;
    for (int i = 0; i < n && i < SLD_NCOUNTERS; i++)
        counters[i] = rp.counters[i];
    return 0;
}

const char *sheaf_loader_counter_name(int i) { return sld_counter_name(i); }
