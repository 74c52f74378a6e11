/* test_format.c - unit tests of the format codec (src/core/format.c), the
 * layout computation and the mode parser (src/core/mode.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "format.h"
#include "metaio.h" /* core_meta_read: the codec plus the checksum trailer */
#include "mode.h"
#include "endian.h"
#include "sheaf.h"
#include "sion_const.h"
#include "../helpers/testutil.h"

/* Build a complete metadata image (META1 + zero data + META2 + mapping) for m
 * and return it; *len receives its size. m->start_of_varheader is set. */
static unsigned char *build_image(core_meta *m, size_t *len)
{
    assert_int_equal(core_meta_layout(m, "img"), 0);
    m->start_of_varheader = m->data_start + (int64_t)m->maxchunks * m->globalskip;
    size_t m2 = 8 * (size_t)m->ntasks * (1 + (size_t)m->maxchunks);
    size_t ms = 4 + 8 * (size_t)(m->mapping_size < 0 ? 0 : m->mapping_size);
    *len = (size_t)m->start_of_varheader + m2 + ms;
    unsigned char *img = calloc(1, *len);
    assert_non_null(img);
    core_meta_encode_header(m, img);
    core_meta_encode_blocks(m, img + m->start_of_varheader);
    size_t w = core_meta_encode_mapping(m, img + m->start_of_varheader + m2);
    assert_int_equal(w, ms);
    return img;
}

static void random_meta(core_meta *m, int meta_big, int nfiles)
{
    memset(m, 0, sizeof *m);
    m->meta_big = meta_big;
    m->data_big = (int)(tu_rand() & 1);
    m->version = CORE_LIB_VERSION;
    m->patch = CORE_LIB_PATCH;
    m->format = 5;
    m->fsblksize = (int32_t)(512 << tu_range(0, 3));
    m->ntasks = (int32_t)tu_range(1, 9);
    m->nfiles = nfiles;
    m->filenumber = nfiles > 1 ? 0 : 1;
    m->flag1 = (int64_t)(tu_rand() & 1 ? SION_KEYVAL_INLINE : SION_KEYVAL_NONE) << 32;
    m->flag2 = 0;
    snprintf(m->prefix, sizeof m->prefix, "prefix-%llu.sion", (unsigned long long)(tu_rand() % 1000));
    m->maxchunks = (int32_t)tu_range(1, 4);
    m->globalranks = malloc(8 * (size_t)m->ntasks);
    m->chunksizes = malloc(8 * (size_t)m->ntasks);
    m->blockcount = malloc(8 * (size_t)m->ntasks);
    m->blocksizes = calloc((size_t)m->ntasks * (size_t)m->maxchunks, 8);
    for (int t = 0; t < m->ntasks; t++) {
        m->globalranks[t] = (int64_t)tu_range(0, 1LL << 40);
        m->chunksizes[t] = (int64_t)m->fsblksize * tu_range(0, 3);
        m->blockcount[t] = m->chunksizes[t] ? tu_range(0, m->maxchunks) : 0;
        for (int b = 0; b < m->blockcount[t]; b++)
            m->blocksizes[b * m->ntasks + t] = tu_range(0, m->chunksizes[t]);
    }
    /* as every writer stores it (SIONlib's maxusedchunks): the most blocks a
     * task uses, at least 1; the reader keeps only those rows of the table */
    int32_t used = 1;
    for (int t = 0; t < m->ntasks; t++)
        if (m->blockcount[t] > used)
            used = (int32_t)m->blockcount[t];
    m->maxchunks = used;
    m->mapping_size = -1;
    if (nfiles > 1) {
        m->mapping_size = (int32_t)tu_range(1, 20);
        m->mapping = malloc(8 * (size_t)m->mapping_size);
        for (int g = 0; g < m->mapping_size; g++) {
            m->mapping[2 * g] = (int32_t)tu_range(0, nfiles - 1);
            m->mapping[2 * g + 1] = g;
        }
    }
}

static void check_equal(const core_meta *a, const core_meta *b)
{
    assert_int_equal(a->meta_big, b->meta_big);
    assert_int_equal(a->data_big, b->data_big);
    assert_int_equal(b->swap, a->meta_big != core_host_is_big());
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->patch, b->patch);
    assert_int_equal(a->format, b->format);
    assert_int_equal(a->fsblksize, b->fsblksize);
    assert_int_equal(a->ntasks, b->ntasks);
    assert_int_equal(a->nfiles, b->nfiles);
    assert_int_equal(a->filenumber, b->filenumber);
    assert_true(a->flag1 == b->flag1);
    assert_true(a->flag2 == b->flag2);
    assert_string_equal(a->prefix, b->prefix);
    assert_int_equal(a->maxchunks, b->maxchunks);
    assert_true(a->start_of_varheader == b->start_of_varheader);
    assert_memory_equal(a->globalranks, b->globalranks, 8 * (size_t)a->ntasks);
    assert_memory_equal(a->chunksizes, b->chunksizes, 8 * (size_t)a->ntasks);
    assert_memory_equal(a->blockcount, b->blockcount, 8 * (size_t)a->ntasks);
    assert_memory_equal(a->blocksizes, b->blocksizes, 8 * (size_t)a->ntasks * (size_t)a->maxchunks);
    assert_int_equal(a->mapping_size, b->mapping_size);
    if (a->mapping_size > 0)
        assert_memory_equal(a->mapping, b->mapping, 8 * (size_t)a->mapping_size);
    assert_true(a->data_start == b->data_start);
    assert_true(a->globalskip == b->globalskip);
    assert_memory_equal(a->starts, b->starts, 8 * (size_t)a->ntasks);
}

static void roundtrip(int meta_big, int nfiles)
{
    for (int iter = 0; iter < 200; iter++) {
        core_meta m, d;
        random_meta(&m, meta_big, nfiles);
        size_t len;
        unsigned char *img = build_image(&m, &len);
        /* endianness word: meta order in bytes 0 and 3, data order in 1 and 2 */
        assert_int_equal(img[4], meta_big);
        assert_int_equal(img[7], meta_big);
        assert_int_equal(img[5], m.data_big);
        assert_int_equal(img[6], m.data_big);
        /* the format field is stored in the writer's order */
        assert_int_equal(img[meta_big ? 19 : 16], 5);
        core_membuf mb = {img, len};
        core_src src;
        core_src_from_memory(&src, &mb, "mem.sion");
        int rc = core_meta_read(&src, &d);
        if (rc)
            fail_msg("decode failed: %s", sheaf_last_error());
        check_equal(&m, &d);
        /* header size and layout formulas */
        assert_true(d.header_size == 1088 + 16 * (int64_t)m.ntasks);
        assert_true(d.data_start % m.fsblksize == 0);
        assert_true(d.data_start >= d.header_size && d.data_start - d.header_size < m.fsblksize);
        core_meta_free(&m);
        core_meta_free(&d);
        free(img);
    }
}

static void test_roundtrip_little(void **st)
{
    (void)st;
    tu_seed_from_env("codec little", 1);
    roundtrip(0, 1);
}
static void test_roundtrip_big(void **st)
{
    (void)st;
    tu_seed_from_env("codec big", 2);
    roundtrip(1, 1);
}
static void test_roundtrip_mapping_little(void **st)
{
    (void)st;
    tu_seed_from_env("mapping little", 3);
    roundtrip(0, 3);
}
static void test_roundtrip_mapping_big(void **st)
{
    (void)st;
    tu_seed_from_env("mapping big", 4);
    roundtrip(1, 4);
}

/* Known bytes: a big-endian header has 01 01 01 01 and big-endian integers. */
static void test_known_bytes(void **st)
{
    (void)st;
    core_meta m;
    memset(&m, 0, sizeof m);
    int64_t gr[2] = {100, 101}, cs[2] = {4096, 8192};
    m.meta_big = 1;
    m.data_big = 1;
    m.version = 1007;
    m.patch = 6;
    m.format = 5;
    m.fsblksize = 4096;
    m.ntasks = 2;
    m.nfiles = 1;
    m.filenumber = 1;
    m.flag1 = (int64_t)SION_KEYVAL_INLINE << 32;
    strcpy(m.prefix, "x.sion");
    m.globalranks = gr;
    m.chunksizes = cs;
    m.maxchunks = 3;
    m.start_of_varheader = 0x0102030405LL;
    unsigned char h[1088 + 32];
    core_meta_encode_header(&m, h);
    static const unsigned char exp0[] = {'s', 'i', 'o', 'n', 1, 1, 1, 1,    0,   0,   0x03, 0xef, 0,   0, 0,
                                         6,   0,   0,   0,   5, 0, 0, 0x10, 0,   0,   0,    0,    2,   0, 0,
                                         0,   1,   0,   0,   0, 1, 0, 0,    0,   51,  0,    0,    0,   0, 0,
                                         0,   0,   0,   0,   0, 0, 0, 'x',  '.', 's', 'i',  'o',  'n', 0};
    assert_memory_equal(h, exp0, sizeof exp0);
    static const unsigned char tail[] = {0,    0, 0, 0, 0, 0, 0, 100, 0,    0, 0, 0, 0, 0, 0, 101, 0, 0, 0, 0, 0, 0,
                                         0x10, 0, 0, 0, 0, 0, 0, 0,   0x20, 0, 0, 0, 0, 3, 0, 0,   0, 1, 2, 3, 4, 5};
    assert_memory_equal(h + 1076, tail, sizeof tail);
    m.meta_big = 0;
    m.data_big = 0;
    core_meta_encode_header(&m, h);
    static const unsigned char le[] = {'s', 'i', 'o', 'n', 0, 0, 0, 0, 0xef, 0x03, 0, 0, 6, 0, 0, 0, 5, 0, 0, 0};
    assert_memory_equal(h, le, sizeof le);
    assert_int_equal(h[1076], 100);
    assert_int_equal(h[1076 + 32 + 4], 5);
}

/* Rewrite a format-5 image into a format-2 image: the 20 bytes of filenumber,
 * flag1, flag2 are removed and everything after moves up. */
static void test_format2_and_3(void **st)
{
    (void)st;
    core_meta m;
    memset(&m, 0, sizeof m);
    int64_t gr[3] = {7, 8, 9}, cs[3] = {1000, 512, 1}; /* unaligned: format <= 3 rounds */
    int64_t bc[3] = {1, 1, 1}, bsz[3] = {1000, 512, 1};
    m.meta_big = 0;
    m.data_big = 0;
    m.version = 1004;
    m.patch = 0;
    m.format = 3;
    m.fsblksize = 512;
    m.ntasks = 3;
    m.nfiles = 1;
    m.filenumber = 0;
    m.globalranks = gr;
    m.chunksizes = cs;
    m.blockcount = bc;
    m.blocksizes = bsz;
    m.maxchunks = 1;
    m.mapping_size = -1;
    strcpy(m.prefix, "old.sion");
    /* format 3 layout: H = 1088+48 = 1136 -> S0 = 1536, chunks 1024/512/512 */
    m.starts = NULL;
    assert_int_equal(core_meta_layout(&m, "f3"), 0);
    assert_true(m.data_start == 1536);
    assert_true(m.starts[0] == 1536 && m.starts[1] == 2560 && m.starts[2] == 3072);
    assert_true(m.globalskip == 2048);
    assert_true(core_meta_capacity(&m, 0) == 1024);
    m.start_of_varheader = m.data_start + m.globalskip;
    size_t len = (size_t)m.start_of_varheader + 8 * 3 * 2;
    unsigned char *img = calloc(1, len);
    core_meta_encode_header(&m, img);
    core_meta_encode_blocks(&m, img + m.start_of_varheader);
    core_membuf mb = {img, len};
    core_src src;
    core_src_from_memory(&src, &mb, "f3.sion");
    core_meta d;
    assert_int_equal(core_meta_read(&src, &d), 0);
    assert_int_equal(d.format, 3);
    assert_true(d.data_start == 1536 && d.globalskip == 2048 && d.starts[2] == 3072);
    assert_true(d.blocksizes[0] == 1000);
    assert_string_equal(d.prefix, "old.sion");
    core_meta_free(&d);

    /* format 2: drop bytes 32..51 */
    m.format = 2;
    core_meta_encode_header(&m, img);
    memmove(img + 32, img + 52, (size_t)core_meta1_size(3) - 52);
    memset(img + core_meta1_size(3) - 20, 0, 20);
    assert_int_equal(core_meta_read(&src, &d), 0);
    assert_int_equal(d.format, 2);
    assert_int_equal(d.filenumber, 0);
    assert_true(d.flag1 == 0);
    assert_string_equal(d.prefix, "old.sion");
    assert_true(d.globalranks[0] == 7 && d.globalranks[2] == 9);
    assert_true(d.chunksizes[0] == 1000 && d.chunksizes[2] == 1);
    assert_int_equal(d.maxchunks, 1);
    assert_true(d.start_of_varheader == m.start_of_varheader);
    assert_true(d.data_start == 1536); /* still computed from H = 1088+16n */
    assert_true(d.starts[1] == 2560 && d.globalskip == 2048);
    core_meta_free(&d);

    /* format 4: stored sizes are used as they are */
    m.format = 4;
    int64_t cs4[3] = {1024, 512, 512};
    m.chunksizes = cs4;
    core_meta_layout(&m, "f4");
    m.start_of_varheader = m.data_start + m.globalskip;
    core_meta_encode_header(&m, img);
    core_meta_encode_blocks(&m, img + m.start_of_varheader);
    assert_int_equal(core_meta_read(&src, &d), 0);
    assert_int_equal(d.format, 4);
    assert_true(d.globalskip == 2048);
    core_meta_free(&d);

    /* format 1 and 6 are refused with a message */
    m.format = 6;
    core_meta_encode_header(&m, img);
    assert_int_not_equal(core_meta_read(&src, &d), 0);
    assert_non_null(strstr(sheaf_last_error(), "f3.sion"));
    assert_non_null(strstr(sheaf_last_error(), "format version 6"));
    core_meta_free(&d);
    m.format = 1;
    core_meta_encode_header(&m, img);
    assert_int_not_equal(core_meta_read(&src, &d), 0);
    core_meta_free(&d);
    free(m.starts);
    free(img);
}

static void test_layout(void **st)
{
    (void)st;
    struct {
        int32_t n, bs;
        int64_t cs;
        int64_t s0;
    } cases[] = {
        {1, 512, 512, 1536},     {5, 4096, 4096, 4096},   {200, 512, 512, 4608}, {187, 4096, 4096, 4096},
        {188, 4096, 4096, 4096}, {189, 4096, 4096, 8192}, {1, 1, 3, 1104},       {64, 65536, 65536, 65536},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        core_meta m;
        memset(&m, 0, sizeof m);
        m.format = 5;
        m.ntasks = cases[i].n;
        m.fsblksize = cases[i].bs;
        m.chunksizes = malloc(8 * (size_t)m.ntasks);
        for (int t = 0; t < m.ntasks; t++)
            m.chunksizes[t] = cases[i].cs * (t % 3 + 1);
        assert_int_equal(core_meta_layout(&m, "lay"), 0);
        assert_true(m.header_size == 1088 + 16 * (int64_t)m.ntasks);
        assert_true(m.data_start == cases[i].s0);
        int64_t pos = m.data_start, skip = 0;
        for (int t = 0; t < m.ntasks; t++) {
            assert_true(m.starts[t] == pos);
            assert_true(core_meta_capacity(&m, t) == m.chunksizes[t]);
            pos += m.chunksizes[t];
            skip += m.chunksizes[t];
        }
        assert_true(m.globalskip == skip);
        /* negative chunk size is refused */
        m.chunksizes[m.ntasks - 1] = -5;
        assert_int_not_equal(core_meta_layout(&m, "lay"), 0);
        assert_non_null(strstr(sheaf_last_error(), "negative chunk size"));
        core_meta_free(&m);
    }
}

/* ---- mode parser ---- */
static void test_mode(void **st)
{
    (void)st;
    core_mode m;
    const char *wr[] = {"w", "wb", "bw", "bw,posix", "ansi,wb", "w,foo,bar=baz"};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(core_mode_parse(wr[i], &m), 0);
        assert_int_equal(m.write, 1);
        assert_int_equal(m.explicit_rw, 1);
    }
    const char *rd[] = {"r", "rb", "br", "rb,posix"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(core_mode_parse(rd[i], &m), 0);
        assert_int_equal(m.write, 0);
        assert_int_equal(m.explicit_rw, 1);
    }
    assert_int_equal(core_mode_parse("", &m), 0);
    assert_int_equal(m.write, 0);
    assert_int_equal(m.explicit_rw, 0);
    assert_int_equal(m.keyval, SION_KEYVAL_NOTSET);
    assert_int_equal(m.data_big, -1);
    assert_int_equal(m.collsize, -1);
    assert_int_equal(m.posix, 0);
    assert_int_equal(core_mode_parse(NULL, &m), 0);
    assert_int_equal(m.write, 0);

    assert_int_equal(core_mode_parse("bw,posix", &m), 0);
    assert_int_equal(m.posix, 1);
    assert_int_equal(core_mode_parse("bw,posix,ansi", &m), 0);
    assert_int_equal(m.posix, 0);
    assert_int_equal(core_mode_parse("rb,ansi", &m), 0);
    assert_int_equal(m.posix, 0);

    assert_int_equal(core_mode_parse("bw,keyval", &m), 0);
    assert_int_equal(m.keyval, SION_KEYVAL_INLINE);
    assert_int_equal(core_mode_parse("bw,keyval=inline", &m), 0);
    assert_int_equal(m.keyval, SION_KEYVAL_INLINE);
    assert_int_equal(core_mode_parse("rb,keyval=none", &m), 0);
    assert_int_equal(m.keyval, SION_KEYVAL_NONE);
    assert_int_equal(core_mode_parse("rb,keyval=meta", &m), 0);
    assert_int_equal(m.keyval, SION_KEYVAL_META);
    assert_int_not_equal(core_mode_parse("rb,keyval=bogus", &m), 0);
    assert_non_null(strstr(sheaf_last_error(), "bogus"));

    assert_int_equal(core_mode_parse("bw,endianness=big", &m), 0);
    assert_int_equal(m.data_big, 1);
    assert_int_equal(core_mode_parse("bw,endianness=little", &m), 0);
    assert_int_equal(m.data_big, 0);
    assert_int_equal(core_mode_parse("bw,endianness=middle", &m), SHEAF_E_ARG);
    assert_non_null(strstr(sheaf_last_error(), "endianness"));
    assert_int_equal(core_mode_parse("bw,endianness", &m), SHEAF_E_ARG);

    assert_int_equal(core_mode_parse("bw,collsize=16", &m), 0);
    assert_int_equal(m.collective, 0); /* SIONlib: collsize alone does not switch coalescing on */
    assert_int_equal(m.collsize, 16);
    assert_int_equal(core_mode_parse("bw,collective", &m), 0);
    assert_int_equal(m.collective, 1);
    assert_int_equal(m.collsize, -1);
    assert_int_equal(core_mode_parse("bw,cmerge", &m), 0);
    assert_int_equal(m.cmerge, 1);
    assert_int_equal(m.collective, 0); /* nor does cmerge */
    assert_int_equal(core_mode_parse("bw,buddy=2", &m), 0);
    assert_int_equal(m.buddy, 2);
    assert_int_equal(core_mode_parse("bw,buddy", &m), 0);
    assert_int_equal(m.buddy, 1);

    /* unknown keys are ignored and do not disturb the others */
    assert_int_equal(core_mode_parse("buffered,compress=9,bw,lustre,gpfs=1,posix,", &m), 0);
    assert_int_equal(m.write, 1);
    assert_int_equal(m.posix, 1);
    assert_int_equal(m.keyval, SION_KEYVAL_NOTSET);

    /* a huge token is refused, not overflowed */
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(core_mode_parse(big, &m), SHEAF_E_ARG);
}

static void test_endian_helpers(void **st)
{
    (void)st;
    assert_true(core_bswap32(0x01020304u) == 0x04030201u);
    assert_true(core_bswap64(0x0102030405060708ull) == 0x0807060504030201ull);
    uint32_t one = 1;
    assert_int_equal(core_host_is_big(), *(unsigned char *)&one == 0);
}

/* Found by fuzz_meta: a format <= 3 chunk size near INT64_MAX overflowed
 * when rounded up to the block size (signed overflow, UBSan). Must fail. */
static void test_layout_overflow(void **st)
{
    (void)st;
    const int64_t bad[] = {INT64_MAX, INT64_MAX - 5, INT64_MAX / 4, INT64_MAX / 2 + 3, (int64_t)1 << 62};
    for (int fmt = 3; fmt <= 5; fmt++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            core_meta m;
            memset(&m, 0, sizeof m);
            m.format = fmt;
            m.ntasks = 3;
            m.fsblksize = 7237491;
            int64_t cs[3] = {4096, bad[i], 4096};
            m.chunksizes = cs;
            assert_int_not_equal(core_meta_layout(&m, "ovf.sion"), 0);
            assert_non_null(strstr(sheaf_last_error(), "ovf.sion"));
            free(m.starts);
        }
        /* many moderately large chunks whose sum overflows */
        core_meta m;
        memset(&m, 0, sizeof m);
        m.format = fmt;
        m.ntasks = 9;
        m.fsblksize = 4096;
        int64_t cs[9];
        for (int t = 0; t < 9; t++)
            cs[t] = (int64_t)1 << 59;
        m.chunksizes = cs;
        assert_int_not_equal(core_meta_layout(&m, "ovf.sion"), 0);
        free(m.starts);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_little),
        cmocka_unit_test(test_roundtrip_big),
        cmocka_unit_test(test_roundtrip_mapping_little),
        cmocka_unit_test(test_roundtrip_mapping_big),
        cmocka_unit_test(test_known_bytes),
        cmocka_unit_test(test_format2_and_3),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_layout_overflow),
        cmocka_unit_test(test_mode),
        cmocka_unit_test(test_endian_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
