/* sheaf.h - sheaf's own extensions to the SIONlib API (not in SIONlib).
 * Thread-safety: sheaf_last_error* read thread-local state and are thread-safe;
 * sheaf_set_error_printing changes a process-wide flag. */
#ifndef SHEAF_H
#define SHEAF_H
#include "sheaf_export.h"
#include "sion_datatypes.h"
#ifdef __cplusplus
extern "C" {
#endif

#define SHEAF_VERSION_STRING "0.1.0"

/* Message of the last failed call in this thread ("" if none). The pointer
 * stays valid until the next failing call in the same thread. */
SHEAF_API const char *sheaf_last_error(void);
/* Error class of the last failure in this thread (SHEAF_E_*; 0 = none). */
SHEAF_API int sheaf_last_error_code(void);
/* 1: print errors to stderr as SIONlib does (default; env SION_ERROR_MSG=0
 * turns it off); 0: silent. Returns the previous setting. */
SHEAF_API int sheaf_set_error_printing(int on);

#define SHEAF_E_OK 0
#define SHEAF_E_ARG -1      /* invalid argument or misuse of the API */
#define SHEAF_E_IO -2       /* the operating system reported an error */
#define SHEAF_E_FORMAT -3   /* not a container, or corrupt metadata */
#define SHEAF_E_NOMEM -4    /* out of memory */
#define SHEAF_E_UNCLOSED -5 /* container was never closed (crash) */
#define SHEAF_E_NOTFOUND -6 /* file or multi-file member missing */

/* ---- container inspection (used by the sheaf/sion* command-line tools) ----
 * Header fields of one physical file of a container opened for reading with
 * sion_open/sion_open_rank. filenr: 0 .. nfiles_open-1 (nfiles_open is the same
 * in every file's info; ask for file 0 first). The tools use it for siondump
 * and `sheaf dump/verify`; it is a sheaf extension, not in SIONlib.
 * Returns SION_SUCCESS (1) and fills *info, or SION_NOT_SUCCESS (0) with a
 * message (bad sid, filenr out of range, NULL info). Strings point into the
 * sid's state and stay valid until sion_close. Thread-safety: as other calls
 * on a sid. */
typedef struct sheaf_file_info {
    const char *name;   /* path of this physical file */
    const char *prefix; /* stored prefix (1024 bytes on disk, NUL-terminated here) */
    int format_version; /* file format version (2..5) */
    int lib_version;    /* writer's SIONlib version, 1000*main+sub (e.g. 1007) */
    int lib_patch;      /* writer's SIONlib patch level */
    int fsblksize;
    int ntasks;              /* tasks stored in this physical file */
    int nfiles;              /* physical files in the set (as stored) */
    int nfiles_open;         /* physical files this sid has open: nfiles when
                                    file 0 of a set (or a single file) was opened,
                                    1 when one member of a set was opened alone */
    int filenumber;          /* index of this file in the set */
    int maxchunks;           /* blocks of the busiest task in this file */
    int meta_big;            /* metadata byte order: 1 big-endian */
    int data_big;            /* declared user-data order: 1 big-endian */
    int keyval;              /* SION_KEYVAL_* of the container */
    int mapping_size;        /* entries of the mapping stored here, -1 if none */
    sion_int64 flag1, flag2; /* raw header flags */
    sion_int64 start_of_varheader;
    sion_int64 header_size; /* size of META1 */
    sion_int64 data_start;  /* first chunk offset (header rounded up) */
    sion_int64 globalskip;  /* distance between the blocks of a task */
} sheaf_file_info;
SHEAF_API int sheaf_get_file_info(int sid, int filenr, sheaf_file_info *info);

/* ---- crash recovery (`sheaf recover`, `sheaf verify`) ----
 * sion_flush in write mode makes a task's data durable: its file is
 * fsync'ed and the task's block table is appended to a journal beside each
 * physical file ("<file>.sheafj"; removed by a clean close, replaced by the
 * next open for writing). sheaf_recover turns a container whose writers
 * died before the close (header field start_of_varheader 0) into a closed
 * format-5 container that holds every byte each task wrote before its last
 * successful sion_flush; tasks that never flushed get 0 bytes. Flags:
 *   SHEAF_RECOVER_SALVAGE  files without a journal (e.g. written by SIONlib)
 *                          are estimated from their contents: a block ends at
 *                          its last non-zero byte (summary.uncertain = 1);
 *   SHEAF_RECOVER_DRY_RUN  only report what would be recovered, change nothing.
 * With the "checksum" mode key the journal holds each block's CRC: recovery
 * checks every block against it (also in a dry run), reports damaged and
 * unverifiable blocks (per task lines, counts in the summary) and writes the
 * checksum trailer, so reads of the recovered container stay verified.
 * report(ctx, line) receives one line per file and task (may be NULL).
 * Closed files are left alone (a stale journal is removed). Returns
 * SHEAF_E_OK (0) or a SHEAF_E_* code with a message naming the file
 * (SHEAF_E_NOTFOUND: no journal and no SALVAGE). Not thread-safe for the
 * same container; never run it while the writers are still alive. */
#define SHEAF_RECOVER_SALVAGE 1
#define SHEAF_RECOVER_DRY_RUN 2
typedef struct sheaf_recover_summary {
    int files;                  /* physical files looked at */
    int files_closed;           /* of those, already closed */
    sion_int64 tasks;           /* tasks in the recovered files */
    sion_int64 tasks_unflushed; /* tasks without a journal record */
    sion_int64 bytes;           /* bytes recovered */
    sion_int64 lost;            /* bytes the journal names that the file no longer holds */
    int uncertain;              /* salvage was used */
    /* checksums: blocks holding data, and what recovery could check of them against the
     * CRC-32C each writer in "checksum" mode journaled with its flush (an SHJ2 record) */
    int checksums;                  /* some task journaled CRCs: the recovered files keep a checksum trailer */
    sion_int64 blocks;              /* blocks holding data in the recovered files */
    sion_int64 blocks_verified;     /* their data match the journaled CRC */
    sion_int64 blocks_damaged;      /* their data do NOT match it: reads of them fail (checksum error) */
    sion_int64 blocks_unverifiable; /* no CRC journaled, or the file lost part of the block: the
                                       trailer gets a CRC of what is there now, which only protects
                                       against later damage */
} sheaf_recover_summary;
typedef void (*sheaf_recover_fn)(void *ctx, const char *line);
SHEAF_API int sheaf_recover(const char *name, int flags, sheaf_recover_fn report, void *ctx,
                            sheaf_recover_summary *out);

#ifdef __cplusplus
}
#endif
#endif
