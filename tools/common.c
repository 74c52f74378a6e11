/* common.c - opening inputs, copying task data, messages. */
#include "common.h"
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tool_prog = "sheaf";

void tool_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", tool_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int tool_open(const char *path, tool_in *in)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    sheaf_set_error_printing(0);
    FILE *fp = NULL;
    sion_int64 *cs = NULL;
    int *gr = NULL;
    in->sid = sion_open((char *)path, "rb,posix", &in->ntasks, &in->nfiles, &cs, &in->fsblksize, &gr, &fp);
    free(cs);
    free(gr);
    if (in->sid < 0) {
        const char *m = sheaf_last_error();
        tool_err("%s", m && *m ? m : "cannot open container");
        return -1;
    }
    if (sion_get_locations(in->sid, &in->ntasks, &in->maxchunks, &in->globalskip, &in->start_of_varheader, &in->chunks,
                           &in->granks, &in->bcount, &in->bsizes) != SION_SUCCESS) {
        tool_err("%s: cannot read block tables: %s", path, sheaf_last_error());
        sion_close(in->sid);
        in->sid = -1;
        return -1;
    }
    sheaf_file_info fi;
    in->nfiles_open = sheaf_get_file_info(in->sid, 0, &fi) == SION_SUCCESS ? fi.nfiles_open : 1;
    return 0;
}

void tool_close(tool_in *in)
{
    if (in->sid >= 0)
        sion_close(in->sid);
    in->sid = -1;
}

sion_int64 tool_block_bytes(const tool_in *in, int t, int b)
{
    if (t < 0 || t >= in->ntasks || b < 0 || b >= in->bcount[t] || b >= in->maxchunks)
        return 0;
    return in->bsizes[(sion_int64)b * in->ntasks + t];
}

sion_int64 tool_task_bytes(const tool_in *in, int t)
{
    sion_int64 s = 0;
    for (int b = 0; t >= 0 && t < in->ntasks && b < in->bcount[t] && b < in->maxchunks; b++)
        s += tool_block_bytes(in, t, b);
    return s;
}

sion_int64 tool_all_bytes(const tool_in *in)
{
    sion_int64 s = 0;
    for (int t = 0; t < in->ntasks; t++)
        s += tool_task_bytes(in, t);
    return s;
}

int tool_sink_fd(void *ctx, const void *buf, size_t n)
{
    int fd = *(int *)ctx;
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

#define TOOL_BUF (1u << 20)

int tool_copy_task(tool_in *in, int t, int b, tool_sink sink, void *ctx)
{
    sion_int64 want = b < 0 ? tool_task_bytes(in, t) : tool_block_bytes(in, t, b);
    if (want == 0)
        return 0;
    if (sion_seek(in->sid, t, b < 0 ? 0 : b, 0) != SION_SUCCESS) {
        tool_err("%s: task %d: seek failed: %s", in->path, t, sheaf_last_error());
        return -1;
    }
    static char *buf;
    if (!buf && !(buf = malloc(TOOL_BUF))) {
        tool_err("out of memory");
        return -1;
    }
    sion_int64 left = want;
    while (left > 0) {
        size_t n = left > TOOL_BUF ? TOOL_BUF : (size_t)left;
        size_t got = sion_fread(buf, 1, n, in->sid);
        if (got != n) {
            const char *m = sheaf_last_error();
            tool_err("%s: task %d: read %lld of %lld bytes%s%s", in->path, t,
                     (long long)(want - left + (sion_int64)got), (long long)want, m && *m ? ": " : " (data missing)",
                     m && *m ? m : "");
            return -1;
        }
        if (sink(ctx, buf, n)) {
            tool_err("write error: %s", strerror(errno));
            return -1;
        }
        progress_add((sion_int64)n);
        left -= (sion_int64)n;
    }
    return 0;
}

int tool_parse_i64(const char *s, long long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int tool_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
                int (*on_opt)(int opt, const char *arg, void *ctx), void *ctx, void (*usage)(FILE *o), int min_pos,
                int max_pos, int *first)
{
    optind = 0; /* full reinitialisation (glibc): each command parses once */
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return -1;
        }
        if (opt == '?' || opt == ':') {
            const char *bad = argv[optind - 1 < argc ? optind - 1 : argc - 1];
            tool_err("unknown or incomplete option '%s'", bad);
            usage(stderr);
            return TOOL_USAGE;
        }
        if (on_opt(opt, optarg, ctx) != 0)
            return TOOL_USAGE;
    }
    int npos = argc - optind;
    if (npos < min_pos || (max_pos >= 0 && npos > max_pos)) {
        if (npos > 0 && max_pos >= 0 && npos > max_pos)
            tool_err("too many arguments");
        usage(stderr);
        return TOOL_USAGE;
    }
    *first = optind;
    return TOOL_OK;
}

int tool_open_output(tool_in *in, const char *out)
{
    /* never through a symbolic link planted at the name (as split and the library's creates) */
    int fd = open(out, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        struct stat ls;
        if ((e == ELOOP || e == EMLINK) && lstat(out, &ls) == 0 && S_ISLNK(ls.st_mode))
            tool_err("%s: cannot create: it is a symbolic link (outputs are never written through a link; "
                     "remove it or give the real path)",
                     out);
        else
            tool_err("%s: cannot create: %s", out, strerror(e));
        return -1;
    }
    /* never truncate one of the container's own files */
    struct stat so = {0};
    int same = 0;
    if (fstat(fd, &so) == 0)
        for (int f = 0; f < in->nfiles_open && !same; f++) {
            sheaf_file_info fi;
            struct stat si;
            same = sheaf_get_file_info(in->sid, f, &fi) == SION_SUCCESS && stat(fi.name, &si) == 0 &&
                   si.st_dev == so.st_dev && si.st_ino == so.st_ino;
        }
    if (same || (S_ISREG(so.st_mode) && ftruncate(fd, 0) != 0)) {
        tool_err("%s: %s", out, same ? "is a file of the input container; refusing to overwrite it" : strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

void tool_json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(o, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(o, "\\u%04x", *p); /* bytes >= 0x7f shown as code points: always valid JSON */
        else
            fputc(*p, o);
    }
    fputc('"', o);
}
