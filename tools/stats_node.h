/* stats_node.h - the per-node sampler's counters (stats_node.c): parsers of
 * /proc/diskstats, /proc/self/mountstats (NFS) and Lustre llite stats, and
 * the JSON-line and Prometheus/OpenMetrics printers of `sheaf stats node`. */
#ifndef SHEAF_TOOLS_STATS_NODE_H
#define SHEAF_TOOLS_STATS_NODE_H
#include <stdio.h>

#define SN_MAX_ENTRIES 4096 /* devices, NFS mounts, Lustre instances each */
#define SN_MAX_OPS 128      /* per-op lines per mount or instance */
#define SN_FILE_MAX (4 << 20)

/* /proc/diskstats: reads, reads merged, sectors read, ms reading, writes,
 * writes merged, sectors written, ms writing, in flight, ms doing I/O,
 * weighted ms */
typedef struct sn_disk {
    unsigned maj, min;
    char name[64];
    unsigned long long f[11];
} sn_disk;

typedef struct sn_op {
    char name[32];
    unsigned long long v[8]; /* NFS: ops trans timeouts sent recv queue_ms rtt_ms exe_ms; Lustre: samples sum */
} sn_op;

typedef struct sn_fs {
    char src[512];   /* NFS: the export (server:/path); Lustre: the instance (fsname-id) */
    char mnt[512];   /* NFS: the mount point; Lustre: the stats file */
    char fstype[16]; /* nfs, nfs4, lustre */
    /* NFS bytes: normal read, normal write, direct read, direct write, server read, server write, pages r, w */
    unsigned long long bytes[8];
    int nops;
    sn_op ops[SN_MAX_OPS];
} sn_fs;

typedef struct sn_sample {
    double time;
    char host[256], job[256];
    sn_disk *disks;
    int ndisks, capdisks;
    sn_fs *nfs, *lus;
    int nnfs, capnfs, nlus, caplus;
    unsigned long long skipped; /* lines that did not parse */
    char notes[1024];
} sn_sample;

/* take a sample (llite: a ':'-separated list of glob patterns); 0, or -1
 * with a message naming the file in err (diskstats unreadable; the others
 * are optional and only noted) */
int sn_sample_take(sn_sample *s, const char *diskstats, const char *mountstats, const char *llite, const char *job,
                   char *err, size_t errlen);
void sn_sample_free(sn_sample *s);
/* one JSON line */
void sn_print_json(FILE *o, const sn_sample *s);
/* the Prometheus text format (openmetrics 0) or OpenMetrics (1, ends "# EOF") */
void sn_print_prom(FILE *o, const sn_sample *s, int openmetrics);

#endif
