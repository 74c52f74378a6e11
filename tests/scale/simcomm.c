/* simcomm.c - user-level-thread communication layer for sion_generic.h at
 * scale. See simcomm.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "simcomm.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "sheaf.h"
#include "sion.h"
/* The library's setter of the thread-local error record: the one internal
 * dependence (restoring a task's error state at a context switch). */
#include "../../src/core/error.h"

const char *const sim_op_names[SIM_NOP] = {"create_lcg", "free_lcg", "barrier", "bcast",
                                           "gather",     "gatherv",  "scatter", "scatterv"};
sim_acct *sim_cur_acct;

enum { OP_SYNC = 100 };
enum { T_READY, T_BLOCKED, T_DONE };

typedef struct inst inst;
typedef struct sgroup {
    int kind, size, filenumber, gen;
    int joined, refs;
    inst *cur; /* collective collecting arrivals, NULL between collectives */
    long seq;
} sgroup;

struct sim_handle {
    sgroup *g;
    int rank;
};

typedef struct tctx {
    sim_task pub;
    ucontext_t uc;
    int state;
    int opens; /* local groups created so far (keys the registry) */
    int err_code, err_no;
    char *err_msg; /* saved error message (NULL: none) */
    /* sim_copy_stacks: the task's stack while it waits (from its stack
     * pointer to the top of the shared run stack), save_n bytes */
    unsigned char *save;
    size_t save_n;
    int started;
} tctx;

struct inst {
    int op, root, dt, nelem; /* nelem of the first arrival (uniform ops) */
    int arrived, pending;
    int *who;      /* task indices in arrival order */
    int64_t *keys; /* sim_sync */
    unsigned char *buf;
    size_t bytes;         /* payload in buf */
    int *counts;          /* v-ops: the root's counts (copied) */
    size_t *offs;         /* v-ops: offsets from counts */
    unsigned char **slot; /* gatherv: each member's deposit */
    int *slotn;
    double done_at;
};

/* ---- scheduler state (one OS thread) ---- */
static struct {
    tctx *t;
    int P;
    int *q;
    int qh, qn; /* ring */
    ucontext_t sched;
    int cur; /* running task, -1: scheduler */
    sgroup *world;
    sgroup **loc; /* per filenumber: local group being formed */
    int nloc;
    int64_t switches;
    sim_acct layer;
} S;

double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* CPU time of this OS thread: all tasks run on it, so the difference over a
 * slice is the CPU the task used in it (time the machine gave to other
 * processes is not counted) */
static int64_t cpu_ns(int exact)
{
    struct timespec ts;
    clock_gettime(exact ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

sim_task *sim_self(void) { return S.cur >= 0 ? &S.t[S.cur].pub : NULL; }

static void fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[simcomm] PROTOCOL VIOLATION: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    _exit(3);
}

double sim_sync_cpu;
static double proc_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* layer allocations are charged to the layer, not to the running task */
static void *lmalloc(size_t n)
{
    sim_acct *a = sim_cur_acct;
    sim_cur_acct = &S.layer;
    void *p = malloc(n ? n : 1);
    sim_cur_acct = a;
    if (!p)
        fatal("out of memory (%zu bytes)", n);
    return p;
}
static void *lcalloc(size_t n, size_t s)
{
    sim_acct *a = sim_cur_acct;
    sim_cur_acct = &S.layer;
    void *p = calloc(n ? n : 1, s ? s : 1);
    sim_cur_acct = a;
    if (!p)
        fatal("out of memory (%zu x %zu bytes)", n, s);
    return p;
}
static void lfree(void *p)
{
    sim_acct *a = sim_cur_acct;
    sim_cur_acct = &S.layer;
    free(p);
    sim_cur_acct = a;
}

static void push(int i)
{
    S.q[(S.qh + S.qn) % S.P] = i;
    S.qn++;
    S.t[i].state = T_READY;
}

/* The running task gives the CPU back to the scheduler until made ready. */
static void block_me(void)
{
    tctx *t = &S.t[S.cur];
    if (t->state != T_READY)
        t->state = T_BLOCKED;
    swapcontext(&t->uc, &S.sched);
}

/* ---- error state swap ---- */
static void save_err(tctx *t)
{
    t->err_no = errno;
    int code = sheaf_last_error_code();
    const char *m = sheaf_last_error();
    if (!code && !m[0]) {
        if (t->err_msg) {
            free(t->err_msg);
            t->err_msg = NULL;
        }
        t->err_code = 0;
        return;
    }
    t->err_code = code;
    if (!t->err_msg || strcmp(t->err_msg, m)) {
        free(t->err_msg);
        t->err_msg = strdup(m);
    }
}
static void restore_err(const tctx *t)
{
    if (t->err_code || t->err_msg)
        core_fail(t->err_code, "%s", t->err_msg ? t->err_msg : "");
    else if (sheaf_last_error_code() || sheaf_last_error()[0])
        core_clear_error();
    errno = t->err_no;
}

/* makecontext passes ints; the function and argument live in these */
static void (*g_fn)(sim_task *);
static void *g_arg;
static void task_main(int i)
{
    tctx *t = &S.t[i];
    t->pub.arg = g_arg;
    g_fn(&t->pub);
    t->state = T_DONE;
    /* returning resumes uc_link (the scheduler) */
}

static size_t elsize(int dt)
{
    switch (dt) {
    case _SION_INT32:
        return 4;
    case _SION_INT64:
        return 8;
    case _SION_CHAR:
        return 1;
    default:
        return 0;
    }
}

static void dump_group(const sgroup *g)
{
    fprintf(stderr, "   %s sgroup size %d (file %d): collective #%ld, %d of %d arrived (op %d root %d)\n",
            g->kind == SIM_GLOBAL ? "global" : "local", g->size, g->filenumber, g->seq, g->cur ? g->cur->arrived : 0,
            g->size, g->cur ? g->cur->op : -1, g->cur ? g->cur->root : -1);
}

/* ---- one collective ---- */
static int g_kind, g_op; /* of the call being accounted */
static void account(sim_task *me, int64_t sent, int64_t recv)
{
    sim_log *l = me->log;
    if (l && l->n < l->cap) {
        l->c[l->n].kind = g_kind;
        l->c[l->n].op = g_op;
        l->c[l->n].bytes = sent > recv ? sent : recv;
        l->n++;
    }
    me->st.sent += sent;
    me->st.recv += recv;
    if (sent > me->st.maxbuf)
        me->st.maxbuf = sent;
    if (recv > me->st.maxbuf)
        me->st.maxbuf = recv;
}

static const int64_t *sort_keys;
static int cmp_desc(const void *a, const void *b)
{
    int64_t x = sort_keys[*(const int *)a], y = sort_keys[*(const int *)b];
    return x < y ? 1 : x > y ? -1 : 0;
}

static int coll(sim_handle *h, int op, int root, int dt, int nelem, const void *src, void *dst, const int *counts,
                int64_t key, double *done_at)
{
    sgroup *g = h->g;
    int me = h->rank, ti = S.cur;
    sim_task *pt = &S.t[ti].pub;
    size_t es = op == OP_SYNC || op == SIM_BARRIER ? 1 : elsize(dt);
    if (!es)
        fatal("%s: datatype %d", sim_op_names[op], dt);
    if (nelem < 0)
        fatal("%s: nelem %d", sim_op_names[op], nelem);
    inst *c = g->cur;
    if (!c) {
        c = g->cur = lcalloc(1, sizeof *c);
        c->op = op;
        c->root = root;
        c->dt = dt;
        c->nelem = nelem;
        c->who = lmalloc((size_t)g->size * sizeof *c->who);
        g->seq++;
        switch (op) {
        case SIM_GATHER:
        case SIM_SCATTER:
            c->bytes = (size_t)g->size * (size_t)nelem * es;
            c->buf = lmalloc(c->bytes);
            break;
        case SIM_BCAST:
            c->bytes = (size_t)nelem * es;
            c->buf = lmalloc(c->bytes);
            break;
        case SIM_GATHERV:
            c->slot = lcalloc((size_t)g->size, sizeof *c->slot);
            c->slotn = lcalloc((size_t)g->size, sizeof *c->slotn);
            break;
        case OP_SYNC:
            c->keys = lmalloc((size_t)g->size * sizeof *c->keys);
            break;
        }
    } else if (c->op != op || ((op != OP_SYNC && op != SIM_BARRIER) && (c->root != root || c->dt != dt)) ||
               ((op == SIM_GATHER || op == SIM_SCATTER || op == SIM_BCAST) && c->nelem != nelem)) {
        fatal("%s sgroup (size %d, file %d) collective #%ld: the first member called %s(root %d, datatype %d, nelem "
              "%d), rank %d calls %s(root %d, datatype %d, nelem %d)",
              g->kind == SIM_GLOBAL ? "global" : "local", g->size, g->filenumber, g->seq,
              c->op == OP_SYNC ? "sync" : sim_op_names[c->op], c->root, c->dt, c->nelem, me,
              op == OP_SYNC ? "sync" : sim_op_names[op], root, dt, nelem);
    }
    if (op != OP_SYNC && op != SIM_BARRIER && (root < 0 || root >= g->size))
        fatal("%s: root %d out of range (sgroup size %d)", sim_op_names[op], root, g->size);
    /* deposit */
    switch (op) {
    case SIM_GATHER:
        memcpy(c->buf + (size_t)me * (size_t)nelem * es, src, (size_t)nelem * es);
        break;
    case SIM_GATHERV:
        c->slotn[me] = nelem;
        c->slot[me] = lmalloc((size_t)nelem * es);
        memcpy(c->slot[me], src, (size_t)nelem * es);
        break;
    case SIM_BCAST:
        if (me == root)
            memcpy(c->buf, src, c->bytes);
        break;
    case SIM_SCATTER:
        if (me == root)
            memcpy(c->buf, src, c->bytes);
        break;
    case SIM_SCATTERV:
        if (me == root) {
            c->counts = lmalloc((size_t)g->size * sizeof *c->counts);
            c->offs = lmalloc(((size_t)g->size + 1) * sizeof *c->offs);
            memcpy(c->counts, counts, (size_t)g->size * sizeof *c->counts);
            c->offs[0] = 0;
            for (int r = 0; r < g->size; r++) {
                if (counts[r] < 0)
                    fatal("scatterv: negative count %d for rank %d", counts[r], r);
                c->offs[r + 1] = c->offs[r] + (size_t)counts[r] * es;
            }
            c->bytes = c->offs[g->size];
            c->buf = lmalloc(c->bytes);
            memcpy(c->buf, src, c->bytes);
        }
        break;
    case OP_SYNC:
        c->keys[me] = key;
        break;
    }
    c->who[c->arrived++] = ti;
    if (c->arrived < g->size) {
        block_me();
    } else { /* complete: everyone may withdraw */
        g->cur = NULL;
        c->pending = g->size;
        c->done_at = sim_now();
        if (op == OP_SYNC)
            sim_sync_cpu = proc_cpu();
        if (op == OP_SYNC) { /* resume in descending key order, this task too */
            int *ord = lmalloc((size_t)g->size * sizeof *ord);
            for (int r = 0; r < g->size; r++)
                ord[r] = r;
            sort_keys = c->keys;
            qsort(ord, (size_t)g->size, sizeof *ord, cmp_desc);
            for (int r = 0; r < g->size; r++)
                push(ord[r]); /* world rank == task index */
            lfree(ord);
            block_me();
        } else {
            for (int r = 0; r < c->arrived; r++)
                if (c->who[r] != ti)
                    push(c->who[r]);
        }
    }
    /* withdraw (this task runs: its buffers are valid) */
    int rc = 0;
    g_kind = g->kind;
    g_op = op;
    switch (op) {
    case SIM_GATHER:
        if (me == root)
            memcpy(dst, c->buf, c->bytes);
        account(pt, (int64_t)nelem * (int64_t)es, me == root ? (int64_t)c->bytes : 0);
        break;
    case SIM_GATHERV: {
        int64_t got = 0;
        if (me == root) {
            size_t off = 0;
            for (int r = 0; r < g->size; r++) {
                if (counts[r] != c->slotn[r])
                    fatal("gatherv: root's counts[%d] = %d but rank %d sent %d", r, counts[r], r, c->slotn[r]);
                memcpy((unsigned char *)dst + off, c->slot[r], (size_t)c->slotn[r] * es);
                off += (size_t)c->slotn[r] * es;
            }
            got = (int64_t)off;
        }
        account(pt, (int64_t)nelem * (int64_t)es, got);
        break;
    }
    case SIM_BCAST:
        if (me != root)
            memcpy(dst, c->buf, c->bytes);
        account(pt, me == root ? (int64_t)c->bytes : 0, me == root ? 0 : (int64_t)c->bytes);
        break;
    case SIM_SCATTER:
        memcpy(dst, c->buf + (size_t)me * (size_t)nelem * es, (size_t)nelem * es);
        account(pt, me == root ? (int64_t)c->bytes : 0, (int64_t)nelem * (int64_t)es);
        break;
    case SIM_SCATTERV:
        if (c->counts[me] != nelem)
            fatal("scatterv: root's counts[%d] = %d but rank %d expects %d", me, c->counts[me], me, nelem);
        memcpy(dst, c->buf + c->offs[me], (size_t)nelem * es);
        account(pt, me == root ? (int64_t)c->bytes : 0, (int64_t)nelem * (int64_t)es);
        break;
    }
    double done = c->done_at;
    if (--c->pending == 0) {
        if (c->slot)
            for (int r = 0; r < g->size; r++)
                lfree(c->slot[r]);
        lfree(c->slot);
        lfree(c->slotn);
        lfree(c->counts);
        lfree(c->offs);
        lfree(c->buf);
        lfree(c->keys);
        lfree(c->who);
        lfree(c);
    }
    if (done_at)
        *done_at = done;
    return rc;
}

/* ---- callbacks ---- */
static sim_handle *handle(void *grp, const char *what)
{
    if (!grp)
        fatal("%s called with a NULL group", what);
    if (S.cur < 0)
        fatal("%s called outside a simulated task", what);
    return grp;
}
#define COUNT(h, op) (S.t[S.cur].pub.st.calls[(h)->g->kind][(op)]++)

static int cb_barrier(void *grp)
{
    sim_handle *h = handle(grp, "barrier");
    COUNT(h, SIM_BARRIER);
    return coll(h, SIM_BARRIER, 0, 0, 0, NULL, NULL, NULL, 0, NULL);
}
static int cb_bcast(void *data, void *grp, int dt, int n, int root)
{
    sim_handle *h = handle(grp, "bcast");
    COUNT(h, SIM_BCAST);
    return coll(h, SIM_BCAST, root, dt, n, data, data, NULL, 0, NULL);
}
static int cb_gather(void *in, void *out, void *grp, int dt, int n, int root)
{
    sim_handle *h = handle(grp, "gather");
    COUNT(h, SIM_GATHER);
    return coll(h, SIM_GATHER, root, dt, n, in, out, NULL, 0, NULL);
}
static int cb_gatherv(void *in, void *out, void *grp, int dt, int *counts, int n, int root)
{
    sim_handle *h = handle(grp, "gatherv");
    COUNT(h, SIM_GATHERV);
    return coll(h, SIM_GATHERV, root, dt, n, in, out, counts, 0, NULL);
}
/* SIONlib's order: in = the root's array, out = each task's part */
static int cb_scatter(void *in, void *out, void *grp, int dt, int n, int root)
{
    sim_handle *h = handle(grp, "scatter");
    COUNT(h, SIM_SCATTER);
    return coll(h, SIM_SCATTER, root, dt, n, in, out, NULL, 0, NULL);
}
/* ... and the other way round for scatterv: in = each task's part, out = the root's array */
static int cb_scatterv(void *in, void *out, void *grp, int dt, int *counts, int n, int root)
{
    sim_handle *h = handle(grp, "scatterv");
    COUNT(h, SIM_SCATTERV);
    return coll(h, SIM_SCATTERV, root, dt, n, out, in, counts, 0, NULL);
}

static void group_free(sgroup *g)
{
    if (g->kind == SIM_LOCAL && g->filenumber < S.nloc && S.loc[g->filenumber] == g)
        S.loc[g->filenumber] = NULL;
    lfree(g);
}

/* Local groups: members of open number n (counted per task) of file f meet
 * in S.loc[f]; every open is separated from the next by global collectives,
 * so one sgroup per file is being formed at a time. */
static int cb_create(void **lg, void *gg, int grank, int gsize, int lrank, int lsize, int fn, int nf)
{
    sim_handle *w = handle(gg, "create_local_commgroup");
    COUNT(w, SIM_CREATE);
    tctx *t = &S.t[S.cur];
    if (!lg || w->g != S.world || grank != w->rank || gsize != S.P || lsize < 1 || lsize > gsize || lrank < 0 ||
        lrank >= lsize || nf < 1 || fn < 0 || fn >= nf)
        fatal("create_local_commgroup(grank %d, gsize %d, lrank %d, lsize %d, file %d, numfiles %d) on task %d of %d: "
              "inconsistent arguments",
              grank, gsize, lrank, lsize, fn, nf, S.cur, S.P);
    int gen = ++t->opens;
    if (fn >= S.nloc) {
        int n = nf > fn + 1 ? nf : fn + 1;
        sim_acct *a = sim_cur_acct;
        sim_cur_acct = &S.layer;
        sgroup **nl = realloc(S.loc, (size_t)n * sizeof *nl);
        sim_cur_acct = a;
        if (!nl)
            fatal("out of memory");
        memset(nl + S.nloc, 0, (size_t)(n - S.nloc) * sizeof *nl);
        S.loc = nl;
        S.nloc = n;
    }
    sgroup *g = S.loc[fn];
    if (!g || g->gen != gen) {
        if (g && g->joined < g->size)
            fatal("file %d: the local group of open #%d is incomplete (%d of %d) when open #%d creates one", fn, g->gen,
                  g->joined, g->size, gen);
        g = lcalloc(1, sizeof *g);
        g->kind = SIM_LOCAL;
        g->size = lsize;
        g->filenumber = fn;
        g->gen = gen;
        S.loc[fn] = g;
    }
    if (g->size != lsize || g->joined >= g->size)
        fatal("create_local_commgroup: file %d (open #%d): task %d says lsize %d, the group has size %d and %d members",
              fn, gen, grank, lsize, g->size, g->joined);
    g->joined++;
    g->refs++;
    sim_handle *h = lmalloc(sizeof *h);
    h->g = g;
    h->rank = lrank;
    *lg = h;
    return 0;
}

static int cb_free(void *lg)
{
    sim_handle *h = handle(lg, "free_local_commgroup");
    COUNT(h, SIM_FREE);
    sgroup *g = h->g;
    if (g->kind != SIM_LOCAL)
        fatal("free_local_commgroup called with the global group");
    if (--g->refs == 0 && g->joined == g->size)
        group_free(g);
    lfree(h);
    return 0;
}

int sim_register(int aid)
{
    int ok = 1;
    ok &= sion_generic_register_create_local_commgroup_cb(aid, cb_create) == SION_SUCCESS;
    ok &= sion_generic_register_free_local_commgroup_cb(aid, cb_free) == SION_SUCCESS;
    ok &= sion_generic_register_barrier_cb(aid, cb_barrier) == SION_SUCCESS;
    ok &= sion_generic_register_bcastr_cb(aid, cb_bcast) == SION_SUCCESS;
    ok &= sion_generic_register_gatherr_cb(aid, cb_gather) == SION_SUCCESS;
    ok &= sion_generic_register_gathervr_cb(aid, cb_gatherv) == SION_SUCCESS;
    ok &= sion_generic_register_scatterr_cb(aid, cb_scatter) == SION_SUCCESS;
    ok &= sion_generic_register_scattervr_cb(aid, cb_scatterv) == SION_SUCCESS;
    return ok ? 0 : -1;
}

double sim_sync(sim_task *t, int64_t key)
{
    double done = 0;
    coll(t->world, OP_SYNC, 0, 0, 0, NULL, NULL, NULL, key, &done);
    return done;
}

/* ---- running ---- */
int sim_trim_stacks;
static int64_t g_depth_max;
static double g_depth_sum;
static int64_t g_depth_n;

/* A task gave the CPU back (it waits in a collective): note how deep its
 * stack is, and with sim_trim_stacks give the pages below it back to the
 * system (a deep call made earlier, e.g. opening a file, left them resident;
 * they hold nothing the task needs). */
static void suspended(tctx *t, unsigned char *base, size_t size, size_t pg)
{
#if defined(__x86_64__)
    uintptr_t sp = (uintptr_t)t->uc.uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    uintptr_t sp = (uintptr_t)t->uc.uc_mcontext.sp;
#else
    uintptr_t sp = 0;
#endif
    if (!sp || sp < (uintptr_t)base || sp > (uintptr_t)base + size)
        return;
    int64_t depth = (int64_t)((uintptr_t)base + size - sp);
    if (depth > g_depth_max)
        g_depth_max = depth;
    g_depth_sum += (double)depth;
    g_depth_n++;
    if (sim_trim_stacks) {
        uintptr_t lo = (uintptr_t)base, hi = (sp - 512) & ~(uintptr_t)(pg - 1); /* 512: red zone and more */
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
}

int sim_copy_stacks;

static uintptr_t saved_sp(const tctx *t)
{
#if defined(__x86_64__)
    return (uintptr_t)t->uc.uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)t->uc.uc_mcontext.sp;
#else
    return 0;
#endif
}

/* sim_copy_stacks: every task runs on one run stack; a task that waits
 * keeps only the bytes in use (stack pointer - SAVE_BELOW .. top) in a heap
 * buffer of exactly that size, copied back before it runs again (to the same
 * addresses, so pointers into its stack stay valid). The layer's cost, not
 * the task's (charged to no account). */
enum { SAVE_BELOW = 256 }; /* the x86-64 red zone (128 B) and more */
static void save_stack(tctx *t, unsigned char *run, size_t run_bytes)
{
    uintptr_t sp = saved_sp(t), top = (uintptr_t)run + run_bytes;
    if (!sp || sp < (uintptr_t)run + SAVE_BELOW || sp > top)
        fatal("task %d: stack pointer %p outside the run stack", t->pub.rank, (void *)sp);
    size_t n = (size_t)(top - (sp - SAVE_BELOW));
    int64_t depth = (int64_t)(top - sp);
    if (depth > g_depth_max)
        g_depth_max = depth;
    g_depth_sum += (double)depth;
    g_depth_n++;
    if (n != t->save_n) {
        unsigned char *b = realloc(t->save, n);
        if (!b)
            fatal("out of memory saving the stack of task %d (%zu bytes)", t->pub.rank, n);
        t->save = b;
        t->save_n = n;
    }
    memcpy(t->save, (unsigned char *)top - n, n);
}

static void task_main(int i);
/* The context of task i's first run on its stack (sim_copy_stacks: on the
 * shared run stack, made just before it runs: no other task's frames are
 * there then). */
static __attribute__((noinline)) void first_context(tctx *t, int i, unsigned char *run, size_t run_bytes)
{
    getcontext(&t->uc);
    t->uc.uc_stack.ss_sp = run;
    t->uc.uc_stack.ss_size = run_bytes;
    t->uc.uc_link = &S.sched;
    makecontext(&t->uc, (void (*)(void))task_main, 1, i);
    t->started = 1;
}

int sim_run(int P, size_t stack_bytes, void (*fn)(sim_task *), void *arg, sim_run_info *info)
{
    long pg = sysconf(_SC_PAGESIZE);
    stack_bytes = (stack_bytes + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
    memset(&S, 0, sizeof S);
    S.P = P;
    S.cur = -1;
    S.t = calloc((size_t)P, sizeof *S.t);
    S.q = malloc((size_t)P * sizeof *S.q);
    sim_handle *wh = malloc((size_t)P * sizeof *wh);
    S.world = calloc(1, sizeof *S.world);
    size_t total = sim_copy_stacks ? stack_bytes : (size_t)P * stack_bytes;
    unsigned char *stacks =
        mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!S.t || !S.q || !wh || !S.world || stacks == MAP_FAILED) {
        free(S.t);
        free(S.q);
        free(wh);
        free(S.world);
        if (stacks != MAP_FAILED)
            munmap(stacks, total);
        return -1;
    }
    g_depth_max = 0;
    g_depth_sum = 0;
    g_depth_n = 0;
    S.world->kind = SIM_GLOBAL;
    S.world->size = P;
    S.world->filenumber = -1;
    g_fn = fn;
    g_arg = arg;
    for (int i = 0; i < P; i++) {
        tctx *t = &S.t[i];
        wh[i].g = S.world;
        wh[i].rank = i;
        t->pub.rank = i;
        t->pub.size = P;
        t->pub.world = &wh[i];
        if (!sim_copy_stacks) /* copying: made when it first runs (the run stack is shared) */
            first_context(t, i, stacks + (size_t)i * stack_bytes, stack_bytes);
        push(i);
    }
    while (S.qn) {
        int i = S.q[S.qh];
        S.qh = (S.qh + 1) % P;
        S.qn--;
        tctx *t = &S.t[i];
        S.cur = i;
        restore_err(t);
        sim_cur_acct = &t->pub.mem;
        int exact = t->pub.cpu_time;
        if (sim_copy_stacks && !t->started) {
            first_context(t, i, stacks, stack_bytes);
        } else if (sim_copy_stacks) {
            memcpy(stacks + stack_bytes - t->save_n, t->save, t->save_n);
        }
        int64_t t0 = cpu_ns(exact);
        swapcontext(&S.sched, &t->uc);
        t->pub.st.busy_ns += cpu_ns(exact) - t0;
        sim_cur_acct = NULL;
        if (t->state != T_DONE && sim_copy_stacks) {
            save_stack(t, stacks, stack_bytes);
        } else if (sim_copy_stacks) {
            free(t->save);
            t->save = NULL;
            t->save_n = 0;
        } else if (t->state != T_DONE) {
            suspended(t, stacks + (size_t)i * stack_bytes, stack_bytes, (size_t)pg);
        }
        S.cur = -1;
        save_err(t);
        S.switches++;
    }
    int blocked = 0;
    for (int i = 0; i < P; i++)
        blocked += S.t[i].state != T_DONE;
    if (blocked) {
        fprintf(stderr, "[simcomm] HANG: %d of %d tasks wait in a collective that cannot complete:\n", blocked, P);
        dump_group(S.world);
        for (int f = 0; f < S.nloc; f++)
            if (S.loc[f] && S.loc[f]->cur)
                dump_group(S.loc[f]);
        for (int i = 0, shown = 0; i < P && shown < 10; i++)
            if (S.t[i].state != T_DONE) {
                fprintf(stderr, "   task %d waits (last error: %s)\n", i, S.t[i].err_msg ? S.t[i].err_msg : "none");
                shown++;
            }
        fflush(stderr);
        _exit(3);
    }
    if (info) {
        memset(info, 0, sizeof *info);
        info->stack_bytes = stack_bytes;
        info->switches = S.switches;
        info->layer_mem = S.layer;
        info->depth_max = g_depth_max;
        info->depth_mean = g_depth_n ? g_depth_sum / (double)g_depth_n : 0;
        size_t np = stack_bytes / (size_t)pg;
        unsigned char *vec = malloc(np);
        double sum = 0;
        if (sim_copy_stacks) { /* a waiting task holds its saved bytes: the depth */
            free(vec);
            vec = NULL;
            info->stack_max_touched = g_depth_max + SAVE_BELOW;
            sum = g_depth_n ? (g_depth_sum / (double)g_depth_n + SAVE_BELOW) * P : 0;
        }
        for (int i = 0; i < P && vec; i++) {
            if (mincore(stacks + (size_t)i * stack_bytes, stack_bytes, vec))
                break;
            int64_t n = 0;
            for (size_t k = 0; k < np; k++)
                n += vec[k] & 1;
            n *= pg;
            sum += (double)n;
            if (n > info->stack_max_touched)
                info->stack_max_touched = n;
        }
        free(vec);
        info->stack_mean_touched = sum / P;
    }
    for (int i = 0; i < P; i++) {
        free(S.t[i].err_msg);
        free(S.t[i].save);
    }
    for (int f = 0; f < S.nloc; f++)
        if (S.loc[f] && S.loc[f]->refs == 0)
            lfree(S.loc[f]);
    free(S.loc);
    munmap(stacks, total);
    free(S.t);
    free(S.q);
    free(wh);
    free(S.world);
    return 0;
}
