/* live.c - the online view: each monitored process keeps a small file beside
 * its log, <host>.<pid>.<start ns>.<n>.live, rewritten (temporary file +
 * rename, so a reader sees a whole one) with its totals, its bytes/s over
 * the last interval and its bytes per storage target; `sheaf stats top`
 * reads them while the job runs. The file is bounded (at most
 * MON_LIVE_TARGETS targets, the ones with most bytes; under 4 KiB) and its
 * format is in doc/monitor.md ("Online view").
 *
 * Written at every log snapshot, by the monitored operations when
 * SHEAF_STATS_INTERVAL seconds have passed since the last one (as the log:
 * a process idle in I/O does not refresh it), and, when SHEAF_STATS_INTERVAL
 * is set, also by a thread of the monitor that wakes every interval (so an
 * idle process stays current; the thread makes the process multi-threaded:
 * stdio takes its locks and the counting is atomic). A final one at the end. */
#define _GNU_SOURCE
#include "mon.h"
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MON_LIVE_TARGETS 16
#define MON_LIVE_DEFAULT_S 5

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static int live_thread_on; /* SHEAF_STATS_INTERVAL was set: a thread refreshes the file */
static int live_done;      /* the final file is written: nothing after it */

typedef struct live_tgt {
    uint64_t rb, wb, ops, ns;
} live_tgt;
static live_tgt *live_cur;  /* per target, this refresh (max_targets + 1) */
static uint64_t *live_prev; /* per target: bytes at the previous refresh */

static void *live_main(void *arg)
{
    (void)arg;
    mon_busy = 1; /* this thread's own I/O is never counted */
    for (;;) {
        struct timespec ts = {(time_t)(mon_g.live_interval_ns / 1000000000u),
                              (long)(mon_g.live_interval_ns % 1000000000u)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        if (!mon_g.on || live_done || mon_g.pid != (int)getpid())
            continue;
        mon_live(mon_now_ns(), 1, 0);
    }
    return NULL;
}

static void start_thread(void)
{
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024); /* compose: ~22 KiB on the stack */
    if (pthread_create(&th, &a, live_main, NULL) != 0)
        dprintf(2, "sheaf monitor: no thread for the online view: it is refreshed by operations only\n");
    pthread_attr_destroy(&a);
}

static void live_fork_child(void)
{
    pthread_mutex_init(&live_lock, NULL);
    live_done = 0;
    mon_g.live_last_ns = 0;
    mon_g.live_prev_rb = mon_g.live_prev_wb = 0;
    mon_g.live_prev_ns = 0;
    if (live_prev)
        memset(live_prev, 0, ((size_t)mon_g.max_targets + 1) * sizeof *live_prev);
    if (live_thread_on)
        start_thread();
}

void mon_live_init(void)
{
    const char *s = getenv("SHEAF_STATS_INTERVAL");
    double sec = MON_LIVE_DEFAULT_S;
    if (s && *s) {
        char *end;
        double v = strtod(s, &end);
        if (*end || !(v >= 0.1 && v <= 86400))
            dprintf(2, "sheaf monitor: SHEAF_STATS_INTERVAL=%s is not a number of seconds in [0.1, 86400]: using %d\n",
                    s, MON_LIVE_DEFAULT_S);
        else {
            sec = v;
            live_thread_on = 1;
        }
    }
    live_cur = calloc((size_t)mon_g.max_targets + 1, sizeof *live_cur);
    live_prev = calloc((size_t)mon_g.max_targets + 1, sizeof *live_prev);
    if (!live_cur || !live_prev) {
        free(live_cur);
        free(live_prev);
        live_cur = NULL;
        live_prev = NULL;
        return;
    }
    mon_g.live_interval_ns = (uint64_t)(sec * 1e9);
    pthread_atfork(NULL, NULL, live_fork_child);
    if (live_thread_on)
        start_thread();
}

static int cmp_tgt(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t bx = live_cur[x].rb + live_cur[x].wb, by = live_cur[y].rb + live_cur[y].wb;
    return bx != by ? (bx > by ? -1 : 1) : (x < y ? -1 : x > y);
}

static double rate(uint64_t now_b, uint64_t prev_b, uint64_t dt_ns)
{
    return dt_ns && now_b >= prev_b ? (double)(now_b - prev_b) * 1e9 / (double)dt_ns : 0.0;
}

/* the process's totals into tot, per target into live_cur */
static void sum_records(uint64_t *tot, uint32_t nt)
{
    memset(tot, 0, MC_N * sizeof *tot);
    memset(live_cur, 0, nt * sizeof *live_cur);
    size_t nrec = mon_nrec();
    for (size_t i = 0; i < nrec; i++) {
        mon_frec *f = &mon_g.recs[i];
        uint64_t c[MC_N];
        for (int k = 0; k < MC_N; k++)
            c[k] = __atomic_load_n(&f->c[k], __ATOMIC_RELAXED);
        for (int k = MC_OPENS; k <= MC_MMAP_BYTES; k++)
            tot[k] += c[k];
        tot[MC_READ_NS] += c[MC_READ_NS];
        tot[MC_WRITE_NS] += c[MC_WRITE_NS];
        tot[MC_META_NS] += c[MC_META_NS];
        live_tgt *t = &live_cur[f->tgt < nt ? f->tgt : nt - 1];
        t->rb += c[MC_BYTES_READ];
        t->wb += c[MC_BYTES_WRITTEN];
        t->ops += c[MC_READS] + c[MC_WRITES] + c[MC_OPENS] + c[MC_SEEKS] + c[MC_STATS] + c[MC_FSYNCS] + c[MC_MMAPS] +
                  c[MC_FLUSHES];
        t->ns += c[MC_READ_NS] + c[MC_WRITE_NS] + c[MC_META_NS];
    }
}

/* the rank from the launcher's environment (as the log's HEAD), -1 if none */
static int live_rank(void)
{
    static const char *const vars[] = {"SHEAF_MONITOR_RANK", "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            char *end;
            long r = strtol(v, &end, 10);
            if (!*end && r >= 0 && r < 0x7fffffff)
                return (int)r;
        }
    }
    return -1;
}

/* the file's text into buf (at most len bytes); its length */
static size_t compose(char *buf, size_t len, uint64_t now, int final)
{
    uint32_t nt = mon_g.max_targets + 1;
    uint64_t tot[MC_N];
    sum_records(tot, nt);
    uint64_t dt = mon_g.live_prev_ns && now > mon_g.live_prev_ns ? now - mon_g.live_prev_ns : 0;
    if (!mon_g.live_prev_ns && now > mon_g.start_ns)
        dt = now - mon_g.start_ns;
    size_t n = 0;
#define OUT(...)                                                                                                       \
    do {                                                                                                               \
        int w_ = snprintf(buf + n, len - n, __VA_ARGS__);                                                              \
        n += w_ > 0 && (size_t)w_ < len - n ? (size_t)w_ : 0;                                                          \
    } while (0)
    char host[MON_HOST_MAX] = "";
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)
        if (*p <= ' ' || *p == 0x7f)
            *p = '_';
    int rk = live_rank();
    OUT("sheaf-live 1\npid %d\nrank %d\nhost %s\nstart_ns %llu\ntime_ns %llu\ninterval_ns %llu\nfinal %d\n",
        (int)getpid(), rk, host[0] ? host : "-", (unsigned long long)mon_g.start_ns, (unsigned long long)now,
        (unsigned long long)mon_g.live_interval_ns, final);
    OUT("total %llu %llu %llu %llu %llu %llu %llu %llu\n", (unsigned long long)tot[MC_OPENS],
        (unsigned long long)tot[MC_READS], (unsigned long long)tot[MC_WRITES], (unsigned long long)tot[MC_BYTES_READ],
        (unsigned long long)tot[MC_BYTES_WRITTEN], (unsigned long long)tot[MC_READ_NS],
        (unsigned long long)tot[MC_WRITE_NS], (unsigned long long)tot[MC_META_NS]);
    OUT("rate %.1f %.1f\n", rate(tot[MC_BYTES_READ], mon_g.live_prev_rb, dt),
        rate(tot[MC_BYTES_WRITTEN], mon_g.live_prev_wb, dt));
    uint32_t order[MON_TGT_MAX + 1], used = 0;
    for (uint32_t t = 0; t < nt; t++)
        if (live_cur[t].ops || live_cur[t].rb || live_cur[t].wb)
            order[used++] = t;
    qsort(order, used, sizeof *order, cmp_tgt);
    for (uint32_t i = 0; i < used && i < MON_LIVE_TARGETS; i++) {
        uint32_t t = order[i];
        const live_tgt *c = &live_cur[t];
        uint64_t b = c->rb + c->wb;
        OUT("target %llu %llu %llu %llu %.1f %s %s\n", (unsigned long long)c->rb, (unsigned long long)c->wb,
            (unsigned long long)c->ops, (unsigned long long)c->ns, rate(b, live_prev[t], dt),
            mon_g.targets[t].fstype[0] ? mon_g.targets[t].fstype : "-", mon_g.targets[t].name);
    }
    if (used > MON_LIVE_TARGETS)
        OUT("targets_omitted %u\n", used - MON_LIVE_TARGETS);
    OUT("end\n");
#undef OUT
    for (uint32_t t = 0; t < nt; t++)
        live_prev[t] = live_cur[t].rb + live_cur[t].wb;
    mon_g.live_prev_rb = tot[MC_BYTES_READ];
    mon_g.live_prev_wb = tot[MC_BYTES_WRITTEN];
    mon_g.live_prev_ns = now;
    return n;
}

void mon_live(uint64_t now, int force, int final)
{
    if (!mon_g.on || !live_cur || !mon_g.live_interval_ns)
        return;
    if (!force &&
        (int64_t)(now - __atomic_load_n(&mon_g.live_last_ns, __ATOMIC_RELAXED)) < (int64_t)mon_g.live_interval_ns)
        return;
    mon_busy++;
    /* the final file waits for a refresh in progress (the thread's); others skip */
    if (final)
        pthread_mutex_lock(&live_lock);
    else if (pthread_mutex_trylock(&live_lock) != 0) {
        mon_busy--;
        return;
    }
    if (live_done)
        goto out;
    __atomic_store_n(&mon_g.live_last_ns, now, __ATOMIC_RELAXED);
    char buf[4096], tmp[1300];
    /* the targets' names may grow under mon_g.lock: read them under it (a snapshot holds it already) */
    int locked = pthread_mutex_trylock(&mon_g.lock) == 0;
    size_t n = compose(buf, sizeof buf, now, final);
    if (locked)
        pthread_mutex_unlock(&mon_g.lock);
    if (!mon_g.live_prev_rb && !mon_g.live_prev_wb && !mon_g.nfiles && !mon_g.ndirs)
        goto out; /* a process that touched no file leaves none (as its log) */
    char host[MON_HOST_MAX] = "";
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)
        if (*p == '/')
            *p = '_';
    snprintf(mon_g.live_name, sizeof mon_g.live_name, "%s/%s.%ld.%llu.%llu.live", mon_g.dir, host, (long)getpid(),
             (unsigned long long)mon_g.start_ns, (unsigned long long)mon_g.log_seq);
    snprintf(tmp, sizeof tmp, "%s.tmp", mon_g.live_name);
    /* the real functions (real.c): nothing of the wrappers, and never counted */
    int fd = mon_real.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT && mkdir(mon_g.dir, 0777) == 0)
        fd = mon_real.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        int ok = mon_real.write(fd, buf, n) == (ssize_t)n;
        mon_real.close(fd);
        if (!ok || rename(tmp, mon_g.live_name) != 0)
            unlink(tmp);
    }
    if (final)
        live_done = 1;
out:
    pthread_mutex_unlock(&live_lock);
    mon_busy--;
}
