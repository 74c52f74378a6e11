/* scale_sim.c - sheaf's real parallel open/close protocol at 10^3 .. 10^6
 * simulated tasks in one process (simcomm.c), measured per call.
 *
 * One run = P tasks, numfiles physical files of tasks_per_file consecutive
 * tasks each: write open, every task writes `bytes` bytes, write close, read
 * open, every task reads and checks its bytes, read close; uncounted
 * barriers (sim_sync) between the phases. Per phase it reports, over the
 * tasks: callbacks per task (min, max), bytes sent / received through the
 * callbacks (max, mean), the largest buffer of one callback, heap allocated
 * during the phase (peak above the phase's start; counting malloc), and the
 * time tasks ran, split by role: task 0 (global root, master of file 0),
 * the other masters (local rank 0), the others.
 *
 *   scale_sim -P 1000,10000 -f 1,tpf1024 [--csv out.csv] [--dir D] [--bytes N] [--fsblk N] [--stack KiB]
 *   scale_sim --check     the ctest `scale.protocol` (see check() below)
 *   scale_sim --check-small   the same at P / 10 (sanitizer builds)
 * -f: a number of files, or tpfN = files of N tasks each. Files go to a
 * fresh directory (under --dir, default .), removed afterwards unless --keep.
 * Exit: 0 ok, 1 a check failed, 3 protocol violation / hang, 77 cannot run
 * here (file descriptors: each task keeps its file open, P + 64 are needed). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sheaf.h"
#include "sion.h"
#include "simcomm.h"
#ifdef SHEAF_SCALE_FDSHARE
#include "fdshare.h"
#endif

enum { PH_WOPEN, PH_WCLOSE, PH_ROPEN, PH_RCLOSE, PH_N };
static const char *const ph_names[PH_N] = {"write_open", "write_close", "read_open", "read_close"};
enum { R_ROOT, R_MASTER, R_OTHER, R_N };

typedef struct agg {
    int64_t n;
    long calls_min, calls_max;
    int64_t sent_max, recv_max, maxbuf_max, heap_max, busy_max;
    double sent_sum, recv_sum, heap_sum, busy_sum;
} agg;

typedef struct run {
    int P, nf, tpf, aid, bytes, fsblk;
    char fname[4200];
    agg a[PH_N][R_N];
    long calls_root[PH_N][SIM_NKIND][SIM_NOP], calls_other[PH_N][SIM_NKIND][SIM_NOP];
    double tsync[PH_N + 1], csync[PH_N + 1];
    sim_call rootlog[PH_N][32];
    int nrootlog[PH_N];
    long failures;
    char first_failure[1024];
    sim_run_info info;
    double wall, rss_mb;
} run;

static void agg_add(agg *a, const sim_task *t, int64_t heap)
{
    long calls = 0;
    for (int k = 0; k < SIM_NKIND; k++)
        for (int o = 0; o < SIM_NOP; o++)
            calls += t->st.calls[k][o];
    if (!a->n || calls < a->calls_min)
        a->calls_min = calls;
    if (!a->n || calls > a->calls_max)
        a->calls_max = calls;
    a->n++;
#define MAX(f, v)                                                                                                      \
    if ((v) > a->f)                                                                                                    \
    a->f = (v)
    MAX(sent_max, t->st.sent);
    MAX(recv_max, t->st.recv);
    MAX(maxbuf_max, t->st.maxbuf);
    MAX(heap_max, heap);
    MAX(busy_max, t->st.busy_ns);
#undef MAX
    a->sent_sum += (double)t->st.sent;
    a->recv_sum += (double)t->st.recv;
    a->heap_sum += (double)heap;
    a->busy_sum += (double)t->st.busy_ns;
}

static void fail(run *r, int rank, const char *what)
{
    if (!r->failures++)
        snprintf(r->first_failure, sizeof r->first_failure, "task %d: %s: %s", rank, what, sheaf_last_error());
}

static int g_oldest_first; /* --oldest-first: close the oldest sid first (shows the registry's O(n) release) */
static sim_log g_rootlog;
static sim_call g_rootcalls[32];

static void phase_begin(sim_task *t)
{
    memset(&t->st, 0, sizeof t->st);
    if (t->log)
        t->log->n = 0;
    t->mem.peak = t->mem.live;
}
/* keep the per-operation counts of task 0 and of the last task (if not a master) */
static void phase_end(run *r, sim_task *t, int ph, int role)
{
    if (t->rank == 0) {
        memcpy(r->calls_root[ph], t->st.calls, sizeof r->calls_root[ph]);
        r->nrootlog[ph] = t->log->n;
        memcpy(r->rootlog[ph], t->log->c, (size_t)t->log->n * sizeof *t->log->c);
    }
    if (t->rank == t->size - 1 && role == R_OTHER)
        memcpy(r->calls_other[ph], t->st.calls, sizeof r->calls_other[ph]);
}

static unsigned char pat(int rank, int i) { return (unsigned char)(rank * 131 + i * 7 + 1); }

static void task(sim_task *t)
{
    run *r = t->arg;
    int g = t->rank, P = t->size;
    int fnum = g / r->tpf, nf = r->nf, lrank = g % r->tpf;
    int lsize = P - fnum * r->tpf < r->tpf ? P - fnum * r->tpf : r->tpf;
    int role = g == 0 ? R_ROOT : lrank == 0 ? R_MASTER : R_OTHER;
    /* the task's data on the heap (before the first phase: not in its
     * phases' heap), not in two 4 KiB arrays on its stack, which made 8 of
     * the 10.5 KiB every waiting task's stack held (doc/scale.md) */
    int nb = r->bytes < 4096 ? r->bytes : 4096;
    unsigned char *buf = malloc((size_t)nb * 2 + 2), *in = buf ? buf + nb + 1 : NULL;
    if (!buf) {
        fail(r, g, "out of memory for the task's data");
        return;
    }
    for (int i = 0; i < nb; i++)
        buf[i] = pat(g, i);
    t->cpu_time = role != R_OTHER; /* task 0 and the masters: CPU time (a system call per switch) */
    if (g == 0) {
        g_rootlog.c = g_rootcalls;
        g_rootlog.cap = 32;
        t->log = &g_rootlog;
    }
    r->tsync[0] = sim_sync(t, 0);
    r->csync[0] = sim_sync_cpu;

    /* write */
    sion_int64 chunk = r->bytes;
    sion_int32 fsblk = r->fsblk;
    int64_t base = t->mem.live;
    phase_begin(t);
    int sid = sion_generic_paropen(r->aid, r->fname, "wb,posix", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank,
                                   &lsize, NULL, NULL);
    agg_add(&r->a[PH_WOPEN][role], t, t->mem.peak - base);
    phase_end(r, t, PH_WOPEN, role);
    if (sid < 0)
        fail(r, g, "write open");
    else if (sion_fwrite(buf, 1, (size_t)nb, sid) != (size_t)nb)
        fail(r, g, "fwrite");
    r->tsync[1] = sim_sync(t, g_oldest_first ? -sid : sid); /* newest sid closes first: see README (registry) */
    r->csync[1] = sim_sync_cpu;
    base = t->mem.live;
    phase_begin(t);
    if (sion_generic_parclose(sid) != SION_SUCCESS)
        fail(r, g, "write close");
    agg_add(&r->a[PH_WCLOSE][role], t, t->mem.peak - base);
    phase_end(r, t, PH_WCLOSE, role);
    r->tsync[2] = sim_sync(t, 0);
    r->csync[2] = sim_sync_cpu;

    /* read */
    sion_int64 rchunk = 0;
    sion_int32 rfs = 0;
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    base = t->mem.live;
    phase_begin(t);
    sid = sion_generic_paropen(r->aid, r->fname, "rb,posix", &rchunk, &rfs, t->world, g, P, &rf, &rnf, &rl, &rs, NULL,
                               NULL);
    agg_add(&r->a[PH_ROPEN][role], t, t->mem.peak - base);
    phase_end(r, t, PH_ROPEN, role);
    if (sid < 0) {
        fail(r, g, "read open");
    } else {
        if (rf != fnum || rl != lrank || rs != lsize || rnf != nf)
            fail(r, g, "read open: file / local rank differ from the write");
        else if (sion_fread(in, 1, (size_t)nb, sid) != (size_t)nb || memcmp(in, buf, (size_t)nb))
            fail(r, g, "fread: data differ");
    }
    r->tsync[3] = sim_sync(t, g_oldest_first ? -sid : sid);
    r->csync[3] = sim_sync_cpu;
    base = t->mem.live;
    phase_begin(t);
    if (sion_generic_parclose(sid) != SION_SUCCESS)
        fail(r, g, "read close");
    agg_add(&r->a[PH_RCLOSE][role], t, t->mem.peak - base);
    phase_end(r, t, PH_RCLOSE, role);
    r->tsync[4] = sim_sync(t, 0);
    r->csync[4] = sim_sync_cpu;
    free(buf);
}

/* ---- running one configuration ---- */
static __attribute__((unused)) int fds_for(int P)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)P + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return -1;
    if (rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max < need) {
        struct rlimit hi = {need, need};
        if (!setrlimit(RLIMIT_NOFILE, &hi))
            return 0;
        fprintf(stderr,
                "scale_sim: %d tasks keep %d files open, but the limit is %llu (hard) and cannot be raised: "
                "%s\n",
                P, P, (unsigned long long)rl.rlim_max, strerror(errno));
        return -1;
    }
    rl.rlim_cur = need;
    return setrlimit(RLIMIT_NOFILE, &rl);
}

static double rss_hwm_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            v = atof(line + 6) / 1024.0;
    if (f)
        fclose(f);
    return v;
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[8192];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

typedef struct opts {
    const char *dir, *csv;
    int bytes, fsblk, keep, quiet;
    size_t stack;
} opts;

/* nf <= 0: -nf tasks per file */
static int run_one(const opts *o, int P, int nf_or_tpf, run *r)
{
    memset(r, 0, sizeof *r);
    r->P = P;
    r->tpf = nf_or_tpf > 0 ? (P + nf_or_tpf - 1) / nf_or_tpf : -nf_or_tpf;
    if (r->tpf > P)
        r->tpf = P;
    r->nf = (P + r->tpf - 1) / r->tpf;
    r->bytes = o->bytes;
    r->fsblk = o->fsblk;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/scale_sim.XXXXXX", o->dir);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "scale_sim: mkdtemp %s: %s\n", dir, strerror(errno));
        return 1;
    }
#ifdef SHEAF_SCALE_FDSHARE
    char pre[4200];
    snprintf(pre, sizeof pre, "%s/", dir);
    fds_share_under(pre); /* the tasks' descriptors share one real one per file (fdshare.c) */
#else
    if (fds_for(P)) {
        rmdir(dir);
        return 77;
    }
#endif
    snprintf(r->fname, sizeof r->fname, "%s/c.sion", dir);
    r->aid = sion_generic_create_api("simcomm");
    if (r->aid < 0 || sim_register(r->aid)) {
        fprintf(stderr, "scale_sim: cannot create the API\n");
        return 1;
    }
    double t0 = sim_now();
    if (sim_run(P, o->stack, task, r, &r->info)) {
        fprintf(stderr, "scale_sim: out of memory for %d tasks\n", P);
        return 1;
    }
    r->wall = sim_now() - t0;
    r->rss_mb = rss_hwm_mb();
    sion_generic_free_api(r->aid);
#ifdef SHEAF_SCALE_FDSHARE
    fds_share_under(NULL);
#endif
    if (!o->keep)
        rm_tree(dir);
    if (r->failures) {
        fprintf(stderr, "scale_sim: P=%d numfiles=%d: %ld task(s) failed; first: %s\n", P, r->nf, r->failures,
                r->first_failure);
        return 1;
    }
    return 0;
}

/* ---- output ---- */
static agg all_of(const run *r, int ph)
{
    agg t;
    memset(&t, 0, sizeof t);
    for (int k = 0; k < R_N; k++) {
        const agg *a = &r->a[ph][k];
        if (!a->n)
            continue;
        if (!t.n || a->calls_min < t.calls_min)
            t.calls_min = a->calls_min;
        if (!t.n || a->calls_max > t.calls_max)
            t.calls_max = a->calls_max;
        t.n += a->n;
#define MAX(f)                                                                                                         \
    if (a->f > t.f)                                                                                                    \
    t.f = a->f
        MAX(sent_max);
        MAX(recv_max);
        MAX(maxbuf_max);
        MAX(heap_max);
        MAX(busy_max);
#undef MAX
        t.sent_sum += a->sent_sum;
        t.recv_sum += a->recv_sum;
        t.heap_sum += a->heap_sum;
        t.busy_sum += a->busy_sum;
    }
    return t;
}

static void counts_str(const long c[SIM_NKIND][SIM_NOP], char *buf, size_t len)
{
    static const char *const kn[SIM_NKIND] = {"G", "L"};
    size_t u = 0;
    buf[0] = 0;
    for (int k = 0; k < SIM_NKIND; k++)
        for (int o = 0; o < SIM_NOP && u < len; o++)
            if (c[k][o]) {
                int w = snprintf(buf + u, len - u, "%s%s%ld %s", u ? " " : "", kn[k], c[k][o], sim_op_names[o]);
                if (w > 0)
                    u += (size_t)w;
            }
}

static const char *csv_header =
    "P,numfiles,tasks_per_file,phase,calls_min,calls_max,sent_max,sent_mean,recv_max,recv_mean,"
    "bytes_max_other,maxbuf_root,maxbuf_master,maxbuf_other,heap_root,heap_master,heap_other_max,heap_mean,"
    "cpu_root_ms,cpu_master_max_ms,busy_other_max_ms,phase_wall_s,phase_cpu_s,stack_max_kib,stack_mean_kib,rss_hwm_mb,"
    "layer_peak_mb,calls_root,calls_other";

static void csv_rows(FILE *f, const run *r)
{
    for (int ph = 0; ph < PH_N; ph++) {
        agg t = all_of(r, ph);
        const agg *R = &r->a[ph][R_ROOT], *M = &r->a[ph][R_MASTER], *O = &r->a[ph][R_OTHER];
        char cr[256], co[256];
        counts_str(r->calls_root[ph], cr, sizeof cr);
        counts_str(r->calls_other[ph], co, sizeof co);
        fprintf(
            f,
            "%d,%d,%d,%s,%ld,%ld,%lld,%.1f,%lld,%.1f,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,"
            "%.1f,%.1f,%.1f,%.2f,%s,%s\n",
            r->P, r->nf, r->tpf, ph_names[ph], t.calls_min, t.calls_max, (long long)t.sent_max, t.sent_sum / t.n,
            (long long)t.recv_max, t.recv_sum / t.n, (long long)(O->sent_max + O->recv_max), (long long)R->maxbuf_max,
            (long long)M->maxbuf_max, (long long)O->maxbuf_max, (long long)R->heap_max, (long long)M->heap_max,
            (long long)O->heap_max, t.heap_sum / t.n, R->busy_max / 1e6, M->busy_max / 1e6, O->busy_max / 1e6,
            r->tsync[ph + 1] - r->tsync[ph], r->csync[ph + 1] - r->csync[ph], r->info.stack_max_touched / 1024.0,
            r->info.stack_mean_touched / 1024.0, r->rss_mb, r->info.layer_mem.peak / 1048576.0, cr, co);
    }
}

static void print_run(const run *r)
{
    printf("P=%d numfiles=%d tasks/file=%d: %.2f s, RSS peak %.0f MiB, stack resident at the end max %.1f KiB mean "
           "%.1f KiB, stack depth while waiting max %.1f KiB mean %.1f KiB, %lld switches\n",
           r->P, r->nf, r->tpf, r->wall, r->rss_mb, r->info.stack_max_touched / 1024.0,
           r->info.stack_mean_touched / 1024.0, r->info.depth_max / 1024.0, r->info.depth_mean / 1024.0,
           (long long)r->info.switches);
    printf("  %-11s %9s %9s %9s %9s %9s %11s %11s %11s %10s %10s %8s\n", "phase", "calls", "sent max", "sent mean",
           "recv max", "recv mean", "buf root", "buf master", "buf other", "heap root", "heap mast", "cpu s");
    for (int ph = 0; ph < PH_N; ph++) {
        agg t = all_of(r, ph);
        printf("  %-11s %4ld-%-4ld %9lld %9.1f %9lld %9.1f %11lld %11lld %11lld %10lld %10lld %8.3f\n", ph_names[ph],
               t.calls_min, t.calls_max, (long long)t.sent_max, t.sent_sum / t.n, (long long)t.recv_max,
               t.recv_sum / t.n, (long long)r->a[ph][R_ROOT].maxbuf_max, (long long)r->a[ph][R_MASTER].maxbuf_max,
               (long long)r->a[ph][R_OTHER].maxbuf_max, (long long)r->a[ph][R_ROOT].heap_max,
               (long long)r->a[ph][R_MASTER].heap_max, r->csync[ph + 1] - r->csync[ph]);
    }
    fflush(stdout);
}

/* ---- the ctest: growth from 10^3 to 10^5 tasks ----
 *
 * Series A: 250 tasks per file at P = 10^3, 10^4, 10^5 (4, 40, 400 files).
 * (--check-small: 25 tasks per file at P = 10^2, 10^3, 10^4, and one file at 10^2, 10^3.)
 * Series B: one file at P = 10^3, 10^4 (tasks per file = P).
 * Asserted:
 *  1. every task of a run makes the same number of callbacks in each phase,
 *     and the number is the same at every P (series A: the same per-operation
 *     counts on task 0);
 *  2. bytes through the callbacks per task that is not a master: the same at
 *     every P (A and B);
 *  3. largest buffer and heap per phase on the masters other than task 0:
 *     the same at every P when tasks per file is fixed (A); on task 0 with one
 *     file (B) it may grow with P (= tasks per file);
 *  4. every call of task 0 moves a buffer that does not grow with P at fixed
 *     tasks per file (A). Today's protocol does not meet 4; each exception
 *     is an expectation below, checked both ways: the test prints
 *     "KNOWN VIOLATION <name>" with the numbers and passes while the buffer
 *     grows as described, and FAILS once it stops growing (remove the
 *     expectation then). */
#define KNOWN_O_P_GLOBAL_GATHER                                                                                        \
    1 /* write/read open: options (par_open_req, 14 x int64 per task) gathered to
                                      task 0; read open: (status, file, lrank, lsize) scattered from task 0 */
#define KNOWN_O_P_AGREE_GATHER                                                                                         \
    1 /* every open and close: the agreement gathers one status per task to task 0
                                      (the generic API has no reduce callback) */
#define KNOWN_O_P_MAPPING_GATHER                                                                                       \
    1 /* write close of a multi-file set: (file, lrank) of every task gathered to
                                      file 0's master, which stores the mapping in file 0 (SIONlib's format) */

static int check_fail;
#define CK(cond, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("FAIL: " __VA_ARGS__);                                                                              \
            printf("\n");                                                                                              \
            check_fail++;                                                                                              \
        }                                                                                                              \
    } while (0)

/* which expectation a call of task 0 belongs to (-1: none); idx = its place among the phase's G gathers */
static const char *classify(int ph, const sim_call *c, int last_ggather)
{
    if (c->kind != SIM_GLOBAL)
        return NULL;
    if (c->op == SIM_GATHER && last_ggather)
        return "KNOWN_O_P_AGREE_GATHER";
    if ((ph == PH_WOPEN || ph == PH_ROPEN) && (c->op == SIM_GATHER || c->op == SIM_SCATTER))
        return "KNOWN_O_P_GLOBAL_GATHER";
    if (ph == PH_WCLOSE && c->op == SIM_GATHER)
        return "KNOWN_O_P_MAPPING_GATHER";
    return NULL;
}
static int known(const char *name)
{
    if (!name)
        return 0;
    if (!strcmp(name, "KNOWN_O_P_GLOBAL_GATHER"))
        return KNOWN_O_P_GLOBAL_GATHER;
    if (!strcmp(name, "KNOWN_O_P_AGREE_GATHER"))
        return KNOWN_O_P_AGREE_GATHER;
    if (!strcmp(name, "KNOWN_O_P_MAPPING_GATHER"))
        return KNOWN_O_P_MAPPING_GATHER;
    return 0;
}

/* ---- error state per task: task `bad` asks for a negative chunk size ---- */
typedef struct errrun {
    int aid, bad, wrong;
    char fname[4200], first[1024];
} errrun;
static void err_task(sim_task *t)
{
    errrun *e = t->arg;
    int g = t->rank, P = t->size, fnum = 0, nf = 1, lrank = g, lsize = P;
    sion_int64 chunk = g == e->bad ? -1 : 16;
    sion_int32 fsblk = 64;
    int sid = sion_generic_paropen(e->aid, e->fname, "wb,posix", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank,
                                   &lsize, NULL, NULL);
    const char *m = sheaf_last_error();
    int own = strstr(m, "negative chunk size") != NULL;
    char who[32];
    snprintf(who, sizeof who, "task %d", e->bad);
    /* the failing task keeps its own cause; every other task is told which task failed */
    int ok = sid < 0 && (g == e->bad ? own : !own && strstr(m, who) != NULL);
    if (!ok && !e->wrong++)
        snprintf(e->first, sizeof e->first, "task %d: sid %d, message \"%s\"", g, sid, m);
    if (sid >= 0)
        sion_generic_parclose(sid);
}

static int check_errors(const opts *o)
{
    static errrun e;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/scale_err.XXXXXX", o->dir);
    if (!mkdtemp(dir))
        return 1;
    snprintf(e.fname, sizeof e.fname, "%s/e.sion", dir);
    e.aid = sion_generic_create_api("simcomm");
    e.bad = 617;
    if (e.aid < 0 || sim_register(e.aid) || sim_run(1000, o->stack, err_task, &e, NULL))
        return 1;
    sion_generic_free_api(e.aid);
    rm_tree(dir);
    CK(!e.wrong, "error state per task (task %d fails its open): %d task(s) saw the wrong state; first: %s", e.bad,
       e.wrong, e.first);
    printf("error state: %s\n", e.wrong ? "WRONG"
                                        : "each of 1000 tasks sees its own message (task 617's cause, the "
                                          "others 'task 617')");
    return 0;
}

static int check(const opts *o, int small)
{
    if (check_errors(o))
        return 1;
    static run A[3], B[2];
    /* small (sanitizer builds): everything / 10 */
    const int PA[3] = {small ? 100 : 1000, small ? 1000 : 10000, small ? 10000 : 100000}, TPF = small ? 25 : 250;
    double t0 = sim_now();
    for (int i = 0; i < 3; i++) {
        int rc = run_one(o, PA[i], -TPF, &A[i]);
        if (rc)
            return rc;
        print_run(&A[i]);
    }
    for (int i = 0; i < 2; i++) {
        int rc = run_one(o, PA[i], 1, &B[i]);
        if (rc)
            return rc;
        print_run(&B[i]);
    }
    if (o->csv) {
        FILE *f = fopen(o->csv, "w");
        if (f) {
            fprintf(f, "%s\n", csv_header);
            for (int i = 0; i < 3; i++)
                csv_rows(f, &A[i]);
            for (int i = 0; i < 2; i++)
                csv_rows(f, &B[i]);
            fclose(f);
        }
    }
    for (int ph = 0; ph < PH_N; ph++) {
        const char *pn = ph_names[ph];
        /* 1. calls */
        for (int i = 0; i < 3; i++) {
            agg t = all_of(&A[i], ph);
            CK(t.calls_min == t.calls_max, "%s, P=%d: tasks make %ld to %ld callbacks", pn, A[i].P, t.calls_min,
               t.calls_max);
            CK(t.calls_max == all_of(&A[0], ph).calls_max, "%s: %ld callbacks per task at P=%d, %ld at P=%d", pn,
               all_of(&A[0], ph).calls_max, A[0].P, t.calls_max, A[i].P);
            CK(!memcmp(A[i].calls_root[ph], A[0].calls_root[ph], sizeof A[0].calls_root[ph]),
               "%s: task 0's callbacks per operation differ between P=%d and P=%d", pn, A[0].P, A[i].P);
        }
        for (int i = 0; i < 2; i++) {
            agg t = all_of(&B[i], ph);
            CK(t.calls_min == t.calls_max, "%s, one file, P=%d: tasks make %ld to %ld callbacks", pn, B[i].P,
               t.calls_min, t.calls_max);
            CK(t.calls_max == all_of(&B[0], ph).calls_max, "%s, one file: %ld callbacks per task at P=%d, %ld at P=%d",
               pn, all_of(&B[0], ph).calls_max, B[0].P, t.calls_max, B[i].P);
        }
        /* 2. bytes per non-master task */
        int64_t b0 = A[0].a[ph][R_OTHER].sent_max + A[0].a[ph][R_OTHER].recv_max;
        for (int i = 1; i < 3; i++) {
            int64_t b = A[i].a[ph][R_OTHER].sent_max + A[i].a[ph][R_OTHER].recv_max;
            CK(b <= b0, "%s: bytes per non-master task grow: %lld at P=%d, %lld at P=%d", pn, (long long)b0, A[0].P,
               (long long)b, A[i].P);
        }
        int64_t c0 = B[0].a[ph][R_OTHER].sent_max + B[0].a[ph][R_OTHER].recv_max,
                c1 = B[1].a[ph][R_OTHER].sent_max + B[1].a[ph][R_OTHER].recv_max;
        CK(c1 <= c0 && c0 <= b0,
           "%s, one file: bytes per non-master task %lld at P=%d, %lld at P=%d (%lld with %d "
           "tasks per file)",
           pn, (long long)c0, B[0].P, (long long)c1, B[1].P, (long long)b0, A[0].tpf);
        /* 3. masters other than task 0, fixed tasks per file */
        const agg *m0 = &A[0].a[ph][R_MASTER];
        for (int i = 1; i < 3; i++) {
            const agg *m = &A[i].a[ph][R_MASTER];
            CK(m->maxbuf_max <= m0->maxbuf_max,
               "%s: largest buffer on a master grows at %d tasks per file: %lld at "
               "P=%d, %lld at P=%d",
               pn, A[0].tpf, (long long)m0->maxbuf_max, A[0].P, (long long)m->maxbuf_max, A[i].P);
            if (sim_mem_hooked)
                CK(m->heap_max <= m0->heap_max + m0->heap_max / 2 + 4096,
                   "%s: heap on a master grows at %d tasks per "
                   "file: %lld B at P=%d, %lld B at P=%d",
                   pn, A[0].tpf, (long long)m0->heap_max, A[0].P, (long long)m->heap_max, A[i].P);
            CK(A[i].a[ph][R_OTHER].maxbuf_max <= A[0].a[ph][R_OTHER].maxbuf_max,
               "%s: largest buffer on a non-master grows: %lld at P=%d, %lld at P=%d", pn,
               (long long)A[0].a[ph][R_OTHER].maxbuf_max, A[0].P, (long long)A[i].a[ph][R_OTHER].maxbuf_max, A[i].P);
        }
        /* 4. task 0, call by call */
        CK(A[0].nrootlog[ph] == A[2].nrootlog[ph], "%s: task 0 logged %d calls at P=%d, %d at P=%d", pn,
           A[0].nrootlog[ph], A[0].P, A[2].nrootlog[ph], A[2].P);
        int lastg = -1;
        for (int k = 0; k < A[2].nrootlog[ph]; k++)
            if (A[2].rootlog[ph][k].kind == SIM_GLOBAL && A[2].rootlog[ph][k].op == SIM_GATHER)
                lastg = k;
        for (int k = 0; k < A[0].nrootlog[ph] && k < A[2].nrootlog[ph]; k++) {
            const sim_call *s = &A[0].rootlog[ph][k], *b = &A[2].rootlog[ph][k];
            const char *name = classify(ph, b, k == lastg);
            int grows = b->bytes > 2 * s->bytes;
            char what[256];
            snprintf(what, sizeof what,
                     "%s, call %d of task 0 (%s %s): %lld B at P=%d, %lld B at P=%d (%.1f B per task)", pn, k + 1,
                     b->kind == SIM_GLOBAL ? "global" : "local", sim_op_names[b->op], (long long)s->bytes, A[0].P,
                     (long long)b->bytes, A[2].P, (double)b->bytes / A[2].P);
            if (grows && known(name))
                printf("KNOWN VIOLATION %s: %s\n", name, what);
            else if (grows)
                CK(0, "buffer grows with P at %d tasks per file: %s", A[0].tpf, what);
            else if (known(name) && b->kind == SIM_GLOBAL && (b->op == SIM_GATHER || b->op == SIM_SCATTER))
                CK(0, "%s no longer grows with P (%s): remove the expectation", name, what);
        }
    }
    printf("check: %d failure(s); 5 runs in %.1f s\n", check_fail, sim_now() - t0);
    return check_fail ? 1 : 0;
}

static int parse_list(const char *s, int *v, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        if (!strncmp(s, "tpf", 3))
            v[n++] = -atoi(s + 3);
        else
            v[n++] = (int)strtod(s, NULL);
        s = strchr(s, ',');
        if (s)
            s++;
    }
    return n;
}

int main(int argc, char **argv)
{
    opts o = {".", NULL, 16, 64, 0, 0, 64 * 1024};
    int Ps[16] = {1000}, nP = 1, Fs[16] = {1}, nF = 1, chk = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check"))
            chk = 1;
        else if (!strcmp(a, "--check-small"))
            chk = 2;
        else if (!strcmp(a, "--oldest-first"))
            g_oldest_first = 1;
        else if (!strcmp(a, "--trim"))
            sim_trim_stacks = 1;
        else if (!strcmp(a, "--copy-stacks"))
            sim_copy_stacks = 1;
        else if (!strcmp(a, "--keep"))
            o.keep = 1;
        else if (!strcmp(a, "-P") && v)
            nP = parse_list(argv[++i], Ps, 16);
        else if (!strcmp(a, "-f") && v)
            nF = parse_list(argv[++i], Fs, 16);
        else if (!strcmp(a, "--dir") && v)
            o.dir = argv[++i];
        else if (!strcmp(a, "--csv") && v)
            o.csv = argv[++i];
        else if (!strcmp(a, "--bytes") && v)
            o.bytes = atoi(argv[++i]);
        else if (!strcmp(a, "--fsblk") && v)
            o.fsblk = atoi(argv[++i]);
        else if (!strcmp(a, "--stack") && v)
            o.stack = (size_t)atoi(argv[++i]) * 1024;
        else {
            fprintf(stderr,
                    "usage: %s [--check] [-P 1000,1e4] [-f 1,tpf1024] [--dir D] [--csv F] [--bytes N] "
                    "[--fsblk N] [--stack KiB] [--trim] [--copy-stacks] [--oldest-first] [--keep]\n",
                    argv[0]);
            return 2;
        }
    }
    if (o.bytes < 0 || o.bytes > 4096)
        o.bytes = 16;
    if (sim_copy_stacks && o.stack < (1 << 20)) /* one run stack: room for the deepest call */
        o.stack = 1 << 20;
    if (chk)
        return check(&o, chk == 2);
    FILE *csv = NULL;
    if (o.csv) {
        struct stat st;
        int fresh = stat(o.csv, &st) != 0 || st.st_size == 0;
        csv = fopen(o.csv, "a");
        if (csv && fresh)
            fprintf(csv, "%s\n", csv_header);
    }
    static run r;
    for (int i = 0; i < nP; i++)
        for (int j = 0; j < nF; j++) {
            int rc = run_one(&o, Ps[i], Fs[j], &r);
            if (rc)
                return rc;
            print_run(&r);
            if (csv) {
                csv_rows(csv, &r);
                fflush(csv);
            }
        }
    if (csv)
        fclose(csv);
    return 0;
}
