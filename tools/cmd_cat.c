/* cmd_cat.c - `sheaf cat`: raw payload of one task or all (in task order),
 * one block or all blocks. */
#include "common.h"
#include <getopt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int do_cat(const char *file, int task, int block, const char *out, int verbose)
{
    tool_in in;
    if (tool_open(file, &in))
        return TOOL_FAIL;
    int rc = TOOL_OK;
    if (task >= in.ntasks) {
        tool_err("%s: task %d out of range (container has tasks 0..%d)", file, task, in.ntasks - 1);
        tool_close(&in);
        return TOOL_FAIL;
    }
    int fd = out ? tool_open_output(&in, out) : STDOUT_FILENO;
    if (fd < 0) {
        tool_close(&in);
        return TOOL_FAIL;
    }
    int t0 = task < 0 ? 0 : task, t1 = task < 0 ? in.ntasks : task + 1;
    sion_int64 total = 0;
    for (int t = t0; t < t1; t++)
        total += block < 0 ? tool_task_bytes(&in, t) : tool_block_bytes(&in, t, block);
    if (out)
        progress_start("cat", total);
    for (int t = t0; t < t1 && rc == TOOL_OK; t++) {
        if (verbose)
            fprintf(stderr, "%s: task %d (global rank %lld): %lld bytes\n", tool_prog, t, (long long)in.granks[t],
                    (long long)(block < 0 ? tool_task_bytes(&in, t) : tool_block_bytes(&in, t, block)));
        if (tool_copy_task(&in, t, block, tool_sink_fd, &fd))
            rc = TOOL_FAIL;
    }
    if (out)
        progress_end();
    if (out && close(fd) != 0 && rc == TOOL_OK) {
        tool_err("%s: write error: %s", out, strerror(errno));
        rc = TOOL_FAIL;
    }
    tool_close(&in);
    return rc;
}

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf cat [-t TASK] [-b BLOCK | -k KEY] [-o OUT] [-v] FILE\n"
               "  -t TASK   only this task (index 0..ntasks-1); default all, in task order\n"
               "  -b BLOCK  only this block of each selected task; default all blocks\n"
               "  -k KEY    key-value container: only the payload of records with KEY\n"
               "            (concatenated in file order, per selected task)\n"
               "  -o OUT    write to OUT instead of standard output\n");
}

struct cat_opts {
    long long task, block;
    const char *out;
    int verbose, has_key;
    unsigned long long key;
};

static int cat_opt(int opt, const char *arg, void *ctx)
{
    struct cat_opts *o = ctx;
    if (opt == 'o') {
        o->out = arg;
    } else if (opt == 'v') {
        o->verbose = 1;
    } else if (opt == 'k') {
        char *end = NULL;
        errno = 0;
        o->key = strtoull(arg, &end, 0);
        if (!*arg || *arg == '-' || !end || *end || errno) {
            tool_err("invalid -k value '%s' (an unsigned 64-bit key)", arg);
            return TOOL_USAGE;
        }
        o->has_key = 1;
    } else {
        long long *v = opt == 't' ? &o->task : &o->block;
        if (tool_parse_i64(arg, v) || *v < 0 || *v > 0x7fffffff) {
            tool_err("invalid -%c value '%s'", opt, arg);
            return TOOL_USAGE;
        }
    }
    return 0;
}

int cmd_cat(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct cat_opts o = {-1, -1, NULL, 0, 0, 0};
    int first, rc = tool_getopt(argc, argv, "t:b:k:o:vh", longopts, cat_opt, &o, usage, 1, 1, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    if (o.has_key) {
        if (o.block >= 0) {
            tool_err("-b and -k cannot be combined");
            return TOOL_USAGE;
        }
        return do_cat_key(argv[first], (int)o.task, o.key, o.out, o.verbose);
    }
    return do_cat(argv[first], (int)o.task, (int)o.block, o.out, o.verbose);
}
