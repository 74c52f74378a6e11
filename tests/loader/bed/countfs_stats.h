/* countfs_stats.h - the counters of countfs (a counting FUSE pass-through):
 * per client process, per simulated node and in total; the JSON dump.
 * Test/bench tool of the loader measurement bed, not part of the library. */
#ifndef COUNTFS_STATS_H
#define COUNTFS_STATS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum cfs_op {
    CFS_LOOKUP,        /* every LOOKUP request */
    CFS_LOOKUP_ENOENT, /* the LOOKUPs answered "no such file" (failed searches) */
    CFS_GETATTR,
    CFS_READLINK,
    CFS_OPEN,
    CFS_OPENDIR,
    CFS_READDIR,
    CFS_READ,       /* READ requests */
    CFS_READ_BYTES, /* bytes answered to READ requests */
    CFS_STATFS,
    CFS_NOPS
};

struct cfs_counts {
    uint64_t v[CFS_NOPS];
};

/* cfs_count: add n to counter op of process pid (and its node and the
 * total). The node of a pid is its UTS namespace (inode number of
 * /proc/<pid>/ns/uts) with the host name seen inside it, found the first
 * time the pid is seen. Thread-safe. */
void cfs_count(pid_t pid, enum cfs_op op, uint64_t n);

/* cfs_trace_open: log every counted request to path as TSV lines
 * "op pid name errno bytes"; 0 or -1 with errno */
int cfs_trace_open(const char *path);
void cfs_trace(const char *op, pid_t pid, const char *name, int err, uint64_t bytes);

/* cfs_dump: write the counts as JSON to path (atomically: path.tmp renamed);
 * final marks the dump written at unmount. 0 or -1 with errno. */
int cfs_dump(const char *path, int final);

#endif
