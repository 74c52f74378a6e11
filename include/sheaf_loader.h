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
#define SHEAF_LOADER_ENV_TIMEOUT "SHEAF_LD_TIMEOUT_MS" /* per request, default 20000 */
#define SHEAF_LOADER_ENV_LOG "SHEAF_LD_LOG"           /* test mode: log each resolved path here */

/* what a request asks for */
enum sheaf_loader_op {
  SHEAF_LOADER_LOOKUP = 1,  /* the node-local copy of a file */
  SHEAF_LOADER_STAT = 2,
  SHEAF_LOADER_LSTAT = 3,
  SHEAF_LOADER_LISTDIR = 4, /* a node-local directory with the same names */
  SHEAF_LOADER_STATS = 5,   /* out: the cache directory; counters via sheaf_loader_stats */
  SHEAF_LOADER_SHUTDOWN = 6,
  SHEAF_LOADER_REALPATH = 7 /* out: realpath(3) of the path (absolute), else its errno */
};

#define SHEAF_LOADER_NCOUNTERS 10

/* Runs a load server until a SHUTDOWN request or SIGTERM/SIGINT/SIGHUP: cache
 * directory <cache_base>/sheaf-ld.<uid>.<pid> (0700; cache_base NULL: /dev/shm
 * when it is a tmpfs, else $TMPDIR or /tmp), socket <dir>/sock; directories of
 * dead servers are removed first, this one when it stops. strip: copies of ELF
 * files hold only their loaded extents. When listening, writes "<socket>\n" to
 * ready_fd (if >= 0) and closes it. Returns 0, or -1 with a message in err. */
SHEAF_API int sheaf_loader_serve(const char *cache_base, int strip, int ready_fd, char *err,
                                 size_t errlen);

/* One request to the server at `socket`: 0 with the reply's path in out (may
 * be NULL), an errno value of the original file system, or -1 when the server
 * cannot be reached or does not answer within timeout_ms. */
SHEAF_API int sheaf_loader_request(const char *socket, int op, const char *path, char *out,
                                   size_t outlen, int timeout_ms);

/* The server's counters (n at most SHEAF_LOADER_NCOUNTERS); 0 or -1. */
SHEAF_API int sheaf_loader_stats(const char *socket, unsigned long long *counters, int n,
                                 int timeout_ms);
/* "requests", "listings", "stats", "reads", "bytes", "realpaths", "hits",
 * "clients", "refused", "stripped" */
SHEAF_API const char *sheaf_loader_counter_name(int i);

#ifdef __cplusplus
}
#endif
#endif
