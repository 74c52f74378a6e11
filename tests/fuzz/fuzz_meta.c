/* fuzz_meta.c - libFuzzer target: arbitrary bytes into the metadata decoder
 * (core_meta_read through a memory source). Properties checked beyond "no
 * crash, no leak, no huge allocation":
 *  - a decoded file re-encodes (in both byte orders) to metadata that decodes
 *    to the same values;
 *  - every block that holds bytes lies inside the file before start_of_varheader
 *    (an empty one may start past it: a recovered file whose end came before a
 *    task's chunk). Seeds: corpus/meta-empty-block-past-table.bin (an empty
 *    block past the table, accepted) and meta-block-past-table.bin (the same
 *    with that block holding 1 byte: the reader's "extends past the block
 *    table" refusal; without that check in src/core/format.c the property
 *    above aborts on it). */
#include "format.h"
#include "metaio.h" /* core_meta_read: the codec plus the checksum trailer */
#include "error.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "fuzz_meta: check failed: %s (line %d)\n", #c, __LINE__);                                  \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

static void reencode_check(const core_meta *m)
{
    if (m->format < 3)
        return; /* the encoder writes the format >= 3 header layout */
    for (int big = 0; big <= 1; big++) {
        core_meta e = *m;
        e.meta_big = big;
        size_t m2 = 8 * (size_t)m->ntasks * (1 + (size_t)m->maxchunks);
        size_t ms = 4 + 8 * (size_t)(m->mapping_size > 0 ? m->mapping_size : 0);
        size_t len = (size_t)m->start_of_varheader + m2 + ms;
        unsigned char *img = calloc(1, len);
        if (!img)
            return;
        core_meta_encode_header(&e, img);
        core_meta_encode_blocks(&e, img + m->start_of_varheader);
        core_meta_encode_mapping(&e, img + m->start_of_varheader + m2);
        core_membuf mb = {img, len};
        core_src src;
        core_src_from_memory(&src, &mb, "reencoded");
        core_meta d;
        int rc = core_meta_read(&src, &d);
        if (rc) {
            fprintf(stderr, "re-encoded metadata does not decode: %s\n", sheaf_last_error());
            abort();
        }
        CHECK(d.meta_big == big && d.data_big == m->data_big);
        CHECK(d.ntasks == m->ntasks && d.maxchunks == m->maxchunks && d.fsblksize == m->fsblksize);
        CHECK(d.nfiles == m->nfiles && d.filenumber == m->filenumber && d.format == m->format);
        CHECK(d.flag1 == m->flag1 && d.start_of_varheader == m->start_of_varheader);
        CHECK(memcmp(d.chunksizes, m->chunksizes, 8 * (size_t)m->ntasks) == 0);
        CHECK(memcmp(d.globalranks, m->globalranks, 8 * (size_t)m->ntasks) == 0);
        CHECK(memcmp(d.blockcount, m->blockcount, 8 * (size_t)m->ntasks) == 0);
        CHECK(memcmp(d.blocksizes, m->blocksizes, m2 - 8 * (size_t)m->ntasks) == 0);
        CHECK(d.mapping_size == m->mapping_size);
        if (m->mapping_size > 0)
            CHECK(memcmp(d.mapping, m->mapping, 8 * (size_t)m->mapping_size) == 0);
        core_meta_free(&d);
        free(img);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    core_membuf mb = {data, size};
    core_src src;
    core_src_from_memory(&src, &mb, "fuzz.sion");
    core_meta m;
    int rc = core_meta_read(&src, &m);
    if (rc == 0) {
        CHECK(m.ntasks > 0 && m.maxchunks >= 0);
        CHECK(m.start_of_varheader >= m.header_size && m.start_of_varheader <= (int64_t)size);
        for (int32_t t = 0; t < m.ntasks; t++) {
            CHECK(m.blockcount[t] >= 0 && m.blockcount[t] <= m.maxchunks);
            for (int64_t b = 0; b < m.blockcount[t]; b++) {
                int64_t v = m.blocksizes[b * m.ntasks + t];
                CHECK(v >= 0 && v <= core_meta_capacity(&m, t));
                CHECK(v == 0 || m.starts[t] + b * m.globalskip + v <=
                                    m.start_of_varheader); /* an empty block may start anywhere */
            }
        }
        reencode_check(&m);
    } else {
        CHECK(rc < 0 && sheaf_last_error()[0] != '\0');
    }
    core_meta_free(&m);
    /* the unclosed path: header only */
    rc = core_meta_read_header(&src, &m, 0);
    core_meta_free(&m);
    return 0;
}
