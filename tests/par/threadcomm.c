/* threadcomm.c - pthread-based communication layer for sion_generic.h tests.
 * See threadcomm.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "threadcomm.h"
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sion.h"

const char *const tc_op_names[TC_NOP] = {"create_lcg", "free_lcg", "barrier", "bcast",
                                         "gather",     "gatherv",  "scatter", "scatterv"};

/* internal operation codes (not counted) */
enum { OP_SYNC = 100 };

typedef struct {
    int op, root, datatype, nelem;
    const void *src; /* bytes this rank deposits (gather: in; bcast root: data; scatter root: in; scatterv root: out) */
    void *dst;       /* where this rank withdraws to */
    const int *counts; /* v-ops: counts (used on root only) */
} tc_args;

typedef struct reg_entry {
    int gen, filenumber, lsize, numfiles, joined;
    tc_shared *sh;
    unsigned char *seen; /* lranks that joined */
    struct reg_entry *next;
} reg_entry;

struct tc_shared {
    int kind, size, filenumber;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived;
    unsigned long gen;
    const char *waiting_in; /* phase of the current collective (diagnostics) */
    tc_args *args;
    size_t *off; /* [size+1] byte offsets in buf */
    unsigned char *buf;
    size_t bufcap;
    int bad;
    long seq;
    /* local groups */
    tc_shared *world;
    int refs, complete;
    /* world only */
    pthread_mutex_t reg_mu;
    reg_entry *reg;
    int *opens;
    int live_locals;
};

static _Thread_local tc_counts tc_my;
static _Thread_local size_t tc_maxbytes;
size_t tc_maxbytes_get(void) { return tc_maxbytes; }
void tc_maxbytes_reset(void) { tc_maxbytes = 0; }
static _Thread_local int tc_my_grank = -1;
static _Thread_local long tc_inj_seen;
static struct {
    atomic_int active;
    int kind, op, rank;
    long nth;
    atomic_int fired;
} inj;

void tc_inject_failure(int kind, int op, long nth, int world_rank)
{
    inj.kind = kind;
    inj.op = op;
    inj.nth = nth;
    inj.rank = world_rank;
    atomic_store(&inj.fired, 0);
    atomic_store(&inj.active, 1);
}
void tc_inject_clear(void) { atomic_store(&inj.active, 0); }

/* create_local_commgroup failures on several tasks at once (tc_inject_create) */
static atomic_uint cr_mask;
static atomic_long cr_nth;
static _Thread_local long tc_cr_seen;
void tc_inject_create(unsigned mask, long nth)
{
    atomic_store(&cr_nth, nth);
    atomic_store(&cr_mask, mask);
}
static int create_injected(void)
{
    ++tc_cr_seen;
    return tc_my_grank >= 0 && tc_my_grank < 32 && (atomic_load(&cr_mask) >> tc_my_grank & 1u) &&
           tc_cr_seen == atomic_load(&cr_nth);
}
int tc_inject_fired(void) { return atomic_load(&inj.fired); }

/* after the exchange: turn this call into a failure if it is the chosen one */
static int injected(int kind, int op)
{
    if (!atomic_load(&inj.active) || tc_my_grank != inj.rank || kind != inj.kind || op != inj.op)
        return 0;
    if (++tc_inj_seen != inj.nth)
        return 0;
    atomic_store(&inj.fired, 1);
    return 1;
}

tc_counts tc_counts_get(void) { return tc_my; }
void tc_counts_reset(void) { memset(&tc_my, 0, sizeof tc_my); }
tc_counts tc_counts_diff(tc_counts a, tc_counts b)
{
    tc_counts d;
    for (int k = 0; k < TC_NKIND; k++)
        for (int o = 0; o < TC_NOP; o++)
            d.n[k][o] = a.n[k][o] - b.n[k][o];
    return d;
}
void tc_counts_str(const tc_counts *c, char *buf, size_t len)
{
    static const char *const kn[TC_NKIND] = {"global", "local"};
    size_t u = 0;
    buf[0] = 0;
    for (int k = 0; k < TC_NKIND; k++) {
        int any = 0;
        for (int o = 0; o < TC_NOP && u < len; o++) {
            if (!c->n[k][o])
                continue;
            int w;
            if (!any)
                w = snprintf(buf + u, len - u, "%s%s: %ld %s", u ? "; " : "", kn[k], c->n[k][o], tc_op_names[o]);
            else
                w = snprintf(buf + u, len - u, " %ld %s", c->n[k][o], tc_op_names[o]);
            any = 1;
            if (w > 0)
                u += (size_t)w;
        }
    }
    if (!u)
        snprintf(buf, len, "(none)");
}

/* ---- violations ---- */
static pthread_mutex_t viol_mu = PTHREAD_MUTEX_INITIALIZER;
static int viol_n;
static char viol_first[1024];

static void violation(const char *fmt, ...)
{
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&viol_mu);
    if (!viol_n++)
        snprintf(viol_first, sizeof viol_first, "%s", m);
    pthread_mutex_unlock(&viol_mu);
    fprintf(stderr, "[threadcomm] PROTOCOL VIOLATION: %s\n", m);
}
int tc_violations(void)
{
    pthread_mutex_lock(&viol_mu);
    int n = viol_n;
    pthread_mutex_unlock(&viol_mu);
    return n;
}
const char *tc_first_violation(void) { return viol_first; }

/* ---- shared groups ---- */
static tc_shared *sh_new(int kind, int size)
{
    tc_shared *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->kind = kind;
    s->size = size;
    s->filenumber = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->args = calloc((size_t)size, sizeof *s->args);
    s->off = calloc((size_t)size + 1, sizeof *s->off);
    if (kind == TC_GLOBAL) {
        pthread_mutex_init(&s->reg_mu, NULL);
        s->opens = calloc((size_t)size, sizeof *s->opens);
    }
    if (!s->args || !s->off || (kind == TC_GLOBAL && !s->opens)) {
        free(s->args);
        free(s->off);
        free(s->opens);
        free(s);
        return NULL;
    }
    return s;
}
static void sh_free(tc_shared *s)
{
    if (!s)
        return;
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    if (s->kind == TC_GLOBAL)
        pthread_mutex_destroy(&s->reg_mu);
    free(s->args);
    free(s->off);
    free(s->buf);
    free(s->opens);
    free(s);
}

static const char *kind_name(const tc_shared *s) { return s->kind == TC_GLOBAL ? "global" : "local"; }
static const char *op_name(int op)
{
    if (op >= 0 && op < TC_NOP)
        return tc_op_names[op];
    return op == OP_SYNC ? "(test sync)" : "?";
}

static double timeout_s(void)
{
    const char *e = getenv("TC_TIMEOUT");
    double t = e ? atof(e) : 20.0;
    return t > 0 ? t : 20.0;
}

/* Barrier over s; the last arriving thread runs hook(s) under the lock. */
static void sh_barrier(tc_shared *s, int rank, const char *phase, void (*hook)(tc_shared *))
{
    pthread_mutex_lock(&s->mu);
    unsigned long g = s->gen;
    s->waiting_in = phase;
    if (++s->arrived == s->size) {
        if (hook)
            hook(s);
        s->arrived = 0;
        s->gen++;
        pthread_cond_broadcast(&s->cv);
    } else {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        double t = timeout_s();
        dl.tv_sec += (time_t)t;
        dl.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        while (s->gen == g) {
            int rc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
            if (rc == ETIMEDOUT && s->gen == g) {
                fprintf(stderr,
                        "[threadcomm] HANG: %s group (size %d, file %d) rank %d waited %.0f s in %s "
                        "(collective #%ld): only %d of %d members arrived. Published calls:\n",
                        kind_name(s), s->size, s->filenumber, rank, t, phase, s->seq, s->arrived, s->size);
                for (int r = 0; r < s->size; r++)
                    fprintf(stderr, "   rank %d: %s root %d datatype %d nelem %d\n", r, op_name(s->args[r].op),
                            s->args[r].root, s->args[r].datatype, s->args[r].nelem);
                fflush(stderr);
                _exit(3);
            }
        }
    }
    pthread_mutex_unlock(&s->mu);
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

/* Hook of the first barrier: check the published calls agree, lay out buf. */
static void hook_check(tc_shared *s)
{
    s->seq++;
    s->bad = 0;
    tc_args *a0 = &s->args[0];
    char why[512] = "";
    for (int r = 0; r < s->size && !why[0]; r++) {
        tc_args *a = &s->args[r];
        if (a->op != a0->op)
            snprintf(why, sizeof why, "rank 0 called %s but rank %d called %s", op_name(a0->op), r, op_name(a->op));
        else if (a->op == OP_SYNC || a->op == TC_BARRIER)
            continue;
        else if (a->root != a0->root)
            snprintf(why, sizeof why, "%s: rank 0 gave root %d, rank %d root %d", op_name(a->op), a0->root, r, a->root);
        else if (a->root < 0 || a->root >= s->size)
            snprintf(why, sizeof why, "%s: root %d out of range (size %d)", op_name(a->op), a->root, s->size);
        else if (a->datatype != a0->datatype || !elsize(a->datatype))
            snprintf(why, sizeof why, "%s: datatype %d on rank 0, %d on rank %d", op_name(a->op), a0->datatype,
                     a->datatype, r);
        else if (a->nelem < 0)
            snprintf(why, sizeof why, "%s: rank %d: negative nelem %d", op_name(a->op), r, a->nelem);
        else if ((a->op == TC_BCAST || a->op == TC_GATHER || a->op == TC_SCATTER) && a->nelem != a0->nelem)
            snprintf(why, sizeof why, "%s: nelem %d on rank 0 but %d on rank %d", op_name(a->op), a0->nelem, a->nelem,
                     r);
    }
    size_t es = elsize(a0->datatype);
    if (!why[0] && (a0->op == TC_GATHERV || a0->op == TC_SCATTERV)) {
        const int *cnt = s->args[a0->root].counts;
        if (!cnt)
            snprintf(why, sizeof why, "%s: NULL counts on root %d", op_name(a0->op), a0->root);
        for (int r = 0; r < s->size && !why[0]; r++)
            if (cnt[r] != s->args[r].nelem)
                snprintf(why, sizeof why, "%s: root's counts[%d] = %d but rank %d passed nelem %d", op_name(a0->op), r,
                         cnt[r], r, s->args[r].nelem);
    }
    if (why[0]) {
        s->bad = 1;
        violation("%s group (size %d, file %d), collective #%ld: %s", kind_name(s), s->size, s->filenumber, s->seq,
                  why);
        return;
    }
    /* layout */
    s->off[0] = 0;
    for (int r = 0; r < s->size; r++) {
        size_t n = 0;
        switch (a0->op) {
        case TC_BCAST:
            n = r == 0 ? (size_t)a0->nelem * es : 0;
            break;
        case TC_GATHER:
        case TC_SCATTER:
        case TC_GATHERV:
        case TC_SCATTERV:
            n = (size_t)s->args[r].nelem * es;
            break;
        default:
            break;
        }
        s->off[r + 1] = s->off[r] + n;
    }
    size_t need = s->off[s->size] ? s->off[s->size] : 1;
    if (need > s->bufcap) {
        unsigned char *nb = realloc(s->buf, need);
        if (!nb) {
            s->bad = 1;
            violation("threadcomm: out of memory (%zu bytes)", need);
            return;
        }
        s->buf = nb;
        s->bufcap = need;
    }
}

/* One collective over the group of handle h with this rank's arguments. */
static int collective(tc_handle *h, tc_args a)
{
    tc_shared *s = h->sh;
    int me = h->rank;
    s->args[me] = a;
    sh_barrier(s, me, op_name(a.op), hook_check);
    int bad = s->bad;
    if (a.op == OP_SYNC || a.op == TC_BARRIER)
        return bad;
    size_t es = elsize(a.datatype);
    if (!bad) { /* bytes this task sends or receives in this call (the root: all of them) */
        size_t mine = a.op == TC_BCAST ? (size_t)a.nelem * es
                      : me == a.root   ? s->off[s->size]
                                       : s->off[me + 1] - s->off[me];
        if (mine > tc_maxbytes)
            tc_maxbytes = mine;
    }
    /* deposit */
    if (!bad) {
        switch (a.op) {
        case TC_GATHER:
        case TC_GATHERV:
            if (s->off[me + 1] > s->off[me])
                memcpy(s->buf + s->off[me], a.src, s->off[me + 1] - s->off[me]);
            break;
        case TC_BCAST:
            if (me == a.root && a.nelem)
                memcpy(s->buf, a.src, (size_t)a.nelem * es);
            break;
        case TC_SCATTER:
        case TC_SCATTERV:
            if (me == a.root && s->off[s->size])
                memcpy(s->buf, a.src, s->off[s->size]);
            break;
        }
    }
    sh_barrier(s, me, "(deposit)", NULL);
    if (!bad) {
        switch (a.op) {
        case TC_GATHER:
        case TC_GATHERV:
            if (me == a.root && s->off[s->size])
                memcpy(a.dst, s->buf, s->off[s->size]);
            break;
        case TC_BCAST:
            if (me != a.root && a.nelem)
                memcpy(a.dst, s->buf, (size_t)a.nelem * es);
            break;
        case TC_SCATTER:
        case TC_SCATTERV:
            if (s->off[me + 1] > s->off[me])
                memcpy(a.dst, s->buf + s->off[me], s->off[me + 1] - s->off[me]);
            break;
        }
    }
    sh_barrier(s, me, "(withdraw)", NULL);
    return bad;
}

static tc_handle *handle_of(void *group, const char *what)
{
    tc_handle *h = group;
    if (!h || !h->sh) {
        violation("%s called with a NULL group", what);
        return NULL;
    }
    return h;
}
#define COUNT(h, op) (tc_my.n[(h)->sh->kind][(op)]++)

int tc_barrier(void *group)
{
    tc_handle *h = handle_of(group, "barrier");
    if (!h)
        return 1;
    COUNT(h, TC_BARRIER);
    tc_args a = {.op = TC_BARRIER};
    return collective(h, a) | injected(h->sh->kind, TC_BARRIER);
}
int tc_bcast(void *data, void *group, int datatype, int nelem, int root)
{
    tc_handle *h = handle_of(group, "bcast");
    if (!h)
        return 1;
    COUNT(h, TC_BCAST);
    tc_args a = {.op = TC_BCAST, .root = root, .datatype = datatype, .nelem = nelem, .src = data, .dst = data};
    return collective(h, a) | injected(h->sh->kind, TC_BCAST);
}
int tc_gather(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    tc_handle *h = handle_of(group, "gather");
    if (!h)
        return 1;
    COUNT(h, TC_GATHER);
    tc_args a = {.op = TC_GATHER, .root = root, .datatype = datatype, .nelem = nelem, .src = in, .dst = out};
    return collective(h, a) | injected(h->sh->kind, TC_GATHER);
}
int tc_gatherv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    tc_handle *h = handle_of(group, "gatherv");
    if (!h)
        return 1;
    COUNT(h, TC_GATHERV);
    tc_args a = {
        .op = TC_GATHERV, .root = root, .datatype = datatype, .nelem = nelem, .src = in, .dst = out, .counts = counts};
    return collective(h, a) | injected(h->sh->kind, TC_GATHERV);
}
int tc_scatter(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    tc_handle *h = handle_of(group, "scatter");
    if (!h)
        return 1;
    COUNT(h, TC_SCATTER);
    /* SIONlib's order: the root's array is `in`, each task's destination `out` */
    tc_args a = {.op = TC_SCATTER, .root = root, .datatype = datatype, .nelem = nelem, .src = in, .dst = out};
    return collective(h, a) | injected(h->sh->kind, TC_SCATTER);
}
int tc_scatterv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    tc_handle *h = handle_of(group, "scatterv");
    if (!h)
        return 1;
    COUNT(h, TC_SCATTERV);
    tc_args a = {
        .op = TC_SCATTERV, .root = root, .datatype = datatype, .nelem = nelem, .src = out, .dst = in, .counts = counts};
    return collective(h, a) | injected(h->sh->kind, TC_SCATTERV);
}

/* ---- local groups: registry in the world keyed by (open number, filenumber) ---- */
int tc_create_lcg(void **local_group, void *global_group, int grank, int gsize, int lrank, int lsize, int filenumber,
                  int numfiles)
{
    tc_handle *g = handle_of(global_group, "create_local_commgroup");
    if (!local_group || !g)
        return 1;
    COUNT(g, TC_CREATE);
    *local_group = NULL;
    tc_shared *w = g->sh;
    if (w->kind != TC_GLOBAL || grank != g->rank || gsize != w->size || lsize < 1 || lsize > gsize || lrank < 0 ||
        lrank >= lsize || numfiles < 1 || filenumber < 0 || filenumber >= numfiles) {
        violation("create_local_commgroup(grank %d, gsize %d, lrank %d, lsize %d, filenumber %d, numfiles %d) "
                  "on global rank %d of %d: inconsistent arguments",
                  grank, gsize, lrank, lsize, filenumber, numfiles, g->rank, w->size);
        return 1;
    }
    tc_handle *h = malloc(sizeof *h);
    if (!h)
        return 1;
    pthread_mutex_lock(&w->reg_mu);
    int gen = ++w->opens[grank];
    reg_entry *e = w->reg, **pp = &w->reg;
    while (e && !(e->gen == gen && e->filenumber == filenumber)) {
        pp = &e->next;
        e = e->next;
    }
    if (!e) {
        e = calloc(1, sizeof *e);
        tc_shared *s = e ? sh_new(TC_LOCAL, lsize) : NULL;
        unsigned char *seen = calloc((size_t)lsize, 1);
        if (!e || !s || !seen) {
            free(e);
            sh_free(s);
            free(seen);
            free(h);
            pthread_mutex_unlock(&w->reg_mu);
            return 1;
        }
        s->filenumber = filenumber;
        s->world = w;
        w->live_locals++;
        e->gen = gen;
        e->filenumber = filenumber;
        e->lsize = lsize;
        e->numfiles = numfiles;
        e->sh = s;
        e->seen = seen;
        e->next = w->reg;
        w->reg = e;
        pp = &w->reg;
    }
    int bad = 0;
    if (e->lsize != lsize || e->numfiles != numfiles) {
        violation("create_local_commgroup: file %d (open #%d): global rank %d says lsize %d numfiles %d, an earlier "
                  "member said lsize %d numfiles %d",
                  filenumber, gen, grank, lsize, numfiles, e->lsize, e->numfiles);
        bad = 1;
    } else if (e->seen[lrank]) {
        violation("create_local_commgroup: file %d (open #%d): lrank %d given twice (second time by global rank %d)",
                  filenumber, gen, lrank, grank);
        bad = 1;
    }
    if (bad) {
        pthread_mutex_unlock(&w->reg_mu);
        free(h);
        return 1;
    }
    e->seen[lrank] = 1;
    e->joined++;
    e->sh->refs++;
    h->sh = e->sh;
    h->rank = lrank;
    if (e->joined == e->lsize) { /* complete: the group now belongs to its members */
        e->sh->complete = 1;
        *pp = e->next;
        free(e->seen);
        free(e);
    }
    pthread_mutex_unlock(&w->reg_mu);
    if (injected(TC_GLOBAL, TC_CREATE) | create_injected()) { /* joined, but reports failure: the handle is dropped */
        pthread_mutex_lock(&w->reg_mu);
        h->sh->refs--;
        pthread_mutex_unlock(&w->reg_mu);
        free(h);
        return 1;
    }
    *local_group = h;
    return 0;
}

int tc_free_lcg(void *local_group)
{
    tc_handle *h = handle_of(local_group, "free_local_commgroup");
    if (!h)
        return 1;
    COUNT(h, TC_FREE);
    tc_shared *s = h->sh;
    if (s->kind != TC_LOCAL) {
        violation("free_local_commgroup called with the global group");
        return 1;
    }
    tc_shared *w = s->world;
    pthread_mutex_lock(&w->reg_mu);
    int last = --s->refs == 0 && s->complete;
    if (last)
        w->live_locals--;
    pthread_mutex_unlock(&w->reg_mu);
    if (last)
        sh_free(s);
    free(h);
    return 0;
}

/* ---- running tasks ---- */
static atomic_int leak_check = 1, last_leaked;
void tc_set_leak_check(int on) { atomic_store(&leak_check, on); }
int tc_last_leaked(void) { return atomic_load(&last_leaked); }

typedef struct {
    tc_task t;
    void (*fn)(tc_task *);
} tc_start;

static void *thread_main(void *p)
{
    tc_start *st = p;
    tc_counts_reset();
    tc_my_grank = st->t.grank;
    tc_inj_seen = 0;
    tc_cr_seen = 0;
    st->fn(&st->t);
    return NULL;
}

int tc_run(int P, void (*fn)(tc_task *), void *arg)
{
    tc_shared *w = sh_new(TC_GLOBAL, P);
    tc_handle *hs = calloc((size_t)P, sizeof *hs);
    tc_start *st = calloc((size_t)P, sizeof *st);
    pthread_t *th = calloc((size_t)P, sizeof *th);
    if (!w || !hs || !st || !th) {
        sh_free(w);
        free(hs);
        free(st);
        free(th);
        return -1;
    }
    int started = 0, rc = 0;
    for (int i = 0; i < P; i++) {
        hs[i].sh = w;
        hs[i].rank = i;
        st[i].t.world = &hs[i];
        st[i].t.grank = i;
        st[i].t.gsize = P;
        st[i].t.arg = arg;
        st[i].fn = fn;
        if (pthread_create(&th[i], NULL, thread_main, &st[i])) {
            fprintf(stderr, "[threadcomm] pthread_create failed for task %d\n", i);
            rc = -1;
            break;
        }
        started++;
    }
    if (rc) { /* the started threads would wait forever for the missing ones */
        fflush(stderr);
        _exit(3);
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    /* leftovers: incomplete registry entries (some member never created its group) */
    while (w->reg) {
        reg_entry *e = w->reg;
        w->reg = e->next;
        if (e->sh->refs == 0) {
            w->live_locals--;
            sh_free(e->sh);
        } else {
            e->sh->complete = 1; /* freed by nobody: counted below */
        }
        free(e->seen);
        free(e);
    }
    atomic_store(&last_leaked, w->live_locals);
    if (w->live_locals && atomic_load(&leak_check))
        violation("%d local group(s) created but never freed (free_local_commgroup missing)", w->live_locals);
    sh_free(w);
    free(hs);
    free(st);
    free(th);
    return 0;
}

void tc_sync(tc_task *t)
{
    tc_args a = {.op = OP_SYNC};
    collective(t->world, a);
}

void tc_allgather(tc_task *t, const void *mine, void *all, size_t len)
{
    tc_args a = {.op = TC_GATHER, .root = 0, .datatype = _SION_CHAR, .nelem = (int)len, .src = mine, .dst = all};
    collective(t->world, a);
    tc_args b = {
        .op = TC_BCAST, .root = 0, .datatype = _SION_CHAR, .nelem = (int)len * t->gsize, .src = all, .dst = all};
    collective(t->world, b);
}

int tc_group_size(void *group) { return group ? ((tc_handle *)group)->sh->size : -1; }
int tc_group_rank(void *group) { return group ? ((tc_handle *)group)->rank : -1; }

int tc_register(int aid)
{
    int ok = 1;
    ok &= sion_generic_register_create_local_commgroup_cb(aid, tc_create_lcg) == SION_SUCCESS;
    ok &= sion_generic_register_free_local_commgroup_cb(aid, tc_free_lcg) == SION_SUCCESS;
    ok &= sion_generic_register_barrier_cb(aid, tc_barrier) == SION_SUCCESS;
    ok &= sion_generic_register_bcastr_cb(aid, tc_bcast) == SION_SUCCESS;
    ok &= sion_generic_register_gatherr_cb(aid, tc_gather) == SION_SUCCESS;
    ok &= sion_generic_register_gathervr_cb(aid, tc_gatherv) == SION_SUCCESS;
    ok &= sion_generic_register_scatterr_cb(aid, tc_scatter) == SION_SUCCESS;
    ok &= sion_generic_register_scattervr_cb(aid, tc_scatterv) == SION_SUCCESS;
    return ok ? 0 : -1;
}

int tc_create_api(const char *name)
{
    char nm[256];
    snprintf(nm, sizeof nm, "%s", name);
    int aid = sion_generic_create_api(nm);
    if (aid < 0)
        return -1;
    if (tc_register(aid)) {
        sion_generic_free_api(aid);
        return -1;
    }
    return aid;
}

/* ---- FULL level: gather_and_execute / execute_and_scatter over the group ---- */
typedef struct {
    int64_t ptr, off, len;
} tc_slot;

static int tc_exchange(int write, void *data, sion_int64 *spec, sion_int64 fsblksize, void *group, int collector,
                       int first, int last, int sid, int (*pw)(const void *, sion_int64 *, int),
                       int (*pr)(void *, sion_int64 *, int))
{
    int n = tc_group_size(group), me = tc_group_rank(group), bad = 0;
    if (n < 1)
        return 1;
    /* several collectors may serve parts of one group in the same call: each
     * marks the verdict of its senders; task 0 combines everyone's view */
    tc_slot mine = {(int64_t)(intptr_t)data, spec[0], spec[1]}, *all = calloc((size_t)n, sizeof *all);
    int *verdict = calloc((size_t)n, sizeof *verdict), *views = calloc((size_t)n * (size_t)n, sizeof *views);
    if (!all || !verdict || !views) {
        free(all);
        free(verdict);
        free(views);
        return 1; /* the others wait: a test helper may, a library never */
    }
    if (tc_gather(&mine, all, group, _SION_INT64, 3, 0) || tc_bcast(all, group, _SION_INT64, 3 * n, 0))
        bad = 1;
    if (me == collector && !bad) {
        int64_t piece = fsblksize > 0 ? fsblksize : 4096;
        for (int s = first; s <= last && s < n && !bad; s++) {
            tc_slot *x = &all[s];
            char *d = (char *)(intptr_t)x->ptr;
            for (int64_t done = 0; x->len > 0 && done < x->len && !bad; done += piece) {
                sion_int64 part[2] = {x->off + done, x->len - done < piece ? x->len - done : piece};
                bad = write ? pw(d + done, part, sid) != 0 : pr(d + done, part, sid) != 0;
            }
        }
        for (int s = first; s <= last && s < n; s++)
            verdict[s] = bad;
        verdict[me] = bad;
    }
    if (tc_gather(verdict, views, group, _SION_INT32, n, 0))
        bad = 1;
    if (me == 0)
        for (int r = 0; r < n; r++)
            for (int s = 0; s < n; s++)
                verdict[s] |= views[r * n + s];
    if (tc_bcast(verdict, group, _SION_INT32, n, 0))
        bad = 1;
    int rc = bad || verdict[me];
    free(all);
    free(verdict);
    free(views);
    return rc;
}

static int tc_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                          int collector, int first, int last, int sid, int process(const void *, sion_int64 *, int))
{
    return spec_len < 2 ||
           tc_exchange(1, (void *)indata, spec, fsblksize, group, collector, first, last, sid, process, NULL);
}

static int tc_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                           int collector, int first, int last, int sid, int process(void *, sion_int64 *, int))
{
    return spec_len < 2 || tc_exchange(0, outdata, spec, fsblksize, group, collector, first, last, sid, NULL, process);
}

int tc_register_coll(int aid)
{
    return sion_generic_register_gather_and_execute_cb(aid, tc_gather_exec) == SION_SUCCESS &&
                   sion_generic_register_execute_and_scatter_cb(aid, tc_exec_scatter) == SION_SUCCESS
               ? 0
               : -1;
}
