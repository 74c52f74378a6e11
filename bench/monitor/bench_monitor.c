/* bench_monitor.c - the I/O patterns of the monitor's overhead benchmark
 * (bench/monitor/run.py runs each plain and under libsheaf_monitor_preload):
 *   fputc  FILE N      N one-byte fputc calls (stdio)
 *   fwrite FILE N      N one-byte fwrite calls (stdio)
 *   write  FILE N      N one-byte write() calls
 *   bulk   FILE BYTES  BYTES written sequentially in 1 MiB write() calls, then fsync
 * Prints the bytes it wrote; exit 1 on an I/O error. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_monitor fputc|fwrite|write|bulk FILE N\n");
        return 2;
    }
    const char *mode = argv[1], *path = argv[2];
    long long n = atoll(argv[3]), done = 0;
    if (!strcmp(mode, "fputc") || !strcmp(mode, "fwrite")) {
        FILE *f = fopen(path, "w");
        if (!f)
            return 1;
        int put = !strcmp(mode, "fputc");
        char c = 'x';
        for (long long i = 0; i < n; i++)
            done += put ? (fputc(c, f) != EOF) : (long long)fwrite(&c, 1, 1, f);
        if (fclose(f))
            return 1;
    } else if (!strcmp(mode, "write") || !strcmp(mode, "bulk")) {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0)
            return 1;
        if (!strcmp(mode, "write")) {
            char c = 'x';
            for (long long i = 0; i < n; i++)
                done += write(fd, &c, 1);
        } else {
            size_t blk = 1 << 20;
            char *buf = malloc(blk);
            memset(buf, 'b', blk);
            while (done < n) {
                ssize_t w = write(fd, buf, blk);
                if (w <= 0)
                    return 1;
                done += w;
            }
            free(buf);
            if (fsync(fd))
                return 1;
        }
        if (close(fd))
            return 1;
    } else {
        return 2;
    }
    printf("%lld\n", done);
    return done == n ? 0 : 1;
}
