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
 *                         in front of MPI): a mismatch is never a hang; the
 *                         file opens on the MPI library's MPI-IO, bytes checked
 * Run at 2 and 3 ranks (the odd ranks get the other value). */
#include <errno.h>
#include <unistd.h>
#include "common.h"

static int rank, nprocs;

/* rank 0 gets kv0, the others kv1 */
static MPI_Info info_for(const char *kv0, const char *kv1) { return mkinfo(rank == 0 ? kv0 : kv1); }

/* write_at_all of 1000 ints per rank, read back with read_at_all */
static void rw_api(sheaf_file fh, const char *what) {
  int buf[1000], back[1000];
  for (int i = 0; i < 1000; i++) buf[i] = rank * 100000 + i;
  MPI_Offset off = (MPI_Offset)rank * sizeof buf;
  OK(sheaf_file_write_at_all(fh, off, buf, 1000, MPI_INT), fh);
  memset(back, 0, sizeof back);
  OK(sheaf_file_read_at_all(fh, off, back, 1000, MPI_INT), fh);
  CHECK(memcmp(buf, back, sizeof buf) == 0, "%s: bytes read back differ", what);
}

static void mismatch_api(const char *dir, const char *name, const char *kv0, const char *kv1, const char *hint,
                         const char *v0, const char *v1) {
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

static int test_api(const char *dir) {
  /* before: write_at_all hung (rounds of 1 KiB on rank 0, 16 MiB elsewhere) */
  mismatch_api(dir, "cbbuf", "cb_buffer_size=1024", "cb_buffer_size=16777216", "cb_buffer_size", "1024",
               "16777216");
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
    CHECK(rc == SHEAF_MPIIO_EARG && strstr(sheaf_mpiio_open_errmsg(), "access mode"),
          "amode: open -> %d: %s", rc, sheaf_mpiio_open_errmsg());
    if (fh) sheaf_file_close(&fh);
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
static void rw_mpi(MPI_File f, const char *what) {
  int buf[1000], back[1000];
  for (int i = 0; i < 1000; i++) buf[i] = rank * 7919 + i;
  MPI_Offset off = (MPI_Offset)rank * sizeof buf;
  MPI_Status st;
  CHECK(MPI_File_write_at_all(f, off, buf, 1000, MPI_INT, &st) == MPI_SUCCESS, "%s: write_at_all", what);
  memset(back, 0, sizeof back);
  CHECK(MPI_File_read_at_all(f, off, back, 1000, MPI_INT, &st) == MPI_SUCCESS, "%s: read_at_all", what);
  CHECK(memcmp(buf, back, sizeof buf) == 0, "%s: bytes read back differ", what);
}

/* open with kv0 on rank 0, kv1 elsewhere; want_ok: the open must succeed
 * (then the bytes are checked), else fail on every rank */
static void open_mpi(const char *dir, const char *name, const char *kv0, const char *kv1, int want_ok) {
  char path[512];
  snprintf(path, sizeof path, "%s/hints_pmpi_%s.dat", dir, name);
  MPI_Info info = info_for(kv0, kv1);
  MPI_File f = MPI_FILE_NULL;
  int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &f);
  MPI_Info_free(&info);
  if (want_ok) {
    CHECK(rc == MPI_SUCCESS, "%s: MPI_File_open -> %d", name, rc);
  } else {
    CHECK(rc != MPI_SUCCESS && f == MPI_FILE_NULL, "%s: MPI_File_open -> %d, want an error on every rank", name, rc);
  }
  if (rc == MPI_SUCCESS) {
    rw_mpi(f, name);
    CHECK(MPI_File_close(&f) == MPI_SUCCESS, "%s: close", name);
  }
}

static int test_pmpi(const char *dir) {
  /* before: ranks 1.. opened on MPI's MPI-IO alone while rank 0 waited in sheaf's open */
  open_mpi(dir, "pfr1", "sheaf_cache=pfr", "", 1);
  open_mpi(dir, "dache1", "sheaf_cache=dache,sheaf_dache_max_size=1M", "sheaf_cache=pfr", 1);
  /* before: taken over with different round sizes, write_at_all hung */
  open_mpi(dir, "cbbuf", "sheaf_cache=pfr,cb_buffer_size=1024", "sheaf_cache=pfr,cb_buffer_size=16777216", 1);
  open_mpi(dir, "same", "sheaf_cache=pfr,cb_buffer_size=1024", "sheaf_cache=pfr,cb_buffer_size=1024", 1);
  return finish_test("hints.pmpi");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  int rc = 2;
  (void)slurp;  /* common.h's, unused here */
  if (argc >= 3 && !strcmp(argv[1], "api")) rc = test_api(argv[2]);
  else if (argc >= 3 && !strcmp(argv[1], "pmpi")) rc = test_pmpi(argv[2]);
  else if (rank == 0) fprintf(stderr, "usage: hints_test api|pmpi DIR\n");
  MPI_Finalize();
  return rc;
}
