/* test_par_mapped.c - sion_generic_paropen_mapped / parclose_mapped.
 *
 * 2 threads write 5 logical tasks into 2 files (task t -> file t % 2, lrank
 * t / 2; thread 0 owns tasks 0,1,2, thread 1 owns 3,4), switching between
 * their tasks with sion_seek(sid, grank, SION_CURRENT_BLK, SION_CURRENT_POS)
 * and writing each task's data in two halves. Read back:
 *  - 3 threads with explicit global ranks ({4,0}, {1,3}, {2}), checking the
 *    outputs and switching with sion_seek(sid, grank, 0, 0) and CURRENT;
 *  - 1 thread reading all 5;
 *  - automatic distribution (*nlocaltasks = -1) with 2 and 3 threads: all
 *    tasks exactly once, in contiguous ranges;
 *  - a plain sion_generic_paropen with 5 threads, and the serial sion_open. */
#include "partest.h"

#define NT 5
static const sion_int64 chunk_in[NT] = {3000, 5000, 100, 7000, 2000};
static const sion_int64 size_of[NT] = {10000, 0, 250, 7000, 4096};
#define SALT 77u

static sion_int64 aligned(sion_int64 c) { return (c + 4095) / 4096 * 4096; }

#define MAXP 5
typedef struct {
    int aid;
    char fname[4200];
    int nlist[MAXP];
    int list[MAXP][NT];
    int automatic;
} ctx;

static void writer(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nl = g == 0 ? 3 : 2;
    int grs[3], fnr[3], lr[3];
    sion_int64 cs[3];
    for (int i = 0; i < nl; i++) {
        grs[i] = (g == 0 ? 0 : 3) + i;
        cs[i] = chunk_in[grs[i]];
        fnr[i] = grs[i] % 2;
        lr[i] = grs[i] / 2;
    }
    int *pg = grs, *pf = fnr, *pl = lr;
    sion_int64 *pc = cs;
    int numfiles = 2;
    sion_int32 fsblk = 4096;
    FILE *fp = NULL;
    int sid = sion_generic_paropen_mapped(c->aid, c->fname, "bw", &numfiles, t->world, g, P, &nl, &pg, &pc, &pf, &pl,
                                          &fsblk, &fp);
    if (!CHECK(sid >= 0, "paropen_mapped write returned %d: %s", sid, sheaf_last_error()))
        return;
    for (int i = 0; i < nl; i++)
        CHECK(pc[i] == chunk_in[grs[i]], "write: chunksize of task %d written back as %lld, SIONlib leaves %lld",
              grs[i], pc[i], chunk_in[grs[i]]);
    unsigned char buf[10000];
    for (int half = 0; half < 2; half++) {
        for (int i = 0; i < nl; i++) {
            int tk = grs[i];
            sion_int64 from = half ? size_of[tk] / 2 : 0, to = half ? size_of[tk] : size_of[tk] / 2;
            int rc = sion_seek(sid, tk, SION_CURRENT_BLK, SION_CURRENT_POS);
            if (!CHECK(rc == SION_SUCCESS, "write: sion_seek(sid, %d, CURRENT_BLK, CURRENT_POS) returned %d: %s", tk,
                       rc, sheaf_last_error()))
                continue;
            if (to > from) {
                pt_fill(buf, SALT, tk, from, (size_t)(to - from));
                size_t w = sion_fwrite(buf, 1, (size_t)(to - from), sid);
                CHECK(w == (size_t)(to - from), "write task %d bytes %lld..%lld: fwrite returned %zu: %s", tk, from, to,
                      w, sheaf_last_error());
            }
        }
    }
    int rc = sion_generic_parclose_mapped(sid);
    CHECK(rc == SION_SUCCESS, "parclose_mapped write returned %d: %s", rc, sheaf_last_error());
}

static void read_task(int sid, int tk, int how)
{
    unsigned char buf[10000];
    sion_int64 n = size_of[tk], h = n / 2;
    /* first half: (grank, 0, 0) */
    int rc = sion_seek(sid, tk, 0, 0);
    if (!CHECK(rc == SION_SUCCESS, "read: sion_seek(sid, %d, 0, 0) returned %d: %s", tk, rc, sheaf_last_error()))
        return;
    if (h) {
        size_t r = sion_fread(buf, 1, (size_t)h, sid);
        CHECK(r == (size_t)h && pt_mismatch(buf, SALT, tk, 0, (size_t)h) < 0,
              "task %d: first %lld bytes: fread returned %zu or data differ: %s", tk, h, r, sheaf_last_error());
    }
    (void)how;
}

static void read_rest(int sid, int tk)
{
    unsigned char buf[10000];
    sion_int64 n = size_of[tk], h = n / 2;
    int rc = sion_seek(sid, tk, SION_CURRENT_BLK, SION_CURRENT_POS);
    if (!CHECK(rc == SION_SUCCESS, "read: sion_seek(sid, %d, CURRENT_BLK, CURRENT_POS) returned %d: %s", tk, rc,
               sheaf_last_error()))
        return;
    if (n - h) {
        size_t r = sion_fread(buf, 1, (size_t)(n - h), sid);
        CHECK(r == (size_t)(n - h) && pt_mismatch(buf, SALT, tk, h, (size_t)(n - h)) < 0,
              "task %d: bytes %lld..%lld after switching back with CURRENT: fread returned %zu or data differ: %s", tk,
              h, n, r, sheaf_last_error());
    }
    CHECK(sion_feof(sid) == 1, "task %d: not at eof after its %lld bytes", tk, n);
}

static void mapped_reader(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nl, mine[NT], *pg;
    if (c->automatic) {
        nl = -1;
        pg = NULL;
    } else {
        nl = c->nlist[g];
        memcpy(mine, c->list[g], sizeof mine);
        pg = mine;
    }
    sion_int64 *pc = NULL;
    int *pf = NULL, *pl = NULL, numfiles = -1;
    sion_int32 fsblk = -1;
    FILE *fp = NULL;
    int sid = sion_generic_paropen_mapped(c->aid, c->fname, "br", &numfiles, t->world, g, P, &nl, &pg, &pc, &pf, &pl,
                                          &fsblk, &fp);
    if (!CHECK(sid >= 0, "paropen_mapped read (%s, %d threads) returned %d: %s",
               c->automatic ? "automatic" : "explicit ranks", P, sid, sheaf_last_error()))
        return;
    CHECK(numfiles == 2, "read: numFiles %d", numfiles);
    CHECK(fsblk == 4096, "read: fsblksize %d", fsblk);
    if (c->automatic) {
        CHECK(nl >= 0 && nl <= NT, "automatic: nlocaltasks %d", nl);
        CHECK(nl == 0 || pg != NULL, "automatic: globalranks not allocated");
        c->nlist[g] = nl;
        for (int i = 0; i < nl && i < NT; i++)
            c->list[g][i] = pg[i];
    } else {
        CHECK(nl == c->nlist[g], "explicit: nlocaltasks changed to %d", nl);
        CHECK(pg && !memcmp(pg, c->list[g], (size_t)c->nlist[g] * sizeof(int)), "explicit: globalranks changed");
    }
    for (int i = 0; i < nl && i < NT; i++) {
        int tk = pg[i];
        if (!CHECK(tk >= 0 && tk < NT, "globalranks[%d] = %d", i, tk))
            continue;
        CHECK(pc && pc[i] == aligned(chunk_in[tk]), "task %d: chunksize %lld, expected %lld", tk, pc ? pc[i] : -1,
              aligned(chunk_in[tk]));
        CHECK(pf && pf[i] == tk % 2, "task %d: mapping_filenr %d, expected %d", tk, pf ? pf[i] : -1, tk % 2);
        CHECK(pl && pl[i] == tk / 2, "task %d: mapping_lrank %d, expected %d", tk, pl ? pl[i] : -1, tk / 2);
    }
    for (int i = 0; i < nl && i < NT; i++)
        read_task(sid, pg[i], 0);
    for (int i = nl - 1; i >= 0; i--)
        if (i < NT)
            read_rest(sid, pg[i]);
    int rc = sion_generic_parclose_mapped(sid);
    CHECK(rc == SION_SUCCESS, "parclose_mapped read returned %d: %s", rc, sheaf_last_error());
    free(pc);
    free(pf);
    free(pl);
    if (c->automatic)
        free(pg);
}

static void plain_reader(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int fnum = -1, nf = -1, lrank = -1, lsize = -1;
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    FILE *fp = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, "br", &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank, &lsize,
                                   &fp, NULL);
    if (!CHECK(sid >= 0, "plain paropen of the mapped set: %s", sheaf_last_error()))
        return;
    CHECK(fnum == g % 2 && nf == 2 && lrank == g / 2 && lsize == (g % 2 ? 2 : 3),
          "plain read: file %d of %d, lrank %d of %d", fnum, nf, lrank, lsize);
    CHECK(chunk == aligned(chunk_in[g]), "plain read: chunksize %lld", chunk);
    unsigned char buf[10000];
    size_t n = (size_t)size_of[g];
    CHECK(sion_fread(buf, 1, n, sid) == n && pt_mismatch(buf, SALT, g, 0, n) < 0, "plain read: data differ");
    CHECK(sion_feof(sid) == 1, "plain read: not at eof");
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "plain parclose: %s", sheaf_last_error());
}

/* The block table of physical file `path` as stored: the entries beyond a
 * task's block count are -1 in a mapped write, as SIONlib's mapped close
 * writes them (its parallel close writes 0). Returns the number of -1 entries
 * checked, or -1 when the file cannot be parsed. */
static int unused_entries_are_minus1(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    static unsigned char d[1 << 16];
    size_t len = fread(d, 1, sizeof d, f);
    fclose(f);
    int32_t n, maxc;
    int64_t sov;
    if (len < 28)
        return -1;
    memcpy(&n, d + 24, 4);
    if (n < 1 || n > 100 || len < (size_t)(1088 + 16 * n))
        return -1;
    memcpy(&maxc, d + 1076 + 16 * n, 4);
    memcpy(&sov, d + 1080 + 16 * n, 8);
    if (maxc < 1 || maxc > 100 || sov < 0 || (size_t)sov + 8u * (size_t)n * (size_t)(1 + maxc) > len)
        return -1;
    int checked = 0;
    for (int t = 0; t < n; t++) {
        int64_t cnt;
        memcpy(&cnt, d + sov + 8 * t, 8);
        for (int b = 0; b < maxc; b++) {
            int64_t v;
            memcpy(&v, d + sov + 8 * n + 8 * ((int64_t)b * n + t), 8);
            if (b < cnt && v < 0)
                return -1;
            if (b >= cnt) {
                if (v != -1)
                    return -1;
                checked++;
            }
        }
    }
    return checked;
}

static void test_mapped(void)
{
    const char *dir = pt_mkdtemp();
    ctx *c = calloc(1, sizeof *c);
    c->aid = tc_create_api("threadcomm-mapped");
    snprintf(c->fname, sizeof c->fname, "%s/mapped.sion", dir);
    int f0 = atomic_load(&pt_failures);
    tc_run(2, writer, c);
    if (atomic_load(&pt_failures) != f0)
        goto out;
    CHECK(pt_exists(c->fname), "file 0 missing");
    char m1[4300];
    pt_member(m1, sizeof m1, c->fname, 1);
    CHECK(pt_exists(m1), "file 1 (%s) missing", m1);
    /* file 0 holds tasks 0 (3 blocks), 2 and 4 (1 block each): 4 unused entries */
    int unused = unused_entries_are_minus1(c->fname);
    CHECK(unused == 4, "file 0: unused block entries are not SIONlib's -1 (%d checked)", unused);

    printf("  read: 3 threads, explicit ranks {4,0} {1,3} {2}\n");
    static const int l0[] = {4, 0}, l1[] = {1, 3}, l2[] = {2};
    c->automatic = 0;
    c->nlist[0] = 2;
    memcpy(c->list[0], l0, sizeof l0);
    c->nlist[1] = 2;
    memcpy(c->list[1], l1, sizeof l1);
    c->nlist[2] = 1;
    memcpy(c->list[2], l2, sizeof l2);
    tc_run(3, mapped_reader, c);

    printf("  read: 1 thread, all tasks\n");
    c->nlist[0] = NT;
    for (int i = 0; i < NT; i++)
        c->list[0][i] = NT - 1 - i;
    tc_run(1, mapped_reader, c);

    for (int P = 2; P <= 3; P++) {
        printf("  read: %d threads, automatic distribution\n", P);
        memset(c->nlist, 0, sizeof c->nlist);
        c->automatic = 1;
        tc_run(P, mapped_reader, c);
        int seen[NT] = {0};
        for (int g = 0; g < P; g++) {
            printf("    thread %d:", g);
            for (int i = 0; i < c->nlist[g]; i++) {
                printf(" %d", c->list[g][i]);
                if (c->list[g][i] >= 0 && c->list[g][i] < NT)
                    seen[c->list[g][i]]++;
                if (i)
                    CHECK(c->list[g][i] == c->list[g][i - 1] + 1,
                          "automatic (%d threads): thread %d's tasks are not "
                          "a contiguous range",
                          P, g);
            }
            printf("\n");
        }
        for (int tk = 0; tk < NT; tk++)
            CHECK(seen[tk] == 1, "automatic (%d threads): task %d assigned %d times", P, tk, seen[tk]);
    }

    printf("  read: plain sion_generic_paropen with 5 threads\n");
    tc_run(5, plain_reader, c);

    /* serial */
    int ntasks = 0, nfiles = 0, *gr = NULL;
    sion_int64 *cs = NULL;
    sion_int32 fsblk = 0;
    int sid = sion_open(c->fname, "rb", &ntasks, &nfiles, &cs, &fsblk, &gr, NULL);
    if (CHECK(sid >= 0, "serial open of the mapped set: %s", sheaf_last_error())) {
        CHECK(ntasks == NT && nfiles == 2, "serial: %d tasks, %d files", ntasks, nfiles);
        for (int tk = 0; tk < NT && tk < ntasks; tk++) {
            CHECK(cs[tk] == aligned(chunk_in[tk]), "serial: chunk of task %d: %lld", tk, cs[tk]);
            CHECK(sion_seek(sid, tk, 0, 0) == SION_SUCCESS, "serial seek %d", tk);
            unsigned char buf[10000];
            size_t n = (size_t)size_of[tk];
            CHECK((n == 0 || sion_fread(buf, 1, n, sid) == n) && pt_mismatch(buf, SALT, tk, 0, n) < 0,
                  "serial: task %d: data differ", tk);
            CHECK(sion_feof(sid) == 1, "serial: task %d: not at eof", tk);
        }
        sion_close(sid);
        free(cs);
        free(gr);
    }
out:
    sion_generic_free_api(c->aid);
    free(c);
    pt_rmtree(dir);
}

/* ---- edge cases: every task fails together, or the open works ---- */
typedef struct {
    int aid, variant;
    char fname[4200];
    int sid[8], nl[8];
    char msg[8][1024];
} ectx;
enum {
    E_ZERO_WRITER,
    E_BAD_READ_RANK,
    E_MORE_PROCS,
    E_DUP_READ,
    E_ONE_FILE,
    E_NEG_CHUNK,
    E_DUP_WRITE_RANK,
    E_READ_NO_RANKS,
    E_READ_ZERO
};

static void edge_task(tc_task *t)
{
    ectx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int sid = -1, nl = 0, nf = 2;
    sion_int32 fsblk = 4096;
    int gr[NT], fn[NT], lr[NT], *pg = gr, *pf = fn, *pl = lr;
    sion_int64 cs[NT], *pc = cs;
    if (c->variant == E_ZERO_WRITER || c->variant == E_ONE_FILE || c->variant == E_NEG_CHUNK ||
        c->variant == E_DUP_WRITE_RANK) {
        /* write: E_ZERO_WRITER: thread 0 owns all 5 tasks, thread 1 none */
        int from = 0, to = NT;
        if (c->variant != E_ZERO_WRITER) {
            from = g == 0 ? 0 : 3;
            to = g == 0 ? 3 : NT;
        } else if (g == 1) {
            from = to = 0;
        }
        nf = c->variant == E_ONE_FILE ? 1 : 2;
        for (int k = from; k < to; k++) {
            gr[nl] = k;
            cs[nl] = c->variant == E_NEG_CHUNK && k == 4 ? -1 : 1000;
            fn[nl] = nf == 1 ? 0 : k % 2;
            lr[nl] = nf == 1 ? k : k / 2;
            nl++;
        }
        if (c->variant == E_DUP_WRITE_RANK && g == 1)
            gr[0] = 0; /* task 0 given by both threads */
        sid = sion_generic_paropen_mapped(c->aid, c->fname, "bw", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk,
                                          NULL);
        if (sid >= 0) {
            unsigned char b[500];
            for (int i = 0; i < nl; i++) {
                CHECK(sion_seek(sid, gr[i], SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS, "seek %d", gr[i]);
                pt_fill(b, 66, gr[i], 0, sizeof b);
                CHECK(sion_fwrite(b, 1, sizeof b, sid) == sizeof b, "fwrite %d", gr[i]);
            }
        }
    } else {
        pc = NULL;
        pf = pl = NULL;
        if (c->variant == E_BAD_READ_RANK) {
            nl = 1;
            gr[0] = g == 1 ? NT : g; /* thread 1 asks for a task that does not exist */
        } else if (c->variant == E_READ_NO_RANKS) {
            nl = 1;
            gr[0] = g;
            if (g == 1)
                pg = NULL;                      /* 1 task requested, no global ranks given */
        } else if (c->variant == E_READ_ZERO) { /* {0,1,2}, none, {3,4} */
            nl = g == 1 ? 0 : g == 0 ? 3 : 2;
            for (int i = 0; i < nl; i++)
                gr[i] = (g == 0 ? 0 : 3) + i;
        } else if (c->variant == E_DUP_READ) {
            nl = 2;
            gr[0] = 0; /* every thread reads task 0, and its own */
            gr[1] = g + 1;
        } else {
            nl = -1;
            pg = NULL;
        }
        sid = sion_generic_paropen_mapped(c->aid, c->fname, "br", &nf, t->world, g, P, &nl, &pg, &pc, &pf, &pl, &fsblk,
                                          NULL);
        if (sid >= 0) {
            unsigned char b[500];
            for (int i = 0; i < nl; i++) {
                CHECK(sion_seek(sid, pg[i], 0, 0) == SION_SUCCESS, "seek %d: %s", pg[i], sheaf_last_error());
                CHECK(sion_fread(b, 1, sizeof b, sid) == sizeof b && pt_mismatch(b, 66, pg[i], 0, sizeof b) < 0,
                      "task %d: data differ", pg[i]);
            }
            free(pc);
            free(pf);
            free(pl);
            if (pg != gr)
                free(pg);
        }
    }
    if (sid >= 0 && nl == 0) { /* a process without a logical task: only the close is accepted */
        CHECK(sion_fwrite("x", 1, 1, sid) == 0 && strstr(sheaf_last_error(), "owns no logical task"),
              "sion_fwrite on a process without tasks: %s", sheaf_last_error());
        CHECK(sion_seek(sid, 0, 0, 0) != SION_SUCCESS, "sion_seek on a process without tasks accepted");
        /* but sion_get_sizeof answers, as SIONlib (test_genapi_4, TEST H: 0 fds) */
        int nb = -7, nfd = -7;
        CHECK(sion_get_sizeof(sid, &nb, &nfd) == SION_SUCCESS && nb > 0 && nfd == 0,
              "sion_get_sizeof on a process without tasks: rc, %d bytes, %d fds: %s", nb, nfd, sheaf_last_error());
    }
    c->sid[g] = sid;
    c->nl[g] = nl;
    snprintf(c->msg[g], sizeof c->msg[g], "%s", sid < 0 ? sheaf_last_error() : "");
    if (sid >= 0)
        CHECK(sion_generic_parclose_mapped(sid) == SION_SUCCESS, "parclose_mapped: %s", sheaf_last_error());
}

static int edge_run(ectx *c, int P, int variant)
{
    c->variant = variant;
    memset(c->sid, -1, sizeof c->sid);
    tc_run(P, edge_task, c);
    int ok = 0;
    for (int g = 0; g < P; g++)
        ok += c->sid[g] >= 0;
    CHECK(ok == 0 || ok == P, "variant %d: %d of %d tasks got a sid: failures must be collective", variant, ok, P);
    for (int g = 0; g < P; g++)
        CHECK(c->sid[g] >= 0 || c->msg[g][0], "variant %d: task %d got -1 without a message (sheaf_last_error empty)",
              variant, g);
    return ok == P;
}

static void test_mapped_edges(void)
{
    const char *dir = pt_mkdtemp();
    ectx *c = calloc(1, sizeof *c);
    c->aid = tc_create_api("threadcomm-mapped-edge");
    snprintf(c->fname, sizeof c->fname, "%s/medge.sion", dir);

    int ok = edge_run(c, 2, E_ONE_FILE);
    CHECK(ok, "mapped write into 1 file: %s", c->msg[0]);
    { /* as SIONlib's mapped close, the single file ends with the task mapping:
       * int32 count + (file, task) per task after the block sizes */
        int ntasks = 0, nfiles = 0, *gr = NULL;
        sion_int64 *cs = NULL;
        sion_int32 fsblk = 0;
        int sid = sion_open(c->fname, "rb", &ntasks, &nfiles, &cs, &fsblk, &gr, NULL);
        sheaf_file_info fi;
        if (CHECK(sid >= 0 && sheaf_get_file_info(sid, 0, &fi) == SION_SUCCESS, "serial open: %s",
                  sheaf_last_error())) {
            long long want = fi.start_of_varheader + 8LL * NT * (1 + fi.maxchunks) + 4 + 8LL * NT;
            CHECK(pt_fsize(c->fname) == want, "single-file mapped write: %lld bytes, want %lld (with the mapping)",
                  pt_fsize(c->fname), want);
        }
        if (sid >= 0)
            sion_close(sid);
        free(cs);
        free(gr);
    }
    ok = edge_run(c, 2, E_NEG_CHUNK);
    CHECK(!ok, "mapped write with a negative chunk size was accepted");
    printf("  negative chunk: %s / %s\n", c->msg[0], c->msg[1]);
    ok = edge_run(c, 2, E_DUP_WRITE_RANK);
    CHECK(!ok, "mapped write with task 0 given by two processes was accepted");
    printf("  task given twice: %s / %s\n", c->msg[0], c->msg[1]);
    ok = edge_run(c, 2, E_ZERO_WRITER); /* SIONlib allows a process without tasks */
    CHECK(ok, "mapped write with a process that owns no logical task refused: %s", c->msg[1]);
    ok = edge_run(c, 3, E_BAD_READ_RANK);
    CHECK(!ok, "mapped read of task %d (does not exist) accepted", NT);
    printf("  read of a missing task: %s\n", c->msg[1]);
    ok = edge_run(c, 3, E_READ_NO_RANKS);
    CHECK(!ok, "mapped read with *globalranks NULL on one task accepted");
    printf("  read without global ranks on task 1: %s / %s\n", c->msg[0], c->msg[1]);
    ok = edge_run(c, 3, E_READ_ZERO); /* SIONlib allows a reader without tasks */
    CHECK(ok && c->nl[1] == 0, "mapped read where process 1 asks for no task refused: %s", c->msg[1]);
    ok = edge_run(c, 3, E_DUP_READ);
    printf("  task 0 read by 3 processes at once: %s %s\n", ok ? "accepted" : "refused:", ok ? "" : c->msg[0]);
    ok = edge_run(c, 7, E_MORE_PROCS); /* 2 of the 7 processes get no task (SIONlib allows it) */
    CHECK(ok, "automatic distribution, 7 processes for %d tasks refused: %s", NT, c->msg[0]);
    if (ok) {
        int sum = 0, none = 0;
        for (int g = 0; g < 7; g++) {
            sum += c->nl[g];
            none += c->nl[g] == 0;
        }
        CHECK(sum == NT && none == 7 - NT,
              "automatic distribution over 7 processes hands out %d tasks, %d "
              "processes without",
              sum, none);
    }
    sion_generic_free_api(c->aid);
    free(c);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"paropen_mapped", test_mapped}, {"paropen_mapped_edges", test_mapped_edges}};
    return pt_main(tests, 2, argc, argv);
}
