/* test_par_buddy.c - buddy checkpointing through the generic API (one thread
 * per task), SIONlib 1.7.6's layout: "bw,buddy" / "bw,buddy=2" and
 * sion_coll_fwrite write the container and the copy sets <name>_BUDDY_00,
 * _01 (SIONlib numbers them from 00). Copy member f of level L is written by
 * the tasks of file p = f - L (mod files): first one entry per task of p
 * (chunk 0, global rank -(g+1), one empty block), then the tasks of f with
 * their chunks, global ranks and blocks; member 0 maps every global task to
 * (member, entry). The test parses the stored bytes of every copy member
 * and checks all of that and every data byte. Deleting one physical file of
 * the container (file 0 or a later member), or damaging its metadata, makes
 * a "br,buddy" open read the first intact copy with every byte right, while a
 * plain "br" open fails; with the container and copy 1 gone, copy 2 is read;
 * with everything gone the open fails on all tasks, naming the container.
 * sion_get_io_info: SIONlib's list (the task's file as SION_ROLE_WRITER, per
 * level the collected member as SION_ROLE_COLLECTOR / _NOWRITER, with
 * SION_ROLE_SENDER the member holding the task's data); an empty list in a
 * buddy read, NULL without buddy or on a bad sid. A sion_fwrite is not copied
 * (as in SIONlib); reinit in buddy mode fails on every task. */
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

static void copy_member(char *out, size_t n, const cfg *c, int level, int k)
{
    char base[4300];
    snprintf(base, sizeof base, "%s_BUDDY_%02d", c->fname, level - 1);
    member(out, n, base, k);
}

/* The files this task writes into, as sion_get_io_info lists them (SIONlib's
 * roles). */
static void check_io_info(int sid, const cfg *c, int fn, int lr, int64_t n)
{
    sion_io_stat_t *io = sion_get_io_info(sid);
    if (!CHECK(io != NULL, "sion_get_io_info: NULL (%s)", sheaf_last_error()))
        return;
    CHECK(io->nfiles == 1 + c->levels, "io_info: %d files, expected %d", io->nfiles, 1 + c->levels);
    char want[4400];
    member(want, sizeof want, c->fname, fn);
    CHECK(io->nfiles > 0 && !strcmp(io->names[0], want) && io->sizes[0] == (size_t)n &&
              io->roles[0] == SION_ROLE_WRITER,
          "io_info #0: %s %zu %d", io->nfiles ? io->names[0] : "-", io->nfiles ? io->sizes[0] : 0,
          io->nfiles ? io->roles[0] : 0);
    for (int l = 1; l < io->nfiles && l <= c->levels; l++) {
        copy_member(want, sizeof want, c, l, (fn + l) % c->nf); /* the member my group collects */
        CHECK(!strcmp(io->names[l], want), "io_info #%d: name %s, expected %s", l, io->names[l], want);
        CHECK(io->sizes[l] == 0, "io_info #%d: size %zu", l, io->sizes[l]);
        CHECK(io->roles[l] == (lr == 0 ? SION_ROLE_COLLECTOR : SION_ROLE_NOWRITER), "io_info #%d: role %d", l,
              io->roles[l]);
    }
    CHECK(sion_free_io_info(io) == SION_SUCCESS, "sion_free_io_info");
    io = sion_get_io_info_by_spec(sid, SION_ROLE_SENDER, SION_GET_IO_INFO_FLAG_NONE); /* where my data is */
    if (CHECK(io && io->nfiles == c->levels, "io_info by spec SENDER: %d files", io ? io->nfiles : -1))
        for (int l = 1; l <= c->levels; l++) {
            copy_member(want, sizeof want, c, l, fn);
            CHECK(!strcmp(io->names[l - 1], want) && io->sizes[l - 1] == (size_t)n &&
                      io->roles[l - 1] == SION_ROLE_SENDER,
                  "io_info SENDER #%d: %s %zu %d", l, io->names[l - 1], io->sizes[l - 1], io->roles[l - 1]);
        }
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
    int64_t most = tbytes(t->gsize - 1);
    for (int64_t done = 0; done < most; done += 1000) { /* collective: every task calls as often; 0 bytes at the end */
        size_t k = (size_t)(n - off < 1000 ? n - off : 1000);
        size_t w = sion_coll_fwrite(b + off, 1, k, sid);
        CHECK(w == k, "write: %s", sheaf_last_error());
        off += (int64_t)k;
    }
    CHECK(sion_flush(sid) == SION_SUCCESS, "flush: %s", sheaf_last_error());
    free(b);
    check_io_info(sid, c, fn, lr, n);
    unsigned char x = 1;
    CHECK(sion_fwrite(&x, 1, 1, sid) == 1, "sion_fwrite in buddy mode: %s", sheaf_last_error()); /* not copied */
    CHECK(sion_generic_parreinit(sid, chunk) != SION_SUCCESS, "reinit in buddy mode succeeded");
    CHECK(sion_generic_parclose(sid) == SION_SUCCESS, "close: %s", sheaf_last_error());
}

/* ---- the stored bytes of copy member f of level `level` ---- */
static int64_t rd64(const unsigned char *d, size_t at)
{
    int64_t v;
    memcpy(&v, d + at, 8);
    return v;
}
static int32_t rd32(const unsigned char *d, size_t at)
{
    int32_t v;
    memcpy(&v, d + at, 4);
    return v;
}

static void check_member(const cfg *c, int P, int level, int f)
{
    char path[4400];
    copy_member(path, sizeof path, c, level, f);
    FILE *fp = fopen(path, "rb");
    if (!CHECK(fp != NULL, "copy member %s missing", path))
        return;
    static unsigned char d[1 << 20];
    size_t len = fread(d, 1, sizeof d, fp);
    fclose(fp);
    int nf = c->nf, pf = ((f - level) % nf + nf) % nf;
    int ent[64], ne = 0; /* global task of each entry; collectors as -(g+1) */
    for (int g = 0; g < P; g++)
        if (g % nf == pf)
            ent[ne++] = -(g + 1);
    for (int g = 0; g < P; g++)
        if (g % nf == f)
            ent[ne++] = g;
    if (!CHECK(len > 1088 && !memcmp(d, "sion", 4), "%s: no SION header", path))
        return;
    CHECK(rd32(d, 24) == ne && rd32(d, 28) == nf && rd32(d, 32) == f,
          "%s: %d entries, %d files, file %d; expected "
          "%d, %d, %d",
          path, rd32(d, 24), rd32(d, 28), rd32(d, 32), ne, nf, f);
    CHECK(!strcmp((const char *)d + 52, c->fname), "%s: prefix %s (SIONlib stores the container's name)", path,
          (const char *)d + 52);
    if (rd32(d, 24) != ne)
        return;
    int64_t starts[64], pos = (1088 + 16 * ne + 4095) / 4096 * 4096, gskip = 0;
    for (int e = 0; e < ne; e++) {
        int64_t cs = rd64(d, 1076 + 8 * (ne + e));
        CHECK(rd64(d, 1076 + 8 * e) == ent[e], "%s: entry %d global rank %lld, expected %d", path, e,
              (long long)rd64(d, 1076 + 8 * e), ent[e]);
        CHECK(cs == (ent[e] < 0 ? 0 : 4096), "%s: entry %d chunk %lld", path, e, (long long)cs);
        starts[e] = pos;
        pos += cs;
        gskip += cs;
    }
    int32_t maxc = rd32(d, 1076 + 16 * ne);
    int64_t sov = rd64(d, 1080 + 16 * ne);
    if (!CHECK(maxc > 0 && sov > 0 && (size_t)(sov + 8 * ne * (1 + maxc)) <= len, "%s: META2 at %lld (%d blocks)", path,
               (long long)sov, maxc))
        return;
    for (int e = 0; e < ne; e++) {
        int64_t cnt = rd64(d, (size_t)sov + 8 * e);
        if (ent[e] < 0) {
            CHECK(cnt == 1 && rd64(d, (size_t)sov + 8 * ne + 8 * e) == 0, "%s: collector entry %d: %lld blocks", path,
                  e, (long long)cnt);
            continue;
        }
        int64_t n = tbytes(ent[e]), off = 0, used = 0, b = 0;
        int64_t bs[16] = {0};
        for (; off < n; off += 1000) { /* the block rule for pieces of 1000 in a 4096 chunk */
            int64_t k = n - off < 1000 ? n - off : 1000;
            if (used + k > 4096)
                b++, used = 0;
            bs[b] += k;
            used += k;
        }
        CHECK(cnt == b + 1, "%s: entry %d (task %d): %lld blocks, expected %lld", path, e, ent[e], (long long)cnt,
              (long long)(b + 1));
        int64_t stream = 0;
        for (int64_t k = 0; k <= b && k < cnt && k < maxc; k++) {
            int64_t got = rd64(d, (size_t)sov + 8 * ne + 8 * (size_t)(k * ne + e)), at = starts[e] + k * gskip;
            CHECK(got == bs[k], "%s: entry %d block %lld: %lld bytes, expected %lld", path, e, (long long)k,
                  (long long)got, (long long)bs[k]);
            CHECK((size_t)(at + bs[k]) <= len && pt_mismatch(d + at, 5, ent[e], (size_t)stream, (size_t)bs[k]) < 0,
                  "%s: entry %d block %lld: data differ", path, e, (long long)k);
            stream += bs[k];
        }
    }
    size_t mp = (size_t)sov + 8 * (size_t)ne * (1 + (size_t)maxc);
    if (nf > 1 && f == 0) { /* member 0: the mapping of the P global tasks to (member, entry) */
        if (CHECK(mp + 4 + 8 * (size_t)P <= len && rd32(d, mp) == P, "%s: no mapping of %d tasks", path, P))
            for (int g = 0; g < P; g++) {
                int fg = g % nf, pg = ((fg - level) % nf + nf) % nf, sz_p = 0, before = 0;
                for (int h = 0; h < P; h++) {
                    sz_p += h % nf == pg;
                    before += h % nf == fg && h < g;
                }
                CHECK(rd32(d, mp + 4 + 8 * g) == fg && rd32(d, mp + 8 + 8 * g) == sz_p + before,
                      "%s: mapping of task %d: (%d, %d), expected (%d, %d)", path, g, rd32(d, mp + 4 + 8 * g),
                      rd32(d, mp + 8 + 8 * g), fg, sz_p + before);
            }
    } else {
        CHECK(mp == len, "%s: %zu bytes after META2", path, len - mp);
    }
}

typedef struct rcfg {
    cfg *c;
    const char *mode;
    int expect_ok;
    int extra;
} rcfg;
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
    unsigned char *b = malloc((size_t)n + 2);
    size_t got = sion_fread(b, 1, (size_t)n + 2, sid); /* the container: + the byte of sion_fwrite */
    CHECK(got == (size_t)(n + r->extra) && pt_mismatch(b, 5, t->grank, 0, (size_t)n) < 0 && (!r->extra || b[n] == 1),
          "read %zu of %lld bytes: %s", got, (long long)(n + r->extra), sheaf_last_error());
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
    CHECK(aid >= 0 && tc_register_coll(aid) == 0, "cannot create the test API");
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
    for (int l = 1; l <= levels; l++)
        for (int k = 0; k < nf; k++)
            check_member(&c, P, l, k);
    rcfg ok = {&c, "br", 1, 1};
    tc_run(P, rtask, &ok); /* intact: the container itself */
    member(f, sizeof f, c.fname, victim);
    CHECK(unlink(f) == 0, "cannot delete %s", f);
    rcfg plain = {&c, "br", 0, 0};
    tc_run(P, rtask, &plain); /* without buddy: fails */
    rcfg bud = {&c, "br,buddy", 1, 0};
    tc_run(P, rtask, &bud); /* with buddy: copy 1 */
    if (levels >= 2) {
        member(f, sizeof f, b1, victim);
        CHECK(unlink(f) == 0, "cannot delete %s", f);
        rcfg bud2 = {&c, "br,buddy=2", 1, 0};
        tc_run(P, rtask, &bud2); /* copy 2 */
        member(f, sizeof f, b2, 0);
        FILE *x = fopen(f, "r+b"); /* damage copy 2's header: nothing left */
        if (x) {
            fputs("garbage!", x);
            fclose(x);
        }
        rcfg none = {&c, "br,buddy=2", 0, 0};
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
