/* fuzz_monlog.c - libFuzzer target for the monitor log reader (src/monitor:
 * record.c unpacking, reader.c's bounds on ids, names and snapshots,
 * summary.c printing what was accepted, timeline.c's segments) through the
 * public sheaf_monitor_parse / sheaf_monitor_print of include/sheaf_monitor.h
 * and the table accessors of include/sheaf_monitor_data.h (every slot and
 * segment read back, t0 <= t1, indices past the end refused).
 * Any input must give 0 or SHEAF_E_FORMAT, never a crash, a leak or
 * unbounded memory. Property: the bytes written per storage target (the
 * JSON "targets") add up to the job's total whenever targets are listed
 * (every record of a version 2 log belongs to exactly one target). Seeds:
 * tests/fuzz/corpus/monlog-*.bin (record streams extracted from real logs
 * with `sheaf cat`; monlog-targets-*: version 2, folded files and targets). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sheaf.h"
#include "sheaf_monitor.h"
#include "sheaf_monitor_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the targets' bytes_written add up to the total's (JSON as summary.c prints it) */
static void check_targets(const sheaf_monitor_job *job)
{
    char *out = NULL, err[256];
    size_t len = 0;
    FILE *o = open_memstream(&out, &len);
    if (!o)
        return;
    if (sheaf_monitor_print(job, o, 1, err, sizeof err) != 0)
        abort();
    fclose(o);
    const char *tot = strstr(out, "\"totals\":{"), *tg = strstr(out, "\"targets\":["),
               *files = strstr(out, "],\"files\":[");
    if (!tot || !tg || !files || files < tg)
        abort();
    const char *bw = strstr(tot, "\"bytes_written\":");
    if (!bw || bw > tg)
        abort();
    unsigned long long total = strtoull(bw + 16, NULL, 10), sum = 0;
    int any = 0;
    for (const char *p = tg; (p = strstr(p, "\"bytes_written\":")) && p < files; p += 16, any = 1)
        sum += strtoull(p + 16, NULL, 10);
    if (any && sum != total)
        abort();
    free(out);
}

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
            if (rc == 0 && ri.target && (!ri.target_fstype || !ri.target[0] || strlen(ri.target) >= 4096))
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
    if (job) {
        check_targets(job);
        walk(job);
    }
    sheaf_monitor_free(job);
    return 0;
}
