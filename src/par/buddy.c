/* buddy.c - buddy checkpointing (mode key "buddy" or "buddy=N", N <= 9),
 * with SIONlib 1.7.6's files: the copies of level L (1..N) form the set
 * "<name>_BUDDY_<L-1, 2 digits>" (.%06d suffixes for its members), and the
 * copy of physical file f is written by the tasks of another file, its
 * partner p = f - L (mod numFiles): member f of the copy set holds first one
 * entry per task of p (its collectors: chunk size 0, global rank -(g+1), one
 * empty block), then the tasks of f (the senders: their chunk sizes and global
 * ranks). Local task 0 of p creates and writes it; the senders' data travel
 * through the API's gather_and_execute callback, in sion_coll_fwrite, as in
 * SIONlib. So a copy of a file lives where its partner's tasks write (another
 * node's storage, when files follow nodes), and losing one file's storage
 * loses no data. Member 0 of the copy set carries the mapping of global
 * tasks to (member, entry). With one file (or L a multiple of numFiles) the
 * file's own tasks are partners of themselves, as in SIONlib's layout.
 *
 * Each copy member is one local group of p's and f's tasks. A task is in two
 * such groups per level (collector of f + L, sender of f); the groups are
 * created in 1 to 3 passes so that every task joins one group per pass (the
 * files of a cycle f, f+L, ... alternate; an odd cycle needs a third pass).
 *
 * Reading: a "br,buddy" open that cannot open the container opens copy level
 * 1, 2, ... (all tasks the same one, agreed): each task finds its entry
 * through member 0's mapping and reads it itself (open.c calls
 * par_buddy_open_read). */
#include "par.h"
#include "ctx.h"
#include "wire.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/io.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct par_buddy {
    int level, nf, npass, self;
    int send_pass, coll_pass; /* pass of my sender group / collector group */
    int coll_file;            /* the copy member I collect (my file + L) */
    void *send_g, *coll_g;    /* the same object when self */
    int send_first;           /* comm rank of the first sender in my sender group */
    int send_entry;           /* my entry in copy member (my file) */
    int coll_rank, coll_n;    /* my rank in the collector group, its number of members */
    int coll_first;           /* first sender rank there (self: 0) */
    /* my stream in the copy (entry send_entry of member my file) */
    int64_t start, chunk, gskip, used, nblk, cap;
    int64_t *bsize;
    /* local task 0 of the collector group: the copy member file */
    int master;
    char *send_path, *path; /* my copy member (the one I send into) and the one I collect */
    core_file f;
    int fopen;
    core_meta meta;
    int prc; /* first failure inside the process callback */
};

char *par_buddy_name(const char *fname, int level)
{
    size_t n = strlen(fname) + 16;
    char *b = malloc(n);
    if (b)
        snprintf(b, n, "%s_BUDDY_%02d", fname, level - 1); /* copy 1 is _BUDDY_00, as in SIONlib */
    return b;
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* Pass (0..2) in which copy member f is exchanged: the members of a cycle
 * f0, f0+L, ... (mod nf) alternate, an odd cycle ends with pass 2. */
static int member_pass(int f, int lm, int nf, int *npass)
{
    if (lm == 0) {
        *npass = 1;
        return 0;
    }
    int d = gcd(lm, nf), len = nf / d, k = 0;
    for (int x = f % d; x != f; x = (x + lm) % nf)
        k++;
    *npass = len % 2 ? 3 : 2;
    return (len % 2 && k == len - 1) ? 2 : k % 2;
}

static void level_free(const par_api *api, par_buddy *b)
{
    if (!b)
        return;
    if (b->coll_g && b->coll_g != b->send_g)
        api->free_lcg(b->coll_g);
    if (b->send_g)
        api->free_lcg(b->send_g);
    if (b->fopen)
        core_file_close(&b->f);
    core_meta_free(&b->meta);
    free(b->path);
    free(b->send_path);
    free(b->bsize);
    free(b);
}

void par_buddy_free(par_state *p)
{
    if (!p)
        return;
    for (int b = 0; b < PAR_BUDDY_MAX; b++) {
        level_free(&p->api, p->blev[b]);
        p->blev[b] = NULL;
    }
    p->nbuddy = 0;
    free(p->buddy_m0);
    p->buddy_m0 = NULL;
}

/* ---- open: steps buffers, info, groups, requests / create / layout, agree ---- */

/* One task's open of the copies: the context and what the steps hand on. */
typedef struct bopen {
    par_ctx x;
    par_state *p;
    int levels;
    int64_t chunk;         /* the chunk size requested at open */
    int64_t *info;         /* [2 + nf + levels]: par_wire_verdict, tasks per file, writer of member 0 per level */
    const int64_t *lsizes; /* info + 2: tasks per file */
} bopen;

/* Step "buffers" (G vote): the levels' state and the info buffer on every
 * task before the exchanges sized by them. Returns non-zero when the open
 * fails (on every task). */
static int buffers_step(bopen *w)
{
    par_ctx *x = &w->x;
    par_state *p = w->p;
    par_ctx_step(x, "buffers");
    w->info = calloc((size_t)(2 + p->nfiles + w->levels), sizeof *w->info);
    int ok = w->info && (p->buddy_m0 = malloc((size_t)w->levels * sizeof *p->buddy_m0));
    for (int l = 1; l <= w->levels && ok; l++) {
        if (!(p->blev[l - 1] = calloc(1, sizeof(par_buddy))))
            ok = 0;
        else
            p->blev[p->nbuddy++]->level = l;
    }
    if (!ok)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory for the buddy copies", x->fname);
    return par_ctx_vote(x) != 0; /* 0 with a failure: its own vote callback, it goes on (ctx.h) */
}

/* Task 0 of step "info": from every task's place (all: gsize packed
 * par_wire_place), the tasks per file and the writer of each level's
 * member 0 (local task 0 of file -L mod nf), behind the verdict. */
static void info_root(bopen *w, const int32_t *all, int cbf)
{
    par_ctx *x = &w->x;
    int nf = w->p->nfiles;
    int64_t *info = w->info, *sizes = info + 2, *m0 = info + 2 + nf;
    par_wire_verdict v = {x->rc, x->rc ? 0 : -1};
    for (int k = 0; k < nf + w->levels; k++)
        sizes[k] = -1;
    for (int t = 0; all && !v.status && t < x->gsize; t++) {
        par_wire_place e;
        int rc = par_wire_place_unpack(&e, all + (size_t)PAR_WIRE_PLACE_N * t, PAR_WIRE_PLACE_N);
        if (!rc && !e.status && e.filenumber >= nf)
            rc = core_fail(SHEAF_E_FORMAT, "%s: task %d names file %d of %d", x->fname, t, e.filenumber, nf);
        if (rc || e.status) { /* a message task 0 refuses fails task 0, with its reason */
            v = rc ? (par_wire_verdict){par_ctx_take(x, rc), 0} : (par_wire_verdict){e.status, t};
            break;
        }
        sizes[e.filenumber] = e.lsize;
        for (int l = 1; l <= w->levels; l++)
            if (e.filenumber == ((0 - l) % nf + nf) % nf && e.lrank == 0)
                m0[l - 1] = t;
    }
    if (!v.status && (!all || cbf)) {
        v.status = SHEAF_E_IO;
        v.who = 0;
    }
    par_wire_verdict_pack(&v, info);
}

/* Step "info" (G gather of par_wire_place + G bcast, carrying the verdict):
 * every task's file and local rank to task 0; back to all the tasks per file
 * and the writer of member 0 of each level's copy. Returns non-zero when the
 * open fails (on every task). */
static int info_step(bopen *w)
{
    par_ctx *x = &w->x;
    par_state *p = w->p;
    par_ctx_step(x, "info");
    int nf = p->nfiles, n = 2 + nf + w->levels;
    par_wire_place me = {x->rc, p->filenumber, p->lrank, p->lsize};
    int32_t buf[PAR_WIRE_PLACE_N], *all = NULL;
    par_wire_place_pack(&me, buf);
    if (x->grank == 0 && !(all = par_root_malloc((size_t)x->gsize * sizeof buf, "info")))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    int cbf = par_ctx_gather(x, 0, buf, all, _SION_INT32, PAR_WIRE_PLACE_N, 0);
    if (x->grank == 0)
        info_root(w, all, cbf);
    free(all);
    par_ctx_bcast(x, 0, w->info, _SION_INT64, n, 0);
    par_wire_verdict v = {SHEAF_E_IO, -1};
    int rc = par_wire_verdict_unpack(&v, w->info, PAR_WIRE_VERDICT_N);
    if (!rc && !v.status)
        rc = par_wire_array_unpack("buddy info", "tasks of a file", 1, x->gsize, w->info + 2, w->info + 2, nf);
    if (!rc && !v.status)
        rc = par_wire_array_unpack("buddy info", "writer of member 0", 0, x->gsize - 1, w->info + 2 + nf,
                                   w->info + 2 + nf, w->levels);
    if (rc && !v.status) { /* the same bytes everywhere: every task refuses them alike */
        v.status = rc;
        v.who = -1;
        par_ctx_take(x, rc);
    }
    if (v.status) {
        if (v.who >= 0)
            par_ctx_verdict(x, (int)v.status, "%s: %s failed on task %lld (see its message)", x->fname, x->call,
                            (long long)v.who);
        return par_ctx_take(x, (int)v.status);
    }
    w->lsizes = w->info + 2;
    for (int l = 0; l < w->levels; l++)
        p->buddy_m0[l] = (int)w->info[2 + nf + l];
    return 0;
}

/* Step "create" (the writer of a copy member): create it from the members'
 * requests (n of them; self: the sender entries follow the collector
 * entries) and pack every member's layout into lay (status: the failure
 * that stopped it). */
static void master_create(bopen *w, par_buddy *b, const int64_t *reqs, int n, int64_t *lay)
{
    par_ctx *x = &w->x;
    par_state *p = w->p;
    int ne = b->self ? 2 * n : n, rc = par_ctx_step(x, "create") ? 0 : x->rc;
    int64_t *cs = malloc((size_t)ne * sizeof *cs), *gr = malloc((size_t)ne * sizeof *gr);
    if (!rc && (!cs || !gr || !b->path))
        rc = par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory for buddy copy %d", x->fname, b->level);
    for (int t = 0; !rc && t < n; t++) {
        par_wire_bwreq q;
        rc = par_ctx_take(x, par_wire_bwreq_unpack(&q, reqs + (size_t)PAR_WIRE_BWREQ_N * t, PAR_WIRE_BWREQ_N));
        if (!rc && q.status) /* that task failed: it says why, the agreement tells all */
            rc = (int)q.status;
        int collector = b->self || t < b->coll_first, e = b->self ? n + t : t;
        if (!rc && collector) { /* SIONlib's collector entry */
            cs[t] = 0;
            gr[t] = -(q.grank + 1);
        }
        if (!rc && (!collector || b->self)) {
            cs[e] = q.chunksize;
            gr[e] = q.grank;
        }
    }
    core_mode m = p->mode; /* the container's, without what copies do not have */
    m.buddy = m.checksum = m.collective = m.cmerge = m.packed = 0;
    m.collsize = -1;
    if (!rc) { /* the set's name in the prefix field, as SIONlib stores it */
        rc = core_par_create_file_at(b->path, x->fname, &m, ne, cs, gr, p->fsblksize, b->coll_file, b->nf, &b->meta);
        if (!rc && !(rc = core_file_open_rw(&b->f, b->path, p->mode.posix, 1)))
            b->fopen = 1;
        rc = par_ctx_take(x, rc);
    }
    for (int t = 0; t < n; t++) {
        int e = b->self ? n + t : t;
        par_wire_bwlayout o = {rc, 0, 0, 0};
        if (!rc)
            o = (par_wire_bwlayout){0, b->meta.starts[e], b->meta.chunksizes[e], b->meta.globalskip};
        par_wire_bwlayout_pack(&o, lay + (size_t)PAR_WIRE_BWLAYOUT_N * t);
    }
    free(cs);
    free(gr);
}

/* Step "requests" (group gather of par_wire_bwreq) of one group of a level
 * (x->lcomm, this task x->lrank of x->lsize there, a sender or a
 * collector): what the member file's writer needs; the writer creates it
 * (step "create", master_create). Returns the writer's layouts (NULL elsewhere). */
static int64_t *requests_step(bopen *w, par_buddy *b, int am_sender)
{
    par_ctx *x = &w->x;
    int n = x->lsize;
    par_ctx_step(x, "requests");
    par_wire_bwreq q = {am_sender ? w->chunk : 0, x->grank, x->rc};
    int64_t req[PAR_WIRE_BWREQ_N], *all = NULL, *lay = NULL;
    par_wire_bwreq_pack(&q, req);
    if (x->lrank == 0 && (!(all = par_root_malloc((size_t)n * sizeof req, "requests")) ||
                          !(lay = par_root_malloc((size_t)n * PAR_WIRE_BWLAYOUT_N * sizeof *lay, "layout"))))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory for buddy copy %d", x->fname, b->level);
    par_ctx_gather(x, 1, req, all, _SION_INT64, PAR_WIRE_BWREQ_N, 0);
    if (x->lrank == 0 && lay) {
        b->master = 1;
        master_create(w, b, all, n, lay);
    }
    free(all);
    return lay;
}

/* Step "layout" (group scatter of par_wire_bwlayout): a sender's stream in
 * the member file. A layout with a status: the file was not made; the task
 * that failed says why, the next vote or the agreement fails everyone. */
static void layout_step(bopen *w, par_buddy *b, int64_t *lay, int am_sender)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "layout");
    int64_t buf[PAR_WIRE_BWLAYOUT_N];
    par_wire_bwlayout mine = {SHEAF_E_IO, 0, 0, 0};
    par_wire_bwlayout_pack(&mine, buf); /* what stays when the scatter delivers nothing */
    par_ctx_scatter(x, 1, lay, buf, _SION_INT64, PAR_WIRE_BWLAYOUT_N, 0);
    free(lay);
    if (par_ctx_take(x, par_wire_bwlayout_unpack(&mine, buf, PAR_WIRE_BWLAYOUT_N)) || mine.status || !am_sender)
        return;
    b->start = mine.start;
    b->chunk = mine.chunksize;
    b->gskip = mine.globalskip;
    if (!(b->bsize = calloc(8, sizeof *b->bsize))) /* block 0 exists from the start, as in SIONlib */
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    b->cap = 8;
    b->nblk = 1;
    b->used = 0;
}

/* One group of a level: g with n members, this task rank `rank` there. */
static void group_open(bopen *w, par_buddy *b, void *g, int n, int rank, int am_sender)
{
    par_ctx *x = &w->x;
    x->lcomm = g;
    x->lrank = rank;
    x->lsize = n;
    layout_step(w, b, requests_step(w, b, am_sender), am_sender);
    x->lcomm = NULL;
}

static int create_group(bopen *w, void **g, int rank, int size, int color, int ncolors)
{
    par_state *p = w->p;
    return p->api.create_lcg(g, p->gcomm, p->grank, p->gsize, rank, size, color, ncolors) ? SHEAF_E_IO : 0;
}

/* A level's place in the copy layout: partner files, passes, paths. */
static void level_plan(bopen *w, par_buddy *b)
{
    par_ctx *x = &w->x;
    par_state *p = w->p;
    int nf = p->nfiles, fn = p->filenumber, lm = b->level % nf;
    int prev = ((fn - b->level) % nf + nf) % nf, next = (fn + b->level) % nf;
    int ls = p->lsize, lr = p->lrank, lprev = (int)w->lsizes[prev], lnext = (int)w->lsizes[next];
    b->nf = nf;
    b->self = lm == 0;
    b->coll_file = next;
    b->send_pass = member_pass(fn, lm, nf, &b->npass);
    b->coll_pass = member_pass(next, lm, nf, &b->npass);
    b->send_first = b->self ? 0 : lprev;
    b->send_entry = b->self ? ls + lr : lprev + lr;
    b->coll_rank = lr;
    b->coll_n = b->self ? ls : ls + lnext;
    b->coll_first = b->self ? 0 : ls;
    char *bn = par_buddy_name(x->fname, b->level);
    b->path = bn ? par_member_path(&p->api, bn, next) : NULL;
    b->send_path = bn ? par_member_path(&p->api, bn, fn) : NULL;
    free(bn);
    if (!b->path || !b->send_path)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
}

/* Step "groups" (create_local_commgroup per pass, then a G vote that also
 * carries every failure of the levels before): a group per copy member this
 * task sends into or collects, in 1 to 3 passes. Returns non-zero when the
 * open fails (on every task). */
static int groups_step(bopen *w, par_buddy *b)
{
    par_ctx *x = &w->x;
    par_state *p = w->p;
    par_ctx_step(x, "groups");
    level_plan(w, b);
    int nf = p->nfiles, fn = p->filenumber, ls = p->lsize, lr = p->lrank;
    int ncol = nf + p->gsize;                     /* colors: member files, then one of its own per idle task */
    for (int pass = 0; pass < b->npass; pass++) { /* every task, every pass: the callback is collective */
        int r2;
        if (b->self) {
            r2 = create_group(w, &b->send_g, lr, ls, fn, ncol);
            b->coll_g = b->send_g;
        } else if (pass == b->send_pass) {
            r2 = create_group(w, &b->send_g, b->send_first + lr, b->send_first + ls, fn, ncol);
        } else if (pass == b->coll_pass) {
            r2 = create_group(w, &b->coll_g, lr, b->coll_n, b->coll_file, ncol);
        } else {
            void *idle = NULL;
            r2 = create_group(w, &idle, 0, 1, nf + p->grank, ncol);
            if (idle)
                p->api.free_lcg(idle);
        }
        if (r2)
            par_ctx_fail(x, r2, "%s: the create_local_commgroup callback failed for buddy copy %d on task %d", x->fname,
                         b->level, p->grank);
    }
    /* the groups are used only when every task has its own */
    return par_ctx_vote(x) != 0;
}

/* One level: its groups, then its member files pass by pass. */
static int level_open(bopen *w, par_buddy *b)
{
    par_state *p = w->p;
    if (groups_step(w, b))
        return 1;
    for (int pass = 0; pass < b->npass; pass++) {
        if (b->self)
            group_open(w, b, b->send_g, p->lsize, p->lrank, 1);
        else if (pass == b->send_pass)
            group_open(w, b, b->send_g, b->send_first + p->lsize, b->send_first + p->lrank, 1);
        else if (pass == b->coll_pass)
            group_open(w, b, b->coll_g, b->coll_n, b->coll_rank, 0);
    }
    return 0;
}

int par_buddy_open_write(par_state *p, int levels, int64_t chunk, const char *fname)
{
    if (!p->api.gather_exec) /* the same API on every task: all fail here, before any collective */
        return core_fail(SHEAF_E_ARG,
                         "%s: buddy copies are written through the partner tasks: the API %s has no "
                         "gather_and_execute callback",
                         fname, p->api.name ? p->api.name : "(unnamed)");
    bopen w;
    memset(&w, 0, sizeof w);
    w.p = p;
    w.levels = levels;
    w.chunk = chunk;
    par_ctx_init(&w.x, &p->api, fname, "sion_generic_paropen (buddy copies)", p->gcomm, p->grank, p->gsize);
    int stop = buffers_step(&w) || info_step(&w);
    for (int l = 0; l < p->nbuddy && !stop; l++)
        stop = level_open(&w, p->blev[l]);
    free(w.info);
    if (stop) /* a verdict every task received */
        return par_ctx_restore(&w.x);
    par_ctx_step(&w.x, "agree");
    return par_ctx_agree(&w.x) ? par_ctx_restore(&w.x) : 0;
}

/* ---- writes ---------------------------------------------------------------- */
/* Whether n bytes at offset off lie inside one chunk of one entry (a sender
 * asks only for its own; a wrong offset must not hit the metadata or another
 * task's data). starts[] ascend with the entries. */
static int inside_a_chunk(const core_meta *m, int64_t off, int64_t n)
{
    if (m->globalskip <= 0 || off < m->data_start || n <= 0 || off > INT64_MAX - n)
        return 0;
    int64_t in = (off - m->data_start) % m->globalskip; /* the offset in its block row */
    int lo = 0, hi = m->ntasks - 1, e = -1;
    while (lo <= hi) { /* the last entry starting at or before `in` with room */
        int mid = lo + (hi - lo) / 2;
        if (m->starts[mid] - m->data_start <= in) {
            e = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (e < 0)
        return 0;
    int64_t s = m->starts[e] - m->data_start;
    return in + n <= s + m->chunksizes[e];
}

static int process_copy(const void *data, sion_int64 *spec, int sid)
{
    core_container *c = api_lookup(sid, "buddy copy");
    par_state *p = c ? c->par : NULL;
    if (!p || p->buddy_cur < 0 || p->buddy_cur >= p->nbuddy)
        return -1;
    par_buddy *b = p->blev[p->buddy_cur];
    if (!data || spec[1] <= 0)
        return b->prc ? -1 : 0;
    int rc = b->prc;
    if (!rc && (!b->fopen || !inside_a_chunk(&b->meta, spec[0], spec[1])))
        rc = core_fail(SHEAF_E_ARG, "%s: buddy copy asked to write %lld bytes at %lld, outside the senders' chunks",
                       b->path ? b->path : "?", (long long)spec[1], (long long)spec[0]);
    if (!rc)
        rc = core_file_seek(&b->f, spec[0]);
    if (!rc)
        rc = core_file_write(&b->f, data, (size_t)spec[1]);
    if (rc && !b->prc)
        b->prc = rc;
    return rc ? -1 : 0;
}

/* Where n bytes go in my copy stream: a new block when they do not fit in
 * the rest of the current one (SIONlib's ensure_free_space). */
static int place(par_buddy *b, int64_t n, int64_t *off, const char *name)
{
    if (n > b->chunk)
        return core_fail(SHEAF_E_ARG,
                         "%s: a collective write of %lld bytes is larger than the chunk (%lld): its "
                         "buddy copy cannot take it (SIONlib neither)",
                         name, (long long)n, (long long)b->chunk);
    if (b->used + n > b->chunk) {
        if (b->nblk == b->cap) {
            int64_t nc = b->cap ? 2 * b->cap : 8, *nb = realloc(b->bsize, (size_t)nc * sizeof *nb);
            if (!nb)
                return core_fail(SHEAF_E_NOMEM, "%s: out of memory", name);
            b->bsize = nb;
            b->cap = nc;
        }
        b->bsize[b->nblk++] = 0;
        b->used = 0;
    }
    *off = b->start + (b->nblk - 1) * b->gskip + b->used;
    return 0;
}

int par_buddy_coll_write(core_container *c, int sid, const void *data, int64_t n, int rc_in)
{
    par_state *p = c->par;
    int rc = rc_in;
    for (int l = 0; p && l < p->nbuddy; l++) {
        par_buddy *b = p->blev[l];
        p->buddy_cur = l;
        for (int pass = 0; pass < b->npass; pass++) {
            int send = b->self || pass == b->send_pass, coll = b->self || pass == b->coll_pass;
            if (!send && !coll)
                continue;
            sion_int64 spec[2] = {-1, 0};
            int64_t off = 0;
            int r2 = 0, placed = 0;
            if (send && !rc && n > 0 && !(r2 = place(b, n, &off, c->name))) {
                spec[0] = off;
                spec[1] = n;
                placed = 1;
            }
            if (r2 && !rc)
                rc = r2;
            if (b->self && b->coll_rank == 0 && spec[1] > 0) { /* the master's own data: no message to itself */
                if (process_copy(data, spec, sid) && !rc)
                    rc = b->prc;
                spec[0] = -1;
                spec[1] = 0;
            }
            void *g = send && !b->self ? b->send_g : b->coll_g;
            int first = send && !b->self ? b->send_first : b->self ? 1 : b->coll_first;
            int last = send && !b->self ? b->send_first + (p->lsize - 1) : b->coll_n - 1;
            if (coll)
                b->prc = 0;
            int cb = p->api.gather_exec(data, spec, 2, p->fsblksize, g, 0, first, last, sid, process_copy);
            if (coll && b->coll_rank == 0 && b->fopen && core_file_flush(&b->f) && !rc)
                rc = SHEAF_E_IO;
            if (cb && !rc)
                rc = core_fail(SHEAF_E_IO, "%s: writing buddy copy %d through the partner tasks failed", c->name,
                               b->level);
            if (!rc && placed) {
                b->bsize[b->nblk - 1] += n;
                b->used += n;
            }
        }
    }
    if (p)
        p->buddy_cur = -1;
    return rc;
}

int par_buddy_flush(core_container *c)
{
    par_state *p = c->par;
    for (int l = 0; p && l < p->nbuddy; l++) {
        par_buddy *b = p->blev[l];
        if (b->fopen && core_file_sync(&b->f)) /* the copies this task writes, as durable as the container */
            return core_fail(SHEAF_E_IO, "%s: flushing buddy copy %s failed: %s", c->name, b->path, sheaf_last_error());
    }
    return 0;
}

/* ---- close: per level steps buddy mapping, then per pass buddy counts,
 * buddy sizes, buddy tail; the close's own steps and agreement follow ---- */

/* Step "buddy mapping" (G gather of par_wire_cmap to the writer of member 0,
 * multi-file sets only): member and entry of every global task, which that
 * writer stores as the copy's mapping (returned there, NULL elsewhere). */
static int32_t *mapping_step(par_ctx *x, par_state *p, par_buddy *b, int m0, int *mfail)
{
    par_ctx_step(x, "buddy mapping");
    par_wire_cmap me = {p->filenumber, b->send_entry};
    int32_t buf[PAR_WIRE_CMAP_N], *map = NULL;
    par_wire_cmap_pack(&me, buf);
    if (p->grank == m0 && !(map = par_root_malloc((size_t)p->gsize * sizeof buf, "buddy mapping")))
        *mfail = par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    if (par_ctx_gather(x, 0, buf, map, _SION_INT32, PAR_WIRE_CMAP_N, m0) && map)
        *mfail = SHEAF_E_IO;
    for (int g = 0; map && !*mfail && g < p->gsize; g++) {
        par_wire_cmap e;
        if (par_wire_cmap_unpack(&e, map + (size_t)PAR_WIRE_CMAP_N * g, PAR_WIRE_CMAP_N) || e.filenumber >= b->nf)
            *mfail = par_ctx_fail(x, SHEAF_E_FORMAT, "%s: a bad mapping entry of buddy copy %d", x->fname, b->level);
    }
    return map;
}

/* One group's close, as every member sees it. */
typedef struct bclose {
    par_ctx *x;
    par_state *p;
    par_buddy *b;
    int n, send, mfail;   /* members, this task sends, the writer cannot finish the file */
    int64_t *cnt;         /* the writer: block count of each member */
    int *counts;          /* the writer: elements each member sends */
    int64_t total, *flat; /* the writer: the gathered block sizes */
    par_rootmem rm;       /* the writer's cnt, counts, flat (rootbuf.c) */
} bclose;

/* Step "buddy counts" (group gather of par_wire_ccount): each member's block
 * count (a collector: none) to the writer. */
static void bcounts_step(bclose *w)
{
    par_ctx *x = w->x;
    par_ctx_step(x, "buddy counts");
    par_wire_ccount me = {w->send ? w->b->nblk : 0, x->rc};
    int64_t buf[PAR_WIRE_CCOUNT_N], *all = NULL;
    par_wire_ccount_pack(&me, buf);
    if (x->lrank == 0) { /* out of memory: the close fails, but the gatherv below gets the announced counts */
        all = par_rootmem_alloc(&w->rm, (size_t)w->n * sizeof buf, "buddy counts");
        w->cnt = par_rootmem_alloc(&w->rm, (size_t)w->n * sizeof *w->cnt, "buddy counts: blocks");
        w->counts = par_rootmem_alloc(&w->rm, (size_t)w->n * sizeof *w->counts, "buddy counts: elements");
        if (!all || !w->cnt || !w->counts || w->rm.short_of_memory)
            w->mfail = par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    }
    if (par_ctx_gather(x, 1, buf, all, _SION_INT64, PAR_WIRE_CCOUNT_N, 0) && x->lrank == 0)
        w->mfail = SHEAF_E_IO;
    for (int t = 0; all && w->cnt && w->counts && t < w->n; t++) {
        par_wire_ccount e = {0, 0};
        /* a member that failed still announced its blocks: the rest of the copy stays readable */
        if (par_wire_ccount_unpack(&e, all + (size_t)PAR_WIRE_CCOUNT_N * t, PAR_WIRE_CCOUNT_N) && !w->mfail)
            w->mfail = par_ctx_take(x, SHEAF_E_FORMAT);
        w->cnt[t] = e.nblocks;
        w->counts[t] = (int)all[(size_t)PAR_WIRE_CCOUNT_N * t]; /* as the member announced it */
        w->total += w->counts[t];
    }
    par_rootmem_free(&w->rm, all);
    if (x->lrank == 0 && w->counts &&
        !(w->flat = par_rootmem_alloc(&w->rm, (size_t)(w->total + 1) * sizeof *w->flat, "buddy sizes"))) {
        w->mfail = par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname); /* counts disagree: "Limits" */
        memset(w->counts, 0, (size_t)w->n * sizeof *w->counts);
    }
    if (w->rm.short_of_memory && !w->mfail)
        w->mfail = par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
}

/* Step "buddy sizes" (group gatherv): the senders' block sizes to the writer. */
static void bsizes_step(bclose *w)
{
    par_ctx *x = w->x;
    par_ctx_step(x, "buddy sizes");
    int64_t dummy[1];
    int nb = w->send && w->b->bsize ? (int)w->b->nblk : 0;
    if (par_ctx_gatherv(x, 1, nb ? w->b->bsize : dummy, w->flat ? w->flat : dummy, _SION_INT64, w->counts, nb, 0) &&
        x->lrank == 0)
        w->mfail = SHEAF_E_IO;
}

/* Step "buddy tail" (the writer): the member file's block table (collectors:
 * one empty block, as SIONlib) and header, + the mapping on member 0. */
static void btail_step(bclose *w, const int32_t *map)
{
    par_ctx *x = w->x;
    par_buddy *b = w->b;
    par_ctx_step(x, "buddy tail");
    if (x->lrank != 0 || !b->master)
        return;
    int ne = b->meta.ntasks, n = w->n, rc = w->mfail ? w->mfail : b->prc;
    int64_t *bc = malloc((size_t)ne * sizeof *bc), *all = malloc((size_t)(w->total + ne + 1) * sizeof *all);
    if (!rc && (!bc || !all || !w->flat))
        rc = par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", x->fname);
    for (int e = 0, k = 0, off = 0; !rc && e < ne; e++) {
        int sender = b->self ? e >= n : e >= b->coll_first;
        int t = b->self ? e - n : e;
        bc[e] = sender ? w->cnt[t] : 1;
        if (!sender) {
            all[k++] = 0;
            continue;
        }
        for (int64_t j = 0; j < w->cnt[t]; j++)
            all[k++] = w->flat[off + j];
        off += w->counts[t];
    }
    if (b->fopen) {
        int r2 = core_file_close(&b->f);
        b->fopen = 0;
        if (!rc)
            rc = r2;
    }
    if (!rc) /* also after a failure elsewhere: what the others wrote stays readable */
        rc = core_par_write_tail_at(b->path, x->fname, &b->meta, bc, all, b->coll_file == 0 ? map : NULL, w->p->gsize);
    par_ctx_take(x, rc);
    free(bc);
    free(all);
}

/* One group of a level: counts, sizes, the writer finishes the member file. */
static void group_close(par_ctx *x, par_state *p, par_buddy *b, void *g, int n, int rank, int send, const int32_t *map)
{
    bclose w;
    memset(&w, 0, sizeof w);
    par_rootmem_init(&w.rm);
    w.x = x;
    w.p = p;
    w.b = b;
    w.n = n;
    w.send = send;
    x->lcomm = g;
    x->lrank = rank;
    x->lsize = n;
    bcounts_step(&w);
    bsizes_step(&w);
    btail_step(&w, map);
    x->lcomm = NULL;
    par_rootmem_free(&w.rm, w.cnt);
    par_rootmem_free(&w.rm, w.counts);
    par_rootmem_free(&w.rm, w.flat);
    par_rootmem_end(&w.rm);
}

void par_buddy_close_write(par_ctx *x, par_state *p)
{
    for (int l = 0; l < p->nbuddy; l++) {
        par_buddy *b = p->blev[l];
        int mfail = 0;
        int32_t *map = b->nf > 1 ? mapping_step(x, p, b, p->buddy_m0[l], &mfail) : NULL;
        if (mfail) { /* the writer of member 0 cannot store the mapping: it writes no tail */
            free(map);
            map = NULL;
            b->prc = b->prc ? b->prc : mfail;
        }
        for (int pass = 0; pass < b->npass; pass++) {
            if (b->self)
                group_close(x, p, b, b->send_g, p->lsize, p->lrank, 1, map);
            else if (pass == b->send_pass)
                group_close(x, p, b, b->send_g, b->send_first + p->lsize, b->send_first + p->lrank, 1, map);
            else if (pass == b->coll_pass)
                group_close(x, p, b, b->coll_g, b->coll_n, b->coll_rank, 0, map);
        }
        free(map);
    }
}

void par_buddy_info(par_state *p, int l, const char **send_name, int64_t *send_bytes, const char **coll_name,
                    int *coll_writer)
{
    par_buddy *b = p->blev[l];
    int64_t n = 0;
    for (int64_t k = 0; b->bsize && k < b->nblk; k++)
        n += b->bsize[k];
    *send_name = b->send_path;
    *send_bytes = n;
    *coll_name = b->path;
    *coll_writer = b->master;
}
