/* fuzz_monlog.c - libFuzzer target for the monitor log reader (src/monitor:
 * record.c unpacking, reader.c's bounds on ids, names and snapshots,
 * summary.c printing what was accepted) through the public
 * sheaf_monitor_parse / sheaf_monitor_print of include/sheaf_monitor.h.
 * Any input must give 0 or SHEAF_E_FORMAT, never a crash, a leak or
 * unbounded memory. Seeds: tests/fuzz/corpus/monlog-*.bin (record streams
 * extracted from real logs with `sheaf cat`). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sheaf.h"
#include "sheaf_monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    sheaf_monitor_free(job);
    return 0;
}
