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

typedef struct agg_iter { int64_t g, pos; int done; } agg_iter;
typedef struct ctx {
  sheaf_file fh;
  mio_realms r;
  int64_t lo, hi, cb;
  int A;
} ctx;

static int64_t stripe_lo(const ctx *c, int64_t g) { return c->r.base + g * c->r.fr; }
static int64_t span_lo(const ctx *c, int64_t g) {
  int64_t s = stripe_lo(c, g);
  return s > c->lo ? s : c->lo;
}
static int64_t span_hi(const ctx *c, int64_t g) {
  int64_t e = stripe_lo(c, g) + c->r.fr;
  return e < c->hi ? e : c->hi;
}

static void iter_start(const ctx *c, int a, agg_iter *it) {
  int64_t g = (c->lo - c->r.base) / c->r.fr;
  g += ((a - g % c->A) % c->A + c->A) % c->A;
  it->g = g;
  it->done = stripe_lo(c, g) >= c->hi;
  it->pos = it->done ? 0 : span_lo(c, g);
}
/* the aggregator's window of this round, then advance */
static int iter_next(const ctx *c, agg_iter *it, int64_t *wlo, int64_t *whi) {
  if (it->done) return 0;
  int64_t e = span_hi(c, it->g);
  *wlo = it->pos;
  *whi = it->pos + c->cb < e ? it->pos + c->cb : e;
  it->pos = *whi;
  if (it->pos >= e) {
    it->g += c->A;
    if (stripe_lo(c, it->g) >= c->hi) it->done = 1;
    else it->pos = span_lo(c, it->g);
  }
  return 1;
}

static int64_t count_rounds(const ctx *c, int a) {
  agg_iter it;
  int64_t n = 0, wl, wh;
  iter_start(c, a, &it);
  while (iter_next(c, &it, &wl, &wh)) n++;
  return n;
}

static int cmp_seg(const void *x, const void *y) {
  const mio_seg *a = x, *b = y;
  return a->off < b->off ? -1 : a->off > b->off;
}

/* aggregator's file access of one window, pieces sorted by offset */
static int agg_write(sheaf_file fh, mio_seg *pc, const char **src, size_t n) {
  if (n == 0) return 0;
  mio_backend *b = &fh->be;
  if (fh->have_cache) {
    for (size_t i = 0; i < n; i++) {
      int rc = fh->cache.ops->write(&fh->cache, b, src[i], pc[i].len, pc[i].off);
      if (rc) return rc;
    }
    return 0;
  }
  int64_t lo = pc[0].off, hi = lo, covered = 1;
  for (size_t i = 0; i < n; i++) {
    if (pc[i].off > hi) covered = 0;
    if (pc[i].off + pc[i].len > hi) hi = pc[i].off + pc[i].len;
  }
  char *span = malloc((size_t)(hi - lo));
  if (!span) return SHEAF_MPIIO_ENOMEM;
  int rc = 0;
  if (!covered) rc = mio_fs_read(b, span, hi - lo, lo);  /* read-modify-write, inside the realm */
  for (size_t i = 0; rc == 0 && i < n; i++) memcpy(span + (pc[i].off - lo), src[i], (size_t)pc[i].len);
  if (!rc) rc = mio_fs_write(b, span, hi - lo, lo);
  free(span);
  return rc;
}

static int agg_read(sheaf_file fh, mio_seg *pc, char **dst, size_t n) {
  if (n == 0) return 0;
  mio_backend *b = &fh->be;
  if (fh->have_cache) {
    for (size_t i = 0; i < n; i++) {
      int rc = fh->cache.ops->read(&fh->cache, b, dst[i], pc[i].len, pc[i].off);
      if (rc) return rc;
    }
    return 0;
  }
  int64_t lo = pc[0].off, hi = lo;
  for (size_t i = 0; i < n; i++)
    if (pc[i].off + pc[i].len > hi) hi = pc[i].off + pc[i].len;
  char *span = malloc((size_t)(hi - lo));
  if (!span) return SHEAF_MPIIO_ENOMEM;
  int rc = mio_fs_read(b, span, hi - lo, lo);  /* data sieving over the window's span */
  for (size_t i = 0; rc == 0 && i < n; i++) memcpy(dst[i], span + (pc[i].off - lo), (size_t)pc[i].len);
  free(span);
  return rc;
}

typedef struct round_buf {
  int *scnt, *sdsp, *rcnt, *rdsp;  /* per rank, reused for meta and data */
  int *npc_out, *npc_in;
} round_buf;

/* my pieces for aggregator window [wlo, whi): appended to out (with data positions) */
static size_t my_pieces(const mio_seg *segs, const int64_t *dpos, size_t nseg, int64_t wlo, int64_t whi,
                        mio_seg *out, int64_t *opos) {
  size_t lo = 0, hi = nseg, k = 0;
  while (lo < hi) {  /* first segment ending after wlo */
    size_t mid = (lo + hi) / 2;
    if (segs[mid].off + segs[mid].len <= wlo) lo = mid + 1; else hi = mid;
  }
  for (size_t i = lo; i < nseg && segs[i].off < whi; i++) {
    int64_t a = segs[i].off > wlo ? segs[i].off : wlo;
    int64_t e = segs[i].off + segs[i].len < whi ? segs[i].off + segs[i].len : whi;
    if (e <= a) continue;
    out[k].off = a;
    out[k].len = e - a;
    opos[k] = dpos[i] + (a - segs[i].off);
    k++;
  }
  return k;
}

static int one_round(ctx *c, int is_write, const mio_seg *segs, const int64_t *dpos, size_t nseg,
                     char *buf, const int64_t *wlo, const int64_t *whi, round_buf *rb, int err) {
  sheaf_file fh = c->fh;
  int P = fh->nprocs, A = c->A;
  /* the windows of a round are disjoint: a segment is split only at window
   * edges, so the pieces are at most nseg + 2A */
  size_t maxp = nseg + 2 * (size_t)A;
  mio_seg *mine = malloc(sizeof(mio_seg) * (maxp + 1));
  int64_t *mpos = malloc(sizeof(int64_t) * (maxp + 1));
  size_t *first = calloc((size_t)A + 1, sizeof(size_t));
  if (!mine || !mpos || !first) err = err ? err : SHEAF_MPIIO_ENOMEM;
  size_t k = 0;
  memset(rb->npc_out, 0, sizeof(int) * (size_t)P);
  for (int a = 0; a < A; a++) {
    first[a] = k;
    if (!err && whi[a] > wlo[a]) k += my_pieces(segs, dpos, nseg, wlo[a], whi[a], mine + k, mpos + k);
    rb->npc_out[fh->aggs[a]] = (int)(k - first[a]);
  }
  first[A] = k;
  MPI_Alltoall(rb->npc_out, 1, MPI_INT, rb->npc_in, 1, MPI_INT, fh->comm);
  /* piece lists: 2 int64 each, to the aggregators */
  size_t nin = 0;
  for (int p = 0; p < P; p++) {
    rb->scnt[p] = 2 * rb->npc_out[p];
    rb->rcnt[p] = 2 * rb->npc_in[p];
    nin += (size_t)rb->npc_in[p];
  }
  for (int p = 0, so = 0, ro = 0; p < P; p++) {
    rb->sdsp[p] = so; so += rb->scnt[p];
    rb->rdsp[p] = ro; ro += rb->rcnt[p];
  }
  /* my pieces are ordered by aggregator index, which is rank order of aggs[] */
  mio_seg *in = malloc(sizeof(mio_seg) * (nin + 1));
  if (!in) err = err ? err : SHEAF_MPIIO_ENOMEM;
  MPI_Alltoallv(mine ? (void *)mine : (void *)rb, rb->scnt, rb->sdsp, MPI_INT64_T,
                in ? (void *)in : (void *)rb, rb->rcnt, rb->rdsp, MPI_INT64_T, fh->comm);
  /* data: bytes per rank */
  int64_t sbytes = 0, rbytes = 0;
  size_t idx = 0;
  int *inbytes = calloc((size_t)P, sizeof(int));
  int *outbytes = calloc((size_t)P, sizeof(int));
  if (!inbytes || !outbytes) err = err ? err : SHEAF_MPIIO_ENOMEM;
  for (int p = 0; in && inbytes && p < P; p++)
    for (int j = 0; j < rb->npc_in[p]; j++) inbytes[p] += (int)in[idx++].len;
  for (int a = 0; mine && outbytes && a < A; a++)
    for (size_t j = first[a]; j < first[a + 1]; j++) outbytes[fh->aggs[a]] += (int)mine[j].len;
  for (int p = 0; p < P; p++) {
    int o = outbytes ? outbytes[p] : 0, i = inbytes ? inbytes[p] : 0;
    rb->scnt[p] = is_write ? o : i;
    rb->rcnt[p] = is_write ? i : o;
  }
  for (int p = 0; p < P; p++) {
    rb->sdsp[p] = (int)sbytes; sbytes += rb->scnt[p];
    rb->rdsp[p] = (int)rbytes; rbytes += rb->rcnt[p];
  }
  char *sbuf = malloc((size_t)sbytes + 1), *rbuf = malloc((size_t)rbytes + 1);
  char **ptr = malloc(sizeof(char *) * (nin + 1));
  if (!sbuf || !rbuf || !ptr) err = err ? err : SHEAF_MPIIO_ENOMEM;
  if (!err && is_write) {
    char *w = sbuf;
    for (size_t j = 0; j < k; j++) { memcpy(w, buf + mpos[j], (size_t)mine[j].len); w += mine[j].len; }
  }
  if (is_write)
    MPI_Alltoallv(sbuf, rb->scnt, rb->sdsp, MPI_BYTE, rbuf, rb->rcnt, rb->rdsp, MPI_BYTE, fh->comm);
  /* the aggregator's I/O: pieces sorted by offset, each with its data slot */
  if (!err && nin > 0) {
    char *d = is_write ? rbuf : sbuf;
    for (size_t j = 0; j < nin; j++) { ptr[j] = d; d += in[j].len; }
    /* sort (offset, pointer) pairs together */
    mio_seg *srt = malloc(sizeof(mio_seg) * nin);
    char **sp = malloc(sizeof(char *) * nin);
    if (!srt || !sp) err = SHEAF_MPIIO_ENOMEM;
    if (!err) {
      for (size_t j = 0; j < nin; j++) { srt[j].off = in[j].off; srt[j].len = (int64_t)j; }
      qsort(srt, nin, sizeof *srt, cmp_seg);
      for (size_t j = 0; j < nin; j++) {
        size_t o = (size_t)srt[j].len;
        sp[j] = ptr[o];
        srt[j].len = in[o].len;
      }
      err = is_write ? agg_write(fh, srt, (const char **)sp, nin) : agg_read(fh, srt, sp, nin);
    }
    free(srt);
    free(sp);
  }
  if (!is_write) {
    MPI_Alltoallv(sbuf, rb->scnt, rb->sdsp, MPI_BYTE, rbuf, rb->rcnt, rb->rdsp, MPI_BYTE, fh->comm);
    if (!err) {
      const char *r = rbuf;
      for (size_t j = 0; j < k; j++) { memcpy(buf + mpos[j], r, (size_t)mine[j].len); r += mine[j].len; }
    }
  }
  free(mine); free(mpos); free(first); free(in); free(inbytes); free(outbytes);
  free(sbuf); free(rbuf); free(ptr);
  return err;
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}

/* the realm map of this call (fixing the persistent one at the first call) */
static int realms_for_call(sheaf_file fh, int64_t lo, int64_t hi, int64_t fsize, mio_realms *r) {
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
      if (rc) return mio_set_err(fh, rc, "%s: realm cache: out of memory", fh->path);
      fh->cache.stats = &fh->stats;
      fh->have_cache = 1;
    }
  }
  *r = fh->pfr;
  return 0;
}

int mio_coll_io(sheaf_file fh, int is_write, const mio_seg *segs, size_t nseg, char *buf, int local_err) {
  int P = fh->nprocs;
  int64_t me[5] = {INT64_MAX, 0, local_err, 0, fh->external_write};
  if (nseg > 0) {
    me[0] = segs[0].off;
    me[1] = segs[nseg - 1].off + segs[nseg - 1].len;
  }
  if (!local_err && fh->realm_mode == MIO_REALMS_PERSISTENT && !fh->realms_fixed &&
      fh->pfr_policy == MIO_PFR_FSIZE) {
    int64_t sz = 0;
    me[2] = fh->be.ops->get_size(&fh->be, &sz);
    me[3] = sz;
  }
  int64_t *all = malloc(sizeof(int64_t) * 5 * (size_t)P);
  if (!all) return mio_agree(fh, mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: out of memory", fh->path));
  MPI_Allgather(me, 5, MPI_INT64_T, all, 5, MPI_INT64_T, fh->comm);
  int64_t lo = INT64_MAX, hi = 0, fsize = 0, anyerr = 0, ext = 0;
  for (int p = 0; p < P; p++) {
    const int64_t *a = all + 5 * p;
    if (a[2] < anyerr) anyerr = a[2];
    if (a[0] < lo) lo = a[0];
    if (a[1] > hi) hi = a[1];
    if (a[3] > fsize) fsize = a[3];
    if (a[4]) ext = 1;
  }
  free(all);
  fh->external_write = 0;
  int ext_err = 0;
  if (ext && !anyerr && fh->have_cache) {
    /* someone wrote behind the layer: this rank's realm pages may be stale */
    ext_err = fh->cache.ops->flush(&fh->cache, &fh->be);
    fh->cache.ops->invalidate(&fh->cache);
  }
  if (ext && !anyerr && !ext_err) ext_err = fh->be.ops->invalidate(&fh->be);
  if (anyerr) {
    if (local_err) return local_err;
    return mio_set_err(fh, SHEAF_MPIIO_EREMOTE, "%s: another rank failed this collective call (code %d)",
                       fh->path, (int)anyerr);
  }
  fh->stats.coll_calls++;
  fh->stats.rounds_last = 0;
  if (lo >= hi) return mio_agree(fh, ext_err);
  if (is_write && hi > fh->known_end) fh->known_end = hi;
  int err = ext_err;
  if (!is_write && fh->cache_mode == MIO_CACHE_NOCACHE) err = fh->be.ops->invalidate(&fh->be);
  ctx c = {.fh = fh, .lo = lo, .hi = hi, .cb = fh->cb_buffer, .A = fh->naggs};
  int rrc = realms_for_call(fh, lo, hi, fsize, &c.r);
  if (rrc && !err) err = rrc;
  fh->stats.realm_size = c.r.fr;
  int64_t rounds = 0;
  for (int a = 0; a < c.A; a++) {
    int64_t n = count_rounds(&c, a);
    if (n > rounds) rounds = n;
  }
  fh->stats.rounds_last = (uint64_t)rounds;
  fh->stats.rounds_total += (uint64_t)rounds;
  agg_iter *it = malloc(sizeof(agg_iter) * (size_t)c.A);
  int64_t *wlo = malloc(sizeof(int64_t) * (size_t)c.A), *whi = malloc(sizeof(int64_t) * (size_t)c.A);
  int64_t *dpos = malloc(sizeof(int64_t) * (nseg + 1));
  round_buf rb;
  int *ints = malloc(sizeof(int) * 6 * (size_t)P);
  if (ints) {
    rb.scnt = ints; rb.sdsp = ints + P; rb.rcnt = ints + 2 * P; rb.rdsp = ints + 3 * P;
    rb.npc_out = ints + 4 * P; rb.npc_in = ints + 5 * P;
  }
  if (!it || !wlo || !whi || !dpos || !ints) {
    /* cannot take part in the rounds: every rank must know */
    free(it); free(wlo); free(whi); free(dpos); free(ints);
    return mio_agree(fh, mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: out of memory", fh->path));
  }
  int64_t acc = 0;
  for (size_t i = 0; i < nseg; i++) { dpos[i] = acc; acc += segs[i].len; }
  for (int a = 0; a < c.A; a++) iter_start(&c, a, &it[a]);
  for (int64_t round = 0; round < rounds; round++) {
    for (int a = 0; a < c.A; a++)
      if (!iter_next(&c, &it[a], &wlo[a], &whi[a])) wlo[a] = whi[a] = 0;
    int rc = one_round(&c, is_write, segs, dpos, nseg, buf, wlo, whi, &rb, err);
    if (rc && !err) err = rc;
  }
  free(it); free(wlo); free(whi); free(dpos); free(ints);
  if (!err && is_write && fh->cache_mode == MIO_CACHE_NOCACHE) err = fh->be.ops->sync(&fh->be);
  if (!err && is_write && fh->write_through && fh->have_cache) err = fh->cache.ops->flush(&fh->cache, &fh->be);
  if (err && !fh->err[0]) mio_set_err(fh, err, "%s: collective %s failed", fh->path, is_write ? "write" : "read");
  return mio_agree(fh, err);
}
