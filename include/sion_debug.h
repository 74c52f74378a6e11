/* sion_debug.h - SIONlib's debug interface. sheaf has no separate debug build:
 * these calls exist so SIONlib code compiles and links unchanged; output goes to
 * the file given to sion_debug_on (or stderr) only for messages whose mask matches.
 * Thread-safety: not thread-safe (global debug state).
 *
 * The macros are SIONlib's: code compiled with -DSION_DEBUG prints through
 * sion_dprintf / sion_dprintfp, otherwise they expand to nothing and their
 * arguments are not evaluated (SIONlib's own test programs pass variables to
 * DPRINTFP that exist only in its library's debug build). */
#ifndef SION_DEBUG_H
#define SION_DEBUG_H
#include "sheaf_export.h"
#include <stdio.h>

/* the rank used in messages of serial code */
#define _SION_DEFAULT_RANK -1

#ifdef DPRINTF
#undef ONLY_DEBUG
#undef DPRINTF
#undef DPRINTFP
#undef DPRINTFTS
#undef DPRINTFTS2
#endif
#ifdef SION_DEBUG
/* ONLY_DEBUG(A): A is compiled only with -DSION_DEBUG.
 * DPRINTF((mask, fmt, ...)), DPRINTFP((mask, function, rank, fmt, ...)): note the
 * double parentheses. DPRINTFTS(rank, step) / DPRINTFTS2(rank, step): a time stamp
 * line (mask 128 / 256). */
#define ONLY_DEBUG(A) A
#define DPRINTF(A) sion_dprintf A
#define DPRINTFP(A) sion_dprintfp A
#define DPRINTFTS(rank, desc)                                                                                          \
    sion_dprintfp(128, "TIMING", rank,                                                                                 \
                  "                                                       step=%-40s timestamp=%18.8f\n", desc,        \
                  sheaf_debug_time())
#define DPRINTFTS2(rank, desc)                                                                                         \
    sion_dprintfp(256, "TIMING", rank,                                                                                 \
                  "                                                       step=%-40s timestamp=%18.8f\n", desc,        \
                  sheaf_debug_time())
#else
#define ONLY_DEBUG(A)
#define DPRINTF(A)
#define DPRINTFP(A)
#define DPRINTFTS(A, B)
#define DPRINTFTS2(A, B)
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* Start writing debug messages whose mask has a bit of `mask` in common to
 * `filename` ("stderr", "stdout" or a file, appended to; NULL: stderr). If the
 * file cannot be opened, debugging stays off. */
SHEAF_API void sion_debug_on(int mask, const char *filename);
/* Stop debugging (closes the debug file). */
SHEAF_API void sion_debug_off(void);
/* 1 if debugging is on, 0 otherwise. */
SHEAF_API int sion_isdebug(void);
/* Print a message if debugging is on and `mask` matches; returns the number of
 * characters written (0 if nothing was printed). */
SHEAF_API int sion_dprintf(int mask, const char *format, ...);
/* As sion_dprintf, prefixed with the rank and the calling function's name. */
SHEAF_API int sion_dprintfp(int mask, const char *callingfunction, int rank, const char *format, ...);
/* The debug stream, NULL when debugging is off. */
SHEAF_API FILE *sion_get_dfile(void);
/* Close the debug file and turn debugging off. */
SHEAF_API void sion_dclose(void);
/* Seconds since an arbitrary fixed point (wall clock), for DPRINTFTS. */
SHEAF_API double sheaf_debug_time(void);
/* Declared by SIONlib's sion_debug.h under these (internal) names, which its
 * own test programs call: set up debugging from SION_DEBUG* (sheaf: no-op,
 * returns 1); register the function that tells the calling thread's number
 * (used as the rank of DPRINTFP messages whose rank is -1) and returns 1;
 * register lock callbacks around debug output (sheaf serialises the output
 * itself; accepted and ignored). */
SHEAF_API int _lsion_debug_init(void);
SHEAF_API int _lsion_debug_set_query_thread_num_function(int (*get_thread_num)(void));
SHEAF_API void _sion_debug_set_lock_cb(void (*set_lock)(void), void (*unset_lock)(void));
#ifdef __cplusplus
}
#endif
#endif
