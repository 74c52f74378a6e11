/* stats_prom.c - `sheaf stats node`'s sample in the Prometheus text format
 * (node_exporter's textfile collector) or the OpenMetrics text format. Every
 * family is written once, its samples together; counters carry the suffix
 * _total on their samples (and, in the Prometheus format, on the family). Each
 * sample has the label job_id (the batch job, "" when none). */
#include "stats_node.h"

#include <string.h>

static void label(FILE *o, const char *v)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(o, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", o);
        else if (*p < 0x20 || *p == 0x7f)
            fputc('_', o);
        else
            fputc(*p, o);
    }
    fputc('"', o);
}

/* the HELP and TYPE lines of a family */
static void family(FILE *o, const char *name, const char *type, const char *help, int om)
{
    int ctr = !strcmp(type, "counter");
    const char *sfx = ctr && !om ? "_total" : "";
    fprintf(o, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, sfx, help, name, sfx, type);
}

/* one sample: name(_total for counters){job_id="...",k1="v1"[,k2="v2"]} value */
static void sample(FILE *o, const char *name, int ctr, const sn_sample *s, const char *k1, const char *v1,
                   const char *k2, const char *v2, double value, int integer)
{
    fprintf(o, "%s%s{job_id=", name, ctr ? "_total" : "");
    label(o, s->job);
    if (k1) {
        fprintf(o, ",%s=", k1);
        label(o, v1);
    }
    if (k2) {
        fprintf(o, ",%s=", k2);
        label(o, v2);
    }
    if (integer)
        fprintf(o, "} %.0f\n", value);
    else
        fprintf(o, "} %.6f\n", value);
}

static void disks(FILE *o, const sn_sample *s, int om)
{
    static const struct {
        const char *name, *help;
        int field;
        double scale;
    } df[] = {
        {"sheaf_node_disk_reads", "Reads completed (/proc/diskstats).", 0, 1},
        {"sheaf_node_disk_read_bytes", "Bytes read (sectors x 512, /proc/diskstats).", 2, 512},
        {"sheaf_node_disk_read_seconds", "Time spent reading (/proc/diskstats).", 3, 1e-3},
        {"sheaf_node_disk_writes", "Writes completed (/proc/diskstats).", 4, 1},
        {"sheaf_node_disk_written_bytes", "Bytes written (sectors x 512, /proc/diskstats).", 6, 512},
        {"sheaf_node_disk_write_seconds", "Time spent writing (/proc/diskstats).", 7, 1e-3},
        {"sheaf_node_disk_io_seconds", "Time spent doing I/O (/proc/diskstats).", 9, 1e-3},
    };
    for (size_t k = 0; k < sizeof df / sizeof df[0] && s->ndisks; k++) {
        family(o, df[k].name, "counter", df[k].help, om);
        for (int i = 0; i < s->ndisks; i++)
            sample(o, df[k].name, 1, s, "device", s->disks[i].name, NULL, NULL,
                   (double)s->disks[i].f[df[k].field] * df[k].scale, df[k].scale >= 1);
    }
}

static void nfs(FILE *o, const sn_sample *s, int om)
{
    if (!s->nnfs)
        return;
    static const struct {
        const char *name, *help;
        int a, b; /* bytes[a] + bytes[b] (b < 0: none) */
    } nf[] = {
        {"sheaf_node_nfs_read_bytes", "Bytes read by applications, cached and direct (mountstats).", 0, 2},
        {"sheaf_node_nfs_written_bytes", "Bytes written by applications, cached and direct (mountstats).", 1, 3},
        {"sheaf_node_nfs_server_read_bytes", "Bytes read from the server (mountstats).", 4, -1},
        {"sheaf_node_nfs_server_written_bytes", "Bytes written to the server (mountstats).", 5, -1},
    };
    for (size_t k = 0; k < sizeof nf / sizeof nf[0]; k++) {
        family(o, nf[k].name, "counter", nf[k].help, om);
        for (int i = 0; i < s->nnfs; i++) {
            const sn_fs *f = &s->nfs[i];
            double v = (double)f->bytes[nf[k].a] + (nf[k].b >= 0 ? (double)f->bytes[nf[k].b] : 0);
            sample(o, nf[k].name, 1, s, "export", f->src, "mountpoint", f->mnt, v, 1);
        }
    }
    static const struct {
        const char *name, *help;
        int field;
        double scale;
    } of[] = {{"sheaf_node_nfs_ops", "RPC operations per type (mountstats).", 0, 1},
              {"sheaf_node_nfs_rtt_seconds", "RPC round-trip time per type (mountstats).", 6, 1e-3},
              {"sheaf_node_nfs_execute_seconds", "RPC execution time per type (mountstats).", 7, 1e-3}};
    for (size_t k = 0; k < sizeof of / sizeof of[0]; k++) {
        family(o, of[k].name, "counter", of[k].help, om);
        for (int i = 0; i < s->nnfs; i++) {
            const sn_fs *f = &s->nfs[i];
            char lbl[600];
            snprintf(lbl, sizeof lbl, "%s", f->mnt);
            for (int j = 0; j < f->nops; j++)
                sample(o, of[k].name, 1, s, "mountpoint", lbl, "op", f->ops[j].name,
                       (double)f->ops[j].v[of[k].field] * of[k].scale, of[k].scale >= 1);
        }
    }
}

static void lustre(FILE *o, const sn_sample *s, int om)
{
    if (!s->nlus)
        return;
    family(o, "sheaf_node_lustre_read_bytes", "counter", "Bytes read (llite stats read_bytes).", om);
    for (int i = 0; i < s->nlus; i++)
        sample(o, "sheaf_node_lustre_read_bytes", 1, s, "fs", s->lus[i].src, NULL, NULL, (double)s->lus[i].bytes[0], 1);
    family(o, "sheaf_node_lustre_written_bytes", "counter", "Bytes written (llite stats write_bytes).", om);
    for (int i = 0; i < s->nlus; i++)
        sample(o, "sheaf_node_lustre_written_bytes", 1, s, "fs", s->lus[i].src, NULL, NULL, (double)s->lus[i].bytes[1],
               1);
    family(o, "sheaf_node_lustre_ops", "counter", "Operations per type (llite stats samples).", om);
    for (int i = 0; i < s->nlus; i++)
        for (int j = 0; j < s->lus[i].nops; j++)
            sample(o, "sheaf_node_lustre_ops", 1, s, "fs", s->lus[i].src, "op", s->lus[i].ops[j].name,
                   (double)s->lus[i].ops[j].v[0], 1);
}

void sn_print_prom(FILE *o, const sn_sample *s, int om)
{
    family(o, "sheaf_node_sample_time_seconds", "gauge", "When sheaf stats node took this sample (Unix time).", om);
    sample(o, "sheaf_node_sample_time_seconds", 0, s, "host", s->host, NULL, NULL, s->time, 0);
    family(o, "sheaf_node_skipped_lines", "gauge", "Lines of the kernel's files that did not parse.", om);
    sample(o, "sheaf_node_skipped_lines", 0, s, "host", s->host, NULL, NULL, (double)s->skipped, 1);
    disks(o, s, om);
    nfs(o, s, om);
    lustre(o, s, om);
    if (om)
        fputs("# EOF\n", o);
}
