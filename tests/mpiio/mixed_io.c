/* mixed_io.c - an unmodified MPI-IO program mixing every kind of data call:
 * blocking independent and collective (write_at_all, write, read, read_at,
 * write_at, read_all through a strided view and the default one),
 * nonblocking (iwrite_at, iread_at, iwrite, iread_all, iwrite_at_all), split
 * collectives (write_all_begin/end, read_at_all_begin/end, ...), shared and
 * ordered file pointers (write_shared, iread_shared, write_ordered,
 * read_ordered, seek_shared, get_position_shared). It knows nothing of sheaf:
 * tests/mpiio/mixed.sh runs it on the MPI library's MPI-IO and through
 * libsheaf-mpiio-pmpi.so on a dache, pfr or nocache file and compares the
 * files and every value read. Extra arguments key=value go into the open's MPI_Info.
 *
 *   mixed_io mixed PATH [k=v...]      MPI-correct (sync-barrier-sync between
 *       conflicting epochs); every read checked against a model; every value
 *       read logged to PATH.reads.<rank>; the file equals the model after close
 *   mixed_io coherence PATH [k=v...]  epochs of nonblocking / split / ordered
 *       writes that overwrite other ranks' earlier bytes, separated by a
 *       barrier only (no sync: DACHe's coherence, not MPI's sync-barrier-sync),
 *       blocking and nonblocking reads of everything after each barrier
 *       against the model; the file equals the model after close
 *   (epochs=N: that many epochs, default 24)
 *   mixed_io errors PATH [k=v...]     bad input returns an MPI error code on
 *       the ranks concerned (every rank of a collective), never a crash or hang
 * Exit status 1 when anything differs. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, np, errs;
static FILE *readlog;
#define EXPECT(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            if (errs < 20) {                                                                                           \
                fprintf(stderr, "[rank %d] line %d: ", rank, __LINE__);                                                \
                fprintf(stderr, __VA_ARGS__);                                                                          \
                fprintf(stderr, "\n");                                                                                 \
            }                                                                                                          \
            errs++;                                                                                                    \
        }                                                                                                              \
    } while (0)

enum { FILE_INTS = 1 << 14 };
static int model[FILE_INTS];
static int val(int tag, int i) { return tag * 100000 + i + 1; }
/* every rank applies every write of the schedule to its model */
static void apply(MPI_Offset off, int n, int tag)
{
    for (int i = 0; i < n; i++)
        model[off + i] = val(tag, i);
}
static void fill(int *b, int n, int tag)
{
    for (int i = 0; i < n; i++)
        b[i] = val(tag, i);
}
static void check(const int *b, MPI_Offset off, int n, const char *what)
{
    int bad = 0, first = -1;
    for (int i = 0; i < n; i++)
        if (b[i] != model[off + i]) {
            if (first < 0)
                first = i;
            bad++;
        }
    EXPECT(bad == 0, "%s: %d of %d ints differ from the model (first at int %lld: %d, want %d)", what, bad, n,
           (long long)(off + first), bad ? b[first] : 0, bad ? model[off + first] : 0);
    if (readlog)
        fwrite(b, sizeof(int), (size_t)n, readlog);
}
static void count_is(MPI_Status *st, int n, const char *what)
{
    int c = -1;
    MPI_Get_count(st, MPI_INT, &c);
    EXPECT(c == n, "%s: status count %d, want %d", what, c, n);
}
static void ok(int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_string(rc, s, &len);
    EXPECT(0, "%s failed: %s", what, s);
}
/* the shared pointer's position, checked and logged on rank 0 only: MPICH
 * 4.0.2's ROMIO returned other ranks' own last values there after
 * seek_shared (its shared-pointer file), not rank 0's */
static void position_is(MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset pos = -1;
    ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared");
    if (rank != 0)
        return;
    EXPECT(pos == want, "shared pointer %lld %s, want %lld", (long long)pos, what, (long long)want);
    if (readlog)
        fwrite(&pos, sizeof pos, 1, readlog);
}
static void sbs(MPI_File fh)
{ /* MPI's sync-barrier-sync */
    ok(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    ok(MPI_File_sync(fh), "sync");
}

/* ---- mixed, part 5: blocking independent and collective calls through a
 * strided view (each rank's column of 4-int blocks, every 4*np ints from
 * base): positions in etypes of the view, the individual pointer ---- */
static MPI_Offset vmap(MPI_Offset base, int q, MPI_Offset k) { return base + 4 * q + (k / 4) * 4 * np + k % 4; }
static void apply_view(MPI_Offset base, int q, MPI_Offset k0, int n, int tag)
{
    for (int i = 0; i < n; i++)
        model[vmap(base, q, k0 + i)] = val(tag, i);
}
static void check_view(const int *b, MPI_Offset base, MPI_Offset k0, int n, const char *what)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += b[i] != model[vmap(base, rank, k0 + i)];
    EXPECT(bad == 0, "%s: %d of %d ints differ from the model", what, bad, n);
    if (readlog)
        fwrite(b, sizeof(int), (size_t)n, readlog);
}
static void mixed_blocking(MPI_File fh, MPI_Offset base)
{
    static int w[64], r[64 * 16];
    MPI_Status st;
    MPI_Datatype col;
    MPI_Type_contiguous(4, MPI_INT, &col);
    MPI_Datatype ft;
    MPI_Type_create_resized(col, 0, (MPI_Aint)(4 * np * sizeof(int)), &ft);
    MPI_Type_commit(&ft);
    ok(MPI_File_set_view(fh, (base + 4 * rank) * (MPI_Offset)sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL),
       "set_view");
    fill(w, 12, 90 + rank);
    ok(MPI_File_write_at_all(fh, 0, w, 12, MPI_INT, &st), "write_at_all");
    count_is(&st, 12, "write_at_all");
    for (int q = 0; q < np; q++)
        apply_view(base, q, 0, 12, 90 + q);
    fill(w, 6, 100 + rank);
    ok(MPI_File_seek(fh, 2, MPI_SEEK_SET), "seek");
    /* ranks in turn: Open MPI 4.1.4's OMPIO (the oracle there) lost bytes of
     * concurrent strided independent writes of interleaved columns at 3-4
     * ranks (read-modify-write of the span, no lock) */
    for (int q = 0; q < np; q++) {
        if (q == rank) {
            ok(MPI_File_write(fh, w, 6, MPI_INT, &st), "write");
            count_is(&st, 6, "write");
        }
        sbs(fh);
    }
    for (int q = 0; q < np; q++)
        apply_view(base, q, 2, 6, 100 + q);
    MPI_Offset pos = -1;
    ok(MPI_File_get_position(fh, &pos), "get_position");
    EXPECT(pos == 8, "individual pointer %lld after write, want 8", (long long)pos);
    ok(MPI_File_read(fh, r, 4, MPI_INT, &st), "read");
    count_is(&st, 4, "read");
    check_view(r, base, 8, 4, "read (individual pointer) of the own column");
    ok(MPI_File_read_at(fh, 0, r, 12, MPI_INT, &st), "read_at");
    check_view(r, base, 0, 12, "read_at of the own column after write_at_all and write");
    sbs(fh);
    ok(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), "set_view");
    /* independent write into the next rank's column, read back by everyone */
    int nx = (rank + 1) % np;
    fill(w, 3, 110 + rank);
    ok(MPI_File_write_at(fh, vmap(base, nx, 5), w, 3, MPI_INT, &st), "write_at");
    count_is(&st, 3, "write_at");
    for (int q = 0; q < np; q++)
        apply(vmap(base, (q + 1) % np, 5), 3, 110 + q);
    sbs(fh);
    int all = 12 * np;
    ok(MPI_File_read_at(fh, base, r, all, MPI_INT, &st), "read_at");
    count_is(&st, all, "read_at");
    check(r, base, all, "read_at of every column");
    ok(MPI_File_seek(fh, base, MPI_SEEK_SET), "seek");
    ok(MPI_File_read_all(fh, r, all, MPI_INT, &st), "read_all");
    check(r, base, all, "read_all of every column");
    MPI_Type_free(&ft);
    MPI_Type_free(&col);
}

/* ---- mixed: the comparison run ---- */
enum { NA = 300, NB = 97, K0 = 3 };
static void mixed(MPI_File fh)
{
    static int w[4 * NA], r[4 * NA];
    MPI_Request rq[2];
    MPI_Status st[2];
    /* 1. nonblocking explicit offsets: own block, then a half block and a read of the first */
    fill(w, NA, 10 + rank);
    ok(MPI_File_iwrite_at(fh, (MPI_Offset)rank * NA, w, NA, MPI_INT, &rq[0]), "iwrite_at");
    ok(MPI_Wait(&rq[0], &st[0]), "wait");
    count_is(&st[0], NA, "iwrite_at");
    for (int q = 0; q < np; q++)
        apply((MPI_Offset)q * NA, NA, 10 + q);
    fill(w + NA, NA / 2, 20 + rank);
    ok(MPI_File_iwrite_at(fh, (MPI_Offset)rank * NA + NA / 2, w + NA, NA / 2, MPI_INT, &rq[0]), "iwrite_at 2");
    ok(MPI_Wait(&rq[0], &st[0]), "wait");
    ok(MPI_File_iread_at(fh, (MPI_Offset)rank * NA, r, NA / 2, MPI_INT, &rq[1]), "iread_at");
    ok(MPI_Waitall(1, &rq[1], &st[1]), "waitall");
    for (int q = 0; q < np; q++)
        apply((MPI_Offset)q * NA + NA / 2, NA / 2, 20 + q);
    count_is(&st[1], NA / 2, "iread_at");
    check(r, (MPI_Offset)rank * NA, NA / 2, "iread_at own block");
    sbs(fh);
    MPI_Offset nxt = (MPI_Offset)((rank + 1) % np) * NA;
    ok(MPI_File_iread_at(fh, nxt, r, NA, MPI_INT, &rq[0]), "iread_at next");
    int flag = 0;
    while (!flag)
        ok(MPI_Test(&rq[0], &flag, &st[0]), "test");
    count_is(&st[0], NA, "iread_at next");
    check(r, nxt, NA, "iread_at of the next rank's block");
    /* 2. split collectives on the individual pointer and explicit offsets */
    MPI_Offset ob = (MPI_Offset)np * NA;
    fill(w, NB, 30 + rank);
    ok(MPI_File_seek(fh, ob + (MPI_Offset)rank * NB, MPI_SEEK_SET), "seek");
    ok(MPI_File_write_all_begin(fh, w, NB, MPI_INT), "write_all_begin");
    ok(MPI_File_write_all_end(fh, w, &st[0]), "write_all_end");
    count_is(&st[0], NB, "write_all_end");
    for (int q = 0; q < np; q++)
        apply(ob + (MPI_Offset)q * NB, NB, 30 + q);
    MPI_Offset pos = -1;
    ok(MPI_File_get_position(fh, &pos), "get_position");
    EXPECT(pos == ob + (MPI_Offset)(rank + 1) * NB, "individual pointer %lld after write_all_begin/end",
           (long long)pos);
    sbs(fh);
    MPI_Offset at = ob + (MPI_Offset)((rank + np - 1) % np) * NB;
    ok(MPI_File_read_at_all_begin(fh, at, r, NB, MPI_INT), "read_at_all_begin");
    ok(MPI_File_read_at_all_end(fh, r, &st[0]), "read_at_all_end");
    count_is(&st[0], NB, "read_at_all_end");
    check(r, at, NB, "read_at_all_begin/end of the previous rank's block");
    /* 3. shared pointer, serialised by barriers (deterministic order), then ordered */
    MPI_Offset oc = ob + (MPI_Offset)np * NB, sh = oc;
    ok(MPI_File_seek_shared(fh, oc, MPI_SEEK_SET), "seek_shared");
    for (int q = 0; q < np; q++) {
        if (q == rank) {
            fill(w, K0 + q, 40 + q);
            ok(MPI_File_write_shared(fh, w, K0 + q, MPI_INT, &st[0]), "write_shared");
            count_is(&st[0], K0 + q, "write_shared");
        }
        apply(sh, K0 + q, 40 + q);
        sh += K0 + q;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    position_is(fh, sh, "after write_shared");
    fill(w, 2 * rank + 1, 50 + rank);
    ok(MPI_File_write_ordered(fh, w, 2 * rank + 1, MPI_INT, &st[0]), "write_ordered");
    count_is(&st[0], 2 * rank + 1, "write_ordered");
    for (int q = 0; q < np; q++) {
        apply(sh, 2 * q + 1, 50 + q);
        sh += 2 * q + 1;
    }
    position_is(fh, sh, "after write_ordered");
    sbs(fh);
    ok(MPI_File_seek_shared(fh, oc, MPI_SEEK_SET), "seek_shared");
    int total = (int)(sh - oc), each = total / np, mine = rank == np - 1 ? total - each * (np - 1) : each;
    ok(MPI_File_read_ordered(fh, r, mine, MPI_INT, &st[0]), "read_ordered");
    count_is(&st[0], mine, "read_ordered");
    check(r, oc + (MPI_Offset)rank * each, mine, "read_ordered");
    ok(MPI_File_seek_shared(fh, oc + 1, MPI_SEEK_SET), "seek_shared");
    MPI_Offset rs = oc + 1;
    /* 5 ints each, inside what was written (1 rank: fewer - past the end of
     * file MPI gives a short count) */
    int rn = (total - 1) / np < 5 ? (total - 1) / np : 5;
    for (int q = 0; q < np; q++) {
        if (q == rank) {
            ok(MPI_File_iread_shared(fh, r, rn, MPI_INT, &rq[0]), "iread_shared");
            ok(MPI_Wait(&rq[0], &st[0]), "wait");
            count_is(&st[0], rn, "iread_shared");
            check(r, rs, rn, "iread_shared");
        }
        rs += rn;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* relative seeks of the shared pointer: CUR, then END (after the sync) */
    ok(MPI_File_seek_shared(fh, 2, MPI_SEEK_CUR), "seek_shared cur");
    position_is(fh, rs + 2, "after seek_shared(2, CUR)");
    ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), "seek_shared end");
    position_is(fh, sh, "after seek_shared(0, END)");
    fill(w, 1, 60 + rank);
    ok(MPI_File_write_ordered_begin(fh, w, 1, MPI_INT), "write_ordered_begin");
    ok(MPI_File_write_ordered_end(fh, w, &st[0]), "write_ordered_end");
    count_is(&st[0], 1, "write_ordered_end");
    for (int q = 0; q < np; q++)
        apply(sh + q, 1, 60 + q);
    sh += np;
    /* 4. nonblocking individual pointer and collective */
    MPI_Offset od = sh + 3;
    fill(w, 8, 70 + rank);
    ok(MPI_File_seek(fh, od + 8 * rank, MPI_SEEK_SET), "seek");
    ok(MPI_File_iwrite(fh, w, 8, MPI_INT, &rq[0]), "iwrite");
    ok(MPI_Wait(&rq[0], MPI_STATUS_IGNORE), "wait");
    for (int q = 0; q < np; q++)
        apply(od + 8 * q, 8, 70 + q);
    fill(w, 6, 80 + rank);
    ok(MPI_File_iwrite_at_all(fh, od + 8 * np + 6 * rank, w, 6, MPI_INT, &rq[0]), "iwrite_at_all");
    ok(MPI_Wait(&rq[0], &st[0]), "wait");
    count_is(&st[0], 6, "iwrite_at_all");
    for (int q = 0; q < np; q++)
        apply(od + 8 * np + 6 * q, 6, 80 + q);
    sbs(fh);
    ok(MPI_File_seek(fh, od, MPI_SEEK_SET), "seek");
    ok(MPI_File_iread_all(fh, r, 14 * np, MPI_INT, &rq[0]), "iread_all");
    ok(MPI_Waitall(1, rq, st), "waitall");
    count_is(&st[0], 14 * np, "iread_all");
    check(r, od, 14 * np, "iread_all of everything written nonblocking");
    ok(MPI_File_seek(fh, od + 2 * rank, MPI_SEEK_SET), "seek");
    ok(MPI_File_read_all_begin(fh, r, 2, MPI_INT), "read_all_begin");
    ok(MPI_File_read_all_end(fh, r, &st[0]), "read_all_end");
    count_is(&st[0], 2, "read_all_end");
    check(r, od + 2 * rank, 2, "read_all_begin/end");
    mixed_blocking(fh, od + 14 * np + 16);
}

/* ---- coherence: barriers only between epochs ---- */
enum { SL = 37 };
static int epochs = 24; /* argument epochs=N */
static void read_everything(MPI_File fh, int nints, int epoch)
{
    static int r[FILE_INTS];
    char what[64];
    MPI_Status st;
    MPI_Request rq;
    snprintf(what, sizeof what, "epoch %d: blocking read_at", epoch);
    ok(MPI_File_read_at(fh, 0, r, nints, MPI_INT, &st), what);
    check(r, 0, nints, what);
    int s = (rank + epoch) % np;
    snprintf(what, sizeof what, "epoch %d: iread_at", epoch);
    ok(MPI_File_iread_at(fh, (MPI_Offset)s * SL + 3, r, SL - 3, MPI_INT, &rq), what);
    ok(MPI_Wait(&rq, &st), what);
    count_is(&st, SL - 3, what);
    check(r, (MPI_Offset)s * SL + 3, SL - 3, what);
}
static void coherence(MPI_File fh)
{
    static int w[SL];
    MPI_Request rq;
    MPI_Status st;
    int nints = np * SL + 2; /* the farthest write ends there */
    for (int e = 0; e < epochs; e++) {
        int kind = e % 5, tag = 100 + e * 16 + rank;
        int slot = (rank + e) % np;
        MPI_Offset off = (MPI_Offset)slot * SL + (e % 3);
        fill(w, SL, tag);
        switch (kind) {
        case 0:
            ok(MPI_File_iwrite_at(fh, off, w, SL, MPI_INT, &rq), "iwrite_at");
            ok(MPI_Wait(&rq, &st), "wait");
            break;
        case 1:
            ok(MPI_File_write_at_all_begin(fh, off, w, SL, MPI_INT), "write_at_all_begin");
            ok(MPI_File_write_at_all_end(fh, w, &st), "write_at_all_end");
            break;
        case 2:
            ok(MPI_File_iwrite_at_all(fh, off, w, SL, MPI_INT, &rq), "iwrite_at_all");
            ok(MPI_Wait(&rq, &st), "wait");
            break;
        case 3: /* ordered: rank q's bytes land at slot q + e%3 */
            ok(MPI_File_seek_shared(fh, e % 3, MPI_SEEK_SET), "seek_shared");
            ok(MPI_File_write_ordered(fh, w, SL, MPI_INT, &st), "write_ordered");
            break;
        default: /* iwrite on the individual pointer, then a blocking one of a few ints */
            ok(MPI_File_seek(fh, off, MPI_SEEK_SET), "seek");
            ok(MPI_File_iwrite(fh, w, SL - 4, MPI_INT, &rq), "iwrite");
            ok(MPI_Wait(&rq, &st), "wait");
            ok(MPI_File_write(fh, w + SL - 4, 4, MPI_INT, &st), "write");
            break;
        }
        count_is(&st, kind == 4 ? 4 : SL, "write status");
        for (int q = 0; q < np; q++) {
            int qs = kind == 3 ? q : (q + e) % np;
            apply((MPI_Offset)qs * SL + (e % 3), SL, 100 + e * 16 + q);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        read_everything(fh, nints, e);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* ---- errors ---- */
static int cls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}
static void errors(MPI_File fh)
{
    int w[16] = {0}, r[16];
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;
    fill(w, 16, 7);
    int rc = MPI_File_iwrite_at(fh, -1, w, 4, MPI_INT, &rq);
    EXPECT(rc != MPI_SUCCESS && rq == MPI_REQUEST_NULL, "iwrite_at at -1: rc %d", rc);
    rc = MPI_File_iread_at(fh, -4, r, 4, MPI_INT, &rq);
    EXPECT(rc != MPI_SUCCESS && rq == MPI_REQUEST_NULL, "iread_at at -4: rc %d", rc);
    rc = MPI_File_iwrite_at(fh, 0, w, -3, MPI_INT, &rq);
    EXPECT(rc != MPI_SUCCESS, "iwrite_at of -3 ints: rc %d", rc);
    /* a collective failing on one rank fails on all, no hang */
    rc = MPI_File_write_at_all_begin(fh, rank == np - 1 ? -1 : 0, w, 4, MPI_INT);
    EXPECT(rc != MPI_SUCCESS, "write_at_all_begin with a negative offset on rank %d: rc %d", np - 1, rc);
    rc = MPI_File_write_at_all_end(fh, w, &st);
    EXPECT(rc != MPI_SUCCESS, "write_at_all_end after a failed begin: rc %d", rc);
    rc = MPI_File_iwrite_at_all(fh, rank == 0 ? -7 : 0, w, 4, MPI_INT, &rq);
    EXPECT(rc != MPI_SUCCESS && rq == MPI_REQUEST_NULL, "iwrite_at_all with a negative offset on rank 0: rc %d", rc);
    rc = MPI_File_read_all_end(fh, r, &st);
    EXPECT(rc != MPI_SUCCESS, "read_all_end without a begin: rc %d", rc);
    /* two split collectives at once */
    ok(MPI_File_write_at_all_begin(fh, 0, w, 4, MPI_INT), "write_at_all_begin");
    rc = MPI_File_read_at_all_begin(fh, 0, r, 4, MPI_INT);
    EXPECT(rc != MPI_SUCCESS, "a second split collective: rc %d", rc);
    ok(MPI_File_write_at_all_end(fh, w, &st), "write_at_all_end");
    count_is(&st, 4, "write_at_all_end");
    /* shared pointer: bad seeks, bad counts; the pointer does not move */
    ok(MPI_File_seek_shared(fh, 5, MPI_SEEK_SET), "seek_shared 5");
    rc = MPI_File_seek_shared(fh, -1, MPI_SEEK_SET);
    EXPECT(rc != MPI_SUCCESS, "seek_shared to -1: rc %d", rc);
    rc = MPI_File_seek_shared(fh, -6, MPI_SEEK_CUR);
    EXPECT(rc != MPI_SUCCESS, "seek_shared to 5-6: rc %d", rc);
    rc = MPI_File_seek_shared(fh, (MPI_Offset)1 << 62, MPI_SEEK_SET);
    EXPECT(rc != MPI_SUCCESS, "seek_shared to 2^62 ints: rc %d", rc);
    rc = MPI_File_seek_shared(fh, rank, MPI_SEEK_SET);
    EXPECT(np == 1 || rc != MPI_SUCCESS, "seek_shared to different offsets: rc %d", rc);
    rc = MPI_File_seek_shared(fh, 0, 12345);
    EXPECT(rc != MPI_SUCCESS, "seek_shared with whence 12345: rc %d", rc);
    rc = MPI_File_write_shared(fh, w, -2, MPI_INT, &st);
    EXPECT(rc != MPI_SUCCESS, "write_shared of -2 ints: rc %d", rc);
    rc = MPI_File_write_ordered(fh, w, rank == 0 ? -2 : 1, MPI_INT, &st);
    EXPECT(rc != MPI_SUCCESS, "write_ordered of -2 ints on rank 0: rc %d", rc);
    MPI_Offset pos = -1;
    ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared");
    EXPECT(pos == 5, "shared pointer %lld after the failed calls, want 5", (long long)pos);
#if MPI_VERSION >= 4
    MPI_Count big = (MPI_Count)INT_MAX + 1;
    rc = MPI_File_iwrite_at_c(fh, 0, w, big, MPI_INT, &rq);
    EXPECT(cls(rc) == MPI_ERR_COUNT && rq == MPI_REQUEST_NULL, "iwrite_at_c of 2^31 ints: class %d", cls(rc));
    rc = MPI_File_write_c(fh, w, big, MPI_INT, &st);
    EXPECT(cls(rc) == MPI_ERR_COUNT, "write_c of 2^31 ints: class %d", cls(rc));
    rc = MPI_File_write_at_all_c(fh, 0, w, rank == 0 ? big : 4, MPI_INT, &st);
    EXPECT(rc != MPI_SUCCESS && (rank != 0 || cls(rc) == MPI_ERR_COUNT),
           "write_at_all_c of 2^31 ints on rank 0: "
           "class %d",
           cls(rc));
    rc = MPI_File_write_shared_c(fh, w, big, MPI_INT, &st);
    EXPECT(cls(rc) == MPI_ERR_COUNT, "write_shared_c of 2^31 ints: class %d", cls(rc));
    rc = MPI_File_read_ordered_begin_c(fh, r, rank == np - 1 ? big : 1, MPI_INT);
    EXPECT(rc != MPI_SUCCESS, "read_ordered_begin_c of 2^31 ints on the last rank: rc %d", rc);
    ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared");
    EXPECT(pos == 5, "shared pointer %lld after the failed _c calls, want 5", (long long)pos);
#else
    (void)cls;
#endif
    /* the handle still works */
    ok(MPI_File_write_at_all(fh, 4 * rank, w, 4, MPI_INT, &st), "write_at_all");
    ok(MPI_File_iread_at(fh, 4 * ((rank + 1) % np), r, 4, MPI_INT, &rq), "iread_at");
    ok(MPI_Wait(&rq, &st), "wait");
    for (int i = 0; i < 4; i++)
        EXPECT(r[i] == w[i], "int %d read back %d, want %d", i, r[i], w[i]);
}

/* after close: the file (read plainly) equals the model */
static void file_is_model(const char *path, int nints)
{
    if (rank != 0)
        return;
    FILE *f = fopen(path, "rb");
    static int b[FILE_INTS];
    size_t n = f ? fread(b, sizeof(int), FILE_INTS, f) : 0;
    if (f)
        fclose(f);
    EXPECT((int)n == nints, "%s holds %zu ints, want %d", path, n, nints);
    int bad = 0;
    for (int i = 0; i < nints && i < (int)n; i++)
        bad += b[i] != model[i];
    EXPECT(bad == 0, "%s: %d ints differ from the model after close", path, bad);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *mode = argc > 2 ? argv[1] : "", *path = argc > 2 ? argv[2] : "";
    int known = !strcmp(mode, "mixed") || !strcmp(mode, "coherence") || !strcmp(mode, "errors");
    if (!known || np > 16) {
        if (rank == 0)
            fprintf(stderr, "usage: mixed_io mixed|coherence|errors PATH [key=value...] (<= 16 ranks)\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 3; i < argc; i++) {
        char kv[256], *eq;
        snprintf(kv, sizeof kv, "%s", argv[i]);
        if ((eq = strchr(kv, '='))) {
            *eq = 0;
            if (strcmp(kv, "epochs") == 0)
                epochs = atoi(eq + 1);
            else
                MPI_Info_set(info, kv, eq + 1);
        }
    }
    if (strcmp(mode, "mixed") == 0) {
        char lp[512];
        snprintf(lp, sizeof lp, "%s.reads.%d", path, rank);
        readlog = fopen(lp, "wb");
    }
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "open %s failed\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Info_free(&info);
    /* offsets and pointers in ints */
    ok(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), "set_view");
    if (strcmp(mode, "mixed") == 0)
        mixed(fh);
    else if (strcmp(mode, "coherence") == 0)
        coherence(fh);
    else
        errors(fh);
    ok(MPI_File_close(&fh), "close");
    int nints = 0; /* the model's end; the errors mode keeps none */
    for (int i = 0; i < FILE_INTS; i++)
        if (model[i])
            nints = i + 1;
    if (nints)
        file_is_model(path, nints);
    if (readlog)
        fclose(readlog);
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mixed_io %s at %d ranks: %s (%d errors)\n", mode, np, all ? "FAILED" : "ok", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
