/* sheaf_monitor_data.h - libsheaf_monitor: the tables of a job's monitor log
 * (src/monitor, doc/monitor.md), for tools that make their own reports
 * (`sheaf stats report|export`) without parsing the summary's JSON.
 *
 * A job read by sheaf_monitor_read (sheaf_monitor.h) holds processes; each
 * process holds record slots (a file's, a folded directory's, the "(other)"
 * aggregate's counters) and time segments. Pointers returned point into the
 * job and stay valid until sheaf_monitor_free. Every function checks its
 * arguments: SHEAF_E_ARG for a NULL job or an index out of range. */
#ifndef SHEAF_MONITOR_DATA_H
#define SHEAF_MONITOR_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "sheaf_export.h"
#include "sheaf_monitor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the record kinds */
#define SHEAF_MONITOR_KIND_FILE 1  /* one file (its path) */
#define SHEAF_MONITOR_KIND_DIR 2   /* files past the budget folded by directory */
#define SHEAF_MONITOR_KIND_OTHER 3 /* files past the budget whose directory had no aggregate left */

typedef struct sheaf_monitor_proc_info {
    int rank; /* from the launcher's environment, -1 if none */
    uint64_t pid, ppid;
    uint64_t start_ns;    /* CLOCK_REALTIME when its log began */
    uint64_t interval_ns; /* snapshot interval */
    uint64_t snapshots;   /* snapshots read */
    uint32_t max_files, max_dirs;
    int clean_end; /* its last snapshot was the final one */
    int recovered; /* its log was closed by sheaf_recover before reading */
    const char *host, *exe, *log;
    size_t nslots;    /* record slots: sheaf_monitor_record's index range */
    size_t nsegments; /* time segments: sheaf_monitor_segment's index range */
} sheaf_monitor_proc_info;

typedef struct sheaf_monitor_record_info {
    int kind;                 /* SHEAF_MONITOR_KIND_* */
    const char *name;         /* "(unnamed)" if its name records are missing */
    const uint64_t *counters; /* sheaf_monitor_counter_count() values, latest snapshot */
    /* the storage target its files are on (doc/monitor.md "Storage targets"): the global
     * name of their file system and its type; NULL in a version 1 log (none recorded) */
    const char *target, *target_fstype;
} sheaf_monitor_record_info;

/* Bytes a process moved between two instants, as the reader derives them from
 * consecutive snapshots of a record: the bytes added since the record's previous
 * snapshot happened between its previous last-operation time and its new one
 * (its first operation for the first snapshot); bytes of untimed calls (small
 * stdio) are placed between the two snapshots. */
typedef struct sheaf_monitor_seg {
    uint64_t t0_ns, t1_ns; /* CLOCK_REALTIME, t0 <= t1 */
    uint64_t bytes_read, bytes_written;
} sheaf_monitor_seg;

/* the counters of a record: how many, their names (the summary's JSON keys),
 * the index of a name (-1 if none), how they merge over processes:
 * 0 sum, 1 maximum, 2 minimum of the non-zero values */
SHEAF_API int sheaf_monitor_counter_count(void);
SHEAF_API const char *sheaf_monitor_counter_name(int i);
SHEAF_API int sheaf_monitor_counter_index(const char *name);
SHEAF_API int sheaf_monitor_counter_merge(int i);

SHEAF_API size_t sheaf_monitor_nprocs(const sheaf_monitor_job *job);
SHEAF_API int sheaf_monitor_proc(const sheaf_monitor_job *job, size_t proc, sheaf_monitor_proc_info *out);
/* 0 and *out filled, 1 if the slot holds no record, or SHEAF_E_ARG */
SHEAF_API int sheaf_monitor_record(const sheaf_monitor_job *job, size_t proc, size_t slot,
                                   sheaf_monitor_record_info *out);
SHEAF_API int sheaf_monitor_segment(const sheaf_monitor_job *job, size_t proc, size_t i, sheaf_monitor_seg *out);
/* what the reader did besides reading (recoveries, skipped logs); "" if nothing */
SHEAF_API const char *sheaf_monitor_notes(const sheaf_monitor_job *job);

#ifdef __cplusplus
}
#endif
#endif
