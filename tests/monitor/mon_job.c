/* mon_job.c - the known job of the report and export tests (test_report.py):
 * 4 "ranks" (forked processes, SHEAF_MONITOR_RANK set before their first I/O),
 * each ending with _exit (the final snapshot):
 *   rank 0: part.0: 16 writes of 64 KiB; small.log: 1000 writes of 10 bytes
 *   rank 1: meta.cfg: 300 opens (and closes) and 300 stats, no bytes
 *   rank 2: part.2: 16 writes of 64 KiB, then 16 reads of 64 KiB
 *   rank 3: part.3: 64 writes of 64 KiB in 4 phases 60 ms apart
 * usage: mon_job DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[65536];

static int writes(const char *dir, const char *name, int n, size_t sz, int phases)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    for (int i = 0; i < n; i++) {
        if (write(fd, buf, sz) != (ssize_t)sz)
            return 1;
        if (phases && (i + 1) % (n / phases) == 0) {
            struct timespec ts = {0, 60000000};
            nanosleep(&ts, NULL);
        }
    }
    return close(fd);
}

static int rank(const char *dir, int r)
{
    char p[4096];
    if (r == 0)
        return writes(dir, "part.0", 16, 65536, 0) || writes(dir, "small.log", 1000, 10, 0);
    if (r == 1) {
        snprintf(p, sizeof p, "%s/meta.cfg", dir);
        struct stat st;
        for (int i = 0; i < 300; i++) {
            int fd = open(p, O_CREAT | O_RDONLY, 0644);
            if (fd < 0 || close(fd) || stat(p, &st))
                return 1;
        }
        return 0;
    }
    if (r == 2) {
        if (writes(dir, "part.2", 16, 65536, 0))
            return 1;
        snprintf(p, sizeof p, "%s/part.2", dir);
        int fd = open(p, O_RDONLY);
        for (int i = 0; i < 16; i++)
            if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
                return 1;
        return close(fd);
    }
    return writes(dir, "part.3", 64, 65536, 4);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    memset(buf, 'j', sizeof buf);
    for (int r = 0; r < 4; r++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            char v[16];
            snprintf(v, sizeof v, "%d", r);
            setenv("SHEAF_MONITOR_RANK", v, 1);
            _exit(rank(argv[1], r));
        }
    }
    int bad = 0, st;
    while (wait(&st) > 0)
        bad |= !WIFEXITED(st) || WEXITSTATUS(st);
    return bad;
}
