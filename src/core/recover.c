/* recover.c - turn a container that was never closed (a crash) into a closed,
 * valid one: sheaf_recover (include/sheaf.h).
 *
 * For each physical file of the set whose header says "not closed"
 * (start_of_varheader 0) the block table of every task comes from the last
 * record of that task in the file's journal (journal.h): exactly what was
 * flushed. Without a journal (SIONlib wrote the file, or the journal is
 * gone) salvage mode estimates each block's length as the position of its
 * last non-zero byte: trailing zero bytes of the data cannot be told from
 * space never written, and the report says so. The metadata are then written
 * as a parallel close would (META2, the mapping in file 0 of a multi-file
 * set rebuilt from the files' headers, the header last, fsync), and the
 * journal is removed. Closed files are left alone. */
#define _FILE_OFFSET_BITS 64
#include "journal.h"
#include "checksum.h"
#include "crc32c.h"
#include "partask.h"
#include "error.h"
#include "sheaf.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rec_ctx {
    sheaf_recover_fn report;
    void *ctx;
    sheaf_recover_summary *sum;
} rec_ctx;

static void say(rec_ctx *r, const char *fmt, ...) CORE_PRINTF(2, 3);
static void say(rec_ctx *r, const char *fmt, ...)
{
    if (!r->report)
        return;
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    r->report(r->ctx, line);
}

/* Header of one physical file, closed or not. */
static int read_header(core_file *f, core_meta *m)
{
    memset(m, 0, sizeof *m);
    m->mapping_size = -1;
    core_src src;
    int rc = core_src_from_file(&src, f);
    return rc ? rc : core_meta_read_header(&src, m, 0);
}

/* A closed file whose whole metadata (block table, mapping, checksums) reads back. */
static int closed_intact(const char *path)
{
    core_meta m;
    int rc = core_meta_read_path(path, &m);
    core_meta_free(&m);
    return rc == 0;
}

/* Salvage: the length of one block = offset of its last non-zero byte + 1
 * (scanned backwards in windows, so memory stays bounded). */
static int last_nonzero(core_file *f, int64_t off, int64_t len, int64_t *used)
{
    static const int64_t W = 1 << 20;
    unsigned char *buf = malloc((size_t)(len < W ? (len > 0 ? len : 1) : W));
    if (!buf)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", f->name);
    *used = 0;
    int rc = 0;
    for (int64_t end = len; end > 0 && !rc;) {
        int64_t n = end < W ? end : W;
        rc = core_file_pread(f, buf, (size_t)n, off + end - n);
        for (int64_t i = n - 1; !rc && i >= 0; i--)
            if (buf[i]) {
                *used = end - n + i + 1;
                end = 0;
                break;
            }
        if (*used == 0)
            end -= n;
    }
    free(buf);
    return rc;
}

static int salvage_task(core_file *f, const core_meta *m, int32_t t, int64_t fsize, int64_t *nb, int64_t **bs)
{
    int64_t cap = core_meta_capacity(m, t), skip = m->globalskip, last = 0, alloc = 4;
    *bs = calloc((size_t)alloc, sizeof **bs);
    if (!*bs)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", f->name);
    for (int64_t b = 0; cap > 0 && (skip > 0 || b == 0); b++) { /* a chunk of 0 bytes holds nothing */
        int64_t off = m->starts[t] + b * skip;
        if (off >= fsize || (skip == 0 && b > 0))
            break;
        int64_t len = fsize - off < cap ? fsize - off : cap, used = 0;
        int rc = len > 0 ? last_nonzero(f, off, len, &used) : 0;
        if (rc)
            return rc;
        if (b >= alloc) {
            int64_t *g = realloc(*bs, (size_t)(2 * alloc) * sizeof *g);
            if (!g)
                return core_fail(SHEAF_E_NOMEM, "%s: out of memory", f->name);
            memset(g + alloc, 0, (size_t)alloc * sizeof *g);
            *bs = g;
            alloc *= 2;
        }
        (*bs)[b] = used;
        if (used)
            last = b + 1;
        if (skip == 0)
            break;
    }
    *nb = last ? last : 1;
    return 0;
}

/* Checksums of task t's nb blocks (sizes bs): blocks below first_cut are checked against
 * the CRCs the writer journaled (jcrc, NULL: none); with out, the CRCs for the trailer are
 * returned (malloc'd): the journaled one where there is one (so damage found now still
 * fails every later read), else the CRC of what the file holds now. cnt: data blocks
 * verified, damaged, unverifiable. Reads data only when there is something to check or
 * to write. */
static int check_blocks(rec_ctx *r, core_file *f, const core_meta *m, int32_t t, int64_t nb, const int64_t *bs,
                        const uint32_t *jcrc, int64_t first_cut, uint32_t **out, int64_t cnt[3])
{
    uint32_t *crc = out ? malloc((size_t)(nb ? nb : 1) * sizeof *crc) : NULL;
    if (out && !crc)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", f->name);
    int rc = 0;
    for (int64_t b = 0; b < nb && !rc; b++) {
        int64_t off = m->starts[t] + b * m->globalskip;
        int journaled = jcrc && b < first_cut;
        uint32_t got = core_crc32c(0, "", 0);
        if (bs[b] > 0 && (journaled || crc))
            rc = core_cksum_range(f, off, bs[b], &got);
        if (rc)
            break;
        if (bs[b] > 0 && journaled && got == jcrc[b]) {
            cnt[0]++;
        } else if (bs[b] > 0 && journaled) {
            cnt[1]++;
            say(r,
                "%s: task %d (global rank %lld) block %lld, bytes %lld-%lld of the file: checksum mismatch, the "
                "data are damaged (reads of this block will fail)",
                f->name, t, (long long)m->globalranks[t], (long long)b, (long long)off, (long long)(off + bs[b] - 1));
        } else if (bs[b] > 0) {
            cnt[2]++;
        }
        if (crc)
            crc[b] = journaled ? jcrc[b] : got;
    }
    if (rc)
        free(crc);
    else if (out)
        *out = crc;
    r->sum->blocks += cnt[0] + cnt[1] + cnt[2];
    r->sum->blocks_verified += cnt[0];
    r->sum->blocks_damaged += cnt[1];
    r->sum->blocks_unverifiable += cnt[2];
    return rc;
}

/* The state of one unclosed physical file while its block table is rebuilt. */
typedef struct rec_file {
    rec_ctx *r;
    const char *path;
    core_meta *m;
    core_file f;
    int64_t fsize;
    int32_t n;      /* tasks of the file */
    int64_t *count; /* [n] blocks per task */
    int64_t **bs;   /* [n] -> count[t] block sizes */
    uint32_t **crc; /* [n] -> count[t] CRCs for the trailer; NULL: no checksums */
    core_journal_state js;
    int have_journal;
} rec_file;

static int rec_nomem(const rec_file *rf) { return core_fail(SHEAF_E_NOMEM, "%s: out of memory", rf->path); }

/* The journal of the file, or salvage mode: what is known about each task's blocks. */
static int load_journal(rec_file *rf, int salvage, int set_journaled)
{
    int32_t n = rf->n;
    int jrc = core_journal_load(rf->path, n, rf->m->globalranks, &rf->js);
    if (!jrc) {
        rf->have_journal = 1;
    } else if (jrc != SHEAF_E_NOTFOUND) {
        return jrc;
    } else if (set_journaled && !salvage) {
        /* another file of the set has a journal: no task of this one ever flushed */
        rf->have_journal = 1;
        rf->js.ntasks = n;
        rf->js.nblocks = calloc((size_t)n, sizeof *rf->js.nblocks);
        rf->js.bsize = calloc((size_t)n, sizeof *rf->js.bsize);
        if (!rf->js.nblocks || !rf->js.bsize)
            return rec_nomem(rf);
    } else if (!salvage) {
        return core_fail(SHEAF_E_NOTFOUND,
                         "%s: was never closed and has no journal (%s.sheafj): it was not "
                         "written by sheaf with sion_flush, or the journal is lost; `sheaf recover --salvage` "
                         "estimates the data from the file's contents",
                         rf->path, rf->path);
    }
    if (rf->have_journal) {
        say(rf->r, "%s: journal: %lld record(s)%s", rf->path, (long long)rf->js.records,
            rf->js.damaged ? ", damaged or torn records skipped" : "");
    } else {
        say(rf->r,
            "%s: no journal, salvaging from the contents: each block ends at its last non-zero byte; "
            "trailing zero bytes of a task's data cannot be told from unwritten space",
            rf->path);
        rf->r->sum->uncertain = 1;
    }
    /* some task journaled block CRCs (checksum mode): the file keeps a checksum trailer */
    int cks = 0;
    for (int32_t t = 0; rf->have_journal && rf->js.bcrc && t < n; t++)
        cks |= rf->js.nblocks[t] > 0 && rf->js.bcrc[t] != NULL;
    if (cks) {
        rf->r->sum->checksums = 1;
        rf->crc = calloc((size_t)n, sizeof *rf->crc);
        if (!rf->crc)
            return rec_nomem(rf);
    }
    return 0;
}

/* Task t's blocks as its last journal record names them, cut to what the file holds.
 * *first_cut: the first block the file lost bytes of (its journaled CRC no longer applies). */
static int take_journaled_blocks(rec_file *rf, int32_t t, int64_t *first_cut)
{
    const core_meta *m = rf->m;
    int64_t cap = core_meta_capacity(m, t), fsize = rf->fsize;
    rf->count[t] = rf->js.nblocks[t];
    int64_t *bs = rf->bs[t] = rf->js.bsize[t];
    rf->js.bsize[t] = NULL;
    /* blocks that start at or past the end of the file hold nothing: drop them (and
     * count what the journal claimed for them as lost), so a hostile count cannot
     * blow up the block table or the file */
    int64_t keepb = rf->count[t];
    if (m->globalskip > 0 && cap > 0 && m->starts[t] < fsize) {
        int64_t fit = (fsize - m->starts[t] - 1) / m->globalskip + 1;
        if (keepb > fit)
            keepb = fit;
    } else { /* nothing past the file's end, or a chunk that holds nothing: one block */
        keepb = 1;
    }
    for (int64_t b = keepb; b < rf->count[t]; b++)
        if (bs[b] > 0)
            rf->r->sum->lost += bs[b];
    if (keepb < rf->count[t]) {
        say(rf->r, "%s: task %d: the journal names %lld blocks, the file holds at most %lld", rf->path, t,
            (long long)rf->count[t], (long long)keepb);
        rf->count[t] = keepb;
    }
    for (int64_t b = 0; b < rf->count[t]; b++) {
        int64_t off = m->starts[t] + b * m->globalskip, keep = bs[b];
        if (keep < 0 || keep > cap)
            return core_fail(SHEAF_E_FORMAT, "%s: journal gives task %d block %lld %lld bytes, its chunk holds %lld",
                             rf->path, t, (long long)b, (long long)keep, (long long)cap);
        if (off + keep > fsize) { /* the file lost data the journal says were durable */
            *first_cut = b < *first_cut ? b : *first_cut;
            keep = fsize > off ? fsize - off : 0;
            say(rf->r, "%s: task %d block %lld: the journal names %lld bytes, the file ends after %lld", rf->path, t,
                (long long)b, (long long)bs[b], (long long)keep);
            rf->r->sum->lost += bs[b] - keep;
            bs[b] = keep;
        }
    }
    return 0;
}

/* Task t's block table (journal, nothing flushed, or salvage), checked, and reported. */
static int rebuild_task(rec_file *rf, int32_t t, int64_t *bytes)
{
    int64_t first_cut = INT64_MAX;
    int flushed = rf->have_journal && rf->js.nblocks[t] > 0;
    int rc = 0;
    if (flushed) {
        rc = take_journaled_blocks(rf, t, &first_cut);
    } else if (rf->have_journal) {
        rf->count[t] = 1;
        rf->bs[t] = calloc(1, sizeof **rf->bs);
        if (!rf->bs[t])
            rc = rec_nomem(rf);
        rf->r->sum->tasks_unflushed++;
    } else {
        rc = salvage_task(&rf->f, rf->m, t, rf->fsize, &rf->count[t], &rf->bs[t]);
    }
    if (rc)
        return rc;
    int64_t cnt[3] = {0, 0, 0};
    *bytes = 0;
    for (int64_t b = 0; b < rf->count[t]; b++)
        *bytes += rf->bs[t][b];
    rc = check_blocks(rf->r, &rf->f, rf->m, t, rf->count[t], rf->bs[t], flushed && rf->js.bcrc ? rf->js.bcrc[t] : NULL,
                      first_cut, rf->crc ? &rf->crc[t] : NULL, cnt);
    if (rc)
        return rc;
    char ck[160] = "";
    if (rf->crc)
        snprintf(ck, sizeof ck, "; checksums: %lld block(s) verified, %lld damaged, %lld unverifiable",
                 (long long)cnt[0], (long long)cnt[1], (long long)cnt[2]);
    say(rf->r, "  task %d (global rank %lld): %lld block(s), %lld bytes%s%s", t, (long long)rf->m->globalranks[t],
        (long long)rf->count[t], (long long)*bytes,
        rf->have_journal && rf->js.nblocks[t] == 0 ? " (never flushed: nothing is known to be durable)" : "", ck);
    return 0;
}

/* The block table to write is ntasks x (largest block count) entries: a file whose chunks
 * hold at least one byte each needs fewer than fsize + ntasks of them (block b of a task
 * starts b * globalskip >= b * ntasks bytes in); hostile chunk sizes of 0 could ask for the
 * product of two file sizes, so that is refused. */
static int64_t maxblocks(const rec_file *rf)
{
    int64_t maxb = 1;
    for (int32_t t = 0; t < rf->n; t++)
        maxb = rf->count[t] > maxb ? rf->count[t] : maxb;
    return maxb;
}

static int check_table_size(const rec_file *rf)
{
    int64_t maxb = maxblocks(rf);
    if (maxb > (2 * (rf->fsize + rf->n) + 65536) / rf->n)
        return core_fail(SHEAF_E_FORMAT,
                         "%s: the rebuilt block table (%d tasks x %lld blocks) is larger than a "
                         "file of %lld bytes can need: chunk sizes or journal are corrupt",
                         rf->path, rf->n, (long long)maxb, (long long)rf->fsize);
    return 0;
}

/* The block sizes task-major in one array (*flat, flat_n entries), and the checksum
 * trailer core_meta_write_tail appends (task-major, one CRC per block) into m->crcs. */
static int flatten_table(rec_file *rf, int64_t flat_n, int64_t **flat)
{
    core_meta *m = rf->m;
    *flat = malloc((size_t)(flat_n ? flat_n : 1) * sizeof **flat);
    if (!*flat)
        return rec_nomem(rf);
    for (int32_t t = 0, k = 0; t < rf->n; t++)
        for (int64_t b = 0; b < rf->count[t]; b++)
            (*flat)[k++] = rf->bs[t][b];
    if (!rf->crc)
        return 0;
    free(m->crcs);
    m->crcs = malloc((size_t)(flat_n ? flat_n : 1) * sizeof *m->crcs);
    m->ncrcs = m->crcs ? flat_n : 0;
    if (!m->crcs)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory for the checksums", rf->path);
    for (int32_t t = 0, k = 0; t < rf->n; t++)
        for (int64_t b = 0; b < rf->count[t]; b++)
            m->crcs[k++] = rf->crc[t][b];
    return 0;
}

static void rec_file_free(rec_file *rf)
{
    for (int32_t t = 0; t < rf->n && rf->crc; t++)
        free(rf->crc[t]);
    free(rf->crc);
    for (int32_t t = 0; t < rf->n && rf->bs; t++)
        free(rf->bs[t]);
    free(rf->bs);
    free(rf->count);
    core_journal_state_free(&rf->js);
}

/* How far past a file's real end its header's alignment may put the data
 * start (and so the metadata) in a recovery: the largest file-system block
 * sizes in use are a few MiB. */
#define RECOVER_MAX_ALIGN_GROWTH ((int64_t)64 << 20)

/* A block row that starts at or past the file's real end holds no byte of
 * any task (row b starts at data_start + b x globalskip): its blocks are
 * dropped (the journal's or the header's word cannot put bytes there), so
 * the metadata never go past the input's end because of them. Block 0 stays.
 * *total loses the bytes such blocks claimed. */
static void drop_rows_past_end(rec_file *rf, int64_t *total)
{
    const core_meta *m = rf->m;
    if (m->globalskip <= 0)
        return;
    int64_t rows = rf->fsize > m->data_start ? (rf->fsize - m->data_start - 1) / m->globalskip + 1 : 1;
    for (int32_t t = 0; t < rf->n; t++)
        while (rf->count[t] > rows && rf->count[t] > 1) {
            rf->count[t]--;
            *total -= rf->bs[t][rf->count[t]];
        }
}

/* Rebuild the block table of one unclosed physical file and close it. */
static int recover_file(rec_ctx *r, const char *path, const char *name, core_meta *m, int salvage, int dry_run,
                        const int32_t *mapping, int32_t mapping_size, int set_journaled)
{
    rec_file rf;
    memset(&rf, 0, sizeof rf);
    rf.r = r, rf.path = path, rf.m = m, rf.n = m->ntasks;
    int rc = dry_run ? core_file_open(&rf.f, path, 0, 1)
                     : core_file_open_rw(&rf.f, path, 1, 0); /* the user's name: may be a link */
    if (rc)
        return rc;
    rc = core_file_size(&rf.f, &rf.fsize);
    /* the metadata go at or past the data start: a header whose file-system
     * block size puts it far past the file's end would make a huge sparse
     * file of what holds no data at all */
    if (!rc && m->data_start > rf.fsize + RECOVER_MAX_ALIGN_GROWTH)
        rc = core_fail(SHEAF_E_FORMAT,
                       "%s: the data start %lld (file-system block size %d) lies past the file's "
                       "end (%lld bytes): the header is damaged or nothing was written; not recovered",
                       path, (long long)m->data_start, (int)m->fsblksize, (long long)rf.fsize);
    rf.count = calloc((size_t)rf.n, sizeof *rf.count);
    rf.bs = calloc((size_t)rf.n, sizeof *rf.bs);
    if (!rc && (!rf.count || !rf.bs))
        rc = rec_nomem(&rf);
    if (!rc)
        rc = load_journal(&rf, salvage, set_journaled);
    int64_t total = 0, flat_n = 0;
    for (int32_t t = 0; t < rf.n && !rc; t++) {
        int64_t bytes = 0;
        rc = rebuild_task(&rf, t, &bytes);
        total += bytes;
    }
    if (!rc)
        drop_rows_past_end(&rf, &total);
    for (int32_t t = 0; t < rf.n && !rc; t++)
        flat_n += rf.count[t];
    if (!rc)
        rc = check_table_size(&rf);
    r->sum->bytes += total;
    r->sum->tasks += rf.n;
    int64_t *flat = NULL;
    if (!rc && !dry_run)
        rc = flatten_table(&rf, flat_n, &flat);
    int r2 = core_file_close(&rf.f);
    if (!rc)
        rc = r2;
    /* the metadata go where a close would put them (data start + blocks x the
     * chunk row), but never past the input's real end: chunk sizes are the
     * header's word, and a damaged one must not make a huge sparse file */
    int64_t layout_at = m->data_start + (int64_t)maxblocks(&rf) * m->globalskip;
    if (!rc && layout_at > rf.fsize)
        say(r, "%s: the metadata go at the file's end (offset %lld), not at the chunk layout's offset %lld past it",
            path, (long long)rf.fsize, (long long)layout_at);
    m->tail_max = rf.fsize > 0 ? rf.fsize : 1;
    if (!rc && !dry_run) {
        rc = core_par_write_tail_at(path, name, m, rf.count, flat, mapping, mapping ? mapping_size : 0);
        if (!rc) /* also when no task ever flushed: the journal is done with */
            rc = core_journal_remove(path);
    }
    free(flat);
    rec_file_free(&rf);
    return rc;
}

/* The header of member k at p; file 0 sets *nfiles, the others must agree with it. */
static int read_member_header(const char *p, int32_t k, int32_t *nfiles, core_meta *m)
{
    memset(m, 0, sizeof *m);
    core_file f;
    int rc = core_file_open(&f, p, 0, 1);
    if (rc == SHEAF_E_NOTFOUND && k > 0)
        return core_fail(SHEAF_E_NOTFOUND, "%s: member %d of the %d-file set is missing", p, k, *nfiles);
    if (rc)
        return rc;
    rc = read_header(&f, m);
    core_file_close(&f);
    if (rc)
        return rc;
    if (k == 0) {
        *nfiles = m->nfiles > 1 ? m->nfiles : 1;
        if (m->nfiles > 1 && m->filenumber != 0)
            return core_fail(SHEAF_E_ARG, "%s: is file %d of a %d-file set; recover the set by its first file", p,
                             m->filenumber, m->nfiles);
    } else if (m->nfiles != *nfiles || m->filenumber != k) {
        return core_fail(SHEAF_E_FORMAT, "%s: holds file %d of %d, expected file %d of %d", p, m->filenumber, m->nfiles,
                         k, *nfiles);
    }
    return 0;
}

/* The headers of every member of the set (file 0 names the count; the arrays grow as
 * members are found: the header's file count is not trusted for an allocation, a small
 * crafted file could name two billion members). *have: members read (to free). */
static int read_set_headers(const char *name, core_meta **msp, char ***pathsp, int32_t *nfilesp, int32_t *have)
{
    core_meta *ms = NULL;
    char **paths = NULL;
    int32_t nfiles = 1, cap = 0;
    int rc = 0;
    *have = 0;
    for (int32_t k = 0; k < nfiles && !rc; k++) {
        if (k == cap) {
            int32_t nc = cap ? (cap < nfiles / 2 ? 2 * cap : nfiles) : 1;
            core_meta *gm = realloc(ms, (size_t)nc * sizeof *ms);
            if (gm)
                ms = gm;
            char **gp = gm ? realloc(paths, (size_t)nc * sizeof *paths) : NULL;
            if (gp)
                paths = gp;
            if (!gm || !gp) {
                rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
                break;
            }
            cap = nc;
        }
        char *p = core_member_name(name, k);
        if (!p) {
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
            break;
        }
        core_meta m;
        rc = read_member_header(p, k, &nfiles, &m);
        if (rc) {
            core_meta_free(&m);
            free(p);
            break;
        }
        ms[k] = m;
        paths[k] = p;
        *have = k + 1;
    }
    *msp = ms, *pathsp = paths, *nfilesp = nfiles;
    return rc;
}

/* The mapping of a multi-file set: global rank -> (file, task) from the headers
 * (*mapping: 2 x *total entries; NULL for a single file). */
static int build_mapping(const char *name, const core_meta *ms, char *const *paths, int32_t nfiles, int32_t **mappingp,
                         int32_t *totalp)
{
    int64_t sumtasks = 0;
    *mappingp = NULL;
    *totalp = 0;
    for (int32_t k = 0; k < nfiles && nfiles > 1; k++)
        sumtasks += ms[k].ntasks;
    if (sumtasks > INT32_MAX / 8)
        return core_fail(SHEAF_E_FORMAT, "%s: the %d files of the set hold %lld tasks, more than a set can have", name,
                         nfiles, (long long)sumtasks);
    int32_t total = *totalp = (int32_t)sumtasks;
    if (nfiles <= 1)
        return 0;
    int32_t *mapping = *mappingp = malloc((size_t)total * 8);
    if (!mapping)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
    for (int32_t g = 0; g < 2 * total; g++)
        mapping[g] = -1;
    for (int32_t k = 0; k < nfiles; k++)
        for (int32_t t = 0; t < ms[k].ntasks; t++) {
            int64_t g = ms[k].globalranks[t];
            if (g < 0 || g >= total || mapping[2 * g] >= 0)
                return core_fail(SHEAF_E_FORMAT, "%s: global rank %lld of task %d is out of range or repeated",
                                 paths[k], (long long)g, t);
            mapping[2 * g] = k, mapping[2 * g + 1] = t;
        }
    return 0;
}

/* Member k: left alone when closed and intact, else rebuilt (journal, or salvage). */
static int recover_member(rec_ctx *r, const char *name, const char *path, core_meta *m, int32_t k, int salvage, int dry,
                          const int32_t *mapping, int32_t total, int journaled)
{
    r->sum->files++;
    if (m->start_of_varheader != 0 && closed_intact(path)) {
        say(r, "%s: closed, nothing to recover", path);
        r->sum->files_closed++;
        if (!dry && core_journal_exists(path))
            return core_journal_remove(path); /* a close that ended after the header */
        return 0;
    }
    if (m->start_of_varheader != 0) { /* header written, block table not readable: the journal decides */
        say(r, "%s: the header says closed but the block table cannot be read: %s", path, sheaf_last_error());
        if (!core_journal_exists(path) && !salvage)
            return core_fail(SHEAF_E_FORMAT, "%s: block table damaged and no journal to rebuild it from", path);
        m->start_of_varheader = 0;
    }
    return recover_file(r, path, name, m, salvage, dry, k == 0 ? mapping : NULL, total, journaled);
}

int sheaf_recover(const char *name, int flags, sheaf_recover_fn report, void *ctx, sheaf_recover_summary *out)
{
    core_clear_error();
    sheaf_recover_summary dummy;
    sheaf_recover_summary *sum = out ? out : &dummy;
    memset(sum, 0, sizeof *sum);
    if (!name || !*name)
        return core_fail(SHEAF_E_ARG, "sheaf_recover: no container name given");
    rec_ctx r = {report, ctx, sum};
    int salvage = (flags & SHEAF_RECOVER_SALVAGE) != 0, dry = (flags & SHEAF_RECOVER_DRY_RUN) != 0;
    /* all headers first: file 0 of a multi-file set needs the mapping of the whole set */
    core_meta *ms = NULL;
    char **paths = NULL;
    int32_t nfiles = 1, have = 0, *mapping = NULL, total = 0;
    int rc = read_set_headers(name, &ms, &paths, &nfiles, &have);
    if (!rc)
        rc = build_mapping(name, ms, paths, nfiles, &mapping, &total);
    int journaled = 0; /* a sheaf-written set: some file has a journal (looked at before any is removed) */
    for (int32_t q = 0; q < nfiles && !rc && !journaled; q++)
        journaled = core_journal_exists(paths[q]);
    for (int32_t k = 0; k < nfiles && !rc; k++)
        rc = recover_member(&r, name, paths[k], &ms[k], k, salvage, dry, mapping, total, journaled);
    for (int32_t k = 0; k < have; k++) {
        core_meta_free(&ms[k]);
        free(paths[k]);
    }
    free(ms);
    free(paths);
    free(mapping);
    return rc;
}
