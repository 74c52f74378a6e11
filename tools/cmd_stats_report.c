/* cmd_stats_report.c - `sheaf stats report [--recover] [--top N] LOG -o job.html`:
 * one self-contained HTML page (inline CSS and SVG, no script, nothing fetched)
 * with the job's totals, findings with the numbers that triggered them (in
 * the spirit of Drishti), the heat map of bytes per time bin and rank, the
 * bytes per rank (worst rank, imbalance, ranks with I/O), the access-size
 * histograms and the per-file table (top N by bytes, the rest folded into one
 * row). doc/monitor.md, "Reports". */
#include "common.h"
#include "stats_report.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define SR_TOP_DEFAULT 20
#define SR_TOP_MAX 1000

/* the thresholds of the findings */
#define SR_SMALL 10240   /* a request under 10 KiB is small */
#define SR_MIN_OPS 100   /* a pattern is reported from this many operations on */
#define SR_SHARE_PCT 10  /* ... making more than this share of the requests */
#define SR_HOT_PCT 50    /* one file moving more than this share of the bytes */
#define SR_IMBALANCE 1.5 /* busiest rank over the mean */
#define SR_STRAGGLER 2.0 /* a rank's I/O time over the median */
#define SR_STRAGGLER_NS 10000000ull

static const char *const css =
    "body{font:14px sans-serif;margin:20px;color:#222;max-width:1140px}h1{font-size:20px}h2{font-size:16px;"
    "border-bottom:1px solid #ccc;margin-top:28px}table{border-collapse:collapse}td,th{padding:3px 8px;"
    "border-bottom:1px solid #eee;text-align:right}td.n,th.n{text-align:left;font-family:monospace}"
    ".lbl{font:11px sans-serif;fill:#333}.sm{font-size:9px}.rd{fill:#4a90d9}.wr{fill:#e8893a}"
    ".finding{margin:6px 0;padding:6px 10px;border-left:4px solid #e0a000;background:#fff8e6}"
    ".finding.high{border-color:#d03030;background:#fdeeee}.finding.info{border-color:#4a90d9;background:#eef5fd}"
    ".ev{color:#555;font-size:13px}.row{display:flex;gap:20px;flex-wrap:wrap}figure{margin:0}"
    ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}";

static void finding(FILE *o, int *n, const char *level, const char *id, const char *title, const char *ev)
{
    fprintf(o, "<li class=\"finding %s\" data-finding=\"%s\"><b>", level, id);
    sr_html_text(o, title);
    fputs("</b><br><span class=\"ev\">", o);
    sr_html_text(o, ev);
    fputs("</span></li>\n", o);
    (*n)++;
}

static uint64_t small_ops(const uint64_t *c)
{
    uint64_t s = 0;
    for (int b = 0; b < 3; b++) /* 0-100, 100-1K, 1K-10K: under SR_SMALL */
        s += c[sm_ix[SM_HIST_READ] + b] + c[sm_ix[SM_HIST_WRITE] + b];
    return s;
}

static uint64_t meta_ops(const uint64_t *c)
{
    return c[sm_ix[SM_OPENS]] + c[sm_ix[SM_STATS]] + c[sm_ix[SM_SEEKS]] + c[sm_ix[SM_FSYNCS]];
}

/* requests: small ones, unaligned ones (each with the file that has most of them) */
static void find_requests(FILE *o, const sm_job *m, int *n)
{
    uint64_t ops = m->tot[sm_ix[SM_READS]] + m->tot[sm_ix[SM_WRITES]];
    uint64_t small = small_ops(m->tot), unal = m->tot[sm_ix[SM_FILE_NOT_ALIGNED]];
    char t[512], ev[1024];
    if (small >= SR_MIN_OPS && small * 100 > ops * SR_SHARE_PCT) {
        size_t top = 0;
        for (size_t i = 1; i < m->nfiles; i++)
            top = small_ops(m->files[i].c) > small_ops(m->files[top].c) ? i : top;
        snprintf(t, sizeof t, "Small requests: %llu of %llu read/write requests (%.1f%%) are under 10 KiB",
                 (unsigned long long)small, (unsigned long long)ops, 100.0 * (double)small / (double)ops);
        snprintf(ev, sizeof ev,
                 "Most are in %s (%llu small requests). Threshold: %d or more small requests and more than %d%% of "
                 "all. Buffer them (larger writes, collective or aggregated I/O).",
                 m->files[top].name, (unsigned long long)small_ops(m->files[top].c), SR_MIN_OPS, SR_SHARE_PCT);
        finding(o, n, "high", "small-requests", t, ev);
    }
    if (unal >= SR_MIN_OPS && unal * 100 > ops * SR_SHARE_PCT) {
        size_t top = 0;
        for (size_t i = 1; i < m->nfiles; i++)
            top = m->files[i].c[sm_ix[SM_FILE_NOT_ALIGNED]] > m->files[top].c[sm_ix[SM_FILE_NOT_ALIGNED]] ? i : top;
        snprintf(t, sizeof t, "Unaligned requests: %llu of %llu requests (%.1f%%) start off the file alignment",
                 (unsigned long long)unal, (unsigned long long)ops, 100.0 * (double)unal / (double)ops);
        snprintf(ev, sizeof ev,
                 "Most are in %s (%llu). Alignment: SHEAF_MONITOR_ALIGN (default 4096 bytes). Threshold: %d or more "
                 "and more than %d%% of all requests.",
                 m->files[top].name, (unsigned long long)m->files[top].c[sm_ix[SM_FILE_NOT_ALIGNED]], SR_MIN_OPS,
                 SR_SHARE_PCT);
        finding(o, n, "warn", "unaligned", t, ev);
    }
}

/* one file taking most bytes; a file with a metadata storm */
static void find_files(FILE *o, const sm_job *m, int *n)
{
    uint64_t all = sm_bytes(m->tot);
    char t[512], ev[1024];
    if (m->nfiles >= 2 && all && sm_bytes(m->files[0].c) * 100 > all * SR_HOT_PCT) {
        uint64_t b = sm_bytes(m->files[0].c);
        snprintf(t, sizeof t, "One file takes most bytes: %s moved %llu of %llu bytes (%.1f%%)", m->files[0].name,
                 (unsigned long long)b, (unsigned long long)all, 100.0 * (double)b / (double)all);
        snprintf(ev, sizeof ev,
                 "%llu files in the job; threshold: more than %d%% of the bytes in one. Its storage target "
                 "carries that share of the job's load; stripe it wider or spread it over files.",
                 (unsigned long long)m->nfiles, SR_HOT_PCT);
        finding(o, n, "warn", "hot-file", t, ev);
    }
    size_t top = 0, storms = 0;
    for (size_t i = 0; i < m->nfiles; i++) {
        const uint64_t *c = m->files[i].c;
        if (meta_ops(c) >= SR_MIN_OPS && meta_ops(c) > c[sm_ix[SM_READS]] + c[sm_ix[SM_WRITES]]) {
            if (!storms || meta_ops(c) > meta_ops(m->files[top].c))
                top = i;
            storms++;
        }
    }
    if (storms) {
        const uint64_t *c = m->files[top].c;
        snprintf(t, sizeof t, "Metadata storm: %s had %llu metadata operations and %llu reads/writes",
                 m->files[top].name, (unsigned long long)meta_ops(c),
                 (unsigned long long)(c[sm_ix[SM_READS]] + c[sm_ix[SM_WRITES]]));
        snprintf(ev, sizeof ev,
                 "%llu opens, %llu stats, %llu seeks, %llu fsyncs, %.3f s in metadata calls; %zu file(s) with %d "
                 "or more metadata operations outnumbering their reads and writes. Open once, cache stat results.",
                 (unsigned long long)c[sm_ix[SM_OPENS]], (unsigned long long)c[sm_ix[SM_STATS]],
                 (unsigned long long)c[sm_ix[SM_SEEKS]], (unsigned long long)c[sm_ix[SM_FSYNCS]],
                 (double)c[sm_ix[SM_META_NS]] / 1e9, storms, SR_MIN_OPS);
        finding(o, n, "high", "metadata-storm", t, ev);
    }
}

static uint64_t row_ns(const sm_row *r)
{
    return r->c[sm_ix[SM_READ_NS]] + r->c[sm_ix[SM_WRITE_NS]] + r->c[sm_ix[SM_META_NS]];
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* the busiest rank against the mean; ranks far slower than the median */
static void find_ranks(FILE *o, const sm_job *m, int *n)
{
    if (m->nstat < 2)
        return;
    size_t worst = 0, slow = 0, nslow = 0;
    uint64_t *ns = malloc(m->nstat * sizeof *ns);
    if (!ns)
        return;
    for (size_t r = 0; r < m->nstat; r++) {
        worst = sm_bytes(m->rows[r].c) > sm_bytes(m->rows[worst].c) ? r : worst;
        ns[r] = row_ns(&m->rows[r]);
    }
    qsort(ns, m->nstat, sizeof *ns, cmp_u64);
    uint64_t median = ns[m->nstat / 2];
    free(ns);
    char t[512], ev[1024], lbl[48];
    double mean = (double)m->stat_bytes / (double)m->nstat;
    if (mean > 0 && (double)sm_bytes(m->rows[worst].c) > SR_IMBALANCE * mean) {
        sm_row_label(&m->rows[worst], lbl, sizeof lbl);
        snprintf(t, sizeof t, "Load imbalance: %s moved %llu bytes, %.2fx the mean of %.0f bytes per rank", lbl,
                 (unsigned long long)sm_bytes(m->rows[worst].c), (double)sm_bytes(m->rows[worst].c) / mean, mean);
        snprintf(ev, sizeof ev, "%zu ranks; threshold: the busiest rank over %.1fx the mean.", m->nstat, SR_IMBALANCE);
        finding(o, n, "warn", "imbalance", t, ev);
    }
    for (size_t r = 0; r < m->nstat; r++) {
        uint64_t v = row_ns(&m->rows[r]);
        if (v > SR_STRAGGLER_NS && (double)v > SR_STRAGGLER * (double)median) {
            slow = !nslow || v > row_ns(&m->rows[slow]) ? r : slow;
            nslow++;
        }
    }
    if (nslow) {
        sm_row_label(&m->rows[slow], lbl, sizeof lbl);
        snprintf(t, sizeof t, "Straggler: %s spent %.3f s in I/O calls, the median rank %.3f s", lbl,
                 (double)row_ns(&m->rows[slow]) / 1e9, (double)median / 1e9);
        snprintf(ev, sizeof ev, "%zu rank(s) over %.1fx the median and over %.3f s of I/O time.", nslow, SR_STRAGGLER,
                 (double)SR_STRAGGLER_NS / 1e9);
        finding(o, n, "warn", "straggler", t, ev);
    }
}

static void findings(FILE *o, const sm_job *m)
{
    int n = 0;
    fputs("<h2>Findings</h2>\n<ul id=\"findings\" style=\"list-style:none;padding:0\">\n", o);
    find_requests(o, m, &n);
    find_files(o, m, &n);
    find_ranks(o, m, &n);
    if (m->aggregates) {
        char t[256], ev[256];
        snprintf(t, sizeof t, "%llu opens past the file-record budget were folded into %llu aggregates",
                 (unsigned long long)m->folded_opens, (unsigned long long)m->aggregates);
        snprintf(ev, sizeof ev,
                 "Their bytes and operations are in the totals; raise SHEAF_MONITOR_MAX_FILES "
                 "to see them one by one.");
        finding(o, &n, "info", "folded", t, ev);
    }
    if (!n)
        fputs("<li class=\"finding info\" data-finding=\"none\">Nothing stood out.</li>\n", o);
    fputs("</ul>\n", o);
}

static void totals(FILE *o, const sm_job *m, const char *log)
{
    char h1[32], h2[32];
    fputs("<h1>I/O report: ", o);
    sr_html_text(o, log);
    fputs("</h1>\n<table id=\"totals\">\n", o);
    fprintf(o, "<tr><th class=\"n\">processes</th><td id=\"t-procs\">%zu</td></tr>\n", m->nprocs);
    fprintf(o, "<tr><th class=\"n\">ranks</th><td id=\"t-ranks\">%zu</td><td>%s</td></tr>\n", m->nstat,
            m->nstat < m->nrows ? "and processes without a rank (launchers, shells): a row each" : "");
    fprintf(o, "<tr><th class=\"n\">files</th><td id=\"t-files\">%llu</td></tr>\n", (unsigned long long)m->own_files);
    fprintf(o, "<tr><th class=\"n\">bytes read</th><td id=\"t-read\">%llu</td><td>%s</td></tr>\n",
            (unsigned long long)m->tot[sm_ix[SM_BYTES_READ]], sr_human(m->tot[sm_ix[SM_BYTES_READ]], h1, sizeof h1));
    fprintf(o, "<tr><th class=\"n\">bytes written</th><td id=\"t-written\">%llu</td><td>%s</td></tr>\n",
            (unsigned long long)m->tot[sm_ix[SM_BYTES_WRITTEN]],
            sr_human(m->tot[sm_ix[SM_BYTES_WRITTEN]], h2, sizeof h2));
    fprintf(o,
            "<tr><th class=\"n\">reads / writes / opens / stats</th><td id=\"t-ops\">%llu / %llu / %llu / %llu</td>"
            "</tr>\n",
            (unsigned long long)m->tot[sm_ix[SM_READS]], (unsigned long long)m->tot[sm_ix[SM_WRITES]],
            (unsigned long long)m->tot[sm_ix[SM_OPENS]], (unsigned long long)m->tot[sm_ix[SM_STATS]]);
    fprintf(o,
            "<tr><th class=\"n\">time in I/O calls (s): read / write / metadata</th><td>%.3f / %.3f / %.3f</td>"
            "</tr>\n",
            (double)m->tot[sm_ix[SM_READ_NS]] / 1e9, (double)m->tot[sm_ix[SM_WRITE_NS]] / 1e9,
            (double)m->tot[sm_ix[SM_META_NS]] / 1e9);
    fprintf(o, "<tr><th class=\"n\">span of timed I/O (s)</th><td>%.3f</td></tr>\n</table>\n",
            m->t1 ? (double)(m->t1 - m->t0) / 1e9 : 0.0);
}

static void ranks(FILE *o, const sm_job *m)
{
    size_t worst = 0, with_io = 0;
    for (size_t r = 0; r < m->nstat; r++) {
        worst = sm_bytes(m->rows[r].c) > sm_bytes(m->rows[worst].c) ? r : worst;
        with_io += sm_bytes(m->rows[r].c) != 0;
    }
    char lbl[48] = "-";
    if (m->nstat)
        sm_row_label(&m->rows[worst], lbl, sizeof lbl);
    double mean = m->nstat ? (double)m->stat_bytes / (double)m->nstat : 0;
    fputs("<h2>Bytes per rank</h2>\n", o);
    fprintf(o,
            "<p id=\"rank-stats\">%s with non-zero I/O: <b id=\"ranks-io\">%zu</b> of %zu. Worst rank: <b "
            "id=\"worst-rank\">%s</b> with <b id=\"worst-bytes\">%llu</b> bytes; mean %.0f bytes; imbalance "
            "(max/mean) <b id=\"imbalance\">%.2f</b>.</p>\n",
            m->nstat < m->nrows ? "Ranks (processes with a rank)" : "Ranks", with_io, m->nstat, lbl,
            m->nstat ? (unsigned long long)sm_bytes(m->rows[worst].c) : 0ull, mean,
            mean > 0 ? (double)sm_bytes(m->rows[worst].c) / mean : 0.0);
    fputs("<p class=\"key\"><span class=\"rd\" style=\"background:#4a90d9\"></span>read<span "
          "style=\"background:#e8893a\"></span>written</p>\n",
          o);
    sr_rank_bars(o, m);
}

static void file_row(FILE *o, const sm_job *m, const sm_file *f)
{
    char lbl[48] = "-", h[32];
    if (f->worst_row >= 0)
        sm_row_label(&m->rows[f->worst_row], lbl, sizeof lbl);
    fputs("<tr class=\"file\"><td class=\"n\">", o);
    sr_html_text(o, f->name);
    if (f->kind != SHEAF_MONITOR_KIND_FILE)
        fprintf(o, " (%s, %llu opens folded)", f->kind == SHEAF_MONITOR_KIND_DIR ? "directory" : "other",
                (unsigned long long)f->c[sm_ix[SM_FILES]]);
    fprintf(o,
            "</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%s</td><td>%u</td><td>%s"
            "</td><td>%.3f</td></tr>\n",
            (unsigned long long)f->c[sm_ix[SM_OPENS]], (unsigned long long)f->c[sm_ix[SM_READS]],
            (unsigned long long)f->c[sm_ix[SM_WRITES]], (unsigned long long)f->c[sm_ix[SM_BYTES_READ]],
            (unsigned long long)f->c[sm_ix[SM_BYTES_WRITTEN]], sr_human(sm_bytes(f->c), h, sizeof h), f->ranks_io, lbl,
            (double)(f->c[sm_ix[SM_READ_NS]] + f->c[sm_ix[SM_WRITE_NS]] + f->c[sm_ix[SM_META_NS]]) / 1e9);
}

static void file_table(FILE *o, const sm_job *m, size_t top)
{
    fprintf(o, "<h2>Files (top %zu by bytes moved)</h2>\n<table id=\"files\">\n", top);
    fputs("<tr><th class=\"n\">file</th><th>opens</th><th>reads</th><th>writes</th><th>bytes read</th><th>bytes "
          "written</th><th>moved</th><th>ranks with I/O</th><th>worst rank</th><th>I/O time s</th></tr>\n",
          o);
    size_t shown = m->nfiles < top ? m->nfiles : top;
    for (size_t i = 0; i < shown; i++)
        file_row(o, m, &m->files[i]);
    if (m->nfiles > shown) {
        sm_file rest = {.kind = SHEAF_MONITOR_KIND_FILE, .worst_row = -1};
        char name[96];
        for (size_t i = shown; i < m->nfiles; i++)
            for (int k = 0; k < m->nc; k++)
                if (sheaf_monitor_counter_merge(k) == 0)
                    rest.c[k] += m->files[i].c[k];
        snprintf(name, sizeof name, "(%zu more files)", m->nfiles - shown);
        rest.name = name;
        file_row(o, m, &rest);
    }
    fputs("</table>\n", o);
}

static int write_page(FILE *o, const sm_job *m, const char *log, size_t top)
{
    fprintf(o,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>sheaf stats report</title>"
            "<style>%s</style></head><body>\n",
            css);
    totals(o, m, log);
    findings(o, m);
    fputs("<h2>Bytes over time per rank</h2>\n<p>Bytes moved per time bin and rank, from the log's snapshots "
          "(each record's bytes between its last-operation times). Darker: more bytes.</p>\n",
          o);
    uint64_t placed;
    if (sr_heatmap(o, m, &placed))
        return -1;
    ranks(o, m);
    if (m->ntgts) {
        fprintf(o,
                "<h2>Bytes per storage target</h2>\n<p id=\"target-stats\">%zu storage target(s): the file "
                "systems the job's files are on, by their global names (doc/monitor.md, \"Storage "
                "targets\").</p>\n",
                m->ntgts);
        sr_target_bars(o, m);
    }
    fputs("<h2>Access sizes</h2>\n", o);
    sr_histograms(o, m);
    file_table(o, m, top);
    const char *notes = sheaf_monitor_notes(m->job);
    if (notes && *notes) {
        fputs("<h2>Notes</h2><pre>", o);
        sr_html_text(o, notes);
        fputs("</pre>\n", o);
    }
    fputs("<p class=\"ev\">Made by sheaf stats report.</p></body></html>\n", o);
    return 0;
}

int cmd_stats_report(int argc, char **argv)
{
    static const struct option lo[] = {
        {"recover", no_argument, 0, 'r'}, {"top", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'}, {0}};
    const char *out = NULL;
    int recover = 0, c;
    long top = SR_TOP_DEFAULT;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'r':
            recover = 1;
            break;
        case 't':
            top = strtol(optarg, &end, 10);
            if (*end || top < 1 || top > SR_TOP_MAX) {
                tool_err("--top takes a number from 1 to %d", SR_TOP_MAX);
                return TOOL_USAGE;
            }
            break;
        case 'h':
            printf("usage: sheaf stats report [--recover] [--top N] LOG -o OUT.html\n");
            return TOOL_OK;
        default:
            return TOOL_USAGE;
        }
    }
    if (optind != argc - 1 || !out) {
        tool_err("usage: sheaf stats report [--recover] [--top N] LOG -o OUT.html");
        return TOOL_USAGE;
    }
    sm_job m;
    char err[1024];
    if (sm_load(argv[optind], recover ? SHEAF_MONITOR_RECOVER : 0, &m, err, sizeof err)) {
        tool_err("%s", err);
        return TOOL_FAIL;
    }
    FILE *o = fopen(out, "w");
    if (!o) {
        tool_err("%s: %s", out, strerror(errno));
        sm_free(&m);
        return TOOL_FAIL;
    }
    int rc = write_page(o, &m, argv[optind], (size_t)top);
    rc |= ferror(o);
    rc |= fclose(o);
    sm_free(&m);
    if (rc) {
        tool_err("%s: writing the report failed", out);
        return TOOL_FAIL;
    }
    return TOOL_OK;
}
