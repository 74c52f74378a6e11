/* dache_sync_test.c - DACHe's sync and close (src/mpiio/dache_sync.c,
 * dache_coll.c): what they cost in MPI collectives and file-system calls,
 * and that a failure on one rank is a failure on every rank, losing nothing.
 *
 *   dache_sync_test DIR PROGRESS   (PROGRESS: shared | library)
 *
 * Every rank writes 32-byte elements interleaved over the ranks (element k
 * of rank r at (k*P + r)*32, 4 steps (library: 1) of 256 elements, one call each; rank
 * r starts at element r*256/P, so that every rank owns pages), then:
 *   1. sheaf_file_sync with pwritev failing on the last rank (interposed
 *      here): every rank returns an error, the last rank's names the path
 *      and the call, the others are SHEAF_MPIIO_EREMOTE naming the failing
 *      rank and quoting its message; under `shared` without any MPI
 *      collective (the failure's message travels in DACHe's own); no hang;
 *   2. sheaf_file_sync with fsync failing on rank 0: the same;
 *   3. sheaf_file_sync: succeeds everywhere; the MPI collectives it made
 *      (MPI_Barrier, MPI_Allreduce, MPI_Allgather, MPI_Bcast, MPI_Reduce,
 *      MPI_Gather, MPI_Alltoall interposed here) are counted: 0 under
 *      `shared` (DACHe's own collectives in shared memory), > 0 under
 *      `library` (the counter sees them); under `shared` the flush wrote the
 *      dirty bytes, which are contiguous, with one write call per rank
 *      (stats; under `library` each rank writes the pages it owns, and the
 *      ones the failed syncs did not write went out in the second);
 *   4. close; the file equals the model byte for byte (the failed syncs
 *      lost nothing: the pages stayed dirty until a flush succeeded). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>
#include "../../src/mpiio/dache.h"
#include "common.h"

#define ESZ 32
#define NEL 256

static int me, np, STEPS = 4;                  /* 1 under library (RMA with library progress is slow on 2 busy cores) */
static int fail_pwritev = -1, fail_fsync = -1; /* rank that fails the call, -1 none */
static long ncoll;                             /* MPI collectives made */

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    if (fail_pwritev == me)
        return errno = EIO, -1;
    ssize_t (*real)(int, const struct iovec *, int, off_t) =
        (ssize_t(*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "pwritev");
    return real(fd, iov, n, off);
}
int fsync(int fd)
{
    if (fail_fsync == me)
        return errno = EIO, -1;
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real(fd);
}

int MPI_Barrier(MPI_Comm c)
{
    ncoll++;
    return PMPI_Barrier(c);
}
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c)
{
    ncoll++;
    return PMPI_Allreduce(s, r, n, t, o, c);
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c)
{
    ncoll++;
    return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    ncoll++;
    return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c)
{
    ncoll++;
    return PMPI_Reduce(s, r, n, t, o, root, c);
}
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c)
{
    ncoll++;
    return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}
int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c)
{
    ncoll++;
    return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}

static unsigned char val(int64_t i) { return (unsigned char)(i * 131 + (i >> 8) * 7 + 3); }

static void write_elements(sheaf_file fh)
{
    unsigned char e[ESZ];
    for (int s = 0; s < STEPS; s++)
        for (int j = 0; j < NEL; j++) {
            int k = (j + me * (NEL / np)) % NEL; /* ranks start apart: each first-touches (owns) pages */
            int64_t off = ((int64_t)s * NEL * np + (int64_t)k * np + me) * ESZ;
            for (int i = 0; i < ESZ; i++)
                e[i] = val(off + i);
            OK(sheaf_file_write_at(fh, off, e, ESZ, MPI_BYTE), fh);
        }
}

/* sync with one rank's call failing: an error on every rank, the right ones */
static void failing_sync(sheaf_file fh, int *which, int rank, const char *call, int shared)
{
    *which = rank;
    long c0 = ncoll;
    int rc = sheaf_file_sync(fh);
    long made = ncoll - c0;
    *which = -1;
    /* the agreement on the failure (its message travels too) stays in DACHe's own collectives */
    if (shared)
        CHECK(made == 0, "sync with %s failing made %ld MPI collectives under shared, want 0", call, made);
    CHECK(rc != 0, "sync with %s failing on rank %d returned 0", call, rank);
    if (me == rank)
        CHECK(strstr(sheaf_file_errmsg(fh), call) && strstr(sheaf_file_errmsg(fh), "dsync.dat"),
              "message does not name %s and the file: %s", call, sheaf_file_errmsg(fh));
    else {
        char who[32];
        snprintf(who, sizeof who, "rank %d", rank);
        CHECK(rc == SHEAF_MPIIO_EREMOTE, "rank %d: %d (%s), want SHEAF_MPIIO_EREMOTE", me, rc, sheaf_file_errmsg(fh));
        /* the first failure's rank and message reach every rank (sheaf_comm_agree) */
        CHECK(strstr(sheaf_file_errmsg(fh), who) && strstr(sheaf_file_errmsg(fh), call),
              "rank %d: message does not name %s and quote its %s failure: %s", me, who, call, sheaf_file_errmsg(fh));
    }
}

static void check_file(const char *path)
{
    long n = 0;
    unsigned char *b = me == 0 ? slurp(path, &n) : NULL;
    if (me != 0)
        return;
    long want = (long)STEPS * NEL * np * ESZ, bad = 0;
    CHECK(b && n == want, "file has %ld bytes, want %ld", n, want);
    for (long i = 0; b && i < n; i++)
        bad += b[i] != val(i);
    CHECK(bad == 0, "%ld bytes differ from the model", bad);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3) {
        if (me == 0)
            fprintf(stderr, "usage: dache_sync_test DIR shared|library\n");
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[2], "shared"))
        STEPS = 1;
    char path[1024], kv[256];
    snprintf(path, sizeof path, "%s/dsync.dat", argv[1]);
    if (me == 0)
        unlink(path);
    PMPI_Barrier(MPI_COMM_WORLD);
    snprintf(kv, sizeof kv,
             "sheaf_cache=dache,sheaf_dache_page_size=4096,sheaf_dache_slots=64,"
             "sheaf_dache_max_size=4M,sheaf_dache_progress=%s",
             argv[2]);
    MPI_Info info = mkinfo(kv);
    sheaf_file fh = NULL;
    OK(sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), fh);
    MPI_Info_free(&info);
    if (!fh)
        MPI_Abort(MPI_COMM_WORLD, 1);
    write_elements(fh);
    int shared = !strcmp(argv[2], "shared");
    failing_sync(fh, &fail_pwritev, np - 1, "pwritev", shared);
    failing_sync(fh, &fail_fsync, 0, "fsync", shared);
    mio_dache_stats s0, s1;
    mio_dache_stats_get(fh, &s0);
    long c0 = ncoll;
    OK(sheaf_file_sync(fh), fh);
    long made = ncoll - c0, most = 0;
    mio_dache_stats_get(fh, &s1);
    long w = (long)(s1.flush_writes - s0.flush_writes), wall = 0;
    PMPI_Allreduce(&made, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Allreduce(&w, &wall, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (!strcmp(argv[2], "shared"))
        CHECK(most == 0, "sync made %ld MPI collectives under shared, want 0", most);
    else
        CHECK(most > 0, "sync made no MPI collective under library: the counter sees nothing");
    if (!strcmp(argv[2], "shared"))
        CHECK(wall == np, "the flush made %ld write calls, want %d (one per rank)", wall, np);
    if (me == 0)
        printf("sync: %ld MPI collectives, %ld write calls over %d ranks\n", most, wall, np);
    OK(sheaf_file_close(&fh), fh);
    check_file(path);
    int rc = finish_test(strcmp(argv[2], "shared") ? "dache sync (library)" : "dache sync (shared)");
    if (me == 0 && !rc)
        unlink(path);
    MPI_Finalize();
    return rc;
}
