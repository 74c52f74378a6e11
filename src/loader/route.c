/* route.c - the overlay's helpers below the caches (cache.c) and the frames
 * (objects.c): where a path's objects come from (sln_where, decided once per
 * missed key), the GETs to the parents that never wait (the table of GETs in
 * flight, arrival, liveness), and what goes down to the children (an object
 * and a file's bytes, push broadcast). Calls neither cache.c nor objects.c. */
#define _GNU_SOURCE
#include "loader.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

/* where the objects of path come from, decided in one go (one FGFS status,
 * one group match, one tree hash): passed through (node-local or well
 * distributed: the clients read the original), read here without asking
 * anyone (the classification failed or does not cover the path: each node's
 * own copy, as without the overlay), read here (this server is
 * the path's reader: its group's representative when poorly distributed,
 * else the root of its tree; then pushed to the tree in push mode), or asked
 * of the parent (remote). No overlay: read here, nothing pushed. */
void sln_where(const struct sld_net *n, const char *path, struct sln_where *w)
{
    memset(w, 0, sizeof *w);
    w->group = -1;
    if (!n)
        return;
    int pol = sld_policy_of(n, path, &w->group);
    w->pass = pol == SLD_POL_PASS;
    if (pol != SLD_POL_OVERLAY)
        return; /* passed through, or read here (no classification): never another node's copy */
    w->tree = sln_tree_of(path, n->roots);
    int root = w->tree % n->size;
    w->remote = n->rank != (w->group >= 0 ? n->grep[w->group] : root);
    w->push = n->push && w->group < 0 && n->rank == root;
}

/* the link a GET for path goes on: the parent in its tree, or (poorly
 * distributed) the link to the group's representative, made when first needed */
static struct sln_link *route(struct sld_server *s, const struct sln_where *w, int *t)
{
    struct sld_net *n = s->net;
    int g = w->group;
    *t = w->tree;
    if (g < 0)
        return n->parents[*t];
    *t = (int)(SLN_GROUP_TREE + (uint32_t)g);
    if (n->glink[g] && !n->glink[g]->dead)
        return n->glink[g];
    sln_link_free(n->glink[g]);
    n->glink[g] = NULL;
    int rep = n->grep[g];
    int fd = sln_dial(n->addrs[rep], n->timeout_ms);
    if (fd < 0)
        return NULL;
    if (sln_auth_connect(fd, n->key, (uint32_t)*t, (uint32_t)n->rank, n->timeout_ms)) {
        close(fd);
        return NULL;
    }
    struct sln_link *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return NULL;
    }
    l->kind = 1;
    l->fd = fd;
    l->tree = (uint32_t)*t;
    l->rank = (uint32_t)rep;
    l->parent = 1;
    n->glink[g] = l;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = l}; /* its replies come in the loop */
    if (n->ep >= 0)
        epoll_ctl(n->ep, EPOLL_CTL_ADD, fd, &ev);
    return l;
}

void sln_drop_link(struct sln_link *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    l->dead = 1;
}

/* sends a whole buffer on every child link of `tree` (a failed child is dropped) */
void sln_to_children(struct sld_net *n, uint32_t tree, const unsigned char *b, size_t len)
{
    for (int i = 0; i < n->npeers; i++) {
        struct sln_link *c = n->peers[i];
        if (c->dead || c->rank == SLN_FRONTEND_RANK || c->tree != tree)
            continue;
        if (sln_send_all(c->fd, b, len)) {
            fprintf(stderr, "sheaf-ld[%d]: child %u lost, its subtree falls back\n", n->rank, c->rank);
            sln_drop_link(c);
        }
    }
}

int sln_send_obj(struct sld_server *s, struct sln_link *l, const struct sln_obj *o)
{
    size_t cap = sln_obj_size(o);
    unsigned char *b = malloc(cap);
    size_t len = b ? sln_pack_obj(o, b, cap) : 0;
    int bad = !len || sln_send_all(l->fd, b, len);
    free(b);
    if (bad || o->kind != SLN_K_FILE || o->status)
        return bad ? -1 : 0;
    int fd = open(o->real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char *chunk = malloc(SLD_HDR_SIZE + 8 + SLN_CHUNK), *data = malloc(SLN_CHUNK);
    uint64_t left = o->size;
    while (chunk && data && left) {
        struct sln_coll d = {0, (uint32_t)(left < SLN_CHUNK ? left : SLN_CHUNK), data};
        if (read(fd, data, d.len) != (ssize_t)d.len)
            break;
        size_t fl = sln_pack_coll(SLN_DATA, &d, chunk, SLD_HDR_SIZE + 8 + SLN_CHUNK);
        if (!fl || sln_send_all(l->fd, chunk, fl))
            break;
        left -= d.len;
    }
    free(data);
    free(chunk);
    close(fd);
    return left ? -1 : 0;
}

/* ---- fetches that never wait (issue 26): a GET goes up, the request that
 * needed it is parked (s->wouldblock) and asked again when a reply or a
 * broadcast arrives on a parent link in the event loop; so servers of a forest
 * that ask each other at the same time never wait on each other ---- */

struct inflight {
    int done;
};

static long mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static void key_of(uint32_t kind, const char *path, char *k, size_t cap)
{
    snprintf(k, cap, "%u:%s", (unsigned)kind, path);
}

int sln_fetch(struct sld_server *s, uint32_t kind, const char *path, const struct sln_where *w)
{
    struct sld_net *n = s->net;
    char key[SLD_PATH_MAX + 16];
    key_of(kind, path, key, sizeof key);
    if (!n->inflight && !(n->inflight = calloc(1, sizeof *n->inflight)))
        return -1;
    struct inflight *f = sld_htab_get(n->inflight, key);
    if (f && !f->done) {
        s->wouldblock = 1;
        return 2;
    } /* asked already: its reply wakes us */
    if (!f) {
        if (!(f = calloc(1, sizeof *f)))
            return -1;
        if (sld_htab_put(n->inflight, key, f)) {
            free(f);
            return -1;
        }
    }
    int t = 0;
    struct sln_link *l = s->dead ? NULL : route(s, w, &t);
    struct sln_get g = {kind, {0}};
    unsigned char b[SLD_HDR_SIZE + 8 + SLD_PATH_MAX];
    snprintf(g.path, sizeof g.path, "%s", path);
    size_t blen = sln_pack_get(SLN_GET, &g, b, sizeof b);
    if (s->dead || !l || l->dead || !blen || sln_send_all(l->fd, b, blen)) {
        if (!s->dead)
            fprintf(stderr,
                    "sheaf-ld[%d]: the link to the parent (tree %d) failed: this node's clients "
                    "fall back to the file system\n",
                    n->rank, t);
        s->dead = 1;
        return -1;
    }
    f->done = 0;
    if (!n->outstanding++)
        n->last_progress = mono_ms();
    s->c[SLD_C_NET_GETS]++;
    s->wouldblock = 1;
    return 2;
}

/* a reply (OBJ or ACK) for (kind, path) came: 1 when it was asked for */
int sln_arrived(struct sld_net *n, uint32_t kind, const char *path)
{
    char key[SLD_PATH_MAX + 16];
    key_of(kind, path, key, sizeof key);
    struct inflight *f = n->inflight ? sld_htab_get(n->inflight, key) : NULL;
    n->progress = 1;
    if (!f || f->done)
        return 0;
    f->done = 1;
    n->outstanding--;
    n->last_progress = mono_ms();
    return 1;
}

int sln_liveness(struct sld_server *s)
{
    struct sld_net *n = s->net;
    if (!n->outstanding || s->dead)
        return -1;
    long left = n->last_progress + n->timeout_ms - mono_ms();
    if (left > 0)
        return (int)left;
    fprintf(stderr,
            "sheaf-ld[%d]: no answer from the parents for %d ms with %d requests outstanding: "
            "this node's clients fall back to the file system\n",
            n->rank, n->timeout_ms, n->outstanding);
    s->dead = 1;
    return -1;
}

void sln_free_inflight(struct sld_net *n)
{
    if (n->inflight)
        sld_htab_free(n->inflight, free);
    free(n->inflight);
    n->inflight = NULL;
    for (size_t i = 0; i < n->nparked; i++)
        free(n->parked[i].path);
    free(n->parked);
    n->parked = NULL;
    n->nparked = n->capparked = 0;
}

void sln_push(struct sld_server *s, const struct sln_obj *o, const struct sln_where *w)
{
    struct sld_net *n = s->net;
    struct sln_obj b = *o;
    b.flags |= SLN_F_BCAST;
    uint32_t tree = (uint32_t)w->tree;
    for (int i = 0; i < n->npeers; i++) {
        struct sln_link *c = n->peers[i];
        if (c->dead || c->rank == SLN_FRONTEND_RANK || c->tree != tree)
            continue;
        if (sln_send_obj(s, c, &b)) {
            fprintf(stderr, "sheaf-ld[%d]: child %u lost, its subtree falls back\n", n->rank, c->rank);
            sln_drop_link(c);
        }
    }
    s->c[SLD_C_NET_PUSHED]++;
    if (o->kind == n->cur_kind && !strcmp(o->path, n->cur_path))
        n->cur_bcast = 1;
}
