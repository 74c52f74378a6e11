/* metaio.c - metadata I/O next to the codec (metaio.h): read a physical
 * file's metadata with its checksum trailer, write the header and the tail. */
#define _FILE_OFFSET_BITS 64
#include "metaio.h"
#include "checksum.h"
#include "endian.h"
#include "error.h"
#include "sion_const.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int core_meta_read_blocks(const core_src *src, core_meta *m)
{
    int64_t end = 0;
    int rc = core_meta_decode_blocks(src, m, &end);
    return rc ? rc : core_cksum_load(src, m, end);
}

int core_meta_read(const core_src *src, core_meta *m)
{
    int rc = core_meta_read_header(src, m, 1);
    if (!rc)
        rc = core_meta_read_blocks(src, m);
    return rc;
}

static int file_src_pread(void *ctx, void *buf, size_t n, int64_t off) { return core_file_pread(ctx, buf, n, off); }

int core_src_from_file(core_src *src, core_file *f)
{
    src->ctx = f;
    src->name = f->name;
    src->pread = file_src_pread;
    return core_file_size(f, &src->size);
}

int core_meta_read_file(core_file *f, core_meta *m, int require_closed)
{
    core_src src;
    int rc = core_src_from_file(&src, f);
    if (rc)
        return rc;
    rc = core_meta_read_header(&src, m, require_closed);
    if (!rc && m->start_of_varheader != 0)
        rc = core_meta_read_blocks(&src, m);
    return rc;
}

int core_meta_write_header(core_file *f, const core_meta *m)
{
    size_t hs = (size_t)core_meta1_size(m->ntasks);
    unsigned char *buf = malloc(hs);
    if (!buf)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", f->name);
    core_meta_encode_header(m, buf);
    int rc = core_file_seek(f, 0);
    if (!rc)
        rc = core_file_write(f, buf, hs);
    free(buf);
    return rc;
}

int core_meta_init_write(core_meta *m, const char *prefix, const core_mode *mode, int32_t ntasks,
                         const int64_t *chunksizes, const int64_t *globalranks, int32_t bs)
{
    m->mapping_size = -1;
    m->meta_big = core_host_is_big();
    m->data_big = mode->data_big >= 0 ? mode->data_big : m->meta_big;
    m->version = CORE_LIB_VERSION;
    m->patch = CORE_LIB_PATCH;
    m->format = 5;
    m->fsblksize = bs;
    m->ntasks = ntasks;
    m->nfiles = 1;
    m->filenumber = 1; /* what SIONlib 1.7's serial writer stores; readers ignore it for single files */
    int kv = (mode->keyval == SION_KEYVAL_NOTSET) ? SION_KEYVAL_NONE : mode->keyval;
    m->flag1 = (int64_t)kv << 32;
    snprintf(m->prefix, sizeof m->prefix, "%s", prefix);
    m->globalranks = malloc((size_t)ntasks * 8);
    m->chunksizes = malloc((size_t)ntasks * 8);
    if (!m->globalranks || !m->chunksizes)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", prefix);
    for (int32_t t = 0; t < ntasks; t++) {
        int64_t cs = chunksizes[t];
        if (cs % bs && !mode->packed)
            cs = (cs / bs + 1) * bs;
        m->chunksizes[t] = cs;
        m->globalranks[t] = globalranks ? globalranks[t] : t;
    }
    return core_meta_layout(m, prefix);
}

int core_meta_alloc_blocks(core_meta *m, const int64_t *blockcount, const char *name)
{
    int64_t maxb = 1;
    for (int32_t t = 0; t < m->ntasks; t++) {
        if (blockcount[t] < 0)
            return core_fail(SHEAF_E_ARG, "%s: task %d has a negative block count %lld", name, t,
                             (long long)blockcount[t]);
        if (blockcount[t] > maxb)
            maxb = blockcount[t];
    }
    if (maxb > INT32_MAX || maxb > INT64_MAX / 8 / (1 + (int64_t)m->ntasks))
        return core_fail(SHEAF_E_ARG, "%s: %lld blocks in one task, too many", name, (long long)maxb);
    free(m->blockcount);
    free(m->blocksizes);
    m->maxchunks = (int32_t)maxb;
    m->blockcount = malloc((size_t)m->ntasks * 8);
    m->blocksizes = calloc((size_t)m->ntasks * (size_t)maxb, 8);
    if (!m->blockcount || !m->blocksizes)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory for the block table", name);
    memcpy(m->blockcount, blockcount, (size_t)m->ntasks * 8);
    return 0;
}

int core_meta_write_tail(core_file *f, core_meta *m, int serial)
{
    int64_t maxb = m->maxchunks;
    m->start_of_varheader = m->data_start + maxb * m->globalskip;
    if (m->tail_max > 0 && m->start_of_varheader > m->tail_max) {
        /* every block ends by tail_max; the reader needs the last row's start below it */
        int64_t row = m->data_start + (maxb > 0 ? maxb - 1 : 0) * m->globalskip;
        m->start_of_varheader = row > m->tail_max ? row : m->tail_max;
    }
    /* file 0 of a multi-file set; a single file only when a mapping was given
     * (SIONlib's mapped close writes one there too) */
    int mapped =
        !serial && ((m->nfiles > 1 && m->filenumber == 0) || (m->nfiles <= 1 && m->mapping && m->mapping_size > 0));
    if (!serial && !mapped)
        m->mapping_size = -1; /* parallel close: nothing after the block sizes */
    size_t mb = 8 * (size_t)m->ntasks * (size_t)(1 + maxb);
    size_t m2 = mb + (serial ? 4 : mapped ? 4 + 8 * (size_t)m->mapping_size : 0);
    size_t tl = m->crcs ? core_cksum_trailer_size(m) : 0;
    unsigned char *buf = malloc(m2 + tl);
    if (!buf)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory writing the block table", f->name);
    core_meta_encode_blocks(m, buf);
    if (serial) {
        m->mapping_size = -1; /* serial close writes a zero mapping size */
        core_meta_encode_mapping(m, buf + mb);
    } else if (mapped) {
        core_meta_encode_mapping(m, buf + mb);
    }
    if (m->crcs) { /* checksum trailer after the metadata; the header announces it */
        m->flag2 |= CORE_FLAG2_CHECKSUM;
        size_t hl = (size_t)core_meta1_size(m->ntasks);
        unsigned char *hdr = malloc(hl);
        if (!hdr) {
            free(buf);
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory writing the checksums", f->name);
        }
        core_meta_encode_header(m, hdr);
        core_cksum_encode(m, hdr, hl, buf, m2, buf + m2);
        free(hdr);
    }
    /* META2 first, header last: a crash in between leaves start_of_varheader 0 */
    int rc = core_file_seek(f, m->start_of_varheader);
    if (!rc)
        rc = core_file_write(f, buf, m2 + tl);
    free(buf);
    if (!rc && tl) { /* the trailer must end the file */
        rc = core_file_flush(f);
        if (!rc && ftruncate(f->fd, (off_t)(m->start_of_varheader + (int64_t)(m2 + tl))) != 0)
            rc = core_fail_errno(SHEAF_E_IO, errno, "%s: cannot truncate after the checksums", f->name);
    }
    if (!rc)
        rc = core_meta_write_header(f, m);
    if (!rc)
        rc = core_file_flush(f);
    return rc;
}
