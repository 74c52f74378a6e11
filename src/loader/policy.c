/* policy.c - the global file status (FGFS, include/sheaf_fgfs.h) in the load
 * servers: its collective interface implemented over the overlay (tree 0:
 * reduce up, broadcast down, each frame forwarded with a sequence number),
 * one ASYNC context made at start-up (every mount point classified once; the
 * default, --copy-all turns it off), then a local look-up per path:
 *   node-local everywhere or well distributed -> passed through (the server
 *     answers with the original path: its clients read it directly);
 *   unique -> through the overlay (read once by the tree's root);
 *   poorly distributed -> read by the representative of each group (the
 *     servers that see the same file server: sheaf_fgfs_pardesc_of per such
 *     mount point at start-up) and sent to the members of its group that
 *     ask, over a direct link member -> representative;
 *   not classified (the classification failed, or the path is not covered)
 *     -> read by this node's server itself, asked of no one (never another
 *     node's copy). */
#define _GNU_SOURCE
#include "loader.h"
#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SLD_HAVE_FGFS
#include "sheaf_fgfs.h"

#define SEQ_FAIL 0x80000000u

struct ovcomm {
    struct sld_server *s;
    uint32_t seq;
};

static struct sln_link *child_link(struct sld_net *n, int rank)
{
    for (int i = 0; i < n->npeers; i++) {
        struct sln_link *l = n->peers[i];
        if (!l->dead && l->tree == 0 && l->rank == (uint32_t)rank)
            return l;
    }
    return NULL;
}

static int c_rank(const sheaf_fgfs_comm *c) { return ((struct ovcomm *)c->impl)->s->net->rank; }

static int c_size(const sheaf_fgfs_comm *c) { return ((struct ovcomm *)c->impl)->s->net->size; }

static int send_coll(struct sln_link *l, uint32_t type, uint32_t seq, const void *p, size_t len)
{
    struct sln_coll m = {seq, (uint32_t)len, (unsigned char *)p};
    size_t cap = SLD_HDR_SIZE + 8 + len;
    unsigned char *b = malloc(cap);
    size_t bl = b ? sln_pack_coll(type, &m, b, cap) : 0;
    int r = !bl || sln_send_all(l->fd, b, bl);
    free(b);
    return r ? -1 : 0;
}

/* one collective frame of `type` and sequence `seq` from l: 0 ok, 1 the
 * sender reports a failure, -1 the link failed or the frame is not it */
static int recv_coll(struct sln_link *l, uint32_t type, uint32_t seq, struct sln_coll *m)
{
    uint32_t t, len;
    if (!l || l->dead || sln_recv_frame(l, &t, &len) || t != type || sln_unpack_coll(l->buf + SLD_HDR_SIZE, len, m) ||
        (m->seq & ~SEQ_FAIL) != seq)
        return -1;
    return (m->seq & SEQ_FAIL) ? 1 : 0;
}

/* down tree 0 from rank 0 (the only root the FGFS library uses) */
static int c_bcast(sheaf_fgfs_comm *c, void **buf, size_t *len, size_t maxlen, int root)
{
    struct ovcomm *oc = c->impl;
    struct sld_net *n = oc->s->net;
    uint32_t seq = ++oc->seq;
    if (root != 0)
        return -1; /* the same answer on every member */
    int kids[64], nk = sln_children(n->rank, n->size, 0, kids, 64), fail = 0;
    void *data = NULL;
    size_t dl = 0;
    if (n->rank == 0) {
        data = *buf;
        dl = *len;
        if (dl > maxlen)
            fail = 1;
    } else {
        struct sln_coll m;
        int r = recv_coll(n->parents[0], SLN_BCAST, seq, &m);
        if (r || m.len > maxlen)
            fail = 1;
        else if (!(data = malloc(m.len ? m.len : 1)))
            fail = 1;
        else {
            memcpy(data, m.data, m.len);
            dl = m.len;
        }
    }
    for (int i = 0; i < nk; i++) {
        struct sln_link *l = child_link(n, kids[i]);
        if (l && send_coll(l, SLN_BCAST, seq | (fail ? SEQ_FAIL : 0), fail ? NULL : data, fail ? 0 : dl))
            l->dead = 1;
    }
    if (n->rank != 0) {
        if (fail) {
            free(data);
            return -1;
        }
        *buf = data;
        *len = dl;
    }
    return fail ? -1 : 0;
}

/* up tree 0: my value, then each child's subtree (higher ranks) combined in rank order */
static int c_reduce(sheaf_fgfs_comm *c, const void *in, size_t len, const sheaf_fgfs_op *op, void **out, size_t *outlen,
                    int root)
{
    struct ovcomm *oc = c->impl;
    struct sld_net *n = oc->s->net;
    uint32_t seq = ++oc->seq;
    *out = NULL;
    if (root != 0)
        return -1;
    int kids[64], nk = sln_children(n->rank, n->size, 0, kids, 64), fail = len > op->max_len;
    unsigned char *acc = malloc(op->max_len ? op->max_len : 1), *tmp = malloc(op->max_len ? op->max_len : 1);
    size_t al = len;
    if (!acc || !tmp)
        fail = 1;
    else
        memcpy(acc, in, len);
    for (int i = 0; i < nk; i++) {
        struct sln_coll m;
        int r = recv_coll(child_link(n, kids[i]), SLN_REDUCE, seq, &m);
        if (r) {
            fail = 1;
            if (r < 0)
                continue;
        }
        if (fail || m.len > op->max_len) {
            fail = 1;
            continue;
        }
        size_t tl = op->max_len;
        if (op->combine(acc, al, m.data, m.len, tmp, &tl, op->arg) || tl > op->max_len) {
            fail = 1;
            continue;
        }
        memcpy(acc, tmp, tl);
        al = tl;
    }
    free(tmp);
    if (n->rank != 0) {
        int r = send_coll(n->parents[0], SLN_REDUCE, seq | (fail ? SEQ_FAIL : 0), fail ? NULL : acc, fail ? 0 : al);
        free(acc);
        return fail || r ? -1 : 0;
    }
    if (fail) {
        free(acc);
        return -1;
    }
    *out = acc;
    *outlen = al;
    return 0;
}

static int c_barrier(sheaf_fgfs_comm *c)
{
    (void)c;
    return 0; /* the library's collectives are reduce + bcast; nothing waits on a barrier here */
}

static int c_split(sheaf_fgfs_comm *c, int color, int key, sheaf_fgfs_comm *out)
{
    (void)c;
    (void)color;
    (void)key;
    (void)out;
    return -1; /* not over the overlay (the group case is not built) */
}

static void c_free(sheaf_fgfs_comm *c) { (void)c; }

static const sheaf_fgfs_comm_ops ov_ops = {c_rank, c_size, c_barrier, c_bcast, c_reduce, c_split, c_free, NULL};

/* the poorly distributed mount points and my group's representative for each:
 * one sheaf_fgfs_pardesc_of per such mount point (collective, the same order
 * everywhere: the classified list is the union, identical on every server) */
static void groups_init(struct sld_net *n, sheaf_fgfs_ctx *ctx)
{
    int cnt = sheaf_fgfs_async_count(ctx);
    n->gmount = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *n->gmount);
    n->grep = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *n->grep);
    n->glink = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *n->glink);
    int ok = n->gmount && n->grep && n->glink;
    for (int i = 0; i < cnt; i++) {
        const char *mp;
        sheaf_fgfs_status st;
        if (sheaf_fgfs_async_entry(ctx, i, &mp, &st) || st.cls != SHEAF_FGFS_POORLY)
            continue;
        sheaf_fgfs_pardesc d;
        /* collective: called by every server even when this one has no memory left */
        int rc = sheaf_fgfs_pardesc_of(ctx, mp, &d);
        if (rc || !ok) {
            fprintf(stderr, "sheaf-ld[%d]: no groups for %s (%s): it is read by the root\n", n->rank, mp,
                    rc ? sheaf_fgfs_last_error() : "out of memory");
            continue;
        }
        if (!(n->gmount[n->ngm] = strdup(mp)))
            continue;
        n->grep[n->ngm++] = d.rep;
    }
}

int sld_policy_group(const struct sld_net *n, const char *path)
{
    int best = -1;
    size_t bl = 0;
    for (int i = 0; n && i < n->ngm; i++) {
        size_t l = strlen(n->gmount[i]);
        if (strncmp(path, n->gmount[i], l) || (path[l] && path[l] != '/' && strcmp(n->gmount[i], "/")))
            continue;
        if (best < 0 || l > bl) {
            best = i;
            bl = l;
        }
    }
    return best;
}

int sld_policy_init(struct sld_server *s)
{
    struct sld_net *n = s->net;
    struct ovcomm *oc = calloc(1, sizeof *oc);
    sheaf_fgfs_comm *comm = calloc(1, sizeof *comm);
    if (!oc || !comm) {
        free(oc);
        free(comm);
        return -1;
    }
    oc->s = s;
    comm->ops = &ov_ops;
    comm->impl = oc;
    sheaf_fgfs_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = SHEAF_FGFS_ASYNC;
    cfg.flags = SHEAF_FGFS_NOREALPATH; /* a path's class never costs a file-system operation */
    sheaf_fgfs_ctx *ctx = NULL;
    int rc = sheaf_fgfs_init(comm, &cfg, &ctx);
    /* the collectives ran over blocking reads of the links: put their timeouts back */
    if (rc) {
        fprintf(stderr,
                "sheaf-ld[%d]: the global file status is not available (%s): each server reads "
                "every path itself (no node gets another's copy; --copy-all sends all through the "
                "overlay)\n",
                n->rank, sheaf_fgfs_last_error());
        free(oc);
        free(comm);
        return -1;
    }
    n->fgfs = ctx;
    n->fgfs_comm = comm;
    groups_init(n, ctx);
    return 0;
}

int sld_policy_pass(const struct sld_net *n, const char *path)
{
    if (!n || !n->use_fgfs)
        return 0; /* --copy-all: everything through the overlay */
    sheaf_fgfs_status st;
    if (!n->fgfs || sheaf_fgfs_status_of(n->fgfs, path, &st))
        return SLD_POL_HERE; /* not classified: this node's own copy */
    return st.cls == SHEAF_FGFS_FULLY || st.cls == SHEAF_FGFS_WELL;
}

void sld_policy_free(struct sld_net *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->ngm; i++) {
        free(n->gmount[i]);
        sln_link_free(n->glink[i]);
    }
    free(n->gmount);
    free(n->grep);
    free(n->glink);
    n->gmount = NULL;
    n->grep = NULL;
    n->glink = NULL;
    n->ngm = 0;
    if (!n->fgfs)
        return;
    sheaf_fgfs_finalize(n->fgfs);
    sheaf_fgfs_comm *comm = n->fgfs_comm;
    free(comm->impl);
    free(comm);
    n->fgfs = NULL;
}

#else /* built without libsheaf_fgfs */

int sld_policy_init(struct sld_server *s)
{
    fprintf(stderr,
            "sheaf-ld[%d]: built without the global file status (libsheaf_fgfs): each server "
            "reads every path itself (--copy-all sends all through the overlay)\n",
            s->net->rank);
    return -1;
}

int sld_policy_pass(const struct sld_net *n, const char *path)
{
    (void)path;
    return n && n->use_fgfs ? SLD_POL_HERE : 0; /* not classified: this node's own copy */
}

int sld_policy_group(const struct sld_net *n, const char *path)
{
    (void)n;
    (void)path;
    return -1;
}

void sld_policy_free(struct sld_net *n) { (void)n; }
#endif

int sld_policy_of(const struct sld_net *n, const char *path, int *group)
{
    *group = -1;
    int p = sld_policy_pass(n, path);
    if (p)
        return p; /* SLD_POL_PASS or SLD_POL_HERE */
    *group = sld_policy_group(n, path);
    return SLD_POL_OVERLAY;
}
