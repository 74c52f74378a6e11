/* fuzz_wire.c - libFuzzer target for the unpackers of the par protocol
 * messages (src/par/wire.[ch]). Input: one selector byte (which message),
 * then the elements (int64, the placement int32) in host order; the element
 * count given to unpack is the input's real length, so short and long
 * buffers are both exercised. Checked beyond "no crash": an accepted
 * message packs back to exactly the elements it was unpacked from (unpack
 * reads exactly N elements and keeps every value). Selectors 0-14: the plain
 * and mapped messages; 15-21: the buddy messages (bhead, verdict, bwreq,
 * bwlayout, bseen, bsees, bdirect). */
#include "wire.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz_wire: check failed: %s (line %d)\n", #c, __LINE__);                                  \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

#define ROUND(T, N, unpack, pack, ET)                                                                                  \
    do {                                                                                                               \
        T m;                                                                                                           \
        memset(&m, 0x5a, sizeof m);                                                                                    \
        int64_t n = (int64_t)(size / sizeof(ET));                                                                      \
        ET *in = malloc(n ? (size_t)n * sizeof(ET) : 1);                                                               \
        if (!in)                                                                                                       \
            return 0;                                                                                                  \
        memcpy(in, data, (size_t)n * sizeof(ET));                                                                      \
        if (unpack(&m, n ? in : NULL, n) == 0) {                                                                       \
            ET out[N];                                                                                                 \
            CHECK(n >= N);                                                                                             \
            pack(&m, out);                                                                                             \
            CHECK(memcmp(out, in, sizeof out) == 0);                                                                   \
        }                                                                                                              \
        free(in);                                                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0] % 22;
    data++, size--;
    switch (sel) {
    case 0:
        ROUND(par_wire_wreq, PAR_WIRE_WREQ_N, par_wire_wreq_unpack, par_wire_wreq_pack, int64_t);
        break;
    case 1:
        ROUND(par_wire_rreq, PAR_WIRE_RREQ_N, par_wire_rreq_unpack, par_wire_rreq_pack, int64_t);
        break;
    case 2:
        ROUND(par_wire_wlayout, PAR_WIRE_WLAYOUT_N, par_wire_wlayout_unpack, par_wire_wlayout_pack, int64_t);
        break;
    case 3:
        ROUND(par_wire_rlayout, PAR_WIRE_RLAYOUT_N, par_wire_rlayout_unpack, par_wire_rlayout_pack, int64_t);
        break;
    case 4:
        ROUND(par_wire_place, PAR_WIRE_PLACE_N, par_wire_place_unpack, par_wire_place_pack, int32_t);
        break;
    case 5:
        ROUND(par_wire_ccount, PAR_WIRE_CCOUNT_N, par_wire_ccount_unpack, par_wire_ccount_pack, int64_t);
        break;
    case 6:
        ROUND(par_wire_cmap, PAR_WIRE_CMAP_N, par_wire_cmap_unpack, par_wire_cmap_pack, int32_t);
        break;
    case 7:
        ROUND(par_wire_mhead, PAR_WIRE_MHEAD_N, par_wire_mhead_unpack, par_wire_mhead_pack, int64_t);
        break;
    case 8:
        ROUND(par_wire_mverdict, PAR_WIRE_MVERDICT_N, par_wire_mverdict_unpack, par_wire_mverdict_pack, int64_t);
        break;
    case 9:
        ROUND(par_wire_mwrec, PAR_WIRE_MWREC_N, par_wire_mwrec_unpack, par_wire_mwrec_pack, int64_t);
        break;
    case 10:
        ROUND(par_wire_mwverdict, PAR_WIRE_MWVERDICT_N, par_wire_mwverdict_unpack, par_wire_mwverdict_pack, int64_t);
        break;
    case 11:
        ROUND(par_wire_mwlayout, PAR_WIRE_MWLAYOUT_N, par_wire_mwlayout_unpack, par_wire_mwlayout_pack, int64_t);
        break;
    case 12:
        ROUND(par_wire_mrverdict, PAR_WIRE_MRVERDICT_N, par_wire_mrverdict_unpack, par_wire_mrverdict_pack, int64_t);
        break;
    case 13:
        ROUND(par_wire_mrshare, PAR_WIRE_MRSHARE_N, par_wire_mrshare_unpack, par_wire_mrshare_pack, int64_t);
        break;
    case 14:
        ROUND(par_wire_mrrec, PAR_WIRE_MRREC_N, par_wire_mrrec_unpack, par_wire_mrrec_pack, int64_t);
        break;
    case 15:
        ROUND(par_wire_bhead, PAR_WIRE_BHEAD_N, par_wire_bhead_unpack, par_wire_bhead_pack, int64_t);
        break;
    case 16:
        ROUND(par_wire_verdict, PAR_WIRE_VERDICT_N, par_wire_verdict_unpack, par_wire_verdict_pack, int64_t);
        break;
    case 17:
        ROUND(par_wire_bwreq, PAR_WIRE_BWREQ_N, par_wire_bwreq_unpack, par_wire_bwreq_pack, int64_t);
        break;
    case 18:
        ROUND(par_wire_bwlayout, PAR_WIRE_BWLAYOUT_N, par_wire_bwlayout_unpack, par_wire_bwlayout_pack, int64_t);
        break;
    case 19:
        ROUND(par_wire_bseen, PAR_WIRE_BSEEN_N, par_wire_bseen_unpack, par_wire_bseen_pack, int64_t);
        break;
    case 20:
        ROUND(par_wire_bsees, PAR_WIRE_BSEES_N, par_wire_bsees_unpack, par_wire_bsees_pack, int64_t);
        break;
    default:
        ROUND(par_wire_bdirect, PAR_WIRE_BDIRECT_N, par_wire_bdirect_unpack, par_wire_bdirect_pack, int64_t);
        break;
    }
    return 0;
}
