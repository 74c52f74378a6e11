/* keyval.c - inline key-value records: writer and lazy per-task key manager. */
#define _FILE_OFFSET_BITS 64
#include "keyval.h"
#include "endian.h"
#include "error.h"
#include "sion_const.h"
#include <stdlib.h>
#include <string.h>

typedef struct kv_rec {
    int64_t off; /* stream offset of the payload */
    int64_t len;
    uint64_t key;
    int64_t occ; /* occurrence index of this record among its key's records */
} kv_rec;

typedef struct kv_key {
    uint64_t key;
    int64_t n, cap;
    int64_t *recs; /* indices into kv_task.recs, file order */
    int64_t total; /* payload bytes of the records found so far */
    int64_t ri;    /* read cursor: record (index into recs[]) ... */
    int64_t pos;   /* ... and offset inside it */
} kv_key;

typedef struct kv_task {
    int64_t total;   /* bytes of the task's stream */
    int64_t nblk;    /* blocks of the task */
    int64_t *bstart; /* [nblk+1] stream offset where each block begins */
    int64_t scan;    /* stream offset of the next unscanned record header */
    int done;        /* whole stream scanned */
    kv_rec *recs;
    int64_t nrec, reccap;
    kv_key *keys; /* order of first appearance */
    int64_t nkeys, keycap;
    int64_t *hash;  /* open addressing: index into keys + 1, 0 = empty */
    int64_t hcap;   /* power of two */
    int64_t it_rec; /* record iterator */
    int64_t it_key; /* key list iterator */
} kv_task;

struct core_kv {
    int32_t ntasks;
    kv_task **tasks;
};

static const char *task_fname(core_container *c)
{
    const core_task *t = &c->tasks[c->cur];
    const char *n = c->files[t->file].f.name;
    return n ? n : c->name;
}

int core_kv_check(core_container *c, const char *call)
{
    if (c->keyval != SION_KEYVAL_INLINE)
        return core_fail(SHEAF_E_ARG,
                         "%s: %s needs a key-value container (opened with \"keyval=inline\"), "
                         "this one has key-value mode %d (%s)",
                         c->name, call, c->keyval, c->keyval == SION_KEYVAL_NONE ? "none" : "not supported");
    return 0;
}

void core_kv_free(core_container *c)
{
    if (!c || !c->kv)
        return;
    for (int32_t i = 0; i < c->kv->ntasks; i++) {
        kv_task *kt = c->kv->tasks[i];
        if (!kt)
            continue;
        for (int64_t k = 0; k < kt->nkeys; k++)
            free(kt->keys[k].recs);
        free(kt->keys);
        free(kt->recs);
        free(kt->hash);
        free(kt->bstart);
        free(kt);
    }
    free(c->kv->tasks);
    free(c->kv);
    c->kv = NULL;
}

/* ---- writing ------------------------------------------------------------ */

/* Fill the current block to its chunk size, continue in the next one. */
static int write_straddling(core_container *c, const unsigned char *p, uint64_t n)
{
    core_task *t = &c->tasks[c->cur];
    while (n > 0) {
        int64_t room = core_avail_in_block(c);
        if (room < 0)
            return core_fail(SHEAF_E_IO, "%s: cannot determine the free space of task %d", c->name, c->cur);
        uint64_t piece = room > 0 ? (uint64_t)room : (uint64_t)t->chunksize; /* room 0: next block */
        if (piece > n)
            piece = n;
        int rc = core_write(c, p, piece);
        if (rc)
            return rc;
        p += piece;
        n -= piece;
    }
    return 0;
}

int core_kv_write(core_container *c, uint64_t key, const void *buf, uint64_t n)
{
    int rc = core_kv_check(c, "sion_fwrite_key");
    if (rc)
        return rc;
    if (!c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: sion_fwrite_key on a container opened for reading", c->name);
    if (n > (uint64_t)INT64_MAX)
        return core_fail(SHEAF_E_ARG, "%s: record of %llu bytes is too long", c->name, (unsigned long long)n);
    if (c->tasks[c->cur].chunksize <= 0)
        return core_fail(SHEAF_E_ARG, "%s: task %d has chunk size 0, nothing can be written", c->name, c->cur);
    /* the writer always uses host order (the metadata is written in host order) */
    unsigned char h[CORE_KV_HEADER];
    int64_t len = (int64_t)n;
    memcpy(h, &key, 8);
    memcpy(h + 8, &len, 8);
    if ((rc = write_straddling(c, h, sizeof h)))
        return rc;
    return write_straddling(c, buf, n);
}

/* ---- key manager ---------------------------------------------------------- */

static uint64_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static int64_t find_key(const kv_task *kt, uint64_t key)
{
    if (!kt->hcap)
        return -1;
    uint64_t m = (uint64_t)kt->hcap - 1;
    for (uint64_t h = hash64(key) & m;; h = (h + 1) & m) {
        int64_t v = kt->hash[h];
        if (v == 0)
            return -1;
        if (kt->keys[v - 1].key == key)
            return v - 1;
    }
}

static void hash_put(int64_t *tab, int64_t cap, uint64_t key, int64_t idx1)
{
    uint64_t m = (uint64_t)cap - 1;
    uint64_t h = hash64(key) & m;
    while (tab[h])
        h = (h + 1) & m;
    tab[h] = idx1;
}

static int grow(void **p, int64_t *cap, int64_t need, size_t elem, const char *name)
{
    if (need <= *cap)
        return 0;
    int64_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, (size_t)nc * elem);
    if (!np)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory in the key-value index", name);
    *p = np;
    *cap = nc;
    return 0;
}

/* Index of `key` in kt->keys, creating it. */
static int64_t add_key(core_container *c, kv_task *kt, uint64_t key)
{
    int64_t i = find_key(kt, key);
    if (i >= 0)
        return i;
    if (grow((void **)&kt->keys, &kt->keycap, kt->nkeys + 1, sizeof *kt->keys, c->name))
        return SHEAF_E_NOMEM;
    if (2 * (kt->nkeys + 1) > kt->hcap) {
        int64_t nc = kt->hcap ? 2 * kt->hcap : 64;
        int64_t *nt = calloc((size_t)nc, sizeof *nt);
        if (!nt)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory in the key-value index", c->name);
        for (int64_t k = 0; k < kt->nkeys; k++)
            hash_put(nt, nc, kt->keys[k].key, k + 1);
        free(kt->hash);
        kt->hash = nt;
        kt->hcap = nc;
    }
    i = kt->nkeys++;
    memset(&kt->keys[i], 0, sizeof kt->keys[i]);
    kt->keys[i].key = key;
    hash_put(kt->hash, kt->hcap, key, i + 1);
    return i;
}

static int get_task(core_container *c, kv_task **out)
{
    if (!c->kv) {
        core_kv *kv = calloc(1, sizeof *kv);
        if (!kv || !(kv->tasks = calloc((size_t)(c->ntasks > 0 ? c->ntasks : 1), sizeof *kv->tasks))) {
            free(kv);
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory in the key-value index", c->name);
        }
        kv->ntasks = c->ntasks;
        c->kv = kv;
        c->kv_release = core_kv_free; /* core_container_free (handle.c) calls it */
    }
    kv_task *kt = c->kv->tasks[c->cur];
    if (!kt) {
        const core_task *t = &c->tasks[c->cur];
        if (!(kt = calloc(1, sizeof *kt)) || !(kt->bstart = malloc((size_t)(t->nblocks + 1) * sizeof *kt->bstart))) {
            free(kt);
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory in the key-value index", c->name);
        }
        kt->nblk = t->nblocks;
        kt->bstart[0] = 0;
        for (int64_t b = 0; b < t->nblocks; b++)
            kt->bstart[b + 1] = kt->bstart[b] + t->bsize[b];
        kt->total = kt->bstart[t->nblocks];
        c->kv->tasks[c->cur] = kt;
    }
    *out = kt;
    return 0;
}

/* Read n bytes at stream offset off of the current task; short = corrupt. */
static int read_at(core_container *c, kv_task *kt, int64_t off, void *buf, uint64_t n)
{
    if (off < 0 || off > kt->total || n > (uint64_t)(kt->total - off))
        return core_fail(SHEAF_E_FORMAT,
                         "%s: task %d: read of %llu bytes at stream offset %lld runs past the "
                         "end of the task's stream (%lld bytes)",
                         task_fname(c), c->cur, (unsigned long long)n, (long long)off, (long long)kt->total);
    /* the block holding `off` (binary search), so the seek costs O(log blocks) */
    int64_t lo = 0, hi = kt->nblk - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (kt->bstart[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    int rc = core_seek(c, SION_CURRENT_RANK, lo, off - kt->bstart[lo]);
    if (rc)
        return rc;
    uint64_t got = 0;
    if ((rc = core_read(c, buf, n, &got)))
        return rc;
    if (got != n)
        return core_fail(SHEAF_E_FORMAT, "%s: task %d: only %llu of %llu bytes at stream offset %lld could be read",
                         task_fname(c), c->cur, (unsigned long long)got, (unsigned long long)n, (long long)off);
    return 0;
}

/* Scan one record. 1 = found (index in *ri), 0 = end of stream, < 0 error. */
static int scan_one(core_container *c, kv_task *kt, int64_t *ri)
{
    if (kt->done)
        return 0;
    int64_t left = kt->total - kt->scan;
    if (left == 0) {
        kt->done = 1;
        return 0;
    }
    if (left < CORE_KV_HEADER)
        return core_fail(SHEAF_E_FORMAT,
                         "%s: task %d: truncated key-value record header at stream offset %lld "
                         "(%lld bytes left, %d needed)",
                         task_fname(c), c->cur, (long long)kt->scan, (long long)left, CORE_KV_HEADER);
    unsigned char h[CORE_KV_HEADER];
    int rc = read_at(c, kt, kt->scan, h, sizeof h);
    if (rc)
        return rc;
    uint64_t key, ulen;
    memcpy(&key, h, 8);
    memcpy(&ulen, h + 8, 8);
    if (c->files[c->tasks[c->cur].file].m.swap) {
        key = core_bswap64(key);
        ulen = core_bswap64(ulen);
    }
    int64_t len = (int64_t)ulen;
    left -= CORE_KV_HEADER;
    if (len < 0)
        return core_fail(SHEAF_E_FORMAT,
                         "%s: task %d: key-value record at stream offset %lld (key %llu) has a "
                         "negative length %lld",
                         task_fname(c), c->cur, (long long)kt->scan, (unsigned long long)key, (long long)len);
    if (len > left)
        return core_fail(SHEAF_E_FORMAT,
                         "%s: task %d: key-value record at stream offset %lld (key %llu) has "
                         "length %lld but only %lld bytes of the task's stream follow (truncated or corrupt)",
                         task_fname(c), c->cur, (long long)kt->scan, (unsigned long long)key, (long long)len,
                         (long long)left);
    int64_t k = add_key(c, kt, key);
    if (k < 0)
        return (int)k;
    kv_key *ke = &kt->keys[k];
    if (grow((void **)&kt->recs, &kt->reccap, kt->nrec + 1, sizeof *kt->recs, c->name) ||
        grow((void **)&ke->recs, &ke->cap, ke->n + 1, sizeof *ke->recs, c->name))
        return SHEAF_E_NOMEM;
    int64_t r = kt->nrec++;
    kt->recs[r].off = kt->scan + CORE_KV_HEADER;
    kt->recs[r].len = len;
    kt->recs[r].key = key;
    kt->recs[r].occ = ke->n;
    ke->recs[ke->n++] = r;
    ke->total += len;
    kt->scan += CORE_KV_HEADER + len;
    if (kt->scan == kt->total)
        kt->done = 1;
    *ri = r;
    return 1;
}

/* Scan until `key` has more than `idx` records or the stream ends.
 * Returns the key's index (or -1 if it has not been seen), < -1 on error
 * (as SHEAF_E_* codes are all <= -1, errors are returned via *rcp). */
static int64_t scan_for(core_container *c, kv_task *kt, uint64_t key, int64_t idx, int *rcp)
{
    *rcp = 0;
    for (;;) {
        int64_t k = find_key(kt, key);
        if (k >= 0 && kt->keys[k].n > idx)
            return k;
        int64_t r;
        int rc = scan_one(c, kt, &r);
        if (rc < 0) {
            *rcp = rc;
            return -1;
        }
        if (rc == 0)
            return k;
    }
}

static int read_mode(core_container *c, const char *call)
{
    int rc = core_kv_check(c, call);
    if (rc)
        return rc;
    if (c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: %s on a container opened for writing", c->name, call);
    return 0;
}

int core_kv_read(core_container *c, uint64_t key, void *buf, uint64_t size, uint64_t nitems, uint64_t *items)
{
    *items = 0;
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_fread_key");
    if (rc || (rc = get_task(c, &kt)))
        return rc;
    int64_t k = find_key(kt, key);
    /* find a record of the key with unread bytes, scanning only as needed */
    for (;;) {
        if (k >= 0) {
            kv_key *ke = &kt->keys[k];
            while (ke->ri < ke->n && ke->pos >= kt->recs[ke->recs[ke->ri]].len) {
                if (ke->ri + 1 >= ke->n && !kt->done)
                    break; /* keep the cursor at the end of the last known record */
                ke->ri++;
                ke->pos = 0;
            }
            if (ke->ri < ke->n && ke->pos < kt->recs[ke->recs[ke->ri]].len)
                break;
            if (kt->done)
                return 0; /* all data of this key has been read */
            k = scan_for(c, kt, key, ke->n, &rc);
        } else {
            if (kt->done)
                return core_fail(SHEAF_E_ARG, "%s: task %d has no record with key %llu", task_fname(c), c->cur,
                                 (unsigned long long)key);
            k = scan_for(c, kt, key, 0, &rc);
        }
        if (rc)
            return rc;
    }
    kv_key *ke = &kt->keys[k];
    const kv_rec *r = &kt->recs[ke->recs[ke->ri]];
    uint64_t avail = (uint64_t)(r->len - ke->pos);
    uint64_t n = avail / size;
    if (n > nitems)
        n = nitems;
    if (n == 0)
        return core_fail(SHEAF_E_ARG,
                         "%s: task %d: record %lld of key %llu has %llu unread bytes, less than one "
                         "item of %llu bytes (items never span records)",
                         task_fname(c), c->cur, (long long)r->occ, (unsigned long long)key, (unsigned long long)avail,
                         (unsigned long long)size);
    if ((rc = read_at(c, kt, r->off + ke->pos, buf, n * size)))
        return rc;
    ke->pos += (int64_t)(n * size);
    *items = n;
    return 0;
}

int core_kv_iter_reset(core_container *c)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_fread_key_iterator_reset");
    if (rc || (rc = get_task(c, &kt)))
        return rc;
    kt->it_rec = 0;
    return 0;
}

int core_kv_iter_next(core_container *c, uint64_t *key, uint64_t *len)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_fread_key_iterator_next");
    if (rc || (rc = get_task(c, &kt)))
        return rc;
    if (kt->it_rec >= kt->nrec) {
        int64_t r;
        if ((rc = scan_one(c, kt, &r)) <= 0)
            return rc;
    }
    const kv_rec *r = &kt->recs[kt->it_rec++];
    kv_key *ke = &kt->keys[find_key(kt, r->key)];
    ke->ri = r->occ;
    ke->pos = 0;
    if (key)
        *key = r->key;
    if (len)
        *len = (uint64_t)r->len;
    return 1;
}

/* sion_seek_key with SION_CURRENT_BLOCK: the key's current record (a record read to
 * its end is no longer the current one: as in SIONlib's key manager, the key's next
 * record is, found by scanning on if needed; after the key's last record there is
 * none), then pos inside it (SION_CURRENT_POS: where it is). */
static int seek_current(core_container *c, kv_task *kt, uint64_t key, int64_t pos)
{
    const char *fn = task_fname(c);
    int rc = 0;
    int64_t k = scan_for(c, kt, key, 0, &rc);
    if (rc)
        return rc;
    if (k < 0 || kt->keys[k].n == 0)
        return core_fail(SHEAF_E_ARG, "%s: task %d has no record with key %llu", fn, c->cur, (unsigned long long)key);
    kv_key *ke = &kt->keys[k];
    for (;;) {
        if (ke->ri < ke->n) {
            int64_t len = kt->recs[ke->recs[ke->ri]].len;
            if (ke->pos < len || len == 0)
                break;
            if (ke->ri + 1 < ke->n) {
                ke->ri++;
                ke->pos = 0;
                continue;
            }
        }
        int64_t have = ke->n;
        k = scan_for(c, kt, key, have, &rc);
        if (rc)
            return rc;
        ke = &kt->keys[k];
        if (ke->n == have)
            return core_fail(SHEAF_E_ARG,
                             "%s: task %d: all %lld records of key %llu have been read, there is no "
                             "current record to seek in",
                             fn, c->cur, (long long)have, (unsigned long long)key);
        ke->ri = have;
        ke->pos = 0;
    }
    if (pos == SION_CURRENT_POS)
        return 0;
    int64_t len = kt->recs[ke->recs[ke->ri]].len;
    if (pos < 0 || pos >= len) /* SIONlib: a position inside the record */
        return core_fail(SHEAF_E_ARG, "%s: task %d: position %lld outside record %lld of key %llu (%lld bytes)", fn,
                         c->cur, (long long)pos, (long long)ke->ri, (unsigned long long)key, (long long)len);
    ke->pos = pos;
    return 0;
}

/* sion_seek_key with SION_ABSOLUTE_POS: pos counts over all records of the key. */
static int seek_absolute(core_container *c, kv_task *kt, uint64_t key, int64_t pos)
{
    const char *fn = task_fname(c);
    int rc = 0;
    if (pos < 0)
        return core_fail(SHEAF_E_ARG, "%s: sion_seek_key: negative position %lld", fn, (long long)pos);
    int64_t cum = 0;
    for (int64_t i = 0;; i++) {
        int64_t k = scan_for(c, kt, key, i, &rc);
        if (rc)
            return rc;
        if (k < 0)
            return core_fail(SHEAF_E_ARG, "%s: task %d has no record with key %llu", fn, c->cur,
                             (unsigned long long)key);
        kv_key *ke = &kt->keys[k];
        if (i >= ke->n) /* no more records; SIONlib: a position inside the key's data */
            return core_fail(SHEAF_E_ARG, "%s: task %d: position %lld not inside the %lld bytes of key %llu", fn,
                             c->cur, (long long)pos, (long long)cum, (unsigned long long)key);
        int64_t len = kt->recs[ke->recs[i]].len;
        if (pos < cum + len) {
            ke->ri = i;
            ke->pos = pos - cum;
            return 0;
        }
        cum += len;
    }
}

/* sion_seek_key to record `entry` of the key, position pos inside it. */
static int seek_entry(core_container *c, kv_task *kt, uint64_t key, int64_t entry, int64_t pos)
{
    const char *fn = task_fname(c);
    int rc = 0;
    if (entry < 0)
        return core_fail(SHEAF_E_ARG, "%s: sion_seek_key: invalid entry number %lld", fn, (long long)entry);
    int64_t k = scan_for(c, kt, key, entry, &rc);
    if (rc)
        return rc;
    if (k < 0 || kt->keys[k].n <= entry)
        return core_fail(SHEAF_E_ARG, "%s: task %d: key %llu has %lld records, cannot seek to record %lld", fn, c->cur,
                         (unsigned long long)key, (long long)(k < 0 ? 0 : kt->keys[k].n), (long long)entry);
    kv_key *ke = &kt->keys[k];
    int64_t len = kt->recs[ke->recs[entry]].len;
    if (pos < 0 || pos >= len) /* SIONlib: a position inside the record */
        return core_fail(SHEAF_E_ARG, "%s: task %d: position %lld outside record %lld of key %llu (%lld bytes)", fn,
                         c->cur, (long long)pos, (long long)entry, (unsigned long long)key, (long long)len);
    ke->ri = entry;
    ke->pos = pos;
    return 0;
}

int core_kv_seek(core_container *c, uint64_t key, int64_t entry, int64_t pos)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_seek_key");
    if (rc || (rc = get_task(c, &kt)))
        return rc;
    if (entry == SION_CURRENT_BLOCK)
        return seek_current(c, kt, key, pos);
    if (pos == SION_CURRENT_POS)
        return core_fail(SHEAF_E_ARG, "%s: sion_seek_key: SION_CURRENT_POS is only allowed with SION_CURRENT_BLOCK",
                         task_fname(c));
    if (entry == SION_ABSOLUTE_POS)
        return seek_absolute(c, kt, key, pos);
    return seek_entry(c, kt, key, entry, pos);
}

static int full_scan(core_container *c, kv_task *kt)
{
    int64_t r;
    int rc;
    while ((rc = scan_one(c, kt, &r)) > 0)
        ;
    return rc;
}

int core_kv_full_scan(core_container *c)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_key_full_scan");
    if (rc || (rc = get_task(c, &kt)))
        return rc;
    return full_scan(c, kt);
}

int core_kv_keylist_reset(core_container *c)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_key_list_iterator_reset");
    if (rc || (rc = get_task(c, &kt)) || (rc = full_scan(c, kt)))
        return rc;
    kt->it_key = 0;
    return 0;
}

int core_kv_keylist_next(core_container *c, uint64_t *key)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_key_list_iterator_next");
    if (rc || (rc = get_task(c, &kt)))
        return rc;
    if (kt->it_key >= kt->nkeys)
        return 0;
    if (key)
        *key = kt->keys[kt->it_key].key;
    kt->it_key++;
    return 1;
}

int core_kv_stat(core_container *c, uint64_t key, int64_t *nrec, int64_t *total)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "sion_key_get_stat");
    if (rc || (rc = get_task(c, &kt)) || (rc = full_scan(c, kt)))
        return rc;
    int64_t k = find_key(kt, key);
    *nrec = k < 0 ? 0 : kt->keys[k].n;
    *total = k < 0 ? 0 : kt->keys[k].total;
    return 0;
}

int core_kv_nkeys(core_container *c, int64_t *nkeys)
{
    kv_task *kt = NULL;
    int rc = read_mode(c, "key statistics");
    if (rc || (rc = get_task(c, &kt)) || (rc = full_scan(c, kt)))
        return rc;
    *nkeys = kt->nkeys;
    return 0;
}

int core_kv_key_at(core_container *c, int64_t i, uint64_t *key, int64_t *nrec, int64_t *total)
{
    int64_t n;
    int rc = core_kv_nkeys(c, &n);
    if (rc)
        return rc;
    if (i < 0 || i >= n)
        return core_fail(SHEAF_E_ARG, "%s: task %d has %lld keys, no key number %lld", c->name, c->cur, (long long)n,
                         (long long)i);
    const kv_key *ke = &c->kv->tasks[c->cur]->keys[i];
    if (key)
        *key = ke->key;
    if (nrec)
        *nrec = ke->n;
    if (total)
        *total = ke->total;
    return 0;
}
