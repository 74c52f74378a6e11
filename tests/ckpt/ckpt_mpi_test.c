/* ckpt_mpi_test.c - MPI tests of libsheaf_ckpt (tests/ckpt/CMakeLists.txt).
 * Subcommands (args key=value):
 *   roundtrip base= opts= steps=K   write steps 1..K with unequal counts per
 *       rank (three fields), then every rank reads a slice of every field of
 *       the newest step with the serial reader and compares each element
 *   restart base= wnp= opts=        read the newest checkpoint written by wnp
 *       ranks with this run's (different) rank count: counts and values
 *   fault base= opts= bad=STEP      step 1 good, step `bad` fails through the
 *       SHEAF_CKPT_FAULT hook (environment): every rank must get the error,
 *       step 1 stays the newest and readable, then step bad+1 succeeds
 *   stall base= opts=               a writer stalls (SHEAF_CKPT_FAULT): every
 *       other rank must get ETIMEDOUT at its wait; writes err.<rank> files
 * Prints "ckpt_mpi_test: OK ..." on rank 0 and exits 0 when all asserts hold. */
#include "sheaf_ckpt.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int rank, np;
static const char *arg(int argc, char **argv, const char *key, const char *def)
{
    size_t n = strlen(key);
    for (int i = 2; i < argc; i++)
        if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
            return argv[i] + n + 1;
    return def;
}

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank, __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                              \
        }                                                                                                              \
    } while (0)

/* Writer ranks of rbio with dedicated=1 hold nothing (first rank of each group). */
static int dedicated_writer(const char *opts, int r, int n)
{
    if (!strstr(opts, "dedicated=1") || !strstr(opts, "rbio"))
        return 0;
    const char *g = strstr(opts, "ng=");
    int ng = g ? atoi(g + 3) : (n >= 8 ? n / 8 : 1);
    for (int k = 0; k < ng; k++)
        if ((long)k * n / ng == r)
            return 1;
    return 0;
}
static uint64_t count_of(int f, int r, int n, const char *opts)
{
    if (dedicated_writer(opts, r, n))
        return 0;
    return f == 0 ? 100 + 37 * (uint64_t)r : f == 1 ? 10 + (uint64_t)(r % 3) * 5 : (uint64_t)(r % 2) * 3;
}
static double vd(uint64_t s, int r, uint64_t i) { return (double)s * 1e6 + r * 1000.0 + (double)i + 0.5; }
static int32_t vi(uint64_t s, int r, uint64_t i) { return (int32_t)(s * 100000 + (uint64_t)r * 100 + i); }
static uint8_t vu(uint64_t s, int r, uint64_t i) { return (uint8_t)(s + (uint64_t)r + i); }

typedef struct fields {
    double *u;
    int32_t *id;
    uint8_t *flag;
} fields;

static void fill(fields *d, uint64_t s, const char *opts)
{
    for (uint64_t i = 0; i < count_of(0, rank, np, opts); i++)
        d->u[i] = vd(s, rank, i);
    for (uint64_t i = 0; i < count_of(1, rank, np, opts); i++)
        d->id[i] = vi(s, rank, i);
    for (uint64_t i = 0; i < count_of(2, rank, np, opts); i++)
        d->flag[i] = vu(s, rank, i);
}

static sheaf_ckpt_ctx *open_ctx(const char *base, const char *opts, fields *d)
{
    sheaf_ckpt_ctx *c;
    int rc = sheaf_ckpt_init(MPI_COMM_WORLD, base, "ckpt_test", opts, &c);
    CHECK(rc == 0, "init: %s", sheaf_ckpt_errmsg());
    d->u = calloc(count_of(0, rank, np, opts) + 1, sizeof *d->u);
    d->id = calloc(count_of(1, rank, np, opts) + 1, sizeof *d->id);
    d->flag = calloc(count_of(2, rank, np, opts) + 1, 1);
    int idx;
    CHECK(!sheaf_ckpt_declare(c, "u", SHEAF_CKPT_F64, count_of(0, rank, np, opts), d->u, &idx) && idx == 0, "u");
    CHECK(!sheaf_ckpt_declare(c, "id", SHEAF_CKPT_I32, count_of(1, rank, np, opts), d->id, &idx) && idx == 1, "id");
    CHECK(!sheaf_ckpt_declare(c, "flag", SHEAF_CKPT_U8, count_of(2, rank, np, opts), d->flag, &idx), "flag");
    CHECK(sheaf_ckpt_declare(c, "u", SHEAF_CKPT_F64, 1, d->u, NULL) == -EINVAL, "duplicate name refused");
    return c;
}

/* Every rank reads its slice [rank*N/np, (rank+1)*N/np) of each field of
 * checkpoint `step` written by wnp ranks; returns elements checked. */
static uint64_t check_read(const char *base, uint64_t step, int wnp, const char *opts)
{
    sheaf_ckpt *ck;
    CHECK(!sheaf_ckpt_open(base, step, &ck), "open step %" PRIu64 ": %s", step, sheaf_ckpt_errmsg());
    CHECK(sheaf_ckpt_nranks(ck) == wnp && sheaf_ckpt_nfields(ck) == 3 && sheaf_ckpt_step(ck) == step,
          "nranks %d nfields %d", sheaf_ckpt_nranks(ck), sheaf_ckpt_nfields(ck));
    CHECK(!strcmp(sheaf_ckpt_app(ck), "ckpt_test"), "app");
    uint64_t checked = 0;
    for (int f = 0; f < 3; f++) {
        sheaf_ckpt_field_info fi;
        CHECK(!sheaf_ckpt_field(ck, f, &fi), "field");
        uint64_t total = 0;
        for (int r = 0; r < wnp; r++) {
            CHECK(sheaf_ckpt_rank_count(ck, f, r) == count_of(f, r, wnp, opts), "count f%d r%d", f, r);
            total += count_of(f, r, wnp, opts);
        }
        CHECK(fi.count == total, "total of field %d: %" PRIu64 " vs %" PRIu64, f, fi.count, total);
        uint64_t a = total * (uint64_t)rank / (uint64_t)np, b = total * (uint64_t)(rank + 1) / (uint64_t)np;
        unsigned char *buf = malloc((b - a) * fi.elemsize + 1);
        CHECK(!sheaf_ckpt_read(ck, f, a, b - a, buf), "read: %s", sheaf_ckpt_errmsg());
        /* map global index -> (writer rank, local index) */
        uint64_t g = 0;
        for (int r = 0; r < wnp; r++) {
            uint64_t n = count_of(f, r, wnp, opts);
            for (uint64_t i = 0; i < n; i++, g++) {
                if (g < a || g >= b)
                    continue;
                uint64_t k = g - a;
                if (f == 0) {
                    double x;
                    memcpy(&x, buf + 8 * k, 8);
                    CHECK(x == vd(step, r, i), "u r%d i%" PRIu64, r, i);
                }
                if (f == 1) {
                    int32_t x;
                    memcpy(&x, buf + 4 * k, 4);
                    CHECK(x == vi(step, r, i), "id r%d", r);
                }
                if (f == 2)
                    CHECK(buf[k] == vu(step, r, i), "flag r%d", r);
                checked++;
            }
        }
        free(buf);
    }
    CHECK(sheaf_ckpt_read(ck, 0, 1u << 30, 1, NULL) == -EINVAL, "read beyond the field is refused");
    uint64_t bad = 1;
    if (rank == 0)
        CHECK(!sheaf_ckpt_verify(ck, &bad) && bad == 0, "verify: bad %" PRIu64 " %s", bad, sheaf_ckpt_errmsg());
    sheaf_ckpt_close(ck);
    return checked;
}

static int roundtrip(const char *base, const char *opts, int steps)
{
    fields d;
    sheaf_ckpt_ctx *c = open_ctx(base, opts, &d);
    for (int s = 1; s <= steps; s++) {
        fill(&d, (uint64_t)s, opts);
        int rc = sheaf_ckpt_write(c, (uint64_t)s);
        CHECK(rc == 0, "write %d: %s", s, sheaf_ckpt_error(c));
        /* the buffer may change right away (rbio copied it) */
        fill(&d, 999, opts);
    }
    CHECK(!sheaf_ckpt_wait(c), "wait: %s", sheaf_ckpt_error(c));
    CHECK(sheaf_ckpt_write(c, 1) == -EINVAL, "an old step is refused");
    CHECK(!sheaf_ckpt_finalize(&c) && !c, "finalize");
    uint64_t latest;
    CHECK(!sheaf_ckpt_latest_mpi(MPI_COMM_WORLD, base, &latest) && latest == (uint64_t)steps, "latest");
    uint64_t got = check_read(base, latest, np, opts), all = 0;
    MPI_Allreduce(&got, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t want = 0;
    for (int f = 0; f < 3; f++)
        for (int r = 0; r < np; r++)
            want += count_of(f, r, np, opts);
    CHECK(all == want, "elements checked %" PRIu64 " of %" PRIu64, all, want);
    size_t n = 0;
    sheaf_ckpt_list(base, NULL, 0, &n);
    const char *keep = strstr(opts, "keep=");
    size_t expect = keep ? (size_t)atoi(keep + 5) : (size_t)steps;
    CHECK(n == expect, "listed %zu checkpoints, expected %zu", n, expect);
    if (rank == 0)
        printf("ckpt_mpi_test: OK roundtrip np=%d opts=%s steps=%d elements=%" PRIu64 "\n", np, opts, steps, all);
    free(d.u), free(d.id), free(d.flag);
    return 0;
}

static int restart(const char *base, int wnp, const char *opts, uint64_t expect_step)
{
    uint64_t latest;
    CHECK(!sheaf_ckpt_latest_mpi(MPI_COMM_WORLD, base, &latest), "latest: %s", sheaf_ckpt_errmsg());
    CHECK(!expect_step || latest == expect_step, "newest step %" PRIu64 ", expected %" PRIu64, latest, expect_step);
    uint64_t got = check_read(base, latest, wnp, opts), all = 0;
    MPI_Allreduce(&got, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t want = 0;
    for (int f = 0; f < 3; f++)
        for (int r = 0; r < wnp; r++)
            want += count_of(f, r, wnp, opts);
    CHECK(all == want, "restart checked %" PRIu64 " of %" PRIu64, all, want);
    if (rank == 0)
        printf("ckpt_mpi_test: OK restart of %d ranks on %d ranks, step %" PRIu64 ", %" PRIu64 " elements\n", wnp, np,
               latest, all);
    return 0;
}

static int fault(const char *base, const char *opts, int bad)
{
    fields d;
    sheaf_ckpt_ctx *c = open_ctx(base, opts, &d);
    fill(&d, 1, opts);
    CHECK(!sheaf_ckpt_write(c, 1) && !sheaf_ckpt_wait(c), "step 1: %s", sheaf_ckpt_error(c));
    fill(&d, (uint64_t)bad, opts);
    int rc = sheaf_ckpt_write(c, (uint64_t)bad);
    if (!rc)
        rc = sheaf_ckpt_wait(c);
    CHECK(rc != 0, "step %d should fail on every rank", bad);
    CHECK(strstr(sheaf_ckpt_error(c), "failed on rank") != NULL, "message names the rank: %s", sheaf_ckpt_error(c));
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(all == rc, "the same code on every rank (%d vs min %d)", rc, all);
    if (rank == 0)
        printf("ckpt_mpi_test: every rank got: %s (code %d)\n", sheaf_ckpt_error(c), rc);
    uint64_t latest;
    CHECK(!sheaf_ckpt_latest_mpi(MPI_COMM_WORLD, base, &latest) && latest == 1, "step 1 stays the newest");
    check_read(base, 1, np, opts);
    /* lift the injected file size limit; the next checkpoint succeeds */
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_FSIZE, &rl);
    fill(&d, (uint64_t)bad + 1, opts);
    CHECK(!sheaf_ckpt_write(c, (uint64_t)bad + 1) && !sheaf_ckpt_wait(c), "after the fault: %s", sheaf_ckpt_error(c));
    CHECK(!sheaf_ckpt_finalize(&c), "finalize");
    check_read(base, (uint64_t)bad + 1, np, opts);
    size_t n;
    sheaf_ckpt_list(base, NULL, 0, &n);
    CHECK(n == 2, "listed %zu (steps 1 and %d)", n, bad + 1);
    if (rank == 0)
        printf("ckpt_mpi_test: OK fault np=%d opts=%s\n", np, opts);
    free(d.u), free(d.id), free(d.flag);
    return 0;
}

static int stall(const char *base, const char *opts)
{
    fields d;
    sheaf_ckpt_ctx *c = open_ctx(base, opts, &d);
    fill(&d, 1, opts);
    CHECK(!sheaf_ckpt_write(c, 1) && !sheaf_ckpt_wait(c), "step 1: %s", sheaf_ckpt_error(c));
    int rc = sheaf_ckpt_write(c, 2);
    if (!rc)
        rc = sheaf_ckpt_wait(c);
    char p[4200];
    snprintf(p, sizeof p, "%s/err.%d", base, rank);
    FILE *f = fopen(p, "w");
    if (f) {
        fprintf(f, "%d %s\n", rc, rc ? sheaf_ckpt_error(c) : "");
        fclose(f);
    }
    printf("rank %d: code %d: %s\n", rank, rc, rc ? sheaf_ckpt_error(c) : "");
    fflush(stdout);
    rc = sheaf_ckpt_finalize(&c);
    CHECK(rc != 0 && c == NULL, "finalize of a broken context reports the error");
    return 0;
}

/* bad input: refused with EINVAL on every rank, nothing written */
static int badinput(const char *base)
{
    sheaf_ckpt_ctx *c = NULL;
    const char *bad[] = {"strategy=bogus",
                         "nosuchkey=1",
                         "nf",
                         "ng=999",
                         "strategy=rbio,ng=1,nf=2",
                         "timeout=-1",
                         "buffer=12X",
                         "strategy=rbio,dedicated=1,ng=999",
                         "strategy=rbio,handoff=bogus",
                         "strategy=rbio,slot=1Q",
                         "strategy=rbio,slot=99999999G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = sheaf_ckpt_init(MPI_COMM_WORLD, base, "t", bad[i], &c);
        CHECK(rc == -EINVAL && c == NULL, "options '%s' gave %d", bad[i], rc);
        /* the one error record (issue 31): init's message reaches
         * sheaf_ckpt_errmsg (it went to a second copy before) */
        CHECK(strstr(sheaf_ckpt_errmsg(), "sheaf_ckpt_init(") != NULL, "options '%s': errmsg '%s'", bad[i],
              sheaf_ckpt_errmsg());
    }
    /* sheaf_ckpt_latest_mpi: the same code and rank 0's message on every rank */
    char none[4200];
    uint64_t st = 7;
    snprintf(none, sizeof none, "%s/no-such-dir", base);
    int lrc = sheaf_ckpt_latest_mpi(MPI_COMM_WORLD, none, &st);
    CHECK(lrc == -ENOENT && strstr(sheaf_ckpt_errmsg(), "no-such-dir") != NULL, "latest_mpi: %d '%s'", lrc,
          sheaf_ckpt_errmsg());
    setenv("SHEAF_CKPT_STRATEGY", "nonsense", 1);
    CHECK(sheaf_ckpt_init(MPI_COMM_WORLD, base, "t", "strategy=fpp", &c) == -EINVAL, "bad SHEAF_CKPT_STRATEGY");
    setenv("SHEAF_CKPT_STRATEGY", "coio", 1);
    CHECK(!sheaf_ckpt_init(MPI_COMM_WORLD, base, "t", "strategy=fpp", &c), "init");
    CHECK(!strcmp(sheaf_ckpt_strategy_name(c), "coio"), "the environment wins");
    unsetenv("SHEAF_CKPT_STRATEGY");
    double x[4] = {0};
    CHECK(sheaf_ckpt_declare(c, "x", 99, 4, x, NULL) == -EINVAL, "bad type");
    CHECK(sheaf_ckpt_declare(c, "a_name_that_is_far_too_long_for_the_table", SHEAF_CKPT_F64, 4, x, NULL) == -EINVAL,
          "long name");
    CHECK(sheaf_ckpt_declare(c, "x", SHEAF_CKPT_F64, 4, NULL, NULL) == -EINVAL, "no data");
    CHECK(!sheaf_ckpt_declare(c, "x", SHEAF_CKPT_F64, 4, x, NULL), "declare");
    if (rank == np - 1) /* the last rank declares one more field */
        CHECK(!sheaf_ckpt_declare(c, "extra", SHEAF_CKPT_U8, 4, x, NULL), "declare extra");
    int rc = sheaf_ckpt_write(c, 1);
    CHECK(np == 1 ? rc == 0 : rc == -EINVAL, "different fields: %d (%s)", rc, sheaf_ckpt_error(c));
    sheaf_ckpt_finalize(&c);
    size_t n = 9;
    sheaf_ckpt_list(base, NULL, 0, &n);
    CHECK(np == 1 ? n == 1 : n == 0, "%zu checkpoints listed", n);
    CHECK(sheaf_ckpt_open(base, 12345, (sheaf_ckpt **)&c) == -ENOENT, "a missing step");
    if (rank == 0)
        printf("ckpt_mpi_test: OK badinput np=%d\n", np);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *cmd = argc > 1 ? argv[1] : "";
    const char *base = arg(argc, argv, "base", "ckpt-test");
    const char *opts = arg(argc, argv, "opts", "");
    int rc = 2;
    if (!strcmp(cmd, "roundtrip"))
        rc = roundtrip(base, opts, atoi(arg(argc, argv, "steps", "2")));
    else if (!strcmp(cmd, "restart"))
        rc = restart(base, atoi(arg(argc, argv, "wnp", "1")), opts,
                     strtoull(arg(argc, argv, "expect_step", "0"), NULL, 10));
    else if (!strcmp(cmd, "fault"))
        rc = fault(base, opts, atoi(arg(argc, argv, "bad", "2")));
    else if (!strcmp(cmd, "badinput"))
        rc = badinput(base);
    else if (!strcmp(cmd, "stall"))
        rc = stall(base, opts);
    else if (rank == 0)
        fprintf(stderr, "usage: ckpt_mpi_test roundtrip|restart|fault|stall key=value...\n");
    MPI_Finalize();
    return rc;
}
