/* record.h - the monitor log's records (src/monitor, doc/monitor.md).
 *
 * A log is one sheaf container per process (one task), holding a stream of
 * fixed-size records of MON_REC_SIZE bytes, little-endian, each packed and
 * unpacked by one function here:
 *   HEAD  once at the start: who wrote the log (pid, ppid, rank, host, start
 *         time, the budget in force);
 *   NAME  the name of a record id (a path, or a directory for a folded
 *         aggregate), in segments of up to MON_NAME_SEG bytes;
 *   FILE  one record's cumulative counters at a snapshot (the reader keeps
 *         the latest per id);
 *   SNAP  closes a snapshot: its number, time, and how many FILE records it had;
 *   TGT   (version 2) a storage target's id, file-system kind and type and
 *         global name (FGFS), before the first FILE record naming it.
 * The writer flushes (sion_flush) only after a SNAP record. */
#ifndef MON_RECORD_H
#define MON_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define MON_REC_SIZE 512
#define MON_MAGIC 0x4e4f4d53u /* "SMON" little-endian */
#define MON_VERSION 2
/* the oldest log version this reader reads (version 1: no storage targets) */
#define MON_VERSION_MIN 1
#define MON_NAME_SEG 480
#define MON_NAME_MAX 4096
#define MON_HOST_MAX 64
#define MON_EXE_MAX 128
/* the most record ids a reader accepts in one log (the writer's budget is capped below) */
#define MON_IDS_MAX (1u << 20)
/* storage targets: at most this many per process (+1, the fold of the rest) */
#define MON_TGT_MAX 4096
#define MON_TGT_NAME 440
#define MON_FSTYPE_MAX 32

enum mon_rec_type { MON_T_HEAD = 1, MON_T_NAME = 2, MON_T_FILE = 3, MON_T_SNAP = 4, MON_T_TGT = 5 };

/* what a FILE record describes */
enum mon_kind {
    MON_K_FILE = 1,  /* one file (its path) */
    MON_K_DIR = 2,   /* files past the budget, folded by directory */
    MON_K_OTHER = 3, /* files past the budget whose directory had no aggregate left */
};

/* counters of a FILE record; sums unless noted */
enum mon_counter {
    MC_OPENS,
    MC_READS,
    MC_WRITES,
    MC_SEEKS,
    MC_STATS,
    MC_FSYNCS,
    MC_MMAPS,
    MC_FLUSHES,
    MC_STDIO_OPS, /* of the reads and writes, those made through stdio */
    MC_BYTES_READ,
    MC_BYTES_WRITTEN,
    MC_MMAP_BYTES,
    MC_MAX_BYTE_READ,
    MC_MAX_BYTE_WRITTEN, /* highest offset + 1 (max) */
    MC_SEQ_READS,
    MC_SEQ_WRITES,
    MC_CONSEC_READS,
    MC_CONSEC_WRITES,
    MC_RW_SWITCHES,
    MC_FILE_NOT_ALIGNED,
    MC_MEM_NOT_ALIGNED,
    MC_READ_NS,
    MC_WRITE_NS,
    MC_META_NS,
    MC_FIRST_NS,
    MC_LAST_NS,   /* CLOCK_REALTIME ns of the first / last operation (min / max) */
    MC_FILES,     /* files in this record: 1, or the opens folded into an aggregate */
    MC_HIST_READ, /* 10 buckets: 0-100, -1K, -10K, -100K, -1M, -4M, -10M, -100M, -1G, more */
    MC_HIST_WRITE = MC_HIST_READ + 10,
    MC_N = MC_HIST_WRITE + 10
};
#define MON_HIST_N 10

typedef struct mon_head {
    uint32_t version;
    int32_t rank;       /* from the launcher's environment, -1 if none */
    uint32_t max_files; /* file-record budget of the writer */
    uint32_t max_dirs;  /* directory aggregates of the writer */
    uint64_t pid, ppid;
    uint64_t start_ns;    /* CLOCK_REALTIME */
    uint64_t interval_ns; /* snapshot interval */
    uint64_t align;       /* file alignment the counters use */
    uint32_t max_targets; /* storage targets of the writer (version 2; 0 in version 1) */
    char host[MON_HOST_MAX];
    char exe[MON_EXE_MAX];
} mon_head;

typedef struct mon_name {
    uint32_t id, offset, total, len;
    char seg[MON_NAME_SEG];
} mon_name;

typedef struct mon_file {
    uint32_t id, kind;
    uint64_t snap;
    uint64_t c[MC_N];
    uint32_t tgt; /* storage target id + 1 (0: none, version 1) */
} mon_filerec;

/* a storage target: the file system a record's files are on (FGFS global name
 * of its mount: nfs://SERVER:/EXPORT, lustre://NIDS/FSNAME, gpfs://DEVICE,
 * fuse.TYPE://FSNAME, file://HOST/MOUNTPOINT, ...) */
typedef struct mon_tgt {
    uint32_t id;   /* 0 .. max_targets (max_targets: "(other targets)", the fold) */
    uint32_t kind; /* sheaf_fgfs_kind, or MON_TGT_UNKNOWN */
    char fstype[MON_FSTYPE_MAX];
    char name[MON_TGT_NAME];
} mon_tgt;
#define MON_TGT_UNKNOWN 255

typedef struct mon_snap {
    uint64_t snap, time_ns, nfile, final;
} mon_snap;

typedef struct mon_rec {
    uint16_t type;
    union {
        mon_head head;
        mon_name name;
        mon_filerec file;
        mon_snap snap;
        mon_tgt tgt;
    } u;
} mon_rec;

/* names of the counters (JSON keys, text columns) */
extern const char *const mon_counter_names[MC_N];
/* 1 if counter i is a max, 2 if a min, 0 if a sum */
int mon_counter_merge(int i);
/* dst[i] merged with src[i] for every counter by its rule (sum, max or the first non-zero min) */
void mon_counters_merge(uint64_t *dst, const uint64_t *src);
/* the histogram bucket of an access of n bytes */
int mon_hist_bucket(uint64_t n);

/* pack r into exactly MON_REC_SIZE bytes at out */
void mon_rec_pack(const mon_rec *r, unsigned char *out);
/* unpack MON_REC_SIZE bytes; 0, or -1 with a message in err (bad magic, type,
 * lengths or kind): every field is checked, nothing is trusted */
int mon_rec_unpack(const unsigned char *in, mon_rec *r, char *err, size_t errlen);

#endif
