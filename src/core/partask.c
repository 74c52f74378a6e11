/* partask.c - serial building blocks of the parallel layer: a file's master
 * creates the file and later writes its metadata tail; each task attaches to
 * its chunk of the existing file. See partask.h. */
#define _FILE_OFFSET_BITS 64
#include "partask.h"
#include "journal.h"
#include "endian.h"
#include "error.h"
#include "sion_const.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

int core_par_create_file(const char *name, const core_mode *mode, int32_t ntasks, const int64_t *chunksizes,
                         const int64_t *globalranks, int32_t fsblksize, int32_t filenumber, int32_t nfiles,
                         core_meta *out_meta)
{
    return core_par_create_file_at(NULL, name, mode, ntasks, chunksizes, globalranks, fsblksize, filenumber, nfiles,
                                   out_meta);
}

int core_par_create_file_at(const char *path_in, const char *name, const core_mode *mode, int32_t ntasks,
                            const int64_t *chunksizes, const int64_t *globalranks, int32_t fsblksize,
                            int32_t filenumber, int32_t nfiles, core_meta *out_meta)
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
    char *path = path_in ? strdup(path_in) : core_member_name(name, filenumber);
    if (!path) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    core_file f;
    rc = core_journal_remove(path); /* a stale journal of an earlier run must not be mixed in */
    if (!rc)
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
    return core_par_write_tail_at(NULL, name, m, blockcount, blocksizes, mapping, mapping_size);
}

int core_par_write_tail_at(const char *path_in, const char *name, core_meta *m, const int64_t *blockcount,
                           const int64_t *blocksizes, const int32_t *mapping, int32_t mapping_size)
{
    return core_par_write_tail_fill(path_in, name, m, blockcount, blocksizes, mapping, mapping_size, 0);
}

int core_par_write_tail_fill(const char *path_in, const char *name, core_meta *m, const int64_t *blockcount,
                             const int64_t *blocksizes, const int32_t *mapping, int32_t mapping_size, int64_t unused)
{
    if (!name || !m || !blockcount || m->ntasks <= 0 || !m->starts)
        return core_fail(SHEAF_E_ARG, "%s: no file metadata or block counts given", name ? name : "(null)");
    int want_map = m->nfiles > 1 && m->filenumber == 0;
    if (want_map && (!mapping || mapping_size < m->ntasks))
        return core_fail(SHEAF_E_ARG, "%s: file 0 of a %d-file set needs the task mapping", name, m->nfiles);
    if (!want_map && mapping && m->nfiles > 1)
        return core_fail(SHEAF_E_ARG, "%s: only file 0 of a multi-file set holds a mapping", name);
    if (mapping && m->nfiles <= 1) /* optional for one file (SIONlib's mapped close writes it) */
        want_map = mapping_size == m->ntasks;
    if (want_map)
        for (int32_t g = 0; g < mapping_size; g++)
            if (mapping[2 * g] < 0 || mapping[2 * g] >= m->nfiles || mapping[2 * g + 1] < 0)
                return core_fail(SHEAF_E_ARG, "%s: mapping entry %d (file %d, task %d) invalid for %d files", name, g,
                                 mapping[2 * g], mapping[2 * g + 1], m->nfiles);
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
        for (int64_t b = blockcount[t]; b < m->maxchunks; b++)
            m->blocksizes[b * n + t] = unused;
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
    char *path = path_in ? strdup(path_in) : core_member_name(name, m->filenumber);
    if (!path)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
    core_file f;
    rc = core_file_open_rw(&f, path, 0, path_in == NULL); /* a parallel close: the file this open created */
    if (rc) {
        free(path);
        return rc;
    }
    rc = core_meta_write_tail(&f, m, 0);
    /* tasks flushed (a journal exists): the metadata become durable before the journal goes */
    int journaled = !rc && core_journal_exists(path);
    if (journaled)
        rc = core_file_sync(&f);
    int r2 = core_file_close(&f);
    if (!rc && !r2 && journaled)
        rc = core_journal_remove(path);
    free(path);
    return rc ? rc : r2;
}

int core_attach_task(core_container **out, const char *name, const core_mode *mode, int write, int64_t start,
                     int64_t chunksize, int64_t globalskip, int64_t globalrank, int64_t nblocks,
                     const int64_t *blocksizes)
{
    core_attach_spec sp = {name, start, chunksize, globalskip, globalrank, nblocks, blocksizes, NULL};
    *out = NULL;
    if (!name || !*name)
        return core_fail(SHEAF_E_ARG, "no file name given");
    return core_attach_tasks(out, name, mode, write, 1, &sp);
}

static int check_spec(const char *name, int write, const core_attach_spec *sp)
{
    if (!sp->path || !*sp->path)
        return core_fail(SHEAF_E_ARG, "%s: no physical file name given for task %lld", name, (long long)sp->globalrank);
    if (sp->start < 0 || sp->chunksize < 0 || sp->globalskip < sp->chunksize)
        return core_fail(SHEAF_E_ARG, "%s: invalid task layout (start %lld, chunk size %lld, global skip %lld)",
                         sp->path, (long long)sp->start, (long long)sp->chunksize, (long long)sp->globalskip);
    if (!write) {
        if (sp->nblocks < 0 || (sp->nblocks > 0 && !sp->blocksizes))
            return core_fail(SHEAF_E_ARG, "%s: invalid block table (%lld blocks)", sp->path, (long long)sp->nblocks);
        for (int64_t b = 0; b < sp->nblocks; b++)
            if (sp->blocksizes[b] < 0 || sp->blocksizes[b] > sp->chunksize)
                return core_fail(SHEAF_E_ARG, "%s: block %lld holds %lld bytes, the chunk has room for %lld", sp->path,
                                 (long long)b, (long long)sp->blocksizes[b], (long long)sp->chunksize);
    }
    return 0;
}

int core_attach_tasks(core_container **out, const char *name, const core_mode *mode, int write, int32_t n,
                      const core_attach_spec *spec)
{
    *out = NULL;
    if (!name || !*name)
        return core_fail(SHEAF_E_ARG, "no file name given");
    if (n < 1 || !spec)
        return core_fail(SHEAF_E_ARG, "%s: no task to attach", name);
    int rc;
    for (int32_t i = 0; i < n; i++)
        if ((rc = check_spec(name, write, &spec[i])))
            return rc;
    core_mode md = *mode;
    md.write = write ? 1 : 0;
    core_container *c = core_container_new(name, &md);
    if (!c)
        return SHEAF_E_NOMEM;
    rc = SHEAF_E_NOMEM;
    c->attached = 1;
    c->files = calloc((size_t)n, sizeof *c->files);
    c->tasks = calloc((size_t)n, sizeof *c->tasks);
    if (!c->files || !c->tasks) {
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    c->keyval = (md.keyval == SION_KEYVAL_NOTSET) ? SION_KEYVAL_NONE : md.keyval;
    c->data_big = md.data_big >= 0 ? md.data_big : core_host_is_big();
    for (int32_t i = 0; i < n; i++) {
        const core_attach_spec *sp = &spec[i];
        int32_t k = 0;
        while (k < c->nfiles && strcmp(c->files[k].f.name, sp->path) != 0)
            k++;
        if (k == c->nfiles) { /* first task in this physical file */
            core_pfile *pf = &c->files[k];
            pf->m.mapping_size = -1;
            pf->m.ntasks = 1;
            pf->m.nfiles = 1;
            pf->m.globalskip = sp->globalskip;
            pf->m.data_big = c->data_big;
            pf->m.meta_big = core_host_is_big();
            rc = write ? core_file_open_rw(&pf->f, sp->path, md.posix, 1) /* created by its master */
                       : core_file_open(&pf->f, sp->path, 0, md.posix);
            if (rc)
                goto fail;
            c->nfiles++;
        }
        core_task *tk = &c->tasks[i];
        c->ntasks = i + 1;
        tk->file = k;
        tk->chunksize = sp->chunksize;
        tk->globalrank = sp->globalrank;
        tk->start = sp->start;
        int64_t nb = (!write && sp->nblocks > 0) ? sp->nblocks : 1;
        tk->crc_on = write ? md.checksum : sp->crcs != NULL && sp->nblocks > 0 && !md.nochecksum;
        if ((rc = core_task_grow(tk, nb, name)))
            goto fail;
        tk->nblocks = nb;
        if (!write && sp->nblocks > 0)
            memcpy(tk->bsize, sp->blocksizes, (size_t)sp->nblocks * sizeof *sp->blocksizes);
        if (tk->crc_on && !write)
            core_cksum_take(tk, sp->crcs);
        if (tk->crc_on)
            c->cksum = 1;
    }
    c->cur = 0;
    if ((rc = core_place(c)))
        goto fail;
    *out = c;
    return 0;
fail:
    core_container_free(c);
    return rc;
}

int core_dup(core_container **out, core_container *c, int64_t only_grank)
{
    *out = NULL;
    if (c->mode.write)
        return core_fail(SHEAF_E_ARG, "%s: only a container opened for reading can be duplicated", c->name);
    int32_t n = 0;
    core_attach_spec *sp = calloc((size_t)c->ntasks, sizeof *sp);
    if (!sp)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", c->name);
    for (int32_t t = 0; t < c->ntasks; t++) {
        core_task *tk = &c->tasks[t];
        if (only_grank >= 0 && tk->globalrank != only_grank)
            continue;
        core_attach_spec *s = &sp[n++];
        s->path = c->files[tk->file].f.name;
        s->start = tk->start;
        s->chunksize = tk->chunksize;
        s->globalskip = c->files[tk->file].m.globalskip;
        s->globalrank = tk->globalrank;
        s->nblocks = tk->nblocks;
        s->blocksizes = tk->bsize;
        s->crcs = tk->crc_on ? tk->bcrc : NULL;
    }
    int rc;
    if (n == 0)
        rc = core_fail(SHEAF_E_ARG, "%s: task %lld is not held by this handle, cannot duplicate it", c->name,
                       (long long)only_grank);
    else
        rc = core_attach_tasks(out, c->name, &c->mode, 0, n, sp);
    free(sp);
    if (!rc) {
        (*out)->keyval = c->keyval;
        (*out)->data_big = c->data_big;
        (*out)->fsblksize = c->fsblksize;
    }
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
    for (int32_t k = 0; k < c->nfiles; k++) {
        int r2 = core_file_close(&c->files[k].f);
        if (!rc)
            rc = r2;
    }
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

int core_meta_read_path(const char *path, core_meta *m)
{
    memset(m, 0, sizeof *m);
    m->mapping_size = -1;
    core_mode md;
    memset(&md, 0, sizeof md);
    core_container *c = core_container_new(path, &md);
    if (!c)
        return SHEAF_E_NOMEM;
    /* a one-file container read only for its metadata (container.c's reader) */
    int rc = core_read_member_meta(c, path);
    if (!rc) {
        *m = c->files[0].m;
        memset(&c->files[0].m, 0, sizeof c->files[0].m);
    }
    core_container_free(c);
    return rc;
}

int32_t core_fsblksize_for(const char *path)
{
    struct stat st;
    int64_t d = 0;
    if (stat(path, &st) == 0 && st.st_blksize > 0) {
        d = st.st_blksize;
    } else {
        char *dir = strdup(path);
        if (dir) {
            char *sl = strrchr(dir, '/');
            if (!sl)
                strcpy(dir, ".");
            else if (sl == dir)
                dir[1] = 0;
            else
                *sl = 0;
            struct statvfs vs;
            if (stat(dir, &st) == 0 && st.st_blksize > 0)
                d = st.st_blksize;
            else if (statvfs(dir, &vs) == 0 && vs.f_bsize > 0)
                d = (int64_t)vs.f_bsize;
            free(dir);
        }
    }
    if (!core_fsblksize_detected_ok(d)) /* unknown, too large, or not a power of two */
        return SION_DEFAULT_FSBLOCKSIZE;
    return (int32_t)d;
}
