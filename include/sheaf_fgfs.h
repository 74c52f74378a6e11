/* sheaf_fgfs.h - global file status (FGFS): which processes share a path.
 *
 * After Ahn et al., "Efficient and Scalable Retrieval Techniques for Global
 * File Properties" (doc/fgfs.md maps the paper to this code). Three layers:
 *
 * 1. Global names (local, no communication). The mount table
 *    (/proc/self/mountinfo) is parsed once; a path is resolved (realpath,
 *    longest mount-point prefix, the mount's root field for bind mounts) to
 *    a URI that names the file the same way on every node that sees the
 *    same bytes from the same server: file://HOST/PATH for node-local file
 *    systems, nfs://SERVER:/EXPORT/REST, lustre://NIDS/FSNAME/REST, ...
 * 2. sheaf's collective layer (sheaf_comm.h; sheaf_fgfs_comm is its
 *    sheaf_comm): over MPI (sheaf_comm_mpi.h, or sheaf_fgfs_mpi.h's
 *    sheaf_fgfs_comm_mpi), in-process for tests and simulation
 *    (sheaf_comm_sim_run / sheaf_fgfs_sim_run: P coroutines in one thread),
 *    and the loader's overlay of load servers.
 * 3. Queries on a context: the parallel descriptor, the five predicates
 *    (fully/well/poorly distributed, unique, consistent) in synchronous
 *    (collective per query) or asynchronous mode (mount points classified
 *    once, then local look-ups), and the inverse query (rank the mounted
 *    file systems for a write of B bytes per process).
 *
 * Collective cost: the functions marked "collective" must be called by
 * every process of the context's communicator in the same order with the
 * same arguments (paths may be spelled differently, they are resolved
 * locally). Each costs a constant number of collectives of the interface,
 * listed per call; with binomial trees that is O(log P) rounds. Every
 * reduction message is bounded (Bloom filter: sheaf_fgfs_config.bloom_names
 * sizes it; grouping tables: max_group_bytes).
 *
 * Errors: every call returns SHEAF_FGFS_OK (0) or a negative SHEAF_FGFS_E*
 * code and records a message naming the path and cause, read with
 * sheaf_fgfs_last_error() in the failing thread. A collective call fails on
 * every process or on none: a process whose own step failed reports its
 * message, the others SHEAF_FGFS_EREMOTE with the failing rank.
 * Nothing in the library exits or aborts.
 *
 * Thread-safety: a parsed mount table is immutable and may be shared by
 * threads. A context is used by one thread at a time. sheaf_fgfs_last_error
 * is thread-local. */
#ifndef SHEAF_FGFS_H
#define SHEAF_FGFS_H
#include "sheaf_export.h"
#include "sheaf_comm.h"
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define SHEAF_FGFS_OK 0
#define SHEAF_FGFS_EINVAL -1  /* bad argument or misuse */
#define SHEAF_FGFS_ENOMEM -2  /* out of memory */
#define SHEAF_FGFS_EIO -3     /* the system refused (open, read, statvfs) */
#define SHEAF_FGFS_EPARSE -4  /* mount table or config unusable */
#define SHEAF_FGFS_ECOMM -5   /* the collective layer failed or was misused */
#define SHEAF_FGFS_ELIMIT -6  /* a bound was exceeded (groups, names, sizes) */
#define SHEAF_FGFS_EREMOTE -7 /* another process failed; message names its rank */

/* Message of the last failure in this thread ("" if none). Valid until the
 * next failing call in the same thread. Thread-safe. */
SHEAF_API const char *sheaf_fgfs_last_error(void);
/* Record a message (printf format) as this thread's last error and return
 * code: for implementations of the collective interface (sheaf_fgfs_comm)
 * that live outside the library. Thread-safe. */
SHEAF_API int sheaf_fgfs_error(int code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ------------------------------------------------------------------ */
/* 1. Mount table and global names (local, no communication)          */

typedef struct sheaf_fgfs_mounts sheaf_fgfs_mounts;

/* Kind of file system behind a mount, as the name resolution sees it. */
typedef enum {
    SHEAF_FGFS_LOCAL = 0, /* node-local (ext4, xfs, btrfs, tmpfs, overlay, unknown) */
    SHEAF_FGFS_PSEUDO,    /* proc, sysfs, cgroup, devpts, ...: local, never selected */
    SHEAF_FGFS_NFS,       /* nfs, nfs4 */
    SHEAF_FGFS_CIFS,      /* cifs, smb3, smbfs */
    SHEAF_FGFS_LUSTRE,
    SHEAF_FGFS_GPFS,
    SHEAF_FGFS_BEEGFS,
    SHEAF_FGFS_CEPH,  /* kernel cephfs */
    SHEAF_FGFS_FUSE,  /* fuse.* (by fsname: ceph-fuse, dfuse, sshfs, ...) */
    SHEAF_FGFS_IMAGE, /* squashfs/erofs/iso9660 on a loop device: by backing file */
    SHEAF_FGFS_PANFS,
    SHEAF_FGFS_NKINDS
} sheaf_fgfs_kind;

/* Parse the mount table of this process: the file named by the environment
 * variable SHEAF_FGFS_MOUNTINFO if set (tests, simulation), else
 * /proc/self/mountinfo. At most 16 MiB and 65536 entries are read; lines
 * that do not follow proc(5) are skipped. Fails (EIO, EPARSE: no usable
 * line, ENOMEM) with a message naming the file. Thread-safe. */
SHEAF_API int sheaf_fgfs_mounts_load(sheaf_fgfs_mounts **out);
/* Parse mountinfo text (len bytes, need not be NUL-terminated). `origin`
 * names it in messages. Same bounds and errors as sheaf_fgfs_mounts_load. */
SHEAF_API int sheaf_fgfs_mounts_parse(const char *text, size_t len, const char *origin, sheaf_fgfs_mounts **out);
SHEAF_API void sheaf_fgfs_mounts_free(sheaf_fgfs_mounts *m);
/* Number of usable entries and lines skipped as malformed. */
SHEAF_API int sheaf_fgfs_mounts_count(const sheaf_fgfs_mounts *m);
SHEAF_API int sheaf_fgfs_mounts_skipped(const sheaf_fgfs_mounts *m);
/* Entry i (0 <= i < count): mount point, fs type, source, root; NULL out of range. */
SHEAF_API const char *sheaf_fgfs_mount_point(const sheaf_fgfs_mounts *m, int i);
SHEAF_API const char *sheaf_fgfs_mount_fstype(const sheaf_fgfs_mounts *m, int i);
SHEAF_API const char *sheaf_fgfs_mount_source(const sheaf_fgfs_mounts *m, int i);
SHEAF_API const char *sheaf_fgfs_mount_root(const sheaf_fgfs_mounts *m, int i);
/* Tell the table which file backs a loop device ("/dev/loop3" ->
 * "/nfs/img.sqsh"), for tests and for systems without
 * /sys/block/loopN/loop/backing_file (read by default). Not thread-safe
 * against resolution on the same table. EINVAL, ENOMEM, ELIMIT (64 maps). */
SHEAF_API int sheaf_fgfs_mounts_set_loop(sheaf_fgfs_mounts *m, const char *dev, const char *backing);

/* Resolution flags. */
#define SHEAF_FGFS_NOREALPATH 1 /* resolve the path lexically (no symlinks, no file-system access) */

/* What a path resolves to. */
typedef struct sheaf_fgfs_name {
    char uri[4096]; /* the global name */
    sheaf_fgfs_kind kind;
    int local;       /* 1: node-local (file://), LOCAL, PSEUDO or unknown */
    int mount;       /* index of the mount entry in the table */
    char path[4096]; /* the resolved absolute path */
} sheaf_fgfs_name;

/* Resolve `path` against the table: realpath (when it fails, realpath of
 * the deepest existing ancestor + the rest; with NOREALPATH or when nothing
 * resolves, a lexical normalisation relative to the working directory),
 * longest mount-point prefix (the last mount on a mount point wins), URI by
 * file-system kind. host: the node name for local URIs (NULL:
 * gethostname). Fails with EINVAL (empty path, path or URI longer than
 * 4095 bytes) or EPARSE (no mount covers the path). Thread-safe. */
SHEAF_API int sheaf_fgfs_resolve(const sheaf_fgfs_mounts *m, const char *host, const char *path, int flags,
                                 sheaf_fgfs_name *out);
SHEAF_API const char *sheaf_fgfs_kind_name(sheaf_fgfs_kind k);

/* ------------------------------------------------------------------ */
/* 2. The collective interface                                         */

/* The collective interface is sheaf's collective layer (sheaf_comm.h);
 * FGFS's names stay as aliases, so programs written against them build
 * unchanged. */
typedef sheaf_comm_op sheaf_fgfs_op;
typedef sheaf_comm sheaf_fgfs_comm;
typedef sheaf_comm_ops sheaf_fgfs_comm_ops;

/* In-process simulation: sheaf_comm_sim_run (sheaf_comm.h), under its
 * FGFS name. */
typedef sheaf_comm_sim_stats sheaf_fgfs_sim_stats;
SHEAF_API int sheaf_fgfs_sim_run(int nprocs, size_t stack_kib, int (*fn)(sheaf_fgfs_comm *world, int rank, void *arg),
                                 void *arg, sheaf_fgfs_sim_stats *stats);

/* ------------------------------------------------------------------ */
/* 3. Queries                                                          */

typedef struct sheaf_fgfs_ctx sheaf_fgfs_ctx;

#define SHEAF_FGFS_SYNC 0
#define SHEAF_FGFS_ASYNC 1

typedef struct sheaf_fgfs_config {
    int mode;               /* SHEAF_FGFS_SYNC or SHEAF_FGFS_ASYNC */
    int well_threshold;     /* servers >= this: well distributed (0: 16) */
    int bloom_names;        /* Bloom filter sized for this many names at 50% density (0: 4096) */
    size_t max_group_bytes; /* bound of an exact grouping table (0: 1 MiB) */
    const sheaf_fgfs_mounts
        *mounts;             /* NULL: sheaf_fgfs_mounts_load() at init (owned by the context); else not copied */
    const char *host;        /* NULL: $SHEAF_FGFS_HOST, else gethostname (copied) */
    int flags;               /* SHEAF_FGFS_NOREALPATH */
    const char *site_config; /* file of site parameters for select (NULL: $SHEAF_FGFS_SITE or built-ins); not copied */
} sheaf_fgfs_config;

/* Create a context over comm (not copied: it must outlive the context).
 * cfg may be NULL (defaults, sync). Collective: 1 reduce + 1 bcast
 * (agreement on success); in ASYNC mode also the classification of every
 * mount point of every process: 1 reduce + 1 bcast for the union of mount
 * points, then per mount point what sheaf_fgfs_status costs.
 * Errors: EINVAL, ENOMEM, EPARSE (mount table), ECOMM, EREMOTE. */
SHEAF_API int sheaf_fgfs_init(sheaf_fgfs_comm *comm, const sheaf_fgfs_config *cfg, sheaf_fgfs_ctx **out);
/* Local. Frees the context (not the communicator). */
SHEAF_API void sheaf_fgfs_finalize(sheaf_fgfs_ctx *ctx);

typedef enum {
    SHEAF_FGFS_FULLY = 0, /* node-local on every process */
    SHEAF_FGFS_WELL,      /* >= well_threshold servers (estimated) */
    SHEAF_FGFS_POORLY,    /* 2 .. threshold-1 servers */
    SHEAF_FGFS_UNIQUE     /* exactly one server for everyone */
} sheaf_fgfs_class;

typedef struct sheaf_fgfs_status {
    sheaf_fgfs_class cls;
    double servers; /* estimated distinct names (exact 1 when unique; 0 when fully local) */
    int all_local, any_local;
    int triage_level; /* 1: answered by the AND/min-max reduction, 2: by the Bloom filter */
    int saturated;    /* 1: every bit of the Bloom filter was set (more names than it can count): servers is
                         then a lower bound, the estimate for one bit unset (finite, always) */
} sheaf_fgfs_status;

/* Classify `path`. SYNC: collective, 1 reduce + 1 bcast of 32 bytes
 * (local everywhere? one name everywhere?), plus 1 reduce + 1 bcast of the
 * Bloom filter when neither. ASYNC: local look-up in the classified mount
 * points, no communication. Errors: as sheaf_fgfs_resolve, EREMOTE. */
SHEAF_API int sheaf_fgfs_status_of(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_status *st);
/* The predicates (answer 0/1); cost as sheaf_fgfs_status_of. */
SHEAF_API int sheaf_fgfs_is_fully_distributed(sheaf_fgfs_ctx *ctx, const char *path, int *answer);
SHEAF_API int sheaf_fgfs_is_well_distributed(sheaf_fgfs_ctx *ctx, const char *path, int *answer);
SHEAF_API int sheaf_fgfs_is_poorly_distributed(sheaf_fgfs_ctx *ctx, const char *path, int *answer);
SHEAF_API int sheaf_fgfs_is_unique(sheaf_fgfs_ctx *ctx, const char *path, int *answer);
/* Do all processes see the same bytes at `path`? Always collective (also
 * in ASYNC mode). Unique -> 1 without I/O; otherwise exact grouping (1
 * reduce + 1 bcast of the group table), the representative of each group
 * hashes the file (XXH3-64, streamed; a directory: its sorted entry names
 * and types, doc/fgfs.md), 1 reduce + 1 bcast of 24 bytes compares the
 * hashes. EIO names the path a representative could not read; EINVAL a
 * path that is neither a regular file nor a directory (FIFO, device). */
SHEAF_API int sheaf_fgfs_is_consistent(sheaf_fgfs_ctx *ctx, const char *path, int *answer);

/* The parallel descriptor: processes that resolve `path` to the same name
 * form a group; groups are numbered in the order of their names. */
typedef struct sheaf_fgfs_pardesc {
    int ngroups, group, group_size, rep; /* rep: lowest rank of my group */
} sheaf_fgfs_pardesc;
/* Collective: exact grouping, 1 reduce (merge of sorted name lists, bounded
 * by max_group_bytes) + 1 bcast of the table. ELIMIT when the table would
 * exceed the bound. */
SHEAF_API int sheaf_fgfs_pardesc_of(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_pardesc *d);
/* Collective: the communicator of my group for `path` (pardesc + 1 split;
 * rank 0 of it is the representative). Free with out->ops->free_comm(out). */
SHEAF_API int sheaf_fgfs_group_comm(sheaf_fgfs_ctx *ctx, const char *path, sheaf_fgfs_comm *out);

/* Inverse query: which mounted file system suits a write? */
typedef enum { SHEAF_FGFS_SPEED_ANY = 0, SHEAF_FGFS_SPEED_LOW, SHEAF_FGFS_SPEED_HIGH } sheaf_fgfs_speed_req;
typedef enum {
    SHEAF_FGFS_DIST_ANY = 0,
    SHEAF_FGFS_DIST_UNIQUE,
    SHEAF_FGFS_DIST_LOW,
    SHEAF_FGFS_DIST_HIGH,
    SHEAF_FGFS_DIST_FULL
} sheaf_fgfs_dist_req;
typedef enum { SHEAF_FGFS_SCAL_ANY = 0, SHEAF_FGFS_SCAL_SINGLE, SHEAF_FGFS_SCAL_MULTI } sheaf_fgfs_scal_req;
typedef struct sheaf_fgfs_criteria {
    uint64_t bytes_per_process; /* mandatory (0 allowed) */
    sheaf_fgfs_speed_req speed;
    sheaf_fgfs_dist_req distribution;
    sheaf_fgfs_scal_req scalability;
} sheaf_fgfs_criteria;
typedef struct sheaf_fgfs_choice {
    char mount_point[4096];
    char fstype[64];
    sheaf_fgfs_class cls;
    int ngroups, max_group; /* groups sharing a server, largest group */
    double speed_mbs;       /* site parameter: single-stream MB/s */
    double scalability;     /* site parameter: processes that saturate it */
    int multi;              /* site parameter: parallel file system */
    double score;           /* Scalability / max(Scalability, max_group) * Speed */
    uint64_t min_free;      /* least free bytes seen by a representative */
} sheaf_fgfs_choice;
/* Collective. Every mount point of the union of the processes' tables
 * (pseudo file systems excepted) is classified and grouped; each group's
 * representative checks bytes_per_process x group size against statvfs;
 * file systems that fit and meet the criteria are returned best score
 * first (at most max; *n the number returned). Per mount point: the cost
 * of sheaf_fgfs_status_of + sheaf_fgfs_pardesc_of + 1 reduce + 1 bcast.
 * Site parameters: lines "type FSTYPE|mount PATH speed=MBS scal=N multi=0|1"
 * in cfg->site_config (doc/fgfs.md); EPARSE names the file and line. */
SHEAF_API int sheaf_fgfs_select(sheaf_fgfs_ctx *ctx, const sheaf_fgfs_criteria *c, sheaf_fgfs_choice *out, int max,
                                int *n);

/* Mount points classified by an ASYNC context (the union over processes,
 * pseudo file systems excepted): count and entry i. Local. */
SHEAF_API int sheaf_fgfs_async_count(const sheaf_fgfs_ctx *ctx);
SHEAF_API int sheaf_fgfs_async_entry(const sheaf_fgfs_ctx *ctx, int i, const char **mount_point, sheaf_fgfs_status *st);
/* The communicator of a context (for the caller's own collectives). */
SHEAF_API sheaf_fgfs_comm *sheaf_fgfs_comm_of(sheaf_fgfs_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
