/* test_par_errors.c - a failure on one task is a failure on every task.
 *
 * sion_generic.h: "a failure on any task (bad argument, file not creatable,
 * I/O error) becomes a failure of the call on every task of the global
 * group; no task is left waiting in a collective." Each case runs P threads;
 * every task must get -1 (a hang is reported by threadcomm after TC_TIMEOUT
 * seconds), with a message (sheaf_last_error) where the brief says what it
 * names. After each failure, a good open on the same API must work (the
 * failure left no state behind). */
#include "partest.h"

enum {
    BAD_NONE,
    BAD_NEGCHUNK,
    BAD_NODIR,
    BAD_MODE,
    BAD_FNUM_RANGE,
    BAD_DUP_LRANK,
    BAD_NUMFILES,
    BAD_LSIZE,
    BAD_NOFILE
};
static const char *const bad_names[] = {"none",
                                        "negative chunk size on the last task",
                                        "directory does not exist",
                                        "mode without w or r",
                                        "filenumber out of range on one task",
                                        "two tasks with the same lrank",
                                        "numfiles differs on one task",
                                        "lsize disagrees with the number of tasks in the file",
                                        "read of a file that does not exist"};

#define MAXP 8
typedef struct {
    int aid, nfiles, bad;
    char fname[4400];
    const char *mode;
    int sid[MAXP];
    char msg[MAXP][1024];
} ctx;

static unsigned char *tu_read_file_pt(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void open_task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nf = c->nfiles, fnum = g % nf, lrank = g / nf, lsize = (P - fnum + nf - 1) / nf;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    const char *mode = c->mode ? c->mode : "bw";
    if (c->bad == BAD_NEGCHUNK && g == P - 1)
        chunk = -5;
    if (c->bad == BAD_FNUM_RANGE && g == P - 1)
        fnum = nf;
    if (c->bad == BAD_DUP_LRANK && g == P - 1)
        lrank = 0;
    if (c->bad == BAD_NUMFILES && g == 0)
        nf = c->nfiles + 1;
    if (c->bad == BAD_LSIZE)
        lsize += 1;
    FILE *fp = NULL;
    sion_int64 *pc = &chunk;
    sion_int32 *pf = &fsblk;
    int rd = strchr(mode, 'r') != NULL;
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    int sid = rd ? sion_generic_paropen(c->aid, c->fname, mode, pc, pf, t->world, g, P, &rf, &rnf, &rl, &rs, &fp, NULL)
                 : sion_generic_paropen(c->aid, c->fname, mode, pc, pf, t->world, g, P, &fnum, &nf, &lrank, &lsize, &fp,
                                        NULL);
    c->sid[g] = sid;
    snprintf(c->msg[g], sizeof c->msg[g], "%s", sid < 0 ? sheaf_last_error() : "");
    if (sid >= 0) {
        if (!rd) {
            unsigned char b[100];
            pt_fill(b, 1, g, 0, sizeof b);
            CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b, "fwrite: %s", sheaf_last_error());
        }
        CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose: %s", sheaf_last_error());
    }
}

/* Run one open with P tasks; returns the number of tasks that got a sid. */
static int run_open(int aid, int P, int nfiles, int bad, const char *fname, const char *mode, ctx **out)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    c->nfiles = nfiles;
    c->bad = bad;
    c->mode = mode;
    snprintf(c->fname, sizeof c->fname, "%s", fname);
    tc_run(P, open_task, c);
    int ok = 0;
    for (int g = 0; g < P; g++)
        ok += c->sid[g] >= 0;
    *out = c;
    return ok;
}

/* every task failed, each with a non-empty message containing `needle` (if given) */
static void expect_all_fail(ctx *c, int P, const char *what, const char *needle)
{
    int ok = 0;
    for (int g = 0; g < P; g++)
        ok += c->sid[g] >= 0;
    CHECK(ok == 0, "%s: %d of %d tasks got a sid (expected -1 on every task)", what, ok, P);
    for (int g = 0; g < P; g++) {
        if (c->sid[g] >= 0)
            continue;
        CHECK(c->sid[g] == -1, "%s: task %d returned %d, expected -1", what, g, c->sid[g]);
        CHECK(c->msg[g][0], "%s: task %d failed without a message (sheaf_last_error is empty)", what, g);
        if (needle)
            CHECK(strstr(c->msg[g], needle) != NULL, "%s: message of task %d does not mention \"%s\": \"%s\"", what, g,
                  needle, c->msg[g]);
    }
}

static void good_open_after(int aid, int P, int nfiles, const char *dir, const char *after)
{
    char f[4200];
    snprintf(f, sizeof f, "%s/good_after.sion", dir);
    ctx *c;
    int ok = run_open(aid, P, nfiles, BAD_NONE, f, "bw", &c);
    CHECK(ok == P, "a good write open after \"%s\" failed on %d of %d tasks (%s)", after, P - ok, P, c->msg[0]);
    free(c);
    ok = run_open(aid, P, nfiles, BAD_NONE, f, "br", &c);
    CHECK(ok == P, "a good read open after \"%s\" failed on %d of %d tasks (%s)", after, P - ok, P, c->msg[0]);
    free(c);
}

static void test_bad_arguments(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-err");
    static const int cases[] = {BAD_NEGCHUNK, BAD_FNUM_RANGE, BAD_DUP_LRANK, BAD_NUMFILES, BAD_LSIZE};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int nf = 1; nf <= 2; nf++) {
            int P = 4;
            char f[4200], what[256];
            snprintf(f, sizeof f, "%s/bad%d_nf%d.sion", dir, cases[i], nf);
            snprintf(what, sizeof what, "%s (P=%d, %d file(s))", bad_names[cases[i]], P, nf);
            ctx *c;
            run_open(aid, P, nf, cases[i], f, "bw", &c);
            expect_all_fail(c, P, what, NULL);
            printf("  %s: message on task 0: %s\n", what, c->msg[0]);
            free(c);
            good_open_after(aid, P, nf, dir, what);
        }
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void test_no_directory(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-err");
    for (int nf = 1; nf <= 2; nf++) {
        int P = 3;
        char f[4200], what[256];
        snprintf(f, sizeof f, "%s/no/such/dir/f.sion", dir);
        snprintf(what, sizeof what, "write into a missing directory (P=%d, %d file(s))", P, nf);
        ctx *c;
        run_open(aid, P, nf, BAD_NODIR, f, "bw", &c);
        expect_all_fail(c, P, what, f);
        printf("  %s: message on task 1: %s\n", what, c->msg[1]);
        free(c);
        /* read of a missing file: same agreement */
        snprintf(f, sizeof f, "%s/missing.sion", dir);
        snprintf(what, sizeof what, "read of a missing file (P=%d)", P);
        /* each task's SION_ERROR_RETURN line shows rc=-1, the value the open
         * returns (as SIONlib), not sheaf's error class of the failure */
        char errf[4300], out[8192];
        snprintf(errf, sizeof errf, "%s/stderr.txt", dir);
        int old = sheaf_set_error_printing(1), saved = dup(2);
        fflush(stderr);
        FILE *ef = fopen(errf, "w");
        CHECK(ef && dup2(fileno(ef), 2) == 2, "redirect stderr");
        fclose(ef);
        run_open(aid, P, nf, BAD_NOFILE, f, "br", &c);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        sheaf_set_error_printing(old);
        ef = fopen(errf, "r");
        size_t k = ef ? fread(out, 1, sizeof out - 1, ef) : 0;
        out[k] = '\0';
        if (ef)
            fclose(ef);
        CHECK(strstr(out, "rc=-1") && !strstr(out, "rc=-6") && !strstr(out, "rc=-2"),
              "%s: printed rc is not the returned -1:\n%s", what, out);
        expect_all_fail(c, P, what, f);
        free(c);
        good_open_after(aid, P, nf, dir, what);
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void test_bad_mode(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-err");
    static const char *const modes[] = {"ansi", "posix,keyval", "", "x"};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        char f[4200], what[256];
        snprintf(f, sizeof f, "%s/mode%zu.sion", dir, i);
        snprintf(what, sizeof what, "mode \"%s\" (no w or r)", modes[i]);
        ctx *c;
        run_open(aid, 3, 1, BAD_MODE, f, modes[i], &c);
        expect_all_fail(c, 3, what, NULL);
        CHECK(!pt_exists(f), "%s: the file was created", what);
        free(c);
    }
    good_open_after(aid, 3, 1, dir, "bad modes");
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void test_wrong_task_count(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-err");
    for (int nf = 1; nf <= 2; nf++) {
        char f[4200];
        snprintf(f, sizeof f, "%s/four_nf%d.sion", dir, nf);
        ctx *c;
        int ok = run_open(aid, 4, nf, BAD_NONE, f, "bw", &c);
        CHECK(ok == 4, "writing with 4 tasks failed: %s", c->msg[0]);
        free(c);
        static const int Ps[] = {3, 5, 1};
        for (size_t i = 0; i < 3; i++) {
            char what[256];
            snprintf(what, sizeof what, "read of a %d-task, %d-file container with %d tasks", 4, nf, Ps[i]);
            run_open(aid, Ps[i], nf, BAD_NONE, f, "br", &c);
            expect_all_fail(c, Ps[i], what, "mapped");
            printf("  %s: message on task 0: %s\n", what, c->msg[0]);
            free(c);
        }
        ok = run_open(aid, 4, nf, BAD_NONE, f, "br", &c);
        CHECK(ok == 4, "reading with the right number of tasks failed: %s", c->msg[0]);
        free(c);
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* damaged or wrong sets: every task fails, with a message naming the file */
static void test_damaged(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-err");
    char f[4200], m1[4300], m2[4300];
    snprintf(f, sizeof f, "%s/dmg.sion", dir);
    pt_member(m1, sizeof m1, f, 1);
    pt_member(m2, sizeof m2, f, 2);
    ctx *c;
    CHECK(run_open(aid, 6, 3, BAD_NONE, f, "bw", &c) == 6, "write: %s", c->msg[0]);
    free(c);

    /* a member opened as if it were the set */
    run_open(aid, 2, 1, BAD_NONE, m1, "br", &c);
    expect_all_fail(c, 2, "parallel read of member 1 of a 3-file set", m1);
    printf("  member opened as the set: %s\n", c->msg[0]);
    free(c);

    /* member 2 truncated, then missing */
    size_t len;
    unsigned char *d = tu_read_file_pt(m2, &len);
    if (CHECK(d && len > 100, "read %s", m2)) {
        FILE *fh = fopen(m2, "wb");
        fwrite(d, 1, 60, fh);
        fclose(fh);
        run_open(aid, 6, 3, BAD_NONE, f, "br", &c);
        expect_all_fail(c, 6, "read with member 2 truncated to 60 bytes", NULL);
        printf("  truncated member: task 2: %s\n", c->msg[2]);
        free(c);
        unlink(m2);
        run_open(aid, 6, 3, BAD_NONE, f, "br", &c);
        expect_all_fail(c, 6, "read with member 2 missing", NULL);
        int named = 0;
        for (int g = 0; g < 6; g++)
            named += strstr(c->msg[g], ".000002") != NULL;
        CHECK(named > 0, "read with member 2 missing: no task's message names %s (task 0: %s)", m2, c->msg[0]);
        printf("  missing member: task 2: %s\n", c->msg[2]);
        free(c);
    }
    free(d);

    /* not a container */
    char junk[4300];
    snprintf(junk, sizeof junk, "%s/junk.sion", dir);
    FILE *fh = fopen(junk, "wb");
    for (int i = 0; i < 5000; i++)
        fputc(i * 7 & 255, fh);
    fclose(fh);
    run_open(aid, 3, 1, BAD_NONE, junk, "br", &c);
    expect_all_fail(c, 3, "read of a file that is not a container", junk);
    free(c);
    good_open_after(aid, 3, 2, dir, "damaged sets");
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"bad_arguments", test_bad_arguments},
                                    {"missing_directory_and_file", test_no_directory},
                                    {"mode_without_w_or_r", test_bad_mode},
                                    {"read_with_other_task_count", test_wrong_task_count},
                                    {"damaged_sets", test_damaged}};
    return pt_main(tests, 5, argc, argv);
}
