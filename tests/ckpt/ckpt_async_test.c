/* ckpt_async_test.c - rbio's asynchrony as an application sees it (issue 31).
 *
 *   ckpt_async_test base=DIR opts=OPTIONS expect=shm|thread|send [thread=1]
 *                   [steps=3] [compute_ms=400] [within_s=15]
 *
 * Plain MPI_Init (MPI_Init_thread(MPI_THREAD_MULTIPLE) with thread=1).
 * `steps` consecutive checkpoints without a barrier; ~1 MB per rank in two
 * fields (unequal counts, past every eager limit). After sheaf_ckpt_write(k)
 * returns, every rank overwrites its arrays and then makes NO MPI call: it
 * spins (compute) and polls the file system with the serial reader until
 * step k is listed, every checksum of it verifies and this rank's slice reads
 * back as the values it had at write(k), or until within_s seconds have
 * passed. A step that does not appear while nobody calls MPI is a failure:
 * the writers finished writing step k without the workers' help. (Before
 * issue 31 the writers waited for the workers' next MPI call: this test
 * failed there.) Also checks sheaf_ckpt_handoff() == expect on every rank and
 * the compute communicator (sheaf_ckpt_compute_comm): with dedicated=1 the
 * dedicated writers get MPI_COMM_NULL and an MPI_Allreduce over it counts
 * np - ng ranks, otherwise np. Prints "ckpt_async_test: OK" on rank 0. */
#define _DEFAULT_SOURCE
#include "sheaf_ckpt.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, np;
static uint64_t *cu, *ci; /* every rank's declared counts (dedicated writers: 0) */
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank, __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                              \
        }                                                                                                              \
    } while (0)

static const char *arg(int argc, char **argv, const char *k, const char *def)
{
    size_t n = strlen(k);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], k, n) && argv[i][n] == '=')
            return argv[i] + n + 1;
    return def;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t count_u(int r) { return 120000 + 37 * (uint64_t)r; } /* f64: ~1 MB */
static uint64_t count_id(int r) { return (uint64_t)(r % 3) * 5000; } /* i64, some ranks none */
static double val_u(uint64_t k, int r, uint64_t i) { return (double)k * 1e7 + r * 1e5 + (double)i * 0.5; }
static int64_t val_id(uint64_t k, int r, uint64_t i) { return (int64_t)(k << 40) + ((int64_t)r << 20) + (int64_t)i; }

/* no MPI in here: is step k committed, checksummed and this rank's slice right? */
static int step_ready(const char *base, uint64_t k, double *tmp, int64_t *tid)
{
    uint64_t latest = 0, bad = 0;
    sheaf_ckpt *r;
    if (sheaf_ckpt_latest(base, &latest) || latest < k || sheaf_ckpt_open(base, k, &r))
        return 0;
    int ok = !sheaf_ckpt_verify(r, &bad) && bad == 0;
    uint64_t fu = 0, fi = 0;
    for (int q = 0; q < rank; q++)
        fu += cu[q], fi += ci[q];
    int iu = sheaf_ckpt_field_index(r, "u"), ii = sheaf_ckpt_field_index(r, "id");
    ok = ok && iu >= 0 && ii >= 0 && sheaf_ckpt_rank_count(r, iu, rank) == cu[rank];
    ok = ok && (!cu[rank] || !sheaf_ckpt_read(r, iu, fu, cu[rank], tmp));
    ok = ok && (!ci[rank] || !sheaf_ckpt_read(r, ii, fi, ci[rank], tid));
    for (uint64_t i = 0; ok && i < cu[rank]; i++)
        ok = tmp[i] == val_u(k, rank, i);
    for (uint64_t i = 0; ok && i < ci[rank]; i++)
        ok = tid[i] == val_id(k, rank, i);
    sheaf_ckpt_close(r);
    return ok ? 1 : -1;
}

int main(int argc, char **argv)
{
    int thread = atoi(arg(argc, argv, "thread", "0")), provided = MPI_THREAD_SINGLE;
    if (thread)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (thread && provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("ckpt_async_test: SKIP: the MPI gives no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    const char *base = arg(argc, argv, "base", NULL), *opts = arg(argc, argv, "opts", "strategy=rbio");
    const char *expect = arg(argc, argv, "expect", "shm");
    int steps = atoi(arg(argc, argv, "steps", "3"));
    double compute = atof(arg(argc, argv, "compute_ms", "400")) * 1e-3;
    double within = atof(arg(argc, argv, "within_s", "15"));
    CHECK(base && steps > 0, "usage: ckpt_async_test base=DIR opts=... expect=shm|thread|send");
    sheaf_ckpt_ctx *c;
    CHECK(!sheaf_ckpt_init(MPI_COMM_WORLD, base, "async", opts, &c), "init: %s", sheaf_ckpt_errmsg());
    int want = !strcmp(expect, "shm")      ? SHEAF_CKPT_HANDOFF_SHM
               : !strcmp(expect, "thread") ? SHEAF_CKPT_HANDOFF_THREAD
                                           : SHEAF_CKPT_HANDOFF_SEND;
    CHECK(sheaf_ckpt_handoff(c) == want, "handoff %d, expected %s", sheaf_ckpt_handoff(c), expect);
    int ded = sheaf_ckpt_role(c) == SHEAF_CKPT_DEDICATED, anyded = 0;
    MPI_Allreduce(&ded, &anyded, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm cc = sheaf_ckpt_compute_comm(c);
    CHECK((cc == MPI_COMM_NULL) == ded, "compute communicator on a %s rank", ded ? "dedicated" : "compute");
    if (!ded) { /* the application's own collective, among the compute ranks only */
        int one = 1, n = 0;
        MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, cc);
        CHECK(n == np - anyded, "compute communicator of %d ranks, expected %d", n, np - anyded);
    }
    uint64_t nu = ded ? 0 : count_u(rank), ni = ded ? 0 : count_id(rank);
    double *u = malloc((count_u(rank) + 1) * sizeof *u), *tmp = malloc((count_u(rank) + 1) * sizeof *tmp);
    int64_t *id = malloc((count_id(rank) + 1) * sizeof *id), *tid = malloc((count_id(rank) + 1) * sizeof *tid);
    cu = calloc((size_t)np, sizeof *cu), ci = calloc((size_t)np, sizeof *ci);
    CHECK(u && tmp && id && tid && cu && ci, "memory");
    MPI_Allgather(&nu, 1, MPI_UINT64_T, cu, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    MPI_Allgather(&ni, 1, MPI_UINT64_T, ci, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    CHECK(!sheaf_ckpt_declare(c, "u", SHEAF_CKPT_F64, nu, u, NULL), "declare u");
    CHECK(!sheaf_ckpt_declare(c, "id", SHEAF_CKPT_I64, ni, id, NULL), "declare id");
    if (atoi(arg(argc, argv, "mismatch", "0"))) { /* the last rank (a worker) declares one more field */
        if (rank == np - 1)
            CHECK(!sheaf_ckpt_declare(c, "extra", SHEAF_CKPT_U8, 0, NULL, NULL), "declare extra");
        int rc = sheaf_ckpt_write(c, 1); /* workers: 0 here, the failure at the wait */
        if (!rc)
            rc = sheaf_ckpt_wait(c);
        CHECK(rc == -EINVAL && strstr(sheaf_ckpt_error(c), "different fields"), "mismatched fields: %d %s", rc,
              sheaf_ckpt_error(c));
        uint64_t latest = 0;
        CHECK(sheaf_ckpt_latest(base, &latest) == -ENOENT, "nothing listed after the refused step");
        CHECK(!sheaf_ckpt_finalize(&c), "finalize after a refused step: %s", sheaf_ckpt_errmsg());
        if (rank == 0)
            printf("ckpt_async_test: OK np=%d opts=%s: mismatched fields refused with -EINVAL on every rank\n", np,
                   opts);
        MPI_Finalize();
        return 0;
    }
    int late = 0;
    double worst = 0, tstart = now();
    for (int k = 1; k <= steps; k++) {
        for (uint64_t i = 0; i < nu; i++)
            u[i] = val_u((uint64_t)k, rank, i);
        for (uint64_t i = 0; i < ni; i++)
            id[i] = val_id((uint64_t)k, rank, i);
        int rc = sheaf_ckpt_write(c, (uint64_t)k);
        CHECK(rc == 0, "write %d: %s", k, sheaf_ckpt_error(c));
        double t0 = now();
        /* the application changes its arrays at once: the data must be out of them */
        for (uint64_t i = 0; i < nu; i++)
            u[i] = -1.0;
        for (uint64_t i = 0; i < ni; i++)
            id[i] = -1;
        /* compute phase: no MPI call, spinning; the step must appear meanwhile */
        int seen = 0;
        double when = 0;
        volatile double x = 0;
        for (;;) {
            for (int i = 0; i < 200000; i++)
                x += 1.0;
            double t = now();
            if (!seen) {
                int s = step_ready(base, (uint64_t)k, tmp, tid);
                CHECK(s >= 0, "step %d is listed but its content differs from the data at write", k);
                if (s > 0)
                    seen = 1, when = t - t0;
            }
            if ((t - t0 >= compute && seen) || t - t0 > within)
                break;
        }
        if (!seen) {
            fprintf(stderr, "rank %d: step %d not committed within %.1f s of its write while no rank called MPI\n",
                    rank, k, within);
            late++;
        } else if (when > worst)
            worst = when;
    }
    double total = now() - tstart;
    int all = 0;
    MPI_Allreduce(&late, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* after the last step only */
    double wmax = 0;
    MPI_Reduce(&worst, &wmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    CHECK(all == 0, "%d (rank, step) pairs were not committed while the ranks computed without MPI", all);
    CHECK(!sheaf_ckpt_finalize(&c), "finalize: %s", sheaf_ckpt_errmsg());
    uint64_t latest = 0;
    CHECK(!sheaf_ckpt_latest(base, &latest) && latest == (uint64_t)steps, "latest %llu", (unsigned long long)latest);
    if (rank == 0)
        printf("ckpt_async_test: OK np=%d opts=%s handoff=%s: %d steps, each committed and verified at most "
               "%.3f s after its write with no MPI call meanwhile (%.2f s in all)\n",
               np, opts, expect, steps, wmax, total);
    free(u), free(tmp), free(id), free(tid), free(cu), free(ci);
    MPI_Finalize();
    return 0;
}
