/* bench_stats.c - sheaf-bench helpers: the deterministic data pattern and its
 * verification, size parsing, reduction of per-task phase times over MPI,
 * the bare-collective reference time, and the table / JSON report. */
#include "bench.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t bench_word(uint64_t task, uint64_t word)
{ /* splitmix64 of (task, word index) */
    uint64_t z = (task << 40) ^ word;
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned char byte_at(uint64_t task, uint64_t off)
{
    uint64_t w = bench_word(task, off / 8);
    return (unsigned char)(w >> (8 * (off % 8)));
}

/* Fill buf with the bytes of `task` at stream offsets offset .. offset+n-1. */
void bench_fill(unsigned char *buf, size_t n, uint64_t task, uint64_t offset)
{
    size_t i = 0;
    while (i < n && (offset + i) % 8)
        buf[i] = byte_at(task, offset + i), i++;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = bench_word(task, (offset + i) / 8);
        memcpy(buf + i, &w, 8); /* little-endian hosts: byte k = bits 8k.. */
    }
    for (; i < n; i++)
        buf[i] = byte_at(task, offset + i);
}

/* Number of xfer-sized pieces of buf (stream offset `offset`) that differ
 * from the pattern. */
long long bench_verify(const unsigned char *buf, size_t n, uint64_t task, uint64_t offset, size_t xfer)
{
    long long bad = 0;
    unsigned char tmp[4096];
    if (xfer == 0)
        xfer = n ? n : 1;
    for (size_t p = 0; p < n; p += xfer) {
        size_t len = n - p < xfer ? n - p : xfer;
        int differs = 0;
        for (size_t q = 0; q < len && !differs; q += sizeof tmp) {
            size_t l = len - q < sizeof tmp ? len - q : sizeof tmp;
            bench_fill(tmp, l, task, offset + p + q);
            differs = memcmp(tmp, buf + p + q, l) != 0;
        }
        bad += differs;
    }
    return bad;
}

/* "123", "4k", "256M", "1G" (1024-based, also "KiB", "MiB"...); "4kB",
 * "1MB" are 1000-based as in partest. -1 on a malformed size. */
int64_t bench_parse_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    static const char units[] = "kmgt";
    const char *u = *end ? strchr(units, end[0] | 0x20) : NULL;
    double mul = 1;
    if (u) {
        int e = (int)(u - units) + 1;
        int dec = (end[1] == 'B' || end[1] == 'b') && end[2] == '\0';
        for (int i = 0; i < e; i++)
            mul *= dec ? 1000.0 : 1024.0;
        end += 1 + dec;
        if (!dec && end[0] == 'i' && (end[1] == 'B' || end[1] == 'b'))
            end += 2;
    } else if (*end == 'B' || *end == 'b') {
        end++;
    }
    return *end ? -1 : (int64_t)(v * mul);
}

/* A barrier that sleeps instead of busy-polling, so that ranks that are done
 * do not take the CPU from ranks still in their timed phase when the two
 * cores are oversubscribed (MPICH's own collectives spin). */
void bench_barrier(MPI_Comm comm)
{
    MPI_Request rq;
    int done = 0;
    struct timespec ts = {0, 50000};
    MPI_Ibarrier(comm, &rq);
    for (;;) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&ts, NULL);
    }
}

void bench_reduce(const phase_times *local, int nlocal, double bytes_local, long long mism_local, long long tasks_local,
                  MPI_Comm comm, phase_result *out)
{
    double mn[4] = {1e300, 1e300, 1e300, 1e300}, mx[4] = {-1e300, -1e300, -1e300, -1e300};
    for (int i = 0; i < nlocal; i++) {
        const phase_times *t = &local[i];
        double v[4] = {t->t0, t->t1 - t->t0, t->t2 - t->t1, t->t3 - t->t2};
        for (int k = 0; k < 4; k++) {
            if (v[k] < mn[k])
                mn[k] = v[k];
            if (v[k] > mx[k])
                mx[k] = v[k];
        }
        if (t->t3 > mx[0])
            mx[0] = t->t3; /* mx[0] holds the latest end */
    }
    double gmn[4], gmx[4], sums[2] = {bytes_local, (double)mism_local}, gsums[2];
    long long gt = 0;
    bench_barrier(comm);
    MPI_Allreduce(mn, gmn, 4, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(mx, gmx, 4, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(sums, gsums, 2, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Allreduce(&tasks_local, &gt, 1, MPI_LONG_LONG, MPI_SUM, comm);
    out->global = gmx[0] - gmn[0];
    out->open_min = gmn[1], out->open_max = gmx[1];
    out->write_min = gmn[2], out->write_max = gmx[2];
    out->close_min = gmn[3], out->close_max = gmx[3];
    out->bytes = gsums[0];
    out->mismatches = (long long)gsums[1];
    out->tasks = gt;
    out->mbs = out->global > 0 ? out->bytes / (1024.0 * 1024.0) / out->global : 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of 20 timed MPI_Gather (one int to rank 0) + MPI_Bcast (one int)
 * pairs, after 3 untimed ones: the unit of the container's open/close. */
double bench_coll_pair(MPI_Comm comm)
{
    int size, rank, v = 1, *all;
    double t[20];
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    all = malloc(sizeof(int) * (size_t)size);
    for (int i = -3; i < 20; i++) {
        MPI_Barrier(comm);
        double a = MPI_Wtime();
        MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, 0, comm);
        MPI_Bcast(&v, 1, MPI_INT, 0, comm);
        double d = MPI_Wtime() - a, dm;
        MPI_Allreduce(&d, &dm, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (i >= 0)
            t[i] = dm;
    }
    free(all);
    qsort(t, 20, sizeof(double), cmp_d);
    return (t[9] + t[10]) / 2;
}

typedef struct {
    double med, min, max;
} stat3;

static stat3 stat_of(const phase_result *p, int n, size_t field_off)
{
    double v[MAX_REPS];
    for (int i = 0; i < n; i++)
        v[i] = *(const double *)((const char *)&p[i] + field_off);
    qsort(v, (size_t)n, sizeof(double), cmp_d);
    stat3 s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

#define F(x) offsetof(phase_result, x)
static const size_t fields[] = {F(mbs),       F(global),    F(open_max),  F(open_min),
                                F(write_max), F(write_min), F(close_max), F(close_min)};
static const char *fnames[] = {"mibs",       "time_s",     "open_max_s",  "open_min_s",
                               "data_max_s", "data_min_s", "close_max_s", "close_min_s"};
#define NF (sizeof fields / sizeof fields[0])

static void table_phase(const char *ph, const phase_result *p, int n)
{
    stat3 s[NF];
    long long mism = 0;
    for (size_t k = 0; k < NF; k++)
        s[k] = stat_of(p, n, fields[k]);
    for (int i = 0; i < n; i++)
        mism += p[i].mismatches;
    printf("  %-5s %9.1f MiB/s (min %.1f max %.1f)  time %.4f s (min %.4f max %.4f)\n", ph, s[0].med, s[0].min,
           s[0].max, s[1].med, s[1].min, s[1].max);
    printf("        open max %.4f spread %.4f | data max %.4f spread %.4f | close max %.4f spread %.4f | %.0f MiB",
           s[2].med, s[2].med - s[3].med, s[4].med, s[4].med - s[5].med, s[6].med, s[6].med - s[7].med,
           p[0].bytes / 1048576.0);
    if (ph[0] == 'r')
        printf(" | mismatches %lld", mism);
    printf("\n");
}

static void json_phase(FILE *j, const char *ph, const phase_result *p, int n)
{
    long long mism = 0;
    fprintf(j, "    \"%s\": {\"bytes\": %.0f, \"tasks\": %lld", ph, p[0].bytes, p[0].tasks);
    for (size_t k = 0; k < NF; k++) {
        stat3 s = stat_of(p, n, fields[k]);
        fprintf(j, ", \"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}", fnames[k], s.med, s.min, s.max);
    }
    fprintf(j, ", \"reps\": [");
    for (int i = 0; i < n; i++) {
        mism += p[i].mismatches;
        fprintf(
            j,
            "%s{\"time_s\": %.6g, \"mibs\": %.6g, \"open_max_s\": %.6g, \"data_max_s\": %.6g, \"close_max_s\": %.6g}",
            i ? ", " : "", p[i].global, p[i].mbs, p[i].open_max, p[i].write_max, p[i].close_max);
    }
    fprintf(j, "], \"mismatches\": %lld}", mism);
}

void bench_report(const bench_opts *o, const char *name, const bench_result *res, int nranks, long long ntasks,
                  FILE *json)
{
    printf("%s: %d ranks, %lld tasks, %lld B/task, transfer %lld B, numfiles %d, %s%s%s%s%s, reps %d, "
           "gather+bcast %.1f us\n",
           name, nranks, ntasks, (long long)o->localsize, (long long)o->bufsize, o->numfiles,
           o->durable ? "durable" : "cached", o->posix ? ", posix" : "", o->collwrite ? ", collwrite" : "",
           o->collread ? ", collread" : "", o->sleepwait ? ", sleep-wait" : "", res->nreps, res->coll_pair * 1e6);
    if (o->do_write)
        table_phase("write", res->w, res->nreps);
    if (o->do_read)
        table_phase("read", res->r, res->nreps);
    fflush(stdout);
    if (!json)
        return;
    fprintf(
        json,
        "  {\"name\": \"%s\", \"mode\": \"%s\", \"label\": \"%s\", \"ranks\": %d, \"threads\": %d, \"tasks\": %lld, "
        "\"localsize\": %lld, \"bufsize\": %lld, \"numfiles\": %d, \"durable\": %d, \"posix\": %d, "
        "\"collwrite\": %d, \"collread\": %d, \"checksum\": %d, \"sleepwait\": %d, \"syncbarrier\": %d, \"nreps\": %d, "
        "\"coll_pair_s\": %.6g",
        name, bench_mode_name(o->mode), o->label ? o->label : "", nranks, o->threads, ntasks, (long long)o->localsize,
        (long long)o->bufsize, o->numfiles, o->durable, o->posix, o->collwrite, o->collread, o->checksum, o->sleepwait,
        o->syncbarrier, res->nreps, res->coll_pair);
    if (o->do_write) {
        fprintf(json, ",\n");
        json_phase(json, "write", res->w, res->nreps);
    }
    if (o->do_read) {
        fprintf(json, ",\n");
        json_phase(json, "read", res->r, res->nreps);
    }
    fprintf(json, "}");
}
