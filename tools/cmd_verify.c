/* cmd_verify.c - `sheaf verify`: structural health check of a container.
 * Exit 0 healthy, 1 damaged (or unreadable), 2 usage error.
 * Checks: the open itself (metadata within bounds, closed, all multi-file
 * members present), per physical file its size against start_of_varheader
 * and the block extents, block sizes against chunk sizes, and reads every
 * task's data completely, block by block, and says how many data blocks
 * were verified against their checksums, damaged, unreadable, or could
 * only be read (no checksums). A container that was never closed is
 * reported with what `sheaf recover` would bring back and how many of its
 * blocks match the CRCs the writers journaled. */
#include "common.h"
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

static int problems;

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: DAMAGED: ", tool_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    problems++;
}

static int sink_null(void *ctx, const void *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    (void)n;
    return 0;
}

/* recover's dry run reports one line per damaged block and one per task: show the
 * damaged blocks and the tasks with blocks that are damaged or could not be checked */
static void damaged_line(void *ctx, const char *line)
{
    (void)ctx;
    if (strstr(line, "checksum mismatch"))
        fprintf(stderr, "%s: DAMAGED: %s\n", tool_prog, line);
    else if (strstr(line, "; checksums:") && !strstr(line, " 0 damaged, 0 unverifiable"))
        fprintf(stderr, "%s: %s\n", tool_prog, line + strspn(line, " "));
}

/* The open failed: say why, and for a container never closed what `sheaf
 * recover` would bring back. */
static void report_unopened(const char *file, int code)
{
    if (code == SHEAF_E_UNCLOSED) {
        sheaf_recover_summary s;
        int flags = SHEAF_RECOVER_DRY_RUN;
        int rrc = sheaf_recover(file, flags, damaged_line, NULL, &s);
        if (rrc == SHEAF_E_NOTFOUND)
            rrc = sheaf_recover(file, flags | SHEAF_RECOVER_SALVAGE, NULL, NULL, &s);
        if (rrc)
            fprintf(stderr, "%s: %s: never closed, and what is recoverable cannot be told: %s\n", tool_prog, file,
                    sheaf_last_error());
        else {
            fprintf(stderr, "%s: %s: never closed; recoverable: %lld bytes of %lld tasks%s (run: sheaf recover%s %s)\n",
                    tool_prog, file, (long long)s.bytes, (long long)s.tasks,
                    s.uncertain         ? " estimated without a journal, trailing zero bytes uncertain"
                    : s.tasks_unflushed ? " (what was flushed; some tasks never flushed)"
                                        : " (everything flushed)",
                    s.uncertain ? " --salvage" : "", file);
            fprintf(stderr, "%s: %s: checksums: %lld data block(s): %lld verified, %lld damaged, %lld unverifiable%s\n",
                    tool_prog, file, (long long)s.blocks, (long long)s.blocks_verified, (long long)s.blocks_damaged,
                    (long long)s.blocks_unverifiable,
                    s.checksums ? " (against the CRCs in the journal)"
                                : " (no CRCs journaled: written without "
                                  "the checksum key, or salvaged)");
        }
    }
    fprintf(stderr, "%s: DAMAGED: %s: %s\n", tool_prog, file,
            code == SHEAF_E_UNCLOSED   ? "container was never closed (writer crashed or did not call close)"
            : code == SHEAF_E_NOTFOUND ? "file or multi-file member missing"
            : code == SHEAF_E_IO       ? "cannot be read"
                                       : "metadata is corrupt or inconsistent");
}

/* Each of the nf open files: present, closed, not truncated, a known format. */
static void check_files(const tool_in *in, const char *file, int nf)
{
    for (int f = 0; f < nf; f++) {
        sheaf_file_info fi;
        if (sheaf_get_file_info(in->sid, f, &fi) != SION_SUCCESS) {
            bad("%s: cannot get header of file %d", file, f);
            continue;
        }
        struct stat st;
        if (stat(fi.name, &st) != 0) {
            bad("%s: member file %d of the set is missing", fi.name, f);
            continue;
        }
        if (fi.start_of_varheader <= 0)
            bad("%s: never closed (start_of_varheader %lld)", fi.name, (long long)fi.start_of_varheader);
        else if ((long long)st.st_size < fi.start_of_varheader)
            bad("%s: truncated: size %lld < start_of_varheader %lld", fi.name, (long long)st.st_size,
                (long long)fi.start_of_varheader);
        if (fi.format_version < 1 || fi.format_version > 5)
            bad("%s: unknown file format version %d", fi.name, fi.format_version);
        if (fi.data_start < fi.header_size)
            bad("%s: data starts at %lld inside the header (%lld bytes)", fi.name, (long long)fi.data_start,
                (long long)fi.header_size);
    }
}

/* Every task's block count and block sizes within their bounds. */
static void check_blocks(const tool_in *in, const char *file)
{
    for (int t = 0; t < in->ntasks; t++) {
        if (in->bcount[t] < 0 || in->bcount[t] > in->maxchunks)
            bad("%s: task %d: block count %lld outside 0..%d", file, t, (long long)in->bcount[t], in->maxchunks);
        for (int b = 0; b < in->bcount[t] && b < in->maxchunks; b++) {
            sion_int64 s = tool_block_bytes(in, t, b);
            if (s < 0 || s > in->chunks[t])
                bad("%s: task %d: block size %lld larger than the chunk size %lld", file, t, (long long)s,
                    (long long)in->chunks[t]);
        }
    }
}

/* What reading every data block found. */
typedef struct read_counts {
    long long blocks, ok, damaged, unreadable;
    int tasks_bad;
} read_counts;

/* Read every block on its own, so that one damaged block does not hide the others. */
static void read_all(tool_in *in, const char *file, sion_int64 total, int quiet, read_counts *rc)
{
    memset(rc, 0, sizeof *rc);
    if (!quiet)
        progress_start("verify", total);
    for (int t = 0; t < in->ntasks; t++) {
        int tbad = 0;
        long long dmg0 = rc->damaged, unr0 = rc->unreadable, blk0 = rc->blocks;
        for (int b = 0; b < in->bcount[t] && b < in->maxchunks; b++) {
            if (tool_block_bytes(in, t, b) <= 0)
                continue;
            rc->blocks++;
            if (!tool_copy_task(in, t, b, sink_null, NULL))
                rc->ok++;
            else if (strstr(sheaf_last_error(), "checksum mismatch"))
                rc->damaged++, tbad = 1;
            else
                rc->unreadable++, tbad = 1;
        }
        rc->tasks_bad += tbad;
        if (tbad)
            bad("%s: task %d: data cannot be read completely: %lld damaged and %lld unreadable of %lld data "
                "block(s)",
                file, t, rc->damaged - dmg0, rc->unreadable - unr0, rc->blocks - blk0);
    }
    progress_end();
}

/* What the reads could check: blocks holding data, in files with a checksum
 * trailer (how many of the nf files have one). */
static int checksum_files(const tool_in *in, int nf)
{
    int cks_files = 0;
    for (int f = 0; f < nf; f++) {
        sheaf_file_info fi;
        cks_files += sheaf_get_file_info(in->sid, f, &fi) == SION_SUCCESS && (fi.flag2 & 1);
    }
    return cks_files;
}

static void report_reads(const tool_in *in, const char *file, int nf, int cks_files, int quiet, const read_counts *r)
{
    if (quiet && !problems)
        return;
    FILE *o = problems ? stderr : stdout;
    if (cks_files == nf)
        fprintf(o,
                "%s: checksums: %lld data block(s) of %d tasks: %lld verified, %lld damaged, %lld "
                "unreadable, 0 unverifiable (%d task(s) affected)\n",
                file, r->blocks, in->ntasks, r->ok, r->damaged, r->unreadable, r->tasks_bad);
    else if (cks_files == 0)
        fprintf(o,
                "%s: checksums: none (written without the checksum key): %lld data block(s) of %d tasks: "
                "0 verified, %lld read but unverifiable, %lld unreadable\n",
                file, r->blocks, in->ntasks, r->ok, r->unreadable);
    else
        fprintf(o,
                "%s: checksums: only %d of %d files have them: %lld data block(s) of %d tasks: %lld read "
                "(verified where their file has checksums), %lld damaged, %lld unreadable\n",
                file, cks_files, nf, r->blocks, in->ntasks, r->ok, r->damaged, r->unreadable);
}

static int verify(const char *file, int quiet)
{
    problems = 0;
    tool_in in;
    sheaf_set_error_printing(0);
    if (tool_open(file, &in)) {
        report_unopened(file, sheaf_last_error_code());
        return TOOL_FAIL;
    }
    int nf = in.nfiles_open;
    if (nf < sion_get_number_of_files(in.sid) && !quiet)
        printf("%s: note: member of a %d-file set opened alone; checking this member only "
               "(give the first file to check the whole set)\n",
               file, sion_get_number_of_files(in.sid));
    check_files(&in, file, nf);
    sion_int64 total = tool_all_bytes(&in);
    check_blocks(&in, file);
    if (problems == 0) {
        int cks_files = checksum_files(&in, nf);
        read_counts r;
        read_all(&in, file, total, quiet, &r);
        report_reads(&in, file, nf, cks_files, quiet, &r);
    }
    if (problems == 0 && !quiet)
        printf("%s: OK: %d tasks in %d file(s), %lld bytes of data\n", file, in.ntasks, nf, (long long)total);
    tool_close(&in);
    return problems ? TOOL_FAIL : TOOL_OK;
}

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf verify [-q] FILE...\n"
               "  Checks metadata, file sizes, multi-file members and reads all data, block by block;\n"
               "  says how many data blocks were verified against their checksums (\"checksum\" mode),\n"
               "  damaged, unreadable, or only read (no checksums). A container never closed: what\n"
               "  `sheaf recover` would bring back, checked against the CRCs the writers journaled.\n"
               "  Exit status: 0 healthy, 1 damaged or unreadable, 2 usage error.\n"
               "  -q  print nothing when healthy\n");
}

static int verify_opt(int opt, const char *arg, void *ctx)
{
    (void)opt;
    (void)arg;
    *(int *)ctx = 1; /* -q */
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int quiet = 0, first, rc = tool_getopt(argc, argv, "qh", longopts, verify_opt, &quiet, usage, 1, -1, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    for (int i = first; i < argc; i++)
        if (verify(argv[i], quiet) != TOOL_OK)
            rc = TOOL_FAIL;
    return rc;
}
