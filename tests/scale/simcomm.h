/* simcomm.h - a simulated communication layer for the generic parallel API
 * (sion_generic.h): P tasks as user-level threads in ONE OS thread, so that
 * the real protocol of sheaf (sion_generic_paropen / parclose, unchanged,
 * through registered callbacks) runs at 10^3 .. 10^6 tasks in one process.
 * Test and benchmark code only (tests/scale/README.md says why this design).
 *
 * Tasks: ucontext (makecontext / swapcontext), each on its own stack carved
 * out of one MAP_NORESERVE region (only the pages a task touches cost
 * memory; no guard pages, which would take 2 kernel mappings per task and hit
 * vm.max_map_count at ~32 k tasks). A scheduler runs the ready tasks in FIFO
 * order; a task runs until it enters a collective callback that cannot
 * complete yet (not all members of the group have arrived), then the next
 * ready task runs. The last member to arrive completes the collective and
 * makes the others ready.
 *
 * Data: every collective is an instance with its own buffer. A member copies
 * what it sends into the instance when it arrives and copies what it receives
 * out when it runs again, so a task's buffers are only touched while that
 * task runs (as with MPI, where each process owns its memory).
 *
 * Per-thread library state: sheaf keeps the last error (code and message)
 * thread-locally (src/core/error.c); all tasks share this OS thread, so the
 * scheduler saves it (and errno) when a task is switched out and restores it
 * when it is switched in: each simulated task sees its own error state, as an
 * MPI process would. Saving reads the public sheaf_last_error*(); restoring
 * needs the library's internal setter (core_fail / core_clear_error), the
 * only non-public symbol this layer uses, and only for this swap. Saved
 * state costs nothing for tasks without an error.
 *
 * Accounting per task (sim_stats): callbacks per operation and group kind,
 * bytes handed to (sent) and received from the layer in the callbacks
 * (buffer payload, independent of the algorithm a real layer would use: a
 * gather's root receives all members' data, its members send their own; a
 * scatter's root sends all), the largest single buffer of one callback, time
 * the task ran, and (with memcount.c) heap bytes allocated while the task
 * ran. */
#ifndef SIMCOMM_H
#define SIMCOMM_H
#include <stddef.h>
#include <stdint.h>

enum { SIM_GLOBAL = 0, SIM_LOCAL = 1, SIM_NKIND = 2 };
enum { SIM_CREATE = 0, SIM_FREE, SIM_BARRIER, SIM_BCAST, SIM_GATHER, SIM_GATHERV, SIM_SCATTER, SIM_SCATTERV, SIM_NOP };
extern const char *const sim_op_names[SIM_NOP];

/* Heap account: bytes live and the peak since the last sim_mem_reset. */
typedef struct sim_acct {
    int64_t live, peak;
} sim_acct;
/* The account charged by the malloc hook (memcount.c), NULL: nobody. */
extern sim_acct *sim_cur_acct;
/* 1 when memcount.c is linked in (heap numbers are meaningful). */
extern const int sim_mem_hooked;

typedef struct sim_stats {
    long calls[SIM_NKIND][SIM_NOP];
    int64_t sent, recv; /* bytes through the callbacks */
    int64_t maxbuf;     /* largest buffer of one callback (send or receive) */
    int64_t busy_ns;    /* time this task ran: CPU time (user + system) when sim_task.cpu_time */
} sim_stats;

/* Optional per-call log of one task (e.g. task 0): group kind, operation and
 * the larger of the bytes it sent / received in that call. */
typedef struct sim_call {
    int kind, op;
    int64_t bytes;
} sim_call;
typedef struct sim_log {
    int n, cap;
    sim_call *c;
} sim_log;

typedef struct sim_handle sim_handle;

typedef struct sim_task {
    int rank, size;
    sim_handle *world; /* the global group: pass as gcommgroup */
    void *arg;
    sim_stats st; /* reset by the task as it likes */
    sim_acct mem; /* charged while the task runs */
    sim_log *log; /* NULL, or where this task's calls are logged */
    int cpu_time; /* 1: st.busy_ns is CPU time (a system call per switch, ~1-4 us here);
                        * 0: elapsed time of its slices (vDSO clock; includes time the OS
                        * gave to other processes) */
} sim_task;

typedef struct sim_run_info {
    size_t stack_bytes;        /* virtual stack per task */
    int64_t stack_max_touched; /* largest number of stack bytes a task touched (mincore) */
    double stack_mean_touched;
    int64_t switches;   /* context switches */
    sim_acct layer_mem; /* the layer's own buffers (collective instances, groups) */
    int64_t depth_max;  /* deepest stack of a task waiting in a collective (bytes) */
    double depth_mean;

} sim_run_info;

/* Run fn as P tasks (ranks 0..P-1) with stack_bytes of stack each; returns
 * when all have returned: 0, or -1 (no memory). A deadlock (ready queue
 * empty, tasks waiting) or a protocol violation (members of a collective
 * disagree on operation, root, datatype or counts) prints the state and
 * ends the process with exit code 3. info may be NULL. */
int sim_run(int P, size_t stack_bytes, void (*fn)(sim_task *), void *arg, sim_run_info *info);
/* 1: when a task waits, release its stack pages below the stack pointer
 * (madvise), so resident stack = depth at the wait, not the deepest call
 * ever made (for runs of 10^5+ tasks; costs one system call per switch). */
extern int sim_trim_stacks;
/* Nonzero: all tasks run on one run stack of stack_bytes; a waiting task
 * keeps a heap copy of the bytes its stack uses (its depth + 256 B), so
 * memory per task is its depth, not the pages its stack ever touched
 * (10^6 tasks: doc/scale.md). stack_max/mean_touched then give the saved
 * bytes. */
extern int sim_copy_stacks;
/* The running task (NULL in the scheduler). */
sim_task *sim_self(void);

/* Uncounted barrier over all tasks (test phases). When it completes the tasks
 * resume in DESCENDING order of key (e.g. a sid): see the README on the sid
 * registry. Returns the time (CLOCK_MONOTONIC, s) at which it completed. */
double sim_sync(sim_task *t, int64_t key);

/* CPU time of the process (user + system, s) when the last sim_sync completed. */
extern double sim_sync_cpu;

/* Register the callbacks on API object aid (STD level). 0 or -1. */
int sim_register(int aid);
/* Seconds, CLOCK_MONOTONIC. */
double sim_now(void);
#endif
