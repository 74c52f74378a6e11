/* test_omp.c - the OpenMP layer: each thread of a team is a task.
 * For 1, 2, 3, 4 and 8 threads: write (random chunk sizes, several blocks,
 * one empty task, a write larger than a chunk), read back in parallel and
 * with the serial API, compare bytes; a read with another thread count fails
 * on every thread. Coalescing I/O (sion_coll_fwrite/fread) at 2-16 threads,
 * 1 B - 64 KiB per task, automatic and fixed collector groups, read back
 * collectively and serially. Usage: test_omp DIR */
#include "sion.h"
#include "sion_omp.h"
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompcheck.h"

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
            CHECK(have == total && memcmp(got, buf, total) == 0, "thread %d: read %zu of %zu bytes or bytes differ", me,
                  have, total);
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
        CHECK(refused == nthreads - 1, "read with %d threads: %d threads refused with a mapped-open hint", nthreads - 1,
              refused);
    }
    remove(fname);
}

/* Coalescing: task t writes three calls of s + t % 3 bytes (chunk twice that,
 * so the third starts block 1) and one of three times that (more than a
 * chunk: written by the task itself); reads them back with the same calls. */
static void run_coll(const char *dir, int nthreads, int collsize, size_t s)
{
    char fname[512], wmode[64], rmode[64];
    snprintf(fname, sizeof fname, "%s/ompcoll%d_%d_%zu.sion", dir, nthreads, collsize, s);
    snprintf(wmode, sizeof wmode, "bw,collective%s%.0d", collsize ? ",collsize=" : "", collsize);
    snprintf(rmode, sizeof rmode, "br,collective%s%.0d", collsize ? ",collsize=" : "", collsize);
    omp_set_num_threads(nthreads);
#pragma omp parallel
    {
        int me = omp_get_thread_num(), grank = -1;
        size_t st = s + (size_t)me % 3, total = 6 * st, calls[4] = {st, st, st, 3 * st};
        sion_int64 chunk = (sion_int64)(2 * st);
        sion_int32 fsb = 4096;
        FILE *fp = NULL;
        unsigned char *buf = malloc(total), *got = calloc(1, total);
        for (size_t i = 0; i < total; i++)
            buf[i] = byte_at(me, i);
        int sid = sion_paropen_omp(fname, wmode, &chunk, &fsb, &grank, &fp, NULL);
        CHECK(sid >= 0, "coll write open (%s) on thread %d", wmode, me);
        size_t off = 0;
        for (int i = 0; i < 4 && sid >= 0; i++) {
            CHECK(sion_coll_fwrite(buf + off, 1, calls[i], sid) == calls[i], "coll write %d on thread %d", i, me);
            off += calls[i];
        }
        if (sid >= 0)
            CHECK(sion_parclose_omp(sid) == SION_SUCCESS, "coll close on thread %d", me);
        sion_int64 rchunk = 0;
        sion_int32 rfsb = 0;
        sid = sion_paropen_omp(fname, rmode, &rchunk, &rfsb, &grank, &fp, NULL);
        CHECK(sid >= 0, "coll read open on thread %d", me);
        off = 0;
        for (int i = 0; i < 4 && sid >= 0; i++) {
            CHECK(sion_coll_fread(got + off, 1, calls[i], sid) == calls[i], "coll read %d on thread %d", i, me);
            off += calls[i];
        }
        CHECK(!memcmp(got, buf, total), "%d threads, collsize %d, %zu bytes: thread %d read other bytes", nthreads,
              collsize, s, me);
        if (sid >= 0) {
            CHECK(sion_feof(sid) == 1, "coll read: more data on thread %d", me);
            CHECK(sion_parclose_omp(sid) == SION_SUCCESS, "coll read close");
        }
        free(buf);
        free(got);
    }
    /* serial: every task's bytes, and the chunks are packed (sum is block-aligned, below one block per task) */
    int ntasks = 0, nfiles = 0, *granks = NULL;
    sion_int32 fsb = 0;
    sion_int64 *chunks = NULL, sum = 0;
    FILE *fp = NULL;
    int sid = sion_open(fname, "rb", &ntasks, &nfiles, &chunks, &fsb, &granks, &fp);
    CHECK(sid >= 0 && ntasks == nthreads, "coll serial open: %d tasks", ntasks);
    for (int t = 0; sid >= 0 && t < ntasks; t++) {
        size_t st = s + (size_t)t % 3, total = 6 * st;
        unsigned char *got = malloc(total);
        sum += chunks[t];
        CHECK(sion_seek(sid, t, SION_ABSOLUTE_POS, 0) == SION_SUCCESS, "serial seek %d", t);
        size_t have = sion_fread(got, 1, total, sid);
        int same = have == total;
        for (size_t i = 0; same && i < total; i++)
            same = got[i] == byte_at(t, i);
        CHECK(same && sion_feof(sid) == 1, "coll serial read of task %d: %zu of %zu bytes or bytes differ", t, have,
              total);
        free(got);
    }
    CHECK(sid < 0 || sum % 4096 == 0, "chunks add up to %lld, not block-aligned", (long long)sum);
    if (s <= 300)
        CHECK(sid < 0 || sum < (sion_int64)ntasks * 4096 || ntasks == 1, "chunks not packed: %lld bytes for %d tasks",
              (long long)sum, ntasks);
    if (sid >= 0)
        sion_close(sid);
    free(chunks);
    free(granks);
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
    int tcounts[] = {2, 5, 16}, csizes[] = {0, 2, 4};
    size_t sizes[] = {1, 300, 65536};
    for (unsigned i = 0; i < 3; i++)
        for (unsigned j = 0; j < 3; j++)
            for (unsigned k = 0; k < 3; k++)
                run_coll(argv[1], tcounts[i], csizes[j], sizes[k]);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_omp: OK (1, 2, 3, 4, 8 threads; coalescing at 2, 5, 16 threads)\n");
    return 0;
}
