/* io.h - one physical file, through ANSI stdio (FILE*) or POSIX descriptors.
 *
 * The *current position* of a core_file is the position of its FILE* (ansi)
 * or descriptor (posix). SIONlib exports that FILE* or fd, and applications may
 * write through it directly after sion_ensure_free_space; the container reads
 * the position back (core_file_tell) to learn how much was written.
 * All calls retry EINTR and short transfers, and report errors with the file
 * name. Not thread-safe per file. */
#ifndef CORE_IO_H
#define CORE_IO_H
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

typedef struct core_file {
    FILE *fp; /* ansi mode, else NULL */
    int fd;   /* always valid while open */
    int posix;
    char *name; /* malloc'd copy of the path */
} core_file;

/* Open for reading, or create/truncate for writing (mode 0666 & ~umask). Only regular
 * files are opened (a FIFO fails at once instead of blocking); a file is never created or
 * truncated through a symbolic link (O_NOFOLLOW; the message says it is a link). */
int core_file_open(core_file *f, const char *name, int write, int posix);
/* Open an existing file for reading and writing, without creating or truncating it
 * (the parallel layer: tasks write their chunks into a file their master created;
 * nofollow: never through a symbolic link, for files sheaf created itself). */
int core_file_open_rw(core_file *f, const char *name, int posix, int nofollow);
/* The descriptor under those opens: open(name, flags) with O_NONBLOCK and O_CLOEXEC, with
 * O_CREAT also O_NOFOLLOW (flags may ask for it without O_CREAT); only a regular file is
 * kept (then O_TRUNC is applied and O_NONBLOCK cleared). 0 and *fd set, or a SHEAF_E_*
 * code with the message recorded (a refused link: "... it is a symbolic link ..."). */
int core_open_regular(const char *name, int flags, int *fd);
int core_file_close(core_file *f); /* flushes; reports write-back errors */
int core_file_seek(core_file *f, int64_t off);
int core_file_tell(core_file *f, int64_t *off);
int core_file_write(core_file *f, const void *buf, size_t n);
/* Read exactly n bytes; hitting end of file is an error (SHEAF_E_FORMAT). */
int core_file_read(core_file *f, void *buf, size_t n);
int core_file_flush(core_file *f);
/* Flush and fsync: the file's data and size are on stable storage. */
int core_file_sync(core_file *f);
int core_file_size(core_file *f, int64_t *size);
/* Positioned read used for metadata (moves the current position). */
int core_file_pread(core_file *f, void *buf, size_t n, int64_t off);
/* File system block size for this file (st_blksize, else statvfs f_bsize), 0 if unknown. */
int64_t core_file_fs_blksize(core_file *f);
#endif
