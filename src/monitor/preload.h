/* preload.h - what the interposition wrappers (preload.c, preload_stdio.c) share:
 * the real functions of the C library (dlsym RTLD_NEXT) and the fast lookups. */
#ifndef MON_PRELOAD_H
#define MON_PRELOAD_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "mon.h"

struct mon_real {
    int ready;
    int (*open)(const char *, int, ...);
    int (*open64)(const char *, int, ...);
    int (*openat)(int, const char *, int, ...);
    int (*openat64)(int, const char *, int, ...);
    int (*creat)(const char *, mode_t);
    int (*creat64)(const char *, mode_t);
    int (*close)(int);
    int (*close_range)(unsigned int, unsigned int, int);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*write)(int, const void *, size_t);
    ssize_t (*pread)(int, void *, size_t, off_t);
    ssize_t (*pread64)(int, void *, size_t, off64_t);
    ssize_t (*pwrite)(int, const void *, size_t, off_t);
    ssize_t (*pwrite64)(int, const void *, size_t, off64_t);
    ssize_t (*readv)(int, const struct iovec *, int);
    ssize_t (*writev)(int, const struct iovec *, int);
    ssize_t (*__read_chk)(int, void *, size_t, size_t);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    void *(*mmap64)(void *, size_t, int, int, int, off64_t);
    off_t (*lseek)(int, off_t, int);
    off64_t (*lseek64)(int, off64_t, int);
    int (*stat)(const char *, struct stat *);
    int (*lstat)(const char *, struct stat *);
    int (*fstat)(int, struct stat *);
    int (*fstatat)(int, const char *, struct stat *, int);
    int (*stat64)(const char *, struct stat64 *);
    int (*lstat64)(const char *, struct stat64 *);
    int (*fstat64)(int, struct stat64 *);
    int (*fstatat64)(int, const char *, struct stat64 *, int);
    int (*fsync)(int);
    int (*fdatasync)(int);
    int (*chdir)(const char *);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    void (*_exit)(int);
    void (*_Exit)(int);
    /* stdio */
    FILE *(*fopen)(const char *, const char *);
    FILE *(*fopen64)(const char *, const char *);
    int (*fclose)(FILE *);
    int (*fflush)(FILE *);
    size_t (*fread)(void *, size_t, size_t, FILE *);
    size_t (*fwrite)(const void *, size_t, size_t, FILE *);
    int (*fputc)(int, FILE *);
    int (*putc)(int, FILE *);
    int (*fputs)(const char *, FILE *);
    int (*fgetc)(FILE *);
    int (*getc)(FILE *);
    char *(*fgets)(char *, int, FILE *);
    int (*vfprintf)(FILE *, const char *, va_list);
    int (*__vfprintf_chk)(FILE *, int, const char *, va_list);
    int (*fseek)(FILE *, long, int);
    int (*fseeko)(FILE *, off_t, int);
    int (*fseeko64)(FILE *, off64_t, int);
    void (*rewind)(FILE *);
};
extern struct mon_real mon_real;
void mon_resolve(void);
void mon_resolve_stdio(void);

/* the wrappers' names and how the real functions are found: LD_PRELOAD (the
 * libc names, dlsym RTLD_NEXT) or a link with -Wl,--wrap (MON_STATIC:
 * __wrap_NAME, and the linker's __real_NAME) */
#ifdef MON_STATIC
#define MON_FN(name) __wrap_##name
#define RES(name)                                                                                                      \
    do {                                                                                                               \
        extern __typeof__(*mon_real.name) __real_##name;                                                               \
        mon_real.name = &__real_##name;                                                                                \
    } while (0)
#else
#define MON_FN(name) name
#define RES(name) mon_real.name = (__typeof__(mon_real.name))dlsym(RTLD_NEXT, #name)
#endif

#define MON_READY()                                                                                                    \
    do {                                                                                                               \
        if (__builtin_expect(!__atomic_load_n(&mon_real.ready, __ATOMIC_ACQUIRE), 0))                                  \
            mon_resolve();                                                                                             \
    } while (0)
#define MON_ON() (mon_g.on && !mon_busy)

/* the record of a tracked descriptor, NULL if it is not tracked */
static inline mon_frec *mon_fd_rec(int fd)
{
    return (unsigned)fd < MON_FD_MAX ? __atomic_load_n(&mon_fds[fd].rec, __ATOMIC_ACQUIRE) : NULL;
}

/* move the descriptor's offset n bytes on; its offset before */
static inline uint64_t mon_fd_advance(int fd, uint64_t n)
{
    if (__libc_single_threaded) {
        uint64_t at = mon_fds[fd].pos;
        mon_fds[fd].pos = at + n;
        return at;
    }
    return __atomic_fetch_add(&mon_fds[fd].pos, n, __ATOMIC_RELAXED);
}

#endif
