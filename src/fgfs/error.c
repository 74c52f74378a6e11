/* error.c - the thread-local message of the last failure (sheaf_fgfs_last_error). */
#include "fgfs.h"
#include <stdio.h>

static _Thread_local char errbuf[1024];

int fgfs_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return code;
}

const char *sheaf_fgfs_last_error(void) { return errbuf; }

int sheaf_fgfs_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return code;
}
