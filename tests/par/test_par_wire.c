/* test_par_wire.c - the typed messages of the parallel protocol (src/par/wire.h):
 * pack/unpack round trips, short and hostile buffers refused with
 * SHEAF_E_FORMAT (and the struct left untouched), failure layouts carried,
 * random buffers never accepted with out-of-range fields. No threads. */
#include "partest.h"
#include "sheaf.h"
#include "../../src/par/wire.h"

static int failed_fmt(int rc) { return rc == SHEAF_E_FORMAT && strstr(sheaf_last_error(), "parallel protocol"); }

static void roundtrips(void)
{
    int64_t b[32];
    par_wire_wreq q = {4096, 7, SION_CAPABILITY_ONLY_SENDER}, q2;
    par_wire_wreq_pack(&q, b);
    CHECK(par_wire_wreq_unpack(&q2, b, PAR_WIRE_WREQ_N) == 0 && !memcmp(&q, &q2, sizeof q), "wreq round trip");
    par_wire_rreq r = {10, 3, 0, 2}, r2;
    par_wire_rreq_pack(&r, b);
    CHECK(par_wire_rreq_unpack(&r2, b, PAR_WIRE_RREQ_N) == 0 && !memcmp(&r, &r2, sizeof r), "rreq round trip");
    par_wire_wlayout w, w2;
    par_wire_wlayout_init(&w);
    w.status = 0, w.start = 1 << 20, w.chunksize = 65536, w.globalskip = 1 << 22, w.checksum = 1;
    w.coll[0] = 2, w.coll[1] = 3, w.coll[2] = 196608, w.coll[3] = 1 << 20, w.coll[4] = 1;
    par_wire_wlayout_pack(&w, b);
    CHECK(par_wire_wlayout_unpack(&w2, b, PAR_WIRE_WLAYOUT_N) == 0 && !memcmp(&w, &w2, sizeof w), "wlayout");
    par_wire_rlayout l, l2;
    par_wire_rlayout_init(&l);
    l.status = 0, l.start = 4096, l.chunksize = 8192, l.globalskip = 16384, l.grank = 5, l.nblocks = 3;
    l.keyval = SION_KEYVAL_NONE, l.data_big = 1, l.checksum = 1;
    par_wire_rlayout_pack(&l, b);
    CHECK(par_wire_rlayout_unpack(&l2, b, PAR_WIRE_RLAYOUT_N) == 0 && !memcmp(&l, &l2, sizeof l), "rlayout");
    int32_t b4[4];
    par_wire_place p = {0, 2, 1, 4}, p2;
    par_wire_place_pack(&p, b4);
    CHECK(par_wire_place_unpack(&p2, b4, PAR_WIRE_PLACE_N) == 0 && !memcmp(&p, &p2, sizeof p), "place");
    par_wire_ccount c = {12, 0}, c2;
    par_wire_ccount_pack(&c, b);
    CHECK(par_wire_ccount_unpack(&c2, b, PAR_WIRE_CCOUNT_N) == 0 && !memcmp(&c, &c2, sizeof c), "ccount");
    /* a failure layout: only the status counts, garbage elsewhere is carried */
    int64_t bad[PAR_WIRE_WLAYOUT_N];
    for (int i = 0; i < PAR_WIRE_WLAYOUT_N; i++)
        bad[i] = -77;
    bad[0] = SHEAF_E_NOMEM;
    CHECK(par_wire_wlayout_unpack(&w2, bad, PAR_WIRE_WLAYOUT_N) == 0 && w2.status == SHEAF_E_NOMEM,
          "failure layout carries its status");
}

/* each case: one field made hostile; the struct must stay as it was */
static void hostile(void)
{
    int64_t b[32];
    par_wire_wreq q = {1, 1, 1}, keep = {-9, -9, -9}, out;
    par_wire_wreq_pack(&q, b);
    out = keep;
    CHECK(failed_fmt(par_wire_wreq_unpack(&out, b, PAR_WIRE_WREQ_N - 1)) && !memcmp(&out, &keep, sizeof out),
          "short wreq refused");
    CHECK(failed_fmt(par_wire_wreq_unpack(&out, NULL, 3)), "NULL wreq refused");
    b[0] = -1;
    CHECK(failed_fmt(par_wire_wreq_unpack(&out, b, 3)) && !memcmp(&out, &keep, sizeof out), "negative chunk");
    b[0] = 1, b[1] = (int64_t)1 << 40;
    CHECK(failed_fmt(par_wire_wreq_unpack(&out, b, 3)), "rank beyond int");
    par_wire_rreq r = {1, 1, 5, 1}, r2;
    par_wire_rreq_pack(&r, b);
    CHECK(failed_fmt(par_wire_rreq_unpack(&r2, b, 4)), "positive status refused");

    par_wire_wlayout w, w2;
    par_wire_wlayout_init(&w);
    w.status = 0;
    int64_t *fields[] = {&w.start, &w.chunksize, &w.globalskip, &w.coll[2], &w.coll[3]};
    for (int i = 0; i < 5; i++) {
        int64_t save = *fields[i];
        *fields[i] = -1;
        par_wire_wlayout_pack(&w, b);
        CHECK(failed_fmt(par_wire_wlayout_unpack(&w2, b, PAR_WIRE_WLAYOUT_N)), "wlayout field %d negative", i);
        *fields[i] = save;
    }
    w.coll[0] = -2;
    par_wire_wlayout_pack(&w, b);
    CHECK(failed_fmt(par_wire_wlayout_unpack(&w2, b, PAR_WIRE_WLAYOUT_N)), "collector -2");
    w.coll[0] = -1, w.coll[4] = 2;
    par_wire_wlayout_pack(&w, b);
    CHECK(failed_fmt(par_wire_wlayout_unpack(&w2, b, PAR_WIRE_WLAYOUT_N)), "merge 2");
    CHECK(failed_fmt(par_wire_wlayout_unpack(&w2, b, PAR_WIRE_WLAYOUT_N - 1)), "short wlayout");

    par_wire_rlayout l, l2;
    par_wire_rlayout_init(&l);
    l.status = 0, l.nblocks = (int64_t)INT32_MAX + 1;
    par_wire_rlayout_pack(&l, b);
    CHECK(failed_fmt(par_wire_rlayout_unpack(&l2, b, PAR_WIRE_RLAYOUT_N)), "block count beyond int");
    l.nblocks = 1, l.checksum = 2;
    par_wire_rlayout_pack(&l, b);
    CHECK(failed_fmt(par_wire_rlayout_unpack(&l2, b, PAR_WIRE_RLAYOUT_N)), "checksum flag 2");
    CHECK(failed_fmt(par_wire_rlayout_unpack(&l2, b, 0)), "empty rlayout");

    int32_t b4[4] = {0, 0, 4, 4};
    par_wire_place p;
    CHECK(failed_fmt(par_wire_place_unpack(&p, b4, 4)), "lrank == lsize");
    b4[2] = 0, b4[3] = 0;
    CHECK(failed_fmt(par_wire_place_unpack(&p, b4, 4)), "lsize 0");
    b4[3] = 1, b4[1] = -1;
    CHECK(failed_fmt(par_wire_place_unpack(&p, b4, 4)), "file -1");
    CHECK(failed_fmt(par_wire_place_unpack(&p, b4, 3)), "short place");

    int64_t cc[2] = {INT32_MAX, 0};
    par_wire_ccount c;
    CHECK(failed_fmt(par_wire_ccount_unpack(&c, cc, 2)), "block count beyond the gatherv's int");
}

/* the close mapping and the mapped protocol's messages (issue 19) */
#define RT(T, N, ...)                                                                                                  \
    do {                                                                                                               \
        par_wire_##T m = __VA_ARGS__, m2;                                                                              \
        memset(&m2, 0x5a, sizeof m2);                                                                                  \
        par_wire_##T##_pack(&m, b);                                                                                    \
        CHECK(par_wire_##T##_unpack(&m2, b, N) == 0 && !memcmp(&m, &m2, sizeof m), #T " round trip");                  \
        par_wire_##T keep;                                                                                             \
        memset(&keep, 0x33, sizeof keep);                                                                              \
        m2 = keep;                                                                                                     \
        CHECK(failed_fmt(par_wire_##T##_unpack(&m2, b, N - 1)) && !memcmp(&m2, &keep, sizeof keep),                    \
              #T " short refused, struct untouched");                                                                  \
        CHECK(failed_fmt(par_wire_##T##_unpack(&m2, NULL, N)), #T " NULL refused");                                    \
    } while (0)

/* field i of message T set to v must be refused (struct untouched) */
#define BAD(T, N, i, v, what)                                                                                          \
    do {                                                                                                               \
        int64_t c_[N];                                                                                                 \
        memcpy(c_, b, sizeof c_);                                                                                      \
        c_[i] = (v);                                                                                                   \
        par_wire_##T keep, o;                                                                                          \
        memset(&keep, 0x33, sizeof keep);                                                                              \
        o = keep;                                                                                                      \
        CHECK(failed_fmt(par_wire_##T##_unpack(&o, c_, N)) && !memcmp(&o, &keep, sizeof o), #T ": " what);             \
    } while (0)

static void mapped_messages(void)
{
    int64_t b[32];
    int32_t b2[2];
    par_wire_cmap cm = {2, 7}, cm2;
    par_wire_cmap_pack(&cm, b2);
    CHECK(par_wire_cmap_unpack(&cm2, b2, PAR_WIRE_CMAP_N) == 0 && !memcmp(&cm, &cm2, sizeof cm), "cmap round trip");
    CHECK(failed_fmt(par_wire_cmap_unpack(&cm2, b2, 1)), "short cmap");
    b2[1] = -1;
    CHECK(failed_fmt(par_wire_cmap_unpack(&cm2, b2, 2)), "cmap: negative local rank");

    RT(mhead, PAR_WIRE_MHEAD_N, {3, 12, 0, {1, 2, 4096, SION_KEYVAL_NONE}});
    BAD(mhead, PAR_WIRE_MHEAD_N, 0, -2, "count -2");
    BAD(mhead, PAR_WIRE_MHEAD_N, 1, (int64_t)INT32_MAX + 1, "blocks beyond the gatherv's int");
    BAD(mhead, PAR_WIRE_MHEAD_N, 2, 1, "positive status");
    BAD(mhead, PAR_WIRE_MHEAD_N, 3, 2, "write flag 2");
    BAD(mhead, PAR_WIRE_MHEAD_N, 5, -2, "fsblksize -2");
    RT(mverdict, PAR_WIRE_MVERDICT_N, {SHEAF_E_ARG, 40, 9, 3, MO_KEYVAL, -5, 7});
    BAD(mverdict, PAR_WIRE_MVERDICT_N, 4, MO_N, "option beyond the table");
    BAD(mverdict, PAR_WIRE_MVERDICT_N, 1, -1, "negative total");
    RT(mwrec, PAR_WIRE_MWREC_N, {17, 1 << 20, 1, 8});
    BAD(mwrec, PAR_WIRE_MWREC_N, 1, -1, "negative chunk size");
    BAD(mwrec, PAR_WIRE_MWREC_N, 0, (int64_t)1 << 40, "global rank beyond int");
    RT(mwverdict, PAR_WIRE_MWVERDICT_N, {0, 4096, 2, 40});
    BAD(mwverdict, PAR_WIRE_MWVERDICT_N, 3, -1, "negative task count");
    RT(mwlayout, PAR_WIRE_MWLAYOUT_N, {4096, 8192, 65536});
    BAD(mwlayout, PAR_WIRE_MWLAYOUT_N, 0, -4096, "negative start");
    RT(mrverdict, PAR_WIRE_MRVERDICT_N, {0, 40, 2, 4096, 1});
    BAD(mrverdict, PAR_WIRE_MRVERDICT_N, 4, 2, "checksum flag 2");
    RT(mrshare, PAR_WIRE_MRSHARE_N, {2, 14});
    BAD(mrshare, PAR_WIRE_MRSHARE_N, 0, INT32_MAX, "more tasks than a scatterv count carries");
    RT(mrrec, PAR_WIRE_MRREC_N, {5, 1, 2, 4096, 8192, 16384, 3, SION_KEYVAL_NONE, 1});
    BAD(mrrec, PAR_WIRE_MRREC_N, 6, -1, "negative block count");
    BAD(mrrec, PAR_WIRE_MRREC_N, 8, 2, "data order 2");
}

/* the buddy copies' messages (write and read) and the array check */
static void buddy_messages(void)
{
    int64_t b[32];
    RT(bhead, PAR_WIRE_BHEAD_N, {0, 3, 4096, 4096, SION_KEYVAL_NONE, 0});
    BAD(bhead, PAR_WIRE_BHEAD_N, 5, 2, "data order 2");
    RT(verdict, PAR_WIRE_VERDICT_N, {SHEAF_E_IO, 3});
    BAD(verdict, PAR_WIRE_VERDICT_N, 0, 1, "positive status");
    BAD(verdict, PAR_WIRE_VERDICT_N, 1, -2, "task -2");
    RT(bwreq, PAR_WIRE_BWREQ_N, {3000, 5, 0});
    BAD(bwreq, PAR_WIRE_BWREQ_N, 0, -1, "negative chunk size");
    BAD(bwreq, PAR_WIRE_BWREQ_N, 1, (int64_t)INT32_MAX + 1, "global rank beyond int");
    RT(bwlayout, PAR_WIRE_BWLAYOUT_N, {0, 8192, 3072, 16384});
    BAD(bwlayout, PAR_WIRE_BWLAYOUT_N, 2, -1, "negative chunk size");
    RT(bseen, PAR_WIRE_BSEEN_N, {2});
    BAD(bseen, PAR_WIRE_BSEEN_N, 0, -2, "members -2");
    RT(bsees, PAR_WIRE_BSEES_N, {1, SHEAF_E_NOMEM});
    BAD(bsees, PAR_WIRE_BSEES_N, 0, 2, "sees 2");
    RT(bdirect, PAR_WIRE_BDIRECT_N, {SHEAF_E_ARG, 2, 0});
    BAD(bdirect, PAR_WIRE_BDIRECT_N, 2, -1, "direct -1");
    int64_t arr[3] = {0, 4, 9}, out[3] = {7, 7, 7};
    CHECK(par_wire_array_unpack("t", "e", 0, 9, out, arr, 3) == 0 && out[2] == 9, "array in range copied");
    arr[1] = 10;
    out[0] = 7;
    CHECK(failed_fmt(par_wire_array_unpack("t", "e", 0, 9, out, arr, 3)) && out[0] == 7, "array out of range refused, "
                                                                                         "untouched");
}

/* random buffers: accepted ones have every field in range */
static void random_buffers(void)
{
    uint64_t x = 88172645463325252ull;
    int64_t b[PAR_WIRE_RLAYOUT_N];
    int accepted = 0;
    for (int it = 0; it < 20000; it++) {
        for (int i = 0; i < PAR_WIRE_RLAYOUT_N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int64_t v = (int64_t)x;
            b[i] = (x & 3) == 0 ? v : (x & 3) == 1 ? (v & 7) - 2 : (x & 3) == 2 ? v & 0xffff : 0;
        }
        par_wire_rlayout l;
        int rc = par_wire_rlayout_unpack(&l, b, PAR_WIRE_RLAYOUT_N);
        CHECK(rc == 0 || rc == SHEAF_E_FORMAT, "unpack returns 0 or SHEAF_E_FORMAT, got %d", rc);
        if (rc == 0 && l.status == 0) {
            accepted++;
            CHECK(l.start >= 0 && l.chunksize >= 0 && l.nblocks >= 0 && l.nblocks <= INT32_MAX && l.coll[0] >= -1 &&
                      l.coll[1] >= 1 && (l.checksum == 0 || l.checksum == 1),
                  "accepted layout in range");
        }
        par_wire_wlayout w;
        rc = par_wire_wlayout_unpack(&w, b, PAR_WIRE_WLAYOUT_N);
        CHECK(rc == 0 || rc == SHEAF_E_FORMAT, "wlayout unpack returns 0 or SHEAF_E_FORMAT");
    }
    printf("random read layouts accepted with status 0: %d of 20000\n", accepted);
}

int main(void)
{
    roundtrips();
    hostile();
    mapped_messages();
    buddy_messages();
    random_buffers();
    printf("wire: ok\n");
    return atomic_load(&pt_failures) ? 1 : 0;
}
