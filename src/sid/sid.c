/* sid.c - the table of ids (sids and generic API ids), guarded by a mutex, and
 * the parallel layer's hooks (sid.h).
 *
 * Ids are handed out in increasing order from one counter, starting at 0, and
 * a number is never handed out twice: SIONlib 1.7 also takes sids and the ids
 * of sion_generic_create_api from one table and hands out fresh numbers in
 * increasing order (so the first serial sid is 0 and the first sid of an MPI
 * program is 1, after the MPI layer's API id 0), but it reuses the numbers of
 * closed sids, so that a stale sid silently aliases a newer open. Here a
 * closed id stays invalid: calls on it fail with a message saying so.
 *
 * The entries live in an array sorted by id (new ids are always the largest,
 * so they are appended); a look-up is a binary search. A close leaves a
 * tombstone (kind 0) instead of moving the entries after it, and the array is
 * compacted in one pass once tombstones are at least half of it (or when it
 * is full): closing n ids in any order moves O(n) entries in all, where the
 * memmove per close was O(n^2) (10^4 opens closed oldest first moved 5*10^7
 * entries). api_table_moves() counts the moves (test_sid_table). */
#include "sid.h"
#include "../core/error.h"
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int id;
    int kind;
    void *obj;
} api_entry;

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
        return core_fail(SHEAF_E_ARG, "sion_lock_register_lock_callbacks: the lock and unlock callbacks must not be NULL");
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

int api_lock_callbacks_defined(void)
{
    pthread_mutex_lock(&g_user_mx);
    int d = g_user.lock != NULL && g_user.unlock != NULL;
    pthread_mutex_unlock(&g_user_mx);
    return d;
}

static user_lock table_lock(void)
{
    pthread_mutex_lock(&g_user_mx);
    user_lock u = g_user;
    pthread_mutex_unlock(&g_user_mx);
    if (u.lock && u.unlock)
        u.lock(u.data);
    else
        u = (user_lock){0};
    pthread_mutex_lock(&g_lock);
    return u;
}

static void table_unlock(user_lock u)
{
    pthread_mutex_unlock(&g_lock);
    if (u.unlock)
        u.unlock(u.data);
}
static api_entry *g_tab;   /* sorted by id; kind 0: a closed id (tombstone) */
static int g_n, g_cap;
static int g_dead;         /* tombstones among g_tab[0..g_n) */
static int g_next;         /* next id to hand out */
static int64_t g_moves;    /* entries moved by compaction */

/* Index of the open id in g_tab, or -1. Called with g_lock held. */
static int find(int id)
{
    int lo = 0, hi = g_n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (g_tab[mid].id == id)
            return g_tab[mid].kind ? mid : -1;
        if (g_tab[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Drop the tombstones (order kept). Called with g_lock held. */
static void compact(void)
{
    int k = 0;
    for (int i = 0; i < g_n; i++)
        if (g_tab[i].kind) {
            if (k != i)
                g_tab[k] = g_tab[i], g_moves++;
            k++;
        }
    g_n = k;
    g_dead = 0;
}

int64_t api_table_moves(void)
{
    user_lock u = table_lock();
    int64_t m = g_moves;
    table_unlock(u);
    return m;
}

int api_register_kind(int kind, void *obj)
{
    user_lock u = table_lock();
    if (g_next == INT_MAX) {
        table_unlock(u);
        return core_fail(SHEAF_E_NOMEM, "no sid left: %d ids have been handed out in this process", INT_MAX);
    }
    if (g_n == g_cap && g_dead)
        compact();
    if (g_n == g_cap) {
        int ncap = g_cap ? 2 * g_cap : 16;
        api_entry *nt = realloc(g_tab, (size_t)ncap * sizeof *nt);
        if (!nt) {
            table_unlock(u);
            return core_fail(SHEAF_E_NOMEM, "out of memory registering an open container");
        }
        g_tab = nt;
        g_cap = ncap;
    }
    int id = g_next++;
    g_tab[g_n++] = (api_entry){id, kind, obj};
    table_unlock(u);
    return id;
}

int api_register(core_container *c) { return api_register_kind(API_KIND_SID, c); }

void api_skip_ids(int n)
{
    user_lock u = table_lock();
    g_next = n > 0 && g_next > INT_MAX - n ? INT_MAX : g_next + (n > 0 ? n : 0);
    table_unlock(u);
}

/* The object of id if it is open and of this kind; else NULL and why in *why
 * (0 never handed out, 1 closed, 2 of another kind). */
static void *get(int id, int kind, int *why)
{
    void *obj = NULL;
    user_lock u = table_lock();
    int i = find(id);
    if (i >= 0 && g_tab[i].kind == kind)
        obj = g_tab[i].obj;
    *why = i >= 0 ? 2 : (id >= 0 && id < g_next) ? 1 : 0;
    table_unlock(u);
    return obj;
}

void *api_lookup_kind(int id, int kind, const char *call)
{
    int why;
    void *obj = get(id, kind, &why);
    if (obj)
        return obj;
    const char *what = kind == API_KIND_SID ? "sid" : "api id";
    if (why == 1)
        core_fail(SHEAF_E_ARG, "%s: invalid %s %d: it was closed (a closed %s is never valid again)", call, what, id,
                  what);
    else if (why == 2)
        core_fail(SHEAF_E_ARG, "%s: invalid %s %d: it is %s", call, what, id,
                  kind == API_KIND_SID ? "a generic api id, not a sid" : "a sid, not a generic api id");
    else
        core_fail(SHEAF_E_ARG, "%s: invalid %s %d (not an open %s)", call, what, id,
                  kind == API_KIND_SID ? "container" : "generic api");
    return NULL;
}

core_container *api_lookup(int sid, const char *call) { return api_lookup_kind(sid, API_KIND_SID, call); }

void *api_release_kind(int id, int kind)
{
    void *obj = NULL;
    user_lock u = table_lock();
    int i = find(id);
    if (i >= 0 && g_tab[i].kind == kind) {
        obj = g_tab[i].obj;
        g_tab[i].kind = 0;
        g_tab[i].obj = NULL;
        if (i == g_n - 1)
            g_n--; /* the newest: no tombstone needed */
        else
            g_dead++;
        if (g_dead && 2 * g_dead >= g_n)
            compact();
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
