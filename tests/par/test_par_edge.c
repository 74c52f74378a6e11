/* test_par_edge.c - edge cases of the generic parallel API:
 *  - chunk size 0 (allowed: ">= 0") on some tasks;
 *  - two containers open at the same time in the same group, their
 *    collectives interleaved;
 *  - overwriting an existing set with fewer files / tasks;
 *  - different fsblksize values on different tasks (one value must win);
 *  - chunk sizes above 2^31 (64-bit values through the collectives; sparse);
 *  - 32 tasks;
 *  - parreinit with a bad size on one task: all refuse, the sid still closes;
 *  - bad grank/gsize. */
#include "partest.h"
#include <pthread.h>

typedef struct {
    int aid, nfiles, variant;
    char fname[4200], fname2[4200];
    sion_int32 fsblk_seen[64];
    int rc[64];
} ctx;

static int split_open(ctx *c, tc_task *t, const char *fname, const char *mode, sion_int64 *chunk, sion_int32 *fsblk)
{
    int g = t->grank, P = t->gsize;
    int nf = c->nfiles, fnum = g % nf, lrank = g / nf, lsize = (P - fnum + nf - 1) / nf;
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    if (strchr(mode, 'r'))
        return sion_generic_paropen(c->aid, fname, mode, chunk, fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, NULL, NULL);
    return sion_generic_paropen(c->aid, fname, mode, chunk, fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize, NULL,
                                NULL);
}

static void write_read(ctx *c, tc_task *t, const char *fname, sion_int64 chunk_req, sion_int32 fsblk_req, size_t n,
                       unsigned salt)
{
    int g = t->grank;
    sion_int64 chunk = chunk_req;
    sion_int32 fsblk = fsblk_req;
    int sid = split_open(c, t, fname, "bw", &chunk, &fsblk);
    if (!CHECK(sid >= 0, "write open (chunk %lld, fsblk %d): %s", chunk_req, fsblk_req, sheaf_last_error()))
        return;
    unsigned char *b = malloc(n + 1);
    pt_fill(b, salt, g, 0, n);
    if (n)
        CHECK(sion_fwrite(b, 1, n, sid) == n, "fwrite %zu (chunk %lld): %s", n, chunk, sheaf_last_error());
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose: %s", sheaf_last_error());
    sion_int64 rchunk = 0;
    sion_int32 rfs = 0;
    sid = split_open(c, t, fname, "br", &rchunk, &rfs);
    if (CHECK(sid >= 0, "read open: %s", sheaf_last_error())) {
        /* the write open left chunk as given (SIONlib); the file holds it rounded up to fsblk */
        sion_int64 al = fsblk > 0 ? (chunk + fsblk - 1) / fsblk * fsblk : chunk;
        CHECK(rchunk == al, "read chunksize %lld, written %lld (%lld aligned)", rchunk, chunk, al);
        memset(b, 0, n + 1);
        if (n)
            CHECK(sion_fread(b, 1, n, sid) == n && pt_mismatch(b, salt, g, 0, n) < 0, "data differ: %s",
                  sheaf_last_error());
        CHECK(sion_feof(sid) == 1, "not at eof after %zu bytes", n);
        CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read: %s", sheaf_last_error());
    }
    free(b);
}

/* chunk 0 on odd tasks (they write nothing) */
static void t_chunk0(tc_task *t)
{
    ctx *c = t->arg;
    pt_rank = t->grank;
    int odd = t->grank & 1;
    write_read(c, t, c->fname, odd ? 0 : 5000, 4096, odd ? 0 : 9000, 1);
}

/* a task with chunk 0 that writes: refused or stored, but never a hang */
static void t_chunk0_write(tc_task *t)
{
    ctx *c = t->arg;
    pt_rank = t->grank;
    sion_int64 chunk = t->grank == 0 ? 0 : 4096;
    sion_int32 fsblk = 4096;
    int sid = split_open(c, t, c->fname, "bw", &chunk, &fsblk);
    if (!CHECK(sid >= 0, "write open: %s", sheaf_last_error()))
        return;
    unsigned char b[100];
    pt_fill(b, 2, t->grank, 0, sizeof b);
    size_t w = sion_fwrite(b, 1, sizeof b, sid);
    if (t->grank == 0)
        printf("  chunk 0 (written back as %lld): fwrite of 100 bytes returned %zu%s%s\n", chunk, w, w ? "" : ": ",
               w ? "" : sheaf_last_error());
    else
        CHECK(w == sizeof b, "fwrite: %s", sheaf_last_error());
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose: %s", sheaf_last_error());
}

/* two containers open at once; collectives of A and B interleave */
static void t_two_open(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    sion_int64 ca = 3000, cb = 6000;
    sion_int32 fa = 4096, fb = 4096;
    int a = split_open(c, t, c->fname, "bw", &ca, &fa);
    int b = split_open(c, t, c->fname2, "bw", &cb, &fb);
    if (!CHECK(a >= 0 && b >= 0 && a != b, "two opens: sids %d and %d: %s", a, b, sheaf_last_error()))
        return;
    unsigned char buf[10000];
    pt_fill(buf, 10, g, 0, 7000);
    CHECK(sion_fwrite(buf, 1, 7000, a) == 7000, "write A");
    pt_fill(buf, 20, g, 0, 9000);
    CHECK(sion_fwrite(buf, 1, 9000, b) == 9000, "write B");
    CHECK(sion_generic_parclose(a) == SION_SUCCESS, "close A: %s", sheaf_last_error());
    sion_int64 rc = 0;
    sion_int32 rf = 0;
    a = split_open(c, t, c->fname, "br", &rc, &rf); /* read A while B is still open for writing */
    CHECK(sion_generic_parclose(b) == SION_SUCCESS, "close B: %s", sheaf_last_error());
    b = split_open(c, t, c->fname2, "br", &rc, &rf);
    if (!CHECK(a >= 0 && b >= 0, "read opens: %d %d: %s", a, b, sheaf_last_error()))
        return;
    CHECK(sion_fread(buf, 1, 9000, b) == 9000 && pt_mismatch(buf, 20, g, 0, 9000) < 0, "read B");
    CHECK(sion_fread(buf, 1, 7000, a) == 7000 && pt_mismatch(buf, 10, g, 0, 7000) < 0, "read A");
    CHECK(sion_generic_parclose(b) == SION_SUCCESS, "close B read");
    CHECK(sion_generic_parclose(a) == SION_SUCCESS, "close A read");
}

static void t_overwrite(tc_task *t)
{
    ctx *c = t->arg;
    pt_rank = t->grank;
    write_read(c, t, c->fname, 4096, 4096, 3000 + 100 * (size_t)t->grank, (unsigned)c->variant);
}

/* different fsblksize per task (4096 / 512 / -1): refused on every task,
 * naming the disagreement (SIONlib hangs; sheaf used to take task 0's) */
static void t_fsblk_mix(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    sion_int64 chunk = 5000;
    sion_int32 fsblk = g == 0 ? 4096 : (g == 1 ? 512 : -1);
    int sid = split_open(c, t, c->fname, "bw", &chunk, &fsblk);
    c->fsblk_seen[g] = sid >= 0 ? fsblk : -99;
    if (sid >= 0) {
        CHECK(0, "write open with mixed fsblksize succeeded");
        sion_generic_parclose(sid);
        return;
    }
    CHECK(strstr(sheaf_last_error(), "disagree on the file system block size (fsblksize): task 0 gives 4096, "
                                     "task 1 gives 512") != NULL,
          "message: %s", sheaf_last_error());
    CHECK(sheaf_last_error_code() == SHEAF_E_ARG, "code %d", sheaf_last_error_code());
}

static void t_huge_chunk(tc_task *t)
{
    ctx *c = t->arg;
    pt_rank = t->grank;
    write_read(c, t, c->fname, (sion_int64)5 << 29, 4096, 1000 + (size_t)t->grank, 4); /* 2.5 GiB chunks */
}

static void t_many(tc_task *t)
{
    ctx *c = t->arg;
    pt_rank = t->grank;
    write_read(c, t, c->fname, 1000 + 10 * t->grank, -1, 3000 + 17 * (size_t)t->grank, 5);
}

/* parreinit refused (chunk -1 on the last task, in file 1): a call that fails
 * on every task must not have been applied anywhere: every task keeps its
 * chunk size (8192) and the 50 bytes it wrote before */
static void t_reinit_bad(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    sion_int64 chunk = 8192;
    sion_int32 fsblk = 4096;
    int sid = split_open(c, t, c->fname, "bw", &chunk, &fsblk);
    if (!CHECK(sid >= 0, "write open: %s", sheaf_last_error()))
        return;
    unsigned char b[150];
    pt_fill(b, 6, g, 0, sizeof b);
    CHECK(sion_fwrite(b, 1, 50, sid) == 50, "fwrite before the reinit: %s", sheaf_last_error());
    int rc = sion_generic_parreinit(sid, g == t->gsize - 1 ? -1 : 4096);
    c->rc[g] = rc;
    CHECK(rc == SION_NOT_SUCCESS, "parreinit with -1 on the last task returned %d on this task", rc);
    CHECK(sion_get_bytes_written(sid) == 50, "after a refused parreinit this task's bytes written are %lld (was 50)",
          sion_get_bytes_written(sid));
    CHECK(sion_fwrite(b + 50, 1, 100, sid) == 100, "fwrite after a refused reinit: %s", sheaf_last_error());
    rc = sion_generic_parclose(sid);
    CHECK(rc == SION_SUCCESS, "parclose after a refused reinit returned %d: %s", rc, sheaf_last_error());
    sion_int64 rchunk = 0;
    sion_int32 rfs = 0;
    sid = split_open(c, t, c->fname, "br", &rchunk, &rfs);
    if (CHECK(sid >= 0, "read after a refused reinit: %s", sheaf_last_error())) {
        unsigned char r[150];
        size_t n = sion_fread(r, 1, sizeof r, sid);
        CHECK(n == sizeof r && pt_mismatch(r, 6, g, 0, sizeof r) < 0,
              "after a refused parreinit (file %d): read %zu of the 150 bytes written (50 before, 100 after) "
              "with chunk %lld (open: 8192, refused reinit: 4096)",
              g % 2, n, rchunk);
        CHECK(rchunk == 8192, "after a refused parreinit, file %d has chunk size %lld (expected the open's 8192)",
              g % 2, rchunk);
        CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read");
    }
}

static void t_bad_rank(tc_task *t)
{
    ctx *c = t->arg;
    pt_rank = t->grank;
    sion_int64 chunk = 100;
    sion_int32 fsblk = 4096;
    int z = 0, one = 1, bad = 5;
    int sid =
        sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, 7, 3, &z, &one, &bad, &one, NULL, NULL);
    CHECK(sid == -1, "grank 7 of gsize 3 accepted (%d)", sid);
    sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, 0, 0, &z, &one, &z, &one, NULL, NULL);
    CHECK(sid == -1, "gsize 0 accepted (%d)", sid);
}

static ctx *mk(int aid, const char *dir, const char *name, int nf)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    c->nfiles = nf;
    snprintf(c->fname, sizeof c->fname, "%s/%s", dir, name);
    snprintf(c->fname2, sizeof c->fname2, "%s/%s.second", dir, name);
    return c;
}

static void test_edge(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-edge");
    ctx *c;

    printf("  chunk size 0 on odd tasks\n");
    for (int nf = 1; nf <= 2; nf++) {
        c = mk(aid, dir, nf == 1 ? "chunk0a" : "chunk0b", nf);
        tc_run(4, t_chunk0, c);
        free(c);
    }
    c = mk(aid, dir, "chunk0w", 1);
    tc_run(3, t_chunk0_write, c);
    free(c);

    printf("  two containers open at once\n");
    for (int nf = 1; nf <= 2; nf++) {
        c = mk(aid, dir, nf == 1 ? "twoA1" : "twoA2", nf);
        tc_run(5, t_two_open, c);
        free(c);
    }

    printf("  overwrite a 3-file set of 6 tasks by a 2-file set, then by 1 file of 3 tasks\n");
    c = mk(aid, dir, "over", 3);
    c->variant = 7;
    tc_run(6, t_overwrite, c);
    c->nfiles = 2;
    c->variant = 8;
    tc_run(6, t_overwrite, c);
    c->nfiles = 1;
    c->variant = 9;
    tc_run(3, t_overwrite, c);
    free(c);

    printf("  fsblksize 4096 / 512 / -1 on different tasks: refused on all\n");
    c = mk(aid, dir, "fsmix", 1);
    tc_run(4, t_fsblk_mix, c);
    for (int g = 0; g < 4; g++)
        CHECK(c->fsblk_seen[g] == -99, "task %d opened with fsblksize %d", g, c->fsblk_seen[g]);
    free(c);

    printf("  2.5 GiB chunks (sparse file)\n");
    c = mk(aid, dir, "huge", 1);
    tc_run(3, t_huge_chunk, c);
    free(c);

    printf("  32 tasks, 4 files; 64 tasks, 64 files\n");
    c = mk(aid, dir, "many", 4);
    tc_run(32, t_many, c);
    free(c);
    c = mk(aid, dir, "many64", 64);
    tc_run(64, t_many, c);
    free(c);

    c = mk(aid, dir, "badrank", 1);
    tc_run(1, t_bad_rank, c);
    free(c);

    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

static void test_refused_reinit(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-edge-reinit");
    ctx *c = mk(aid, dir, "reinitbad", 2);
    tc_run(4, t_reinit_bad, c);
    free(c);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* API objects created, filled and freed by many threads while opens run on
 * another API (sion_generic.h: "API objects may be created and used from
 * several threads") */
static atomic_int api_stop;
static void *api_churn(void *p)
{
    (void)p;
    int n = 0;
    while (!atomic_load(&api_stop) || n < 50) {
        char nm[64];
        snprintf(nm, sizeof nm, "churn-%d", n);
        int aid = sion_generic_create_api(nm);
        if (!CHECK(aid >= 0, "create_api in a thread failed"))
            break;
        CHECK(tc_register(aid) == 0, "register in a thread failed");
        CHECK(sion_generic_free_api(aid) == SION_SUCCESS, "free_api in a thread failed");
        n++;
    }
    return NULL;
}
static void t_opens(tc_task *t)
{
    ctx *c = t->arg;
    pt_rank = t->grank;
    for (int r = 0; r < 5; r++)
        write_read(c, t, c->fname, 3000, 4096, 5000, (unsigned)(20 + r));
}
static void test_api_threads(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-edge-api");
    pthread_t th[3];
    atomic_store(&api_stop, 0);
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, api_churn, NULL);
    ctx *c = mk(aid, dir, "apithreads", 2);
    tc_run(4, t_opens, c);
    free(c);
    atomic_store(&api_stop, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"edge_cases", test_edge},
                                    {"refused_parreinit_has_no_effect", test_refused_reinit},
                                    {"api_objects_from_threads", test_api_threads}};
    return pt_main(tests, 3, argc, argv);
}
