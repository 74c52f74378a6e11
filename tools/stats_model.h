/* stats_model.h - a monitored job's tables for `sheaf stats report|export`
 * (cmd_stats_report.c, cmd_stats_export.c), built from the public API
 * (sheaf_monitor_data.h): files merged over processes, ranks (processes of
 * one rank merged; a process without a rank is a row of its own), totals,
 * the time span. Sizes are bounded by the job's records. */
#ifndef SHEAF_TOOLS_STATS_MODEL_H
#define SHEAF_TOOLS_STATS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "sheaf_monitor.h"
#include "sheaf_monitor_data.h"

#define SM_NC_MAX 64

/* counter indices, looked up by name once (sm_load) */
enum sm_ix {
    SM_OPENS,
    SM_READS,
    SM_WRITES,
    SM_SEEKS,
    SM_STATS,
    SM_FSYNCS,
    SM_BYTES_READ,
    SM_BYTES_WRITTEN,
    SM_FILE_NOT_ALIGNED,
    SM_READ_NS,
    SM_WRITE_NS,
    SM_META_NS,
    SM_FIRST_NS,
    SM_LAST_NS,
    SM_FILES,
    SM_HIST_READ,
    SM_HIST_WRITE,
    SM_NIX
};
#define SM_HIST_N 10
extern int sm_ix[SM_NIX];
extern const char *const sm_hist_labels[SM_HIST_N];

typedef struct sm_file {
    int kind;
    const char *name;
    uint64_t c[SM_NC_MAX];
    uint32_t procs;       /* processes with a record of it */
    uint32_t ranks_io;    /* rows (ranks) that moved bytes in it */
    long worst_row;       /* the row that moved most of its bytes (-1 none) */
    uint64_t worst_bytes; /* and how many */
} sm_file;

typedef struct sm_row {
    int rank;     /* -1: a process without a rank (pid names it) */
    uint64_t pid; /* the first process of the row */
    uint32_t procs;
    uint64_t c[SM_NC_MAX];
} sm_row;

/* bytes per storage target, merged by its global name over processes */
typedef struct sm_tgt {
    const char *name, *fstype;
    uint64_t bytes_read, bytes_written;
    uint32_t records;
} sm_tgt;

typedef struct sm_job {
    sheaf_monitor_job *job;
    int nc;
    sm_file *files; /* by bytes moved, most first */
    size_t nfiles;
    sm_row *rows; /* by rank, then pid: the ranked rows first */
    size_t nrows;
    /* the rows the per-rank statistics (worst, imbalance, ranks with I/O,
     * stragglers) are over: the ranked ones, rows[0..nstat), when the job has
     * any (a launcher or a shell without a rank does not count), else all;
     * stat_bytes: their bytes */
    size_t nstat;
    uint64_t stat_bytes;
    size_t *proc_row; /* the row of each process */
    size_t nprocs;
    uint64_t tot[SM_NC_MAX];
    uint64_t t0, t1; /* the span of the job's timed I/O (segments), 0 if none */
    uint64_t own_files, folded_opens, aggregates;
    sm_tgt *tgts; /* by bytes moved, most first; none in version 1 logs */
    size_t ntgts;
} sm_job;

/* read LOG (flags as sheaf_monitor_read) and build the tables; 0 or -1 with a message in err */
int sm_load(const char *log, int flags, sm_job *m, char *err, size_t errlen);
void sm_free(sm_job *m);
uint64_t sm_bytes(const uint64_t *c);
/* "rank 3" or "pid 1234" */
void sm_row_label(const sm_row *r, char *out, size_t n);

#endif
