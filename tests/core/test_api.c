/* test_api.c - serial API round trips (write -> close -> read), byte identity
 * with a SIONlib-written vector, a sparse container beyond 4 GiB, and error
 * handling. Every byte read is verified against a deterministic pattern. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../helpers/vecpath.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <pthread.h>
#include "sion.h"
#include "sheaf.h"
#include "../helpers/testutil.h"

#define MAXT 64

/* What a task is expected to hold: the pattern of (salt + t), lengths of blocks. */
typedef struct {
    int64_t chunk;        /* aligned chunk size */
    int64_t len;          /* bytes written so far */
    int64_t nblocks, cur; /* blocks used, current block */
    int64_t bs[4096];     /* bytes per block */
} model_task;

static model_task *model; /* [MAXT] */
/* coverage counters, printed after the random round trips */
static long st_tasks, st_blocks, st_maxblocks, st_big_writes, st_raw_writes, st_switches, st_empty, st_bytes;
static int g_salt;

static unsigned char pat(int t, int64_t i) { return tu_pat(t + g_salt, i); }
static void fillp(unsigned char *b, int t, int64_t off, size_t n)
{
    for (size_t k = 0; k < n; k++)
        b[k] = pat(t, off + (int64_t)k);
}

/* model of the write placement rule (sion_common.h): a write that fits into a
 * chunk but not into the current block starts a new block; larger writes
 * fill blocks one after another. */
static void model_write(model_task *m, int64_t n)
{
    if (n == 0)
        return;
    if (n <= m->chunk && m->bs[m->cur] + n > m->chunk) {
        m->cur = m->nblocks++;
        m->bs[m->cur] = 0;
    }
    while (n > 0) {
        int64_t room = m->chunk - m->bs[m->cur];
        if (room == 0) {
            m->cur = m->nblocks++;
            m->bs[m->cur] = 0;
            continue;
        }
        int64_t w = room < n ? room : n;
        m->bs[m->cur] += w;
        m->len += w;
        n -= w;
    }
}

static void model_ensure(model_task *m, int64_t n)
{
    if (m->bs[m->cur] + n > m->chunk) {
        m->cur = m->nblocks++;
        m->bs[m->cur] = 0;
    }
}

static int setup(void **st)
{
    (void)st;
    model = calloc(MAXT, sizeof *model);
    sheaf_set_error_printing(0);
    return model ? 0 : -1;
}
static int teardown(void **st)
{
    (void)st;
    free(model);
    return 0;
}

static void expect_error_mentions(const char *a, const char *b)
{
    const char *e = sheaf_last_error();
    if (a && !strstr(e, a))
        fail_msg("error message \"%s\" does not mention \"%s\"", e, a);
    if (b && !strstr(e, b))
        fail_msg("error message \"%s\" does not mention \"%s\"", e, b);
}

/* Compare the whole locations table with the model. */
static void check_locations(int sid, int ntasks, int64_t globalskip_exp)
{
    int nt = 0, maxc = 0;
    sion_int64 gskip = 0, sov = 0, *cs = NULL, *gr = NULL, *bc = NULL, *bsz = NULL;
    assert_int_equal(sion_get_locations(sid, &nt, &maxc, &gskip, &sov, &cs, &gr, &bc, &bsz), SION_SUCCESS);
    assert_int_equal(nt, ntasks);
    assert_true(gskip == globalskip_exp);
    int64_t mx = 1;
    for (int t = 0; t < ntasks; t++)
        if (model[t].nblocks > mx)
            mx = model[t].nblocks;
    assert_int_equal(maxc, mx);
    for (int t = 0; t < ntasks; t++) {
        assert_true(cs[t] == model[t].chunk);
        assert_true(bc[t] == model[t].nblocks);
        for (int64_t b = 0; b < model[t].nblocks; b++)
            if (bsz[b * ntasks + t] != model[t].bs[b])
                fail_msg("task %d block %lld: table says %lld bytes, expected %lld", t, (long long)b,
                         (long long)bsz[b * ntasks + t], (long long)model[t].bs[b]);
    }
}

/* Read the whole stream of the current task in random pieces and verify. */
static void read_verify_task(int sid, int t)
{
    int64_t len = model[t].len, off = 0;
    unsigned char *buf = malloc((size_t)(len > 0 ? len : 1) + 64), *exp = malloc((size_t)len + 64);
    fillp(exp, t, 0, (size_t)len);
    while (!sion_feof(sid)) {
        size_t want = (size_t)tu_range(1, tu_rand() % 4 ? 700 : 3 * model[t].chunk + 5);
        size_t got = sion_fread(buf + off, 1, want > (size_t)(len - off) + 16 ? (size_t)(len - off) + 16 : want, sid);
        if (got == 0)
            fail_msg("task %d: fread returned 0 at %lld of %lld: %s", t, (long long)off, (long long)len,
                     sheaf_last_error());
        off += (int64_t)got;
        assert_true(off <= len);
    }
    assert_true(off == len);
    if (len && memcmp(buf, exp, (size_t)len) != 0) {
        int64_t i = 0;
        while (buf[i] == exp[i])
            i++;
        fail_msg("task %d: byte %lld differs (got %d expected %d)", t, (long long)i, buf[i], exp[i]);
    }
    /* at the end: a further read returns 0 and feof stays 1 */
    assert_int_equal(sion_fread(buf, 1, 1, sid), 0);
    assert_int_equal(sion_feof(sid), 1);
    free(buf);
    free(exp);
}

static int64_t stream_off(int t, int64_t b, int64_t pos)
{
    int64_t o = pos;
    for (int64_t k = 0; k < b; k++)
        o += model[t].bs[k];
    return o;
}

/* One random write/read cycle. */
static void one_roundtrip(const char *dir, int iter)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rt%d.sion", dir, iter);
    int ntasks = (int)(tu_rand() % 5 == 0 ? tu_range(33, MAXT) : tu_range(1, 12));
    int bsel = (int)tu_range(0, 2);
    sion_int32 bs = bsel == 0 ? 512 : bsel == 1 ? 4096 : -1;
    int posix = (int)(tu_rand() & 1);
    sion_int64 *cs = malloc(8 * (size_t)ntasks), *cs_in = malloc(8 * (size_t)ntasks);
    int *gr = malloc(sizeof(int) * (size_t)ntasks);
    int64_t target[MAXT];
    for (int t = 0; t < ntasks; t++) {
        int kind = (int)tu_range(0, 3);
        cs[t] = kind == 0 ? tu_range(1, 600) : kind == 1 ? 512 * tu_range(1, 4) : tu_range(1, 9000);
        cs_in[t] = cs[t];
        gr[t] = 1000 + 3 * t;
        int k2 = (int)tu_range(0, 5);
        target[t] = k2 == 0 ? 0 : k2 == 1 ? 1 : tu_range(2, 6 * cs[t] + 5000);
    }
    int nf = 1;
    FILE *fp = NULL;
    int sid = sion_open(path, posix ? "bw,posix" : "bw,ansi", &ntasks, &nf, &cs, &bs, &gr, &fp);
    if (sid < 0)
        fail_msg("open for writing failed: %s", sheaf_last_error());
    assert_true(bs > 0);
    if (bsel == 0)
        assert_int_equal(bs, 512);
    if (bsel == 1)
        assert_int_equal(bs, 4096);
    assert_int_equal(nf, 1);
    if (posix)
        assert_null(fp);
    else
        assert_non_null(fp);
    int64_t gskip = 0;
    for (int t = 0; t < ntasks; t++) {
        int64_t al = (cs_in[t] + bs - 1) / bs * bs;
        if (cs[t] != cs_in[t]) /* SIONlib's serial write open leaves the caller's array alone */
            fail_msg("task %d: chunk size %lld written back, %lld given", t, (long long)cs[t], (long long)cs_in[t]);
        memset(&model[t], 0, sizeof model[t]);
        model[t].chunk = al;
        model[t].nblocks = 1;
        gskip += al;
    }
    /* write, switching tasks in random order */
    unsigned char *buf = malloc(8 * 9000 + 16);
    int cur = 0;
    for (;;) {
        int left = 0;
        for (int t = 0; t < ntasks; t++)
            left += model[t].len < target[t];
        if (!left)
            break;
        int t = (int)tu_range(0, ntasks - 1);
        if (model[t].len >= target[t])
            continue;
        if (t != cur || tu_rand() % 8 == 0) {
            assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
            cur = t;
            st_switches++;
        }
        int64_t rem = target[t] - model[t].len;
        int64_t n = tu_rand() % 5 == 0 ? tu_range(1, 3 * model[t].chunk) : tu_range(1, model[t].chunk);
        if (n > rem)
            n = rem;
        fillp(buf, t, model[t].len, (size_t)n);
        if (n <= model[t].chunk && tu_rand() % 3 == 0) {
            /* SIONlib style: reserve, then write through the exported handle */
            assert_int_equal(sion_ensure_free_space(sid, n), SION_SUCCESS);
            model_ensure(&model[t], n);
            assert_true(sion_bytes_avail_in_block(sid) == model[t].chunk - model[t].bs[model[t].cur]);
            if (posix) {
                int fd = sion_get_fd(sid);
                assert_true(fd >= 0);
                assert_true(write(fd, buf, (size_t)n) == (ssize_t)n);
            } else {
                assert_true(sion_get_fp(sid) == fp);
                assert_true(fwrite(buf, 1, (size_t)n, fp) == (size_t)n);
            }
            model[t].bs[model[t].cur] += n;
            model[t].len += n;
            st_raw_writes++;
        } else {
            st_big_writes += n > model[t].chunk;
            size_t items = (size_t)n, size = 1;
            if (n % 4 == 0 && tu_rand() % 2) {
                size = 4;
                items = (size_t)n / 4;
            }
            if (sion_fwrite(buf, size, items, sid) != items)
                fail_msg("fwrite of %lld bytes to task %d failed: %s", (long long)n, t, sheaf_last_error());
            model_write(&model[t], n);
        }
        assert_true(model[t].nblocks < 4000);
        assert_true(sion_get_bytes_written(sid) == model[t].len);
        int blk = -1, mc = -1;
        sion_int64 pos = -1, *bsz = NULL;
        assert_int_equal(sion_get_current_location(sid, &blk, &pos, &mc, &bsz), SION_SUCCESS);
        assert_int_equal(blk, model[t].cur);
        assert_true(pos == model[t].bs[model[t].cur]);
        assert_int_equal(mc, model[t].nblocks);
        assert_true(sion_get_position(sid) >= 0);
    }
    check_locations(sid, ntasks, gskip);
    for (int t = 0; t < ntasks; t++) {
        st_tasks++;
        st_blocks += model[t].nblocks;
        st_empty += model[t].len == 0;
        st_bytes += model[t].len;
        if (model[t].nblocks > st_maxblocks)
            st_maxblocks = model[t].nblocks;
    }
    assert_int_equal(sion_fread(buf, 1, 1, sid), 0); /* write handle refuses reads */
    expect_error_mentions(path, NULL);
    assert_int_equal(sion_close(sid), SION_SUCCESS);

    /* file size: S0 + maxchunks*globalskip + META2 + 4 */
    int64_t maxc = 1;
    for (int t = 0; t < ntasks; t++)
        if (model[t].nblocks > maxc)
            maxc = model[t].nblocks;
    int64_t h = 1088 + 16 * (int64_t)ntasks, s0 = (h + bs - 1) / bs * bs;
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size == s0 + maxc * gskip + 8 * ntasks * (1 + maxc) + 4);

    /* read back the whole container */
    int rnt = 0, rnf = 0;
    sion_int32 rbs = 0;
    sion_int64 *rcs = NULL;
    int *rgr = NULL;
    FILE *rfp = NULL;
    sid = sion_open(path, posix ? "rb,posix" : "rb", &rnt, &rnf, &rcs, &rbs, &rgr, &rfp);
    if (sid < 0)
        fail_msg("open for reading failed: %s", sheaf_last_error());
    assert_int_equal(rnt, ntasks);
    assert_int_equal(rnf, 1);
    assert_int_equal(rbs, bs);
    for (int t = 0; t < ntasks; t++) {
        assert_true(rcs[t] == model[t].chunk);
        assert_int_equal(rgr[t], 1000 + 3 * t);
    }
    check_locations(sid, ntasks, gskip);
    assert_int_equal(sion_fwrite(buf, 1, 1, sid), 0); /* read handle refuses writes */
    assert_int_equal(sion_ensure_free_space(sid, 1), SION_NOT_SUCCESS);
    int order[MAXT];
    for (int t = 0; t < ntasks; t++)
        order[t] = t;
    for (int t = ntasks - 1; t > 0; t--) {
        int j = (int)tu_range(0, t), x = order[t];
        order[t] = order[j];
        order[j] = x;
    }
    int64_t total = 0;
    for (int k = 0; k < ntasks; k++) {
        int t = order[k];
        assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        read_verify_task(sid, t);
        total += model[t].len;
    }
    (void)total;
    /* SIONlib's bytes_read: the cursor's offset in the current task (read to its end) */
    assert_true(sion_get_bytes_read(sid) == model[order[ntasks - 1]].len);
    assert_true(sion_get_bytes_written(sid) == -1);

    /* random seeks */
    for (int k = 0; k < 40; k++) {
        int t = (int)tu_range(0, ntasks - 1);
        int64_t len = model[t].len, expect_off;
        int how = (int)tu_range(0, 2);
        if (how == 0) {
            expect_off = tu_range(0, len);
            assert_int_equal(sion_seek(sid, t, SION_ABSOLUTE_POS, expect_off), SION_SUCCESS);
        } else if (how == 1) {
            expect_off = tu_range(0, len);
            assert_int_equal(sion_seek(sid, t, SION_END_POS, expect_off - len), SION_SUCCESS);
        } else {
            int64_t b = tu_range(0, model[t].nblocks - 1), p = tu_range(0, model[t].bs[b]);
            assert_int_equal(sion_seek(sid, t, (int)b, p), SION_SUCCESS);
            expect_off = stream_off(t, b, p);
            assert_true(sion_bytes_avail_in_block(sid) == model[t].bs[b] - p);
            int blk;
            sion_int64 pos;
            assert_int_equal(sion_get_current_location(sid, &blk, &pos, NULL, NULL), SION_SUCCESS);
            assert_int_equal(blk, b);
            assert_true(pos == p);
            int64_t s = s0;
            for (int u = 0; u < t; u++)
                s += model[u].chunk;
            assert_true(sion_get_position(sid) == s + b * gskip + p);
            if (!posix && p < model[t].bs[b]) {
                /* SIONlib style: read the rest of the block through the FILE* */
                size_t n = (size_t)(model[t].bs[b] - p);
                assert_true(sion_get_fp(sid) == rfp);
                assert_true(fread(buf, 1, n > 4096 ? 4096 : n, rfp) == (n > 4096 ? 4096 : n));
                for (size_t i = 0; i < (n > 4096 ? 4096 : n); i++)
                    assert_int_equal(buf[i], pat(t, expect_off + (int64_t)i));
                assert_int_equal(sion_seek(sid, t, (int)b, p), SION_SUCCESS);
            }
        }
        size_t want = (size_t)tu_range(1, 5000);
        int64_t exp_got = len - expect_off < (int64_t)want ? len - expect_off : (int64_t)want;
        size_t got = sion_fread(buf, 1, want, sid);
        assert_true((int64_t)got == exp_got);
        for (size_t i = 0; i < got; i++)
            if (buf[i] != pat(t, expect_off + (int64_t)i))
                fail_msg("seek test: task %d offset %lld differs", t, (long long)(expect_off + (int64_t)i));
        assert_int_equal(sion_feof(sid), expect_off + (int64_t)got == len);
    }
    /* out-of-range seeks are refused and keep the handle usable */
    assert_int_equal(sion_seek(sid, ntasks, SION_CURRENT_BLK, SION_CURRENT_POS), SION_NOT_SUCCESS);
    expect_error_mentions(path, NULL);
    assert_int_equal(sion_seek(sid, 0, (int)model[0].nblocks, 0), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, 0, model[0].bs[0] + 1), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, SION_ABSOLUTE_POS, model[0].len + 1), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, SION_ABSOLUTE_POS, -1), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, SION_END_POS, 1), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, SION_END_POS, -model[0].len - 1), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, SION_ABSOLUTE_POS, 0), SION_SUCCESS);
    read_verify_task(sid, 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(rcs);
    free(rgr);

    /* open_rank on a few tasks */
    for (int k = 0; k < 3; k++) {
        int t = (int)tu_range(0, ntasks - 1), rank = t;
        sion_int64 chunk = 0;
        sion_int32 obs = 0;
        sid = sion_open_rank(path, "rb", &chunk, &obs, &rank, NULL);
        if (sid < 0)
            fail_msg("open_rank %d failed: %s", t, sheaf_last_error());
        assert_true(chunk == model[t].chunk);
        assert_int_equal(obs, bs);
        read_verify_task(sid, t);
        if (ntasks > 1)
            assert_int_equal(sion_seek(sid, (t + 1) % ntasks, SION_CURRENT_BLK, SION_CURRENT_POS), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek(sid, SION_CURRENT_RANK, SION_ABSOLUTE_POS, 0), SION_SUCCESS);
        read_verify_task(sid, t);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    int bad = ntasks;
    assert_int_equal(sion_open_rank(path, "rb", NULL, NULL, &bad, NULL), -1);
    expect_error_mentions(path, "does not exist");
    free(buf);
    free(cs);
    free(cs_in);
    free(gr);
    unlink(path);
}

static void test_random_roundtrips(void **st)
{
    (void)st;
    uint64_t seed = tu_seed_from_env("random round trips", 20261122);
    g_salt = (int)(seed % 97);
    char *dir = tu_mkdtemp();
    for (int i = 0; i < 40; i++)
        one_roundtrip(dir, i);
    printf("[ STATS    ] %ld tasks, %ld empty, %ld blocks (max %ld per task), %ld bytes, %ld writes > chunk, "
           "%ld raw FILE*/fd writes, %ld task switches\n",
           st_tasks, st_empty, st_blocks, st_maxblocks, st_bytes, st_big_writes, st_raw_writes, st_switches);
    assert_true(st_maxblocks > 5 && st_big_writes > 0 && st_raw_writes > 0 && st_empty > 0);
    tu_rmtree(dir);
    free(dir);
}

/* serial5: reproduce the SIONlib-written vector byte for byte. */
static void test_byte_identity_serial5(void **st)
{
    (void)st;
    const char *vdir = getenv("SHEAF_VECTORS_DIR");
    char vpath[4096];
    snprintf(vpath, sizeof vpath, "%s/serial5.sion", vdir ? vdir : ".");
    size_t vlen = 0;
    unsigned char *vec = tu_read_file(vpath, &vlen);
    char *dir = tu_mkdtemp(), cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    int ntasks = 5, nfiles = 1;
    sion_int32 bs = 4096;
    sion_int64 csv[5] = {4096, 8192, 4096, 4096, 20480}, *cs = csv;
    int grv[5] = {100, 101, 102, 103, 104}, *gr = grv;
    int64_t bytes[5] = {1000, 4000, 0, 50, 20000};
    FILE *fp;
    int sid = sion_open("serial5.sion", "wb", &ntasks, &nfiles, &cs, &bs, &gr, &fp);
    if (sid < 0)
        fail_msg("open: %s", sheaf_last_error());
    unsigned char *buf = malloc(20000);
    for (int t = 0; t < 5; t++) {
        assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        tu_fill(buf, t, 0, (size_t)bytes[t]);
        if (bytes[t])
            assert_int_equal(sion_fwrite(buf, 1, (size_t)bytes[t], sid), (size_t)bytes[t]);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    size_t len = 0;
    unsigned char *mine = tu_read_file("serial5.sion", &len);
    assert_int_equal(chdir(cwd), 0);
    assert_non_null(mine);
    char hex[65];
    tu_sha256_hex(mine, len, hex);
    if (strcmp(hex, "561a44fbc9f5b9597bab19115ad041d5e522db6d4bd89f05774e3b6db699abaa") != 0) {
        if (vec) {
            size_t i = 0;
            while (i < len && i < vlen && mine[i] == vec[i])
                i++;
            fail_msg("serial5 differs from the SIONlib vector: size %zu vs %zu, first difference at byte %zu "
                     "(ours 0x%02x, SIONlib 0x%02x); sha256 %s",
                     len, vlen, i, i < len ? mine[i] : 0, i < vlen ? vec[i] : 0, hex);
        }
        fail_msg("serial5 sha256 %s does not match the manifest", hex);
    }
    /* the sha256 helper itself: vector file hashes to the manifest value */
    if (vec) {
        tu_sha256_hex(vec, vlen, hex);
        assert_string_equal(hex, "561a44fbc9f5b9597bab19115ad041d5e522db6d4bd89f05774e3b6db699abaa");
    }
    /* the per-task pattern hashes of the manifest */
    tu_fill(buf, 4, 0, 20000);
    tu_sha256_hex(buf, 20000, hex);
    assert_string_equal(hex, "3117759c0dbdd2a178b22e29fec5837f1b14df80a4e92d4c21e805636014e0d0");
    free(buf);
    free(mine);
    free(vec);
    tu_rmtree(dir);
    free(dir);
}

/* A sparse container with data beyond 4 GiB. */
static void test_beyond_4gib(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/big.sion", dir);
    int ntasks = 2, nf = 1;
    sion_int32 bs = 4096;
    const int64_t C = 3LL << 30, MB = 1 << 20;
    sion_int64 csv[2] = {C, C}, *cs = csv;
    int grv[2] = {0, 1}, *gr = grv;
    int sid = sion_open(path, "bw,posix", &ntasks, &nf, &cs, &bs, &gr, NULL);
    if (sid < 0)
        fail_msg("open: %s", sheaf_last_error());
    unsigned char *buf = malloc((size_t)MB);
    int64_t len[2] = {0, 0};
    int ok = 1;
    for (int b = 0; b < 3 && ok; b++) {
        for (int t = 0; t < 2 && ok; t++) {
            assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
            if (b > 0)
                assert_int_equal(sion_ensure_free_space(sid, C), SION_SUCCESS); /* next block */
            fillp(buf, t, len[t], (size_t)MB);
            if (sion_fwrite(buf, 1, (size_t)MB, sid) != (size_t)MB) {
                ok = 0;
                break;
            }
            len[t] += MB;
            int blk;
            assert_int_equal(sion_get_current_location(sid, &blk, NULL, NULL, NULL), SION_SUCCESS);
            assert_int_equal(blk, b);
        }
    }
    if (!ok) {
        const char *e = sheaf_last_error();
        int efbig = strstr(e, "too large") != NULL || strstr(e, "No space") != NULL;
        sion_close(sid);
        tu_rmtree(dir);
        free(dir);
        free(buf);
        if (efbig)
            skip();
        fail_msg("large write failed: %s", e);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    int64_t s0 = 4096, gskip = 2 * C;
    assert_true(sb.st_size == s0 + 3 * gskip + 8 * 2 * 4 + 4);
    assert_true((int64_t)sb.st_blocks * 512 < 64 * MB); /* sparse */
    sid = sion_open_rank(path, "rb", NULL, NULL, &(int){1}, NULL);
    if (sid < 0)
        fail_msg("open_rank: %s", sheaf_last_error());
    for (int b = 2; b >= 0; b--) {
        int64_t p = b == 1 ? MB - 100 : 12345;
        assert_int_equal(sion_seek(sid, SION_CURRENT_RANK, b, p), SION_SUCCESS);
        assert_true(sion_get_position(sid) == s0 + C + b * gskip + p);
        size_t got = sion_fread(buf, 1, 1000, sid); /* b=1 crosses into block 2 */
        assert_int_equal(got, 1000);
        for (int i = 0; i < 1000; i++)
            assert_int_equal(buf[i], pat(1, b * MB + p + i));
    }
    assert_int_equal(sion_seek(sid, SION_CURRENT_RANK, SION_END_POS, -10), SION_SUCCESS);
    assert_int_equal(sion_fread(buf, 1, 100, sid), 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(buf[i], pat(1, 3 * MB - 10 + i));
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    int n = 0, nf2 = 0;
    sid = sion_open(path, "rb", &n, &nf2, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_seek(sid, 0, SION_ABSOLUTE_POS, 2 * MB + 5), SION_SUCCESS);
    assert_true(sion_get_position(sid) == s0 + 2 * gskip + 5);
    assert_true(sion_get_position(sid) > (4LL << 30));
    assert_int_equal(sion_fread(buf, 1, MB, sid), MB - 5);
    for (int64_t i = 0; i < MB - 5; i++)
        if (buf[i] != pat(0, 2 * MB + 5 + i))
            fail_msg("byte %lld beyond 4 GiB differs", (long long)i);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(buf);
    tu_rmtree(dir);
    free(dir);
}

static void test_errors(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/err.sion", dir);
    unsigned char buf[64] = {0};
    int ntasks = 2, nf = 1;
    sion_int32 bs = 512;
    sion_int64 csv[2] = {1000, 0}, *cs = csv;

    /* invalid sids */
    for (int bad = -1; bad <= 999; bad += 1000) {
        assert_int_equal(sion_fwrite(buf, 1, 1, bad), 0);
        expect_error_mentions("invalid sid", NULL);
        assert_int_equal(sion_fread(buf, 1, 1, bad), 0);
        assert_int_equal(sion_seek(bad, 0, 0, 0), SION_NOT_SUCCESS);
        assert_true(sion_get_position(bad) == -1);
        assert_int_equal(sion_feof(bad), -1);
        assert_int_equal(sion_ensure_free_space(bad, 1), SION_NOT_SUCCESS);
        assert_true(sion_bytes_avail_in_block(bad) == SION_SIZE_NOT_VALID);
        assert_int_equal(sion_get_locations(bad, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), SION_NOT_SUCCESS);
        assert_int_equal(sion_close(bad), SION_NOT_SUCCESS);
        assert_int_equal(sion_flush(bad), SION_NOT_SUCCESS);
        assert_true(sion_get_bytes_written(bad) == -1);
        assert_null(sion_get_fp(bad));
        assert_int_equal(sion_get_fd(bad), -1);
    }

    /* nonexistent file */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/does-not-exist.sion", dir);
    int n = 0, f = 0;
    assert_int_equal(sion_open(missing, "rb", &n, &f, NULL, NULL, NULL, NULL), -1);
    expect_error_mentions(missing, "No such file");
    assert_int_equal(sheaf_last_error_code(), SHEAF_E_NOTFOUND);
    int r0 = 0;
    assert_int_equal(sion_open_rank(missing, "rb", NULL, NULL, &r0, NULL), -1);
    expect_error_mentions(missing, NULL);

    /* nfiles = 2 for writing */
    nf = 2;
    assert_int_equal(sion_open(path, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL), -1);
    expect_error_mentions(path, "nfiles=2");
    /* no tasks, negative chunk size */
    nf = 1;
    int zero = 0;
    assert_int_equal(sion_open(path, "wb", &zero, &nf, &cs, &bs, NULL, NULL), -1);
    expect_error_mentions(path, "number of tasks");
    sion_int64 negv[2] = {512, -1}, *neg = negv;
    assert_int_equal(sion_open(path, "wb", &ntasks, &nf, &neg, &bs, NULL, NULL), -1);
    expect_error_mentions(path, "negative chunk size");
    assert_int_equal(sion_open(path, "wb", &ntasks, &nf, NULL, &bs, NULL, NULL), -1);
    /* bad mode value */
    nf = 1;
    assert_int_equal(sion_open(path, "wb,endianness=middle", &ntasks, &nf, &cs, &bs, NULL, NULL), -1);
    expect_error_mentions("endianness", NULL);
    /* open_rank for writing */
    assert_int_equal(sion_open_rank(path, "wb", NULL, NULL, &r0, NULL), -1);

    /* misuse of a write handle */
    int sid = sion_open(path, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL);
    assert_true(sid >= 0);
    assert_true(cs[0] == 1000 && cs[1] == 0); /* not written back: SIONlib */
    assert_int_equal(sion_ensure_free_space(sid, 1025), SION_NOT_SUCCESS);
    expect_error_mentions(path, "1025");
    assert_int_equal(sion_ensure_free_space(sid, 1024), SION_SUCCESS);
    assert_int_equal(sion_seek(sid, 0, 0, 0), SION_NOT_SUCCESS); /* write: only the task may change */
    expect_error_mentions(path, NULL);
    assert_int_equal(sion_seek(sid, 2, SION_CURRENT_BLK, SION_CURRENT_POS), SION_NOT_SUCCESS);
    assert_int_equal(sion_seek(sid, -5, SION_CURRENT_BLK, SION_CURRENT_POS), SION_NOT_SUCCESS);
    assert_int_equal(sion_fread(buf, 1, 1, sid), 0);
    assert_true(sion_get_bytes_read(sid) == -1);
    assert_int_equal(sion_fwrite(buf, 1, 10, sid), 10);
    assert_int_equal(sion_fwrite(NULL, 1, 10, sid), 0);
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_fwrite(buf, 1, 1, sid), 0); /* chunk size 0 */
    expect_error_mentions(path, "chunk size 0");
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    assert_int_equal(sion_close(sid), SION_NOT_SUCCESS); /* double close */
    assert_int_equal(sion_fwrite(buf, 1, 1, sid), 0);    /* use after close */

    /* misuse of a read handle */
    sid = sion_open(path, "rb", &n, &f, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_fwrite(buf, 1, 1, sid), 0);
    expect_error_mentions(path, "reading");
    assert_int_equal(sion_ensure_free_space(sid, 1), SION_NOT_SUCCESS);
    assert_int_equal(sion_fread(buf, 1, 64, sid), 10);
    assert_int_equal(sion_feof(sid), 1);
    assert_int_equal(sion_seek(sid, 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    assert_int_equal(sion_feof(sid), 1); /* task 1 is empty */
    assert_int_equal(sion_fread(buf, 1, 1, sid), 0);
    assert_int_equal(sion_close(sid), SION_SUCCESS);

    /* a key-value read of a plain container is refused */
    assert_int_equal(sion_open(path, "rb,keyval=inline", &n, &f, NULL, NULL, NULL, NULL), -1);
    expect_error_mentions(path, "key-value");

    /* a directory is not a container */
    assert_int_equal(sion_open(dir, "rb", &n, &f, NULL, NULL, NULL, NULL), -1);
    expect_error_mentions(dir, "directory");

    /* writing into a directory that does not exist */
    assert_int_equal(sion_open(missing, "rb", &n, &f, NULL, NULL, NULL, NULL), -1);
    char nodir[4300];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir.sion", dir);
    assert_int_equal(sion_open(nodir, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL), -1);
    expect_error_mentions(nodir, "No such file");

    /* /dev/full: refused at the open, as every file that is not a regular file (a
     * full disk is tested with a real one in tests/faults) */
    struct stat full_st; /* only the real device: never create or write a file there */
    if (stat("/dev/full", &full_st) == 0 && S_ISCHR(full_st.st_mode) && access("/dev/full", W_OK) == 0) {
        const char *modes[2] = {"wb,ansi", "wb,posix"};
        for (int k = 0; k < 2; k++) {
            sion_int64 c2[2] = {4096, 4096}, *cp = c2;
            ntasks = 2;
            nf = 1;
            bs = 4096;
            sid = sion_open("/dev/full", modes[k], &ntasks, &nf, &cp, &bs, NULL, NULL);
            assert_int_equal(sid, -1);
            expect_error_mentions("/dev/full", "is not a regular file (a character device)");
        }
    }
    tu_rmtree(dir);
    free(dir);
}

/* The write placement rules with concrete numbers (chunk 1024). */
static void test_block_rules(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/blk.sion", dir);
    int ntasks = 1, nf = 1;
    sion_int32 bs = 512;
    sion_int64 csv[1] = {1000}, *cs = csv;
    int sid = sion_open(path, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL);
    assert_true(sid >= 0);
    unsigned char b[5000];
    fillp(b, 0, 0, sizeof b);
    g_salt = 0;
    fillp(b, 0, 0, sizeof b);
    assert_int_equal(sion_fwrite(b, 1, 1000, sid), 1000); /* block 0: 1000 */
    assert_true(sion_bytes_avail_in_block(sid) == 24);
    assert_int_equal(sion_fwrite(b + 1000, 1, 100, sid), 100);   /* doesn't fit: block 1: 100 */
    assert_int_equal(sion_fwrite(b + 1100, 1, 3000, sid), 3000); /* > chunk: 924, 1024, 1024, 28 */
    assert_true(sion_get_bytes_written(sid) == 4100);
    sion_int64 *bsz;
    int blk, mc;
    sion_int64 pos;
    assert_int_equal(sion_get_current_location(sid, &blk, &pos, &mc, &bsz), SION_SUCCESS);
    assert_int_equal(blk, 4);
    assert_true(pos == 28);
    assert_int_equal(mc, 5);
    assert_true(bsz[0] == 1000 && bsz[1] == 1024 && bsz[2] == 1024 && bsz[3] == 1024 && bsz[4] == 28);
    assert_true(sion_get_position(sid) == 1536 + 4 * 1024 + 28);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    int n, f;
    sid = sion_open(path, "rb", &n, &f, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    unsigned char r[5000];
    assert_int_equal(sion_fread(r, 1, sizeof r, sid), 4100);
    assert_memory_equal(r, b, 4100);
    assert_int_equal(sion_seek(sid, 0, 1, 0), SION_SUCCESS);
    assert_true(sion_bytes_avail_in_block(sid) == 1024);
    assert_int_equal(sion_seek(sid, 0, 0, 1000), SION_SUCCESS); /* end of block 0 */
    assert_true(sion_bytes_avail_in_block(sid) == 0);
    assert_int_equal(sion_feof(sid), 0); /* moves on to block 1 */
    assert_true(sion_bytes_avail_in_block(sid) == 1024);
    assert_int_equal(sion_fread(r, 4, 2, sid), 2); /* items of 4 */
    assert_memory_equal(r, b + 1000, 8);
    assert_int_equal(sion_seek(sid, 0, SION_END_POS, -3), SION_SUCCESS);
    assert_int_equal(sion_fread(r, 2, 2, sid), 1); /* only one complete item */
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* Information calls on SIONlib-written files. */
static void test_vector_info(void **st)
{
    (void)st;
    char p[4096];
    int nt = 0, nf = 0, *gr = NULL;
    sion_int32 bs = 0;
    sion_int64 *cs = NULL;
    int sid = sion_open((char *)vec_path("serial5.sion", p, sizeof p), "rb", &nt, &nf, &cs, &bs, &gr, NULL);
    assert_true(sid >= 0);
    assert_int_equal(nt, 5);
    assert_int_equal(nf, 1);
    assert_int_equal(bs, 4096);
    const sion_int64 ecs[5] = {4096, 8192, 4096, 4096, 20480}, ebs[5] = {1000, 4000, 0, 50, 20000};
    for (int t = 0; t < 5; t++) {
        assert_true(cs[t] == ecs[t]);
        assert_int_equal(gr[t], 100 + t);
    }
    int n2, mc;
    sion_int64 gskip, sov, *c2, *g2, *bc, *bsz;
    assert_int_equal(sion_get_locations(sid, &n2, &mc, &gskip, &sov, &c2, &g2, &bc, &bsz), SION_SUCCESS);
    assert_int_equal(n2, 5);
    assert_int_equal(mc, 1);
    assert_true(gskip == 40960);
    assert_true(sov == 45056);
    for (int t = 0; t < 5; t++) {
        assert_true(g2[t] == 100 + t);
        assert_true(bc[t] == 1);
        assert_true(bsz[t] == ebs[t]);
    }
    int msize = 0, nfiles = 0;
    sion_int32 *map = NULL;
    assert_int_equal(sion_get_mapping(sid, &msize, &map, &nfiles), SION_SUCCESS);
    assert_int_equal(msize, -1);
    assert_int_equal(nfiles, 1);
    assert_int_equal(sion_get_number_of_files(sid), 1);
    assert_int_equal(sion_get_file_endianness(sid), 0);
    assert_int_equal(sion_endianness_swap_needed(sid), sion_get_endianness() != 0);
    assert_int_equal(sion_get_keyval_mode(sid), SION_KEYVAL_NONE);
    assert_int_equal(sion_seek(sid, 4, SION_ABSOLUTE_POS, 10000), SION_SUCCESS);
    sion_int64 *cp, *cb;
    assert_int_equal(sion_get_current_locations(sid, &n2, &cp, &cb), SION_SUCCESS);
    assert_true(cp[4] == 4096 + 4096 + 8192 + 4096 + 4096 + 10000 && cb[4] == 0); /* absolute, as SIONlib */
    assert_true(sion_get_position(sid) == 4096 + 4096 + 8192 + 4096 + 4096 + 10000);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(cs);
    free(gr);

    /* multi-file set: mapping, file numbers per task, chunk sizes */
    cs = NULL;
    gr = NULL;
    sid = sion_open((char *)vec_path("multi6.sion", p, sizeof p), "rb", &nt, &nf, &cs, &bs, &gr, NULL);
    assert_true(sid >= 0);
    assert_int_equal(nt, 6);
    assert_int_equal(nf, 3);
    assert_int_equal(sion_get_mapping(sid, &msize, &map, &nfiles), SION_SUCCESS);
    assert_int_equal(msize, 6);
    assert_int_equal(nfiles, 3);
    assert_int_equal(sion_get_number_of_files(sid), 3);
    int per_file[3] = {0, 0, 0};
    for (int t = 0; t < 6; t++) {
        assert_true(map[2 * t] >= 0 && map[2 * t] < 3);
        per_file[map[2 * t]]++;
        assert_true(cs[t] == 8192); /* 5000 aligned to 4096 */
        assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        assert_int_equal(sion_get_filenumber(sid), 0); /* SIONlib: the serial open of the set is file 0 */
        assert_non_null(sion_get_fp(sid));
        unsigned char b[3000];
        assert_int_equal(sion_fread(b, 1, 3000, sid), 3000); /* task t holds 3000*(t+1) */
        for (int i = 0; i < 3000; i++)
            assert_int_equal(b[i], tu_pat(t, i));
    }
    assert_int_equal(per_file[0] + per_file[1] + per_file[2], 6);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    free(cs);
    free(gr);

    /* declared big-endian user data */
    sid = sion_open((char *)vec_path("bigendian2.sion", p, sizeof p), "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_get_file_endianness(sid), 1);
    assert_int_equal(sion_endianness_swap_needed(sid), sion_get_endianness() != 1);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    sid = sion_open((char *)vec_path("keyval3.sion", p, sizeof p), "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_get_keyval_mode(sid), SION_KEYVAL_INLINE);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

/* endianness=big on write: the endianness word and the getters. */
static void test_write_endianness(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    for (int big = 0; big <= 1; big++) {
        snprintf(path, sizeof path, "%s/e%d.sion", dir, big);
        int ntasks = 1, nf = 1;
        sion_int32 bs = 512;
        sion_int64 c1[1] = {512}, *cs = c1;
        int sid =
            sion_open(path, big ? "wb,endianness=big" : "wb,endianness=little", &ntasks, &nf, &cs, &bs, NULL, NULL);
        assert_true(sid >= 0);
        assert_int_equal(sion_get_file_endianness(sid), big);
        assert_int_equal(sion_fwrite("abc", 1, 3, sid), 3);
        assert_int_equal(sion_flush(sid), SION_SUCCESS);
        assert_true(sion_get_bytes_written(sid) == 3);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
        size_t n;
        unsigned char *d = tu_read_file(path, &n);
        int host = sion_get_endianness();
        assert_int_equal(d[4], host);
        assert_int_equal(d[7], host);
        assert_int_equal(d[5], big);
        assert_int_equal(d[6], big);
        assert_memory_equal(d + 52, path, strlen(path)); /* prefix = name given to open */
        free(d);
        int nt, nff;
        sid = sion_open(path, "rb", &nt, &nff, NULL, NULL, NULL, NULL);
        assert_true(sid >= 0);
        assert_int_equal(sion_get_file_endianness(sid), big);
        assert_int_equal(sion_endianness_swap_needed(sid), big != host);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    unsigned char sw[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    sion_swap(sw, sw, 4, 2, 1);
    assert_memory_equal(sw, "\4\3\2\1\10\7\6\5", 8);
    sion_swap(sw, sw, 4, 2, 0);
    assert_memory_equal(sw, "\4\3\2\1\10\7\6\5", 8);
    tu_rmtree(dir);
    free(dir);
}

/* Rewrite each parallel-written single-file vector through the serial API,
 * block by block (sion_ensure_free_space + sion_fwrite, as the SIONlib writer
 * did), and compare with the SIONlib file. A serial close differs from a
 * parallel one only in the filenumber field (serial: 1, parallel: 0) and the
 * 4-byte zero mapping size after META2; every other byte must be identical. */
static void test_reproduce_parallel_vectors(void **st)
{
    (void)st;
    const char *vecs[] = {"par4.sion", "bigblk2.sion", "coll8.sion", "bigendian2.sion", "keyval3.sion"};
    char *dir = tu_mkdtemp(), cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++) {
        char p[4096];
        vec_path(vecs[v], p, sizeof p);
        size_t vlen = 0;
        unsigned char *vec = tu_read_file(p, &vlen);
        assert_non_null(vec);
        int nt = 0, nf = 0, *gr = NULL;
        sion_int32 bs = 0;
        sion_int64 *cs = NULL;
        int rsid = sion_open(p, "rb", &nt, &nf, &cs, &bs, &gr, NULL);
        assert_true(rsid >= 0);
        int mc;
        sion_int64 gskip, sov, *c2, *g2, *bc, *bsz;
        assert_int_equal(sion_get_locations(rsid, &nt, &mc, &gskip, &sov, &c2, &g2, &bc, &bsz), SION_SUCCESS);
        char mode[64];
        snprintf(mode, sizeof mode, "wb%s%s", sion_get_file_endianness(rsid) ? ",endianness=big" : "",
                 sion_get_keyval_mode(rsid) == SION_KEYVAL_INLINE ? ",keyval=inline" : "");
        assert_int_equal(chdir(dir), 0);
        int ntasks = nt, nfiles = 1;
        sion_int32 wbs = bs;
        sion_int64 *wcs = malloc(8 * (size_t)nt);
        memcpy(wcs, cs, 8 * (size_t)nt);
        int wsid = sion_open((char *)vecs[v], mode, &ntasks, &nfiles, &wcs, &wbs, &gr, NULL);
        if (wsid < 0)
            fail_msg("%s: %s", vecs[v], sheaf_last_error());
        unsigned char *buf = malloc((size_t)gskip);
        for (int b = 0; b < mc; b++) {
            for (int t = 0; t < nt; t++) {
                if (b >= bc[t])
                    continue;
                sion_int64 n = bsz[(size_t)b * nt + t];
                assert_int_equal(sion_seek(rsid, t, b, 0), SION_SUCCESS);
                assert_int_equal(sion_fread(buf, 1, (size_t)n, rsid), (size_t)n);
                assert_int_equal(sion_seek(wsid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
                if (b > 0)
                    assert_int_equal(sion_ensure_free_space(wsid, cs[t]), SION_SUCCESS); /* next block */
                else
                    assert_int_equal(sion_ensure_free_space(wsid, n), SION_SUCCESS);
                if (n)
                    assert_int_equal(sion_fwrite(buf, 1, (size_t)n, wsid), (size_t)n);
                int cb;
                assert_int_equal(sion_get_current_location(wsid, &cb, NULL, NULL, NULL), SION_SUCCESS);
                assert_int_equal(cb, b);
            }
        }
        assert_int_equal(sion_close(wsid), SION_SUCCESS);
        assert_int_equal(sion_close(rsid), SION_SUCCESS);
        size_t mlen;
        unsigned char *mine = tu_read_file(vecs[v], &mlen);
        assert_int_equal(chdir(cwd), 0);
        assert_non_null(mine);
        if (mlen != vlen + 4)
            fail_msg("%s: rewritten file has %zu bytes, SIONlib's %zu (+4 expected)", vecs[v], mlen, vlen);
        assert_memory_equal(mine + vlen, "\0\0\0\0", 4);
        assert_int_equal(mine[32], 1); /* serial writer's filenumber */
        memcpy(mine + 32, vec + 32, 4);
        if (memcmp(mine, vec, vlen) != 0) {
            size_t i = 0;
            while (mine[i] == vec[i])
                i++;
            fail_msg("%s: rewritten file differs at byte %zu (ours 0x%02x, SIONlib 0x%02x)", vecs[v], i, mine[i],
                     vec[i]);
        }
        free(mine);
        free(vec);
        free(buf);
        free(wcs);
        free(cs);
        free(gr);
    }
    tu_rmtree(dir);
    free(dir);
}

/* Different sids from different threads at the same time (sion_common.h):
 * each thread writes, reads back and verifies its own container, and provokes
 * an error whose message must stay thread-local. */
typedef struct {
    const char *dir;
    int id;
    int ok;
    char err[256];
} thr_arg;

static void *thr_main(void *p)
{
    thr_arg *a = p;
    char path[4200];
    snprintf(path, sizeof path, "%s/thr%d.sion", a->dir, a->id);
    for (int round = 0; round < 5; round++) {
        int ntasks = 3, nf = 1;
        sion_int32 bs = 512;
        sion_int64 c3[3] = {700, 512, 100}, *cs = c3;
        int sid = sion_open(path, round % 2 ? "wb,posix" : "wb", &ntasks, &nf, &cs, &bs, NULL, NULL);
        if (sid < 0) {
            snprintf(a->err, sizeof a->err, "open: %s", sheaf_last_error());
            return NULL;
        }
        unsigned char b[3000];
        for (int t = 0; t < 3; t++) {
            sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
            for (int i = 0; i < (int)sizeof b; i++)
                b[i] = (unsigned char)(a->id * 17 + t * 5 + i);
            if (sion_fwrite(b, 1, sizeof b, sid) != sizeof b) {
                snprintf(a->err, sizeof a->err, "write");
                return NULL;
            }
        }
        if (sion_close(sid) != SION_SUCCESS) {
            snprintf(a->err, sizeof a->err, "close");
            return NULL;
        }
        int n, f;
        sid = sion_open(path, "rb", &n, &f, NULL, NULL, NULL, NULL);
        if (sid < 0) {
            snprintf(a->err, sizeof a->err, "reopen: %s", sheaf_last_error());
            return NULL;
        }
        for (int t = 0; t < 3; t++) {
            unsigned char r[3100];
            sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
            if (sion_fread(r, 1, sizeof r, sid) != sizeof b) {
                snprintf(a->err, sizeof a->err, "short read");
                return NULL;
            }
            for (int i = 0; i < (int)sizeof b; i++)
                if (r[i] != (unsigned char)(a->id * 17 + t * 5 + i)) {
                    snprintf(a->err, sizeof a->err, "byte %d", i);
                    return NULL;
                }
        }
        /* a failing call: the message names this thread's file */
        if (sion_seek(sid, 0, 99, 0) != SION_NOT_SUCCESS || !strstr(sheaf_last_error(), path)) {
            snprintf(a->err, sizeof a->err, "error message not thread-local: %s", sheaf_last_error());
            return NULL;
        }
        sion_close(sid);
    }
    a->ok = 1;
    return NULL;
}

static void test_threads(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp();
    pthread_t th[6];
    thr_arg args[6];
    for (int i = 0; i < 6; i++) {
        args[i] = (thr_arg){dir, i, 0, ""};
        assert_int_equal(pthread_create(&th[i], NULL, thr_main, &args[i]), 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        if (!args[i].ok)
            fail_msg("thread %d: %s", i, args[i].err);
    }
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_rules),
        cmocka_unit_test(test_random_roundtrips),
        cmocka_unit_test(test_byte_identity_serial5),
        cmocka_unit_test(test_beyond_4gib),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_vector_info),
        cmocka_unit_test(test_write_endianness),
        cmocka_unit_test(test_reproduce_parallel_vectors),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
