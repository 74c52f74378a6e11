/* stats_report.h - the pieces of `sheaf stats report` (cmd_stats_report.c: the
 * page, the findings, the file table; stats_plots.c: the SVG plots). */
#ifndef SHEAF_TOOLS_STATS_REPORT_H
#define SHEAF_TOOLS_STATS_REPORT_H

#include <stdio.h>

#include "stats_model.h"

#define SR_BINS 60      /* heat map: time bins */
#define SR_HM_ROWS 64   /* heat map: rows at most (ranks grouped beyond) */
#define SR_BAR_ROWS 128 /* per-rank bars at most (ranks grouped beyond) */

void sr_html_text(FILE *o, const char *s);
/* "1.50 MiB" */
const char *sr_human(uint64_t b, char *buf, size_t n);
/* the heat map (bytes per time bin per rank group); *total gets the bytes placed */
int sr_heatmap(FILE *o, const sm_job *m, uint64_t *total);
void sr_rank_bars(FILE *o, const sm_job *m);
/* bytes per storage target: the SR_TGT_BARS largest, the rest in one bar */
#define SR_TGT_BARS 16
void sr_target_bars(FILE *o, const sm_job *m);
void sr_histograms(FILE *o, const sm_job *m);

#endif
