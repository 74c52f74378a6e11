/* test_par_fsblk.c - the file system block size of a parallel write open
 * (generic API, 3 tasks; plain and mapped opens): 1 GiB and 32 MiB + 1 (above
 * SIONlib's SION_MAX_FSBLOCKSIZE, 32 MiB) fail on every
 * task, each task that was given the value with a message naming the file and
 * saying what is wrong, and no file is created; a value given by one task only
 * fails the open everywhere too; 65536, 10, 2500 (SIONlib's tests use sizes
 * that are not powers of two) and -1 (detect) are accepted. */
#include "partest.h"
#include "sheaf.h"

#define P 3
typedef struct cfg {
    int aid, mapped, ok;
    sion_int32 fsb[P];
    char fname[4200];
    const char *want; /* in the message of a task given a bad value */
} cfg;

static void task(tc_task *t)
{
    cfg *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    sion_int32 fsb = c->fsb[g];
    FILE *fp = NULL;
    int sid;
    if (c->mapped) {
        int nl = 1, gr = g, fnr = 0, lr = g, numfiles = 1, *pg = &gr, *pf = &fnr, *pl = &lr;
        sion_int64 cs = 1000, *pc = &cs;
        sid = sion_generic_paropen_mapped(c->aid, c->fname, "bw", &numfiles, t->world, g, P, &nl, &pg, &pc, &pf, &pl,
                                          &fsb, &fp);
    } else {
        int fn = 0, nf = 1, lr = g, ls = P;
        sion_int64 chunk = 1000;
        sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsb, t->world, g, P, &fn, &nf, &lr, &ls, &fp, NULL);
    }
    if (c->ok) {
        if (CHECK(sid >= 0, "open with fsblksize %d: %s", (int)c->fsb[g], sheaf_last_error())) {
            CHECK(c->fsb[g] > 0 ? fsb == c->fsb[g] : fsb > 0 && (fsb & (fsb - 1)) == 0,
                  "fsblksize %d given, %d written back", (int)c->fsb[g], (int)fsb);
            CHECK((c->mapped ? sion_generic_parclose_mapped(sid) : sion_generic_parclose(sid)) == SION_SUCCESS,
                  "close: %s", sheaf_last_error());
        }
        return;
    }
    CHECK(sid < 0, "open with fsblksize %d succeeded", (int)c->fsb[g]);
    const char *e = sheaf_last_error();
    CHECK(strstr(e, c->fname) != NULL, "message names no file: %s", e);
    if (c->fsb[g] != -1) /* given the bad value: the full message; the others: the collective failure */
        CHECK(strstr(e, c->want) != NULL, "message \"%s\" lacks \"%s\"", e, c->want);
    if (sid >= 0)
        c->mapped ? sion_generic_parclose_mapped(sid) : sion_generic_parclose(sid);
}

static void run(int mapped, sion_int32 v0, sion_int32 v, int ok, const char *want)
{
    const char *dir = pt_mkdtemp();
    cfg c;
    memset(&c, 0, sizeof c);
    c.aid = tc_create_api("fsblk");
    c.mapped = mapped;
    c.ok = ok;
    c.want = want;
    c.fsb[0] = v0;
    for (int g = 1; g < P; g++)
        c.fsb[g] = v;
    snprintf(c.fname, sizeof c.fname, "%s/f.sion", dir);
    tc_run(P, task, &c);
    CHECK(ok == pt_exists(c.fname), "fsblksize %d/%d: container %s", (int)v0, (int)v, ok ? "missing" : "created");
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

static void test_plain(void)
{
    run(0, (1 << 25) + 1, (1 << 25) + 1, 0, "file system block size 33554433 is larger than 33554432 bytes");
    run(0, 1 << 30, 1 << 30, 0, "file system block size 1073741824 is larger than 33554432 bytes");
    run(0, -1, 1 << 30, 0, "file system block size 1073741824 is larger"); /* tasks 1, 2 only */
    run(0, 65536, 65536, 1, NULL);
    run(0, 10, 10, 1, NULL);
    run(0, 2500, 2500, 1, NULL);
    run(0, -1, -1, 1, NULL);
}

static void test_mapped(void)
{
    run(1, (1 << 25) + 1, (1 << 25) + 1, 0, "is larger than 33554432 bytes");
    run(1, 10, 10, 1, NULL);
    run(1, 1 << 30, 1 << 30, 0, "is larger than 33554432 bytes");
    run(1, 65536, 65536, 1, NULL);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"plain", test_plain}, {"mapped", test_mapped}};
    return pt_main(tests, 2, argc, argv);
}
