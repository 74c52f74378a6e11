/* bench_mapped.c - sheaf-bench many-task mode without threads
 * (--manytask-api=mapped): each rank handles --threads logical tasks, either
 * as the logical tasks of one container opened with sion_paropen_mapped_mpi
 * (switching task with sion_seek) or as that many ordinary files, created,
 * written and closed one after the other. Separates the I/O metadata cost
 * from the cost of thousands of OpenMP threads on a small machine.
 * Times per rank: t1-t0 = sum of the opens, t2-t1 = sum of the data calls,
 * t3-t2 = the rest (fsync, close) up to the end of the phase. */
#include "bench.h"
#include <mpi.h>
#include "sion.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void fail(const char *what, const char *path)
{
    fprintf(stderr, "sheaf-bench mapped: %s %s: %s [%s]\n", what, path, strerror(errno), sheaf_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void fsync_dir(const char *d)
{
    int fd = open(d, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

static void container_dir(const bench_opts *o, char *d, size_t n)
{
    snprintf(d, n, "%s", o->fname);
    char *s = strrchr(d, '/');
    if (s)
        *s = '\0';
    else
        snprintf(d, n, ".");
}

static int open_mapped(const bench_opts *o, const char *mode, int nt, int rank, sion_int64 chunk)
{
    int nf = 1, nl = nt, *gr = malloc(sizeof(int) * (size_t)nt), *fnr = malloc(sizeof(int) * (size_t)nt),
        *lr = malloc(sizeof(int) * (size_t)nt);
    sion_int64 *cs = malloc(sizeof(sion_int64) * (size_t)nt);
    sion_int32 fsb = o->fsblksize;
    FILE *fp = NULL;
    for (int i = 0; i < nt; i++)
        gr[i] = lr[i] = rank * nt + i, fnr[i] = 0, cs[i] = chunk;
    int *pgr = gr, *pfnr = fnr, *plr = lr;
    sion_int64 *pcs = cs;
    if (mode[1] == 'r') /* read: NULL outputs are allocated by the library (SIONlib fills non-NULL ones in place) */
        pcs = NULL, pfnr = NULL, plr = NULL;
    int sid =
        sion_paropen_mapped_mpi((char *)o->fname, mode, &nf, MPI_COMM_WORLD, &nl, &pgr, &pcs, &pfnr, &plr, &fsb, &fp);
    if (mode[1] == 'r') {
        free(pcs), free(pfnr), free(plr);
        if (pgr != gr)
            free(pgr);
    }
    free(gr), free(fnr), free(lr), free(cs);
    if (sid < 0)
        fail("sion_paropen_mapped_mpi", o->fname);
    return sid;
}

int bench_run_mapped(const bench_opts *o, int container, phase_times *tw, phase_times *tr, long long *mism)
{
    int rank, nt = o->threads;
    size_t L = (size_t)o->localsize, B = (size_t)o->bufsize;
    char path[4200], dir[4096];
    unsigned char *buf = malloc(L * (size_t)nt + 1);
    double a, sopen = 0, sdata = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(dir, sizeof dir, "%s.tasks", o->fname);
    if (!container && rank == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
        fail("mkdir", dir);
    *mism = 0;
    if (o->do_write) {
        for (int i = 0; i < nt; i++) {
            bench_fill(buf + (size_t)i * L, L, (uint64_t)(rank * nt + i), 0);
            snprintf(path, sizeof path, "%s/task.%06d", dir, rank * nt + i);
            unlink(path);
        }
        if (rank == 0)
            unlink(o->fname);
        bench_barrier(MPI_COMM_WORLD);
        tw->t0 = bench_now();
        if (container) {
            char mode[32];
            snprintf(mode, sizeof mode, "bw%s", o->posix ? ",posix" : "");
            int sid = open_mapped(o, mode, nt, rank, L > 0 ? (sion_int64)L : 1);
            sopen = bench_now() - tw->t0;
            a = bench_now();
            for (int i = 0; i < nt; i++) {
                if (sion_seek(sid, rank * nt + i, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS)
                    fail("sion_seek", o->fname);
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    if (sion_fwrite(buf + (size_t)i * L + off, 1, len, sid) != len)
                        fail("sion_fwrite", o->fname);
                }
            }
            sdata = bench_now() - a;
            if (o->durable) {
                sion_flush(sid);
                if (fsync(sion_get_fd(sid)) != 0)
                    fail("fsync", o->fname);
            }
            if (sion_parclose_mapped_mpi(sid) != SION_SUCCESS)
                fail("sion_parclose_mapped_mpi", o->fname);
        } else {
            for (int i = 0; i < nt; i++) {
                snprintf(path, sizeof path, "%s/task.%06d", dir, rank * nt + i);
                a = bench_now();
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0)
                    fail("open", path);
                double b = bench_now();
                sopen += b - a;
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    if (write(fd, buf + (size_t)i * L + off, len) != (ssize_t)len)
                        fail("write", path);
                }
                sdata += bench_now() - b;
                if (o->durable && fsync(fd) != 0)
                    fail("fsync", path);
                close(fd);
            }
        }
        if (o->durable && rank == 0) {
            char d[4096];
            if (container)
                container_dir(o, d, sizeof d);
            fsync_dir(container ? d : dir);
        }
        tw->t3 = bench_now();
        tw->t1 = tw->t0 + sopen, tw->t2 = tw->t1 + sdata;
    }
    if (o->do_read) {
        memset(buf, 0, L * (size_t)nt + 1);
        if (o->durable) {
            if (container && rank == 0)
                bench_drop_cache_path(o->fname);
            for (int i = 0; !container && i < nt; i++) {
                snprintf(path, sizeof path, "%s/task.%06d", dir, rank * nt + i);
                bench_drop_cache_path(path);
            }
        }
        size_t have = 0;
        sopen = sdata = 0;
        bench_barrier(MPI_COMM_WORLD);
        tr->t0 = bench_now();
        if (container) {
            int sid = open_mapped(o, o->posix ? "br,posix" : "br", nt, rank, 0);
            sopen = bench_now() - tr->t0;
            a = bench_now();
            for (int i = 0; i < nt; i++) {
                if (sion_seek(sid, rank * nt + i, 0, 0) != SION_SUCCESS)
                    fail("sion_seek (read)", o->fname);
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    have += sion_fread(buf + (size_t)i * L + off, 1, len, sid);
                }
            }
            sdata = bench_now() - a;
            if (sion_parclose_mapped_mpi(sid) != SION_SUCCESS)
                fail("sion_parclose_mapped_mpi (read)", o->fname);
        } else {
            for (int i = 0; i < nt; i++) {
                snprintf(path, sizeof path, "%s/task.%06d", dir, rank * nt + i);
                a = bench_now();
                int fd = open(path, O_RDONLY);
                if (fd < 0)
                    fail("open", path);
                double b = bench_now();
                sopen += b - a;
                for (size_t off = 0; off < L; off += B) {
                    size_t len = L - off < B ? L - off : B;
                    ssize_t r = read(fd, buf + (size_t)i * L + off, len);
                    have += r > 0 ? (size_t)r : 0;
                }
                sdata += bench_now() - b;
                close(fd);
            }
        }
        tr->t3 = bench_now();
        tr->t1 = tr->t0 + sopen, tr->t2 = tr->t1 + sdata;
        if (have != L * (size_t)nt)
            *mism += 1;
        for (int i = 0; o->checksum && i < nt; i++)
            *mism += bench_verify(buf + (size_t)i * L, L, (uint64_t)(rank * nt + i), 0, B);
    }
    free(buf);
    return 0;
}
