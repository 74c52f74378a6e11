/* fuzz_monlog.c - libFuzzer target for the monitor log reader (src/monitor:
 * record.c unpacking, reader.c's bounds on ids, names and snapshots,
 * summary.c printing what was accepted, timeline.c's segments) through the
 * public sheaf_monitor_parse / sheaf_monitor_print of include/sheaf_monitor.h
 * and the table accessors of include/sheaf_monitor_data.h (every slot and
 * segment read back, t0 <= t1, indices past the end refused).
 * Any input must give 0 or SHEAF_E_FORMAT, never a crash, a leak or
 * unbounded memory. Seeds: tests/fuzz/corpus/monlog-*.bin (record streams
 * extracted from real logs with `sheaf cat`). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sheaf.h"
#include "sheaf_monitor.h"
#include "sheaf_monitor_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* every table entry of an accepted job */
static void walk(const sheaf_monitor_job *job)
{
    for (size_t p = 0; p < sheaf_monitor_nprocs(job); p++) {
        sheaf_monitor_proc_info pi;
        if (sheaf_monitor_proc(job, p, &pi) != 0)
            abort();
        for (size_t s = 0; s < pi.nslots; s++) {
            sheaf_monitor_record_info ri;
            int rc = sheaf_monitor_record(job, p, s, &ri);
            if (rc != 0 && rc != 1)
                abort();
        }
        for (size_t i = 0; i < pi.nsegments; i++) {
            sheaf_monitor_seg sg;
            if (sheaf_monitor_segment(job, p, i, &sg) != 0 || sg.t0_ns > sg.t1_ns)
                abort();
        }
        sheaf_monitor_seg sg;
        sheaf_monitor_record_info ri;
        if (sheaf_monitor_segment(job, p, pi.nsegments, &sg) == 0 || sheaf_monitor_record(job, p, pi.nslots, &ri) == 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    sheaf_monitor_job *job = NULL;
    char err[512];
    int rc = sheaf_monitor_parse(data, size, &job, err, sizeof err);
    if (rc != 0 && rc != SHEAF_E_FORMAT)
        abort();
    if ((rc == 0) != (job != NULL))
        abort();
    if (job && sink && sheaf_monitor_print(job, sink, (int)(size & 1), err, sizeof err) != 0)
        abort();
    if (job)
        walk(job);
    sheaf_monitor_free(job);
    return 0;
}
