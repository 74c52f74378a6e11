/* sion_debug.h - SIONlib's debug interface. sheaf has no separate debug build:
 * these calls exist so SIONlib code links; output goes to the file given to
 * sion_debug_on (or stderr) only for messages whose mask matches.
 * Thread-safety: not thread-safe (global debug state). */
#ifndef SION_DEBUG_H
#define SION_DEBUG_H
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif
int   sion_debug_on(int mask, const char *filename);
int   sion_debug_off(void);
int   sion_isdebug(void);
int   sion_dprintf(int mask, const char *format, ...);
int   sion_dprintfp(int mask, const char *callingfunction, int rank, const char *format, ...);
FILE *sion_get_dfile(void);
int   sion_dclose(void);
#ifdef __cplusplus
}
#endif
#endif
