/* stats_node.c - the counters of `sheaf stats node` (stats_node.h): bounded
 * parsers of the kernel's text files and the two printers. */
#include "stats_node.h"

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the whole file (at most SN_FILE_MAX bytes), NUL-terminated; NULL with errno */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap || cap == SN_FILE_MAX)
            break;
        cap = cap * 2 > SN_FILE_MAX ? SN_FILE_MAX : cap * 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
        } else
            buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        errno = bad ? EIO : ENOMEM;
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

/* grow an array to hold one more element, at most SN_MAX_ENTRIES; NULL when full */
static void *more(void *arr, int *cap, int n, size_t elem)
{
    if (n < *cap)
        return arr;
    if (n >= SN_MAX_ENTRIES)
        return NULL;
    int nc = *cap ? 2 * *cap : 16;
    void *na = realloc(arr, (size_t)nc * elem);
    if (na)
        *cap = nc;
    return na;
}

static void note(sn_sample *s, const char *fmt, const char *a, const char *b)
{
    size_t l = strlen(s->notes);
    if (l + 1 < sizeof s->notes)
        snprintf(s->notes + l, sizeof s->notes - l, fmt, a, b);
}

static int parse_disks(sn_sample *s, char *text)
{
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        sn_disk d;
        char name[64];
        int used = 0;
        if (sscanf(line, " %u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu%n", &d.maj, &d.min, name,
                   &d.f[0], &d.f[1], &d.f[2], &d.f[3], &d.f[4], &d.f[5], &d.f[6], &d.f[7], &d.f[8], &d.f[9], &d.f[10],
                   &used) != 14) {
            s->skipped++;
            continue;
        }
        sn_disk *na = more(s->disks, &s->capdisks, s->ndisks, sizeof *na);
        if (!na)
            return -1;
        s->disks = na;
        strcpy(d.name, name);
        s->disks[s->ndisks++] = d;
    }
    return 0;
}

/* the NFS mounts of a mountstats text */
static int parse_nfs(sn_sample *s, char *text)
{
    sn_fs *cur = NULL;
    int in_ops = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char src[512], mnt[512], type[16];
        if (!strncmp(line, "device ", 7)) {
            cur = NULL;
            in_ops = 0;
            if (sscanf(line, "device %511s mounted on %511s with fstype %15s", src, mnt, type) != 3) {
                s->skipped++;
                continue;
            }
            if (strcmp(type, "nfs") && strcmp(type, "nfs4"))
                continue;
            sn_fs *na = more(s->nfs, &s->capnfs, s->nnfs, sizeof *na);
            if (!na)
                return -1;
            s->nfs = na;
            cur = &s->nfs[s->nnfs++];
            memset(cur, 0, sizeof *cur);
            strcpy(cur->src, src);
            strcpy(cur->mnt, mnt);
            strcpy(cur->fstype, type);
            continue;
        }
        if (!cur)
            continue;
        unsigned long long *b = cur->bytes;
        if (sscanf(line, " bytes: %llu %llu %llu %llu %llu %llu %llu %llu", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                   &b[6], &b[7]) == 8)
            continue;
        if (strstr(line, "per-op statistics")) {
            in_ops = 1;
            continue;
        }
        if (!in_ops)
            continue;
        sn_op op;
        unsigned long long *v = op.v;
        if (sscanf(line, " %31[A-Z_0-9]: %llu %llu %llu %llu %llu %llu %llu %llu", op.name, &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) != 9) {
            s->skipped++;
            continue;
        }
        if (cur->nops < SN_MAX_OPS)
            cur->ops[cur->nops++] = op;
    }
    return 0;
}

/* one llite stats file: read_bytes/write_bytes sums, samples per line */
static int parse_llite(sn_sample *s, const char *path, char *text)
{
    sn_fs *na = more(s->lus, &s->caplus, s->nlus, sizeof *na);
    if (!na)
        return -1;
    s->lus = na;
    sn_fs *f = &s->lus[s->nlus++];
    memset(f, 0, sizeof *f);
    /* .../llite/<fsname>-<instance>/stats */
    const char *end = strrchr(path, '/'), *beg = end;
    while (beg && beg > path && beg[-1] != '/')
        beg--;
    snprintf(f->src, sizeof f->src, "%.*s", end && beg ? (int)(end - beg) : 0, beg ? beg : "");
    snprintf(f->mnt, sizeof f->mnt, "%s", path);
    strcpy(f->fstype, "lustre");
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        sn_op op = {{0}, {0}};
        unsigned long long mn, mx, sum;
        char unit[32];
        int n = sscanf(line, "%31s %llu samples [%31[^]]] %llu %llu %llu", op.name, &op.v[0], unit, &mn, &mx, &sum);
        if (n < 3) {
            if (strncmp(line, "snapshot_time", 13) && strncmp(line, "start_time", 10) &&
                strncmp(line, "elapsed_time", 12))
                s->skipped++;
            continue;
        }
        op.v[1] = n == 6 ? sum : 0;
        if (!strcmp(op.name, "read_bytes"))
            f->bytes[0] = op.v[1];
        else if (!strcmp(op.name, "write_bytes"))
            f->bytes[1] = op.v[1];
        if (f->nops < SN_MAX_OPS)
            f->ops[f->nops++] = op;
    }
    return 0;
}

static void take_llite(sn_sample *s, const char *patterns)
{
    char list[4096];
    snprintf(list, sizeof list, "%s", patterns);
    for (char *save, *pat = strtok_r(list, ":", &save); pat; pat = strtok_r(NULL, ":", &save)) {
        glob_t g;
        if (glob(pat, 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            char *text = slurp(g.gl_pathv[i]);
            if (!text) {
                note(s, "%s: %s (Lustre client stats need root here); ", g.gl_pathv[i], strerror(errno));
                continue;
            }
            int rc = parse_llite(s, g.gl_pathv[i], text);
            free(text);
            if (rc)
                break;
        }
        globfree(&g);
    }
}

int sn_sample_take(sn_sample *s, const char *diskstats, const char *mountstats, const char *llite, const char *job,
                   char *err, size_t errlen)
{
    s->ndisks = s->nnfs = s->nlus = 0;
    s->skipped = 0;
    s->notes[0] = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    if (gethostname(s->host, sizeof s->host - 1) != 0)
        strcpy(s->host, "unknown");
    snprintf(s->job, sizeof s->job, "%s", job);
    char *text = slurp(diskstats);
    if (!text) {
        snprintf(err, errlen, "%s: %s", diskstats, strerror(errno));
        return -1;
    }
    int rc = parse_disks(s, text);
    free(text);
    if (rc) {
        snprintf(err, errlen, "%s: more than %d devices, or out of memory", diskstats, SN_MAX_ENTRIES);
        return -1;
    }
    if ((text = slurp(mountstats))) {
        rc = parse_nfs(s, text);
        free(text);
        if (rc)
            note(s, "%s: more than 4096 NFS mounts%s; ", mountstats, "");
    } else {
        note(s, "%s: %s; ", mountstats, strerror(errno));
    }
    take_llite(s, llite);
    return 0;
}

void sn_sample_free(sn_sample *s)
{
    if (!s)
        return;
    free(s->disks);
    free(s->nfs);
    free(s->lus);
    free(s);
}

/* a string as JSON (quote 1) or as a Prometheus label value (quote 0: \\ \" \n escaped) */
static void str_out(FILE *o, const char *v, int json)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(o, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", o);
        else if (json && (*p < 0x20 || *p >= 0x7f))
            fprintf(o, "\\u%04x", *p);
        else if (*p < 0x20)
            fputc('_', o);
        else
            fputc(*p, o);
    }
    fputc('"', o);
}

static void json_fs(FILE *o, const sn_fs *f, int nfs)
{
    fputs("{\"source\":", o);
    str_out(o, f->src, 1);
    fputs(nfs ? ",\"mountpoint\":" : ",\"stats\":", o);
    str_out(o, f->mnt, 1);
    fprintf(o, ",\"fstype\":\"%s\"", f->fstype);
    if (nfs)
        fprintf(o,
                ",\"read_bytes\":%llu,\"write_bytes\":%llu,\"direct_read_bytes\":%llu,\"direct_write_bytes\":%llu,"
                "\"server_read_bytes\":%llu,\"server_write_bytes\":%llu",
                f->bytes[0], f->bytes[1], f->bytes[2], f->bytes[3], f->bytes[4], f->bytes[5]);
    else
        fprintf(o, ",\"read_bytes\":%llu,\"write_bytes\":%llu", f->bytes[0], f->bytes[1]);
    fputs(",\"ops\":{", o);
    for (int i = 0; i < f->nops; i++) {
        const unsigned long long *v = f->ops[i].v;
        fputs(i ? "," : "", o);
        str_out(o, f->ops[i].name, 1); /* Lustre names come from the file as they are */
        fputc(':', o);
        if (nfs)
            fprintf(o,
                    "{\"ops\":%llu,\"timeouts\":%llu,\"bytes_sent\":%llu,\"bytes_recv\":%llu,\"rtt_ms\":%llu,"
                    "\"exe_ms\":%llu}",
                    v[0], v[2], v[3], v[4], v[6], v[7]);
        else
            fprintf(o, "{\"samples\":%llu,\"sum\":%llu}", v[0], v[1]);
    }
    fputs("}}", o);
}

void sn_print_json(FILE *o, const sn_sample *s)
{
    fprintf(o, "{\"time\":%.3f,\"host\":", s->time);
    str_out(o, s->host, 1);
    fputs(",\"job_id\":", o);
    str_out(o, s->job, 1);
    fputs(",\"disks\":[", o);
    for (int i = 0; i < s->ndisks; i++) {
        const sn_disk *d = &s->disks[i];
        fputs(i ? ",{\"device\":" : "{\"device\":", o);
        str_out(o, d->name, 1);
        fprintf(o,
                ",\"major\":%u,\"minor\":%u,\"reads\":%llu,\"read_bytes\":%llu,\"read_ms\":%llu,\"writes\":%llu,"
                "\"write_bytes\":%llu,\"write_ms\":%llu,\"in_flight\":%llu,\"io_ms\":%llu}",
                d->maj, d->min, d->f[0], d->f[2] * 512, d->f[3], d->f[4], d->f[6] * 512, d->f[7], d->f[8], d->f[9]);
    }
    fputs("],\"nfs\":[", o);
    for (int i = 0; i < s->nnfs; i++) {
        fputs(i ? "," : "", o);
        json_fs(o, &s->nfs[i], 1);
    }
    fputs("],\"lustre\":[", o);
    for (int i = 0; i < s->nlus; i++) {
        fputs(i ? "," : "", o);
        json_fs(o, &s->lus[i], 0);
    }
    fprintf(o, "],\"skipped_lines\":%llu,\"notes\":", s->skipped);
    str_out(o, s->notes, 1);
    fputs("}\n", o);
}
