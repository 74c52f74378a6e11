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
            say(r, "%s: task %d (global rank %lld) block %lld, bytes %lld-%lld of the file: checksum mismatch, the "
                "data are damaged (reads of this block will fail)", f->name, t, (long long)m->globalranks[t],
                (long long)b, (long long)off, (long long)(off + bs[b] - 1));
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

/* Rebuild the block table of one unclosed physical file and close it. */
static int recover_file(rec_ctx *r, const char *path, const char *name, core_meta *m, int salvage, int dry_run,
                        const int32_t *mapping, int32_t mapping_size, int set_journaled)
{
    core_file f;
    int rc = dry_run ? core_file_open(&f, path, 0, 1) : core_file_open_rw(&f, path, 1, 0); /* the user's name: may be a link */
    if (rc)
        return rc;
    int64_t fsize = 0;
    rc = core_file_size(&f, &fsize);
    int32_t n = m->ntasks;
    int64_t *count = calloc((size_t)n, sizeof *count), **bs = calloc((size_t)n, sizeof *bs);
    core_journal_state js;
    memset(&js, 0, sizeof js);
    int have_journal = 0;
    if (!rc && (!count || !bs))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
    if (!rc) {
        int jrc = core_journal_load(path, n, m->globalranks, &js);
        if (!jrc) {
            have_journal = 1;
        } else if (jrc != SHEAF_E_NOTFOUND) {
            rc = jrc;
        } else if (set_journaled && !salvage) {
            /* another file of the set has a journal: no task of this one ever flushed */
            have_journal = 1;
            js.ntasks = n;
            js.nblocks = calloc((size_t)n, sizeof *js.nblocks);
            js.bsize = calloc((size_t)n, sizeof *js.bsize);
            if (!js.nblocks || !js.bsize)
                rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
        } else if (!salvage)
            rc = core_fail(SHEAF_E_NOTFOUND, "%s: was never closed and has no journal (%s.sheafj): it was not "
                           "written by sheaf with sion_flush, or the journal is lost; `sheaf recover --salvage` "
                           "estimates the data from the file's contents", path, path);
    }
    if (!rc && have_journal)
        say(r, "%s: journal: %lld record(s)%s", path, (long long)js.records,
            js.damaged ? ", damaged or torn records skipped" : "");
    if (!rc && !have_journal) {
        say(r, "%s: no journal, salvaging from the contents: each block ends at its last non-zero byte; "
            "trailing zero bytes of a task's data cannot be told from unwritten space", path);
        r->sum->uncertain = 1;
    }
    /* some task journaled block CRCs (checksum mode): the file keeps a checksum trailer */
    int cks = 0;
    for (int32_t t = 0; !rc && have_journal && js.bcrc && t < n; t++)
        cks |= js.nblocks[t] > 0 && js.bcrc[t] != NULL;
    uint32_t **crc = cks ? calloc((size_t)n, sizeof *crc) : NULL;
    if (cks && !crc)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
    if (cks)
        r->sum->checksums = 1;
    int64_t total = 0, flat_n = 0;
    for (int32_t t = 0; t < n && !rc; t++) {
        int64_t cap = core_meta_capacity(m, t), first_cut = INT64_MAX;
        if (have_journal && js.nblocks[t] > 0) {
            count[t] = js.nblocks[t];
            bs[t] = js.bsize[t];
            js.bsize[t] = NULL;
            /* blocks that start at or past the end of the file hold nothing: drop them (and
             * count what the journal claimed for them as lost), so a hostile count cannot
             * blow up the block table or the file */
            int64_t keepb = count[t];
            if (m->globalskip > 0 && cap > 0 && m->starts[t] < fsize) {
                int64_t fit = (fsize - m->starts[t] - 1) / m->globalskip + 1;
                if (keepb > fit)
                    keepb = fit;
            } else { /* nothing past the file's end, or a chunk that holds nothing: one block */
                keepb = 1;
            }
            for (int64_t b = keepb; b < count[t]; b++)
                if (bs[t][b] > 0)
                    r->sum->lost += bs[t][b];
            if (keepb < count[t]) {
                say(r, "%s: task %d: the journal names %lld blocks, the file holds at most %lld", path, t,
                    (long long)count[t], (long long)keepb);
                count[t] = keepb;
            }
            for (int64_t b = 0; b < count[t]; b++) {
                int64_t off = m->starts[t] + b * m->globalskip, keep = bs[t][b];
                if (keep < 0 || keep > cap) {
                    rc = core_fail(SHEAF_E_FORMAT, "%s: journal gives task %d block %lld %lld bytes, its chunk holds %lld",
                                   path, t, (long long)b, (long long)keep, (long long)cap);
                    break;
                }
                if (off + keep > fsize) { /* the file lost data the journal says were durable */
                    first_cut = b < first_cut ? b : first_cut; /* its journaled CRC no longer applies */
                    keep = fsize > off ? fsize - off : 0;
                    say(r, "%s: task %d block %lld: the journal names %lld bytes, the file ends after %lld",
                        path, t, (long long)b, (long long)bs[t][b], (long long)keep);
                    r->sum->lost += bs[t][b] - keep;
                    bs[t][b] = keep;
                }
            }
        } else if (have_journal) {
            count[t] = 1;
            bs[t] = calloc(1, sizeof **bs);
            if (!bs[t])
                rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
            r->sum->tasks_unflushed++;
        } else {
            rc = salvage_task(&f, m, t, fsize, &count[t], &bs[t]);
        }
        int64_t bytes = 0, cnt[3] = {0, 0, 0};
        for (int64_t b = 0; !rc && b < count[t]; b++)
            bytes += bs[t][b];
        if (!rc)
            rc = check_blocks(r, &f, m, t, count[t], bs[t],
                              have_journal && js.bcrc && js.nblocks[t] > 0 ? js.bcrc[t] : NULL, first_cut,
                              crc ? &crc[t] : NULL, cnt);
        char ck[160] = "";
        if (cks)
            snprintf(ck, sizeof ck, "; checksums: %lld block(s) verified, %lld damaged, %lld unverifiable",
                     (long long)cnt[0], (long long)cnt[1], (long long)cnt[2]);
        if (!rc)
            say(r, "  task %d (global rank %lld): %lld block(s), %lld bytes%s%s", t, (long long)m->globalranks[t],
                (long long)count[t], (long long)bytes,
                have_journal && js.nblocks[t] == 0 ? " (never flushed: nothing is known to be durable)" : "", ck);
        total += bytes;
        flat_n += count[t];
    }
    /* the block table to write is ntasks x (largest block count) entries: a file whose chunks
     * hold at least one byte each needs fewer than fsize + ntasks of them (block b of a task
     * starts b * globalskip >= b * ntasks bytes in); hostile chunk sizes of 0 could ask for the
     * product of two file sizes, so that is refused */
    int64_t maxb = 1;
    for (int32_t t = 0; t < n && !rc; t++)
        maxb = count[t] > maxb ? count[t] : maxb;
    if (!rc && maxb > (2 * (fsize + n) + 65536) / n)
        rc = core_fail(SHEAF_E_FORMAT, "%s: the rebuilt block table (%d tasks x %lld blocks) is larger than a file "
                       "of %lld bytes can need: chunk sizes or journal are corrupt", path, n, (long long)maxb,
                       (long long)fsize);
    r->sum->bytes += total;
    r->sum->tasks += n;
    int64_t *flat = NULL;
    if (!rc && !dry_run) {
        flat = malloc((size_t)(flat_n ? flat_n : 1) * sizeof *flat);
        if (!flat)
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
        for (int32_t t = 0, k = 0; t < n && flat; t++)
            for (int64_t b = 0; b < count[t]; b++)
                flat[k++] = bs[t][b];
        if (!rc && cks) { /* the trailer core_meta_write_tail appends: task-major, one CRC per block */
            free(m->crcs);
            m->crcs = malloc((size_t)(flat_n ? flat_n : 1) * sizeof *m->crcs);
            m->ncrcs = m->crcs ? flat_n : 0;
            if (!m->crcs)
                rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory for the checksums", path);
            for (int32_t t = 0, k = 0; t < n && m->crcs; t++)
                for (int64_t b = 0; b < count[t]; b++)
                    m->crcs[k++] = crc[t][b];
        }
    }
    int r2 = core_file_close(&f);
    if (!rc)
        rc = r2;
    if (!rc && !dry_run) {
        rc = core_par_write_tail_at(path, name, m, count, flat, mapping, mapping ? mapping_size : 0);
        if (!rc) /* also when no task ever flushed: the journal is done with */
            rc = core_journal_remove(path);
    }
    free(flat);
    for (int32_t t = 0; t < n && crc; t++)
        free(crc[t]);
    free(crc);
    for (int32_t t = 0; t < n && bs; t++)
        free(bs[t]);
    free(bs);
    free(count);
    core_journal_state_free(&js);
    return rc;
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
    /* all headers first: file 0 of a multi-file set needs the mapping of the whole set. The
     * arrays grow as members are found: the header's file count is not trusted for an
     * allocation (a small crafted file could name two billion members) */
    core_meta *ms = NULL;
    char **paths = NULL;
    int32_t nfiles = 1, have = 0, cap = 0;
    int rc = 0;
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
        core_file f;
        if (!p) {
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
            break;
        }
        rc = core_file_open(&f, p, 0, 1);
        if (rc == SHEAF_E_NOTFOUND && k > 0)
            rc = core_fail(SHEAF_E_NOTFOUND, "%s: member %d of the %d-file set is missing", p, k, nfiles);
        core_meta m;
        memset(&m, 0, sizeof m);
        if (!rc) {
            rc = read_header(&f, &m);
            core_file_close(&f);
        }
        if (!rc && k == 0) {
            nfiles = m.nfiles > 1 ? m.nfiles : 1;
            if (m.nfiles > 1 && m.filenumber != 0)
                rc = core_fail(SHEAF_E_ARG, "%s: is file %d of a %d-file set; recover the set by its first file", p,
                               m.filenumber, m.nfiles);
        } else if (!rc && (m.nfiles != nfiles || m.filenumber != k)) {
            rc = core_fail(SHEAF_E_FORMAT, "%s: holds file %d of %d, expected file %d of %d", p, m.filenumber,
                           m.nfiles, k, nfiles);
        }
        if (rc) {
            core_meta_free(&m);
            free(p);
            break;
        }
        ms[k] = m;
        paths[k] = p;
        have = k + 1;
    }
    /* the mapping of a multi-file set: global rank -> (file, task) from the headers */
    int32_t *mapping = NULL, total = 0;
    int64_t sumtasks = 0;
    for (int32_t k = 0; k < nfiles && !rc && nfiles > 1; k++)
        sumtasks += ms[k].ntasks;
    if (!rc && sumtasks > INT32_MAX / 8)
        rc = core_fail(SHEAF_E_FORMAT, "%s: the %d files of the set hold %lld tasks, more than a set can have", name,
                       nfiles, (long long)sumtasks);
    total = (int32_t)sumtasks;
    if (!rc && nfiles > 1) {
        mapping = malloc((size_t)total * 8);
        if (!mapping)
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
        for (int32_t g = 0; mapping && g < 2 * total; g++)
            mapping[g] = -1;
        for (int32_t k = 0; k < nfiles && !rc; k++)
            for (int32_t t = 0; t < ms[k].ntasks && !rc; t++) {
                int64_t g = ms[k].globalranks[t];
                if (g < 0 || g >= total || mapping[2 * g] >= 0)
                    rc = core_fail(SHEAF_E_FORMAT, "%s: global rank %lld of task %d is out of range or repeated",
                                   paths[k], (long long)g, t);
                else
                    mapping[2 * g] = k, mapping[2 * g + 1] = t;
            }
    }
    int journaled = 0; /* a sheaf-written set: some file has a journal (looked at before any is removed) */
    for (int32_t q = 0; q < nfiles && !rc && !journaled; q++)
        journaled = core_journal_exists(paths[q]);
    for (int32_t k = 0; k < nfiles && !rc; k++) {
        sum->files++;
        if (ms[k].start_of_varheader != 0 && closed_intact(paths[k])) {
            say(&r, "%s: closed, nothing to recover", paths[k]);
            sum->files_closed++;
            if (!dry && core_journal_exists(paths[k]))
                rc = core_journal_remove(paths[k]); /* a close that ended after the header */
            continue;
        }
        if (ms[k].start_of_varheader != 0) { /* header written, block table not readable: the journal decides */
            say(&r, "%s: the header says closed but the block table cannot be read: %s", paths[k],
                sheaf_last_error());
            if (!core_journal_exists(paths[k]) && !salvage) {
                rc = core_fail(SHEAF_E_FORMAT, "%s: block table damaged and no journal to rebuild it from",
                               paths[k]);
                break;
            }
            ms[k].start_of_varheader = 0;
        }
        rc = recover_file(&r, paths[k], name, &ms[k], salvage, dry, k == 0 ? mapping : NULL, total, journaled);
    }
    for (int32_t k = 0; k < have; k++) {
        core_meta_free(&ms[k]);
        free(paths[k]);
    }
    free(ms);
    free(paths);
    free(mapping);
    return rc;
}
