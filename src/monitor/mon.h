/* mon.h - the writer side of the monitor (in every monitored process):
 * the bounded table of file records (table.c), the descriptor slots, the log
 * (log.c). Used by the interposition wrappers (preload.c, preload_stdio.c). */
#ifndef MON_MON_H
#define MON_MON_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "record.h"

/* descriptors past this are not tracked (their operations are not counted) */
#define MON_FD_MAX 65536

typedef struct mon_frec {
    uint64_t c[MC_N];
    uint64_t read_end, write_end; /* end offset of the last read / write (sequential, consecutive) */
    uint32_t id, kind;
    uint32_t tgt; /* storage target index (target.c), fixed when the record is made */
    int last_rw;  /* 1 read, 2 write, 0 none yet */
    int dirty;    /* changed since the last snapshot */
    int named;    /* its NAME records are in the log */
    char *name;
} mon_frec;

typedef struct mon_fd {
    mon_frec *rec; /* NULL: not tracked */
    uint64_t pos;  /* the descriptor's offset as the wrappers follow it */
} mon_fd;

/* the process's monitor state */
typedef struct mon_state {
    int on;         /* monitoring enabled (SHEAF_MONITOR set and init succeeded) */
    char dir[1024]; /* the job's log directory */
    uint32_t max_files, max_dirs;
    uint64_t interval_ns, align;
    uint64_t align_mask;    /* align - 1 when align is a power of two, else 0 */
    mon_frec *recs;         /* max_files + max_dirs + 1 records (the last: MON_K_OTHER) */
    uint32_t nfiles, ndirs; /* used */
    uint32_t *hash;         /* name hash of the used records: index + 1, 0 free */
    uint32_t hashsize;
    pthread_mutex_t lock; /* the table's names and the log (never on the fast path) */
    uint64_t last_snap_ns;
    uint64_t snap;
    int sid; /* the log container, -1 when not open */
    uint64_t start_ns;
    uint64_t log_seq; /* logs this process opened (exec failures, forks) */
    char cwd[1024];
    int pid; /* the process the state belongs to (a vfork child is not it) */
    /* storage targets (target.c): max_targets named + 1 fold ("(other targets)") */
    uint32_t max_targets, ntargets;
    struct mon_target *targets;
    /* the online view (live.c) */
    uint64_t live_interval_ns; /* 0: off */
    uint64_t live_last_ns;
    uint64_t live_prev_rb, live_prev_wb, live_prev_ns;
    char live_name[1200]; /* the process's live file (beside its log) */
} mon_state;

/* a storage target of this process (target.c) */
typedef struct mon_target {
    uint32_t kind;
    int named; /* its TGT record is in the log */
    char fstype[MON_FSTYPE_MAX];
    char name[MON_TGT_NAME];
} mon_target;

extern mon_state mon_g;
extern mon_fd mon_fds[MON_FD_MAX];
/* set while the monitor itself does I/O (its log) or is inside a wrapper:
 * nested calls go straight to libc */
extern __thread int mon_busy __attribute__((tls_model("initial-exec")));

/* records in the table: max_files + max_dirs, then one "(other)" aggregate per target */
static inline size_t mon_nrec(void) { return (size_t)mon_g.max_files + mon_g.max_dirs + mon_g.max_targets + 1; }

uint64_t mon_now_ns(void);
void mon_init(void);
/* the record of a path opened or stat'ed (a file's own or its folded aggregate); NULL if off */
mon_frec *mon_lookup(const char *path, int dirfd);
/* a descriptor now refers to rec (rec NULL: forget it) at offset pos */
void mon_fd_set(int fd, mon_frec *rec, uint64_t pos);

/* counting (lock-free: plain adds while the process has one thread, atomic adds after) */
void mon_count_rw(mon_frec *r, int write, uint64_t off, uint64_t n, const void *buf, uint64_t ns, uint64_t now,
                  int stdio);
/* a stdio call of fewer than 4 KiB (untimed): operations, bytes, size bucket, highest byte only */
void mon_count_small(mon_frec *r, int write, uint64_t off, uint64_t n);
void mon_count_meta(mon_frec *r, int counter, uint64_t ns);
void mon_count_add(mon_frec *r, int counter, uint64_t v);

/* a snapshot when the interval has passed since the last one (final: always, then close the log) */
void mon_tick(uint64_t now);
void mon_snapshot(int final);
/* counters from zero and names again in the next log (a forked child, a failed exec) */
void mon_reset(void);

/* storage targets (target.c): allocate the table (at init; 0 or -1), the
 * target of an absolute path (resolved through FGFS's mount table, loaded at
 * the first call, cached per mount; past the budget the fold). Under mon_g.lock. */
int mon_targets_init(void);
uint32_t mon_target_of(const char *path);

/* the online view (live.c): write the live file when its interval has passed
 * (force: always; final: the process ends) */
void mon_live_init(void);
void mon_live(uint64_t now, int force, int final);

#endif
