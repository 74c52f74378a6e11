/* checksum.c - the checksum trailer and block CRCs (see checksum.h). */
#define _FILE_OFFSET_BITS 64
#include "checksum.h"
#include "crc32c.h"
#include "endian.h"
#include "error.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t core_cksum_trailer_size(const core_meta *m) { return 4 * (size_t)m->ncrcs + CORE_CKSUM_TRAILER_FIXED; }

void core_cksum_encode(const core_meta *m, const unsigned char *hdr, size_t hlen, const unsigned char *meta2,
                       size_t m2len, unsigned char *out)
{
    size_t n = (size_t)m->ncrcs;
    for (size_t i = 0; i < n; i++)
        core_put_le32(out + 4 * i, m->crcs[i]);
    unsigned char *p = out + 4 * n;
    core_put_le32(p, core_crc32c(0, hdr, hlen));
    core_put_le32(p + 4, core_crc32c(0, meta2, m2len));
    core_put_le32(p + 8, core_crc32c(0, out, 4 * n + 8));
    core_put_le32(p + 12, 1);
    core_put_le64(p + 16, (uint64_t)n);
    memcpy(p + 24, "SHEAFCK1", 8);
}

/* CRC of [off, off+len) of a source, in bounded windows */
static int src_crc(const core_src *src, int64_t off, int64_t len, uint32_t *crc)
{
    static const int64_t W = 1 << 20;
    unsigned char *buf = malloc((size_t)(len < W ? (len > 0 ? len : 1) : W));
    if (!buf)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", src->name);
    uint32_t c = 0;
    int rc = 0;
    for (int64_t done = 0; done < len && !rc; done += W) {
        int64_t k = len - done < W ? len - done : W;
        rc = src->pread(src->ctx, buf, (size_t)k, off + done);
        if (!rc)
            c = core_crc32c(c, buf, (size_t)k);
    }
    free(buf);
    *crc = c;
    return rc;
}

int core_cksum_load(const core_src *src, core_meta *m, int64_t meta2_end)
{
    free(m->crcs);
    m->crcs = NULL;
    m->ncrcs = 0;
    int announced = (m->flag2 & CORE_FLAG2_CHECKSUM) != 0;
    unsigned char tail[CORE_CKSUM_TRAILER_FIXED];
    int64_t size = src->size;
    int found = 0;
    int rc = 0;
    if (size - meta2_end >= CORE_CKSUM_TRAILER_FIXED) {
        if ((rc = src->pread(src->ctx, tail, sizeof tail, size - CORE_CKSUM_TRAILER_FIXED)))
            return rc;
        found = !memcmp(tail + 24, "SHEAFCK1", 8);
    }
    if (!found) {
        if (announced)
            return core_fail(SHEAF_E_FORMAT,
                             "%s: the header announces checksums but the checksum trailer at the end "
                             "of the file is missing or damaged (file truncated?)",
                             src->name);
        return 0;
    }
    uint64_t n = core_get_le64(tail + 16);
    int64_t expect = 0;
    for (int32_t t = 0; t < m->ntasks; t++)
        expect += m->blockcount[t];
    if (n != (uint64_t)expect || core_get_le32(tail + 12) != 1 ||
        (int64_t)n > (size - meta2_end - CORE_CKSUM_TRAILER_FIXED) / 4)
        return core_fail(SHEAF_E_FORMAT, "%s: checksum trailer damaged (%llu checksums for %lld blocks)", src->name,
                         (unsigned long long)n, (long long)expect);
    int64_t start = size - CORE_CKSUM_TRAILER_FIXED - 4 * (int64_t)n;
    unsigned char *tab = malloc(4 * (size_t)n + 8);
    m->crcs = malloc((size_t)(n ? n : 1) * sizeof *m->crcs);
    if (!tab || !m->crcs) {
        free(tab);
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory reading checksums", src->name);
    }
    rc = src->pread(src->ctx, tab, 4 * (size_t)n + 8, start);
    if (!rc && core_crc32c(0, tab, 4 * (size_t)n + 8) != core_get_le32(tail + 8))
        rc = core_fail(SHEAF_E_FORMAT, "%s: checksum trailer damaged (its own checksum does not match)", src->name);
    uint32_t want_hdr = rc ? 0 : core_get_le32(tab + 4 * n), want_m2 = rc ? 0 : core_get_le32(tab + 4 * n + 4), got;
    for (uint64_t i = 0; !rc && i < n; i++)
        m->crcs[i] = core_get_le32(tab + 4 * i);
    free(tab);
    if (!rc && !(rc = src_crc(src, 0, core_meta1_size(m->ntasks), &got)) && got != want_hdr)
        rc = core_fail(SHEAF_E_FORMAT, "%s: header (META1, bytes 0-%lld) damaged: checksum 0x%08x, stored 0x%08x",
                       src->name, (long long)core_meta1_size(m->ntasks) - 1, got, want_hdr);
    if (!rc && !(rc = src_crc(src, m->start_of_varheader, start - m->start_of_varheader, &got)) && got != want_m2)
        rc = core_fail(SHEAF_E_FORMAT, "%s: block table (META2 at %lld) damaged: checksum 0x%08x, stored 0x%08x",
                       src->name, (long long)m->start_of_varheader, got, want_m2);
    if (!rc && !announced)
        rc = core_fail(SHEAF_E_FORMAT,
                       "%s: checksum trailer present but the header does not announce it: header "
                       "damaged",
                       src->name);
    if (rc) {
        free(m->crcs);
        m->crcs = NULL;
        return rc;
    }
    m->ncrcs = (int64_t)n;
    free(m->crc_first);
    m->crc_first = malloc((size_t)m->ntasks * sizeof *m->crc_first);
    if (!m->crc_first) {
        free(m->crcs);
        m->crcs = NULL;
        m->ncrcs = 0;
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory reading checksums", src->name);
    }
    for (int32_t t = 0, k = 0; t < m->ntasks; k += (int32_t)m->blockcount[t], t++)
        m->crc_first[t] = k;
    return 0;
}

/* exactly n bytes at off through the descriptor (a core_src over an open file) */
static int fd_pread(void *ctx, void *buf, size_t n, int64_t off)
{
    core_file *f = ctx;
    for (size_t done = 0; done < n;) {
        ssize_t r = pread(f->fd, (char *)buf + done, n - done, (off_t)(off + (int64_t)done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? core_fail_errno(SHEAF_E_IO, errno, "%s: read at %lld failed", f->name,
                                           (long long)(off + (int64_t)done))
                         : core_fail(SHEAF_E_FORMAT, "%s: file ends at %lld inside a block", f->name,
                                     (long long)(off + (int64_t)done));
        done += (size_t)r;
    }
    return 0;
}

int core_cksum_range(core_file *f, int64_t off, int64_t len, uint32_t *crc)
{
    if (f->fp && fflush(f->fp) != 0)
        return core_fail_errno(SHEAF_E_IO, errno, "%s: writing buffered data failed", f->name);
    core_src src = {f, 0, f->name, fd_pread};
    return src_crc(&src, off, len, crc);
}

/* ---- block CRCs of an open container's tasks ------------------------------ */
void core_cksum_take(core_task *t, const uint32_t *crcs)
{
    for (int64_t b = 0; b < t->nblocks; b++) {
        t->bcrc[b] = crcs[b];
        t->bcrclen[b] = 0;
    }
}

void core_cksum_update(core_task *t, const void *data, int64_t n)
{
    if (t->crc_on && t->bcrclen[t->cur_block] == t->bsize[t->cur_block]) { /* running CRC still in step */
        t->bcrc[t->cur_block] = core_crc32c(t->bcrc[t->cur_block], data, (size_t)n);
        t->bcrclen[t->cur_block] += n;
    }
}

int core_cksum_finish_task(core_container *c, int32_t ti)
{
    core_task *t = &c->tasks[ti];
    if (!t->crc_on)
        return 0;
    for (int64_t b = 0; b < t->nblocks; b++) {
        if (t->bcrclen[b] == t->bsize[b])
            continue;
        /* bytes came (also) through the exported FILE* or fd: read the block back */
        int rc = core_cksum_range(core_task_file(c, t), core_block_offset(c, t, b), t->bsize[b], &t->bcrc[b]);
        if (rc)
            return rc;
        t->bcrclen[b] = t->bsize[b];
    }
    return 0;
}

int core_cksum_verify_block(core_container *c, int32_t ti, int64_t b)
{
    core_task *t = &c->tasks[ti];
    int64_t off = core_block_offset(c, t, b);
    if (t->bcrclen[b] == 0) {
        uint32_t got = 0;
        int rc = core_cksum_range(core_task_file(c, t), off, t->bsize[b], &got);
        if (rc)
            return rc;
        t->bcrclen[b] = got == t->bcrc[b] ? 1 : -1;
    }
    if (t->bcrclen[b] < 0)
        return core_fail(SHEAF_E_FORMAT,
                         "%s: checksum mismatch: task %d (global rank %lld), block %lld, bytes "
                         "%lld-%lld of the file: the data are damaged",
                         core_task_file(c, t)->name, ti, (long long)t->globalrank, (long long)b, (long long)off,
                         (long long)(off + t->bsize[b] - 1));
    return 0;
}
