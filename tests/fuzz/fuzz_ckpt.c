/* fuzz_ckpt.c - libFuzzer target for the checkpoint reader (libsheaf_ckpt_read,
 * include/sheaf_ckpt_read.h): the input is a checkpoint directory packed as
 *     <flags byte> <manifest text> NUL <unit file bytes>
 * written to a private temporary directory as `manifest` and `u0` (the seed
 * manifests name their unit u0; a mutated manifest may name anything else,
 * which then does not exist). flags bit 0: recompute the unit header's
 * checksum before writing it, so that mutations of the header fields reach
 * the table decoder instead of stopping at the checksum. Then the public API:
 * open, every field's info and rank counts, a bounded read of each field, and
 * verify. Nothing is asserted: ASan/UBSan, the malloc limit and the timeout
 * catch bugs (bad input must give an error code, never a crash or a huge
 * allocation). */
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

static void exercise(sheaf_ckpt *ck)
{
    (void)sheaf_ckpt_step(ck);
    (void)sheaf_ckpt_app(ck);
    (void)sheaf_ckpt_strategy(ck);
    int nr = sheaf_ckpt_nranks(ck), nf = sheaf_ckpt_nfields(ck);
    (void)sheaf_ckpt_nunits(ck);
    static unsigned char buf[1 << 16];
    for (int f = 0; f < nf && f < 64; f++) {
        sheaf_ckpt_field_info fi;
        if (sheaf_ckpt_field(ck, f, &fi))
            continue;
        (void)sheaf_ckpt_field_index(ck, fi.name);
        for (int r = 0; r < nr && r < 64; r++)
            (void)sheaf_ckpt_rank_count(ck, f, r);
        uint64_t n = fi.elemsize ? sizeof buf / fi.elemsize : 0;
        if (n > fi.count)
            n = fi.count;
        (void)sheaf_ckpt_read(ck, f, 0, n, buf);
        if (fi.count > 2)
            (void)sheaf_ckpt_read(ck, f, fi.count / 2, 1, buf);
        (void)sheaf_ckpt_read(ck, f, fi.count, 1, buf); /* out of range: an error */
    }
    (void)sheaf_ckpt_read(ck, nf, 0, 1, buf);
    uint64_t bad = 0;
    (void)sheaf_ckpt_verify(ck, &bad);
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
            exercise(ck);
            sheaf_ckpt_close(ck);
        }
    }
    free(u);
    return 0;
}
