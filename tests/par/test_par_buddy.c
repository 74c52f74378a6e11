/* test_par_buddy.c - buddy checkpointing through the generic API (one thread
 * per task): "bw,buddy" / "bw,buddy=2" writes the container and its copies
 * (<name>_BUDDY_00, _01: SIONlib numbers its copies from 00; same split);
 * deleting one physical file of the
 * container (file 0 or a later member), or damaging its metadata, makes a
 * "br,buddy" open read the first intact copy with every byte right, while a
 * plain "br" open fails; with the container and copy 1 gone, copy 2 is read;
 * with everything gone the open fails on all tasks, naming the container.
 * sion_get_io_info: after the writes, each task's file and copies with the
 * bytes the task wrote (SION_ROLE_WRITER); an empty list in a buddy read,
 * NULL without buddy or on a bad sid. */
#include "partest.h"
#include "sheaf.h"

typedef struct cfg {
    int aid, nf, levels, coll;
    char fname[4200];
} cfg;

static int64_t tbytes(int g) { return 2000 + 1700 * g; }

static void split(tc_task *t, int nf, int *fn, int *lr, int *ls)
{
    *fn = t->grank % nf;
    *lr = *ls = 0;
    for (int k = 0; k < t->gsize; k++)
        if (k % nf == *fn) {
            if (k == t->grank)
                *lr = *ls;
            (*ls)++;
        }
}

static void member(char *out, size_t n, const char *base, int k);

/* The files this task wrote, as sion_get_io_info lists them. */
static void check_io_info(int sid, const cfg *c, int fn, int64_t n)
{
    sion_io_stat_t *io = sion_get_io_info(sid);
    if (!CHECK(io != NULL, "sion_get_io_info: NULL (%s)", sheaf_last_error()))
        return;
    CHECK(io->nfiles == 1 + c->levels, "io_info: %d files, expected %d", io->nfiles, 1 + c->levels);
    for (int i = 0; i < io->nfiles && i <= c->levels; i++) {
        char base[4300], want[4400];
        if (i == 0)
            snprintf(base, sizeof base, "%s", c->fname);
        else
            snprintf(base, sizeof base, "%s_BUDDY_%02d", c->fname, i - 1);
        member(want, sizeof want, base, fn);
        CHECK(io->names[i] && !strcmp(io->names[i], want), "io_info #%d: name %s, expected %s", i,
              io->names[i] ? io->names[i] : "(null)", want);
        CHECK(io->sizes[i] == (size_t)n, "io_info #%d: size %zu, expected %lld", i, io->sizes[i], (long long)n);
        CHECK(io->roles[i] == SION_ROLE_WRITER, "io_info #%d: role %d", i, io->roles[i]);
    }
    CHECK(sion_free_io_info(io) == SION_SUCCESS, "sion_free_io_info");
    io = sion_get_io_info_by_spec(sid, SION_ROLE_SENDER, SION_GET_IO_INFO_FLAG_NONE); /* a role sheaf has not */
    CHECK(io && io->nfiles == 0, "io_info by spec SENDER: %d files", io ? io->nfiles : -1);
    sion_free_io_info(io);
    CHECK(sion_get_io_info(sid + 100000) == NULL, "io_info on a bad sid is not NULL");
}

static void wtask(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    int fn, lr, ls, nf = c->nf;
    split(t, nf, &fn, &lr, &ls);
    char mode[64];
    snprintf(mode, sizeof mode, "bw,buddy=%d%s", c->levels, c->coll ? ",collective" : "");
    sion_int64 chunk = 3000;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, mode, &chunk, &fsblk, t->world, t->grank, t->gsize, &fn, &nf, &lr,
                                   &ls, &fp, NULL);
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    int64_t n = tbytes(t->grank), off = 0;
    unsigned char *b = malloc((size_t)n);
    pt_fill(b, 5, t->grank, 0, (size_t)n);
    while (off < n) {
        size_t k = (size_t)(n - off < 1000 ? n - off : 1000);
        size_t w = c->coll ? sion_coll_fwrite(b + off, 1, k, sid) : sion_fwrite(b + off, 1, k, sid);
        CHECK(w == k, "write: %s", sheaf_last_error());
        off += (int64_t)k;
    }
    CHECK(sion_flush(sid) == SION_SUCCESS, "flush: %s", sheaf_last_error());
    free(b);
    check_io_info(sid, c, fn, n);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

typedef struct rcfg { cfg *c; const char *mode; int expect_ok; } rcfg;
static void rtask(tc_task *t)
{
    rcfg *r = t->arg;
    pt_rank = t->grank;
    int fn = 0, nf = 0, lr = 0, ls = 0;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(r->c->aid, r->c->fname, r->mode, &chunk, &fsblk, t->world, t->grank, t->gsize, &fn,
                                   &nf, &lr, &ls, &fp, NULL);
    if (!r->expect_ok) {
        CHECK(sid < 0, "open (%s) succeeded, expected a failure", r->mode);
        CHECK(strstr(sheaf_last_error(), "buddy") || !strstr(r->mode, "buddy"), "message: %s", sheaf_last_error());
        if (sid >= 0)
            sion_generic_parclose(sid);
        return;
    }
    if (!CHECK(sid >= 0, "open (%s): %s", r->mode, sheaf_last_error()))
        return;
    sion_io_stat_t *io = sion_get_io_info(sid); /* buddy read: an empty list (SIONlib's); plain read: NULL */
    if (strstr(r->mode, "buddy"))
        CHECK(io && io->nfiles == 0, "io_info in %s: %d files", r->mode, io ? io->nfiles : -1);
    else
        CHECK(io == NULL, "io_info without buddy is not NULL");
    sion_free_io_info(io);
    int64_t n = tbytes(t->grank);
    unsigned char *b = malloc((size_t)n + 1);
    size_t got = sion_fread(b, 1, (size_t)n + 1, sid);
    CHECK(got == (size_t)n && pt_mismatch(b, 5, t->grank, 0, (size_t)n) < 0, "read %zu of %lld bytes: %s", got,
          (long long)n, sheaf_last_error());
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static void member(char *out, size_t n, const char *base, int k)
{
    if (k == 0)
        snprintf(out, n, "%s", base);
    else
        snprintf(out, n, "%.4000s.%06d", base, k);
}

static void run_case(int P, int nf, int levels, int coll, int victim)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("buddy");
    cfg c = {aid, nf, levels, coll, ""};
    snprintf(c.fname, sizeof c.fname, "%s/ckpt.sion", dir);
    tc_run(P, wtask, &c);
    char f[4300], b1[4300], b2[4300], b3[4300];
    snprintf(b1, sizeof b1, "%s_BUDDY_00", c.fname); /* copy 1: SIONlib's first name */
    snprintf(b2, sizeof b2, "%s_BUDDY_01", c.fname);
    snprintf(b3, sizeof b3, "%s_BUDDY_02", c.fname);
    CHECK(pt_exists(b1), "no buddy copy %s", b1);
    CHECK((levels >= 2) == pt_exists(b2), "buddy copy 2 %s", levels >= 2 ? "missing" : "unexpected");
    CHECK(!pt_exists(b3), "unexpected buddy copy %s", b3);
    rcfg ok = {&c, "br", 1};
    tc_run(P, rtask, &ok); /* intact: the container itself */
    member(f, sizeof f, c.fname, victim);
    CHECK(unlink(f) == 0, "cannot delete %s", f);
    rcfg plain = {&c, "br", 0};
    tc_run(P, rtask, &plain); /* without buddy: fails */
    rcfg bud = {&c, "br,buddy", 1};
    tc_run(P, rtask, &bud); /* with buddy: copy 1 */
    if (levels >= 2) {
        member(f, sizeof f, b1, victim);
        CHECK(unlink(f) == 0, "cannot delete %s", f);
        rcfg bud2 = {&c, "br,buddy=2", 1};
        tc_run(P, rtask, &bud2); /* copy 2 */
        member(f, sizeof f, b2, 0);
        FILE *x = fopen(f, "r+b"); /* damage copy 2's header: nothing left */
        if (x) {
            fputs("garbage!", x);
            fclose(x);
        }
        rcfg none = {&c, "br,buddy=2", 0};
        tc_run(P, rtask, &none);
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void test_single_file(void) { run_case(3, 1, 1, 0, 0); }
static void test_member_lost(void) { run_case(5, 2, 1, 0, 1); }
static void test_first_file_lost(void) { run_case(4, 2, 1, 1, 0); }
static void test_two_levels(void) { run_case(4, 2, 2, 0, 1); }

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"single_file", test_single_file},
                                    {"member_file_lost", test_member_lost},
                                    {"first_file_lost_coll_writes", test_first_file_lost},
                                    {"two_levels", test_two_levels}};
    return pt_main(tests, 4, argc, argv);
}
