/* test_par_misuse.c - calls that must be refused on parallel sids, locally
 * (no collective), with a message, leaving the sid usable:
 *  - sion_fwrite on a read sid, sion_fread on a write sid;
 *  - sion_seek to another task's global rank on a plain parallel sid (read
 *    and write), while the own rank and SION_CURRENT_RANK are accepted;
 *  - sion_close (serial) on a parallel sid: refused, and the sid still
 *    closes with sion_generic_parclose;
 *  - sion_generic_parclose / parreinit on a serial sid, an invalid sid, a
 *    closed sid; parreinit on a read sid (every task: all refuse);
 *  - an unknown api id, an API missing callbacks. */
#include "partest.h"

#define P 3
typedef struct {
    int aid;
    char fname[4200];
} ctx;

static tc_counts zero(void)
{
    tc_counts z;
    memset(&z, 0, sizeof z);
    return z;
}
#define NO_COLLECTIVES(before, what)                                                                                   \
    do {                                                                                                               \
        tc_counts d_ = tc_counts_diff(tc_counts_get(), (before)), z_ = zero();                                         \
        char s_[256];                                                                                                  \
        tc_counts_str(&d_, s_, sizeof s_);                                                                             \
        CHECK(!memcmp(&d_, &z_, sizeof z_), "%s ran collectives although refused: %s", what, s_);                      \
    } while (0)

/* callbacks of the incomplete API: must never run (the open is refused first) */
static atomic_int stub_calls;
static int stub_gather(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    (void)in, (void)out, (void)group, (void)datatype, (void)nelem, (void)root;
    atomic_fetch_add(&stub_calls, 1);
    return 1;
}
static int stub_bcast(void *data, void *group, int datatype, int nelem, int root)
{
    (void)data, (void)group, (void)datatype, (void)nelem, (void)root;
    atomic_fetch_add(&stub_calls, 1);
    return 1;
}

static void task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fnum = 0, nf = 1, lrank = g, lsize = P;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    unsigned char b[100];
    pt_fill(b, 3, g, 0, sizeof b);
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (!CHECK(sid >= 0, "paropen write: %s", sheaf_last_error()))
        return;
    tc_counts before = tc_counts_get();
    unsigned char x[10];
    CHECK(sion_fread(x, 1, 10, sid) == 0, "sion_fread on a write sid returned data");
    int o = (g + 1) % P;
    if (P > 1) {
        CHECK(sion_seek(sid, o, SION_CURRENT_BLK, SION_CURRENT_POS) == SION_NOT_SUCCESS,
              "write sid: sion_seek to task %d (not this task) accepted", o);
        CHECK(sheaf_last_error()[0], "write sid: refused seek without a message");
    }
    CHECK(sion_seek(sid, SION_CURRENT_RANK, SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS,
          "write sid: seek (CURRENT, CURRENT, CURRENT) refused: %s", sheaf_last_error());
    CHECK(sion_seek(sid, g, SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS,
          "write sid: seek to its own global rank %d (CURRENT, CURRENT) refused: %s", g, sheaf_last_error());
    CHECK(sion_close(sid) == SION_NOT_SUCCESS, "sion_close (serial) on a parallel write sid accepted");
    CHECK(sheaf_last_error()[0], "sion_close refused without a message");
    NO_COLLECTIVES(before, "local misuse on a write sid");
    CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b, "fwrite after the refused calls: %s", sheaf_last_error());
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose after a refused sion_close: %s", sheaf_last_error());
    before = tc_counts_get();
    CHECK(sion_generic_parclose(sid) == SION_ID_NOT_VALID,
          "second parclose of the same sid: not SIONlib's SION_ID_NOT_VALID");
    CHECK(sion_fwrite(b, 1, 1, sid) == 0, "fwrite on a closed sid accepted");
    NO_COLLECTIVES(before, "parclose of a closed sid");

    /* read */
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, NULL, NULL);
    if (!CHECK(sid >= 0, "paropen read: %s", sheaf_last_error()))
        return;
    before = tc_counts_get();
    CHECK(sion_fwrite(b, 1, 10, sid) == 0, "sion_fwrite on a read sid accepted");
    CHECK(sheaf_last_error()[0], "refused fwrite without a message");
    if (P > 1) {
        int rc = sion_seek(sid, o, 0, 0);
        CHECK(rc == SION_NOT_SUCCESS, "read sid: sion_seek to another task's global rank %d returned %d", o, rc);
        CHECK(sheaf_last_error()[0], "read sid: refused seek without a message");
        if (g == 0)
            printf("  seek to another task: %s\n", sheaf_last_error());
    }
    CHECK(sion_close(sid) == SION_NOT_SUCCESS, "sion_close (serial) on a parallel read sid accepted");
    if (g == 0)
        printf("  sion_close on a parallel sid: %s\n", sheaf_last_error());
    CHECK(sion_dedup(sid) == SION_NOT_SUCCESS, "sion_dedup of a parallel sid accepted");
    NO_COLLECTIVES(before, "local misuse on a read sid");
    /* the sid still works */
    CHECK(sion_seek(sid, g, 0, 50) == SION_SUCCESS, "seek to own rank, block 0, pos 50: %s", sheaf_last_error());
    unsigned char r[50];
    CHECK(sion_fread(r, 1, 50, sid) == 50 && pt_mismatch(r, 3, g, 50, 50) < 0, "data after the refused calls");
    CHECK(sion_seek(sid, SION_CURRENT_RANK, 0, 0) == SION_SUCCESS, "seek CURRENT_RANK: %s", sheaf_last_error());
    CHECK(sion_fread(r, 1, 50, sid) == 50 && pt_mismatch(r, 3, g, 0, 50) < 0, "data after seek to 0");
    /* parreinit on a read sid: every task refuses (collectively or locally, but all the same) */
    int rc = sion_generic_parreinit(sid, 8192);
    CHECK(rc == SION_NOT_SUCCESS, "parreinit on a read sid returned %d", rc);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read after refused calls: %s", sheaf_last_error());
}

static void test_misuse(void)
{
    const char *dir = pt_mkdtemp();
    ctx c;
    c.aid = tc_create_api("threadcomm-misuse");
    snprintf(c.fname, sizeof c.fname, "%s/misuse.sion", dir);
    tc_run(P, task, &c);

    /* serial sid: generic collective calls refused */
    int nt, nf;
    int sid = sion_open(c.fname, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    if (CHECK(sid >= 0, "serial open: %s", sheaf_last_error())) {
        tc_counts b = tc_counts_get();
        CHECK(sion_generic_parclose(sid) == SION_ID_NOT_VALID, "sion_generic_parclose on a serial sid accepted");
        CHECK(sion_generic_parreinit(sid, 4096) == SION_ID_NOT_VALID,
              "sion_generic_parreinit on a serial sid accepted");
        CHECK(sion_generic_parclose_mapped(sid) == SION_ID_NOT_VALID, "parclose_mapped on a serial sid accepted");
        NO_COLLECTIVES(b, "generic calls on a serial sid");
        CHECK(sion_close(sid) == SION_SUCCESS, "serial close after the refused calls: %s", sheaf_last_error());
    }
    CHECK(sion_generic_parclose(-1) == SION_ID_NOT_VALID, "parclose(-1) accepted");
    CHECK(sion_generic_parclose(123456) == SION_ID_NOT_VALID, "parclose(123456) accepted");
    CHECK(sion_generic_parreinit(-1, 10) == SION_ID_NOT_VALID, "parreinit(-1): not SIONlib's SION_ID_NOT_VALID");

    /* unknown api, incomplete api */
    sion_int64 chunk = 100;
    sion_int32 fsblk = 4096;
    int fnum = 0, nfiles = 1, lrank = 0, lsize = 1;
    char f[4300];
    snprintf(f, sizeof f, "%s/noapi.sion", dir);
    int dummy = 0;
    sid =
        sion_generic_paropen(98765, f, "bw", &chunk, &fsblk, &dummy, 0, 1, &fnum, &nfiles, &lrank, &lsize, NULL, NULL);
    CHECK(sid == -1, "paropen with an unknown api id returned %d", sid);
    CHECK(!pt_exists(f), "paropen with an unknown api id created the file");
    int partial = sion_generic_create_api("partial");
    CHECK(partial >= 0, "create api");
    sion_generic_register_gatherr_cb(partial, stub_gather);
    sion_generic_register_bcastr_cb(partial, stub_bcast);
    sid = sion_generic_paropen(partial, f, "bw", &chunk, &fsblk, &dummy, 0, 1, &fnum, &nfiles, &lrank, &lsize, NULL,
                               NULL);
    CHECK(sid == -1, "paropen through an API without all STD callbacks returned %d", sid);
    CHECK(sheaf_last_error()[0], "no message for the incomplete API");
    CHECK(atomic_load(&stub_calls) == 0, "the incomplete API's callbacks were called %d times",
          atomic_load(&stub_calls));
    printf("  incomplete API: %s\n", sheaf_last_error());
    CHECK(sion_generic_free_api(partial) == SION_SUCCESS, "free api");
    CHECK(sion_generic_free_api(partial) == SION_NOT_SUCCESS, "second free of an api accepted");
    CHECK(sion_generic_register_barrier_cb(partial, tc_barrier) == SION_NOT_SUCCESS,
          "register on a freed api accepted");
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"misuse", test_misuse}};
    return pt_main(tests, 1, argc, argv);
}
