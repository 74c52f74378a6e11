/* predicates.c - the public queries: status and the five predicates (sync:
 * collective; async: map look-up), the parallel descriptor, the group
 * communicator and the consistency check. */
#include "fgfs.h"
#include <stdlib.h>
#include <string.h>

#define NEED_CTX(ctx, path, x)                                                                                        \
    do {                                                                                                              \
        if (!(ctx) || !(path) || !(x))                                                                                \
            return fgfs_err(SHEAF_FGFS_EINVAL, "fgfs query: NULL context, path or output");                           \
    } while (0)

int sheaf_fgfs_status_of(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_status *st)
{
    NEED_CTX(ctx, path, st);
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    int my = nm ? fgfs_ctx_resolve(ctx, path, nm) : fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    int rc;
    if (ctx->cfg.mode == SHEAF_FGFS_ASYNC)
        rc = my ? my : fgfs_async_lookup(ctx, nm, st);
    else if (nm)
        rc = fgfs_classify(ctx, nm, my, path, st);
    else {
        static const sheaf_fgfs_name dummy; /* still take part in the collectives */
        rc = fgfs_classify(ctx, &dummy, my, path, st);
    }
    free(nm);
    return rc;
}

static int predicate(sheaf_fgfs_ctx *ctx, const char *path, int *answer, int which)
{
    NEED_CTX(ctx, path, answer);
    sheaf_fgfs_status st;
    int rc = sheaf_fgfs_status_of(ctx, path, &st);
    if (rc)
        return rc;
    switch (which) {
    case 0: *answer = st.cls == SHEAF_FGFS_FULLY; break;
    case 1: *answer = st.cls == SHEAF_FGFS_FULLY || st.cls == SHEAF_FGFS_WELL; break;
    case 2: *answer = st.cls == SHEAF_FGFS_POORLY || st.cls == SHEAF_FGFS_UNIQUE; break;
    default: *answer = st.cls == SHEAF_FGFS_UNIQUE; break;
    }
    return SHEAF_FGFS_OK;
}
int sheaf_fgfs_is_fully_distributed(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 0); }
int sheaf_fgfs_is_well_distributed(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 1); }
int sheaf_fgfs_is_poorly_distributed(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 2); }
int sheaf_fgfs_is_unique(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 3); }

/* resolve + exact grouping; *nm and *t for the caller (free both) */
static int grouped(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_name **nmp, fgfs_group_table *t, int *mine)
{
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    int my = nm ? fgfs_ctx_resolve(ctx, path, nm) : fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    int rc = fgfs_group(ctx, my ? "" : nm->uri, my, path, t);
    if (!rc && (*mine = fgfs_group_find(t, nm->uri)) < 0) {
        fgfs_group_table_free(t);
        rc = fgfs_err(SHEAF_FGFS_ECOMM, "%s: my name %s is missing from the group table", path, nm->uri);
    }
    if (rc) {
        free(nm);
        return rc;
    }
    *nmp = nm;
    return SHEAF_FGFS_OK;
}

int sheaf_fgfs_pardesc_of(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_pardesc *d)
{
    NEED_CTX(ctx, path, d);
    sheaf_fgfs_name *nm;
    fgfs_group_table t;
    int g, rc = grouped(ctx, path, &nm, &t, &g);
    if (rc)
        return rc;
    d->ngroups = (int)t.n;
    d->group = g;
    d->group_size = (int)t.e[g].members;
    d->rep = (int)t.e[g].rep;
    fgfs_group_table_free(&t);
    free(nm);
    return SHEAF_FGFS_OK;
}

int sheaf_fgfs_group_comm(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_comm *out)
{
    NEED_CTX(ctx, path, out);
    sheaf_fgfs_pardesc d;
    int rc = sheaf_fgfs_pardesc_of(ctx, path, &d);
    if (rc)
        return rc;
    if (ctx->comm->ops->split(ctx->comm, d.group, ctx->rank, out))
        return fgfs_err(SHEAF_FGFS_ECOMM, "%s: the collective layer failed to split by group", path);
    return SHEAF_FGFS_OK;
}

int sheaf_fgfs_is_consistent(sheaf_fgfs_ctx *ctx, const char *path, int *answer)
{
    NEED_CTX(ctx, path, answer);
    static const sheaf_fgfs_name dummy; /* without memory: still take part (read only) */
    sheaf_fgfs_name *alloc = malloc(sizeof *alloc);
    int my = alloc ? fgfs_ctx_resolve(ctx, path, alloc) : fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    const sheaf_fgfs_name *nm = alloc ? alloc : &dummy;
    sheaf_fgfs_status st;
    int rc = fgfs_classify_to(ctx, nm, my, path, &st, 1); /* only "one name?": no Bloom filter */
    if (!rc && st.cls == SHEAF_FGFS_UNIQUE) {
        *answer = 1; /* one name everywhere: consistent by definition, no I/O */
        free(alloc);
        return SHEAF_FGFS_OK;
    }
    fgfs_group_table t = {0};
    if (!rc)
        rc = fgfs_group(ctx, nm->uri, 0, path, &t);
    int g = rc ? -1 : fgfs_group_find(&t, nm->uri);
    fgfs_hash_msg h = {{0, ctx->rank}, 0, 0, 0, 0};
    if (!rc && g >= 0 && t.e[g].rep == (uint32_t)ctx->rank) {
        h.st.code = fgfs_hash_file(nm->path, &h.hmin);
        h.have = h.st.code == 0;
        h.hmax = h.hmin;
    }
    int mine = h.st.code;
    if (!rc) {
        uint8_t buf[FGFS_HASH_LEN];
        void *res = NULL;
        size_t rl;
        fgfs_hash_pack(&h, buf);
        rc = fgfs_allreduce(ctx->comm, buf, sizeof buf, &fgfs_op_hash, &res, &rl);
        if (!rc && fgfs_hash_unpack(res, rl, &h))
            rc = fgfs_err(SHEAF_FGFS_ECOMM, "%s: malformed hash message", path);
        free(res);
        if (!rc && !(rc = fgfs_status_result(&h.st, ctx->rank, mine, path)))
            *answer = h.have == t.n && h.hmin == h.hmax;
    }
    fgfs_group_table_free(&t);
    free(alloc);
    return rc;
}
