/* mon_targets.c - a known pattern of writes to storage targets, for the
 * monitor's per-target and online-view tests (test_monitor.py targets, top).
 *   mon_targets [--wait] DIR:NFILES:BYTES ...
 * For each argument writes NFILES files DIR/tN_K of BYTES bytes each: half
 * of each file with write() in 4000-byte pieces, the rest with fwrite (so
 * POSIX and stdio both count), then closes them. Prints the bytes written
 * per DIR ("DIR BYTES") and, with --wait, "ready" and then blocks reading
 * standard input until end of file (the test controls when it ends). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[65536];

static int write_file(const char *path, long bytes)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    long half = bytes / 2, done = 0;
    while (done < half) {
        long n = half - done < 4000 ? half - done : 4000;
        if (write(fd, buf, (size_t)n) != n) {
            perror(path);
            return -1;
        }
        done += n;
    }
    close(fd);
    FILE *f = fopen(path, "a");
    if (!f) {
        perror(path);
        return -1;
    }
    while (done < bytes) {
        long n = bytes - done < (long)sizeof buf ? bytes - done : (long)sizeof buf;
        if (fwrite(buf, 1, (size_t)n, f) != (size_t)n) {
            perror(path);
            return -1;
        }
        done += n;
    }
    return fclose(f);
}

int main(int argc, char **argv)
{
    int wait = 0, i = 1;
    memset(buf, 'x', sizeof buf);
    if (i < argc && !strcmp(argv[i], "--wait"))
        wait = 1, i++;
    for (int a = i; a < argc; a++) {
        char dir[2048];
        int nf;
        long bytes;
        const char *c2 = strrchr(argv[a], ':');
        if (!c2 || c2 == argv[a])
            return 2;
        const char *c1 = c2 - 1;
        while (c1 > argv[a] && *c1 != ':')
            c1--;
        if (*c1 != ':' || (size_t)(c1 - argv[a]) >= sizeof dir)
            return 2;
        memcpy(dir, argv[a], (size_t)(c1 - argv[a]));
        dir[c1 - argv[a]] = 0;
        nf = atoi(c1 + 1);
        bytes = atol(c2 + 1);
        for (int k = 0; k < nf; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/t%d_%d", dir, a, k);
            if (write_file(path, bytes))
                return 1;
        }
        printf("%s %ld\n", dir, (long)nf * bytes);
    }
    if (wait) {
        printf("ready\n");
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0)
            ;
    }
    return 0;
}
