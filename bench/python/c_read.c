/* c_read.c - the C side of bench/python: write a one-task container of SIZE
 * bytes, or read one task into one buffer with a single sion_fread, timed.
 *   c_read write FILE SIZE_MIB      (serial sion_open, one task, chunk = size)
 *   c_read read FILE TASK [REPS [fresh]]
 *                                   (sion_open "rb,posix", sion_fread of the
 *                                    whole task into a pre-touched buffer, or
 *                                    with "fresh" into a buffer malloc'd for
 *                                    each rep and never touched before, timed
 *                                    with its malloc and free; prints one line
 *                                    per rep: wall seconds, CPU seconds of the
 *                                    process, GiB/s)
 * The same open mode and the same call as the Python reader's readinto (into
 * a pre-touched buffer) and read_task (into a new bytes object: "fresh"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sion.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static int do_write(char *fname, long long mib)
{
    int ntasks = 1, nfiles = 1, granks[1] = {0};
    int *gr = granks;
    sion_int64 chunks[1] = {mib << 20};
    sion_int64 *cs = chunks;
    sion_int32 fsblk = -1;
    FILE *fp = NULL;
    int sid = sion_open(fname, "wb,posix", &ntasks, &nfiles, &cs, &fsblk, &gr, &fp);
    if (sid < 0)
        return 1;
    size_t piece = 64u << 20;
    unsigned char *buf = malloc(piece);
    if (!buf)
        return 1;
    for (size_t i = 0; i < piece; i++)
        buf[i] = (unsigned char)(i * 7 + (i >> 12));
    int rc = 0;
    for (long long done = 0; done < chunks[0] && !rc; done += (long long)piece)
        rc = sion_fwrite(buf, 1, piece, sid) != piece;
    free(buf);
    return sion_close(sid) == SION_SUCCESS ? rc : 1;
}

static int do_read(char *fname, int task, int reps, int fresh)
{
    int ntasks = 0, nfiles = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_open(fname, "rb,posix", &ntasks, &nfiles, NULL, &fsblk, NULL, &fp);
    if (sid < 0 || task < 0 || task >= ntasks)
        return 1;
    int maxc = 0, blk = 0;
    sion_int64 pos = 0, *sizes = NULL, total = 0;
    sion_seek(sid, task, 0, 0);
    sion_get_current_location(sid, &blk, &pos, &maxc, &sizes);
    for (int b = 0; b < maxc; b++)
        total += sizes[b] > 0 ? sizes[b] : 0;
    if (total <= 0)
        return 1;
    unsigned char *buf = NULL;
    if (!fresh) {
        buf = malloc((size_t)total);
        if (!buf)
            return 1;
        memset(buf, 1, (size_t)total);
    }
    for (int r = 0; r < reps; r++) {
        sion_seek(sid, task, 0, 0);
        double t0 = now(), c0 = cpu();
        if (fresh && !(buf = malloc((size_t)total)))
            return 1;
        size_t got = sion_fread(buf, 1, (size_t)total, sid);
        if (fresh) {
            /* keep the compiler from dropping the read buffer */
            volatile unsigned char sink = buf[total - 1];
            (void)sink;
            free(buf);
            buf = NULL;
        }
        double dt = now() - t0, dc = cpu() - c0;
        if ((sion_int64)got != total)
            return 1;
        printf("%.4f %.4f %.3f\n", dt, dc, total / dt / (1 << 30));
    }
    free(buf);
    return sion_close(sid) == SION_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "write"))
        return do_write(argv[2], atoll(argv[3]));
    if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "read"))
        return do_read(argv[2], atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 1, argc == 6 && !strcmp(argv[5], "fresh"));
    fprintf(stderr, "usage: c_read write FILE SIZE_MIB | c_read read FILE TASK [REPS [fresh]]\n");
    return 2;
}
