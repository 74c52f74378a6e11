/* format.c - bounds-checked codec for SIONlib format 2-5 metadata. */
#include "format.h"
#include "endian.h"
#include "error.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A sanity cap on tasks per physical file. The real bound is the file size
 * (each task costs 16 header bytes), checked below; this keeps int math safe. */
#define CORE_MAX_TASKS (INT32_MAX / 32)

int64_t core_meta1_size(int32_t ntasks) { return CORE_META1_FIXED + 16 * (int64_t)ntasks; }

static int32_t get32(const unsigned char *p, int swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (int32_t)(swap ? core_bswap32(v) : v);
}

static int64_t get64(const unsigned char *p, int swap)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return (int64_t)(swap ? core_bswap64(v) : v);
}

static void put32(unsigned char *p, int32_t x, int swap)
{
    uint32_t v = (uint32_t)x;
    if (swap)
        v = core_bswap32(v);
    memcpy(p, &v, 4);
}

static void put64(unsigned char *p, int64_t x, int swap)
{
    uint64_t v = (uint64_t)x;
    if (swap)
        v = core_bswap64(v);
    memcpy(p, &v, 8);
}

/* read an array of int64 at off, validating it lies inside the file */
static int read_i64s(const core_src *src, int64_t off, int64_t n, int swap, int64_t **out, const char *what)
{
    *out = NULL;
    if (n < 0 || off < 0 || n > (src->size - off) / 8 || off > src->size)
        return core_fail(SHEAF_E_FORMAT,
                         "%s: %s (%lld entries at offset %lld) lies beyond the end of the file (%lld bytes)", src->name,
                         what, (long long)n, (long long)off, (long long)src->size);
    int64_t *a = malloc(n ? (size_t)n * 8 : 8);
    if (!a)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory reading %s", src->name, what);
    int rc = n ? src->pread(src->ctx, a, (size_t)n * 8, off) : 0;
    if (rc) {
        free(a);
        return rc;
    }
    if (swap)
        for (int64_t i = 0; i < n; i++)
            a[i] = (int64_t)core_bswap64((uint64_t)a[i]);
    *out = a;
    return 0;
}

int core_meta_layout(core_meta *m, const char *name)
{
    int64_t bs = m->fsblksize;
    m->header_size = core_meta1_size(m->ntasks);
    m->data_start = (m->header_size + bs - 1) / bs * bs;
    free(m->starts);
    m->starts = malloc((size_t)m->ntasks * 8);
    if (!m->starts)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
    int64_t pos = m->data_start, skip = 0;
    for (int32_t t = 0; t < m->ntasks; t++) {
        int64_t c = m->chunksizes[t];
        if (c < 0)
            return core_fail(SHEAF_E_FORMAT, "%s: task %d has a negative chunk size (%lld)", name, t, (long long)c);
        if (c > INT64_MAX / 4 - skip) /* before rounding: (c/bs+1)*bs must not overflow */
            return core_fail(SHEAF_E_FORMAT, "%s: chunk sizes add up beyond the largest file offset", name);
        if (m->format <= 3 && c % bs)
            c = (c / bs + 1) * bs; /* old files store unaligned sizes */
        if (c > INT64_MAX / 4 - skip)
            return core_fail(SHEAF_E_FORMAT, "%s: chunk sizes add up beyond the largest file offset", name);
        m->starts[t] = pos;
        pos += c;
        skip += c;
    }
    m->globalskip = skip;
    return 0;
}

int64_t core_meta_capacity(const core_meta *m, int32_t t)
{
    int64_t next = t + 1 < m->ntasks ? m->starts[t + 1] : m->data_start + m->globalskip;
    return next - m->starts[t];
}

/* The fixed part of META1 (h: its first hl bytes): magic, endianness, versions, counts;
 * *off: where the prefix follows. */
static int decode_fixed_header(const core_src *src, const unsigned char *h, core_meta *m, int64_t *off)
{
    if (memcmp(h, "sion", 4) != 0)
        return core_fail(SHEAF_E_FORMAT, "%s: not a SIONlib container (bad magic, expected \"sion\")", src->name);
    if (h[0 + 4] > 1 || h[3 + 4] != h[0 + 4] || h[1 + 4] > 1 || h[2 + 4] != h[1 + 4])
        return core_fail(SHEAF_E_FORMAT, "%s: corrupt endianness word %02x %02x %02x %02x", src->name, h[4], h[5], h[6],
                         h[7]);
    m->meta_big = h[4];
    m->data_big = h[5];
    m->swap = (m->meta_big != core_host_is_big());
    int s = m->swap;
    m->version = get32(h + 8, s);
    m->patch = get32(h + 12, s);
    m->format = get32(h + 16, s);
    if (m->format < 2 || m->format > 5)
        return core_fail(SHEAF_E_FORMAT, "%s: unsupported file format version %d (sheaf reads 2 to 5; %s)", src->name,
                         m->format,
                         (m->format > 255 || m->format < 0) ? "byte order mismatch or corrupt header"
                                                            : "written by an unknown SIONlib");
    m->fsblksize = get32(h + 20, s);
    m->ntasks = get32(h + 24, s);
    m->nfiles = get32(h + 28, s);
    if (m->format >= 3) {
        m->filenumber = get32(h + 32, s);
        m->flag1 = get64(h + 36, s);
        m->flag2 = get64(h + 44, s);
        *off = 52;
    } else {
        m->filenumber = 0;
        *off = 32;
    }
    if (m->fsblksize <= 0 || m->fsblksize > (1 << 30))
        return core_fail(SHEAF_E_FORMAT, "%s: invalid file system block size %d in header", src->name, m->fsblksize);
    if (m->ntasks <= 0 || m->ntasks > CORE_MAX_TASKS)
        return core_fail(SHEAF_E_FORMAT, "%s: invalid number of tasks %d in header", src->name, m->ntasks);
    /* SIONlib's serial writer stores filenumber 1 in single files: only check sets */
    if (m->nfiles <= 0 || (m->nfiles > 1 && (m->filenumber < 0 || m->filenumber >= m->nfiles)))
        return core_fail(SHEAF_E_FORMAT, "%s: invalid file number %d of %d files in header", src->name, m->filenumber,
                         m->nfiles);
    return 0;
}

/* From off on: prefix, global ranks, chunk sizes, maxchunks and start_of_varheader. */
static int read_task_tables(const core_src *src, core_meta *m, int64_t off)
{
    int s = m->swap, rc;
    int64_t tail = off + CORE_PREFIX_LEN + 16 * (int64_t)m->ntasks + 12;
    if (tail > src->size)
        return core_fail(SHEAF_E_FORMAT, "%s: header truncated: %d tasks need %lld bytes, file has %lld", src->name,
                         m->ntasks, (long long)tail, (long long)src->size);
    if (src->size >= off + CORE_PREFIX_LEN) {
        rc = src->pread(src->ctx, m->prefix, CORE_PREFIX_LEN, off);
        if (rc)
            return rc;
    }
    m->prefix[CORE_PREFIX_LEN] = '\0';
    off += CORE_PREFIX_LEN;
    if ((rc = read_i64s(src, off, m->ntasks, s, &m->globalranks, "global rank table")))
        return rc;
    off += 8 * (int64_t)m->ntasks;
    if ((rc = read_i64s(src, off, m->ntasks, s, &m->chunksizes, "chunk size table")))
        return rc;
    off += 8 * (int64_t)m->ntasks;
    unsigned char t12[12];
    if ((rc = src->pread(src->ctx, t12, 12, off)))
        return rc;
    m->maxchunks = get32(t12, s);
    m->start_of_varheader = get64(t12 + 4, s);
    return 0;
}

int core_meta_read_header(const core_src *src, core_meta *m, int require_closed)
{
    memset(m, 0, sizeof *m);
    m->mapping_size = -1;
    unsigned char h[CORE_META1_FIXED];
    if (src->size < 52)
        return core_fail(SHEAF_E_FORMAT, "%s: file too short (%lld bytes) to be a SIONlib container", src->name,
                         (long long)src->size);
    size_t hl = src->size < (int64_t)sizeof h ? (size_t)src->size : sizeof h;
    int64_t off = 0;
    int rc = src->pread(src->ctx, h, hl, 0);
    if (rc || (rc = decode_fixed_header(src, h, m, &off)) || (rc = read_task_tables(src, m, off)))
        return rc;
    if ((rc = core_meta_layout(m, src->name)))
        return rc;
    if (m->start_of_varheader == 0) {
        if (require_closed)
            return core_fail(SHEAF_E_UNCLOSED,
                             "%s: container was never closed (start_of_varheader is 0: the writing job ended "
                             "before sion_close/sion_parclose); `sheaf recover` restores what was flushed",
                             src->name);
        return 0;
    }
    if (m->maxchunks < 0)
        return core_fail(SHEAF_E_FORMAT, "%s: invalid block count %d in header", src->name, m->maxchunks);
    if (m->start_of_varheader < m->header_size || m->start_of_varheader > src->size)
        return core_fail(SHEAF_E_FORMAT, "%s: block table offset %lld outside the file (size %lld)", src->name,
                         (long long)m->start_of_varheader, (long long)src->size);
    return 0;
}

/* The block count table must fit before the metadata and the size table in the file;
 * returns in *used the most blocks any task uses. off: where the size table starts. */
static int check_block_counts(const core_src *src, const core_meta *m, int64_t off, int64_t *used)
{
    int64_t n = m->ntasks;
    /* Every block of every task lies before the metadata (block b of all tasks
     * starts at data_start + b * globalskip): a header claiming more blocks
     * than fit there is damaged. This also bounds the block size table by the
     * data before it, not only by the file's size, which can be sparse. */
    if (m->globalskip > 0 && m->maxchunks > 1 &&
        (m->start_of_varheader < m->data_start ||
         m->maxchunks - 1 > (m->start_of_varheader - m->data_start) / m->globalskip))
        return core_fail(SHEAF_E_FORMAT,
                         "%s: the header claims %d blocks per task of %lld bytes, but the metadata "
                         "start at offset %lld, where at most %lld blocks fit",
                         src->name, m->maxchunks, (long long)m->globalskip, (long long)m->start_of_varheader,
                         (long long)(m->start_of_varheader < m->data_start
                                         ? 0
                                         : (m->start_of_varheader - m->data_start) / m->globalskip + 1));
    if (m->maxchunks > 0 && n > (src->size - off) / 8 / m->maxchunks)
        return core_fail(SHEAF_E_FORMAT, "%s: block size table (%d tasks x %d blocks) is truncated", src->name,
                         m->ntasks, m->maxchunks);
    *used = m->maxchunks > 0 ? 1 : 0;
    for (int32_t t = 0; t < m->ntasks; t++) {
        int64_t bc = m->blockcount[t];
        if (bc < 0 || bc > m->maxchunks)
            return core_fail(SHEAF_E_FORMAT, "%s: task %d uses %lld blocks, header says at most %d", src->name, t,
                             (long long)bc, m->maxchunks);
        if (bc > *used)
            *used = bc;
    }
    return 0;
}

/* Every used block fits its chunk and ends before the block table (an empty
 * one may start anywhere); entries beyond a task's count become 0. */
static int check_block_sizes(const core_src *src, core_meta *m)
{
    int64_t n = m->ntasks;
    for (int32_t t = 0; t < m->ntasks; t++) {
        int64_t bc = m->blockcount[t];
        int64_t cap = core_meta_capacity(m, t);
        for (int64_t b = 0; b < m->maxchunks; b++) {
            int64_t v = m->blocksizes[b * n + t];
            if (b >= bc) {
                m->blocksizes[b * n + t] = 0; /* SIONlib stores 0 (older: -1) beyond the count */
                continue;
            }
            if (v < 0 || v > cap)
                return core_fail(SHEAF_E_FORMAT, "%s: task %d block %lld holds %lld bytes, its chunk has room for %lld",
                                 src->name, t, (long long)b, (long long)v, (long long)cap);
            /* an empty block may start past the table (a recovered file whose
             * end came before a task's chunk: the table goes at the file's end) */
            if (v > 0 && m->starts[t] + b * m->globalskip + v > m->start_of_varheader)
                return core_fail(SHEAF_E_FORMAT, "%s: task %d block %lld extends past the block table at %lld",
                                 src->name, t, (long long)b, (long long)m->start_of_varheader);
        }
    }
    return 0;
}

/* The mapping of a multi-file set (file 0 only) at *off; *off moves past it. */
static int decode_mapping(const core_src *src, core_meta *m, int64_t *off)
{
    int s = m->swap, rc;
    unsigned char b4[4];
    if (*off + 4 > src->size)
        return core_fail(SHEAF_E_FORMAT, "%s: multi-file mapping missing (file 0 of %d ends at the block table)",
                         src->name, m->nfiles);
    if ((rc = src->pread(src->ctx, b4, 4, *off)))
        return rc;
    int32_t ms = get32(b4, s);
    *off += 4;
    if (ms <= 0 || ms > (src->size - *off) / 8)
        return core_fail(SHEAF_E_FORMAT, "%s: multi-file mapping size %d does not fit in the file", src->name, ms);
    m->mapping = malloc((size_t)ms * 8);
    if (!m->mapping)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory reading the mapping", src->name);
    if ((rc = src->pread(src->ctx, m->mapping, (size_t)ms * 8, *off)))
        return rc;
    m->mapping_size = ms;
    for (int32_t i = 0; i < 2 * ms; i++) {
        if (s)
            m->mapping[i] = (int32_t)core_bswap32((uint32_t)m->mapping[i]);
    }
    for (int32_t g = 0; g < ms; g++) {
        int32_t fno = m->mapping[2 * g], lr = m->mapping[2 * g + 1];
        if (fno < 0 || fno >= m->nfiles || lr < 0)
            return core_fail(SHEAF_E_FORMAT, "%s: mapping entry %d (file %d, task %d) is invalid for %d files",
                             src->name, g, fno, lr, m->nfiles);
    }
    *off += 8 * (int64_t)ms;
    return 0;
}

int core_meta_decode_blocks(const core_src *src, core_meta *m, int64_t *end)
{
    int s = m->swap, rc;
    int64_t n = m->ntasks, off = m->start_of_varheader, used = 0;
    if ((rc = read_i64s(src, off, n, s, &m->blockcount, "block count table (META2)")))
        return rc;
    off += 8 * n;
    if ((rc = check_block_counts(src, m, off, &used)))
        return rc;
    /* Only the rows of blocks some task uses are read (the table is block-major,
     * so they come first): entries beyond a task's count are ignored anyway, and
     * the header's maximum alone, which a sparse file can appear to hold, must
     * not decide how much is allocated. maxchunks becomes the most blocks any task
     * uses (SIONlib's maxusedchunks); the parts after the table are found from
     * the header's value. */
    if ((rc = read_i64s(src, off, n * used, s, &m->blocksizes, "block size table (META2)")))
        return rc;
    off += 8 * n * m->maxchunks;
    m->maxchunks = (int32_t)used;
    if ((rc = check_block_sizes(src, m)))
        return rc;
    if (m->nfiles > 1 && m->filenumber == 0 && (rc = decode_mapping(src, m, &off)))
        return rc;
    *end = off; /* (a serial close's 4-byte zero mapping size may follow) */
    return 0;
}

void core_meta_free(core_meta *m)
{
    free(m->globalranks);
    free(m->chunksizes);
    free(m->blockcount);
    free(m->blocksizes);
    free(m->mapping);
    free(m->starts);
    free(m->crcs);
    free(m->crc_first);
    m->globalranks = m->chunksizes = m->blockcount = m->blocksizes = m->starts = m->crc_first = NULL;
    m->mapping = NULL;
    m->crcs = NULL;
    m->ncrcs = 0;
}

void core_meta_encode_header(const core_meta *m, unsigned char *buf)
{
    int s = (m->meta_big != core_host_is_big());
    memcpy(buf, "sion", 4);
    buf[4] = buf[7] = (unsigned char)m->meta_big;
    buf[5] = buf[6] = (unsigned char)m->data_big;
    put32(buf + 8, m->version, s);
    put32(buf + 12, m->patch, s);
    put32(buf + 16, m->format, s);
    put32(buf + 20, m->fsblksize, s);
    put32(buf + 24, m->ntasks, s);
    put32(buf + 28, m->nfiles, s);
    put32(buf + 32, m->filenumber, s);
    put64(buf + 36, m->flag1, s);
    put64(buf + 44, m->flag2, s);
    memset(buf + 52, 0, CORE_PREFIX_LEN);
    size_t pl = strlen(m->prefix);
    memcpy(buf + 52, m->prefix, pl > CORE_PREFIX_LEN ? CORE_PREFIX_LEN : pl);
    unsigned char *p = buf + 52 + CORE_PREFIX_LEN;
    for (int32_t t = 0; t < m->ntasks; t++, p += 8)
        put64(p, m->globalranks[t], s);
    for (int32_t t = 0; t < m->ntasks; t++, p += 8)
        put64(p, m->chunksizes[t], s);
    put32(p, m->maxchunks, s);
    put64(p + 4, m->start_of_varheader, s);
}

void core_meta_encode_blocks(const core_meta *m, unsigned char *buf)
{
    int s = (m->meta_big != core_host_is_big());
    int64_t n = m->ntasks;
    for (int64_t t = 0; t < n; t++)
        put64(buf + 8 * t, m->blockcount[t], s);
    for (int64_t i = 0; i < n * m->maxchunks; i++)
        put64(buf + 8 * (n + i), m->blocksizes[i], s);
}

size_t core_meta_encode_mapping(const core_meta *m, unsigned char *buf)
{
    int s = (m->meta_big != core_host_is_big());
    int32_t ms = m->mapping_size < 0 ? 0 : m->mapping_size;
    put32(buf, ms, s);
    for (int32_t i = 0; i < 2 * ms; i++)
        put32(buf + 4 + 4 * (size_t)i, m->mapping[i], s);
    return 4 + 8 * (size_t)ms;
}

static int mem_pread(void *ctx, void *buf, size_t n, int64_t off)
{
    core_membuf *mb = ctx;
    if (off < 0 || (uint64_t)off > mb->len || n > mb->len - (size_t)off)
        return core_fail(SHEAF_E_FORMAT, "read of %zu bytes at %lld beyond end of buffer", n, (long long)off);
    memcpy(buf, mb->data + off, n);
    return 0;
}

void core_src_from_memory(core_src *src, core_membuf *mb, const char *name)
{
    src->ctx = mb;
    src->size = (int64_t)mb->len;
    src->name = name;
    src->pread = mem_pread;
}
