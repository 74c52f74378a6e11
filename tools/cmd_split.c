/* cmd_split.c - `sheaf split`: one output file per task.
 *
 * Safety: output names are built only from the user-given prefix and numbers;
 * the container's contents never contribute to a path. Files are created with
 * openat() relative to the target directory, O_CREAT|O_EXCL|O_NOFOLLOW (with
 * --force: O_CREAT|O_TRUNC|O_NOFOLLOW), so an existing file is never
 * overwritten without --force and a symlink is never followed. A prefix whose
 * directory part contains a ".." component is refused. */
#include "common.h"
#include <getopt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Split prefix into directory and name part; refuse ".." components. */
static int split_prefix(const char *prefix, char **dir, char **name)
{
    struct stat st;
    size_t len = strlen(prefix);
    char *d, *n;
    if (len > 0 && (prefix[len - 1] == '/' || (stat(prefix, &st) == 0 && S_ISDIR(st.st_mode)))) {
        d = strdup(prefix);
        n = strdup("");
    } else {
        const char *s = strrchr(prefix, '/');
        d = s ? strndup(prefix, (size_t)(s - prefix) + 1) : strdup(".");
        n = strdup(s ? s + 1 : prefix);
    }
    if (!d || !n) {
        free(d);
        free(n);
        tool_err("out of memory");
        return -1;
    }
    /* check every component of the directory part */
    for (const char *p = d; *p;) {
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 2 && p[0] == '.' && p[1] == '.') {
            tool_err("%s: refusing an output prefix with a '..' component", prefix);
            free(d);
            free(n);
            return -1;
        }
        p += l;
        while (*p == '/')
            p++;
    }
    if (!strcmp(n, ".") || !strcmp(n, "..")) {
        /* "dir/.." + digits would be a plain name, but keep it simple and clear */
        tool_err("%s: refusing an output prefix ending in '%s'", prefix, n);
        free(d);
        free(n);
        return -1;
    }
    *dir = d;
    *name = n;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    sion_int64 x = *(const sion_int64 *)a, y = *(const sion_int64 *)b;
    return x < y ? -1 : x > y;
}

/* With -g two tasks with the same stored global rank would write one file. */
static int check_unique(const tool_in *in)
{
    sion_int64 *r = malloc((size_t)(in->ntasks ? in->ntasks : 1) * sizeof *r);
    if (!r) {
        tool_err("out of memory");
        return -1;
    }
    memcpy(r, in->granks, (size_t)in->ntasks * sizeof *r);
    qsort(r, (size_t)in->ntasks, sizeof *r, cmp_i64);
    for (int t = 1; t < in->ntasks; t++)
        if (r[t] == r[t - 1]) {
            tool_err("%s: global rank %lld occurs more than once; split by task index (without -g)", in->path,
                     (long long)r[t]);
            free(r);
            return -1;
        }
    free(r);
    return 0;
}

/* Create output `fn` in directory dfd: never through a symlink, never over an
 * existing file without force, only ever a regular file. Returns fd or -1. */
static int open_output(int dfd, const char *dir, const char *fn, int force)
{
    if (strchr(fn, '/') || strlen(fn) >= 1024) {
        tool_err("%s: bad output name", fn);
        return -1;
    }
    /* O_NONBLOCK: a FIFO planted under an output name must not hang us;
     * no O_TRUNC until we know it is a regular file */
    int fl = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (force ? 0 : O_EXCL);
    int fd = openat(dfd, fn, fl, 0666);
    if (fd < 0) {
        int e = errno;
        struct stat ls;
        int islink = fstatat(dfd, fn, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode);
        tool_err("%s/%s: cannot create: %s%s", dir, fn, islink ? "it is a symbolic link" : strerror(e),
                 islink        ? " (never followed, not even with --force)"
                 : e == EEXIST ? " (use --force to overwrite)"
                               : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tool_err("%s/%s: exists and is not a regular file; refusing to write to it", dir, fn);
        close(fd);
        return -1;
    }
    if ((force && ftruncate(fd, 0) != 0) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        tool_err("%s/%s: %s", dir, fn, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Output name for rank r: numbers only, a negative rank becomes "n" + digits. */
static void rank_name(char *fn, size_t len, const char *name, int digits, long long r)
{
    if (r < 0)
        snprintf(fn, len, "%sn%0*llu", name, digits, 0ULL - (unsigned long long)r);
    else
        snprintf(fn, len, "%s%0*lld", name, digits, r);
}

struct split_job {
    tool_in *in;
    int dfd, force, verbose;
    const char *dir;
    const tool_report *rep;
};

/* Write one output file: all of task t (key_sel == 0) or one key of it. */
static int split_one(struct split_job *j, int t, const char *fn, int by_key, uint64_t key)
{
    int fd = open_output(j->dfd, j->dir, fn, j->force);
    if (fd < 0)
        return -1;
    if (j->verbose)
        fprintf(stderr, "%s: task %d%s -> %s/%s\n", tool_prog, t, by_key ? " (one key)" : "", j->dir, fn);
    const tool_report *rep = j->rep;
    if (rep && rep->file)
        rep->file(rep->ctx, j->in, t, by_key, key);
    int rc;
    if (by_key) {
        rc = tool_copy_key(j->in, t, key, tool_sink_fd, &fd);
        if (!rc && rep && rep->key) {
            sion_key_stat_t st;
            if (sion_key_get_stat(j->in->sid, key, &st) == SION_SUCCESS)
                rep->key(rep->ctx, j->in, t, key, st.total_size);
        }
    } else if (rep && rep->block) { /* block by block, reported */
        rc = 0;
        for (int b = 0; b < j->in->bcount[t] && b < j->in->maxchunks && !rc; b++) {
            rc = tool_copy_task(j->in, t, b, tool_sink_fd, &fd);
            if (!rc)
                rep->block(rep->ctx, j->in, t, b, tool_block_bytes(j->in, t, b));
        }
    } else {
        rc = tool_copy_task(j->in, t, -1, tool_sink_fd, &fd);
    }
    if (close(fd) != 0 && rc == 0) {
        tool_err("%s/%s: write error: %s", j->dir, fn, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* Key-value container: one file per task and key, <prefix><rank>_<key %012>. */
static int split_keys(struct split_job *j, int t, const char *base)
{
    if (sion_seek(j->in->sid, t, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS ||
        sion_key_list_iterator_reset(j->in->sid) != SION_SUCCESS) {
        tool_err("%s: task %d: %s", j->in->path, t, sheaf_last_error());
        return -1;
    }
    /* collect first: copying a key moves the key-list iterator's task cursor */
    size_t n = 0, cap = 16;
    uint64_t *keys = malloc(cap * sizeof *keys), key;
    while (keys && sion_key_list_iterator_next(j->in->sid, &key) == SION_SUCCESS) {
        if (n == cap) {
            uint64_t *k2 = realloc(keys, 2 * cap * sizeof *keys);
            if (!k2) {
                free(keys);
                keys = NULL;
                break;
            }
            keys = k2;
            cap *= 2;
        }
        keys[n++] = key;
    }
    if (!keys) {
        tool_err("out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char fn[128 + 1024 + 32]; /* base is < 128 + 1024; open_output rejects >= 1024 */
        snprintf(fn, sizeof fn, "%s_%012llu", base, (unsigned long long)keys[i]);
        rc = split_one(j, t, fn, 1, keys[i]);
    }
    free(keys);
    return rc;
}

int do_split(const char *file, const char *prefix, int digits, int use_grank, int force, int verbose,
             const tool_report *rep)
{
    if (digits < 1 || digits > 30) {
        tool_err("digits must be 1..30, got %d", digits);
        return TOOL_USAGE;
    }
    char *dir, *name;
    if (split_prefix(prefix, &dir, &name))
        return TOOL_USAGE;
    tool_in in;
    if (tool_open(file, &in)) {
        free(dir);
        free(name);
        return TOOL_FAIL;
    }
    int rc = TOOL_OK, by_key = tool_is_keyval(&in);
    if (use_grank && check_unique(&in))
        rc = TOOL_FAIL;
    struct split_job j = {&in, -1, force, verbose, dir, rep};
    if (rc == TOOL_OK && (j.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        tool_err("%s: cannot open output directory: %s", dir, strerror(errno));
        rc = TOOL_FAIL;
    }
    if (rc == TOOL_OK && rep && rep->opened)
        rep->opened(rep->ctx, &in);
    if (!rep)
        progress_start("split", tool_all_bytes(&in));
    for (int t = 0; t < in.ntasks && rc == TOOL_OK; t++) {
        if (rep && rep->task)
            rep->task(rep->ctx, &in, t);
        char fn[128 + 1024];
        rank_name(fn, sizeof fn, name, digits, use_grank ? (long long)in.granks[t] : t);
        if (by_key ? split_keys(&j, t, fn) : split_one(&j, t, fn, 0, 0))
            rc = TOOL_FAIL;
    }
    progress_end();
    if (j.dfd >= 0)
        close(j.dfd);
    tool_close(&in);
    free(dir);
    free(name);
    return rc;
}

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf split [-d DIGITS] [-g] [--force] [-v] FILE OUTDIR_OR_PREFIX\n"
               "  Writes one file per task, named <prefix><task zero-padded>. If the second\n"
               "  argument is a directory (or ends in '/'), files are named DIR/<number>.\n"
               "  -d DIGITS  zero padding (default 5)\n"
               "  -g         number by the stored global rank instead of the task index\n"
               "             (a negative rank is written as 'n' followed by its digits)\n"
               "  --force    overwrite existing regular files (symlinks are never followed)\n"
               "  Key-value containers give one file per task and key: <prefix><task>_<key, 12 digits>.\n");
}

struct split_opts {
    long long digits;
    int grank, force, verbose;
};

static int split_opt(int opt, const char *arg, void *ctx)
{
    struct split_opts *o = ctx;
    switch (opt) {
    case 'd':
        if (tool_parse_i64(arg, &o->digits) || o->digits < 1 || o->digits > 30) {
            tool_err("invalid -d value '%s' (1..30)", arg);
            return TOOL_USAGE;
        }
        break;
    case 'g':
        o->grank = 1;
        break;
    case 'f':
        o->force = 1;
        break;
    default:
        o->verbose = 1;
        break;
    }
    return 0;
}

int cmd_split(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"force", no_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct split_opts o = {5, 0, 0, 0};
    int first, rc = tool_getopt(argc, argv, "d:gfvh", longopts, split_opt, &o, usage, 2, 2, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    return do_split(argv[first], argv[first + 1], (int)o.digits, o.grank, o.force, o.verbose, NULL);
}
