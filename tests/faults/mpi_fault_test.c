/* mpi_fault_test.c - errors from the system during parallel writes: every rank
 * writes `size` bytes in pieces into one container, then closes. Faults come
 * from outside (faultfs.c via LD_PRELOAD on chosen ranks, a full tmpfs) or
 * from RLIMIT_FSIZE on one rank (fsize_rank=R fsize=BYTES: writes beyond
 * fail with EFBIG, also through stdio).
 *   mpi_fault_test dir=D name=N size=BYTES [piece=BYTES] [posix=1] [flush=1]
 *                  [fsize_rank=R fsize=BYTES] expect=ok|error [errtext=TEXT]
 * Checks, on every rank:
 *   - the run ends (ctest's timeout catches a hang);
 *   - sion_parclose gives the same result on all ranks;
 *   - expect=ok: no call failed and every rank reads back its bytes;
 *   - expect=error: some rank saw a failing call; each failing call's message
 *     names the container and, with errtext, contains it (e.g. "No space");
 *     whatever the container holds afterwards (if it could be closed) is an
 *     exact prefix of what each rank wrote: nothing wrong is ever returned.
 * Exit 0 when all checks pass on all ranks. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int rank, np, fails;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)

static unsigned char pat(int r, long long i) { return (unsigned char)(r * 59 + i * 13 + (i >> 11) + 1); }

static const char *arg(int argc, char **argv, const char *key, const char *dflt)
{
    size_t k = strlen(key);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], key, k) && argv[i][k] == '=')
            return argv[i] + k + 1;
    return dflt;
}

static int errors_seen;
static void saw_error(const char *call, const char *fname, const char *errtext)
{
    const char *m = sheaf_last_error();
    errors_seen++;
    CHECK(strstr(m, fname) != NULL, "%s failed with a message that does not name the file: %s", call, m);
    if (errtext && *errtext)
        CHECK(strstr(m, errtext) != NULL || strstr(m, "another task") || strstr(m, "failed on task") ||
                  strstr(m, "see its message"),
              "%s failed with '%s', expected '%s'", call, m, errtext);
    fprintf(stderr, "rank %d: %s failed as it may: %s\n", rank, call, m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    sheaf_set_error_printing(0);
    const char *dir = arg(argc, argv, "dir", "."), *name = arg(argc, argv, "name", "fault.sion");
    const char *expect = arg(argc, argv, "expect", "ok"), *errtext = arg(argc, argv, "errtext", NULL);
    long long size = atoll(arg(argc, argv, "size", "400000")), piece = atoll(arg(argc, argv, "piece", "65536"));
    int posix = atoi(arg(argc, argv, "posix", "0")), flush = atoi(arg(argc, argv, "flush", "0"));
    int fsize_rank = atoi(arg(argc, argv, "fsize_rank", "-1"));
    if (rank == fsize_rank) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {(rlim_t)atoll(arg(argc, argv, "fsize", "200000")), RLIM_INFINITY};
        rl.rlim_max = rl.rlim_cur;
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    char fn[1024];
    snprintf(fn, sizeof fn, "%s/%s", dir, name);
    unsigned char *buf = malloc((size_t)size + 1);
    for (long long i = 0; i < size; i++)
        buf[i] = pat(rank, i);

    sion_int64 chunk = size;
    sion_int32 fsblk = 4096;
    int nf = 1, grank = rank;
    FILE *fp = NULL;
    int sid =
        sion_paropen_mpi(fn, posix ? "bw,posix" : "bw", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, &fp, NULL);
    int open_ok = sid >= 0;
    if (!open_ok)
        saw_error("sion_paropen_mpi", name, errtext);
    long long good = 0; /* bytes of calls that reported success */
    for (long long off = 0; open_ok && off < size; off += piece) {
        size_t n = (size_t)(size - off < piece ? size - off : piece);
        size_t w = sion_fwrite(buf + off, 1, n, sid);
        if (w != n) {
            saw_error("sion_fwrite", name, errtext);
            break;
        }
        good += (long long)n;
        if (flush && sion_flush(sid) != SION_SUCCESS) {
            saw_error("sion_flush", name, errtext);
            break;
        }
    }
    int close_rc = open_ok ? sion_parclose_mpi(sid) : SION_NOT_SUCCESS;
    if (open_ok && close_rc != SION_SUCCESS)
        saw_error("sion_parclose_mpi", name, errtext);
    int mine[2] = {close_rc, errors_seen}, *all = malloc(sizeof mine * (size_t)np);
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    int any_error = 0;
    for (int r = 0; r < np; r++) {
        CHECK(all[2 * r] == close_rc, "parclose returned %d here and %d on rank %d", close_rc, all[2 * r], r);
        any_error |= all[2 * r + 1] > 0;
    }
    if (!strcmp(expect, "ok"))
        CHECK(!errors_seen, "a call failed, none was expected");
    else
        CHECK(any_error, "no rank saw an error, one was expected");

    /* what the container holds (if it is readable) is the truth, never garbage */
    if (open_ok) {
        nf = 0;
        sion_int64 rchunk = 0;
        sion_int32 rfs = 0;
        int rsid = sion_paropen_mpi(fn, posix ? "br,posix" : "br", &nf, MPI_COMM_WORLD, NULL, &rchunk, &rfs, &grank,
                                    &fp, NULL);
        if (!strcmp(expect, "ok"))
            CHECK(rsid >= 0, "read open failed: %s", sheaf_last_error());
        if (rsid >= 0) {
            unsigned char *got = malloc((size_t)size + 1);
            size_t have = 0;
            while (!sion_feof(rsid) && have < (size_t)size) {
                size_t n = sion_fread(got + have, 1, (size_t)size - have, rsid);
                if (!n)
                    break;
                have += n;
            }
            CHECK(sion_feof(rsid) == 1, "container holds more than was written");
            CHECK(!memcmp(got, buf, have), "container holds wrong bytes for this rank");
            if (!strcmp(expect, "ok"))
                CHECK(have == (size_t)size, "read back %zu of %lld bytes", have, size);
            else if (close_rc == SION_SUCCESS)
                CHECK(have >= (size_t)good || posix == 0, "posix: %lld bytes reported written, %zu readable", good,
                      have);
            free(got);
            sion_parclose_mpi(rsid);
        }
    }
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("fault test %s (expect %s): %s\n", name, expect, total ? "FAILED" : "ok");
    free(all);
    free(buf);
    MPI_Finalize();
    return total ? 1 : 0;
}
