/* container.c - create, open (single and multi-file sets) and close containers. */
#define _FILE_OFFSET_BITS 64
#include "container.h"
#include "journal.h"
#include "checksum.h"
#include <errno.h>
#include <unistd.h>
#include "endian.h"
#include "error.h"
#include "sion_const.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- write ------------------------------------------------------------- */

int core_create_check(const char *name, int32_t ntasks, const int64_t *chunksizes, int32_t fsblksize)
{
    if (!name || !*name)
        return core_fail(SHEAF_E_ARG, "no file name given");
    if (strlen(name) >= SION_FILENAME_LENGTH)
        return core_fail(SHEAF_E_ARG, "%.64s...: file name longer than %d bytes", name, SION_FILENAME_LENGTH - 1);
    if (ntasks <= 0 || ntasks > INT32_MAX / 32)
        return core_fail(SHEAF_E_ARG, "%s: invalid number of tasks %d", name, ntasks);
    if (!chunksizes)
        return core_fail(SHEAF_E_ARG, "%s: no chunk sizes given", name);
    for (int32_t t = 0; t < ntasks; t++)
        if (chunksizes[t] < 0)
            return core_fail(SHEAF_E_ARG, "%s: task %d has negative chunk size %lld", name, t,
                             (long long)chunksizes[t]);
        else if (chunksizes[t] > INT64_MAX / 4) /* rounding up to fsblksize must not overflow */
            return core_fail(SHEAF_E_ARG, "%s: task %d has chunk size %lld, larger than any file can be", name, t,
                             (long long)chunksizes[t]);
    return core_fsblksize_check(name, fsblksize);
}

int core_fsblksize_ok(int64_t fsblksize)
{
    /* Any size up to SIONlib's SION_MAX_FSBLOCKSIZE: SIONlib accepts sizes that are not
     * powers of two, and its own test programs write with 10, 100, 2500 or 1000000. */
    return fsblksize <= SION_MAX_FSBLOCKSIZE;
}

int core_fsblksize_detected_ok(int64_t d) { return d > 0 && d <= SION_MAX_FSBLOCKSIZE && (d & (d - 1)) == 0; }

int core_fsblksize_check(const char *name, int64_t fsblksize)
{
    if (core_fsblksize_ok(fsblksize))
        return 0;
    return core_fail(SHEAF_E_ARG,
                     "%s: file system block size %lld is larger than %d bytes (32 MiB, SIONlib's "
                     "SION_MAX_FSBLOCKSIZE); give a size up to that, or -1 to detect it",
                     name, (long long)fsblksize, SION_MAX_FSBLOCKSIZE);
}

int core_create(core_container **out, const char *name, const core_mode *mode, int32_t ntasks,
                const int64_t *chunksizes, const int64_t *globalranks, int32_t *fsblksize)
{
    *out = NULL;
    int rc0 = core_create_check(name, ntasks, chunksizes, fsblksize ? *fsblksize : 0);
    if (rc0)
        return rc0;

    core_container *c = core_container_new(name, mode);
    if (!c)
        return SHEAF_E_NOMEM;
    int rc = SHEAF_E_NOMEM;
    c->files = calloc(1, sizeof *c->files);
    c->tasks = calloc((size_t)ntasks, sizeof *c->tasks);
    if (!c->files || !c->tasks)
        goto fail;
    c->nfiles = 1;
    core_pfile *pf = &c->files[0];
    pf->m.mapping_size = -1;
    if ((rc = core_journal_remove(name)) || (rc = core_file_open(&pf->f, name, 1, mode->posix)))
        goto fail;
    int32_t bs = fsblksize ? *fsblksize : -1;
    if (bs <= 0) {
        int64_t d = core_file_fs_blksize(&pf->f);
        bs = !core_fsblksize_detected_ok(d) ? SION_DEFAULT_FSBLOCKSIZE : (int32_t)d; /* as core_fsblksize_for */
        if (fsblksize)
            *fsblksize = bs;
    }
    core_meta *m = &pf->m;
    if ((rc = core_meta_init_write(m, name, mode, ntasks, chunksizes, globalranks, bs)))
        goto fail;
    c->keyval = (int)(m->flag1 >> 32);
    c->cksum = mode->checksum;
    c->nfiles = 1;
    c->ntasks = ntasks;
    c->fsblksize = bs;
    c->data_big = m->data_big;
    for (int32_t t = 0; t < ntasks; t++) {
        core_task *tk = &c->tasks[t];
        tk->chunksize = m->chunksizes[t];
        tk->globalrank = m->globalranks[t];
        tk->start = m->starts[t];
        tk->lrank = t;
        tk->nblocks = 1;
        tk->crc_on = mode->checksum;
        if ((rc = core_task_grow(tk, 1, name))) /* grows by doubling as blocks are added */
            goto fail;
    }
    if ((rc = core_meta_write_header(&pf->f, m)) || (rc = core_place(c)))
        goto fail;
    *out = c;
    return 0;
fail:
    core_container_free(c);
    return rc;
}

static int finish_write(core_container *c)
{
    int rc = core_sync(c);
    if (rc)
        return rc;
    core_pfile *pf = &c->files[0];
    core_meta *m = &pf->m;
    int64_t *bc = malloc((size_t)c->ntasks * 8);
    if (!bc)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory writing the block table", c->name);
    for (int32_t t = 0; t < c->ntasks; t++)
        bc[t] = c->tasks[t].nblocks;
    rc = core_meta_alloc_blocks(m, bc, c->name);
    free(bc);
    if (rc)
        return rc;
    for (int32_t t = 0; t < c->ntasks; t++) {
        core_task *tk = &c->tasks[t];
        for (int64_t b = 0; b < tk->nblocks; b++)
            m->blocksizes[b * c->ntasks + t] = tk->bsize[b];
    }
    if (c->cksum) {
        int64_t n = 0, k = 0;
        for (int32_t t = 0; t < c->ntasks; t++)
            n += c->tasks[t].nblocks;
        free(m->crcs);
        m->crcs = malloc((size_t)(n ? n : 1) * sizeof *m->crcs);
        if (!m->crcs)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory for the checksums", c->name);
        m->ncrcs = n;
        for (int32_t t = 0; t < c->ntasks && !rc; t++) {
            rc = core_cksum_finish_task(c, t);
            for (int64_t b = 0; !rc && b < c->tasks[t].nblocks; b++)
                m->crcs[k++] = c->tasks[t].bcrc[b];
        }
        if (rc)
            return rc;
    }
    rc = core_meta_write_tail(&pf->f, m, 1);
    if (!rc && pf->jfd1) { /* tasks flushed: durable metadata replace the journal */
        rc = core_file_sync(&pf->f);
        if (!rc)
            rc = core_journal_remove(pf->f.name);
    }
    return rc;
}

int core_close(core_container *c)
{
    if (!c)
        return core_fail(SHEAF_E_ARG, "close of a container that is not open");
    int rc = 0;
    if (c->mode.write && !c->attached) /* an attached task leaves the metadata to its master */
        rc = finish_write(c);
    for (int32_t i = 0; i < c->nfiles; i++) {
        if (c->files[i].f.name) {
            int r2 = core_file_close(&c->files[i].f);
            if (!rc)
                rc = r2;
        }
    }
    core_container_free(c);
    return rc;
}

/* ---- read --------------------------------------------------------------- */

char *core_member_name(const char *base, int32_t k)
{
    size_t l = strlen(base) + 16;
    char *nm = malloc(l);
    if (nm) {
        if (k == 0)
            snprintf(nm, l, "%s", base);
        else
            snprintf(nm, l, "%s.%06d", base, k);
    }
    return nm;
}

static int open_member(core_container *c, int32_t k)
{
    core_pfile *pf = &c->files[k];
    pf->m.mapping_size = -1;
    char *nm = c->member_name ? c->member_name(c->member_ctx, c->name, k) : core_member_name(c->name, k);
    if (!nm)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory (or no name for member %d)", c->name, k);
    int rc = core_file_open(&pf->f, nm, 0, c->mode.posix);
    if (rc == SHEAF_E_NOTFOUND && k > 0)
        rc = core_fail(SHEAF_E_NOTFOUND, "%s: member %d of the multi-file set is missing (%s not found)", c->name, k,
                       nm);
    free(nm);
    if (rc)
        return rc;
    return core_meta_read_file(&pf->f, &pf->m, 1);
}

int core_read_member_meta(core_container *c, const char *path)
{
    if (!c->files) {
        c->files = calloc(1, sizeof *c->files);
        if (!c->files)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
        c->nfiles = 1;
    }
    core_pfile *pf = &c->files[0];
    pf->m.mapping_size = -1;
    int rc = core_file_open(&pf->f, path, 0, 1);
    if (rc)
        return rc;
    rc = core_meta_read_file(&pf->f, &pf->m, 1);
    int r2 = core_file_close(&pf->f);
    return rc ? rc : r2;
}

static int init_task_from_meta(core_container *c, core_task *tk, int32_t file, int32_t lrank)
{
    core_meta *m = &c->files[file].m;
    tk->file = file;
    tk->lrank = lrank;
    tk->chunksize = core_meta_capacity(m, lrank);
    tk->globalrank = m->globalranks[lrank];
    tk->start = m->starts[lrank];
    tk->nblocks = m->blockcount[lrank] > 0 ? m->blockcount[lrank] : 1;
    /* a task without blocks has no checksums (its one empty block needs none) */
    tk->crc_on = m->crcs != NULL && m->crc_first && m->blockcount[lrank] > 0 && !c->mode.nochecksum;
    int rc = core_task_grow(tk, tk->nblocks, c->name);
    if (rc)
        return rc;
    for (int64_t b = 0; b < m->blockcount[lrank]; b++)
        tk->bsize[b] = m->blocksizes[b * m->ntasks + lrank];
    if (tk->crc_on) {
        core_cksum_take(tk, m->crcs + m->crc_first[lrank]);
        c->cksum = 1;
    }
    return 0;
}

static int check_member(core_container *c, int32_t k)
{
    core_meta *m0 = &c->files[0].m, *mk = &c->files[k].m;
    if (mk->nfiles != m0->nfiles || mk->filenumber != k)
        return core_fail(SHEAF_E_FORMAT, "%s.%06d: says it is file %d of %d, expected file %d of %d", c->name, k,
                         mk->filenumber, mk->nfiles, k, m0->nfiles);
    if (mk->swap != m0->swap)
        return core_fail(SHEAF_E_FORMAT, "%s.%06d: byte order differs from file 0 of the set", c->name, k);
    return 0;
}

static int build_tasks(core_container *c)
{
    core_meta *m0 = &c->files[0].m;
    if (c->nfiles == 1) {
        c->ntasks = m0->ntasks;
        c->tasks = calloc((size_t)c->ntasks, sizeof *c->tasks);
        if (!c->tasks)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", c->name);
        for (int32_t t = 0; t < c->ntasks; t++) {
            int rc = init_task_from_meta(c, &c->tasks[t], 0, t);
            if (rc)
                return rc;
        }
        return 0;
    }
    int64_t total = 0;
    for (int32_t k = 0; k < c->nfiles; k++)
        total += c->files[k].m.ntasks;
    if (total != m0->mapping_size)
        return core_fail(SHEAF_E_FORMAT, "%s: mapping lists %d tasks but the %d files hold %lld", c->name,
                         m0->mapping_size, c->nfiles, (long long)total);
    c->ntasks = m0->mapping_size;
    c->tasks = calloc((size_t)c->ntasks, sizeof *c->tasks);
    c->mapping = malloc((size_t)c->ntasks * 8);
    /* seen[k] marks local tasks of file k already mapped: catches duplicates */
    unsigned char *seen = calloc((size_t)total, 1);
    int64_t *base = calloc((size_t)c->nfiles, 8);
    int rc = 0;
    if (!c->tasks || !c->mapping || !seen || !base) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", c->name);
        goto out;
    }
    for (int32_t k = 1; k < c->nfiles; k++)
        base[k] = base[k - 1] + c->files[k - 1].m.ntasks;
    memcpy(c->mapping, m0->mapping, (size_t)c->ntasks * 8);
    for (int32_t g = 0; g < c->ntasks && !rc; g++) {
        int32_t fno = m0->mapping[2 * g], lr = m0->mapping[2 * g + 1];
        if (lr >= c->files[fno].m.ntasks || seen[base[fno] + lr]) {
            rc = core_fail(SHEAF_E_FORMAT, "%s: mapping entry %d (file %d, task %d) is out of range or repeated",
                           c->name, g, fno, lr);
            break;
        }
        seen[base[fno] + lr] = 1;
        rc = init_task_from_meta(c, &c->tasks[g], fno, lr);
    }
out:
    free(seen);
    free(base);
    return rc;
}

int core_open_read(core_container **out, const char *name, const core_mode *mode)
{
    return core_open_read_named(out, name, mode, NULL, NULL);
}

int core_open_read_named(core_container **out, const char *name, const core_mode *mode, core_name_fn fn, void *ctx)
{
    *out = NULL;
    if (!name || !*name)
        return core_fail(SHEAF_E_ARG, "no file name given");
    core_container *c = core_container_new(name, mode);
    if (!c)
        return SHEAF_E_NOMEM;
    c->member_name = fn;
    c->member_ctx = ctx;
    int rc;
    c->files = calloc(1, sizeof *c->files);
    if (!c->files) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    c->nfiles = 1;
    if ((rc = open_member(c, 0)))
        goto fail;
    core_meta *m0 = &c->files[0].m;
    if (m0->nfiles > 1 && m0->filenumber == 0) {
        /* each member needs a file (and its header): bound by the mapping size */
        if (m0->nfiles > m0->mapping_size) {
            rc = core_fail(SHEAF_E_FORMAT, "%s: %d files for only %d tasks", name, m0->nfiles, m0->mapping_size);
            goto fail;
        }
        /* m0 points into c->files: invalid after a realloc. The table grows one
         * member at a time (doubling), so a header claiming a huge number of
         * files costs memory only for members that really exist. */
        int32_t nfl = m0->nfiles, cap = 1;
        for (int32_t k = 1; k < nfl; k++) {
            if (k >= cap) {
                cap = cap > nfl / 2 ? nfl : 2 * cap;
                core_pfile *nf = realloc(c->files, (size_t)cap * sizeof *nf);
                if (!nf) {
                    rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
                    goto fail;
                }
                c->files = nf;
            }
            memset(&c->files[k], 0, sizeof c->files[k]);
            c->nfiles = k + 1;
            if ((rc = open_member(c, k)) || (rc = check_member(c, k)))
                goto fail;
        }
    }
    m0 = &c->files[0].m;
    c->fsblksize = m0->fsblksize;
    c->data_big = m0->data_big;
    c->keyval = (int)(m0->format >= 5 ? (m0->flag1 >> 32) : 0);
    if (c->keyval == 0)
        c->keyval = SION_KEYVAL_NONE;
    if ((rc = build_tasks(c)))
        goto fail;
    c->cur = 0;
    if ((rc = core_place(c)))
        goto fail;
    c->member_name = NULL;
    c->member_ctx = NULL;
    *out = c;
    return 0;
fail:
    core_container_free(c);
    return rc;
}

int core_open_read_rank(core_container **out, const char *name, const core_mode *mode, int32_t rank)
{
    int rc = core_open_read(out, name, mode);
    if (rc)
        return rc;
    core_container *c = *out;
    if (rank < 0 || rank >= c->ntasks) {
        rc = core_fail(SHEAF_E_ARG, "%s: task %d does not exist (the container holds %d tasks)", name, rank, c->ntasks);
        core_container_free(c);
        *out = NULL;
        return rc;
    }
    c->only_task = rank;
    c->cur = rank;
    if ((rc = core_place(c))) { /* the caller gets no container on failure: free it */
        core_container_free(c);
        *out = NULL;
    }
    return rc;
}
