/* objects.c - the frames that arrive on the overlay's links, on top of the
 * caches: a reply or a broadcast received (a FILE's bytes into the node-local
 * cache; a broadcast forwarded to the children first, then stored), a child's
 * GET served from the caches (asking our own parent on a miss, through
 * cache.c), the preload, the shutdown and the front end's STATS. A GET is
 * never waited for: the child's GET or preload that needed it is parked here
 * and asked again when objects arrive (issue 26); the GETs themselves, the
 * sending of objects and the push are route.c's (below the caches, so no
 * call goes back up); a failed parent link, or no answer for the timeout,
 * makes the server stop (its clients and its subtree fall back to the file
 * system). */
#define _GNU_SOURCE
#include "loader.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLN_FILE_MAX (1ull << 40) /* a file larger than this is refused */

/* writes the non-zero 4 KiB blocks (zero blocks stay holes, as in a stripped copy) */
static int write_sparse(int fd, const unsigned char *p, size_t n, uint64_t off)
{
    static const unsigned char zero[4096];
    for (size_t i = 0; i < n; i += 4096) {
        size_t k = n - i < 4096 ? n - i : 4096;
        if (!memcmp(p + i, zero, k))
            continue;
        for (size_t w = 0; w < k;) {
            ssize_t r = pwrite(fd, p + i + w, k - w, (off_t)(off + i + w));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            w += (size_t)r;
        }
    }
    return 0;
}

/* receives the DATA frames of FILE object o on link l into the local copy
 * (o->real becomes its path); with fwd, every frame goes to the children of
 * l's tree before it is written here. 0, or -1 (the link is unusable). */
static int recv_file(struct sld_server *s, struct sln_link *l, struct sln_obj *o, int fwd)
{
    struct sld_net *n = s->net;
    char local[SLD_PATH_MAX], tmp[NAME_MAX + 1];
    const char *base = NULL;
    int fd = -1, dfd = -1;
    /* the path names the original file (a real path): clean, else the peer is refused */
    if (o->size > SLN_FILE_MAX || !sld_path_clean(o->path, 1))
        return -1;
    int keep = !sld_htab_get(&s->files, o->path) && !sld_local_name(s, o->path, local, sizeof local);
    if (keep) {
        keep = !sld_cache_parent(s, local, &dfd, &base) &&
               snprintf(tmp, sizeof tmp, "%s.net%lu", base, ++s->seq) < (int)sizeof tmp &&
               (fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0;
    }
    uint64_t got = 0;
    int bad = 0;
    while (got < o->size) {
        uint32_t type, len;
        struct sln_coll d;
        if (sln_recv_frame(l, &type, &len) || type != SLN_DATA || sln_unpack_coll(l->buf + SLD_HDR_SIZE, len, &d) ||
            !d.len || d.len > o->size - got) {
            bad = 1;
            break;
        }
        if (fwd)
            sln_to_children(n, l->tree, l->buf, SLD_HDR_SIZE + len);
        if (fd >= 0 && write_sparse(fd, d.data, d.len, got))
            keep = 0;
        got += d.len;
        s->c[SLD_C_NET_BYTES] += d.len;
    }
    if (fd >= 0) {
        int closed = 0;
        if (bad || !keep || ftruncate(fd, (off_t)o->size) || fchmod(fd, (mode_t)((o->mode & 0755) | 0400)) ||
            (closed = 1, close(fd)) || renameat(dfd, tmp, dfd, base)) {
            unlinkat(dfd, tmp, 0);
            keep = 0;
        }
        if (!closed)
            close(fd);
    }
    if (dfd >= 0)
        close(dfd);
    if (bad)
        return -1;
    if (keep)
        snprintf(o->real, sizeof o->real, "%s", local);
    else if (!sld_htab_get(&s->files, o->path))
        o->status = EIO; /* could not keep it here */
    return 0;
}

/* an OBJ frame on link l: unpacked, its bytes received (FILE); a broadcast is
 * forwarded to l's children and stored. 0 or -1. */
static int take_obj(struct sld_server *s, struct sln_link *l, uint32_t len, struct sln_obj *o)
{
    struct sld_net *n = s->net;
    if (sln_unpack_obj(l->buf + SLD_HDR_SIZE, len, o))
        return -1;
    s->c[SLD_C_NET_OBJS]++;
    int bcast = (o->flags & SLN_F_BCAST) != 0;
    if (bcast) {
        sln_to_children(n, l->tree, l->buf, SLD_HDR_SIZE + len);
        s->c[SLD_C_NET_PUSHED]++;
    }
    if (o->kind == SLN_K_FILE && !o->status && recv_file(s, l, o, bcast)) {
        sln_obj_free(o);
        return -1;
    }
    if (bcast) {
        sld_cache_store(s, o);
        if (o->kind == n->cur_kind && !strcmp(o->path, n->cur_path))
            n->cur_bcast = 1;
        sln_obj_free(o);
    }
    return 0;
}

static void shutdown_all(struct sld_server *s)
{
    struct sld_net *n = s->net;
    unsigned char b[SLD_HDR_SIZE];
    sln_pack_empty(SLN_SHUTDOWN, b, sizeof b);
    for (int t = 0; t < n->roots; t++)
        sln_to_children(n, (uint32_t)t, b, sizeof b);
    n->stop = 1;
}

/* ---- requests that wait for a parent: a child's GET or a preload is parked
 * and asked again when objects arrive (the GETs themselves: route.c) ---- */

static int park(struct sld_net *n, struct sln_link *l, uint32_t kind, const char *path)
{
    if (n->nparked == n->capparked) {
        size_t nc = n->capparked ? 2 * n->capparked : 64;
        if (nc > SLN_MAX_PARKED)
            return -1;
        struct sln_parked *np = realloc(n->parked, nc * sizeof *np);
        if (!np)
            return -1;
        n->parked = np;
        n->capparked = nc;
    }
    char *p = strdup(path);
    if (!p)
        return -1;
    n->parked[n->nparked++] = (struct sln_parked){l, kind, p};
    return 0;
}

void sln_purge_parked(struct sld_net *n)
{
    size_t k = 0;
    for (size_t i = 0; i < n->nparked; i++) {
        if (n->parked[i].l && n->parked[i].l->dead)
            free(n->parked[i].path);
        else
            n->parked[k++] = n->parked[i];
    }
    n->nparked = k;
}

/* a child's GET: the object from our caches (or our parent), or ACK when it
 * went down by broadcast meanwhile; 2 when it waits for our parent */
static int answer_get(struct sld_server *s, struct sln_link *l, uint32_t kind, const char *path)
{
    struct sld_net *n = s->net;
    struct sln_get g = {kind, {0}};
    snprintf(g.path, sizeof g.path, "%s", path);
    n->cur_kind = g.kind;
    snprintf(n->cur_path, sizeof n->cur_path, "%s", g.path);
    n->cur_bcast = 0;
    s->wouldblock = 0;
    struct sln_obj o;
    int r = sld_cache_obj(s, g.kind, g.path, &o);
    n->cur_kind = 0;
    if (r || l->dead)
        return -1;
    if (s->wouldblock)
        return 2;
    s->c[SLD_C_NET_SERVED]++;
    if (n->cur_bcast) {
        unsigned char b[SLD_HDR_SIZE + 8 + SLD_PATH_MAX];
        size_t bl = sln_pack_get(SLN_ACK, &g, b, sizeof b);
        return bl && !sln_send_all(l->fd, b, bl) ? 0 : -1;
    }
    return sln_send_obj(s, l, &o);
}

static int serve_get(struct sld_server *s, struct sln_link *l, uint32_t len)
{
    struct sln_get g;
    if (sln_unpack_get(l->buf + SLD_HDR_SIZE, len, &g))
        return -1;
    /* a FILE is asked for by its real path (clean); other kinds by any absolute path */
    if (g.path[0] != '/' || (g.kind == SLN_K_FILE && !sld_path_clean(g.path, 1)))
        return -1;
    int r = answer_get(s, l, g.kind, g.path);
    return r == 2 ? park(s->net, l, g.kind, g.path) : r;
}

/* a preload's look-up, as a client's (parked like a GET when it waits) */
static void preload_lookup(struct sld_server *s, const char *path)
{
    struct sld_request rq;
    struct sld_reply rp;
    memset(&rq, 0, sizeof rq);
    rq.op = SLD_OP_LOOKUP;
    snprintf(rq.path, sizeof rq.path, "%s", path);
    s->wouldblock = 0;
    sld_cache_serve(s, &rq, &rp);
}

void sln_rerun(struct sld_server *s)
{
    struct sld_net *n = s->net;
    n->progress = 0;
    size_t k = 0, end = n->nparked;
    for (size_t i = 0; i < end; i++) {
        struct sln_parked p = n->parked[i];
        int r = 0;
        if (s->dead || (p.l && p.l->dead))
            r = -1;
        else if (!p.l) {
            preload_lookup(s, p.path);
            r = s->wouldblock ? 2 : 0;
        } else
            r = answer_get(s, p.l, p.kind, p.path);
        if (r == 2) {
            n->parked[k++] = p;
            continue;
        }
        if (r < 0 && p.l && !p.l->dead)
            sln_drop_link(p.l);
        free(p.path);
    }
    /* parked while these ran: none (a re-run never parks anew), but keep any */
    for (size_t i = end; i < n->nparked; i++)
        n->parked[k++] = n->parked[i];
    n->nparked = k;
}

/* the front end's PRELOAD: goes to every server (down every tree from here),
 * each asks for the file as a client would; the front end gets an ACK */
static int preload(struct sld_server *s, struct sln_link *l, uint32_t len)
{
    struct sld_net *n = s->net;
    struct sln_get g;
    if (sln_unpack_get(l->buf + SLD_HDR_SIZE, len, &g) || g.path[0] != '/')
        return -1;
    if (l->rank == SLN_FRONTEND_RANK) {
        for (int t = 0; t < n->roots; t++)
            sln_to_children(n, (uint32_t)t, l->buf, SLD_HDR_SIZE + len);
    } else {
        sln_to_children(n, l->tree, l->buf, SLD_HDR_SIZE + len);
    }
    preload_lookup(s, g.path);
    if (s->wouldblock && park(n, NULL, SLN_K_FILE, g.path))
        return -1;
    if (l->rank != SLN_FRONTEND_RANK)
        return 0;
    unsigned char b[SLD_HDR_SIZE + 8 + SLD_PATH_MAX];
    size_t bl = sln_pack_get(SLN_ACK, &g, b, sizeof b);
    return bl && !sln_send_all(l->fd, b, bl) ? 0 : -1;
}

/* the front end asks for this server's counters (the launcher's --stats-file
 * when its own host runs no server) */
static int fe_stats(struct sld_server *s, struct sln_link *l)
{
    struct sln_stats m = {(uint32_t)s->net->rank, SLD_NCOUNTERS, {0}};
    memcpy(m.c, s->c, sizeof m.c);
    unsigned char b[SLD_HDR_SIZE + 8 + 8 * SLD_NCOUNTERS];
    size_t bl = sln_pack_stats(&m, b, sizeof b);
    return bl && !sln_send_all(l->fd, b, bl) ? 0 : -1;
}

int sln_on_frame(struct sld_server *s, struct sln_link *l, uint32_t type, uint32_t len)
{
    if (type == SLN_STATS && !len && l->rank == SLN_FRONTEND_RANK)
        return fe_stats(s, l);
    if (type == SLN_SHUTDOWN && !len && (l->parent || l->rank == SLN_FRONTEND_RANK)) {
        shutdown_all(s);
        return 0;
    }
    if (type == SLN_PRELOAD && (l->parent || l->rank == SLN_FRONTEND_RANK))
        return preload(s, l, len);
    if (l->parent) {
        if (type == SLN_ACK) { /* the object came by broadcast before: it is stored */
            struct sln_get a;
            if (sln_unpack_get(l->buf + SLD_HDR_SIZE, len, &a))
                return -1;
            sln_arrived(s->net, a.kind, a.path);
            return 0;
        }
        if (type != SLN_OBJ)
            return -1;
        struct sln_obj o;
        if (take_obj(s, l, len, &o))
            return -1;
        if (o.flags & SLN_F_BCAST) {
            s->net->progress = 1;
            return 0;
        } /* stored by take_obj */
        if (sln_arrived(s->net, o.kind, o.path))
            sld_cache_store(s, &o); /* else unasked: dropped */
        sln_obj_free(&o);
        return 0;
    }
    if (type == SLN_GET)
        return serve_get(s, l, len);
    return -1; /* anything else from a child is a protocol error: the child is dropped */
}
