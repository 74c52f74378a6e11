/* reader.c - read a job's monitor logs (include/sheaf_monitor.h): every
 * record is unpacked and checked (record.c), ids are bounded by the budget
 * the log's HEAD declares, names by MON_NAME_MAX, so the memory taken is
 * bounded by the input. */
#define _GNU_SOURCE
#include "reader.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sheaf.h"
#include "sion.h"
#include "sion_serial.h"

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static void note(sheaf_monitor_job *job, const char *fmt, ...)
{
    size_t used = strlen(job->notes);
    if (used + 1 >= sizeof job->notes)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(job->notes + used, sizeof job->notes - used, fmt, ap);
    va_end(ap);
}

mr_proc *mr_job_add(sheaf_monitor_job *job)
{
    if (job->nprocs == job->cap) {
        size_t cap = job->cap ? 2 * job->cap : 8;
        mr_proc *np = realloc(job->procs, cap * sizeof *np);
        if (!np)
            return NULL;
        job->procs = np;
        job->cap = cap;
    }
    mr_proc *p = &job->procs[job->nprocs++];
    memset(p, 0, sizeof *p);
    return p;
}

void mr_proc_free(mr_proc *p)
{
    for (uint32_t i = 0; i < p->cap; i++)
        if (p->ents[i]) {
            free(p->ents[i]->name);
            free(p->ents[i]);
        }
    free(p->ents);
    free(p->log);
    free(p->tgts);
    free(p->segs);
}

void sheaf_monitor_free(sheaf_monitor_job *job)
{
    if (!job)
        return;
    for (size_t i = 0; i < job->nprocs; i++)
        mr_proc_free(&job->procs[i]);
    free(job->procs);
    free(job);
}

/* the entry of id, created; NULL with a message when id is out of bounds or memory ran out */
static mr_entry *entry(mr_proc *p, uint32_t id, char *err, size_t errlen)
{
    if (id >= p->limit) {
        fail(err, errlen, 0, "record id %u past the log's budget of %u records", id, p->limit);
        return NULL;
    }
    if (id >= p->cap) {
        uint32_t cap = p->cap ? p->cap : 64;
        while (cap <= id)
            cap *= 2;
        if (cap > p->limit)
            cap = p->limit;
        mr_entry **ne = realloc(p->ents, (size_t)cap * sizeof *ne);
        if (!ne) {
            fail(err, errlen, 0, "out of memory for %u record slots", cap);
            return NULL;
        }
        memset(ne + p->cap, 0, (size_t)(cap - p->cap) * sizeof *ne);
        p->ents = ne;
        p->cap = cap;
    }
    if (!p->ents[id]) {
        mr_entry *e = calloc(1, sizeof *e);
        if (!e) {
            fail(err, errlen, 0, "out of memory");
            return NULL;
        }
        e->id = id;
        e->kind = id < p->head.max_files                      ? MON_K_FILE
                  : id < p->head.max_files + p->head.max_dirs ? MON_K_DIR
                                                              : MON_K_OTHER;
        /* version 2: one "(other)" per target, each bound to its target */
        if (e->kind == MON_K_OTHER && p->head.version >= 2)
            e->tgt = id - (p->head.max_files + p->head.max_dirs) + 1;
        p->ents[id] = e;
        p->nents++;
    }
    return p->ents[id];
}

int mr_feed(mr_proc *p, const mon_rec *r, char *err, size_t errlen)
{
    p->records++;
    if (r->type == MON_T_HEAD) {
        if (p->have_head)
            return fail(err, errlen, -1, "a second head record (record %llu)", (unsigned long long)p->records);
        p->head = r->u.head;
        p->have_head = 1;
        p->limit = p->head.max_files + p->head.max_dirs + 1;
        if (p->head.version >= 2) {
            p->limit += p->head.max_targets;
            p->tgts = calloc((size_t)p->head.max_targets + 1, sizeof *p->tgts);
            if (!p->tgts)
                return fail(err, errlen, -1, "out of memory for %u targets", p->head.max_targets + 1);
        }
        return 0;
    }
    if (!p->have_head)
        return fail(err, errlen, -1, "the log does not start with a head record");
    if (r->type == MON_T_NAME) {
        const mon_name *n = &r->u.name;
        mr_entry *e = entry(p, n->id, err, errlen);
        if (!e)
            return -1;
        if (!e->name) {
            e->name = calloc(1, (size_t)n->total + 1);
            if (!e->name)
                return fail(err, errlen, -1, "out of memory");
            e->name_total = n->total;
        } else if (e->name_total != n->total) {
            return fail(err, errlen, -1, "name of record %u: length %u, earlier %u", n->id, n->total, e->name_total);
        }
        memcpy(e->name + n->offset, n->seg, n->len);
        return 0;
    }
    if (r->type == MON_T_TGT) {
        const mon_tgt *t = &r->u.tgt;
        if (!p->tgts || t->id > p->head.max_targets)
            return fail(err, errlen, -1, "target record %u past the log's %u targets", t->id,
                        p->tgts ? p->head.max_targets + 1 : 0);
        if (p->tgts[t->id].name[0] && strcmp(p->tgts[t->id].name, t->name))
            return fail(err, errlen, -1, "target %u named twice (%s, then %s)", t->id, p->tgts[t->id].name, t->name);
        p->tgts[t->id] = *t;
        return 0;
    }
    if (r->type == MON_T_FILE) {
        const mon_filerec *f = &r->u.file;
        mr_entry *e = entry(p, f->id, err, errlen);
        if (!e)
            return -1;
        if (f->kind != e->kind)
            return fail(err, errlen, -1, "record %u: kind %u where the budget says %u", f->id, f->kind, e->kind);
        if (p->tgts ? (f->tgt == 0 || f->tgt > p->head.max_targets + 1 || !p->tgts[f->tgt - 1].name[0]) : f->tgt != 0)
            return fail(err, errlen, -1, "record %u: storage target %u not declared before it", f->id, f->tgt);
        if (e->kind == MON_K_OTHER && e->tgt && f->tgt != e->tgt)
            return fail(err, errlen, -1, "record %u: an \"(other)\" aggregate of target %u names target %u", f->id,
                        e->tgt - 1, f->tgt - 1);
        if (e->have && e->tgt && f->tgt != e->tgt)
            return fail(err, errlen, -1, "record %u: target %u, earlier %u", f->id, f->tgt - 1, e->tgt - 1);
        e->tgt = f->tgt;
        if (!e->have || f->snap >= e->snap) {
            if (mr_timeline_file(p, e, f, err, errlen))
                return -1;
            memcpy(e->c, f->c, sizeof e->c);
            e->snap = f->snap;
            e->have = 1;
        }
        return 0;
    }
    /* MON_T_SNAP */
    if (r->u.snap.nfile > p->limit)
        return fail(err, errlen, -1, "snapshot %llu claims %llu records, the budget is %u",
                    (unsigned long long)r->u.snap.snap, (unsigned long long)r->u.snap.nfile, p->limit);
    p->snaps++;
    mr_timeline_snap(p, r->u.snap.time_ns);
    p->final = r->u.snap.final != 0;
    return 0;
}

/* parse a stream of records (one process) into p */
static int parse_stream(mr_proc *p, const unsigned char *buf, size_t len, char *err, size_t errlen)
{
    if (len % MON_REC_SIZE)
        return fail(err, errlen, -1, "%zu bytes is not a whole number of %d-byte records (truncated)", len,
                    MON_REC_SIZE);
    for (size_t off = 0; off < len; off += MON_REC_SIZE) {
        mon_rec r;
        char why[256];
        if (mon_rec_unpack(buf + off, &r, why, sizeof why) || mr_feed(p, &r, why, sizeof why))
            return fail(err, errlen, -1, "record %zu (byte %zu): %s", off / MON_REC_SIZE, off, why);
    }
    if (len && !p->have_head)
        return fail(err, errlen, -1, "no head record");
    return 0;
}

int sheaf_monitor_parse(const void *buf, size_t len, sheaf_monitor_job **job, char *err, size_t errlen)
{
    *job = NULL;
    if (!buf && len)
        return fail(err, errlen, SHEAF_E_ARG, "sheaf_monitor_parse: NULL buffer");
    sheaf_monitor_job *j = calloc(1, sizeof *j);
    mr_proc *p = j ? mr_job_add(j) : NULL;
    if (!p || !(p->log = strdup("(memory)"))) {
        sheaf_monitor_free(j);
        return fail(err, errlen, SHEAF_E_NOMEM, "out of memory");
    }
    if (parse_stream(p, buf, len, err, errlen)) {
        sheaf_monitor_free(j);
        return SHEAF_E_FORMAT;
    }
    *job = j;
    return 0;
}

static int is_log_name(const char *n)
{
    size_t l = strlen(n);
    return l > 5 && !strcmp(n + l - 5, ".smon");
}

/* read one log container into a new process of job; a log that never got a
 * snapshot durable (killed before its first flush) is skipped with a note */
static int read_log(sheaf_monitor_job *job, const char *name, int flags, char *err, size_t errlen)
{
    int ntasks = 0, nfiles = 0, recovered = 0;
    sion_int64 *chunks = NULL;
    sion_int32 fsblk = 0;
    int sid = sion_open((char *)name, "rb,posix", &ntasks, &nfiles, &chunks, &fsblk, NULL, NULL);
    if (sid < 0 && sheaf_last_error_code() == SHEAF_E_UNCLOSED) {
        if (!(flags & SHEAF_MONITOR_RECOVER))
            return fail(err, errlen, SHEAF_E_UNCLOSED,
                        "%s was never closed (its process was killed, or still runs): "
                        "read with --recover (SHEAF_MONITOR_RECOVER) or run `sheaf recover` on it",
                        name);
        sheaf_recover_summary sum;
        int rc = sheaf_recover(name, 0, NULL, NULL, &sum);
        if (rc == SHEAF_E_NOTFOUND) {
            note(job, "%s: killed before its first snapshot was durable; nothing to read\n", name);
            return 0;
        }
        if (rc)
            return fail(err, errlen, rc, "recovering %s: %s", name, sheaf_last_error());
        note(job, "%s: recovered %lld bytes (process killed)\n", name, (long long)sum.bytes);
        recovered = 1;
        sid = sion_open((char *)name, "rb,posix", &ntasks, &nfiles, &chunks, &fsblk, NULL, NULL);
    }
    if (sid < 0)
        return fail(err, errlen, SHEAF_E_FORMAT, "%s: %s", name, sheaf_last_error());
    free(chunks);
    mr_proc *p = NULL;
    int rc = 0;
    if (ntasks != 1) {
        rc = fail(err, errlen, SHEAF_E_FORMAT, "%s: %d tasks, a monitor log has one", name, ntasks);
        goto out;
    }
    p = mr_job_add(job);
    if (!p || !(p->log = strdup(name))) {
        rc = fail(err, errlen, SHEAF_E_NOMEM, "out of memory");
        goto out;
    }
    p->recovered = recovered;
    unsigned char buf[64 * MON_REC_SIZE];
    for (;;) {
        size_t got = 0;
        while (got < sizeof buf && !sion_feof(sid)) {
            size_t n = sion_fread(buf + got, 1, sizeof buf - got, sid);
            if (n == 0)
                break;
            got += n;
        }
        if (got == 0)
            break;
        char why[512];
        if (parse_stream(p, buf, got, why, sizeof why)) {
            rc = fail(err, errlen, SHEAF_E_FORMAT, "%s: %s", name, why);
            goto out;
        }
        if (got < sizeof buf)
            break;
    }
    if (!p->have_head) {
        note(job, "%s: empty log skipped\n", name);
        mr_proc_free(p);
        job->nprocs--;
    }
out:
    sion_close(sid);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int sheaf_monitor_read(const char *path, int flags, sheaf_monitor_job **job, char *err, size_t errlen)
{
    *job = NULL;
    if (!path)
        return fail(err, errlen, SHEAF_E_ARG, "sheaf_monitor_read: NULL path");
    struct stat st;
    if (stat(path, &st) != 0)
        return fail(err, errlen, SHEAF_E_NOTFOUND, "%s: %s", path, strerror(errno));
    sheaf_monitor_job *j = calloc(1, sizeof *j);
    if (!j)
        return fail(err, errlen, SHEAF_E_NOMEM, "out of memory");
    int rc = 0;
    if (!S_ISDIR(st.st_mode)) {
        rc = read_log(j, path, flags, err, errlen);
    } else {
        DIR *d = opendir(path);
        if (!d) {
            sheaf_monitor_free(j);
            return fail(err, errlen, SHEAF_E_IO, "%s: %s", path, strerror(errno));
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        while (rc == 0 && (de = readdir(d))) {
            if (!is_log_name(de->d_name))
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                char **nn = realloc(names, cap * sizeof *nn);
                if (!nn) {
                    rc = fail(err, errlen, SHEAF_E_NOMEM, "out of memory");
                    break;
                }
                names = nn;
            }
            if (asprintf(&names[n], "%s/%s", path, de->d_name) < 0)
                rc = fail(err, errlen, SHEAF_E_NOMEM, "out of memory");
            else
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmp_str);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = read_log(j, names[i], flags, err, errlen);
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        if (rc == 0 && n == 0)
            rc = fail(err, errlen, SHEAF_E_NOTFOUND, "%s: no monitor logs (*.smon) in it", path);
    }
    if (rc) {
        sheaf_monitor_free(j);
        return rc;
    }
    *job = j;
    return 0;
}

/* used by summary.c and summary_tgt.c (both above this file) */
void mr_json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(o, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(o, "\\u%04x", *p);
        else
            fputc(*p, o);
    }
    fputc('"', o);
}
