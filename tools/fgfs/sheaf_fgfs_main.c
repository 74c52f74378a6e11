/* sheaf_fgfs_main.c - `sheaf-fgfs`: global file status from the command line,
 * through the public API only (sheaf_fgfs.h, sheaf_fgfs_mpi.h).
 *   mpiexec -n P sheaf-fgfs [options] classify|groups|consistent PATH...
 *   mpiexec -n P sheaf-fgfs [options] select --bytes N [--dist D] [--speed S] [--scal C]
 * Built without MPI it runs as one process. Output on rank 0, human or
 * --json; exit status 0, 1 (a query failed: message on stderr), 2 (usage). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sheaf_fgfs.h"
#ifdef SHEAF_FGFS_TOOL_MPI
#include "sheaf_fgfs_mpi.h"
#endif

typedef struct opts {
    int json, async, threshold, verbose;
    long sim; /* --sim P: P simulated processes in this one (0: MPI or one process) */
    const char *cmd, *site, *sim_tables;
    sheaf_fgfs_mounts **tables; /* --sim-tables: parsed once, shared by the simulated processes */
    int ntables;
    sheaf_fgfs_criteria crit;
    int npaths;
    char **paths;
} opts;

/* s as a JSON string (quotes, backslashes and control characters escaped)
 * in one of two static buffers: two may appear in one printf */
static const char *js(const char *s)
{
    static char buf[2][3 * 4096 + 8];
    static int which;
    char *o = buf[which ^= 1], *start = o;
    *o++ = '"';
    for (; *s && o - start < (long)sizeof buf[0] - 8; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            *o++ = '\\', *o++ = (char)c;
        else if (c < 0x20)
            o += sprintf(o, "\\u%04x", c);
        else
            *o++ = (char)c;
    }
    *o++ = '"';
    *o = 0;
    return start;
}

static const char *cls_name(sheaf_fgfs_class c)
{
    static const char *n[] = {"fully-distributed", "well-distributed", "poorly-distributed", "unique"};
    return c >= 0 && c <= 3 ? n[c] : "?";
}

static void usage(FILE *o)
{
    fprintf(o, "usage: [mpiexec -n P] sheaf-fgfs [--json] [--async] [--threshold N] [--site FILE] [-v]\n"
               "                  classify|groups|consistent [--] PATH...\n"
               "       [mpiexec -n P] sheaf-fgfs [--json] select --bytes N[K|M|G|T] [--dist unique|low|high|full]\n"
               "                  [--speed low|high] [--scal single|multi]\n"
               "classify: fully/well/poorly distributed or unique; groups: processes sharing the path\n"
               "(number, size and representative of the groups); consistent: the same bytes everywhere;\n"
               "select: mounted file systems for a write of N bytes per process, best first.\n"
               "--sim P [--sim-tables T0,T1,...]: run as P simulated processes in this one (no MPI), process r\n"
               "on host HOST-r with mount table T(r mod n) (default: this process's), e.g. to try a query's\n"
               "answer and cost for a cluster described by mount tables.\n"
               "Environment: SHEAF_FGFS_MOUNTINFO (mount table file), SHEAF_FGFS_HOST, SHEAF_FGFS_SITE.\n");
}

static int pick(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i + 1;
    return -1;
}

/* N with an optional K/M/G/T suffix (powers of 1024); -1 when malformed */
static int parse_bytes(const char *v, unsigned long long *out)
{
    char *e = NULL;
    unsigned long long n = strtoull(v, &e, 10);
    int shift = 0;
    if (e == v)
        return -1;
    switch (*e) {
    case 'K':
    case 'k':
        shift = 10;
        e++;
        break;
    case 'M':
    case 'm':
        shift = 20;
        e++;
        break;
    case 'G':
    case 'g':
        shift = 30;
        e++;
        break;
    case 'T':
    case 't':
        shift = 40;
        e++;
        break;
    default:
        break;
    }
    if (*e || (shift && n > (~0ull >> shift)))
        return -1;
    *out = n << shift;
    return 0;
}

static int parse(int argc, char **argv, opts *o)
{
    static const char *const dist[] = {"unique", "low", "high", "full"}, *const speed[] = {"low", "high"},
                             *const scal[] = {"single", "multi"};
    memset(o, 0, sizeof *o);
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--json"))
            o->json = 1;
        else if (!strcmp(argv[i], "--async"))
            o->async = 1;
        else if (!strcmp(argv[i], "-v"))
            o->verbose = 1;
        else if (!strcmp(argv[i], "--threshold") && i + 1 < argc) {
            char *e = NULL;
            long t = strtol(argv[++i], &e, 10);
            if (e == argv[i] || *e || t < 1 || t > 1000000000)
                return -1; /* not a silent default */
            o->threshold = (int)t;
        } else if (!strcmp(argv[i], "--site") && i + 1 < argc)
            o->site = argv[++i];
        else if (!strcmp(argv[i], "--sim") && i + 1 < argc) {
            char *e = NULL;
            long p = strtol(argv[++i], &e, 10);
            if (e == argv[i] || *e || p < 1 || p > 1000000)
                return -1;
            o->sim = p;
        } else if (!strcmp(argv[i], "--sim-tables") && i + 1 < argc)
            o->sim_tables = argv[++i];
        else
            return -1;
    }
    if (i >= argc || (o->sim_tables && !o->sim))
        return -1;
    o->cmd = argv[i++];
    if (!strcmp(o->cmd, "select")) {
        int have_bytes = 0;
        for (; i + 1 < argc; i += 2) {
            const char *k = argv[i], *v = argv[i + 1];
            int x = 0;
            unsigned long long b;
            if (!strcmp(k, "--bytes") && !parse_bytes(v, &b))
                o->crit.bytes_per_process = b, have_bytes = 1;
            else if (!strcmp(k, "--dist") && (x = pick(v, dist, 4)) > 0)
                o->crit.distribution = (sheaf_fgfs_dist_req)x;
            else if (!strcmp(k, "--speed") && (x = pick(v, speed, 2)) > 0)
                o->crit.speed = (sheaf_fgfs_speed_req)x;
            else if (!strcmp(k, "--scal") && (x = pick(v, scal, 2)) > 0)
                o->crit.scalability = (sheaf_fgfs_scal_req)x;
            else
                return -1;
        }
        return have_bytes && i == argc ? 0 : -1;
    }
    if (strcmp(o->cmd, "classify") && strcmp(o->cmd, "groups") && strcmp(o->cmd, "consistent"))
        return -1;
    if (i < argc && !strcmp(argv[i], "--")) /* "--": everything after it is a path, also "--json" */
        i++;
    o->paths = argv + i;
    o->npaths = argc - i;
    return o->npaths > 0 ? 0 : -1;
}

/* one path: rank 0 prints; returns 0 or the query's code */
static int one_path(sheaf_fgfs_ctx *ctx, const opts *o, int rank, const char *path, int first)
{
    int rc;
    const char *sep = first ? "" : ",";
    if (!strcmp(o->cmd, "classify")) {
        sheaf_fgfs_status st;
        if ((rc = sheaf_fgfs_status_of(ctx, path, &st)))
            return rc;
        /* JSON has no inf or nan: a count that is not finite is null */
        char num[64] = "null";
        if (isfinite(st.servers))
            snprintf(num, sizeof num, "%.1f", st.servers);
        if (rank == 0 && o->json)
            printf("%s\n  {\"path\": %s, \"class\": \"%s\", \"servers\": %s, \"servers_lower_bound\": %s, "
                   "\"all_local\": %d, \"triage_level\": %d}",
                   sep, js(path), cls_name(st.cls), num, st.saturated ? "true" : "false", st.all_local,
                   st.triage_level);
        else if (rank == 0)
            printf("%-40s %-19s servers%s%s (triage level %d)\n", path, cls_name(st.cls), st.saturated ? ">=" : "~",
                   num, st.triage_level);
    } else if (!strcmp(o->cmd, "groups")) {
        sheaf_fgfs_pardesc d;
        if ((rc = sheaf_fgfs_pardesc_of(ctx, path, &d)))
            return rc;
        if (rank == 0 && o->json)
            printf("%s\n  {\"path\": %s, \"groups\": %d, \"rank0\": {\"group\": %d, \"size\": %d, \"rep\": %d}}", sep,
                   js(path), d.ngroups, d.group, d.group_size, d.rep);
        else if (rank == 0)
            printf("%-40s %d group(s); rank 0: group %d of size %d, representative %d\n", path, d.ngroups, d.group,
                   d.group_size, d.rep);
        if (o->verbose) /* one line per process, in no particular order */
            fprintf(stderr, "  rank %d: group %d, size %d, representative %d\n", rank, d.group, d.group_size, d.rep);
    } else {
        int a;
        if ((rc = sheaf_fgfs_is_consistent(ctx, path, &a)))
            return rc;
        if (rank == 0 && o->json)
            printf("%s\n  {\"path\": %s, \"consistent\": %s}", sep, js(path), a ? "true" : "false");
        else if (rank == 0)
            printf("%-40s %s\n", path, a ? "consistent" : "NOT consistent");
    }
    return 0;
}

static int do_select(sheaf_fgfs_ctx *ctx, const opts *o, int rank)
{
    sheaf_fgfs_choice ch[32];
    int n = 0, rc = sheaf_fgfs_select(ctx, &o->crit, ch, 32, &n);
    if (rc || rank)
        return rc;
    if (o->json)
        printf("{\"bytes_per_process\": %llu, \"choices\": [", (unsigned long long)o->crit.bytes_per_process);
    for (int i = 0; i < n; i++) {
        if (o->json)
            printf("%s\n  {\"mount\": %s, \"fstype\": %s, \"class\": \"%s\", \"groups\": %d, \"max_group\": %d, "
                   "\"speed_mbs\": %.0f, \"scalability\": %.0f, \"multi\": %d, \"score\": %.1f, \"min_free\": %llu}",
                   i ? "," : "", js(ch[i].mount_point), js(ch[i].fstype), cls_name(ch[i].cls), ch[i].ngroups,
                   ch[i].max_group, ch[i].speed_mbs, ch[i].scalability, ch[i].multi, ch[i].score,
                   (unsigned long long)ch[i].min_free);
        else
            printf("%2d. %-32s %-8s %-19s groups %-4d score %8.1f  free>=%llu MiB\n", i + 1, ch[i].mount_point,
                   ch[i].fstype, cls_name(ch[i].cls), ch[i].ngroups, ch[i].score,
                   (unsigned long long)(ch[i].min_free >> 20));
    }
    if (o->json)
        printf("\n]}\n");
    else if (!n)
        printf("no mounted file system meets the criteria\n");
    return 0;
}

static int run(sheaf_fgfs_comm *comm, const opts *o)
{
    int rank = comm->ops->rank(comm);
    sheaf_fgfs_config cfg = {
        o->async ? SHEAF_FGFS_ASYNC : SHEAF_FGFS_SYNC, o->threshold, 0, 0, NULL, getenv("SHEAF_FGFS_HOST"), 0, o->site};
    char host[300];
    if (o->sim) { /* process r: host HOST-r, table r mod n */
        char h[256] = "host";
        if (cfg.host)
            snprintf(h, sizeof h, "%s", cfg.host);
        else if (gethostname(h, sizeof h) == 0)
            h[sizeof h - 1] = 0;
        snprintf(host, sizeof host, "%s-%d", h, rank);
        cfg.host = host;
        if (o->ntables)
            cfg.mounts = o->tables[rank % o->ntables];
    }
    sheaf_fgfs_ctx *ctx = NULL;
    int rc = sheaf_fgfs_init(comm, &cfg, &ctx);
    if (!rc && !strcmp(o->cmd, "select"))
        rc = do_select(ctx, o, rank);
    else if (!rc) {
        if (rank == 0 && o->json)
            printf("{\"command\": \"%s\", \"processes\": %d, \"mode\": \"%s\", \"results\": [", o->cmd,
                   comm->ops->size(comm), o->async ? "async" : "sync");
        for (int i = 0; i < o->npaths && !rc; i++)
            rc = one_path(ctx, o, rank, o->paths[i], i == 0);
        if (rank == 0 && o->json)
            printf("\n]}\n");
    }
    if (rc)
        fprintf(stderr, "sheaf-fgfs %s (rank %d): %s\n", o->cmd, rank, sheaf_fgfs_last_error());
    fflush(stdout);
    sheaf_fgfs_finalize(ctx);
    return rc ? 1 : 0;
}

static int one_proc(sheaf_fgfs_comm *c, int rank, void *arg)
{
    (void)rank;
    return run(c, arg);
}

/* --sim P: the query over P in-process processes; the tables are parsed once */
static int run_sim(opts *o)
{
    int rc = 0;
    if (o->sim_tables) {
        char *list = strdup(o->sim_tables), *save = NULL;
        o->tables = calloc(strlen(o->sim_tables) + 1, sizeof *o->tables);
        if (!list || !o->tables)
            rc = 1, fprintf(stderr, "sheaf-fgfs: out of memory\n");
        for (char *t = list ? strtok_r(list, ",", &save) : NULL; t && !rc; t = strtok_r(NULL, ",", &save)) {
            /* through the library's own loader: the same checks (regular file, bounds) */
            if (setenv("SHEAF_FGFS_MOUNTINFO", t, 1) || sheaf_fgfs_mounts_load(&o->tables[o->ntables])) {
                fprintf(stderr, "sheaf-fgfs: --sim-tables: %s\n", sheaf_fgfs_last_error());
                rc = 1;
            } else
                o->ntables++;
        }
        free(list);
    }
    if (!rc) /* 32 KiB stacks: 10^5 processes in ~1 GB */
        rc = sheaf_fgfs_sim_run((int)o->sim, o->sim > 1000 ? 32 : 0, one_proc, o, NULL) ? 1 : 0;
    for (int i = 0; i < o->ntables; i++)
        sheaf_fgfs_mounts_free(o->tables[i]);
    free(o->tables);
    return rc;
}

int main(int argc, char **argv)
{
    opts o;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (parse(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    if (o.sim)
        return run_sim(&o);
#ifdef SHEAF_FGFS_TOOL_MPI
    MPI_Init(&argc, &argv);
    sheaf_fgfs_comm comm;
    int rc = sheaf_fgfs_comm_mpi(MPI_COMM_WORLD, &comm);
    if (rc)
        fprintf(stderr, "sheaf-fgfs: %s\n", sheaf_fgfs_last_error());
    else {
        rc = run(&comm, &o);
        comm.ops->free_comm(&comm);
    }
    /* the exit status of every process says whether the query failed */
    MPI_Finalize();
    return rc ? 1 : 0;
#else
    return sheaf_fgfs_sim_run(1, 0, one_proc, &o, NULL) ? 1 : 0;
#endif
}
