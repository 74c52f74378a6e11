/* ctx.h - the per-call context of a collective call of the parallel layer
 * (internal to src/par), and its structural failure agreement.
 *
 * One par_ctx lives on the stack of every task for the length of one
 * collective call (open, close, reinit, mapped open/close, buddy read). It
 * holds what every step needs (callbacks, groups, ranks, the set's name and
 * the call's name) and the task's FIRST failure: its code and its message,
 * saved at the moment it happened, so that later failures (cleanup, a
 * callback that fails after a local error) can neither replace the code nor
 * the message.
 *
 * The rules the steps follow (doc/parallel.md, "Errors"):
 *  - a step does its local work only while par_ctx_ok(), but makes every
 *    exchange call in any case (a failed task sends its status and
 *    zero-length or initial contributions), through par_ctx_gather & co.,
 *    which turn a failing callback into a failure of the context;
 *  - a status travels with the next message where the typed message has a
 *    status field (wire.h); where only a verdict is needed, par_ctx_agree
 *    (G gather of one status per task + G bcast of the verdict) ends the call:
 *    every task gets the code of the lowest-ranked failing task, the failing
 *    tasks their own first message, the others "<call> failed on task N (see
 *    its message)".
 *
 * Test hook: par_set_fault_hook installs a function asked at every named
 * step (par_ctx_step) whether this task fails there; tests/par uses it to
 * inject failures at each collective step on one or several tasks. */
#ifndef PAR_CTX_H
#define PAR_CTX_H
#include "par.h"
#include <stddef.h>

#define PAR_CTX_MSG 1024

typedef struct par_ctx {
    const par_api *api;
    const char *fname;   /* the set's name as given (messages) */
    const char *call;    /* "sion_generic_paropen", ... (messages) */
    const char *step;    /* the step being done (par_ctx_step) */
    void *gcomm, *lcomm; /* global group, local group (NULL before it exists) */
    int grank, gsize, lrank, lsize;
    int rc;                /* first failure (0: none) */
    char msg[PAR_CTX_MSG]; /* its message, saved when it happened */
} par_ctx;

void par_ctx_init(par_ctx *x, const par_api *api, const char *fname, const char *call, void *gcomm, int grank,
                  int gsize);
static inline int par_ctx_ok(const par_ctx *x) { return x->rc == 0; }
/* Record a failure (printf-style message, naming the set) unless one is
 * recorded already; returns the context's code. */
int par_ctx_fail(par_ctx *x, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A verdict every task received (code < 0): a task that failed before keeps
 * its message and takes the code; the others get this message. */
int par_ctx_verdict(par_ctx *x, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Record rc (< 0) of a callee that has set the thread's message; 0 changes
 * nothing. Returns the context's code. */
int par_ctx_take(par_ctx *x, int rc);
/* Enter step `step` (a name from doc/parallel.md); the fault hook may fail
 * the task here. Returns par_ctx_ok(). */
int par_ctx_step(par_ctx *x, const char *step);
/* Make the thread's message the context's first failure again (after
 * cleanup that may have overwritten it); returns the code. */
int par_ctx_restore(const par_ctx *x);

/* The exchange calls. local != 0: over the local group, else the global one.
 * Always called; a callback that reports failure fails the context (the
 * data it delivered are used all the same). Return 0 or 1 (callback failed).
 * par_ctx_gather: out may be NULL on any task; on the root that means its
 * receive buffer could not be allocated (par_root_malloc; the context fails
 * with SHEAF_E_NOMEM if nothing failed before): it receives into the reserve
 * below and drops the data. par_ctx_scatter: in may be NULL in the same
 * way (the root's records could not be made): the others receive records
 * whose status (first field) says SHEAF_E_NOMEM, the other fields 0. */
int par_ctx_gather(par_ctx *x, int local, void *in, void *out, int type, int n, int root);
int par_ctx_gatherv(par_ctx *x, int local, void *in, void *out, int type, int *counts, int n, int root);
int par_ctx_scatter(par_ctx *x, int local, void *in, void *out, int type, int n, int root);
int par_ctx_scatterv(par_ctx *x, int local, void *in, void *out, int type, int *counts, int n, int root);
int par_ctx_bcast(par_ctx *x, int local, void *data, int type, int n, int root);

/* The agreement over the global group (1 G gather + 1 G bcast): 0 on every
 * task when no task failed; otherwise the code of the lowest-ranked failing
 * task on every task, with the messages described above; the verdict
 * becomes the context's failure (par_ctx_restore after cleanup). */
int par_ctx_agree(par_ctx *x);
/* The same exchange as a vote inside a call: the verdict (non-zero: the same
 * on every task); a failure of this task's own callback that the others
 * cannot know of is recorded in the context and the call goes on (0). */
int par_ctx_vote(par_ctx *x);

/* Gathers whose root is out of memory (rootbuf.c). A root whose receive
 * buffer cannot be allocated still takes part: it receives into a slot of a
 * reserve in static storage (4 slots of 2 MiB, taken without waiting) and
 * fails the call. Only when the receive is larger than a slot or every slot
 * is in use by another root of the process at that moment does it skip the
 * callback (*skipped = 1, returns 1): the others then wait for it, where the
 * callback would otherwise write past a buffer (doc/parallel.md, "Limits").
 * am_root: this task is the root; members: tasks of the group. Returns 0, or
 * 1 when the callback failed or was skipped. */
int par_gather_root_safe(const par_api *api, void *group, void *in, void *out, int type, int n, int root, int am_root,
                         int members, int *skipped);
/* The same for a scatter whose root has no send buffer (in NULL): it sends
 * records of status SHEAF_E_NOMEM (first field), the other fields 0. */
int par_scatter_root_safe(const par_api *api, void *group, void *in, void *out, int type, int n, int root, int am_root,
                          int members, int *skipped);
/* The allocation of a gather root's receive buffer (malloc, or NULL when the
 * test hook says so). `what` names the buffer (the step). */
void *par_root_malloc(size_t bytes, const char *what);
/* A root's buffers that the steps after a gather need (rootbuf.c): each
 * from the heap (par_root_malloc), else carved from one reserve slot held
 * by m; short_of_memory is set then (the call must fail, the exchanges can
 * still be made with the right sizes). NULL when neither has room. */
typedef struct par_rootmem {
    int slot;            /* the reserve slot held (-1: none) */
    size_t used;         /* bytes of it handed out */
    int short_of_memory; /* an allocation did not come from the heap */
} par_rootmem;
void par_rootmem_init(par_rootmem *m);
void *par_rootmem_alloc(par_rootmem *m, size_t bytes, const char *what); /* zeroed */
void par_rootmem_free(par_rootmem *m, void *p);
void par_rootmem_end(par_rootmem *m); /* gives the slot back (after the last use) */
/* Test hook: return non-zero to make par_root_malloc(bytes, what) fail on the
 * calling thread. NULL: none. */
typedef int (*par_alloc_fault_fn)(const char *what);
void par_set_alloc_fault_hook(par_alloc_fault_fn fn);

/* Test hook: return 0 to go on, or a code (< 0) and a message (msg, len
 * bytes) to fail task grank at `step` of `call`. NULL: none. */
typedef int (*par_fault_fn)(const char *call, const char *step, int grank, char *msg, size_t len);
void par_set_fault_hook(par_fault_fn fn);
#endif
