/* threadcomm.h - an in-process communication layer for the generic parallel
 * API (sion_generic.h) where every task is a pthread. Test code only.
 *
 * A "world" is the global group of P threads (tc_run() creates it and starts
 * the threads). Each thread sees its groups through its own handle
 * (tc_handle: shared group state + the thread's rank in it), as an MPI
 * process sees a communicator; the handles are what sheaf gets as
 * gcommgroup / local group. Collectives go through a shared buffer sized per
 * call: arguments are published and checked (same operation, root,
 * datatype and, where required, count on every member), the data is copied
 * into the buffer and out again, with a barrier between the phases.
 *
 * Every callback counts its invocations per operation and per group kind
 * (global / local) in thread-local counters (tc_counts_get/reset), so a
 * test asserts exact numbers per task. Protocol violations (mismatched
 * collectives, bad datatype, gatherv/scatterv counts that disagree with the
 * root's) are recorded (tc_violations) and make the callback return 1. A
 * collective that does not complete within TC_TIMEOUT seconds (env, default
 * 20) prints the state of the group and ends the process with exit code 3:
 * a hang is reported, not waited for. */
#ifndef THREADCOMM_H
#define THREADCOMM_H
#include <stddef.h>

enum { TC_GLOBAL = 0, TC_LOCAL = 1, TC_NKIND = 2 };
enum {
    TC_CREATE = 0, /* create_local_commgroup (counted under TC_GLOBAL: it gets the global group) */
    TC_FREE,       /* free_local_commgroup (counted under TC_LOCAL) */
    TC_BARRIER,
    TC_BCAST,
    TC_GATHER,
    TC_GATHERV,
    TC_SCATTER,
    TC_SCATTERV,
    TC_NOP
};
extern const char *const tc_op_names[TC_NOP];

typedef struct {
    long n[TC_NKIND][TC_NOP];
} tc_counts;

/* Largest number of bytes the calling thread sent or received in one
 * collective callback (a root counts the whole buffer) since the reset:
 * shows the memory a task needs for the exchanges. */
size_t tc_maxbytes_get(void);
void tc_maxbytes_reset(void);

/* The calling thread's counters since its last reset. */
tc_counts tc_counts_get(void);
void tc_counts_reset(void);
/* a - b, element-wise */
tc_counts tc_counts_diff(tc_counts a, tc_counts b);
/* "global: 2 gather 2 bcast; local: 1 gather 1 scatter" (zeros omitted) */
void tc_counts_str(const tc_counts *c, char *buf, size_t len);

typedef struct tc_shared tc_shared;
typedef struct tc_handle {
    tc_shared *sh;
    int rank;
} tc_handle;

/* Per-thread context handed to the task function of tc_run. */
typedef struct tc_task {
    tc_handle *world; /* the global group handle (pass as gcommgroup) */
    int grank, gsize;
    void *arg;
} tc_task;

/* Run fn on P threads (task ranks 0..P-1) over a fresh world; waits for all.
 * Returns 0, or -1 if the threads could not be started. */
int tc_run(int P, void (*fn)(tc_task *), void *arg);

/* Size of a group and the caller's rank in it (-1 for NULL). */
int tc_group_size(void *group);
int tc_group_rank(void *group);

/* Register the STD callbacks of this layer on api object aid.
 * Returns 0 on success, -1 if a registration failed. */
int tc_register(int aid);
/* Create an API object named `name` with the STD callbacks registered. */
int tc_create_api(const char *name);
/* Also register gather_and_execute / execute_and_scatter (the FULL level of
 * collective I/O; buddy copies need the first): a gather of every task's
 * (data, spec) and the collector calling process for senders first..last.
 * Returns 0, or -1. */
int tc_register_coll(int aid);

/* Test helper: a barrier over the world that is NOT counted (used by tests
 * between phases; the library's own barrier calls are counted). */
void tc_sync(tc_task *t);
/* Exchange among all tasks of the world (uncounted): every task contributes
 * `len` bytes, and gets everyone's contributions in all[P*len]. */
void tc_allgather(tc_task *t, const void *mine, void *all, size_t len);

/* Fault injection: the nth call (counted per thread since its tc_run
 * started) of callback `op` on a group of `kind` by world rank world_rank
 * still exchanges its data but returns failure (1), as a failing MPI call
 * would report. One injection at a time; tc_inject_fired() says whether it
 * happened. */
void tc_inject_failure(int kind, int op, long nth, int world_rank);
void tc_inject_clear(void);
/* create_local_commgroup fails on every world rank (< 32) in `mask` at the
 * rank's nth call of it since its tc_run started: the task joins the group
 * but reports failure and gets no handle (mask 0: none). Independent of
 * tc_inject_failure (which fails one call on one task). */
void tc_inject_create(unsigned mask, long nth);
int tc_inject_fired(void);

/* Local groups still alive when the last tc_run ended (created by
 * create_local_commgroup, never freed). A leak is a protocol violation
 * unless tc_set_leak_check(0). */
int tc_last_leaked(void);
void tc_set_leak_check(int on);

/* Number of protocol violations seen so far (all threads), and the first
 * message ("" if none). */
int tc_violations(void);
const char *tc_first_violation(void);

/* The raw callbacks (also usable directly). */
int tc_create_lcg(void **local_group, void *global_group, int grank, int gsize, int lrank, int lsize, int filenumber,
                  int numfiles);
int tc_free_lcg(void *local_group);
int tc_barrier(void *group);
int tc_bcast(void *data, void *group, int datatype, int nelem, int root);
int tc_gather(void *in, void *out, void *group, int datatype, int nelem, int root);
int tc_gatherv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root);
int tc_scatter(void *in, void *out, void *group, int datatype, int nelem, int root);
int tc_scatterv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root);
#endif
