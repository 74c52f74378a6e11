/* sim.c - the in-process collective layer (sheaf_comm_sim_run): P simulated processes run
 * as coroutines (ucontext) in the calling thread, so 10^5 of them fit in
 * one process. A collective completes when the last member enters it; it is
 * then executed as a binomial tree over the members' buffers, and counted
 * (rounds = ceil(log2 members), the largest message between two
 * processes). A process that enters a collective before the others is
 * suspended; when no process can run while some wait (a deadlock, e.g. a
 * member returned early), the waiting collectives fail with ECOMM. Members
 * entering different operations or roots fail the collective too. */
#define _GNU_SOURCE
#include "comm.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#ifdef SIM_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
#endif

enum { OP_NONE, OP_BARRIER, OP_BCAST, OP_REDUCE, OP_SPLIT, OP_ALLMIN };

typedef struct sim_world sim_world;
typedef struct sim_group sim_group;

typedef struct sim_slot {
    const void *in;
    size_t len;
    void **out;
    size_t *outlen;
    int color, key, rc;
    sheaf_comm *split_out;
    int64_t *vals; /* allmin: len values, in and out */
} sim_slot;

struct sim_group {
    sim_world *w;
    int n, refs, arrived, kind, root, mismatch;
    size_t maxlen;
    const sheaf_comm_op *op;
    int *members; /* world index of each rank */
    sim_slot *slot;
    sim_group *next; /* all groups of the world */
};

typedef struct sim_handle {
    sim_group *g;
    int rank;
} sim_handle;

typedef struct sim_proc {
    ucontext_t uc;
    char *stack;
    int done, rc;
    void *fake; /* ASan fake stack while switched out */
} sim_proc;

struct sim_world {
    int P;
    size_t stack_sz;
    char *stacks;
    sim_proc *procs;
    ucontext_t sched;
    int *runq, nrun, current;
    sim_group *groups;
    sheaf_comm_sim_stats st;
    int (*fn)(sheaf_comm *, int, void *);
    void *arg;
    sheaf_comm *world_comms;
    const void *sched_bottom;
    size_t sched_size;
};

static _Thread_local sim_world *cur;

static int ceil_log2(int n)
{
    int r = 0;
    while ((1L << r) < n)
        r++;
    return r;
}

static const sheaf_comm_ops sim_ops;

static sim_group *group_new(sim_world *w, int n)
{
    sim_group *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->members = malloc((size_t)n * sizeof *g->members);
    g->slot = calloc((size_t)n, sizeof *g->slot);
    if (!g->members || !g->slot) {
        free(g->members), free(g->slot), free(g);
        return NULL;
    }
    g->w = w;
    g->n = n;
    g->next = w->groups;
    w->groups = g;
    return g;
}

/* ---- switching ---- */
static void to_sched(sim_world *w, sim_proc *p, int dying)
{
#ifdef SIM_ASAN
    __sanitizer_start_switch_fiber(dying ? NULL : &p->fake, w->sched_bottom, w->sched_size);
#endif
    swapcontext(&p->uc, &w->sched);
#ifdef SIM_ASAN
    __sanitizer_finish_switch_fiber(p->fake, NULL, NULL);
#endif
}

static void to_proc(sim_world *w, int i)
{
    sim_proc *p = &w->procs[i];
    w->current = i;
#ifdef SIM_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, p->stack, w->stack_sz);
#endif
    swapcontext(&w->sched, &p->uc);
#ifdef SIM_ASAN
    __sanitizer_finish_switch_fiber(fake, &w->sched_bottom, &w->sched_size);
#endif
}

static void trampoline(void)
{
    sim_world *w = cur;
    int i = w->current;
    sim_proc *p = &w->procs[i];
#ifdef SIM_ASAN
    __sanitizer_finish_switch_fiber(NULL, &w->sched_bottom, &w->sched_size);
#endif
    p->rc = w->fn(&w->world_comms[i], i, w->arg);
    p->done = 1;
    to_sched(w, p, 1);
}

/* ---- executing a collective once everyone is in ---- */
static void wake_all(sim_group *g, int except)
{
    for (int r = 0; r < g->n; r++)
        if (g->members[r] != except)
            g->w->runq[g->w->nrun++] = g->members[r];
}

static void fail_all(sim_group *g, int rc)
{
    for (int r = 0; r < g->n; r++)
        g->slot[r].rc = rc;
}

static void exec_bcast(sim_group *g)
{
    sim_slot *rs = &g->slot[g->root];
    size_t len = rs->len;
    if (len > g->maxlen)
        return fail_all(g, SHEAF_COMM_ELIMIT);
    g->w->st.bcasts++;
    g->w->st.rounds += ceil_log2(g->n);
    if (g->n > 1 && len > g->w->st.max_msg)
        g->w->st.max_msg = len;
    for (int r = 0; r < g->n; r++) {
        if (r == g->root)
            continue;
        void *c = malloc(len ? len : 1);
        if (!c) {
            g->slot[r].rc = SHEAF_COMM_ENOMEM;
            continue;
        }
        memcpy(c, rs->in, len);
        *g->slot[r].out = c;
        *g->slot[r].outlen = len;
    }
}

static void exec_reduce(sim_group *g)
{
    int n = g->n;
    const sheaf_comm_op *op = g->op;
    const void **part = malloc((size_t)n * sizeof *part);
    size_t *plen = malloc((size_t)n * sizeof *plen);
    void **own = calloc((size_t)n, sizeof *own);
    void *scratch = malloc(op->max_len ? op->max_len : 1);
    int rc = part && plen && own && scratch ? 0 : SHEAF_COMM_ENOMEM;
    for (int r = 0; !rc && r < n; r++) {
        part[r] = g->slot[r].in, plen[r] = g->slot[r].len;
        if (plen[r] > op->max_len)
            rc = SHEAF_COMM_ELIMIT;
    }
    g->w->st.reduces++;
    g->w->st.rounds += ceil_log2(n);
    for (int step = 1; !rc && step < n; step <<= 1)
        for (int i = 0; !rc && i + step < n; i += 2 * step) {
            size_t ol = 0;
            if (plen[i + step] > g->w->st.max_msg)
                g->w->st.max_msg = plen[i + step];
            if (op->combine(part[i], plen[i], part[i + step], plen[i + step], scratch, &ol, op->arg) ||
                ol > op->max_len) {
                rc = SHEAF_COMM_ECOMM;
                break;
            }
            void *o = realloc(own[i], ol ? ol : 1);
            if (!o) {
                rc = SHEAF_COMM_ENOMEM;
                break;
            }
            memcpy(o, scratch, ol);
            own[i] = o, part[i] = o, plen[i] = ol;
            free(own[i + step]);
            own[i + step] = NULL;
        }
    if (!rc) {
        if (g->root != 0 && plen[0] > g->w->st.max_msg)
            g->w->st.max_msg = plen[0];
        void *res = malloc(plen[0] ? plen[0] : 1);
        if (res) {
            memcpy(res, part[0], plen[0]);
            *g->slot[g->root].out = res;
            *g->slot[g->root].outlen = plen[0];
        } else
            rc = SHEAF_COMM_ENOMEM;
    }
    if (rc)
        fail_all(g, rc);
    for (int r = 0; own && r < n; r++)
        free(own[r]);
    free(part), free(plen), free(own), free(scratch);
}

static int key_cmp(const void *a, const void *b)
{
    const long *x = a, *y = b; /* {color, key, rank} */
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static void exec_split(sim_group *g)
{
    int n = g->n;
    long *k = malloc((size_t)n * 3 * sizeof *k);
    if (!k)
        return fail_all(g, SHEAF_COMM_ENOMEM);
    g->w->st.splits++;
    g->w->st.rounds += ceil_log2(n);
    for (int r = 0; r < n; r++)
        k[3 * r] = g->slot[r].color, k[3 * r + 1] = g->slot[r].key, k[3 * r + 2] = r;
    qsort(k, (size_t)n, 3 * sizeof *k, key_cmp);
    for (int a = 0, b; a < n; a = b) {
        for (b = a; b < n && k[3 * b] == k[3 * a]; b++)
            ;
        if (k[3 * a] < 0) { /* undefined color: no communicator */
            for (int j = a; j < b; j++)
                g->slot[k[3 * j + 2]].split_out->impl = NULL;
            continue;
        }
        sim_group *ng = group_new(g->w, b - a);
        for (int j = a; j < b; j++) {
            int r = (int)k[3 * j + 2];
            sim_handle *h = ng ? malloc(sizeof *h) : NULL;
            if (!h) {
                g->slot[r].rc = SHEAF_COMM_ENOMEM;
                continue;
            }
            ng->members[j - a] = g->members[r];
            h->g = ng, h->rank = j - a;
            ng->refs++;
            g->slot[r].split_out->ops = &sim_ops;
            g->slot[r].split_out->impl = h;
        }
    }
    free(k);
}

/* element-wise minimum over every member's values, written back to each */
static void exec_allmin(sim_group *g)
{
    size_t n = g->slot[0].len;
    int64_t m[64];
    for (int r = 0; r < g->n; r++)
        if (g->slot[r].len != n || n > 64)
            return fail_all(g, SHEAF_COMM_ECOMM); /* members disagree on the count */
    g->w->st.allmins++;
    g->w->st.rounds += 2 * ceil_log2(g->n);
    if (g->n > 1 && n * sizeof(int64_t) > g->w->st.max_msg)
        g->w->st.max_msg = n * sizeof(int64_t);
    memcpy(m, g->slot[0].vals, n * sizeof *m);
    for (int r = 1; r < g->n; r++)
        for (size_t i = 0; i < n; i++)
            if (g->slot[r].vals[i] < m[i])
                m[i] = g->slot[r].vals[i];
    for (int r = 0; r < g->n; r++)
        memcpy(g->slot[r].vals, m, n * sizeof *m);
}

static void execute(sim_group *g)
{
    g->w->st.collectives++;
    if (g->mismatch)
        fail_all(g, SHEAF_COMM_ECOMM);
    else if (g->kind == OP_BCAST)
        exec_bcast(g);
    else if (g->kind == OP_REDUCE)
        exec_reduce(g);
    else if (g->kind == OP_SPLIT)
        exec_split(g);
    else if (g->kind == OP_ALLMIN)
        exec_allmin(g);
    else {
        g->w->st.barriers++;
        g->w->st.rounds += ceil_log2(g->n);
    }
}

/* enter a collective; returns this member's result */
static int enter(const sheaf_comm *c, int kind, int root, sim_slot s, size_t maxlen, const sheaf_comm_op *op)
{
    sim_handle *h = c->impl;
    sim_group *g = h->g;
    sim_world *w = g->w;
    if (root < 0 || root >= g->n)
        g->mismatch = 1;
    if (g->arrived == 0) {
        g->kind = kind, g->root = root, g->maxlen = maxlen, g->op = op, g->mismatch = root < 0 || root >= g->n;
    } else if (g->kind != kind || g->root != root || !g->op != !op ||
               (op && (g->op->combine != op->combine || g->op->max_len != op->max_len)))
        g->mismatch = 1; /* operators are per-process structs: same function and bound */
    s.rc = 0;
    g->slot[h->rank] = s;
    if (++g->arrived == g->n) {
        execute(g);
        g->arrived = 0;
        wake_all(g, w->current);
        return g->slot[h->rank].rc;
    }
    to_sched(w, &w->procs[w->current], 0);
    return g->slot[h->rank].rc;
}

static int sim_rank(const sheaf_comm *c) { return ((sim_handle *)c->impl)->rank; }
static int sim_size(const sheaf_comm *c) { return ((sim_handle *)c->impl)->g->n; }
static int sim_barrier(sheaf_comm *c) { return enter(c, OP_BARRIER, 0, (sim_slot){0}, 0, NULL); }
static int sim_bcast(sheaf_comm *c, void **buf, size_t *len, size_t maxlen, int root)
{
    int me = sim_rank(c);
    sim_slot s = {me == root ? *buf : NULL, me == root ? *len : 0, buf, len, 0, 0, 0, NULL, NULL};
    return enter(c, OP_BCAST, root, s, maxlen, NULL);
}
static int sim_reduce(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out, size_t *outlen,
                      int root)
{
    *out = NULL;
    sim_slot s = {in, len, out, outlen, 0, 0, 0, NULL, NULL};
    return enter(c, OP_REDUCE, root, s, op->max_len, op);
}
static int sim_split(sheaf_comm *c, int color, int key, sheaf_comm *out)
{
    out->ops = &sim_ops, out->impl = NULL;
    sim_slot s = {NULL, 0, NULL, NULL, color, key, 0, out, NULL};
    return enter(c, OP_SPLIT, 0, s, 0, NULL);
}
static int sim_allmin(sheaf_comm *c, int64_t *v, int n)
{
    sim_slot s = {NULL, n > 0 ? (size_t)n : 0, NULL, NULL, 0, 0, 0, NULL, v};
    return enter(c, OP_ALLMIN, 0, s, 0, NULL);
}
static void sim_free(sheaf_comm *c)
{
    sim_handle *h = c ? c->impl : NULL;
    if (!h)
        return;
    h->g->refs--; /* groups themselves are freed with the world */
    free(h);
    c->impl = NULL;
}
static const sheaf_comm_ops sim_ops = {sim_rank,   sim_size,  sim_barrier, sim_bcast,
                                       sim_reduce, sim_split, sim_free,    sim_allmin};

/* ---- the world ---- */
static void world_free(sim_world *w)
{
    for (sim_group *g = w->groups, *nx; g; g = nx) {
        nx = g->next;
        free(g->members), free(g->slot), free(g);
    }
    if (w->stacks)
        munmap(w->stacks, (size_t)w->P * w->stack_sz);
    free(w->procs), free(w->runq), free(w->world_comms);
}

int sheaf_comm_sim_run(int nprocs, size_t stack_kib, int (*fn)(sheaf_comm *, int, void *), void *arg,
                       sheaf_comm_sim_stats *stats)
{
    if (nprocs <= 0 || !fn || nprocs > (1 << 24))
        return comm_err(SHEAF_COMM_EINVAL, "sim_run: need 1..2^24 processes and a function");
    if (cur)
        return comm_err(SHEAF_COMM_EINVAL, "sim_run: not reentrant");
    sim_world w = {0};
    w.P = nprocs;
    w.stack_sz = (stack_kib ? stack_kib : 64) * 1024;
    w.stacks = mmap(NULL, (size_t)nprocs * w.stack_sz, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (w.stacks == MAP_FAILED)
        w.stacks = NULL;
    w.procs = calloc((size_t)nprocs, sizeof *w.procs);
    w.runq = malloc((size_t)nprocs * sizeof *w.runq);
    w.world_comms = calloc((size_t)nprocs, sizeof *w.world_comms);
    sim_group *g = w.procs && w.runq && w.world_comms && w.stacks ? group_new(&w, nprocs) : NULL;
    sim_handle *hs = g ? malloc((size_t)nprocs * sizeof *hs) : NULL;
    if (!hs) {
        world_free(&w);
        return comm_err(SHEAF_COMM_ENOMEM, "sim_run: cannot create %d processes", nprocs);
    }
    w.fn = fn, w.arg = arg;
    for (int i = 0; i < nprocs; i++) {
        g->members[i] = i;
        hs[i].g = g, hs[i].rank = i;
        w.world_comms[i].ops = &sim_ops, w.world_comms[i].impl = &hs[i];
        sim_proc *p = &w.procs[i];
        p->stack = w.stacks + (size_t)i * w.stack_sz;
        getcontext(&p->uc);
        p->uc.uc_stack.ss_sp = p->stack;
        p->uc.uc_stack.ss_size = w.stack_sz;
        p->uc.uc_link = NULL;
        makecontext(&p->uc, trampoline, 0);
        w.runq[w.nrun++] = nprocs - 1 - i; /* popped from the end: rank 0 first */
    }
    cur = &w;
    int done = 0;
    while (done < nprocs) {
        if (w.nrun == 0) { /* deadlock: fail what waits, wake the waiters */
            for (sim_group *q = w.groups; q; q = q->next)
                if (q->arrived) {
                    for (int r = 0; r < q->n; r++)
                        q->slot[r].rc = SHEAF_COMM_ECOMM;
                    q->arrived = 0;
                }
            for (int i = 0; i < nprocs; i++)
                if (!w.procs[i].done)
                    w.runq[w.nrun++] = i;
            if (w.nrun == 0)
                break;
        }
        int i = w.runq[--w.nrun];
        if (w.procs[i].done)
            continue;
        to_proc(&w, i);
        if (w.procs[i].done)
            done++;
    }
    cur = NULL;
    int rc = 0;
    for (int i = 0; i < nprocs && !rc; i++)
        rc = w.procs[i].rc;
    if (stats)
        *stats = w.st;
    free(hs);
    world_free(&w);
    return rc;
}
