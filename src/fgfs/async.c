/* async.c - asynchronous mode (FGFS IV-C): at init every mount point of
 * every process (the union, pseudo file systems excepted) is classified
 * collectively, once; afterwards a process answers for any path alone: the
 * longest mount point of the union that is a prefix of the resolved path
 * has the same servers as the path on every process (each process's own
 * mount for the path is in the union and is a prefix of that mount point),
 * so its class is the path's class. Consistency is per file: not here. */
#include "fgfs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fgfs_mount_union(sheaf_fgfs_ctx *ctx, fgfs_group_table *t)
{
    const sheaf_fgfs_mounts *m = ctx->mounts;
    const char **names = malloc((size_t)m->n * sizeof *names);
    int my = names ? 0 : fgfs_err(SHEAF_FGFS_ENOMEM, "mount union: out of memory");
    size_t k = 0;
    for (int i = 0; names && i < m->n; i++)
        if (m->e[i].kind != SHEAF_FGFS_PSEUDO)
            names[k++] = m->e[i].mp;
    size_t cap = ctx->cfg.max_group_bytes;
    fgfs_status_word sw = {my, ctx->rank};
    uint8_t *msg = NULL;
    size_t len = 0;
    int rc = fgfs_group_packn(&sw, names, k, (uint32_t)ctx->rank, &msg, &len);
    if (!rc && len > cap) { /* this process's own list is too long: send an empty one with the error */
        free(msg);
        my = sw.code = fgfs_err(SHEAF_FGFS_ELIMIT, "mount union: %zu mount points exceed max_group_bytes=%zu", k, cap);
        rc = fgfs_group_packn(&sw, names, 0, 0, &msg, &len);
    }
    free(names);
    if (rc)
        return rc;
    sheaf_fgfs_op op = {"fgfs-mount-union", cap, fgfs_op_group_merge, &cap};
    void *res = NULL;
    size_t rl = 0;
    rc = fgfs_allreduce(ctx->comm, msg, len, &op, &res, &rl);
    free(msg);
    if (!rc && fgfs_group_unpack(res, rl, t))
        rc = fgfs_err(SHEAF_FGFS_ECOMM, "mount union: malformed table");
    if (rc) {
        free(res);
        return rc;
    }
    t->raw = res;
    if ((rc = fgfs_status_result(&t->st, ctx->rank, my, "mount union")))
        fgfs_group_table_free(t);
    return rc;
}

int fgfs_async_build(sheaf_fgfs_ctx *ctx)
{
    fgfs_group_table t = {0};
    int rc = fgfs_mount_union(ctx, &t);
    if (rc)
        return rc;
    ctx->amap = calloc(t.n ? t.n : 1, sizeof *ctx->amap);
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    int my = ctx->amap && nm ? 0 : fgfs_err(SHEAF_FGFS_ENOMEM, "async init: out of memory for %u mounts", t.n);
    for (uint32_t i = 0; i < t.n && !rc; i++) {
        char mp[FGFS_PATH];
        snprintf(mp, sizeof mp, "%.*s", (int)t.e[i].len, t.e[i].name);
        char *copy = ctx->amap ? strdup(mp) : NULL;
        if (!copy && !my)
            my = fgfs_err(SHEAF_FGFS_ENOMEM, "async init: out of memory");
        /* a local failure travels in this classification's status word, so
         * that init fails on every process or on none */
        int mine = my;
        if (!mine) /* the mount point need not exist here: resolve it lexically */
            mine = sheaf_fgfs_resolve(ctx->mounts, ctx->host, mp, ctx->cfg.flags | SHEAF_FGFS_NOREALPATH, nm);
        sheaf_fgfs_status st;
        static const sheaf_fgfs_name dummy;
        rc = fgfs_classify(ctx, nm && !my ? nm : &dummy, mine, mp, &st);
        if (!rc) {
            ctx->amap[i].mp = copy;
            ctx->amap[i].st = st;
            ctx->namap = (int)i + 1;
        } else
            free(copy);
    }
    free(nm);
    fgfs_group_table_free(&t);
    return rc ? rc : my;
}

int fgfs_async_lookup(const sheaf_fgfs_ctx *ctx, const sheaf_fgfs_name *nm, sheaf_fgfs_status *st)
{
    if (nm->kind == SHEAF_FGFS_PSEUDO) {
        memset(st, 0, sizeof *st);
        st->cls = SHEAF_FGFS_FULLY;
        st->all_local = st->any_local = 1;
        return SHEAF_FGFS_OK;
    }
    int best = -1;
    size_t bl = 0, pl = strlen(nm->path);
    for (int i = 0; i < ctx->namap; i++) { /* tens of entries: linear */
        const char *mp = ctx->amap[i].mp;
        size_t l = strlen(mp);
        if (l <= pl && !memcmp(mp, nm->path, l) && (l == 1 || !nm->path[l] || nm->path[l] == '/') &&
            (best < 0 || l > bl))
            best = i, bl = l;
    }
    if (best < 0)
        return fgfs_err(SHEAF_FGFS_EPARSE, "%s: no classified mount point covers the path", nm->path);
    *st = ctx->amap[best].st;
    return SHEAF_FGFS_OK;
}

int sheaf_fgfs_async_count(const sheaf_fgfs_ctx *ctx) { return ctx ? ctx->namap : 0; }

int sheaf_fgfs_async_entry(const sheaf_fgfs_ctx *ctx, int i, const char **mount_point, sheaf_fgfs_status *st)
{
    if (!ctx || i < 0 || i >= ctx->namap || !mount_point || !st)
        return fgfs_err(SHEAF_FGFS_EINVAL, "async entry %d: out of range or NULL output", i);
    *mount_point = ctx->amap[i].mp;
    *st = ctx->amap[i].st;
    return SHEAF_FGFS_OK;
}
