/* cmd_stats_top.c - `sheaf stats top [--once] [--json] [--group G]
 * [--slowest N] [--interval S] [--count N] LOGDIR|LIVEFILE`: the online view
 * of a monitored job. Every monitored process keeps <host>.<pid>.<start>.<n>.live
 * beside its log (src/monitor/live.c; format in doc/monitor.md "Online
 * view"): its totals, its bytes/s over its last refresh interval and its
 * bytes per storage target. This reads them all and prints bytes and bytes/s
 * per rank group and per storage target, the job's totals, and the slowest
 * ranks (most time in I/O calls). A process is running, ended (its final
 * file) or stale (not refreshed for 3 intervals + 2 s: killed, or idle in
 * I/O without SHEAF_STATS_INTERVAL); only running processes add to bytes/s.
 * Bad input: a live file past 8 KiB, without its "end" line, or with a field
 * out of range is an error naming the file. Exit 0, 1 failure, 2 usage. */
#include "common.h"
#include "stats_cmds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TOP_FILE_MAX 8192
#define TOP_TARGETS 16 /* per live file, as the writer bounds it */
#define TOP_NAME 440

typedef struct top_tgt {
    unsigned long long rb, wb, ops, ns;
    double bps;
    char fstype[32], name[TOP_NAME];
} top_tgt;

typedef struct top_proc {
    long long pid;
    int rank, final, state; /* state: 0 running, 1 ended, 2 stale */
    char host[64];
    unsigned long long time_ns, interval_ns, tot[8];
    double rate_r, rate_w;
    int ntg;
    top_tgt tg[TOP_TARGETS];
} top_proc;

enum { ST_RUNNING, ST_ENDED, ST_STALE };

static void top_usage(FILE *o)
{
    fprintf(o, "usage: sheaf stats top [--once] [--json] [--group G] [--slowest N] [--interval S] [--count N] "
               "LOGDIR|LIVEFILE\n"
               "  the online view of a monitored job (its processes' *.live files): bytes and bytes/s per rank\n"
               "  group and per storage target, the slowest ranks; refreshed every S seconds (default 2)\n"
               "  --once       print once and exit (also --count 1)\n"
               "  --json       one JSON object per refresh\n"
               "  --group G    ranks per group (default: groups of at most 16 lines)\n"
               "  --slowest N  the N ranks with the most time in I/O calls (default 5)\n");
}

static int u64(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

static int dbl(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v >= 0 && v < 1e30))
        return -1;
    *out = v;
    return 0;
}

/* one "target RB WB OPS NS BPS FSTYPE NAME" line (after the key) */
static int parse_target(char *rest, top_proc *p)
{
    if (p->ntg == TOP_TARGETS)
        return -1;
    top_tgt *t = &p->tg[p->ntg];
    char *f[7];
    for (int i = 0; i < 6; i++) {
        f[i] = strsep(&rest, " ");
        if (!f[i] || !rest)
            return -1;
    }
    f[6] = rest; /* the name: the rest of the line */
    if (u64(f[0], ULLONG_MAX, &t->rb) || u64(f[1], ULLONG_MAX, &t->wb) || u64(f[2], ULLONG_MAX, &t->ops) ||
        u64(f[3], ULLONG_MAX, &t->ns) || dbl(f[4], &t->bps) || strlen(f[5]) >= sizeof t->fstype || !*f[6] ||
        strlen(f[6]) >= sizeof t->name)
        return -1;
    strcpy(t->fstype, strcmp(f[5], "-") ? f[5] : "");
    strcpy(t->name, f[6]);
    p->ntg++;
    return 0;
}

/* one line "KEY VALUE..." into p; 1 on "end", 0, -1 bad */
static int parse_line(char *line, top_proc *p)
{
    char *rest = line, *key = strsep(&rest, " ");
    unsigned long long v;
    if (!strcmp(key, "end"))
        return rest ? -1 : 1;
    if (!rest)
        return -1;
    if (!strcmp(key, "pid"))
        return u64(rest, INT_MAX, &v) ? -1 : (p->pid = (long long)v, 0);
    if (!strcmp(key, "rank")) {
        if (!strcmp(rest, "-1"))
            return p->rank = -1, 0;
        return u64(rest, INT_MAX - 1, &v) ? -1 : (p->rank = (int)v, 0);
    }
    if (!strcmp(key, "host"))
        return strlen(rest) >= sizeof p->host ? -1 : (strcpy(p->host, rest), 0);
    if (!strcmp(key, "time_ns"))
        return u64(rest, ULLONG_MAX, &p->time_ns);
    if (!strcmp(key, "interval_ns"))
        return u64(rest, 86400ull * 1000000000ull, &p->interval_ns);
    if (!strcmp(key, "final"))
        return u64(rest, 1, &v) ? -1 : (p->final = (int)v, 0);
    if (!strcmp(key, "start_ns") || !strcmp(key, "targets_omitted"))
        return u64(rest, ULLONG_MAX, &v);
    if (!strcmp(key, "total")) {
        for (int i = 0; i < 8; i++) {
            char *f = strsep(&rest, " ");
            if (!f || (i < 7) != (rest != NULL) || u64(f, ULLONG_MAX, &p->tot[i]))
                return -1;
        }
        return 0;
    }
    if (!strcmp(key, "rate")) {
        char *a = strsep(&rest, " ");
        return dbl(a, &p->rate_r) || dbl(rest, &p->rate_w) ? -1 : 0;
    }
    if (!strcmp(key, "target"))
        return parse_target(rest, p);
    return -1;
}

/* read and check one live file; 0, or -1 with a message naming it */
static int read_live(const char *path, top_proc *p)
{
    memset(p, 0, sizeof *p);
    p->rank = -2;
    char buf[TOP_FILE_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tool_err("%s: %s", path, strerror(errno));
        return -1;
    }
    ssize_t n = 0, r;
    while (n < (ssize_t)sizeof buf && (r = read(fd, buf + n, sizeof buf - (size_t)n)) > 0)
        n += r;
    close(fd);
    if (n > TOP_FILE_MAX) {
        tool_err("%s: not a live file (more than %d bytes)", path, TOP_FILE_MAX);
        return -1;
    }
    buf[n] = 0;
    char *s = buf, *line = strsep(&s, "\n");
    if (!s || strcmp(line, "sheaf-live 1")) {
        tool_err("%s: not a live file of this version (first line)", path);
        return -1;
    }
    int lineno = 1, rc = 0;
    while (s && *s && rc == 0) {
        line = strsep(&s, "\n");
        lineno++;
        rc = parse_line(line, p);
    }
    if (rc != 1 || p->rank == -2 || !p->pid || !p->interval_ns || (s && *s)) {
        tool_err("%s: bad or incomplete live file (line %d%s)", path, lineno, rc == 0 ? ", no end line" : "");
        return -1;
    }
    return 0;
}

static int is_live(const char *n)
{
    size_t l = strlen(n);
    return l > 5 && !strcmp(n + l - 5, ".live");
}

/* every live file of path (a directory, or one file); *np processes, NULL on an error */
static top_proc *read_all(const char *path, size_t *np)
{
    struct stat st;
    *np = 0;
    if (stat(path, &st) != 0) {
        tool_err("%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        top_proc *p = malloc(sizeof *p);
        if (!p || read_live(path, p)) {
            free(p);
            return NULL;
        }
        *np = 1;
        return p;
    }
    DIR *d = opendir(path);
    if (!d) {
        tool_err("%s: %s", path, strerror(errno));
        return NULL;
    }
    top_proc *ps = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int bad = 0;
    while (!bad && (de = readdir(d))) {
        if (!is_live(de->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            top_proc *np2 = realloc(ps, cap * sizeof *np2);
            if (!np2) {
                tool_err("out of memory for %zu processes", cap);
                bad = 1;
                break;
            }
            ps = np2;
        }
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", path, de->d_name);
        if (read_live(full, &ps[n]))
            bad = 1;
        else
            n++;
    }
    closedir(d);
    if (bad) {
        free(ps);
        return NULL;
    }
    if (!n)
        tool_err("%s: no live files (*.live) of a monitored job in it", path);
    *np = n;
    return n ? ps : (free(ps), NULL);
}

/* ---- aggregation ---- */

typedef struct rank_agg {
    int rank, procs, running;
    unsigned long long rb, wb, ns;
    double bps;
} rank_agg;

typedef struct tgt_agg {
    const top_tgt *t;
    unsigned long long rb, wb, ops, ns;
    double bps;
} tgt_agg;

typedef struct top_view {
    int counts[3];
    unsigned long long rb, wb;
    double rbps, wbps;
    rank_agg *ranks;
    size_t nranks;
    tgt_agg *tgts;
    size_t ntgts;
} top_view;

static int cmp_rank(const void *a, const void *b)
{
    const rank_agg *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_slow(const void *a, const void *b)
{
    const rank_agg *x = *(rank_agg *const *)a, *y = *(rank_agg *const *)b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_tgt(const void *a, const void *b)
{
    const tgt_agg *x = a, *y = b;
    unsigned long long bx = x->rb + x->wb, by = y->rb + y->wb;
    return bx != by ? (bx > by ? -1 : 1) : strcmp(x->t->name, y->t->name);
}

static int build_view(top_proc *ps, size_t n, top_view *v)
{
    memset(v, 0, sizeof *v);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long now = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
    v->ranks = calloc(n, sizeof *v->ranks);
    v->tgts = calloc(n * TOP_TARGETS, sizeof *v->tgts);
    if (!v->ranks || !v->tgts) {
        tool_err("out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        top_proc *p = &ps[i];
        p->state = p->final ? ST_ENDED : now > p->time_ns + 3 * p->interval_ns + 2000000000ull ? ST_STALE : ST_RUNNING;
        int run = p->state == ST_RUNNING;
        v->counts[p->state]++;
        v->rb += p->tot[3];
        v->wb += p->tot[4];
        v->rbps += run ? p->rate_r : 0;
        v->wbps += run ? p->rate_w : 0;
        size_t k = 0;
        while (k < v->nranks && v->ranks[k].rank != p->rank)
            k++;
        rank_agg *r = &v->ranks[k];
        if (k == v->nranks)
            r->rank = p->rank, v->nranks++;
        r->procs++;
        r->running += run;
        r->rb += p->tot[3];
        r->wb += p->tot[4];
        r->ns += p->tot[5] + p->tot[6] + p->tot[7];
        r->bps += run ? p->rate_r + p->rate_w : 0;
        for (int j = 0; j < p->ntg; j++) {
            const top_tgt *t = &p->tg[j];
            size_t m = 0;
            while (m < v->ntgts && strcmp(v->tgts[m].t->name, t->name))
                m++;
            tgt_agg *a = &v->tgts[m];
            if (m == v->ntgts)
                a->t = t, v->ntgts++;
            a->rb += t->rb;
            a->wb += t->wb;
            a->ops += t->ops;
            a->ns += t->ns;
            a->bps += run ? t->bps : 0;
        }
    }
    qsort(v->ranks, v->nranks, sizeof *v->ranks, cmp_rank);
    qsort(v->tgts, v->ntgts, sizeof *v->tgts, cmp_tgt);
    return 0;
}

/* ranks per group: the option, else groups of at most 16 lines */
static int group_size(const top_view *v, int opt)
{
    if (opt > 0)
        return opt;
    int maxr = 0;
    for (size_t i = 0; i < v->nranks; i++)
        if (v->ranks[i].rank > maxr)
            maxr = v->ranks[i].rank;
    return maxr / 16 + 1;
}

/* the groups: callback per group (label, ranks, bytes read, written, bytes/s) */
typedef void (*group_fn)(FILE *o, int first, const char *label, int nranks, unsigned long long rb,
                         unsigned long long wb, double bps);

static void each_group(const top_view *v, int g, FILE *o, group_fn fn)
{
    size_t i = 0;
    int first = 1;
    while (i < v->nranks) {
        int lo = v->ranks[i].rank < 0 ? -1 : v->ranks[i].rank / g * g, cnt = 0;
        unsigned long long rb = 0, wb = 0;
        double bps = 0;
        for (; i < v->nranks && (lo < 0 ? v->ranks[i].rank < 0 : v->ranks[i].rank / g * g == lo); i++, cnt++) {
            rb += v->ranks[i].rb;
            wb += v->ranks[i].wb;
            bps += v->ranks[i].bps;
        }
        char label[64];
        if (lo < 0)
            snprintf(label, sizeof label, "no rank");
        else if (g == 1)
            snprintf(label, sizeof label, "%d", lo);
        else
            snprintf(label, sizeof label, "%d-%d", lo, lo + g - 1);
        fn(o, first, label, cnt, rb, wb, bps);
        first = 0;
    }
}

static void group_json(FILE *o, int first, const char *label, int nranks, unsigned long long rb, unsigned long long wb,
                       double bps)
{
    fprintf(o, "%s{\"group\":\"%s\",\"ranks\":%d,\"bytes_read\":%llu,\"bytes_written\":%llu,\"bytes_per_s\":%.1f}",
            first ? "" : ",", label, nranks, rb, wb, bps);
}

static void group_text(FILE *o, int first, const char *label, int nranks, unsigned long long rb, unsigned long long wb,
                       double bps)
{
    (void)first;
    fprintf(o, "  %-14s %6d %16llu %16llu %14.1f\n", label, nranks, rb, wb, bps / 1e6);
}

static void print_json(FILE *o, const top_view *v, rank_agg **slow, size_t nslow, int g)
{
    fprintf(o,
            "{\"processes\":{\"running\":%d,\"ended\":%d,\"stale\":%d},\"totals\":{\"bytes_read\":%llu,"
            "\"bytes_written\":%llu,\"read_bytes_per_s\":%.1f,\"write_bytes_per_s\":%.1f},\"group_size\":%d,"
            "\"ranks\":[",
            v->counts[0], v->counts[1], v->counts[2], v->rb, v->wb, v->rbps, v->wbps, g);
    for (size_t i = 0; i < v->nranks; i++) {
        const rank_agg *r = &v->ranks[i];
        fprintf(o,
                "%s{\"rank\":%d,\"processes\":%d,\"running\":%d,\"bytes_read\":%llu,\"bytes_written\":%llu,"
                "\"io_s\":%.6f,\"bytes_per_s\":%.1f}",
                i ? "," : "", r->rank, r->procs, r->running, r->rb, r->wb, (double)r->ns / 1e9, r->bps);
    }
    fputs("],\"groups\":[", o);
    each_group(v, g, o, group_json);
    fputs("],\"targets\":[", o);
    for (size_t i = 0; i < v->ntgts; i++) {
        const tgt_agg *t = &v->tgts[i];
        fprintf(o, "%s{\"name\":", i ? "," : "");
        tool_json_str(o, t->t->name);
        fputs(",\"fstype\":", o);
        tool_json_str(o, t->t->fstype);
        fprintf(o, ",\"bytes_read\":%llu,\"bytes_written\":%llu,\"ops\":%llu,\"io_s\":%.6f,\"bytes_per_s\":%.1f}",
                t->rb, t->wb, t->ops, (double)t->ns / 1e9, t->bps);
    }
    fputs("],\"slowest\":[", o);
    for (size_t i = 0; i < nslow; i++)
        fprintf(o, "%s{\"rank\":%d,\"io_s\":%.6f,\"bytes\":%llu,\"mb_per_s\":%.3f}", i ? "," : "", slow[i]->rank,
                (double)slow[i]->ns / 1e9, slow[i]->rb + slow[i]->wb,
                slow[i]->ns ? (double)(slow[i]->rb + slow[i]->wb) * 1e3 / (double)slow[i]->ns : 0.0);
    fputs("]}\n", o);
}

static void print_text(FILE *o, const top_view *v, rank_agg **slow, size_t nslow, int g)
{
    fprintf(o, "processes: %d running, %d ended, %d stale    read %llu B (%.1f MB/s)  written %llu B (%.1f MB/s)\n",
            v->counts[0], v->counts[1], v->counts[2], v->rb, v->rbps / 1e6, v->wb, v->wbps / 1e6);
    fprintf(o, "\nper rank group (%d ranks each):\n  %-14s %6s %16s %16s %14s\n", g, "ranks", "n", "bytes read",
            "bytes written", "MB/s now");
    each_group(v, g, o, group_text);
    fprintf(o, "\nper storage target:\n  %-44s %16s %16s %10s %14s\n", "target", "bytes read", "bytes written", "io s",
            "MB/s now");
    for (size_t i = 0; i < v->ntgts; i++) {
        const tgt_agg *t = &v->tgts[i];
        size_t l = strlen(t->t->name);
        fprintf(o, "  %-44s %16llu %16llu %10.3f %14.1f\n", l > 44 ? t->t->name + l - 44 : t->t->name, t->rb, t->wb,
                (double)t->ns / 1e9, t->bps / 1e6);
    }
    fprintf(o, "\nslowest ranks (time in I/O calls):\n");
    for (size_t i = 0; i < nslow; i++)
        fprintf(o, "  rank %-8d %10.3f s %16llu B %10.1f MB/s\n", slow[i]->rank, (double)slow[i]->ns / 1e9,
                slow[i]->rb + slow[i]->wb,
                slow[i]->ns ? (double)(slow[i]->rb + slow[i]->wb) * 1e3 / (double)slow[i]->ns : 0.0);
}

struct topopts {
    int once, json, group, slowest, count;
    double interval;
};

static int top_opt(int opt, const char *arg, void *ctx)
{
    struct topopts *o = ctx;
    unsigned long long v;
    switch (opt) {
    case '1':
        o->once = 1;
        return 0;
    case 'j':
        o->json = 1;
        return 0;
    case 'g':
    case 's':
    case 'c':
        if (u64(arg, 1000000, &v) || v == 0) {
            tool_err("--%s takes a number from 1 to 1000000", opt == 'g' ? "group" : opt == 's' ? "slowest" : "count");
            return TOOL_USAGE;
        }
        *(opt == 'g' ? &o->group : opt == 's' ? &o->slowest : &o->count) = (int)v;
        return 0;
    case 'i':
        if (dbl(arg, &o->interval) || o->interval < 0.1 || o->interval > 3600) {
            tool_err("--interval takes seconds from 0.1 to 3600");
            return TOOL_USAGE;
        }
        return 0;
    default:
        return TOOL_USAGE;
    }
}

static int show(const char *path, const struct topopts *o)
{
    size_t n;
    top_proc *ps = read_all(path, &n);
    if (!ps)
        return TOOL_FAIL;
    top_view v;
    int rc = TOOL_FAIL;
    rank_agg **slow = NULL;
    if (build_view(ps, n, &v) == 0 && (slow = malloc((v.nranks ? v.nranks : 1) * sizeof *slow))) {
        size_t ns = 0;
        for (size_t i = 0; i < v.nranks; i++)
            if (v.ranks[i].rank >= 0)
                slow[ns++] = &v.ranks[i];
        qsort(slow, ns, sizeof *slow, cmp_slow);
        if (ns > (size_t)o->slowest)
            ns = (size_t)o->slowest;
        int g = group_size(&v, o->group);
        if (o->json)
            print_json(stdout, &v, slow, ns, g);
        else
            print_text(stdout, &v, slow, ns, g);
        rc = fflush(stdout) ? TOOL_FAIL : TOOL_OK;
    }
    free(slow);
    free(v.ranks);
    free(v.tgts);
    free(ps);
    return rc;
}

int cmd_stats_top(int argc, char **argv)
{
    static const struct option lo[] = {{"once", no_argument, 0, '1'},           {"json", no_argument, 0, 'j'},
                                       {"group", required_argument, 0, 'g'},    {"slowest", required_argument, 0, 's'},
                                       {"interval", required_argument, 0, 'i'}, {"count", required_argument, 0, 'c'},
                                       {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    struct topopts o = {.slowest = 5, .interval = 2.0};
    int first, rc = tool_getopt(argc, argv, "h", lo, top_opt, &o, top_usage, 1, 1, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    int count = o.once ? 1 : o.count;
    int tty = !o.json && isatty(1);
    for (int i = 0; count == 0 || i < count; i++) {
        if (i) {
            struct timespec ts = {(time_t)o.interval, (long)((o.interval - (double)(time_t)o.interval) * 1e9)};
            nanosleep(&ts, NULL);
        }
        if (tty && !o.once)
            fputs("\033[H\033[2J", stdout);
        if ((rc = show(argv[first], &o)) != TOOL_OK)
            return rc;
    }
    return TOOL_OK;
}
