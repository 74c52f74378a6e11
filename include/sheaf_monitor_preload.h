/* sheaf_monitor_preload.h - libsheaf_monitor_preload.so, sheaf's I/O monitor
 * for programs that do not use sheaf (src/monitor, doc/monitor.md). It is not
 * called by programs: named in LD_PRELOAD (`sheaf stats run` sets it), it
 * interposes these POSIX and stdio functions of the C library, counts what
 * each does per file and calls the real one. It is active only when
 * SHEAF_MONITOR names the job's log directory. These are its only exports.
 * Include it without _FILE_OFFSET_BITS=64 (the 64-bit names are declared
 * separately). */
#ifndef SHEAF_MONITOR_PRELOAD_H
#define SHEAF_MONITOR_PRELOAD_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "sheaf_export.h"

/* POSIX: opening and closing */
SHEAF_API int open(const char *path, int flags, ...);
SHEAF_API int open64(const char *path, int flags, ...);
SHEAF_API int openat(int dirfd, const char *path, int flags, ...);
SHEAF_API int openat64(int dirfd, const char *path, int flags, ...);
SHEAF_API int creat(const char *path, mode_t mode);
SHEAF_API int creat64(const char *path, mode_t mode);
SHEAF_API int close(int fd);
SHEAF_API int close_range(unsigned int first, unsigned int last, int flags);
SHEAF_API int dup(int fd);
SHEAF_API int dup2(int fd, int fd2);
SHEAF_API int dup3(int fd, int fd2, int flags);
/* POSIX: data */
SHEAF_API ssize_t read(int fd, void *buf, size_t n);
SHEAF_API ssize_t write(int fd, const void *buf, size_t n);
SHEAF_API ssize_t pread(int fd, void *buf, size_t n, off_t off);
SHEAF_API ssize_t pread64(int fd, void *buf, size_t n, off64_t off);
SHEAF_API ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);
SHEAF_API ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off);
SHEAF_API ssize_t readv(int fd, const struct iovec *iov, int iovcnt);
SHEAF_API ssize_t writev(int fd, const struct iovec *iov, int iovcnt);
SHEAF_API ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
SHEAF_API void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
SHEAF_API void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off);
/* POSIX: metadata */
SHEAF_API off_t lseek(int fd, off_t off, int whence);
SHEAF_API off64_t lseek64(int fd, off64_t off, int whence);
SHEAF_API int stat(const char *path, struct stat *st);
SHEAF_API int lstat(const char *path, struct stat *st);
SHEAF_API int fstat(int fd, struct stat *st);
SHEAF_API int fstatat(int dirfd, const char *path, struct stat *st, int flags);
SHEAF_API int stat64(const char *path, struct stat64 *st);
SHEAF_API int lstat64(const char *path, struct stat64 *st);
SHEAF_API int fstat64(int fd, struct stat64 *st);
SHEAF_API int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags);
SHEAF_API int fsync(int fd);
SHEAF_API int fdatasync(int fd);
SHEAF_API int chdir(const char *path);
/* process: the log's last snapshot before the image goes away */
SHEAF_API int execve(const char *path, char *const argv[], char *const envp[]);
SHEAF_API int execv(const char *path, char *const argv[]);
SHEAF_API int execvp(const char *file, char *const argv[]);
SHEAF_API void _exit(int status);
SHEAF_API void _Exit(int status);
/* stdio */
SHEAF_API FILE *fopen(const char *path, const char *mode);
SHEAF_API FILE *fopen64(const char *path, const char *mode);
SHEAF_API int fclose(FILE *f);
SHEAF_API int fflush(FILE *f);
SHEAF_API size_t fread(void *ptr, size_t size, size_t n, FILE *f);
SHEAF_API size_t fwrite(const void *ptr, size_t size, size_t n, FILE *f);
SHEAF_API int fputc(int c, FILE *f);
SHEAF_API int putc(int c, FILE *f);
SHEAF_API int fputs(const char *s, FILE *f);
SHEAF_API int fgetc(FILE *f);
SHEAF_API int getc(FILE *f);
SHEAF_API char *fgets(char *s, int n, FILE *f);
SHEAF_API int fprintf(FILE *f, const char *fmt, ...);
SHEAF_API int vfprintf(FILE *f, const char *fmt, va_list ap);
SHEAF_API int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
SHEAF_API int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
SHEAF_API int fseek(FILE *f, long off, int whence);
SHEAF_API int fseeko(FILE *f, off_t off, int whence);
SHEAF_API int fseeko64(FILE *f, off64_t off, int whence);
SHEAF_API void rewind(FILE *f);

#endif
