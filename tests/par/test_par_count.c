/* test_par_count.c - the number of collectives per generic parallel call.
 *
 * The contract is the table "Collectives per call" in doc/parallel.md:
 *   paropen write : global 3 gather + 3 bcast, local 1 gather + 1 scatter
 *   paropen read  : global 3 gather + 3 bcast (+ 1 scatter for a multi-file
 *                   set), local 1 scatter + 1 scatterv
 *   (one gather + bcast of each open is the vote after
 *   create_local_commgroup, which threadcomm, like any binding but sheaf's
 *   MPI and OpenMP ones, does not promise to fail on every task or none)
 *   parclose write: local 1 gather + 1 gatherv, global 1 gather + 1 bcast
 *                   (+ 1 global gather for a multi-file set)
 *   parclose read : global 1 gather + 1 bcast
 *   parreinit     : global 2 gather + 2 bcast, local 1 gather + 1 scatter
 *   + one create_local_commgroup per open, one free_local_commgroup per close,
 *   no barrier.
 *   mapped (all global): write open 2 gather + 3 bcast + 1 gatherv + 1
 *   scatterv; write close 2 gather + 2 bcast + 2 gatherv; read open 2 gather
 *   + 3 bcast + 1 gatherv + 1 scatter + 2 scatterv; read close 1 gather + 1
 *   bcast.
 * For P = 1..16, 31, 32, 33, 63, 64 and 1, 2 and 3 files, every task counts
 * the callbacks it executes during each call (threadcomm's per-thread
 * counters) and compares with the table, which does not mention P. */
#include "partest.h"

enum { PH_WOPEN, PH_WCLOSE, PH_ROPEN, PH_RCLOSE, PH_REINIT, PH_N };
static const char *const ph_names[PH_N] = {"paropen write", "parclose write", "paropen read", "parclose read",
                                           "parreinit"};

static tc_counts expected(int phase, int nfiles)
{
    tc_counts e;
    memset(&e, 0, sizeof e);
    switch (phase) {
    case PH_WOPEN:
        e.n[TC_GLOBAL][TC_GATHER] = 3; /* options, vote after create_local_commgroup, agreement */
        e.n[TC_GLOBAL][TC_BCAST] = 3;
        e.n[TC_LOCAL][TC_GATHER] = 1;
        e.n[TC_LOCAL][TC_SCATTER] = 1;
        e.n[TC_GLOBAL][TC_CREATE] = 1;
        break;
    case PH_ROPEN:
        e.n[TC_GLOBAL][TC_BCAST] = 3;
        e.n[TC_GLOBAL][TC_SCATTER] = nfiles > 1 ? 1 : 0; /* the placement: a single file needs none */
        e.n[TC_GLOBAL][TC_GATHER] = 3; /* the options check, the vote after create_local_commgroup, the agreement */
        e.n[TC_LOCAL][TC_SCATTER] = 1;
        e.n[TC_LOCAL][TC_SCATTERV] = 1;
        e.n[TC_GLOBAL][TC_CREATE] = 1;
        break;
    case PH_WCLOSE:
        e.n[TC_LOCAL][TC_GATHER] = 1;
        e.n[TC_LOCAL][TC_GATHERV] = 1;
        e.n[TC_GLOBAL][TC_GATHER] = nfiles > 1 ? 2 : 1;
        e.n[TC_GLOBAL][TC_BCAST] = 1;
        e.n[TC_LOCAL][TC_FREE] = 1;
        break;
    case PH_RCLOSE:
        e.n[TC_GLOBAL][TC_GATHER] = 1;
        e.n[TC_GLOBAL][TC_BCAST] = 1;
        e.n[TC_LOCAL][TC_FREE] = 1;
        break;
    case PH_REINIT:
        e.n[TC_LOCAL][TC_GATHER] = 1;
        e.n[TC_LOCAL][TC_SCATTER] = 1;
        e.n[TC_GLOBAL][TC_GATHER] = 2;
        e.n[TC_GLOBAL][TC_BCAST] = 2;
        break;
    }
    return e;
}

#define MAXP 64
static const int Ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 31, 32, 33, 63, 64};
#define NPS ((int)(sizeof Ps / sizeof *Ps))
typedef struct {
    int aid, nfiles, P;
    char fname[4200];
    tc_counts got[MAXP][PH_N];
} ctx;

static void check_phase(ctx *c, int grank, int ph, tc_counts before)
{
    tc_counts d = tc_counts_diff(tc_counts_get(), before);
    c->got[grank][ph] = d;
    tc_counts e = expected(ph, c->nfiles);
    if (memcmp(&d, &e, sizeof d)) {
        char ge[512], ee[512];
        tc_counts_str(&d, ge, sizeof ge);
        tc_counts_str(&e, ee, sizeof ee);
        CHECK(0,
              "%s (P=%d, %d file(s)): callbacks executed by this task differ from the table in "
              "sion_generic.h:\n      expected: %s\n      actual:   %s",
              ph_names[ph], c->P, c->nfiles, ee, ge);
    }
    CHECK(d.n[TC_GLOBAL][TC_BARRIER] == 0 && d.n[TC_LOCAL][TC_BARRIER] == 0,
          "%s used a barrier (%ld global, %ld local)", ph_names[ph], d.n[TC_GLOBAL][TC_BARRIER],
          d.n[TC_LOCAL][TC_BARRIER]);
}

static void task(tc_task *t)
{
    ctx *c = t->arg;
    int P = t->gsize, g = t->grank;
    pt_rank = g;
    int nf = c->nfiles, fnum = g % nf, lrank = g / nf, lsize = (P - fnum + nf - 1) / nf;
    sion_int64 chunk = 1000 + 37 * g;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    unsigned char buf[3000];
    pt_fill(buf, 7, g, 0, sizeof buf);

    /* write open / close */
    tc_counts b = tc_counts_get();
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   &fp, NULL);
    CHECK(sid >= 0, "paropen write returned %d: %s", sid, sheaf_last_error());
    check_phase(c, g, PH_WOPEN, b);
    if (sid >= 0)
        CHECK(sion_fwrite(buf, 1, sizeof buf, sid) == sizeof buf, "fwrite: %s", sheaf_last_error());
    b = tc_counts_get();
    int rc = sion_generic_parclose(sid);
    CHECK(rc == SION_SUCCESS, "parclose write returned %d: %s", rc, sheaf_last_error());
    check_phase(c, g, PH_WCLOSE, b);

    /* read open / close */
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    sion_int64 rchunk = 0;
    sion_int32 rfs = 0;
    b = tc_counts_get();
    sid = sion_generic_paropen(c->aid, c->fname, "br", &rchunk, &rfs, t->world, g, P, &rf, &rnf, &rl, &rs, &fp, NULL);
    CHECK(sid >= 0, "paropen read returned %d: %s", sid, sheaf_last_error());
    check_phase(c, g, PH_ROPEN, b);
    if (sid >= 0) {
        unsigned char in[3000];
        CHECK(sion_fread(in, 1, sizeof in, sid) == sizeof in, "fread: %s", sheaf_last_error());
        CHECK(!memcmp(in, buf, sizeof in), "data read back differ");
    }
    b = tc_counts_get();
    rc = sion_generic_parclose(sid);
    CHECK(rc == SION_SUCCESS, "parclose read returned %d: %s", rc, sheaf_last_error());
    check_phase(c, g, PH_RCLOSE, b);

    /* reinit (counted alone), then write and close */
    chunk = 50000;
    fsblk = 4096;
    fnum = g % c->nfiles;
    nf = c->nfiles;
    sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize, &fp,
                               NULL);
    CHECK(sid >= 0, "paropen write (2) returned %d: %s", sid, sheaf_last_error());
    b = tc_counts_get();
    rc = sion_generic_parreinit(sid, 2000 + g);
    CHECK(rc == SION_SUCCESS, "parreinit returned %d: %s", rc, sheaf_last_error());
    check_phase(c, g, PH_REINIT, b);
    if (sid >= 0)
        CHECK(sion_fwrite(buf, 1, 100, sid) == 100, "fwrite after reinit: %s", sheaf_last_error());
    rc = sion_generic_parclose(sid);
    CHECK(rc == SION_SUCCESS, "parclose write (2) returned %d: %s", rc, sheaf_last_error());
}

static void test_counts(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-count");
    CHECK(aid >= 0, "create api");
    /* per phase and file count: the counts seen for each P (task 0), must be identical */
    tc_counts first[4][PH_N];
    int have[4] = {0, 0, 0, 0};
    for (int nf = 1; nf <= 3; nf++) {
        for (int i = 0; i < NPS; i++) {
            int P = Ps[i];
            if (nf > P)
                continue;
            ctx *c = calloc(1, sizeof *c);
            c->aid = aid;
            c->nfiles = nf;
            c->P = P;
            snprintf(c->fname, sizeof c->fname, "%s/count_P%d_nf%d.sion", dir, P, nf);
            tc_run(P, task, c);
            /* all tasks of this run saw the same counts; and the same as other P */
            for (int ph = 0; ph < PH_N; ph++) {
                for (int r = 1; r < P; r++)
                    CHECK(!memcmp(&c->got[r][ph], &c->got[0][ph], sizeof(tc_counts)),
                          "P=%d nf=%d %s: task %d and task 0 executed different collectives", P, nf, ph_names[ph], r);
                if (!have[nf])
                    first[nf][ph] = c->got[0][ph];
                else
                    CHECK(!memcmp(&first[nf][ph], &c->got[0][ph], sizeof(tc_counts)),
                          "nf=%d %s: counts for P=%d differ from those for the smallest P", nf, ph_names[ph], P);
            }
            int same = have[nf];
            for (int ph = 0; ph < PH_N && same; ph++)
                same = !memcmp(&first[nf][ph], &c->got[0][ph], sizeof(tc_counts));
            if (!have[nf] || !same) {
                printf("  files=%d, P=%d: callbacks per task\n", nf, P);
                for (int ph = 0; ph < PH_N; ph++) {
                    char s[300];
                    tc_counts_str(&c->got[0][ph], s, sizeof s);
                    printf("    %-15s %s\n", ph_names[ph], s);
                }
            } else {
                printf("  files=%d, P=%d: identical counts\n", nf, P);
            }
            have[nf] = 1;
            free(c);
        }
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* Mapped opens: every process makes the same callbacks (all over the global
 * group), the table's, for every number of processes (each process holds 2
 * logical tasks; 2 files). */
static tc_counts mapped_expected(int k)
{
    tc_counts e;
    memset(&e, 0, sizeof e);
    long *g = e.n[TC_GLOBAL];
    switch (k) {
    case 0:
        g[TC_GATHER] = 2;
        g[TC_BCAST] = 3;
        g[TC_GATHERV] = 1;
        g[TC_SCATTERV] = 1;
        break;
    case 1:
        g[TC_GATHER] = 2;
        g[TC_BCAST] = 2;
        g[TC_GATHERV] = 2;
        break;
    case 2:
        g[TC_GATHER] = 2;
        g[TC_BCAST] = 3;
        g[TC_GATHERV] = 1;
        g[TC_SCATTER] = 1;
        g[TC_SCATTERV] = 2;
        break;
    default:
        g[TC_GATHER] = 1;
        g[TC_BCAST] = 1;
        break;
    }
    return e;
}

typedef struct {
    int aid;
    char fname[4200];
    tc_counts got[MAXP][4];
} mctx;

static void mapped_task(tc_task *t)
{
    mctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nl = 2, gr[2] = {2 * g, 2 * g + 1}, fn[2], lr[2];
    for (int i = 0; i < 2; i++) {
        fn[i] = gr[i] % 2;
        lr[i] = gr[i] / 2;
    }
    sion_int64 cs[2] = {2000, 3000};
    int *pg = gr, *pf = fn, *pl = lr, nf = 2;
    sion_int64 *pc = cs;
    sion_int32 fsblk = 4096;
    tc_counts b = tc_counts_get();
    int sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "bw", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    c->got[g][0] = tc_counts_diff(tc_counts_get(), b);
    if (!CHECK(sid >= 0, "mapped write open: %s", sheaf_last_error()))
        return;
    b = tc_counts_get();
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "mapped write close: %s", sheaf_last_error());
    c->got[g][1] = tc_counts_diff(tc_counts_get(), b);
    nl = 2;
    pc = NULL;
    pf = pl = NULL;
    b = tc_counts_get();
    sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "br", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    c->got[g][2] = tc_counts_diff(tc_counts_get(), b);
    if (!CHECK(sid >= 0, "mapped read open: %s", sheaf_last_error()))
        return;
    b = tc_counts_get();
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "mapped read close: %s", sheaf_last_error());
    c->got[g][3] = tc_counts_diff(tc_counts_get(), b);
    free(pc);
    free(pf);
    free(pl);
}

static void test_mapped_counts(void)
{
    static const char *const names[4] = {"mapped open write", "mapped close write", "mapped open read",
                                         "mapped close read"};
    const char *dir = pt_mkdtemp();
    mctx *c = calloc(1, sizeof *c);
    c->aid = tc_create_api("threadcomm-count-mapped");
    for (int i = 0; i < NPS; i++) {
        int P = Ps[i];
        snprintf(c->fname, sizeof c->fname, "%s/mapped_P%d.sion", dir, P);
        memset(c->got, 0, sizeof c->got);
        tc_run(P, mapped_task, c);
        for (int k = 0; k < 4; k++) {
            tc_counts e = mapped_expected(k);
            for (int g = 0; g < P; g++)
                if (memcmp(&c->got[g][k], &e, sizeof e)) {
                    char ge[300], ee[300];
                    tc_counts_str(&c->got[g][k], ge, sizeof ge);
                    tc_counts_str(&e, ee, sizeof ee);
                    CHECK(0,
                          "%s (P=%d, process %d): callbacks differ from the table:\n      expected: %s\n"
                          "      actual:   %s",
                          names[k], P, g, ee, ge);
                }
        }
        if (P == 2)
            for (int k = 0; k < 4; k++) {
                char s0[300];
                tc_counts_str(&c->got[0][k], s0, sizeof s0);
                printf("    %-18s every process: %s\n", names[k], s0);
            }
    }
    sion_generic_free_api(c->aid);
    free(c);
    pt_rmtree(dir);
}

/* sion_generic.h: "Memory: O(1) per task, O(p) on a file's master, O(P)
 * only on the task that writes file 0's mapping (multi-file) and on global
 * rank 0". The largest exchange a task takes part in (bytes it sends or
 * receives in one callback) must not grow with P for tasks that are neither
 * global rank 0 nor a file master; a master's grows with its file's tasks. */
#define MP 64
typedef struct {
    int aid, nf;
    char fname[4200];
    size_t maxb[MP];
} memctx;

static void mem_task(tc_task *t)
{
    memctx *c = t->arg;
    int g = t->grank, P = t->gsize, nf = c->nf;
    pt_rank = g;
    int per = P / nf, fnum = g / per < nf ? g / per : nf - 1; /* contiguous split */
    int lrank = g - fnum * per, lsize = fnum == nf - 1 ? P - fnum * per : per;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    tc_maxbytes_reset();
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (!CHECK(sid >= 0, "write open: %s", sheaf_last_error()))
        return;
    unsigned char b[100];
    pt_fill(b, 1, g, 0, sizeof b);
    CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b, "fwrite");
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
    int rf, rnf, rl, rs;
    sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, NULL, NULL);
    if (!CHECK(sid >= 0, "read open: %s", sheaf_last_error()))
        return;
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "read close");
    c->maxb[g] = tc_maxbytes_get();
}

static void test_memory(void)
{
    const char *dir = pt_mkdtemp();
    memctx *c = calloc(1, sizeof *c);
    c->aid = tc_create_api("threadcomm-mem");
    c->nf = 2;
    size_t other[2] = {0, 0}, master[2] = {0, 0}, root[2] = {0, 0};
    static const int Pm[2] = {8, 64};
    for (int i = 0; i < 2; i++) {
        int P = Pm[i];
        snprintf(c->fname, sizeof c->fname, "%s/mem%d.sion", dir, P);
        memset(c->maxb, 0, sizeof c->maxb);
        tc_run(P, mem_task, c);
        int per = P / 2;
        root[i] = c->maxb[0];
        master[i] = c->maxb[per]; /* master of file 1 */
        for (int g = 1; g < P; g++)
            if (g != per && c->maxb[g] > other[i])
                other[i] = c->maxb[g];
        printf("  P=%d, 2 files: largest exchange per callback: global rank 0 %zu bytes, master of file 1 %zu, "
               "other tasks %zu\n",
               P, root[i], master[i], other[i]);
    }
    CHECK(other[1] == other[0],
          "a task that is neither rank 0 nor a master moves %zu bytes in one callback with 64 "
          "tasks but %zu with 8: not O(1) per task",
          other[1], other[0]);
    CHECK(master[1] <= master[0] * 64 / 8 + 64,
          "master of file 1: %zu bytes with 64 tasks, %zu with 8: more than "
          "O(p)",
          master[1], master[0]);
    sion_generic_free_api(c->aid);
    free(c);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {
        {"counts_per_call", test_counts}, {"mapped_counts", test_mapped_counts}, {"memory_per_task", test_memory}};
    return pt_main(tests, 3, argc, argv);
}
