/* cmd_stats_node.c - `sheaf stats node`: the per-node sampler of the site
 * view. Samples the I/O counters of this node that need no root:
 *   /proc/diskstats           per block device: reads, writes, bytes, time
 *   /proc/self/mountstats     per NFS mount: bytes read/written by the
 *                             application and on the wire, per-op counts,
 *                             round-trip and execution time
 *   Lustre llite stats        per file system instance (read_bytes,
 *                             write_bytes, per-op samples), from
 *                             /proc/fs/lustre/llite/STAR/stats or
 *                             /sys/kernel/debug/lustre/llite/STAR/stats when readable
 * keyed by the job id from the environment (SLURM_JOB_ID, PBS_JOBID,
 * FLUX_JOB_ID, else none), and writes each sample as one JSON line (-o FILE,
 * default standard output, appended) and, with --textfile FILE, as the
 * Prometheus text format for node_exporter's textfile collector
 * (--openmetrics: the OpenMetrics text format, ending "# EOF"), written to
 * FILE.tmp.PID and renamed over FILE so a scraper never reads half of one.
 * Counters are cumulative as the kernel keeps them (Prometheus computes
 * rates). Every input is bounded (4 MiB per file, 4096 devices/mounts, 128
 * ops per mount); a line that does not parse is skipped and counted.
 * Exit 0, 1 failure, 2 usage. */
#include "common.h"
#include "stats_cmds.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stats_node.h"

static void node_usage(FILE *o)
{
    fprintf(o, "usage: sheaf stats node [-o FILE] [--textfile FILE [--openmetrics]] [--interval S] [--count N]\n"
               "                        [--diskstats F] [--mountstats F] [--llite GLOB]\n"
               "  sample this node's I/O counters (block devices, NFS mounts, Lustre clients), keyed by the job id\n"
               "  (SLURM_JOB_ID, PBS_JOBID, FLUX_JOB_ID), every S seconds (default 60), N times (default: forever)\n"
               "  -o FILE          JSON lines, appended (default: standard output; '-' too)\n"
               "  --textfile FILE  also the Prometheus text format for node_exporter's textfile collector\n"
               "                   (written to a temporary file, renamed over FILE)\n"
               "  --openmetrics    the text file in the OpenMetrics format instead\n"
               "  --diskstats F, --mountstats F, --llite GLOB  read these instead of /proc's (tests)\n");
}

struct nodeopts {
    const char *out, *textfile, *diskstats, *mountstats, *llite;
    int openmetrics, count;
    double interval;
};

static int node_opt(int opt, const char *arg, void *ctx)
{
    struct nodeopts *o = ctx;
    char *end;
    switch (opt) {
    case 'o':
        o->out = arg;
        return 0;
    case 't':
        o->textfile = arg;
        return 0;
    case 'M':
        o->openmetrics = 1;
        return 0;
    case 'd':
        o->diskstats = arg;
        return 0;
    case 'm':
        o->mountstats = arg;
        return 0;
    case 'l':
        o->llite = arg;
        return 0;
    case 'i':
        o->interval = strtod(arg, &end);
        if (*end || !(o->interval >= 0.1 && o->interval <= 86400)) {
            tool_err("--interval takes seconds from 0.1 to 86400");
            return TOOL_USAGE;
        }
        return 0;
    case 'c': {
        errno = 0;
        long v = strtol(arg, &end, 10);
        if (errno || *end || v < 1 || v > INT_MAX) {
            tool_err("--count takes a positive number");
            return TOOL_USAGE;
        }
        o->count = (int)v;
        return 0;
    }
    default:
        return TOOL_USAGE;
    }
}

static const char *job_id(void)
{
    static const char *const vars[] = {"SLURM_JOB_ID", "PBS_JOBID", "FLUX_JOB_ID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *s = getenv(vars[i]);
        if (s && *s)
            return s;
    }
    return "";
}

/* write the text file: FILE.tmp.PID, then rename */
static int write_textfile(const struct nodeopts *o, const sn_sample *s)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", o->textfile, (long)getpid()) >= (int)sizeof tmp) {
        tool_err("%s: name too long", o->textfile);
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        tool_err("%s: %s", tmp, strerror(errno));
        return -1;
    }
    sn_print_prom(f, s, o->openmetrics);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        tool_err("%s: write failed: %s", tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, o->textfile) != 0) {
        tool_err("renaming %s to %s: %s", tmp, o->textfile, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int cmd_stats_node(int argc, char **argv)
{
    static const struct option lo[] = {{"textfile", required_argument, 0, 't'},
                                       {"openmetrics", no_argument, 0, 'M'},
                                       {"interval", required_argument, 0, 'i'},
                                       {"count", required_argument, 0, 'c'},
                                       {"diskstats", required_argument, 0, 'd'},
                                       {"mountstats", required_argument, 0, 'm'},
                                       {"llite", required_argument, 0, 'l'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    struct nodeopts o = {.interval = 60,
                         .diskstats = "/proc/diskstats",
                         .mountstats = "/proc/self/mountstats",
                         .llite = "/proc/fs/lustre/llite/*/stats:/sys/kernel/debug/lustre/llite/*/stats"};
    int first, rc = tool_getopt(argc, argv, "o:h", lo, node_opt, &o, node_usage, 0, 0, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    FILE *out = stdout;
    if (o.out && strcmp(o.out, "-") && !(out = fopen(o.out, "a"))) {
        tool_err("%s: %s", o.out, strerror(errno));
        return TOOL_FAIL;
    }
    sn_sample *s = calloc(1, sizeof *s);
    if (!s) {
        tool_err("out of memory");
        if (out != stdout)
            fclose(out);
        return TOOL_FAIL;
    }
    rc = TOOL_OK;
    for (int i = 0; (o.count == 0 || i < o.count) && rc == TOOL_OK; i++) {
        if (i) {
            struct timespec ts = {(time_t)o.interval, (long)((o.interval - (double)(time_t)o.interval) * 1e9)};
            nanosleep(&ts, NULL);
        }
        char err[512];
        if (sn_sample_take(s, o.diskstats, o.mountstats, o.llite, job_id(), err, sizeof err) != 0) {
            tool_err("%s", err);
            rc = TOOL_FAIL;
            break;
        }
        sn_print_json(out, s);
        if (fflush(out) != 0 || ferror(out)) {
            tool_err("%s: write failed: %s", o.out ? o.out : "standard output", strerror(errno));
            rc = TOOL_FAIL;
        }
        if (o.textfile && write_textfile(&o, s) != 0)
            rc = TOOL_FAIL;
    }
    sn_sample_free(s);
    if (out != stdout && fclose(out) != 0 && rc == TOOL_OK) {
        tool_err("%s: %s", o.out, strerror(errno));
        rc = TOOL_FAIL;
    }
    return rc;
}
