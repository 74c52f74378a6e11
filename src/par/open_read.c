/* open_read.c - the read open of sion_generic_paropen, one function per step
 * of doc/parallel.md's read table: options_step (G gather + G bcast; task 0
 * reads file 0), place_step (G scatter of (file, lrank, lsize)),
 * local_group_step, layout_step (L scatter; the master reads its file),
 * blocks_step (L scatterv of the block tables), attach_step, agree_step (G
 * agree). The per-call context (ctx.h) carries the first failure; every task
 * makes every exchange call. */
#include "open_int.h"
#include "ctx.h"
#include "../sid/sid.h"
#include "../core/endian.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- read open ----------------------------------------------------------- */
typedef struct read_root_ctx {
    const par_api *api;
    const char *fname;
    core_meta *m0;
} read_root_ctx;

/* Task 0 of a read open, once every task's options agree: read file 0. */
static void read_root(void *ctx, const int64_t *all, int gsize, par_open_verdict *v)
{
    (void)all;
    (void)gsize;
    const read_root_ctx *r = ctx;
    core_meta *m0 = r->m0;
    /* SIONlib's task 0 opens file 0 serially here, with a sid of its own:
     * use that number up, so that the sids a program sees are SIONlib's */
    api_skip_ids(1);
    char *p0 = par_member_path(r->api, r->fname, 0);
    int r0 = p0 ? core_meta_read_path(p0, m0) : SHEAF_E_NOMEM;
    if (!r0 && m0->filenumber != 0 && m0->nfiles > 1)
        r0 = core_fail(SHEAF_E_ARG, "%s: is file %d of a %d-file set; open the set by its first file", p0,
                       m0->filenumber, m0->nfiles);
    if (!r0 && m0->nfiles > 1 && m0->mapping_size < m0->nfiles)
        r0 = core_fail(SHEAF_E_FORMAT, "%s: multi-file set of %d files without a task mapping", p0, m0->nfiles);
    free(p0);
    if (r0) {
        v->reason = SPLIT_ROOT;
        v->status = r0;
        return;
    }
    v->nfiles = m0->nfiles > 1 ? m0->nfiles : 1;
    v->ntasks = m0->nfiles > 1 ? m0->mapping_size : m0->ntasks;
    v->fsblksize = m0->fsblksize;
}

/* Task 0, the data of step "place" (G scatter (file, lrank, lsize)): each task's
 * place from file 0's mapping (m0; nf files), checked: each (file, lrank)
 * exactly once. Packed placements (status SHEAF_E_FORMAT for all when the
 * mapping is inconsistent, SHEAF_E_NOMEM when out of memory for the check);
 * NULL when out of memory. */
static int32_t *place_table(const core_meta *m0, int nf, int gsize)
{
    int32_t *map = par_root_malloc((size_t)gsize * PAR_WIRE_PLACE_N * sizeof *map, "place");
    int32_t *lsz = nf > 1 ? calloc((size_t)nf, sizeof *lsz) : NULL;
    int bad = !map || (nf > 1 && !lsz), nomem = bad;
    for (int g = 0; g < gsize && !bad && nf > 1; g++) {
        int32_t f = m0->mapping[2 * g], l = m0->mapping[2 * g + 1];
        if (f < 0 || f >= nf || l < 0 || l >= gsize)
            bad = 1;
        else
            lsz[f]++;
    }
    if (!bad && nf > 1) { /* each (file, lrank) exactly once: lrank < tasks of that file, no repeats */
        int64_t *base = calloc((size_t)nf + 1, sizeof *base);
        unsigned char *seen = calloc((size_t)gsize, 1);
        bad = nomem = !base || !seen;
        for (int k = 0; k < nf && !bad; k++)
            base[k + 1] = base[k] + lsz[k];
        for (int g = 0; g < gsize && !bad; g++) {
            int32_t f = m0->mapping[2 * g], l = m0->mapping[2 * g + 1];
            if (l >= lsz[f] || seen[base[f] + l])
                bad = 1;
            else
                seen[base[f] + l] = 1;
        }
        free(base);
        free(seen);
    }
    for (int g = 0; g < gsize && map; g++) {
        par_wire_place e;
        e.status = bad ? (nomem ? SHEAF_E_NOMEM : SHEAF_E_FORMAT) : 0;
        e.filenumber = bad || nf == 1 ? 0 : m0->mapping[2 * g];
        e.lrank = bad || nf == 1 ? g : m0->mapping[2 * g + 1];
        e.lsize = bad ? 1 : nf == 1 ? gsize : lsz[e.filenumber];
        par_wire_place_pack(&e, map + PAR_WIRE_PLACE_N * g);
    }
    free(lsz);
    return map;
}

/* Master, step "master reads its file": its metadata (path; file fn of nf,
 * ls tasks) -> every task's read layout (lay), the block tables to scatter
 * (flat, counts per task). Returns the master's status (then the layouts
 * carry it and the counts are 0). */
static int master_read_step(const par_api *api, const core_mode *md, const char *fname, const char *path, int fn,
                            int nf, int ls, int grank, int64_t **lay_out, int64_t **flat_out, int **counts_out)
{
    int64_t *lay = NULL, *flat = NULL;
    int *counts = NULL, mrc = 0;
    par_coll_roles roles = {NULL, NULL, NULL};
    core_meta m;
    memset(&m, 0, sizeof m);
    m.mapping_size = -1;
    lay = par_root_malloc((size_t)ls * PAR_WIRE_RLAYOUT_N * sizeof *lay, "layout");
    counts = calloc((size_t)ls, sizeof *counts);
    if (!lay || !counts)
        mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", fname, fn);
    if (!mrc)
        mrc = path ? core_meta_read_path(path, &m) : SHEAF_E_NOMEM;
    if (!mrc && (m.ntasks != ls || (nf > 1 && (m.nfiles != nf || m.filenumber != fn))))
        mrc = core_fail(SHEAF_E_FORMAT,
                        "%s: holds %d tasks as file %d of %d, the set's mapping expects %d tasks "
                        "as file %d of %d",
                        path, m.ntasks, m.filenumber, m.nfiles, ls, fn, nf);
    int64_t total = 0;
    for (int t = 0; t < ls && !mrc; t++) {
        if (m.blockcount[t] > INT32_MAX || total > INT64_MAX / 16)
            mrc = core_fail(SHEAF_E_FORMAT, "%s: block table too large", path);
        total += m.blockcount[t];
    }
    if (!mrc && m.crcs)
        total *= 2; /* block sizes and their checksums */
    if (!mrc && total > INT32_MAX)
        mrc = core_fail(SHEAF_E_FORMAT, "%s: block table too large to distribute", path);
    if (!mrc && !(flat = malloc((size_t)(total ? total : 1) * sizeof *flat)))
        mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
    int kv = (int)(m.format >= 5 ? (m.flag1 >> 32) : 0);
    core_mode m2;
    /* older formats cannot be read collectively (SIONlib); checksummed files are read
     * individually, each task verifying its own blocks */
    if (!mrc && m.format >= 4 && !m.crcs) {
        int on = par_coll_plan(api, md, &m2, ls, m.chunksizes, NULL, (int32_t)m.fsblksize, 0, &roles, grank, fname);
        if (on < 0)
            mrc = on;
    }
    int64_t k = 0, ck = 0;
    for (int t = 0; t < ls && lay; t++) {
        par_wire_rlayout e;
        memset(&e, 0, sizeof e);
        e.status = mrc;
        if (!mrc) {
            e.start = m.starts[t];
            e.chunksize = core_meta_capacity(&m, t);
            e.globalskip = m.globalskip;
            e.grank = m.globalranks[t];
            e.nblocks = m.blockcount[t];
            e.keyval = kv ? kv : SION_KEYVAL_NONE;
            e.data_big = m.data_big;
            par_coll_fill(e.coll, t, &roles, m.starts, md->cmerge);
            e.checksum = m.crcs != NULL;
        }
        par_wire_rlayout_pack(&e, lay + PAR_WIRE_RLAYOUT_N * t);
        if (mrc)
            continue;
        counts[t] = (int)m.blockcount[t] * (m.crcs ? 2 : 1);
        for (int64_t b = 0; b < m.blockcount[t]; b++)
            flat[k++] = m.blocksizes[b * m.ntasks + t];
        for (int64_t b = 0; m.crcs && b < m.blockcount[t]; b++)
            flat[k++] = m.crcs[ck + b];
        ck += m.blockcount[t];
    }
    par_coll_roles_free(&roles);
    core_meta_free(&m);
    *lay_out = lay;
    *flat_out = flat;
    *counts_out = counts;
    return mrc;
}

/* Step "attach": this task's chunk of its file, from its layout and
 * its block table (mine_b: nb sizes, then nb checksums when with_ck). */
static int attach_task(core_container **c, const char *path, const core_mode *md, const par_wire_rlayout *my,
                       int64_t nb, int with_ck, const int64_t *mine_b, const char *fname)
{
    int rc = 0;
    uint32_t *crcs = NULL;
    if (with_ck && nb > 0) {
        if (!(crcs = malloc((size_t)nb * sizeof *crcs)))
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        for (int64_t b = 0; b < nb; b++)
            crcs[b] = (uint32_t)mine_b[nb + b];
    }
    core_attach_spec sp = {path, my->start, my->chunksize, my->globalskip, my->grank, nb, mine_b, crcs};
    rc = core_attach_tasks(c, path, md, 0, 1, &sp);
    free(crcs);
    return rc;
}

/* One task's read open: the context and what the steps hand on. */
typedef struct ropen {
    par_open_task o; /* first: what every open holds */
    par_wire_rlayout my;
    int64_t nb, *mine_b; /* this task's block table (sizes, then checksums when my.checksum) */
    int with_ck;
    core_container *c;
    int sid;
} ropen;

/* Step "options" (G gather + G bcast): every task's options to task 0 (they
 * must agree), which reads file 0 (m0): nfiles, tasks, fsblksize in the
 * verdict. Returns non-zero when the open fails (the same on every task). */
static int options_step(ropen *w, par_open_verdict *v, core_meta *m0, int *agreed)
{
    const par_open_args *a = w->o.a;
    par_ctx_step(&w->o.x, "options");
    read_root_ctx rctx = {a->api, a->fname, m0};
    par_open_req req;
    par_open_req_init(&req, w->o.x.rc, 0, a->md, NULL, NULL, NULL, NULL, NULL);
    int xcb = 0,
        xrc = par_open_exchange(a->api, a->fname, a->gcomm, a->grank, a->gsize, &req, read_root, &rctx, v, &xcb);
    /* the same on every task: the options agreed (a buddy read may try the copies) */
    *agreed = !v->cbfail && (v->reason == SPLIT_OK || v->reason == SPLIT_ROOT);
    if (xcb) /* go on with what it delivered (see open_write) */
        par_ctx_fail(&w->o.x, SHEAF_E_IO, "%s: sion_generic_paropen: a collective callback failed on task %d", a->fname,
                     a->grank);
    if (xrc && w->o.x.rc) /* its own first message, the agreed code */
        return w->o.x.rc = xrc;
    if (xrc)
        return par_ctx_take(&w->o.x, xrc);
    if (v->ntasks != a->gsize) { /* from the verdict: the same on every task */
        int rc = core_fail(SHEAF_E_ARG,
                           "%s: the container holds %lld tasks but is opened by %d; to read it with a "
                           "different number of tasks use a mapped open (sion_paropen_mapped_mpi / "
                           "sion_generic_paropen_mapped)",
                           a->fname, (long long)v->ntasks, a->gsize);
        w->o.x.rc = 0;
        return par_ctx_take(&w->o.x, rc);
    }
    w->o.nf = (int)v->nfiles;
    w->o.fsb = (int32_t)v->fsblksize;
    return 0;
}

/* Step "place" (G scatter, multi-file sets only): (status, file, lrank,
 * lsize) of each task from file 0's mapping; a single file (the verdict says
 * so on every task) places task g at local rank g without an exchange.
 * Returns non-zero when the mapping is inconsistent (the same on every task). */
static int place_step(ropen *w, const core_meta *m0)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "place");
    if (w->o.nf == 1) {
        w->o.fn = 0;
        x->lrank = x->grank;
        x->lsize = x->gsize;
        return 0;
    }
    int32_t *map = NULL, buf[PAR_WIRE_PLACE_N];
    par_wire_place mine = {0, 0, x->grank, x->gsize};
    par_wire_place_pack(&mine, buf);
    if (x->grank == 0)
        map = place_table(m0, w->o.nf, x->gsize);
    par_ctx_scatter(x, 0, map, buf, _SION_INT32, PAR_WIRE_PLACE_N, 0);
    free(map);
    par_ctx_take(x, par_wire_place_unpack(&mine, buf, PAR_WIRE_PLACE_N)); /* refused: the initial values stay */
    if (mine.status == SHEAF_E_FORMAT) {                                  /* the same verdict on every task */
        x->rc = 0;
        return par_ctx_fail(x, SHEAF_E_FORMAT, "%s: the task mapping in the first file is inconsistent", x->fname);
    }
    if (mine.status && x->grank == 0) /* out of memory: task 0's own failure */
        return par_ctx_fail(x, (int)mine.status, "%s: out of memory placing the tasks on task 0", x->fname);
    if (mine.status)
        return par_ctx_verdict(x, (int)mine.status, "%s: %s: task 0 could not place the tasks (see its message)",
                               x->fname, x->call);
    w->o.fn = mine.filenumber;
    x->lrank = mine.lrank;
    x->lsize = mine.lsize;
    return 0;
}

/* Step "local group": the task's state and the local group of its file.
 * Returns the agreed code when the open ends here (on every task). */
static int local_group_step(ropen *w) { return par_open_local_group(&w->o); }

/* Step "layout" (L scatter): the master reads its file ("master reads its
 * file") and sends each task its entry; the block tables (flat, counts) wait
 * on the master for the next step. */
static void layout_step(ropen *w, int64_t **flat, int **counts)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "layout");
    int64_t *lay = NULL, buf[PAR_WIRE_RLAYOUT_N];
    par_wire_rlayout_init(&w->my);
    par_wire_rlayout_pack(&w->my, buf); /* what stays when the scatter delivers nothing */
    if (x->lrank == 0) {
        par_ctx_step(x, "read");
        int mrc = master_read_step(x->api, w->o.a->md, x->fname, w->o.path, w->o.fn, w->o.nf, x->lsize, x->grank, &lay,
                                   flat, counts);
        par_ctx_take(x, mrc);
        for (int t = 0; mrc && t < x->lsize && *counts; t++) /* the tasks know from the status they receive */
            (*counts)[t] = 0;
    }
    par_ctx_scatter(x, 1, lay, buf, _SION_INT64, PAR_WIRE_RLAYOUT_N, 0);
    free(lay);
    par_ctx_take(x, par_wire_rlayout_unpack(&w->my, buf, PAR_WIRE_RLAYOUT_N)); /* refused: status SHEAF_E_IO stays */
    if (w->my.status)
        par_ctx_fail(x, (int)w->my.status, "%s: the master of file %d could not read it (see its message)", x->fname,
                     w->o.fn);
}

/* Step "blocks" (L scatterv): each task's block table, as the master
 * announced it in the layout (callback failure or not). */
static void blocks_step(ropen *w, int64_t *flat, int *counts)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "blocks");
    w->nb = !w->my.status ? w->my.nblocks : 0;
    w->with_ck = !w->my.status && w->my.checksum;
    int64_t dummy[1], n = w->nb * (w->with_ck ? 2 : 1);
    if (!(w->mine_b = malloc((size_t)(n > 0 ? n : 1) * sizeof *w->mine_b)))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    par_ctx_scatterv(x, 1, w->mine_b ? w->mine_b : dummy, flat ? flat : dummy, _SION_INT64, counts,
                     w->mine_b ? (int)n : 0, 0);
    free(flat);
    free(counts);
}

/* Step "attach" (local): the key-value mode asked for, the task's chunk, its sid. */
static void attach_step(ropen *w)
{
    par_ctx *x = &w->o.x;
    par_ctx_step(x, "attach");
    const core_mode *md = w->o.a->md;
    if (par_ctx_ok(x) && md->keyval != SION_KEYVAL_NOTSET && md->keyval != SION_KEYVAL_UNKNOWN &&
        md->keyval != w->my.keyval)
        par_ctx_fail(x, SHEAF_E_ARG, "%s: mode asks for key-value mode %s but the file has %s", x->fname,
                     sion_keyval_type_to_str(md->keyval), sion_keyval_type_to_str((int)w->my.keyval));
    if (par_ctx_ok(x)) {
        par_coll_set(w->o.p, w->my.coll);
        par_ctx_take(x, attach_task(&w->c, w->o.path, md, &w->my, w->nb, w->with_ck, w->mine_b, x->fname));
    }
    free(w->mine_b);
    w->mine_b = NULL;
    if (par_ctx_ok(x)) {
        w->c->keyval = (int)w->my.keyval;
        w->c->data_big = (int)w->my.data_big;
        w->c->fsblksize = w->o.fsb;
        par_label_task(w->c, 0, w->o.fn, x->lrank, w->o.nf);
        par_ctx_take(x, par_open_register(w->c, w->o.p, w->o.path, w->o.a->fileptr, w->o.a->newfname, &w->sid));
    }
}

/* Step "agree" (G gather + G bcast): the sid and the caller's outputs on
 * every task, or the agreed failure (everything this open made released). */
static int agree_step(ropen *w)
{
    par_ctx *x = &w->o.x;
    const par_open_args *a = w->o.a;
    par_ctx_step(x, "agree");
    if (par_ctx_agree(x)) {
        par_open_undo(w->sid, w->c, 0, w->sid >= 0 ? a->newfname : NULL);
        return par_open_task_undo(&w->o); /* state, local group, path */
    }
    free(w->o.path);
    if (a->chunksize)
        *a->chunksize = w->my.chunksize;
    if (a->fsblksize)
        *a->fsblksize = w->o.fsb;
    if (a->filenumber)
        *a->filenumber = w->o.fn;
    if (a->numfiles)
        *a->numfiles = w->o.nf;
    if (a->lrank)
        *a->lrank = x->lrank;
    if (a->lsize)
        *a->lsize = x->lsize;
    return w->sid;
}

int par_open_read(const par_open_args *a, int *agreed)
{
    ropen w;
    memset(&w, 0, sizeof w);
    w.o.a = a;
    w.sid = -1;
    par_ctx_init(&w.o.x, a->api, a->fname, "sion_generic_paropen", a->gcomm, a->grank, a->gsize);
    par_ctx_take(&w.o.x, a->mode_rc);
    core_meta m0;
    memset(&m0, 0, sizeof m0);
    m0.mapping_size = -1;
    par_open_verdict v;
    int rc = options_step(&w, &v, &m0, agreed);
    if (!rc)
        rc = place_step(&w, &m0);
    core_meta_free(&m0);
    if (rc)
        return par_ctx_restore(&w.o.x);
    if ((rc = local_group_step(&w)) != 0)
        return rc;
    int64_t *flat = NULL;
    int *counts = NULL;
    layout_step(&w, &flat, &counts);
    blocks_step(&w, flat, counts);
    attach_step(&w);
    return agree_step(&w);
}
