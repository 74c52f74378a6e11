/* mpi_vcoll_test.c - the MPI binding's gatherv / scatterv callbacks when the
 * root cannot allocate its displacements (src/mpi/mpi_callbacks.c).
 *
 * Before the fix the root returned early while the other ranks entered the
 * collective: a hang. Now, on the heap path (communicators above 1024 tasks,
 * or any size while the test hook is set, as here), every rank learns the
 * root's verdict before the exchange and the call fails on every rank with
 * the same code and the same return value. The test hook mpi_set_alloc_fault_hook (internal, hence the
 * static libsheaf_mpi) fails the k-th allocation of displacements on this
 * process; each cycle below runs with k = 1, 2, ... until a cycle passes
 * without reaching the k-th allocation (which must then succeed, bytes
 * checked). Cycles (rank r writes/reads BYTES bytes of pattern r):
 *   plain  : sion_paropen_mpi wb (1 file) + write + sion_parclose_mpi
 *            (close: L gatherv of the block sizes)
 *   mapped : sion_paropen_mapped_mpi wb + write + close (gatherv records,
 *            scatterv layouts, gatherv block counts and sizes), then br +
 *            read + close (gatherv wanted tasks, scatterv records, blocks)
 * Asserted for every injected failure: it fired on exactly one rank, the
 * failing call returned the same value on every rank and sheaf_last_error_code
 * is the same non-zero code on every rank; over all cycles both gatherv and
 * scatterv failures were injected. No hang: the ctest TIMEOUT.
 * Usage: mpi_vcoll_test base=DIR. Prints "vcoll: OK" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sion.h"
#include "mpicheck.h"

/* internal to libsheaf_mpi (src/mpi/mpi_internal.h) */
void mpi_set_alloc_fault_hook(int (*fn)(const char *what));

enum { BYTES = 300, MAXK = 32 };
static int fail_at_k, seen, fired_gatherv, fired_scatterv, fired;

static int hook(const char *what)
{
    if (++seen != fail_at_k)
        return 0;
    fired++;
    if (!strcmp(what, "gatherv"))
        fired_gatherv++;
    else if (!strcmp(what, "scatterv"))
        fired_scatterv++;
    return 1;
}

static void pattern(unsigned char *b, int r)
{
    for (int i = 0; i < BYTES; i++)
        b[i] = (unsigned char)(r * 37 + i * 11);
}

/* 0 when the call succeeded; else `stage`, after checking that every rank
 * has the same (stage, return value, error code) and a non-zero code. */
static int stop(const char *what, int stage, int failed, int rc)
{
    int mine[3] = {failed ? stage : 0, rc, failed ? sheaf_last_error_code() : 0}, lo[3], hi[3];
    MPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(!memcmp(lo, hi, sizeof lo), "%s: ranks differ: stage %d..%d, return %d..%d, code %d..%d", what, lo[0], hi[0],
          lo[1], hi[1], lo[2], hi[2]);
    CHECK(!failed || mine[2] != 0, "%s: the failed call left no error code", what);
    return failed ? stage : 0;
}

/* this rank's bytes written to sid, then close(sid)'s return value */
static int write_close(int sid, int (*close)(int))
{
    unsigned char b[BYTES];
    pattern(b, g_rank);
    CHECK(sion_fwrite(b, 1, BYTES, sid) == BYTES, "write");
    return close(sid);
}

/* plain write cycle; the failing stage (0: none, 1: open, 2: close) */
static int cycle_plain(const char *f)
{
    int nf = 1, grank = -1;
    sion_int64 chunk = BYTES;
    sion_int32 fs = 4096;
    FILE *fp = NULL;
    int sid = sion_paropen_mpi(f, "wb", &nf, MPI_COMM_WORLD, NULL, &chunk, &fs, &grank, &fp, NULL);
    if (stop("plain open", 1, sid < 0, sid))
        return 1;
    int rc = write_close(sid, sion_parclose_mpi);
    return stop("plain close", 2, rc != SION_SUCCESS, rc);
}

/* mapped read of what cycle_mapped wrote (each rank its own task); the
 * failing stage (0, 3: open, 4: close) */
static int read_mapped(const char *f)
{
    int nf = -1, nlocal = 1, *mfile = NULL, *mlrank = NULL, *granks = malloc(sizeof *granks);
    sion_int64 *chunks = NULL;
    sion_int32 fs = -1;
    FILE *fp = NULL;
    granks[0] = g_rank;
    int sid = sion_paropen_mapped_mpi((char *)f, "br", &nf, MPI_COMM_WORLD, &nlocal, &granks, &chunks, &mfile, &mlrank,
                                      &fs, &fp);
    int stage = stop("mapped read open", 3, sid < 0, sid);
    if (!stage) {
        unsigned char b[BYTES], r[BYTES];
        pattern(b, g_rank);
        CHECK(sion_seek(sid, g_rank, 0, 0) == SION_SUCCESS, "mapped seek");
        CHECK(sion_fread(r, 1, BYTES, sid) == BYTES && !memcmp(r, b, BYTES), "mapped read: wrong bytes");
        int rc = sion_parclose_mapped_mpi(sid);
        stage = stop("mapped read close", 4, rc != SION_SUCCESS, rc);
    }
    void *outs[] = {granks, chunks, mfile, mlrank};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        free(outs[i]);
    return stage;
}

/* mapped write (one task per rank) + read cycle; the failing stage 0..4 */
static int cycle_mapped(const char *f)
{
    int nf = 1, n = 1, gr = g_rank, fnr = 0, lr = g_rank;
    int *grp = &gr, *fnp = &fnr, *lrp = &lr;
    sion_int64 chunk = BYTES, *chp = &chunk;
    sion_int32 fs = 4096;
    FILE *fp = NULL;
    int sid = sion_paropen_mapped_mpi((char *)f, "wb", &nf, MPI_COMM_WORLD, &n, &grp, &chp, &fnp, &lrp, &fs, &fp);
    if (stop("mapped write open", 1, sid < 0, sid))
        return 1;
    int rc = write_close(sid, sion_parclose_mapped_mpi);
    if (stop("mapped write close", 2, rc != SION_SUCCESS, rc))
        return 2;
    return read_mapped(f);
}

/* Runs cycle with the k-th allocation failing, k = 1, 2, ...; returns the
 * number of injected failures. */
static int sweep(const char *name, int (*cycle)(const char *), const char *dir)
{
    char f[600];
    int k, injected = 0;
    for (k = 1; k <= MAXK; k++) {
        snprintf(f, sizeof f, "%s/%s%d.sion", dir, name, k);
        fail_at_k = k;
        seen = fired = 0;
        int stage = cycle(f);
        int any = 0;
        MPI_Allreduce(&fired, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(any <= 1, "%s k=%d: the failure fired %d times", name, k, any);
        if (!any) {
            CHECK(stage == 0, "%s k=%d: failed (stage %d) without an injected failure: %s", name, k, stage,
                  sheaf_last_error());
            break;
        }
        CHECK(stage != 0, "%s k=%d: an injected failure was not reported", name, k);
        injected++;
    }
    CHECK(k <= MAXK, "%s: more than %d allocations of displacements", name, MAXK);
    return injected;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *dir = ".";
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "base=", 5))
            dir = argv[i] + 5;
    sheaf_set_error_printing(0);
    mpi_set_alloc_fault_hook(hook);
    int plain = sweep("plain", cycle_plain, dir);
    int mapped = sweep("mapped", cycle_mapped, dir);
    mpi_set_alloc_fault_hook(NULL);
    int g[2] = {fired_gatherv, fired_scatterv}, tot[2];
    MPI_Allreduce(g, tot, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(plain >= 1, "plain: no allocation of displacements was failed");
    CHECK(mapped >= 5, "mapped: only %d allocations of displacements failed (expected >= 5)", mapped);
    CHECK(tot[0] >= 1 && tot[1] >= 1, "failures injected: %d gatherv, %d scatterv (both wanted)", tot[0], tot[1]);
    /* remove what the cycles wrote */
    if (g_rank == 0)
        for (int k = 1; k <= MAXK; k++) {
            char f[600];
            snprintf(f, sizeof f, "%s/plain%d.sion", dir, k);
            remove(f);
            snprintf(f, sizeof f, "%s/mapped%d.sion", dir, k);
            remove(f);
        }
    int all = 0;
    MPI_Allreduce(&g_fail, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("vcoll: %s (%d + %d injected failures: %d gatherv, %d scatterv)\n", all ? "FAILED" : "OK", plain, mapped,
               tot[0], tot[1]);
    MPI_Finalize();
    return all ? 1 : 0;
}
