/* open_read.c - the read open of sion_generic_paropen: steps task 0 reads
 * file 0, G bcast header facts, G scatter (file, lrank, lsize), create local
 * group, master reads its file, L scatter layout, L scatterv block tables,
 * attach, G agree. */
#include "open_int.h"
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
    (void)all; (void)gsize;
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

/* Task 0, the data of step "G scatter (file, lrank, lsize)": each task's
 * place from file 0's mapping (m0; nf files), checked: each (file, lrank)
 * exactly once. Packed placements (status SHEAF_E_FORMAT for all when the
 * mapping is inconsistent); NULL when out of memory. */
static int32_t *place_step(const core_meta *m0, int nf, int gsize)
{
    int32_t *map = malloc((size_t)gsize * PAR_WIRE_PLACE_N * sizeof *map);
    int32_t *lsz = nf > 1 ? calloc((size_t)nf, sizeof *lsz) : NULL;
    int bad = !map || (nf > 1 && !lsz);
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
        bad = !base || !seen;
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
        e.status = bad ? SHEAF_E_FORMAT : 0;
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
    lay = malloc((size_t)ls * PAR_WIRE_RLAYOUT_N * sizeof *lay);
    counts = calloc((size_t)ls, sizeof *counts);
    if (!lay || !counts)
        mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", fname, fn);
    if (!mrc)
        mrc = path ? core_meta_read_path(path, &m) : SHEAF_E_NOMEM;
    if (!mrc && (m.ntasks != ls || (nf > 1 && (m.nfiles != nf || m.filenumber != fn))))
        mrc = core_fail(SHEAF_E_FORMAT, "%s: holds %d tasks as file %d of %d, the set's mapping expects %d tasks "
                        "as file %d of %d", path, m.ntasks, m.filenumber, m.nfiles, ls, fn, nf);
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
        int on = par_coll_plan(api, md, &m2, ls, m.chunksizes, NULL, (int32_t)m.fsblksize, 0, &roles, grank,
                               fname);
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

/* Step "tasks attach": this task's chunk of its file, from its layout and
 * its block table (mine_b: nb sizes, then nb checksums when with_ck). */
static int attach_step(core_container **c, const char *path, const core_mode *md, const par_wire_rlayout *my,
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

int par_open_read(const par_api *api, const char *fname, const core_mode *md, int mode_rc, sion_int64 *chunksize,
                     sion_int32 *fsblksize, void *gcomm, int grank, int gsize, int *filenumber, int *numfiles,
                     int *lrank_out, int *lsize_out, FILE **fileptr, char **newfname, int *agreed)
{
    int rc = mode_rc;
    /* G1 + G2: every task's options to task 0 (they must agree), which
     * reads file 0: nfiles, tasks, fsblksize in the verdict */
    core_meta m0;
    memset(&m0, 0, sizeof m0);
    m0.mapping_size = -1;
    read_root_ctx rctx = {api, fname, &m0};
    par_open_req req0;
    par_open_req_init(&req0, rc, 0, md, NULL, NULL, NULL, NULL, NULL);
    par_open_verdict v;
    int xcb = 0, xrc = par_open_exchange(api, fname, gcomm, grank, gsize, &req0, read_root, &rctx, &v, &xcb);
    /* the same on every task: the options agreed (a buddy read may try the copies) */
    *agreed = !v.cbfail && (v.reason == SPLIT_OK || v.reason == SPLIT_ROOT);
    if (xcb && !rc) /* go on with what it delivered (see open_write) */
        rc = core_fail(SHEAF_E_IO, "%s: sion_generic_paropen: a collective callback failed on task %d", fname, grank);
    if (xrc) {
        core_meta_free(&m0);
        return rc ? rc : xrc;
    }
    if (v.ntasks != gsize) {
        core_meta_free(&m0);
        return core_fail(SHEAF_E_ARG, "%s: the container holds %lld tasks but is opened by %d; "
                         "to read it with a different number of tasks use a mapped open "
                         "(sion_paropen_mapped_mpi / sion_generic_paropen_mapped)", fname, (long long)v.ntasks, gsize);
    }
    int64_t head[4] = {0, v.nfiles, v.ntasks, v.fsblksize};
    int nf = (int)head[1];
    /* S1: (status, file, lrank, lsize) of each task from the mapping */
    int32_t *map = NULL, gdummy[PAR_WIRE_PLACE_N], buf4[PAR_WIRE_PLACE_N];
    par_wire_place mine = {0, 0, grank, gsize};
    par_wire_place_pack(&mine, buf4);
    if (grank == 0)
        map = place_step(&m0, nf, gsize);
    core_meta_free(&m0);
    int cb = api->scatter(map ? map : gdummy, buf4, gcomm, _SION_INT32, PAR_WIRE_PLACE_N, 0);
    free(map);
    int urc = par_wire_place_unpack(&mine, buf4, PAR_WIRE_PLACE_N); /* refused: the initial values stay */
    if (cb && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: sion_generic_paropen: the scatter callback failed on task %d", fname, grank);
    if (urc && !rc)
        rc = urc;
    if (mine.status) /* same verdict on every task */
        return core_fail(SHEAF_E_FORMAT, "%s: the task mapping in the first file is inconsistent", fname);
    int fn = mine.filenumber, lr = mine.lrank, ls = mine.lsize;

    par_state *p = par_open_state_new(api, fname, gcomm, grank, gsize);
    if (p) {
        p->lrank = lr; p->lsize = ls; p->filenumber = fn; p->nfiles = nf;
        p->fsblksize = (int32_t)head[3];
        p->mode = *md;
    } else if (!rc) {
        rc = SHEAF_E_NOMEM;
    }
    void *lcomm = NULL;
    if (api->create_lcg(&lcomm, gcomm, grank, gsize, lr, ls, fn, nf)) {
        par_open_state_drop(p);
        return core_fail(SHEAF_E_IO, "%s: the create_local_commgroup callback failed on task %d", fname, grank);
    }
    if (p)
        p->lcomm = lcomm;
    char *path = par_member_path(api, fname, fn);
    if (!path && !rc)
        rc = SHEAF_E_NOMEM;

    /* master: its file's metadata -> L1 layout, L2 block tables */
    int64_t *lay = NULL, buf[PAR_WIRE_RLAYOUT_N], ldummy[PAR_WIRE_RLAYOUT_N];
    par_wire_rlayout my;
    par_wire_rlayout_init(&my);
    par_wire_rlayout_pack(&my, buf); /* what stays when the scatter delivers nothing */
    int64_t *flat = NULL;
    int *counts = NULL;
    int mrc = 0, cbfail = 0;
    if (lr == 0)
        mrc = master_read_step(api, md, fname, path, fn, nf, ls, grank, &lay, &flat, &counts);
    if (api->scatter(lay ? lay : ldummy, buf, lcomm, _SION_INT64, PAR_WIRE_RLAYOUT_N, 0))
        cbfail = 1;
    free(lay);
    int lrc = par_wire_rlayout_unpack(&my, buf, PAR_WIRE_RLAYOUT_N); /* refused: status SHEAF_E_IO stays */
    int64_t nb = !my.status ? my.nblocks : 0; /* as the master announced it, callback failure or not */
    int with_ck = !my.status && my.checksum;
    int64_t *mine_b = malloc((size_t)(nb > 0 ? (with_ck ? 2 : 1) * nb : 1) * sizeof *mine_b);
    if (!mine_b && !rc)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (lr == 0 && mrc) /* the tasks know from the status they received */
        for (int t = 0; t < ls && counts; t++)
            counts[t] = 0;
    if (api->scatterv(mine_b ? mine_b : ldummy, flat ? flat : ldummy, lcomm, _SION_INT64, counts,
                      mine_b ? (int)nb * (with_ck ? 2 : 1) : 0, 0))
        cbfail = 1;
    free(flat);
    free(counts);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback of the local group failed on task %d", fname, grank);
    if (!rc && lrc)
        rc = lrc;
    if (!rc && my.status)
        rc = mrc ? mrc : core_fail((int)my.status, "%s: the master of file %d could not read it (see its message)",
                                   fname, fn);
    if (!rc && md->keyval != SION_KEYVAL_NOTSET && md->keyval != SION_KEYVAL_UNKNOWN && md->keyval != my.keyval)
        rc = core_fail(SHEAF_E_ARG, "%s: mode asks for key-value mode %s but the file has %s", fname,
                       sion_keyval_type_to_str(md->keyval), sion_keyval_type_to_str((int)my.keyval));
    core_container *c = NULL;
    int sid = -1;
    if (!rc)
        par_coll_set(p, my.coll);
    if (!rc)
        rc = attach_step(&c, path, md, &my, nb, with_ck, mine_b, fname);
    free(mine_b);
    if (!rc) {
        c->keyval = (int)my.keyval;
        c->data_big = (int)my.data_big;
        c->fsblksize = (int32_t)head[3];
        par_label_task(c, 0, fn, lr, nf);
        rc = par_open_register(c, p, path, fileptr, newfname, &sid);
    }
    int arc = par_agree(api, gcomm, grank, gsize, rc, fname, "sion_generic_paropen");
    if (arc) {
        if (sid >= 0) {
            api_release(sid);
            if (newfname) { free(*newfname); *newfname = NULL; }
        }
        if (c) {
            c->par = NULL;
            core_close(c);
        }
        par_open_state_drop(p);
        free(path);
        return arc;
    }
    free(path);
    if (chunksize) *chunksize = my.chunksize;
    if (fsblksize) *fsblksize = (int32_t)head[3];
    if (filenumber) *filenumber = fn;
    if (numfiles) *numfiles = nf;
    if (lrank_out) *lrank_out = lr;
    if (lsize_out) *lsize_out = ls;
    return sid;
}
