/* sion_convert.c - convert N task-local files into one SIONlib container and back.
 *
 * Written in SIONlib's usual serial style, with SIONlib API names only, so it
 * builds unchanged against SIONlib 1.7 or sheaf:
 *
 *   cc $(sionconfig --cflags --ser) -c sion_convert.c
 *   cc sion_convert.o $(sionconfig --libs --ser) -o sion_convert
 *
 * Usage:
 *   sion_convert [-c chunksize] [-q fsblksize] -w <container> <in-file>...
 *       task i of the new container holds the bytes of the i-th input file.
 *   sion_convert -r <container> <out-file>...
 *       writes task i of the container to the i-th output file (as many output
 *       files as the container has tasks).
 *
 * Data is moved in pieces of at most one chunk (and at most 1 MiB) per
 * sion_fwrite, so each write fits into a block (a requirement of SIONlib 1.7;
 * sheaf would also accept larger writes). Without -c, each task's chunk size
 * is its input file's size. A task never needs more than 100 blocks: with -c,
 * a chunk size too small for that is raised (SIONlib 1.7's serial writer keeps
 * block sizes for 100 blocks per task only and corrupts memory beyond).
 * Exit status 0 on success, 1 on any error.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "sion.h"

#define MAX_BUFSIZE (1 << 20) /* copy at most 1 MiB (and at most one chunk) at a time */
#define MAX_BLOCKS 100        /* blocks per task a serial SIONlib 1.7 write can hold */

static size_t copy_bufsize(sion_int64 chunksize)
{
    if (chunksize <= 0)
        return 1;
    return chunksize < MAX_BUFSIZE ? (size_t)chunksize : MAX_BUFSIZE;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-c chunksize] [-q fsblksize] -w <container> <in-file>...\n"
            "       %s -r <container> <out-file>...\n",
            prog, prog);
}

static long file_size(const char *name)
{
    FILE *f = fopen(name, "rb");
    long size;
    if (!f) {
        fprintf(stderr, "sion_convert: cannot open %s: %s\n", name, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
        fprintf(stderr, "sion_convert: cannot size %s: %s\n", name, strerror(errno));
        size = -1;
    }
    fclose(f);
    return size;
}

static int write_container(char *container, char **inputs, int ntasks, sion_int64 chunksize, sion_int32 fsblksize)
{
    sion_int64 *chunksizes = malloc(ntasks * sizeof(*chunksizes));
    int *globalranks = malloc(ntasks * sizeof(*globalranks));
    char *buf = NULL;
    int nfiles = 1, sid, t, rc = 0;
    FILE *fp = NULL;

    if (!chunksizes || !globalranks) {
        fprintf(stderr, "sion_convert: out of memory\n");
        free(chunksizes);
        free(globalranks);
        return 1;
    }
    for (t = 0; t < ntasks; t++) {
        long size = file_size(inputs[t]);
        if (size < 0) {
            free(chunksizes);
            free(globalranks);
            return 1;
        }
        /* one chunk per task: the given size, or the whole file (at least 1 byte) */
        chunksizes[t] = chunksize > 0 ? chunksize : (size > 0 ? size : 1);
        if (chunksizes[t] * MAX_BLOCKS < size)
            chunksizes[t] = (size + MAX_BLOCKS - 1) / MAX_BLOCKS;
        globalranks[t] = t;
    }

    sid = sion_open(container, "wb", &ntasks, &nfiles, &chunksizes, &fsblksize, &globalranks, &fp);
    if (sid < 0) {
        fprintf(stderr, "sion_convert: cannot create %s\n", container);
        free(chunksizes);
        free(globalranks);
        return 1;
    }

    for (t = 0; t < ntasks && rc == 0; t++) {
        size_t bufsize = copy_bufsize(chunksizes[t]), n;
        FILE *in;
        char *nbuf = realloc(buf, bufsize);
        if (!nbuf) {
            fprintf(stderr, "sion_convert: out of memory\n");
            rc = 1;
            break;
        }
        buf = nbuf;
        if (sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS) {
            fprintf(stderr, "sion_convert: cannot switch to task %d\n", t);
            rc = 1;
            break;
        }
        in = fopen(inputs[t], "rb");
        if (!in) {
            fprintf(stderr, "sion_convert: cannot open %s: %s\n", inputs[t], strerror(errno));
            rc = 1;
            break;
        }
        while ((n = fread(buf, 1, bufsize, in)) > 0) {
            if (sion_fwrite(buf, 1, n, sid) != n) {
                fprintf(stderr, "sion_convert: write of task %d failed\n", t);
                rc = 1;
                break;
            }
        }
        if (ferror(in)) {
            fprintf(stderr, "sion_convert: cannot read %s\n", inputs[t]);
            rc = 1;
        }
        fclose(in);
    }

    if (sion_close(sid) != SION_SUCCESS) {
        fprintf(stderr, "sion_convert: closing %s failed\n", container);
        rc = 1;
    }
    free(buf);
    free(chunksizes);
    free(globalranks);
    return rc;
}

static int read_container(char *container, char **outputs, int noutputs)
{
    int ntasks = 0, nfiles = 0, sid, t, rc = 0;
    sion_int32 fsblksize = 0;
    sion_int64 *chunksizes = NULL;
    int *globalranks = NULL;
    FILE *fp = NULL;
    char *buf = NULL;

    sid = sion_open(container, "rb", &ntasks, &nfiles, &chunksizes, &fsblksize, &globalranks, &fp);
    if (sid < 0) {
        fprintf(stderr, "sion_convert: cannot open %s\n", container);
        return 1;
    }
    if (ntasks != noutputs) {
        fprintf(stderr, "sion_convert: %s has %d tasks, but %d output files were given\n", container, ntasks, noutputs);
        sion_close(sid);
        free(chunksizes);
        free(globalranks);
        return 1;
    }

    for (t = 0; t < ntasks && rc == 0; t++) {
        size_t bufsize = copy_bufsize(chunksizes[t]);
        char *nbuf = realloc(buf, bufsize);
        FILE *out;
        if (!nbuf) {
            fprintf(stderr, "sion_convert: out of memory\n");
            rc = 1;
            break;
        }
        buf = nbuf;
        if (sion_seek(sid, t, 0, 0) != SION_SUCCESS) {
            fprintf(stderr, "sion_convert: cannot switch to task %d\n", t);
            rc = 1;
            break;
        }
        out = fopen(outputs[t], "wb");
        if (!out) {
            fprintf(stderr, "sion_convert: cannot create %s: %s\n", outputs[t], strerror(errno));
            rc = 1;
            break;
        }
        while (!sion_feof(sid)) {
            sion_int64 avail = sion_bytes_avail_in_block(sid);
            size_t want = avail < (sion_int64)bufsize ? (size_t)avail : bufsize;
            size_t n = sion_fread(buf, 1, want, sid);
            if (n != want || fwrite(buf, 1, n, out) != n) {
                fprintf(stderr, "sion_convert: copying task %d to %s failed\n", t, outputs[t]);
                rc = 1;
                break;
            }
        }
        if (fclose(out) != 0) {
            fprintf(stderr, "sion_convert: cannot write %s\n", outputs[t]);
            rc = 1;
        }
    }

    sion_close(sid);
    free(buf);
    free(chunksizes);
    free(globalranks);
    return rc;
}

int main(int argc, char **argv)
{
    sion_int64 chunksize = 0;
    sion_int32 fsblksize = -1; /* detect the file system block size */
    int i = 1;

    while (i + 1 < argc && (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "-q") == 0)) {
        char *end;
        long long v = strtoll(argv[i + 1], &end, 10);
        if (*end != '\0' || v <= 0 || (argv[i][1] == 'q' && v > SION_MAX_FSBLOCKSIZE)) {
            fprintf(stderr, "sion_convert: bad value for %s: %s\n", argv[i], argv[i + 1]);
            return 1;
        }
        if (argv[i][1] == 'c')
            chunksize = v;
        else
            fsblksize = (sion_int32)v;
        i += 2;
    }
    if (argc - i < 3) {
        usage(argv[0]);
        return 1;
    }
    if (strcmp(argv[i], "-w") == 0)
        return write_container(argv[i + 1], argv + i + 2, argc - i - 2, chunksize, fsblksize);
    if (strcmp(argv[i], "-r") == 0)
        return read_container(argv[i + 1], argv + i + 2, argc - i - 2);
    usage(argv[0]);
    return 1;
}
