/* buddy_read.c - a "br,buddy" open that reads buddy copy level L (buddy.c
 * writes it: SIONlib 1.7.6's layout, copy member f written by the partner
 * tasks of file f - L, member 0 mapping every task to (member, entry)).
 *
 * Protocol (all on the global group; every task takes part in every step):
 *   1. which copy members each task can open: members 0, 1, ... in rounds
 *      until a task that sees one tells the number of members (its header);
 *      then each task tries every member (gather at task 0), and task 0
 *      names a reader per member (the lowest task that sees it) - bcast;
 *      a member no task sees fails the open everywhere;
 *   2. member 0's reader reads the mapping (one member: its global ranks)
 *      and broadcasts (member, entry) of every task;
 *   3. when every task sees its own member, each opens its entry itself;
 *      otherwise (a node's storage seen only by that node's tasks, as after
 *      the loss of another node) each member's reader sends every task of
 *      that member its block table and then its data (scatterv, in rounds of
 *      at most 8 MiB per task), which the task keeps in a private temporary
 *      file (TMPDIR) laid out as its blocks and reads from there;
 *   4. agree.
 * So the data of a lost file is read from its copy wherever that copy is
 * visible, as SIONlib does (SIONlib reads through collectors in steps; the
 * files are the same). */
#define _FILE_OFFSET_BITS 64
#include "open_int.h"
#include "ctx.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/io.h"
#include "../core/partask.h"
#include "sion.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PIECE_MAX (8 << 20)  /* bytes per task and round of the data transfer, at most */
#define ROUND_MAX (64 << 20) /* bytes a reader holds in one round, at most (but 4 KiB per task) */

static int visible(const par_api *api, const char *bn, int k)
{
    char *path = par_member_path(api, bn, k);
    struct stat st;
    int ok = path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

/* One task's read open of a buddy copy: the context and what the steps hand on. */
typedef struct bropen {
    par_ctx x;
    const par_open_args *a;
    char *bn;               /* the copy's set name */
    int nf;                 /* its members */
    int64_t *rbuf, *reader; /* step readers: par_wire_verdict, then (reader) the task reading member k */
    int64_t *vis;           /* step readers, sent: par_wire_verdict, then 0/1 per member (sees it) */
    int64_t *lbuf, *loc;    /* step mapping: par_wire_verdict, then (loc) member and entry of every task */
    int direct;             /* every task sees its own member */
    core_container *c;
    int64_t chunk;
    int32_t fsb;
    par_state *p;
    int sid, named;
} bropen;

/* The number of members a task sees in member k's header (-1: none). */
static int64_t members_seen(const par_api *api, const char *bn, int k)
{
    int64_t mine = -1;
    if (!visible(api, bn, k))
        return mine;
    char *path = par_member_path(api, bn, k);
    core_meta m;
    if (path && !core_meta_read_path(path, &m)) {
        mine = m.nfiles > 0 ? m.nfiles : -1;
        core_meta_free(&m);
    }
    free(path);
    return mine;
}

/* Step "members" (rounds of G gather + G bcast): members 0, 1, ... until a
 * task that sees one tells the number of members (its header). Returns it,
 * or 0 when no member is visible anywhere (the same on every task). */
static int64_t members_step(bropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "members");
    int64_t *all = NULL, buf[PAR_WIRE_BSEEN_N];
    par_wire_bseen v = {0};
    if (x->grank == 0 && !(all = par_root_malloc((size_t)x->gsize * sizeof buf, "members")))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", w->bn);
    for (int k = 0; v.members == 0; k++) { /* rounds: at most up to the first member someone sees */
        par_wire_bseen mine = {members_seen(x->api, w->bn, k)}, e;
        par_wire_bseen_pack(&mine, buf);
        int cbf = par_ctx_gather(x, 0, buf, all, _SION_INT64, PAR_WIRE_BSEEN_N, 0);
        for (int t = 0; x->grank == 0 && all && t < x->gsize && v.members == 0; t++)
            if (!par_wire_bseen_unpack(&e, all + (size_t)PAR_WIRE_BSEEN_N * t, PAR_WIRE_BSEEN_N) && e.members > 0)
                v.members = e.members; /* a header that cannot be one is no member seen */
        if (x->grank == 0 && ((v.members == 0 && k + 1 >= x->gsize) || !all || cbf))
            v.members = -1; /* no member of the copy is visible anywhere */
        par_wire_bseen_pack(&v, buf);
        if (par_ctx_bcast(x, 0, buf, _SION_INT64, PAR_WIRE_BSEEN_N, 0) ||
            par_wire_bseen_unpack(&v, buf, PAR_WIRE_BSEEN_N))
            v.members = -1;
    }
    free(all);
    return v.members < 0 || v.members > x->gsize ? 0 : v.members;
}

/* Task 0 of step "readers": the first failing task, else a reader per
 * member (the lowest task that sees it; none: SHEAF_E_NOTFOUND), behind the
 * verdict in rbuf. all: every task's message of n elements. */
static void readers_root(bropen *w, int64_t *all, int n)
{
    par_ctx *x = &w->x;
    par_wire_verdict v = {x->rc, x->rc ? 0 : -1};
    for (int t = 0; all && !v.status && t < x->gsize; t++) {
        par_wire_verdict e;
        int64_t *r = all + (size_t)t * n;
        int rc = par_wire_verdict_unpack(&e, r, PAR_WIRE_VERDICT_N);
        if (!rc)
            rc = par_wire_array_unpack("buddy readers", "sees member", 0, 1, r + PAR_WIRE_VERDICT_N,
                                       r + PAR_WIRE_VERDICT_N, w->nf);
        if (rc || e.status) /* a message task 0 refuses fails task 0, with its reason */
            v = rc ? (par_wire_verdict){par_ctx_take(x, rc), 0} : (par_wire_verdict){e.status, t};
    }
    for (int k = 0; all && !v.status && k < w->nf; k++) {
        w->reader[k] = -1;
        for (int t = 0; t < x->gsize && w->reader[k] < 0; t++)
            if (all[(size_t)t * n + PAR_WIRE_VERDICT_N + k])
                w->reader[k] = t;
        if (w->reader[k] < 0)
            v.status = SHEAF_E_NOTFOUND;
    }
    par_wire_verdict_pack(&v, w->rbuf);
}

/* A verdict that ends a step (rbuf: par_wire_verdict then n elements in
 * [lo, hi], the same bytes on every task): 0, or the code (every task fails). */
static int64_t take_verdict(par_ctx *x, const char *label, const int64_t *buf, int64_t *arr, int64_t n, int64_t lo,
                            int64_t hi)
{
    par_wire_verdict v = {SHEAF_E_IO, -1};
    int rc = par_wire_verdict_unpack(&v, buf, PAR_WIRE_VERDICT_N);
    if (!rc && !v.status)
        rc = par_wire_array_unpack(label, "entry", lo, hi, arr, arr, n);
    if (rc && !v.status) /* every task refuses the same bytes alike */
        v.status = par_ctx_take(x, rc);
    return v.status;
}

/* Step "readers" (G gather of each task's status and the members it sees +
 * G bcast of the verdict and a reader per member); a member no task sees
 * fails the open everywhere. Returns non-zero when it does (on every task). */
static int readers_step(bropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "readers");
    int nf = w->nf, n = PAR_WIRE_VERDICT_N + nf;
    int64_t *all = NULL;
    if (x->grank == 0 && !(all = par_root_malloc((size_t)x->gsize * (size_t)n * sizeof *all, "readers")))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", w->bn);
    par_wire_verdict me = {x->rc, x->grank};
    par_wire_verdict_pack(&me, w->vis);
    for (int k = 0; k < nf; k++)
        w->vis[PAR_WIRE_VERDICT_N + k] = visible(x->api, w->bn, k);
    par_ctx_gather(x, 0, w->vis, all, _SION_INT64, n, 0);
    if (x->grank == 0)
        readers_root(w, all, n);
    free(all);
    par_ctx_bcast(x, 0, w->rbuf, _SION_INT64, n, 0);
    int64_t st = take_verdict(x, "buddy readers", w->rbuf, w->reader, nf, 0, x->gsize - 1);
    if (st)
        par_ctx_verdict(x, (int)st,
                        "%s: a member of the buddy copy is visible to no task, or a task failed "
                        "(see its message)",
                        w->bn);
    return st != 0;
}

/* Step 2 on member 0's reader: (member, entry) of every task into loc[2*gsize]. */
static int locate(const par_api *api, const char *bn, int gsize, int64_t *loc)
{
    core_meta m;
    char *p0 = par_member_path(api, bn, 0);
    int rc = p0 ? core_meta_read_path(p0, &m) : SHEAF_E_NOMEM;
    free(p0);
    if (rc)
        return rc;
    for (int g = 0; g < 2 * gsize; g++)
        loc[g] = -1;
    if (m.nfiles > 1 && m.mapping_size != gsize)
        rc =
            core_fail(SHEAF_E_ARG, "%s: the buddy copy was written by %d tasks, %d read it", bn, m.mapping_size, gsize);
    for (int g = 0; !rc && m.nfiles > 1 && g < gsize; g++) {
        loc[2 * g] = m.mapping[2 * g];
        loc[2 * g + 1] = m.mapping[2 * g + 1];
    }
    for (int e = 0; !rc && m.nfiles <= 1 && e < m.ntasks; e++) {
        int64_t g = m.globalranks[e];
        if (g < 0) /* a collector's entry */
            continue;
        if (g >= gsize || loc[2 * g] >= 0)
            rc = core_fail(SHEAF_E_ARG, "%s: global task %lld is not one of the %d reading tasks, or twice in it", bn,
                           (long long)g, gsize);
        else
            loc[2 * g] = 0, loc[2 * g + 1] = e;
    }
    for (int g = 0; !rc && g < gsize; g++)
        if (loc[2 * g] < 0 || loc[2 * g] >= m.nfiles)
            rc = core_fail(SHEAF_E_ARG, "%s: the buddy copy holds no data of task %d", bn, g);
    core_meta_free(&m);
    return rc;
}

/* Open entry e of member file `path` directly. */
static int attach_entry(const char *path, const core_mode *md, int grank, int64_t e, core_container **out,
                        int64_t *chunk, int32_t *fsb)
{
    core_meta m;
    int rc = core_meta_read_path(path, &m);
    if (rc)
        return rc;
    if (e < 0 || e >= m.ntasks || m.globalranks[e] != grank)
        rc = core_fail(SHEAF_E_FORMAT, "%s: entry %lld is not task %d's", path, (long long)e, grank);
    int64_t nb = rc ? 0 : m.blockcount[e], *bs = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *bs);
    if (!rc && !bs)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", path);
    for (int64_t b = 0; !rc && b < nb; b++)
        bs[b] = m.blocksizes[b * m.ntasks + e];
    core_mode rm = *md;
    rm.buddy = 0;
    if (!rc) {
        core_attach_spec sp = {path, m.starts[e], core_meta_capacity(&m, (int32_t)e), m.globalskip, grank, nb,
                               bs,   NULL};
        rc = core_attach_tasks(out, path, &rm, 0, 1, &sp);
    }
    if (!rc) {
        int kv = (int)(m.format >= 5 ? (m.flag1 >> 32) : 0);
        (*out)->keyval = kv ? kv : SION_KEYVAL_NONE;
        (*out)->data_big = m.data_big;
        (*out)->fsblksize = m.fsblksize;
        *chunk = core_meta_capacity(&m, (int32_t)e);
        *fsb = m.fsblksize;
    }
    free(bs);
    core_meta_free(&m);
    return rc;
}

/* ---- the partner path: a member's reader sends its tasks their data ---- */

/* One member's transfer, as every task sees it. */
typedef struct member_xfer {
    bropen *w;
    int f, root, me, mine; /* member, its reader, this task reads it / is in it */
    int64_t piece;         /* bytes per task and round */
    /* the reader */
    core_meta m;
    core_file in;
    int in_open;
    int64_t *heads;          /* [gsize] packed par_wire_bhead */
    int *counts;             /* [gsize] */
    int64_t *ttotal, *tdone; /* [gsize] bytes of each task of the member, sent so far */
    /* a task of the member */
    par_wire_bhead got;
    int64_t nb, *bs; /* its block table */
    int64_t total, done, rounds;
} member_xfer;

/* The reader: its member's metadata, a head per task of the member, and
 * the block tables (returned; NULL when out of memory, the heads say so). */
static int64_t *reader_heads(member_xfer *mx)
{
    par_ctx *x = &mx->w->x;
    const int64_t *loc = mx->w->loc;
    int n = x->gsize, rc;
    char *path = par_member_path(x->api, mx->w->bn, mx->f);
    rc = path ? core_meta_read_path(path, &mx->m) : core_fail(SHEAF_E_NOMEM, "%s: out of memory", mx->w->bn);
    if (!rc && !(rc = core_file_open(&mx->in, path, 0, 0)))
        mx->in_open = 1;
    free(path);
    if ((mx->heads = par_root_malloc((size_t)n * PAR_WIRE_BHEAD_N * sizeof *mx->heads, "heads")))
        memset(mx->heads, 0, (size_t)n * PAR_WIRE_BHEAD_N * sizeof *mx->heads);
    mx->counts = calloc((size_t)n, sizeof *mx->counts);
    mx->ttotal = calloc((size_t)n, sizeof *mx->ttotal);
    mx->tdone = calloc((size_t)n, sizeof *mx->tdone);
    if (!rc && (!mx->heads || !mx->counts || !mx->ttotal || !mx->tdone))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", mx->w->bn);
    par_ctx_take(x, rc);
    const core_meta *m = &mx->m;
    int kv = (int)(m->format >= 5 ? (m->flag1 >> 32) : 0);
    int64_t tot = 0;
    for (int t = 0; mx->heads && mx->counts && t < n; t++) {
        if (loc[2 * t] != mx->f)
            continue;
        int64_t e = loc[2 * t + 1];
        int bad = rc || e < 0 || e >= m->ntasks || m->globalranks[e] != t;
        par_wire_bhead h = {bad ? (rc ? rc : SHEAF_E_FORMAT) : 0,
                            bad ? 0 : m->blockcount[e],
                            bad ? 0 : core_meta_capacity(m, (int32_t)e),
                            m->fsblksize,
                            kv ? kv : SION_KEYVAL_NONE,
                            m->data_big};
        par_wire_bhead_pack(&h, mx->heads + (size_t)t * PAR_WIRE_BHEAD_N);
        mx->counts[t] = (int)h.nblocks;
        tot += h.nblocks;
    }
    int64_t *flat = mx->counts && mx->heads ? malloc((size_t)(tot > 0 ? tot : 1) * sizeof *flat) : NULL;
    for (int t = 0, k = 0; flat && t < n; t++)
        for (int64_t b = 0; b < mx->counts[t]; b++)
            flat[k++] = m->blocksizes[b * m->ntasks + loc[2 * t + 1]];
    for (int t = 0; !flat && mx->counts && t < n; t++) { /* out of memory: every task of the member is told so */
        mx->counts[t] = 0;
        if (loc[2 * t] == mx->f && mx->heads) {
            par_wire_bhead h = {SHEAF_E_NOMEM, 0, 0, 0, SION_KEYVAL_NONE, 0};
            par_wire_bhead_pack(&h, mx->heads + (size_t)t * PAR_WIRE_BHEAD_N);
        }
    }
    return flat;
}

/* Steps "heads" (G scatter) and "tables" (G scatterv): each task of the
 * member its head and block table; then the reader's rounds (G bcast). */
static void tables_step(member_xfer *mx, int64_t *flat)
{
    par_ctx *x = &mx->w->x;
    int64_t buf[PAR_WIRE_BHEAD_N] = {SHEAF_E_IO, 0, 0, 0, 0, 0}, dummy[PAR_WIRE_BHEAD_N] = {0};
    par_ctx_scatter(x, 0, mx->heads, buf, _SION_INT64, PAR_WIRE_BHEAD_N, mx->root);
    mx->got = (par_wire_bhead){SHEAF_E_IO, 0, 0, 0, 0, 0};
    if (par_wire_bhead_unpack(&mx->got, buf, PAR_WIRE_BHEAD_N) && mx->mine)
        par_ctx_take(x, SHEAF_E_FORMAT);
    mx->nb = mx->mine && !mx->got.status ? mx->got.nblocks : 0;
    mx->bs = malloc((size_t)(mx->nb > 0 ? mx->nb : 1) * sizeof *mx->bs);
    par_ctx_scatterv(x, 0, mx->bs ? mx->bs : dummy, flat ? flat : dummy, _SION_INT64, mx->counts,
                     mx->bs ? (int)mx->nb : 0, mx->root);
    free(flat);
    for (int64_t b = 0; mx->bs && b < mx->nb; b++)
        mx->total += mx->bs[b];
    for (int t = 0; mx->me && mx->heads && mx->counts && t < x->gsize; t++) { /* the reader: rounds */
        par_wire_bhead h;
        if (mx->w->loc[2 * t] != mx->f ||
            par_wire_bhead_unpack(&h, mx->heads + (size_t)t * PAR_WIRE_BHEAD_N, PAR_WIRE_BHEAD_N) || h.status)
            continue;
        for (int64_t b = 0; b < h.nblocks; b++)
            mx->ttotal[t] += mx->m.blocksizes[b * mx->m.ntasks + mx->w->loc[2 * t + 1]];
        if ((mx->ttotal[t] + mx->piece - 1) / mx->piece > mx->rounds)
            mx->rounds = (mx->ttotal[t] + mx->piece - 1) / mx->piece;
    }
    par_ctx_bcast(x, 0, &mx->rounds, _SION_INT64, 1, mx->root);
}

/* The reader, one round: each task's next piece (counts) into all (sum bytes). */
static char *reader_round(member_xfer *mx)
{
    par_ctx *x = &mx->w->x;
    const int64_t *loc = mx->w->loc;
    const core_meta *m = &mx->m;
    int64_t sum = 0;
    for (int t = 0; t < x->gsize; t++) {
        int64_t left = loc[2 * t] == mx->f ? mx->ttotal[t] - mx->tdone[t] : 0;
        mx->counts[t] = left <= 0 ? 0 : (int)(left < mx->piece ? left : mx->piece);
        sum += mx->counts[t];
    }
    char *all = malloc((size_t)(sum > 0 ? sum : 1));
    int rc = all ? 0 : core_fail(SHEAF_E_NOMEM, "%s: out of memory", mx->w->bn);
    for (int t = 0, o = 0; all && !rc && t < x->gsize; o += mx->counts[t], t++) {
        int64_t e = loc[2 * t + 1], pos = mx->tdone[t], left = mx->counts[t];
        for (int64_t b = 0; left > 0 && b < m->blockcount[e] && !rc; b++) {
            int64_t bsz = m->blocksizes[b * m->ntasks + e];
            if (pos >= bsz) {
                pos -= bsz;
                continue;
            }
            int64_t take = bsz - pos < left ? bsz - pos : left;
            rc = core_file_pread(&mx->in, all + o + (mx->counts[t] - left), (size_t)take,
                                 m->starts[e] + b * m->globalskip + pos);
            left -= take;
            pos = 0;
        }
        mx->tdone[t] += mx->counts[t];
    }
    if (rc) { /* the tasks still receive (zeros); the agreement fails everyone */
        par_ctx_take(x, rc);
        if (all)
            memset(all, 0, (size_t)(sum > 0 ? sum : 1));
        else
            memset(mx->counts, 0, (size_t)x->gsize * sizeof *mx->counts);
    }
    return all;
}

/* A task of the member: the piece just received (n bytes) into its
 * temporary file, laid out as its blocks (block b at b * capacity). */
static void store_piece(member_xfer *mx, const char *buf, int64_t n, int fd, const char *tmp)
{
    for (int64_t b = 0, pos = mx->done, o = 0; n > 0 && fd >= 0 && b < mx->nb && o < n; b++) {
        if (pos >= mx->bs[b]) {
            pos -= mx->bs[b];
            continue;
        }
        int64_t take = mx->bs[b] - pos < n - o ? mx->bs[b] - pos : n - o;
        if (pwrite(fd, buf + o, (size_t)take, b * mx->got.capacity + pos) != take) {
            par_ctx_fail(&mx->w->x, SHEAF_E_IO, "%s: writing the temporary copy %s failed", mx->w->bn, tmp);
            return;
        }
        o += take;
        pos = 0;
    }
}

/* Step "data" (G scatterv per round, at most PIECE_MAX bytes per task): each
 * task's stream in block order. */
static void data_step(member_xfer *mx, const char *tmp)
{
    par_ctx *x = &mx->w->x;
    char *buf = malloc((size_t)mx->piece), dummy[8];
    int fd = -1;
    if (!buf)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", mx->w->bn);
    if (mx->mine && tmp && (fd = open(tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        par_ctx_fail(x, SHEAF_E_IO, "%s: cannot write the temporary copy %s", mx->w->bn, tmp);
    for (int64_t r = 0; r < mx->rounds; r++) {
        int64_t n = mx->total - mx->done < mx->piece ? mx->total - mx->done : mx->piece;
        if (!mx->mine || mx->got.status)
            n = 0;
        char *all = mx->me && mx->counts && mx->ttotal ? reader_round(mx) : NULL;
        par_ctx_scatterv(x, 0, buf ? buf : dummy, all ? all : dummy, _SION_CHAR, mx->counts, buf ? (int)n : 0,
                         mx->root);
        free(all);
        if (buf && par_ctx_ok(x))
            store_piece(mx, buf, n, fd, tmp);
        mx->done += n;
    }
    if (fd >= 0)
        close(fd);
    free(buf);
}

/* Every task, member f (read by task root): the heads, block tables and data
 * of its tasks; on a task of member f, its head and block table (*bs_out)
 * and its data in the temporary file tmp. */
static void serve_member(bropen *w, int f, int root, par_wire_bhead *head, int64_t **bs_out, const char *tmp)
{
    par_ctx *x = &w->x;
    member_xfer mx;
    memset(&mx, 0, sizeof mx);
    mx.w = w;
    mx.f = f;
    mx.root = root;
    mx.me = x->grank == root;
    mx.mine = w->loc[2 * x->grank] == f;
    int64_t nin = 0; /* tasks of member f: the piece size follows from it on every task */
    for (int t = 0; t < x->gsize; t++)
        nin += w->loc[2 * t] == f;
    mx.piece = nin ? ROUND_MAX / nin : PIECE_MAX;
    mx.piece = mx.piece > PIECE_MAX ? PIECE_MAX : mx.piece < 4096 ? 4096 : mx.piece;
    tables_step(&mx, mx.me ? reader_heads(&mx) : NULL);
    data_step(&mx, tmp);
    free(mx.heads);
    free(mx.counts);
    free(mx.ttotal);
    free(mx.tdone);
    if (mx.in_open)
        core_file_close(&mx.in);
    if (mx.me)
        core_meta_free(&mx.m);
    if (mx.mine) {
        *head = mx.got;
        *bs_out = mx.bs;
        if (mx.got.status)
            par_ctx_fail(x, (int)mx.got.status,
                         "%s: task %d's entry could not be read by the task holding member %d "
                         "(see its message)",
                         w->bn, x->grank, f);
        if (mx.done != mx.total)
            par_ctx_fail(x, SHEAF_E_IO, "%s: %lld of %lld bytes received", w->bn, (long long)mx.done,
                         (long long)mx.total);
    } else {
        free(mx.bs);
    }
}

/* Step "partner" (the partner path): this task's data through its member's
 * reader, into a private temporary file it then reads. */
static void via_reader(bropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "partner");
    const char *td = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/sheaf-buddy-XXXXXX", td && *td ? td : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0)
        par_ctx_fail(x, SHEAF_E_IO, "%s: cannot create a temporary file in %s", w->bn, td && *td ? td : "/tmp");
    else
        close(fd);
    par_wire_bhead head = {SHEAF_E_IO, 0, 0, 0, 0, 0};
    int64_t *bs = NULL;
    for (int f = 0; f < w->nf; f++) /* every task, every member: the readers serve in turn */
        serve_member(w, f, (int)w->reader[f], &head, &bs, fd >= 0 ? tmp : NULL);
    core_mode rm = *w->a->md;
    rm.buddy = 0;
    if (par_ctx_ok(x)) {
        core_attach_spec sp = {tmp, 0, head.capacity, head.capacity, x->grank, head.nblocks, bs, NULL};
        par_ctx_take(x, core_attach_tasks(&w->c, tmp, &rm, 0, 1, &sp));
    }
    if (fd >= 0)
        unlink(tmp); /* the attached container keeps it open */
    if (par_ctx_ok(x)) {
        w->c->keyval = (int)head.keyval;
        w->c->data_big = (int)head.data_big;
        w->c->fsblksize = (int32_t)head.fsblksize;
        w->chunk = head.capacity;
        w->fsb = (int32_t)head.fsblksize;
    }
    free(bs);
}

/* Step "mapping" (G bcast from member 0's reader): the verdict, then
 * (member, entry) of every task. Returns non-zero when it failed (on every task). */
static int mapping_step(bropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "mapping");
    int root = (int)w->reader[0];
    par_wire_verdict v = {0, -1};
    if (x->grank == root) {
        int rc = par_ctx_take(x, locate(x->api, w->bn, x->gsize, w->loc));
        v = (par_wire_verdict){rc, rc ? root : -1};
    }
    par_wire_verdict_pack(&v, w->lbuf);
    par_ctx_bcast(x, 0, w->lbuf, _SION_INT64, PAR_WIRE_VERDICT_N + 2 * x->gsize, root);
    int64_t st = take_verdict(x, "buddy mapping", w->lbuf, w->loc, 2 * (int64_t)x->gsize, 0, INT32_MAX);
    for (int g = 0; !st && g < x->gsize; g++)
        if (w->loc[2 * g] >= w->nf)
            st = par_ctx_fail(x, SHEAF_E_FORMAT, "%s: the buddy copy's mapping names member %lld of %d", w->bn,
                              (long long)w->loc[2 * g], w->nf);
    if (st)
        par_ctx_verdict(x, (int)st,
                        "%s: the buddy copy's mapping could not be read or sent (task %d read it; "
                        "see its message)",
                        w->bn, root);
    return st != 0;
}

/* Step "direct" (G gather of par_wire_bsees + G bcast of par_wire_bdirect):
 * whether every task reads its own entry itself, and the verdict so far.
 * Returns non-zero when a task failed (on every task). */
static int direct_step(bropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "direct");
    par_wire_bsees me = {par_ctx_ok(x) && visible(x->api, w->bn, (int)w->loc[2 * x->grank]), x->rc}, e;
    par_wire_bdirect v = {SHEAF_E_IO, -1, 0};
    int64_t buf[PAR_WIRE_BSEES_N], *all = NULL, vb[PAR_WIRE_BDIRECT_N];
    par_wire_bsees_pack(&me, buf);
    if (x->grank == 0 && !(all = par_root_malloc((size_t)x->gsize * sizeof buf, "direct")))
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", w->a->fname);
    par_ctx_gather(x, 0, buf, all, _SION_INT64, PAR_WIRE_BSEES_N, 0);
    if (x->grank == 0) {
        v = (par_wire_bdirect){all ? 0 : x->rc, all ? -1 : 0, all != NULL};
        for (int t = 0; all && t < x->gsize; t++) {
            int rc = par_wire_bsees_unpack(&e, all + (size_t)PAR_WIRE_BSEES_N * t, PAR_WIRE_BSEES_N);
            v.direct = v.direct && !rc && e.sees;
            if (!v.status && (rc || e.status)) { /* refused by task 0: it fails, with its reason */
                v.status = rc ? par_ctx_take(x, rc) : e.status;
                v.who = rc ? 0 : t;
            }
        }
    }
    free(all);
    par_wire_bdirect_pack(&v, vb);
    par_ctx_bcast(x, 0, vb, _SION_INT64, PAR_WIRE_BDIRECT_N, 0);
    if (par_wire_bdirect_unpack(&v, vb, PAR_WIRE_BDIRECT_N))
        v.status = par_ctx_take(x, SHEAF_E_FORMAT); /* the same bytes everywhere: all refuse them */
    w->direct = (int)v.direct;
    if (v.status)
        par_ctx_verdict(x, (int)v.status, "%s: %s failed on task %lld (see its message)", w->a->fname, x->call,
                        (long long)v.who);
    return v.status != 0;
}

/* Step "state" (local): the task's sid on its copy entry. */
static void state_step(bropen *w)
{
    par_ctx *x = &w->x;
    par_ctx_step(x, "state");
    if (!par_ctx_ok(x))
        return;
    par_state *p = w->p = par_open_state_new(x->api, w->a->fname, x->gcomm, x->grank, x->gsize);
    if (!p) {
        par_ctx_take(x, SHEAF_E_NOMEM);
        return;
    }
    p->lrank = (int)w->loc[2 * x->grank + 1];
    for (int t = 0; t < x->gsize; t++) /* the tasks of its member (its collector entries not counted) */
        p->lsize += w->loc[2 * t] == w->loc[2 * x->grank];
    p->filenumber = (int)w->loc[2 * x->grank];
    p->nfiles = w->nf;
    p->fsblksize = w->fsb;
    p->mode = *w->a->md; /* buddy level kept: a buddy read (sion_get_io_info) */
    p->buddy_cur = -1;
    par_label_task(w->c, 0, p->filenumber, p->lrank, p->nfiles);
    w->c->par = p;
    char **nn = w->a->newfname;
    if (nn && !(*nn = strdup(w->a->fname))) /* SIONlib gives the name opened, also from a copy */
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", w->a->fname);
    w->named = nn && *nn;
    if (par_ctx_ok(x) && (w->sid = api_register(w->c)) < 0)
        par_ctx_take(x, w->sid);
}

/* Step "agree": the sid and the caller's outputs on every task, or the agreed failure. */
static int agree_step(bropen *w)
{
    par_ctx *x = &w->x;
    const par_open_args *a = w->a;
    par_ctx_step(x, "agree");
    if (par_ctx_agree(x)) {
        par_open_undo(w->sid, w->c, 0, w->named ? a->newfname : NULL);
        par_state_free(w->p);
        return par_ctx_restore(x);
    }
    par_state *p = w->p;
    if (a->fileptr)
        *a->fileptr = w->c->files[0].f.fp;
    if (a->chunksize)
        *a->chunksize = w->chunk;
    if (a->fsblksize)
        *a->fsblksize = w->fsb;
    if (a->filenumber)
        *a->filenumber = p->filenumber;
    if (a->numfiles)
        *a->numfiles = p->nfiles;
    if (a->lrank)
        *a->lrank = p->lrank;
    if (a->lsize)
        *a->lsize = p->lsize;
    return w->sid;
}

/* The steps up to the entry's data (returns non-zero when the open failed
 * on every task before). */
static int locate_steps(bropen *w)
{
    par_ctx *x = &w->x;
    int64_t nf = members_step(w);
    if (!nf)
        return par_ctx_verdict(x, SHEAF_E_NOTFOUND, "%s: no task can open the buddy copy", w->bn);
    w->nf = (int)nf;
    w->rbuf = calloc((size_t)(PAR_WIRE_VERDICT_N + nf), sizeof *w->rbuf);
    w->vis = calloc((size_t)(PAR_WIRE_VERDICT_N + nf), sizeof *w->vis);
    w->lbuf = calloc((size_t)PAR_WIRE_VERDICT_N + 2 * (size_t)x->gsize, sizeof *w->lbuf);
    if (!w->rbuf || !w->vis || !w->lbuf)
        par_ctx_fail(x, SHEAF_E_NOMEM, "%s: out of memory", w->bn);
    /* every task has its buffers before the exchanges sized by nf and gsize, or all fail here */
    par_ctx_step(x, "buffers");
    if (par_ctx_vote(x) || !par_ctx_ok(x))
        return x->rc ? x->rc : SHEAF_E_IO;
    w->reader = w->rbuf + PAR_WIRE_VERDICT_N;
    w->loc = w->lbuf + PAR_WIRE_VERDICT_N;
    if (readers_step(w) || mapping_step(w))
        return x->rc;
    return direct_step(w);
}

static void bropen_free(bropen *w)
{
    free(w->rbuf);
    free(w->vis);
    free(w->lbuf);
    free(w->bn);
}

int par_buddy_open_read(const par_open_args *a, int level)
{
    bropen w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.sid = -1;
    par_ctx_init(&w.x, a->api, a->fname, "sion_generic_paropen (buddy copy)", a->gcomm, a->grank, a->gsize);
    if (!(w.bn = par_buddy_name(a->fname, level))) /* the same name length everywhere: all tasks fail alike */
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", a->fname);
    if (locate_steps(&w)) {
        bropen_free(&w);
        return par_ctx_restore(&w.x);
    }
    par_ctx_step(&w.x, "read");
    if (w.direct) {
        char *path = par_member_path(a->api, w.bn, (int)w.loc[2 * a->grank]);
        par_ctx_take(&w.x, path ? attach_entry(path, a->md, a->grank, w.loc[2 * a->grank + 1], &w.c, &w.chunk, &w.fsb)
                                : core_fail(SHEAF_E_NOMEM, "%s: out of memory", a->fname));
        free(path);
    } else {
        via_reader(&w);
    }
    state_step(&w);
    int sid = agree_step(&w);
    bropen_free(&w);
    return sid;
}
