/* cmd_stats.c - `sheaf stats`: job I/O monitoring (src/monitor, doc/monitor.md).
 *   sheaf stats run [-o LOG] [--max-files N] [--interval-ms MS] -- COMMAND...
 *   sheaf stats env [-o LOG] [--max-files N] [--interval-ms MS]
 *   sheaf stats summary [--json] [--recover] LOG
 *   sheaf stats top ...   (cmd_stats_top.c)   sheaf stats node ...  (cmd_stats_node.c)
 *   sheaf stats report ... / export ...  (cmd_stats_report.c, cmd_stats_export.c)
 * Uses only the public API (sheaf_monitor.h). Exit: run gives the command's
 * status (128 + signal if it was killed); env and summary 0, 1 failure, 2 usage. */
#include "common.h"
#include "sheaf_monitor.h"
#include "stats_cmds.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int cmd_stats_report(int argc, char **argv);
int cmd_stats_export(int argc, char **argv);

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf stats run [-o LOG] [--max-files N] [--interval-ms MS] -- COMMAND [ARG...]\n"
               "       sheaf stats env [-o LOG] [--max-files N] [--interval-ms MS]\n"
               "       sheaf stats summary [--json] [--recover] LOG\n"
               "       sheaf stats top [--once] [--json] [--group G] LOG    (sheaf stats top --help)\n"
               "       sheaf stats node [-o FILE] [--textfile F] [--interval S] [--count N]  (--help)\n"
               "       sheaf stats report [--recover] [--top N] LOG -o OUT.html\n"
               "       sheaf stats export --format csv|llview|parquet [--recover] LOG [-o OUT]\n"
               "  run      run COMMAND (and every process it starts, e.g. under mpiexec) with its POSIX and\n"
               "           stdio I/O counted per file; each process appends snapshots to LOG/<host>.<pid>...smon\n"
               "           (default LOG: sheaf-stats.<date>.<pid>)\n"
               "  env      print the shell lines that turn monitoring on in a batch script\n"
               "           (eval \"$(sheaf stats env -o job.mon)\")\n"
               "  summary  totals per file, per process and for the files folded past the budget\n"
               "           --json     one JSON object\n"
               "           --recover  close the logs of killed processes first (never while the job runs)\n"
               "  report   one self-contained HTML page: findings, heat map, bytes per rank, access sizes, files\n"
               "  export   the tables as CSV, LLview JSON or Parquet (Parquet: python3 -m sheaf.stats, pyarrow)\n"
               "  --max-files N     file records per process (SHEAF_MONITOR_MAX_FILES, default 4096)\n"
               "  --interval-ms MS  snapshot interval (SHEAF_MONITOR_INTERVAL_MS, default 10000)\n"
               "  SHEAF_MONITOR_PRELOAD_LIB names the interposition library if it is not found beside sheaf.\n");
}

/* the interposition library: $SHEAF_MONITOR_PRELOAD_LIB, beside the installed tool, or the build tree's */
static int preload_lib(char *out, size_t n)
{
    const char *env = getenv("SHEAF_MONITOR_PRELOAD_LIB");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX - 64];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l > 0) {
        exe[l] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(out, n, "%s/../%s/libsheaf_monitor_preload.so.0", exe, SHEAF_INSTALL_LIBDIR);
            if (access(out, R_OK) == 0)
                return 0;
        }
    }
#ifdef SHEAF_MONITOR_BUILD_LIB
    snprintf(out, n, "%s", SHEAF_MONITOR_BUILD_LIB);
    if (access(out, R_OK) == 0)
        return 0;
#endif
    return -1;
}

struct runopts {
    const char *log;
    const char *max_files, *interval;
    int json, recover;
};

static int num_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static int parse(int argc, char **argv, struct runopts *o, int *first)
{
    static const struct option lo[] = {{"max-files", required_argument, 0, 'm'},
                                       {"interval-ms", required_argument, 0, 'i'},
                                       {"json", no_argument, 0, 'j'},
                                       {"recover", no_argument, 0, 'r'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->log = optarg;
            break;
        case 'm':
            o->max_files = optarg;
            break;
        case 'i':
            o->interval = optarg;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'r':
            o->recover = 1;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return TOOL_USAGE;
        }
    }
    if ((o->max_files && !num_ok(o->max_files)) || (o->interval && !num_ok(o->interval))) {
        tool_err("--max-files and --interval-ms take a positive number");
        return TOOL_USAGE;
    }
    *first = optind;
    return 0;
}

/* the environment that turns monitoring on: SHEAF_MONITOR (absolute), LD_PRELOAD (prepended) */
static int monitor_env(const struct runopts *o, char *dir, size_t dn, char *pre, size_t pn)
{
    char lib[PATH_MAX];
    if (preload_lib(lib, sizeof lib) != 0) {
        tool_err("the interposition library libsheaf_monitor_preload.so was not found "
                 "(set SHEAF_MONITOR_PRELOAD_LIB)");
        return -1;
    }
    char def[128];
    const char *log = o->log;
    if (!log) {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        snprintf(def, sizeof def, "sheaf-stats.%04d%02d%02d-%02d%02d%02d.%ld", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)getpid());
        log = def;
    }
    if (log[0] == '/') {
        snprintf(dir, dn, "%s", log);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            tool_err("getcwd: %s", strerror(errno));
            return -1;
        }
        snprintf(dir, dn, "%s/%s", cwd, log);
    }
    const char *old = getenv("LD_PRELOAD");
    snprintf(pre, pn, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    return 0;
}

static int cmd_run(int argc, char **argv, int env_only)
{
    struct runopts o = {0};
    int first, rc = parse(argc, argv, &o, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    if (!env_only && first >= argc) {
        tool_err("no command to run (sheaf stats run [-o LOG] -- COMMAND...)");
        return TOOL_USAGE;
    }
    if (env_only && first < argc) {
        tool_err("env takes no command");
        return TOOL_USAGE;
    }
    char dir[PATH_MAX + 256], pre[2 * PATH_MAX + 8];
    if (monitor_env(&o, dir, sizeof dir, pre, sizeof pre))
        return TOOL_FAIL;
    if (env_only) {
        printf("export SHEAF_MONITOR='%s'\nexport LD_PRELOAD='%s'\n", dir, pre);
        if (o.max_files)
            printf("export SHEAF_MONITOR_MAX_FILES=%s\n", o.max_files);
        if (o.interval)
            printf("export SHEAF_MONITOR_INTERVAL_MS=%s\n", o.interval);
        return TOOL_OK;
    }
    pid_t pid = fork();
    if (pid < 0) {
        tool_err("fork: %s", strerror(errno));
        return TOOL_FAIL;
    }
    if (pid == 0) {
        setenv("SHEAF_MONITOR", dir, 1);
        setenv("LD_PRELOAD", pre, 1);
        if (o.max_files)
            setenv("SHEAF_MONITOR_MAX_FILES", o.max_files, 1);
        if (o.interval)
            setenv("SHEAF_MONITOR_INTERVAL_MS", o.interval, 1);
        execvp(argv[first], argv + first);
        fprintf(stderr, "%s: %s: %s\n", tool_prog, argv[first], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            tool_err("waitpid: %s", strerror(errno));
            return TOOL_FAIL;
        }
    fprintf(stderr, "%s: log in %s (sheaf stats summary %s)\n", tool_prog, dir, dir);
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int cmd_summary(int argc, char **argv)
{
    struct runopts o = {0};
    int first, rc = parse(argc, argv, &o, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    if (first != argc - 1) {
        usage(stderr);
        return TOOL_USAGE;
    }
    sheaf_monitor_job *job;
    char err[1024];
    if (sheaf_monitor_read(argv[first], o.recover ? SHEAF_MONITOR_RECOVER : 0, &job, err, sizeof err)) {
        tool_err("%s", err);
        return TOOL_FAIL;
    }
    rc = sheaf_monitor_print(job, stdout, o.json, err, sizeof err);
    sheaf_monitor_free(job);
    if (rc || fflush(stdout)) {
        tool_err("writing the summary: %s", rc ? err : strerror(errno));
        return TOOL_FAIL;
    }
    return TOOL_OK;
}

int cmd_stats(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TOOL_USAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
        usage(stdout);
        return TOOL_OK;
    }
    if (!strcmp(sub, "run"))
        return cmd_run(argc - 1, argv + 1, 0);
    if (!strcmp(sub, "env"))
        return cmd_run(argc - 1, argv + 1, 1);
    if (!strcmp(sub, "summary"))
        return cmd_summary(argc - 1, argv + 1);
    if (!strcmp(sub, "top"))
        return cmd_stats_top(argc - 1, argv + 1);
    if (!strcmp(sub, "node"))
        return cmd_stats_node(argc - 1, argv + 1);
    if (!strcmp(sub, "report"))
        return cmd_stats_report(argc - 1, argv + 1);
    if (!strcmp(sub, "export"))
        return cmd_stats_export(argc - 1, argv + 1);
    tool_err("unknown stats command '%s'", sub);
    usage(stderr);
    return TOOL_USAGE;
}
