/* test_par_roundtrip.c - parallel write, parallel and serial read back.
 *
 * P threads write a container through sion_generic_paropen with random
 * chunk sizes and random amounts of data (one task writes nothing; writes
 * larger than the chunk span several blocks), split over numfiles physical
 * files non-contiguously (filenumber = grank % numfiles, lrank = grank /
 * numfiles), with fsblksize -1 (detected) or 4096. The set is read back
 * (1) with sion_generic_paropen "br" by P threads, checking the outputs
 * (filenumber, numfiles, lrank, lsize, chunksize, fsblksize) and every byte,
 * and (2) with the serial sion_open on file 0, which opens the whole set. */
#include "partest.h"
#include <pthread.h>

#define MAXP 16
static int quiet; /* no per-case output (random and concurrent runs) */
typedef struct {
    int aid, P, nfiles;
    sion_int32 fsblk_in;
    const char *mode_w, *mode_r;
    unsigned salt;
    char fname[4200];
    /* per task, filled by the writers */
    sion_int64 chunk_req[MAXP], chunk_out[MAXP], size[MAXP];
    sion_int32 fsblk_out[MAXP];
    uint64_t sum[MAXP];
    int maxchunks;
    /* the split: physical file, rank in it, tasks in it */
    int fnr[MAXP], lr[MAXP], ls[MAXP];
} ctx;

static void writer(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int nf = c->nfiles, fnum = c->fnr[g], lrank = c->lr[g], lsize = c->ls[g];
    sion_int64 chunk = c->chunk_req[g];
    sion_int32 fsblk = c->fsblk_in;
    FILE *fp = NULL;
    char *newf = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, c->mode_w, &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank,
                                   &lsize, &fp, &newf);
    if (!CHECK(sid >= 0, "paropen(%s, \"%s\", chunk %lld, fsblk %d, file %d of %d, lrank %d of %d) returned %d: %s",
               c->fname, c->mode_w, c->chunk_req[g], c->fsblk_in, c->fnr[g], c->nfiles, c->lr[g], lsize, sid,
               sheaf_last_error()))
        return; /* every task fails together (else the others report a hang) */
    /* SIONlib leaves *chunksize as given on a write open; the container holds it aligned */
    CHECK(chunk == c->chunk_req[g], "write open changed *chunksize %lld to %lld", c->chunk_req[g], chunk);
    c->chunk_out[g] = fsblk > 0 ? (chunk + fsblk - 1) / fsblk * fsblk : chunk;
    c->fsblk_out[g] = fsblk;
    CHECK(fsblk > 0, "fsblksize written back: %d", fsblk);
    if (c->fsblk_in > 0)
        CHECK(fsblk == c->fsblk_in, "fsblksize changed from %d to %d", c->fsblk_in, fsblk);
    CHECK(fnum == c->fnr[g] && nf == c->nfiles, "write open changed filenumber/numfiles to %d/%d", fnum, nf);
    if (strstr(c->mode_w, "posix"))
        CHECK(fp == NULL, "posix mode exported a FILE*");
    else
        CHECK(fp != NULL, "ansi mode: no FILE* exported");
    char want[4300];
    pt_member(want, sizeof want, c->fname, c->fnr[g]);
    CHECK(newf && !strcmp(newf, want), "newfname \"%s\", expected \"%s\"", newf ? newf : "(null)", want);
    free(newf);
    CHECK(sion_get_filenumber(sid) == c->fnr[g], "sion_get_filenumber %d", sion_get_filenumber(sid));

    /* write in random pieces, some larger than the chunk */
    uint64_t rs = pt_seed() ^ (c->salt * 1000003u + (unsigned)g);
    sion_int64 total = c->size[g], done = 0;
    unsigned char *buf = malloc((size_t)total + 1);
    pt_fill(buf, c->salt, g, 0, (size_t)total);
    c->sum[g] = pt_fnv(buf, (size_t)total);
    while (done < total) {
        sion_int64 n = pt_range(&rs, 1, 2 * chunk + 100);
        if (n > total - done)
            n = total - done;
        size_t w = sion_fwrite(buf + done, 1, (size_t)n, sid);
        if (!CHECK(w == (size_t)n, "sion_fwrite(%lld bytes at offset %lld) returned %zu: %s", n, done, w,
                   sheaf_last_error()))
            break;
        done += n;
    }
    CHECK(sion_get_bytes_written(sid) == total, "sion_get_bytes_written %lld, wrote %lld", sion_get_bytes_written(sid),
          total);
    free(buf);
    int rc = sion_generic_parclose(sid);
    CHECK(rc == SION_SUCCESS, "parclose write returned %d: %s", rc, sheaf_last_error());
}

/* The writer whose data sits where reader/serial task index `g` looks. */
static int slot_writer(const ctx *c, int g)
{
    if (c->nfiles > 1)
        return g;
    for (int w = 0; w < c->P; w++)
        if (c->lr[w] == g)
            return w;
    return g;
}

static void reader(tc_task *t)
{
    ctx *c = t->arg;
    int g = t->grank, P = t->gsize;
    pt_rank = g;
    int fnum = -7, nf = -7, lrank = -7, lsize = -7;
    sion_int64 chunk = -7;
    sion_int32 fsblk = -7;
    FILE *fp = NULL;
    char *newf = NULL;
    int sid = sion_generic_paropen(c->aid, c->fname, c->mode_r, &chunk, &fsblk, t->world, g, P, &fnum, &nf, &lrank,
                                   &lsize, &fp, &newf);
    if (!CHECK(sid >= 0, "paropen(%s, \"%s\") for reading returned %d: %s", c->fname, c->mode_r, sid,
               sheaf_last_error()))
        return;
    /* which writer's data this task reads: its own in a multi-file set (the
     * mapping); in a single file, slot grank ("single file: lrank = grank"),
     * i.e. the data of the writer that had lrank == grank */
    int src = slot_writer(c, g);
    int ef = c->fnr[src], el = c->nfiles == 1 ? g : c->lr[g], es = c->ls[src];
    CHECK(fnum == ef, "read open: filenumber %d, expected %d", fnum, ef);
    CHECK(nf == c->nfiles, "read open: numfiles %d, expected %d", nf, c->nfiles);
    CHECK(lrank == el, "read open: lrank %d, expected %d", lrank, el);
    CHECK(lsize == es, "read open: lsize %d, expected %d", lsize, es);
    CHECK(chunk == c->chunk_out[src], "read open: chunksize %lld, written with %lld (by task %d)", chunk,
          c->chunk_out[src], src);
    CHECK(fsblk == c->fsblk_out[src], "read open: fsblksize %d, written with %d", fsblk, c->fsblk_out[src]);
    char want[4300];
    pt_member(want, sizeof want, c->fname, ef);
    CHECK(newf && !strcmp(newf, want), "read newfname \"%s\", expected \"%s\"", newf ? newf : "(null)", want);
    free(newf);

    uint64_t rs = pt_seed() ^ (c->salt * 7777u + (unsigned)g);
    sion_int64 total = c->size[src], done = 0;
    unsigned char *buf = malloc((size_t)total + 16);
    while (done < total) {
        sion_int64 n = pt_range(&rs, 1, 2 * chunk + 100);
        if (n > total - done)
            n = total - done;
        size_t r = sion_fread(buf + done, 1, (size_t)n, sid);
        if (!CHECK(r == (size_t)n, "sion_fread(%lld bytes at offset %lld of %lld) returned %zu: %s", n, done, total, r,
                   sheaf_last_error()))
            break;
        done += n;
    }
    if (done == total) {
        int64_t bad = pt_mismatch(buf, c->salt, src, 0, (size_t)total);
        CHECK(bad < 0, "parallel read: byte %lld of %lld differs (data of task %d expected)", (long long)bad, total,
              src);
        CHECK(pt_fnv(buf, (size_t)total) == c->sum[src], "checksum differs");
        CHECK(sion_feof(sid) == 1, "sion_feof after all %lld bytes: %d", total, sion_feof(sid));
        CHECK(sion_fread(buf, 1, 1, sid) == 0, "fread past the end returned data");
        CHECK(sion_get_bytes_read(sid) == total, "sion_get_bytes_read %lld, expected %lld", sion_get_bytes_read(sid),
              total);
    }
    free(buf);
    int rc = sion_generic_parclose(sid);
    CHECK(rc == SION_SUCCESS, "parclose read returned %d: %s", rc, sheaf_last_error());
}

static void serial_check(ctx *c)
{
    int ntasks = 0, nfiles = 0;
    sion_int64 *cs = NULL;
    sion_int32 fsblk = 0;
    int *gr = NULL;
    FILE *fp = NULL;
    int sid = sion_open(c->fname, "rb", &ntasks, &nfiles, &cs, &fsblk, &gr, &fp);
    if (!CHECK(sid >= 0, "serial sion_open(%s, rb) returned %d: %s", c->fname, sid, sheaf_last_error()))
        return;
    CHECK(ntasks == c->P, "serial: ntasks %d, expected %d", ntasks, c->P);
    CHECK(nfiles == c->nfiles, "serial: nfiles %d, expected %d", nfiles, c->nfiles);
    CHECK(fsblk == c->fsblk_out[0], "serial: fsblksize %d, expected %d", fsblk, c->fsblk_out[0]);
    {
        int lnt = 0, maxchunks = 0;
        sion_int64 gskip = 0, sov = 0, *lcs = NULL, *lgr = NULL, *bc = NULL, *bsz = NULL;
        if (CHECK(sion_get_locations(sid, &lnt, &maxchunks, &gskip, &sov, &lcs, &lgr, &bc, &bsz) == SION_SUCCESS,
                  "sion_get_locations: %s", sheaf_last_error()) &&
            CHECK(lnt == c->P, "sion_get_locations: ntasks %d", lnt)) {
            for (int t = 0; t < lnt; t++) {
                int w = slot_writer(c, t);
                sion_int64 sum = 0, maxb = 0;
                for (int b = 0; b < bc[t]; b++) {
                    sion_int64 v = bsz[(sion_int64)lnt * b + t];
                    sum += v;
                    maxb = v > maxb ? v : maxb;
                }
                CHECK(sum == c->size[w], "task %d: block sizes sum to %lld, wrote %lld", t, sum, c->size[w]);
                CHECK(maxb <= c->chunk_out[w], "task %d: a block holds %lld bytes, chunk is %lld", t, maxb,
                      c->chunk_out[w]);
                /* at least ceil(size/chunk) blocks (more: a record that does
                 * not fit the rest of a block starts the next one) */
                sion_int64 least = (c->size[w] + c->chunk_out[w] - 1) / c->chunk_out[w];
                CHECK(bc[t] >= least && bc[t] >= 1 && bc[t] <= maxchunks,
                      "task %d: %lld blocks for %lld bytes with chunk %lld (maxchunks %d)", t, bc[t], c->size[w],
                      c->chunk_out[w], maxchunks);
            }
            if (!quiet)
                printf("    fsblksize %d, max blocks per task %d\n", fsblk, maxchunks);
            c->maxchunks = maxchunks;
        }
    }
    for (int t = 0; t < c->P && t < ntasks; t++) {
        int w = slot_writer(c, t); /* whose data serial task index t holds */
        CHECK(cs && cs[t] == c->chunk_out[w], "serial: chunksize[%d] %lld, expected %lld", t, cs ? cs[t] : -1,
              c->chunk_out[w]);
        CHECK(gr && gr[t] == w, "serial: globalranks[%d] = %d, expected %d", t, gr ? gr[t] : -1, w);
        if (!CHECK(sion_seek(sid, t, 0, 0) == SION_SUCCESS, "serial: sion_seek(%d, 0, 0): %s", t, sheaf_last_error()))
            continue;
        /* SIONlib: a serial open of a whole set is file 0 whatever task is current; of one file, its number */
        CHECK(sion_get_filenumber(sid) == (nfiles > 1 ? 0 : c->fnr[w]), "serial: task %d in file %d, expected %d", t,
              sion_get_filenumber(sid), nfiles > 1 ? 0 : c->fnr[w]);
        sion_int64 total = c->size[w];
        unsigned char *buf = malloc((size_t)total + 1);
        size_t r = total ? sion_fread(buf, 1, (size_t)total, sid) : 0;
        if (CHECK(r == (size_t)total, "serial: task %d: fread %lld returned %zu: %s", t, total, r,
                  sheaf_last_error())) {
            int64_t bad = pt_mismatch(buf, c->salt, w, 0, (size_t)total);
            CHECK(bad < 0, "serial: task %d: byte %lld of %lld differs", t, (long long)bad, total);
            CHECK(pt_fnv(buf, (size_t)total) == c->sum[w], "serial: task %d: checksum differs", t);
            CHECK(sion_feof(sid) == 1, "serial: task %d: not at eof after its %lld bytes", t, total);
        }
        free(buf);
    }
    /* and in reverse task order with SION_ABSOLUTE_POS in the middle */
    for (int t = c->P - 1; t >= 0; t--) {
        int w = slot_writer(c, t);
        sion_int64 total = c->size[w];
        if (total < 2)
            continue;
        sion_int64 off = total / 2;
        unsigned char b[64];
        size_t n = (size_t)(total - off < 64 ? total - off : 64);
        CHECK(sion_seek(sid, t, SION_ABSOLUTE_POS, off) == SION_SUCCESS, "serial: seek(%d, ABSOLUTE, %lld): %s", t, off,
              sheaf_last_error());
        CHECK(sion_fread(b, 1, n, sid) == n && pt_mismatch(b, c->salt, w, off, n) < 0,
              "serial: task %d: bytes at %lld differ", t, off);
    }
    CHECK(sion_close(sid) == SION_SUCCESS, "serial close: %s", sheaf_last_error());
    free(cs);
    free(gr);
}

enum { SPLIT_MOD, SPLIT_CONTIG, SPLIT_RANDOM };
static const char *const split_names[] = {"grank % numfiles", "contiguous", "random files, permuted lranks"};

/* Fill c->fnr/lr/ls for P tasks over nfiles files (every file gets a task). */
static void make_split(ctx *c, int P, int nfiles, int split, uint64_t *rs)
{
    int cnt[MAXP] = {0};
    for (int t = 0; t < P; t++) {
        switch (split) {
        case SPLIT_MOD:
            c->fnr[t] = t % nfiles;
            break;
        case SPLIT_CONTIG:
            c->fnr[t] = t * nfiles / P;
            break;
        default:
            c->fnr[t] = t < nfiles ? t : (int)pt_range(rs, 0, nfiles - 1);
            break;
        }
        cnt[c->fnr[t]]++;
    }
    if (split == SPLIT_RANDOM) /* shuffle the file assignment over tasks */
        for (int t = P - 1; t > 0; t--) {
            int j = (int)pt_range(rs, 0, t), x = c->fnr[t];
            c->fnr[t] = c->fnr[j];
            c->fnr[j] = x;
        }
    int next[MAXP] = {0};
    for (int t = 0; t < P; t++) {
        c->ls[t] = cnt[c->fnr[t]];
        c->lr[t] = next[c->fnr[t]]++;
    }
    if (split == SPLIT_RANDOM) /* permute the local ranks inside each file */
        for (int f = 0; f < nfiles; f++)
            for (int t = P - 1; t > 0; t--) {
                if (c->fnr[t] != f)
                    continue;
                int j = (int)pt_range(rs, 0, t);
                if (c->fnr[j] != f)
                    continue;
                int x = c->lr[t];
                c->lr[t] = c->lr[j];
                c->lr[j] = x;
            }
}

static void run_case_split(int aid, const char *dir, int P, int nfiles, sion_int32 fsblk, const char *mw,
                           const char *mr, unsigned salt, int split)
{
    ctx *c = calloc(1, sizeof *c);
    c->aid = aid;
    c->P = P;
    c->nfiles = nfiles;
    c->fsblk_in = fsblk;
    c->mode_w = mw;
    c->mode_r = mr;
    c->salt = salt;
    snprintf(c->fname, sizeof c->fname, "%s/rt%u_P%d_nf%d.sion", dir, salt, P, nfiles);
    uint64_t rs = pt_seed() ^ salt;
    make_split(c, P, nfiles, split, &rs);
    int empty = P > 1 ? (int)pt_range(&rs, 0, P - 1) : -1;
    for (int t = 0; t < P; t++) {
        c->chunk_req[t] = pt_range(&rs, 1, 20000);
        /* up to ~4.5 chunks of data, so several blocks */
        c->size[t] = t == empty ? 0 : pt_range(&rs, 1, c->chunk_req[t] * 9 / 2 + 10);
    }
    int big = (empty + 1) % P; /* at least one task spans 3+ blocks */
    c->size[big] = c->chunk_req[big] * 3 + 8192 * 2 + pt_range(&rs, 1, 1000);
    if (!quiet)
        printf("  case: P=%d files=%d (%s) fsblksize=%d mode \"%s\"/\"%s\" (task %d empty)\n", P, nfiles,
               split_names[split], fsblk, mw, mr, empty);
    int f0 = atomic_load(&pt_failures);
    tc_run(P, writer, c);
    if (atomic_load(&pt_failures) == f0) {
        for (int f = 0; f < nfiles; f++) {
            char m[4300];
            pt_member(m, sizeof m, c->fname, f);
            CHECK(pt_exists(m), "physical file %s missing", m);
        }
        tc_run(P, reader, c);
        serial_check(c);
        if (P > 1)
            CHECK(c->maxchunks >= 3, "case P=%d nf=%d: the data used only %d block(s) per task (test too weak)", P,
                  nfiles, c->maxchunks);
    }
    free(c);
}

static void run_case(int aid, const char *dir, int P, int nfiles, sion_int32 fsblk, const char *mw, const char *mr,
                     unsigned salt)
{
    run_case_split(aid, dir, P, nfiles, fsblk, mw, mr, salt, SPLIT_MOD);
}

static void test_roundtrip(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-rt");
    CHECK(aid >= 0, "create api");
    run_case(aid, dir, 1, 1, -1, "bw", "br", 1);
    run_case(aid, dir, 2, 1, 4096, "wb,posix", "rb,posix", 2);
    run_case(aid, dir, 5, 1, -1, "bw", "br", 3);
    run_case(aid, dir, 5, 2, 4096, "bw", "br", 4);
    run_case(aid, dir, 8, 3, -1, "bw,posix", "br", 5);
    run_case(aid, dir, 7, 3, 4096, "w", "r", 6);
    run_case(aid, dir, 3, 3, 512, "bw", "br,posix", 7);
    run_case_split(aid, dir, 7, 3, 4096, "bw", "br", 8, SPLIT_CONTIG);
    run_case_split(aid, dir, 9, 4, 4096, "bw", "br", 9, SPLIT_RANDOM);
    run_case_split(aid, dir, 6, 6, 1024, "bw", "br", 10, SPLIT_RANDOM);
    run_case_split(aid, dir, 12, 1, 4096, "bw", "br", 11, SPLIT_RANDOM);
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* many random configurations (P 1..12, 1..4 files, several fsblksizes and modes) */
static void test_random_configs(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-rt-random");
    uint64_t rs = pt_seed() ^ 0xabcdefull;
    static const sion_int32 fsb[] = {-1, 512, 4096, 8192};
    static const char *const mw[] = {"bw", "wb,posix", "w,ansi"}, *const mr[] = {"br", "rb,posix", "r"};
    quiet = 1;
    for (unsigned i = 0; i < 40; i++) {
        int P = (int)pt_range(&rs, 1, 12);
        int nf = (int)pt_range(&rs, 1, P < 4 ? P : 4);
        run_case_split(aid, dir, P, nf, fsb[pt_range(&rs, 0, 3)], mw[pt_range(&rs, 0, 2)], mr[pt_range(&rs, 0, 2)],
                       100 + i, (int)pt_range(&rs, 0, 2));
    }
    quiet = 0;
    printf("  40 random configurations done\n");
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

/* two independent groups of threads open, write, read and close their own
 * containers at the same time, through the same API object */
typedef struct {
    int aid, P, nf;
    unsigned salt;
    const char *dir;
} conc_arg;
static void *conc_main(void *p)
{
    conc_arg *a = p;
    for (int rep = 0; rep < 3; rep++)
        run_case(a->aid, a->dir, a->P, a->nf, 4096, "bw", "br", a->salt + (unsigned)rep);
    return NULL;
}
static void test_concurrent_sets(void)
{
    const char *dir = pt_mkdtemp();
    int aid = tc_create_api("threadcomm-rt-conc");
    conc_arg a[2] = {{aid, 4, 2, 200, dir}, {aid, 5, 1, 300, dir}};
    pthread_t th[2];
    quiet = 1;
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, conc_main, &a[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    quiet = 0;
    sion_generic_free_api(aid);
    pt_rmtree(dir);
}

int main(int argc, char **argv)
{
    static const pt_test tests[] = {{"roundtrip", test_roundtrip},
                                    {"random_configurations", test_random_configs},
                                    {"concurrent_sets", test_concurrent_sets}};
    return pt_main(tests, 3, argc, argv);
}
