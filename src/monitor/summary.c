/* summary.c - print a job's monitor summary (sheaf_monitor_print): totals,
 * per file (summed over processes), per process, the folded aggregates. */
#define _GNU_SOURCE
#include "reader.h"

#include <stdlib.h>
#include <string.h>

#include "sheaf.h"

#define TEXT_FILES 50

typedef struct agg {
    uint32_t kind;
    const char *name;
    uint64_t c[MC_N];
    uint32_t procs; /* processes with a record of it */
} agg;

static int cmp_ent(const void *a, const void *b)
{
    const mr_entry *x = *(mr_entry *const *)a, *y = *(mr_entry *const *)b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int cmp_bytes(const void *a, const void *b)
{
    const agg *x = a, *y = b;
    uint64_t bx = x->c[MC_BYTES_READ] + x->c[MC_BYTES_WRITTEN], by = y->c[MC_BYTES_READ] + y->c[MC_BYTES_WRITTEN];
    if (bx != by)
        return bx > by ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void json_counters(FILE *o, const uint64_t *c)
{
    fputc('{', o);
    for (int i = 0; i < MC_N; i++)
        fprintf(o, "%s\"%s\":%llu", i ? "," : "", mon_counter_names[i], (unsigned long long)c[i]);
    fputc('}', o);
}

static const char *kind_name(uint32_t k) { return k == MON_K_FILE ? "file" : k == MON_K_DIR ? "dir" : "other"; }

/* every entry of every process merged by (kind, name); *n aggregates, sorted by bytes */
static agg *aggregate(const sheaf_monitor_job *job, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < job->nprocs; i++)
        total += job->procs[i].nents;
    mr_entry **all = malloc((total ? total : 1) * sizeof *all);
    agg *out = calloc(total ? total : 1, sizeof *out);
    if (!all || !out) {
        free(all);
        free(out);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < job->nprocs; i++)
        for (uint32_t id = 0; id < job->procs[i].cap; id++) {
            mr_entry *e = job->procs[i].ents[id];
            if (e && e->have)
                all[k++] = e;
        }
    qsort(all, k, sizeof *all, cmp_ent);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        const char *nm = all[i]->name ? all[i]->name : "(unnamed)";
        if (m == 0 || out[m - 1].kind != all[i]->kind || strcmp(out[m - 1].name, nm)) {
            out[m].kind = all[i]->kind;
            out[m].name = nm;
            m++;
        }
        mon_counters_merge(out[m - 1].c, all[i]->c);
        out[m - 1].procs++;
    }
    free(all);
    qsort(out, m, sizeof *out, cmp_bytes);
    *n = m;
    return out;
}

static void proc_totals(const mr_proc *p, uint64_t *c, uint64_t *own, uint64_t *folded)
{
    memset(c, 0, MC_N * sizeof *c);
    *own = *folded = 0;
    for (uint32_t id = 0; id < p->cap; id++) {
        const mr_entry *e = p->ents[id];
        if (!e || !e->have)
            continue;
        mon_counters_merge(c, e->c);
        if (e->kind == MON_K_FILE)
            (*own)++;
        else
            *folded += e->c[MC_FILES];
    }
}

static void text_line(FILE *o, const char *what, const uint64_t *c)
{
    fprintf(o, "%-40s %8llu %8llu %8llu %14llu %14llu %10.3f\n", what, (unsigned long long)c[MC_OPENS],
            (unsigned long long)c[MC_READS], (unsigned long long)c[MC_WRITES], (unsigned long long)c[MC_BYTES_READ],
            (unsigned long long)c[MC_BYTES_WRITTEN], (double)(c[MC_READ_NS] + c[MC_WRITE_NS] + c[MC_META_NS]) / 1e9);
}

static const char *tail(const char *s, size_t w)
{
    size_t l = strlen(s);
    return l > w ? s + l - w : s;
}

static void print_json(const sheaf_monitor_job *job, FILE *o, const agg *a, size_t na, const uint64_t *tot,
                       uint64_t nfiles, uint64_t nfolded, uint64_t nagg)
{
    fprintf(o,
            "{\"processes_count\":%zu,\"files_count\":%llu,\"folded_opens\":%llu,\"aggregates_count\":%llu,"
            "\"totals\":",
            job->nprocs, (unsigned long long)nfiles, (unsigned long long)nfolded, (unsigned long long)nagg);
    json_counters(o, tot);
    fputc(',', o);
    mr_print_targets(job, o, 1);
    fputs("\"files\":[", o);
    int first = 1;
    for (size_t i = 0; i < na; i++) {
        if (a[i].kind != MON_K_FILE)
            continue;
        fprintf(o, "%s{\"name\":", first ? "" : ",");
        mr_json_str(o, a[i].name);
        fprintf(o, ",\"processes\":%u,\"counters\":", a[i].procs);
        json_counters(o, a[i].c);
        fputc('}', o);
        first = 0;
    }
    fputs("],\"folded\":[", o);
    first = 1;
    for (size_t i = 0; i < na; i++) {
        if (a[i].kind == MON_K_FILE)
            continue;
        fprintf(o, "%s{\"kind\":\"%s\",\"name\":", first ? "" : ",", kind_name(a[i].kind));
        mr_json_str(o, a[i].name);
        fprintf(o, ",\"processes\":%u,\"counters\":", a[i].procs);
        json_counters(o, a[i].c);
        fputc('}', o);
        first = 0;
    }
    fputs("],\"processes\":[", o);
    for (size_t i = 0; i < job->nprocs; i++) {
        const mr_proc *p = &job->procs[i];
        uint64_t c[MC_N], own, folded;
        proc_totals(p, c, &own, &folded);
        fprintf(o, "%s{\"rank\":%d,\"pid\":%llu,\"ppid\":%llu,\"host\":", i ? "," : "", p->head.rank,
                (unsigned long long)p->head.pid, (unsigned long long)p->head.ppid);
        mr_json_str(o, p->head.host);
        fputs(",\"exe\":", o);
        mr_json_str(o, p->head.exe);
        fputs(",\"log\":", o);
        mr_json_str(o, p->log);
        fprintf(o,
                ",\"snapshots\":%llu,\"clean_end\":%s,\"recovered\":%s,\"max_files\":%u,\"files\":%llu,"
                "\"folded_opens\":%llu,\"counters\":",
                (unsigned long long)p->snaps, p->final ? "true" : "false", p->recovered ? "true" : "false",
                p->head.max_files, (unsigned long long)own, (unsigned long long)folded);
        json_counters(o, c);
        fputc('}', o);
    }
    fputs("],\"notes\":", o);
    mr_json_str(o, job->notes);
    fputs("}\n", o);
}

static void print_text(const sheaf_monitor_job *job, FILE *o, const agg *a, size_t na, const uint64_t *tot,
                       uint64_t nfiles, uint64_t nfolded, uint64_t nagg)
{
    fprintf(o,
            "job: %zu processes, %llu files with a record of their own, %llu opens folded into %llu "
            "aggregates\n",
            job->nprocs, (unsigned long long)nfiles, (unsigned long long)nfolded, (unsigned long long)nagg);
    fprintf(o, "%-40s %8s %8s %8s %14s %14s %10s\n", "", "opens", "reads", "writes", "bytes read", "bytes written",
            "io time s");
    text_line(o, "total", tot);
    mr_print_targets(job, o, 0);
    fprintf(o, "\nper file (by bytes moved):\n");
    size_t shown = 0, files = 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i].kind != MON_K_FILE)
            continue;
        files++;
        if (shown < TEXT_FILES) {
            text_line(o, tail(a[i].name, 40), a[i].c);
            shown++;
        }
    }
    if (files > shown)
        fprintf(o, "... %zu more files (--json lists them all)\n", files - shown);
    if (nagg) {
        fprintf(o, "\nfolded past the file-record budget (per directory):\n");
        for (size_t i = 0; i < na; i++)
            if (a[i].kind != MON_K_FILE) {
                char what[80];
                snprintf(what, sizeof what, "%s (%llu opens)", tail(a[i].name, 24),
                         (unsigned long long)a[i].c[MC_FILES]);
                text_line(o, what, a[i].c);
            }
    }
    fprintf(o, "\nper process:\n");
    for (size_t i = 0; i < job->nprocs; i++) {
        const mr_proc *p = &job->procs[i];
        uint64_t c[MC_N], own, folded;
        proc_totals(p, c, &own, &folded);
        char what[200];
        snprintf(what, sizeof what, "rank %d pid %llu %s%s", p->head.rank, (unsigned long long)p->head.pid,
                 tail(p->head.exe, 16), p->final ? "" : " (killed)");
        text_line(o, what, c);
    }
    if (job->notes[0])
        fprintf(o, "\nnotes:\n%s", job->notes);
}

int sheaf_monitor_print(const sheaf_monitor_job *job, FILE *o, int json, char *err, size_t errlen)
{
    if (!job || !o) {
        if (err && errlen)
            snprintf(err, errlen, "sheaf_monitor_print: NULL argument");
        return SHEAF_E_ARG;
    }
    size_t na = 0;
    agg *a = aggregate(job, &na);
    if (!a) {
        if (err && errlen)
            snprintf(err, errlen, "sheaf_monitor_print: out of memory");
        return SHEAF_E_NOMEM;
    }
    uint64_t tot[MC_N] = {0}, nfiles = 0, nfolded = 0, nagg = 0;
    for (size_t i = 0; i < na; i++) {
        mon_counters_merge(tot, a[i].c);
        if (a[i].kind == MON_K_FILE)
            nfiles++;
        else {
            nagg++;
            nfolded += a[i].c[MC_FILES];
        }
    }
    if (json)
        print_json(job, o, a, na, tot, nfiles, nfolded, nagg);
    else
        print_text(job, o, a, na, tot, nfiles, nfolded, nagg);
    free(a);
    return ferror(o) ? SHEAF_E_IO : 0;
}
