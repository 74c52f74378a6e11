/* test_par_reinit.c - sion_generic_parreinit.
 *
 * Open for writing with 1 MiB chunks, reinit to small chunks (4 KiB, and
 * per-task sizes) before writing, write several blocks, close: the file
 * holds the small chunk sizes (parallel read outputs, serial sion_open), its
 * size is far below one 1 MiB chunk per task, and the data round-trip. A
 * second variant writes data before the reinit: it must be discarded. */
#include "partest.h"

#define MAXP 8
typedef struct {
    int aid, nfiles, write_before;
    char fname[4200];
    sion_int64 small[MAXP], chunk_after[MAXP], size[MAXP];
} ctx;

static void writer(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nf = c->nfiles, fnum = g % nf, lrank = g / nf, lsize = (P - fnum + nf - 1) / nf;
    sion_int64 chunk = 1 << 20;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   &fp, NULL);
    if (!CHECK(sid >= 0, "paropen write: %s", sheaf_last_error()))
        return;
    CHECK(chunk == 1 << 20, "chunk written back %lld", chunk);
    if (c->write_before) {
        unsigned char junk[10000];
        memset(junk, 0xEE, sizeof junk);
        CHECK(sion_fwrite(junk, 1, sizeof junk, sid) == sizeof junk, "fwrite before reinit: %s", sheaf_last_error());
    }
    int rc = sion_generic_parreinit(sid, c->small[g]);
    CHECK(rc == SION_SUCCESS, "parreinit(%lld) returned %d: %s", c->small[g], rc, sheaf_last_error());
    CHECK(sion_get_bytes_written(sid) == 0, "bytes written after reinit: %lld (the data before must be discarded)",
          sion_get_bytes_written(sid));
    int blk = -1, maxch = -1;
    sion_int64 pos = -1, *cs = NULL;
    if (CHECK(sion_get_current_location(sid, &blk, &pos, &maxch, &cs) == SION_SUCCESS, "get_current_location: %s",
              sheaf_last_error()))
        CHECK(blk == 0 && pos == 0, "after reinit the task is at block %d pos %lld (expected 0/0)", blk, pos);
    size_t n = (size_t)c->size[g];
    unsigned char *b = malloc(n);
    pt_fill(b, 9, g, 0, n);
    CHECK(sion_fwrite(b, 1, n, sid) == n, "fwrite %zu after reinit: %s", n, sheaf_last_error());
    if (CHECK(sion_get_current_location(sid, &blk, &pos, &maxch, &cs) == SION_SUCCESS, "get_current_location: %s",
              sheaf_last_error())) {
        sion_int64 ch = (c->small[g] + 4095) / 4096 * 4096;
        CHECK(blk == (int)((n - 1) / (size_t)ch), "after writing %zu bytes with chunk %lld: block %d", n, ch, blk);
    }
    free(b);
    rc = sion_generic_parclose(sid);
    CHECK(rc == SION_SUCCESS, "parclose: %s", sheaf_last_error());
}

static void reader(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int fnum = -1, nf = -1, lrank = -1, lsize = -1;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   &fp, NULL);
    if (!CHECK(sid >= 0, "paropen read: %s", sheaf_last_error()))
        return;
    sion_int64 want = (c->small[g] + 4095) / 4096 * 4096;
    CHECK(chunk == want, "read chunksize %lld, expected the reinit size %lld (aligned from %lld)", chunk, want,
          c->small[g]);
    size_t n = (size_t)c->size[g];
    unsigned char *b = malloc(n);
    CHECK(sion_fread(b, 1, n, sid) == n, "fread: %s", sheaf_last_error());
    int64_t bad = pt_mismatch(b, 9, g, 0, n);
    CHECK(bad < 0, "byte %lld differs (got 0x%02x)", (long long)bad, bad >= 0 ? b[bad] : 0);
    CHECK(sion_feof(sid) == 1, "not at eof after %zu bytes", n);
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read: %s", sheaf_last_error());
}

static void run_case(int aid, const char *dir, int P, int nf, int write_before, int per_task)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    c->nfiles = nf;
    c->write_before = write_before;
    snprintf(c->fname, sizeof c->fname, "%s/reinit_P%d_nf%d_%d%d.sion", dir, P, nf, write_before, per_task);
    for (int g = 0; g < P; g++) {
        c->small[g] = per_task ? 1000 + 1500 * g : 4096;
        c->size[g] = 3 * c->small[g] + 123 + 50 * g;
    }
    printf("  case: P=%d files=%d %s, %s\n", P, nf, per_task ? "per-task sizes" : "4 KiB",
           write_before ? "data written before the reinit" : "reinit right after the open");
    int f0 = atomic_load(&pt_failures);
    tc_run(P, writer, c);
    if (atomic_load(&pt_failures) != f0) {
        free(c);
        return;
    }
    long long total = 0;
    for (int f = 0; f < nf; f++) {
        char m[4300];
        pt_member(m, sizeof m, c->fname, f);
        long long s = pt_fsize(m);
        CHECK(s > 0, "file %s missing", m);
        total += s;
    }
    CHECK(total < (long long)P * (1 << 20), "files hold %lld bytes: not below one 1 MiB chunk per task", total);
    tc_run(P, reader, c);
    /* serial view of the chunk sizes */
    int ntasks = 0, nfiles = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsblk = 0;
    int sid = sion_open(c->fname, "rb", &ntasks, &nfiles, &cs, &fsblk, &gr, NULL);
    if (CHECK(sid >= 0, "serial open: %s", sheaf_last_error())) {
        CHECK(ntasks == P && nfiles == nf, "serial: %d tasks %d files", ntasks, nfiles);
        for (int g = 0; g < P && g < ntasks; g++) {
            sion_int64 want = (c->small[g] + 4095) / 4096 * 4096;
            CHECK(cs[g] == want, "serial: chunksize of task %d is %lld, expected %lld", g, cs[g], want);
            CHECK(sion_seek(sid, g, 0, 0) == SION_SUCCESS, "serial seek %d", g);
            size_t n = (size_t)c->size[g];
            unsigned char *b = malloc(n);
            CHECK(sion_fread(b, 1, n, sid) == n && pt_mismatch(b, 9, g, 0, n) < 0, "serial: task %d data differ", g);
            free(b);
        }
        CHECK(sion_close(sid) == SION_SUCCESS, "serial close");
        free(cs);
        free(gr);
    }
    free(c);
}

static void test_reinit(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-reinit");
    run_case(aid, dir, 4, 1, 0, 0);
    run_case(aid, dir, 4, 2, 0, 0);
    run_case(aid, dir, 5, 2, 0, 1);
    run_case(aid, dir, 3, 1, 1, 0);
    run_case(aid, dir, 4, 2, 1, 1);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* A flush after a reinit must land in a journal that exists: the reinit
 * removes the old journal with the old data. */
typedef struct jcfg {
    int aid;
    char fname[4200];
} jcfg;
static void journal_task(tc_task *t)
{
    jcfg *c = t->arg;
    pt_rank = t->grank;
    int fn = 0, nf = 1, lr = t->grank, ls = t->gsize;
    sion_int64 chunk = 1000;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, t->grank, t->gsize, &fn, &nf, &lr,
                                   &ls, &fp, NULL);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    char b[300] = {1};
    char j[4300];
    snprintf(j, sizeof j, "%s.sheafj", c->fname);
    CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b && sion_flush(sid) == SION_SUCCESS, "write + flush");
    CHECK(sion_generic_parreinit(sid, 2000) == SION_SUCCESS, "reinit: %s", sheaf_last_error());
    CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b && sion_flush(sid) == SION_SUCCESS, "write + flush");
    tc_sync(t);
    CHECK(pt_exists(j) && pt_fsize(j) > 0, "no journal after a flush that followed a reinit");
    tc_sync(t);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
    CHECK(!pt_exists(j), "journal left after a clean close");
}

static void test_journal_after_reinit(void)
{
    const char *dir = pt_mkdtemp();
    jcfg c;
    c.aid = tc_create_api("reinit-journal");
    snprintf(c.fname, sizeof c.fname, "%s/rj.sion", dir);
    tc_run(3, journal_task, &c);
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"parreinit", test_reinit}, {"journal_after_reinit", test_journal_after_reinit}};
    return pt_main(tests, 2, argc, argv);
}
