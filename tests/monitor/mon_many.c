/* mon_many.c - N files of (i % 100) + 1 bytes each, half in DIR/a, half in
 * DIR/b, each opened, written once and closed (test_monitor.py budget).
 * Prints the total bytes and, with a third argument, the peak resident
 * memory (VmHWM, kB; one more open). usage: mon_many DIR N [hwm] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4)
        return 2;
    int n = atoi(argv[2]);
    char path[4096], buf[100];
    memset(buf, 'm', sizeof buf);
    long long total = 0;
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/%c", argv[1], "ab"[s]);
        mkdir(path, 0755);
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%c/f%05d", argv[1], "ab"[i % 2], i);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        size_t len = (size_t)(i % 100) + 1;
        if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd))
            return 1;
        total += (long long)len;
    }
    /* the peak resident memory (kB), for the memory bound at many files */
    long hwm = -1;
    FILE *st = argc == 4 ? fopen("/proc/self/status", "r") : NULL;
    char line[256];
    while (st && fgets(line, sizeof line, st))
        if (!strncmp(line, "VmHWM:", 6))
            hwm = atol(line + 6);
    if (st)
        fclose(st);
    printf("%lld %ld\n", total, hwm);
    return 0;
}
