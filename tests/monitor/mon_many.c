/* mon_many.c - N files of (i % 100) + 1 bytes each, half in DIR/a, half in
 * DIR/b, each opened, written once and closed (test_monitor.py budget).
 * Prints the total bytes. usage: mon_many DIR N */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
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
    printf("%lld\n", total);
    return 0;
}
