/* coll.c - the two-phase engine of collective reads and writes.
 *
 * 1. Every rank's access range (and error flag, and file size) is allgathered:
 *    the aggregate access region AAR = [min start, max end).
 * 2. The realm map: per call (base = AAR start, fr = AAR / naggs, aligned) or
 *    persistent (fixed at the first collective call, base 0, cyclic).
 * 3. Rounds: each aggregator walks the stripes of its realm that meet the AAR
 *    in windows of at most cb_buffer_size bytes, never crossing a stripe, so
 *    rounds(a) = sum over its stripes s of ceil(|s within AAR| / cb_buffer_size)
 *    and the call takes max over a of rounds(a). Every rank computes every
 *    aggregator's window of a round itself: no request lists are gathered.
 * 4. Per round: MPI_Alltoall of piece counts, MPI_Alltoallv of (offset,
 *    length) pieces, MPI_Alltoallv of the data; the aggregator touches the file
 *    only inside its window (data sieving - one read of the window's span, or a
 *    read-modify-write for a write with holes - stays inside the realm). */
#include <stdlib.h>
#include <string.h>
#include "mpiio_impl.h"

typedef struct agg_iter {
    int64_t g, pos;
    int done;
} agg_iter;
typedef struct ctx {
    sheaf_file fh;
    mio_realms r;
    int64_t lo, hi, cb;
    int A;
} ctx;

static int64_t stripe_lo(const ctx *c, int64_t g) { return c->r.base + g * c->r.fr; }
static int64_t span_lo(const ctx *c, int64_t g)
{
    int64_t s = stripe_lo(c, g);
    return s > c->lo ? s : c->lo;
}
static int64_t span_hi(const ctx *c, int64_t g)
{
    int64_t e = stripe_lo(c, g) + c->r.fr;
    return e < c->hi ? e : c->hi;
}

static void iter_start(const ctx *c, int a, agg_iter *it)
{
    int64_t g = (c->lo - c->r.base) / c->r.fr;
    g += ((a - g % c->A) % c->A + c->A) % c->A;
    it->g = g;
    it->done = stripe_lo(c, g) >= c->hi;
    it->pos = it->done ? 0 : span_lo(c, g);
}
/* the aggregator's window of this round, then advance */
static int iter_next(const ctx *c, agg_iter *it, int64_t *wlo, int64_t *whi)
{
    if (it->done)
        return 0;
    int64_t e = span_hi(c, it->g);
    *wlo = it->pos;
    *whi = it->pos + c->cb < e ? it->pos + c->cb : e;
    it->pos = *whi;
    if (it->pos >= e) {
        it->g += c->A;
        if (stripe_lo(c, it->g) >= c->hi)
            it->done = 1;
        else
            it->pos = span_lo(c, it->g);
    }
    return 1;
}

static int64_t count_rounds(const ctx *c, int a)
{
    agg_iter it;
    int64_t n = 0, wl, wh;
    iter_start(c, a, &it);
    while (iter_next(c, &it, &wl, &wh))
        n++;
    return n;
}

static int cmp_seg(const void *x, const void *y)
{
    const mio_seg *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* aggregator's file access of one window, pieces sorted by offset */
static int agg_write(sheaf_file fh, mio_seg *pc, const char **src, size_t n)
{
    if (n == 0)
        return 0;
    mio_backend *b = &fh->be;
    if (fh->have_cache) {
        for (size_t i = 0; i < n; i++) {
            int rc = fh->cache.ops->write(&fh->cache, b, src[i], pc[i].len, pc[i].off);
            if (rc)
                return rc;
        }
        return 0;
    }
    int64_t lo = pc[0].off, hi = lo, covered = 1;
    for (size_t i = 0; i < n; i++) {
        if (pc[i].off > hi)
            covered = 0;
        if (pc[i].off + pc[i].len > hi)
            hi = pc[i].off + pc[i].len;
    }
    char *span = malloc((size_t)(hi - lo));
    if (!span)
        return SHEAF_MPIIO_ENOMEM;
    int rc = 0;
    if (!covered)
        rc = mio_fs_read(b, span, hi - lo, lo); /* read-modify-write, inside the realm */
    for (size_t i = 0; rc == 0 && i < n; i++)
        memcpy(span + (pc[i].off - lo), src[i], (size_t)pc[i].len);
    if (!rc)
        rc = mio_fs_write(b, span, hi - lo, lo);
    free(span);
    return rc;
}

static int agg_read(sheaf_file fh, mio_seg *pc, char **dst, size_t n)
{
    if (n == 0)
        return 0;
    mio_backend *b = &fh->be;
    if (fh->have_cache) {
        for (size_t i = 0; i < n; i++) {
            int rc = fh->cache.ops->read(&fh->cache, b, dst[i], pc[i].len, pc[i].off);
            if (rc)
                return rc;
        }
        return 0;
    }
    int64_t lo = pc[0].off, hi = lo;
    for (size_t i = 0; i < n; i++)
        if (pc[i].off + pc[i].len > hi)
            hi = pc[i].off + pc[i].len;
    char *span = malloc((size_t)(hi - lo));
    if (!span)
        return SHEAF_MPIIO_ENOMEM;
    int rc = mio_fs_read(b, span, hi - lo, lo); /* data sieving over the window's span */
    for (size_t i = 0; rc == 0 && i < n; i++)
        memcpy(dst[i], span + (pc[i].off - lo), (size_t)pc[i].len);
    free(span);
    return rc;
}

typedef struct round_buf {
    int *scnt, *sdsp, *rcnt, *rdsp; /* per rank, reused for meta and data */
    int *npc_out, *npc_in;
} round_buf;

/* my pieces for aggregator window [wlo, whi): appended to out (with data positions) */
static size_t my_pieces(const mio_seg *segs, const int64_t *dpos, size_t nseg, int64_t wlo, int64_t whi, mio_seg *out,
                        int64_t *opos)
{
    size_t lo = 0, hi = nseg, k = 0;
    while (lo < hi) { /* first segment ending after wlo */
        size_t mid = (lo + hi) / 2;
        if (segs[mid].off + segs[mid].len <= wlo)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < nseg && segs[i].off < whi; i++) {
        int64_t a = segs[i].off > wlo ? segs[i].off : wlo;
        int64_t e = segs[i].off + segs[i].len < whi ? segs[i].off + segs[i].len : whi;
        if (e <= a)
            continue;
        out[k].off = a;
        out[k].len = e - a;
        opos[k] = dpos[i] + (a - segs[i].off);
        k++;
    }
    return k;
}

/* one round's own state: my pieces per aggregator, the pieces an aggregator
 * receives, and the byte buffers of the data exchange */
typedef struct round_st {
    mio_seg *mine, *in;
    int64_t *mpos;
    size_t *first, k, nin;
    char *sbuf, *rbuf;
} round_st;

static void round_free(round_st *r)
{
    free(r->mine);
    free(r->mpos);
    free(r->first);
    free(r->in);
    free(r->sbuf);
    free(r->rbuf);
}

/* step 1: my pieces per aggregator window, their counts and the piece lists
 * (2 int64 each) to the aggregators; every rank makes both exchanges */
static int round_pieces(ctx *c, const mio_seg *segs, const int64_t *dpos, size_t nseg, const int64_t *wlo,
                        const int64_t *whi, round_buf *rb, round_st *r, int err)
{
    sheaf_file fh = c->fh;
    int P = fh->nprocs, A = c->A;
    /* the windows of a round are disjoint: a segment is split only at window
   * edges, so the pieces are at most nseg + 2A */
    size_t maxp = nseg + 2 * (size_t)A;
    r->mine = malloc(sizeof(mio_seg) * (maxp + 1));
    r->mpos = malloc(sizeof(int64_t) * (maxp + 1));
    r->first = calloc((size_t)A + 1, sizeof(size_t));
    if (!r->mine || !r->mpos || !r->first)
        err = err ? err : SHEAF_MPIIO_ENOMEM;
    memset(rb->npc_out, 0, sizeof(int) * (size_t)P);
    for (int a = 0; a < A; a++) {
        size_t f = r->k;
        if (r->first)
            r->first[a] = f;
        if (!err && whi[a] > wlo[a])
            r->k += my_pieces(segs, dpos, nseg, wlo[a], whi[a], r->mine + f, r->mpos + f);
        rb->npc_out[fh->aggs[a]] = (int)(r->k - f);
    }
    if (r->first)
        r->first[A] = r->k;
    MPI_Alltoall(rb->npc_out, 1, MPI_INT, rb->npc_in, 1, MPI_INT, fh->comm);
    for (int p = 0, so = 0, ro = 0; p < P; p++) {
        rb->scnt[p] = 2 * rb->npc_out[p];
        rb->rcnt[p] = 2 * rb->npc_in[p];
        r->nin += (size_t)rb->npc_in[p];
        rb->sdsp[p] = so;
        so += rb->scnt[p];
        rb->rdsp[p] = ro;
        ro += rb->rcnt[p];
    }
    /* my pieces are ordered by aggregator index, which is rank order of aggs[] */
    r->in = malloc(sizeof(mio_seg) * (r->nin + 1));
    if (!r->in)
        err = err ? err : SHEAF_MPIIO_ENOMEM;
    MPI_Alltoallv(r->mine ? (void *)r->mine : (void *)rb, rb->scnt, rb->sdsp, MPI_INT64_T,
                  r->in ? (void *)r->in : (void *)rb, rb->rcnt, rb->rdsp, MPI_INT64_T, fh->comm);
    return err;
}

/* step 2: bytes to and from every rank (a writer sends its pieces' bytes, an
 * aggregator of a read sends the bytes of the pieces it received) and the
 * exchange buffers */
static int round_counts(ctx *c, int is_write, round_buf *rb, round_st *r, int err)
{
    sheaf_file fh = c->fh;
    int P = fh->nprocs;
    int *inbytes = calloc((size_t)P, sizeof(int)), *outbytes = calloc((size_t)P, sizeof(int));
    if (!inbytes || !outbytes)
        err = err ? err : SHEAF_MPIIO_ENOMEM;
    size_t idx = 0;
    for (int p = 0; r->in && inbytes && p < P; p++)
        for (int j = 0; j < rb->npc_in[p]; j++)
            inbytes[p] += (int)r->in[idx++].len;
    for (int a = 0; r->mine && r->first && outbytes && a < c->A; a++)
        for (size_t j = r->first[a]; j < r->first[a + 1]; j++)
            outbytes[fh->aggs[a]] += (int)r->mine[j].len;
    int64_t sbytes = 0, rbytes = 0;
    for (int p = 0; p < P; p++) {
        int o = outbytes ? outbytes[p] : 0, i = inbytes ? inbytes[p] : 0;
        rb->scnt[p] = is_write ? o : i;
        rb->rcnt[p] = is_write ? i : o;
        rb->sdsp[p] = (int)sbytes;
        sbytes += rb->scnt[p];
        rb->rdsp[p] = (int)rbytes;
        rbytes += rb->rcnt[p];
    }
    free(inbytes);
    free(outbytes);
    r->sbuf = malloc((size_t)sbytes + 1);
    r->rbuf = malloc((size_t)rbytes + 1);
    if (!r->sbuf || !r->rbuf)
        err = err ? err : SHEAF_MPIIO_ENOMEM;
    return err;
}

/* step 3 (aggregators): the received pieces sorted by offset, each with its
 * data slot in d, written or read in one pass */
static int round_agg_io(sheaf_file fh, int is_write, round_st *r, char *d)
{
    size_t nin = r->nin;
    if (nin == 0)
        return 0;
    char **ptr = malloc(sizeof(char *) * nin), **sp = malloc(sizeof(char *) * nin);
    mio_seg *srt = malloc(sizeof(mio_seg) * nin);
    int err = (!ptr || !sp || !srt) ? SHEAF_MPIIO_ENOMEM : 0;
    if (!err) {
        for (size_t j = 0; j < nin; j++) {
            ptr[j] = d;
            d += r->in[j].len;
        }
        /* sort (offset, index) pairs, then put the lengths back */
        for (size_t j = 0; j < nin; j++) {
            srt[j].off = r->in[j].off;
            srt[j].len = (int64_t)j;
        }
        qsort(srt, nin, sizeof *srt, cmp_seg);
        for (size_t j = 0; j < nin; j++) {
            size_t o = (size_t)srt[j].len;
            sp[j] = ptr[o];
            srt[j].len = r->in[o].len;
        }
        err = is_write ? agg_write(fh, srt, (const char **)sp, nin) : agg_read(fh, srt, sp, nin);
    }
    free(ptr);
    free(sp);
    free(srt);
    return err;
}

/* one round: pieces, counts, then for a write the data to the aggregators
 * and their writes, for a read their reads and the data back */
static int one_round(ctx *c, int is_write, const mio_seg *segs, const int64_t *dpos, size_t nseg, char *buf,
                     const int64_t *wlo, const int64_t *whi, round_buf *rb, int err)
{
    sheaf_file fh = c->fh;
    round_st r = {0};
    err = round_pieces(c, segs, dpos, nseg, wlo, whi, rb, &r, err);
    err = round_counts(c, is_write, rb, &r, err);
    if (!err && is_write) {
        char *w = r.sbuf;
        for (size_t j = 0; j < r.k; j++) {
            memcpy(w, buf + r.mpos[j], (size_t)r.mine[j].len);
            w += r.mine[j].len;
        }
    }
    if (is_write)
        MPI_Alltoallv(r.sbuf, rb->scnt, rb->sdsp, MPI_BYTE, r.rbuf, rb->rcnt, rb->rdsp, MPI_BYTE, fh->comm);
    if (!err)
        err = round_agg_io(fh, is_write, &r, is_write ? r.rbuf : r.sbuf);
    if (!is_write) {
        MPI_Alltoallv(r.sbuf, rb->scnt, rb->sdsp, MPI_BYTE, r.rbuf, rb->rcnt, rb->rdsp, MPI_BYTE, fh->comm);
        if (!err) {
            const char *q = r.rbuf;
            for (size_t j = 0; j < r.k; j++) {
                memcpy(buf + r.mpos[j], q, (size_t)r.mine[j].len);
                q += r.mine[j].len;
            }
        }
    }
    round_free(&r);
    return err;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* the realm map of this call (fixing the persistent one at the first call) */
static int realms_for_call(sheaf_file fh, int64_t lo, int64_t hi, int64_t fsize, mio_realms *r)
{
    if (fh->realm_mode == MIO_REALMS_PERCALL) {
        r->fr = mio_percall_size(lo, hi, fh->naggs, fh->align, &r->base);
        r->end = hi;
        return 0;
    }
    if (!fh->realms_fixed) {
        fh->pfr.base = 0;
        fh->pfr.fr = mio_pfr_size(fh->pfr_policy, fh->pfr_user, lo, hi, fsize, fh->naggs, fh->align);
        fh->pfr.end = INT64_MAX;
        fh->realms_fixed = 1;
        if (fh->cache_mode == MIO_CACHE_PFR && fh->my_agg >= 0) {
            /* cache pages must not cross a realm boundary */
            int64_t page = gcd64(fh->pfr.fr, fh->page);
            int rc = mio_cache_pages_create(&fh->cache, page, fh->cache_bytes);
            if (rc)
                return mio_set_err(fh, rc, "%s: realm cache: out of memory", fh->path);
            fh->cache.stats = &fh->stats;
            fh->have_cache = 1;
        }
    }
    *r = fh->pfr;
    return 0;
}

/* what every rank learns at the start of a collective call: the union of the
 * access ranges, the file size (for the file-size realm policy), the first
 * error and whether anyone wrote behind the layer */
typedef struct call_info {
    int64_t lo, hi, fsize, ext_lo, ext_hi;
} call_info;

/* one agreement (sheaf_comm_agree over fh->coll: one MPI_Allreduce over
 * MPI when all went well): every rank's status, and with it the minimum
 * start and (negated) maxima of end, file size and external writes - no O(P)
 * buffer, nothing to allocate, so no rank can drop out of it. Returns 0, the
 * own error or SHEAF_MPIIO_EREMOTE naming the first failing rank. */
static int agree_ranges(sheaf_file fh, const mio_seg *segs, size_t nseg, int local_err, call_info *ci)
{
    int64_t v[5] = {INT64_MAX, 0, 0, fh->ext_lo, -fh->ext_hi};
    if (nseg > 0) {
        v[0] = segs[0].off;
        v[1] = -(segs[nseg - 1].off + segs[nseg - 1].len);
    }
    int rc = local_err;
    if (!rc && fh->realm_mode == MIO_REALMS_PERSISTENT && !fh->realms_fixed && fh->pfr_policy == MIO_PFR_FSIZE) {
        int64_t sz = 0;
        rc = fh->be.ops->get_size(&fh->be, &sz);
        v[2] = -sz;
    }
    rc = mio_agree_vals(fh, rc, v, 5);
    fh->external_write = 0;
    fh->ext_lo = INT64_MAX, fh->ext_hi = 0;
    *ci = (call_info){.lo = v[0], .hi = -v[1], .fsize = -v[2], .ext_lo = v[3], .ext_hi = -v[4]};
    return rc;
}

/* someone wrote [lo, hi) behind the layer or the realms' owners: this rank's
 * realm pages there and the backend's client cache may be stale */
int mio_drop_external(sheaf_file fh, int64_t lo, int64_t hi)
{
    int err = 0;
    if (fh->have_cache) {
        if (hi != INT64_MAX && fh->cache.ops->drop_range) {
            err = fh->cache.ops->drop_range(&fh->cache, &fh->be, lo, hi - lo);
        } else {
            err = fh->cache.ops->flush(&fh->cache, &fh->be);
            fh->cache.ops->invalidate(&fh->cache);
        }
    }
    if (!err)
        err = fh->be.ops->invalidate(&fh->be);
    return err;
}

int mio_agree_external(sheaf_file fh, int rc)
{
    int64_t v[2] = {fh->ext_lo, -fh->ext_hi};
    rc = mio_agree_vals(fh, rc, v, 2);
    fh->external_write = 0;
    fh->ext_lo = INT64_MAX, fh->ext_hi = 0;
    if (rc || v[0] >= -v[1])
        return rc;
    return mio_agree(fh, mio_drop_external(fh, v[0], -v[1]));
}

/* the memory of one call's rounds, allocated before the ranges are agreed so
 * that a rank without it fails the call on every rank instead of dropping
 * out of the rounds */
typedef struct rounds_mem {
    agg_iter *it;
    int64_t *wlo, *whi, *dpos;
    int *ints;
} rounds_mem;

static void rounds_free(rounds_mem *m)
{
    free(m->it);
    free(m->wlo);
    free(m->whi);
    free(m->dpos);
    free(m->ints);
}

static int rounds_alloc(sheaf_file fh, size_t nseg, rounds_mem *m)
{
    size_t A = (size_t)fh->naggs, P = (size_t)fh->nprocs;
    m->it = malloc(sizeof(agg_iter) * A);
    m->wlo = malloc(sizeof(int64_t) * A);
    m->whi = malloc(sizeof(int64_t) * A);
    m->dpos = malloc(sizeof(int64_t) * (nseg + 1));
    m->ints = malloc(sizeof(int) * 6 * P);
    if (m->it && m->wlo && m->whi && m->dpos && m->ints)
        return 0;
    rounds_free(m);
    *m = (rounds_mem){0};
    return mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: out of memory", fh->path);
}

/* the rounds of one call: every rank takes part in every round */
static int run_rounds(ctx *c, int is_write, const mio_seg *segs, size_t nseg, char *buf, rounds_mem *m, int err)
{
    sheaf_file fh = c->fh;
    int P = fh->nprocs;
    int64_t rounds = 0;
    for (int a = 0; a < c->A; a++) {
        int64_t n = count_rounds(c, a);
        if (n > rounds)
            rounds = n;
    }
    fh->stats.rounds_last = (uint64_t)rounds;
    fh->stats.rounds_total += (uint64_t)rounds;
    int *ints = m->ints;
    round_buf rb = {.scnt = ints,
                    .sdsp = ints + P,
                    .rcnt = ints + 2 * P,
                    .rdsp = ints + 3 * P,
                    .npc_out = ints + 4 * P,
                    .npc_in = ints + 5 * P};
    int64_t acc = 0;
    for (size_t i = 0; i < nseg; i++) {
        m->dpos[i] = acc;
        acc += segs[i].len;
    }
    for (int a = 0; a < c->A; a++)
        iter_start(c, a, &m->it[a]);
    for (int64_t round = 0; round < rounds; round++) {
        for (int a = 0; a < c->A; a++)
            if (!iter_next(c, &m->it[a], &m->wlo[a], &m->whi[a]))
                m->wlo[a] = m->whi[a] = 0;
        int rc = one_round(c, is_write, segs, m->dpos, nseg, buf, m->wlo, m->whi, &rb, err);
        if (rc && !err)
            err = rc;
    }
    return err;
}

/* steps: memory, ranges (agreed), external writes, realms, rounds, write-back */
int mio_coll_io(sheaf_file fh, int is_write, const mio_seg *segs, size_t nseg, char *buf, int local_err)
{
    rounds_mem m = {0};
    if (!local_err)
        local_err = rounds_alloc(fh, nseg, &m);
    call_info ci = {0};
    int rc = agree_ranges(fh, segs, nseg, local_err, &ci);
    if (rc) {
        rounds_free(&m);
        return rc;
    }
    int err = ci.ext_lo < ci.ext_hi ? mio_drop_external(fh, ci.ext_lo, ci.ext_hi) : 0;
    fh->stats.coll_calls++;
    fh->stats.rounds_last = 0;
    if (ci.lo >= ci.hi) {
        rounds_free(&m);
        return mio_agree(fh, err);
    }
    if (is_write && ci.hi > fh->known_end)
        fh->known_end = ci.hi;
    if (!err && !is_write && fh->cache_mode == MIO_CACHE_NOCACHE)
        err = fh->be.ops->invalidate(&fh->be);
    ctx c = {.fh = fh, .lo = ci.lo, .hi = ci.hi, .cb = fh->cb_buffer, .A = fh->naggs};
    int rrc = realms_for_call(fh, ci.lo, ci.hi, ci.fsize, &c.r);
    if (rrc && !err)
        err = rrc;
    fh->stats.realm_size = c.r.fr;
    err = run_rounds(&c, is_write, segs, nseg, buf, &m, err);
    rounds_free(&m);
    if (!err && is_write && fh->cache_mode == MIO_CACHE_NOCACHE)
        err = fh->be.ops->sync(&fh->be);
    if (!err && is_write && fh->write_through && fh->have_cache)
        err = fh->cache.ops->flush(&fh->cache, &fh->be);
    /* served independent reads of other realms go to the file: a backend with
     * a client cache pushes what the write-through left there */
    if (!err && is_write && fh->indep_policy == MIO_INDEP_SERVE && fh->be.ops->drop_range)
        err = fh->be.ops->sync(&fh->be);
    if (err && !fh->err[0])
        mio_set_err(fh, err, "%s: collective %s failed", fh->path, is_write ? "write" : "read");
    return mio_agree(fh, err);
}
