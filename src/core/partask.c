/* partask.c - serial building blocks of the parallel layer: a file's master
 * creates the file and later writes its metadata tail; each task attaches to
 * its chunk of the existing file. See partask.h. */
#define _FILE_OFFSET_BITS 64
#include "partask.h"
#include "endian.h"
#include "error.h"
#include "sion_const.h"
#include <stdlib.h>
#include <string.h>

int core_par_create_file(const char *name, const core_mode *mode, int32_t ntasks, const int64_t *chunksizes,
                         const int64_t *globalranks, int32_t fsblksize, int32_t filenumber, int32_t nfiles,
                         core_meta *out_meta)
{
    memset(out_meta, 0, sizeof *out_meta);
    out_meta->mapping_size = -1;
    int rc = core_create_check(name, ntasks, chunksizes, fsblksize);
    if (rc)
        return rc;
    if (fsblksize <= 0)
        return core_fail(SHEAF_E_ARG, "%s: file system block size %d not decided", name, fsblksize);
    if (nfiles < 1 || filenumber < 0 || filenumber >= nfiles)
        return core_fail(SHEAF_E_ARG, "%s: file %d of %d files does not exist", name, filenumber, nfiles);
    if ((rc = core_meta_init_write(out_meta, name, mode, ntasks, chunksizes, globalranks, fsblksize)))
        goto fail;
    out_meta->nfiles = nfiles;
    out_meta->filenumber = filenumber; /* SIONlib's parallel writer: 0 for a single file */
    char *path = core_member_name(name, filenumber);
    if (!path) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    core_file f;
    rc = core_file_open(&f, path, 1, mode->posix);
    free(path);
    if (rc)
        goto fail;
    rc = core_meta_write_header(&f, out_meta);
    int r2 = core_file_close(&f);
    if (!rc)
        rc = r2;
    if (!rc)
        return 0;
fail:
    core_meta_free(out_meta);
    return rc;
}

int core_par_write_tail(const char *name, core_meta *m, const int64_t *blockcount, const int64_t *blocksizes,
                        const int32_t *mapping, int32_t mapping_size)
{
    if (!name || !m || !blockcount || m->ntasks <= 0 || !m->starts)
        return core_fail(SHEAF_E_ARG, "%s: no file metadata or block counts given", name ? name : "(null)");
    int want_map = m->nfiles > 1 && m->filenumber == 0;
    if (want_map && (!mapping || mapping_size < m->ntasks))
        return core_fail(SHEAF_E_ARG, "%s: file 0 of a %d-file set needs the task mapping", name, m->nfiles);
    if (!want_map && mapping)
        return core_fail(SHEAF_E_ARG, "%s: only file 0 of a multi-file set holds a mapping", name);
    if (want_map)
        for (int32_t g = 0; g < mapping_size; g++)
            if (mapping[2 * g] < 0 || mapping[2 * g] >= m->nfiles || mapping[2 * g + 1] < 0)
                return core_fail(SHEAF_E_ARG, "%s: mapping entry %d (file %d, task %d) invalid for %d files",
                                 name, g, mapping[2 * g], mapping[2 * g + 1], m->nfiles);
    int rc = core_meta_alloc_blocks(m, blockcount, name);
    if (rc)
        return rc;
    int64_t n = m->ntasks, k = 0;
    for (int64_t t = 0; t < n; t++) {
        int64_t cap = core_meta_capacity(m, (int32_t)t);
        for (int64_t b = 0; b < blockcount[t]; b++, k++) {
            if (!blocksizes || blocksizes[k] < 0 || blocksizes[k] > cap)
                return core_fail(SHEAF_E_ARG, "%s: task %lld block %lld holds %lld bytes, its chunk has room for %lld",
                                 name, (long long)t, (long long)b, blocksizes ? (long long)blocksizes[k] : -1LL,
                                 (long long)cap);
            m->blocksizes[b * n + t] = blocksizes[k];
        }
    }
    free(m->mapping);
    m->mapping = NULL;
    m->mapping_size = -1;
    if (want_map) {
        m->mapping = malloc((size_t)mapping_size * 8);
        if (!m->mapping)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory for the mapping", name);
        memcpy(m->mapping, mapping, (size_t)mapping_size * 8);
        m->mapping_size = mapping_size;
    }
    char *path = core_member_name(name, m->filenumber);
    if (!path)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
    core_file f;
    rc = core_file_open_rw(&f, path, 0);
    free(path);
    if (rc)
        return rc;
    rc = core_meta_write_tail(&f, m, 0);
    int r2 = core_file_close(&f);
    return rc ? rc : r2;
}

int core_attach_task(core_container **out, const char *name, const core_mode *mode, int write, int64_t start,
                     int64_t chunksize, int64_t globalskip, int64_t globalrank, int64_t nblocks,
                     const int64_t *blocksizes)
{
    *out = NULL;
    if (!name || !*name)
        return core_fail(SHEAF_E_ARG, "no file name given");
    if (start < 0 || chunksize < 0 || globalskip < chunksize)
        return core_fail(SHEAF_E_ARG, "%s: invalid task layout (start %lld, chunk size %lld, global skip %lld)", name,
                         (long long)start, (long long)chunksize, (long long)globalskip);
    if (!write) {
        if (nblocks < 0 || (nblocks > 0 && !blocksizes))
            return core_fail(SHEAF_E_ARG, "%s: invalid block table (%lld blocks)", name, (long long)nblocks);
        for (int64_t b = 0; b < nblocks; b++)
            if (blocksizes[b] < 0 || blocksizes[b] > chunksize)
                return core_fail(SHEAF_E_ARG, "%s: block %lld holds %lld bytes, the chunk has room for %lld", name,
                                 (long long)b, (long long)blocksizes[b], (long long)chunksize);
    }
    core_mode md = *mode;
    md.write = write ? 1 : 0;
    core_container *c = core_container_new(name, &md);
    if (!c)
        return SHEAF_E_NOMEM;
    int rc = SHEAF_E_NOMEM;
    c->attached = 1;
    c->files = calloc(1, sizeof *c->files);
    c->tasks = calloc(1, sizeof *c->tasks);
    if (!c->files || !c->tasks) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    c->nfiles = 1;
    core_pfile *pf = &c->files[0];
    pf->m.mapping_size = -1;
    pf->m.ntasks = 1;
    pf->m.nfiles = 1;
    pf->m.globalskip = globalskip;
    rc = write ? core_file_open_rw(&pf->f, name, md.posix) : core_file_open(&pf->f, name, 0, md.posix);
    if (rc)
        goto fail;
    c->ntasks = 1;
    c->keyval = (md.keyval == SION_KEYVAL_NOTSET) ? SION_KEYVAL_NONE : md.keyval;
    c->data_big = md.data_big >= 0 ? md.data_big : core_host_is_big();
    pf->m.data_big = c->data_big;
    pf->m.meta_big = core_host_is_big();
    core_task *tk = &c->tasks[0];
    tk->chunksize = chunksize;
    tk->globalrank = globalrank;
    tk->start = start;
    int64_t nb = (!write && nblocks > 0) ? nblocks : 1;
    if ((rc = core_task_grow(tk, nb, name)))
        goto fail;
    tk->nblocks = nb;
    if (!write && nblocks > 0)
        memcpy(tk->bsize, blocksizes, (size_t)nblocks * sizeof *blocksizes);
    if ((rc = core_place(c)))
        goto fail;
    *out = c;
    return 0;
fail:
    core_container_free(c);
    return rc;
}

int core_detach_task(core_container *c, int64_t *nblocks, int64_t **blocksizes)
{
    if (nblocks)
        *nblocks = 0;
    if (blocksizes)
        *blocksizes = NULL;
    if (!c)
        return core_fail(SHEAF_E_ARG, "detach of a task that is not attached");
    if (!c->attached) {
        int rc = core_fail(SHEAF_E_ARG, "%s: detach of a container that was not attached to a task", c->name);
        return rc; /* not ours to free: the caller closes it with core_close */
    }
    int rc = c->mode.write ? core_sync(c) : 0;
    core_task *tk = &c->tasks[0];
    int64_t *copy = NULL;
    if (!rc && blocksizes) {
        copy = malloc((size_t)tk->nblocks * sizeof *copy);
        if (!copy)
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", c->name);
        else
            memcpy(copy, tk->bsize, (size_t)tk->nblocks * sizeof *copy);
    }
    int64_t nb = tk->nblocks;
    int r2 = core_file_close(&c->files[0].f);
    if (!rc)
        rc = r2;
    core_container_free(c);
    if (rc) {
        free(copy);
        return rc;
    }
    if (nblocks)
        *nblocks = nb;
    if (blocksizes)
        *blocksizes = copy;
    return 0;
}
