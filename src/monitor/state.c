/* state.c - the monitored process's state (mon.h): the table's globals, the
 * descriptor slots, the thread-local "the monitor is busy" mark and the
 * clock. At the bottom of the writer side: every other module may use it, it
 * calls none of them. */
#define _GNU_SOURCE
#include "mon.h"

#include <time.h>

mon_state mon_g = {.sid = -1, .lock = PTHREAD_MUTEX_INITIALIZER};
mon_fd mon_fds[MON_FD_MAX];
__thread int mon_busy __attribute__((tls_model("initial-exec")));

uint64_t mon_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
