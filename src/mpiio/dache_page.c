/* dache_page.c - DACHe's per-page access protocol (lookup, insert, remote
 * hit with pinning, local LRU eviction with write-back, all under the page's
 * lock), the atomic mode and the direct path (two-phase locking over the
 * request's pages) and the local page -> slot map. Below dache_open.c (creation, the cache
 * operations) and dache_sync.c; calls neither. See dache.h and doc/mpiio.md
 * "DACHe".
 *
 * Deadlock freedom: a rank holds at most one page lock while it waits on
 * anything but the file system and the target of a one-sided operation (the
 * atomic mode and the direct path hold several, taken in ascending page
 * order, and never wait for a slot). A miss that finds no free slot releases the page's lock,
 * evicts (one victim lock at a time) and looks the page up again; pinned
 * victims are skipped and a rank whose every slot is pinned waits holding no
 * lock, making MPI progress. */
#include <stdlib.h>
#include <string.h>
#include "dache_impl.h"

int d_lock(dache *d, int64_t pg)
{
    int rc = sheaf_lock_acquire(d->locks, (int)pg);
    if (rc)
        return mio_set_err(d->fh, SHEAF_MPIIO_EMPI, "%s: DACHe: lock of page %lld: %s", d->fh->path, (long long)pg,
                           sheaf_lock_last_error());
    return 0;
}

int d_unlock(dache *d, int64_t pg, int rc)
{
    int r2 = sheaf_lock_release(d->locks, (int)pg);
    if (r2 && !rc)
        rc = mio_set_err(d->fh, SHEAF_MPIIO_EMPI, "%s: DACHe: unlock of page %lld: %s", d->fh->path, (long long)pg,
                         sheaf_lock_last_error());
    return rc;
}

static int hslot(const dache *d, int64_t pg) { return (int)((uint64_t)pg * 0x9e3779b97f4a7c15ull >> 40) & d->hmask; }

int d_find(const dache *d, int64_t pg)
{
    for (int s = d->head[hslot(d, pg)]; s >= 0; s = d->next[s])
        if (d->tag[s] == pg)
            return s;
    return -1;
}

static void map_add(dache *d, int s, int64_t pg)
{
    int h = hslot(d, pg);
    __atomic_store_n(&d->tag[s], pg, __ATOMIC_RELAXED);
    d->ldlo[s] = d->ldhi[s] = 0;
    d->next[s] = d->head[h];
    d->head[h] = s;
}

void d_drop_slot(dache *d, int s)
{
    if (d->tag[s] < 0)
        return;
    int *pp = &d->head[hslot(d, d->tag[s])];
    while (*pp >= 0 && *pp != s)
        pp = &d->next[*pp];
    if (*pp == s)
        *pp = d->next[s]; /* (a page another rank inserted may not be in the map) */
    __atomic_store_n(&d->tag[s], -1, __ATOMIC_RELAXED);
    d->ldlo[s] = d->ldhi[s] = 0;
    d->used[s] = 0;
    d_unclaim(d, d->rank, s); /* after the tag: a claimer's tag write comes later */
}

/* through the client cache of the backend (the NFS-like fixture keeps
 * written bytes and stale pages otherwise): write-back reaches the file,
 * loads read it (the role of ADIO_Flush and O_DIRECT in Coloma ch. 7) */
static int push(dache *d, int64_t off, int64_t len)
{
    mio_backend *b = &d->fh->be;
    return b->ops->drop_range ? b->ops->drop_range(b, off, len) : 0;
}

int d_writeback(dache *d, int64_t pg, int s, int64_t lo, int64_t hi)
{
    ds_sync(d);
    int rc = mio_fs_write(&d->fh->be, ds_local(d, s) + lo, hi - lo, pg * d->page + lo);
    if (!rc)
        rc = push(d, pg * d->page + lo, hi - lo);
    d->st.writebacks++;
    return rc;
}

static int proto(dache *d, int64_t pg, const int32_t *m, const char *what)
{
    return mio_set_err(d->fh, SHEAF_MPIIO_EIO,
                       "%s: DACHe: inconsistent metadata of page %lld (%s: owner %d slot %d "
                       "pin %d)",
                       d->fh->path, (long long)pg, what, m[DM_OWNER], m[DM_SLOT], m[DM_PIN]);
}

/* evict local slot v (holding no other lock): *freed = 0 when pinned */
static int evict(dache *d, int v, int *freed)
{
    int64_t pg = d->tag[v];
    int32_t m[DM_INTS];
    *freed = 0;
    int rc = d_lock(d, pg);
    if (rc)
        return rc;
    rc = dm_get(d, pg, m);
    if (!rc && (m[DM_OWNER] != d->rank || m[DM_SLOT] != v)) {
        if (d->broken) { /* single-copy logic disabled (test): another copy took the entry over */
            d_drop_slot(d, v);
            *freed = 1;
            return d_unlock(d, pg, 0);
        }
        rc = proto(d, pg, m, "evicting");
    }
    if (!rc && m[DM_PIN] > 0)
        return d_unlock(d, pg, 0);
    int32_t lo, hi;
    d_range(d, m, &lo, &hi);
    d_union(&lo, &hi, d->ldlo[v], d->ldhi[v]); /* remote writers' bytes and this rank's own */
    if (!rc && hi > lo)
        rc = d_writeback(d, pg, v, lo, hi);
    if (!rc) {
        int32_t e[DM_INTS] = {DM_NONE, DM_NONE, 0, 0, m[DM_WB] || hi > lo, d->gen};
        rc = dm_put(d, pg, e);
    }
    if (!rc) {
        d_drop_slot(d, v);
        d->st.evictions++;
        d->fh->stats.cache_evictions++;
        *freed = 1;
    }
    return d_unlock(d, pg, rc);
}

/* free one local slot (holding no lock): the least recently used unpinned page */
static int make_free(dache *d)
{
    for (;;) {
        for (int i = 0; i < d->nwords; i++)
            if (__atomic_load_n(&d->freebits[i], __ATOMIC_RELAXED))
                return 0;
        uint64_t floor = 0;
        for (int tries = 0; tries < d->nslots; tries++) {
            int v = -1;
            for (int s = 0; s < d->nslots; s++)
                if (__atomic_load_n(&d->tag[s], __ATOMIC_ACQUIRE) >= 0 && d->used[s] >= floor &&
                    (v < 0 || d->used[s] < d->used[v]))
                    v = s;
            if (v < 0)
                break;
            floor = d->used[v] + 1;
            int freed = 0, rc = evict(d, v, &freed);
            if (rc || freed)
                return rc;
        }
        d->st.pin_waits++; /* every slot pinned by remote accessors: wait holding nothing */
        d_relax(d);
    }
}

static int grow(const dache *d, int32_t *m, int64_t a, int64_t n)
{
    int32_t lo, hi;
    d_range(d, m, &lo, &hi);
    d_union(&lo, &hi, (int32_t)a, (int32_t)(a + n));
    if (lo == m[DM_DLO] && hi == m[DM_DHI] && m[DM_GEN] == d->gen)
        return 0;
    m[DM_DLO] = lo;
    m[DM_DHI] = hi;
    m[DM_GEN] = d->gen;
    return 1;
}

static void local_copy(dache *d, int s, int64_t a, int64_t n, char *buf, int is_write)
{
    if (is_write)
        d_union(&d->ldlo[s], &d->ldhi[s], (int32_t)a, (int32_t)(a + n));
    ds_sync(d);
    if (is_write)
        memcpy(ds_local(d, s) + a, buf, (size_t)n);
    else
        memcpy(buf, ds_local(d, s) + a, (size_t)n);
    ds_sync(d);
    d->used[s] = ++d->tick;
}

static int valid_loc(dache *d, const int32_t *m)
{
    return m[DM_OWNER] >= 0 && m[DM_OWNER] < d->P && m[DM_SLOT] >= 0 && m[DM_SLOT] < d->nslots &&
           (m[DM_OWNER] != d->rank || d->tag[m[DM_SLOT]] >= 0);
}

/* Zero-fill: a page wholly at or beyond the file's size when the cache was
 * (re)started (d->size0: at open and after every invalidation, the largest
 * size any rank saw) that no rank has written to the file since (entry wb 0)
 * holds only zeros: nothing to read. Not when this rank has noted external
 * writes (the interposition library's fallbacks) not yet agreed on. */
static int zero_page(const dache *d, int64_t pg, const int32_t *m)
{
    return pg * d->page >= d->size0 && !m[DM_WB] && !d->fh->external_write;
}

/* miss under the lock (entry old): load the page into slot s of rank h,
 * claimed by this rank (h is this rank, or in shared memory the page's home
 * when this rank's slots are full), copy, publish */
static int insert(dache *d, int64_t pg, const int32_t *old, int h, int s, int64_t a, int64_t n, char *buf, int is_write)
{
    int rc = 0;
    char *p = h == d->rank ? ds_local(d, s) : d->slot_peer[h] + (int64_t)s * d->page;
    if (is_write && n == d->page) {
        /* overwritten whole */
    } else if (zero_page(d, pg, old)) {
        memset(p, 0, (size_t)d->page);
        d->st.zero_fills++;
    } else {
        rc = push(d, pg * d->page, d->page);
        if (!rc)
            rc = mio_fs_read(&d->fh->be, p, d->page, pg * d->page);
    }
    int32_t m[DM_INTS] = {h, s, 0, 0, old[DM_WB], d->gen};
    if (!rc && h != d->rank) { /* h's tag before the entry: h's eviction finds the page under its lock */
        __atomic_store_n(&ds_tags(d, h)[s], pg, __ATOMIC_RELEASE);
        if (is_write)
            grow(d, m, a, n); /* this rank's bytes are a remote writer's: in the entry */
    }
    if (!rc)
        rc = dm_put(d, pg, m);
    if (rc) {
        if (h != d->rank)
            __atomic_store_n(&ds_tags(d, h)[s], -1, __ATOMIC_RELEASE);
        d_unclaim(d, h, s);
        return rc;
    }
    if (pg + 1 > *d->hipg)
        __atomic_store_n(d->hipg, pg + 1, __ATOMIC_RELAXED);
    if (h != d->rank) {
        d->st.home_inserts++;
        rc = ds_xfer(d, h, s, a, n, buf, is_write);
    } else {
        map_add(d, s, pg);
        local_copy(d, s, a, n, buf, is_write);
    }
    d->st.misses++;
    d->fh->stats.cache_misses++;
    return rc;
}

/* shared memory, this rank's slots full: a free slot at the page's home
 * rank, else at the next rank after it that has one (the ranks' caches are
 * one pool: a rank that ran ahead and filled its own slots does not evict
 * while others have room); -1 when every rank is full */
static int claim_elsewhere(dache *d, int64_t pg, int *h)
{
    for (int i = 0; i < d->P; i++) {
        int r = (int)((pg + i) % d->P);
        if (r == d->rank)
            continue;
        int sl = d_claim(d, r);
        if (sl >= 0)
            return *h = r, sl;
    }
    *h = d->rank;
    return -1;
}

/* bytes [a, a+n) of page pg: the six steps of Coloma §5.2 plus pinning. A
 * page this rank caches is found in its own slot map without the lock (only
 * this rank inserts into or evicts from its slots, and every other rank finds
 * it through the entry, which names this rank). */
static int access_page(dache *d, int64_t pg, int64_t a, int64_t n, char *buf, int is_write)
{
    int s = d->broken ? -1 : d_find(d, pg); /* broken (test): lookups always miss */
    if (s >= 0) {
        local_copy(d, s, a, n, buf, is_write);
        d->st.local_hits++;
        d->fh->stats.cache_hits++;
        return 0;
    }
    int32_t m[DM_INTS];
    int rc;
    for (;;) {
        if ((rc = d_lock(d, pg)) != 0)
            return rc;
        rc = dm_get(d, pg, m);
        if (!rc && d->broken)
            m[DM_OWNER] = DM_NONE;
        if (rc || m[DM_OWNER] != DM_NONE)
            break;
        int h = d->rank, sl = d_claim(d, h);
        if (sl < 0 && d->shm && !d->broken)
            sl = claim_elsewhere(d, pg, &h);
        if (sl >= 0)
            return d_unlock(d, pg, insert(d, pg, m, h, sl, a, n, buf, is_write));
        /* a miss with every slot taken (here and at the page's home): evict holding no lock, then look again */
        if ((rc = d_unlock(d, pg, 0)) != 0 || (rc = make_free(d)) != 0)
            return rc;
    }
    if (rc)
        return d_unlock(d, pg, rc);
    if (!valid_loc(d, m))
        return d_unlock(d, pg, proto(d, pg, m, "lookup"));
    if (m[DM_OWNER] == d->rank) {
        /* another rank inserted the page into a slot of this rank (its own were
     * full): take it into the local map; later accesses are local hits */
        if (!d->shm || __atomic_load_n(&d->tag[m[DM_SLOT]], __ATOMIC_ACQUIRE) != pg)
            return d_unlock(d, pg, proto(d, pg, m, "lookup"));
        map_add(d, m[DM_SLOT], pg);
        local_copy(d, m[DM_SLOT], a, n, buf, is_write);
        d->st.adopted++;
        d->st.local_hits++;
        d->fh->stats.cache_hits++;
        return d_unlock(d, pg, 0);
    }
    int grew = is_write && grow(d, m, a, n);
    if (d->shm) {
        /* shared memory: the transfer is a memcpy, done under the lock (the owner
     * cannot evict meanwhile): no pin, no unpin, one entry write only when
     * the dirty range grew */
        if (grew)
            rc = dm_put(d, pg, m);
        if (!rc)
            rc = ds_xfer(d, m[DM_OWNER], m[DM_SLOT], a, n, buf, is_write);
        d->st.remote_hits++;
        d->fh->stats.cache_hits++;
        d->fh->stats.cache_remote_hits++;
        return d_unlock(d, pg, rc);
    }
    rc = dm_pin(d, pg, 1); /* remote hit: pinned, the owner cannot evict it */
    if (!rc && grew)
        rc = dm_put(d, pg, m);
    rc = d_unlock(d, pg, rc);
    if (rc)
        return rc;
    rc = ds_xfer(d, m[DM_OWNER], m[DM_SLOT], a, n, buf, is_write);
    int r2 = dm_pin(d, pg, -1);
    d->st.remote_hits++;
    d->fh->stats.cache_hits++;
    d->fh->stats.cache_remote_hits++;
    return rc ? rc : r2;
}

/* atomic mode, under the locks of every page of the request: cached pages
 * where they are, uncached ones straight in the file (no insertion: that
 * could need an eviction while locks are held) */
static int access_locked(dache *d, int64_t pg, int64_t a, int64_t n, char *buf, int is_write)
{
    int32_t m[DM_INTS];
    int rc = dm_get(d, pg, m);
    if (rc)
        return rc;
    int64_t off = pg * d->page + a;
    if (m[DM_OWNER] == DM_NONE) {
        d->st.direct++;
        if (is_write) {
            rc = mio_fs_write(&d->fh->be, buf, n, off);
            if (!rc)
                rc = push(d, off, n);
            if (!rc && !m[DM_WB]) { /* in the file now: no zero-fill for this page any more */
                m[DM_WB] = 1;
                rc = dm_put(d, pg, m);
            }
            return rc;
        }
        rc = push(d, off, n);
        return rc ? rc : mio_fs_read(&d->fh->be, buf, n, off);
    }
    if (!valid_loc(d, m))
        return proto(d, pg, m, "atomic access");
    if (m[DM_OWNER] != d->rank && is_write && grow(d, m, a, n) && (rc = dm_put(d, pg, m)) != 0)
        return rc;
    if (m[DM_OWNER] == d->rank) {
        d->st.local_hits++;
        local_copy(d, m[DM_SLOT], a, n, buf, is_write);
        return 0;
    }
    d->st.remote_hits++;
    return ds_xfer(d, m[DM_OWNER], m[DM_SLOT], a, n, buf, is_write);
}

typedef int (*page_fn)(dache *d, int64_t pg, int64_t a, int64_t n, char *buf, int is_write);

static int each_piece(dache *d, const mio_seg *segs, size_t nseg, char *buf, int is_write, page_fn fn)
{
    int64_t p = 0;
    for (size_t i = 0; i < nseg; i++)
        for (int64_t off = segs[i].off, end = off + segs[i].len; off < end;) {
            int64_t pg = off / d->page, a = off % d->page, n = d->page - a;
            if (n > end - off)
                n = end - off;
            int rc = fn(d, pg, a, n, buf + p, is_write);
            if (rc)
                return rc;
            p += n;
            off += n;
        }
    return 0;
}

/* the direct path: a pending run of bytes of uncached pages, contiguous in
 * the file and in the buffer, read or written with one call (under the locks
 * of its pages, before they are released) */
static int run_flush(dache *d, int is_write)
{
    int64_t off = d->run_off, n = d->run_n;
    if (n == 0)
        return 0;
    d->run_n = 0;
    if (is_write) {
        int rc = mio_fs_write(&d->fh->be, d->run_buf, n, off);
        return rc ? rc : push(d, off, n);
    }
    int rc = push(d, off, n);
    return rc ? rc : mio_fs_read(&d->fh->be, d->run_buf, n, off);
}

/* requests of sheaf_dache_direct_size bytes or more, under the locks of
 * every page of the request: a page some rank caches is read or written in
 * its slot (the cached copy stays the only one and stays current), the
 * others go straight to the file, consecutive ones in one call - no page
 * copy, no insertion, no eviction */
static int access_direct(dache *d, int64_t pg, int64_t a, int64_t n, char *buf, int is_write)
{
    int32_t m[DM_INTS];
    int rc = dm_get(d, pg, m);
    if (rc)
        return rc;
    if (m[DM_OWNER] != DM_NONE) {
        rc = run_flush(d, is_write);
        return rc ? rc : access_locked(d, pg, a, n, buf, is_write);
    }
    int64_t off = pg * d->page + a;
    if (d->run_n && (d->run_off + d->run_n != off || d->run_buf + d->run_n != buf) && (rc = run_flush(d, is_write)))
        return rc;
    if (!d->run_n)
        d->run_off = off, d->run_buf = buf;
    d->run_n += n;
    d->st.direct++;
    if (is_write && !m[DM_WB]) { /* in the file before the lock is released: no zero-fill any more */
        m[DM_WB] = 1;
        rc = dm_put(d, pg, m);
    }
    return rc;
}

static int locked_io(dache *d, const mio_seg *segs, size_t nseg, char *buf, int is_write, page_fn fn)
{
    int64_t *pgs = NULL;
    size_t np = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; !rc && i < nseg; i++) /* segments are sorted: pages come ascending */
        for (int64_t pg = segs[i].off / d->page; pg <= (segs[i].off + segs[i].len - 1) / d->page; pg++) {
            if (np && pgs[np - 1] == pg)
                continue;
            if (np == cap) {
                int64_t *t = realloc(pgs, sizeof(int64_t) * (cap = cap ? 2 * cap : 16));
                if (!t) {
                    rc = mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe: out of memory", d->fh->path);
                    break;
                }
                pgs = t;
            }
            pgs[np++] = pg;
        }
    size_t held = 0;
    while (!rc && held < np && !(rc = d_lock(d, pgs[held])))
        held++;
    d->run_n = 0;
    if (!rc)
        rc = each_piece(d, segs, nseg, buf, is_write, fn);
    int r2 = run_flush(d, is_write); /* the last run, before any lock goes */
    if (!rc)
        rc = r2;
    while (held > 0)
        rc = d_unlock(d, pgs[--held], rc);
    free(pgs);
    return rc;
}

int mio_dache_io(sheaf_file fh, int is_write, const mio_seg *segs, size_t nseg, char *buf)
{
    dache *d = fh->cache.priv;
    if (nseg == 0)
        return 0;
    int64_t end = segs[nseg - 1].off + segs[nseg - 1].len;
    if (end > d->npages * d->page)
        return mio_set_err(fh, SHEAF_MPIIO_EARG, "%s: DACHe: access up to byte %lld beyond sheaf_dache_max_size %lld",
                           fh->path, (long long)end, (long long)(d->npages * d->page));
    if (is_write && end > fh->known_end)
        fh->known_end = end;
    if (d->atomic)
        return locked_io(d, segs, nseg, buf, is_write, access_locked);
    int64_t total = 0;
    for (size_t i = 0; i < nseg; i++)
        total += segs[i].len;
    if (d->direct > 0 && total >= d->direct)
        return locked_io(d, segs, nseg, buf, is_write, access_direct);
    return each_piece(d, segs, nseg, buf, is_write, access_page);
}
