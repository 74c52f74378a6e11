/* stats_model.c - the tables of `sheaf stats report|export` (stats_model.h). */
#include "stats_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sm_ix[SM_NIX];
const char *const sm_hist_labels[SM_HIST_N] = {"0-100", "100-1K", "1K-10K",   "10K-100K", "100K-1M",
                                               "1M-4M", "4M-10M", "10M-100M", "100M-1G",  "1G+"};
static const char *const ix_names[SM_NIX] = {"opens",      "reads",         "writes",
                                             "seeks",      "stats",         "fsyncs",
                                             "bytes_read", "bytes_written", "file_not_aligned",
                                             "read_ns",    "write_ns",      "meta_ns",
                                             "first_ns",   "last_ns",       "files",
                                             "read_0_100", "write_0_100"};

uint64_t sm_bytes(const uint64_t *c) { return c[sm_ix[SM_BYTES_READ]] + c[sm_ix[SM_BYTES_WRITTEN]]; }

void sm_row_label(const sm_row *r, char *out, size_t n)
{
    if (r->rank >= 0)
        snprintf(out, n, "rank %d", r->rank);
    else
        snprintf(out, n, "pid %llu", (unsigned long long)r->pid);
}

static void merge(int nc, uint64_t *dst, const uint64_t *src)
{
    for (int i = 0; i < nc; i++) {
        int m = sheaf_monitor_counter_merge(i);
        if (m == 1)
            dst[i] = src[i] > dst[i] ? src[i] : dst[i];
        else if (m == 2)
            dst[i] = dst[i] == 0 || (src[i] && src[i] < dst[i]) ? src[i] : dst[i];
        else
            dst[i] += src[i];
    }
}

/* one record of one process, before merging by name */
typedef struct item {
    int kind;
    const char *name;
    size_t row;
    const uint64_t *c;
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    int s = strcmp(x->name, y->name);
    if (s)
        return s;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_file(const void *a, const void *b)
{
    const sm_file *x = a, *y = b;
    uint64_t bx = sm_bytes(x->c), by = sm_bytes(y->c);
    if (bx != by)
        return bx > by ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_row(const void *a, const void *b)
{
    const sm_row *x = a, *y = b;
    if ((x->rank < 0) != (y->rank < 0))
        return x->rank < 0 ? 1 : -1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* the rows: one per rank, one per process without a rank */
static int build_rows(sm_job *m)
{
    m->rows = calloc(m->nprocs ? m->nprocs : 1, sizeof *m->rows);
    m->proc_row = calloc(m->nprocs ? m->nprocs : 1, sizeof *m->proc_row);
    if (!m->rows || !m->proc_row)
        return -1;
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        sm_row r = {pi.rank < 0 ? -1 : pi.rank, pi.pid, 0, {0}};
        m->rows[p] = r;
    }
    qsort(m->rows, m->nprocs, sizeof *m->rows, cmp_row);
    size_t n = 0;
    for (size_t i = 0; i < m->nprocs; i++)
        if (n == 0 || m->rows[i].rank != m->rows[n - 1].rank ||
            (m->rows[i].rank < 0 && m->rows[i].pid != m->rows[n - 1].pid))
            m->rows[n++] = m->rows[i]; /* a rank's processes, or one pid's images (exec), share a row */
    m->nrows = n;
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        for (size_t r = 0; r < n; r++)
            if (pi.rank >= 0 ? m->rows[r].rank == pi.rank : (m->rows[r].rank < 0 && m->rows[r].pid == pi.pid)) {
                m->proc_row[p] = r;
                m->rows[r].procs++;
                break;
            }
    }
    return 0;
}

/* every process's records, sorted by (kind, name, row) */
static item *collect(sm_job *m, size_t *ni)
{
    size_t total = 0, k = 0;
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        total += pi.nslots;
    }
    item *it = malloc((total ? total : 1) * sizeof *it);
    if (!it)
        return NULL;
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        for (size_t s = 0; s < pi.nslots; s++) {
            sheaf_monitor_record_info ri;
            if (sheaf_monitor_record(m->job, p, s, &ri) == 0)
                it[k++] = (item){ri.kind, ri.name, m->proc_row[p], ri.counters};
        }
    }
    qsort(it, k, sizeof *it, cmp_item);
    *ni = k;
    return it;
}

/* files merged by (kind, name); per row of one file, its bytes (worst row, ranks with I/O) */
static int build_files(sm_job *m)
{
    size_t ni = 0;
    item *it = collect(m, &ni);
    m->files = calloc(ni ? ni : 1, sizeof *m->files);
    if (!it || !m->files) {
        free(it);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < ni; i++) {
        if (n == 0 || m->files[n - 1].kind != it[i].kind || strcmp(m->files[n - 1].name, it[i].name)) {
            m->files[n] = (sm_file){.kind = it[i].kind, .name = it[i].name, .worst_row = -1};
            n++;
        }
        sm_file *f = &m->files[n - 1];
        merge(m->nc, f->c, it[i].c);
        f->procs++;
        merge(m->nc, m->rows[it[i].row].c, it[i].c);
        /* bytes of this row in this file: items of one row are adjacent */
        uint64_t b = sm_bytes(it[i].c);
        size_t j = i;
        while (j + 1 < ni && it[j + 1].row == it[i].row && it[j + 1].kind == it[i].kind &&
               !strcmp(it[j + 1].name, it[i].name)) {
            j++;
            merge(m->nc, f->c, it[j].c);
            f->procs++;
            merge(m->nc, m->rows[it[j].row].c, it[j].c);
            b += sm_bytes(it[j].c);
        }
        if (b) {
            f->ranks_io++;
            if (b > f->worst_bytes) {
                f->worst_bytes = b;
                f->worst_row = (long)it[i].row;
            }
        }
        i = j;
    }
    free(it);
    m->nfiles = n;
    qsort(m->files, n, sizeof *m->files, cmp_file);
    for (size_t i = 0; i < n; i++) {
        merge(m->nc, m->tot, m->files[i].c);
        if (m->files[i].kind == SHEAF_MONITOR_KIND_FILE)
            m->own_files++;
        else {
            m->aggregates++;
            m->folded_opens += m->files[i].c[sm_ix[SM_FILES]];
        }
    }
    return 0;
}

static int cmp_tgt_name(const void *a, const void *b)
{
    return strcmp(((const sm_tgt *)a)->name, ((const sm_tgt *)b)->name);
}

static int cmp_tgt_bytes(const void *a, const void *b)
{
    const sm_tgt *x = a, *y = b;
    uint64_t bx = x->bytes_read + x->bytes_written, by = y->bytes_read + y->bytes_written;
    return bx != by ? (bx > by ? -1 : 1) : strcmp(x->name, y->name);
}

/* every record with a target, then merged by name (sorted, adjacent ones summed) */
static int build_targets(sm_job *m)
{
    size_t total = 0, k = 0;
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        total += pi.nslots;
    }
    sm_tgt *t = malloc((total ? total : 1) * sizeof *t);
    if (!t)
        return -1;
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        for (size_t s = 0; s < pi.nslots; s++) {
            sheaf_monitor_record_info ri;
            if (sheaf_monitor_record(m->job, p, s, &ri) == 0 && ri.target)
                t[k++] = (sm_tgt){ri.target, ri.target_fstype, ri.counters[sm_ix[SM_BYTES_READ]],
                                  ri.counters[sm_ix[SM_BYTES_WRITTEN]], 1};
        }
    }
    qsort(t, k, sizeof *t, cmp_tgt_name);
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        if (n && !strcmp(t[n - 1].name, t[i].name)) {
            t[n - 1].bytes_read += t[i].bytes_read;
            t[n - 1].bytes_written += t[i].bytes_written;
            t[n - 1].records++;
        } else
            t[n++] = t[i];
    }
    qsort(t, n, sizeof *t, cmp_tgt_bytes);
    m->tgts = t;
    m->ntgts = n;
    return 0;
}

static void span(sm_job *m)
{
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        for (size_t i = 0; i < pi.nsegments; i++) {
            sheaf_monitor_seg s;
            sheaf_monitor_segment(m->job, p, i, &s);
            if (!m->t0 || s.t0_ns < m->t0)
                m->t0 = s.t0_ns;
            if (s.t1_ns > m->t1)
                m->t1 = s.t1_ns;
        }
    }
}

int sm_load(const char *log, int flags, sm_job *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->nc = sheaf_monitor_counter_count();
    if (m->nc > SM_NC_MAX) {
        snprintf(err, errlen, "the monitor library has %d counters, this tool knows at most %d", m->nc, SM_NC_MAX);
        return -1;
    }
    for (int i = 0; i < SM_NIX; i++)
        if ((sm_ix[i] = sheaf_monitor_counter_index(ix_names[i])) < 0) {
            snprintf(err, errlen, "the monitor library has no counter '%s'", ix_names[i]);
            return -1;
        }
    if (sheaf_monitor_read(log, flags, &m->job, err, errlen))
        return -1;
    m->nprocs = sheaf_monitor_nprocs(m->job);
    if (build_rows(m) || build_files(m) || build_targets(m)) {
        snprintf(err, errlen, "%s: out of memory", log);
        sm_free(m);
        return -1;
    }
    span(m);
    while (m->nstat < m->nrows && m->rows[m->nstat].rank >= 0)
        m->nstat++;
    if (!m->nstat)
        m->nstat = m->nrows;
    for (size_t r = 0; r < m->nstat; r++)
        m->stat_bytes += sm_bytes(m->rows[r].c);
    return 0;
}

void sm_free(sm_job *m)
{
    free(m->files);
    free(m->tgts);
    free(m->rows);
    free(m->proc_row);
    sheaf_monitor_free(m->job);
    memset(m, 0, sizeof *m);
}
