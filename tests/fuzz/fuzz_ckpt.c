/* fuzz_ckpt.c - libFuzzer target for the checkpoint reader (libsheaf_ckpt_read,
 * include/sheaf_ckpt_read.h): the input is a checkpoint directory packed as
 *     <flags byte> <manifest text> NUL <unit file bytes>
 * written to a private temporary directory as `manifest` and `u0` (the seed
 * manifests name their unit u0; a mutated manifest may name anything else,
 * which then does not exist). flags bit 0: recompute the unit header's
 * checksum before writing it, so that mutations of the header fields reach
 * the table decoder instead of stopping at the checksum. Then the public API:
 * open, every field's info and rank counts, a bounded read of each field, and
 * verify. Besides ASan/UBSan, the malloc limit and the timeout (bad input must
 * give an error code, never a crash or a huge allocation), an accepted input
 * must keep these properties (exercise): a known strategy; 1 <= units <= ranks;
 * each field's element size is its type's, its count fits the unit file (all
 * fields together too) and is the sum of its rank counts; a whole read that
 * passed its checksums reads the same bytes as a slice read; out-of-range
 * reads fail; and a clean verify means every whole read passes. */
#include "../../src/ckpt/format.h" /* not src/core/format.h */
#include "sheaf_ckpt_read.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static int put(const char *name, const unsigned char *d, size_t n)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    int rc = n && write(fd, d, n) != (ssize_t)n ? -1 : 0;
    close(fd);
    return rc;
}

static void fix_header_sum(unsigned char *u, size_t n)
{
    uint64_t need;
    if (ckf_peek_size(u, n, "fuzz", &need) || need > n || need < 8)
        return;
    ckf_put_u64(u + need - 8, ckf_hash(u, need - 8, CKF_HASH_SEED));
}

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz_ckpt: property failed: %s (line %d)\n", #c, __LINE__);                               \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

/* Properties of a checkpoint the reader accepted (ulen: bytes of the one unit
 * file there is): the description is consistent and inside the input, reads
 * agree with each other and with verify. */
static void exercise(sheaf_ckpt *ck, size_t ulen)
{
    (void)sheaf_ckpt_step(ck);
    const char *app = sheaf_ckpt_app(ck), *strat = sheaf_ckpt_strategy(ck);
    CHECK(app && strat);
    CHECK(!strcmp(strat, "fpp") || !strcmp(strat, "coio") || !strcmp(strat, "rbio") || !strcmp(strat, "sion"));
    int nr = sheaf_ckpt_nranks(ck), nf = sheaf_ckpt_nfields(ck), nu = sheaf_ckpt_nunits(ck);
    CHECK(nr >= 1 && nu >= 1 && nu <= nr && nf >= 0 && nf <= 1024);
    static unsigned char buf[1 << 16], part[1 << 16];
    uint64_t data_bytes = 0;
    int all_read = 1; /* every field read whole (all checksums) without error */
    for (int f = 0; f < nf && f < 64; f++) {
        sheaf_ckpt_field_info fi;
        CHECK(sheaf_ckpt_field(ck, f, &fi) == 0);
        CHECK(memchr(fi.name, 0, sizeof fi.name) != NULL);
        int idx = sheaf_ckpt_field_index(ck, fi.name);
        CHECK(idx >= 0 && idx <= f);
        CHECK(fi.elemsize > 0 && fi.elemsize == sheaf_ckpt_type_size(fi.type));
        /* every element is in the unit file: the counts fit the input */
        CHECK(fi.count <= ulen / fi.elemsize);
        data_bytes += fi.count * fi.elemsize;
        CHECK(data_bytes <= ulen);
        uint64_t sum = 0;
        for (int r = 0; r < nr; r++) {
            uint64_t c = sheaf_ckpt_rank_count(ck, f, r);
            CHECK(c <= fi.count - sum); /* the rank counts add up to the field's count */
            sum += c;
        }
        CHECK(sum == fi.count);
        CHECK(sheaf_ckpt_rank_count(ck, f, nr) == 0 && sheaf_ckpt_rank_count(ck, f, -1) == 0);
        uint64_t n = sizeof buf / fi.elemsize;
        if (n >= fi.count) {
            n = fi.count;
            int rc = sheaf_ckpt_read(ck, f, 0, n, buf);
            if (rc)
                all_read = 0;
            /* a whole read that passed its checksums: any slice reads the same bytes */
            if (!rc && n > 2) {
                uint64_t a = n / 3, k = n - a;
                CHECK(sheaf_ckpt_read(ck, f, a, k, part) == 0);
                CHECK(memcmp(part, buf + a * fi.elemsize, k * fi.elemsize) == 0);
            }
        } else {
            all_read = 0;
            (void)sheaf_ckpt_read(ck, f, 0, n, buf);
        }
        CHECK(sheaf_ckpt_read(ck, f, fi.count, 1, buf) != 0); /* out of range: an error */
    }
    CHECK(sheaf_ckpt_read(ck, nf, 0, 1, buf) != 0);
    CHECK(sheaf_ckpt_read(ck, -1, 0, 1, buf) != 0);
    uint64_t bad = 0;
    int vrc = sheaf_ckpt_verify(ck, &bad);
    /* verify checks every part's checksum: clean means every whole read passes */
    if (vrc == 0 && bad == 0 && nf <= 64)
        CHECK(all_read);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/fuzz_ckpt.XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    data++, size--;
    const unsigned char *nul = memchr(data, 0, size);
    size_t mlen = nul ? (size_t)(nul - data) : size;
    const unsigned char *unit = nul ? nul + 1 : data + size;
    size_t ulen = size - mlen - (nul ? 1 : 0);
    unsigned char *u = malloc(ulen ? ulen : 1);
    if (!u)
        return 0;
    memcpy(u, unit, ulen);
    if (flags & 1)
        fix_header_sum(u, ulen);
    if (put("manifest", data, mlen) == 0 && put("u0", u, ulen) == 0) {
        sheaf_ckpt *ck = NULL;
        int rc = sheaf_ckpt_open_dir(dir, &ck);
        if (getenv("FUZZ_CKPT_DEBUG")) /* why an input is refused */
            fprintf(stderr, "fuzz_ckpt: open: %d %s\n", rc, rc ? sheaf_ckpt_errmsg() : "ok");
        if (rc == 0) {
            exercise(ck, ulen);
            sheaf_ckpt_close(ck);
        }
    }
    free(u);
    return 0;
}
