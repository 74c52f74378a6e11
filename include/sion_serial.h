/* sion_serial.h - open a whole container from one process.
 * Thread-safety: as in sion_common.h (different sids concurrently). */
#ifndef SION_SERIAL_H
#define SION_SERIAL_H
#include "sheaf_export.h"
#include <stdio.h>
#include "sion_datatypes.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Open all tasks of a container.
 * mode: comma-separated keys; "w"/"wb"/"bw" write, anything else reads;
 *   "ansi" (default: data through FILE*, exported in *fileptr) or "posix"
 *   (file descriptor, *fileptr = NULL); "endianness=big|little" declares the
 *   user data order; "keyval[=inline]". Unknown keys are ignored.
 * Write: *ntasks, (*chunksizes)[ntasks] and (*globalranks)[ntasks] are
 *   inputs; *nfiles must be <= 1; *fsblksize <= 0 detects the file system
 *   block size (SION_DEFAULT_FSBLOCKSIZE when it is unknown, above
 *   SION_MAX_FSBLOCKSIZE or not a power of two) and writes it back; a given
 *   one must be at most SION_MAX_FSBLOCKSIZE (32 MiB), else the open fails
 *   with a message (any size up to that is taken, as SIONlib does). Chunk
 *   sizes are rounded up to fsblksize multiples inside the container; the
 *   caller's array is left as given (as SIONlib; the parallel opens leave
 *   *chunksize as given too).
 *   Starts at task 0, block 0; switch tasks with sion_seek.
 * Read: ntasks, nfiles, fsblksize are outputs; chunksizes/globalranks may be
 *   NULL (not returned), point to NULL (malloc'd, caller frees) or to a
 *   caller array of ntasks. File 0 of a multi-file set opens the whole set.
 * Returns a sid >= 0, or SION_ID_UNDEF (-1) with a message naming the file
 * and the cause: missing file, not a container, truncated or inconsistent
 * metadata, container never closed, missing multi-file member. */
SHEAF_API int sion_open(char *fname, const char *file_mode, int *ntasks, int *nfiles, sion_int64 **chunksizes,
                        sion_int32 *fsblksize, int **globalranks, FILE **fileptr);

/* Read-only open of one task (*rank = global task index), following the
 * multi-file mapping; reads only that task's metadata. Write mode fails. */
SHEAF_API int sion_open_rank(char *fname, const char *file_mode, sion_int64 *chunksize, sion_int32 *fsblksize,
                             int *rank, FILE **fileptr);

/* Close. Write mode writes the final header fields, the block table (META2)
 * and a zero mapping size, then closes the file. Returns SION_SUCCESS, or
 * SION_NOT_SUCCESS if metadata could not be written (the sid is released
 * either way). A sid that is not open (closed already, never given out, a
 * parallel sid) gives SION_NOT_SUCCESS with a message, as in SIONlib. */
SHEAF_API int sion_close(int sid);

#ifdef __cplusplus
}
#endif
#endif
