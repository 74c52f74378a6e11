/* sheaf_comm.h - sheaf's collective layer (libsheaf_comm, no MPI).
 *
 * One small interface for every part of sheaf that needs collectives
 * outside SIONlib's callback protocol (FGFS, checkpoints, the MPI-IO layer,
 * the lock managers, the MPI binding's own agreements, the loader's
 * servers): rank, size, barrier, bcast, reduce with an operator, split, an
 * all-reduce of int64 minima, and one `agree`.
 *
 * Three implementations share it: MPI (sheaf_comm_mpi.h, libsheaf_comm_mpi),
 * an in-process simulator (sheaf_comm_sim_run below: P coroutines in one
 * thread, 10^5+ processes in a test) and the loader's overlay (a tree of
 * servers over TCP, src/loader/policy.c). A new one fills in a
 * sheaf_comm_ops table.
 *
 * Error codes: one sign across sheaf. 0 is success, every failure is a
 * negative code; SHEAF_COMM_E* below are this layer's. sheaf_comm_agree
 * treats ANY non-zero status as a failure, whatever its sign, so no caller
 * has to choose MIN or MAX by hand.
 *
 * Collective calls: every member of the communicator makes the same calls
 * in the same order; a failure of a collective call is reported on every
 * member (sheaf's implementations do; a new implementation must). The
 * message of the last failure of this layer in the calling thread:
 * sheaf_comm_last_error(). Thread-safety: a communicator is used by one
 * thread at a time; the functions keep no global state (except the
 * simulator, which is not reentrant within one thread). */
#ifndef SHEAF_COMM_H
#define SHEAF_COMM_H

#include <stddef.h>
#include <stdint.h>
#include "sheaf_export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHEAF_COMM_OK 0
#define SHEAF_COMM_EINVAL -1  /* bad argument or misuse */
#define SHEAF_COMM_ENOMEM -2  /* out of memory */
#define SHEAF_COMM_EIO -3     /* the system refused */
#define SHEAF_COMM_ECOMM -5   /* the collective layer failed or was misused */
#define SHEAF_COMM_ELIMIT -6  /* a bound was exceeded (message size) */
#define SHEAF_COMM_EREMOTE -7 /* another member failed; the message names its rank */

/* Message of the last failure in this thread (never NULL). Thread-safe. */
SHEAF_API const char *sheaf_comm_last_error(void);
/* Record a message for the last failure in this thread and return code:
 * for implementations of the interface that live outside the library.
 * Thread-safe. */
SHEAF_API int sheaf_comm_error(int code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A reduction operator on byte strings: combine(a, b) -> out, with a from
 * the lower ranks. Must be associative; out has room for max_len bytes.
 * Returns 0, or non-zero to fail the reduction (e.g. bound exceeded). */
typedef struct sheaf_comm_op {
    const char *name;
    size_t max_len; /* bound on every partial result (message size) */
    int (*combine)(const void *a, size_t alen, const void *b, size_t blen, void *out, size_t *outlen, void *arg);
    void *arg;
} sheaf_comm_op;

typedef struct sheaf_comm sheaf_comm;

/* An implementation. Each function is collective over the communicator
 * (rank/size excepted) and returns 0 or a negative code; a failure must be
 * reported on every member. */
typedef struct sheaf_comm_ops {
    int (*rank)(const sheaf_comm *c);
    int (*size)(const sheaf_comm *c);
    int (*barrier)(sheaf_comm *c);
    /* root: *buf and *len in (len <= maxlen); others: *buf out (malloc'd,
     * the caller frees) and *len out. maxlen is the same on every member.
     * MPI: one MPI_Allreduce up to 4 KiB, else 2 MPI_Allreduce + 1 MPI_Bcast. */
    int (*bcast)(sheaf_comm *c, void **buf, size_t *len, size_t maxlen, int root);
    /* in/len from every member (len <= op->max_len); at root *out
     * (malloc'd) and *outlen receive the reduction, elsewhere *out = NULL. */
    int (*reduce)(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out, size_t *outlen,
                  int root);
    /* members with the same color (< 0: none) form a new communicator
     * ordered by (key, rank); *out is filled in (free it with free_comm;
     * color < 0: out->impl is NULL). */
    int (*split)(sheaf_comm *c, int color, int key, sheaf_comm *out);
    void (*free_comm)(sheaf_comm *c);
    /* Optional (NULL: built from reduce + bcast). v[0..n) in: this member's
     * values; out: the element-wise minimum over all members, on every
     * member. One message round trip (MPI: one MPI_Allreduce). */
    int (*allmin)(sheaf_comm *c, int64_t *v, int n);
} sheaf_comm_ops;

struct sheaf_comm {
    const sheaf_comm_ops *ops;
    void *impl;
};

/* The calls, dispatched through c->ops (c must not be NULL). */
SHEAF_API int sheaf_comm_rank(const sheaf_comm *c);
SHEAF_API int sheaf_comm_size(const sheaf_comm *c);
SHEAF_API int sheaf_comm_barrier(sheaf_comm *c);
SHEAF_API int sheaf_comm_bcast(sheaf_comm *c, void **buf, size_t *len, size_t maxlen, int root);
SHEAF_API int sheaf_comm_reduce(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out,
                                size_t *outlen, int root);
/* reduce to rank 0, then bcast: *out (malloc'd) on every member. The result
 * must not be empty (an empty one reports the failure). ECOMM on every
 * member when either step failed. Cost: 1 reduce + 1 bcast. */
SHEAF_API int sheaf_comm_allreduce(sheaf_comm *c, const void *in, size_t len, const sheaf_comm_op *op, void **out,
                                   size_t *outlen);
/* Element-wise minimum of n int64 (1 <= n <= 64) on every member (for a
 * maximum, pass negated values). Cost: ops->allmin, else 1 reduce + 1
 * bcast. */
SHEAF_API int sheaf_comm_allmin(sheaf_comm *c, int64_t *v, int n);
SHEAF_API int sheaf_comm_split(sheaf_comm *c, int color, int key, sheaf_comm *out);
/* Frees what split (or an implementation's constructor) made; NULL and an
 * empty communicator (impl NULL) are fine. */
SHEAF_API void sheaf_comm_free(sheaf_comm *c);

/* ------------------------------------------------------------------ */
/* Agreement: a collective call succeeds on every member or fails on every
 * member, with the first failure's code and message. */

#define SHEAF_COMM_MSGLEN 448 /* message bytes carried, with the final NUL */

typedef struct sheaf_comm_agreement {
    int code;                    /* 0, or the code of the lowest-ranked failing member */
    int rank;                    /* that member's rank; -1 when none failed */
    char msg[SHEAF_COMM_MSGLEN]; /* its message ("" when none failed) */
} sheaf_comm_agreement;

/* Every member passes its status rc (0: fine; any non-zero value, whatever
 * its sign: failed) and, when it failed, a message (NULL: none). vals
 * (n values, 0 <= n <= 62; NULL when n is 0) are reduced to their
 * element-wise minimum on every member in the same exchange (negate for a
 * maximum): parameters that must agree travel with the status.
 *
 * Returns on every member the same value: 0 when every member was fine,
 * else the code of the lowest-ranked failing member ("first failure wins").
 * out (may be NULL) receives that code, the rank and its message. Every
 * member makes every exchange whatever happened before.
 * Cost: one allmin of n+1 values when all are fine; one allmin more
 * when one failed (every member knows that from the first), which carries
 * the message: no allocation anywhere, so an agreement on running out of
 * memory still works. Over MPI: one MPI_Allreduce, or two.
 * When the layer itself fails, SHEAF_COMM_ECOMM on every member that sees
 * it (an MPI implementation: on every member, since its collectives are). */
SHEAF_API int sheaf_comm_agree(sheaf_comm *c, int rc, const char *msg, int64_t *vals, int n, sheaf_comm_agreement *out);

/* ------------------------------------------------------------------ */
/* In-process simulation: run fn(world, rank, arg) for nprocs simulated
 * processes as coroutines in the calling thread (stack_kib KiB of stack
 * each, 0: 64). Collectives complete when every member has entered them;
 * they are executed as binomial trees and counted. A deadlock (a member
 * returned early or waits in another call) or a mismatch (different
 * operations or roots) fails the collectives involved (ECOMM), never hangs.
 * Returns 0 when every fn returned 0, else the first non-zero value
 * (ENOMEM when the processes cannot be created). Memory: the stacks
 * (mapped lazily) plus the messages. Not reentrant within one thread. */
typedef struct sheaf_comm_sim_stats {
    long collectives; /* completed collective calls (each counted once) */
    long reduces, bcasts, splits, barriers;
    long rounds;    /* sum over collectives of ceil(log2 members) */
    size_t max_msg; /* largest message between two processes (bytes) */
    long allmins;   /* allmin calls (each counted once; one round trip) */
} sheaf_comm_sim_stats;
SHEAF_API int sheaf_comm_sim_run(int nprocs, size_t stack_kib, int (*fn)(sheaf_comm *world, int rank, void *arg),
                                 void *arg, sheaf_comm_sim_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
