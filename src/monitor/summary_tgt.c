/* summary_tgt.c - the job's totals per storage target (the file system and
 * server a record's files are on, doc/monitor.md "Storage targets"): every
 * process's records summed by the global name of their target. Exact also
 * past the file-record budget: a folded aggregate belongs to one target. */
#define _GNU_SOURCE
#include "reader.h"

#include <stdlib.h>
#include <string.h>

typedef struct tagg {
    const mon_tgt *t; /* its description (the first process's) */
    uint64_t c[MC_N];
    uint32_t procs, records;
    size_t last_proc; /* the process counted last (+1) */
} tagg;

static const char *const kind_names[] = {"local",  "pseudo", "nfs",  "cifs",  "lustre", "gpfs",
                                         "beegfs", "ceph",   "fuse", "image", "panfs"};

static const char *tkind(uint32_t k)
{
    return k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "unknown";
}

static int cmp_tagg(const void *a, const void *b)
{
    const tagg *x = a, *y = b;
    uint64_t bx = x->c[MC_BYTES_READ] + x->c[MC_BYTES_WRITTEN], by = y->c[MC_BYTES_READ] + y->c[MC_BYTES_WRITTEN];
    if (bx != by)
        return bx > by ? -1 : 1;
    return strcmp(x->t->name, y->t->name);
}

/* the targets of the job, merged by name; NULL when there are none (version 1 logs) or no memory */
static tagg *collect(const sheaf_monitor_job *job, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < job->nprocs; i++)
        if (job->procs[i].tgts)
            cap += (size_t)job->procs[i].head.max_targets + 1;
    *n = 0;
    if (!cap)
        return NULL;
    tagg *a = calloc(cap, sizeof *a);
    if (!a)
        return NULL;
    for (size_t i = 0; i < job->nprocs; i++) {
        const mr_proc *p = &job->procs[i];
        if (!p->tgts)
            continue;
        for (uint32_t id = 0; id < p->cap; id++) {
            const mr_entry *e = p->ents[id];
            if (!e || !e->have || !e->tgt || e->tgt > p->head.max_targets + 1)
                continue;
            const mon_tgt *t = &p->tgts[e->tgt - 1];
            size_t k = 0;
            while (k < *n && strcmp(a[k].t->name, t->name))
                k++;
            if (k == *n) {
                if (*n == cap)
                    continue; /* cannot happen: names per process are distinct */
                a[k].t = t;
                (*n)++;
            }
            mon_counters_merge(a[k].c, e->c);
            a[k].records++;
            if (a[k].last_proc != i + 1) {
                a[k].procs++;
                a[k].last_proc = i + 1;
            }
        }
    }
    qsort(a, *n, sizeof *a, cmp_tagg);
    return a;
}

void mr_print_targets(const sheaf_monitor_job *job, FILE *o, int json)
{
    size_t n = 0;
    tagg *a = collect(job, &n);
    if (json) {
        fputs("\"targets\":[", o);
        for (size_t i = 0; i < n; i++) {
            fprintf(o, "%s{\"name\":", i ? "," : "");
            mr_json_str(o, a[i].t->name);
            fprintf(o, ",\"kind\":\"%s\",\"fstype\":", tkind(a[i].t->kind));
            mr_json_str(o, a[i].t->fstype);
            fprintf(o, ",\"processes\":%u,\"records\":%u,\"counters\":{", a[i].procs, a[i].records);
            for (int c = 0; c < MC_N; c++)
                fprintf(o, "%s\"%s\":%llu", c ? "," : "", mon_counter_names[c], (unsigned long long)a[i].c[c]);
            fputs("}}", o);
        }
        fputs("],", o);
        free(a);
        return;
    }
    if (n) {
        fprintf(o, "\nper storage target (by bytes moved):\n");
        fprintf(o, "%-44s %-7s %8s %8s %8s %14s %14s %10s\n", "target", "kind", "opens", "reads", "writes",
                "bytes read", "bytes written", "io time s");
        for (size_t i = 0; i < n; i++) {
            const uint64_t *c = a[i].c;
            size_t l = strlen(a[i].t->name);
            fprintf(o, "%-44s %-7s %8llu %8llu %8llu %14llu %14llu %10.3f\n",
                    l > 44 ? a[i].t->name + l - 44 : a[i].t->name, tkind(a[i].t->kind), (unsigned long long)c[MC_OPENS],
                    (unsigned long long)c[MC_READS], (unsigned long long)c[MC_WRITES],
                    (unsigned long long)c[MC_BYTES_READ], (unsigned long long)c[MC_BYTES_WRITTEN],
                    (double)(c[MC_READ_NS] + c[MC_WRITE_NS] + c[MC_META_NS]) / 1e9);
        }
    }
    free(a);
}
