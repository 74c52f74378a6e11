/* handle.c - the in-memory state of an open container (handle.h). */
#define _FILE_OFFSET_BITS 64
#include "handle.h"
#include "error.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void core_container_free(core_container *c)
{
    if (!c)
        return;
    if (c->kv && c->kv_release)
        c->kv_release(c);
    for (int32_t i = 0; i < c->nfiles && c->files; i++) {
        if (c->files[i].jfd1)
            close(c->files[i].jfd1 - 1);
        if (c->files[i].f.name)
            core_file_close(&c->files[i].f);
        core_meta_free(&c->files[i].m);
    }
    for (int32_t t = 0; t < c->ntasks && c->tasks; t++) {
        free(c->tasks[t].bsize);
        free(c->tasks[t].bcrc);
        free(c->tasks[t].bcrclen);
    }
    free(c->files);
    free(c->tasks);
    free(c->mapping);
    free(c->name);
    free(c->x_chunks);
    free(c->x_granks);
    free(c->x_bcount);
    free(c->x_bsizes);
    free(c->x_curpos);
    free(c->x_curblk);
    free(c);
}

core_container *core_container_new(const char *name, const core_mode *mode)
{
    core_container *c = calloc(1, sizeof *c);
    if (!c || !(c->name = strdup(name))) {
        free(c);
        core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
        return NULL;
    }
    c->mode = *mode;
    c->only_task = -1;
    return c;
}

int core_task_grow(core_task *t, int64_t n, const char *name)
{
    if (n <= t->cap)
        return 0;
    /* start small (a reader sizes each table exactly): MAXCHUNKS (100) entries
     * per task made opening 1M tasks cost 800 MB of block tables */
    int64_t ncap = t->cap ? t->cap : (n < 4 ? 4 : n);
    while (ncap < n)
        ncap *= 2;
    int64_t *nb = realloc(t->bsize, (size_t)ncap * sizeof *nb);
    if (!nb)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory growing the block table", name);
    memset(nb + t->cap, 0, (size_t)(ncap - t->cap) * sizeof *nb);
    t->bsize = nb;
    if (t->crc_on) {
        uint32_t *nc = realloc(t->bcrc, (size_t)ncap * sizeof *nc);
        if (nc)
            t->bcrc = nc;
        int64_t *nl = nc ? realloc(t->bcrclen, (size_t)ncap * sizeof *nl) : NULL;
        if (!nc || !nl)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory growing the block table", name);
        t->bcrclen = nl;
        memset(nc + t->cap, 0, (size_t)(ncap - t->cap) * sizeof *nc);
        memset(nl + t->cap, 0, (size_t)(ncap - t->cap) * sizeof *nl);
    }
    t->cap = ncap;
    return 0;
}
