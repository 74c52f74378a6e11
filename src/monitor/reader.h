/* reader.h - the monitor log reader's job (reader.c reads, summary.c prints). */
#ifndef MON_READER_H
#define MON_READER_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "sheaf_monitor.h"
#include "sheaf_monitor_data.h"

typedef struct mr_entry {
    uint32_t id, kind;
    int have; /* a FILE record was seen */
    uint64_t snap;
    uint64_t c[MC_N];
    uint32_t tgt; /* storage target id + 1 (0: none: a version 1 log) */
    char *name;   /* NULL until its NAME records arrived */
    uint32_t name_total;
} mr_entry;

typedef struct mr_proc {
    mon_head head;
    int have_head;
    char *log;       /* the log's file name ("(memory)" for sheaf_monitor_parse) */
    mr_entry **ents; /* by id */
    uint32_t nents, cap, limit;
    uint64_t snaps, records;
    int final;     /* its last snapshot was the final one (clean end) */
    int recovered; /* closed by sheaf_recover before reading */
    mon_tgt *tgts; /* by id, max_targets + 1 of them (NULL: a version 1 log); kind 0 and name "": not seen */
    /* time segments (timeline.c): bytes between two instants, from consecutive snapshots */
    sheaf_monitor_seg *segs;
    size_t nsegs, segcap, pending; /* segs[pending..] with t1 0 wait for their snapshot's time */
    uint64_t last_snap_ns;
} mr_proc;

struct sheaf_monitor_job {
    mr_proc *procs;
    size_t nprocs, cap;
    char notes[2048]; /* what the reader did besides reading (recoveries, skipped logs) */
};

/* feed one unpacked record to p; 0 or -1 with a message */
int mr_feed(mr_proc *p, const mon_rec *r, char *err, size_t errlen);
void mr_proc_free(mr_proc *p);

/* per storage target (summary_tgt.c): the job's targets merged by name over
 * processes, printed as text or as the JSON array "targets" */
void mr_print_targets(const sheaf_monitor_job *job, FILE *o, int json);
/* s as a JSON string (reader.c; for the printers above it) */
void mr_json_str(FILE *o, const char *s);
/* timeline.c: the bytes a FILE record adds to its entry e (called before e takes
 * the record's counters), and the time of a snapshot (fills the pending segments) */
int mr_timeline_file(mr_proc *p, const mr_entry *e, const mon_filerec *f, char *err, size_t errlen);
void mr_timeline_snap(mr_proc *p, uint64_t time_ns);
mr_proc *mr_job_add(sheaf_monitor_job *job);

#endif
