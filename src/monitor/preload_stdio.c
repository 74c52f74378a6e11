/* preload_stdio.c - the stdio functions libsheaf_monitor_preload.so
 * interposes. A stream is followed through its descriptor's slot. Calls
 * moving fewer than MON_STDIO_TIMED bytes are counted but not timed (they
 * are copies into libc's buffer; a clock read would cost more than the call),
 * and only their operations, bytes, size bucket and highest byte are kept
 * (Darshan's STDIO module keeps no more; sequential/consecutive/alignment
 * counts are those of the POSIX calls and of stdio calls of 4 KiB or more):
 * every MON_STDIO_TICK of them in a thread read the clock once, for the last
 * time and the snapshot interval. Opens, closes, flushes and seeks are timed. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "sheaf_monitor_preload.h"

#define MON_STDIO_TIMED 4096
#define MON_STDIO_TICK 4096

static __thread unsigned mon_stdio_n __attribute__((tls_model("initial-exec")));

static inline int stream_fd(FILE *f)
{
#ifdef __GLIBC__
    return f ? f->_fileno : -1; /* what fileno() returns, without the call */
#else
    return f ? fileno(f) : -1;
#endif
}

static inline mon_frec *stream_rec(FILE *f) { return MON_ON() ? mon_fd_rec(stream_fd(f)) : NULL; }

/* count n bytes moved by a stdio call that took t0..(now) (t0 0: untimed) */
static void stdio_rw(mon_frec *r, FILE *f, int wr, uint64_t n, const void *buf, uint64_t t0)
{
    uint64_t at = mon_fd_advance(stream_fd(f), n);
    if (t0) {
        int e = errno;
        uint64_t t1 = mon_now_ns();
        mon_count_rw(r, wr, at, n, buf, t1 - t0, t1, 1);
        mon_tick(t1);
        errno = e;
        return;
    }
    /* untimed: nothing here sets errno but the rare clock read and snapshot */
    mon_count_small(r, wr, at, n);
    if (__builtin_expect(++mon_stdio_n % MON_STDIO_TICK == 0, 0)) {
        int e = errno;
        uint64_t now = mon_now_ns();
        uint64_t *last = &r->c[MC_LAST_NS];
        if (now > __atomic_load_n(last, __ATOMIC_RELAXED))
            __atomic_store_n(last, now, __ATOMIC_RELAXED);
        mon_tick(now);
        errno = e;
    }
}

static FILE *opened(FILE *f, const char *path, uint64_t t0)
{
    if (f) {
        int e = errno;
        mon_frec *r = mon_lookup(path, AT_FDCWD);
        if (r) {
            uint64_t t1 = mon_now_ns();
            mon_count_meta(r, MC_OPENS, t1 - t0);
            if (r->kind != MON_K_FILE)
                mon_count_add(r, MC_FILES, 1);
            mon_fd_set(stream_fd(f), r, 0);
            mon_tick(t1);
        }
        errno = e;
    }
    return f;
}

FILE *MON_FN(fopen)(const char *path, const char *mode)
{
    MON_READY();
    if (!MON_ON())
        return mon_real.fopen(path, mode);
    uint64_t t0 = mon_now_ns();
    return opened(mon_real.fopen(path, mode), path, t0);
}
FILE *MON_FN(fopen64)(const char *path, const char *mode)
{
    MON_READY();
    if (!MON_ON())
        return mon_real.fopen64(path, mode);
    uint64_t t0 = mon_now_ns();
    return opened(mon_real.fopen64(path, mode), path, t0);
}

int MON_FN(fclose)(FILE *f)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    if (!r)
        return mon_real.fclose(f);
    int fd = stream_fd(f);
    uint64_t t0 = mon_now_ns();
    mon_fd_set(fd, NULL, 0);
    int rc = mon_real.fclose(f);
    int e = errno;
    uint64_t t1 = mon_now_ns();
    mon_count_meta(r, -1, t1 - t0);
    mon_tick(t1);
    errno = e;
    return rc;
}

int MON_FN(fflush)(FILE *f)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    if (!r)
        return mon_real.fflush(f);
    uint64_t t0 = mon_now_ns();
    int rc = mon_real.fflush(f);
    int e = errno;
    uint64_t t1 = mon_now_ns();
    mon_count_meta(r, MC_FLUSHES, t1 - t0);
    mon_tick(t1);
    errno = e;
    return rc;
}

size_t MON_FN(fread)(void *ptr, size_t size, size_t n, FILE *f)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    if (!r)
        return mon_real.fread(ptr, size, n, f);
    uint64_t t0 = size * n >= MON_STDIO_TIMED ? mon_now_ns() : 0;
    size_t got = mon_real.fread(ptr, size, n, f);
    stdio_rw(r, f, 0, (uint64_t)got * size, ptr, t0);
    return got;
}

size_t MON_FN(fwrite)(const void *ptr, size_t size, size_t n, FILE *f)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    if (!r)
        return mon_real.fwrite(ptr, size, n, f);
    uint64_t t0 = size * n >= MON_STDIO_TIMED ? mon_now_ns() : 0;
    size_t got = mon_real.fwrite(ptr, size, n, f);
    stdio_rw(r, f, 1, (uint64_t)got * size, ptr, t0);
    return got;
}

#define CHAR_OUT(call)                                                                                                 \
    MON_READY();                                                                                                       \
    mon_frec *r = stream_rec(f);                                                                                       \
    if (!r)                                                                                                            \
        return call;                                                                                                   \
    int rc = call;                                                                                                     \
    if (rc != EOF)                                                                                                     \
        stdio_rw(r, f, 1, 1, &c, 0);                                                                                   \
    return rc;

int MON_FN(fputc)(int c, FILE *f) { CHAR_OUT(mon_real.fputc(c, f)); }
int MON_FN(putc)(int c, FILE *f) { CHAR_OUT(mon_real.putc(c, f)); }

#define CHAR_IN(call)                                                                                                  \
    MON_READY();                                                                                                       \
    mon_frec *r = stream_rec(f);                                                                                       \
    if (!r)                                                                                                            \
        return call;                                                                                                   \
    int rc = call;                                                                                                     \
    if (rc != EOF)                                                                                                     \
        stdio_rw(r, f, 0, 1, &rc, 0);                                                                                  \
    return rc;

int MON_FN(fgetc)(FILE *f) { CHAR_IN(mon_real.fgetc(f)); }
int MON_FN(getc)(FILE *f) { CHAR_IN(mon_real.getc(f)); }

int MON_FN(fputs)(const char *s, FILE *f)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    if (!r)
        return mon_real.fputs(s, f);
    size_t len = strlen(s);
    uint64_t t0 = len >= MON_STDIO_TIMED ? mon_now_ns() : 0;
    int rc = mon_real.fputs(s, f);
    if (rc != EOF)
        stdio_rw(r, f, 1, len, s, t0);
    return rc;
}

char *MON_FN(fgets)(char *s, int n, FILE *f)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    if (!r)
        return mon_real.fgets(s, n, f);
    uint64_t t0 = n >= MON_STDIO_TIMED ? mon_now_ns() : 0;
    char *got = mon_real.fgets(s, n, f);
    if (got)
        stdio_rw(r, f, 0, strlen(got), s, t0);
    return got;
}

static int printed(mon_frec *r, FILE *f, int rc, const char *fmt)
{
    if (rc > 0)
        stdio_rw(r, f, 1, (uint64_t)rc, fmt, 0);
    return rc;
}

int MON_FN(vfprintf)(FILE *f, const char *fmt, va_list ap)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    int rc = mon_real.vfprintf(f, fmt, ap);
    return r ? printed(r, f, rc, fmt) : rc;
}
int MON_FN(fprintf)(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = MON_FN(vfprintf)(f, fmt, ap);
    va_end(ap);
    return rc;
}
int MON_FN(__vfprintf_chk)(FILE *f, int flag, const char *fmt, va_list ap)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    int rc = mon_real.__vfprintf_chk(f, flag, fmt, ap);
    return r ? printed(r, f, rc, fmt) : rc;
}
int MON_FN(__fprintf_chk)(FILE *f, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = MON_FN(__vfprintf_chk)(f, flag, fmt, ap);
    va_end(ap);
    return rc;
}

/* seeks: the stream's offset as far as it is known without asking the kernel */
static int seeked(mon_frec *r, FILE *f, int rc, int64_t off, int whence, uint64_t t0)
{
    if (rc == 0) {
        int e = errno, fd = stream_fd(f);
        if (whence == SEEK_SET)
            __atomic_store_n(&mon_fds[fd].pos, (uint64_t)off, __ATOMIC_RELAXED);
        else if (whence == SEEK_CUR)
            __atomic_fetch_add(&mon_fds[fd].pos, (uint64_t)off, __ATOMIC_RELAXED);
        uint64_t t1 = mon_now_ns();
        mon_count_meta(r, MC_SEEKS, t1 - t0);
        mon_tick(t1);
        errno = e;
    }
    return rc;
}

#define SEEK_BODY(call)                                                                                                \
    MON_READY();                                                                                                       \
    mon_frec *r = stream_rec(f);                                                                                       \
    if (!r)                                                                                                            \
        return call;                                                                                                   \
    uint64_t t0 = mon_now_ns();                                                                                        \
    return seeked(r, f, call, (int64_t)off, whence, t0);

int MON_FN(fseek)(FILE *f, long off, int whence) { SEEK_BODY(mon_real.fseek(f, off, whence)); }
int MON_FN(fseeko)(FILE *f, off_t off, int whence) { SEEK_BODY(mon_real.fseeko(f, off, whence)); }
int MON_FN(fseeko64)(FILE *f, off64_t off, int whence) { SEEK_BODY(mon_real.fseeko64(f, off, whence)); }
void MON_FN(rewind)(FILE *f)
{
    MON_READY();
    mon_frec *r = stream_rec(f);
    if (!r) {
        mon_real.rewind(f);
        return;
    }
    uint64_t t0 = mon_now_ns();
    mon_real.rewind(f);
    seeked(r, f, 0, 0, SEEK_SET, t0);
}
