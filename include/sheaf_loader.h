/* sheaf_loader.h - scalable loading: the per-node load server and the calls
 * the launcher and the bootstrapper make to it (libsheaf_loader).
 * The audit client itself (libsheaf_audit.so, LD_AUDIT) is include/sheaf_audit.h.
 * Design: doc/loader.md. */
#ifndef SHEAF_LOADER_H
#define SHEAF_LOADER_H

#include <stddef.h>

#include "sheaf_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the environment the audit client reads */
#define SHEAF_LOADER_ENV_SOCKET "SHEAF_LD_SOCKET"     /* the server's socket */
#define SHEAF_LOADER_ENV_PREFIXES "SHEAF_LD_PREFIXES" /* ':'-list: every file below is served */
#define SHEAF_LOADER_ENV_SUFFIXES "SHEAF_LD_SUFFIXES" /* ':'-list of extra suffixes (".dat") */
#define SHEAF_LOADER_ENV_PYDIRS "SHEAF_LD_PYDIRS" /* ':'-list: stats and listings below are served, files by suffix */
#define SHEAF_LOADER_ENV_TIMEOUT "SHEAF_LD_TIMEOUT_MS" /* per request, default 20000 */
#define SHEAF_LOADER_ENV_LOG "SHEAF_LD_LOG"            /* test mode: log each resolved path here */

/* what a request asks for */
enum sheaf_loader_op {
    SHEAF_LOADER_LOOKUP = 1, /* the node-local copy of a file */
    SHEAF_LOADER_STAT = 2,
    SHEAF_LOADER_LSTAT = 3,
    SHEAF_LOADER_LISTDIR = 4, /* a node-local directory with the same names */
    SHEAF_LOADER_STATS = 5,   /* out: the cache directory; counters via sheaf_loader_stats */
    SHEAF_LOADER_SHUTDOWN = 6,
    SHEAF_LOADER_REALPATH = 7 /* out: realpath(3) of the path (absolute), else its errno */
};

#define SHEAF_LOADER_NCOUNTERS 17

/* Runs a load server until a SHUTDOWN request or SIGTERM/SIGINT/SIGHUP: cache
 * directory <cache_base>/sheaf-ld.<uid>.<pid> (0700; cache_base NULL: /dev/shm
 * when it is a tmpfs, else $TMPDIR or /tmp), socket <dir>/sock; directories of
 * dead servers are removed first, this one when it stops. strip: copies of ELF
 * files hold only their loaded extents. When listening, writes "<socket>\n" to
 * ready_fd (if >= 0) and closes it. Returns 0, or -1 with a message in err. */
SHEAF_API int sheaf_loader_serve(const char *cache_base, int strip, int ready_fd, char *err, size_t errlen);

/* The overlay of load servers across nodes (doc/loader.md "Overlay"): rank
 * `rank` of `size` servers, `hosts` = "host:port,host:port,..." (one entry per
 * rank, in rank order), `roots` binomial trees (tree t rooted at rank t owns a
 * hash range of paths; 1 = one tree), push 1 = SPMD (an object read anywhere
 * goes to every server), 0 = pull (MPMD: only to the servers that ask),
 * `bind` = "addr:port" to listen on (NULL: this rank's hosts entry),
 * secret_file = the job's secret (a 0600 file of 64 hex digits, see
 * sheaf_loader_secret_create); timeout_ms bounds every network wait. */
struct sheaf_loader_overlay {
    int rank, size, roots, push, timeout_ms;
    const char *hosts, *bind, *secret_file;
    int fgfs;     /* ignored (kept for older callers): the classification below is the default */
    int copy_all; /* 0 (default): classify paths with the global file status (ASYNC, once at
                     start-up over the overlay): node-local, per-node different and
                     well-distributed files are passed through (each node reads its own), unique
                     ones come from the root; if the classification fails, each server reads
                     every path itself. 1: no classification, every file through the overlay
                     (the root's copy everywhere: only for trees identical on every node) */
};

/* Runs a load server that is part of an overlay: as sheaf_loader_serve, and
 * socket_path (NULL: <cache dir>/sock) is where the local clients connect.
 * Writes "sheaf-ld ready <rank> <socket>\n" to ready_fd once its links to its
 * parents are up. Stops on SHUTDOWN from the front end or the local socket,
 * on a signal, or when a parent link fails (its clients then fall back). */
SHEAF_API int sheaf_loader_serve_net(const char *cache_base, const char *socket_path, int strip,
                                     const struct sheaf_loader_overlay *ov, int ready_fd, char *err, size_t errlen);
/* 1 when this build has the overlay across nodes (libsodium), else 0: the
 * secret and the handshake then fail with a message saying so. */
SHEAF_API int sheaf_loader_has_overlay(void);
/* A new per-job secret file (0600, O_CREAT|O_EXCL|O_NOFOLLOW); 0 or -1 + err. */
SHEAF_API int sheaf_loader_secret_create(const char *path, char *err, size_t errlen);
/* The front end's link to a server (normally the root, rank 0): a connected,
 * authenticated socket, or -1 with err. */
SHEAF_API int sheaf_loader_fe_open(const char *addr, const char *secret_file, int timeout_ms, char *err, size_t errlen);
/* Bulk preload: every server gets the file (it travels down the trees once);
 * returns when the root has it: 0, or -1 when the link failed. */
SHEAF_API int sheaf_loader_fe_preload(int fd, const char *path);
/* The counters of the server at the other end of fd (the root) and its rank
 * (may be NULL): n at most SHEAF_LOADER_NCOUNTERS; 0 or -1. */
SHEAF_API int sheaf_loader_fe_stats(int fd, unsigned long long *counters, int n, int *rank);
/* Stops every server of the overlay and closes fd. 0 or -1. */
SHEAF_API int sheaf_loader_fe_shutdown(int fd);

/* One request to the server at `socket`: 0 with the reply's path in out (may
 * be NULL), an errno value of the original file system, or -1 when the server
 * cannot be reached or does not answer within timeout_ms. */
SHEAF_API int sheaf_loader_request(const char *socket, int op, const char *path, char *out, size_t outlen,
                                   int timeout_ms);

/* The server's counters (n at most SHEAF_LOADER_NCOUNTERS); 0 or -1. */
SHEAF_API int sheaf_loader_stats(const char *socket, unsigned long long *counters, int n, int timeout_ms);
/* "requests", "listings", "stats", "reads", "bytes", "realpaths", "hits",
 * "clients", "refused", "stripped", then the overlay's: "net_refused" (peers
 * refused by the handshake), "net_gets" (requests sent to the parent),
 * "net_served" (requests of children served), "net_objs" (objects received),
 * "net_bytes" (file bytes received), "net_pushed" (objects sent down by push),
 * "passthrough" (files the FGFS policy left to the clients) */
SHEAF_API const char *sheaf_loader_counter_name(int i);

#ifdef __cplusplus
}
#endif
#endif
