/* dache_coll.c - DACHe's own collectives in the shared-memory progress mode,
 * a sheaf_comm_ops implementation (include/sheaf_comm.h: rank, size,
 * barrier, bcast, allmin; no reduce or split) over a small area of rank 0's
 * slot window whose waiters sleep on a futex. While DACHe's windows live the
 * handle's collectives are these (fh->coll = dc_comm(d)), so sheaf_comm_agree
 * runs over them as it runs over MPI (agree.c); d_allreduce and d_barrier
 * are fh->coll's, whichever it is.
 *
 * Why: on a node with more ranks than cores, MPICH's collectives busy-poll,
 * so a barrier or an allreduce costs scheduler time slices (20-110 ms per
 * call measured at 8 ranks on 2 cores) while the ranks that already arrived
 * spin. The flush at every sync and close needs two of them and the
 * agreement on the result a third. In shared memory a rank that arrives
 * adds itself to the round's count and sleeps; the last one computes the
 * result and wakes them (one futex wake): a few microseconds of work.
 *
 * Rounds: `gen` counts them. A rank reads gen (round g), writes its k <=
 * DC_K values to val[g & 1][rank] and counts itself in; the last arriver
 * reduces val[g & 1][0..P) into res[g & 1] (element-wise minimum), sets
 * arrived back to 0 and publishes gen = g + 1 (release), then wakes the
 * sleepers. The others wait until gen differs from g and read res[g & 1].
 * val, res and msg of parity g & 1 are written again only in round g + 2,
 * which no rank enters before every rank has arrived in round g + 1, i.e.
 * read round g's result. A bcast is a round whose root wrote msg[g & 1]
 * before arriving (gen cannot pass g before the root arrives, so the root
 * knows g). Every rank calls the same sequence of these collectives with the
 * same counts (as with MPI). An allmin of n > DC_K values takes
 * ceil(n / DC_K) rounds; sheaf_comm_agree's one value (more when a failure's
 * message travels as values) takes one. */
#define _GNU_SOURCE /* syscall() */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stddef.h>
#include <time.h>
#include "dache_impl.h"
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define DC_SPIN 256      /* checks before sleeping (a round on idle cores takes about this long) */
#define DC_NAP_NS 200000 /* 200 us naps: MPI progress at least that often while waiting */

#define DC_K 8      /* values per rank and round */
#define DC_MSG 1024 /* bytes a bcast carries (sheaf_comm_agree's messages are < SHEAF_COMM_MSGLEN) */

struct dc_area {
    uint32_t gen, arrived;
    int64_t shfp; /* the handle's shared file pointer (shared.c, through mio_cache_ops.shared_word) */
    int64_t res[2][DC_K];
    uint64_t mlen[2]; /* bcast: the root's length, UINT64_MAX when it could not send */
    char msg[2][DC_MSG];
    int64_t val[]; /* [2][P][DC_K] */
};

size_t dc_bytes(int P)
{
    return (offsetof(struct dc_area, val) + sizeof(int64_t) * 2 * (size_t)P * DC_K + 63) & ~(size_t)63;
}

void dc_init(void *area)
{
    struct dc_area *a = area;
    a->gen = a->arrived = 0;
    a->shfp = 0;
}

int64_t *dc_shared_word(void *area) { return area ? &((struct dc_area *)area)->shfp : NULL; }

static void dc_wake(uint32_t *w)
{
#if defined(__linux__) && defined(SYS_futex)
    syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
#else
    (void)w;
#endif
}

/* until *w != seen: spin, then sleep in short bounded naps; after every nap
 * that was not a wake-up, poke MPI's progress engine: a rank waiting here
 * is inside a collective MPI-IO call, and one-sided operations other ranks
 * aim at it (the shared file pointer's window over RMA, the user's own
 * windows) must complete meanwhile, as they would in an MPI collective */
static void dc_wait(dache *d, uint32_t *w, uint32_t seen)
{
    for (int i = 0; i < DC_SPIN; i++) {
        if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != seen)
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == seen) {
#if defined(__linux__) && defined(SYS_futex)
        struct timespec ts = {0, DC_NAP_NS}; /* woken, timed out, EAGAIN or EINTR: re-check */
        syscall(SYS_futex, w, FUTEX_WAIT, seen, &ts, NULL, 0);
#else
        sched_yield();
#endif
        if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != seen)
            return;
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d->comm, &flag, MPI_STATUS_IGNORE);
    }
}

/* one round: v[0..k) in, their minimum over the ranks in out[0..k); returns g */
static uint32_t dc_round(dache *d, struct dc_area *a, const int64_t *v, int64_t *out, int k)
{
    int P = d->P;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* like MPI's: what was written before is seen after */
    uint32_t g = __atomic_load_n(&a->gen, __ATOMIC_ACQUIRE);
    int64_t *val = a->val + (size_t)(g & 1) * (size_t)P * DC_K;
    for (int i = 0; i < k; i++)
        __atomic_store_n(&val[(size_t)d->rank * DC_K + i], v[i], __ATOMIC_RELAXED);
    if (__atomic_add_fetch(&a->arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t)P) {
        for (int i = 0; i < k; i++) {
            int64_t r = val[i];
            for (int q = 1; q < P; q++) {
                int64_t x = val[(size_t)q * DC_K + i];
                if (x < r)
                    r = x;
            }
            __atomic_store_n(&a->res[g & 1][i], r, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&a->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&a->gen, g + 1, __ATOMIC_RELEASE);
        dc_wake(&a->gen);
    } else {
        dc_wait(d, &a->gen, g);
    }
    for (int i = 0; i < k; i++)
        out[i] = __atomic_load_n(&a->res[g & 1][i], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return g;
}

/* ---- the sheaf_comm_ops on the area (c->impl: the dache) ---- */
static dache *D(const sheaf_comm *c) { return c->impl; }
static int dc_rank(const sheaf_comm *c) { return D(c)->rank; }
static int dc_size(const sheaf_comm *c) { return D(c)->P; }

static int dc_barrier(sheaf_comm *c)
{
    dc_round(D(c), D(c)->coll, NULL, NULL, 0);
    return 0;
}

static int dc_allmin(sheaf_comm *c, int64_t *v, int n)
{
    if (n < 1 || n > 64)
        return sheaf_comm_error(SHEAF_COMM_EINVAL,
                                "DACHe collectives: allmin of %d values "
                                "(src/mpiio/dache_coll.c)",
                                n);
    for (int i = 0; i < n; i += DC_K) {
        int k = n - i < DC_K ? n - i : DC_K;
        dc_round(D(c), D(c)->coll, v + i, v + i, k);
    }
    return 0;
}

/* the root copies into msg[g & 1] before it arrives; the others copy out */
static int dc_bcast(sheaf_comm *c, void **buf, size_t *len, size_t maxlen, int root)
{
    dache *d = D(c);
    struct dc_area *a = d->coll;
    int me = d->rank == root;
    if (me) {
        uint32_t g = __atomic_load_n(&a->gen, __ATOMIC_ACQUIRE);
        uint64_t L = (*len <= maxlen && *len <= DC_MSG && (*buf || !*len)) ? *len : UINT64_MAX;
        if (L != UINT64_MAX && L)
            memcpy(a->msg[g & 1], *buf, L);
        a->mlen[g & 1] = L;
    }
    uint32_t g = dc_round(d, a, NULL, NULL, 0);
    uint64_t L = a->mlen[g & 1];
    if (root < 0 || root >= d->P || L == UINT64_MAX)
        return sheaf_comm_error(SHEAF_COMM_ELIMIT,
                                "DACHe collectives: bcast from rank %d of more than %zu bytes "
                                "or from nowhere (src/mpiio/dache_coll.c)",
                                root, maxlen < DC_MSG ? maxlen : (size_t)DC_MSG);
    if (me)
        return 0;
    char *p = malloc(L ? L : 1);
    if (!p)
        return sheaf_comm_error(SHEAF_COMM_ENOMEM, "DACHe collectives: bcast: out of memory (src/mpiio/dache_coll.c)");
    memcpy(p, a->msg[g & 1], L);
    *buf = p;
    *len = L;
    return 0;
}

static int dc_reduce_none(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out,
                          size_t *outlen, int root)
{
    (void)c, (void)in, (void)len, (void)op, (void)outlen, (void)root;
    if (out)
        *out = NULL;
    return sheaf_comm_error(SHEAF_COMM_EINVAL, "DACHe collectives: no reduce (src/mpiio/dache_coll.c)");
}

static int dc_split_none(sheaf_comm *c, int color, int key, sheaf_comm *out)
{
    (void)c, (void)color, (void)key;
    if (out)
        out->ops = NULL, out->impl = NULL;
    return sheaf_comm_error(SHEAF_COMM_EINVAL, "DACHe collectives: no split (src/mpiio/dache_coll.c)");
}

static void dc_free_none(sheaf_comm *c) { (void)c; } /* the area is DACHe's slot window */

static const sheaf_comm_ops dc_ops = {dc_rank,        dc_size,       dc_barrier,   dc_bcast,
                                      dc_reduce_none, dc_split_none, dc_free_none, dc_allmin};

sheaf_comm *dc_comm(dache *d)
{
    d->sc.ops = &dc_ops;
    d->sc.impl = d;
    return &d->sc;
}

int64_t d_allreduce(dache *d, int64_t v, int op) { return mio_allreduce(d->fh, v, op == DC_MAX); }

void d_barrier(dache *d) { sheaf_comm_barrier(d->fh->coll); }
