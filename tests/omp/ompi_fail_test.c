/* ompi_fail_test.c - the hybrid binding (sion_paropen_ompi) under failure on
 * ONE process: every task of every process fails the same way, nobody hangs.
 *
 * Built from the hybrid binding's sources with SHEAF_CC_TEST_HOOK (the next
 * cc_reserve of src/mpi/commcache.h on this process fails as if out of
 * memory) and SHEAF_OMPI_TEST_HOOK (src/ompi/ompi_test_hook.h: the thread
 * team, the global or the local group object cannot be allocated on this
 * process), linked with the PMPI counting shim of tests/mpi. Every thread of
 * every rank is a task. Two modes, each run with rank 0 failing, then the
 * last rank:
 *  - cc: the communicator cache's reservation fails (as mpi_ccfail_test.c
 *    for the MPI binding): an open whose split is cached, a new split
 *    (numFiles=2 write) and a multi-file read;
 *  - alloc: the team, the global group, the local group cannot be
 *    allocated: a write of a cached split, of a new split, a multi-file read.
 * Each failing open fails on every task of every rank with SHEAF_E_NOMEM and
 * a message naming the file and the cause, without a hang (ctest's timeout),
 * without creating or freeing a communicator; then the same opens work
 * (bytes read back): a new split creates exactly one communicator on every
 * rank, a cached one none, and MPI_Comm_free of the user communicator frees
 * the same number of cached communicators on every rank (one per split).
 *
 * A third mode, straddle (4 ranks x 2 threads; see straddle()): a read whose
 * file mapping puts one process's threads in two files fails on every task,
 * without a hang.
 *
 * usage: ompi_fail_test DIR NTHREADS cc|alloc|straddle. Exit 0 = all checks
 * hold. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "../mpi/pmpi_count.h"
#include <mpi.h>
#include <omp.h>
#include "sheaf.h"
#include "sion.h"
#include "sion_ompi.h"
#include "commcache.h"      /* src/mpi: cc_test_fail_reserve */
#include "ompi_test_hook.h" /* src/ompi: ompi_test_fail */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpicheck.h" /* tests/helpers: g_rank, g_size, g_fail, CHECK, fill */

enum { BYTES = 600 };

/* What the threads of this process saw in one open (+ I/O) + close. */
typedef struct outcome {
    int opened, failed, codemin, codemax, unnamed, badio;
    char msg[600]; /* one failed thread's message */
} outcome;

/* One thread's open, write or read and check, close; into o (critical). */
static void task_round(const char *fname, int write, int nf_req, MPI_Comm comm, const char *cause, outcome *o)
{
    int nf = nf_req, grank = -1, bad = 0;
    sion_int64 chunk = BYTES;
    sion_int32 fsb = -1;
    FILE *fp = NULL;
    char want[BYTES], got[BYTES];
    int sid = sion_paropen_ompi(fname, write ? "bw" : "br", &nf, comm, NULL, &chunk, &fsb, &grank, &fp, NULL);
    int code = sid < 0 ? sheaf_last_error_code() : 0;
    const char *msg = sid < 0 ? sheaf_last_error() : "";
    int named = sid >= 0 || (strstr(msg, fname) && strstr(msg, cause));
    if (sid >= 0) {
        fill(want, BYTES, grank, 37, 11);
        if (write) {
            bad = sion_fwrite(want, 1, BYTES, sid) != BYTES;
        } else {
            memset(got, 0, sizeof got);
            bad = sion_fread(got, 1, BYTES, sid) != BYTES || memcmp(got, want, BYTES);
        }
        bad |= sion_parclose_ompi(sid) != SION_SUCCESS;
    }
#pragma omp critical
    {
        o->opened += sid >= 0;
        o->failed += sid < 0;
        o->codemin = code < o->codemin ? code : o->codemin;
        o->codemax = code > o->codemax ? code : o->codemax;
        o->unnamed += !named;
        o->badio += bad;
        if (sid < 0)
            snprintf(o->msg, sizeof o->msg, "%s", msg);
    }
}

/* Every thread: one round; the process's counts of the open..close in c.
 * hook: ompi_test_fail bits on this process, cc: fail its cc_reserve. */
static outcome round_trip(const char *fname, int write, int nf, MPI_Comm comm, int nt, int hook, int cc,
                          const char *cause, long c[PC_N])
{
    outcome o = {0, 0, 1 << 30, -(1 << 30), 0, 0, ""};
    PMPI_Barrier(comm);
    pc_reset();
    ompi_test_fail = hook;
    cc_test_fail_reserve = cc;
#pragma omp parallel num_threads(nt)
    task_round(fname, write, nf, comm, cause, &o);
    ompi_test_fail = 0;
    cc_test_fail_reserve = 0;
    pc_snapshot(c);
    return o;
}

/* Minimum and maximum of v over comm. */
static void minmax(long v, MPI_Comm comm, long *mn, long *mx)
{
    PMPI_Allreduce(&v, mn, 1, MPI_LONG, MPI_MIN, comm);
    PMPI_Allreduce(&v, mx, 1, MPI_LONG, MPI_MAX, comm);
}

typedef struct scenario {
    const char *what, *fname;
    int write, nf;
} scenario;

static const char *hook_name(int hook)
{
    return hook == OMPI_FAIL_TEAM    ? "thread team"
           : hook == OMPI_FAIL_GROUP ? "global group"
           : hook                    ? "local group"
                                     : "cache entry";
}

/* An open that must fail on every task because rank `bad` fails (hook bits
 * or its cache reservation): SHEAF_E_NOMEM everywhere, the file and the
 * cause named, no communicator created or freed. */
static void failing_open(const scenario *s, MPI_Comm comm, int nt, int bad, int hook, int cc, const char *cause)
{
    long c[PC_N], mn, mx;
    int me = g_rank == bad;
    outcome o = round_trip(s->fname, s->write, s->nf, comm, nt, me ? hook : 0, me && cc, cause, c);
    CHECK(o.opened == 0 && o.failed == nt, "%s, rank %d failing (%s): %d of %d threads opened", s->what, bad, cause,
          o.opened, nt);
    minmax(o.codemin, comm, &mn, &mx);
    long mn2, mx2;
    minmax(o.codemax, comm, &mn2, &mx2);
    CHECK(mn == SHEAF_E_NOMEM && mx2 == SHEAF_E_NOMEM,
          "%s, rank %d failing (%s): codes from %ld to %ld, expected %d "
          "on every task",
          s->what, bad, cause, mn, mx2, SHEAF_E_NOMEM);
    CHECK(o.unnamed == 0, "%s: %d threads' messages do not name the file and \"%s\": %s", s->what, o.unnamed, cause,
          o.msg);
    minmax(pc_created(c), comm, &mn, &mx);
    CHECK(mx == 0, "%s: a failed open created %ld communicators", s->what, mx);
    minmax(c[PC_COMM_FREE], comm, &mn, &mx);
    CHECK(mx == 0, "%s: a failed open freed %ld communicators", s->what, mx);
    if (g_rank == 0)
        printf("P=%d x %d, rank %d without its %s, %s: failed on every task with code %d (message: %s)\n", g_size, nt,
               bad, hook_name(hook), s->what, o.codemin, o.msg);
}

/* An open that must work (bytes checked) and create `made` communicators on
 * every rank. */
static void good_open(const scenario *s, MPI_Comm comm, int nt, long made)
{
    long c[PC_N], mn, mx;
    outcome o = round_trip(s->fname, s->write, s->nf, comm, nt, 0, 0, "", c);
    CHECK(o.opened == nt && o.badio == 0, "%s: %d of %d threads opened, %d failed I/O or close (%s)", s->what, o.opened,
          nt, o.badio, o.msg);
    minmax(pc_created(c), comm, &mn, &mx);
    CHECK(mn == made && mx == made, "%s: from %ld to %ld communicators created, expected %ld on every rank", s->what,
          mn, mx, made);
    if (g_rank == 0)
        printf("P=%d x %d %s: communicators created %ld, collectives %ld\n", g_size, nt, s->what, mx,
               pc_collectives(c));
}

/* Freeing the user communicator frees `want` cached ones on every rank. */
static void free_user(MPI_Comm *user, long want)
{
    long c[PC_N], mn, mx;
    pc_reset();
    PMPI_Comm_free(user);
    pc_snapshot(c);
    minmax(c[PC_COMM_FREE], MPI_COMM_WORLD, &mn, &mx);
    CHECK(mn == want && mx == want,
          "MPI_Comm_free(user) freed from %ld to %ld cached communicators, expected %ld on "
          "every rank",
          mn, mx, want);
}

/* One pass with rank `bad` failing: its cache reservation (hook 0) or the
 * allocations of the hook bits. */
static void pass(const char *dir, int nt, int bad, int hook)
{
    char f1[4200], f2[4200];
    snprintf(f1, sizeof f1, "%s/one.sion", dir);
    snprintf(f2, sizeof f2, "%s/two.sion", dir);
    const char *cause = hook ? "out of memory" : "communicator cache";
    MPI_Comm user;
    PMPI_Comm_dup(MPI_COMM_WORLD, &user);
    int nf2 = g_size > 1 ? 2 : 1, fresh2 = g_size > 1; /* at P=1 numFiles=2 is numFiles=1 */
    scenario w1 = {"write, numFiles=1", f1, 1, 1}, w2 = {"write of a new split (numFiles=2)", f2, 1, nf2},
             r2 = {"read of a multi-file set (a new split)", f2, 0, nf2}, r1 = {"read of the one-file set", f1, 0, 1};
    good_open(&w1, user, nt, 1);
    scenario wc = w1;
    wc.what = "write of a cached split";
    failing_open(&wc, user, nt, bad, hook, !hook, cause);
    failing_open(&w2, user, nt, bad, hook, !hook, cause);
    good_open(&w2, user, nt, fresh2);
    failing_open(&r2, user, nt, bad, hook, !hook, cause);
    good_open(&r2, user, nt, fresh2);
    good_open(&w1, user, nt, 0);
    good_open(&r1, user, nt, 0);
    free_user(&user, fresh2 ? 3 : 1);
}

/* A 4-task set written with sion_paropen_mpi by the 4 ranks, one physical
 * file per lComm color. */
static void mpi_write(const char *fname, int color)
{
    MPI_Comm lc;
    PMPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &lc);
    int nf = 0, grank = -1;
    sion_int64 chunk = BYTES;
    sion_int32 fsb = -1;
    FILE *fp = NULL;
    char want[BYTES];
    fill(want, BYTES, g_rank, 37, 11);
    int sid = sion_paropen_mpi(fname, "bw", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsb, &grank, &fp, NULL);
    CHECK(sid >= 0, "sion_paropen_mpi(%s) with lComm color %d", fname, color);
    if (sid >= 0) {
        CHECK(sion_fwrite(want, 1, BYTES, sid) == BYTES, "sion_fwrite of %d bytes", BYTES);
        CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "sion_parclose_mpi");
    }
    PMPI_Comm_free(&lc);
}

/* Mode straddle (4 ranks, 2 threads): the set's files are {task 0}, {1},
 * {2, 3}; ranks 0 and 1 read it with 2 threads each, so process 0's threads
 * are in two files (it cannot be a group of the hybrid binding), process
 * 1's are the third file: both fail with the same code, no hang (process 1
 * used to wait in the open's agreement for process 0, which had left); then
 * a set with files {0, 1}, {2, 3} reads back. */
static void straddle(const char *dir, int nt)
{
    char f[4200];
    snprintf(f, sizeof f, "%s/straddle.sion", dir);
    MPI_Comm two;
    PMPI_Comm_split(MPI_COMM_WORLD, g_rank < 2 ? 0 : MPI_UNDEFINED, g_rank, &two);
    scenario s = {"read of a set that puts process 0's threads in two files", f, 0, 0};
    mpi_write(f, g_rank < 2 ? g_rank : 2);
    if (two != MPI_COMM_NULL) {
        long c[PC_N], mn, mx;
        const char *cause = g_rank == 0 ? "different physical files" : "failed on task 0";
        outcome o = round_trip(f, 0, 0, two, nt, 0, 0, cause, c);
        CHECK(o.opened == 0 && o.failed == nt, "%s: %d of %d threads opened", s.what, o.opened, nt);
        minmax(o.codemin, two, &mn, &mx);
        CHECK(mn == mx && mx < 0, "%s: codes from %ld to %ld, expected one failure code", s.what, mn, mx);
        CHECK(o.unnamed == 0, "%s: %d threads' messages do not name the file and \"%s\": %s", s.what, o.unnamed, cause,
              o.msg);
        if (g_rank <= 1)
            printf("P=%d x %d, rank %d, %s: failed on every task with code %d (message: %s)\n", g_size, nt, g_rank,
                   s.what, o.codemin, o.msg);
    }
    mpi_write(f, g_rank / 2);
    if (two != MPI_COMM_NULL) {
        s.what = "read of a set with files {0, 1}, {2, 3}";
        good_open(&s, two, nt, 1);
        PMPI_Comm_free(&two);
    }
}

static void run(const char *dir, int nt, const char *mode)
{
    if (!strcmp(mode, "straddle")) {
        straddle(dir, nt);
        return;
    }
    static const int hooks[] = {OMPI_FAIL_TEAM, OMPI_FAIL_GROUP, OMPI_FAIL_LGROUP};
    for (int b = 0; b < (g_size > 1 ? 2 : 1); b++) {
        int bad = b ? g_size - 1 : 0;
        if (!strcmp(mode, "cc"))
            pass(dir, nt, bad, 0);
        for (int h = 0; !strcmp(mode, "alloc") && h < 3; h++)
            pass(dir, nt, bad, hooks[h]);
    }
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *base = argc > 1 ? argv[1] : ".", *mode = argc > 3 ? argv[3] : "cc";
    int nt = argc > 2 ? atoi(argv[2]) : 2;
    char dir[4096];
    mc_tempdir(base, "ompifail", dir, sizeof dir);
    int straddling = !strcmp(mode, "straddle");
    if (!dir[0] || nt < 1 || (strcmp(mode, "cc") && strcmp(mode, "alloc") && !straddling) ||
        (straddling && (g_size != 4 || nt != 2)))
        MPI_Abort(MPI_COMM_WORLD, 2);
    run(dir, nt, mode);
    int rc = mc_finish(dir);
    MPI_Finalize();
    return rc;
}
