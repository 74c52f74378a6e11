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
#include "par.h"
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

#define PIECE_MAX (8 << 20)    /* bytes per task and round of the data transfer, at most */
#define ROUND_MAX (64 << 20)   /* bytes a reader holds in one round, at most (but 4 KiB per task) */

static int visible(const par_api *api, const char *bn, int k)
{
    char *path = par_member_path(api, bn, k);
    struct stat st;
    int ok = path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

/* Step 1: the number of members and a reader for each (reader[nf]). */
static int find_readers(const par_api *api, const char *bn, void *gcomm, int grank, int gsize, int *nf_out,
                        int64_t **reader_out)
{
    int64_t nf = 0, *all = NULL, dummy[1];
    int rc = 0, cbf = 0;
    *reader_out = NULL;
    if (grank == 0 && !(all = malloc((size_t)gsize * sizeof *all)))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", bn);
    for (int k = 0; nf == 0; k++) { /* rounds: at most up to the first member someone sees */
        int64_t mine = -1;
        if (visible(api, bn, k)) {
            char *path = par_member_path(api, bn, k);
            core_meta m;
            if (path && !core_meta_read_path(path, &m)) {
                mine = m.nfiles > 0 ? m.nfiles : -1;
                core_meta_free(&m);
            }
            free(path);
        }
        if (api->gather(&mine, all ? all : dummy, gcomm, _SION_INT64, 1, 0))
            cbf = 1;
        if (grank == 0) {
            for (int t = 0; all && t < gsize && nf == 0; t++)
                if (all[t] > 0)
                    nf = all[t];
            if ((nf == 0 && k + 1 >= gsize) || !all || cbf)
                nf = -1; /* no member of the copy is visible anywhere */
        }
        if (api->bcast(&nf, gcomm, _SION_INT64, 1, 0))
            cbf = nf = -1;
    }
    free(all);
    if (nf < 0 || nf > gsize)
        return rc ? rc : core_fail(cbf ? SHEAF_E_IO : SHEAF_E_NOTFOUND, "%s: no task can open the buddy copy", bn);
    int64_t *vis = calloc((size_t)nf, sizeof *vis), *allv = NULL, *reader = malloc((size_t)(nf + 1) * sizeof *reader);
    if (!vis || !reader)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", bn);
    if (grank == 0 && !rc && !(allv = malloc((size_t)gsize * (size_t)nf * sizeof *allv)))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", bn);
    /* every task has its buffers before the exchanges sized by nf, or all fail here */
    if ((rc = par_agree(api, gcomm, grank, gsize, rc, bn, "sion_generic_paropen (buddy copy)"))) {
        free(vis);
        free(allv);
        free(reader);
        return rc;
    }
    for (int k = 0; vis && k < nf; k++)
        vis[k] = visible(api, bn, k);
    int64_t vdummy[1];
    if (api->gather(vis, allv ? allv : vdummy, gcomm, _SION_INT64, (int)nf, 0))
        cbf = 1;
    int64_t *rd = reader;
    if (grank == 0) {
        rd[0] = rc || cbf ? SHEAF_E_IO : 0;
        for (int k = 0; allv && !rd[0] && k < nf; k++) {
            rd[k + 1] = -1;
            for (int t = 0; t < gsize && rd[k + 1] < 0; t++)
                if (allv[(size_t)t * nf + k])
                    rd[k + 1] = t;
            if (rd[k + 1] < 0)
                rd[0] = SHEAF_E_NOTFOUND;
        }
    }
    if (api->bcast(rd, gcomm, _SION_INT64, (int)nf + 1, 0))
        cbf = 1;
    free(vis);
    free(allv);
    if (!rc && (cbf || rd[0]))
        rc = core_fail(cbf ? SHEAF_E_IO : (int)rd[0], "%s: a member of the buddy copy is visible to no task, or a "
                       "collective callback failed", bn);
    if (rc) {
        free(reader);
        return rc;
    }
    *nf_out = (int)nf;
    *reader_out = reader; /* [0] status, [1 + k] reader of member k */
    return 0;
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
        rc = core_fail(SHEAF_E_ARG, "%s: the buddy copy was written by %d tasks, %d read it", bn, m.mapping_size,
                       gsize);
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
        core_attach_spec sp = {path, m.starts[e], core_meta_capacity(&m, (int32_t)e), m.globalskip, grank, nb, bs,
                               NULL};
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

/* The reader of member f: the head (status, blocks, capacity, fsblksize,
 * keyval, data_big) of each task it serves, their block sizes, and the data
 * in rounds. Every task calls this for every member; tasks of other members
 * receive nothing. On a task of member f, *tmp gets its data file. */
typedef struct xfer {
    const par_api *api;
    void *gcomm;
    int grank, gsize;
    const int64_t *loc;     /* [2*gsize] member, entry */
} xfer;

#define HEAD 6
static int serve_member(const xfer *x, const char *bn, int f, int root, int64_t *head, int64_t **bs_out,
                        const char *tmp)
{
    const par_api *api = x->api;
    int me = x->grank == root, mine = x->loc[2 * x->grank] == f, rc = 0, cbf = 0, n = x->gsize;
    int64_t nin = 0; /* tasks of member f: the piece size follows from it on every task */
    for (int t = 0; t < n; t++)
        nin += x->loc[2 * t] == f;
    int64_t piece = nin ? ROUND_MAX / nin : PIECE_MAX;
    piece = piece > PIECE_MAX ? PIECE_MAX : piece < 4096 ? 4096 : piece;
    core_meta m;
    memset(&m, 0, sizeof m);
    core_file in;
    int in_open = 0;
    int64_t *heads = NULL, dummy[HEAD] = {0}, got[HEAD] = {SHEAF_E_IO, 0, 0, 0, 0, 0};
    int *counts = NULL;
    if (me) {
        char *path = par_member_path(api, bn, f);
        rc = path ? core_meta_read_path(path, &m) : core_fail(SHEAF_E_NOMEM, "%s: out of memory", bn);
        if (!rc && !(rc = core_file_open(&in, path, 0, 0)))
            in_open = 1;
        free(path);
        heads = calloc((size_t)n * HEAD, sizeof *heads);
        counts = calloc((size_t)n, sizeof *counts);
        if (!rc && (!heads || !counts))
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", bn);
        for (int t = 0; heads && t < n; t++) {
            if (x->loc[2 * t] != f)
                continue;
            int64_t e = x->loc[2 * t + 1], *h = heads + (size_t)t * HEAD;
            int bad = rc || e < 0 || e >= m.ntasks || m.globalranks[e] != t;
            h[0] = bad ? (rc ? rc : SHEAF_E_FORMAT) : 0;
            h[1] = bad ? 0 : m.blockcount[e];
            h[2] = bad ? 0 : core_meta_capacity(&m, (int32_t)e);
            h[3] = m.fsblksize;
            int kv = (int)(m.format >= 5 ? (m.flag1 >> 32) : 0);
            h[4] = kv ? kv : SION_KEYVAL_NONE;
            h[5] = m.data_big;
            if (counts)
                counts[t] = (int)h[1];
        }
    }
    int64_t *flat = NULL, k = 0;
    if (me && counts && heads) { /* the block tables, before the heads say how many each task gets */
        int64_t tot = 0;
        for (int t = 0; t < n; t++)
            tot += counts[t];
        if ((flat = malloc((size_t)(tot > 0 ? tot : 1) * sizeof *flat)))
            for (int t = 0; t < n; t++)
                for (int64_t b = 0; b < counts[t]; b++)
                    flat[k++] = m.blocksizes[b * m.ntasks + x->loc[2 * t + 1]];
        for (int t = 0; !flat && t < n; t++) { /* out of memory: every task of the member is told so */
            counts[t] = 0;
            if (x->loc[2 * t] == f) {
                heads[(size_t)t * HEAD] = SHEAF_E_NOMEM;
                heads[(size_t)t * HEAD + 1] = 0;
            }
        }
    }
    if (api->scatter(heads ? heads : dummy, got, x->gcomm, _SION_INT64, HEAD, root))
        cbf = 1;
    int64_t nb = mine && !got[0] && !cbf ? got[1] : 0, *bs = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *bs);
    if (api->scatterv(bs ? bs : dummy, flat ? flat : dummy, x->gcomm, _SION_INT64, counts, bs ? (int)nb : 0, root))
        cbf = 1;
    free(flat);
    /* the data: rounds of at most PIECE_MAX bytes per task, each task's stream in block order */
    int64_t total = 0, rounds = 0;
    for (int64_t b = 0; bs && b < nb; b++)
        total += bs[b];
    if (me) {
        for (int t = 0; heads && counts && t < n; t++) {
            int64_t tt = 0, *h = heads + (size_t)t * HEAD;
            if (x->loc[2 * t] != f || h[0])
                continue;
            for (int64_t b = 0; b < h[1]; b++)
                tt += m.blocksizes[b * m.ntasks + x->loc[2 * t + 1]];
            h[0] = tt; /* reused: the task's total */
            if ((tt + piece - 1) / piece > rounds)
                rounds = (tt + piece - 1) / piece;
        }
    }
    if (api->bcast(&rounds, x->gcomm, _SION_INT64, 1, root))
        cbf = 1;
    int fd = -1;
    if (mine && tmp && (fd = open(tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 && !rc)
        rc = core_fail(SHEAF_E_IO, "%s: cannot write the temporary copy %s", bn, tmp);
    char *buf = NULL, *all = NULL;
    if (!(buf = malloc((size_t)piece)) && !rc)
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", bn);
    int64_t done = 0, *tdone = me ? calloc((size_t)n, sizeof *tdone) : NULL;
    for (int64_t r = 0; r < rounds; r++) {
        int mycount = (int)(total - done < piece ? total - done : piece);
        if (!mine || got[0])
            mycount = 0;
        int64_t sum = 0;
        if (me && counts) {
            for (int t = 0; t < n; t++) {
                int64_t *h = heads + (size_t)t * HEAD;
                int64_t left = x->loc[2 * t] == f ? h[0] - (tdone ? tdone[t] : 0) : 0;
                counts[t] = left <= 0 ? 0 : (int)(left < piece ? left : piece);
                sum += counts[t];
            }
            free(all);
            if (!(all = malloc((size_t)(sum > 0 ? sum : 1))) && !rc)
                rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", bn);
            for (int t = 0, o = 0; all && !rc && t < n; o += counts[t], t++) { /* read each task's next piece */
                int64_t e = x->loc[2 * t + 1], pos = tdone[t], left = counts[t];
                for (int64_t b = 0; left > 0 && b < m.blockcount[e] && !rc; b++) {
                    int64_t bsz = m.blocksizes[b * m.ntasks + e];
                    if (pos >= bsz) {
                        pos -= bsz;
                        continue;
                    }
                    int64_t take = bsz - pos < left ? bsz - pos : left;
                    rc = core_file_pread(&in, all + o + (counts[t] - left), (size_t)take,
                                         m.starts[e] + b * m.globalskip + pos);
                    left -= take;
                    pos = 0;
                }
                tdone[t] += counts[t];
            }
            if (rc) /* nothing is sent: the tasks still receive (zeros are fine, the agreement fails) */
                memset(all ? all : buf, 0, all ? (size_t)sum : 1);
        }
        if (api->scatterv(buf ? buf : (char *)dummy, all ? all : (char *)dummy, x->gcomm, _SION_CHAR, counts,
                          buf ? mycount : 0, root))
            cbf = 1;
        /* into the temporary file, laid out as the task's blocks: block b at b * capacity */
        for (int64_t b = 0, pos = done, o = 0; mycount > 0 && fd >= 0 && !rc && b < nb && o < mycount; b++) {
            if (pos >= bs[b]) {
                pos -= bs[b];
                continue;
            }
            int64_t take = bs[b] - pos < mycount - o ? bs[b] - pos : mycount - o;
            if (pwrite(fd, buf + o, (size_t)take, b * got[2] + pos) != take)
                rc = core_fail(SHEAF_E_IO, "%s: writing the temporary copy %s failed", bn, tmp);
            o += take;
            pos = 0;
        }
        done += mycount;
    }
    if (fd >= 0)
        close(fd);
    free(all);
    free(buf);
    free(tdone);
    free(heads);
    free(counts);
    if (in_open)
        core_file_close(&in);
    core_meta_free(&m);
    if (!rc && cbf)
        rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed reading the buddy copy", bn);
    if (mine) {
        memcpy(head, got, sizeof got);
        *bs_out = bs;
        if (!rc && got[0])
            rc = core_fail((int)got[0], "%s: task %d's entry could not be read by the task holding member %d", bn,
                           x->grank, f);
        if (!rc && done != total)
            rc = core_fail(SHEAF_E_IO, "%s: %lld of %lld bytes received", bn, (long long)done, (long long)total);
    } else {
        free(bs);
    }
    return rc;
}

/* Step 3, partner path: this task's data through its member's reader, into a
 * private temporary file it then reads. */
static int via_reader(const xfer *x, const char *bn, int nf, const int64_t *reader, const core_mode *md,
                      core_container **out, int64_t *chunk, int32_t *fsb)
{
    const char *td = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/sheaf-buddy-XXXXXX", td && *td ? td : "/tmp");
    int fd = mkstemp(tmp), rc = 0;
    if (fd < 0)
        rc = core_fail(SHEAF_E_IO, "%s: cannot create a temporary file in %s", bn, td && *td ? td : "/tmp");
    else
        close(fd);
    int64_t head[HEAD] = {SHEAF_E_IO, 0, 0, 0, 0, 0}, *bs = NULL;
    for (int f = 0; f < nf; f++) { /* every task, every member: the readers serve in turn */
        int64_t h[HEAD] = {SHEAF_E_IO, 0, 0, 0, 0, 0}, *b = NULL;
        int r2 = serve_member(x, bn, f, (int)reader[f + 1], h, &b, fd >= 0 ? tmp : NULL);
        if (x->loc[2 * x->grank] == f) {
            memcpy(head, h, sizeof h);
            bs = b;
            if (r2 && !rc)
                rc = r2;
        }
    }
    core_mode rm = *md;
    rm.buddy = 0;
    if (!rc) {
        core_attach_spec sp = {tmp, 0, head[2], head[2], x->grank, head[1], bs, NULL};
        rc = core_attach_tasks(out, tmp, &rm, 0, 1, &sp);
    }
    if (fd >= 0)
        unlink(tmp); /* the attached container keeps it open */
    if (!rc) {
        (*out)->keyval = (int)head[4];
        (*out)->data_big = (int)head[5];
        (*out)->fsblksize = (int32_t)head[3];
        *chunk = head[2];
        *fsb = (int32_t)head[3];
    }
    free(bs);
    return rc;
}

int par_buddy_open_read(const par_api *api, const char *fname, const core_mode *md, int level, void *gcomm,
                        int grank, int gsize, sion_int64 *chunksize, sion_int32 *fsblksize, int *filenumber,
                        int *numfiles, int *lrank, int *lsize, FILE **fileptr, char **newfname)
{
    char *bn = par_buddy_name(fname, level);
    if (!bn) /* the same name length everywhere: all tasks fail alike */
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    int nf = 0, rc = 0, cbf = 0;
    int64_t *reader = NULL, *loc = malloc((size_t)gsize * 2 * sizeof *loc), dummy[2];
    rc = find_readers(api, bn, gcomm, grank, gsize, &nf, &reader);
    rc = par_agree(api, gcomm, grank, gsize, rc || !loc ? (rc ? rc : SHEAF_E_NOMEM) : 0, fname,
                   "sion_generic_paropen (buddy copy)");
    if (rc) {
        free(loc);
        free(reader);
        free(bn);
        return rc;
    }
    int64_t st = 0;
    if (grank == reader[1])
        st = locate(api, bn, gsize, loc);
    if (api->bcast(&st, gcomm, _SION_INT64, 1, (int)reader[1]) ||
        api->bcast(loc, gcomm, _SION_INT64, 2 * gsize, (int)reader[1]))
        cbf = 1;
    if (cbf || st)
        rc = core_fail(cbf ? SHEAF_E_IO : (int)st, "%s: the buddy copy's mapping could not be read or sent (task %d "
                       "read it)", bn, (int)reader[1]);
    /* do all tasks see their own member? then each reads its entry itself */
    int64_t see = !rc && visible(api, bn, (int)loc[2 * grank]), *sees = NULL, direct = 0;
    if (grank == 0 && !(sees = malloc((size_t)gsize * sizeof *sees)))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (api->gather(&see, sees ? sees : dummy, gcomm, _SION_INT64, 1, 0))
        cbf = 1;
    if (grank == 0) {
        direct = sees != NULL;
        for (int t = 0; sees && t < gsize; t++)
            direct = direct && sees[t];
    }
    free(sees);
    if (api->bcast(&direct, gcomm, _SION_INT64, 1, 0))
        cbf = 1;
    rc = par_agree(api, gcomm, grank, gsize, rc ? rc : cbf ? SHEAF_E_IO : 0, fname,
                   "sion_generic_paropen (buddy copy)");
    core_container *c = NULL;
    int64_t chunk = 0;
    int32_t fsb = 0;
    char *path = NULL;
    if (!rc && direct) {
        if (!(path = par_member_path(api, bn, (int)loc[2 * grank])))
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        else
            rc = attach_entry(path, md, grank, loc[2 * grank + 1], &c, &chunk, &fsb);
    } else if (!rc) {
        xfer x = {api, gcomm, grank, gsize, loc};
        rc = via_reader(&x, bn, nf, reader, md, &c, &chunk, &fsb);
    }
    free(path);
    par_state *p = NULL;
    int sid = -1, named = 0;
    if (!rc && (!(p = calloc(1, sizeof *p)) || !(p->fname = strdup(fname))))
        rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    if (!rc) {
        p->api = *api;
        p->gcomm = gcomm;
        p->grank = grank;
        p->gsize = gsize;
        p->lrank = (int)loc[2 * grank + 1];
        p->lsize = 0;
        for (int t = 0; t < gsize; t++) /* the tasks of its member (its collector entries not counted) */
            p->lsize += loc[2 * t] == loc[2 * grank];
        p->filenumber = (int)loc[2 * grank];
        p->nfiles = nf;
        p->fsblksize = fsb;
        p->mode = *md; /* buddy level kept: a buddy read (sion_get_io_info) */
        p->meta.mapping_size = -1;
        p->file0master = -1;
        p->collector = -1;
        p->buddy_cur = -1;
        par_label_task(c, 0, p->filenumber, p->lrank, p->nfiles);
        c->par = p;
        if (newfname && !(*newfname = strdup(fname))) /* SIONlib gives the name opened, also from a copy */
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
        named = newfname && *newfname;
        if (!rc && (sid = api_register(c)) < 0)
            rc = sid;
    }
    free(loc);
    free(reader);
    free(bn);
    int arc = par_agree(api, gcomm, grank, gsize, rc, fname, "sion_generic_paropen (buddy copy)");
    if (arc) {
        if (sid >= 0)
            api_release(sid);
        if (named) {
            free(*newfname);
            *newfname = NULL;
        }
        if (c) {
            c->par = NULL;
            core_close(c);
        }
        if (p)
            par_state_free(p);
        return arc;
    }
    if (fileptr)
        *fileptr = c->files[0].f.fp;
    if (chunksize) *chunksize = chunk;
    if (fsblksize) *fsblksize = fsb;
    if (filenumber) *filenumber = p->filenumber;
    if (numfiles) *numfiles = p->nfiles;
    if (lrank) *lrank = p->lrank;
    if (lsize) *lsize = p->lsize;
    return sid;
}
