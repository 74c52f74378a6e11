/* commcache.c - the communicators of a (user communicator, file split) pair
 * kept for the next open of the same pair (design: commcache.h). */
#include "commcache.h"
#include "sheaf_comm_mpi.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct cc_entry {
    cc_split key;
    MPI_Comm comm;
    long long stamp;        /* the cache's split count when comm was split (CC_AGREE's check) */
    int busy;               /* leased by an open file */
    struct cc_cache *cache; /* NULL: not cached (freed by cc_release) */
    cc_entry *next;
};

/* The cache of one user communicator: two lists, most recently used first
 * (0: CC_SAME entries, 1: CC_AGREE entries), and its place in the list of
 * every cache (for MPI_Finalize). */
typedef struct cc_cache {
    MPI_Comm user;
    long long splits; /* cached-mode splits so far: the same count on every rank */
    MPI_Group group;  /* user's group (a one-file split is MPI_Comm_create of it) */
    cc_entry *list[2];
    struct cc_cache *next;
} cc_cache;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_mx = PTHREAD_MUTEX_INITIALIZER;
static cc_cache *g_caches; /* every cache still attached to its user communicator */
static int g_kv_user = MPI_KEYVAL_INVALID, g_kv_self = MPI_KEYVAL_INVALID;
static int g_off = 1; /* set by cc_init: 0 when the cache is usable */

/* ---- freeing -------------------------------------------------------------- */

/* Free a communicator, not after MPI_Finalize (a file still open then is
 * closed without MPI: its communicator went with MPI). */
static void free_comm(MPI_Comm *comm)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (*comm != MPI_COMM_NULL && !fin)
        MPI_Comm_free(comm);
}

static void free_entries(cc_entry *e)
{
    while (e) {
        cc_entry *next = e->next;
        free_comm(&e->comm);
        free(e);
        e = next;
    }
}

/* Under g_mx: unlink the idle entries of list k of c and return them (the
 * busy ones stay). */
static cc_entry *detach_idle(cc_cache *c, int k)
{
    cc_entry *idle = NULL, **p = &c->list[k];
    while (*p) {
        cc_entry *e = *p;
        if (e->busy) {
            p = &e->next;
            continue;
        }
        *p = e->next;
        e->next = idle;
        idle = e;
    }
    return idle;
}

/* Under g_mx: c leaves the list of caches; its busy entries are left to
 * their open files (cc_release frees them); returns its idle entries. */
static cc_entry *cache_detach(cc_cache *c)
{
    for (cc_cache **p = &g_caches; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    cc_entry *idle = NULL;
    for (int k = 0; k < 2; k++) {
        cc_entry *e = detach_idle(c, k);
        while (e) {
            cc_entry *next = e->next;
            e->next = idle;
            idle = e;
            e = next;
        }
        for (cc_entry *b = c->list[k]; b; b = b->next)
            b->cache = NULL;
        c->list[k] = NULL;
    }
    return idle;
}

/* Delete callback of the attribute on a user communicator: it is being
 * freed (or MPI is finalizing), and its cached communicators with it. */
static int delete_user(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    cc_cache *c = value;
    pthread_mutex_lock(&g_mx);
    cc_entry *idle = cache_detach(c);
    pthread_mutex_unlock(&g_mx);
    free_entries(idle);
    int fin = 0;
    MPI_Finalized(&fin);
    if (c->group != MPI_GROUP_NULL && !fin)
        MPI_Group_free(&c->group);
    free(c);
    return MPI_SUCCESS;
}

/* Delete callback of the attribute on MPI_COMM_SELF, run by MPI_Finalize
 * before anything else: every cache still attached to a user communicator
 * is deleted from it (the user communicators themselves stay, as MPI
 * leaves them). */
static int delete_self(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    for (;;) {
        pthread_mutex_lock(&g_mx);
        cc_cache *c = g_caches;
        MPI_Comm user = c ? c->user : MPI_COMM_NULL;
        pthread_mutex_unlock(&g_mx);
        if (!c)
            break;
        if (MPI_Comm_delete_attr(user, g_kv_user) != MPI_SUCCESS)
            delete_user(user, g_kv_user, c, NULL); /* not reachable through MPI any more: free it here */
    }
    g_off = 1;
    MPI_Comm_free_keyval(&g_kv_user);
    MPI_Comm_free_keyval(&g_kv_self);
    return MPI_SUCCESS;
}

static void cc_init(void)
{
    const char *env = getenv("SHEAF_COMM_CACHE");
    if (env && !strcmp(env, "0"))
        return;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_user, &g_kv_user, NULL) != MPI_SUCCESS)
        return;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_self, &g_kv_self, NULL) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, g_kv_self, NULL) != MPI_SUCCESS) {
        MPI_Comm_free_keyval(&g_kv_user);
        if (g_kv_self != MPI_KEYVAL_INVALID)
            MPI_Comm_free_keyval(&g_kv_self);
        return;
    }
    g_off = 0;
}

/* ---- lookup and insertion ------------------------------------------------- */

/* The cache of user (created, attached and listed if need be); NULL when
 * out of memory or the attribute calls fail. Two threads never open on the
 * same communicator at once (MPI orders its collectives), so the attribute
 * needs no lock of its own. */
static cc_cache *cache_of(MPI_Comm user, int create)
{
    void *v = NULL;
    int flag = 0;
    if (MPI_Comm_get_attr(user, g_kv_user, &v, &flag) != MPI_SUCCESS)
        return NULL;
    if (flag || !create)
        return flag ? v : NULL;
    cc_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->user = user;
    if (MPI_Comm_group(user, &c->group) != MPI_SUCCESS) { /* local: before the agreement (cc_reserve) */
        free(c);
        return NULL;
    }
    pthread_mutex_lock(&g_mx);
    c->next = g_caches;
    g_caches = c;
    pthread_mutex_unlock(&g_mx);
    if (MPI_Comm_set_attr(user, g_kv_user, c) != MPI_SUCCESS) {
        pthread_mutex_lock(&g_mx);
        cache_detach(c);
        pthread_mutex_unlock(&g_mx);
        MPI_Group_free(&c->group);
        free(c);
        return NULL;
    }
    return c;
}

/* An idle entry of list k for key s, now busy and first in its list; NULL
 * when there is none (or s is not cacheable: numfiles < 0). */
static cc_entry *take(cc_cache *c, int k, const cc_split *s)
{
    if (!c || s->numfiles < 0)
        return NULL;
    cc_entry *hit = NULL;
    pthread_mutex_lock(&g_mx);
    for (cc_entry **p = &c->list[k]; *p; p = &(*p)->next) {
        cc_entry *e = *p;
        if (!e->busy && !memcmp(&e->key, s, sizeof *s)) {
            *p = e->next;
            e->next = c->list[k];
            c->list[k] = e;
            e->busy = 1;
            hit = e;
            break;
        }
    }
    pthread_mutex_unlock(&g_mx);
    return hit;
}

/* A busy entry into list k of c (first); when the list is full, its least
 * recently used idle entry is returned for freeing, or e stays out of the
 * cache when every entry is busy. */
static cc_entry *insert(cc_cache *c, int k, cc_entry *e)
{
    cc_entry *evicted = NULL;
    pthread_mutex_lock(&g_mx);
    int n = 0;
    cc_entry **lastidle = NULL;
    for (cc_entry **p = &c->list[k]; *p; p = &(*p)->next) {
        n++;
        if (!(*p)->busy)
            lastidle = p;
    }
    if (n >= CC_MAX && lastidle) {
        evicted = *lastidle;
        *lastidle = evicted->next;
        evicted->next = NULL;
        n--;
    }
    if (n < CC_MAX) {
        e->cache = c;
        e->next = c->list[k];
        c->list[k] = e;
    }
    pthread_mutex_unlock(&g_mx);
    return evicted;
}

/* MPI_Comm_split(user, color, key); with group (not MPI_GROUP_NULL: a
 * one-file split, every rank in user's order, decided alike on every rank)
 * MPI_Comm_create(user, user's group) instead: the same communicator, made
 * without the split's exchange of colors and keys (16 ranks on 2 cores at
 * load ~30: 346 ms against 554 for the split, 358 for a dup), and unlike
 * MPI_Comm_dup it copies none of the application's attributes of user. */
static int make_comm(MPI_Comm user, MPI_Group group, int color, int key, MPI_Comm *out)
{
    int rc = group != MPI_GROUP_NULL ? MPI_Comm_create(user, group, out) : MPI_Comm_split(user, color, key, out);
    if (rc != MPI_SUCCESS)
        *out = MPI_COMM_NULL;
    else if (*out != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return rc;
}

static int plain_split(MPI_Comm user, int color, int key, MPI_Comm *out)
{
    int rc = MPI_Comm_split(user, color, key, out);
    if (rc != MPI_SUCCESS)
        *out = MPI_COMM_NULL;
    else if (*out != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return rc;
}

/* CC_AGREE: does every rank have an idle entry, and do all of them come from
 * the same split? One agreement (sheaf_comm_agree over the user's
 * communicator itself, sheaf_comm_mpi_ref: no allocation, no MPI call of its
 * own; one MPI_Allreduce, as no rank fails here) of the stamp as a value that
 * must agree (its minimum and the minimum of its negative); the entry taken
 * goes back when not. The stamps are needed because a key is only this
 * rank's place: two reads of sets with different task mappings can give one
 * rank the same place in both while its partner's differ, and without them
 * each rank could take a communicator of a different split. MPI_SUCCESS, or
 * an MPI error code when the exchange failed (on every rank). */
static int agree_hit(MPI_Comm user, cc_entry **e)
{
    sheaf_comm_mpi_ref_t ref;
    int64_t v[2] = {*e ? (*e)->stamp : -1, *e ? -(*e)->stamp : 1};
    int rc = sheaf_comm_agree(sheaf_comm_mpi_ref(&ref, user), 0, NULL, v, 2, NULL);
    int hit = !rc && v[0] >= 0 && v[0] == -v[1];
    if (!hit && *e) {
        pthread_mutex_lock(&g_mx);
        (*e)->busy = 0;
        pthread_mutex_unlock(&g_mx);
        *e = NULL;
    }
    return rc ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* A miss (the same on every rank: CC_SAME by construction, CC_AGREE by
 * agree_hit): split, and cache the new communicator in the entry reserved
 * before the open (cc_reserve; its allocation was agreed with the binding's
 * own agreement, so every rank has one or none). No collective of its own: a
 * split that fails fails on every rank (MPI agrees on a new communicator's
 * context inside the split), and a rank with no entry to cache has failed
 * the open on every rank before this. */
static int miss(cc_cache *c, int k, const cc_split *s, MPI_Comm user, int color, int key, cc_entry **spare,
                MPI_Comm *out, cc_entry **lease)
{
    /* k 0 with one file: every rank, in user's order (commcache.h, CC_SAME) */
    int whole = c && k == 0 && s->numfiles == 1;
    int rc = make_comm(user, whole ? c->group : MPI_GROUP_NULL, color, key, out);
    if (c)
        c->splits++; /* on every rank alike, failed or not */
    cc_entry *n = spare ? *spare : NULL;
    if (rc != MPI_SUCCESS || !n || !c || s->numfiles < 0)
        return rc;
    *spare = NULL;
    n->key = *s;
    n->comm = *out;
    n->stamp = c->splits;
    n->busy = 1;
    free_entries(insert(c, k, n));
    *lease = n;
    return MPI_SUCCESS;
}

/* ---- the calls ------------------------------------------------------------ */

#ifdef SHEAF_CC_TEST_HOOK
int cc_test_fail_reserve;
#endif

int cc_reserve(MPI_Comm user, cc_entry **spare)
{
    *spare = NULL;
    pthread_once(&g_once, cc_init);
    if (g_off)
        return MPI_SUCCESS;
#ifdef SHEAF_CC_TEST_HOOK
    if (cc_test_fail_reserve) {
        cc_test_fail_reserve = 0;
        return MPI_ERR_NO_MEM;
    }
#endif
    if (!cache_of(user, 1) || !(*spare = calloc(1, sizeof **spare)))
        return MPI_ERR_NO_MEM;
    (*spare)->comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

void cc_unreserve(cc_entry *spare) { free(spare); }

int cc_split_comm(MPI_Comm user, int how, const cc_split *s, int color, int key, cc_entry **spare, MPI_Comm *out,
                  cc_entry **lease)
{
    *out = MPI_COMM_NULL;
    *lease = NULL;
    pthread_once(&g_once, cc_init);
    if (g_off || how == CC_OFF)
        return plain_split(user, color, key, out);
    if (how == CC_READ) /* numfiles comes from the verdict of the open: the same on every rank */
        how = s->numfiles == 1 ? CC_SAME : CC_AGREE;
    cc_cache *c = cache_of(user, 0); /* made by cc_reserve */
    int k = how == CC_SAME ? 0 : 1;
    cc_entry *e = take(c, k, s);
    if (how == CC_AGREE) {
        int rc = agree_hit(user, &e);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (e) {
        *out = e->comm;
        *lease = e;
        return MPI_SUCCESS;
    }
    return miss(c, k, s, user, color, key, spare, out, lease);
}

void cc_release(cc_entry *lease, MPI_Comm comm)
{
    if (!lease) {
        free_comm(&comm); /* not cached */
        return;
    }
    pthread_mutex_lock(&g_mx);
    int cached = lease->cache != NULL;
    lease->busy = 0;
    pthread_mutex_unlock(&g_mx);
    if (!cached) {
        lease->next = NULL;
        free_entries(lease);
    }
}

void cc_purge(MPI_Comm user)
{
    pthread_once(&g_once, cc_init);
    if (g_off)
        return;
    cc_cache *c = cache_of(user, 0);
    if (!c)
        return;
    pthread_mutex_lock(&g_mx);
    cc_entry *a = detach_idle(c, 0), *b = detach_idle(c, 1);
    pthread_mutex_unlock(&g_mx);
    free_entries(a);
    free_entries(b);
}
