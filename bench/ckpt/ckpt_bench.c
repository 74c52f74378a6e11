/* ckpt_bench.c - sheaf-ckpt-bench: checkpoint strategies of libsheaf_ckpt
 * measured as a user sees them (bench/RESULTS.md, "Checkpoints"; issue 31).
 * Plain MPI_Init. In one run, for every repetition, the strategies in turn
 * (interleaved): `steps` consecutive checkpoints of `bytes` per rank in 6 f64
 * fields, each after a compute phase that makes NO MPI call (a sleep by
 * default, so that the writers can use the 2 cores meanwhile; --busy spins),
 * with no barrier between the checkpoints (one before the first). Per rank
 * and step: the time blocked in sheaf_ckpt_write, the part of it spent
 * copying (rbio workers; the rest is waiting: for the writer, the file
 * system, other ranks), the writers' I/O time (open + write + sync + close);
 * per rank the run's total (first compute to the final sheaf_ckpt_wait).
 * Rank 0 prints one line per (strategy, rep), then a summary with the medians
 * over reps: the blocked-time ratio coio (all ranks) / rbio workers, the
 * fraction of rbio workers' calls that returned without waiting (blocked
 * minus copying < 1 ms), each strategy's total run time (slowest rank), and
 * the study's model (np/ng) x BW_rbio / BW_coio. --handoff passes rbio's
 * handoff= option (auto: shared memory where writers share the node).
 * --csv FILE: every rank's every step (for the scatter plot, plot.py). */
#define _DEFAULT_SOURCE
#include "sheaf_ckpt.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NF 6
#define MAXREPS 64
typedef struct cfg {
    const char *dir, *csv, *strategies, *handoff;
    int npng, nf, steps, reps, durable, dedicated, busy, verify;
    double compute_ms;
    uint64_t bytes;
} cfg;

typedef struct rankres { /* per rank, one strategy run */
    double blocked_med, blocked_max, perceived_med, io_med, final_wait, total;
    int role, nowait; /* nowait: calls that returned without waiting (blocked - copying < NOWAIT_S) */
} rankres;
#define NOWAIT_S 1e-3

static int rank, np;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* a barrier that does not spin (MPICH busy-polls on 2 cores) */
static void polite_barrier(void)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done)
            usleep(50);
    }
}

static void compute(const cfg *c)
{
    if (c->busy) {
        double end = now() + c->compute_ms * 1e-3;
        volatile double x = 0;
        while (now() < end)
            x += 1.0;
    } else
        usleep((useconds_t)(c->compute_ms * 1000));
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t parse_bytes(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    if (*e == 'K' || *e == 'k')
        v *= 1024;
    if (*e == 'M' || *e == 'm')
        v *= 1024 * 1024;
    if (*e == 'G' || *e == 'g')
        v *= 1024.0 * 1024 * 1024;
    return (uint64_t)v;
}

static double value(int r, int f, uint64_t i, int step) { return r * 1e6 + f * 1e4 + (double)i + step * 0.25; }

/* rank 0: read the newest checkpoint back and count wrong elements */
static uint64_t verify(const char *base, int step, const uint64_t *counts_of_rank0_layout, int ng, const cfg *c)
{
    (void)counts_of_rank0_layout;
    sheaf_ckpt *ck;
    uint64_t latest = 0, bad = 0;
    if (sheaf_ckpt_latest(base, &latest) || latest != (uint64_t)step || sheaf_ckpt_open(base, latest, &ck)) {
        fprintf(stderr, "verify: %s\n", sheaf_ckpt_errmsg());
        return 1;
    }
    for (int f = 0; f < NF; f++) {
        sheaf_ckpt_field_info fi;
        sheaf_ckpt_field(ck, f, &fi);
        double *buf = malloc(fi.count * 8 + 8);
        if (!buf || sheaf_ckpt_read(ck, f, 0, fi.count, buf)) {
            bad++;
            free(buf);
            continue;
        }
        uint64_t g = 0;
        for (int r = 0; r < np; r++)
            for (uint64_t i = 0; i < sheaf_ckpt_rank_count(ck, f, r); i++, g++)
                bad += buf[g] != value(r, f, i, step);
        free(buf);
    }
    (void)ng;
    (void)c;
    sheaf_ckpt_close(ck);
    return bad;
}

typedef struct summary {
    double blocked_all, blocked_workers, blocked_writers, blocked_max, perceived, wait_final, io_max, bw, pbw;
    double total, nowait_frac; /* slowest rank's run (first write to the last commit); workers' calls */
} summary;

static int run_one(const cfg *c, const char *strategy, int rep, FILE *csv, summary *out, uint64_t *verrs)
{
    int ng = np / c->npng > 0 ? np / c->npng : 1;
    int nf = !strcmp(strategy, "rbio") ? (c->nf < ng ? c->nf : ng) : (c->nf < np ? c->nf : np);
    char base[4096], opts[512];
    snprintf(base, sizeof base, "%s/rep%02d-%s", c->dir, rep, strategy);
    snprintf(opts, sizeof opts, "strategy=%s,nf=%d,ng=%d,durable=%d,dedicated=%d,keep=1,timeout=600,handoff=%s",
             strategy, nf, ng, c->durable, !strcmp(strategy, "rbio") ? c->dedicated : 0, c->handoff);
    sheaf_ckpt_ctx *ctx;
    if (sheaf_ckpt_init(MPI_COMM_WORLD, base, "ckpt_bench", opts, &ctx)) {
        if (rank == 0)
            fprintf(stderr, "sheaf-ckpt-bench: %s\n", sheaf_ckpt_errmsg());
        return 1;
    }
    int role = sheaf_ckpt_role(ctx);
    uint64_t per = c->bytes / 8 / NF;
    if (role == SHEAF_CKPT_DEDICATED)
        per = 0;
    double *data[NF];
    for (int f = 0; f < NF; f++) {
        data[f] = malloc(per * 8 + 8);
        char name[16];
        snprintf(name, sizeof name, "field%d", f);
        sheaf_ckpt_declare(ctx, name, SHEAF_CKPT_F64, per, data[f], NULL);
    }
    double *blk = calloc((size_t)c->steps, sizeof *blk), *perc = calloc((size_t)c->steps, sizeof *perc),
           *io = calloc((size_t)c->steps, sizeof *io);
    int rc = 0, nowait = 0;
    polite_barrier(); /* the only one: consecutive checkpoints, no MPI call in between */
    double t_start = now();
    for (int s = 1; s <= c->steps && !rc; s++) {
        for (int f = 0; f < NF; f++)
            for (uint64_t i = 0; i < per; i++)
                data[f][i] = value(rank, f, i, s);
        compute(c);
        rc = sheaf_ckpt_write(ctx, (uint64_t)s);
        sheaf_ckpt_stats st;
        sheaf_ckpt_get_stats(ctx, &st);
        blk[s - 1] = st.blocked_s;
        perc[s - 1] = st.perceived_s;
        io[s - 1] = st.io_s;
        nowait += st.blocked_s - st.perceived_s < NOWAIT_S;
        if (csv)
            fprintf(csv, "%d,%s,%d,%d,%d,%.9f,%.9f,%.9f\n", rep, strategy, rank, role, s, st.blocked_s, st.perceived_s,
                    st.io_s);
    }
    double t = now();
    if (!rc)
        rc = sheaf_ckpt_wait(ctx);
    double final_wait = now() - t, total_rank = now() - t_start;
    if (rc && rank == 0)
        fprintf(stderr, "sheaf-ckpt-bench: %s: %s\n", strategy, sheaf_ckpt_error(ctx));
    sheaf_ckpt_finalize(&ctx);
    rankres me = {0};
    me.blocked_max = 0;
    for (int s = 0; s < c->steps; s++)
        me.blocked_max = fmax(me.blocked_max, blk[s]);
    me.blocked_med = median(blk, c->steps);
    me.perceived_med = median(perc, c->steps);
    me.io_med = median(io, c->steps);
    me.final_wait = final_wait;
    me.role = role;
    me.total = total_rank;
    me.nowait = nowait;
    rankres *all = rank == 0 ? calloc((size_t)np, sizeof *all) : NULL;
    MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    int anyrc = rc;
    MPI_Allreduce(&rc, &anyrc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        double *a = malloc(sizeof *a * (size_t)np * 3 + 8), *w = a + np, *wr = a + 2 * np, slow = 0, pmax = 0;
        int nw = 0, nwr = 0;
        summary s = {0};
        double *pw = malloc(sizeof *pw * (size_t)np + 8);
        int npw = 0, calls = 0, nowaits = 0;
        for (int r = 0; r < np; r++) {
            a[r] = all[r].blocked_med;
            s.blocked_max = fmax(s.blocked_max, all[r].blocked_max);
            int writer = all[r].role == SHEAF_CKPT_WRITER || all[r].role == SHEAF_CKPT_DEDICATED;
            if (all[r].role == SHEAF_CKPT_WORKER || all[r].role == SHEAF_CKPT_RANK)
                w[nw++] = all[r].blocked_med;
            if (writer)
                wr[nwr++] = all[r].blocked_med;
            /* the slowest process's open+write+close: writers' I/O time for rbio, blocked time otherwise */
            slow = fmax(slow, all[r].role == SHEAF_CKPT_RANK ? all[r].blocked_med : writer ? all[r].io_med : 0);
            s.total = fmax(s.total, all[r].total);
            if (all[r].role == SHEAF_CKPT_WORKER || all[r].role == SHEAF_CKPT_RANK)
                calls += c->steps, nowaits += all[r].nowait;
            if (all[r].role == SHEAF_CKPT_WORKER) {
                pmax = fmax(pmax, all[r].perceived_med);
                pw[npw++] = all[r].final_wait;
            }
            s.wait_final = fmax(s.wait_final, all[r].final_wait);
            s.io_max = fmax(s.io_max, all[r].io_med);
        }
        double total = (double)(per ? per : c->bytes / 8 / NF) * 8 * NF *
                       (np - (c->dedicated && !strcmp(strategy, "rbio") ? ng : 0));
        s.blocked_workers = median(w, nw);
        s.blocked_writers = median(wr, nwr);
        s.blocked_all = median(a, np);
        s.perceived = pmax;
        s.nowait_frac = calls ? (double)nowaits / calls : 0;
        s.bw = slow > 0 ? total / slow / 1048576.0 : 0;
        s.pbw = pmax > 0 ? total / pmax / 1048576.0 : 0;
        uint64_t ve = c->verify && !anyrc ? verify(base, c->steps, NULL, ng, c) : 0;
        *verrs += ve + (anyrc != 0);
        printf("mode=%s np=%d ng=%d nf=%d bytes_per_rank=%llu steps=%d rep=%d durable=%d compute_ms=%g "
               "blocked_med_all=%.6f blocked_med_workers=%.6f blocked_med_writers=%.6f blocked_max=%.6f "
               "perceived_max=%.6f perceived_MiBps=%.1f wait_final_max=%.6f io_med_max=%.6f "
               "bw_slowest_MiBps=%.1f worker_final_wait_med=%.6f verify_errors=%llu total_s=%.3f "
               "worker_calls_nowait=%d/%d handoff=%s\n",
               strategy, np, !strcmp(strategy, "rbio") ? ng : np, nf, (unsigned long long)c->bytes, c->steps, rep,
               c->durable, c->compute_ms, s.blocked_all, s.blocked_workers, s.blocked_writers, s.blocked_max,
               s.perceived, s.pbw, s.wait_final, s.io_max, s.bw, median(pw, npw), (unsigned long long)ve, s.total,
               nowaits, calls, !strcmp(strategy, "rbio") ? c->handoff : "-");
        fflush(stdout);
        *out = s;
        free(a);
        free(pw);
        free(all);
    }
    for (int f = 0; f < NF; f++)
        free(data[f]);
    free(blk), free(perc), free(io);
    return anyrc;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: sheaf-ckpt-bench --dir DIR [--npng K] [--nf N] [--bytes B] [--steps S] [--reps R]\n"
                        "  [--compute-ms C] [--busy] [--durable 0|1] [--dedicated 0|1] [--handoff auto|shm|send]\n"
                        "  [--strategies fpp,coio,rbio,sion] [--csv FILE] [--verify]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    cfg c = {NULL, NULL, "coio,rbio", "auto", 8, 1, 5, 3, 1, 0, 0, 0, 200, 2437u * 1024};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--busy")) {
            c.busy = 1;
            continue;
        }
        if (!strcmp(a, "--verify")) {
            c.verify = 1;
            continue;
        }
        if (!v) {
            usage();
            MPI_Finalize();
            return 2;
        }
        i++;
        if (!strcmp(a, "--dir"))
            c.dir = v;
        else if (!strcmp(a, "--csv"))
            c.csv = v;
        else if (!strcmp(a, "--handoff"))
            c.handoff = v;
        else if (!strcmp(a, "--strategies"))
            c.strategies = v;
        else if (!strcmp(a, "--npng"))
            c.npng = atoi(v);
        else if (!strcmp(a, "--nf"))
            c.nf = atoi(v);
        else if (!strcmp(a, "--steps"))
            c.steps = atoi(v);
        else if (!strcmp(a, "--reps"))
            c.reps = atoi(v);
        else if (!strcmp(a, "--durable"))
            c.durable = atoi(v);
        else if (!strcmp(a, "--dedicated"))
            c.dedicated = atoi(v);
        else if (!strcmp(a, "--compute-ms"))
            c.compute_ms = atof(v);
        else if (!strcmp(a, "--bytes"))
            c.bytes = parse_bytes(v);
        else {
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (!c.dir || c.npng < 1 || c.nf < 1 || c.steps < 1 || c.reps < 1 || c.reps > MAXREPS) {
        usage();
        MPI_Finalize();
        return 2;
    }
    FILE *csv = NULL;
    if (c.csv) {
        char p[4200];
        snprintf(p, sizeof p, "%s.%d", c.csv, rank); /* one per rank, concatenated by the script */
        csv = fopen(p, "w");
    }
    char list[256];
    snprintf(list, sizeof list, "%s", c.strategies);
    const char *names[8];
    int ns = 0;
    for (char *sv, *t = strtok_r(list, ",", &sv); t && ns < 8; t = strtok_r(NULL, ",", &sv))
        names[ns++] = t;
    summary res[8][MAXREPS];
    uint64_t verrs = 0;
    int rc = 0;
    for (int rep = 0; rep < c.reps && !rc; rep++)
        for (int k = 0; k < ns && !rc; k++) /* interleaved: A B A B ... */
            rc = run_one(&c, names[k], rep, csv, &res[k][rep], &verrs);
    if (csv)
        fclose(csv);
    if (rank == 0 && !rc) {
        int ic = -1, ir = -1;
        for (int k = 0; k < ns; k++) {
            ic = !strcmp(names[k], "coio") ? k : ic;
            ir = !strcmp(names[k], "rbio") ? k : ir;
        }
        double ratio[MAXREPS], bwc[MAXREPS], bwr[MAXREPS], tc[MAXREPS], tr[MAXREPS], nw[MAXREPS];
        for (int r = 0; ic >= 0 && ir >= 0 && r < c.reps; r++) {
            tc[r] = res[ic][r].total;
            tr[r] = res[ir][r].total;
            nw[r] = res[ir][r].nowait_frac;
            ratio[r] = res[ic][r].blocked_all / fmax(res[ir][r].blocked_workers, 1e-9);
            bwc[r] = res[ic][r].bw;
            bwr[r] = res[ir][r].bw;
        }
        int ng = np / c.npng > 0 ? np / c.npng : 1;
        if (ic >= 0 && ir >= 0) {
            double mr = median(ratio, c.reps), mc = median(bwc, c.reps), mb = median(bwr, c.reps);
            printf("summary np=%d ng=%d reps=%d verify_errors=%llu ratio_coio_over_rbio_worker_median=%.1f "
                   "ratio_min=%.1f ratio_max=%.1f bw_coio_MiBps=%.1f bw_rbio_MiBps=%.1f "
                   "model_np_over_ng_x_bw_ratio=%.2f total_coio_s=%.3f total_rbio_s=%.3f "
                   "rbio_worker_calls_nowait_frac=%.3f compute_ms=%g\n",
                   np, ng, c.reps, (unsigned long long)verrs, mr, ratio[0], ratio[c.reps - 1], mc, mb,
                   (double)np / ng * (mc > 0 ? mb / mc : 0), median(tc, c.reps), median(tr, c.reps), median(nw, c.reps),
                   c.compute_ms);
        } else
            printf("summary np=%d reps=%d verify_errors=%llu\n", np, c.reps, (unsigned long long)verrs);
    }
    MPI_Finalize();
    return rc ? 1 : 0;
}
