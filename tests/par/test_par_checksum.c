/* test_par_checksum.c - the "checksum" mode through the generic parallel API
 * (one thread per task):
 *   roundtrip  2-7 tasks, 1 or 2 files, several blocks, some bytes written
 *              through the exported FILE*, coalesced writes: read back in
 *              parallel and serially with every block verified
 *   damage     one flipped data byte: the read of that task's block fails
 *              naming task, block and offset; the other tasks read fine;
 *              a mapped read catches it too; "nochecksum" reads it anyway;
 *              a flipped header or block table
 *              byte, or a cut trailer, fails the open on every task
 *   reinit     sion_generic_parreinit keeps checksums right */
#include "partest.h"
#include "sheaf.h"

typedef struct cfg {
    int aid, nf, coll, rawfp;
    char fname[4200];
} cfg;

static int64_t tbytes(int g) { return 3000 + 2500 * g; }

static void wtask(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    int g = t->grank, P = t->gsize, nf = c->nf, fn = g % nf, lr = 0, ls = 0;
    for (int k = 0; k < P; k++)
        if (k % nf == fn) {
            if (k == g)
                lr = ls;
            ls++;
        }
    sion_int64 chunk = 4000;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    const char *mode = c->coll ? "bw,checksum,collective,collsize=2" : "bw,checksum";
    int sid =
        sion_generic_paropen(c->aid, c->fname, mode, &chunk, &fsblk, t->world, g, P, &fn, &nf, &lr, &ls, &fp, NULL);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    int64_t n = tbytes(g), off = 0;
    unsigned char *b = malloc((size_t)n);
    pt_fill(b, 11, g, 0, (size_t)n);
    while (off < n) {
        size_t k = (size_t)(n - off < 1500 ? n - off : 1500);
        if (c->rawfp && fp && off >= 3000 && sion_ensure_free_space(sid, (sion_int64)k) == SION_SUCCESS) {
            CHECK(fwrite(b + off, 1, k, fp) == k, "fwrite through the exported FILE*");
        } else {
            size_t w = c->coll ? sion_coll_fwrite(b + off, 1, k, sid) : sion_fwrite(b + off, 1, k, sid);
            CHECK(w == k, "write: %s", sheaf_last_error());
        }
        off += (int64_t)k;
    }
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

/* read own task in parallel; expect: 1 all good, 0 this task's read fails (damaged), -1 open fails */
typedef struct rcfg {
    cfg *c;
    int damaged_task, expect_open_fail;
    const char *mode;
} rcfg;
static void rtask(tc_task *t)
{
    rcfg *r = t->arg;
    pt_rank = t->grank;
    int g = t->grank, fn = 0, nf = 0, lr = 0, ls = 0;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(r->c->aid, r->c->fname, r->mode, &chunk, &fsblk, t->world, g, t->gsize, &fn, &nf,
                                   &lr, &ls, &fp, NULL);
    if (r->expect_open_fail) {
        CHECK(sid < 0, "open of a damaged container succeeded");
        CHECK(strstr(sheaf_last_error(), "damaged") || strstr(sheaf_last_error(), "task 0"), "message: %s",
              sheaf_last_error());
        if (sid >= 0)
            sion_generic_parclose(sid);
        return;
    }
    if (!CHECK(sid >= 0, "read open: %s", sheaf_last_error()))
        return;
    int64_t n = tbytes(g);
    unsigned char *b = malloc((size_t)n + 1);
    size_t got = sion_fread(b, 1, (size_t)n, sid);
    if (g == r->damaged_task && strstr(r->mode, "nochecksum")) {
        CHECK(got == (size_t)n && pt_mismatch(b, 11, g, 0, (size_t)n) >= 0,
              "nochecksum: the damaged bytes should come back unverified (%zu bytes)", got);
    } else if (g == r->damaged_task) {
        CHECK(got < (size_t)n, "damaged task read all %zu bytes", got);
        CHECK(strstr(sheaf_last_error(), "checksum mismatch") && strstr(sheaf_last_error(), "block"), "message: %s",
              sheaf_last_error());
    } else {
        CHECK(got == (size_t)n && pt_mismatch(b, 11, g, 0, (size_t)n) < 0, "read %zu of %lld: %s", got, (long long)n,
              sheaf_last_error());
    }
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "read close: %s", sheaf_last_error());
}

static void serial_ok(const char *fn, int P)
{
    int nt = 0, nf = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsb = 0;
    FILE *fp = NULL;
    int sid = sion_open((char *)fn, "rb", &nt, &nf, &cs, &fsb, &gr, &fp);
    if (!CHECK(sid >= 0 && nt == P, "serial open: %s", sheaf_last_error()))
        return;
    for (int g = 0; g < P; g++) {
        int64_t n = tbytes(g);
        unsigned char *b = malloc((size_t)n + 1);
        sion_seek(sid, g, SION_ABSOLUTE_POS, 0);
        size_t got = sion_fread(b, 1, (size_t)n, sid);
        CHECK(got == (size_t)n && pt_mismatch(b, 11, g, 0, (size_t)n) < 0, "serial task %d: %zu bytes: %s", g, got,
              sheaf_last_error());
        free(b);
    }
    sion_close(sid);
    free(cs);
    free(gr);
}

static void flip(const char *fn, long long off)
{
    FILE *f = fopen(fn, "r+b");
    if (!CHECK(f != NULL, "cannot open %s", fn))
        return;
    fseek(f, off, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(ch ^ 0x10, f);
    fclose(f);
}

static void test_roundtrip(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("ck");
    for (int P = 2; P <= 7; P += 5)
        for (int nf = 1; nf <= 2; nf++)
            for (int variant = 0; variant < 2; variant++) {
                cfg c = {aid, nf, 0, variant, ""};
                snprintf(c.fname, sizeof c.fname, "%s/rt_%d_%d_%d.sion", dir, P, nf, variant);
                tc_run(P, wtask, &c);
                rcfg r = {&c, -1, 0, "br"};
                tc_run(P, rtask, &r);
                if (nf == 1)
                    serial_ok(c.fname, P);
            }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void test_coll(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("ck-std"); /* coalescing falls back here, the checksums must not care */
    cfg c = {aid, 1, 1, 0, ""};
    snprintf(c.fname, sizeof c.fname, "%s/coll.sion", dir);
    tc_run(4, wtask, &c);
    rcfg r = {&c, -1, 0, "br"};
    tc_run(4, rtask, &r);
    serial_ok(c.fname, 4);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* a mapped read (one process, all tasks) verifies the blocks too */
static void mapped_task(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    int nl = -1, *pg = NULL, *pf = NULL, *pl = NULL, numfiles = -1;
    sion_int64 *pc = NULL;
    sion_int32 fsblk = -1;
    FILE *fp = NULL;
    int sid = sion_generic_paropen_mapped(c->aid, c->fname, "br", &numfiles, t->world, t->grank, t->gsize, &nl, &pg,
                                          &pc, &pf, &pl, &fsblk, &fp);
    if (!CHECK(sid >= 0 && nl == 3, "mapped open: %s", sheaf_last_error()))
        return;
    for (int i = 0; i < nl; i++) {
        int g = pg[i];
        int64_t n = tbytes(g);
        unsigned char *b = malloc((size_t)n + 1);
        CHECK(sion_seek(sid, g, SION_ABSOLUTE_POS, 0) == SION_SUCCESS, "seek %d: %s", g, sheaf_last_error());
        size_t got = sion_fread(b, 1, (size_t)n, sid);
        if (g == 1)
            CHECK(got < (size_t)n && strstr(sheaf_last_error(), "checksum mismatch"),
                  "mapped: damaged task %d "
                  "read %zu bytes: %s",
                  g, got, sheaf_last_error());
        else
            CHECK(got == (size_t)n && pt_mismatch(b, 11, g, 0, (size_t)n) < 0, "mapped: task %d", g);
        free(b);
    }
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "mapped close: %s", sheaf_last_error());
    free(pg);
    free(pc);
    free(pf);
    free(pl);
}

static void test_damage(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("ck");
    cfg c = {aid, 1, 0, 0, ""};
    snprintf(c.fname, sizeof c.fname, "%s/dmg.sion", dir);
    tc_run(3, wtask, &c);
    /* task 1's first block: data start at 4096, chunks of 4096 */
    flip(c.fname, 4096 + 4096 + 100);
    rcfg r = {&c, 1, 0, "br"};
    tc_run(3, rtask, &r);
    tc_run(1, mapped_task, &c);
    rcfg skip = {&c, 1, 0, "br,nochecksum"}; /* opt-out: the damaged byte is read without complaint */
    tc_run(3, rtask, &skip);
    flip(c.fname, 4096 + 4096 + 100); /* repaired */
    flip(c.fname, 20);                /* a header byte */
    rcfg hdr = {&c, -1, 1, "br"};
    tc_run(3, rtask, &hdr);
    flip(c.fname, 20);
    rcfg ok = {&c, -1, 0, "br"};
    tc_run(3, rtask, &ok); /* repaired: good again */
    long long sz = pt_fsize(c.fname);
    CHECK(truncate(c.fname, sz - 8) == 0, "truncate");
    tc_run(3, rtask, &hdr);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void reinit_task(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    int g = t->grank, fn = 0, nf = 1, lr = g, ls = t->gsize;
    sion_int64 chunk = 100;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw,checksum", &chunk, &fsblk, t->world, g, t->gsize, &fn, &nf,
                                   &lr, &ls, &fp, NULL);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    unsigned char junk[50] = {1};
    sion_fwrite(junk, 1, sizeof junk, sid);
    CHECK(sion_generic_parreinit(sid, 4000) == SION_SUCCESS, "reinit: %s", sheaf_last_error());
    int64_t n = tbytes(g);
    unsigned char *b = malloc((size_t)n);
    pt_fill(b, 11, g, 0, (size_t)n);
    CHECK(sion_fwrite(b, 1, (size_t)n, sid) == (size_t)n, "write: %s", sheaf_last_error());
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static void test_reinit(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("ck");
    cfg c = {aid, 1, 0, 0, ""};
    snprintf(c.fname, sizeof c.fname, "%s/reinit.sion", dir);
    tc_run(3, reinit_task, &c);
    rcfg r = {&c, -1, 0, "br"};
    tc_run(3, rtask, &r);
    serial_ok(c.fname, 3);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"roundtrip", test_roundtrip},
                                    {"coalesced_writes", test_coll},
                                    {"damage_detected", test_damage},
                                    {"reinit", test_reinit}};
    return pt_main(tests, 4, argc, argv);
}
