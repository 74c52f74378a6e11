/* test_ckpt_protocol.c - the control protocol of libsheaf_ckpt (src/ckpt/
 * proto.c, agree.c) on sheaf's in-process simulator, no MPI: init
 * (init.alloc, init.options, init.setup), a step's open (step.dirs) and a
 * shared unit of NF fields (shared.sizes, shared.header, shared.data per
 * field, shared.headers), the data movement replaced by callbacks that
 * record what runs.
 *
 * A clean run records every named point each simulated rank passes: the
 * agreements (through the library's test hook ck_hook) and the callbacks
 * (configure, setup, sizes, plan, open, write_field, write_headers), with
 * their occurrence. Then, for each point, one run per single rank and runs
 * with pairs of ranks make it fail there (the hook's or the callback's
 * code: 200 + rank / 100 + rank, each with its own message). Asserted on
 * every rank of every run: the same non-zero code, the lowest failing
 * rank's (its code and its message "rank L: ..." everywhere), no
 * SHEAF_COMM_ECOMM and sheaf_comm_sim_run 0 (the simulator fails a
 * deadlock or a mismatched collective with ECOMM: every rank made every
 * exchange), no callback after an agreed failure but close, close exactly
 * on the ranks whose open succeeded, with the agreed code, and the same
 * number of agreements on every rank. The clean run: code 0, one allmin per
 * agreement and no bcast (over MPI: one MPI_Allreduce each, nothing more).
 * Also: options that differ between ranks fail init on every rank
 * (-> EINVAL), and 5 ranks as well as 4 (a tree that is not a power of 2).
 * Exit status 0 when everything held. */
#include "proto.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PMAX 8
#define NF 3
#define MAXPT 64

static int failures;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            failures++;                                                                                                \
            if (failures < 40) {                                                                                       \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                            \
                printf(__VA_ARGS__);                                                                                   \
                printf("\n");                                                                                          \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

typedef struct point {
    char kind; /* 'A' agreement, 'C' callback */
    char name[32];
    int occ;
    unsigned visitors;
} point;

static point pts[MAXPT];
static int npts, recording;
/* the injection of this run */
static point target;
static unsigned inject_mask;
static int diff_options; /* rank 2 configures another strategy */

typedef struct rk {
    int rank;
    ck_ag a;
    struct {
        char kind, name[32];
        int n;
    } seen[MAXPT];
    int nseen, agrees, opened, closes, close_rc, late, code;
    char late_what[64], msg[SHEAF_COMM_MSGLEN];
} rk;
static rk R[PMAX];

/* one named point passed by rank r: record it, or say whether it fails */
static int at_point(rk *k, char kind, const char *name)
{
    int occ = 0;
    for (int i = 0; i < k->nseen && !occ; i++)
        if (k->seen[i].kind == kind && !strcmp(k->seen[i].name, name))
            occ = ++k->seen[i].n;
    if (!occ && k->nseen < MAXPT) {
        k->seen[k->nseen].kind = kind;
        snprintf(k->seen[k->nseen].name, sizeof k->seen[0].name, "%s", name);
        k->seen[k->nseen++].n = occ = 1;
    }
    if (recording) {
        int i = 0;
        while (i < npts && !(pts[i].kind == kind && !strcmp(pts[i].name, name) && pts[i].occ == occ))
            i++;
        if (i == npts && npts < MAXPT) {
            pts[i].kind = kind;
            snprintf(pts[i].name, sizeof pts[i].name, "%s", name);
            pts[i].occ = occ;
            npts++;
        }
        if (i < npts)
            pts[i].visitors |= 1u << k->rank;
        return 0;
    }
    return target.kind == kind && !strcmp(target.name, name) && target.occ == occ && (inject_mask >> k->rank & 1);
}

static int hook(const char *step, int rank, void *arg)
{
    (void)arg;
    rk *k = &R[rank];
    k->agrees++;
    return at_point(k, 'A', step) ? 200 + rank : 0;
}

/* a callback: no data movement after an agreed failure */
static int cb(rk *k, const char *name, char *msg, size_t mn)
{
    if (k->a.code && !k->late)
        k->late = 1, snprintf(k->late_what, sizeof k->late_what, "%s", name);
    if (!at_point(k, 'C', name))
        return 0;
    snprintf(msg, mn, "callback %s failed on rank %d", name, k->rank);
    return 100 + k->rank;
}

static int c_configure(void *x, int64_t *p, int *np, char *msg, size_t mn)
{
    rk *k = x;
    p[0] = diff_options && k->rank == 2 ? 3 : 1; /* strategy */
    p[1] = 2;                                    /* nf */
    p[2] = -7;                                   /* a negative value travels too */
    *np = 3;
    return cb(k, "configure", msg, mn);
}
static int c_need_setup(void *x) { return ((rk *)x)->rank >= 0; }
static int c_setup(void *x, char *msg, size_t mn) { return cb(x, "setup", msg, mn); }
static int c_sizes(void *x, char *msg, size_t mn) { return cb(x, "sizes", msg, mn); }
static int c_plan(void *x, char *msg, size_t mn) { return cb(x, "plan", msg, mn); }
static int c_open(void *x, char *msg, size_t mn)
{
    rk *k = x;
    int rc = cb(k, "open", msg, mn);
    k->opened = !rc;
    return rc;
}
static int c_write(void *x, uint32_t f, char *msg, size_t mn)
{
    (void)f;
    return cb(x, "write_field", msg, mn);
}
static int c_headers(void *x, char *msg, size_t mn) { return cb(x, "write_headers", msg, mn); }
static int c_close(void *x, int rc, char *msg, size_t mn)
{
    (void)msg, (void)mn;
    rk *k = x;
    k->closes++;
    k->close_rc = rc;
    return rc;
}

static const ck_init_ops init_ops = {c_configure, c_setup, c_need_setup};
static const ck_shared_ops shared_ops = {c_sizes, c_plan, c_open, c_write, c_headers, c_close};

/* one rank: init, the step's directory, one shared unit (the sequence of
 * sheaf_ckpt_init and a coio write), stopping at the first failure as
 * libsheaf_ckpt does */
static int run_rank(sheaf_comm *world, int rank, void *arg)
{
    (void)arg;
    rk *k = &R[rank];
    ck_ag_init(&k->a, world);
    int rc = ck_proto_init(&k->a, at_point(k, 'C', "alloc") ? 100 + rank : 0, &init_ops, k);
    if (!rc) {
        ck_ag_init(&k->a, world);
        char m[256] = "";
        int drc = at_point(k, 'C', "mkdir") ? 100 + rank : 0;
        if (drc)
            snprintf(m, sizeof m, "callback mkdir failed on rank %d", rank);
        rc = ck_proto_dirs(&k->a, drc, m);
    }
    char msg[SHEAF_COMM_MSGLEN] = "";
    if (!rc)
        rc = ck_proto_shared(&k->a, &shared_ops, k, NF, msg, sizeof msg);
    k->code = rc;
    snprintf(k->msg, sizeof k->msg, "%s", rc ? k->a.msg : "");
    return 0;
}

static int run(int p, sheaf_comm_sim_stats *st)
{
    memset(R, 0, sizeof R);
    for (int r = 0; r < p; r++)
        R[r].rank = r;
    ck_hook = hook;
    ck_hook_arg = NULL;
    int rc = sheaf_comm_sim_run(p, 0, run_rank, NULL, st);
    ck_hook = NULL;
    return rc;
}

/* every rank: one code (the lowest failing rank's), its message, no hang */
static void check_run(int p, int simrc, const char *what, int want_code, int lowest)
{
    CHECK(simrc == 0, "%s: sheaf_comm_sim_run returned %d", what, simrc);
    for (int r = 0; r < p; r++) {
        rk *k = &R[r];
        CHECK(k->code != SHEAF_COMM_ECOMM && k->code != EPROTO, "%s: rank %d got ECOMM/EPROTO (a hang or mismatch): %s",
              what, r, k->msg);
        CHECK(k->code == want_code, "%s: rank %d code %d, want %d (%s)", what, r, k->code, want_code, k->msg);
        CHECK(k->agrees == R[0].agrees, "%s: rank %d made %d agreements, rank 0 %d", what, r, k->agrees, R[0].agrees);
        CHECK(!k->late, "%s: rank %d ran callback %s after an agreed failure", what, r, k->late_what);
        CHECK(k->closes == (k->opened ? 1 : 0), "%s: rank %d closed %d times (opened %d)", what, r, k->closes,
              k->opened);
        CHECK(!k->closes || k->close_rc == k->code, "%s: rank %d closed with %d, agreed %d", what, r, k->close_rc,
              k->code);
        if (lowest >= 0) {
            char want[64];
            snprintf(want, sizeof want, "rank %d: ", lowest);
            char on[32];
            snprintf(on, sizeof on, "on rank %d", lowest);
            /* the allocation's message is the library's own (no rank in it) */
            int own = !strcmp(target.name, "alloc") || strstr(k->msg, on);
            CHECK(!strncmp(k->msg, want, strlen(want)) && own, "%s: rank %d message '%s'", what, r, k->msg);
            CHECK(!strcmp(k->msg, R[0].msg), "%s: rank %d message differs from rank 0's", what, r);
        }
    }
}

static int lowest_of(unsigned mask)
{
    for (int r = 0; r < PMAX; r++)
        if (mask >> r & 1)
            return r;
    return -1;
}

static int popcount(unsigned m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

static void fault_matrix(int p, int *runs, int *singles, int *pairs)
{
    sheaf_comm_sim_stats st;
    /* clean run: records the points */
    npts = 0;
    memset(pts, 0, sizeof pts);
    memset(&target, 0, sizeof target);
    recording = 1;
    int simrc = run(p, &st);
    recording = 0;
    check_run(p, simrc, "clean", 0, -1);
    CHECK(R[0].agrees == 6 + NF + 1 - 0 && st.allmins == 6 + NF + 1 && st.bcasts == 0,
          "clean run at %d ranks: %d agreements, %ld allmins, %ld bcasts (want %d, %d, 0)", p, R[0].agrees, st.allmins,
          st.bcasts, 6 + NF + 1, 6 + NF + 1);
    for (int r = 0; r < p; r++)
        CHECK(R[r].closes == 1 && R[r].close_rc == 0, "clean: rank %d closed %d times with %d", r, R[r].closes,
              R[r].close_rc);
    /* the pairs of ranks tried at each point */
    unsigned pairsets[3] = {0x3u, 0x2u | 1u << (p - 1), 0x4u | 0x8u};
    int nrec = npts;
    point rec[MAXPT];
    memcpy(rec, pts, sizeof rec);
    for (int i = 0; i < nrec; i++) {
        point *t = &rec[i];
        unsigned sets[PMAX + 3];
        int ns = 0;
        for (int r = 0; r < p; r++)
            if (t->visitors >> r & 1)
                sets[ns++] = 1u << r;
        for (int s = 0; s < 3; s++)
            if (popcount(pairsets[s] & t->visitors) == 2)
                sets[ns++] = pairsets[s];
        for (int s = 0; s < ns; s++) {
            target = *t;
            inject_mask = sets[s];
            simrc = run(p, &st);
            int low = lowest_of(sets[s]);
            char what[128];
            snprintf(what, sizeof what, "p=%d %c:%s#%d ranks 0x%x", p, t->kind, t->name, t->occ, sets[s]);
            check_run(p, simrc, what, (t->kind == 'A' ? 200 : 100) + low, low);
            CHECK(st.bcasts == 0 && st.allmins >= R[0].agrees + 1,
                  "%s: the message did not travel in an allmin of its own (%ld allmins for %d agreements, %ld bcasts)",
                  what, st.allmins, R[0].agrees, st.bcasts);
            (*runs)++;
            if (popcount(sets[s]) == 1)
                (*singles)++;
            else
                (*pairs)++;
        }
    }
    printf("p=%d: %d named points:", p, nrec);
    for (int i = 0; i < nrec; i++)
        printf(" %c:%s#%d", rec[i].kind, rec[i].name, rec[i].occ);
    printf("\n");
    memset(&target, 0, sizeof target);
    inject_mask = 0;
}

int main(void)
{
    int runs = 0, singles = 0, pairs = 0;
    fault_matrix(4, &runs, &singles, &pairs);
    fault_matrix(5, &runs, &singles, &pairs);
    /* options that differ: every rank fails init with EINVAL, nothing set up */
    diff_options = 1;
    sheaf_comm_sim_stats st;
    int simrc = run(4, &st);
    diff_options = 0;
    CHECK(simrc == 0, "different options: sim %d", simrc);
    for (int r = 0; r < 4; r++) {
        CHECK(R[r].code == EINVAL && strstr(R[r].msg, "different options"), "different options: rank %d: %d %s", r,
              R[r].code, R[r].msg);
        CHECK(R[r].agrees == 2, "different options: rank %d made %d agreements (want 2: no setup)", r, R[r].agrees);
    }
    printf("test_ckpt_protocol: %d fault runs (%d on one rank, %d on two ranks), %d failure(s)\n", runs, singles, pairs,
           failures);
    if (failures)
        return 1;
    printf("test_ckpt_protocol: OK\n");
    return 0;
}
