/* test_par_agree.c - tasks that disagree on a value that must be the same
 * everywhere. For each such argument of a parallel open one task (task 2 of
 * 4) passes another value; the open must fail on EVERY task (sid -1,
 * SHEAF_E_ARG) with a message naming the disagreement ("the tasks disagree
 * on <what>: task 0 gives <x>, task 2 gives <y>"), never hang (threadcomm
 * ends the process on a hang) and run nothing beyond the first exchange
 * (1 global gather + 1 global bcast), and create no file. Covered:
 *   write: mode (wb vs rb), numFiles, fsblksize (4096 vs -1), keyval,
 *          checksum, collective, collsize, cmerge, buddy, endianness;
 *   read : mode (rb vs wb), keyval, collective, buddy;
 *   mapped: mode, numFiles, fsblksize.
 * Chunk sizes may differ per task (SIONlib too); a negative one is refused
 * on every task, 0 is accepted. */
#include "partest.h"

#define P 4
#define ODD 2 /* the task that disagrees */

typedef struct {
    int aid;
    const char *what;  /* expected in the message */
    const char *mode0; /* everybody else's mode */
    const char *mode1; /* task ODD's mode */
    int nf0, nf1;      /* numFiles (write) */
    int fs0, fs1;      /* fsblksize */
    int mapped;
    char fname[4200];
    int sid[P];
    int code[P];
    char msg[P][1024];
    tc_counts cnt[P];
} ctx;

static void task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    const char *mode = g == ODD ? c->mode1 : c->mode0;
    int nf = g == ODD ? c->nf1 : c->nf0;
    sion_int32 fsblk = g == ODD ? c->fs1 : c->fs0;
    sion_int64 chunk = 1000 + 100 * g; /* chunk sizes legitimately differ */
    tc_counts before = tc_counts_get();
    int sid;
    if (!c->mapped) {
        int fnum = nf > 1 ? g % 2 : 0, lsize = nf > 1 ? P / 2 : P, lrank = nf > 1 ? g / 2 : g;
        sid = sion_generic_paropen(c->aid, c->fname, mode, &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    } else {
        int n = 1, gr = g, fnr = nf > 1 ? g % 2 : 0, lr = nf > 1 ? g / 2 : 0;
        int *grp = &gr, *fnp = &fnr, *lrp = &lr;
        sion_int64 *chp = &chunk;
        if (strchr(mode, 'w') == NULL && nf > 1)
            lr = g; /* unused */
        sid = sion_generic_paropen_mapped(c->aid, c->fname, mode, &nf, t->world, g, P, &n, &grp, &chp, &fnp, &lrp,
                                          &fsblk, NULL);
        if (strchr(mode, 'r') && grp != &gr) /* a read hands back its own arrays on success only */
            free(grp);
    }
    c->cnt[g] = tc_counts_diff(tc_counts_get(), before);
    c->sid[g] = sid;
    c->code[g] = sheaf_last_error_code();
    snprintf(c->msg[g], sizeof c->msg[g], "%s", sheaf_last_error());
    if (sid >= 0)
        c->mapped ? sion_generic_parclose_mapped(sid) : sion_generic_parclose(sid);
}

static void run_case(int aid, const char *dir, const char *name, const char *what, const char *m0, const char *m1,
                     int nf0, int nf1, int fs0, int fs1, int mapped, const char *existing)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    c->what = what;
    c->mode0 = m0;
    c->mode1 = m1;
    c->nf0 = nf0, c->nf1 = nf1, c->fs0 = fs0, c->fs1 = fs1;
    c->mapped = mapped;
    snprintf(c->fname, sizeof c->fname, "%s/%s", dir, existing ? existing : name);
    printf("  %-28s %s / %s\n", name, m0, m1);
    tc_run(P, task, c);
    for (int g = 0; g < P; g++) {
        pt_rank = g;
        CHECK(c->sid[g] < 0, "%s: the open succeeded on task %d", name, g);
        CHECK(c->code[g] == SHEAF_E_ARG, "%s: error code %d on task %d", name, c->code[g], g);
        CHECK(strstr(c->msg[g], "disagree on") && strstr(c->msg[g], what), "%s: message on task %d: %s", name, g,
              c->msg[g]);
        char want[64];
        snprintf(want, sizeof want, "task %d", ODD);
        CHECK(strstr(c->msg[g], want) != NULL, "%s: message does not name task %d: %s", name, ODD, c->msg[g]);
        tc_counts e;
        memset(&e, 0, sizeof e);
        e.n[TC_GLOBAL][TC_GATHER] = 1;
        e.n[TC_GLOBAL][TC_BCAST] = 1;
        char s[256];
        tc_counts_str(&c->cnt[g], s, sizeof s);
        CHECK(!memcmp(&e, &c->cnt[g], sizeof e),
              "%s: collectives on task %d: %s (expected 1 global gather + 1 "
              "global bcast)",
              name, g, s);
    }
    pt_rank = -1;
    if (!existing) {
        char f1[4300];
        pt_member(f1, sizeof f1, c->fname, 1);
        CHECK(!pt_exists(c->fname) && !pt_exists(f1), "%s: a refused open created a file", name);
    }
    CHECK(tc_last_leaked() == 0, "%s: %d local groups leaked", name, tc_last_leaked());
    free(c);
}

/* a container to read: 4 tasks, 1 file */
typedef struct {
    char f[4200];
    int aid;
} wctx;
static void writer(tc_task *t)
{
    const wctx *w = t->arg;
    const char *fname = w->f;
    int g = t->grank;
    pt_rank = g;
    int fnum = 0, nf = 1, lrank = g, lsize = P;
    sion_int64 chunk = 100;
    sion_int32 fsblk = 4096;
    int sid = sion_generic_paropen(w->aid, fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (CHECK(sid >= 0, "writer: %s", sheaf_last_error())) {
        CHECK(sion_fwrite("abc", 1, 3, sid) == 3, "fwrite");
        CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close");
    }
}

static void test_disagreements(void)
{
    int aid = tc_create_api("agree");
    const char *dir = pt_mkdtemp();
    printf("  write opens\n");
    run_case(aid, dir, "w.mode", "the file mode (read or write): task 0 gives writing, task 2 gives reading", "wb",
             "rb", 1, 1, 4096, 4096, 0, NULL);
    run_case(aid, dir, "w.numfiles", "the number of files (numFiles): task 0 gives 2, task 2 gives 1", "wb", "wb", 2, 1,
             4096, 4096, 0, NULL);
    run_case(aid, dir, "w.fsblksize", "(fsblksize): task 0 gives 4096, task 2 gives -1 (detect)", "wb", "wb", 1, 1,
             4096, -1, 0, NULL);
    run_case(aid, dir, "w.keyval", "the key-value mode (keyval)", "wb", "wb,keyval=inline", 1, 1, 4096, 4096, 0, NULL);
    run_case(aid, dir, "w.checksum", "checksums (checksum): task 0 gives off, task 2 gives on", "wb", "wb,checksum", 1,
             1, 4096, 4096, 0, NULL);
    run_case(aid, dir, "w.collective", "coalescing I/O (collective): task 0 gives on, task 2 gives off",
             "wb,collective", "wb", 1, 1, 4096, 4096, 0, NULL);
    run_case(aid, dir, "w.collsize", "the collector group size (collsize): task 0 gives 2, task 2 gives 4",
             "wb,collective,collsize=2", "wb,collective,collsize=4", 1, 1, 4096, 4096, 0, NULL);
    run_case(aid, dir, "w.cmerge", "merged coalescing (cmerge)", "wb,collsize=2", "wb,collsize=2,cmerge", 1, 1, 4096,
             4096, 0, NULL);
    run_case(aid, dir, "w.buddy", "buddy copies (buddy): task 0 gives 1, task 2 gives 2", "wb,buddy", "wb,buddy=2", 1,
             1, 4096, 4096, 0, NULL);
    run_case(aid, dir, "w.endianness", "the data endianness (endianness): task 0 gives big, task 2 gives little",
             "wb,endianness=big", "wb,endianness=little", 1, 1, 4096, 4096, 0, NULL);

    printf("  read opens (of a 4-task container)\n");
    wctx wa;
    snprintf(wa.f, sizeof wa.f, "%s/cont", dir);
    wa.aid = aid;
    tc_run(P, writer, &wa);
    run_case(aid, dir, "r.mode", "the file mode (read or write): task 0 gives reading, task 2 gives writing", "rb",
             "wb", 1, 1, 4096, 4096, 0, "cont");
    run_case(aid, dir, "r.keyval", "the key-value mode (keyval)", "rb", "rb,keyval=none", 1, 1, 0, 0, 0, "cont");
    run_case(aid, dir, "r.collective", "coalescing I/O (collective)", "rb,collective", "rb", 1, 1, 0, 0, 0, "cont");
    run_case(aid, dir, "r.buddy", "buddy copies (buddy)", "rb", "rb,buddy", 1, 1, 0, 0, 0, "cont");
    CHECK(pt_fsize(wa.f) > 0, "the container was damaged by the refused opens");

    printf("  mapped opens\n");
    run_case(aid, dir, "m.mode", "the file mode (read or write): task 0 opens for writing, task 2 for reading", "wb",
             "rb", 1, 1, 4096, 4096, 1, NULL);
    run_case(aid, dir, "m.numfiles", "the number of files (numFiles): task 0 gives 2, task 2 gives 1", "wb", "wb", 2, 1,
             4096, 4096, 1, NULL);
    run_case(aid, dir, "m.fsblksize", "(fsblksize): task 0 gives 4096, task 2 gives 512", "wb", "wb", 1, 1, 4096, 512,
             1, NULL);
    pt_rmtree(dir);
    sion_generic_free_api(aid);
}

/* chunk sizes: different per task is fine (and 0); negative is refused on all */
typedef struct {
    int aid;
    char fname[4200];
    sion_int64 chunk[P];
    int sid[P];
    char msg[P][1024];
} cctx;

static void chunk_task(tc_task *t)
{
    cctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fnum = 0, nf = 1, lrank = g, lsize = P;
    sion_int64 chunk = c->chunk[g];
    sion_int32 fsblk = 4096;
    c->sid[g] = sion_generic_paropen(c->aid, c->fname, "wb", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                     NULL, NULL);
    snprintf(c->msg[g], sizeof c->msg[g], "%s", sheaf_last_error());
    if (c->sid[g] >= 0)
        CHECK(sion_generic_parclose(c->sid[g]) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

static void test_chunks(void)
{
    int aid = tc_create_api("agree-chunks");
    const char *dir = pt_mkdtemp();
    cctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    snprintf(c->fname, sizeof c->fname, "%s/chunks", dir);
    sion_int64 ok[P] = {0, 1, 5000, 100000};
    memcpy(c->chunk, ok, sizeof ok);
    tc_run(P, chunk_task, c);
    for (int g = 0; g < P; g++)
        CHECK(c->sid[g] >= 0, "task %d: chunk sizes 0/1/5000/100000 refused: %s", g, c->msg[g]);
    sion_int64 bad[P] = {100, 100, -5, 100};
    memcpy(c->chunk, bad, sizeof bad);
    snprintf(c->fname, sizeof c->fname, "%s/negative", dir);
    tc_run(P, chunk_task, c);
    for (int g = 0; g < P; g++) {
        CHECK(c->sid[g] < 0, "task %d: a negative chunk size on task 2 was accepted", g);
        CHECK(strstr(c->msg[g], g == 2 ? "negative chunk size -5 on task 2" : "sion_generic_paropen failed on task 2"),
              "task %d: message %s", g, c->msg[g]);
    }
    free(c);
    pt_rmtree(dir);
    sion_generic_free_api(aid);
}

int main(int argc, char **argv)
{
    pt_test tests[] = {{"disagreements", test_disagreements}, {"chunk_sizes", test_chunks}};
    return pt_main(tests, 2, argc, argv);
}
