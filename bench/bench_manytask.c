/* bench_manytask.c - sheaf-bench many-task mode: ranks x threads logical
 * tasks, each writing/reading --localsize bytes, either as tasks of one
 * container through the hybrid API (sion_paropen_ompi) or as one ordinary
 * file per task in one directory. Measures the per-task metadata cost
 * (create, fsync, close of N files) that a container removes.
 * Durable: the container fsyncs each physical file once per rank (every
 * thread flushes its stdio buffer first); task-local files are fsynced one by
 * one (that is what an application writing N files has to do). Rank 0
 * fsyncs the directory in both cases. */
#include "bench.h"
#include <mpi.h>
#include "sion.h"
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void fail(const char *what, const char *path)
{
    fprintf(stderr, "sheaf-bench manytask: %s %s: %s [%s]\n", what, path, strerror(errno), sheaf_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void task_name(const bench_opts *o, int task, char *out, size_t n)
{
    snprintf(out, n, "%s.tasks/task.%06d", o->fname, task);
}

static void sync_barrier(void)
{ /* all threads of all ranks */
#pragma omp barrier
#pragma omp master
    bench_barrier(MPI_COMM_WORLD);
#pragma omp barrier
}

static void fsync_dir_of(const bench_opts *o, int container)
{
    char d[4096];
    if (container) {
        snprintf(d, sizeof d, "%s", o->fname);
        char *s = strrchr(d, '/');
        if (s)
            *s = '\0';
        else
            snprintf(d, sizeof d, ".");
    } else {
        snprintf(d, sizeof d, "%s.tasks", o->fname);
    }
    int fd = open(d, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

static void cleanup(const bench_opts *o, int container, int rank, int task)
{
    char p[4096];
    if (!container) {
        task_name(o, task, p, sizeof p);
        unlink(p);
    } else if (task == 0) {
        unlink(o->fname);
        for (int k = 1; k < o->numfiles; k++) {
            snprintf(p, sizeof p, "%s.%06d", o->fname, k);
            unlink(p);
        }
    }
    (void)rank;
}

int bench_run_manytask(const bench_opts *o, int container, phase_times *tw, phase_times *tr, long long *mism)
{
    int rank, nt = o->threads;
    long long bad = 0;
    size_t L = (size_t)o->localsize, B = (size_t)o->bufsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!container && rank == 0) {
        char d[4096];
        snprintf(d, sizeof d, "%s.tasks", o->fname);
        if (mkdir(d, 0755) != 0 && errno != EEXIST)
            fail("mkdir", d);
    }
    bench_barrier(MPI_COMM_WORLD);
    char mode[64];
    snprintf(mode, sizeof mode, "%s%s", o->posix ? ",posix" : "", o->collwrite ? ",collective" : "");

#pragma omp parallel num_threads(nt) reduction(+ : bad)
    {
        int t = omp_get_thread_num(), task = rank * nt + t;
        char path[4096], wmode[80], rmode[80];
        unsigned char *buf = malloc(L + 1);
        char *newfname = NULL;
        if (!buf)
            fail("out of memory", "");
        snprintf(wmode, sizeof wmode, "bw%s", mode);
        snprintf(rmode, sizeof rmode, "br%s", o->posix ? ",posix" : "");
        task_name(o, task, path, sizeof path);
        if (o->do_write) {
            bench_fill(buf, L, (uint64_t)task, 0);
            cleanup(o, container, rank, task);
            sync_barrier();
            phase_times *p = &tw[t];
            p->t0 = bench_now();
            if (container) {
                int nf = o->numfiles, grank = -1;
                sion_int64 chunk = o->chunksize > 0 ? o->chunksize : (L > 0 ? (sion_int64)L : 1);
                sion_int32 fsb = o->fsblksize;
                FILE *fp = NULL;
                MPI_Comm lcomm = MPI_COMM_NULL; /* SIONlib refuses a NULL lComm */
                int sid = sion_paropen_ompi(o->fname, wmode, &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsb, &grank, &fp,
                                            &newfname);
                if (sid < 0)
                    fail("sion_paropen_ompi (write)", o->fname);
                p->t1 = bench_now();
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    if ((o->collwrite ? sion_coll_fwrite(buf + off, 1, len, sid)
                                      : sion_fwrite(buf + off, 1, len, sid)) != len)
                        fail("sion_fwrite", o->fname);
                }
                p->t2 = bench_now();
                if (o->durable) {
                    sion_flush(sid);
#pragma omp barrier
                    if (t == 0 && fsync(sion_get_fd(sid)) != 0)
                        fail("fsync", o->fname);
#pragma omp barrier
                }
                if (sion_parclose_ompi(sid) != SION_SUCCESS)
                    fail("sion_parclose_ompi", o->fname);
            } else {
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0)
                    fail("open", path);
                p->t1 = bench_now();
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    if (write(fd, buf + off, len) != (ssize_t)len)
                        fail("write", path);
                }
                p->t2 = bench_now();
                if (o->durable && fsync(fd) != 0)
                    fail("fsync", path);
                close(fd);
            }
            if (o->durable && task == 0)
                fsync_dir_of(o, container);
            p->t3 = bench_now();
        }
        if (o->do_read) {
            memset(buf, 0, L + 1);
            if (o->durable) {
                if (!container)
                    bench_drop_cache_path(path);
                else if (t == 0)
                    bench_drop_cache_path(newfname ? newfname : o->fname);
            }
            sync_barrier();
            phase_times *p = &tr[t];
            size_t have = 0;
            p->t0 = bench_now();
            if (container) {
                int nf = 0, grank = -1;
                sion_int64 chunk = 0;
                sion_int32 fsb = 0;
                FILE *fp = NULL;
                MPI_Comm lcomm = MPI_COMM_NULL;
                int sid =
                    sion_paropen_ompi(o->fname, rmode, &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsb, &grank, &fp, NULL);
                if (sid < 0)
                    fail("sion_paropen_ompi (read)", o->fname);
                p->t1 = bench_now();
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    have += sion_fread(buf + off, 1, len, sid);
                }
                p->t2 = bench_now();
                if (sion_parclose_ompi(sid) != SION_SUCCESS)
                    fail("sion_parclose_ompi (read)", o->fname);
            } else {
                int fd = open(path, O_RDONLY);
                if (fd < 0)
                    fail("open", path);
                p->t1 = bench_now();
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    ssize_t r = read(fd, buf + off, len);
                    have += r > 0 ? (size_t)r : 0;
                }
                p->t2 = bench_now();
                close(fd);
            }
            p->t3 = bench_now();
            if (have != L)
                bad++;
            else if (o->checksum)
                bad += bench_verify(buf, L, (uint64_t)task, 0, B);
        }
        free(newfname);
        free(buf);
    }
    *mism = bad;
    return 0;
}
