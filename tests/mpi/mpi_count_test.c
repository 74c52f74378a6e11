/* mpi_count_test.c - MPI calls per parallel open + close (issue 19).
 *
 * Linked with pmpi_count.c (a PMPI counting shim), it writes a container of
 * 1 KiB per rank and reads it back, counting on every rank the MPI calls made
 * between the start of sion_paropen_mpi and the end of sion_parclose_mpi:
 * communicator creations (MPI_Comm_split/dup/create) and collective calls
 * (creations and frees included). Four scenarios: w1/r1 (one physical
 * file), w2/r2 (numFiles=2), each opened `rounds` times, the writes on one
 * user communicator (a duplicate of MPI_COMM_WORLD), the reads on another
 * (so that a read's first open is a new split too); the bytes read are
 * checked, and the physical files written by the first and the last round
 * are compared byte for byte. The communicator cache (src/mpi/commcache.h)
 * is checked:
 *  - the first open of each scenario (a new file split) creates exactly one
 *    communicator, every later open of the same pair none;
 *  - a read of the one-file set on the writes' communicator creates none
 *    (its split, every rank in order, is the one-file write's: CC_READ);
 *  - two files open at once on the same pair: the second open creates a
 *    fresh communicator (the cached one is busy), bytes still right;
 *  - freeing the user communicator frees every cached communicator (as many
 *    MPI_Comm_free calls inside MPI_Comm_free as distinct pairs were
 *    cached);
 *  - MPI_Finalize frees what is cached on MPI_COMM_WORLD and MPI_COMM_SELF
 *    (one open + close on each before the end: two MPI_Comm_free calls
 *    inside MPI_Finalize).
 *
 * usage: mpi_count_test base=DIR [expect=w1:C/R,r1:C/R,...] [maxcreate=N] [rounds=N] [nocache]
 *   Prints one line per scenario and round (rank 0, maximum over ranks); with
 *   expect= a scenario's first open must make C collective calls and every
 *   later one R; with maxcreate= no open may create more than N
 *   communicators; nocache: SHEAF_COMM_CACHE=0 is set, every open creates
 *   one and the cache checks are skipped. Exit 0 = all checks hold. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "pmpi_count.h"
#include <mpi.h>
#include "sion.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpicheck.h" /* tests/helpers: g_rank, g_size, g_fail, CHECK */

enum { BYTES = 1024 };

/* Open (counting from here), and write or read and check BYTES. -1 on failure. */
static int open_io(const char *fname, int write, int nf_req, MPI_Comm comm)
{
    char buf[BYTES], want[BYTES];
    fill(want, BYTES, g_rank, 131, 7);
    int nf = nf_req, grank = -1;
    sion_int64 chunk = BYTES;
    sion_int32 fsblk = -1;
    MPI_Comm lc = MPI_COMM_NULL;
    FILE *fp = NULL;
    int sid = sion_paropen_mpi(fname, write ? "bw" : "br", &nf, comm, &lc, &chunk, &fsblk, &grank, &fp, NULL);
    CHECK(sid >= 0, "sion_paropen_mpi(%s, %s, nf=%d) = %d", fname, write ? "bw" : "br", nf_req, sid);
    if (sid < 0)
        return -1;
    if (write) {
        CHECK(sion_fwrite(want, 1, BYTES, sid) == BYTES, "sion_fwrite of %d bytes", BYTES);
    } else {
        memset(buf, 0, sizeof buf);
        CHECK(nf == nf_req, "read open: numFiles = %d, written with %d", nf, nf_req);
        CHECK(sion_fread(buf, 1, BYTES, sid) == BYTES, "sion_fread of %d bytes", BYTES);
        CHECK(!memcmp(buf, want, BYTES), "bytes read differ from the bytes written by rank %d", g_rank);
    }
    return sid;
}

/* One open + I/O + close; counts of the open..close span in c. */
static int one_round(const char *fname, int write, int nf_req, MPI_Comm comm, long c[PC_N])
{
    PMPI_Barrier(comm);
    pc_reset();
    int sid = open_io(fname, write, nf_req, comm);
    if (sid >= 0)
        CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "sion_parclose_mpi(%d)", sid);
    pc_snapshot(c);
    return sid < 0;
}

/* The bytes of the physical files of fname (nf files), on rank 0: malloc'd,
 * length in *len; NULL when one cannot be read. */
static char *slurp(const char *fname, int nf, size_t *len)
{
    char *all = NULL;
    *len = 0;
    for (int k = 0; k < nf; k++) {
        char path[4300];
        if (k)
            snprintf(path, sizeof path, "%s.%06d", fname, k);
        else
            snprintf(path, sizeof path, "%s", fname);
        FILE *f = fopen(path, "rb");
        if (!f) {
            free(all);
            return NULL;
        }
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
            char *m = realloc(all, *len + n);
            if (!m) {
                fclose(f);
                free(all);
                return NULL;
            }
            all = m;
            memcpy(all + *len, chunk, n);
            *len += n;
        }
        fclose(f);
    }
    return all;
}

typedef struct opts {
    const char *expect;
    long maxcreate;
    int rounds, cache;
} opts;

static void report(const char *name, int nf, int round, const long mx[PC_N])
{
    if (g_rank != 0)
        return;
    printf("P=%d %s nf=%d open#%d: collectives %ld, communicators created %ld (", g_size, name, nf, round + 1,
           pc_collectives(mx), pc_created(mx));
    for (int k = 0, first = 1; k < PC_N; k++)
        if (mx[k]) {
            printf("%s%s %ld", first ? "" : ", ", pc_names[k], mx[k]);
            first = 0;
        }
    printf(")\n");
}

/* One scenario: `rounds` opens of the same (comm, split) pair. */
static void scenario(const char *dir, const char *name, int write, int nf_req, MPI_Comm comm, const opts *o)
{
    int nf = nf_req > g_size ? g_size : nf_req;
    char fname[4200];
    snprintf(fname, sizeof fname, "%s/c%d.sion", dir, nf);
    char *firstbytes = NULL;
    size_t firstlen = 0;
    int fresh = g_size > 1 || nf_req == 1; /* at P=1, numFiles=2 is numFiles=1: a pair opened before */
    for (int round = 0; round < o->rounds; round++) {
        long c[PC_N], mx[PC_N];
        one_round(fname, write, nf, comm, c);
        PMPI_Allreduce(c, mx, PC_N, MPI_LONG, MPI_MAX, comm);
        long coll = pc_collectives(mx), made = pc_created(mx), mn[PC_N];
        PMPI_Allreduce(c, mn, PC_N, MPI_LONG, MPI_MIN, comm);
        report(name, nf, round, mx);
        long want = pc_expected(o->expect, name, round > 0);
        CHECK(want < 0 || coll == want, "%s open#%d: %ld collective calls, expected %ld", name, round + 1, coll, want);
        CHECK(o->maxcreate < 0 || made <= o->maxcreate, "%s open#%d: %ld communicators created, at most %ld allowed",
              name, round + 1, made, o->maxcreate);
        CHECK(pc_created(mn) == made, "%s open#%d: the ranks created different numbers of communicators", name,
              round + 1);
        if (o->cache)
            CHECK(made == (round == 0 && fresh ? 1 : 0), "%s open#%d: %ld communicators created, expected %d (%s)",
                  name, round + 1, made, round == 0 && fresh ? 1 : 0,
                  round == 0 && fresh ? "a new file split" : "cached from an earlier open");
        else
            CHECK(made == 1, "%s open#%d: %ld communicators created without the cache, expected 1", name, round + 1,
                  made);
        if (write && g_rank == 0 && (round == 0 || round == o->rounds - 1)) {
            size_t len = 0;
            char *b = slurp(fname, nf, &len);
            CHECK(b != NULL, "cannot read the physical files of %s", fname);
            if (round == 0) {
                firstbytes = b;
                firstlen = len;
            } else {
                CHECK(b && firstbytes && len == firstlen && !memcmp(b, firstbytes, len),
                      "%s: the files of open#%d differ from those of open#1 (%zu and %zu bytes)", name, round + 1, len,
                      firstlen);
                free(b);
            }
        }
    }
    free(firstbytes);
}

/* Two files open at once on the same (comm, split) pair: the second open
 * cannot take the cached communicator (busy) and creates its own. */
static void two_at_once(const char *dir, MPI_Comm comm, const opts *o)
{
    char fa[4200], fb[4200];
    snprintf(fa, sizeof fa, "%s/busy-a.sion", dir);
    snprintf(fb, sizeof fb, "%s/busy-b.sion", dir);
    PMPI_Barrier(comm);
    pc_reset();
    int a = open_io(fa, 1, 1, comm);
    long c1[PC_N], c2[PC_N];
    pc_snapshot(c1);
    int b = open_io(fb, 1, 1, comm);
    pc_snapshot(c2);
    if (a >= 0)
        CHECK(sion_parclose_mpi(a) == SION_SUCCESS, "sion_parclose_mpi(%d)", a);
    if (b >= 0)
        CHECK(sion_parclose_mpi(b) == SION_SUCCESS, "sion_parclose_mpi(%d)", b);
    long madea = pc_created(c1), madeb = pc_created(c2) - madea;
    if (g_rank == 0)
        printf("P=%d two files open at once: communicators created %ld and %ld\n", g_size, madea, madeb);
    CHECK(madea == (o->cache ? 0 : 1), "first of two open files: %ld communicators created", madea);
    CHECK(madeb == 1, "second of two open files (the cached one is busy): %ld communicators created", madeb);
    for (int k = 0; k < 2; k++) {
        int sid = open_io(k ? fb : fa, 0, 1, comm);
        if (sid >= 0)
            sion_parclose_mpi(sid);
    }
}

int main(int argc, char **argv)
{
    opts o = {NULL, -1, 10, 1};
    const char *base = ".";
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "base=", 5))
            base = argv[i] + 5;
        else if (!strncmp(argv[i], "expect=", 7))
            o.expect = argv[i] + 7;
        else if (!strncmp(argv[i], "maxcreate=", 10))
            o.maxcreate = atol(argv[i] + 10);
        else if (!strncmp(argv[i], "rounds=", 7))
            o.rounds = atoi(argv[i] + 7) > 1 ? atoi(argv[i] + 7) : 2;
        else if (!strcmp(argv[i], "nocache"))
            o.cache = 0;
    }
    if (!o.cache)
        setenv("SHEAF_COMM_CACHE", "0", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    char dir[4096];
    mc_tempdir(base, "mpicount", dir, sizeof dir);
    MPI_Comm user, ruser;
    PMPI_Comm_dup(MPI_COMM_WORLD, &user);
    PMPI_Comm_dup(MPI_COMM_WORLD, &ruser);
    static const struct {
        const char *name;
        int write, nf;
    } sc[] = {
        {"w1", 1, 1},
        {"r1", 0, 1},
        {"w2", 1, 2},
        {"r2", 0, 2},
    };
    for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++)
        scenario(dir, sc[s].name, sc[s].write, sc[s].nf, sc[s].write ? user : ruser, &o);
    two_at_once(dir, user, &o);

    /* a one-file read on the writes' communicator: w1's split */
    long c[PC_N], mx[PC_N];
    char f1[4200];
    snprintf(f1, sizeof f1, "%s/c1.sion", dir);
    one_round(f1, 0, 1, user, c);
    PMPI_Allreduce(c, mx, PC_N, MPI_LONG, MPI_MAX, user);
    report("r1-on-w1", 1, 0, mx);
    CHECK(pc_created(mx) == (o.cache ? 0 : 1),
          "a one-file read after a one-file write on one communicator: %ld "
          "communicators created, expected %d",
          pc_created(mx), o.cache ? 0 : 1);
    long want1 = pc_expected(o.expect, "r1", 1);
    CHECK(want1 < 0 || pc_collectives(mx) == want1, "r1-on-w1: %ld collective calls, expected %ld", pc_collectives(mx),
          want1);

    /* freeing a user communicator frees its cache: one entry per distinct
     * split (writes: w1, w2, at P=1 w2 is w1, plus the fresh communicator of
     * the second of the two open files; reads: r1, r2, at P=1 r2 is r1) */
    static const char *const what[2] = {"writes'", "reads'"};
    for (int k = 0; k < 2; k++) {
        pc_reset();
        PMPI_Comm_free(k ? &ruser : &user);
        pc_snapshot(c);
        long want = !o.cache ? 0 : k ? (g_size > 1 ? 2 : 1) : (g_size > 1 ? 2 : 1) + 1;
        CHECK(c[PC_COMM_FREE] == want,
              "MPI_Comm_free(%s user communicator) freed %ld cached communicators, "
              "expected %ld",
              what[k], c[PC_COMM_FREE], want);
        if (g_rank == 0)
            printf("P=%d MPI_Comm_free of the %s user communicator freed %ld cached communicators\n", g_size, what[k],
                   c[PC_COMM_FREE]);
    }
    long want;

    /* one open + close on MPI_COMM_WORLD: its communicator stays cached
     * until MPI_Finalize */
    char fw[4200];
    snprintf(fw, sizeof fw, "%s/world.sion", dir);
    one_round(fw, 1, 1, MPI_COMM_WORLD, c);
    /* and one on MPI_COMM_SELF (its cache is an attribute of MPI_COMM_SELF,
     * whose attributes MPI_Finalize deletes first) */
    snprintf(fw, sizeof fw, "%s/self%d.sion", dir, g_rank);
    one_round(fw, 1, 1, MPI_COMM_SELF, c);

    int bad = g_fail, anybad = 0;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
    pc_reset();
    MPI_Finalize();
    pc_snapshot(c);
    want = o.cache ? 2 : 0;
    if (c[PC_COMM_FREE] != want) {
        fprintf(stderr, "rank %d: MPI_Finalize freed %ld cached communicators, expected %ld\n", g_rank, c[PC_COMM_FREE],
                want);
        anybad = 1;
    }
    if (g_rank == 0)
        printf("P=%d MPI_Finalize freed %ld cached communicators\n%s\n", g_size, c[PC_COMM_FREE],
               anybad ? "FAILED" : "OK");
    return anybad ? 1 : 0;
}
