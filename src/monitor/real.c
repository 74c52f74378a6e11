/* real.c - the real functions behind the wrappers (mon_real): resolved
 * once, with dlsym(RTLD_NEXT) in the preloaded library or from the
 * linker's __real_ names in a static --wrap link (preload.h, RES). Below the
 * wrappers (preload.c, preload_stdio.c), which call it; calls nothing of
 * theirs. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include "preload.h"

#include <dlfcn.h>

struct mon_real mon_real;

void mon_resolve(void)
{
    RES(open);
    RES(open64);
    RES(openat);
    RES(openat64);
    RES(creat);
    RES(creat64);
    RES(close);
    RES(close_range);
    RES(dup);
    RES(dup2);
    RES(dup3);
    RES(read);
    RES(write);
    RES(pread);
    RES(pread64);
    RES(pwrite);
    RES(pwrite64);
    RES(readv);
    RES(writev);
    RES(__read_chk);
    RES(mmap);
    RES(mmap64);
    RES(lseek);
    RES(lseek64);
    RES(stat);
    RES(lstat);
    RES(fstat);
    RES(fstatat);
    RES(stat64);
    RES(lstat64);
    RES(fstat64);
    RES(fstatat64);
    RES(fsync);
    RES(fdatasync);
    RES(chdir);
    RES(execve);
    RES(execv);
    RES(execvp);
    RES(_exit);
    RES(_Exit);
    mon_resolve_stdio();
    __atomic_store_n(&mon_real.ready, 1, __ATOMIC_RELEASE);
}

void mon_resolve_stdio(void)
{
    RES(fopen);
    RES(fopen64);
    RES(fclose);
    RES(fflush);
    RES(fread);
    RES(fwrite);
    RES(fputc);
    RES(putc);
    RES(fputs);
    RES(fgetc);
    RES(getc);
    RES(fgets);
    RES(vfprintf);
    RES(__vfprintf_chk);
    RES(fseek);
    RES(fseeko);
    RES(fseeko64);
    RES(rewind);
}
