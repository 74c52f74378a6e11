/* test_omp.c - the OpenMP layer: each thread of a team is a task.
 * For 1, 2, 3, 4 and 8 threads: write (random chunk sizes, several blocks,
 * one empty task, a write larger than a chunk), read back in parallel and
 * with the serial API, compare bytes; a read with another thread count fails
 * on every thread. Usage: test_omp DIR */
#include "sion.h"
#include "sion_omp.h"
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            _Pragma("omp critical") {                                           \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);            \
                fprintf(stderr, __VA_ARGS__);                                   \
                fprintf(stderr, " [%s]\n", sheaf_last_error());                 \
                failures++;                                                     \
            }                                                                   \
        }                                                                       \
    } while (0)

static unsigned char byte_at(int task, size_t i) { return (unsigned char)(task * 131 + i * 7 + (i >> 9)); }

/* bytes task t writes: task 1 none, the others up to ~40 KiB */
static size_t task_bytes(int t, int n) { return t == 1 && n > 1 ? 0 : (size_t)(3000 + 9173 * t) % 40000 + 100; }

static void run(const char *dir, int nthreads)
{
    char fname[512];
    snprintf(fname, sizeof fname, "%s/omp%d.sion", dir, nthreads);
    omp_set_num_threads(nthreads);
#pragma omp parallel
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
        sion_int64 chunk = 4096 + 1000 * me; /* rounded up to fsblksize */
        sion_int32 fsb = 4096;
        int grank = -1;
        FILE *fp = NULL;
        int sid = sion_paropen_omp(fname, "bw", &chunk, &fsb, &grank, &fp, NULL);
        CHECK(sid >= 0, "%d threads: write open on thread %d", n, me);
        CHECK(grank == me, "globalrank %d on thread %d", grank, me);
        size_t total = task_bytes(me, n);
        unsigned char *buf = malloc(total + 1);
        for (size_t i = 0; i < total; i++)
            buf[i] = byte_at(me, i);
        if (sid >= 0) {
            /* one big write (more than a chunk), then small ones */
            size_t big = total / 2, off = 0;
            CHECK(sion_fwrite(buf, 1, big, sid) == big || big == 0, "big write");
            off = big;
            while (off < total) {
                size_t k = total - off < 777 ? total - off : 777;
                CHECK(sion_fwrite(buf + off, 1, k, sid) == k, "small write");
                off += k;
            }
            CHECK(sion_parclose_omp(sid) == SION_SUCCESS, "close on thread %d", me);
        }
        /* parallel read */
        sion_int64 rchunk = 0;
        sion_int32 rfsb = 0;
        int sid2 = sion_paropen_omp(fname, "br", &rchunk, &rfsb, &grank, &fp, NULL);
        CHECK(sid2 >= 0, "read open on thread %d", me);
        if (sid2 >= 0) {
            unsigned char *got = malloc(total + 1);
            size_t have = 0;
            while (!sion_feof(sid2)) {
                sion_int64 avail = sion_bytes_avail_in_block(sid2);
                if (have + (size_t)avail > total) {
                    CHECK(0, "thread %d: more data than written", me);
                    break;
                }
                CHECK(sion_fread(got + have, 1, (size_t)avail, sid2) == (size_t)avail, "fread");
                have += (size_t)avail;
            }
            CHECK(have == total && memcmp(got, buf, total) == 0, "thread %d: read %zu of %zu bytes or bytes differ",
                  me, have, total);
            CHECK(rfsb == 4096, "fsblksize %d", rfsb);
            CHECK(sion_parclose_omp(sid2) == SION_SUCCESS, "read close");
            free(got);
        }
        free(buf);
    }
    /* serial read of the whole container */
    int ntasks = 0, nfiles = 0;
    sion_int32 fsb = 0;
    sion_int64 *chunks = NULL;
    int *granks = NULL;
    FILE *fp = NULL;
    int sid = sion_open(fname, "rb", &ntasks, &nfiles, &chunks, &fsb, &granks, &fp);
    CHECK(sid >= 0 && ntasks == nthreads, "serial open: %d tasks", ntasks);
    for (int t = 0; sid >= 0 && t < ntasks; t++) {
        size_t total = task_bytes(t, nthreads), have = 0;
        unsigned char *got = malloc(total + 1);
        CHECK(sion_seek(sid, t, 0, 0) == SION_SUCCESS, "serial seek %d", t);
        while (!sion_feof(sid) && have < total) {
            sion_int64 a = sion_bytes_avail_in_block(sid);
            if ((size_t)a > total - have)
                a = (sion_int64)(total - have);
            have += sion_fread(got + have, 1, (size_t)a, sid);
        }
        int same = have == total;
        for (size_t i = 0; same && i < total; i++)
            same = got[i] == byte_at(t, i);
        CHECK(same, "serial read of task %d: %zu of %zu bytes or bytes differ", t, have, total);
        free(got);
    }
    if (sid >= 0)
        sion_close(sid);
    free(chunks);
    free(granks);
    /* a team of another size is refused on every thread */
    if (nthreads > 1) {
        int refused = 0;
        omp_set_num_threads(nthreads - 1);
#pragma omp parallel reduction(+ : refused)
        {
            sion_int64 c = 0;
            sion_int32 f = 0;
            int g = 0;
            FILE *p = NULL;
            int s = sion_paropen_omp(fname, "br", &c, &f, &g, &p, NULL);
            if (s < 0 && strstr(sheaf_last_error(), "mapped"))
                refused++;
            else if (s >= 0)
                sion_parclose_omp(s);
        }
        CHECK(refused == nthreads - 1, "read with %d threads: %d threads refused with a mapped-open hint",
              nthreads - 1, refused);
    }
    remove(fname);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    sheaf_set_error_printing(0);
    int counts[] = {1, 2, 3, 4, 8};
    for (unsigned i = 0; i < sizeof counts / sizeof *counts; i++)
        run(argv[1], counts[i]);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_omp: OK (1, 2, 3, 4, 8 threads)\n");
    return 0;
}
