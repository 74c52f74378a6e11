/* access.c - the tables of a read job (include/sheaf_monitor_data.h): the
 * processes, their record slots and time segments, for tools that make their
 * own reports. Nothing is copied: the pointers point into the job. */
#include <string.h>

#include "reader.h"
#include "sheaf.h"

int sheaf_monitor_counter_count(void) { return MC_N; }

const char *sheaf_monitor_counter_name(int i) { return i >= 0 && i < MC_N ? mon_counter_names[i] : NULL; }

int sheaf_monitor_counter_index(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < MC_N; i++)
        if (!strcmp(mon_counter_names[i], name))
            return i;
    return -1;
}

int sheaf_monitor_counter_merge(int i) { return i >= 0 && i < MC_N ? mon_counter_merge(i) : 0; }

size_t sheaf_monitor_nprocs(const sheaf_monitor_job *job) { return job ? job->nprocs : 0; }

int sheaf_monitor_proc(const sheaf_monitor_job *job, size_t proc, sheaf_monitor_proc_info *out)
{
    if (!job || !out || proc >= job->nprocs)
        return SHEAF_E_ARG;
    const mr_proc *p = &job->procs[proc];
    memset(out, 0, sizeof *out);
    out->rank = p->head.rank;
    out->pid = p->head.pid;
    out->ppid = p->head.ppid;
    out->start_ns = p->head.start_ns;
    out->interval_ns = p->head.interval_ns;
    out->snapshots = p->snaps;
    out->max_files = p->head.max_files;
    out->max_dirs = p->head.max_dirs;
    out->clean_end = p->final;
    out->recovered = p->recovered;
    out->host = p->head.host;
    out->exe = p->head.exe;
    out->log = p->log ? p->log : "";
    out->nslots = p->cap;
    out->nsegments = p->nsegs;
    return 0;
}

int sheaf_monitor_record(const sheaf_monitor_job *job, size_t proc, size_t slot, sheaf_monitor_record_info *out)
{
    if (!job || !out || proc >= job->nprocs || slot >= job->procs[proc].cap)
        return SHEAF_E_ARG;
    const mr_entry *e = job->procs[proc].ents[slot];
    if (!e || !e->have)
        return 1;
    out->kind = (int)e->kind;
    out->name = e->name ? e->name : "(unnamed)";
    out->counters = e->c;
    const mr_proc *p = &job->procs[proc];
    const mon_tgt *t = p->tgts && e->tgt ? &p->tgts[e->tgt - 1] : NULL;
    out->target = t && t->name[0] ? t->name : NULL;
    out->target_fstype = out->target ? t->fstype : NULL;
    return 0;
}

int sheaf_monitor_segment(const sheaf_monitor_job *job, size_t proc, size_t i, sheaf_monitor_seg *out)
{
    if (!job || !out || proc >= job->nprocs || i >= job->procs[proc].nsegs)
        return SHEAF_E_ARG;
    const mr_proc *p = &job->procs[proc];
    *out = p->segs[i];
    if (out->t1_ns == 0) /* untimed bytes of a log that ends without their snapshot */
        out->t0_ns = out->t1_ns = p->last_snap_ns ? p->last_snap_ns : p->head.start_ns;
    return 0;
}

const char *sheaf_monitor_notes(const sheaf_monitor_job *job) { return job ? job->notes : ""; }
