/* cmd_recover.c - `sheaf recover`: close a container whose writers crashed,
 * from the journal that sion_flush keeps (sheaf_recover in sheaf.h).
 * Exit 0 recovered (or nothing to do), 1 failure, 2 usage error. */
#include "common.h"
#include <getopt.h>
#include <string.h>
#include <unistd.h>

/* the report: one line per file and task on stdout (unless -q); each task
 * done also advances the progress line (stderr, a terminal only) */
static void line_out(void *ctx, const char *line)
{
    if (!*(int *)ctx)
        printf("%s\n", line);
    if (!strncmp(line, "  task ", 7))
        progress_add(1);
}

static void usage(FILE *o)
{
    fprintf(o,
            "usage: %s [--salvage] [--dry-run] [-q] FILE\n"
            "  Turn a container that was never closed (the writing job died) into a closed one:\n"
            "  every byte a task wrote before its last sion_flush comes back (from FILE.sheafj).\n"
            "  Written with the \"checksum\" key: every block is checked against the CRC journaled\n"
            "  with it (damaged blocks are named and keep failing reads) and the checksums are kept.\n"
            "  --salvage  no journal (e.g. written by SIONlib): estimate each block from the file's\n"
            "             contents (it ends at its last non-zero byte; trailing zeros are uncertain)\n"
            "  --dry-run  only report what would be recovered\n"
            "  -q         no per-task report\n",
            tool_prog);
}

int cmd_recover(int argc, char **argv)
{
    static const struct option lo[] = {{"salvage", no_argument, 0, 's'},
                                       {"dry-run", no_argument, 0, 'n'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int flags = 0, quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            flags |= SHEAF_RECOVER_SALVAGE;
            break;
        case 'n':
            flags |= SHEAF_RECOVER_DRY_RUN;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return TOOL_OK;
        default:
            usage(stderr);
            return TOOL_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return TOOL_USAGE;
    }
    sheaf_set_error_printing(0);
    sheaf_recover_summary s;
    /* on a terminal the task lines are the progress; else (-q, or stdout
     * redirected) a progress line counts the tasks done */
    int show = quiet || !isatty(STDOUT_FILENO);
    if (show)
        progress_start_in("recover", 0, "tasks checked");
    int rc = sheaf_recover(argv[optind], flags, line_out, &quiet, &s);
    if (show)
        progress_end();
    if (rc) {
        fprintf(stderr, "%s: %s\n", tool_prog, sheaf_last_error());
        return TOOL_FAIL;
    }
    if (s.files_closed == s.files)
        printf("%s: closed, nothing to recover\n", argv[optind]);
    else
        printf("%s: %s %lld bytes of %lld tasks in %d file(s)%s%s\n", argv[optind],
               flags & SHEAF_RECOVER_DRY_RUN ? "recoverable:" : "recovered", (long long)s.bytes, (long long)s.tasks,
               s.files - s.files_closed, s.tasks_unflushed ? "; some tasks never flushed (0 bytes known durable)" : "",
               s.uncertain ? "; salvaged without a journal: trailing zero bytes are uncertain" : "");
    if (s.files_closed != s.files)
        printf("%s: checksums: %lld data block(s): %lld verified against the CRCs journaled by the writers, "
               "%lld damaged, %lld unverifiable%s\n",
               argv[optind], (long long)s.blocks, (long long)s.blocks_verified, (long long)s.blocks_damaged,
               (long long)s.blocks_unverifiable,
               s.checksums ? (flags & SHEAF_RECOVER_DRY_RUN ? "; the checksum trailer would be written"
                                                            : "; the checksum trailer is written")
                           : " (written without the checksum key)");
    if (s.blocks_damaged)
        printf("%s: %lld block(s) hold damaged data: reading them fails with a checksum error (see the task lines)\n",
               argv[optind], (long long)s.blocks_damaged);
    if (s.lost)
        printf("%s: %lld flushed bytes are missing from the file (it was truncated or damaged)\n", argv[optind],
               (long long)s.lost);
    return TOOL_OK;
}
