/* cmd_stats_export.c - `sheaf stats export --format csv|llview|parquet [--recover] LOG [-o OUT]`.
 *   csv      one table: a row per file (summed over processes; folded aggregates
 *            too), per rank and the job's total, every counter a column
 *   llview   one JSON object per job: the job's totals and per-rank bytes,
 *            flat keys for a portal's job table (doc/monitor.md, "Export")
 *   parquet  through Apache Arrow (pyarrow): runs `python3 -m sheaf.stats export`
 *            (the Python reader, bindings/python); fails with a clear message
 *            when python3, the sheaf package or pyarrow is missing
 * OUT defaults to standard output (csv, llview); parquet needs -o. */
#include "common.h"
#include "stats_model.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void csv_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', o);
        fputc((unsigned char)*s < 0x20 ? '?' : *s, o);
    }
    fputc('"', o);
}

static void csv_counters(FILE *o, const sm_job *m, const uint64_t *c)
{
    for (int i = 0; i < m->nc; i++)
        fprintf(o, ",%llu", (unsigned long long)c[i]);
    fputc('\n', o);
}

static void export_csv(FILE *o, const sm_job *m)
{
    fputs("level,rank,pid,kind,name,processes,ranks_with_io", o);
    for (int i = 0; i < m->nc; i++)
        fprintf(o, ",%s", sheaf_monitor_counter_name(i));
    fputc('\n', o);
    for (size_t i = 0; i < m->nfiles; i++) {
        const sm_file *f = &m->files[i];
        fprintf(o, "file,,,%s,",
                f->kind == SHEAF_MONITOR_KIND_FILE  ? "file"
                : f->kind == SHEAF_MONITOR_KIND_DIR ? "dir"
                                                    : "other");
        csv_str(o, f->name);
        fprintf(o, ",%u,%u", f->procs, f->ranks_io);
        csv_counters(o, m, f->c);
    }
    for (size_t r = 0; r < m->nrows; r++) {
        const sm_row *w = &m->rows[r];
        fprintf(o, "rank,%d,%llu,,,%u,%d", w->rank, (unsigned long long)w->pid, w->procs, sm_bytes(w->c) != 0);
        csv_counters(o, m, w->c);
    }
    size_t io = 0;
    for (size_t r = 0; r < m->nstat; r++)
        io += sm_bytes(m->rows[r].c) != 0;
    fprintf(o, "total,,,,,%zu,%zu", m->nprocs, io);
    csv_counters(o, m, m->tot);
}

static void export_llview(FILE *o, const sm_job *m)
{
    const char *jobid = getenv("SLURM_JOB_ID");
    if (!jobid)
        jobid = getenv("PBS_JOBID");
    uint64_t worst = 0, io = 0;
    for (size_t r = 0; r < m->nstat; r++) {
        worst = sm_bytes(m->rows[r].c) > worst ? sm_bytes(m->rows[r].c) : worst;
        io += sm_bytes(m->rows[r].c) != 0;
    }
    fputs("{\"jobid\":", o);
    if (jobid) {
        fputc('"', o);
        for (const char *s = jobid; *s; s++)
            if (*s != '"' && *s != '\\' && (unsigned char)*s >= 0x20)
                fputc(*s, o);
        fputc('"', o);
    } else {
        fputs("null", o);
    }
    const uint64_t *t = m->tot;
    fprintf(o,
            ",\"ts_start\":%.3f,\"ts_end\":%.3f,\"nprocs\":%zu,\"nranks\":%zu,\"ranks_with_io\":%llu,"
            "\"nfiles\":%llu,\"bytes_read\":%llu,\"bytes_written\":%llu,\"mb_read\":%.3f,\"mb_written\":%.3f,"
            "\"reads\":%llu,\"writes\":%llu,\"opens\":%llu,\"stats\":%llu,\"read_s\":%.6f,\"write_s\":%.6f,"
            "\"meta_s\":%.6f,\"worst_rank_bytes\":%llu,\"ranks\":[",
            (double)m->t0 / 1e9, (double)m->t1 / 1e9, m->nprocs, m->nstat, (unsigned long long)io,
            (unsigned long long)m->own_files, (unsigned long long)t[sm_ix[SM_BYTES_READ]],
            (unsigned long long)t[sm_ix[SM_BYTES_WRITTEN]], (double)t[sm_ix[SM_BYTES_READ]] / 1e6,
            (double)t[sm_ix[SM_BYTES_WRITTEN]] / 1e6, (unsigned long long)t[sm_ix[SM_READS]],
            (unsigned long long)t[sm_ix[SM_WRITES]], (unsigned long long)t[sm_ix[SM_OPENS]],
            (unsigned long long)t[sm_ix[SM_STATS]], (double)t[sm_ix[SM_READ_NS]] / 1e9,
            (double)t[sm_ix[SM_WRITE_NS]] / 1e9, (double)t[sm_ix[SM_META_NS]] / 1e9, (unsigned long long)worst);
    for (size_t r = 0; r < m->nrows; r++)
        fprintf(o, "%s{\"rank\":%d,\"pid\":%llu,\"bytes_read\":%llu,\"bytes_written\":%llu}", r ? "," : "",
                m->rows[r].rank, (unsigned long long)m->rows[r].pid,
                (unsigned long long)m->rows[r].c[sm_ix[SM_BYTES_READ]],
                (unsigned long long)m->rows[r].c[sm_ix[SM_BYTES_WRITTEN]]);
    fputs("]}\n", o);
}

/* parquet: the Python reader writes it with pyarrow */
static int export_parquet(const char *log, const char *out, int recover)
{
    if (!out) {
        tool_err("--format parquet needs -o OUT");
        return TOOL_USAGE;
    }
    const char *py = getenv("SHEAF_PYTHON");
    if (!py || !*py)
        py = "python3";
    if (recover) { /* close the killed processes' logs here: the Python reader does not recover */
        sheaf_monitor_job *job;
        char err[1024];
        if (sheaf_monitor_read(log, SHEAF_MONITOR_RECOVER, &job, err, sizeof err)) {
            tool_err("%s", err);
            return TOOL_FAIL;
        }
        sheaf_monitor_free(job);
    }
    char *args[] = {(char *)py, "-m",        "sheaf.stats", "export",    "--format",
                    "parquet",  (char *)log, "-o",          (char *)out, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        tool_err("fork: %s", strerror(errno));
        return TOOL_FAIL;
    }
    if (pid == 0) {
        execvp(py, args);
        fprintf(stderr,
                "%s: --format parquet runs `%s -m sheaf.stats` (the sheaf Python package with pyarrow): "
                "%s: %s\n",
                tool_prog, py, py, strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return TOOL_FAIL;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? TOOL_OK : TOOL_FAIL;
}

int cmd_stats_export(int argc, char **argv)
{
    static const struct option lo[] = {{"format", required_argument, 0, 'f'},
                                       {"recover", no_argument, 0, 'r'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *out = NULL, *fmt = "csv";
    int recover = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'f')
            fmt = optarg;
        else if (c == 'r')
            recover = 1;
        else {
            fprintf(c == 'h' ? stdout : stderr,
                    "usage: sheaf stats export --format csv|llview|parquet [--recover] LOG [-o OUT]\n");
            return c == 'h' ? TOOL_OK : TOOL_USAGE;
        }
    }
    if (optind != argc - 1 || (strcmp(fmt, "csv") && strcmp(fmt, "llview") && strcmp(fmt, "parquet"))) {
        tool_err("usage: sheaf stats export --format csv|llview|parquet [--recover] LOG [-o OUT]");
        return TOOL_USAGE;
    }
    if (!strcmp(fmt, "parquet"))
        return export_parquet(argv[optind], out, recover);
    sm_job m;
    char err[1024];
    if (sm_load(argv[optind], recover ? SHEAF_MONITOR_RECOVER : 0, &m, err, sizeof err)) {
        tool_err("%s", err);
        return TOOL_FAIL;
    }
    FILE *o = out ? fopen(out, "w") : stdout;
    if (!o) {
        tool_err("%s: %s", out, strerror(errno));
        sm_free(&m);
        return TOOL_FAIL;
    }
    if (!strcmp(fmt, "csv"))
        export_csv(o, &m);
    else
        export_llview(o, &m);
    int rc = ferror(o) | (out ? fclose(o) : fflush(o));
    sm_free(&m);
    if (rc) {
        tool_err("%s: writing failed", out ? out : "(stdout)");
        return TOOL_FAIL;
    }
    return TOOL_OK;
}
