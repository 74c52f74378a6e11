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
    int send_pass, coll_pass;       /* pass of my sender group / collector group */
    int coll_file;                  /* the copy member I collect (my file + L) */
    void *send_g, *coll_g;          /* the same object when self */
    int send_first;                 /* comm rank of the first sender in my sender group */
    int send_entry;                 /* my entry in copy member (my file) */
    int coll_rank, coll_n;          /* my rank in the collector group, its number of members */
    int coll_first;                 /* first sender rank there (self: 0) */
    /* my stream in the copy (entry send_entry of member my file) */
    int64_t start, chunk, gskip, used, nblk, cap;
    int64_t *bsize;
    /* local task 0 of the collector group: the copy member file */
    int master;
    char *send_path, *path;         /* my copy member (the one I send into) and the one I collect */
    core_file f;
    int fopen;
    core_meta meta;
    int prc;                        /* first failure inside the process callback */
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

/* The collector group's master: create the copy member from the members'
 * (chunk size, global rank) pairs; lay[] gets (status, start, chunk, gskip)
 * per member rank (self: the sender entries). */
static int master_create(par_state *p, par_buddy *b, const char *fname, const int64_t *req, int n, int32_t fsb,
                         int64_t *lay)
{
    int ne = b->self ? 2 * n : n, rc = 0;
    int64_t *cs = malloc((size_t)ne * sizeof *cs), *gr = malloc((size_t)ne * sizeof *gr);
    if (!cs || !gr || !b->path)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory for buddy copy %d", fname, b->level);
    for (int t = 0; !rc && t < n; t++) {
        int collector = b->self || t < b->coll_first;
        int e = b->self ? n + t : t;
        if (collector) { /* SIONlib's collector entry */
            cs[t] = 0;
            gr[t] = -(req[2 * t + 1] + 1);
        }
        if (!collector || b->self) {
            cs[e] = req[2 * t];
            gr[e] = req[2 * t + 1];
        }
    }
    core_mode m = p->mode; /* the container's, without what copies do not have */
    m.buddy = m.checksum = m.collective = m.cmerge = m.packed = 0;
    m.collsize = -1;
    if (!rc) /* the set's name in the prefix field, as SIONlib stores it */
        rc = core_par_create_file_at(b->path, fname, &m, ne, cs, gr, fsb, b->coll_file, b->nf, &b->meta);
    if (!rc && !(rc = core_file_open_rw(&b->f, b->path, p->mode.posix, 1)))
        b->fopen = 1;
    for (int t = 0; t < n; t++) {
        int e = b->self ? n + t : t;
        int64_t *o = lay + 4 * t;
        o[0] = rc;
        o[1] = rc ? 0 : b->meta.starts[e];
        o[2] = rc ? 0 : b->meta.chunksizes[e];
        o[3] = rc ? 0 : b->meta.globalskip;
    }
    free(cs);
    free(gr);
    return rc;
}

/* One group of a level: every member sends (chunk, global rank), the master
 * creates the member file and answers with the layout. */
static int group_open(par_state *p, par_buddy *b, void *g, int n, int am_sender, int rank, int64_t chunk,
                      const char *fname)
{
    int64_t req[2] = {chunk, p->grank}, *all = NULL, *lay = NULL, mine[4] = {SHEAF_E_IO, 0, 0, 0}, dummy[4];
    int rc = 0, cbfail = 0;
    if (rank == 0 && (!(all = malloc((size_t)n * sizeof req)) || !(lay = calloc((size_t)n, sizeof mine))))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory for buddy copy %d", fname, b->level);
    if (p->api.gather(req, all ? all : dummy, g, _SION_INT64, 2, 0))
        cbfail = 1;
    if (rank == 0 && lay) {
        b->master = 1;
        int mrc = rc || cbfail ? SHEAF_E_IO : master_create(p, b, fname, all, n, p->fsblksize, lay);
        for (int t = 0; mrc && t < n; t++)
            lay[4 * t] = mrc;
        if (!rc)
            rc = mrc;
    }
    if (p->api.scatter(lay ? lay : dummy, mine, g, _SION_INT64, 4, 0))
        cbfail = 1;
    free(all);
    free(lay);
    if (!rc && cbfail)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed opening buddy copy %d", fname, b->level);
    if (!rc && mine[0])
        rc = core_fail((int)mine[0], "%s: buddy copy %d: its writer could not create it (see its message)", fname,
                       b->level);
    if (!rc && am_sender) {
        b->start = mine[1];
        b->chunk = mine[2];
        b->gskip = mine[3];
        if (!(b->bsize = calloc(8, sizeof *b->bsize))) /* block 0 exists from the start, as in SIONlib */
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        b->cap = 8;
        b->nblk = 1;
        b->used = 0;
    }
    return rc;
}

/* Task 0: the group sizes of all files and, per level, the global rank of the
 * writer of copy member 0 (its mapping); bcast to all as info[nf + levels]. */
static int set_info(par_state *p, int levels, const char *fname, int64_t *info)
{
    int nf = p->nfiles, rc = 0, cbfail = 0;
    int64_t mine[3] = {p->filenumber, p->lrank, p->lsize}, *all = NULL, dummy[3];
    if (p->grank == 0 && !(all = malloc((size_t)p->gsize * sizeof mine)))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (p->api.gather(mine, all ? all : dummy, p->gcomm, _SION_INT64, 3, 0))
        cbfail = 1;
    if (p->grank == 0) {
        for (int k = 0; k < nf + levels; k++)
            info[k] = -1;
        for (int t = 0; all && t < p->gsize; t++) {
            info[all[3 * t]] = all[3 * t + 2];
            for (int l = 1; l <= levels; l++)
                if (all[3 * t] == ((0 - l) % nf + nf) % nf && all[3 * t + 1] == 0)
                    info[nf + l - 1] = t;
        }
        if (!all || cbfail)
            info[0] = -1;
    }
    if (p->api.bcast(info, p->gcomm, _SION_INT64, nf + levels, 0))
        cbfail = 1;
    if (!rc && (cbfail || info[0] < 0))
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed opening the buddy copies", fname);
    free(all);
    return rc;
}

static int create_group(par_state *p, void **g, int rank, int size, int color, int ncolors)
{
    return p->api.create_lcg(g, p->gcomm, p->grank, p->gsize, rank, size, color, ncolors) ? SHEAF_E_IO : 0;
}

/* One level: groups, then the member files. Every task takes part in every
 * collective whatever happened before; the caller agrees on the result. */
static int level_open(par_state *p, par_buddy *b, const int64_t *info, int64_t chunk, const char *fname)
{
    int nf = p->nfiles, fn = p->filenumber, lm = b->level % nf, rc = 0;
    int prev = ((fn - b->level) % nf + nf) % nf, next = (fn + b->level) % nf;
    int ls = p->lsize, lr = p->lrank, lprev = (int)info[prev], lnext = (int)info[next];
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
    char *bn = par_buddy_name(fname, b->level);
    b->path = bn ? par_member_path(&p->api, bn, next) : NULL;
    b->send_path = bn ? par_member_path(&p->api, bn, fn) : NULL;
    free(bn);
    if (!b->path || !b->send_path)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    int ncol = nf + p->gsize; /* colors: member files, then one of its own per idle task */
    for (int pass = 0; pass < b->npass; pass++) {
        int r2;
        if (b->self) {
            r2 = create_group(p, &b->send_g, lr, ls, fn, ncol);
            b->coll_g = b->send_g;
        } else if (pass == b->send_pass) {
            r2 = create_group(p, &b->send_g, lprev + lr, lprev + ls, fn, ncol);
        } else if (pass == b->coll_pass) {
            r2 = create_group(p, &b->coll_g, lr, ls + lnext, next, ncol);
        } else {
            void *idle = NULL;
            r2 = create_group(p, &idle, 0, 1, nf + p->grank, ncol);
            if (idle)
                p->api.free_lcg(idle);
        }
        if (r2 && !rc)
            rc = core_fail(r2, "%s: the create_local_commgroup callback failed for buddy copy %d on task %d", fname,
                           b->level, p->grank);
    }
    /* the groups are used only when every task has its own */
    rc = par_agree(&p->api, p->gcomm, p->grank, p->gsize, rc, fname, "sion_generic_paropen (buddy copies)");
    if (rc)
        return rc;
    for (int pass = 0; pass < b->npass; pass++) {
        int r2 = 0;
        if (b->self)
            r2 = group_open(p, b, b->send_g, ls, 1, lr, chunk, fname);
        else if (pass == b->send_pass)
            r2 = group_open(p, b, b->send_g, lprev + ls, 1, lprev + lr, chunk, fname);
        else if (pass == b->coll_pass)
            r2 = group_open(p, b, b->coll_g, ls + lnext, 0, lr, 0, fname);
        if (r2 && !rc)
            rc = r2;
    }
    return rc;
}

int par_buddy_open_write(par_state *p, int levels, int64_t chunk, const char *fname)
{
    const char *call = "sion_generic_paropen (buddy copies)";
    if (!p->api.gather_exec) /* the same API on every task: all fail here, before any collective */
        return core_fail(SHEAF_E_ARG, "%s: buddy copies are written through the partner tasks: the API %s has no "
                         "gather_and_execute callback", fname, p->api.name ? p->api.name : "(unnamed)");
    int64_t *info = calloc((size_t)(p->nfiles + levels), sizeof *info);
    int rc = info && (p->buddy_m0 = malloc((size_t)levels * sizeof *p->buddy_m0)) ? 0 : SHEAF_E_NOMEM;
    for (int l = 1; l <= levels && !rc; l++) {
        if (!(p->blev[l - 1] = calloc(1, sizeof(par_buddy))))
            rc = SHEAF_E_NOMEM;
        else
            p->blev[p->nbuddy++]->level = l;
    }
    if (rc)
        core_fail(rc, "%s: out of memory for the buddy copies", fname);
    rc = par_agree(&p->api, p->gcomm, p->grank, p->gsize, rc, fname, call);
    if (!rc)
        rc = par_agree(&p->api, p->gcomm, p->grank, p->gsize, set_info(p, levels, fname, info), fname, call);
    for (int l = 0; l < levels && !rc; l++)
        p->buddy_m0[l] = (int)info[p->nfiles + l];
    for (int l = 0; l < p->nbuddy && !rc; l++)
        rc = par_agree(&p->api, p->gcomm, p->grank, p->gsize, level_open(p, p->blev[l], info, chunk, fname), fname,
                       call);
    free(info);
    return rc;
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
        return core_fail(SHEAF_E_ARG, "%s: a collective write of %lld bytes is larger than the chunk (%lld): its "
                         "buddy copy cannot take it (SIONlib neither)", name, (long long)n, (long long)b->chunk);
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
            return core_fail(SHEAF_E_IO, "%s: flushing buddy copy %s failed: %s", c->name, b->path,
                             sheaf_last_error());
    }
    return 0;
}

/* ---- close ----------------------------------------------------------------- */
/* Member 0's mapping: (member, entry) of every global task, at its writer. */
static int gather_mapping(par_state *p, par_buddy *b, int m0, int32_t **map)
{
    int64_t mine[2] = {p->filenumber, b->send_entry}, *all = NULL, dummy[2];
    int rc = 0;
    *map = NULL;
    if (p->grank == m0 && !(all = malloc((size_t)p->gsize * sizeof mine)))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
    if (p->api.gather(mine, all ? all : dummy, p->gcomm, _SION_INT64, 2, m0) && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: the gather callback failed closing the buddy copies", p->fname);
    if (all && !rc && (*map = malloc((size_t)p->gsize * 2 * sizeof **map)))
        for (int t = 0; t < 2 * p->gsize; t++)
            (*map)[t] = (int32_t)all[t];
    else if (all && !rc)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
    free(all);
    return rc;
}

/* One group: block counts and sizes of the senders to the master, who
 * finishes the member file. */
static int group_close(par_state *p, par_buddy *b, void *g, int n, int rank, int send, const int32_t *map)
{
    int64_t nb = send ? b->nblk : 0, *cnt = NULL, dummy[1];
    int *counts = NULL, rc = 0, cbf = 0;
    if (rank == 0 && (!(cnt = malloc((size_t)n * sizeof *cnt)) || !(counts = malloc((size_t)n * sizeof *counts))))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
    if (p->api.gather(&nb, cnt ? cnt : dummy, g, _SION_INT64, 1, 0))
        cbf = 1;
    int64_t tot = 0, *flat = NULL;
    for (int t = 0; cnt && t < n; t++) {
        counts[t] = (int)cnt[t];
        tot += cnt[t];
    }
    if (rank == 0 && !rc && !(flat = malloc((size_t)(tot + 1) * sizeof *flat)))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
    if (p->api.gatherv(send && b->bsize ? b->bsize : dummy, flat ? flat : dummy, g, _SION_INT64, counts,
                       (int)nb, 0))
        cbf = 1;
    if (rank == 0 && b->master) {
        int ne = b->meta.ntasks;
        int64_t *bc = malloc((size_t)ne * sizeof *bc), *all = malloc((size_t)(tot + ne + 1) * sizeof *all);
        if (!rc && (!bc || !all || !flat))
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
        if (!rc && cbf)
            rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed closing buddy copy %d", p->fname, b->level);
        if (!rc && b->prc)
            rc = b->prc;
        for (int e = 0, k = 0, off = 0; !rc && e < ne; e++) { /* collectors: one empty block, as SIONlib */
            int sender = b->self ? e >= n : e >= b->coll_first;
            int t = b->self ? e - n : e;
            bc[e] = sender ? cnt[t] : 1;
            if (!sender) {
                all[k++] = 0;
                continue;
            }
            for (int64_t j = 0; j < cnt[t]; j++)
                all[k++] = flat[off + j];
            off += (int)cnt[t];
        }
        if (b->fopen) {
            int r2 = core_file_close(&b->f);
            b->fopen = 0;
            if (!rc)
                rc = r2;
        }
        if (!rc)
            rc = core_par_write_tail_at(b->path, p->fname, &b->meta, bc, all, b->coll_file == 0 ? map : NULL,
                                        p->gsize);
        free(bc);
        free(all);
    } else if (!rc && cbf) {
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed closing buddy copy %d", p->fname, b->level);
    }
    free(cnt);
    free(counts);
    free(flat);
    return rc;
}

int par_buddy_close_write(par_state *p)
{
    int rc = 0;
    for (int l = 0; l < p->nbuddy; l++) {
        par_buddy *b = p->blev[l];
        int32_t *map = NULL;
        int r2 = b->nf > 1 ? gather_mapping(p, b, p->buddy_m0[l], &map) : 0;
        for (int pass = 0; pass < b->npass; pass++) {
            int r3 = 0;
            if (b->self)
                r3 = group_close(p, b, b->send_g, p->lsize, p->lrank, 1, map);
            else if (pass == b->send_pass)
                r3 = group_close(p, b, b->send_g, b->send_first + p->lsize, b->send_first + p->lrank, 1, map);
            else if (pass == b->coll_pass)
                r3 = group_close(p, b, b->coll_g, b->coll_n, b->coll_rank, 0, map);
            if (r3 && !r2)
                r2 = r3;
        }
        free(map);
        if (r2 && !rc)
            rc = r2;
    }
    return rc;
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
