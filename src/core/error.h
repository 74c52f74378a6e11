/* error.h - how the core reports failure.
 * Every failing core function records a message (naming the file and the cause)
 * in thread-local storage and returns a negative SHEAF_E_* code. The public API
 * turns that into SIONlib's return values and, optionally, prints it. */
#ifndef CORE_ERROR_H
#define CORE_ERROR_H
#include "sheaf.h"

#if defined(__GNUC__)
#define CORE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CORE_PRINTF(a, b)
#endif

/* Record an error (printf-style message) and return `code` (< 0). Thread-safe. */
int core_fail(int code, const char *fmt, ...) CORE_PRINTF(2, 3);
/* Same, appending ": <strerror(errnum)>". */
int core_fail_errno(int code, int errnum, const char *fmt, ...) CORE_PRINTF(3, 4);
/* Clear the thread's last error. */
void core_clear_error(void);
/* Print a warning ("SION_ERROR_WARN on rank <rank>, rc=0: <msg>") if error
 * printing is on; does not touch the last error. Thread-safe. */
void core_warn(int rank, const char *fmt, ...) CORE_PRINTF(2, 3);
/* Print the last error the SIONlib way if printing is on. */
void core_report_error(int rank);
/* The same, with rc= the value the failing call returns (SIONlib prints that). */
void core_report_error_rc(int rank, int rc);
#endif
