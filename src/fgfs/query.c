/* query.c - the synchronous queries (FGFS IV-B..E): the
 * multilevel triage (1: AND of "local" + min/max of the name hash; 2: OR of
 * Bloom filters and the maximum-likelihood count), exact grouping only for
 * the parallel descriptor and the consistency check, which compares the
 * XXH3 hash of one file per group. The context they run on is context.c's. */
#include "fgfs.h"
#include <stdlib.h>
#include <string.h>

/* level 2: OR of the Bloom filters, then the maximum-likelihood count */
static int bloom_count(sheaf_fgfs_ctx *ctx, const char *uri, double *est, int *saturated)
{
    fgfs_bloom_msg m = {{0, ctx->rank}, (uint32_t)ctx->bloom_bits, NULL};
    size_t len = fgfs_bloom_msg_len(m.mbits);
    uint8_t *buf = calloc(1, len);
    int my = buf ? 0 : fgfs_err(SHEAF_FGFS_ENOMEM, "%s: out of memory for a Bloom filter", uri);
    static const uint8_t empty[16 + 8];
    if (buf) {
        m.bits = buf + 16;
        fgfs_bloom_add(m.bits, m.mbits, uri, strlen(uri));
        fgfs_bloom_pack(&m, buf);
    }
    sheaf_fgfs_op op = fgfs_op_bloom_or;
    op.max_len = len;
    void *res = NULL;
    size_t rl = 0;
    /* without memory this process still takes part, with an error message */
    uint8_t small[16];
    if (!buf) {
        fgfs_bloom_msg e = {{my, ctx->rank}, 0, (uint8_t *)empty};
        fgfs_bloom_pack(&e, small);
    }
    int rc = fgfs_allreduce(ctx->comm, buf ? buf : small, buf ? len : 16, &op, &res, &rl);
    free(buf);
    if (!rc && fgfs_bloom_unpack(res, rl, &m))
        rc = fgfs_err(SHEAF_FGFS_ECOMM, "%s: malformed Bloom filter message", uri);
    if (!rc && !(rc = fgfs_status_result(&m.st, ctx->rank, my, uri))) {
        /* a full filter has an unbounded maximum-likelihood count: report
         * the estimate for one bit unset, a lower bound, and say so */
        size_t t = fgfs_bloom_count(m.bits, m.mbits);
        *saturated = t >= m.mbits;
        *est = fgfs_bloom_estimate(*saturated ? m.mbits - 1 : t, m.mbits);
    }
    free(res);
    return rc;
}

int fgfs_classify(sheaf_fgfs_ctx *ctx, const sheaf_fgfs_name *nm, int mycode, const char *path, sheaf_fgfs_status *st)
{
    return fgfs_classify_to(ctx, nm, mycode, path, st, 2);
}

int fgfs_classify_to(sheaf_fgfs_ctx *ctx, const sheaf_fgfs_name *nm, int mycode, const char *path,
                     sheaf_fgfs_status *st, int max_level)
{
    return fgfs_classify_uri(ctx, nm->uri, nm->local, mycode, path, st, max_level);
}

int fgfs_classify_uri(sheaf_fgfs_ctx *ctx, const char *uri, int local, int mycode, const char *path,
                      sheaf_fgfs_status *st, int max_level)
{
    fgfs_triage_msg m = {{mycode, ctx->rank}, 1, 0, UINT64_MAX, 0};
    if (!mycode) {
        uint64_t h = fgfs_hash64(uri, strlen(uri));
        m.all_local = m.any_local = (uint32_t)local;
        m.hmin = m.hmax = h;
    }
    uint8_t buf[FGFS_TRIAGE_LEN];
    fgfs_triage_pack(&m, buf);
    void *res = NULL;
    size_t rl;
    int rc = fgfs_allreduce(ctx->comm, buf, sizeof buf, &fgfs_op_triage, &res, &rl);
    if (!rc && fgfs_triage_unpack(res, rl, &m))
        rc = fgfs_err(SHEAF_FGFS_ECOMM, "%s: malformed triage message", path);
    free(res);
    if (rc || (rc = fgfs_status_result(&m.st, ctx->rank, mycode, path)))
        return rc;
    memset(st, 0, sizeof *st);
    st->all_local = (int)m.all_local;
    st->any_local = (int)m.any_local;
    st->triage_level = 1;
    if (m.all_local) {
        st->cls = SHEAF_FGFS_FULLY;
        return SHEAF_FGFS_OK;
    }
    if (!m.any_local && m.hmin == m.hmax) {
        st->cls = SHEAF_FGFS_UNIQUE;
        st->servers = 1;
        return SHEAF_FGFS_OK;
    }
    st->triage_level = 2;
    st->cls = SHEAF_FGFS_POORLY; /* at least two names; refined by level 2 */
    st->servers = 2;
    if (max_level < 2)
        return SHEAF_FGFS_OK;
    double est = 0;
    int sat = 0;
    if ((rc = bloom_count(ctx, uri, &est, &sat)))
        return rc;
    st->servers = est < 2 ? 2 : est; /* level 1 saw two different names */
    st->saturated = sat;
    st->cls = sat || st->servers >= ctx->cfg.well_threshold ? SHEAF_FGFS_WELL : SHEAF_FGFS_POORLY;
    return SHEAF_FGFS_OK;
}

int fgfs_group(sheaf_fgfs_ctx *ctx, const char *name, int mycode, const char *path, fgfs_group_table *t)
{
    size_t cap = ctx->cfg.max_group_bytes;
    int my = mycode;
    if (!my && strlen(name) + 32 > cap)
        my = fgfs_err(SHEAF_FGFS_ELIMIT, "%s: its global name alone exceeds max_group_bytes=%zu", path, cap);
    fgfs_status_word sw = {my, ctx->rank};
    uint8_t *msg = NULL;
    size_t len = 0;
    if (fgfs_group_pack1(&sw, my ? NULL : name, (uint32_t)ctx->rank, &msg, &len))
        return SHEAF_FGFS_ENOMEM; /* 12 bytes could not be had: nothing can be sent */
    sheaf_fgfs_op op = {"fgfs-group-merge", cap, fgfs_op_group_merge, &cap};
    void *res = NULL;
    size_t rl = 0;
    int rc = fgfs_allreduce(ctx->comm, msg, len, &op, &res, &rl);
    free(msg);
    if (!rc && fgfs_group_unpack(res, rl, t))
        rc = fgfs_err(SHEAF_FGFS_ECOMM, "%s: malformed group table", path);
    if (rc) {
        free(res);
        return rc;
    }
    t->raw = res; /* the entries' names point into it */
    if ((rc = fgfs_status_result(&t->st, ctx->rank, my, path))) {
        fgfs_group_table_free(t);
        if (rc == SHEAF_FGFS_ELIMIT && !my)
            return fgfs_err(rc, "%s: the grouping table exceeds max_group_bytes=%zu (too many distinct names)", path,
                            cap);
        return rc;
    }
    return SHEAF_FGFS_OK;
}

/* group index of name in the sorted table, -1 if absent */
int fgfs_group_find(const fgfs_group_table *t, const char *name)
{
    size_t nl = strlen(name);
    int lo = 0, hi = (int)t->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const fgfs_group_entry *e = &t->e[mid];
        int c = memcmp(e->name, name, e->len < nl ? e->len : nl);
        if (!c)
            c = (e->len > nl) - (e->len < nl);
        if (!c)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}
