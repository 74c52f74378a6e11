/* sheaf.h - sheaf's own extensions to the SIONlib API (not in SIONlib).
 * Thread-safety: sheaf_last_error* read thread-local state and are thread-safe;
 * sheaf_set_error_printing changes a process-wide flag. */
#ifndef SHEAF_H
#define SHEAF_H
#include "sion_datatypes.h"
#ifdef __cplusplus
extern "C" {
#endif

#define SHEAF_VERSION_STRING "0.1.0"

/* Message of the last failed call in this thread ("" if none). The pointer
 * stays valid until the next failing call in the same thread. */
const char *sheaf_last_error(void);
/* Error class of the last failure in this thread (SHEAF_E_*; 0 = none). */
int sheaf_last_error_code(void);
/* 1: print errors to stderr as SIONlib does (default; env SION_ERROR_MSG=0
 * turns it off); 0: silent. Returns the previous setting. */
int sheaf_set_error_printing(int on);

#define SHEAF_E_OK       0
#define SHEAF_E_ARG     -1   /* invalid argument or misuse of the API */
#define SHEAF_E_IO      -2   /* the operating system reported an error */
#define SHEAF_E_FORMAT  -3   /* not a container, or corrupt metadata */
#define SHEAF_E_NOMEM   -4   /* out of memory */
#define SHEAF_E_UNCLOSED -5  /* container was never closed (crash) */
#define SHEAF_E_NOTFOUND -6  /* file or multi-file member missing */

#ifdef __cplusplus
}
#endif
#endif
