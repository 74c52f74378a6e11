/* bench_modes.c - sheaf-bench modes with one task per MPI rank: container
 * (sion_paropen_mpi; -T 1 reads with sion_open_rank), task-local files (one
 * POSIX file per task in one directory), one shared file with MPI-IO
 * independent or collective writes, and container open+close only.
 * Each phase: barrier, t0 before open, t1 after open, t2 after the data
 * calls, t3 after close (durable: fsync before close, and rank 0 fsyncs the
 * directory, inside the close phase). --sleep-wait: a sleeping barrier
 * before each collective close, so ranks that finished early do not
 * busy-poll in MPI while others still move data (oversubscribed nodes). */
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

double bench_now(void) { return MPI_Wtime(); }

static void die(const char *what, const char *path)
{
    fprintf(stderr, "sheaf-bench: %s %s: %s [%s]\n", what, path ? path : "", strerror(errno), sheaf_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* fsync (if it holds dirty data) and drop the page cache of one file. */
void bench_drop_cache_path(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

static void dir_of(const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s", path);
    char *s = strrchr(out, '/');
    if (!s)
        snprintf(out, n, ".");
    else if (s == out)
        out[1] = '\0';
    else
        *s = '\0';
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Durable close-phase tail on rank 0: the directory entry of new files. */
static void durable_dir(const bench_opts *o, int rank, const char *file)
{
    char d[4096];
    if (!o->durable || rank != 0)
        return;
    dir_of(file, d, sizeof d);
    fsync_dir(d);
}

static void tasklocal_name(const bench_opts *o, int task, char *out, size_t n)
{
    snprintf(out, n, "%s.tasks/task.%06d", o->fname, task);
}

/* Source / destination of the data: the whole task stream staged in memory
 * (pattern generated and verified outside the timed region) or, for streams
 * larger than --stage-limit, one transfer buffer filled/verified inline. */
typedef struct {
    unsigned char *stage, *xbuf;
    int staged;
} databuf;

static void db_init(databuf *d, const bench_opts *o, int task, int for_write)
{
    d->staged = o->localsize <= o->stage_limit;
    d->stage = NULL;
    d->xbuf = malloc((size_t)o->bufsize + 1);
    if (!d->xbuf)
        die("out of memory", NULL);
    if (d->staged) {
        d->stage = malloc((size_t)o->localsize + 1);
        if (!d->stage)
            die("out of memory staging", NULL);
        if (for_write)
            bench_fill(d->stage, (size_t)o->localsize, (uint64_t)task, 0);
        else
            memset(d->stage, 0, (size_t)o->localsize + 1); /* touch pages before timing */
    } else {
        bench_fill(d->xbuf, (size_t)o->bufsize, (uint64_t)task, 0);
    }
}

static unsigned char *db_src(databuf *d, const bench_opts *o, int task, int64_t off, size_t len)
{
    if (d->staged)
        return d->stage + off;
    if (o->checksum)
        bench_fill(d->xbuf, len, (uint64_t)task, (uint64_t)off);
    return d->xbuf;
}

static unsigned char *db_dst(databuf *d, int64_t off) { return d->staged ? d->stage + off : d->xbuf; }

static long long db_after_read(databuf *d, const bench_opts *o, int task, int64_t off, size_t got, size_t want)
{
    long long bad = got < want;
    if (!d->staged && o->checksum && got == want)
        bad += bench_verify(d->xbuf, got, (uint64_t)task, (uint64_t)off, want);
    return bad;
}

static long long db_finish(databuf *d, const bench_opts *o, int task, int reading)
{
    long long bad = 0;
    if (reading && d->staged && o->checksum)
        bad = bench_verify(d->stage, (size_t)o->localsize, (uint64_t)task, 0, (size_t)o->bufsize);
    free(d->stage);
    free(d->xbuf);
    return bad;
}

static size_t xfer_len(const bench_opts *o, int64_t off)
{
    return (size_t)(o->localsize - off < o->bufsize ? o->localsize - off : o->bufsize);
}

/* ---- container ------------------------------------------------------------ */
static char *cont_newfname; /* this rank's physical file from the last write */

static void container_write(const bench_opts *o, int rank, phase_times *t)
{
    char mode[64];
    snprintf(mode, sizeof mode, "bw%s%s", o->posix ? ",posix" : "", o->collwrite ? ",collective" : "");
    int nf = o->numfiles, grank = rank;
    sion_int64 chunk = o->chunksize > 0 ? o->chunksize : (o->localsize > 0 ? o->localsize : 1);
    sion_int32 fsb = o->fsblksize;
    FILE *fp = NULL;
    databuf d;
    db_init(&d, o, rank, 1);
    free(cont_newfname);
    cont_newfname = NULL;
    bench_barrier(MPI_COMM_WORLD);
    t->t0 = bench_now();
    MPI_Comm lcomm = MPI_COMM_NULL; /* SIONlib refuses a NULL lComm with numFiles > 0 */
    int sid = sion_paropen_mpi(o->fname, mode, &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsb, &grank, &fp, &cont_newfname);
    if (sid < 0)
        die("sion_paropen_mpi (write)", o->fname);
    t->t1 = bench_now();
    for (int64_t off = 0; off < o->localsize; off += o->bufsize) {
        size_t len = xfer_len(o, off);
        unsigned char *p = db_src(&d, o, rank, off, len);
        size_t w = o->collwrite ? sion_coll_fwrite(p, 1, len, sid) : sion_fwrite(p, 1, len, sid);
        if (w != len)
            die("sion_fwrite", o->fname);
    }
    t->t2 = bench_now();
    if (o->durable) {
        sion_flush(sid);
        if (o->syncbarrier) /* fsync only once every task's data are in the page cache */
            bench_barrier(MPI_COMM_WORLD);
        if (fsync(sion_get_fd(sid)) != 0)
            die("fsync", o->fname);
    }
    if (o->sleepwait)
        bench_barrier(MPI_COMM_WORLD);
    if (sion_parclose_mpi(sid) != SION_SUCCESS)
        die("sion_parclose_mpi (write)", o->fname);
    durable_dir(o, rank, o->fname);
    t->t3 = bench_now();
    db_finish(&d, o, rank, 0);
}

static long long container_read(const bench_opts *o, int rank, phase_times *t)
{
    char mode[64];
    snprintf(mode, sizeof mode, "br%s%s", o->posix ? ",posix" : "", o->collread ? ",collective" : "");
    int nf = 0, grank = rank, by_rank = o->mode == M_CONTAINER_RANK;
    sion_int64 chunk = 0;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    long long bad = 0;
    MPI_Comm lcomm = MPI_COMM_NULL;
    databuf d;
    db_init(&d, o, rank, 0);
    bench_barrier(MPI_COMM_WORLD);
    t->t0 = bench_now();
    int sid = by_rank ? sion_open_rank((char *)o->fname, mode, &chunk, &fsb, &grank, &fp)
                      : sion_paropen_mpi(o->fname, mode, &nf, MPI_COMM_WORLD, &lcomm, &chunk, &fsb, &grank, &fp, NULL);
    if (sid < 0)
        die(by_rank ? "sion_open_rank" : "sion_paropen_mpi (read)", o->fname);
    t->t1 = bench_now();
    for (int64_t off = 0; off < o->localsize; off += o->bufsize) {
        size_t len = xfer_len(o, off);
        unsigned char *p = db_dst(&d, off);
        size_t r = o->collread && !by_rank ? sion_coll_fread(p, 1, len, sid) : sion_fread(p, 1, len, sid);
        bad += db_after_read(&d, o, rank, off, r, len);
    }
    t->t2 = bench_now();
    if (o->sleepwait && !by_rank)
        bench_barrier(MPI_COMM_WORLD);
    if ((by_rank ? sion_close(sid) : sion_parclose_mpi(sid)) != SION_SUCCESS)
        die("close (read)", o->fname);
    t->t3 = bench_now();
    return bad + db_finish(&d, o, rank, 1);
}

/* ---- task-local files ----------------------------------------------------- */
static void tasklocal_write(const bench_opts *o, int rank, phase_times *t)
{
    char path[4096];
    databuf d;
    tasklocal_name(o, rank, path, sizeof path);
    db_init(&d, o, rank, 1);
    bench_barrier(MPI_COMM_WORLD);
    t->t0 = bench_now();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open", path);
    t->t1 = bench_now();
    for (int64_t off = 0; off < o->localsize; off += o->bufsize) {
        size_t len = xfer_len(o, off);
        if (write(fd, db_src(&d, o, rank, off, len), len) != (ssize_t)len)
            die("write", path);
    }
    t->t2 = bench_now();
    if (o->durable && fsync(fd) != 0)
        die("fsync", path);
    close(fd);
    durable_dir(o, rank, path);
    t->t3 = bench_now();
    db_finish(&d, o, rank, 0);
}

static long long tasklocal_read(const bench_opts *o, int rank, phase_times *t)
{
    char path[4096];
    long long bad = 0;
    databuf d;
    tasklocal_name(o, rank, path, sizeof path);
    db_init(&d, o, rank, 0);
    bench_barrier(MPI_COMM_WORLD);
    t->t0 = bench_now();
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open", path);
    t->t1 = bench_now();
    for (int64_t off = 0; off < o->localsize; off += o->bufsize) {
        size_t len = xfer_len(o, off);
        ssize_t r = read(fd, db_dst(&d, off), len);
        bad += db_after_read(&d, o, rank, off, r < 0 ? 0 : (size_t)r, len);
    }
    t->t2 = bench_now();
    close(fd);
    t->t3 = bench_now();
    return bad + db_finish(&d, o, rank, 1);
}

/* ---- MPI-IO, one shared file ---------------------------------------------- */
static void mpiio_write(const bench_opts *o, int rank, phase_times *t)
{
    MPI_File fh;
    int coll = o->mode == M_MPIIO_COLL;
    databuf d;
    db_init(&d, o, rank, 1);
    bench_barrier(MPI_COMM_WORLD);
    t->t0 = bench_now();
    if (MPI_File_open(MPI_COMM_WORLD, o->fname, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open", o->fname);
    t->t1 = bench_now();
    for (int64_t off = 0; off < o->localsize; off += o->bufsize) {
        size_t len = xfer_len(o, off);
        MPI_Offset at = (MPI_Offset)rank * o->localsize + off;
        unsigned char *p = db_src(&d, o, rank, off, len);
        int rc = coll ? MPI_File_write_at_all(fh, at, p, (int)len, MPI_BYTE, MPI_STATUS_IGNORE)
                      : MPI_File_write_at(fh, at, p, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            die("MPI_File_write_at", o->fname);
    }
    t->t2 = bench_now();
    if (o->durable)
        MPI_File_sync(fh);
    if (o->sleepwait)
        bench_barrier(MPI_COMM_WORLD);
    MPI_File_close(&fh);
    durable_dir(o, rank, o->fname);
    t->t3 = bench_now();
    db_finish(&d, o, rank, 0);
}

static long long mpiio_read(const bench_opts *o, int rank, phase_times *t)
{
    MPI_File fh;
    int coll = o->mode == M_MPIIO_COLL;
    long long bad = 0;
    databuf d;
    db_init(&d, o, rank, 0);
    bench_barrier(MPI_COMM_WORLD);
    t->t0 = bench_now();
    if (MPI_File_open(MPI_COMM_WORLD, o->fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        die("MPI_File_open", o->fname);
    t->t1 = bench_now();
    for (int64_t off = 0; off < o->localsize; off += o->bufsize) {
        size_t len = xfer_len(o, off);
        MPI_Offset at = (MPI_Offset)rank * o->localsize + off;
        MPI_Status st;
        int got = 0;
        int rc = coll ? MPI_File_read_at_all(fh, at, db_dst(&d, off), (int)len, MPI_BYTE, &st)
                      : MPI_File_read_at(fh, at, db_dst(&d, off), (int)len, MPI_BYTE, &st);
        if (rc == MPI_SUCCESS)
            MPI_Get_count(&st, MPI_BYTE, &got);
        bad += db_after_read(&d, o, rank, off, (size_t)got, len);
    }
    t->t2 = bench_now();
    if (o->sleepwait)
        bench_barrier(MPI_COMM_WORLD);
    MPI_File_close(&fh);
    t->t3 = bench_now();
    return bad + db_finish(&d, o, rank, 1);
}

/* ---- driver ----------------------------------------------------------------- */
void bench_cleanup_rank_mode(const bench_opts *o)
{
    int rank, size;
    char path[4096];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bench_barrier(MPI_COMM_WORLD);
    if (o->mode == M_TASKLOCAL) {
        tasklocal_name(o, rank, path, sizeof path);
        unlink(path);
    } else if (rank == 0) {
        unlink(o->fname);
        for (int k = 1; k < o->numfiles; k++) {
            snprintf(path, sizeof path, "%s.%06d", o->fname, k);
            unlink(path);
        }
    }
    bench_barrier(MPI_COMM_WORLD);
}

static void drop_caches(const bench_opts *o, int rank)
{
    char path[4096];
    if (o->mode == M_TASKLOCAL) {
        tasklocal_name(o, rank, path, sizeof path);
        bench_drop_cache_path(path);
    } else if (o->mode == M_CONTAINER || o->mode == M_CONTAINER_RANK) {
        bench_drop_cache_path(cont_newfname ? cont_newfname : o->fname);
    } else if (rank == 0) {
        bench_drop_cache_path(o->fname);
    }
    bench_barrier(MPI_COMM_WORLD);
}

int bench_run_rank_mode(const bench_opts *o, int rep, phase_times *tw, phase_times *tr, long long *mism)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *mism = 0;
    if (o->mode == M_TASKLOCAL && rank == 0) {
        char d[4096];
        snprintf(d, sizeof d, "%s.tasks", o->fname);
        if (mkdir(d, 0755) != 0 && errno != EEXIST)
            die("mkdir", d);
    }
    if (o->do_write) {
        bench_cleanup_rank_mode(o); /* every repetition creates its files */
        if (o->mode == M_TASKLOCAL)
            tasklocal_write(o, rank, tw);
        else if (o->mode == M_MPIIO_IND || o->mode == M_MPIIO_COLL)
            mpiio_write(o, rank, tw);
        else
            container_write(o, rank, tw);
    }
    if (o->do_read) {
        if (o->durable)
            drop_caches(o, rank);
        if (o->mode == M_TASKLOCAL)
            *mism = tasklocal_read(o, rank, tr);
        else if (o->mode == M_MPIIO_IND || o->mode == M_MPIIO_COLL)
            *mism = mpiio_read(o, rank, tr);
        else
            *mism = container_read(o, rank, tr);
    }
    (void)rep;
    return 0;
}
