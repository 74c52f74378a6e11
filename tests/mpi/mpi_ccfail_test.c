/* mpi_ccfail_test.c - the communicator cache under failure (issue 19).
 *
 * Built from the MPI binding's sources with SHEAF_CC_TEST_HOOK (the hook
 * cc_test_fail_reserve of src/mpi/commcache.h: the next cc_reserve on this
 * rank fails as if out of memory) and linked with the PMPI counting shim
 * pmpi_count.c. The cache keeps no collective of its own on a miss: what a
 * miss needs is reserved before the binding's agreement. This test fails
 * that reservation on ONE rank (rank 0, then the last rank) and checks on
 * every rank, with the counts of the MPI profiling layer:
 *  - an open whose entry would be a hit (a one-file write opened before), a
 *    new split (numFiles=2 write) and a multi-file read (the agreeing kind)
 *    each fail on every rank with the same code (SHEAF_E_NOMEM) and the
 *    failing rank's message, without a hang (ctest's timeout), without
 *    creating or freeing a communicator (the failure is found in the
 *    binding's agreement, before the split: no rank's cache changes);
 *  - the same opens then work (bytes read back): the new splits create
 *    exactly one communicator on every rank (no rank kept a half-entry of the
 *    failed open), the cached one none on every rank (a hit everywhere), and
 *    MPI_Comm_free of the user communicator frees the same number of cached
 *    communicators on every rank (one per split: 3).
 *
 * usage: mpi_ccfail_test DIR. Exit 0 = all checks hold. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "pmpi_count.h"
#include <mpi.h>
#include "sheaf.h"
#include "sion.h"
#include "commcache.h" /* src/mpi: the test hook */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpicheck.h" /* tests/helpers: g_rank, g_size, g_fail, CHECK */

enum { BYTES = 700 };

/* One open (+ write or read and check) + close on comm; counts of the
 * open..close span in c. Returns the open's result (sid or -1) and in *code
 * sheaf_last_error_code() after a failed open (0 after a good one). */
static int round_trip(const char *fname, int write, int nf, MPI_Comm comm, long c[PC_N], int *code, char *msg,
                      size_t msglen)
{
    char buf[BYTES], want[BYTES];
    fill(want, BYTES, g_rank, 37, 11);
    sion_int64 chunk = BYTES;
    sion_int32 fsblk = -1;
    int grank = -1;
    FILE *fp = NULL;
    MPI_Comm lc = MPI_COMM_NULL;
    PMPI_Barrier(comm);
    pc_reset();
    int sid = sion_paropen_mpi(fname, write ? "bw" : "br", &nf, comm, &lc, &chunk, &fsblk, &grank, &fp, NULL);
    *code = sid < 0 ? sheaf_last_error_code() : 0;
    if (msg)
        snprintf(msg, msglen, "%s", sid < 0 ? sheaf_last_error() : "");
    if (sid >= 0) {
        if (write) {
            CHECK(sion_fwrite(want, 1, BYTES, sid) == BYTES, "sion_fwrite of %d bytes", BYTES);
        } else {
            memset(buf, 0, sizeof buf);
            CHECK(sion_fread(buf, 1, BYTES, sid) == BYTES, "sion_fread of %d bytes", BYTES);
            CHECK(!memcmp(buf, want, BYTES), "%s: the bytes read differ from those written", fname);
        }
        CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "sion_parclose_mpi(%d)", sid);
    }
    pc_snapshot(c);
    return sid;
}

/* Minimum and maximum of v over comm. */
static void minmax(long v, MPI_Comm comm, long *mn, long *mx)
{
    PMPI_Allreduce(&v, mn, 1, MPI_LONG, MPI_MIN, comm);
    PMPI_Allreduce(&v, mx, 1, MPI_LONG, MPI_MAX, comm);
}

/* An open that must fail on every rank because `bad` cannot reserve its
 * cache entry; frees: the cached communicators it must free (every rank). */
static void failing_open(const char *what, const char *fname, int write, int nf, MPI_Comm comm, int bad, long frees)
{
    long c[PC_N], mn, mx;
    int code = 0;
    char msg[1024];
    if (g_rank == bad)
        cc_test_fail_reserve = 1;
    int sid = round_trip(fname, write, nf, comm, c, &code, msg, sizeof msg);
    cc_test_fail_reserve = 0;
    CHECK(sid < 0, "%s with rank %d out of memory: the open succeeded here (sid %d)", what, bad, sid);
    minmax(code, comm, &mn, &mx);
    CHECK(mn == mx && mx == SHEAF_E_NOMEM,
          "%s with rank %d out of memory: codes from %ld to %ld, expected %d on "
          "every rank",
          what, bad, mn, mx, SHEAF_E_NOMEM);
    CHECK(strstr(msg, "communicator cache") != NULL, "%s: the message does not name the cause: %s", what, msg);
    minmax(pc_created(c), comm, &mn, &mx);
    CHECK(mx == 0, "%s: a failed open created %ld communicators", what, mx);
    minmax(c[PC_COMM_FREE], comm, &mn, &mx);
    CHECK(mn == frees && mx == frees,
          "%s: the failed open freed from %ld to %ld cached communicators, expected %ld "
          "on every rank",
          what, mn, mx, frees);
    if (g_rank == 0)
        printf("P=%d rank %d out of memory, %s: failed on every rank with code %d, communicators freed %ld "
               "(message: %s)\n",
               g_size, bad, what, code, c[PC_COMM_FREE], msg);
}

/* An open that must work and create `made` communicators on every rank. */
static void good_open(const char *what, const char *fname, int write, int nf, MPI_Comm comm, long made)
{
    long c[PC_N], mn, mx;
    int code = 0;
    int sid = round_trip(fname, write, nf, comm, c, &code, NULL, 0);
    CHECK(sid >= 0, "%s: failed (code %d): %s", what, code, sheaf_last_error());
    minmax(pc_created(c), comm, &mn, &mx);
    CHECK(mn == made && mx == made, "%s: from %ld to %ld communicators created, expected %ld on every rank", what, mn,
          mx, made);
    if (g_rank == 0)
        printf("P=%d %s: communicators created %ld, collectives %ld\n", g_size, what, mx, pc_collectives(c));
}

/* One pass with rank `bad` failing its reservations. */
static void pass(const char *dir, int bad)
{
    char f1[4200], f2[4200];
    snprintf(f1, sizeof f1, "%s/one.sion", dir);
    snprintf(f2, sizeof f2, "%s/two.sion", dir);
    MPI_Comm user;
    PMPI_Comm_dup(MPI_COMM_WORLD, &user);
    int nf2 = g_size > 1 ? 2 : 1, fresh2 = g_size > 1; /* at P=1 numFiles=2 is numFiles=1 */
    good_open("write, numFiles=1", f1, 1, 1, user, 1);
    failing_open("write of a cached split", f1, 1, 1, user, bad, 0);
    failing_open("write of a new split (numFiles=2)", f2, 1, nf2, user, bad, 0);
    good_open("write of that split after the failure", f2, 1, nf2, user, fresh2);
    failing_open("read of a multi-file set (a new split)", f2, 0, nf2, user, bad, 0);
    good_open("read of that set after the failure", f2, 0, nf2, user, fresh2);
    good_open("write, numFiles=1, again (cached on every rank)", f1, 1, 1, user, 0);
    good_open("read of the one-file set (the write's split)", f1, 0, 1, user, 0);
    long c[PC_N], mn, mx, want = fresh2 ? 3 : 1;
    pc_reset();
    PMPI_Comm_free(&user);
    pc_snapshot(c);
    minmax(c[PC_COMM_FREE], MPI_COMM_WORLD, &mn, &mx);
    CHECK(mn == want && mx == want,
          "MPI_Comm_free(user) freed from %ld to %ld cached communicators, expected %ld on "
          "every rank",
          mn, mx, want);
    if (g_rank == 0)
        printf("P=%d MPI_Comm_free of the user communicator freed %ld cached communicators\n", g_size, mx);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *base = argc > 1 ? argv[1] : ".";
    char dir[4096];
    mc_tempdir(base, "ccfail", dir, sizeof dir);
    pass(dir, 0);
    if (g_size > 1)
        pass(dir, g_size - 1);
    int rc = mc_finish(dir);
    MPI_Finalize();
    return rc;
}
