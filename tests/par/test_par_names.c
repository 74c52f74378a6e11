/* test_par_names.c - sion_generic_register_get_multi_filename_cb.
 *
 * With a custom callback the physical files of a multi-file set are named
 * by it (file 0 included: the callback names "physical file filenumber"),
 * newfname reports those names, the default names do not appear, and the
 * set reads back through an API with the same callback. An API without it
 * cannot find the set: every task fails (no hang). */
#include "partest.h"

static atomic_int cb_calls;

static char *my_names(const char *fname, int filenumber)
{
    atomic_fetch_add(&cb_calls, 1);
    size_t n = strlen(fname) + 32;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s_part%02d.dat", fname, filenumber);
    return s;
}

#define MAXP 8
typedef struct {
    int aid, nfiles, reading;
    char fname[4200];
    int sid[MAXP];
    char msg[MAXP][1024];
} ctx;

static void task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nf = c->nfiles, fnum = g % nf, lrank = g / nf, lsize = (P - fnum + nf - 1) / nf;
    sion_int64 chunk = 3000 + 100 * g;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    char *newf = NULL;
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    int sid = c->reading ? sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl,
                                                &rs, &fp, &newf)
                         : sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf,
                                                &lrank, &lsize, &fp, &newf);
    c->sid[g] = sid;
    snprintf(c->msg[g], sizeof c->msg[g], "%s", sid < 0 ? sheaf_last_error() : "");
    if (sid < 0)
        return;
    char *want = my_names(c->fname, g % c->nfiles);
    CHECK(newf && !strcmp(newf, want), "newfname \"%s\", expected the callback's name \"%s\"", newf ? newf : "(null)",
          want);
    free(want);
    free(newf);
    size_t n = 5000 + 777 * (size_t)g;
    unsigned char *b = malloc(n);
    if (!c->reading) {
        pt_fill(b, 42, g, 0, n);
        CHECK(sion_fwrite(b, 1, n, sid) == n, "fwrite: %s", sheaf_last_error());
    } else {
        CHECK(rf == g % c->nfiles && rnf == c->nfiles && rl == g / c->nfiles, "read outputs file %d of %d lrank %d", rf,
              rnf, rl);
        CHECK(sion_fread(b, 1, n, sid) == n, "fread: %s", sheaf_last_error());
        CHECK(pt_mismatch(b, 42, g, 0, n) < 0, "data read back through the custom names differ");
        CHECK(sion_feof(sid) == 1, "not at eof");
    }
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose: %s", sheaf_last_error());
}

static int run(int aid, int P, int nf, int reading, const char *fname, ctx **out)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    c->nfiles = nf;
    c->reading = reading;
    snprintf(c->fname, sizeof c->fname, "%s", fname);
    tc_run(P, task, c);
    int ok = 0;
    for (int g = 0; g < P; g++)
        ok += c->sid[g] >= 0;
    *out = c;
    return ok;
}

static void test_custom_names(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-names");
    int plain = tc_create_api("threadcomm-plain");
    CHECK(sion_generic_register_get_multi_filename_cb(aid, my_names) == SION_SUCCESS, "register multi filename cb");
    CHECK(sion_generic_register_get_multi_filename_cb(aid, NULL) == SION_NOT_SUCCESS,
          "registering a NULL callback was accepted");
    for (int nf = 2; nf <= 3; nf++) {
        int P = 5;
        char f[4200];
        snprintf(f, sizeof f, "%s/named_nf%d", dir, nf);
        ctx *c;
        atomic_store(&cb_calls, 0);
        int ok = run(aid, P, nf, 0, f, &c);
        CHECK(ok == P, "write with custom names (%d files) failed on %d tasks: %s", nf, P - ok, c->msg[0]);
        free(c);
        CHECK(atomic_load(&cb_calls) > P, "the name callback was never called by the library");
        for (int i = 0; i < nf; i++) {
            char *nm = my_names(f, i), def[4300];
            pt_member(def, sizeof def, f, i);
            CHECK(pt_exists(nm), "file %d: %s (callback name) does not exist", i, nm);
            CHECK(!pt_exists(def), "file %d: default name %s exists although a callback was registered", i, def);
            free(nm);
        }
        ok = run(aid, P, nf, 1, f, &c);
        CHECK(ok == P, "read with custom names (%d files) failed on %d tasks: %s", nf, P - ok, c->msg[0]);
        free(c);
        /* without the callback the set cannot be found; all fail together */
        ok = run(plain, P, nf, 1, f, &c);
        CHECK(ok == 0, "read through an API without the name callback: %d of %d tasks got a sid", ok, P);
        printf("  read without the callback: task 0: %s\n", c->msg[0]);
        free(c);
    }
    sion_generic_free_api(aid);
    sion_generic_free_api(plain);
    pt_rmtree(dir);
}

/* mapped open with a custom-named API: 2 threads write 4 logical tasks
 * into 2 files named by the callback; the set reads back through the same
 * API with the plain open (4 threads) and with the mapped open (2 threads,
 * automatic distribution). */
typedef struct {
    int aid;
    char fname[4200];
    int sid[4];
    char msg[4][1024];
} mctx;

static void mapped_writer(tc_task *t)
{
    mctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int nl = 2, gr[2] = {2 * g, 2 * g + 1}, fn[2] = {(2 * g) % 2, (2 * g + 1) % 2}, lr[2] = {g, g};
    sion_int64 cs[2] = {4096, 4096};
    int *pg = gr, *pf = fn, *pl = lr, nf = 2;
    sion_int64 *pc = cs;
    sion_int32 fsblk = 4096;
    int sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "bw", &nf, t->world, g, 2, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (!CHECK(sid >= 0, "mapped write with custom names: %s", sheaf_last_error()))
        return;
    unsigned char b[3000];
    for (int i = 0; i < 2; i++) {
        CHECK(sion_seek(sid, gr[i], SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS, "seek %d", gr[i]);
        pt_fill(b, 55, gr[i], 0, sizeof b);
        CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b, "fwrite task %d: %s", gr[i], sheaf_last_error());
    }
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "parclose_mapped: %s", sheaf_last_error());
}

static void plain_reader4(tc_task *t)
{
    mctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fnum = -1, nf = -1, lrank = -1, lsize = -1;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    int sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, 4, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (!CHECK(sid >= 0, "plain read of the custom-named mapped set: %s", sheaf_last_error()))
        return;
    unsigned char b[3000];
    CHECK(sion_fread(b, 1, sizeof b, sid) == sizeof b && pt_mismatch(b, 55, g, 0, sizeof b) < 0, "data differ");
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose");
}

static void mapped_reader2(tc_task *t)
{
    mctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int nl = -1, *pg = NULL, *pf = NULL, *pl = NULL, nf = 0;
    sion_int64 *pc = NULL;
    sion_int32 fsblk = 0;
    int sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "br", &nf, t->world, g, 2, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    c->sid[g] = sid;
    snprintf(c->msg[g], sizeof c->msg[g], "%s", sid < 0 ? sheaf_last_error() : "");
    if (sid < 0)
        return;
    unsigned char b[3000];
    for (int i = 0; i < nl; i++) {
        CHECK(sion_seek(sid, pg[i], 0, 0) == SION_SUCCESS, "seek %d", pg[i]);
        CHECK(sion_fread(b, 1, sizeof b, sid) == sizeof b && pt_mismatch(b, 55, pg[i], 0, sizeof b) < 0,
              "mapped read: task %d data differ", pg[i]);
    }
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "parclose_mapped read");
    free(pg);
    free(pc);
    free(pf);
    free(pl);
}

static void test_mapped_custom_names(void)
{
    const char *dir = pt_mkdtemp();
    mctx c;
    memset(&c, 0, sizeof c);
    c.aid = tc_create_api("threadcomm-names-mapped");
    sion_generic_register_get_multi_filename_cb(c.aid, my_names);
    snprintf(c.fname, sizeof c.fname, "%s/mnamed", dir);
    tc_run(2, mapped_writer, &c);
    for (int i = 0; i < 2; i++) {
        char *nm = my_names(c.fname, i);
        CHECK(pt_exists(nm), "mapped write: file %d: %s (callback name) does not exist", i, nm);
        free(nm);
    }
    tc_run(4, plain_reader4, &c);
    tc_run(2, mapped_reader2, &c);
    for (int g = 0; g < 2; g++)
        CHECK(c.sid[g] >= 0,
              "mapped read through the API with the same name callback failed on task %d: %s "
              "(sion_generic.h: a set named another way can be read back through an API with the same callback)",
              g, c.msg[g]);
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"custom_multi_filenames", test_custom_names},
                                    {"mapped_custom_multi_filenames", test_mapped_custom_names}};
    return pt_main(tests, 2, argc, argv);
}
