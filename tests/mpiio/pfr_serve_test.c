/* pfr_serve_test.c - independent I/O on a Persistent File Realms handle
 * served by sheaf (hint sheaf_independent=serve, issue 30): the pieces of an
 * access in the rank's own realm through its realm cache, the others straight
 * to the file, the owners' cached copies dropped at the next collective call
 * or sync. Run under the non-coherent client-cache fixture, where a stale
 * cached copy shows.
 *
 *   pfr_serve_test coherence DIR [epochs]   every rank keeps a model of the
 *       file (one global schedule from a fixed seed). Each epoch: a
 *       collective strided write (fills the realm caches), independent writes
 *       of random ranges across realms (each rank its own slice of the
 *       epoch), each read back at once by its writer, then either a
 *       collective read of the whole file (no sync: the design drops the
 *       stale copies at the collective call) or sync-barrier-sync and an
 *       independent read of the whole file (MPI's rule); every read against
 *       the model; the file equals the model after close; the aggregators
 *       served independent bytes from their realm caches and every rank some
 *       in the file (the counters).
 *   pfr_serve_test errors DIR    bad input: the hint's bad value fails the
 *       open on every rank; a negative offset or count is an error, no
 *       I/O is done. */
#include "common.h"

enum { FILE_INTS = 2048 };
static int model[FILE_INTS];
static unsigned rng = 12345u;
static unsigned next(void)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) & 0xffffff;
}

static int compare(const int *got, int off, int n, const char *what, int epoch)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += got[i] != model[off + i];
    CHECK(bad == 0, "epoch %d: %s: %d of %d ints differ from the model", epoch, what, bad, n);
    return bad;
}

static int coherence(const char *dir, int epochs)
{
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char path[512];
    snprintf(path, sizeof path, "%s/pfr_serve.dat", dir);
    if (rank == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    /* 2 aggregators, 256-byte realms (64 ints), 64-byte pages, a 4-page cache
     * (evictions), fixture pages of 128 bytes */
    MPI_Info info = mkinfo("sheaf_cache=pfr,sheaf_independent=serve,cb_nodes=2,sheaf_pfr_size=256,"
                           "sheaf_page_size=64,sheaf_cache_size=256,sheaf_backend=noncoherent,"
                           "sheaf_fixture_page=128");
    sheaf_file fh = NULL;
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    CHECK(rc == 0, "open: %s", sheaf_mpiio_open_errmsg());
    if (rc)
        return finish_test("pfr_serve coherence");
    static int buf[FILE_INTS];
    int mismatches = 0;
    for (int e = 0; e < epochs; e++) {
        /* collective: rank r writes every np-th block of 24 ints from e%5 */
        int blk = 32, nblk = 0;
        for (int b = e % 5; (b + 1) * blk <= FILE_INTS; b += 1)
            if (b % np == rank)
                nblk++;
        /* every rank makes the same number of collective calls */
        int maxk = nblk, k = 0, zero = 0;
        MPI_Allreduce(&nblk, &maxk, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int b = e % 5; (b + 1) * blk <= FILE_INTS; b++) {
            for (int i = 0; i < blk; i++)
                model[b * blk + i] = e * 100000 + b * blk + i + 7;
            if (b % np == rank) {
                OK(sheaf_file_write_at_all(fh, (MPI_Offset)b * blk * 4, &model[b * blk], blk * 4, MPI_BYTE), fh);
                k++;
            }
        }
        for (; k < maxk; k++)
            OK(sheaf_file_write_at_all(fh, 0, &zero, 0, MPI_BYTE), fh);
        /* independent: each rank a random range (1..150 ints) inside its
         * slice of this epoch, crossing realms; read back at once */
        int slice = FILE_INTS / np;
        for (int r = 0; r < np; r++) {
            int s = ((r + e) % np) * slice;
            int len = 1 + (int)(next() % 150), off = s + (int)(next() % (unsigned)(slice - len));
            for (int i = 0; i < len; i++)
                model[off + i] = -(e * 100000 + r * 1000 + i + 1);
            if (r == rank) {
                OK(sheaf_file_write_at(fh, (MPI_Offset)off * 4, &model[off], len * 4, MPI_BYTE), fh);
                memset(buf, 0, sizeof buf);
                OK(sheaf_file_read_at(fh, (MPI_Offset)off * 4, buf, len * 4, MPI_BYTE), fh);
                mismatches += compare(buf, off, len, "own independent write read back", e);
            }
        }
        memset(buf, 0, sizeof buf);
        if (e % 2 == 0) {
            OK(sheaf_file_read_at_all(fh, 0, buf, FILE_INTS, MPI_INT), fh);
            mismatches += compare(buf, 0, FILE_INTS, "collective read after independent writes", e);
        } else {
            OK(sheaf_file_sync(fh), fh);
            MPI_Barrier(MPI_COMM_WORLD);
            OK(sheaf_file_sync(fh), fh);
            OK(sheaf_file_read_at(fh, 0, buf, FILE_INTS, MPI_INT), fh);
            mismatches += compare(buf, 0, FILE_INTS, "independent read after sync-barrier-sync", e);
        }
    }
    sheaf_mpiio_stats st;
    sheaf_file_stats(fh, &st);
    if (st.is_aggregator)
        CHECK(st.indep_cached_bytes > 0, "an aggregator served no independent byte from its realm cache");
    if (np > 1)
        CHECK(st.indep_direct_bytes > 0, "no independent byte went straight to the file");
    OK(sheaf_file_close(&fh), fh);
    int total = 0;
    MPI_Allreduce(&mismatches, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        long n = 0;
        unsigned char *f = slurp(path, &n);
        CHECK(f && n == (long)sizeof model, "file size %ld, expected %zu", n, sizeof model);
        if (f && n == (long)sizeof model)
            CHECK(memcmp(f, model, sizeof model) == 0, "the file differs from the model");
        free(f);
        printf("pfr_serve coherence at %d ranks, %d epochs: %d mismatching reads; realm cache bytes %llu, "
               "direct %llu (rank 0)\n",
               np, epochs, total, (unsigned long long)st.indep_cached_bytes, (unsigned long long)st.indep_direct_bytes);
    }
    return finish_test("pfr_serve coherence");
}

static int errors(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pfr_serve_err.dat", dir);
    sheaf_file fh = NULL;
    MPI_Info info = mkinfo("sheaf_cache=pfr,sheaf_independent=always");
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    CHECK(rc == SHEAF_MPIIO_EARG && !fh, "bad sheaf_independent value: rc %d", rc);
    CHECK(strstr(sheaf_mpiio_open_errmsg(), "sheaf_independent") != NULL, "message '%s' names no hint",
          sheaf_mpiio_open_errmsg());
    info = mkinfo("sheaf_cache=pfr,sheaf_independent=serve");
    rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    CHECK(rc == 0, "open: %s", sheaf_mpiio_open_errmsg());
    if (rc)
        return finish_test("pfr_serve errors");
    int v[4] = {1, 2, 3, 4};
    CHECK(sheaf_file_write_at(fh, -4, v, 4, MPI_INT) == SHEAF_MPIIO_EARG, "negative offset accepted");
    CHECK(sheaf_file_write_at(fh, 0, v, -1, MPI_INT) == SHEAF_MPIIO_EARG, "negative count accepted");
    CHECK(sheaf_file_read_at(fh, 0, NULL, 4, MPI_INT) == SHEAF_MPIIO_EARG, "null buffer accepted");
    sheaf_mpiio_stats st;
    sheaf_file_stats(fh, &st);
    CHECK(st.fs_writes == 0 && st.indep_direct_bytes == 0 && st.indep_cached_bytes == 0,
          "bad input did I/O (%llu writes)", (unsigned long long)st.fs_writes);
    OK(sheaf_file_close(&fh), fh);
    return finish_test("pfr_serve errors");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = 2;
    if (argc >= 3 && !strcmp(argv[1], "coherence"))
        rc = coherence(argv[2], argc > 3 ? atoi(argv[3]) : 24);
    else if (argc >= 3 && !strcmp(argv[1], "errors"))
        rc = errors(argv[2]);
    else
        fprintf(stderr, "usage: pfr_serve_test coherence|errors DIR [epochs]\n");
    MPI_Finalize();
    return rc ? 1 : 0;
}
