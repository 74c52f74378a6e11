/* predicates.c - the public queries: status and the five predicates (sync:
 * collective; async: map look-up), the parallel descriptor, the group
 * communicator and the consistency check. */
#include "fgfs.h"
#include <stdlib.h>
#include <string.h>

#define NEED_CTX(ctx, path, x)                                                                                         \
    do {                                                                                                               \
        if (!(ctx) || !(path) || !(x))                                                                                 \
            return fgfs_err(SHEAF_FGFS_EINVAL, "fgfs query: NULL context, path or output");                            \
    } while (0)

int sheaf_fgfs_status_of(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_status *st)
{
    NEED_CTX(ctx, path, st);
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    int my = nm ? fgfs_ctx_resolve(ctx, path, nm) : fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    if (ctx->cfg.mode == SHEAF_FGFS_ASYNC) {
        int rc = my ? my : fgfs_async_lookup(ctx, nm, st);
        free(nm);
        return rc;
    }
    /* only the name and its locality travel: the 8 KiB struct is gone
     * before the collectives (10^5 simulated processes hold theirs at once) */
    char *uri = !my ? strdup(nm->uri) : NULL;
    int local = !my && nm->local;
    if (!my && !uri)
        my = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    free(nm);
    int rc = fgfs_classify_uri(ctx, uri ? uri : "", local, my, path, st, 2);
    free(uri);
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
    case 0:
        *answer = st.cls == SHEAF_FGFS_FULLY;
        break;
    case 1:
        *answer = st.cls == SHEAF_FGFS_FULLY || st.cls == SHEAF_FGFS_WELL;
        break;
    case 2:
        *answer = st.cls == SHEAF_FGFS_POORLY || st.cls == SHEAF_FGFS_UNIQUE;
        break;
    default:
        *answer = st.cls == SHEAF_FGFS_UNIQUE;
        break;
    }
    return SHEAF_FGFS_OK;
}
int sheaf_fgfs_is_fully_distributed(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 0); }
int sheaf_fgfs_is_well_distributed(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 1); }
int sheaf_fgfs_is_poorly_distributed(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 2); }
int sheaf_fgfs_is_unique(sheaf_fgfs_ctx *c, const char *p, int *a) { return predicate(c, p, a, 3); }

/* this process's name (and resolved path) on the heap, sized to fit: the
 * 8 KiB sheaf_fgfs_name is freed before any collective */
typedef struct small_name {
    char *uri, *path;
    int local;
} small_name;

static int small_resolve(sheaf_fgfs_ctx *ctx, const char *path, small_name *sn)
{
    sn->uri = sn->path = NULL;
    sn->local = 0;
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    int my = nm ? fgfs_ctx_resolve(ctx, path, nm) : fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    if (!my) {
        sn->uri = strdup(nm->uri);
        sn->path = strdup(nm->path);
        sn->local = nm->local;
        if (!sn->uri || !sn->path)
            my = fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory", path);
    }
    free(nm);
    return my;
}
static void small_free(small_name *sn)
{
    free(sn->uri);
    free(sn->path);
}

/* resolve + exact grouping: the table and my group */
static int grouped(sheaf_fgfs_ctx *ctx, const char *path, fgfs_group_table *t, int *mine)
{
    small_name sn;
    int my = small_resolve(ctx, path, &sn);
    int rc = fgfs_group(ctx, my ? "" : sn.uri, my, path, t);
    if (!rc && (*mine = fgfs_group_find(t, sn.uri)) < 0) {
        fgfs_group_table_free(t);
        rc = fgfs_err(SHEAF_FGFS_ECOMM, "%s: my name %s is missing from the group table", path, sn.uri);
    }
    small_free(&sn);
    return rc;
}

int sheaf_fgfs_pardesc_of(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_pardesc *d)
{
    NEED_CTX(ctx, path, d);
    fgfs_group_table t;
    int g, rc = grouped(ctx, path, &t, &g);
    if (rc)
        return rc;
    d->ngroups = (int)t.n;
    d->group = g;
    d->group_size = (int)t.e[g].members;
    d->rep = (int)t.e[g].rep;
    fgfs_group_table_free(&t);
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
    small_name sn;
    int my = small_resolve(ctx, path, &sn);
    sheaf_fgfs_status st;
    int rc = fgfs_classify_uri(ctx, my ? "" : sn.uri, sn.local, my, path, &st, 1); /* "one name?": no Bloom */
    if (!rc && st.cls == SHEAF_FGFS_UNIQUE) {
        *answer = 1; /* one name everywhere: consistent by definition, no I/O */
        small_free(&sn);
        return SHEAF_FGFS_OK;
    }
    fgfs_group_table t = {0};
    if (!rc)
        rc = fgfs_group(ctx, sn.uri, 0, path, &t);
    int g = rc ? -1 : fgfs_group_find(&t, sn.uri);
    fgfs_hash_msg h = {{0, ctx->rank}, 0, 0, 0, 0};
    if (!rc && g >= 0 && t.e[g].rep == (uint32_t)ctx->rank) {
        h.st.code = fgfs_hash_file(sn.path, &h.hmin);
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
    small_free(&sn);
    return rc;
}
