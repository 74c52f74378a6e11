/* stats_plots.c - the SVG plots of `sheaf stats report` (inline, no script):
 * the heat map of bytes per time bin and rank, the bytes per rank, the
 * access-size histograms. Every plot is bounded: SR_BINS x SR_HM_ROWS cells,
 * SR_BAR_ROWS bars (ranks grouped past that), 10 buckets. */
#include "stats_report.h"

#include <stdlib.h>
#include <string.h>

void sr_html_text(FILE *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", o);
            break;
        case '>':
            fputs("&gt;", o);
            break;
        case '&':
            fputs("&amp;", o);
            break;
        case '"':
            fputs("&quot;", o);
            break;
        default:
            if ((unsigned char)*s < 0x20)
                fputc('?', o);
            else
                fputc(*s, o);
        }
    }
}

const char *sr_human(uint64_t b, char *buf, size_t n)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 5) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)b);
    else
        snprintf(buf, n, "%.2f %s", v, u[i]);
    return buf;
}

/* spread b bytes over [t0, t1] into bins of [s, s + w * SR_BINS): exact sum */
static void spread(uint64_t *bins, uint64_t s, uint64_t w, uint64_t t0, uint64_t t1, uint64_t b)
{
    uint64_t end = s + w * SR_BINS < s ? UINT64_MAX : s + w * SR_BINS;
    if (t0 < s)
        t0 = s;
    if (t1 >= end)
        t1 = end - 1;
    if (t1 < t0)
        t1 = t0;
    size_t a = (size_t)((t0 - s) / w), z = (size_t)((t1 - s) / w);
    if (a >= SR_BINS)
        a = SR_BINS - 1;
    if (z >= SR_BINS)
        z = SR_BINS - 1;
    if (a == z || t1 == t0) {
        bins[a] += b;
        return;
    }
    long double len = (long double)(t1 - t0), left = (long double)b;
    uint64_t given = 0;
    for (size_t i = a; i < z; i++) {
        uint64_t lo = s + i * w > t0 ? s + i * w : t0, hi = s + (i + 1) * w;
        uint64_t part = (uint64_t)(left * (long double)(hi - lo) / len);
        if (part > b - given) /* hostile times: never more than the segment's bytes */
            part = b - given;
        bins[i] += part;
        given += part;
    }
    bins[z] += b - given;
}

static const char *heat_color(uint64_t v, uint64_t max, char *buf, size_t n)
{
    /* white (none) to dark blue, on a square-root scale */
    double f = max ? (double)v / (double)max : 0;
    if (f > 0 && f < 1) {
        double r = f;
        for (int i = 0; i < 20; i++) /* sqrt without libm */
            r = 0.5 * (r + f / r);
        f = r;
    }
    int r = (int)(235 - 210 * f), g = (int)(240 - 150 * f), b = (int)(250 - 90 * f);
    snprintf(buf, n, "rgb(%d,%d,%d)", r, g, b);
    return buf;
}

static void heat_cells(FILE *o, const sm_job *m, const uint64_t *cells, size_t groups, uint64_t w)
{
    uint64_t max = 0;
    for (size_t i = 0; i < groups * SR_BINS; i++)
        max = cells[i] > max ? cells[i] : max;
    int cw = 12, ch = groups > 32 ? 6 : 14, x0 = 90, y0 = 10;
    for (size_t g = 0; g < groups; g++) {
        size_t r0 = g * m->nrows / groups, r1 = (g + 1) * m->nrows / groups - 1;
        char l0[48], l1[48];
        sm_row_label(&m->rows[r0], l0, sizeof l0);
        sm_row_label(&m->rows[r1], l1, sizeof l1);
        if (ch >= 10 || g % 8 == 0)
            fprintf(o, "<text x=\"%d\" y=\"%zu\" class=\"lbl\" text-anchor=\"end\">%s%s%s</text>\n", x0 - 4,
                    y0 + g * ch + ch - 3, l0, r1 > r0 ? "-" : "", r1 > r0 ? l1 + (l1[0] == 'r' ? 5 : 4) : "");
        for (size_t b = 0; b < SR_BINS; b++) {
            uint64_t v = cells[g * SR_BINS + b];
            if (!v)
                continue;
            char col[32];
            fprintf(o,
                    "<rect class=\"hm-cell\" x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                    "data-bytes=\"%llu\"><title>%s%s%s, %.3f-%.3f s: %llu bytes</title></rect>\n",
                    x0 + b * cw, y0 + g * ch, cw, ch, heat_color(v, max, col, sizeof col), (unsigned long long)v, l0,
                    r1 > r0 ? " to " : "", r1 > r0 ? l1 : "", (double)(b * w) / 1e9, (double)((b + 1) * w) / 1e9,
                    (unsigned long long)v);
        }
    }
    fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%zu\" fill=\"none\" stroke=\"#888\"/>\n", x0, y0,
            cw * SR_BINS, groups * ch);
    fprintf(o, "<text x=\"%d\" y=\"%zu\" class=\"lbl\">0 s</text>", x0, y0 + groups * ch + 14);
    fprintf(o, "<text x=\"%d\" y=\"%zu\" class=\"lbl\" text-anchor=\"end\">%.3f s (bin %.3f s)</text>\n",
            x0 + cw * SR_BINS, y0 + groups * ch + 14, (double)(w * SR_BINS) / 1e9, (double)w / 1e9);
}

int sr_heatmap(FILE *o, const sm_job *m, uint64_t *total)
{
    *total = 0;
    size_t groups = m->nrows < SR_HM_ROWS ? m->nrows : SR_HM_ROWS;
    if (!groups || !m->t1) {
        fputs("<p class=\"none\">No timed I/O in the log: no heat map.</p>\n", o);
        return 0;
    }
    uint64_t w = (m->t1 - m->t0) / SR_BINS + 1;
    uint64_t *cells = calloc(groups * SR_BINS, sizeof *cells);
    if (!cells)
        return -1;
    for (size_t p = 0; p < m->nprocs; p++) {
        sheaf_monitor_proc_info pi;
        sheaf_monitor_proc(m->job, p, &pi);
        size_t g = m->proc_row[p] * groups / m->nrows;
        for (size_t i = 0; i < pi.nsegments; i++) {
            sheaf_monitor_seg s;
            sheaf_monitor_segment(m->job, p, i, &s);
            spread(cells + g * SR_BINS, m->t0, w, s.t0_ns, s.t1_ns, s.bytes_read + s.bytes_written);
            *total += s.bytes_read + s.bytes_written;
        }
    }
    int ch = groups > 32 ? 6 : 14;
    fprintf(o,
            "<svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
            "data-total=\"%llu\" data-rows=\"%zu\" data-bins=\"%d\">\n",
            90 + 12 * SR_BINS + 10, 10 + groups * ch + 24, (unsigned long long)*total, groups, SR_BINS);
    heat_cells(o, m, cells, groups, w);
    fputs("</svg>\n", o);
    free(cells);
    return 0;
}

void sr_rank_bars(FILE *o, const sm_job *m)
{
    size_t groups = m->nrows < SR_BAR_ROWS ? m->nrows : SR_BAR_ROWS;
    if (!groups)
        return;
    uint64_t gr[SR_BAR_ROWS] = {0}, gw[SR_BAR_ROWS] = {0}, max = 0;
    for (size_t r = 0; r < m->nrows; r++) {
        size_t g = r * groups / m->nrows;
        gr[g] += m->rows[r].c[sm_ix[SM_BYTES_READ]];
        gw[g] += m->rows[r].c[sm_ix[SM_BYTES_WRITTEN]];
    }
    for (size_t g = 0; g < groups; g++)
        max = gr[g] + gw[g] > max ? gr[g] + gw[g] : max;
    int bh = groups > 32 ? 4 : 16, x0 = 90, width = 520;
    fprintf(o, "<svg id=\"rankbars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\">\n",
            x0 + width + 120, groups * (bh + 2) + 10);
    for (size_t g = 0; g < groups; g++) {
        size_t r0 = g * m->nrows / groups, r1 = (g + 1) * m->nrows / groups - 1;
        char l0[48], l1[48], h[32];
        sm_row_label(&m->rows[r0], l0, sizeof l0);
        sm_row_label(&m->rows[r1], l1, sizeof l1);
        int y = 5 + (int)g * (bh + 2);
        double fr = max ? (double)gr[g] / (double)max : 0, fw = max ? (double)gw[g] / (double)max : 0;
        if (bh >= 10)
            fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"end\">%s</text>", x0 - 4, y + bh - 3, l0);
        fprintf(o,
                "<g class=\"rank-bar\" data-rank=\"%s\" data-bytes=\"%llu\"><title>%s%s%s: %llu bytes read, %llu "
                "written</title>",
                l0, (unsigned long long)(gr[g] + gw[g]), l0, r1 > r0 ? " to " : "", r1 > r0 ? l1 : "",
                (unsigned long long)gr[g], (unsigned long long)gw[g]);
        fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"rd\"/>", x0, y, fr * width, bh);
        fprintf(o, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"wr\"/></g>", x0 + fr * width, y,
                fw * width, bh);
        if (bh >= 10)
            fprintf(o, "<text x=\"%.1f\" y=\"%d\" class=\"lbl\">%s</text>", x0 + (fr + fw) * width + 4, y + bh - 3,
                    sr_human(gr[g] + gw[g], h, sizeof h));
        fputc('\n', o);
    }
    fputs("</svg>\n", o);
}

static void histogram(FILE *o, const sm_job *m, int first, const char *id, const char *title)
{
    uint64_t max = 0;
    for (int b = 0; b < SM_HIST_N; b++)
        max = m->tot[first + b] > max ? m->tot[first + b] : max;
    int bw = 48, h = 120, y0 = 20;
    fprintf(o,
            "<figure><figcaption>%s</figcaption><svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\">\n",
            title, id, SM_HIST_N * bw + 20, h + y0 + 30);
    for (int b = 0; b < SM_HIST_N; b++) {
        uint64_t v = m->tot[first + b];
        double f = max ? (double)v / (double)max : 0;
        int x = 10 + b * bw;
        fprintf(o,
                "<g class=\"hist-bar\" data-bucket=\"%s\" data-count=\"%llu\"><title>%s bytes: %llu requests</title>"
                "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" class=\"%s\"/></g>",
                sm_hist_labels[b], (unsigned long long)v, sm_hist_labels[b], (unsigned long long)v, x, y0 + h - f * h,
                bw - 6, f * h, first == sm_ix[SM_HIST_READ] ? "rd" : "wr");
        if (v)
            fprintf(o, "<text x=\"%d\" y=\"%.1f\" class=\"lbl\">%llu</text>", x, y0 + h - f * h - 3,
                    (unsigned long long)v);
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"lbl sm\">%s</text>\n", x, y0 + h + 14, sm_hist_labels[b]);
    }
    fputs("</svg></figure>\n", o);
}

void sr_histograms(FILE *o, const sm_job *m)
{
    fputs("<div class=\"row\">\n", o);
    histogram(o, m, sm_ix[SM_HIST_READ], "hist-read", "read requests by size (bytes)");
    histogram(o, m, sm_ix[SM_HIST_WRITE], "hist-write", "write requests by size (bytes)");
    fputs("</div>\n", o);
}

void sr_target_bars(FILE *o, const sm_job *m)
{
    size_t shown = m->ntgts < SR_TGT_BARS ? m->ntgts : SR_TGT_BARS, bars = shown + (m->ntgts > shown);
    uint64_t rest_r = 0, rest_w = 0, max = 0;
    for (size_t i = shown; i < m->ntgts; i++) {
        rest_r += m->tgts[i].bytes_read;
        rest_w += m->tgts[i].bytes_written;
    }
    for (size_t i = 0; i < shown; i++) {
        uint64_t b = m->tgts[i].bytes_read + m->tgts[i].bytes_written;
        max = b > max ? b : max;
    }
    max = rest_r + rest_w > max ? rest_r + rest_w : max;
    int bh = 16, x0 = 10, width = 520;
    fprintf(o, "<svg id=\"targetbars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\">\n",
            x0 + width + 120, bars * (2 * bh + 4) + 10);
    for (size_t i = 0; i < bars; i++) {
        const char *name = i < shown ? m->tgts[i].name : NULL;
        uint64_t r = i < shown ? m->tgts[i].bytes_read : rest_r, w = i < shown ? m->tgts[i].bytes_written : rest_w;
        int y = 5 + (int)i * (2 * bh + 4);
        char h[32], more[64];
        snprintf(more, sizeof more, "(%zu more targets)", m->ntgts - shown);
        double fr = max ? (double)r / (double)max : 0, fw = max ? (double)w / (double)max : 0;
        fputs("<g class=\"target-bar\" data-target=\"", o);
        sr_html_text(o, name ? name : more);
        fprintf(o, "\" data-bytes-read=\"%llu\" data-bytes-written=\"%llu\"><title>", (unsigned long long)r,
                (unsigned long long)w);
        sr_html_text(o, name ? name : more);
        fprintf(o, " (%s): %llu bytes read, %llu written</title>", i < shown ? m->tgts[i].fstype : "folded",
                (unsigned long long)r, (unsigned long long)w);
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"lbl\">", x0, y + bh - 4);
        sr_html_text(o, name ? name : more);
        fputs("</text>", o);
        fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"rd\"/>", x0, y + bh, fr * width,
                bh - 2);
        fprintf(o, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"wr\"/>", x0 + fr * width, y + bh,
                fw * width, bh - 2);
        fprintf(o, "<text x=\"%.1f\" y=\"%d\" class=\"lbl\">%s</text></g>\n", x0 + (fr + fw) * width + 4,
                y + 2 * bh - 4, sr_human(r + w, h, sizeof h));
    }
    fputs("</svg>\n", o);
}
