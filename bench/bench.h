/* bench.h - shared declarations of sheaf-bench (the partest-style benchmark):
 * options, per-task phase times, per-run results, the data pattern. */
#ifndef SHEAF_BENCH_H
#define SHEAF_BENCH_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum bench_mode { M_CONTAINER, M_CONTAINER_RANK, M_TASKLOCAL, M_MPIIO_IND, M_MPIIO_COLL, M_MANYTASK, M_OPENCLOSE };

typedef struct {
    const char *fname;       /* -f: container / shared file / directory prefix */
    int numfiles;            /* -n */
    int64_t chunksize;       /* -r (0: = localsize) */
    int fsblksize;           /* -q (-1: detect) */
    int mode;                /* enum bench_mode (-T or --mode) */
    int64_t bufsize;         /* -b: bytes per write/read call */
    int64_t localsize;       /* -s: bytes per task */
    int64_t totalsize;       /* -g: global bytes (overrides -s) */
    int do_write, do_read;   /* -W, -R */
    int checksum;            /* 0 with -C */
    int posix;               /* -L */
    int collwrite, collread; /* -M, -m */
    int unlink_files;        /* -X */
    int reps;                /* --reps */
    int durable;             /* --durable */
    int threads;             /* --threads (manytask) */
    int manytask_what;       /* 0 both, 1 container only, 2 tasklocal only */
    int mapped;              /* --manytask-api=mapped: no threads, sion_paropen_mapped_mpi */
    int64_t stage_limit;     /* per-task bytes up to which data is staged in memory */
    const char *json;        /* --json FILE */
    const char *label;       /* --label free text copied to JSON */
    int quiet;
    int syncbarrier; /* --sync-barrier: container durable: barrier before the fsync */
    int sleepwait;   /* --sleep-wait: sleeping barrier before collective closes */
} bench_opts;

/* Timestamps of one task in one phase (write or read): before open, after
 * open, after the data calls, after close. */
typedef struct {
    double t0, t1, t2, t3;
} phase_times;

/* One phase of one repetition, reduced over all tasks. */
typedef struct {
    double global; /* max(t3) - min(t0) */
    double open_max, open_min, write_max, write_min, close_max, close_min;
    double bytes;         /* total bytes moved */
    double mbs;           /* bytes / global in MiB/s */
    long long mismatches; /* read phase: transfers that differ */
    long long tasks;      /* logical tasks */
} phase_result;

#define MAX_REPS 64
typedef struct {
    int nreps;
    phase_result w[MAX_REPS], r[MAX_REPS];
    double coll_pair; /* one MPI_Gather+MPI_Bcast pair (s), median of 20 */
} bench_result;

/* bench_stats.c */
uint64_t bench_word(uint64_t task, uint64_t word);
void bench_fill(unsigned char *buf, size_t n, uint64_t task, uint64_t offset);
long long bench_verify(const unsigned char *buf, size_t n, uint64_t task, uint64_t offset, size_t xfer);
int64_t bench_parse_size(const char *s);
void bench_reduce(const phase_times *local, int nlocal, double bytes_local, long long mism_local, long long tasks_local,
                  MPI_Comm comm, phase_result *out);
double bench_coll_pair(MPI_Comm comm);
void bench_barrier(MPI_Comm comm); /* sleeps while waiting */
/* Human table to stdout and (json != NULL) one JSON object (no trailing
 * comma) for the run named `name`; rank 0 only. */
void bench_report(const bench_opts *o, const char *name, const bench_result *res, int nranks, long long ntasks,
                  FILE *json);
const char *bench_mode_name(int mode);

/* bench_modes.c: one repetition of the write and/or read phase; tp/rp filled
 * for this rank's single task; returns the number of local mismatches. */
int bench_run_rank_mode(const bench_opts *o, int rep, phase_times *tw, phase_times *tr, long long *mism);
void bench_cleanup_rank_mode(const bench_opts *o);
void bench_drop_cache_path(const char *path);
double bench_now(void);

/* bench_manytask.c: threads x ranks logical tasks; tw/tr sized o->threads. */
int bench_run_manytask(const bench_opts *o, int container, phase_times *tw, phase_times *tr, long long *mism);
/* bench_mapped.c: --threads logical tasks per rank without threads; tw/tr: one entry. */
int bench_run_mapped(const bench_opts *o, int container, phase_times *tw, phase_times *tr, long long *mism);
#endif
