/* cmd_defrag.c - `sheaf defrag`: rewrite a container (single or multi-file)
 * as one physical file with one block per task (chunk size = the task's
 * total bytes), keeping global ranks, declared data endianness and the
 * key-value mode. Uses the serial write API (sion_open "wb"). */
#include "common.h"
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    int sid;
} out_ctx;

static int sink_sion(void *ctx, const void *buf, size_t n)
{
    out_ctx *o = ctx;
    return sion_fwrite(buf, 1, n, o->sid) == n ? 0 : -1;
}

/* 1 (with a message) when OUT is one of the input's files */
static int output_is_input(const tool_in *in, const char *outpath)
{
    struct stat so;
    if (lstat(outpath, &so) != 0) /* a link at OUT is refused by the open, naming it */
        return 0;
    for (int f = 0; f < in->nfiles_open; f++) {
        sheaf_file_info fi;
        struct stat si;
        if (sheaf_get_file_info(in->sid, f, &fi) == SION_SUCCESS && stat(fi.name, &si) == 0 && si.st_dev == so.st_dev &&
            si.st_ino == so.st_ino) {
            tool_err("%s: is a file of the input container; refusing to overwrite it", outpath);
            return 1;
        }
    }
    return 0;
}

/* Every task's data, in one block of task t of osid; TOOL_OK or TOOL_FAIL
 * (with a message) at the first task that fails. */
static int copy_tasks(tool_in *in, int osid, const char *outpath, const tool_report *rep)
{
    out_ctx o = {osid};
    int rc = TOOL_OK;
    if (!rep)
        progress_start("defrag", tool_all_bytes(in));
    for (int t = 0; t < in->ntasks && rc == TOOL_OK; t++) {
        if (rep && rep->task)
            rep->task(rep->ctx, in, t);
        if (sion_seek(osid, t, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS) {
            tool_err("%s: %s", outpath, sheaf_last_error());
            rc = TOOL_FAIL;
            break;
        }
        if (tool_copy_task(in, t, -1, sink_sion, &o)) {
            const char *m = sheaf_last_error();
            if (m && *m)
                tool_err("%s", m);
            rc = TOOL_FAIL;
        }
    }
    progress_end();
    return rc;
}

int do_defrag(const char *inpath, const char *outpath, sion_int64 fsblk, int verbose, const tool_report *rep)
{
    tool_in in;
    if (tool_open(inpath, &in))
        return TOOL_FAIL;
    int rc = TOOL_OK;
    if (output_is_input(&in, outpath)) {
        tool_close(&in);
        return TOOL_FAIL;
    }
    if (rep && rep->opened)
        rep->opened(rep->ctx, &in);
    int n = in.ntasks;
    sion_int64 *cs = malloc((size_t)n * sizeof *cs);
    int *gr = malloc((size_t)n * sizeof *gr);
    if (!cs || !gr) {
        tool_err("out of memory");
        free(cs);
        free(gr);
        tool_close(&in);
        return TOOL_FAIL;
    }
    for (int t = 0; t < n; t++) {
        cs[t] = tool_task_bytes(&in, t);
        gr[t] = (int)in.granks[t];
    }
    char mode[128];
    int kv = sion_get_keyval_mode(in.sid);
    const char *kvs = kv == SION_KEYVAL_INLINE ? ",keyval=inline"
                      : kv == SION_KEYVAL_META ? ",keyval=meta"
                      : kv == SION_KEYVAL_HASH ? ",keyval=hash"
                                               : "";
    snprintf(mode, sizeof mode, "wb,posix,endianness=%s%s", sion_get_file_endianness(in.sid) ? "big" : "little", kvs);
    sion_int32 blk = fsblk > 0 ? (sion_int32)fsblk : in.fsblksize;
    int ntasks = n, nfiles = 1;
    FILE *fp = NULL;
    int osid = sion_open((char *)outpath, mode, &ntasks, &nfiles, &cs, &blk, &gr, &fp);
    if (osid < 0) {
        tool_err("%s", sheaf_last_error());
        rc = TOOL_FAIL;
        goto out;
    }
    if (verbose)
        fprintf(stderr, "%s: %s -> %s: %d tasks, fs block size %d, mode \"%s\"\n", tool_prog, inpath, outpath, n,
                (int)blk, mode);
    if (rep && rep->out_opened)
        rep->out_opened(rep->ctx, &in, osid, blk);
    rc = copy_tasks(&in, osid, outpath, rep);
    if (sion_close(osid) != SION_SUCCESS && rc == TOOL_OK) {
        tool_err("%s", sheaf_last_error());
        rc = TOOL_FAIL;
    }
out:
    free(cs);
    free(gr);
    tool_close(&in);
    return rc;
}

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf defrag [-q BYTES] [-v] FILE OUT\n"
               "  Rewrites FILE (single or multi-file set) as the single file OUT with one\n"
               "  block per task, keeping global ranks, data endianness and key-value mode.\n"
               "  -q BYTES  file system block size of OUT (default: the input's)\n");
}

struct defrag_opts {
    long long q;
    int verbose;
};

static int defrag_opt(int opt, const char *arg, void *ctx)
{
    struct defrag_opts *o = ctx;
    if (opt == 'v') {
        o->verbose = 1;
    } else if (tool_parse_i64(arg, &o->q) || o->q <= 0 || o->q > SION_MAX_FSBLOCKSIZE) {
        tool_err("invalid -q value '%s' (1..%d)", arg, SION_MAX_FSBLOCKSIZE);
        return TOOL_USAGE;
    }
    return 0;
}

int cmd_defrag(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct defrag_opts o = {-1, 0};
    int first, rc = tool_getopt(argc, argv, "q:vh", longopts, defrag_opt, &o, usage, 2, 2, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    return do_defrag(argv[first], argv[first + 1], o.q, o.verbose, NULL);
}
