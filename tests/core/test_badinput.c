/* test_badinput.c - hostile and damaged containers crafted from copies of the
 * SIONlib-written vectors: each must make sion_open fail with -1 and a message
 * naming the file and the problem. Also converts every vector's metadata to
 * the other byte order (META1, META2 and mapping re-encoded by the codec) and
 * checks that the data reads back unchanged. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "format.h"
#include "metaio.h" /* core_meta_read: the codec plus the checksum trailer */
#include "endian.h"
#include "sion.h"
#include "sheaf.h"
#include "../helpers/testutil.h"

static char *g_dir;
static const char *g_vdir;

static int setup(void **st)
{
    (void)st;
    sheaf_set_error_printing(0);
    g_vdir = getenv("SHEAF_VECTORS_DIR");
    if (!g_vdir)
        g_vdir = "../shared/vectors/sionlib-1.7.6";
    g_dir = tu_mkdtemp();
    return 0;
}
static int teardown(void **st)
{
    (void)st;
    tu_rmtree(g_dir);
    free(g_dir);
    return 0;
}

static unsigned char *load_vec(const char *name, size_t *len)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", g_vdir, name);
    unsigned char *b = tu_read_file(p, len);
    if (!b)
        fail_msg("cannot read vector %s (set SHEAF_VECTORS_DIR)", p);
    return b;
}

static void put32le(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put64le(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64le(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Write data as <dir>/<name>, open it: must fail with both substrings in the
 * message and the file name. Also checks sion_open_rank. */
static void expect_open_fails(const char *name, const unsigned char *data, size_t len, const char *what1,
                              const char *what2)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    assert_int_equal(tu_write_file(path, data, len), 0);
    int nt = -7, nf = -7;
    sion_int32 bs = -7;
    sion_int64 *cs = NULL;
    int *gr = NULL;
    int sid = sion_open(path, "rb", &nt, &nf, &cs, &bs, &gr, NULL);
    if (sid >= 0) {
        sion_close(sid);
        fail_msg("%s: opened although it is damaged (expected: %s)", name, what1);
    }
    assert_int_equal(sid, -1);
    assert_null(cs);
    assert_null(gr);
    const char *e = sheaf_last_error();
    if (!strstr(e, path))
        fail_msg("%s: message \"%s\" does not name the file", name, e);
    if (what1 && !strstr(e, what1))
        fail_msg("%s: message \"%s\" does not mention \"%s\"", name, e, what1);
    if (what2 && !strstr(e, what2))
        fail_msg("%s: message \"%s\" does not mention \"%s\"", name, e, what2);
    assert_true(sheaf_last_error_code() < 0);
    int rank = 0;
    assert_int_equal(sion_open_rank(path, "rb", NULL, NULL, &rank, NULL), -1);
    assert_non_null(strstr(sheaf_last_error(), name));
    unlink(path);
}

/* serial5: ntasks 5, H = 1168, chunksizes at 1116, maxchunks at 1156,
 * start_of_varheader at 1160 (= 45056), META2 at 45056. */
static void test_bad_serial5(void **st)
{
    (void)st;
    size_t len;
    unsigned char *v = load_vec("serial5.sion", &len), *c = malloc(len);
    assert_true(get64le(v + 1160) == 45056);
#define RESET() memcpy(c, v, len)
    RESET();
    c[0] = 'x';
    expect_open_fails("magic.sion", c, len, "magic", NULL);
    RESET();
    memcpy(c, "SION", 4);
    expect_open_fails("magic2.sion", c, len, "magic", NULL);
    const unsigned char words[][4] = {{0, 1, 0, 0}, {1, 0, 0, 0}, {2, 2, 2, 2}, {0, 0, 0, 1}, {0xff, 0xff, 0xff, 0xff}};
    for (size_t i = 0; i < sizeof words / 4; i++) {
        RESET();
        memcpy(c + 4, words[i], 4);
        expect_open_fails("endian.sion", c, len, "endianness", NULL);
    }
    /* byte order word says big, integers are little: format version garbage */
    RESET();
    memcpy(c + 4, "\1\0\0\1", 4);
    expect_open_fails("endian2.sion", c, len, "format version", NULL);
    /* truncated META1 at many cut points */
    const size_t cuts[] = {0, 1, 4, 8, 20, 51, 52, 53, 100, 1075, 1076, 1100, 1116, 1155, 1156, 1160, 1167, 1168, 4096};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "cut%zu.sion", cuts[i]);
        expect_open_fails(nm, v, cuts[i], NULL, NULL);
    }
    expect_open_fails("cut20.sion", v, 20, "too short", NULL);
    expect_open_fails("cut1100.sion", v, 1100, "truncated", NULL);
    /* truncated META2 (the data region is intact) */
    expect_open_fails("m2cut1.sion", v, 45056, NULL, NULL);
    expect_open_fails("m2cut2.sion", v, 45056 + 39, "block count table", NULL);
    expect_open_fails("m2cut3.sion", v, 45056 + 40 + 39, "block size table", NULL);
    /* absurd counts */
    RESET();
    put32le(c + 24, 1u << 30);
    expect_open_fails("ntasks30.sion", c, len, "number of tasks", NULL);
    RESET();
    put32le(c + 24, 1000000);
    expect_open_fails("ntasks1m.sion", c, len, "truncated", NULL);
    RESET();
    put32le(c + 24, 0);
    expect_open_fails("ntasks0.sion", c, len, "number of tasks", NULL);
    RESET();
    put32le(c + 24, (uint32_t)-5);
    expect_open_fails("ntasksneg.sion", c, len, "number of tasks", NULL);
    RESET();
    put32le(c + 1156, 1u << 30);
    expect_open_fails("maxchunks.sion", c, len, "blocks fit", NULL);
    RESET();
    put32le(c + 1156, 0x7fffffff);
    expect_open_fails("maxchunks2.sion", c, len, "blocks fit", NULL);
    { /* found by fuzz_recover: a sparse file large enough to "hold" a block
         * table of 2^24 blocks per task; the table must also fit before the
         * metadata, so nothing is allocated from the file's size alone */
        RESET();
        put32le(c + 1156, 1u << 24);
        char sp[4200];
        snprintf(sp, sizeof sp, "%s/maxchunks_sparse.sion", g_dir);
        assert_int_equal(tu_write_file(sp, c, len), 0);
        assert_int_equal(truncate(sp, (off_t)1 << 31), 0); /* 2 GiB, sparse */
        int nt = 0, nf = 0;
        sion_int32 bs = 0;
        assert_int_equal(sion_open(sp, "rb", &nt, &nf, NULL, &bs, NULL, NULL), -1);
        assert_non_null(strstr(sheaf_last_error(), "blocks fit"));
        unlink(sp);
    }
    RESET();
    put32le(c + 1156, (uint32_t)-1);
    expect_open_fails("maxchunksneg.sion", c, len, "block count", NULL);
    RESET();
    put32le(c + 20, 0);
    expect_open_fails("fsblk0.sion", c, len, "block size", NULL);
    RESET();
    put32le(c + 20, (uint32_t)-4096);
    expect_open_fails("fsblkneg.sion", c, len, "block size", NULL);
    RESET();
    put32le(c + 16, 99);
    expect_open_fails("format99.sion", c, len, "format version 99", NULL);
    RESET();
    put32le(c + 28, 0);
    expect_open_fails("nfiles0.sion", c, len, "file number", NULL);
    RESET();
    put32le(c + 28, 3);
    put32le(c + 32, 5);
    expect_open_fails("filenum.sion", c, len, "file number", NULL);
    /* block size beyond the chunk (task 0 chunk 4096), and beyond the block table */
    RESET();
    put64le(c + 45056 + 40, 5000);
    expect_open_fails("blksize.sion", c, len, "task 0 block 0 holds 5000", "room for 4096");
    RESET();
    put64le(c + 45056 + 40 + 8, (uint64_t)-1);
    expect_open_fails("blksizeneg.sion", c, len, "task 1 block 0", NULL);
    RESET();
    put64le(c + 45056, 2); /* task 0 claims 2 blocks, maxchunks is 1 */
    expect_open_fails("blkcount.sion", c, len, "task 0 uses 2 blocks", NULL);
    RESET();
    put64le(c + 45056 + 8, (uint64_t)-1);
    expect_open_fails("blkcountneg.sion", c, len, "task 1 uses", NULL);
    /* start_of_varheader beyond EOF, inside the header, negative */
    RESET();
    put64le(c + 1160, 1ull << 40);
    expect_open_fails("sov.sion", c, len, "outside the file", NULL);
    RESET();
    put64le(c + 1160, len + 1);
    expect_open_fails("sov1.sion", c, len, "outside the file", NULL);
    RESET();
    put64le(c + 1160, 100);
    expect_open_fails("sov2.sion", c, len, "outside the file", NULL);
    RESET();
    put64le(c + 1160, (uint64_t)-8);
    expect_open_fails("sov3.sion", c, len, "outside the file", NULL);
    /* start_of_varheader earlier than the data: blocks would overlap META2 */
    RESET();
    memcpy(c + 4096, v + 45056, 84);
    put64le(c + 1160, 4096);
    expect_open_fails("sov4.sion", c, len, "extends past the block table", NULL);
    /* negative and absurd chunk sizes */
    RESET();
    put64le(c + 1116, (uint64_t)-4096);
    expect_open_fails("chunkneg.sion", c, len, "negative chunk size", NULL);
    RESET();
    put64le(c + 1116 + 16, 1ull << 62);
    expect_open_fails("chunkhuge.sion", c, len, NULL, NULL);
    RESET();
    put64le(c + 1116, 0x7fffffffffffffffull);
    expect_open_fails("chunkmax.sion", c, len, NULL, NULL);
    /* a file that is all zeros / all 0xff */
    memset(c, 0, len);
    expect_open_fails("zeros.sion", c, len, "magic", NULL);
    memset(c, 0xff, len);
    memcpy(c, "sion\0\0\0\0", 8);
    expect_open_fails("ff.sion", c, len, NULL, NULL);
#undef RESET
    free(c);
    free(v);
}

static void test_unclosed(void **st)
{
    (void)st;
    size_t len;
    unsigned char *v = load_vec("unclosed4.sion", &len);
    expect_open_fails("unclosed4.sion", v, len, "never closed", NULL);
    assert_int_equal(sheaf_last_error_code(), SHEAF_E_UNCLOSED); /* from the open_rank attempt */
    free(v);
    /* a closed file whose start_of_varheader is reset to 0 counts as unclosed too */
    v = load_vec("serial5.sion", &len);
    memset(v + 1160, 0, 8);
    char path[4200];
    snprintf(path, sizeof path, "%s/reset.sion", g_dir);
    tu_write_file(path, v, len);
    int nt, nf;
    assert_int_equal(sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL), -1);
    assert_int_equal(sheaf_last_error_code(), SHEAF_E_UNCLOSED);
    assert_non_null(strstr(sheaf_last_error(), "never closed"));
    assert_non_null(strstr(sheaf_last_error(), path));
    unlink(path);
    free(v);
}

/* Multi-file set: write three members under <dir>/<base>, optionally damaged. */
typedef struct {
    unsigned char *d[3];
    size_t n[3];
} set3;

static void load_multi(set3 *s)
{
    s->d[0] = load_vec("multi6.sion", &s->n[0]);
    s->d[1] = load_vec("multi6.sion.000001", &s->n[1]);
    s->d[2] = load_vec("multi6.sion.000002", &s->n[2]);
}
static void free_set(set3 *s)
{
    for (int i = 0; i < 3; i++)
        free(s->d[i]);
}

static void write_set(const set3 *s, const char *base, int members)
{
    char p[4300];
    for (int k = 0; k < members; k++) {
        if (k == 0)
            snprintf(p, sizeof p, "%s/%s", g_dir, base);
        else
            snprintf(p, sizeof p, "%s/%s.%06d", g_dir, base, k);
        assert_int_equal(tu_write_file(p, s->d[k], s->n[k]), 0);
    }
}

static void expect_set_fails(const set3 *s, const char *base, int members, const char *what1, const char *what2)
{
    write_set(s, base, members);
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", g_dir, base);
    int nt, nf;
    int sid = sion_open(p, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    if (sid >= 0) {
        sion_close(sid);
        fail_msg("%s: damaged set opened (expected %s)", base, what1);
    }
    const char *e = sheaf_last_error();
    if (!strstr(e, p) || (what1 && !strstr(e, what1)) || (what2 && !strstr(e, what2)))
        fail_msg("%s: message \"%s\" lacks the file name or \"%s\"/\"%s\"", base, e, what1, what2 ? what2 : "");
    for (int r = 0; r < 6; r += 5) {
        int rank = r;
        assert_int_equal(sion_open_rank(p, "rb", NULL, NULL, &rank, NULL), -1);
    }
}

/* offset of the mapping in file 0 (after META2) */
static size_t mapping_off(const set3 *s)
{
    core_membuf mb = {s->d[0], s->n[0]};
    core_src src;
    core_src_from_memory(&src, &mb, "multi6.sion");
    core_meta m;
    assert_int_equal(core_meta_read(&src, &m), 0);
    assert_int_equal(m.mapping_size, 6);
    size_t off = (size_t)m.start_of_varheader + 8 * (size_t)m.ntasks * (1 + (size_t)m.maxchunks);
    core_meta_free(&m);
    return off;
}

static void test_bad_multi(void **st)
{
    (void)st;
    set3 s;
    load_multi(&s);
    size_t mo = mapping_off(&s);
    unsigned char *m0 = s.d[0];
    unsigned char save[52];
    memcpy(save, m0 + mo, 52);
    /* the intact set opens */
    write_set(&s, "ok.sion", 3);
    char p[4300];
    snprintf(p, sizeof p, "%s/ok.sion", g_dir);
    int nt, nf;
    int sid = sion_open(p, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    if (sid < 0)
        fail_msg("intact multi6 copy: %s", sheaf_last_error());
    assert_int_equal(nt, 6);
    assert_int_equal(nf, 3);
    sion_close(sid);

    expect_set_fails(&s, "missing.sion", 2, "member 2", "missing");
    expect_set_fails(&s, "missing1.sion", 1, "member 1", "missing");
    /* member 1 says it is file 2 */
    put32le(s.d[1] + 32, 2);
    expect_set_fails(&s, "wrongno.sion", 3, "says it is file 2", NULL);
    put32le(s.d[1] + 32, 1);
    /* member 2 says the set has 4 files */
    put32le(s.d[2] + 28, 4);
    expect_set_fails(&s, "wrongn.sion", 3, "of 4", NULL);
    put32le(s.d[2] + 28, 3);
    /* member 1 is not a container */
    s.d[1][0] = 'X';
    expect_set_fails(&s, "notsion.sion", 3, "magic", NULL);
    s.d[1][0] = 's';
    /* member 2 truncated */
    size_t n2 = s.n[2];
    s.n[2] = 1000;
    expect_set_fails(&s, "trunc2.sion", 3, "000002", NULL);
    s.n[2] = n2;
    /* mapping damage */
    put32le(m0 + mo, 0);
    expect_set_fails(&s, "mapsize0.sion", 3, "mapping size", NULL);
    put32le(m0 + mo, 1u << 30);
    expect_set_fails(&s, "mapsizebig.sion", 3, "mapping size", NULL);
    put32le(m0 + mo, 5);
    expect_set_fails(&s, "mapsize5.sion", 3, "mapping lists 5 tasks", NULL);
    memcpy(m0 + mo, save, 52);
    put32le(m0 + mo + 4, 7); /* entry 0: file 7 */
    expect_set_fails(&s, "mapfile.sion", 3, "mapping entry 0", NULL);
    memcpy(m0 + mo, save, 52);
    put32le(m0 + mo + 4, (uint32_t)-1);
    expect_set_fails(&s, "mapfileneg.sion", 3, "mapping entry 0", NULL);
    memcpy(m0 + mo, save, 52);
    put32le(m0 + mo + 8 + 4 * 2 * 3, 99); /* entry 3: local task 99 */
    expect_set_fails(&s, "maplrank.sion", 3, "mapping entry 3", NULL);
    memcpy(m0 + mo, save, 52);
    memcpy(m0 + mo + 4 + 8 * 5, m0 + mo + 4 + 8 * 4, 8); /* entry 5 duplicates entry 4 */
    expect_set_fails(&s, "mapdup.sion", 3, "mapping entry 5", "repeated");
    memcpy(m0 + mo, save, 52);
    /* mapping cut off */
    size_t n0 = s.n[0];
    s.n[0] = mo + 2;
    expect_set_fails(&s, "mapcut.sion", 3, "mapping", NULL);
    s.n[0] = mo;
    expect_set_fails(&s, "mapcut2.sion", 3, "mapping missing", NULL);
    s.n[0] = n0;
    /* nfiles in file 0 larger than the tasks: refused before opening members */
    put32le(m0 + 28, 7);
    put32le(s.d[1] + 28, 7);
    expect_set_fails(&s, "nfiles7.sion", 3, NULL, NULL);
    free_set(&s);
}

/* ---- byte order conversion ---- */

/* Re-encode one physical file's metadata in the other byte order. */
static void convert_file(unsigned char *d, size_t n, const char *name, int to_big)
{
    core_membuf mb = {d, n};
    core_src src;
    core_src_from_memory(&src, &mb, name);
    core_meta m;
    if (core_meta_read(&src, &m))
        fail_msg("%s: %s", name, sheaf_last_error());
    size_t m2 = 8 * (size_t)m.ntasks * (1 + (size_t)m.maxchunks);
    size_t end = (size_t)m.start_of_varheader + m2;
    m.meta_big = to_big;
    core_meta_encode_header(&m, d);
    core_meta_encode_blocks(&m, d + m.start_of_varheader);
    if (m.mapping_size >= 0 || n >= end + 4) {
        assert_true(end + 4 + 8 * (size_t)(m.mapping_size > 0 ? m.mapping_size : 0) <= n);
        core_meta_encode_mapping(&m, d + end);
    }
    /* decode again: same values, other byte order */
    core_meta m2d;
    assert_int_equal(core_meta_read(&src, &m2d), 0);
    assert_int_equal(m2d.meta_big, to_big);
    assert_int_equal(m2d.data_big, m.data_big);
    assert_int_equal(m2d.ntasks, m.ntasks);
    assert_memory_equal(m2d.blocksizes, m.blocksizes, 8 * (size_t)m.ntasks * (size_t)m.maxchunks);
    assert_int_equal(m2d.mapping_size, m.mapping_size);
    core_meta_free(&m2d);
    core_meta_free(&m);
}

/* Read every task of a container into one buffer (length-prefixed per task). */
static unsigned char *read_all(const char *path, size_t *outlen, int *data_big)
{
    int nt = 0, nf = 0;
    sion_int32 bs;
    int sid = sion_open((char *)path, "rb", &nt, &nf, NULL, &bs, NULL, NULL);
    if (sid < 0)
        fail_msg("%s: %s", path, sheaf_last_error());
    *data_big = sion_get_file_endianness(sid);
    size_t cap = 1 << 20, len = 0;
    unsigned char *out = malloc(cap);
    for (int t = 0; t < nt; t++) {
        assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
        size_t start = len;
        len += 8;
        while (!sion_feof(sid)) {
            if (cap - len < 4096)
                out = realloc(out, cap *= 2);
            size_t got = sion_fread(out + len, 1, 4096, sid);
            assert_true(got > 0);
            len += got;
        }
        put64le(out + start, len - start - 8);
        if (cap - len < 16)
            out = realloc(out, cap *= 2);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    *outlen = len;
    return out;
}

static void test_byteswap_conversion(void **st)
{
    (void)st;
    const char *vecs[] = {"serial5.sion", "par4.sion",    "bigblk2.sion", "bigendian2.sion",
                          "coll8.sion",   "keyval3.sion", "multi6.sion"};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) {
        int members = strcmp(vecs[i], "multi6.sion") == 0 ? 3 : 1;
        char orig[4200], conv[4200];
        snprintf(orig, sizeof orig, "%s/%s", g_vdir, vecs[i]);
        snprintf(conv, sizeof conv, "%s/swapped-%s", g_dir, vecs[i]);
        for (int to_big = 1; to_big >= 0; to_big--) {
            for (int k = 0; k < members; k++) {
                char src[4300], dst[4300];
                snprintf(src, sizeof src, k ? "%s.%06d" : "%s", orig, k);
                snprintf(dst, sizeof dst, k ? "%s.%06d" : "%s", conv, k);
                size_t n;
                unsigned char *d = to_big ? tu_read_file(src, &n) : tu_read_file(dst, &n);
                assert_non_null(d);
                convert_file(d, n, dst, to_big);
                assert_int_equal(d[4], to_big);
                assert_int_equal(d[7], to_big);
                assert_int_equal(tu_write_file(dst, d, n), 0);
                free(d);
            }
            size_t la, lb;
            int ea, eb;
            unsigned char *a = read_all(orig, &la, &ea), *b = read_all(conv, &lb, &eb);
            if (la != lb || memcmp(a, b, la) != 0)
                fail_msg("%s: data differs after converting the metadata to %s endian", vecs[i],
                         to_big ? "big" : "little");
            assert_int_equal(ea, eb);
            free(a);
            free(b);
            if (to_big == 0) {
                /* converting back gives the original file again */
                for (int k = 0; k < members; k++) {
                    char src[4300], dst[4300];
                    snprintf(src, sizeof src, k ? "%s.%06d" : "%s", orig, k);
                    snprintf(dst, sizeof dst, k ? "%s.%06d" : "%s", conv, k);
                    size_t n1, n2;
                    unsigned char *x = tu_read_file(src, &n1), *y = tu_read_file(dst, &n2);
                    assert_int_equal(n1, n2);
                    if (memcmp(x, y, n1) != 0)
                        fail_msg("%s: round trip big->little is not byte identical", dst);
                    free(x);
                    free(y);
                }
            }
        }
    }
}

/* The SIONlib-written vectors decode with the memory source as well. */
static void test_vectors_decode(void **st)
{
    (void)st;
    const char *vecs[] = {"serial5.sion", "par4.sion",   "bigblk2.sion",       "bigendian2.sion",   "coll8.sion",
                          "keyval3.sion", "multi6.sion", "multi6.sion.000001", "multi6.sion.000002"};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) {
        size_t n;
        unsigned char *d = load_vec(vecs[i], &n);
        core_membuf mb = {d, n};
        core_src src;
        core_src_from_memory(&src, &mb, vecs[i]);
        core_meta m;
        if (core_meta_read(&src, &m))
            fail_msg("%s: %s", vecs[i], sheaf_last_error());
        assert_int_equal(m.format, 5);
        assert_int_equal(m.version, 1007);
        assert_true(m.start_of_varheader == m.data_start + (int64_t)m.maxchunks * m.globalskip);
        if (!strcmp(vecs[i], "bigendian2.sion"))
            assert_int_equal(m.data_big, 1);
        if (!strcmp(vecs[i], "keyval3.sion"))
            assert_true((m.flag1 >> 32) == 51);
        core_meta_free(&m);
        /* every prefix of the file fails cleanly (or succeeds for whole-file) */
        for (size_t cut = 0; cut < n; cut += (cut < 1200 ? 7 : 997)) {
            core_membuf mc = {d, cut};
            core_src sc;
            core_src_from_memory(&sc, &mc, vecs[i]);
            core_meta mm;
            int rc = core_meta_read(&sc, &mm);
            core_meta_free(&mm);
            if (cut < 1088)
                assert_int_not_equal(rc, 0);
        }
        free(d);
    }
}

/* An empty task whose chunk lies beyond the largest file offset the file
 * system supports (found by fuzz_open: sion_open_rank leaked the container
 * when positioning failed). Either outcome is fine, but it must not leak
 * (LeakSanitizer in the sanitizer build) and a failure must name the file. */
static void test_task_beyond_max_offset(void **st)
{
    (void)st;
    int64_t gr[3] = {0, 1, 2}, cs[3] = {16, 1LL << 60, 16}, bc[3] = {1, 0, 0}, bsz[3] = {5, 0, 0};
    core_meta m;
    memset(&m, 0, sizeof m);
    m.version = 1007;
    m.patch = 6;
    m.format = 5;
    m.fsblksize = 8;
    m.ntasks = 3;
    m.nfiles = 1;
    m.filenumber = 1;
    m.globalranks = gr;
    m.chunksizes = cs;
    m.blockcount = bc;
    m.blocksizes = bsz;
    m.maxchunks = 1;
    m.mapping_size = -1;
    assert_int_equal(core_meta_layout(&m, "x"), 0);
    /* META2 right after the header: the empty tasks' chunks never hold data */
    m.start_of_varheader = m.data_start + 16;
    size_t len = (size_t)m.start_of_varheader + 8 * 3 * 2 + 4;
    unsigned char *img = calloc(1, len);
    core_meta_encode_header(&m, img);
    memset(img + m.data_start, 'A', 5);
    core_meta_encode_blocks(&m, img + m.start_of_varheader);
    char path[4200];
    snprintf(path, sizeof path, "%s/faroff.sion", g_dir);
    assert_int_equal(tu_write_file(path, img, len), 0);
    int nt, nf;
    int sid = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    if (sid >= 0) {
        unsigned char b[8];
        assert_int_equal(sion_fread(b, 1, 8, sid), 5);
        assert_memory_equal(b, "AAAAA", 5);
        sion_close(sid);
    } else {
        assert_non_null(strstr(sheaf_last_error(), path));
    }
    for (int r = 0; r < 3; r++) {
        int rank = r;
        sid = sion_open_rank(path, "rb", NULL, NULL, &rank, NULL);
        if (sid >= 0) {
            unsigned char b[8];
            assert_int_equal(sion_fread(b, 1, 8, sid), r == 0 ? 5 : 0);
            assert_int_equal(sion_feof(sid), 1);
            assert_int_equal(sion_close(sid), SION_SUCCESS);
        } else {
            assert_non_null(strstr(sheaf_last_error(), path));
        }
    }
    free(m.starts);
    free(img);
}

/* File 0 of a "multi-file set" claiming a million members (a 8 MB mapping):
 * must fail on the first missing member without allocating per-member state
 * for all of them up front (the sanitizer build caps allocations at 256 MiB). */
static void test_huge_member_count(void **st)
{
    (void)st;
    const int32_t N = 1000000;
    int64_t gr[1] = {0}, cs[1] = {8}, bc[1] = {1}, bsz[1] = {3};
    core_meta m;
    memset(&m, 0, sizeof m);
    m.version = 1007;
    m.patch = 6;
    m.format = 5;
    m.fsblksize = 8;
    m.ntasks = 1;
    m.nfiles = N;
    m.filenumber = 0;
    m.globalranks = gr;
    m.chunksizes = cs;
    m.blockcount = bc;
    m.blocksizes = bsz;
    m.maxchunks = 1;
    m.mapping_size = N;
    m.mapping = malloc(8 * (size_t)N);
    for (int32_t g = 0; g < N; g++) {
        m.mapping[2 * g] = g;
        m.mapping[2 * g + 1] = 0;
    }
    assert_int_equal(core_meta_layout(&m, "x"), 0);
    m.start_of_varheader = m.data_start + m.globalskip;
    size_t len = (size_t)m.start_of_varheader + 16 + 4 + 8 * (size_t)N;
    unsigned char *img = calloc(1, len);
    core_meta_encode_header(&m, img);
    core_meta_encode_blocks(&m, img + m.start_of_varheader);
    core_meta_encode_mapping(&m, img + m.start_of_varheader + 16);
    char path[4200];
    snprintf(path, sizeof path, "%s/manyfiles.sion", g_dir);
    assert_int_equal(tu_write_file(path, img, len), 0);
    int nt, nf;
    assert_int_equal(sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL), -1);
    assert_non_null(strstr(sheaf_last_error(), path));
    assert_non_null(strstr(sheaf_last_error(), "missing"));
    unlink(path);
    free(m.mapping);
    free(m.starts);
    free(img);
}

/* Memory per task when reading: a container of 200000 empty tasks (3.2 MB of
 * header) must not cost hundreds of bytes of block table per task (it used to
 * reserve 100 entries = 800 bytes per task: 1M tasks took 800 MB). */
static void test_many_tasks_memory(void **st)
{
    (void)st;
    const int32_t N = 200000;
    core_meta m;
    memset(&m, 0, sizeof m);
    m.version = 1007;
    m.patch = 6;
    m.format = 5;
    m.fsblksize = 4096;
    m.ntasks = N;
    m.nfiles = 1;
    m.filenumber = 1;
    m.globalranks = calloc((size_t)N, 8);
    m.chunksizes = calloc((size_t)N, 8);
    m.blockcount = calloc((size_t)N, 8);
    m.blocksizes = calloc((size_t)N, 8);
    m.maxchunks = 1;
    m.mapping_size = -1;
    for (int32_t t = 0; t < N; t++) {
        m.globalranks[t] = t;
        m.blockcount[t] = 1;
    }
    m.chunksizes[N - 1] = 4096;
    m.blocksizes[N - 1] = 10;
    assert_int_equal(core_meta_layout(&m, "x"), 0);
    m.start_of_varheader = m.data_start + m.globalskip;
    size_t len = (size_t)m.start_of_varheader + 16 * (size_t)N + 4;
    unsigned char *img = calloc(1, len);
    core_meta_encode_header(&m, img);
    memset(img + m.data_start, 'z', 10);
    core_meta_encode_blocks(&m, img + m.start_of_varheader);
    char path[4200];
    snprintf(path, sizeof path, "%s/many.sion", g_dir);
    assert_int_equal(tu_write_file(path, img, len), 0);
    int nt, nf;
    int sid = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
    if (sid < 0)
        fail_msg("%s", sheaf_last_error());
    assert_int_equal(nt, N);
    int bytes = 0, fds = 0;
    assert_int_equal(sion_get_sizeof(sid, &bytes, &fds), SION_SUCCESS);
    if (bytes / N > 160)
        fail_msg("%d bytes of per-task state for %d tasks (%d per task)", bytes, N, bytes / N);
    assert_int_equal(sion_seek(sid, N - 1, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
    char b[16];
    assert_int_equal(sion_fread(b, 1, 16, sid), 10);
    assert_memory_equal(b, "zzzzzzzzzz", 10);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    unlink(path);
    core_meta_free(&m);
    free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_decode),
        cmocka_unit_test(test_bad_serial5),
        cmocka_unit_test(test_unclosed),
        cmocka_unit_test(test_bad_multi),
        cmocka_unit_test(test_byteswap_conversion),
        cmocka_unit_test(test_task_beyond_max_offset),
        cmocka_unit_test(test_huge_member_count),
        cmocka_unit_test(test_many_tasks_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
