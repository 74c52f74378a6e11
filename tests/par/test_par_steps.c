/* test_par_steps.c - a failure at each collective step, on one task and on
 * several tasks with different messages, must be the failure of the call on
 * every task: the same error code (the lowest failing task's), each failing
 * task with its own first message, the others pointing at a failing task
 * ("... (see its message)"), no hang, no leaked local group.
 *
 * The library asks a test hook (par_set_fault_hook, src/par/ctx.h) at every
 * named step of every collective call whether the task fails there. A clean
 * run first records which (call, step, occurrence) each task passes; then,
 * for each of them, one run injects a failure on the first task that passes
 * it, and one on the first two such tasks (different codes and messages).
 * Sequence per run (4 tasks): paropen write (2 files), parreinit, parclose
 * write, paropen read, parclose read (the same set), paropen_mapped write (2
 * logical tasks per process, 2 files), parclose_mapped, paropen_mapped read,
 * parclose_mapped. A second test does the same for the read open of a buddy
 * copy ("br,buddy" after the container's file 0 is lost): every step of
 * "sion_generic_paropen (buddy copy)" failed on one or two tasks makes the
 * open fail on every task with the same code (the open then reports that no
 * copy could be read), no hang, no leaked group. A third does it for the
 * write of buddy copies ("bw,buddy=2", 2 files, sion_coll_fwrite, close):
 * every step of "sion_generic_paropen (buddy copies)" and every "buddy ..."
 * step of the close, failed on one and on two tasks, fails that open or
 * that close on every task with the first failing task's code, each failing
 * task with its own message, the others "... (see its message)". A fourth
 * makes the binding's create_local_commgroup callback itself fail (threadcomm
 * joins the task to the group but reports failure) on one task and on two
 * tasks, at the write open, at the read open and at the buddy copies' open:
 * the open fails on every task with SHEAF_E_IO, the failing tasks naming
 * the callback and themselves, the others the lowest failing task, no hang
 * (threadcomm exits 3 on a wait of TC_TIMEOUT s), no leaked local group. A
 * fifth makes the receive buffer of a gather's root fail to allocate
 * (par_set_alloc_fault_hook: every root buffer of every call of the
 * sequences above, plain, mapped, buddy write and buddy read, each in turn):
 * the root takes part without that buffer (src/par/rootbuf.c; the ASan build
 * checks that nothing writes past a buffer) and the call fails on every task
 * with the same code (SHEAF_E_NOMEM, the root naming the missing memory),
 * no hang. */
#include "partest.h"
#include <pthread.h>

/* the hooks (internal to libsheaf, src/par/ctx.h) */
typedef int (*par_fault_fn)(const char *call, const char *step, int grank, char *msg, size_t len);
void par_set_fault_hook(par_fault_fn fn);
typedef int (*par_alloc_fault_fn)(const char *what);
void par_set_alloc_fault_hook(par_alloc_fault_fn fn);

#define P 4
#define NPH 9
#define MAXSTEP 128
static const char *const ph_names[NPH] = {"paropen write",      "parreinit",        "parclose write",
                                          "paropen read",       "parclose read",    "mapped open write",
                                          "mapped close write", "mapped open read", "mapped close read"};

typedef struct {
    char call[64], step[32];
    int occ;           /* its occurrence on the task (1: first) */
    int ph;            /* the phase it belongs to */
    unsigned visitors; /* tasks that pass it */
} step_id;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static step_id steps[MAXSTEP];
static int nsteps;
static int recording;
static step_id target;
static int inject_code[P]; /* 0: this task does not fail */
static _Thread_local int t_ph, t_rank;
static _Thread_local struct {
    char call[64], step[32];
    int n;
} t_seen[MAXSTEP];
static _Thread_local int t_nseen;
static _Thread_local struct {
    char what[32];
    int ph, n;
} t_aseen[MAXSTEP];
static _Thread_local int t_naseen;

static int occurrence(const char *call, const char *step)
{
    for (int i = 0; i < t_nseen; i++)
        if (!strcmp(t_seen[i].call, call) && !strcmp(t_seen[i].step, step))
            return ++t_seen[i].n;
    if (t_nseen == MAXSTEP)
        return 0;
    snprintf(t_seen[t_nseen].call, sizeof t_seen[0].call, "%s", call);
    snprintf(t_seen[t_nseen].step, sizeof t_seen[0].step, "%s", step);
    t_seen[t_nseen].n = 1;
    return t_nseen++, 1;
}

static int hook(const char *call, const char *step, int grank, char *msg, size_t len)
{
    int occ = occurrence(call, step);
    if (recording) {
        pthread_mutex_lock(&mu);
        int i = 0;
        while (i < nsteps && !(!strcmp(steps[i].call, call) && !strcmp(steps[i].step, step) && steps[i].occ == occ))
            i++;
        if (i == nsteps && nsteps < MAXSTEP) {
            step_id *s = &steps[nsteps++];
            snprintf(s->call, sizeof s->call, "%s", call);
            snprintf(s->step, sizeof s->step, "%s", step);
            s->occ = occ;
            s->ph = t_ph;
            s->visitors = 0;
        }
        if (i < nsteps)
            steps[i].visitors |= 1u << grank;
        pthread_mutex_unlock(&mu);
        return 0;
    }
    if (strcmp(call, target.call) || strcmp(step, target.step) || occ != target.occ || !inject_code[grank])
        return 0;
    snprintf(msg, len, "injected failure at %s / %s on task %d", call, step, grank);
    return inject_code[grank];
}

typedef struct {
    int aid;
    char fname[4200], mname[4200];
    int fail_ph[P]; /* first phase that failed on the task (-1: none) */
    int code[P];
    char msg[P][600];
} ctx;

/* After phase ph: 1 when the task must stop (the call failed). */
static int done(ctx *c, int ph, int ok)
{
    if (ok)
        return 0;
    c->fail_ph[t_rank] = ph;
    c->code[t_rank] = sheaf_last_error_code();
    snprintf(c->msg[t_rank], sizeof c->msg[0], "%s", sheaf_last_error());
    return 1;
}

static int plain_phases(ctx *c, tc_task *t)
{
    int g = t->grank, nf = 2, fnum = g % 2, lrank = g / 2, lsize = (P - fnum + 1) / 2;
    sion_int64 chunk = 5000;
    sion_int32 fsblk = 4096;
    unsigned char b[2000], in[2000];
    pt_fill(b, 3, g, 0, sizeof b);
    t_ph = 0;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (done(c, 0, sid >= 0))
        return 1;
    t_ph = 1;
    int rc = sion_generic_parreinit(sid, 3000 + g);
    if (done(c, 1, rc == SION_SUCCESS)) {
        t_ph = -1; /* the sid stays open: close it (not checked) */
        sion_generic_parclose(sid);
        return 1;
    }
    CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b, "fwrite: %s", sheaf_last_error());
    t_ph = 2;
    if (done(c, 2, sion_generic_parclose(sid) == SION_SUCCESS))
        return 1;
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    t_ph = 3;
    sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, NULL, NULL);
    if (done(c, 3, sid >= 0))
        return 1;
    CHECK(sion_fread(in, 1, sizeof in, sid) == sizeof in && !memcmp(in, b, sizeof b), "read back: %s",
          sheaf_last_error());
    t_ph = 4;
    return done(c, 4, sion_generic_parclose(sid) == SION_SUCCESS);
}

static void mapped_phases(ctx *c, tc_task *t)
{
    int g = t->grank, nl = 2, gr[2] = {2 * g, 2 * g + 1}, fn[2] = {0, 1}, lr[2] = {g, g}, nf = 2;
    sion_int64 cs[2] = {3000, 4000};
    int *pg = gr, *pf = fn, *pl = lr;
    sion_int64 *pc = cs;
    sion_int32 fsblk = 4096;
    t_ph = 5;
    int sid =
        sion_generic_paropen_mapped(c->aid, c->mname, "bw", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (done(c, 5, sid >= 0))
        return;
    t_ph = 6;
    if (done(c, 6, sion_generic_parclose_mapped(sid) == SION_SUCCESS))
        return;
    nl = 2;
    pc = NULL;
    pf = pl = NULL;
    t_ph = 7;
    sid =
        sion_generic_paropen_mapped(c->aid, c->mname, "br", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (done(c, 7, sid >= 0))
        return;
    free(pc);
    free(pf);
    free(pl);
    t_ph = 8;
    done(c, 8, sion_generic_parclose_mapped(sid) == SION_SUCCESS);
}

static void task(tc_task *t)
{
    ctx *c = t->arg;
    t_rank = t->grank;
    pt_rank = t->grank;
    t_nseen = 0;
    t_naseen = 0;
    c->fail_ph[t_rank] = -1;
    if (!plain_phases(c, t))
        mapped_phases(c, t);
}

/* One run with the failures of inject_code at target: check the outcome. */
static void run_case(int aid, const char *dir, int k, const char *what)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    snprintf(c->fname, sizeof c->fname, "%s/s%d_%s.sion", dir, k, what);
    snprintf(c->mname, sizeof c->mname, "%s/m%d_%s.sion", dir, k, what);
    tc_run(P, task, c);
    int low = -1;
    for (int g = P - 1; g >= 0; g--)
        if (inject_code[g])
            low = g;
    for (int g = 0; g < P; g++) {
        CHECK(c->fail_ph[g] == target.ph, "%s / %s #%d (%s): task %d failed in phase %s, expected %s", target.call,
              target.step, target.occ, what, g, c->fail_ph[g] < 0 ? "(none)" : ph_names[c->fail_ph[g]],
              ph_names[target.ph]);
        CHECK(c->code[g] == inject_code[low],
              "%s / %s #%d (%s): task %d returned code %d, the first failing task "
              "(%d) %d: %s",
              target.call, target.step, target.occ, what, g, c->code[g], low, inject_code[low], c->msg[g]);
        char want[300];
        snprintf(want, sizeof want, "injected failure at %s / %s on task %d", target.call, target.step, g);
        if (inject_code[g])
            CHECK(strstr(c->msg[g], want) != NULL, "%s / %s #%d (%s): failing task %d lost its first message: %s",
                  target.call, target.step, target.occ, what, g, c->msg[g]);
        else
            CHECK(strstr(c->msg[g], "see its message") != NULL,
                  "%s / %s #%d (%s): task %d: message does not point "
                  "at the failing task: %s",
                  target.call, target.step, target.occ, what, g, c->msg[g]);
    }
    free(c);
}

static void test_each_step(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-steps");
    CHECK(aid >= 0, "create api");
    par_set_fault_hook(hook);
    /* clean run: which steps each task passes */
    recording = 1;
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    snprintf(c->fname, sizeof c->fname, "%s/clean.sion", dir);
    snprintf(c->mname, sizeof c->mname, "%s/mclean.sion", dir);
    tc_run(P, task, c);
    for (int g = 0; g < P; g++)
        CHECK(c->fail_ph[g] < 0, "clean run: task %d failed in %s: %s", g, ph_names[c->fail_ph[g]], c->msg[g]);
    free(c);
    recording = 0;
    printf("  %d steps (call / step #occurrence: tasks passing it)\n", nsteps);
    int cases = 0;
    for (int k = 0; k < nsteps; k++) {
        if (steps[k].ph < 0)
            continue;
        target = steps[k];
        int first = -1, second = -1;
        for (int g = 0; g < P; g++)
            if (target.visitors & (1u << g)) {
                if (first < 0)
                    first = g;
                else if (second < 0)
                    second = g;
            }
        printf("    %-30s %-14s #%d: mask 0x%x\n", target.call, target.step, target.occ, target.visitors);
        memset(inject_code, 0, sizeof inject_code);
        inject_code[first] = SHEAF_E_ARG;
        run_case(aid, dir, k, "one");
        cases++;
        if (second >= 0) { /* two tasks, different codes and messages: the lower one's code everywhere */
            memset(inject_code, 0, sizeof inject_code);
            inject_code[second] = SHEAF_E_ARG;
            inject_code[first] = SHEAF_E_IO;
            run_case(aid, dir, k, "two");
            cases++;
        }
    }
    par_set_fault_hook(NULL);
    printf("  %d cases\n", cases);
    CHECK(nsteps >= 40, "only %d steps seen", nsteps);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* ---- buddy copy read ---- */
typedef struct {
    int aid;
    char fname[4200];
    const char *mode; /* of the write: "bw,buddy", "bw,buddy=2" */
    int record;       /* the write records its failure (else: any failure is one of the test) */
    int sid[P], code[P], fail_ph[P];
    char msg[P][600];
} bctx;

/* The write of a set with buddy copies: open (phase 10), sion_coll_fwrite,
 * close (phase 11). */
static void bwrite_task(tc_task *t)
{
    bctx *c = t->arg;
    int g = t->grank, nf = 2, fnum = g % 2, lrank = g / 2, lsize = 2;
    pt_rank = g;
    t_rank = g;
    t_nseen = 0;
    t_naseen = 0;
    c->fail_ph[g] = -1;
    sion_int64 chunk = 3000;
    sion_int32 fsblk = 4096;
    unsigned char b[1500];
    pt_fill(b, 9, g, 0, sizeof b);
    t_ph = 10;
    int sid = sion_generic_paropen(c->aid, c->fname, c->mode, &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank,
                                   &lsize, NULL, NULL);
    int ph = 10, ok = sid >= 0;
    if (ok) {
        CHECK(sion_coll_fwrite(b, 1, sizeof b, sid) == sizeof b, "coll write: %s", sheaf_last_error());
        t_ph = ph = 11;
        ok = sion_generic_parclose(sid) == SION_SUCCESS;
    }
    if (!ok) {
        c->fail_ph[g] = ph;
        c->code[g] = sheaf_last_error_code();
        snprintf(c->msg[g], sizeof c->msg[0], "%s", sheaf_last_error());
    }
    CHECK(ok || c->record, "buddy write (%s) failed in phase %d: %s", c->mode, ph, c->msg[g]);
}

static void bread_task(tc_task *t)
{
    bctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    t_rank = g;
    t_nseen = 0;
    t_naseen = 0;
    t_ph = 9;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    int sid = sion_generic_paropen(c->aid, c->fname, "br,buddy", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs,
                                   NULL, NULL);
    c->sid[g] = sid;
    c->code[g] = sid >= 0 ? 0 : sheaf_last_error_code();
    snprintf(c->msg[g], sizeof c->msg[0], "%s", sid >= 0 ? "" : sheaf_last_error());
    if (sid >= 0) {
        t_ph = -1; /* the close is not part of the read's phase */
        unsigned char in[1500], b[1500];
        pt_fill(b, 9, g, 0, sizeof b);
        CHECK(sion_fread(in, 1, sizeof in, sid) == sizeof in && !memcmp(in, b, sizeof in), "buddy read back: %s",
              sheaf_last_error());
        CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
    }
}

/* A set for the buddy tests: its API (with the coalescing callbacks) and name. */
static bctx *buddy_set(const char *dir, const char *api, const char *name, const char *mode)
{
    bctx *c = calloc(1, sizeof *c);
    c->aid = tc_create_api(api);
    CHECK(c->aid >= 0 && tc_register_coll(c->aid) == 0, "create api");
    snprintf(c->fname, sizeof c->fname, "%s/%s", dir, name);
    c->mode = mode;
    return c;
}

/* A clean run of fn that records the steps each task passes. */
static void record_steps(void (*fn)(tc_task *), bctx *c)
{
    par_set_fault_hook(hook);
    nsteps = 0;
    recording = 1;
    tc_run(P, fn, c);
    recording = 0;
}

/* Fail the first (two: the first two) of the target's visitors: E_IO on the
 * first, E_ARG on the second. Returns the first, or -1 when two are wanted
 * and there are fewer. */
static int inject_first(int two)
{
    memset(inject_code, 0, sizeof inject_code);
    int n = 0, low = -1;
    for (int g = 0; g < P && n < 1 + two; g++)
        if (target.visitors & (1u << g)) {
            inject_code[g] = n++ ? SHEAF_E_ARG : SHEAF_E_IO;
            low = low < 0 ? g : low;
        }
    return two && n < 2 ? -1 : low;
}

static void test_buddy_steps(void)
{
    const char *dir = pt_mkdtemp();
    bctx *c = buddy_set(dir, "threadcomm-steps-buddy", "b.sion", "bw,buddy");
    tc_run(P, bwrite_task, c);
    CHECK(unlink(c->fname) == 0, "cannot delete %s", c->fname); /* file 0 lost: its copy is read */
    record_steps(bread_task, c);
    for (int g = 0; g < P; g++)
        CHECK(c->sid[g] >= 0, "clean buddy read failed on task %d: %s", g, c->msg[g]);
    int cases = 0;
    for (int k = 0; k < nsteps; k++) {
        if (strcmp(steps[k].call, "sion_generic_paropen (buddy copy)"))
            continue;
        target = steps[k];
        printf("    %-36s %-10s #%d: mask 0x%x\n", target.call, target.step, target.occ, target.visitors);
        for (int two = 0; two < 2 && inject_first(two) >= 0; two++) {
            tc_run(P, bread_task, c);
            cases++;
            for (int g = 0; g < P; g++) {
                CHECK(c->sid[g] < 0, "buddy %s #%d: task %d opened although a task failed", target.step, target.occ, g);
                CHECK(c->code[g] == c->code[0] && c->code[g] < 0 && strstr(c->msg[g], "buddy"),
                      "buddy %s #%d: task %d: code %d (task 0: %d): %s", target.step, target.occ, g, c->code[g],
                      c->code[0], c->msg[g]);
            }
        }
    }
    par_set_fault_hook(NULL);
    printf("  %d buddy read cases\n", cases);
    CHECK(cases >= 12, "only %d buddy read cases", cases);
    sion_generic_free_api(c->aid);
    free(c);
    pt_rmtree(dir);
}

/* ---- buddy copy write: the copies' open and their part of the close ---- */
/* Whether a recorded step belongs to the copies (their open, their part of the close). */
static int buddy_write_step(const step_id *s)
{
    return !strcmp(s->call, "sion_generic_paropen (buddy copies)") ||
           (!strcmp(s->call, "sion_generic_parclose") && !strncmp(s->step, "buddy ", 6));
}

static void test_buddy_write_steps(void)
{
    const char *dir = pt_mkdtemp();
    bctx *c = buddy_set(dir, "threadcomm-steps-bwrite", "w.sion", "bw,buddy=2");
    c->record = 1;
    record_steps(bwrite_task, c);
    for (int g = 0; g < P; g++)
        CHECK(c->fail_ph[g] < 0, "clean buddy write failed on task %d: %s", g, c->msg[g]);
    int cases = 0, open_steps = 0, close_steps = 0;
    for (int k = 0; k < nsteps; k++) {
        if (!buddy_write_step(&steps[k]))
            continue;
        target = steps[k];
        open_steps += target.ph == 10;
        close_steps += target.ph == 11;
        printf("    %-36s %-14s #%d: mask 0x%x\n", target.call, target.step, target.occ, target.visitors);
        int low;
        for (int two = 0; two < 2 && (low = inject_first(two)) >= 0; two++) {
            tc_run(P, bwrite_task, c);
            cases++;
            for (int g = 0; g < P; g++) {
                CHECK(c->fail_ph[g] == target.ph,
                      "buddy write %s / %s #%d: task %d failed in phase %d, expected %d: "
                      "%s",
                      target.call, target.step, target.occ, g, c->fail_ph[g], target.ph, c->msg[g]);
                CHECK(c->code[g] == inject_code[low],
                      "buddy write %s #%d: task %d: code %d, the first failing task's "
                      "%d: %s",
                      target.step, target.occ, g, c->code[g], inject_code[low], c->msg[g]);
                char want[300];
                snprintf(want, sizeof want, "injected failure at %s / %s on task %d", target.call, target.step, g);
                if (inject_code[g])
                    CHECK(strstr(c->msg[g], want) != NULL,
                          "buddy write %s #%d: failing task %d lost its first "
                          "message: %s",
                          target.step, target.occ, g, c->msg[g]);
                else
                    CHECK(strstr(c->msg[g], "see its message") != NULL,
                          "buddy write %s #%d: task %d: message does "
                          "not point at the failing task: %s",
                          target.step, target.occ, g, c->msg[g]);
            }
        }
    }
    par_set_fault_hook(NULL);
    printf("  %d buddy write cases (%d open steps, %d close steps)\n", cases, open_steps, close_steps);
    CHECK(open_steps >= 6 && close_steps >= 4, "only %d open and %d close steps of the copies", open_steps,
          close_steps);
    sion_generic_free_api(c->aid);
    free(c);
    pt_rmtree(dir);
}

/* ---- create_local_commgroup itself fails ---- */
/* Task g's outcome after create_local_commgroup failed on the tasks of mask
 * (low: the lowest of them): SHEAF_E_IO, a message naming the set and the
 * callback on a failing task, pointing at task `low` on the others. */
static void check_lcg_outcome(const char *what, int g, unsigned mask, int low, const char *fname, int code,
                              const char *msg)
{
    char want[300];
    CHECK(code == SHEAF_E_IO, "%s: task %d returned code %d, expected SHEAF_E_IO (%d): %s", what, g, code, SHEAF_E_IO,
          msg);
    CHECK(strstr(msg, fname) != NULL, "%s: task %d: message does not name the set %s: %s", what, g, fname, msg);
    if (mask >> g & 1u)
        snprintf(want, sizeof want, "create_local_commgroup callback failed on task %d", g);
    else
        snprintf(want, sizeof want, "failed on task %d (see its message)", low);
    CHECK(strstr(msg, want) != NULL, "%s: task %d: message lacks \"%s\": %s", what, g, want, msg);
}

/* The plain sequence with create_local_commgroup failing at the tasks'
 * nth call (1: write open, phase 0; 2: read open, phase 3). */
static void lcg_plain_case(int aid, const char *dir, long nth, unsigned mask)
{
    int ph = nth == 1 ? 0 : 3, low = __builtin_ctz(mask);
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    snprintf(c->fname, sizeof c->fname, "%s/lcg%ld_%x.sion", dir, nth, mask);
    snprintf(c->mname, sizeof c->mname, "%s/mlcg%ld_%x.sion", dir, nth, mask);
    char what[128];
    snprintf(what, sizeof what, "create_local_commgroup fails in %s on tasks 0x%x", ph_names[ph], mask);
    tc_inject_create(mask, nth);
    tc_run(P, task, c);
    tc_inject_create(0, 0);
    for (int g = 0; g < P; g++) {
        CHECK(c->fail_ph[g] == ph, "%s: task %d failed in phase %s", what, g,
              c->fail_ph[g] < 0 ? "(none)" : ph_names[c->fail_ph[g]]);
        check_lcg_outcome(what, g, mask, low, c->fname, c->code[g], c->msg[g]);
    }
    CHECK(tc_last_leaked() == 0, "%s: %d local group(s) left unfreed", what, tc_last_leaked());
    free(c);
}

/* The buddy copies' open ("bw,buddy"): create_local_commgroup #2 (the
 * first group of the copies) fails on the tasks of mask. */
static void lcg_buddy_case(const char *dir, unsigned mask)
{
    bctx *c = buddy_set(dir, "threadcomm-steps-lcg", "lcgb.sion", "bw,buddy");
    c->record = 1;
    char what[128];
    snprintf(what, sizeof what, "create_local_commgroup fails in the buddy copies' open on tasks 0x%x", mask);
    tc_inject_create(mask, 2);
    tc_run(P, bwrite_task, c);
    tc_inject_create(0, 0);
    for (int g = 0; g < P; g++) {
        CHECK(c->fail_ph[g] == 10, "%s: task %d failed in phase %d, expected the open (10): %s", what, g, c->fail_ph[g],
              c->msg[g]);
        CHECK(c->code[g] == c->code[0] && c->code[g] < 0, "%s: task %d: code %d, task 0: %d: %s", what, g, c->code[g],
              c->code[0], c->msg[g]);
    }
    CHECK(tc_last_leaked() == 0, "%s: %d local group(s) left unfreed", what, tc_last_leaked());
    sion_generic_free_api(c->aid);
    free(c);
}

static void test_lcg_failure(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-steps-lcg");
    CHECK(aid >= 0, "create api");
    static const unsigned masks[] = {0x1, 0x8, 0x6, 0x9}; /* one task (first, last), two tasks */
    for (long nth = 1; nth <= 2; nth++)
        for (size_t k = 0; k < sizeof masks / sizeof *masks; k++)
            lcg_plain_case(aid, dir, nth, masks[k]);
    for (size_t k = 0; k < sizeof masks / sizeof *masks; k++)
        lcg_buddy_case(dir, masks[k]);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* ---- a gather root cannot allocate its receive buffer ---- */
typedef struct {
    char what[32];
    int ph, occ, rank;
} alloc_id;
static alloc_id allocs[MAXSTEP];
static int nallocs, alloc_recording;
static alloc_id alloc_target;

/* occurrence of (phase, what) on this task */
static int alloc_occurrence(const char *what)
{
    for (int i = 0; i < t_naseen; i++)
        if (t_aseen[i].ph == t_ph && !strcmp(t_aseen[i].what, what))
            return ++t_aseen[i].n;
    if (t_naseen == MAXSTEP)
        return 0;
    snprintf(t_aseen[t_naseen].what, sizeof t_aseen[0].what, "%s", what);
    t_aseen[t_naseen].ph = t_ph;
    t_aseen[t_naseen].n = 1;
    return t_naseen++, 1;
}

static int alloc_hook(const char *what)
{
    int occ = alloc_occurrence(what);
    if (!alloc_recording)
        return t_rank == alloc_target.rank && t_ph == alloc_target.ph && occ == alloc_target.occ &&
               !strcmp(what, alloc_target.what);
    pthread_mutex_lock(&mu);
    if (nallocs < MAXSTEP && t_ph >= 0) {
        alloc_id *a = &allocs[nallocs++];
        snprintf(a->what, sizeof a->what, "%s", what);
        a->ph = t_ph;
        a->occ = occ;
        a->rank = t_rank;
    }
    pthread_mutex_unlock(&mu);
    return 0;
}

/* Record the root allocations of one clean run of fn (arg). */
static void record_allocs(void (*fn)(tc_task *), void *arg)
{
    nallocs = 0;
    alloc_recording = 1;
    par_set_alloc_fault_hook(alloc_hook);
    tc_run(P, fn, arg);
    alloc_recording = 0;
}

/* After a run with alloc_target failing: every task failed in the target's
 * phase (fail_ph, codes, msgs of the run) with SHEAF_E_NOMEM, the root
 * naming the missing memory. */
static void check_alloc_case(const int *fail_ph, const int *code, char (*msg)[600])
{
    const alloc_id *t = &alloc_target;
    printf("    root buffer %-24s #%d phase %2d task %d: %s\n", t->what, t->occ, t->ph, t->rank, msg[0]);
    for (int g = 0; g < P; g++) {
        CHECK(fail_ph[g] == t->ph, "root buffer %s #%d of phase %d on task %d: task %d failed in phase %d: %s", t->what,
              t->occ, t->ph, t->rank, g, fail_ph[g], msg[g]);
        CHECK(code[g] == SHEAF_E_NOMEM,
              "root buffer %s #%d of phase %d on task %d: task %d returned %d, expected "
              "SHEAF_E_NOMEM: %s",
              t->what, t->occ, t->ph, t->rank, g, code[g], msg[g]);
    }
    CHECK(strstr(msg[t->rank], "out of memory") != NULL,
          "root buffer %s #%d of phase %d: the root (task %d) does "
          "not say so: %s",
          t->what, t->occ, t->ph, t->rank, msg[t->rank]);
}

/* The plain and mapped sequence (task()): each recorded root buffer fails. */
static int alloc_plain_cases(int aid, const char *dir)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    snprintf(c->fname, sizeof c->fname, "%s/arec.sion", dir);
    snprintf(c->mname, sizeof c->mname, "%s/marec.sion", dir);
    record_allocs(task, c);
    alloc_id list[MAXSTEP];
    int n = nallocs;
    memcpy(list, allocs, sizeof list);
    for (int k = 0; k < n; k++) {
        alloc_target = list[k];
        memset(c, 0, sizeof *c);
        c->aid = aid;
        snprintf(c->fname, sizeof c->fname, "%s/a%d.sion", dir, k);
        snprintf(c->mname, sizeof c->mname, "%s/ma%d.sion", dir, k);
        tc_run(P, task, c);
        check_alloc_case(c->fail_ph, c->code, c->msg);
    }
    free(c);
    return n;
}

/* The buddy write ("bw,buddy=2": phases 10, 11) and read (phase 9). */
static int alloc_buddy_cases(const char *dir)
{
    bctx *c = buddy_set(dir, "threadcomm-steps-amem", "ab.sion", "bw,buddy=2");
    c->record = 1;
    record_allocs(bwrite_task, c);
    alloc_id list[MAXSTEP];
    int n = nallocs;
    memcpy(list, allocs, sizeof list);
    for (int k = 0; k < n; k++) {
        alloc_target = list[k];
        tc_run(P, bwrite_task, c);
        check_alloc_case(c->fail_ph, c->code, c->msg);
    }
    alloc_target.ph = -2;
    tc_run(P, bwrite_task, c); /* a clean set, then file 0 lost: its copy is read */
    CHECK(unlink(c->fname) == 0, "cannot delete %s", c->fname);
    record_allocs(bread_task, c);
    int nr = nallocs, nfailed = 0;
    memcpy(list, allocs, sizeof list);
    for (int k = 0; k < nr; k++) {
        alloc_target = list[k];
        tc_run(P, bread_task, c);
        /* a buffer of the container's own open (file 0 is lost) changes nothing: the copy is read; else
         * every task fails alike */
        for (int g = 0; g < P; g++)
            CHECK((c->sid[g] < 0) == (c->sid[0] < 0) && c->code[g] == c->code[0] && (c->sid[g] >= 0 || c->code[g] < 0),
                  "buddy read, root buffer %s #%d on task %d: task %d: sid %d, "
                  "code %d (task 0: sid %d, code %d): %s",
                  list[k].what, list[k].occ, list[k].rank, g, c->sid[g], c->code[g], c->sid[0], c->code[0], c->msg[g]);
        nfailed += c->sid[0] < 0;
    }
    CHECK(nfailed >= 3, "only %d of %d root buffers of the buddy read failed it", nfailed, nr);
    sion_generic_free_api(c->aid);
    free(c);
    return n + nr;
}

static void test_root_nomem(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-steps-amem");
    CHECK(aid >= 0, "create api");
    int n = alloc_plain_cases(aid, dir);
    int nb = alloc_buddy_cases(dir);
    par_set_alloc_fault_hook(NULL);
    printf("  %d plain/mapped and %d buddy root buffers failed in turn\n", n, nb);
    CHECK(n >= 12 && nb >= 6, "only %d plain/mapped and %d buddy root buffers seen", n, nb);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"failure_at_each_step", test_each_step},
                                    {"buddy_read_steps", test_buddy_steps},
                                    {"buddy_write_steps", test_buddy_write_steps},
                                    {"create_lcg_failure", test_lcg_failure},
                                    {"root_out_of_memory", test_root_nomem}};
    return pt_main(tests, 5, argc, argv);
}
