/* test_keyval.c - inline key-value records: the SIONlib-written keyval3
 * vector read per key / per record, the key list and statistics, seek_key,
 * byte-identical writing, random round trips with records straddling blocks,
 * and corrupt or truncated records. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "../helpers/vecpath.h"
#include "sion.h"
#include "sheaf.h"
#include "../helpers/testutil.h"

/* keyval3 (MANIFEST.json): 3 tasks; keys 1,2,3,1000000007 interleaved, 5
 * rounds; record r of key index j on task t holds 10 + 11t + 37j + 100r bytes. */
static const uint64_t KEYS[4] = {1, 2, 3, 1000000007ull};
static int64_t rec_len(int t, int j, int r) { return 10 + 11 * t + 37 * j + 100 * r; }
static const char *SHA[3][4] = {{"48cfefc836cc13b843acab9c20f0bc11230d8a26b6e10287c89733dd66d40acc",
                                 "eeff301f032dac778ad40fb1d93ce38946809708e1958d05ebb996d6c4de3b52",
                                 "d326ed8d971e378ec8fffb7b5261ef7d5cf3fc09d4b815fe95732dc904505322",
                                 "b9a8356f4a368cedd33f516b64ffd58551a95cd4661f688fc5d8f694b05779c9"},
                                {"a01c65bca4f5ac34f941e24105ff391de06c73b1220c2672e79fb032db5c70f4",
                                 "ace6b6d9f3943201fc14fb852217856ec43742e16be4b9719081f68e49b9430f",
                                 "cca70cf4d64671dd11cf21a46ab527305a11705689e3249c6814affb19dc66ba",
                                 "6ab50c95a8a44fb10cfa2d1f5939c0e9aec695b885cfe173e6856934c9b0d260"},
                                {"1236a0ad9608ac1c56998e6cd4a59a52fbd1b1246abd46b6c3f1ca49c8323a94",
                                 "a59b8a129d2edddd0d017ad80d098cd0ac8734a5273120f05108ee425ec69979",
                                 "dd6f866a004f54db9b4f27fcf9ad8cfa87d2b9b16c64aece81de459cbf18510f",
                                 "5580a855ae85ff750e3a2e67fd2f08df4aec937ceea477fe5bd9487ecf5d2afb"}};
static const int64_t KEYBYTES[3][4] = {{1050, 1235, 1420, 1605}, {1105, 1290, 1475, 1660}, {1160, 1345, 1530, 1715}};

static int64_t kpat_t(uint64_t key, int rank) { return (int64_t)(key % 251) + 1000 * rank; }

static int open_vec(const char *name, int *nt)
{
    char p[4096];
    int nf = 0, *gr = NULL;
    sion_int32 bs = 0;
    sion_int64 *cs = NULL;
    int sid = sion_open((char *)vec_path(name, p, sizeof p), "rb,keyval=unknown", nt, &nf, &cs, &bs, &gr, NULL);
    free(cs);
    free(gr);
    return sid;
}

static void select_task(int sid, int t)
{
    assert_int_equal(sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS), SION_SUCCESS);
}

/* per task, per key, in write order: bytes, sha256, pattern, record bounds */
static void test_vector_per_key(void **st)
{
    (void)st;
    int nt = 0;
    int sid = open_vec("keyval3.sion", &nt);
    assert_true(sid >= 0);
    assert_int_equal(nt, 3);
    assert_int_equal(sion_get_keyval_mode(sid), SION_KEYVAL_INLINE);
    unsigned char *buf = malloc(4096);
    for (int t = 0; t < 3; t++) {
        select_task(sid, t);
        for (int j = 0; j < 4; j++) {
            tu_sha256 s;
            tu_sha_init(&s);
            int64_t got = 0;
            int r = 0;
            size_t n;
            /* ask for more than any record: each call must return one record */
            while ((n = sion_fread_key(buf, KEYS[j], 1, 4096, sid)) > 0) {
                assert_true(r < 5);
                assert_int_equal((int64_t)n, rec_len(t, j, r));
                for (size_t i = 0; i < n; i++)
                    assert_int_equal(buf[i], tu_pat(kpat_t(KEYS[j], t), got + (int64_t)i));
                tu_sha_update(&s, buf, n);
                got += (int64_t)n;
                r++;
            }
            assert_int_equal(r, 5);
            assert_int_equal(got, KEYBYTES[t][j]);
            char hex[65];
            tu_sha_hex(&s, hex);
            assert_string_equal(hex, SHA[t][j]);
            /* exhausted: further reads return 0 */
            assert_int_equal(sion_fread_key(buf, KEYS[j], 1, 1, sid), 0);
        }
        /* an absent key is an error */
        assert_int_equal(sion_fread_key(buf, 99, 1, 1, sid), 0);
        assert_non_null(strstr(sheaf_last_error(), "no record with key 99"));
    }
    /* items of 4 bytes: fewer whole items at a record end, a remainder < 4 is an error */
    select_task(sid, 0);
    assert_int_equal(sion_seek_key(sid, 1, 0, 0), SION_SUCCESS);
    assert_int_equal(sion_fread_key(buf, 1, 4, 100, sid), 2); /* record of 10 bytes */
    assert_int_equal(sion_fread_key(buf, 1, 4, 100, sid), 0);
    assert_non_null(strstr(sheaf_last_error(), "less than one item"));
    assert_int_equal(sion_fread_key(buf, 1, 2, 1, sid), 1);
    assert_int_equal(sion_fread_key(buf, 1, 4, 100, sid), 27); /* next record: 110 bytes */
    for (int i = 0; i < 108; i++)
        assert_int_equal(buf[i], tu_pat(kpat_t(1, 0), 10 + i));
    free(buf);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

static void test_vector_iterator(void **st)
{
    (void)st;
    int nt = 0;
    int sid = open_vec("keyval3.sion", &nt);
    assert_true(sid >= 0);
    unsigned char buf[1024];
    for (int t = nt - 1; t >= 0; t--) {
        select_task(sid, t);
        assert_int_equal(sion_fread_key_iterator_reset(sid), SION_SUCCESS);
        int64_t off[4] = {0};
        for (int r = 0; r < 5; r++)
            for (int j = 0; j < 4; j++) {
                uint64_t key = 0;
                size_t size = 0;
                assert_int_equal(sion_fread_key_iterator_next(sid, &key, &size), SION_SUCCESS);
                assert_true(key == KEYS[j]);
                assert_int_equal((int64_t)size, rec_len(t, j, r));
                /* every other record is read through the iterator position */
                if ((r + j) % 2 == 0) {
                    assert_int_equal(sion_fread_key(buf, key, 1, size, sid), size);
                    for (size_t i = 0; i < size; i++)
                        assert_int_equal(buf[i], tu_pat(kpat_t(key, t), off[j] + (int64_t)i));
                }
                off[j] += (int64_t)size;
            }
        assert_int_equal(sion_fread_key_iterator_next(sid, NULL, NULL), SION_NOT_SUCCESS);
        /* reset: the same sequence again, from the cache */
        assert_int_equal(sion_fread_key_iterator_reset(sid), SION_SUCCESS);
        uint64_t key;
        size_t size;
        assert_int_equal(sion_fread_key_iterator_next(sid, &key, &size), SION_SUCCESS);
        assert_true(key == 1 && (int64_t)size == rec_len(t, 0, 0));
    }
    /* plain sion_fread still returns the raw stream: header of the first record */
    select_task(sid, 1);
    assert_int_equal(sion_seek(sid, 1, 0, 0), SION_SUCCESS);
    uint64_t hk;
    int64_t hl;
    assert_int_equal(sion_fread(&hk, 8, 1, sid), 1);
    assert_int_equal(sion_fread(&hl, 8, 1, sid), 1);
    assert_true(hk == 1);
    assert_int_equal(hl, 21);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

static void test_vector_keylist_stat(void **st)
{
    (void)st;
    int nt = 0;
    int sid = open_vec("keyval3.sion", &nt);
    assert_true(sid >= 0);
    for (int t = 0; t < 3; t++) {
        select_task(sid, t);
        assert_int_equal(sion_key_list_iterator_reset(sid), SION_SUCCESS);
        for (int j = 0; j < 4; j++) {
            uint64_t key = 0;
            assert_int_equal(sion_key_list_iterator_next(sid, &key), SION_SUCCESS);
            assert_true(key == KEYS[j]);
        }
        uint64_t key;
        assert_int_equal(sion_key_list_iterator_next(sid, &key), SION_NOT_SUCCESS);
        assert_int_equal(sion_key_full_scan(sid), SION_SUCCESS);
        for (int j = 0; j < 4; j++) {
            sion_key_stat_t s;
            assert_int_equal(sion_key_get_stat(sid, KEYS[j], &s), SION_SUCCESS);
            assert_true(s.key == KEYS[j]);
            assert_int_equal(s.num_blocks, 5);
            assert_int_equal(s.total_size, KEYBYTES[t][j]);
        }
        sion_key_stat_t s;
        assert_int_equal(sion_key_get_stat(sid, 4, &s), SION_SUCCESS);
        assert_int_equal(s.num_blocks, 0);
        assert_int_equal(s.total_size, 0);
        assert_int_equal(sion_key_get_stat(sid, 4, NULL), SION_NOT_SUCCESS);
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

static void test_vector_seek_key(void **st)
{
    (void)st;
    int nt = 0;
    int sid = open_vec("keyval3.sion", &nt);
    assert_true(sid >= 0);
    unsigned char buf[1024];
    for (int t = 0; t < 3; t++) {
        select_task(sid, t);
        /* by entry: record 2 of key 3, offset 5 -> reads to that record's end */
        int64_t before = rec_len(t, 2, 0) + rec_len(t, 2, 1);
        assert_int_equal(sion_seek_key(sid, 3, 2, 5), SION_SUCCESS);
        size_t n = sion_fread_key(buf, 3, 1, sizeof buf, sid);
        assert_int_equal((int64_t)n, rec_len(t, 2, 2) - 5);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(buf[i], tu_pat(kpat_t(3, t), before + 5 + (int64_t)i));
        /* current block: record 2 was read to its end, so (as in SIONlib) the
         * current record is the key's next one: offset 7 of record 3 */
        before += rec_len(t, 2, 2);
        assert_int_equal(sion_seek_key(sid, 3, SION_CURRENT_BLOCK, 7), SION_SUCCESS);
        assert_int_equal(sion_fread_key(buf, 3, 1, 3, sid), 3);
        for (int i = 0; i < 3; i++)
            assert_int_equal(buf[i], tu_pat(kpat_t(3, t), before + 7 + i));
        assert_int_equal(sion_seek_key(sid, 3, SION_CURRENT_BLOCK, SION_CURRENT_POS), SION_SUCCESS);
        assert_int_equal(sion_fread_key(buf, 3, 1, 1, sid), 1);
        assert_int_equal(buf[0], tu_pat(kpat_t(3, t), before + 10));
        /* absolute over all records of the key */
        for (int64_t pos = 0; pos < KEYBYTES[t][3]; pos += 97) {
            assert_int_equal(sion_seek_key(sid, 1000000007ull, SION_ABSOLUTE_POS, pos), SION_SUCCESS);
            n = sion_fread_key(buf, 1000000007ull, 1, 1, sid);
            if (pos < KEYBYTES[t][3]) {
                assert_int_equal(n, 1);
                assert_int_equal(buf[0], tu_pat(kpat_t(1000000007ull, t), pos));
            }
        }
        /* errors; as in SIONlib, a position must be inside the data (not at its end) */
        assert_int_equal(sion_seek_key(sid, 1000000007ull, SION_ABSOLUTE_POS, KEYBYTES[t][3]), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 1000000007ull, SION_ABSOLUTE_POS, KEYBYTES[t][3] + 1), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 3, 5, 0), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 3, 0, rec_len(t, 2, 0)), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 3, 0, rec_len(t, 2, 0) + 1), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 3, 0, SION_CURRENT_POS), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 3, -7, 0), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 77, 0, 0), SION_NOT_SUCCESS);
        /* after an error the cursor is intact: record 0 of key 1 from 0 */
        assert_int_equal(sion_seek_key(sid, 1, 0, 0), SION_SUCCESS);
        assert_int_equal((int64_t)sion_fread_key(buf, 1, 1, sizeof buf, sid), rec_len(t, 0, 0));
        assert_int_equal(buf[0], tu_pat(kpat_t(1, t), 0));
    }
    assert_int_equal(sion_close(sid), SION_SUCCESS);
}

/* Writing the keyval3 records serially reproduces SIONlib's bytes from the
 * global ranks to the end of META2 (the prefix holds the path; the parallel
 * writer stores no trailing mapping word and filenumber 0, the serial one a
 * zero mapping word and filenumber 1). */
static void test_write_reproduces_vector(void **st)
{
    (void)st;
    char p[4096];
    size_t vlen = 0;
    unsigned char *vec = tu_read_file(vec_path("keyval3.sion", p, sizeof p), &vlen);
    assert_non_null(vec);
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/kv.sion", dir);
    int ntasks = 3, nf = 1, granks[3] = {0, 1, 2}, *gr = granks;
    sion_int64 chunks[3] = {4096, 4096, 4096}, *cs = chunks;
    sion_int32 bs = 4096;
    int sid = sion_open(path, "wb,keyval=inline", &ntasks, &nf, &cs, &bs, &gr, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_get_keyval_mode(sid), SION_KEYVAL_INLINE);
    unsigned char buf[1024];
    for (int t = 0; t < 3; t++) {
        select_task(sid, t);
        int64_t off[4] = {0};
        for (int r = 0; r < 5; r++)
            for (int j = 0; j < 4; j++) {
                int64_t n = rec_len(t, j, r);
                tu_fill(buf, kpat_t(KEYS[j], t), off[j], (size_t)n);
                assert_int_equal(sion_fwrite_key(buf, KEYS[j], 1, (size_t)n, sid), (size_t)n);
                off[j] += n;
            }
    }
    /* reading calls on a write handle fail */
    assert_int_equal(sion_fread_key(buf, 1, 1, 1, sid), 0);
    assert_int_equal(sion_key_full_scan(sid), SION_NOT_SUCCESS);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    size_t olen = 0;
    unsigned char *out = tu_read_file(path, &olen);
    assert_non_null(out);
    assert_int_equal(olen, vlen + 4);
    assert_int_equal(out[32], 1); /* SIONlib's serial writer stores filenumber 1 */
    memcpy(out + 32, vec + 32, 4);
    assert_memory_equal(out, vec, 52);
    size_t first = 0;
    for (size_t i = 1076; i < vlen; i++)
        if (out[i] != vec[i]) {
            first = i;
            break;
        }
    if (first)
        fail_msg("keyval write differs from the SIONlib vector at byte %zu", first);
    free(out);
    free(vec);
    tu_rmtree(dir);
    free(dir);
}

/* Random records with random keys across small chunks, read back per key. */
#define RT 4
#define RK 6
static void test_random_roundtrip(void **st)
{
    (void)st;
    tu_seed_from_env("keyval roundtrip", 20261122);
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/rnd.sion", dir);
    for (int iter = 0; iter < 8; iter++) {
        int ntasks = RT, nf = 1;
        sion_int64 chunks[RT], *cs = chunks;
        for (int t = 0; t < RT; t++)
            chunks[t] = tu_range(1, 3) * 512;
        sion_int32 bs = 512;
        int sid =
            sion_open(path, iter % 2 ? "wb,keyval=inline,posix" : "wb,keyval", &ntasks, &nf, &cs, &bs, NULL, NULL);
        assert_true(sid >= 0);
        /* model: per task, per key the concatenated payload, and record lengths */
        size_t cap = 1 << 16;
        unsigned char *model[RT][RK];
        int64_t mlen[RT][RK] = {{0}}, nrec[RT][RK] = {{0}};
        uint64_t keyv[RK];
        for (int k = 0; k < RK; k++)
            keyv[k] = k == 0 ? 0 : k == 1 ? UINT64_MAX : tu_rand();
        for (int t = 0; t < RT; t++)
            for (int k = 0; k < RK; k++)
                model[t][k] = malloc(cap);
        unsigned char *buf = malloc(cap);
        int nw = (int)tu_range(20, 120);
        for (int w = 0; w < nw; w++) {
            int t = (int)tu_range(0, RT - 1), k = (int)tu_range(0, RK - 1);
            int64_t n = tu_range(0, 9) == 0 ? tu_range(1, 8) : tu_range(1, 2500);
            if (mlen[t][k] + n > (int64_t)cap)
                continue;
            for (int64_t i = 0; i < n; i++)
                buf[i] = (unsigned char)tu_rand();
            select_task(sid, t);
            assert_int_equal(sion_fwrite_key(buf, keyv[k], 1, (size_t)n, sid), (size_t)n);
            memcpy(model[t][k] + mlen[t][k], buf, (size_t)n);
            mlen[t][k] += n;
            nrec[t][k]++;
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);

        int rnt = 0, rnf = 0;
        sid = sion_open(path, "rb", &rnt, &rnf, NULL, NULL, NULL, NULL);
        assert_true(sid >= 0);
        assert_int_equal(rnt, RT);
        for (int t = 0; t < RT; t++) {
            select_task(sid, t);
            for (int k = RK - 1; k >= 0; k--) {
                sion_key_stat_t s;
                assert_int_equal(sion_key_get_stat(sid, keyv[k], &s), SION_SUCCESS);
                assert_int_equal(s.num_blocks, nrec[t][k]);
                assert_int_equal(s.total_size, mlen[t][k]);
                if (!nrec[t][k])
                    continue;
                int64_t got = 0;
                size_t n;
                while ((n = sion_fread_key(buf + got, keyv[k], 1, (size_t)tu_range(1, 3000), sid)) > 0)
                    got += (int64_t)n;
                assert_int_equal(got, mlen[t][k]);
                assert_memory_equal(buf, model[t][k], (size_t)got);
            }
            /* raw stream size: payload + 16 bytes per record */
            int64_t raw = 0, pay = 0, recs = 0;
            for (int k = 0; k < RK; k++) {
                pay += mlen[t][k];
                recs += nrec[t][k];
            }
            assert_int_equal(sion_seek(sid, t, SION_ABSOLUTE_POS, 0), SION_SUCCESS);
            while ((raw += (int64_t)sion_fread(buf, 1, 4096, sid)), !sion_feof(sid))
                ;
            assert_int_equal(raw, pay + 16 * recs);
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);
        for (int t = 0; t < RT; t++)
            for (int k = 0; k < RK; k++)
                free(model[t][k]);
        free(buf);
    }
    tu_rmtree(dir);
    free(dir);
}

/* keyval3 with the length of task 1's second record (stream offset 21+16=37)
 * replaced: negative, huge, one byte too long. */
static void test_corrupt_length(void **st)
{
    (void)st;
    char p[4096];
    size_t vlen = 0;
    unsigned char *vec = tu_read_file(vec_path("keyval3.sion", p, sizeof p), &vlen);
    assert_non_null(vec);
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/bad.sion", dir);
    const size_t hdr = 4096 + 4096 + 37; /* task 1 starts at S0 + chunksize */
    const int64_t task1_total = 4096 + 1754;
    const int64_t bad[] = {-5, INT64_MIN, (int64_t)1 << 40, INT64_MAX, task1_total - 37 - 16 + 1};
    unsigned char buf[8192];
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        int64_t len;
        memcpy(&len, vec + hdr + 8, 8);
        assert_int_equal(len, 58);
        unsigned char *copy = malloc(vlen);
        memcpy(copy, vec, vlen);
        memcpy(copy + hdr + 8, &bad[b], 8);
        assert_int_equal(tu_write_file(path, copy, vlen), 0);
        free(copy);
        int nt = 0, nf = 0;
        int sid = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
        assert_true(sid >= 0);
        select_task(sid, 1);
        /* the record before the corrupt one is readable */
        assert_int_equal(sion_fread_key(buf, 1, 1, sizeof buf, sid), 21);
        /* the next one of key 1 lies behind it */
        assert_int_equal(sion_fread_key(buf, 1, 1, sizeof buf, sid), 0);
        const char *e = sheaf_last_error();
        assert_non_null(strstr(e, "bad.sion"));
        assert_non_null(strstr(e, "task 1"));
        assert_non_null(strstr(e, "stream offset 37"));
        assert_int_equal(sheaf_last_error_code(), SHEAF_E_FORMAT);
        assert_int_equal(sion_key_full_scan(sid), SION_NOT_SUCCESS);
        assert_int_equal(sion_key_list_iterator_reset(sid), SION_NOT_SUCCESS);
        sion_key_stat_t s;
        assert_int_equal(sion_key_get_stat(sid, 2, &s), SION_NOT_SUCCESS);
        assert_int_equal(sion_seek_key(sid, 2, 0, 0), SION_NOT_SUCCESS);
        assert_int_equal(sion_fread_key_iterator_reset(sid), SION_SUCCESS);
        uint64_t key;
        size_t size;
        assert_int_equal(sion_fread_key_iterator_next(sid, &key, &size), SION_SUCCESS);
        assert_int_equal(sion_fread_key_iterator_next(sid, &key, &size), SION_NOT_SUCCESS);
        assert_non_null(strstr(sheaf_last_error(), "stream offset 37"));
        /* other tasks are unaffected */
        select_task(sid, 2);
        assert_int_equal(sion_key_full_scan(sid), SION_SUCCESS);
        assert_int_equal(sion_key_get_stat(sid, 2, &s), SION_SUCCESS);
        assert_int_equal(s.total_size, KEYBYTES[2][1]);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    free(vec);
    tu_rmtree(dir);
    free(dir);
}

/* A task whose stream ends inside a record header, or inside a payload. */
static void test_truncated_record(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/trunc.sion", dir);
    unsigned char data[300];
    tu_fill(data, 7, 0, sizeof data);
    for (int mode = 0; mode < 2; mode++) {
        int ntasks = 2, nf = 1;
        sion_int64 chunks[2] = {512, 512}, *cs = chunks;
        sion_int32 bs = 512;
        int sid = sion_open(path, "wb,keyval", &ntasks, &nf, &cs, &bs, NULL, NULL);
        assert_true(sid >= 0);
        select_task(sid, 1);
        assert_int_equal(sion_fwrite_key(data, 5, 1, 300, sid), 300);
        assert_int_equal(sion_fwrite_key(data, 6, 1, 300, sid), 300); /* straddles */
        if (mode == 0) {
            unsigned char half[10] = {5};
            assert_int_equal(sion_fwrite(half, 1, sizeof half, sid), sizeof half);
        } else {
            struct {
                uint64_t k;
                int64_t l;
            } h = {5, 100};
            assert_int_equal(sion_fwrite(&h, sizeof h, 1, sid), 1);
            assert_int_equal(sion_fwrite(data, 1, 99, sid), 99);
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);

        sid = sion_open(path, "rb,keyval=inline", &ntasks, &nf, NULL, NULL, NULL, NULL);
        assert_true(sid >= 0);
        select_task(sid, 1);
        unsigned char buf[400];
        assert_int_equal(sion_fread_key(buf, 6, 1, sizeof buf, sid), 300);
        assert_memory_equal(buf, data, 300);
        assert_int_equal(sion_fread_key(buf, 5, 1, sizeof buf, sid), 300);
        assert_int_equal(sion_fread_key(buf, 5, 1, sizeof buf, sid), 0);
        assert_non_null(strstr(sheaf_last_error(), "stream offset 632"));
        assert_non_null(strstr(sheaf_last_error(), mode == 0 ? "truncated key-value record header" : "only 99 bytes"));
        assert_int_equal(sion_key_full_scan(sid), SION_NOT_SUCCESS);
        /* task 0 is empty: no keys */
        select_task(sid, 0);
        assert_int_equal(sion_key_full_scan(sid), SION_SUCCESS);
        assert_int_equal(sion_key_list_iterator_reset(sid), SION_SUCCESS);
        uint64_t k;
        assert_int_equal(sion_key_list_iterator_next(sid, &k), SION_NOT_SUCCESS);
        assert_int_equal(sion_fread_key_iterator_next(sid, NULL, NULL), SION_NOT_SUCCESS);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    tu_rmtree(dir);
    free(dir);
}

/* keyval3 converted to a big-endian writer (metadata and record headers
 * byte-reversed, payload unchanged) reads the same per key. */
static void swap_at(unsigned char *d, size_t off, int n)
{
    for (int i = 0; i < n / 2; i++) {
        unsigned char x = d[off + i];
        d[off + i] = d[off + n - 1 - i];
        d[off + n - 1 - i] = x;
    }
}
static int64_t le64(const unsigned char *d)
{
    int64_t v;
    memcpy(&v, d, 8);
    return v;
}

static void test_swapped_vector(void **st)
{
    (void)st;
    char p[4096];
    size_t vlen = 0;
    unsigned char *d = tu_read_file(vec_path("keyval3.sion", p, sizeof p), &vlen);
    assert_non_null(d);
    /* layout of keyval3: 3 tasks, chunks 4096, S0 4096, globalskip 12288, 2 blocks each */
    const int nt = 3, mc = 2;
    const int64_t sov = le64(d + 1128), gskip = 3 * 4096;
    assert_int_equal(sov, 28672);
    int64_t bsz[2][3];
    for (int b = 0; b < mc; b++)
        for (int t = 0; t < nt; t++)
            bsz[b][t] = le64(d + sov + 8 * nt + 8 * (b * nt + t));
    for (int t = 0; t < nt; t++) {
        /* stream offset -> file offset, byte by byte (headers straddle blocks) */
        int64_t total = bsz[0][t] + bsz[1][t], off = 0;
        while (off < total) {
            size_t fo[16];
            for (int i = 0; i < 16; i++) {
                int64_t o = off + i, b = o < bsz[0][t] ? 0 : 1;
                fo[i] = (size_t)(4096 + 4096 * t + b * gskip + (b ? o - bsz[0][t] : o));
            }
            unsigned char h[16];
            for (int i = 0; i < 16; i++)
                h[i] = d[fo[i]];
            int64_t len = le64(h + 8);
            swap_at(h, 0, 8);
            swap_at(h, 8, 8);
            for (int i = 0; i < 16; i++)
                d[fo[i]] = h[i];
            off += 16 + len;
        }
        assert_int_equal(off, total);
    }
    memset(d + 4, 1, 4);
    for (size_t o = 8; o <= 32; o += 4)
        swap_at(d, o, 4);
    swap_at(d, 36, 8);
    swap_at(d, 44, 8);
    for (int i = 0; i < 2 * nt; i++)
        swap_at(d, 1076 + 8 * (size_t)i, 8);
    swap_at(d, 1124, 4);
    swap_at(d, 1128, 8);
    for (int i = 0; i < nt * (1 + mc); i++)
        swap_at(d, (size_t)sov + 8 * (size_t)i, 8);
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/big.sion", dir);
    assert_int_equal(tu_write_file(path, d, vlen), 0);
    free(d);
    int rnt = 0, nf = 0;
    int sid = sion_open(path, "rb,keyval=inline", &rnt, &nf, NULL, NULL, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(rnt, 3);
    unsigned char *buf = malloc(2048);
    for (int t = 0; t < 3; t++) {
        select_task(sid, t);
        assert_int_equal(sion_fread_key_iterator_reset(sid), SION_SUCCESS);
        uint64_t key;
        size_t size;
        assert_int_equal(sion_fread_key_iterator_next(sid, &key, &size), SION_SUCCESS);
        assert_true(key == 1 && (int64_t)size == rec_len(t, 0, 0));
        for (int j = 0; j < 4; j++) {
            assert_int_equal(sion_seek_key(sid, KEYS[j], SION_ABSOLUTE_POS, 0), SION_SUCCESS);
            int64_t got = 0;
            size_t n;
            while ((n = sion_fread_key(buf + got, KEYS[j], 1, 2048 - (size_t)got, sid)) > 0)
                got += (int64_t)n;
            assert_int_equal(got, KEYBYTES[t][j]);
            char hex[65];
            tu_sha256_hex(buf, (size_t)got, hex);
            assert_string_equal(hex, SHA[t][j]);
        }
    }
    free(buf);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

/* sion_open_rank exposes one task; its key manager works the same. */
static void test_open_rank(void **st)
{
    (void)st;
    char p[4096];
    for (int r = 0; r < 3; r++) {
        int rank = r;
        sion_int64 cs = 0;
        sion_int32 bs = 0;
        int sid = sion_open_rank((char *)vec_path("keyval3.sion", p, sizeof p), "rb", &cs, &bs, &rank, NULL);
        assert_true(sid >= 0);
        sion_key_stat_t s;
        assert_int_equal(sion_key_get_stat(sid, 2, &s), SION_SUCCESS);
        assert_int_equal(s.total_size, KEYBYTES[r][1]);
        unsigned char buf[2048];
        assert_int_equal(sion_seek_key(sid, 2, SION_ABSOLUTE_POS, 0), SION_SUCCESS);
        int64_t got = 0;
        size_t n;
        while ((n = sion_fread_key(buf + got, 2, 1, sizeof buf - (size_t)got, sid)) > 0)
            got += (int64_t)n;
        char hex[65];
        tu_sha256_hex(buf, (size_t)got, hex);
        assert_string_equal(hex, SHA[r][1]);
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
}

/* Random damage to keyval3's data region: every key call either succeeds or
 * fails with a message; nothing crashes or reads out of bounds (ASan). */
static void test_random_damage(void **st)
{
    (void)st;
    tu_seed_from_env("keyval damage", 777);
    char p[4096];
    size_t vlen = 0;
    unsigned char *vec = tu_read_file(vec_path("keyval3.sion", p, sizeof p), &vlen);
    assert_non_null(vec);
    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/dmg.sion", dir);
    unsigned char *copy = malloc(vlen), buf[4096];
    int failures = 0;
    for (int it = 0; it < 300; it++) {
        memcpy(copy, vec, vlen);
        int nflip = (int)tu_range(1, 4);
        for (int k = 0; k < nflip; k++) {
            size_t at = (size_t)tu_range(4096, 28671);
            copy[at] = tu_range(0, 1) ? (unsigned char)tu_rand() : (unsigned char)(copy[at] ^ 0x80);
        }
        assert_int_equal(tu_write_file(path, copy, vlen), 0);
        int nt = 0, nf = 0;
        int sid = sion_open(path, "rb", &nt, &nf, NULL, NULL, NULL, NULL);
        assert_true(sid >= 0);
        for (int t = 0; t < nt; t++) {
            select_task(sid, t);
            if (sion_key_full_scan(sid) != SION_SUCCESS) {
                assert_true(strlen(sheaf_last_error()) > 0);
                failures++;
            }
            uint64_t key;
            size_t size;
            assert_int_equal(sion_fread_key_iterator_reset(sid), SION_SUCCESS);
            while (sion_fread_key_iterator_next(sid, &key, &size) == SION_SUCCESS) {
                size_t want = size < sizeof buf ? size : sizeof buf;
                if (want)
                    assert_true(sion_fread_key(buf, key, 1, want, sid) == want);
                sion_key_stat_t s;
                assert_int_equal(sion_key_get_stat(sid, key, &s),
                                 SION_NOT_SUCCESS + (sion_key_full_scan(sid) == SION_SUCCESS));
                sion_seek_key(sid, key, SION_ABSOLUTE_POS, (sion_int64)tu_range(0, 3000));
                sion_fread_key(buf, key, 1, sizeof buf, sid);
            }
        }
        assert_int_equal(sion_close(sid), SION_SUCCESS);
    }
    printf("[ INFO     ] %d damaged task streams rejected\n", failures);
    assert_true(failures > 0);
    free(copy);
    free(vec);
    tu_rmtree(dir);
    free(dir);
}

/* Key calls on a container without key-value mode fail with a message. */
static void test_plain_container(void **st)
{
    (void)st;
    int nt = 0;
    int sid = open_vec("serial5.sion", &nt);
    assert_true(sid >= 0);
    unsigned char buf[16];
    assert_int_equal(sion_fread_key(buf, 1, 1, 1, sid), 0);
    assert_non_null(strstr(sheaf_last_error(), "key-value"));
    assert_int_equal(sion_key_full_scan(sid), SION_NOT_SUCCESS);
    assert_non_null(strstr(sheaf_last_error(), "sion_key_full_scan"));
    assert_int_equal(sion_seek_key(sid, 1, 0, 0), SION_NOT_SUCCESS);
    assert_int_equal(sion_fread_key_iterator_reset(sid), SION_NOT_SUCCESS);
    assert_int_equal(sion_key_list_iterator_reset(sid), SION_NOT_SUCCESS);
    sion_key_stat_t s;
    assert_int_equal(sion_key_get_stat(sid, 1, &s), SION_NOT_SUCCESS);
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* a mode asking for keyval on a plain file is refused at open */
    char p[4096];
    assert_true(sion_open((char *)vec_path("serial5.sion", p, sizeof p), "rb,keyval=inline", &nt, NULL, NULL, NULL,
                          NULL, NULL) < 0);

    char *dir = tu_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/plain.sion", dir);
    int ntasks = 1, nf = 1;
    sion_int64 chunks[1] = {512}, *cs = chunks;
    sion_int32 bs = 512;
    sid = sion_open(path, "wb", &ntasks, &nf, &cs, &bs, NULL, NULL);
    assert_true(sid >= 0);
    assert_int_equal(sion_fwrite_key(buf, 1, 1, 1, sid), 0);
    assert_non_null(strstr(sheaf_last_error(), "sion_fwrite_key"));
    assert_int_equal(sion_close(sid), SION_SUCCESS);
    /* bad sid */
    assert_int_equal(sion_fread_key(buf, 1, 1, 1, 12345), 0);
    assert_int_equal(sion_key_full_scan(-1), SION_NOT_SUCCESS);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_per_key),
        cmocka_unit_test(test_vector_iterator),
        cmocka_unit_test(test_vector_keylist_stat),
        cmocka_unit_test(test_vector_seek_key),
        cmocka_unit_test(test_write_reproduces_vector),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_corrupt_length),
        cmocka_unit_test(test_truncated_record),
        cmocka_unit_test(test_plain_container),
        cmocka_unit_test(test_swapped_vector),
        cmocka_unit_test(test_open_rank),
        cmocka_unit_test(test_random_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
