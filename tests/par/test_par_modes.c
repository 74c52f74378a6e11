/* test_par_modes.c - mode keys of sion_generic_paropen ("plus the keys of
 * sion_open (ansi/posix, keyval, endianness=...)") and the collective I/O
 * entry points (sion_coll_fwrite/fread = the individual calls for now):
 *  - "endianness=big": the declared order reaches the file (parallel and
 *    serial read see it);
 *  - "keyval=inline": records written with sion_fwrite_key by every task
 *    read back with sion_fread_key, in parallel and serially;
 *  - sion_coll_fwrite / sion_coll_fread round trip. */
#include "partest.h"

#define P 4
typedef struct {
    int aid, nf;
    char fname[4200];
    int what;
} ctx;
enum { W_ENDIAN, W_KEYVAL, W_COLL };

static size_t rec_len(int g, int k, int i) { return (size_t)(100 + 977 * k + 313 * i + 41 * g); }

static void task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int nf = c->nf, fnum = g % nf, lrank = g / nf, lsize = (P - fnum + nf - 1) / nf;
    sion_int64 chunk = 2048;
    sion_int32 fsblk = 1024;
    const char *mw = c->what == W_ENDIAN ? "bw,endianness=big" : c->what == W_KEYVAL ? "bw,keyval=inline" : "bw";
    const char *mr = c->what == W_KEYVAL ? "br,keyval=inline" : "br";
    int sid = sion_generic_paropen(c->aid, c->fname, mw, &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (!CHECK(sid >= 0, "paropen(\"%s\"): %s", mw, sheaf_last_error()))
        return;
    unsigned char buf[8000];
    if (c->what == W_KEYVAL) {
        for (int i = 0; i < 3; i++)
            for (int k = 1; k <= 3; k++) {
                size_t n = rec_len(g, k, i);
                pt_fill(buf, (unsigned)k, g, 10000 * i, n);
                CHECK(sion_fwrite_key(buf, (uint64_t)k, 1, n, sid) == n, "fwrite_key(key %d, %zu): %s", k, n,
                      sheaf_last_error());
            }
    } else {
        pt_fill(buf, 11, g, 0, 5000);
        size_t w = c->what == W_COLL ? sion_coll_fwrite(buf, 1, 5000, sid) : sion_fwrite(buf, 1, 5000, sid);
        CHECK(w == 5000, "write returned %zu: %s", w, sheaf_last_error());
    }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose write: %s", sheaf_last_error());

    int rf, rnf, rl, rs;
    sid = sion_generic_paropen(c->aid, c->fname, mr, &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, NULL, NULL);
    if (!CHECK(sid >= 0, "paropen(\"%s\"): %s", mr, sheaf_last_error()))
        return;
    if (c->what == W_ENDIAN) {
        CHECK(sion_get_file_endianness(sid) == 1, "parallel read: file endianness %d, written with endianness=big",
              sion_get_file_endianness(sid));
        CHECK(sion_endianness_swap_needed(sid) == (sion_get_endianness() != 1), "swap_needed wrong");
    }
    if (c->what == W_KEYVAL) {
        CHECK(sion_get_keyval_mode(sid) == SION_KEYVAL_INLINE, "keyval mode %d", sion_get_keyval_mode(sid));
        for (int k = 3; k >= 1; k--)
            for (int i = 0; i < 3; i++) {
                size_t n = rec_len(g, k, i);
                size_t r = sion_fread_key(buf, (uint64_t)k, 1, n, sid);
                CHECK(r == n && pt_mismatch(buf, (unsigned)k, g, 10000 * i, n) < 0,
                      "fread_key(key %d, record %d): %zu of %zu bytes, or data differ: %s", k, i, r, n,
                      sheaf_last_error());
            }
    } else {
        size_t r = c->what == W_COLL ? sion_coll_fread(buf, 1, 5000, sid) : sion_fread(buf, 1, 5000, sid);
        CHECK(r == 5000 && pt_mismatch(buf, 11, g, 0, 5000) < 0, "read returned %zu or data differ: %s", r,
              sheaf_last_error());
    }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read: %s", sheaf_last_error());
}

static void run(int what, const char *name)
{
    const char *dir = pt_mkdtemp();
    for (int nf = 1; nf <= 2; nf++) {
        ctx c;
        c.aid = tc_create_api(name);
        c.nf = nf;
        c.what = what;
        snprintf(c.fname, sizeof c.fname, "%s/%s_nf%d.sion", dir, name, nf);
        int f0 = atomic_load(&pt_failures);
        tc_run(P, task, &c);
        if (atomic_load(&pt_failures) == f0) {
            int nt = 0, nfs = 0;
            int sid =
                sion_open(c.fname, what == W_KEYVAL ? "rb,keyval=inline" : "rb", &nt, &nfs, NULL, NULL, NULL, NULL);
            if (CHECK(sid >= 0, "serial open: %s", sheaf_last_error())) {
                if (what == W_ENDIAN)
                    CHECK(sion_get_file_endianness(sid) == 1, "serial: endianness %d", sion_get_file_endianness(sid));
                if (what == W_KEYVAL) {
                    for (int g = 0; g < nt; g++) {
                        CHECK(sion_seek(sid, g, SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS, "seek %d", g);
                        sion_key_stat_t st;
                        CHECK(sion_key_get_stat(sid, 2, &st) == SION_SUCCESS && st.num_blocks == 3 &&
                                  st.total_size == (sion_int64)(rec_len(g, 2, 0) + rec_len(g, 2, 1) + rec_len(g, 2, 2)),
                              "serial: task %d key 2: %lld records, %lld bytes", g, st.num_blocks, st.total_size);
                    }
                }
                sion_close(sid);
            }
        }
        sion_generic_free_api(c.aid);
    }
    pt_rmtree(dir);
}

static void test_endian(void) { run(W_ENDIAN, "endian"); }
static void test_keyval(void) { run(W_KEYVAL, "keyval"); }
static void test_coll(void) { run(W_COLL, "coll"); }

/* SIONlib's classic pattern: sion_ensure_free_space, then fwrite on the
 * exported FILE* (ansi) or write(2) on sion_get_fd (posix); plus the cursor
 * and information calls on parallel sids. */
typedef struct {
    int aid, posix;
    char fname[4200];
} fctx;

static void fp_task(tc_task *t)
{
    fctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int nf = 2, fnum = g % 2, lrank = g / 2, lsize = 2;
    sion_int64 chunk = 3000; /* -> 4096 */
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, c->posix ? "bw,posix" : "bw", &chunk, &fsblk, t->world, g, P,
                                   &fnum, &nf, &lrank, &lsize, &fp, NULL);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    CHECK(sion_is_serial_opened(sid) == 0, "sion_is_serial_opened on a parallel sid: %d", sion_is_serial_opened(sid));
    CHECK(sion_get_number_of_files(sid) == 2, "sion_get_number_of_files %d", sion_get_number_of_files(sid));
    CHECK(sion_get_filenumber(sid) == g % 2, "sion_get_filenumber %d", sion_get_filenumber(sid));
    int fd = sion_get_fd(sid);
    CHECK(c->posix ? fp == NULL && fd >= 0 : fp != NULL, "posix %d: fp %p fd %d", c->posix, (void *)fp, fd);
    unsigned char b[3000];
    int64_t off = 0;
    static const size_t pieces[] = {1000, 2500, 3000, 10, 600, 2999};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        size_t n = pieces[i];
        pt_fill(b, 30, g, off, n);
        if (!CHECK(sion_ensure_free_space(sid, (sion_int64)n) == SION_SUCCESS, "ensure_free_space(%zu): %s", n,
                   sheaf_last_error()))
            break;
        sion_int64 pos = sion_get_position(sid);
        if (c->posix) {
            CHECK(lseek(fd, (off_t)pos, SEEK_SET) == (off_t)pos && write(fd, b, n) == (ssize_t)n, "write(2) %zu", n);
        } else {
            CHECK(fwrite(b, 1, n, fp) == n, "fwrite(fp) %zu", n);
        }
        off += (int64_t)n;
    }
    CHECK(sion_ensure_free_space(sid, 5000) == SION_NOT_SUCCESS, "ensure_free_space above the chunk size accepted");
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose: %s", sheaf_last_error());

    int rf = -1, rnf = -1, rl = -1, rs = -1;
    sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, &fp, NULL);
    if (!CHECK(sid >= 0, "read open: %s", sheaf_last_error()))
        return;
    int blk = -1, maxb = -1;
    sion_int64 pos = -1, *bsz = NULL;
    CHECK(sion_get_current_location(sid, &blk, &pos, &maxb, &bsz) == SION_SUCCESS && blk == 0 && pos == 0 && maxb >= 3,
          "current location: block %d pos %lld, %d blocks", blk, pos, maxb);
    int64_t sum = 0;
    for (int k = 0; bsz && k < maxb; k++)
        sum += bsz[k];
    CHECK(sum == off, "block sizes sum to %lld, %lld bytes were written through the %s", (long long)sum, (long long)off,
          c->posix ? "fd" : "FILE*");
    CHECK(sion_bytes_avail_in_block(sid) == (bsz ? bsz[0] : -1), "bytes_avail_in_block %lld",
          sion_bytes_avail_in_block(sid));
    unsigned char *all = malloc((size_t)off);
    CHECK(sion_fread(all, 1, (size_t)off, sid) == (size_t)off && pt_mismatch(all, 30, g, 0, (size_t)off) < 0,
          "data written through the %s differ", c->posix ? "fd" : "FILE*");
    /* absolute and end-relative seeks on a parallel sid */
    CHECK(sion_seek(sid, SION_CURRENT_RANK, SION_ABSOLUTE_POS, 3500) == SION_SUCCESS, "seek ABSOLUTE 3500: %s",
          sheaf_last_error());
    CHECK(sion_fread(all, 1, 100, sid) == 100 && pt_mismatch(all, 30, g, 3500, 100) < 0, "data at 3500");
    /* the rank of a parallel handle is the task's rank in its file, as in SIONlib (test_par_modes
     * runs multi-file sets: there a task's global rank is refused unless it equals its file rank) */
    if (rl != g)
        CHECK(sion_seek(sid, g, SION_END_POS, -10) == SION_NOT_SUCCESS,
              "seek to global rank %d (file rank %d) "
              "accepted",
              g, rl);
    CHECK(sion_seek(sid, rl, SION_END_POS, -10) == SION_SUCCESS, "seek END -10: %s", sheaf_last_error());
    CHECK(sion_fread(all, 1, 10, sid) == 10 && pt_mismatch(all, 30, g, off - 10, 10) < 0, "last 10 bytes");
    CHECK(sion_feof(sid) == 1, "not at eof");
    free(all);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read");
}

static void test_fileptr(void)
{
    const char *dir = pt_mkdtemp();
    for (int px = 0; px <= 1; px++) {
        fctx c;
        c.aid = tc_create_api("threadcomm-fp");
        c.posix = px;
        snprintf(c.fname, sizeof c.fname, "%s/fp%d.sion", dir, px);
        tc_run(P, fp_task, &c);
        sion_generic_free_api(c.aid);
    }
    pt_rmtree(dir);
}

/* key-value records through mapped opens: 2 processes x 2 logical tasks */
typedef struct {
    int aid;
    char fname[4200];
} mkctx;
static void mk_task(tc_task *t)
{
    mkctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int nl = 2, gr[2] = {g, g + 2}, fn[2] = {0, 1}, lr[2] = {g, g};
    sion_int64 cs[2] = {1500, 2500};
    int *pg = gr, *pf = fn, *pl = lr, nf = 2;
    sion_int64 *pc = cs;
    sion_int32 fsblk = 1024;
    int sid = sion_generic_paropen_mapped(c->aid, c->fname, "bw,keyval=inline,endianness=big", &nf, t->world, g, 2, &nl,
                                          &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (!CHECK(sid >= 0, "mapped keyval write: %s", sheaf_last_error()))
        return;
    unsigned char b[3000];
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 2; i++) {
            CHECK(sion_seek(sid, gr[i], SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS, "seek %d", gr[i]);
            for (uint64_t k = 5; k <= 6; k++) {
                size_t n = 400 + 300 * (size_t)r + (size_t)k;
                pt_fill(b, (unsigned)k, gr[i], 1000 * r, n);
                CHECK(sion_fwrite_key(b, k, 1, n, sid) == n, "fwrite_key task %d: %s", gr[i], sheaf_last_error());
            }
        }
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "mapped keyval close: %s", sheaf_last_error());
    nl = -1;
    pg = NULL;
    pc = NULL;
    pf = pl = NULL;
    sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "br", &nf, t->world, g, 2, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (!CHECK(sid >= 0, "mapped keyval read: %s", sheaf_last_error()))
        return;
    for (int i = 0; i < nl; i++) {
        CHECK(sion_seek(sid, pg[i], SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS, "read seek %d", pg[i]);
        CHECK(sion_get_keyval_mode(sid) == SION_KEYVAL_INLINE && sion_get_file_endianness(sid) == 1,
              "mapped read: keyval mode %d, endianness %d", sion_get_keyval_mode(sid), sion_get_file_endianness(sid));
        for (uint64_t k = 6; k >= 5; k--)
            for (int r = 0; r < 3; r++) {
                size_t n = 400 + 300 * (size_t)r + (size_t)k;
                size_t got = sion_fread_key(b, k, 1, n, sid);
                CHECK(got == n && pt_mismatch(b, (unsigned)k, pg[i], 1000 * r, n) < 0,
                      "mapped keyval read: task %d key %llu record %d: %zu of %zu bytes or data differ: %s", pg[i],
                      (unsigned long long)k, r, got, n, sheaf_last_error());
            }
    }
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "mapped keyval read close");
    free(pg);
    free(pc);
    free(pf);
    free(pl);
}
static void test_mapped_keyval(void)
{
    const char *dir = pt_mkdtemp();
    mkctx c;
    c.aid = tc_create_api("threadcomm-mkv");
    snprintf(c.fname, sizeof c.fname, "%s/mkv.sion", dir);
    tc_run(2, mk_task, &c);
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"mapped_keyval_big_endian", test_mapped_keyval},
                                    {"endianness_big", test_endian},
                                    {"keyval_inline", test_keyval},
                                    {"coll_fwrite_fread", test_coll},
                                    {"write_through_fileptr_and_fd", test_fileptr}};
    return pt_main(tests, 5, argc, argv);
}
