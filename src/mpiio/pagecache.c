/* pagecache.c - see pagecache.h. Hash of pages by index, least recently used
 * page evicted (written back) when the store is full. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagecache.h"

struct mio_pc_page {
    int64_t idx;
    uint64_t used;
    int loaded; /* every byte valid (read from the file or written) */
    int64_t ndirty, nvalid;
    unsigned char *dirty; /* per byte: 1 valid, 2 valid and dirty */
    mio_pc_page *next;
    unsigned char data[];
};

void mio_pc_init(mio_pc *pc, int64_t page, size_t max_pages, mio_pc_rd rd, mio_pc_wr wr)
{
    memset(pc, 0, sizeof *pc);
    pc->page = page > 0 ? page : 4096;
    pc->max_pages = max_pages > 0 ? max_pages : 1;
    pc->rd = rd;
    pc->wr = wr;
}

static size_t bucket_of(int64_t idx) { return (size_t)((uint64_t)idx % MIO_PC_BUCKETS); }

/* Dirty runs are written back in file order and merged across page
 * boundaries (one write per contiguous run, through a bounce buffer). */
typedef struct wb {
    char *buf;
    int64_t off, len, cap;
} wb;
static int wb_flush(mio_pc *pc, mio_backend *b, wb *w)
{
    int rc = w->len > 0 ? pc->wr(b, w->buf, w->len, w->off) : 0;
    w->len = 0;
    return rc;
}
static int wb_add(mio_pc *pc, mio_backend *b, wb *w, const unsigned char *src, int64_t len, int64_t off)
{
    if (w->len > 0 && (w->off + w->len != off || w->len + len > w->cap)) {
        int rc = wb_flush(pc, b, w);
        if (rc)
            return rc;
    }
    if (!w->buf || len > w->cap)
        return pc->wr(b, src, len, off); /* no bounce buffer */
    if (w->len == 0)
        w->off = off;
    memcpy(w->buf + w->len, src, (size_t)len);
    w->len += len;
    return 0;
}
static int writeback_into(mio_pc *pc, mio_backend *b, mio_pc_page *p, wb *w)
{
    int64_t i = 0;
    while (p->ndirty > 0 && i < pc->page) {
        if (p->dirty[i] != 2) {
            i++;
            continue;
        }
        int64_t j = i;
        while (j < pc->page && p->dirty[j] == 2)
            j++;
        int rc = wb_add(pc, b, w, p->data + i, j - i, p->idx * pc->page + i);
        if (rc)
            return rc;
        i = j;
    }
    for (int64_t k = 0; k < pc->page; k++)
        if (p->dirty[k] == 2)
            p->dirty[k] = 1;
    p->ndirty = 0;
    return 0;
}
static int writeback(mio_pc *pc, mio_backend *b, mio_pc_page *p)
{
    wb w = {0};
    int rc = writeback_into(pc, b, p, &w);
    return rc;
}

static void unlink_free(mio_pc *pc, mio_pc_page *p)
{
    mio_pc_page **pp = &pc->bucket[bucket_of(p->idx)];
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    free(p->dirty);
    free(p);
    pc->npages--;
}

static int evict_one(mio_pc *pc, mio_backend *b)
{
    mio_pc_page *v = NULL;
    for (size_t k = 0; k < MIO_PC_BUCKETS; k++)
        for (mio_pc_page *p = pc->bucket[k]; p; p = p->next)
            if (!v || p->used < v->used)
                v = p;
    if (!v)
        return 0;
    int rc = writeback(pc, b, v);
    if (rc)
        return rc;
    unlink_free(pc, v);
    return 0;
}

static mio_pc_page *get(mio_pc *pc, mio_backend *b, int64_t idx, int *rc)
{
    for (mio_pc_page *p = pc->bucket[bucket_of(idx)]; p; p = p->next)
        if (p->idx == idx) {
            p->used = ++pc->tick;
            return p;
        }
    if (pc->npages >= pc->max_pages && (*rc = evict_one(pc, b)) != 0)
        return NULL;
    mio_pc_page *p = calloc(1, sizeof *p + (size_t)pc->page);
    if (p)
        p->dirty = calloc(1, (size_t)pc->page);
    if (!p || !p->dirty) {
        free(p);
        snprintf(b->err, b->errlen, "%s: page cache: out of memory", b->path);
        *rc = SHEAF_MPIIO_ENOMEM;
        return NULL;
    }
    p->idx = idx;
    p->used = ++pc->tick;
    p->next = pc->bucket[bucket_of(idx)];
    pc->bucket[bucket_of(idx)] = p;
    pc->npages++;
    return p;
}

static int load(mio_pc *pc, mio_backend *b, mio_pc_page *p)
{
    if (p->loaded) {
        pc->hits++;
        return 0;
    }
    pc->misses++;
    if (p->nvalid == pc->page) {
        p->loaded = 1;
        return 0;
    }
    unsigned char *tmp = malloc((size_t)pc->page);
    if (!tmp)
        return SHEAF_MPIIO_ENOMEM;
    int rc = pc->rd(b, tmp, pc->page, p->idx * pc->page);
    if (!rc) {
        for (int64_t i = 0; i < pc->page; i++)
            if (!p->dirty[i]) {
                p->data[i] = tmp[i];
                p->dirty[i] = 1;
            }
        p->nvalid = pc->page;
        p->loaded = 1;
    }
    free(tmp);
    return rc;
}

int mio_pc_read(mio_pc *pc, mio_backend *b, void *buf, int64_t len, int64_t off)
{
    char *out = buf;
    while (len > 0) {
        int64_t idx = off / pc->page, in = off % pc->page, n = pc->page - in;
        if (n > len)
            n = len;
        int rc = 0;
        mio_pc_page *p = get(pc, b, idx, &rc);
        if (!p)
            return rc;
        int all_valid = p->loaded;
        if (!all_valid) {
            all_valid = 1;
            for (int64_t i = in; i < in + n && all_valid; i++)
                all_valid = p->dirty[i] != 0;
        }
        if (!all_valid && (rc = load(pc, b, p)) != 0)
            return rc;
        if (all_valid)
            pc->hits++;
        memcpy(out, p->data + in, (size_t)n);
        out += n;
        off += n;
        len -= n;
    }
    return 0;
}

int mio_pc_write(mio_pc *pc, mio_backend *b, const void *buf, int64_t len, int64_t off)
{
    const char *src = buf;
    if (off + len > pc->dirty_end)
        pc->dirty_end = off + len;
    while (len > 0) {
        int64_t idx = off / pc->page, in = off % pc->page, n = pc->page - in;
        if (n > len)
            n = len;
        int rc = 0;
        mio_pc_page *p = get(pc, b, idx, &rc);
        if (!p)
            return rc;
        memcpy(p->data + in, src, (size_t)n);
        for (int64_t i = in; i < in + n; i++)
            if (p->dirty[i] != 2) {
                if (!p->dirty[i])
                    p->nvalid++;
                p->dirty[i] = 2;
                p->ndirty++;
            }
        src += n;
        off += n;
        len -= n;
    }
    return 0;
}

static int cmp_page(const void *x, const void *y)
{
    const mio_pc_page *a = *(mio_pc_page *const *)x, *b = *(mio_pc_page *const *)y;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int mio_pc_flush(mio_pc *pc, mio_backend *b, int drop)
{
    int rc = 0;
    mio_pc_page **all = malloc(sizeof(*all) * (pc->npages + 1));
    size_t n = 0;
    for (size_t k = 0; k < MIO_PC_BUCKETS; k++)
        for (mio_pc_page *p = pc->bucket[k]; p; p = p->next)
            if (all)
                all[n++] = p;
            else if (!rc)
                rc = writeback(pc, b, p); /* no memory: page by page */
    if (all) {
        qsort(all, n, sizeof *all, cmp_page);
        wb w = {0};
        w.cap = (int64_t)4 << 20;
        w.buf = malloc((size_t)w.cap);
        for (size_t i = 0; i < n; i++) {
            int r = writeback_into(pc, b, all[i], &w);
            if (r && !rc)
                rc = r;
        }
        int r = wb_flush(pc, b, &w);
        if (r && !rc)
            rc = r;
        free(w.buf);
        free(all);
    }
    if (drop)
        mio_pc_drop(pc);
    return rc;
}

int mio_pc_drop_range(mio_pc *pc, mio_backend *b, int64_t off, int64_t len)
{
    if (len <= 0)
        return 0;
    int64_t first = off / pc->page, last = (off + len - 1) / pc->page;
    if ((uint64_t)(last - first) >= (uint64_t)pc->npages + MIO_PC_BUCKETS) {
        /* a range wider than the pages held: walk the pages instead */
        for (size_t k = 0; k < MIO_PC_BUCKETS; k++)
            for (mio_pc_page *p = pc->bucket[k], *nx; p; p = nx) {
                nx = p->next;
                if (p->idx < first || p->idx > last)
                    continue;
                int rc = writeback(pc, b, p);
                if (rc)
                    return rc;
                unlink_free(pc, p);
            }
        return 0;
    }
    for (int64_t idx = first; idx <= last; idx++)
        for (mio_pc_page *p = pc->bucket[bucket_of(idx)]; p; p = p->next)
            if (p->idx == idx) {
                int rc = writeback(pc, b, p);
                if (rc)
                    return rc;
                unlink_free(pc, p);
                break;
            }
    return 0;
}

void mio_pc_drop(mio_pc *pc)
{
    for (size_t k = 0; k < MIO_PC_BUCKETS; k++)
        while (pc->bucket[k])
            unlink_free(pc, pc->bucket[k]);
    pc->dirty_end = 0;
}
