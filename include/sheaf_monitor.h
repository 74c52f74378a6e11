/* sheaf_monitor.h - libsheaf_monitor: reading the logs of sheaf's job I/O
 * monitor (src/monitor, doc/monitor.md).
 *
 * A monitored job (`sheaf stats run -o LOG -- COMMAND...`, or SHEAF_MONITOR=LOG
 * with libsheaf_monitor_preload.so in LD_PRELOAD) leaves in the directory LOG
 * one container per process, <host>.<pid>.<start>.<n>.smon, holding that
 * process's per-file counters as snapshots. These functions read them and
 * print the job's totals per file, per process and for the files folded into
 * per-directory aggregates past the file-record budget.
 *
 * Every function returns 0 or a negative SHEAF_E_* code (sheaf.h) with a
 * message naming the file and the cause in err (errlen bytes, may be 0).
 * Bad input (a truncated or hostile log) is an error, never a crash, and the
 * memory a reader takes is bounded by the size of its input (and at most
 * 2^21 record slots per log). Not thread-safe for the same job. */
#ifndef SHEAF_MONITOR_H
#define SHEAF_MONITOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sheaf_export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sheaf_monitor_job sheaf_monitor_job;

/* sheaf_monitor_read flags: close logs whose process was killed (their
 * containers were never closed) with sheaf_recover first, in place; never
 * while the job still runs. Without it such a log is an error. */
#define SHEAF_MONITOR_RECOVER 1

/* Read a job's log: the directory (every *.smon in it) or one .smon file.
 * *job is NULL on an error; free it with sheaf_monitor_free. */
SHEAF_API int sheaf_monitor_read(const char *path, int flags, sheaf_monitor_job **job, char *err, size_t errlen);

/* Parse one process's record stream (the payload of one .smon container)
 * from memory into a job of one process; for tools and the fuzz target. */
SHEAF_API int sheaf_monitor_parse(const void *buf, size_t len, sheaf_monitor_job **job, char *err, size_t errlen);

/* Print the job's summary: text (json 0) or one JSON object (json 1) with
 * "totals", "files" (per file name, summed over processes), "processes",
 * "folded" (the per-directory aggregates) and "notes". */
SHEAF_API int sheaf_monitor_print(const sheaf_monitor_job *job, FILE *out, int json, char *err, size_t errlen);

SHEAF_API void sheaf_monitor_free(sheaf_monitor_job *job);

#ifdef __cplusplus
}
#endif
#endif
