/* mpi_agree_test.c - the MPI layer where SIONlib programs and sheaf may
 * differ (issue 11). Subcommands (run with 2-4 ranks; rank 1 is the odd one):
 *   agree  : ranks that disagree on a value that must be the same everywhere
 *            (file mode rb/wb, numFiles, numFiles vs lComm, fsblksize,
 *            keyval, checksum, collsize, cmerge, buddy, endianness; mapped:
 *            mode, numFiles) -> the open fails on EVERY rank with a message
 *            naming the disagreement, and nothing hangs (ctest TIMEOUT)
 *   nulllcomm: numFiles > 0 with a NULL lComm (SIONlib refuses, sheaf accepts)
 *   filecheck: sion_file_check_par_*_mpi (SIONlib's test_fitest_*.c usage):
 *            1 for a readable container, 0 when a member file is missing,
 *            1 again in "br,buddy" mode when a buddy copy can stand in;
 *            SION_MPI_INT32 / SION_MPI_INT64 (sion_datatypes_mpi.h)
 * Usage: mpi_agree_test CMD base=DIR. Prints "<cmd>: OK" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sion.h"

static int rank, size, failures;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "FAIL rank %d line %d (%s): ", rank, __LINE__, #c);                                        \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static char dir[512];

/* One open where rank 1 passes (mode1, nf1, fs1) and the others (mode0, nf0,
 * fs0); every rank must fail with a message containing `what`. */
static void expect_disagree(const char *name, const char *what, const char *mode0, const char *mode1, int nf0, int nf1,
                            int fs0, int fs1, int uselcomm1)
{
    char f[600];
    snprintf(f, sizeof f, "%s/%s.sion", dir, name);
    int odd = rank == 1;
    int nf = odd ? nf1 : nf0;
    sion_int32 fs = odd ? fs1 : fs0;
    sion_int64 chunk = 1000 + 10 * rank;
    int grank = -1;
    FILE *fp = NULL;
    MPI_Comm lc = MPI_COMM_WORLD;
    int sid = sion_paropen_mpi(f, odd ? mode1 : mode0, &nf, MPI_COMM_WORLD, odd && uselcomm1 ? &lc : NULL, &chunk, &fs,
                               &grank, &fp, NULL);
    CHECK(sid < 0, "%s: open succeeded", name);
    if (sid >= 0)
        sion_parclose_mpi(sid);
    else
        CHECK(strstr(sheaf_last_error(), "disagree on") && strstr(sheaf_last_error(), what), "%s: message: %s", name,
              sheaf_last_error());
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && strchr(mode0, 'w'))
        CHECK(access(f, F_OK) != 0, "%s: a refused open left %s", name, f);
}

static void expect_disagree_mapped(const char *name, const char *what, const char *mode0, const char *mode1, int nf0,
                                   int nf1)
{
    char f[600];
    snprintf(f, sizeof f, "%s/%s.sion", dir, name);
    int odd = rank == 1, nf = odd ? nf1 : nf0, n = 1, gr = rank, fnr = nf > 1 ? rank % 2 : 0;
    int lr = nf > 1 ? rank / 2 : rank;
    int *grp = &gr, *fnp = &fnr, *lrp = &lr;
    sion_int64 chunk = 100, *chp = &chunk;
    sion_int32 fs = 4096;
    FILE *fp = NULL;
    int sid =
        sion_paropen_mapped_mpi(f, odd ? mode1 : mode0, &nf, MPI_COMM_WORLD, &n, &grp, &chp, &fnp, &lrp, &fs, &fp);
    CHECK(sid < 0, "%s: open succeeded", name);
    if (sid >= 0)
        sion_parclose_mapped_mpi(sid);
    else
        CHECK(strstr(sheaf_last_error(), "disagree on") && strstr(sheaf_last_error(), what), "%s: message: %s", name,
              sheaf_last_error());
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A small container written by all ranks (numFiles files, optional extra mode keys). */
static int write_container(const char *f, const char *mode, int numfiles)
{
    int nf = numfiles, grank = -1;
    sion_int64 chunk = 64;
    sion_int32 fs = 4096;
    FILE *fp = NULL;
    int sid = sion_paropen_mpi(f, mode, &nf, MPI_COMM_WORLD, NULL, &chunk, &fs, &grank, &fp, NULL);
    if (sid < 0)
        return 0;
    char b[40];
    snprintf(b, sizeof b, "rank %d of %d", rank, size);
    int ok = sion_fwrite(b, 1, strlen(b) + 1, sid) == strlen(b) + 1;
    return sion_parclose_mpi(sid) == SION_SUCCESS && ok;
}

static void cmd_agree(void)
{
    expect_disagree("mode", "the file mode (read or write)", "wb", "rb", 1, 1, 4096, 4096, 0);
    expect_disagree("numfiles", "the number of files (numFiles): from 1 to 2", "wb", "wb", 1, 2, 4096, 4096, 0);
    expect_disagree("lcomm", "the number of files (numFiles): from 0 to 1", "wb", "wb", 1, 0, 4096, 4096, 1);
    expect_disagree("fsblksize", "(fsblksize): task 0 gives 4096, task 1 gives -1 (detect)", "wb", "wb", 1, 1, 4096, -1,
                    0);
    expect_disagree("keyval", "the key-value mode (keyval)", "wb,keyval=inline", "wb", 1, 1, 4096, 4096, 0);
    expect_disagree("checksum", "checksums (checksum): task 0 gives on, task 1 gives off", "wb,checksum", "wb", 1, 1,
                    4096, 4096, 0);
    expect_disagree("collsize", "the collector group size (collsize): task 0 gives 2, task 1 gives 3",
                    "wb,collective,collsize=2", "wb,collective,collsize=3", 1, 1, 4096, 4096, 0);
    expect_disagree("cmerge", "merged coalescing (cmerge)", "wb,collsize=2,cmerge", "wb,collsize=2", 1, 1, 4096, 4096,
                    0);
    expect_disagree("buddy", "buddy copies (buddy): task 0 gives 0, task 1 gives 1", "wb", "wb,buddy", 1, 1, 4096, 4096,
                    0);
    expect_disagree("endianness", "the data endianness (endianness)", "wb,endianness=big", "wb", 1, 1, 4096, 4096, 0);
    /* reads of an existing container */
    char f[600];
    snprintf(f, sizeof f, "%s/rmode.sion", dir);
    CHECK(write_container(f, "wb", 1), "writing rmode.sion: %s", sheaf_last_error());
    expect_disagree("rmode", "the file mode (read or write)", "rb", "wb", 1, 1, 0, 0, 0);
    if (rank == 0)
        CHECK(access(f, F_OK) == 0, "the container was removed by the refused open");
    /* mapped */
    expect_disagree_mapped("mmode", "the file mode (read or write): task 0 opens for writing, task 1 for reading", "wb",
                           "rb", 1, 1);
    expect_disagree_mapped("mnumfiles", "the number of files (numFiles): task 0 gives 1, task 1 gives 2", "wb", "wb", 1,
                           2);
    /* and after all this, the layer still works */
    snprintf(f, sizeof f, "%s/after.sion", dir);
    CHECK(write_container(f, "wb", 1), "a good open after the refused ones: %s", sheaf_last_error());
}

static void cmd_nulllcomm(void)
{
    char f[600];
    snprintf(f, sizeof f, "%s/nulllcomm.sion", dir);
    CHECK(write_container(f, "wb", size > 1 ? 2 : 1), "numFiles > 0 with lComm NULL: %s", sheaf_last_error());
    int nf = 0, grank = -1;
    sion_int64 chunk = 0;
    sion_int32 fs = 0;
    FILE *fp = NULL;
    int sid = sion_paropen_mpi(f, "rb", &nf, MPI_COMM_WORLD, NULL, &chunk, &fs, &grank, &fp, NULL);
    CHECK(sid >= 0 && nf == (size > 1 ? 2 : 1), "read back: sid %d, %d files", sid, nf);
    if (sid >= 0) {
        char b[40], exp[40];
        snprintf(exp, sizeof exp, "rank %d of %d", rank, size);
        CHECK(sion_fread(b, 1, strlen(exp) + 1, sid) == strlen(exp) + 1 && !strcmp(b, exp), "data");
        CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close");
    }
}

static int check(const char *f, const char *mode, int numfiles)
{
    sion_file_check_par_args_mpi *a = sion_file_check_par_args_init_mpi(mode, MPI_COMM_WORLD, numfiles, MPI_COMM_NULL);
    CHECK(a != NULL, "args_init");
    int rc = sion_file_check_par_cb_mpi((char *)f, a);
    CHECK(sion_file_check_par_args_free_mpi(a) == SION_SUCCESS, "args_free");
    /* the same answer on every rank */
    int lo = 0, hi = 0;
    MPI_Allreduce(&rc, &lo, 1, SION_MPI_INT32, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &hi, 1, SION_MPI_INT32, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "file check of %s (%s): answers differ between ranks (%d..%d)", f, mode, lo, hi);
    return rc;
}

static void cmd_filecheck(void)
{
    char f[600], m1[620], moved[640];
    snprintf(f, sizeof f, "%s/fitest.sion", dir);
    int nfiles = size > 1 ? 2 : 1;
    CHECK(write_container(f, "wb,buddy", nfiles), "writing %s: %s", f, sheaf_last_error());
    CHECK(check(f, "br", 1) == SION_SUCCESS, "readable container reported unreadable");
    CHECK(check(f, "br,buddy", 1) == SION_SUCCESS, "readable container (buddy mode) reported unreadable");
    snprintf(m1, sizeof m1, "%s%s", f, nfiles > 1 ? ".000001" : "");
    snprintf(moved, sizeof moved, "%s_deleted", m1);
    if (rank == 0)
        CHECK(rename(m1, moved) == 0, "rename %s", m1);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(check(f, "br", 1) == SION_NOT_SUCCESS, "container with a missing file reported readable");
    CHECK(check(f, "br,buddy", 1) == SION_SUCCESS, "buddy copy not used by the check");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rename(moved, m1) == 0, "rename back");
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(moved, sizeof moved, "%s/none.sion", dir);
    CHECK(check(moved, "br", 1) == SION_NOT_SUCCESS, "a missing container reported readable");
    /* SION_MPI_INT64 matches sion_int64 */
    sion_int64 mine = (sion_int64)rank << 40, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, SION_MPI_INT64, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == ((sion_int64)size * (size - 1) / 2) << 40, "SION_MPI_INT64 sum %lld", (long long)sum);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sheaf_set_error_printing(0);
    const char *base = ".";
    for (int i = 2; i < argc; i++)
        if (!strncmp(argv[i], "base=", 5))
            base = argv[i] + 5;
    snprintf(dir, sizeof dir, "%s/agree.XXXXXX", base);
    if (rank == 0 && !mkdtemp(dir))
        dir[0] = 0;
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    const char *cmd = argc > 1 ? argv[1] : "";
    if (!strcmp(cmd, "agree") && size >= 2)
        cmd_agree();
    else if (!strcmp(cmd, "nulllcomm"))
        cmd_nulllcomm();
    else if (!strcmp(cmd, "filecheck"))
        cmd_filecheck();
    else {
        if (rank == 0)
            fprintf(stderr, "usage: %s agree|nulllcomm|filecheck base=DIR (agree: >= 2 ranks)\n", argv[0]);
        failures++;
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        char c[700];
        snprintf(c, sizeof c, "rm -rf %s", dir);
        if (system(c)) {
        }
        printf(all ? "%s: FAILED (%d)\n" : "%s: OK\n", cmd, all);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
