/* sid.c - the table of ids (sids and generic API ids), guarded by a mutex, and
 * the parallel layer's hooks (sid.h).
 *
 * Ids are handed out as SIONlib 1.7 hands them out (its sion_fd.c; the rule is
 * described at take() below): small numbers, sids and the ids of
 * sion_generic_create_api from one table, the first serial sid 0 and the first
 * sid of an MPI program 1 (after the MPI layer's API id 0), and the number of a
 * closed id handed out again - but not at once: a fresh number is taken while
 * the table has one, so a closed id stays invalid ("it was closed") until the
 * table has run out of fresh numbers. Then a stale sid may reach a newer open,
 * as in SIONlib (README "Differences from SIONlib"). SHEAF_SID_NOREUSE=1 in the
 * environment (read at the first id) keeps every closed id invalid for ever:
 * the numbers then only increase.
 *
 * The slots are an array indexed by id: a look-up, an open and a close are
 * O(1); the search for a closed slot to reuse (SIONlib scans its table) reads
 * a two-level bitmap of the closed slots, O(slots / 4096) at worst, so a
 * process holding 10^6 sids does not spend O(n^2) in its opens. */
#include "sid.h"
#include "../core/error.h"
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The callbacks of sion_lock_register_lock_callbacks: as in SIONlib, the
 * user's lock is taken around every operation on the table of ids. It is
 * taken outside the table's own mutex (so the order is always user lock,
 * then mutex), and the callbacks in force when the lock was taken are the
 * ones that release it, even if they are replaced meanwhile. */
typedef struct {
    int (*lock)(void *);
    int (*unlock)(void *);
    void *data;
} user_lock;
static user_lock g_user;
static pthread_mutex_t g_user_mx = PTHREAD_MUTEX_INITIALIZER;

int api_set_lock_callbacks(int (*lock)(void *), int (*unlock)(void *), void *data)
{
    if (!lock || !unlock)
        return core_fail(SHEAF_E_ARG,
                         "sion_lock_register_lock_callbacks: the lock and unlock callbacks must not be NULL");
    lock(data); /* as SIONlib: the registration itself runs under the new lock */
    pthread_mutex_lock(&g_user_mx);
    int taken = g_user.lock != NULL;
    if (!taken)
        g_user = (user_lock){lock, unlock, data};
    pthread_mutex_unlock(&g_user_mx);
    unlock(data);
    if (taken)
        return core_fail(SHEAF_E_ARG, "sion_lock_register_lock_callbacks: lock callbacks are registered already "
                                      "(they can be registered once per process)");
    return 0;
}

static user_lock table_lock_q(int quiet)
{
    user_lock u = {0};
    if (!quiet) {
        pthread_mutex_lock(&g_user_mx);
        u = g_user;
        pthread_mutex_unlock(&g_user_mx);
    }
    if (u.lock && u.unlock)
        u.lock(u.data);
    else
        u = (user_lock){0};
    pthread_mutex_lock(&g_lock);
    return u;
}

static user_lock table_lock(void) { return table_lock_q(0); }

static void table_unlock(user_lock u)
{
    pthread_mutex_unlock(&g_lock);
    if (u.unlock)
        u.unlock(u.data);
}

/* SIONlib's table operations that sheaf's tables do not need (SIONlib looks a
 * sid up twice per call, registers each callback of a generic API through
 * two lookups, and its parallel opens and closes take and give back internal
 * handles): the user's callbacks are called n more times, so a program that
 * counts them (SIONlib's test_lock___1) sees SIONlib's numbers. Without
 * registered callbacks nothing happens. */
void api_lock_ticks(int n)
{
    pthread_mutex_lock(&g_user_mx);
    user_lock u = g_user;
    pthread_mutex_unlock(&g_user_mx);
    for (int i = 0; i < n && u.lock && u.unlock; i++) {
        u.lock(u.data);
        u.unlock(u.data);
    }
}

/* As SIONlib: the query runs under the table's lock, so once callbacks are
 * registered it calls them once each (test_lock___1 counts them). */
int api_lock_callbacks_defined(void)
{
    user_lock u = table_lock();
    int d = u.lock != NULL;
    table_unlock(u);
    return d;
}

/* One slot per id. state: 0 never used since the table was last emptied,
 * 1 open, -1 closed. kind: API_KIND_* (API_KIND_HELD / _LEAKED: numbers
 * SIONlib gives to its internal handles, never valid). */
typedef struct {
    signed char state;
    signed char kind;
    void *obj;
} api_slot;

enum { API_CHUNK = 2 }; /* SIONlib's table grows by 2 slots */

static api_slot *g_tab;
static int g_size;  /* slots in the table (SIONlib's size) */
static int g_cap;   /* slots allocated (>= g_size; grows by doubling) */
static int g_nfree; /* slots not open (state 0 or -1) */
static int g_fresh; /* slots [g_fresh, g_size) have state 0 */
static int g_last_freed = -1;
static int g_held;      /* slots of kind API_KIND_HELD that are open */
static int g_ever;      /* 1 + the largest id ever handed out (messages) */
static int g_mode = -1; /* -1 unknown, 0 SIONlib's reuse, 1 SHEAF_SID_NOREUSE */
/* the closed slots (state -1): bit i of g_closed, and bit w of g_closed_w when
 * word w of g_closed has a bit set; sized with g_cap */
static uint64_t *g_closed, *g_closed_w;

static size_t words_of(size_t bits) { return (bits + 63) / 64; }

static void closed_set(int i, int on)
{
    size_t w = (size_t)i / 64;
    if (on)
        g_closed[w] |= 1ull << (i % 64);
    else
        g_closed[w] &= ~(1ull << (i % 64));
    if (g_closed[w])
        g_closed_w[w / 64] |= 1ull << (w % 64);
    else
        g_closed_w[w / 64] &= ~(1ull << (w % 64));
}

/* the lowest closed slot in [a, b), or -1 */
static int closed_first(int a, int b)
{
    if (a >= b)
        return -1;
    size_t w = (size_t)a / 64, nw = words_of((size_t)b);
    uint64_t m = g_closed[w] & (~0ull << (a % 64));
    while (!m) {
        /* the next word with a bit, through the summary */
        size_t x = w + 1;
        if (x >= nw)
            return -1;
        uint64_t sm = g_closed_w[x / 64] & (~0ull << (x % 64));
        while (!sm) {
            x = (x / 64 + 1) * 64;
            if (x >= nw)
                return -1;
            sm = g_closed_w[x / 64];
        }
        w = (x / 64) * 64 + (size_t)__builtin_ctzll(sm);
        if (w >= nw)
            return -1;
        m = g_closed[w];
    }
    int i = (int)(w * 64 + (size_t)__builtin_ctzll(m));
    return i < b ? i : -1;
}

static int noreuse(void)
{
    if (g_mode < 0) {
        const char *e = getenv("SHEAF_SID_NOREUSE");
        g_mode = e && *e && strcmp(e, "0") != 0;
    }
    return g_mode;
}

/* Add API_CHUNK slots (or, without reuse, enough for one more fresh slot).
 * Called with g_lock held; 0 or SHEAF_E_NOMEM. */
static int grow(void)
{
    if (g_size > INT_MAX - API_CHUNK)
        return core_fail(SHEAF_E_NOMEM, "no sid left: %d ids are in use or were handed out in this process", g_size);
    int nsize = g_size + API_CHUNK;
    if (nsize > g_cap) {
        int ncap = g_cap > INT_MAX / 2 ? INT_MAX : (g_cap ? 2 * g_cap : 16);
        if (ncap < nsize)
            ncap = nsize;
        size_t ow = words_of((size_t)g_cap), nw = words_of((size_t)ncap);
        api_slot *nt = realloc(g_tab, (size_t)ncap * sizeof *nt);
        if (nt)
            g_tab = nt;
        uint64_t *nc = nt ? realloc(g_closed, nw * sizeof *nc) : NULL;
        if (nc)
            g_closed = nc;
        uint64_t *ncw = nc ? realloc(g_closed_w, words_of(nw) * sizeof *ncw) : NULL;
        if (!ncw)
            return core_fail(SHEAF_E_NOMEM, "out of memory registering an open container");
        g_closed_w = ncw;
        memset(g_closed + ow, 0, (nw - ow) * sizeof *g_closed);
        memset(g_closed_w + words_of(ow), 0, (words_of(nw) - words_of(ow)) * sizeof *g_closed_w);
        g_cap = ncap;
    }
    for (int i = g_size; i < nsize; i++)
        g_tab[i] = (api_slot){0, 0, NULL};
    g_nfree += nsize - g_size;
    g_size = nsize;
    return 0;
}

/* SIONlib 1.7's rule (sion_fd.c), learned from its source: keep at least two
 * slots free (grow by two when fewer are), take the lowest slot never used
 * since the table was last emptied, and only when there is none a closed one,
 * searching cyclically from the one after the last closed. Called with g_lock
 * held; the id or SHEAF_E_NOMEM. */
static int take(int kind, void *obj)
{
    int nr = noreuse();
    if ((nr ? g_fresh == g_size : g_nfree < 2) && grow())
        return SHEAF_E_NOMEM;
    int id = -1;
    if (g_fresh < g_size) {
        id = g_fresh++;
    } else {
        /* the first closed slot cyclically after the last closed one */
        int from = (int)(((int64_t)g_last_freed + 1) % g_size);
        id = closed_first(from, g_size);
        if (id < 0)
            id = closed_first(0, from);
        if (id < 0) /* cannot happen: g_nfree >= 2 and no fresh slot */
            return core_fail(SHEAF_E_NOMEM, "sid table inconsistent: no free slot among %d", g_size);
        closed_set(id, 0);
    }
    g_tab[id] = (api_slot){1, (signed char)kind, obj};
    g_nfree--;
    if (id >= g_ever)
        g_ever = id + 1;
    if (kind == API_KIND_HELD)
        g_held++;
    return id;
}

/* Close slot id (open). Called with g_lock held. */
static void put(int id)
{
    if (g_tab[id].kind == API_KIND_HELD)
        g_held--;
    g_tab[id].state = -1;
    g_tab[id].obj = NULL;
    closed_set(id, 1);
    g_nfree++;
    g_last_freed = id;
    if (g_nfree == g_size && !noreuse()) { /* all closed: SIONlib empties its table */
        free(g_tab);
        free(g_closed);
        free(g_closed_w);
        g_tab = NULL;
        g_closed = g_closed_w = NULL;
        g_size = g_cap = g_nfree = g_fresh = 0;
    }
}

int api_register_kind(int kind, void *obj)
{
    user_lock u = table_lock();
    int id = take(kind, obj);
    table_unlock(u);
    return id;
}

int api_register(core_container *c) { return api_register_kind(API_KIND_SID, c); }

void api_skip_ids(int n)
{
    user_lock u = table_lock();
    for (int i = 0; i < n; i++) {
        int id = take(API_KIND_HELD, NULL);
        if (id < 0)
            break;
        put(id);
    }
    table_unlock(u);
}

void api_hold_ids(int n, int kind, void *owner)
{
    user_lock u = table_lock();
    for (int i = 0; i < n && take(kind, kind == API_KIND_HELD ? owner : NULL) >= 0; i++)
        ;
    table_unlock(u);
}

/* The object of id if it is open and of this kind; else NULL and why in *why
 * (0 never handed out, 1 closed, 2 of another kind, 3 an internal handle). */
static void *get(int id, int kind, int *why, int quiet)
{
    void *obj = NULL;
    user_lock u = table_lock_q(quiet);
    int st = id >= 0 && id < g_size ? g_tab[id].state : 0;
    int k = st == 1 ? g_tab[id].kind : 0;
    if (st == 1 && k == kind)
        obj = g_tab[id].obj;
    /* a fresh slot below g_ever was emptied with the table: closed too */
    *why = st < 0 || (st == 0 && id >= 0 && id < g_ever)  ? 1
           : st == 0                                      ? 0
           : (k == API_KIND_HELD || k == API_KIND_LEAKED) ? 3
                                                          : 2;
    table_unlock(u);
    return obj;
}

/* quiet: an operation of sheaf's own that SIONlib does not make (the user's
 * lock callbacks are not called) */
static void *lookup(int id, int kind, const char *call, int quiet)
{
    int why;
    void *obj = get(id, kind, &why, quiet);
    if (obj)
        return obj;
    const char *what = kind == API_KIND_SID ? "sid" : "api id";
    if (why == 1)
        core_fail(SHEAF_E_ARG, "%s: invalid %s %d: it was closed", call, what, id);
    else if (why == 2)
        core_fail(SHEAF_E_ARG, "%s: invalid %s %d: it is %s", call, what, id,
                  kind == API_KIND_SID ? "a generic api id, not a sid" : "a sid, not a generic api id");
    else if (why == 3)
        core_fail(SHEAF_E_ARG,
                  "%s: invalid %s %d: it is the number of an internal handle (one file of a multi-file "
                  "set opened serially), not an open %s",
                  call, what, id, what);
    else
        core_fail(SHEAF_E_ARG, "%s: invalid %s %d (not an open %s)", call, what, id,
                  kind == API_KIND_SID ? "container" : "generic api");
    return NULL;
}

void *api_lookup_kind(int id, int kind, const char *call) { return lookup(id, kind, call, 0); }

void *api_lookup_internal(int id, int kind, const char *call) { return lookup(id, kind, call, 1); }

core_container *api_lookup(int sid, const char *call) { return api_lookup_kind(sid, API_KIND_SID, call); }

void *api_release_kind(int id, int kind)
{
    void *obj = NULL;
    user_lock u = table_lock();
    if (id >= 0 && id < g_size && g_tab[id].state == 1 && g_tab[id].kind == kind) {
        obj = g_tab[id].obj;
        /* the internal handles the object holds go first (SIONlib closes the
         * further files of a multi-file set before the set's own sid) */
        for (int i = 0; g_held > 0 && obj && i < g_size; i++)
            if (g_tab[i].state == 1 && g_tab[i].kind == API_KIND_HELD && g_tab[i].obj == obj)
                put(i);
        put(id);
    }
    table_unlock(u);
    return obj;
}

core_container *api_release(int sid) { return api_release_kind(sid, API_KIND_SID); }

static _Atomic(const sid_par_ops *) g_par_ops;

void sid_set_par_ops(const sid_par_ops *ops) { atomic_store(&g_par_ops, ops); }

const sid_par_ops *sid_par_ops_of(const core_container *c)
{
    if (!c || !c->par || c->dup)
        return NULL;
    return atomic_load(&g_par_ops);
}
