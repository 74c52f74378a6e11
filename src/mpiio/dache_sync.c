/* dache_sync.c - DACHe's collective operations: flush of every dirty page
 * (each rank writes the pages it owns, sorted, coalesced into one write per
 * contiguous run of dirty bytes), invalidation, the single-copy audit, and
 * the sheaf_dache_* hints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dache_impl.h"

typedef struct dirty { int64_t off, len; int slot; int64_t pg; int32_t m[DM_INTS]; } dirty;

static int cmp_dirty(const void *x, const void *y) {
  const dirty *a = x, *b = y;
  return a->off < b->off ? -1 : a->off > b->off;
}

/* write the runs of v[0..n) (sorted) through a bounce buffer */
static int write_runs(dache *d, const dirty *v, size_t n) {
  int64_t cap = (int64_t)4 << 20;
  if (cap < d->page) cap = d->page;
  char *bb = malloc((size_t)cap);
  if (!bb) return mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe flush: out of memory", d->fh->path);
  int rc = 0;
  ds_sync(d);
  for (size_t i = 0; !rc && i < n;) {
    int64_t off = v[i].off, len = 0;
    size_t j = i;
    while (j < n && v[j].off == off + len && len + v[j].len <= cap) {
      memcpy(bb + len, ds_local(d, v[j].slot) + (v[j].off - v[j].pg * d->page), (size_t)v[j].len);
      len += v[j].len;
      j++;
    }
    rc = mio_fs_write(&d->fh->be, bb, len, off);
    d->st.writebacks++;
    if (!rc && d->fh->be.ops->drop_range) rc = d->fh->be.ops->drop_range(&d->fh->be, off, len);
    i = j;
  }
  free(bb);
  return rc;
}

int d_flush(dache *d) {
  MPI_Barrier(d->comm);  /* quiescent: no rank is inside an access (no pins, no locks) */
  int rc = 0;
  if (d->audit) {
    int64_t bad = mio_dache_audit(d->fh);
    if (bad < 0) rc = (int)bad;
    else if (bad > 0)
      rc = mio_set_err(d->fh, SHEAF_MPIIO_EIO, "%s: DACHe audit: %lld violations of the single-copy invariant",
                       d->fh->path, (long long)bad);
  }
  dirty *v = malloc(sizeof(dirty) * (size_t)d->nslots);
  size_t n = 0;
  if (!v && !rc) rc = mio_set_err(d->fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe flush: out of memory", d->fh->path);
  for (int s = 0; !rc && s < d->nslots; s++) {
    if (d->tag[s] < 0) continue;
    dirty *e = &v[n];
    e->pg = d->tag[s];
    e->slot = s;
    rc = dm_get(d, e->pg, e->m);
    if (rc || e->m[DM_OWNER] != d->rank || e->m[DM_SLOT] != s) continue;
    int32_t lo = e->m[DM_DLO], hi = e->m[DM_DHI];  /* remote writers' range and this rank's own */
    d_union(&lo, &hi, d->ldlo[s], d->ldhi[s]);
    if (hi <= lo) continue;
    e->off = e->pg * d->page + lo;
    e->len = hi - lo;
    n++;
  }
  if (!rc && n) {
    qsort(v, n, sizeof *v, cmp_dirty);
    rc = write_runs(d, v, n);
  }
  for (size_t i = 0; !rc && i < n; i++) {
    v[i].m[DM_DLO] = v[i].m[DM_DHI] = 0;
    d->ldlo[v[i].slot] = d->ldhi[v[i].slot] = 0;
    rc = dm_put(d, v[i].pg, v[i].m);
  }
  free(v);
  MPI_Barrier(d->comm);  /* the clean entries are in place before anyone locks again */
  return rc;
}

int d_invalidate(dache *d) {
  MPI_Barrier(d->comm);
  int rc = 0;
  for (int s = 0; s < d->nslots; s++) {
    if (d->tag[s] < 0) continue;
    int32_t e[DM_INTS] = {DM_NONE, DM_NONE, 0, 0};
    int r = dm_put(d, d->tag[s], e);
    if (r && !rc) rc = r;
    d_drop_slot(d, s);
  }
  MPI_Barrier(d->comm);
  return rc;
}

/* violations among this rank's entries, given every rank's slot tags */
static int64_t check_entries(dache *d, const int64_t *tags, int *cnt, int *wr, int *ws) {
  int64_t bad = 0;
  for (int64_t i = 0; i < d->nmeta; i++) cnt[i] = 0;
  for (int r = 0; r < d->P; r++)
    for (int s = 0; s < d->nslots; s++) {
      int64_t pg = tags[(int64_t)r * d->nslots + s];
      if (pg < 0 || pg % d->P != d->rank) continue;
      int64_t i = pg / d->P;
      cnt[i]++;
      wr[i] = r;
      ws[i] = s;
    }
  for (int64_t i = 0; i < d->nmeta; i++) {
    int64_t pg = i * d->P + d->rank;
    if (pg >= d->npages) break;
    int32_t m[DM_INTS];
    if (dm_get(d, pg, m)) return -1;
    if (cnt[i] > 1) bad++;                       /* two cached copies */
    if (m[DM_PIN] != 0) bad++;                   /* a pin left behind */
    if (cnt[i] == 0 && m[DM_OWNER] != DM_NONE) bad++;  /* entry names a slot that holds another page */
    if (cnt[i] == 1 && (m[DM_OWNER] != wr[i] || m[DM_SLOT] != ws[i])) bad++;  /* a copy the entry does not know */
  }
  return bad;
}

int64_t mio_dache_audit(sheaf_file fh) {
  if (!fh || fh->cache_mode != MIO_CACHE_DACHE || !fh->have_cache) return SHEAF_MPIIO_EARG;
  dache *d = fh->cache.priv;
  MPI_Barrier(d->comm);
  int64_t *tags = malloc(sizeof(int64_t) * (size_t)d->nslots * (size_t)d->P);
  int *cnt = malloc(sizeof(int) * (size_t)(d->nmeta + 1) * 3);
  int oom = !tags || !cnt, any = 0;
  MPI_Allreduce(&oom, &any, 1, MPI_INT, MPI_MAX, d->comm);
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
  if (any) return mio_set_err(fh, SHEAF_MPIIO_ENOMEM, "%s: DACHe audit: out of memory", fh->path);
  return all < 0 ? mio_set_err(fh, SHEAF_MPIIO_EMPI, "%s: DACHe audit: reading metadata failed", fh->path) : all;
}

static int bad_hint(char *err, size_t errlen, const char *key, const char *val, const char *why) {
  snprintf(err, errlen, "hint %s: invalid value '%s' (%s)", key, val, why);
  return SHEAF_MPIIO_EARG;
}

static int parse_i64(const char *s, int64_t *v) {
  char *end;
  long long x = strtoll(s, &end, 10);
  if (end == s || x < 0) return -1;
  if (*end == 'k' || *end == 'K') { x *= 1024; end++; }
  else if (*end == 'm' || *end == 'M') { x *= 1024 * 1024; end++; }
  else if (*end == 'g' || *end == 'G') { x *= 1024LL * 1024 * 1024; end++; }
  if (*end) return -1;
  *v = x;
  return 0;
}

static int pick(const char *v, const char *const *names, const int *vals, int n, int *out) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i])) { *out = vals[i]; return 0; }
  return -1;
}

int mio_dache_hints(MPI_Info info, mio_dache_cfg *c, char *err, size_t errlen) {
  char v[MPI_MAX_INFO_VAL + 1];
  c->page = 64 << 10;
  c->nslots = 64;
  c->max_size = (int64_t)1 << 30;
  c->lock_kind = SHEAF_LOCK_MCS;
  c->progress = SHEAF_LOCK_PROGRESS_AUTO;
  c->atomic = c->audit = 0;
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
  if ((c->max_size + c->page - 1) / c->page > (1 << 22)) {
    snprintf(err, errlen, "hints sheaf_dache_max_size/sheaf_dache_page_size: %lld pages, more than the %d "
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
