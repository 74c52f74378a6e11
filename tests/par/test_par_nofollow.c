/* test_par_nofollow.c - a parallel write (generic API, one thread per task,
 * 2 physical files, "buddy") never creates a file through a symbolic link
 * planted at one of its names: file 0, the member "<name>.000001", the buddy
 * copy "<name>_BUDDY_00" or its member "<name>_BUDDY_00.000001". The open
 * fails on every task, the task that created the file names it and says it
 * is a symbolic link, and the link's target keeps its bytes. The journals of
 * both members, planted after the open, make sion_flush fail the same way. */
#include "partest.h"
#include "sheaf.h"

static const char precious[] = "precious bytes that must survive";

typedef struct cfg {
    int aid;
    char fname[4200], link[4300];
    int plant_journal; /* plant links at the journals between open and flush */
    char target[4300];
    atomic_int named; /* tasks whose message names the link as a symbolic link */
} cfg;

static void split2(tc_task *t, int *fn, int *lr, int *ls)
{
    *fn = t->grank % 2;
    *lr = t->grank / 2;
    *ls = (t->gsize - *fn + 1) / 2;
}

static void plant(const char *link, const char *target)
{
    FILE *f = fopen(target, "wb");
    if (f) {
        fwrite(precious, 1, sizeof precious, f);
        fclose(f);
    }
    unlink(link);
    CHECK(symlink(target, link) == 0, "symlink %s", link);
}

static int intact(const char *target)
{
    char b[sizeof precious + 8] = {0};
    FILE *f = fopen(target, "rb");
    if (!f)
        return 0;
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    return n == sizeof precious && memcmp(b, precious, n) == 0;
}

static void wtask(tc_task *t)
{
    cfg *c = t->arg;
    pt_rank = t->grank;
    int fn, lr, ls, nf = 2;
    split2(t, &fn, &lr, &ls);
    sion_int64 chunk = 1000;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw,buddy", &chunk, &fsblk, t->world, t->grank, t->gsize, &fn, &nf,
                                   &lr, &ls, &fp, NULL);
    if (!c->plant_journal) {
        CHECK(sid < 0, "open through the link %s succeeded", c->link);
        if (sid >= 0) {
            sion_generic_parclose(sid);
            return;
        }
        const char *e = sheaf_last_error();
        /* the creating task names the link; the others report the collective failure */
        CHECK(strstr(e, c->fname) != NULL, "message names no file: %s", e);
        if (strstr(e, c->link) && strstr(e, "is a symbolic link"))
            atomic_fetch_add(&c->named, 1);
        return;
    }
    if (!CHECK(sid >= 0, "open: %s", sheaf_last_error()))
        return;
    if (t->grank < 2) { /* the lowest task of each member plants the links of that member */
        char j[4400], target[4400];
        const char *base = t->grank == 0 ? c->fname : c->link; /* c->link: member 1's name here */
        snprintf(j, sizeof j, "%s.sheafj", base);
        snprintf(target, sizeof target, "%s-victim%d", c->target, t->grank);
        plant(j, target);
    }
    tc_sync(t);
    CHECK(sion_fwrite("data", 1, 4, sid) == 4, "write: %s", sheaf_last_error());
    int rc = sion_flush(sid);
    CHECK(rc != SION_SUCCESS, "flush through a journal link succeeded");
    if (rc != SION_SUCCESS)
        CHECK(strstr(sheaf_last_error(), ".sheafj") && strstr(sheaf_last_error(), "is a symbolic link"),
              "flush message: %s", sheaf_last_error());
    sion_generic_parclose(sid);
}

static void run_link(const char *suffix)
{
    const char *dir = pt_mkdtemp();
    cfg c;
    memset(&c, 0, sizeof c);
    c.aid = tc_create_api("nofollow");
    tc_register_coll(c.aid); /* buddy copies go through gather_and_execute */
    snprintf(c.fname, sizeof c.fname, "%s/ckpt.sion", dir);
    snprintf(c.link, sizeof c.link, "%s%s", c.fname, suffix);
    snprintf(c.target, sizeof c.target, "%s/victim", dir);
    plant(c.link, c.target);
    tc_run(4, wtask, &c);
    CHECK(intact(c.target), "%s: the link's target was written", c.link);
    CHECK(atomic_load(&c.named) >= 1, "%s: no task said it is a symbolic link", c.link);
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

static void test_file0(void) { run_link(""); }
static void test_member(void) { run_link(".000001"); }
static void test_buddy(void) { run_link("_BUDDY_00"); }
static void test_buddy_member(void) { run_link("_BUDDY_00.000001"); }

static void test_journals(void)
{
    const char *dir = pt_mkdtemp();
    cfg c;
    memset(&c, 0, sizeof c);
    c.aid = tc_create_api("nofollow-j");
    tc_register_coll(c.aid);
    c.plant_journal = 1;
    snprintf(c.fname, sizeof c.fname, "%s/ckpt.sion", dir);
    snprintf(c.link, sizeof c.link, "%s.000001", c.fname);
    snprintf(c.target, sizeof c.target, "%s/victim", dir);
    tc_run(4, wtask, &c);
    for (int k = 0; k < 2; k++) {
        char target[4400];
        snprintf(target, sizeof target, "%s-victim%d", c.target, k);
        CHECK(intact(target), "journal %d: the link's target was appended to", k);
    }
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"file0_link", test_file0},
                                    {"member_link", test_member},
                                    {"buddy_link", test_buddy},
                                    {"buddy_member_link", test_buddy_member},
                                    {"journal_links", test_journals}};
    return pt_main(tests, 5, argc, argv);
}
