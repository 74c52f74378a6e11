/* context.c - the context of FGFS (sheaf_fgfs_init / finalize), its
 * agreement (fgfs_agree over sheaf_comm_agree) and path resolution. init
 * sits above the queries: in asynchronous mode it builds the mount-point
 * map (async.c, which classifies through query.c), and neither calls back
 * into this file; the public queries (predicates.c, select.c) use it. */
#include "fgfs.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* sheaf_comm_agree: one exchange when all are fine; a process that failed
 * keeps its own message, the others get EREMOTE with the first failure's */
int fgfs_agree(sheaf_fgfs_ctx *ctx, int mycode, const char *what)
{
    sheaf_comm_agreement a;
    int rc = sheaf_comm_agree(ctx->comm, mycode, mycode ? sheaf_fgfs_last_error() : NULL, NULL, 0, &a);
    if (mycode)
        return mycode; /* this process's own message stands */
    if (!rc)
        return SHEAF_FGFS_OK;
    if (a.rank < 0)
        return fgfs_err(SHEAF_FGFS_ECOMM, "%s: the agreement failed: %s", what, a.msg);
    return fgfs_err(SHEAF_FGFS_EREMOTE, "%s: process %d failed (code %d): %s", what, a.rank, a.code, a.msg);
}

int sheaf_fgfs_init(sheaf_fgfs_comm *comm, const sheaf_fgfs_config *cfg, sheaf_fgfs_ctx **out)
{
    if (!comm || !comm->ops || !out)
        return fgfs_err(SHEAF_FGFS_EINVAL, "fgfs init: NULL communicator or output");
    *out = NULL;
    sheaf_fgfs_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return fgfs_err(SHEAF_FGFS_ENOMEM, "fgfs init: out of memory"); /* not collective-safe: nothing else fits */
    ctx->comm = comm;
    ctx->rank = comm->ops->rank(comm);
    ctx->size = comm->ops->size(comm);
    if (cfg)
        ctx->cfg = *cfg;
    sheaf_fgfs_config *c = &ctx->cfg;
    int my = 0;
    if (c->mode != SHEAF_FGFS_SYNC && c->mode != SHEAF_FGFS_ASYNC)
        my = fgfs_err(SHEAF_FGFS_EINVAL, "fgfs init: mode %d is neither SYNC nor ASYNC", c->mode);
    if (c->well_threshold <= 0)
        c->well_threshold = 16;
    if (c->bloom_names <= 0)
        c->bloom_names = 4096;
    if (!c->max_group_bytes)
        c->max_group_bytes = 1u << 20;
    ctx->bloom_bits = fgfs_bloom_bits((uint64_t)c->bloom_names);
    if (!c->host && getenv("SHEAF_FGFS_HOST") && *getenv("SHEAF_FGFS_HOST"))
        c->host = getenv("SHEAF_FGFS_HOST"); /* tests and simulated nodes */
    if (c->host) {
        if (strlen(c->host) >= sizeof ctx->host && !my)
            my = fgfs_err(SHEAF_FGFS_EINVAL, "fgfs init: host name longer than %zu bytes", sizeof ctx->host - 1);
        else
            strncpy(ctx->host, c->host, sizeof ctx->host - 1);
    } else if (gethostname(ctx->host, sizeof ctx->host - 1) && !my)
        my = fgfs_err(SHEAF_FGFS_EIO, "fgfs init: gethostname failed: %s", strerror(errno));
    c->host = ctx->host;
    ctx->mounts = c->mounts;
    if (!ctx->mounts && !my && !(my = sheaf_fgfs_mounts_load(&ctx->owned)))
        ctx->mounts = ctx->owned;
    int rc = fgfs_agree(ctx, my, "fgfs init");
    if (!rc && c->mode == SHEAF_FGFS_ASYNC)
        rc = fgfs_async_build(ctx);
    if (rc) {
        sheaf_fgfs_finalize(ctx);
        return rc;
    }
    *out = ctx;
    return SHEAF_FGFS_OK;
}

void sheaf_fgfs_finalize(sheaf_fgfs_ctx *ctx)
{
    if (!ctx)
        return;
    for (int i = 0; i < ctx->namap; i++)
        free(ctx->amap[i].mp);
    free(ctx->amap);
    sheaf_fgfs_mounts_free(ctx->owned);
    free(ctx);
}

sheaf_fgfs_comm *sheaf_fgfs_comm_of(sheaf_fgfs_ctx *ctx) { return ctx ? ctx->comm : NULL; }

int fgfs_ctx_resolve(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_name *nm)
{
    return sheaf_fgfs_resolve(ctx->mounts, ctx->host, path, ctx->cfg.flags, nm);
}
