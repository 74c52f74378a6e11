/* set.c - a lock set: collective creation and free, the window and its
 * layout (lock.h), argument checks, dispatch to the algorithms, counters. */
#include "lock.h"
#include "sheaf_comm_mpi.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void sheaf_lock_opts_init(sheaf_lock_opts *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->kind = SHEAF_LOCK_MCS;
    o->nlocks = 1;
    o->progress = SHEAF_LOCK_PROGRESS_AUTO;
    o->poll_backoff_min_us = 1;
    o->poll_backoff_max_us = 64;
}

/* Every rank's status, and vals (n values, their minimum on every rank), in
 * one exchange: sheaf_comm_agree over the set's communicator (one
 * MPI_Allreduce when all went well, one MPI_Bcast of the message more when
 * one failed). A failing rank keeps its own code and message; the others
 * get the lowest failing rank's code, with its rank and message. */
static int agree(MPI_Comm comm, int rc, int64_t *vals, int n, const char *what)
{
    sheaf_comm_mpi_ref_t ref;
    sheaf_comm_agreement a;
    int all = sheaf_comm_agree(sheaf_comm_mpi_ref(&ref, comm), rc, rc ? sheaf_lock_last_error() : NULL, vals, n, &a);
    if (!all)
        return SHEAF_LOCK_OK;
    if (rc)
        return rc;
    if (a.rank < 0)
        return lk_err(SHEAF_LOCK_EMPI, "%s: the agreement failed: %s (src/lock/set.c)", what, a.msg);
    return lk_err(a.code, "%s: failed on another rank (rank %d, code %d): %s (src/lock/set.c)", what, a.rank, a.code,
                  a.msg);
}

static int check_opts(const sheaf_lock_opts *o, sheaf_lock_set **out)
{
    if (!o || !out)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_create: %s is NULL (src/lock/set.c)", o ? "out" : "opts");
    if (o->kind < SHEAF_LOCK_FLAGS || o->kind > SHEAF_LOCK_POLL)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_create: unknown lock kind %d (src/lock/set.c)", (int)o->kind);
    if (o->nlocks <= 0 || o->nlocks > LK_MAX_LOCKS)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_create: nlocks %d outside [1, %d] (src/lock/set.c)", o->nlocks,
                      LK_MAX_LOCKS);
    if (o->progress < SHEAF_LOCK_PROGRESS_AUTO || o->progress > SHEAF_LOCK_PROGRESS_SHARED)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_create: unknown progress mode %d (src/lock/set.c)",
                      (int)o->progress);
    if (o->poll_backoff_min_us > o->poll_backoff_max_us || o->poll_backoff_max_us > 1000000)
        return lk_err(SHEAF_LOCK_EINVAL,
                      "sheaf_lock_create: poll back-off range [%u, %u] us invalid "
                      "(min <= max <= 1 s) (src/lock/set.c)",
                      o->poll_backoff_min_us, o->poll_backoff_max_us);
    if (o->progress == SHEAF_LOCK_PROGRESS_ASYNC) {
        int level = MPI_THREAD_SINGLE;
        MPI_Query_thread(&level);
        if (level != MPI_THREAD_MULTIPLE)
            return lk_err(SHEAF_LOCK_EINVAL,
                          "sheaf_lock_create: progress=async needs MPI_THREAD_MULTIPLE "
                          "(MPI_Init_thread; MPICH also MPIR_CVAR_ASYNC_PROGRESS=1) (src/lock/set.c)");
    }
    return SHEAF_LOCK_OK;
}

/* opts must be the same on every rank: the minimum of each field and of its
 * negation (the maximum) travel with the status, one agreement */
static int check_same(MPI_Comm comm, const sheaf_lock_opts *o, int rc)
{
    int64_t v[6];
    for (int i = 0; i < 6; i++)
        v[i] = INT64_MAX; /* a failed rank does not count */
    if (rc == SHEAF_LOCK_OK) {
        v[0] = (int)o->kind, v[1] = o->nlocks, v[2] = (int)o->progress;
        for (int i = 0; i < 3; i++)
            v[3 + i] = -v[i];
    }
    rc = agree(comm, rc, v, 6, "sheaf_lock_create: bad options");
    if (rc)
        return rc;
    for (int i = 0; i < 3; i++)
        if (v[i] != -v[3 + i])
            return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_create: ranks disagree on %s (src/lock/set.c)",
                          i == 0   ? "the lock kind"
                          : i == 1 ? "nlocks"
                                   : "the progress mode");
    return SHEAF_LOCK_OK;
}

/* AUTO -> SHARED when every rank shares one node; SHARED requested elsewhere: error */
static int choose_progress(struct sheaf_lock_set *S, sheaf_lock_progress_mode want)
{
    MPI_Comm node = MPI_COMM_NULL;
    int nsize = 0, rc = SHEAF_LOCK_OK;
    if (MPI_Comm_split_type(S->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        rc = lk_err(SHEAF_LOCK_EMPI, "sheaf_lock_create: MPI_Comm_split_type failed (src/lock/set.c)");
    else {
        MPI_Comm_size(node, &nsize);
        MPI_Comm_free(&node);
    }
    /* every rank on one node: the minimum of "all of mine are local" */
    int64_t one_node = nsize == S->size;
    rc = agree(S->comm, rc, &one_node, 1, "sheaf_lock_create: the node query");
    if (rc)
        return rc;
    if (want == SHEAF_LOCK_PROGRESS_SHARED && !one_node)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_create: progress=shared needs every rank on one node "
                                         "(src/lock/set.c)");
    S->progress =
        want == SHEAF_LOCK_PROGRESS_AUTO ? (one_node ? SHEAF_LOCK_PROGRESS_SHARED : SHEAF_LOCK_PROGRESS_LIBRARY) : want;
    S->shm = S->progress == SHEAF_LOCK_PROGRESS_SHARED;
    /* SHEAF_LOCK_NOFUTEX (any value): spin and yield instead (for comparison, bench/RESULTS.md) */
    S->futex = S->shm && lk_futex_supported() && !getenv("SHEAF_LOCK_NOFUTEX");
    return SHEAF_LOCK_OK;
}

static void layout(struct sheaf_lock_set *S)
{
    S->nslots = (S->nlocks + S->size - 1) / S->size;
    MPI_Aint w = LK_OFF_NEXT + (MPI_Aint)S->nlocks * (MPI_Aint)sizeof(int);
    S->off_word = (w + 7) & ~(MPI_Aint)7;
    S->off_flags = S->off_word + (MPI_Aint)S->nslots * (MPI_Aint)sizeof(int);
    S->winsize = S->off_flags + (S->kind == SHEAF_LOCK_FLAGS ? (MPI_Aint)S->nslots * S->size : 0);
    /* a multiple of 64 bytes: with MPICH 4.0.2 (ch4:ucx) the atomics meant
     * for rank 1 of an MPI_Win_allocate window of 44, 52 or 56 bytes landed
     * elsewhere (48 and 64 were exact; measured, doc/lock.md "Progress") */
    S->winsize = (S->winsize + 63) & ~(MPI_Aint)63;
}

/* the initial state in the own window: nobody waits, nothing held */
static void init_local(struct sheaf_lock_set *S, char *base)
{
    memset(base, 0, (size_t)S->winsize);
    int nil = LK_NIL, word0 = (S->kind == SHEAF_LOCK_MCS || S->kind == SHEAF_LOCK_MCS_SWAP) ? LK_NIL : 0;
    memcpy(base + LK_OFF_GRANT, &nil, sizeof nil);
    for (int i = 0; i < S->nlocks; i++)
        memcpy(base + lk_next_off(i), &nil, sizeof nil);
    for (int s = 0; s < S->nslots; s++)
        memcpy(base + S->off_word + (MPI_Aint)s * (MPI_Aint)sizeof(int), &word0, sizeof word0);
}

static int make_window(struct sheaf_lock_set *S)
{
    char *base = NULL;
    int rc;
    if (S->shm) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        rc = MPI_Win_allocate_shared(S->winsize, 1, info, S->comm, &base, &S->win);
        MPI_Info_free(&info);
    } else {
        /* MPI_Win_allocate, not MPI_Win_create: Open MPI's one-sided
         * component for shared memory (osc/sm) serves only memory it allocates */
        rc = MPI_Win_allocate(S->winsize, 1, MPI_INFO_NULL, S->comm, &base, &S->win);
    }
    if (rc != MPI_SUCCESS)
        rc = lk_mpi_err(rc, "sheaf_lock_create: the window allocation (src/lock/set.c)");
    if ((rc = agree(S->comm, rc, NULL, 0, "sheaf_lock_create: the window allocation")))
        return rc;
    MPI_Win_set_errhandler(S->win, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, S->rank, 0, S->win);
    init_local(S, base);
    MPI_Win_unlock(S->rank, S->win);
    for (int r = 0; S->shm && r < S->size && !rc; r++) {
        MPI_Aint sz;
        int du;
        void *p = NULL;
        if (MPI_Win_shared_query(S->win, r, &sz, &du, &p) != MPI_SUCCESS || !p)
            rc = lk_err(SHEAF_LOCK_EMPI, "sheaf_lock_create: MPI_Win_shared_query(%d) failed (src/lock/set.c)", r);
        else
            S->peer[r] = p;
    }
    /* every rank's initial state is in place (this agreement is also the
     * barrier: it was an MPI_Barrier that a failed query skipped) */
    if ((rc = agree(S->comm, rc, NULL, 0, "sheaf_lock_create: the window set-up")))
        return rc;
    S->lock_all = !S->shm && S->kind != SHEAF_LOCK_FLAGS;
    if (S->lock_all && (rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, S->win)) != MPI_SUCCESS)
        return lk_mpi_err(rc, "MPI_Win_lock_all");
    return SHEAF_LOCK_OK;
}

static void destroy(struct sheaf_lock_set *S)
{
    if (S->win != MPI_WIN_NULL) {
        if (S->lock_all)
            MPI_Win_unlock_all(S->win);
        MPI_Win_free(&S->win);
    }
    if (S->comm != MPI_COMM_NULL)
        MPI_Comm_free(&S->comm);
    free(S->peer);
    free(S->held);
    free(S->flagbuf);
    free(S);
}

int sheaf_lock_create(MPI_Comm comm, const sheaf_lock_opts *opts, sheaf_lock_set **out)
{
    if (comm == MPI_COMM_NULL)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_create: comm is MPI_COMM_NULL (src/lock/set.c)");
    if (out)
        *out = NULL;
    struct sheaf_lock_set *S = calloc(1, sizeof *S);
    int rc = S ? SHEAF_LOCK_OK : lk_err(SHEAF_LOCK_ENOMEM, "sheaf_lock_create: out of memory (src/lock/set.c)");
    MPI_Comm dup = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS) {
        free(S);
        return lk_err(SHEAF_LOCK_EMPI, "sheaf_lock_create: MPI_Comm_dup failed (src/lock/set.c)");
    }
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    if (!rc)
        rc = check_opts(opts, out);
    rc = check_same(dup, opts, rc);
    if (rc) {
        MPI_Comm_free(&dup);
        free(S);
        return rc;
    }
    S->comm = dup;
    S->win = MPI_WIN_NULL;
    MPI_Comm_rank(dup, &S->rank);
    MPI_Comm_size(dup, &S->size);
    S->kind = opts->kind;
    S->nlocks = opts->nlocks;
    S->poll_min_us = opts->poll_backoff_min_us;
    S->poll_max_us = opts->poll_backoff_max_us;
    S->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)S->rank * 0x100000001b3ull + 1);
    rc = choose_progress(S, opts->progress);
    if (!rc) {
        layout(S);
        S->held = calloc((size_t)S->nlocks, 1);
        S->flagbuf = calloc((size_t)S->size, 1);
        S->peer = calloc((size_t)S->size, sizeof *S->peer);
        if (!S->held || !S->flagbuf || !S->peer)
            rc = lk_err(SHEAF_LOCK_ENOMEM, "sheaf_lock_create: out of memory for %d locks (src/lock/set.c)", S->nlocks);
    }
    rc = agree(S->comm, rc, NULL, 0, "sheaf_lock_create");
    if (!rc)
        rc = make_window(S);
    if (rc) {
        destroy(S);
        return rc;
    }
    *out = S;
    return SHEAF_LOCK_OK;
}

int sheaf_lock_free(sheaf_lock_set **set)
{
    if (!set || !*set)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_free: no lock set (src/lock/set.c)");
    struct sheaf_lock_set *S = *set;
    int64_t most = -(int64_t)S->nheld; /* the maximum over the ranks, negated */
    int rc = agree(S->comm, SHEAF_LOCK_OK, &most, 1, "sheaf_lock_free");
    if (rc)
        return rc;
    int busy = (int)-most;
    if (busy)
        return lk_err(SHEAF_LOCK_EBUSY,
                      "sheaf_lock_free: a rank still holds %d lock(s) of the set (this rank %d); "
                      "release them first (src/lock/set.c)",
                      busy, S->nheld);
    destroy(S);
    *set = NULL;
    return SHEAF_LOCK_OK;
}

static int check_id(const struct sheaf_lock_set *S, int id, const char *fn)
{
    if (!S)
        return lk_err(SHEAF_LOCK_EINVAL, "%s: lock set is NULL (src/lock/set.c)", fn);
    if (id < 0 || id >= S->nlocks)
        return lk_err(SHEAF_LOCK_ERANGE, "%s: lock id %d outside [0, %d) (src/lock/set.c)", fn, id, S->nlocks);
    return SHEAF_LOCK_OK;
}

int sheaf_lock_acquire(sheaf_lock_set *S, int id)
{
    int rc = check_id(S, id, "sheaf_lock_acquire");
    if (rc)
        return rc;
    if (S->held[id])
        return lk_err(SHEAF_LOCK_EHELD,
                      "sheaf_lock_acquire: rank %d already holds lock %d (not recursive) "
                      "(src/lock/set.c)",
                      S->rank, id);
    switch (S->kind) {
    case SHEAF_LOCK_FLAGS:
        rc = lk_flags_acquire(S, id);
        break;
    case SHEAF_LOCK_MCS:
    case SHEAF_LOCK_MCS_SWAP:
        rc = lk_mcs_acquire(S, id);
        break;
    case SHEAF_LOCK_POLL:
        rc = lk_poll_acquire(S, id);
        break;
    }
    if (rc)
        return rc;
    S->held[id] = 1;
    S->nheld++;
    S->st.acquires++;
    lk_hook(S, SHEAF_LOCK_HOOK_ACQUIRED, id);
    return SHEAF_LOCK_OK;
}

int sheaf_lock_release(sheaf_lock_set *S, int id)
{
    int rc = check_id(S, id, "sheaf_lock_release");
    if (rc)
        return rc;
    if (!S->held[id])
        return lk_err(SHEAF_LOCK_ENOTHELD,
                      "sheaf_lock_release: rank %d does not hold lock %d (never acquired "
                      "or already released) (src/lock/set.c)",
                      S->rank, id);
    switch (S->kind) {
    case SHEAF_LOCK_FLAGS:
        rc = lk_flags_release(S, id);
        break;
    case SHEAF_LOCK_MCS:
    case SHEAF_LOCK_MCS_SWAP:
        rc = lk_mcs_release(S, id);
        break;
    case SHEAF_LOCK_POLL:
        rc = lk_poll_release(S, id);
        break;
    }
    if (rc)
        return rc;
    S->held[id] = 0;
    S->nheld--;
    S->st.releases++;
    return SHEAF_LOCK_OK;
}

int sheaf_lock_home(const sheaf_lock_set *S, int id, int *rank, int *slot)
{
    int rc = check_id(S, id, "sheaf_lock_home");
    if (rc)
        return rc;
    if (rank)
        *rank = lk_home(S, id);
    if (slot)
        *slot = lk_slot(S, id);
    return SHEAF_LOCK_OK;
}

int sheaf_lock_held(const sheaf_lock_set *S, int id)
{
    int rc = check_id(S, id, "sheaf_lock_held");
    return rc ? rc : S->held[id];
}

int sheaf_lock_progress(sheaf_lock_set *S)
{
    if (!S)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_progress: lock set is NULL (src/lock/set.c)");
    int flag = 0;
    if (!S->shm && MPI_Iprobe(MPI_ANY_SOURCE, LK_TAG_WAKE + 1, S->comm, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return lk_err(SHEAF_LOCK_EMPI, "sheaf_lock_progress: MPI_Iprobe failed (src/lock/set.c)");
    return SHEAF_LOCK_OK;
}

sheaf_lock_progress_mode sheaf_lock_progress_used(const sheaf_lock_set *S)
{
    return S ? S->progress : SHEAF_LOCK_PROGRESS_AUTO;
}

sheaf_lock_kind sheaf_lock_kind_of(const sheaf_lock_set *S) { return S ? S->kind : (sheaf_lock_kind)0; }

int sheaf_lock_stats_get(const sheaf_lock_set *S, sheaf_lock_stats *out)
{
    if (!S || !out)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_stats_get: %s is NULL (src/lock/set.c)", S ? "out" : "set");
    *out = S->st;
    return SHEAF_LOCK_OK;
}

void sheaf_lock_stats_reset(sheaf_lock_set *S)
{
    if (S)
        memset(&S->st, 0, sizeof S->st);
}

int sheaf_lock_set_hook(sheaf_lock_set *S, sheaf_lock_hook_fn fn, void *arg)
{
    if (!S)
        return lk_err(SHEAF_LOCK_EINVAL, "sheaf_lock_set_hook: lock set is NULL (src/lock/set.c)");
    S->hook = fn;
    S->hook_arg = arg;
    return SHEAF_LOCK_OK;
}
