/* test_par_faults.c - a failing collective callback on one task.
 *
 * sion_generic.h: "a failure on any task (bad argument, file not creatable,
 * I/O error) becomes a failure of the call on every task of the global
 * group; no task is left waiting in a collective", and callbacks report
 * failure with a non-zero return. threadcomm's fault injection makes exactly
 * one callback invocation (it still moves its data) return failure on one
 * task. A clean run first measures which callbacks each task executes in
 * each call; then, for every one of them, on a file master and on another
 * task, the call must fail on every task (a hang is reported by threadcomm),
 * each failing task with a message, without leaking its local group.
 * Scenarios: plain opens (write open, parreinit, write close, read open,
 * read close; 4 tasks, 2 files) and mapped opens (write open/close, read
 * open/close; 2 processes, 5 logical tasks, 2 files).
 *
 * Some failures are only reported, not asserted: the call's final agreement
 * step (its last global bcast) and its final vote (last global gather) on a
 * task other than 0 (no later step can tell the others). A failing
 * create_local_commgroup is asserted like the others: the open votes right
 * after it (threadcomm does not promise that it fails on every task or
 * none), so the task without its local group fails the open on every task
 * before the local collectives. Each case runs in a forked child. */
#include "partest.h"
#include <sys/wait.h>

#define MAXP 4
#define MAXPH 5
enum { SC_PLAIN, SC_MAPPED };
static const char *const plain_ph[] = {"paropen write", "parreinit", "parclose write", "paropen read", "parclose read"};
static const char *const mapped_ph[] = {"paropen_mapped write", "parclose_mapped write", "paropen_mapped read",
                                        "parclose_mapped read"};

typedef struct {
    int aid, scenario, P, nph;
    int phase; /* target phase, -1: none (measuring run) */
    char fname[4200];
    int ok[MAXP]; /* outcome of the target phase per task: 1 success, 0 failure, -1 not reached */
    int msg_ok[MAXP];
    char msg[MAXP][512];
    tc_counts used[MAXP][MAXPH]; /* measuring run: callbacks per task and phase */
} ctx;

/* after call `ph`: record; returns 1 when the task must stop */
static int done(ctx *c, int g, int ph, int success, tc_counts *before)
{
    tc_counts now = tc_counts_get();
    c->used[g][ph] = tc_counts_diff(now, *before);
    *before = now;
    if (c->phase < 0) {
        CHECK(success, "clean run: call %d failed: %s", ph, sheaf_last_error());
        return !success;
    }
    if (ph != c->phase)
        return !success;
    c->ok[g] = success;
    c->msg_ok[g] = success || sheaf_last_error()[0];
    snprintf(c->msg[g], sizeof c->msg[g], "%s", success ? "" : sheaf_last_error());
    return 1; /* later calls would wait for tasks that saw another outcome */
}

static void plain_task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nf = 2, fnum = g % 2, lrank = g / 2, lsize = (P - fnum + 1) / 2;
    sion_int64 chunk = 8192;
    sion_int32 fsblk = 4096;
    unsigned char b[3000];
    pt_fill(b, 12, g, 0, sizeof b);
    tc_counts bf = tc_counts_get();
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (done(c, g, 0, sid >= 0, &bf))
        return;
    int rc = sion_generic_parreinit(sid, 4096);
    if (done(c, g, 1, rc == SION_SUCCESS, &bf))
        return;
    sion_fwrite(b, 1, sizeof b, sid);
    bf = tc_counts_get();
    rc = sion_generic_parclose(sid);
    if (done(c, g, 2, rc == SION_SUCCESS, &bf))
        return;
    int rf, rnf, rl, rs;
    sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, NULL, NULL);
    if (done(c, g, 3, sid >= 0, &bf))
        return;
    rc = sion_generic_parclose(sid);
    done(c, g, 4, rc == SION_SUCCESS, &bf);
}

#define NT 5
static void mapped_task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nl = 0, gr[NT], fn[NT], lr[NT];
    sion_int64 cs[NT];
    for (int k = 0; k < NT; k++)
        if (k % P == g) {
            gr[nl] = k;
            fn[nl] = k % 2;
            lr[nl] = k / 2;
            cs[nl] = 2000;
            nl++;
        }
    int *pg = gr, *pf = fn, *pl = lr, nf = 2;
    sion_int64 *pc = cs;
    sion_int32 fsblk = 4096;
    tc_counts bf = tc_counts_get();
    int sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "bw", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (done(c, g, 0, sid >= 0, &bf))
        return;
    unsigned char b[500];
    for (int i = 0; i < nl; i++) {
        sion_seek(sid, gr[i], SION_CURRENT_BLK, SION_CURRENT_POS);
        pt_fill(b, 13, gr[i], 0, sizeof b);
        sion_fwrite(b, 1, sizeof b, sid);
    }
    bf = tc_counts_get();
    int rc = sion_generic_parclose_mapped(sid);
    if (done(c, g, 1, rc == SION_SUCCESS, &bf))
        return;
    nl = -1;
    pg = NULL;
    pc = NULL;
    pf = pl = NULL;
    sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "br", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (done(c, g, 2, sid >= 0, &bf))
        return;
    free(pg);
    free(pc);
    free(pf);
    free(pl);
    rc = sion_generic_parclose_mapped(sid);
    done(c, g, 3, rc == SION_SUCCESS, &bf);
}

static void run(ctx *c) { tc_run(c->P, c->scenario == SC_PLAIN ? plain_task : mapped_task, c); }

/* in the child: judge one case */
static void verdict(ctx *c, const char *what, int informational, int victim)
{
    CHECK(tc_inject_fired(), "%s: the injected failure never happened", what);
    int nok = 0, nfail = 0;
    for (int g = 0; g < c->P; g++) {
        nok += c->ok[g] == 1;
        nfail += c->ok[g] == 0;
    }
    if (informational) {
        printf("  %s (informational): %d tasks succeeded, %d failed\n", what, nok, nfail);
        return;
    }
    CHECK(nfail == c->P, "%s: %d of %d tasks failed, %d succeeded (expected a failure on every task)", what, nfail,
          c->P, nok);
    for (int g = 0; g < c->P; g++)
        CHECK(c->msg_ok[g], "%s: task %d failed without a message", what, g);
    /* a failed open or close leaves no local group behind (reinit keeps the sid) */
    if (nfail == c->P && !(c->scenario == SC_PLAIN && c->phase == 1))
        CHECK(tc_last_leaked() == 0, "%s: the failed call left %d local group(s) unfreed", what, tc_last_leaked());
    if (nfail == c->P) {
        int o = victim == 0 ? 1 : 0;
        printf("  %s: all fail; task %d: %s\n", what, o, c->msg[o]);
    }
}

static void scenario(int sc, int P)
{
    const char *dir = pt_mkdtemp();
    ctx *c = calloc(1, sizeof *c);
    c->aid = tc_create_api("threadcomm-faults");
    c->scenario = sc;
    c->P = P;
    c->nph = sc == SC_PLAIN ? 5 : 4;
    const char *const *phn = sc == SC_PLAIN ? plain_ph : mapped_ph;
    snprintf(c->fname, sizeof c->fname, "%s/faults.sion", dir);
    /* measuring run */
    c->phase = -1;
    int f0 = atomic_load(&pt_failures);
    run(c);
    if (!CHECK(atomic_load(&pt_failures) == f0, "the clean run failed"))
        goto out;
    int victims[2] = {0, P - 1}; /* task 0 (master of file 0, the root) and the last task */
    int ncases = 0, ninfo = 0, nhang = 0;
    for (int ph = 0; ph < c->nph; ph++) {
        for (int kind = 0; kind < TC_NKIND; kind++) {
            for (int op = TC_CREATE; op < TC_NOP; op++) {
                if (op == TC_FREE)
                    continue;
                for (int v = 0; v < 2; v++) {
                    int vic = victims[v];
                    long count = c->used[vic][ph].n[kind][op], before = 0;
                    for (int q = 0; q < ph; q++)
                        before += c->used[vic][q].n[kind][op];
                    for (long nth = 1; nth <= count; nth++) {
                        int informational = (kind == TC_GLOBAL && op == TC_BCAST && nth == count) ||
                                            (kind == TC_GLOBAL && op == TC_GATHER && nth == count && vic != 0);
                        char what[256];
                        snprintf(what, sizeof what, "%s: %s %s #%ld fails on task %d", phn[ph],
                                 kind == TC_GLOBAL ? "global" : "local", tc_op_names[op], nth, vic);
                        ncases++;
                        ninfo += informational;
                        fflush(stdout);
                        fflush(stderr);
                        pid_t pid = fork();
                        if (pid == 0) {
                            int fbase = atomic_load(&pt_failures), vbase = tc_violations();
                            /* threads finish a collective in microseconds: a case that hangs
                             * need not wait long */
                            setenv("TC_TIMEOUT", informational ? "0.5" : "1", 1);
                            tc_set_leak_check(0);
                            c->phase = ph;
                            for (int g = 0; g < P; g++) {
                                c->ok[g] = -1;
                                c->msg_ok[g] = 1;
                                c->msg[g][0] = 0;
                            }
                            tc_inject_failure(kind, op, before + nth, vic);
                            run(c);
                            verdict(c, what, informational, vic);
                            fflush(stdout);
                            fflush(stderr);
                            _exit(atomic_load(&pt_failures) != fbase || tc_violations() != vbase ? 1 : 0);
                        }
                        int st = 0;
                        if (!CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork/wait failed"))
                            continue;
                        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                        if (code == 3) {
                            nhang++;
                            printf("  %s: HANG%s\n", what, informational ? " (informational)" : "");
                        }
                        CHECK(code == 0 || (informational && code == 3), "%s: %s", what,
                              code == 3   ? "the other tasks HANG (threadcomm timeout, see the HANG line above)"
                              : code == 1 ? "wrong outcome (see the lines above)"
                                          : "the child process crashed");
                    }
                }
            }
        }
    }
    printf("  %d injected failures (%d informational), %d hang(s)\n", ncases, ninfo, nhang);
    /* the library is still usable */
    c->phase = -1;
    f0 = atomic_load(&pt_failures);
    run(c);
    CHECK(atomic_load(&pt_failures) == f0, "a clean cycle after the injected failures failed");
out:
    sion_generic_free_api(c->aid);
    free(c);
    pt_rmtree(dir);
}

static void test_plain(void) { scenario(SC_PLAIN, 4); }
static void test_mapped(void) { scenario(SC_MAPPED, 2); }

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"callback_failures_plain", test_plain}, {"callback_failures_mapped", test_mapped}};
    return pt_main(tests, 2, argc, argv);
}
