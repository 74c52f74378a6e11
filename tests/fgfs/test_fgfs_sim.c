/* test_fgfs_sim.c - the queries over the in-process layer (cmocka):
 * classifications, parallel descriptors and consistency at 2, 4, 8
 * simulated nodes with 1-2 processes each, sync and async; errors on one
 * process reported everywhere; a mismatched or abandoned collective fails
 * instead of hanging; the inverse query with site parameters; and the
 * scale run: 10^3, 10^4, 10^5 processes with reduction rounds = collectives
 * x ceil(log2 P) and message sizes that do not grow with P. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "simnodes.h"

static char base[256];
static char hpath[600], opath[600], lpath[600], bpath[600], mpath[600];

static void make_files(void)
{
    snprintf(base, sizeof base, "/tmp/fgfs-sim-XXXXXX");
    assert_non_null(mkdtemp(base));
    const char *sub[] = {"local", "local/sub", "one", "half", "many"};
    for (int i = 0; i < 5; i++) {
        char d[600];
        snprintf(d, sizeof d, "%s/%s", base, sub[i]);
        assert_int_equal(mkdir(d, 0755), 0);
    }
    snprintf(hpath, sizeof hpath, "%s/half/data", base);
    snprintf(opath, sizeof opath, "%s/one/absent", base);
    snprintf(lpath, sizeof lpath, "%s/local/f", base);
    snprintf(bpath, sizeof bpath, "%s/local-bind/f", base);
    snprintf(mpath, sizeof mpath, "%s/many/f", base);
    FILE *f = fopen(hpath, "w");
    assert_non_null(f);
    fputs("the same bytes for everyone\n", f);
    fclose(f);
}

static void remove_files(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    assert_int_equal(system(cmd), 0);
}

typedef struct scen {
    simnodes sn;
    int mode, threshold;
    int failures;    /* processes whose checks failed */
    int broken_rank; /* this rank gets a table without "/" (-1: none) */
} scen;

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            printf("rank %d: check failed: %s (line %d) %s\n", rank, #c, __LINE__, sheaf_fgfs_last_error());           \
            sc->failures++;                                                                                            \
            goto out;                                                                                                  \
        }                                                                                                              \
    } while (0)

static int classify_proc(sheaf_fgfs_comm *world, int rank, void *arg)
{
    scen *sc = arg;
    char host[64];
    simnodes_host(&sc->sn, rank, host, sizeof host);
    sheaf_fgfs_config cfg = {sc->mode, sc->threshold,         0,   0, simnodes_table(&sc->sn, rank),
                             host,     SHEAF_FGFS_NOREALPATH, NULL};
    sheaf_fgfs_ctx *ctx = NULL;
    int N = sc->sn.nodes, ppn = sc->sn.ppn, P = N * ppn, node = rank / ppn;
    sheaf_fgfs_status st;
    sheaf_fgfs_pardesc d;
    int a;
    CHECK(sheaf_fgfs_init(world, &cfg, &ctx) == 0);
    /* node-local tmpfs, and a bind mount of it: fully distributed */
    CHECK(sheaf_fgfs_status_of(ctx, lpath, &st) == 0 && st.cls == SHEAF_FGFS_FULLY);
    CHECK(sheaf_fgfs_is_fully_distributed(ctx, bpath, &a) == 0 && a == 1);
    CHECK(sheaf_fgfs_is_well_distributed(ctx, lpath, &a) == 0 && a == 1);
    /* one server: unique */
    CHECK(sheaf_fgfs_status_of(ctx, opath, &st) == 0 && st.cls == SHEAF_FGFS_UNIQUE && st.servers == 1);
    CHECK(sheaf_fgfs_is_unique(ctx, opath, &a) == 0 && a == 1);
    CHECK(sheaf_fgfs_is_poorly_distributed(ctx, opath, &a) == 0 && a == 1);
    /* half on srvA, half on srvB: poorly distributed */
    CHECK(sheaf_fgfs_status_of(ctx, hpath, &st) == 0 && st.cls == SHEAF_FGFS_POORLY);
    CHECK(fabs(st.servers - 2) < 0.1);
    CHECK(sheaf_fgfs_is_unique(ctx, hpath, &a) == 0 && a == 0);
    CHECK(sheaf_fgfs_is_well_distributed(ctx, hpath, &a) == 0 && a == 0);
    /* one server per node: well distributed from the threshold on */
    CHECK(sheaf_fgfs_status_of(ctx, mpath, &st) == 0);
    CHECK(st.cls == (N >= sc->threshold ? SHEAF_FGFS_WELL : SHEAF_FGFS_POORLY));
    if (sc->mode == SHEAF_FGFS_ASYNC)
        CHECK(sheaf_fgfs_async_count(ctx) == 6); /* /, local, local-bind, one, half, many */
    /* the parallel descriptors (collective in both modes) */
    CHECK(sheaf_fgfs_pardesc_of(ctx, hpath, &d) == 0);
    CHECK(d.ngroups == 2 && d.group == (node >= N / 2) && d.group_size == P / 2);
    CHECK(d.rep == (node >= N / 2 ? (N / 2) * ppn : 0));
    CHECK(sheaf_fgfs_pardesc_of(ctx, lpath, &d) == 0);
    CHECK(d.ngroups == N && d.group_size == ppn && d.rep == node * ppn);
    CHECK(sheaf_fgfs_pardesc_of(ctx, opath, &d) == 0 && d.ngroups == 1 && d.rep == 0 && d.group_size == P);
    /* consistency: unique needs no I/O (the file does not even exist) */
    CHECK(sheaf_fgfs_is_consistent(ctx, opath, &a) == 0 && a == 1);
    CHECK(sheaf_fgfs_is_consistent(ctx, hpath, &a) == 0 && a == 1);
    /* a directory served by two servers: its listing (names and types) is compared, not read as a file */
    CHECK(sheaf_fgfs_is_consistent(ctx, sc->sn.half, &a) == 0 && a == 1);
    /* the group communicator: rank 0 of it is the representative */
    sheaf_fgfs_comm gc;
    CHECK(sheaf_fgfs_group_comm(ctx, hpath, &gc) == 0);
    CHECK(gc.ops->size(&gc) == P / 2);
    CHECK(gc.ops->rank(&gc) == rank % (P / 2));
    gc.ops->free_comm(&gc);
out:
    sheaf_fgfs_finalize(ctx);
    return 0;
}

static void run_classify(int nodes, int ppn, int mode)
{
    scen sc = {.mode = mode, .threshold = 4, .broken_rank = -1};
    assert_int_equal(simnodes_init(&sc.sn, nodes, ppn, nodes, base), 0);
    sheaf_fgfs_sim_stats stats;
    assert_int_equal(sheaf_fgfs_sim_run(nodes * ppn, 0, classify_proc, &sc, &stats), 0);
    printf("%d nodes x %d, %s: %ld collectives, %ld rounds, largest message %zu B\n", nodes, ppn,
           mode ? "async" : "sync", stats.collectives, stats.rounds, stats.max_msg);
    assert_int_equal(sc.failures, 0);
    simnodes_free(&sc.sn);
}

static void classify_2_4_8(void **state)
{
    make_files();
    for (int mode = 0; mode < 2; mode++)
        for (int nodes = 2; nodes <= 8; nodes *= 2)
            for (int ppn = 1; ppn <= 2; ppn++)
                run_classify(nodes, ppn, mode);
    remove_files();
}

/* ---- errors travel to every process ---- */
static int error_proc(sheaf_fgfs_comm *world, int rank, void *arg)
{
    scen *sc = arg;
    static const char notroot[] = "1 0 0:1 / /elsewhere rw - ext4 /dev/x rw\n";
    sheaf_fgfs_mounts *own = NULL;
    if (rank == sc->broken_rank)
        sheaf_fgfs_mounts_parse(notroot, sizeof notroot - 1, "broken", &own);
    sheaf_fgfs_config cfg = {SHEAF_FGFS_SYNC,       4,   0, 0, own ? own : simnodes_table(&sc->sn, rank), "n",
                             SHEAF_FGFS_NOREALPATH, NULL};
    sheaf_fgfs_ctx *ctx = NULL;
    sheaf_fgfs_status st;
    sheaf_fgfs_pardesc d;
    int a;
    CHECK(sheaf_fgfs_init(world, &cfg, &ctx) == 0);
    int rc = sheaf_fgfs_status_of(ctx, hpath, &st);
    if (rank == sc->broken_rank)
        CHECK(rc == SHEAF_FGFS_EPARSE && strstr(sheaf_fgfs_last_error(), hpath));
    else
        CHECK(rc == SHEAF_FGFS_EREMOTE && strstr(sheaf_fgfs_last_error(), "process 1 failed"));
    rc = sheaf_fgfs_pardesc_of(ctx, hpath, &d);
    CHECK(rc == (rank == sc->broken_rank ? SHEAF_FGFS_EPARSE : SHEAF_FGFS_EREMOTE));
    rc = sheaf_fgfs_is_consistent(ctx, hpath, &a);
    CHECK(rc == (rank == sc->broken_rank ? SHEAF_FGFS_EPARSE : SHEAF_FGFS_EREMOTE));
    /* the next query works again */
    CHECK(sheaf_fgfs_status_of(ctx, "/", &st) == (rank == sc->broken_rank ? SHEAF_FGFS_EPARSE : SHEAF_FGFS_EREMOTE));
out:
    sheaf_fgfs_finalize(ctx);
    sheaf_fgfs_mounts_free(own);
    return 0;
}

static int missing_proc(sheaf_fgfs_comm *world, int rank, void *arg)
{
    scen *sc = arg;
    sheaf_fgfs_config cfg = {SHEAF_FGFS_SYNC, 4, 0, 0, simnodes_table(&sc->sn, rank), "n", SHEAF_FGFS_NOREALPATH, NULL};
    sheaf_fgfs_ctx *ctx = NULL;
    char p[700];
    int a;
    snprintf(p, sizeof p, "%s/half/missing", base);
    CHECK(sheaf_fgfs_init(world, &cfg, &ctx) == 0);
    int rc = sheaf_fgfs_is_consistent(ctx, p, &a);
    if (rank == 0 || rank == 2) /* representatives of srvA and srvB */
        CHECK(rc == SHEAF_FGFS_EIO && strstr(sheaf_fgfs_last_error(), "missing"));
    else
        CHECK(rc == SHEAF_FGFS_EREMOTE);
out:
    sheaf_fgfs_finalize(ctx);
    return 0;
}

static void errors(void **state)
{
    make_files();
    scen sc = {.mode = 0, .threshold = 4, .broken_rank = 1};
    assert_int_equal(simnodes_init(&sc.sn, 2, 2, 2, base), 0);
    assert_int_equal(sheaf_fgfs_sim_run(4, 0, error_proc, &sc, NULL), 0);
    assert_int_equal(sc.failures, 0);
    assert_int_equal(sheaf_fgfs_sim_run(4, 0, missing_proc, &sc, NULL), 0);
    assert_int_equal(sc.failures, 0);
    simnodes_free(&sc.sn);
    remove_files();
}

/* ---- the layer itself: mismatches and abandoned collectives ---- */
static int mismatch_proc(sheaf_fgfs_comm *c, int rank, void *arg)
{
    int *bad = arg;
    void *buf = (char[8]){0};
    size_t len = 8;
    int rc;
    if (rank == 3)
        return 0; /* leaves without taking part: the others must not hang */
    if (rank == 0)
        rc = c->ops->bcast(c, &buf, &len, 8, 0);
    else
        rc = c->ops->barrier(c);
    if (rc != SHEAF_FGFS_ECOMM)
        (*bad)++;
    return 0;
}

static void layer_faults(void **state)
{
    int bad = 0;
    assert_int_equal(sheaf_fgfs_sim_run(5, 0, mismatch_proc, &bad, NULL), 0);
    assert_int_equal(bad, 0);
    assert_int_equal(sheaf_fgfs_sim_run(0, 0, mismatch_proc, &bad, NULL), SHEAF_FGFS_EINVAL);
}

/* ---- the inverse query ---- */
typedef struct selarg {
    scen *sc;
    const char *site;
    int failures;
    int crit;
} selarg;

static int select_proc(sheaf_fgfs_comm *world, int rank, void *arg)
{
    selarg *sa = arg;
    scen *sc = sa->sc;
    sheaf_fgfs_config cfg = {SHEAF_FGFS_SYNC,       4,       0, 0, simnodes_table(&sc->sn, rank), "n",
                             SHEAF_FGFS_NOREALPATH, sa->site};
    char host[64];
    simnodes_host(&sc->sn, rank, host, sizeof host);
    cfg.host = host;
    sheaf_fgfs_ctx *ctx = NULL;
    sheaf_fgfs_choice ch[8];
    int n = 0;
    if (sheaf_fgfs_init(world, &cfg, &ctx))
        return sa->failures++, 0;
    sheaf_fgfs_criteria c = {1 << 20, SHEAF_FGFS_SPEED_ANY, SHEAF_FGFS_DIST_ANY, SHEAF_FGFS_SCAL_ANY};
    int ok = 1;
    if (sa->crit == 0) { /* full distribution: the node-local tmpfs (and its bind mount) */
        c.distribution = SHEAF_FGFS_DIST_FULL;
        ok = !sheaf_fgfs_select(ctx, &c, ch, 8, &n) && n >= 2;
        for (int i = 0; ok && i < n; i++)
            ok = ch[i].cls == SHEAF_FGFS_FULLY;
        ok = ok && !strncmp(ch[0].mount_point, sc->sn.local, strlen(sc->sn.local)) && ch[0].ngroups == sc->sn.nodes;
    } else if (sa->crit == 1) { /* globally visible: the one server */
        c.distribution = SHEAF_FGFS_DIST_UNIQUE;
        ok = !sheaf_fgfs_select(ctx, &c, ch, 8, &n) && n == 1 && !strcmp(ch[0].mount_point, sc->sn.one) &&
             ch[0].ngroups == 1;
    } else if (sa->crit == 2) { /* a petabyte each fits nowhere */
        c.bytes_per_process = 1ull << 50;
        ok = !sheaf_fgfs_select(ctx, &c, ch, 8, &n) && n == 0;
    } else if (sa->crit == 3) { /* site parameters make nfs a fast parallel file system */
        c.scalability = SHEAF_FGFS_SCAL_MULTI;
        ok = !sheaf_fgfs_select(ctx, &c, ch, 8, &n) && n == 3 && ch[0].multi && ch[0].speed_mbs == 9000;
    } else /* a broken site file fails on every process */
        ok = sheaf_fgfs_select(ctx, &c, ch, 8, &n) == SHEAF_FGFS_EPARSE && strstr(sheaf_fgfs_last_error(), ":2:");
    if (!ok) {
        printf("rank %d select case %d: n=%d first=%s: %s\n", rank, sa->crit, n, n ? ch[0].mount_point : "",
               sheaf_fgfs_last_error());
        sa->failures++;
    }
    sheaf_fgfs_finalize(ctx);
    return 0;
}

static void inverse(void **state)
{
    make_files();
    char site[700], bad[700];
    snprintf(site, sizeof site, "%s/site.conf", base);
    snprintf(bad, sizeof bad, "%s/bad.conf", base);
    FILE *f = fopen(site, "w");
    fprintf(f, "# test site\ntype nfs speed=9000 scal=100000 multi=1\nhigh_speed 2000\n");
    fclose(f);
    f = fopen(bad, "w");
    fprintf(f, "type tmpfs speed=1\ntype nfs speed=fast\n");
    fclose(f);
    char d[700];
    snprintf(d, sizeof d, "%s/local-bind", base); /* the bind mount's path must exist for statvfs */
    assert_int_equal(mkdir(d, 0755), 0);
    scen sc = {.threshold = 4};
    assert_int_equal(simnodes_init(&sc.sn, 4, 2, 4, base), 0);
    const char *sites[] = {NULL, NULL, NULL, site, bad};
    for (int crit = 0; crit < 5; crit++) {
        selarg sa = {&sc, sites[crit], 0, crit};
        assert_int_equal(sheaf_fgfs_sim_run(8, 0, select_proc, &sa, NULL), 0);
        assert_int_equal(sa.failures, 0);
    }
    simnodes_free(&sc.sn);
    remove_files();
}

/* ---- scale: rounds grow as log2 P, messages stay bounded ---- */
typedef struct scalearg {
    scen *sc;
    int query;
    int failures;
} scalearg;

static int scale_proc(sheaf_fgfs_comm *world, int rank, void *arg)
{
    scalearg *a = arg;
    scen *sc = a->sc;
    char host[32];
    simnodes_host(&sc->sn, rank, host, sizeof host);
    sheaf_fgfs_config cfg = {SHEAF_FGFS_SYNC,       16,  0, 0, simnodes_table(&sc->sn, rank), host,
                             SHEAF_FGFS_NOREALPATH, NULL};
    sheaf_fgfs_ctx *ctx = NULL;
    sheaf_fgfs_status st;
    sheaf_fgfs_pardesc d;
    int ok = 0, ans;
    if (!sheaf_fgfs_init(world, &cfg, &ctx)) {
        switch (a->query) {
        case 0:
            ok = !sheaf_fgfs_status_of(ctx, lpath, &st) && st.cls == SHEAF_FGFS_FULLY;
            break;
        case 1:
            ok = !sheaf_fgfs_status_of(ctx, opath, &st) && st.cls == SHEAF_FGFS_UNIQUE;
            break;
        case 2:
            ok = !sheaf_fgfs_status_of(ctx, hpath, &st) && st.cls == SHEAF_FGFS_POORLY;
            break;
        case 3:
            ok = !sheaf_fgfs_status_of(ctx, mpath, &st) && st.cls == SHEAF_FGFS_WELL && st.servers > 60;
            break;
        case 4:
            ok = !sheaf_fgfs_pardesc_of(ctx, hpath, &d) && d.ngroups == 2;
            break;
        default:
            ok = !sheaf_fgfs_is_consistent(ctx, hpath, &ans) && ans == 1;
            break;
        }
    }
    if (!ok && a->failures++ < 3)
        printf("rank %d query %d failed: %s\n", rank, a->query, sheaf_fgfs_last_error());
    sheaf_fgfs_finalize(ctx);
    return 0;
}

static void scale(void **state)
{
    make_files();
    const char *env = getenv("FGFS_SIM_MAXP");
    long maxp = env ? atol(env) : 100000;
    static const char *names[] = {"fully (local)",      "unique",
                                  "poorly (2 servers)", "well (64 servers)",
                                  "pardesc (2 groups)", "consistent (2 groups)"};
    /* collectives per query beyond init (sheaf_comm_agree: 1 allmin, a reduce and a bcast tree: 2 rounds
     * of log2 P): triage 2, Bloom 2, grouping 2, hashes 2 */
    static const int colls[] = {2, 2, 4, 4, 2, 6};
    size_t msg_at_small[6] = {0};
    printf("%-22s %8s %6s %6s %11s %9s %8s\n", "query", "P", "log2P", "colls", "rounds", "max msg", "time");
    for (long P = 1000; P <= maxp; P *= 10) {
        for (int q = 0; q < 6; q++) {
            scen sc = {.threshold = 16};
            assert_int_equal(simnodes_init(&sc.sn, (int)(P / 2), 2, 64, base), 0);
            scalearg a = {&sc, q, 0};
            sheaf_fgfs_sim_stats st;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            assert_int_equal(sheaf_fgfs_sim_run((int)P, 32, scale_proc, &a, &st), 0);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            int lg = (int)ceil(log2((double)P));
            printf("%-22s %8ld %6d %6ld %11ld %8zuB %7.2fs\n", names[q], P, lg, st.collectives, st.rounds, st.max_msg,
                   (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
            assert_int_equal(a.failures, 0);
            assert_int_equal(st.collectives, 1 + colls[q]);
            assert_int_equal(st.allmins, 1);
            assert_int_equal(st.rounds, (long)(2 + colls[q]) * lg); /* every collective is one binomial tree */
            if (P == 1000)
                msg_at_small[q] = st.max_msg;
            assert_int_equal(st.max_msg, msg_at_small[q]); /* independent of P */
            assert_true(st.max_msg <= 2048);
            simnodes_free(&sc.sn);
        }
    }
    remove_files();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify_2_4_8), cmocka_unit_test(errors), cmocka_unit_test(layer_faults),
        cmocka_unit_test(inverse),        cmocka_unit_test(scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
