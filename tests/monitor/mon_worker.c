/* mon_worker.c - one process of the SIGKILL test (test_monitor.py kill):
 * phases 1..3 each write 10 x 100 bytes to FILE, wait past the snapshot
 * interval and fsync (the monitored operation that takes the snapshot, then
 * durable); phase 4 writes 10 x 100 more right after (inside the interval:
 * not in any snapshot); after each phase "PID PHASE" on stdout; then it waits
 * to be killed. usage: mon_worker FILE WAIT_MS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    char buf[100];
    memset(buf, 'w', sizeof buf);
    long ms = atol(argv[2]);
    struct timespec wait = {ms / 1000, (ms % 1000) * 1000000L};
    int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    for (int phase = 1; phase <= 4; phase++) {
        for (int i = 0; i < 10; i++)
            if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
                return 1;
        if (phase < 4) {
            nanosleep(&wait, NULL);
            if (fsync(fd))
                return 1;
        }
        dprintf(1, "%ld %d\n", (long)getpid(), phase);
    }
    for (;;)
        pause();
}
