/* hints_test.c - hints that differ across ranks (issue 30, item 4): every
 * value that must agree is agreed at open, and a mismatch fails the open on
 * every rank with a message naming the hint and both values - never a hang
 * in a later collective (before: cb_buffer_size 1K on rank 0 and 16M on the
 * others hung MPI_File_write_at_all, cb_nodes on one rank hung the open's
 * aggregator choice, sheaf_cache=pfr on one rank only hung MPI_File_open
 * under the interposition library).
 *
 *   hints_test api DIR    the sheaf API: each mismatch -> SHEAF_MPIIO_EARG on
 *                         every rank, message checked; matching hints open,
 *                         write_at_all and read back the same bytes
 *   hints_test pmpi DIR   MPI_File_open through libsheaf-mpiio-pmpi.so (linked
 *                         in front of MPI): a mismatch, or DACHe hints it
 *                         cannot serve (item 3: more pages than locks), fail
 *                         the open on every rank with rank 0 saying why;
 *                         with sheaf_fallback=true everywhere the file opens
 *                         on MPI's MPI-IO with a warning (bytes checked)
 * Run at 2 and 3 ranks (the odd ranks get the other value). */
#include <errno.h>
#include <unistd.h>
#include "common.h"

static int rank, nprocs;

/* rank 0 gets kv0, the others kv1 */
static MPI_Info info_for(const char *kv0, const char *kv1) { return mkinfo(rank == 0 ? kv0 : kv1); }

/* write_at_all of 1000 ints per rank, read back with read_at_all */
static void rw_api(sheaf_file fh, const char *what)
{
    int buf[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = rank * 100000 + i;
    MPI_Offset off = (MPI_Offset)rank * sizeof buf;
    OK(sheaf_file_write_at_all(fh, off, buf, 1000, MPI_INT), fh);
    memset(back, 0, sizeof back);
    OK(sheaf_file_read_at_all(fh, off, back, 1000, MPI_INT), fh);
    CHECK(memcmp(buf, back, sizeof buf) == 0, "%s: bytes read back differ", what);
}

static void mismatch_api(const char *dir, const char *name, const char *kv0, const char *kv1, const char *hint,
                         const char *v0, const char *v1)
{
    char path[512];
    snprintf(path, sizeof path, "%s/hints_%s.dat", dir, name);
    MPI_Info info = info_for(kv0, kv1);
    sheaf_file fh = NULL;
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    const char *msg = sheaf_mpiio_open_errmsg();
    CHECK(rc == SHEAF_MPIIO_EARG && fh == NULL, "%s: open -> %d, want SHEAF_MPIIO_EARG on every rank (%s)", name, rc,
          msg);
    CHECK(strstr(msg, hint) && strstr(msg, v0) && strstr(msg, v1) && strstr(msg, "not the same on every rank"),
          "%s: message does not name %s, %s and %s: '%s'", name, hint, v0, v1, msg);
    if (fh) {
        rw_api(fh, name);
        sheaf_file_close(&fh);
    }
}

static int test_api(const char *dir)
{
    /* before: write_at_all hung (rounds of 1 KiB on rank 0, 16 MiB elsewhere) */
    mismatch_api(dir, "cbbuf", "cb_buffer_size=1024", "cb_buffer_size=16777216", "cb_buffer_size", "1024", "16777216");
    mismatch_api(dir, "cbbufpfr", "sheaf_cache=pfr,cb_buffer_size=1K", "sheaf_cache=pfr,cb_buffer_size=16M",
                 "cb_buffer_size", "1024", "16777216");
    /* before: hung in the open (an MPI_Allgather on the ranks without cb_nodes) */
    mismatch_api(dir, "cbnodes", "cb_nodes=1", "", "cb_nodes", "unset", "1");
    mismatch_api(dir, "cache", "sheaf_cache=pfr", "sheaf_cache=none", "sheaf_cache", "none", "pfr");
    mismatch_api(dir, "dachepage", "sheaf_cache=dache,sheaf_dache_page_size=64,sheaf_dache_max_size=1M",
                 "sheaf_cache=dache,sheaf_dache_page_size=128,sheaf_dache_max_size=1M", "sheaf_dache_page_size", "64",
                 "128");
    mismatch_api(dir, "pagesize", "sheaf_cache=pfr,sheaf_page_size=4096", "sheaf_cache=pfr,sheaf_page_size=8192",
                 "sheaf_page_size", "4096", "8192");
    /* the access mode must agree too (MPI requires it) */
    {
        char path[512];
        snprintf(path, sizeof path, "%s/hints_amode.dat", dir);
        sheaf_file fh = NULL;
        int rc = sheaf_file_open(MPI_COMM_WORLD, path, rank == 0 ? MPI_MODE_CREATE | MPI_MODE_RDWR : MPI_MODE_RDWR,
                                 MPI_INFO_NULL, &fh);
        CHECK(rc == SHEAF_MPIIO_EARG && strstr(sheaf_mpiio_open_errmsg(), "access mode"), "amode: open -> %d: %s", rc,
              sheaf_mpiio_open_errmsg());
        if (fh)
            sheaf_file_close(&fh);
    }
    /* the same hints everywhere: opens and works (every hint above) */
    static const char *const same[] = {"cb_buffer_size=1024", "cb_nodes=1", "sheaf_cache=pfr,cb_buffer_size=1K",
                                       "sheaf_cache=dache,sheaf_dache_page_size=64,sheaf_dache_max_size=1M"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/hints_same%zu.dat", dir, i);
        MPI_Info info = mkinfo(same[i]);
        sheaf_file fh = NULL;
        OK(sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), NULL);
        MPI_Info_free(&info);
        if (fh) {
            rw_api(fh, same[i]);
            OK(sheaf_file_close(&fh), NULL);
        }
    }
    return finish_test("hints.api");
}

/* ---- through the interposition library ---- */
static void rw_mpi(MPI_File f, const char *what)
{
    int buf[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = rank * 7919 + i;
    MPI_Offset off = (MPI_Offset)rank * sizeof buf;
    MPI_Status st;
    CHECK(MPI_File_write_at_all(f, off, buf, 1000, MPI_INT, &st) == MPI_SUCCESS, "%s: write_at_all", what);
    memset(back, 0, sizeof back);
    CHECK(MPI_File_read_at_all(f, off, back, 1000, MPI_INT, &st) == MPI_SUCCESS, "%s: read_at_all", what);
    CHECK(memcmp(buf, back, sizeof buf) == 0, "%s: bytes read back differ", what);
}

/* rank 0's stderr during an open, into err (the warning / error line) */
static int open_captured(const char *path, MPI_Info info, MPI_File *f, char *err, size_t len)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.err", path);
    int saved = -1;
    if (rank == 0) {
        fflush(stderr);
        saved = dup(2);
        FILE *t = fopen(tmp, "w");
        if (t) {
            dup2(fileno(t), 2);
            fclose(t);
        }
    }
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, f);
    err[0] = 0;
    if (rank == 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        FILE *t = fopen(tmp, "r");
        if (t) {
            size_t n = fread(err, 1, len - 1, t);
            err[n] = 0;
            fclose(t);
        }
        unlink(tmp);
    }
    return rc;
}

/* hints sheaf cannot serve: the open fails on every rank naming why; with
 * sheaf_fallback=true on every rank it opens on MPI's MPI-IO with a warning */
static void refused(const char *dir, const char *name, const char *kv0, const char *kv1, const char *key)
{
    char path[512], err[4096], k0[512], k1[512];
    snprintf(path, sizeof path, "%s/hints_pmpi_%s.dat", dir, name);
    for (int fb = 0; fb < 2; fb++) {
        snprintf(k0, sizeof k0, "%s%s", kv0, fb ? ",sheaf_fallback=true" : "");
        snprintf(k1, sizeof k1, "%s%s", kv1, fb ? ",sheaf_fallback=true" : "");
        MPI_Info info = info_for(k0, k1);
        MPI_File f = MPI_FILE_NULL;
        int rc = open_captured(path, info, &f, err, sizeof err);
        MPI_Info_free(&info);
        if (!fb) {
            CHECK(rc != MPI_SUCCESS && f == MPI_FILE_NULL, "%s: MPI_File_open -> %d, want an error on every rank", name,
                  rc);
            if (rank == 0)
                CHECK(strstr(err, "MPI_File_open") && strstr(err, key) && strstr(err, "sheaf_fallback"),
                      "%s: rank 0's message does not name %s: '%s'", name, key, err);
        } else {
            CHECK(rc == MPI_SUCCESS, "%s with sheaf_fallback=true: MPI_File_open -> %d", name, rc);
            if (rank == 0)
                CHECK(strstr(err, "warning") && strstr(err, key), "%s: rank 0's warning does not name %s: '%s'", name,
                      key, err);
        }
        if (rc == MPI_SUCCESS) {
            rw_mpi(f, name);
            CHECK(MPI_File_close(&f) == MPI_SUCCESS, "%s: close", name);
        }
    }
}

static int test_pmpi(const char *dir)
{
    /* before: ranks 1.. opened on MPI's MPI-IO alone while rank 0 waited in sheaf's open */
    refused(dir, "pfr1", "sheaf_cache=pfr", "", "on some ranks only");
    refused(dir, "dache1", "sheaf_cache=dache,sheaf_dache_max_size=1M", "sheaf_cache=pfr", "dache on some ranks only");
    /* before: taken over with different round sizes, write_at_all hung */
    refused(dir, "cbbuf", "sheaf_cache=pfr,cb_buffer_size=1024", "sheaf_cache=pfr,cb_buffer_size=16777216",
            "cb_buffer_size");
    /* issue 30 item 3: more pages than locks - before: silently left to MPI's MPI-IO */
    refused(dir, "smallpage", "sheaf_cache=dache,sheaf_dache_page_size=64",
            "sheaf_cache=dache,sheaf_dache_page_size=64", "more than the");
    /* fallback asked on some ranks only: no fallback, the open fails everywhere */
    {
        char path[512], err[4096];
        snprintf(path, sizeof path, "%s/hints_pmpi_fbone.dat", dir);
        MPI_Info info = info_for("sheaf_cache=dache,sheaf_dache_page_size=64,sheaf_fallback=true",
                                 "sheaf_cache=dache,sheaf_dache_page_size=64");
        MPI_File f = MPI_FILE_NULL;
        int rc = open_captured(path, info, &f, err, sizeof err);
        MPI_Info_free(&info);
        CHECK(rc != MPI_SUCCESS && f == MPI_FILE_NULL, "fallback on rank 0 only: MPI_File_open -> %d", rc);
        if (rc == MPI_SUCCESS)
            MPI_File_close(&f);
    }
    /* matching hints: taken over, works */
    {
        char path[512], err[4096];
        snprintf(path, sizeof path, "%s/hints_pmpi_same.dat", dir);
        MPI_Info info = mkinfo("sheaf_cache=pfr,cb_buffer_size=1024");
        MPI_File f = MPI_FILE_NULL;
        int rc = open_captured(path, info, &f, err, sizeof err);
        MPI_Info_free(&info);
        CHECK(rc == MPI_SUCCESS && (rank != 0 || err[0] == 0), "same hints: open -> %d, stderr '%s'", rc, err);
        if (rc == MPI_SUCCESS) {
            rw_mpi(f, "same");
            MPI_File_close(&f);
        }
    }
    return finish_test("hints.pmpi");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int rc = 2;
    (void)slurp; /* common.h's, unused here */
    if (argc >= 3 && !strcmp(argv[1], "api"))
        rc = test_api(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "pmpi"))
        rc = test_pmpi(argv[2]);
    else if (rank == 0)
        fprintf(stderr, "usage: hints_test api|pmpi DIR\n");
    MPI_Finalize();
    return rc;
}
