/* error.c - the thread-local message of this layer's last failure. */
#include "comm.h"
#include <stdio.h>

static _Thread_local char errbuf[1024];

int comm_verr(int code, const char *fmt, va_list ap)
{
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    return code;
}

int comm_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    comm_verr(code, fmt, ap);
    va_end(ap);
    return code;
}

int sheaf_comm_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    comm_verr(code, fmt, ap);
    va_end(ap);
    return code;
}

const char *sheaf_comm_last_error(void) { return errbuf; }
