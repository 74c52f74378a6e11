/* test_par_dup.c - sion_dup / sion_dedup on parallel read sids.
 *
 * After a parallel read open, every task makes a copy with
 * sion_dup(sid, SION_DUP_ALL, 0, 0) (and one with SION_DUP_RANK of its own
 * global rank) and reads its data with two extra threads at the same time,
 * one through the sid and one through the copy: both get the same bytes.
 * Collective calls on a copy are refused without running a collective;
 * sion_dedup releases it (SION_SUCCESS) and refuses a non-copy; sion_dup on
 * a write sid or a serial sid fails. */
#include "partest.h"
#include <pthread.h>

#define P 3
#define SALT 5u
static size_t size_of(int g) { return 20000 + 3333 * (size_t)g; }

typedef struct {
    int aid;
    char fname[4200];
} ctx;

typedef struct {
    int sid, g;
    size_t n;
    unsigned char *buf;
    size_t got;
    char err[512];
} rd_arg;

static void *read_all(void *p)
{
    rd_arg *a = p;
    a->got = 0;
    /* several reads, crossing block ends */
    while (a->got < a->n) {
        size_t k = a->n - a->got < 3000 ? a->n - a->got : 3000;
        size_t r = sion_fread(a->buf + a->got, 1, k, a->sid);
        if (r != k) {
            snprintf(a->err, sizeof a->err, "sid %d: fread(%zu) at %zu returned %zu: %s", a->sid, k, a->got, r,
                     sheaf_last_error());
            break;
        }
        a->got += r;
    }
    return NULL;
}

static void writer(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fnum = 0, nf = 1, lrank = g, lsize = P;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (!CHECK(sid >= 0, "paropen write: %s", sheaf_last_error()))
        return;
    int d = sion_dup(sid, SION_DUP_ALL, 0, 0);
    CHECK(d < 0, "sion_dup on a write sid returned %d (expected -1)", d);
    size_t n = size_of(g);
    unsigned char *b = malloc(n);
    pt_fill(b, SALT, g, 0, n);
    CHECK(sion_fwrite(b, 1, n, sid) == n, "fwrite: %s", sheaf_last_error());
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose: %s", sheaf_last_error());
}

static void reader(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fnum = -1, nf = -1, lrank = -1, lsize = -1;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    int sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (!CHECK(sid >= 0, "paropen read: %s", sheaf_last_error()))
        return;
    int d = sion_dup(sid, SION_DUP_ALL, 0, 0);
    int d2 = sion_dup(sid, SION_DUP_RANK, g, 0);
    CHECK(d >= 0 && d != sid, "sion_dup(sid %d, SION_DUP_ALL) returned %d: %s", sid, d, sheaf_last_error());
    CHECK(d2 >= 0 && d2 != sid && d2 != d, "sion_dup(sid, SION_DUP_RANK, own rank %d) returned %d: %s", g, d2,
          sheaf_last_error());
    size_t n = size_of(g);
    rd_arg a[3] = {{.sid = sid, .g = g, .n = n}, {.sid = d, .g = g, .n = n}, {.sid = d2, .g = g, .n = n}};
    pthread_t th[3];
    int nth = 0;
    for (int i = 0; i < 3; i++) {
        a[i].buf = malloc(n);
        if (a[i].sid >= 0 && !pthread_create(&th[i], NULL, read_all, &a[i]))
            nth = i + 1;
        else
            break;
    }
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    static const char *const nm[3] = {"the sid", "the SION_DUP_ALL copy", "the SION_DUP_RANK copy"};
    for (int i = 0; i < nth; i++) {
        CHECK(!a[i].err[0], "reading through %s: %s", nm[i], a[i].err);
        if (a[i].got == n) {
            int64_t bad = pt_mismatch(a[i].buf, SALT, g, 0, n);
            CHECK(bad < 0, "reading through %s (concurrently): byte %lld of %zu differs", nm[i], (long long)bad, n);
        }
    }
    if (nth >= 2 && a[0].got == n && a[1].got == n)
        CHECK(!memcmp(a[0].buf, a[1].buf, n), "sid and copy read different bytes");
    for (int i = 0; i < 3; i++)
        free(a[i].buf);
    if (d >= 0) {
        CHECK(sion_feof(d) == 1, "copy not at eof after all bytes");
        /* the copy is independent: rewind it, the sid stays at its end */
        CHECK(sion_seek(d, SION_CURRENT_RANK, 0, 0) == SION_SUCCESS, "seek on the copy: %s", sheaf_last_error());
        unsigned char x[16];
        CHECK(sion_fread(x, 1, 16, d) == 16 && pt_mismatch(x, SALT, g, 0, 16) < 0, "re-read on the copy");
        CHECK(sion_feof(sid) == 1, "seeking the copy moved the sid");
        /* collective calls on a copy: refused locally, no collective run */
        tc_counts b = tc_counts_get();
        CHECK(sion_generic_parclose(d) == SION_ID_NOT_VALID, "sion_generic_parclose on a copy was accepted");
        tc_counts dd = tc_counts_diff(tc_counts_get(), b);
        tc_counts z;
        memset(&z, 0, sizeof z);
        char s[256];
        tc_counts_str(&dd, s, sizeof s);
        CHECK(!memcmp(&dd, &z, sizeof z), "parclose on a copy ran collectives: %s", s);
        int rc = sion_dedup(d);
        CHECK(rc == SION_SUCCESS, "sion_dedup returned %d: %s", rc, sheaf_last_error());
        CHECK(sion_dedup(d) == SION_ID_NOT_VALID,
              "second sion_dedup of the same copy: not SIONlib's SION_ID_NOT_VALID");
    }
    if (d2 >= 0)
        CHECK(sion_dedup(d2) == SION_SUCCESS, "sion_dedup of the DUP_RANK copy: %s", sheaf_last_error());
    CHECK(sion_dedup(sid) == SION_NOT_SUCCESS, "sion_dedup accepted the original parallel sid");
    int bad = sion_dup(sid, SION_DUP_RANK, (g + 1) % P, 0);
    CHECK(bad < 0, "sion_dup of another task's rank (%d) on a parallel sid returned %d", (g + 1) % P, bad);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read: %s", sheaf_last_error());
}

/* dup on a mapped read sid (2 processes, automatic distribution of 5 tasks) */
#define NM 5
static void mapped_writer5(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fnum = g % 2, nf = 2, lrank = g / 2, lsize = g % 2 ? 2 : 3;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw", &chunk, &fsblk, t->world, g, NM, &fnum, &nf, &lrank, &lsize,
                                   NULL, NULL);
    if (!CHECK(sid >= 0, "write: %s", sheaf_last_error()))
        return;
    size_t n = size_of(g);
    unsigned char *b = malloc(n);
    pt_fill(b, SALT, g, 0, n);
    CHECK(sion_fwrite(b, 1, n, sid) == n, "fwrite");
    free(b);
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose");
}

static void mapped_dup_reader(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int nl = -1, *pg = NULL, *pf = NULL, *pl = NULL, nf = 0;
    sion_int64 *pc = NULL;
    sion_int32 fsblk = 0;
    int sid =
        sion_generic_paropen_mapped(c->aid, c->fname, "br", &nf, t->world, g, 2, &nl, &pg, &pc, &pf, &pl, &fsblk, NULL);
    if (!CHECK(sid >= 0, "mapped read: %s", sheaf_last_error()))
        return;
    int d = sion_dup(sid, SION_DUP_ALL, 0, 0);
    if (CHECK(d >= 0, "sion_dup(mapped sid, SION_DUP_ALL): %s", sheaf_last_error())) {
        for (int i = nl - 1; i >= 0; i--) { /* all of its tasks, through the copy */
            size_t n = size_of(pg[i]);
            unsigned char *b = malloc(n);
            CHECK(sion_seek(d, pg[i], 0, 0) == SION_SUCCESS, "copy: seek to task %d: %s", pg[i], sheaf_last_error());
            CHECK(sion_fread(b, 1, n, d) == n && pt_mismatch(b, SALT, pg[i], 0, n) < 0, "copy: task %d data differ",
                  pg[i]);
            free(b);
        }
        CHECK(sion_dedup(d) == SION_SUCCESS, "dedup");
    }
    int last = pg[nl - 1];
    d = sion_dup(sid, SION_DUP_RANK, last, 0);
    if (CHECK(d >= 0, "sion_dup(mapped sid, SION_DUP_RANK, %d): %s", last, sheaf_last_error())) {
        unsigned char b[100];
        CHECK(sion_fread(b, 1, 100, d) == 100 && pt_mismatch(b, SALT, last, 0, 100) < 0,
              "DUP_RANK copy of task %d is not positioned at its start", last);
        CHECK(sion_seek(d, pg[0], 0, 0) == SION_NOT_SUCCESS || nl == 1,
              "DUP_RANK copy of task %d accepted a seek to task %d", last, pg[0]);
        CHECK(sion_dedup(d) == SION_SUCCESS, "dedup");
    }
    int other = g == 0 ? NM - 1 : 0; /* a task the other process holds */
    d = sion_dup(sid, SION_DUP_RANK, other, 0);
    CHECK(d < 0, "sion_dup(SION_DUP_RANK, %d) of a task this process does not hold returned %d", other, d);
    /* the original still reads */
    size_t n = size_of(pg[0]);
    unsigned char *b = malloc(n);
    CHECK(sion_seek(sid, pg[0], 0, 0) == SION_SUCCESS && sion_fread(b, 1, n, sid) == n &&
              pt_mismatch(b, SALT, pg[0], 0, n) < 0,
          "original mapped sid after dups: data differ");
    free(b);
    CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "parclose_mapped: %s", sheaf_last_error());
    free(pg);
    free(pc);
    free(pf);
    free(pl);
}

static void test_dup_mapped(void)
{
    const char *dir = pt_mkdtemp();
    ctx c;
    c.aid = tc_create_api("threadcomm-dup-mapped");
    snprintf(c.fname, sizeof c.fname, "%s/dupm.sion", dir);
    int f0 = atomic_load(&pt_failures);
    tc_run(NM, mapped_writer5, &c);
    if (atomic_load(&pt_failures) == f0)
        tc_run(2, mapped_dup_reader, &c);
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

/* SION_DUP_RANK_KEY on a key-value container: the copy sees only that key */
static void kv_task(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank;
    pt_rank = g;
    int fnum = 0, nf = 1, lrank = g, lsize = P;
    sion_int64 chunk = 4096;
    sion_int32 fsblk = 4096;
    int sid = sion_generic_paropen(c->aid, c->fname, "bw,keyval=inline", &chunk, &fsblk, t->world, g, P, &fnum, &nf,
                                   &lrank, &lsize, NULL, NULL);
    if (!CHECK(sid >= 0, "keyval write: %s", sheaf_last_error()))
        return;
    unsigned char b[700];
    for (int r = 0; r < 4; r++)
        for (uint64_t k = 1; k <= 2; k++) {
            pt_fill(b, (unsigned)k, g, 700 * r, sizeof b);
            CHECK(sion_fwrite_key(b, k, 1, sizeof b, sid) == sizeof b, "fwrite_key");
        }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose");
    int rf = -1, rnf = -1, rl = -1, rs = -1;
    sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &rf, &rnf, &rl, &rs, NULL, NULL);
    if (!CHECK(sid >= 0, "keyval read: %s", sheaf_last_error()))
        return;
    int d = sion_dup(sid, SION_DUP_RANK_KEY, g, 2);
    if (CHECK(d >= 0, "sion_dup(SION_DUP_RANK_KEY, %d, key 2): %s", g, sheaf_last_error())) {
        uint64_t key;
        size_t size;
        int nrec = 0;
        CHECK(sion_fread_key_iterator_reset(d) == SION_SUCCESS, "iterator reset on the copy");
        while (sion_fread_key_iterator_next(d, &key, &size) == SION_SUCCESS) {
            CHECK(key == 2, "DUP_RANK_KEY(key 2) copy shows a record of key %llu", (unsigned long long)key);
            nrec++;
        }
        CHECK(nrec == 4, "DUP_RANK_KEY copy: %d records of key 2, expected 4", nrec);
        unsigned char all[2800];
        CHECK(sion_seek_key(d, 2, SION_ABSOLUTE_POS, 0) == SION_SUCCESS, "seek_key on the copy: %s",
              sheaf_last_error());
        size_t got = 0;
        while (got < sizeof all) {
            size_t r = sion_fread_key(all + got, 2, 1, sizeof all - got, d);
            if (!r)
                break;
            got += r;
        }
        CHECK(got == sizeof all && pt_mismatch(all, 2, g, 0, sizeof all) < 0, "copy: key 2 stream (%zu bytes) differs",
              got);
        CHECK(sion_dedup(d) == SION_SUCCESS, "dedup");
    }
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "parclose read");
}

static void test_dup_key(void)
{
    const char *dir = pt_mkdtemp();
    ctx c;
    c.aid = tc_create_api("threadcomm-dup-key");
    snprintf(c.fname, sizeof c.fname, "%s/dupk.sion", dir);
    tc_run(P, kv_task, &c);
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

static void test_dup(void)
{
    const char *dir = pt_mkdtemp();
    ctx c;
    c.aid = tc_create_api("threadcomm-dup");
    snprintf(c.fname, sizeof c.fname, "%s/dup.sion", dir);
    int f0 = atomic_load(&pt_failures);
    tc_run(P, writer, &c);
    if (atomic_load(&pt_failures) == f0) {
        tc_run(P, reader, &c);
        /* serial sid: dup refused */
        int nt, nf;
        int sid = sion_open(c.fname, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
        if (CHECK(sid >= 0, "serial open: %s", sheaf_last_error())) {
            int d = sion_dup(sid, SION_DUP_ALL, 0, 0);
            CHECK(d < 0, "sion_dup on a serial sid returned %d", d);
            if (d >= 0)
                sion_dedup(d);
            sion_close(sid);
        }
    }
    sion_generic_free_api(c.aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {
        {"dup_dedup", test_dup}, {"dup_mapped", test_dup_mapped}, {"dup_rank_key", test_dup_key}};
    return pt_main(tests, 3, argc, argv);
}
