/* dache_sync.c - DACHe's collective operations: flush of every dirty page
 * (each rank writes the pages it owns, sorted, coalesced into one write per
 * contiguous run of dirty bytes), invalidation, the single-copy audit, and
 * the sheaf_dache_* hints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "dache_impl.h"

typedef struct dirty {
    int64_t off, len, pg;
    int owner, slot;
    int32_t m[DM_INTS];
} dirty;

static int cmp_dirty(const void *x, const void *y)
{
    const dirty *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* where a dirty piece's bytes are: the owner's slot (any rank's in shared memory) */
static char *piece(dache *d, const dirty *e)
{
    int64_t in = e->off - e->pg * d->page;
    if (e->owner == d->rank)
        return ds_local(d, e->slot) + in;
    return d->slot_peer[e->owner] + (int64_t)e->slot * d->page + in;
}

/* v[0..n) sorted by offset: one vectored write per file-contiguous run,
 * straight from the slots (pieces adjacent in memory merged; a run of more
 * than MIO_IOV_MAX separate pieces takes more than one write) */
static int write_runs(dache *d, const dirty *v, size_t n)
{
    struct iovec *iov = malloc(sizeof *iov * MIO_IOV_MAX);
    if (!iov)
        return mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe flush: out of memory", d->fh->path);
    int rc = 0;
    ds_sync(d);
    for (size_t i = 0; !rc && i < n;) {
        int64_t off = v[i].off, len = 0;
        int k = 0;
        size_t j = i;
        for (; j < n && v[j].off == off + len; j++) {
            char *p = piece(d, &v[j]);
            if (k > 0 && (char *)iov[k - 1].iov_base + iov[k - 1].iov_len == p) {
                iov[k - 1].iov_len += (size_t)v[j].len;
            } else {
                if (k == MIO_IOV_MAX)
                    break;
                iov[k].iov_base = p;
                iov[k].iov_len = (size_t)v[j].len;
                k++;
            }
            len += v[j].len;
        }
        rc = mio_fs_writev(&d->fh->be, iov, k, off);
        d->st.writebacks++;
        d->st.flush_writes++;
        if (!rc && d->fh->be.ops->drop_range)
            rc = d->fh->be.ops->drop_range(&d->fh->be, off, len);
        i = j;
    }
    free(iov);
    return rc;
}

/* this rank's dirty pages: the ranges of the entries it owns and its own */
static int collect(dache *d, dirty *v, size_t *np)
{
    size_t n = 0;
    for (int s = 0; s < d->nslots; s++) {
        if (d->tag[s] < 0)
            continue;
        dirty *e = &v[n];
        e->pg = d->tag[s];
        e->slot = s;
        e->owner = d->rank;
        int rc = dm_get(d, e->pg, e->m);
        if (rc)
            return rc;
        if (e->m[DM_OWNER] != d->rank || e->m[DM_SLOT] != s)
            continue;
        int32_t lo, hi;
        d_range(d, e->m, &lo, &hi);
        d_union(&lo, &hi, d->ldlo[s], d->ldhi[s]);
        if (hi <= lo)
            continue;
        e->off = e->pg * d->page + lo;
        e->len = hi - lo;
        n++;
    }
    *np = n;
    return 0;
}

/* shm, quiescent: page pg's dirty bytes [*lo, *hi) - the entry's range
 * (remote writers) and the owner's own range of that slot */
static int page_dirty(dache *d, int64_t pg, int32_t *m, int32_t *lo, int32_t *hi)
{
    dm_get(d, pg, m);
    if (m[DM_OWNER] < 0 || m[DM_OWNER] >= d->P || m[DM_SLOT] < 0 || m[DM_SLOT] >= d->nslots)
        return 0;
    const int32_t *r = ds_ranges(d, m[DM_OWNER]);
    d_range(d, m, lo, hi);
    d_union(lo, hi, r[m[DM_SLOT]], r[d->nslots + m[DM_SLOT]]);
    return *hi > *lo;
}

/* quiescent (between the flush's barrier and its allreduce, nobody takes a
 * page lock): the pages this rank wrote are in the file now - no zero-fill
 * for them any more (entry wb); only this rank writes these entries' wb */
static void mark_written(dache *d, const dirty *w, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        if (w[i].m[DM_WB])
            continue;
        int32_t m[DM_INTS];
        dm_get(d, w[i].pg, m);
        m[DM_WB] = 1;
        dm_put(d, w[i].pg, m);
    }
}

/* this rank's share of the dirty bytes (see flush_shm) into w[0..*k) */
static int my_share(dache *d, dirty **pw, size_t *pk)
{
    int64_t hi = 0, bytes = 0, cum = 0, cnt = 0;
    for (int r = 0; r < d->P; r++) {
        int64_t h = __atomic_load_n(ds_hipg(d, r), __ATOMIC_RELAXED);
        if (h > hi)
            hi = h;
    }
    if (hi > d->npages)
        hi = d->npages;
    int32_t m[DM_INTS], lo32, hi32;
    for (int64_t pg = 0; pg < hi; pg++)
        if (page_dirty(d, pg, m, &lo32, &hi32))
            bytes += hi32 - lo32, cnt++;
    dirty *w = *pw = malloc(sizeof(dirty) * (size_t)(cnt + 1));
    *pk = 0;
    if (!w)
        return mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe flush: out of memory", d->fh->path);
    for (int64_t pg = 0; pg < hi; pg++) {
        if (!page_dirty(d, pg, m, &lo32, &hi32))
            continue;
        if ((int)((cum * d->P) / bytes) == d->rank) {
            dirty *e = &w[(*pk)++];
            e->pg = pg, e->owner = m[DM_OWNER], e->slot = m[DM_SLOT];
            e->off = pg * d->page + lo32, e->len = hi32 - lo32;
            memcpy(e->m, m, sizeof m);
        }
        cum += hi32 - lo32;
    }
    return 0;
}

/* Shared memory: every rank reads every entry, every rank's own dirty
 * ranges (kept in its slot window) and every slot, so nothing is exchanged.
 * After the quiescent barrier every rank scans the entries of pages
 * [0, highest page cached anywhere), cuts the dirty bytes in file order into
 * P shares of about equal size and writes share `rank` (piece i goes to the
 * rank whose share holds its first byte): one write per rank when the dirty
 * bytes are contiguous, one per contiguous run of the share otherwise; it
 * marks those pages written (wb) and, when `durable` (sync, close), syncs
 * the backend. Then one agreement (mio_agree: the lowest failing rank's code; every
 * share written, every scan over); on success every rank counts the flush
 * generation up (every entry's range is old, so empty: no entry is written,
 * and a rank that returns first and writes a page again starts a new range)
 * and owners clear their own ranges. 2 collectives (the barrier and the
 * allreduce), both DACHe's own in shared memory (dache_coll.c). The result
 * is the same on every rank. */
static int flush_shm(dache *d, int rc, int durable)
{
    dirty *w = NULL;
    size_t k = 0;
    int r2 = my_share(d, &w, &k);
    if (!rc)
        rc = r2;
    if (!rc && k)
        rc = write_runs(d, w, k);
    if (!rc)
        mark_written(d, w, k);
    if (!rc && durable)
        rc = d->fh->be.ops->sync(&d->fh->be);
    free(w);
    rc = mio_agree(d->fh, rc); /* fh->coll: DACHe's own collectives here */
    if (!rc) {
        d->gen++;
        memset(d->ldlo, 0, sizeof(int32_t) * 2 * (size_t)d->nslots); /* only this rank writes its own ranges */
    }
    return rc;
}

/* the quiescent barrier, then the audit (hint) */
static int flush_begin(dache *d)
{
    ds_sync(d);
    d_barrier(d); /* quiescent: no rank is inside an access (no pins, no locks) */
    if (!d->audit)
        return 0;
    int64_t bad = mio_dache_audit(d->fh);
    if (bad < 0)
        return (int)bad;
    if (bad > 0)
        return mio_set_err(d->fh, SHEAF_MPIIO_EIO, "%s: DACHe audit: %lld violations of the single-copy invariant",
                           d->fh->path, (long long)bad);
    return 0;
}

/* over MPI RMA: each rank writes the pages it owns, sorted */
static int flush_rma(dache *d, int rc)
{
    dirty *v = malloc(sizeof(dirty) * (size_t)d->nslots);
    size_t n = 0;
    if (!v && !rc)
        rc = mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe flush: out of memory", d->fh->path);
    if (!rc)
        rc = collect(d, v, &n);
    if (!rc && n) {
        qsort(v, n, sizeof *v, cmp_dirty);
        rc = write_runs(d, v, n);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        v[i].m[DM_DLO] = v[i].m[DM_DHI] = 0;
        v[i].m[DM_WB] = 1;
        d->ldlo[v[i].slot] = d->ldhi[v[i].slot] = 0;
        rc = dm_put(d, v[i].pg, v[i].m);
    }
    free(v);
    ds_sync(d);
    d_barrier(d); /* the clean entries are in place before anyone locks again */
    return rc;
}

int d_flush(dache *d)
{
    int rc = flush_begin(d);
    return d->shm ? flush_shm(d, rc, 0) : flush_rma(d, rc);
}

int d_flush_sync(dache *d)
{
    int rc = flush_begin(d);
    if (d->shm)
        return flush_shm(d, rc, 1);
    rc = flush_rma(d, rc);
    int r2 = d->fh->be.ops->sync(&d->fh->be);
    return mio_agree(d->fh, rc ? rc : r2);
}

int d_invalidate(dache *d)
{
    d_barrier(d);
    int rc = 0;
    for (int s = 0; s < d->nslots; s++) {
        if (d->tag[s] < 0)
            continue;
        int32_t e[DM_INTS];
        int r = dm_get(d, d->tag[s], e); /* keeps wb */
        e[DM_OWNER] = e[DM_SLOT] = DM_NONE;
        e[DM_DLO] = e[DM_DHI] = 0;
        if (!r)
            r = dm_put(d, d->tag[s], e);
        if (r && !rc)
            rc = r;
        d_drop_slot(d, s);
    }
    ds_sync(d);
    d_barrier(d);
    int r = d_size0(d); /* external writes agreed on by now are in the file size */
    return rc ? rc : r;
}

int d_size0(dache *d)
{
    int64_t sz = 0;
    int rc = d->fh->be.ops->get_size(&d->fh->be, &sz);
    if (rc)
        sz = INT64_MAX; /* unknown here: no zero-fill anywhere */
    d->size0 = d_allreduce(d, sz, DC_MAX);
    return rc;
}

/* violations among this rank's entries, given every rank's slot tags */
static int64_t check_entries(dache *d, const int64_t *tags, int *cnt, int *wr, int *ws)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < d->nmeta; i++)
        cnt[i] = 0;
    for (int r = 0; r < d->P; r++)
        for (int s = 0; s < d->nslots; s++) {
            int64_t pg = tags[(int64_t)r * d->nslots + s];
            if (pg < 0 || pg % d->P != d->rank)
                continue;
            int64_t i = pg / d->P;
            cnt[i]++;
            wr[i] = r;
            ws[i] = s;
        }
    for (int64_t i = 0; i < d->nmeta; i++) {
        int64_t pg = i * d->P + d->rank;
        if (pg >= d->npages)
            break;
        int32_t m[DM_INTS];
        if (dm_get(d, pg, m))
            return -1;
        if (cnt[i] > 1)
            bad++; /* two cached copies */
        if (m[DM_PIN] != 0)
            bad++; /* a pin left behind */
        if (cnt[i] == 0 && m[DM_OWNER] != DM_NONE)
            bad++; /* entry names a slot that holds another page */
        if (cnt[i] == 1 && (m[DM_OWNER] != wr[i] || m[DM_SLOT] != ws[i]))
            bad++; /* a copy the entry does not know */
    }
    return bad;
}

int64_t mio_dache_audit(sheaf_file fh)
{
    if (!fh || fh->cache_mode != MIO_CACHE_DACHE || !fh->have_cache)
        return SHEAF_MPIIO_EARG;
    dache *d = fh->cache.priv;
    MPI_Barrier(d->comm);
    int64_t *tags = malloc(sizeof(int64_t) * (size_t)d->nslots * (size_t)d->P);
    int *cnt = malloc(sizeof(int) * (size_t)(d->nmeta + 1) * 3);
    int any = mio_agree(
        fh, !tags || !cnt ? mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe audit: out of memory", fh->path) : 0);
    int64_t bad = 0;
    if (!any) {
        MPI_Allgather(d->tag, d->nslots, MPI_INT64_T, tags, d->nslots, MPI_INT64_T, d->comm);
        bad = check_entries(d, tags, cnt, cnt + d->nmeta + 1, cnt + 2 * (d->nmeta + 1));
    }
    free(tags);
    free(cnt);
    int64_t all = 0;
    int64_t mine = bad < 0 ? INT64_MIN / 2 : bad;
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, d->comm);
    MPI_Barrier(d->comm);
    if (any)
        return any;
    return all < 0 ? mio_set_err(fh, SHEAF_MPIIO_EMPI, "%s: DACHe audit: reading metadata failed", fh->path) : all;
}

static int bad_hint(char *err, size_t errlen, const char *key, const char *val, const char *why)
{
    snprintf(err, errlen, "hint %s: invalid value '%s' (%s)", key, val, why);
    return SHEAF_MPIIO_EARG;
}

static int parse_i64(const char *s, int64_t *v)
{
    char *end;
    long long x = strtoll(s, &end, 10);
    if (end == s || x < 0)
        return -1;
    if (*end == 'k' || *end == 'K') {
        x *= 1024;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        x *= 1024 * 1024;
        end++;
    } else if (*end == 'g' || *end == 'G') {
        x *= 1024LL * 1024 * 1024;
        end++;
    }
    if (*end)
        return -1;
    *v = x;
    return 0;
}

static int pick(const char *v, const char *const *names, const int *vals, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = vals[i];
            return 0;
        }
    return -1;
}

int mio_dache_hints(MPI_Info info, mio_dache_cfg *c, char *err, size_t errlen)
{
    char v[MPI_MAX_INFO_VAL + 1];
    c->page = 64 << 10;
    c->nslots = 64;
    c->max_size = (int64_t)1 << 30;
    c->lock_kind = SHEAF_LOCK_MCS;
    c->progress = SHEAF_LOCK_PROGRESS_AUTO;
    c->atomic = c->audit = 0;
    c->direct = (int64_t)1 << 20;
    int64_t x;
    if (mio_hint_get(info, "sheaf_dache_page_size", v, sizeof v)) {
        if (parse_i64(v, &x) || x < 8 || x > (1 << 26) || (x & (x - 1)))
            return bad_hint(err, errlen, "sheaf_dache_page_size", v, "a power of two in [8, 64M]");
        c->page = x;
    }
    if (mio_hint_get(info, "sheaf_dache_slots", v, sizeof v)) {
        if (parse_i64(v, &x) || x < 1 || x > (1 << 20) || x * c->page > ((int64_t)1 << 34))
            return bad_hint(err, errlen, "sheaf_dache_slots", v, "1 to 1M slots, at most 16 GiB of pages per rank");
        c->nslots = (int)x;
    }
    if (mio_hint_get(info, "sheaf_dache_max_size", v, sizeof v)) {
        if (parse_i64(v, &x) || x < 1 || x > ((int64_t)1 << 50))
            return bad_hint(err, errlen, "sheaf_dache_max_size", v, "bytes, at least 1");
        c->max_size = x;
    }
    if (mio_hint_get(info, "sheaf_dache_direct_size", v, sizeof v)) {
        if (parse_i64(v, &x) || x < 0)
            return bad_hint(err, errlen, "sheaf_dache_direct_size", v, "bytes, 0 for never");
        c->direct = x;
    }
    if ((c->max_size + c->page - 1) / c->page > (1 << 22)) {
        snprintf(err, errlen,
                 "hints sheaf_dache_max_size/sheaf_dache_page_size: %lld pages, more than the %d "
                 "page locks a cache can have (raise the page size or lower the maximum file size)",
                 (long long)((c->max_size + c->page - 1) / c->page), 1 << 22);
        return SHEAF_MPIIO_EARG;
    }
    static const char *const kinds[] = {"mcs", "mcs_swap", "flags", "poll"};
    static const int kv[] = {SHEAF_LOCK_MCS, SHEAF_LOCK_MCS_SWAP, SHEAF_LOCK_FLAGS, SHEAF_LOCK_POLL};
    if (mio_hint_get(info, "sheaf_dache_lock", v, sizeof v) && pick(v, kinds, kv, 4, &c->lock_kind))
        return bad_hint(err, errlen, "sheaf_dache_lock", v, "mcs, mcs_swap, flags or poll");
    static const char *const progs[] = {"auto", "library", "async", "shared"};
    static const int pv[] = {SHEAF_LOCK_PROGRESS_AUTO, SHEAF_LOCK_PROGRESS_LIBRARY, SHEAF_LOCK_PROGRESS_ASYNC,
                             SHEAF_LOCK_PROGRESS_SHARED};
    if (mio_hint_get(info, "sheaf_dache_progress", v, sizeof v) && pick(v, progs, pv, 4, &c->progress))
        return bad_hint(err, errlen, "sheaf_dache_progress", v, "auto, library, async or shared");
    static const char *const tf[] = {"false", "true"};
    static const int tv[] = {0, 1};
    if (mio_hint_get(info, "sheaf_dache_atomic", v, sizeof v) && pick(v, tf, tv, 2, &c->atomic))
        return bad_hint(err, errlen, "sheaf_dache_atomic", v, "true or false");
    if (mio_hint_get(info, "sheaf_dache_audit", v, sizeof v) && pick(v, tf, tv, 2, &c->audit))
        return bad_hint(err, errlen, "sheaf_dache_audit", v, "true or false");
    return 0;
}
