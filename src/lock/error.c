/* error.c - the thread-local message of the last failure, and names. */
#include "lock.h"
#include <stdarg.h>
#include <stdio.h>

static _Thread_local char errbuf[512];

int lk_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return code;
}

int lk_mpi_err(int mpirc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpirc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", mpirc);
    return lk_err(SHEAF_LOCK_EMPI, "sheaf_lock: %s failed: %s (src/lock)", what, text);
}

const char *sheaf_lock_last_error(void) { return errbuf; }

const char *sheaf_lock_kind_name(sheaf_lock_kind kind)
{
    switch (kind) {
    case SHEAF_LOCK_FLAGS:
        return "flags";
    case SHEAF_LOCK_MCS:
        return "mcs";
    case SHEAF_LOCK_MCS_SWAP:
        return "mcs-swap";
    case SHEAF_LOCK_POLL:
        return "poll";
    }
    return "unknown";
}

const char *sheaf_lock_progress_name(sheaf_lock_progress_mode mode)
{
    switch (mode) {
    case SHEAF_LOCK_PROGRESS_AUTO:
        return "auto";
    case SHEAF_LOCK_PROGRESS_LIBRARY:
        return "library";
    case SHEAF_LOCK_PROGRESS_ASYNC:
        return "async";
    case SHEAF_LOCK_PROGRESS_SHARED:
        return "shared";
    }
    return "unknown";
}
