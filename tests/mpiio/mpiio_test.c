/* mpiio_test.c - the sheaf_file_* API against the MPI library's own MPI-IO.
 *
 *   mpiio_test views DIR MODE   every view kind (interleaved vector, 2-D
 *       subarray, struct with holes and resized, noncontiguous memory) with
 *       write_all, write_at_all, independent write_at / individual pointer,
 *       read_all and read_at back: the bytes read equal the bytes written and
 *       the file equals the one MPI_File_* (ROMIO/OMPIO) writes with the same
 *       calls; get_size equals MPI_File_get_size; set_size and preallocate.
 *       MODE: none | pfr | nocache (sheaf_cache hint; pfr with
 *       sheaf_independent=sync and a sync around the independent part)
 *   mpiio_test errors DIR     bad input on purpose: every call returns the
 *       documented code with a message, a bad argument on one rank of a
 *       collective call fails it on every rank (no hang) */
#include <fcntl.h>
#include <unistd.h>
#include "common.h"

static int rank, nprocs;

/* the same calls on both APIs */
typedef struct ops {
    int sheaf;
    sheaf_file fh;
    MPI_File mf;
} ops;

static void o_view(ops *o, MPI_Offset d, MPI_Datatype e, MPI_Datatype f)
{
    if (o->sheaf)
        OK(sheaf_file_set_view(o->fh, d, e, f), o->fh);
    else
        MPI_File_set_view(o->mf, d, e, f, "native", MPI_INFO_NULL);
}
static void o_write_all(ops *o, const void *b, int n, MPI_Datatype t)
{
    if (o->sheaf)
        OK(sheaf_file_write_all(o->fh, b, n, t), o->fh);
    else
        MPI_File_write_all(o->mf, b, n, t, MPI_STATUS_IGNORE);
}
static void o_write_at_all(ops *o, MPI_Offset off, const void *b, int n, MPI_Datatype t)
{
    if (o->sheaf)
        OK(sheaf_file_write_at_all(o->fh, off, b, n, t), o->fh);
    else
        MPI_File_write_at_all(o->mf, off, b, n, t, MPI_STATUS_IGNORE);
}
static void o_write_at(ops *o, MPI_Offset off, const void *b, int n, MPI_Datatype t)
{
    if (o->sheaf)
        OK(sheaf_file_write_at(o->fh, off, b, n, t), o->fh);
    else
        MPI_File_write_at(o->mf, off, b, n, t, MPI_STATUS_IGNORE);
}
static void o_write(ops *o, const void *b, int n, MPI_Datatype t)
{
    if (o->sheaf)
        OK(sheaf_file_write(o->fh, b, n, t), o->fh);
    else
        MPI_File_write(o->mf, b, n, t, MPI_STATUS_IGNORE);
}
static void o_read_all(ops *o, void *b, int n, MPI_Datatype t)
{
    if (o->sheaf)
        OK(sheaf_file_read_all(o->fh, b, n, t), o->fh);
    else
        MPI_File_read_all(o->mf, b, n, t, MPI_STATUS_IGNORE);
}
static void o_read_at(ops *o, MPI_Offset off, void *b, int n, MPI_Datatype t)
{
    if (o->sheaf)
        OK(sheaf_file_read_at(o->fh, off, b, n, t), o->fh);
    else
        MPI_File_read_at(o->mf, off, b, n, t, MPI_STATUS_IGNORE);
}
static void o_seek(ops *o, MPI_Offset off)
{
    if (o->sheaf)
        OK(sheaf_file_seek(o->fh, off, MPI_SEEK_SET), o->fh);
    else
        MPI_File_seek(o->mf, off, MPI_SEEK_SET);
}
static void o_sync(ops *o)
{
    if (o->sheaf)
        OK(sheaf_file_sync(o->fh), o->fh);
    else
        MPI_File_sync(o->mf);
}
static MPI_Offset o_size(ops *o)
{
    MPI_Offset s = -1;
    if (o->sheaf)
        OK(sheaf_file_get_size(o->fh, &s), o->fh);
    else
        MPI_File_get_size(o->mf, &s);
    return s;
}

static void fill(int *v, int n, int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = seed * 1000003 + rank * 10007 + i;
}

/* one session of calls over several views; returns the file size it saw */
static MPI_Offset session(ops *o, const char *mode)
{
    enum { B = 3, NB = 40, G = 24 };
    int indep_sync = o->sheaf && strcmp(mode, "pfr") == 0;
    int w[NB * B * 2], r[NB * B * 2];
    /* 1. interleaved vector: rank blocks of B ints, stride nprocs*B */
    MPI_Datatype vec, ft1;
    MPI_Type_vector(NB, B, B * nprocs, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)NB * B * nprocs * 4, &ft1);
    MPI_Type_commit(&ft1);
    o_view(o, 64 + rank * B * 4, MPI_INT, ft1);
    fill(w, NB * B, 1);
    o_write_all(o, w, NB * B, MPI_INT);
    fill(w, NB * B, 2);
    o_write_at_all(o, NB * B, w, NB * B, MPI_INT); /* the second tile */
    memset(r, 0, sizeof r);
    o_seek(o, 0);
    o_read_all(o, r, NB * B, MPI_INT);
    fill(w, NB * B, 1);
    CHECK(memcmp(r, w, NB * B * 4) == 0, "vector view: read_all != write_all");
    /* 2. 2-D subarray of G x G ints, a 2 x (nprocs/2) rank grid; noncontiguous memory */
    int px = 2, py = nprocs / 2 > 0 ? nprocs / 2 : 1;
    int sizes[2] = {G, G}, subs[2] = {G / px, G / py}, starts[2] = {(rank % px) * (G / px), (rank / px) * (G / py)};
    MPI_Datatype sub, memv;
    if (rank / px < py) {
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    } else { /* ranks beyond the grid: an empty share */
        MPI_Type_contiguous(0, MPI_INT, &sub);
    }
    MPI_Type_commit(&sub);
    int n2 = rank / px < py ? subs[0] * subs[1] : 0;
    MPI_Type_vector(n2, 1, 2, MPI_INT, &memv); /* every other int of a buffer */
    MPI_Type_commit(&memv);
    int *mw = calloc((size_t)2 * G * G, sizeof(int)), *mr = calloc((size_t)2 * G * G, sizeof(int));
    fill(mw, 2 * G * G, 3);
    o_view(o, 4096, MPI_INT, sub);
    o_write_all(o, mw, 1, memv);
    o_read_all(o, mr, 1, memv); /* the pointer advanced: reads the next tile (zeros/unwritten) */
    o_seek(o, 0);
    o_read_all(o, mr, 1, memv);
    for (int i = 0; i < n2; i++)
        CHECK(mr[2 * i] == mw[2 * i], "subarray: element %d %d != %d", i, mr[2 * i], mw[2 * i]);
    /* 3. struct with holes, resized; independent writes with the individual pointer */
    int bl[3] = {1, 2, 1};
    MPI_Aint disp[3] = {0, 12, 40};
    MPI_Datatype tys[3] = {MPI_INT, MPI_INT, MPI_INT}, st, ft3;
    MPI_Type_create_struct(3, bl, disp, tys, &st);
    MPI_Type_create_resized(st, 0, 48, &ft3);
    MPI_Type_commit(&ft3);
    o_view(o, 20000 + rank * 4800, MPI_INT, ft3);
    if (indep_sync)
        o_sync(o);
    fill(w, 40, 4);
    o_write(o, w, 20, MPI_INT);
    o_write(o, w + 20, 20, MPI_INT);
    fill(w + 40, 8, 5);
    o_write_at(o, 2, w + 40, 8, MPI_INT); /* overwrites elements 2..9 */
    memcpy(w + 2, w + 40, 8 * 4);
    if (indep_sync)
        o_sync(o);
    memset(r, 0, sizeof r);
    o_read_at(o, 0, r, 40, MPI_INT);
    CHECK(memcmp(r, w, 40 * 4) == 0, "struct view: read_at != writes");
    MPI_Barrier(MPI_COMM_WORLD);
    memset(r, 0, sizeof r);
    o_seek(o, 0);
    o_read_all(o, r, 40, MPI_INT);
    CHECK(memcmp(r, w, 40 * 4) == 0, "struct view: read_all after independent writes");
    MPI_Offset s = o_size(o);
    MPI_Type_free(&vec);
    MPI_Type_free(&ft1);
    MPI_Type_free(&sub);
    MPI_Type_free(&memv);
    MPI_Type_free(&st);
    MPI_Type_free(&ft3);
    free(mw);
    free(mr);
    return s;
}

static int test_views(const char *dir, const char *mode)
{
    char ps[512], pr[512];
    snprintf(ps, sizeof ps, "%s/views-%s.sheaf", dir, mode);
    snprintf(pr, sizeof pr, "%s/views-%s.mpi", dir, mode);
    char hints[256];
    snprintf(hints, sizeof hints,
             "sheaf_cache=%s,cb_nodes=%d,cb_buffer_size=1024,sheaf_independent=sync,sheaf_page_size=512", mode,
             nprocs > 1 ? 2 : 1);
    MPI_Info info = mkinfo(hints);
    ops a = {.sheaf = 1}, b = {.sheaf = 0};
    /* both files start as 40000 zero bytes: ROMIO's data sieving writes
   * undefined bytes into the holes of a view past the end of the file */
    if (rank == 0) {
        const char *both[2] = {ps, pr};
        for (int i = 0; i < 2; i++) {
            int fd = open(both[i], O_CREAT | O_TRUNC | O_WRONLY, 0644);
            CHECK(fd >= 0 && ftruncate(fd, 40000) == 0, "create %s", both[i]);
            if (fd >= 0)
                close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = sheaf_file_open(MPI_COMM_WORLD, ps, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a.fh);
    CHECK(rc == 0, "open %s: %s", ps, sheaf_mpiio_open_errmsg());
    if (rc)
        return finish_test("views");
    MPI_File_open(MPI_COMM_WORLD, pr, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &b.mf);
    MPI_Offset sa = session(&a, mode), sb = session(&b, mode);
    CHECK(sa == sb, "get_size: sheaf %lld, MPI %lld", (long long)sa, (long long)sb);
    sheaf_mpiio_stats st;
    OK(sheaf_file_stats(a.fh, &st), a.fh);
    CHECK(st.coll_calls >= 6 && st.naggs == (nprocs > 1 ? 2 : 1), "stats: %llu collective calls, %d aggregators",
          (unsigned long long)st.coll_calls, st.naggs);
    OK(sheaf_file_close(&a.fh), a.fh);
    MPI_File_close(&b.mf);
    if (rank == 0) {
        long na, nb;
        unsigned char *fa = slurp(ps, &na), *fb = slurp(pr, &nb);
        long first = -1;
        for (long i = 0; fa && fb && i < na && i < nb && first < 0; i++)
            if (fa[i] != fb[i])
                first = i;
        CHECK(fa && fb && na == nb && first < 0,
              "files differ (sheaf %ld bytes, MPI %ld bytes, first at %ld: %d vs %d)", na, nb, first,
              first >= 0 ? fa[first] : -1, first >= 0 ? fb[first] : -1);
        free(fa);
        free(fb);
    }
    /* sizes: set_size shrinks, preallocate grows, get_size reports */
    OK(sheaf_file_open(MPI_COMM_WORLD, ps, MPI_MODE_RDWR, info, &a.fh), a.fh);
    OK(sheaf_file_set_size(a.fh, 1000), a.fh);
    MPI_Offset s;
    OK(sheaf_file_get_size(a.fh, &s), a.fh);
    CHECK(s == 1000, "set_size 1000 -> get_size %lld", (long long)s);
    OK(sheaf_file_preallocate(a.fh, 5000), a.fh);
    OK(sheaf_file_preallocate(a.fh, 10), a.fh); /* never shrinks */
    OK(sheaf_file_get_size(a.fh, &s), a.fh);
    CHECK(s == 5000, "preallocate 5000 -> get_size %lld", (long long)s);
    OK(sheaf_file_seek(a.fh, 0, MPI_SEEK_END), a.fh);
    MPI_Offset pos;
    OK(sheaf_file_get_position(a.fh, &pos), a.fh);
    CHECK(pos == 5000, "seek end -> %lld", (long long)pos);
    OK(sheaf_file_close(&a.fh), a.fh);
    MPI_Info_free(&info);
    if (rank == 0 && !getenv("MPIIO_KEEP")) {
        unlink(ps);
        unlink(pr);
    }
    return finish_test("views");
}

static int test_errors(const char *dir)
{
    char p[512];
    snprintf(p, sizeof p, "%s/errors.sheaf", dir);
    sheaf_file fh = NULL;
    /* open: bad arguments, bad hints (on one rank only), missing file, symlink */
    CHECK(sheaf_file_open(MPI_COMM_WORLD, NULL, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == SHEAF_MPIIO_EARG, "null path");
    CHECK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh) == SHEAF_MPIIO_EARG,
          "rdonly|create");
    CHECK(strstr(sheaf_mpiio_open_errmsg(), p) != NULL, "message names the file: %s", sheaf_mpiio_open_errmsg());
    MPI_Info bad = mkinfo(rank == nprocs - 1 ? "sheaf_cache=bogus" : "sheaf_cache=pfr");
    int rc = sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, bad, &fh);
    CHECK(rc == (rank == nprocs - 1 || nprocs == 1 ? SHEAF_MPIIO_EARG : SHEAF_MPIIO_EREMOTE) && fh == NULL,
          "bad hint on one rank: rc %d (%s)", rc, sheaf_mpiio_open_errmsg());
    MPI_Info_free(&bad);
    const char *badvals[] = {"cb_nodes=-1",       "cb_buffer_size=-5",       "sheaf_pfr_size=12x",
                             "sheaf_backend=nfs", "sheaf_independent=maybe", "sheaf_realms=percall,sheaf_cache=pfr"};
    for (size_t i = 0; i < sizeof badvals / sizeof badvals[0]; i++) {
        MPI_Info bi = mkinfo(badvals[i]);
        CHECK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, bi, &fh) == SHEAF_MPIIO_EARG,
              "hint %s accepted", badvals[i]);
        MPI_Info_free(&bi);
    }
    /* cb_nodes=0 (ROMIO's file_info sets nprocs/2, 0 at 1 rank) is "unset", as ROMIO takes it,
     * also against ranks that leave the hint out */
    MPI_Info zero = mkinfo(rank == 0 ? "cb_nodes=0" : "");
    rc = sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, zero, &fh);
    CHECK(rc == 0 && fh != NULL, "cb_nodes=0 refused: rc %d (%s)", rc, sheaf_mpiio_open_errmsg());
    if (fh)
        CHECK(sheaf_file_close(&fh) == 0, "close after cb_nodes=0");
    MPI_Info_free(&zero);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no/such/file", dir);
    rc = sheaf_file_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc == (rank == 0 ? SHEAF_MPIIO_EIO : SHEAF_MPIIO_EREMOTE), "missing file: %d", rc);
    char link[600];
    snprintf(link, sizeof link, "%s/errors.link", dir);
    if (rank == 0) {
        unlink(link);
        CHECK(symlink("/etc/passwd", link) == 0, "symlink");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = sheaf_file_open(MPI_COMM_WORLD, link, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc == (rank == 0 ? SHEAF_MPIIO_EIO : SHEAF_MPIIO_EREMOTE), "a symlink is not followed: %d", rc);
    /* calls on a PFR handle */
    MPI_Info info = mkinfo("sheaf_cache=pfr,cb_nodes=2");
    OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), fh);
    int v[16] = {0};
    CHECK(sheaf_file_write_at(fh, 0, v, 4, MPI_INT) == SHEAF_MPIIO_EMODE, "independent write on PFR not refused");
    CHECK(strstr(sheaf_file_errmsg(fh), "independent") != NULL, "message: %s", sheaf_file_errmsg(fh));
    CHECK(sheaf_file_write_all(fh, v, -1, MPI_INT) == SHEAF_MPIIO_EARG, "negative count");
    CHECK(sheaf_file_write_all(fh, v, 4, MPI_DATATYPE_NULL) == SHEAF_MPIIO_EARG, "null type");
    /* a bad count on one rank only: every rank fails, nobody hangs */
    rc = sheaf_file_write_all(fh, v, rank == 0 ? -3 : 4, MPI_INT);
    CHECK(rc == (rank == 0 ? SHEAF_MPIIO_EARG : SHEAF_MPIIO_EREMOTE), "one bad rank: rc %d", rc);
    rc = sheaf_file_read_at_all(fh, rank == nprocs - 1 ? -1 : 0, v, 4, MPI_INT);
    CHECK(rc == (rank == nprocs - 1 ? SHEAF_MPIIO_EARG : SHEAF_MPIIO_EREMOTE), "negative offset on one rank: rc %d",
          rc);
    /* views: not monotonic, size not a multiple of the etype, etype null */
    int bl[2] = {1, 1};
    int dsp[2] = {4, 0};
    MPI_Datatype nonmono, odd;
    MPI_Type_indexed(2, bl, dsp, MPI_INT, &nonmono);
    MPI_Type_commit(&nonmono);
    CHECK(sheaf_file_set_view(fh, 0, MPI_INT, nonmono) == SHEAF_MPIIO_EARG, "non-monotonic filetype");
    MPI_Type_contiguous(3, MPI_CHAR, &odd);
    MPI_Type_commit(&odd);
    rc = sheaf_file_set_view(fh, 0, rank == 0 ? MPI_INT : MPI_CHAR, odd);
    CHECK(rc == (rank == 0 ? SHEAF_MPIIO_EARG : SHEAF_MPIIO_EREMOTE) || nprocs == 1, "odd filetype on rank 0: %d", rc);
    CHECK(sheaf_file_set_view(fh, -5, MPI_INT, MPI_INT) == SHEAF_MPIIO_EARG, "negative disp");
    CHECK(sheaf_file_seek(fh, -1, MPI_SEEK_SET) == SHEAF_MPIIO_EARG, "negative seek");
    CHECK(sheaf_file_seek(fh, 0, 77) == SHEAF_MPIIO_EARG, "bad whence");
    CHECK(sheaf_file_set_size(fh, -1) == SHEAF_MPIIO_EARG, "negative size");
    /* the handle still works after all that */
    for (int i = 0; i < 16; i++)
        v[i] = rank * 16 + i;
    OK(sheaf_file_write_at_all(fh, rank * 64, v, 16, MPI_INT), fh); /* byte view */
    int r[16] = {0};
    OK(sheaf_file_read_at_all(fh, rank * 64, r, 16, MPI_INT), fh);
    CHECK(memcmp(r, v, sizeof v) == 0, "round trip after errors");
    OK(sheaf_file_close(&fh), fh);
    CHECK(fh == NULL, "close clears the handle");
    CHECK(sheaf_file_close(&fh) == SHEAF_MPIIO_EARG, "double close");
    CHECK(sheaf_file_sync(NULL) == SHEAF_MPIIO_EARG, "null handle");
    /* read-only handle refuses writes; write-only refuses reads */
    OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), fh);
    CHECK(sheaf_file_write_at_all(fh, 0, v, 1, MPI_INT) == SHEAF_MPIIO_EMODE, "write on rdonly");
    OK(sheaf_file_close(&fh), fh);
    OK(sheaf_file_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh), fh);
    CHECK(sheaf_file_read_at(fh, 0, v, 1, MPI_INT) == SHEAF_MPIIO_EMODE, "read on wronly");
    OK(sheaf_file_close(&fh), fh);
    CHECK(access(p, F_OK) != 0, "delete on close");
    MPI_Type_free(&nonmono);
    MPI_Type_free(&odd);
    MPI_Info_free(&info);
    if (rank == 0)
        unlink(link);
    return finish_test("errors");
}

/* Datatypes HDF5's MPI-IO driver uses (found with mpiio.hdf5): a filetype
 * whose data start past 0 (hindexed, lb > 0: the collective fill of chunks)
 * and a memory type that permutes bytes although its size equals its true
 * extent (chunked collective writes). Rank r's 16 bytes go to 1024 + 16r,
 * its memory halves swapped; read back through the same types. */
static int test_types(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/types.sheaf", dir);
    MPI_Datatype ft, mt;
    int flen = 16, mlen[2] = {8, 8};
    MPI_Aint fdisp = 1024 + 16 * (MPI_Aint)rank, mdisp[2] = {8, 0};
    MPI_Type_create_hindexed(1, &flen, &fdisp, MPI_BYTE, &ft);
    MPI_Type_create_hindexed(2, mlen, mdisp, MPI_BYTE, &mt);
    MPI_Type_commit(&ft);
    MPI_Type_commit(&mt);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ft, &lb, &ext);
    CHECK(lb == fdisp && ext == 16, "filetype lb %ld extent %ld", (long)lb, (long)ext);
    unsigned char buf[16], back[16], file[16];
    for (int i = 0; i < 16; i++)
        buf[i] = (unsigned char)(rank * 16 + i + 1);
    MPI_Info info = mkinfo("sheaf_cache=pfr");
    sheaf_file fh = NULL;
    int rc = sheaf_file_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    CHECK(rc == 0, "open %s: %s", path, sheaf_mpiio_open_errmsg());
    if (!rc) {
        OK(sheaf_file_set_view(fh, 0, MPI_BYTE, ft), fh);
        OK(sheaf_file_write_at_all(fh, 0, buf, 1, mt), fh);
        memset(back, 0, sizeof back);
        OK(sheaf_file_read_at_all(fh, 0, back, 1, mt), fh);
        CHECK(memcmp(back, buf, 16) == 0, "read back through the permuting memory type");
        OK(sheaf_file_close(&fh), fh);
    }
    MPI_Info_free(&info);
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    if (!rc) { /* the bytes on disk: halves swapped, at 1024 + 16 rank */
        FILE *f = fopen(path, "rb");
        CHECK(f && fseek(f, fdisp, SEEK_SET) == 0 && fread(file, 1, 16, f) == 16, "read %s", path);
        if (f)
            fclose(f);
        CHECK(memcmp(file, buf + 8, 8) == 0 && memcmp(file + 8, buf, 8) == 0, "file bytes of rank %d", rank);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    return finish_test("types");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int rc = 2;
    if (argc >= 4 && !strcmp(argv[1], "views"))
        rc = test_views(argv[2], argv[3]);
    else if (argc >= 3 && !strcmp(argv[1], "errors"))
        rc = test_errors(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "types"))
        rc = test_types(argv[2]);
    else if (rank == 0)
        fprintf(stderr, "usage: mpiio_test views DIR none|pfr|nocache | errors DIR | types DIR\n");
    MPI_Finalize();
    return rc;
}
