/* coll.c - coalescing (collective) I/O: sion_coll_fwrite / sion_coll_fread.
 *
 * Each task of a physical file belongs to a group of consecutive tasks; the
 * group's first task is its collector (core/collective.c decides, the file's
 * master scatters the roles with the open's layout). In a collective call
 * every task does its own bookkeeping (core_coll_reserve / core_coll_take:
 * which bytes of which block, exactly as an individual call would) and hands
 * its (file offset, length) spec and data to the API's gather_and_execute
 * (write) or execute_and_scatter (read) callback; the collector's process
 * callback does the I/O for the whole group. The collector streams senders
 * one at a time and combines adjacent pieces in one buffer of about a file
 * system block (PAR_COLL_BUF), so its extra memory is bounded and the file
 * sees few large writes. Calls that cannot be coalesced fall back per task:
 * data larger than a chunk (written individually, across blocks), a read
 * that leaves the current block, files opened without coalescing, mapped
 * opens, key-value containers. Merge mode (cmerge) writes the whole group's
 * data into the collector's own stream. */
#define _FILE_OFFSET_BITS 64
#include "par.h"
#include "../sid/sid.h"
#include "../core/collective.h"
#include "../core/error.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

#define PAR_COLL_BUF_MIN (64 * 1024)
#define PAR_COLL_BUF_MAX (16 * 1024 * 1024)

int par_coll_capability(const par_api *api, void *lcomm)
{
    return api->capability ? api->capability(lcomm) : SION_CAPABILITY_FULL;
}

int par_coll_plan(const par_api *api, const core_mode *md, core_mode *md_out, int32_t ls, int64_t *cs,
                  const int32_t *caps, int32_t fsb, int write, par_coll_roles *roles, int grank, const char *fname)
{
    *md_out = *md;
    memset(roles, 0, sizeof *roles);
    int collsize;
    if (!core_coll_wanted(md, ls, &collsize))
        return 0;
    if (!api->gather_exec || !api->exec_scatter) {
        /* (api is a copy: its name is not kept, see par_api_get) */
        core_warn(grank,
                  "%s: collective I/O requested, but the generic API has no gather_and_execute and "
                  "execute_and_scatter callbacks: sion_coll_* do individual I/O",
                  fname);
        return 0;
    }
    roles->collector = malloc((size_t)ls * sizeof *roles->collector);
    roles->groupsize = malloc((size_t)ls * sizeof *roles->groupsize);
    roles->span = malloc((size_t)ls * sizeof *roles->span);
    int rc = !roles->collector || !roles->groupsize || !roles->span
                 ? core_fail(SHEAF_E_NOMEM, "%s: out of memory planning collective I/O", fname)
                 : core_coll_layout_cap(fname, ls, cs, caps, fsb, collsize, md->cmerge, write, roles->collector,
                                        roles->groupsize, roles->span);
    if (rc) {
        par_coll_roles_free(roles);
        return rc;
    }
    md_out->packed = write;
    return 1;
}

void par_coll_roles_free(par_coll_roles *roles)
{
    free(roles->collector);
    free(roles->groupsize);
    free(roles->span);
    memset(roles, 0, sizeof *roles);
}

void par_coll_fill(int64_t *e, int32_t t, const par_coll_roles *roles, const int64_t *starts, int merge)
{
    if (!roles || !roles->collector) {
        e[0] = -1;
        e[1] = 1;
        e[2] = 0;
        e[3] = 0;
        e[4] = 0;
        return;
    }
    int32_t c = roles->collector[t];
    e[0] = c;
    e[1] = roles->groupsize[t];
    e[2] = roles->span[t];
    e[3] = starts[c];
    e[4] = merge;
}

void par_coll_set(par_state *p, const int64_t *e)
{
    p->coll = e[0] >= 0;
    p->collector = (int)e[0];
    p->groupsize = (int)e[1];
    p->span = e[2];
    p->collstart = e[3];
    p->merge = p->coll && e[4];
}

/* ---- collector side --------------------------------------------------- */
static core_file *coll_file(core_container *c) { return &c->files[0].f; }

/* A sender's spec must name bytes inside the group's chunks of some block row. */
static int spec_ok(core_container *c, par_state *p, int64_t off, int64_t len)
{
    int64_t skip = c->files[0].m.globalskip;
    if (len <= 0 || off < p->collstart || skip <= 0)
        return 0;
    int64_t rel = (off - p->collstart) % skip;
    return rel <= p->span && len <= p->span - rel;
}

static int coll_flush(core_container *c, par_state *p)
{
    if (!p->cbuf_len)
        return 0;
    int rc = core_file_seek(coll_file(c), p->cbuf_off);
    if (!rc)
        rc = core_file_write(coll_file(c), p->cbuf, (size_t)p->cbuf_len);
    p->cbuf_len = 0;
    return rc;
}

static int coll_put(core_container *c, par_state *p, const void *buf, int64_t off, int64_t len)
{
    int rc = 0;
    if (p->cbuf_len && (off != p->cbuf_off + p->cbuf_len || p->cbuf_len + len > p->cbuf_cap))
        rc = coll_flush(c, p);
    if (rc)
        return rc;
    if (len >= p->cbuf_cap) { /* a piece as large as the buffer goes straight out */
        rc = core_file_seek(coll_file(c), off);
        return rc ? rc : core_file_write(coll_file(c), buf, (size_t)len);
    }
    if (!p->cbuf_len)
        p->cbuf_off = off;
    memcpy(p->cbuf + p->cbuf_len, buf, (size_t)len);
    p->cbuf_len += len;
    return 0;
}

static par_state *coll_state(int sid, core_container **cp)
{
    core_container *c = api_lookup(sid, "collective I/O");
    *cp = c;
    return c ? c->par : NULL;
}

/* A process callback's answer: keep the collector's first failure, -1/0 for the layer. */
static int coll_result(par_state *p, int rc)
{
    if (rc && !p->coll_rc)
        p->coll_rc = rc;
    return rc ? -1 : 0;
}

static int process_write(const void *data, sion_int64 *spec, int sid)
{
    core_container *c;
    par_state *p = coll_state(sid, &c);
    if (!p)
        return -1;
    int rc;
    if (spec[1] <= 0) { /* nothing from this sender, or the layer's end of the group: write out */
        rc = coll_flush(c, p);
        if (!rc)
            rc = core_file_flush(coll_file(c));
        return coll_result(p, rc);
    }
    if (!spec_ok(c, p, spec[0], spec[1]))
        rc = core_fail(SHEAF_E_ARG,
                       "%s: collector was asked to write %lld bytes at offset %lld, outside its "
                       "group's chunks",
                       c->name, (long long)spec[1], (long long)spec[0]);
    else
        rc = coll_put(c, p, data, spec[0], spec[1]);
    return coll_result(p, rc);
}

/* Merge mode: the collector appends each sender's data to its own stream.
 * A sender's contribution is written as one piece, as SIONlib does (a new
 * block when it does not fit in the rest of the current one), although the
 * layer may deliver it in smaller pieces: they are collected in the
 * collector buffer until the next sender starts (a piece at offset 0), the
 * end-of-group marker, or the end of the call (merge_flush). */
static int merge_flush(core_container *c, par_state *p)
{
    if (p->cbuf_len <= 0)
        return 0;
    int64_t n = p->cbuf_len;
    p->cbuf_len = 0;
    return core_write(c, p->cbuf, (uint64_t)n);
}

static int process_merge(const void *data, sion_int64 *spec, int sid)
{
    core_container *c;
    par_state *p = coll_state(sid, &c);
    if (!p)
        return -1;
    if (!data || spec[0] < 0) /* end of the group */
        return coll_result(p, merge_flush(c, p));
    if (spec[1] <= 0)
        return 0;
    int rc = spec[0] == 0 ? merge_flush(c, p) : 0; /* a new sender */
    if (!rc && p->cbuf && p->cbuf_len + spec[1] > p->cbuf_cap)
        rc = merge_flush(c, p); /* more than the buffer holds: written in parts */
    if (!rc && p->cbuf && spec[1] <= p->cbuf_cap) {
        memcpy(p->cbuf + p->cbuf_len, data, (size_t)spec[1]);
        p->cbuf_len += spec[1];
    } else if (!rc) {
        rc = core_write(c, data, (uint64_t)spec[1]);
    }
    return coll_result(p, rc);
}

static int process_read(void *data, sion_int64 *spec, int sid)
{
    core_container *c;
    par_state *p = coll_state(sid, &c);
    if (!p)
        return -1;
    if (spec[1] <= 0)
        return 0;
    int rc;
    if (!spec_ok(c, p, spec[0], spec[1]))
        rc = core_fail(SHEAF_E_ARG,
                       "%s: collector was asked to read %lld bytes at offset %lld, outside its "
                       "group's chunks",
                       c->name, (long long)spec[1], (long long)spec[0]);
    else
        rc = core_file_pread(coll_file(c), data, (size_t)spec[1], spec[0]);
    return coll_result(p, rc);
}

/* ---- the calls ----------------------------------------------------------- */
/* The same answer on every task of a file: p->coll and the keyval mode come
 * from the file's master (reads of checksummed files: the master leaves
 * coalescing off, each task verifies its own blocks). */
static int coalescing(core_container *c)
{
    par_state *p = c->par;
    return p && p->coll && !p->mapped && c->ntasks == 1 && c->keyval != SION_KEYVAL_INLINE;
}

static int count_bytes(size_t size, size_t nitems, core_container *c, const char *call, int64_t *n)
{
    if (size && nitems > (size_t)(INT64_MAX / 4) / size)
        return core_fail(SHEAF_E_ARG, "%s: %s of %zu items of %zu bytes is too large", c->name, call, nitems, size);
    *n = (int64_t)(size * nitems);
    return 0;
}

static int collector_begin(par_state *p, const char *name)
{
    p->coll_rc = 0;
    p->cbuf_len = 0;
    if (p->cbuf)
        return 0;
    int64_t cap = p->fsblksize;
    cap = cap < PAR_COLL_BUF_MIN ? PAR_COLL_BUF_MIN : cap > PAR_COLL_BUF_MAX ? PAR_COLL_BUF_MAX : cap;
    if (!(p->cbuf = malloc((size_t)cap)))
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory for the collector buffer (%lld bytes)", name,
                         (long long)cap);
    p->cbuf_cap = cap;
    return 0;
}

/* sion_coll_fwrite without coalescing, in buddy mode. */
static size_t buddy_fwrite(core_container *c, const void *data, size_t size, size_t nitems, int sid)
{
    int64_t n = 0;
    int rc = count_bytes(size, nitems, c, "sion_coll_fwrite", &n);
    if (!rc && n > 0 && !data)
        rc = core_fail(SHEAF_E_ARG, "%s: sion_coll_fwrite: data is NULL", c->name);
    if (!rc && n > 0)
        rc = core_write(c, data, (uint64_t)n);
    rc = par_buddy_coll_write(c, sid, data, rc ? 0 : n, rc);
    if (rc) {
        core_report_error(((par_state *)c->par)->grank);
        return 0;
    }
    return size ? (size_t)(n / (int64_t)size) : 0;
}

size_t sion_coll_fwrite(const void *data, size_t size, size_t nitems, int sid)
{
    LOOKUP(sid, "sion_coll_fwrite", 0);
    if (c->dup) {
        core_fail(SHEAF_E_ARG, "%s: sion_coll_fwrite on a sion_dup copy (collective calls need the original sid)",
                  c->name);
        FAIL(0);
    }
    if (!coalescing(c) && !(c->par && ((par_state *)c->par)->nbuddy))
        return sion_fwrite(data, size, nitems, sid);
    if (!coalescing(c)) /* buddy mode: written individually, then the copies through the partners */
        return buddy_fwrite(c, data, size, nitems, sid);
    par_state *p = c->par;
    int64_t n = 0;
    sion_int64 spec[2] = {-1, 0};
    int rc = count_bytes(size, nitems, c, "sion_coll_fwrite", &n);
    int me = p->lrank == p->collector, merge = p->merge;
    if (!rc && n > 0 && !data)
        rc = core_fail(SHEAF_E_ARG, "%s: sion_coll_fwrite: data is NULL", c->name);
    if (!rc && me)
        rc = collector_begin(p, c->name);
    if (!rc && n > 0) {
        if (merge) {
            if (me)
                rc = core_write(c, data, (uint64_t)n);
            else
                spec[0] = 0, spec[1] = n;
        } else if (n <= c->tasks[0].chunksize) {
            int64_t off = 0;
            rc = core_coll_reserve(c, data, n, &off);
            spec[0] = off;
            if (!rc)
                spec[1] = n;
        } else {
            rc = core_write(c, data, (uint64_t)n); /* larger than a chunk: individually, across blocks */
        }
    }
    if (!rc && me && !merge && spec[1] > 0)
        rc = coll_put(c, p, data, spec[0], spec[1]);
    /* every task calls: a layer's callback may synchronize the whole local group */
    int cb = p->api.gather_exec(data, spec, 2, p->fsblksize, p->lcomm, p->collector, p->collector + 1,
                                p->collector + p->groupsize - 1, sid, merge ? process_merge : process_write);
    if (me) {
        int r2 = merge ? merge_flush(c, p) : coll_flush(c, p);
        int r3 = merge ? 0 : core_place(c); /* the handle back at this task's own cursor */
        if (!rc)
            rc = p->coll_rc ? p->coll_rc : r2 ? r2 : r3;
    }
    if (!rc && cb)
        rc = core_fail(SHEAF_E_IO,
                       "%s: sion_coll_fwrite: the collector (local task %d) could not write the "
                       "group's data",
                       c->name, p->collector);
    if (p->nbuddy) /* collective: also after a failure */
        rc = par_buddy_coll_write(c, sid, data, n, rc);
    if (rc) {
        core_report_error(p->grank);
        return 0;
    }
    return size ? (size_t)(n / (int64_t)size) : 0;
}

size_t sion_coll_fread(void *data, size_t size, size_t nitems, int sid)
{
    LOOKUP(sid, "sion_coll_fread", 0);
    if (c->dup) {
        core_fail(SHEAF_E_ARG, "%s: sion_coll_fread on a sion_dup copy (collective calls need the original sid)",
                  c->name);
        FAIL(0);
    }
    par_state *p = c->par;
    if (!coalescing(c) || p->merge) /* a merged container is read individually */
        return sion_fread(data, size, nitems, sid);
    int64_t n = 0;
    sion_int64 spec[2] = {-1, 0};
    uint64_t got = 0;
    int rc = count_bytes(size, nitems, c, "sion_coll_fread", &n);
    int me = p->lrank == p->collector;
    p->coll_rc = 0;
    if (!rc && n > 0 && !data)
        rc = core_fail(SHEAF_E_ARG, "%s: sion_coll_fread: data is NULL", c->name);
    if (!rc && n > 0) {
        int64_t off = 0;
        int r = core_coll_take(c, n, &off);
        spec[0] = off;
        if (r == 1)
            spec[1] = n;
        else if (r == 0) /* not inside the current block: individually */
            rc = core_read(c, data, (uint64_t)n, &got);
        else
            rc = r;
    }
    if (!rc && me && spec[1] > 0 && process_read(data, spec, sid))
        rc = p->coll_rc ? p->coll_rc : SHEAF_E_IO;
    /* every task calls: a layer's callback may synchronize the whole local group */
    int cb = p->api.exec_scatter(data, spec, 2, p->fsblksize, p->lcomm, p->collector, p->collector + 1,
                                 p->collector + p->groupsize - 1, sid, process_read);
    if (me) {
        int r3 = core_place(c);
        if (!rc)
            rc = p->coll_rc ? p->coll_rc : r3;
    }
    if (!rc && cb)
        rc = core_fail(SHEAF_E_IO,
                       "%s: sion_coll_fread: the collector (local task %d) could not read the "
                       "group's data",
                       c->name, p->collector);
    if (rc) {
        core_report_error(p->grank);
        return 0;
    }
    if (spec[1] > 0)
        got = (uint64_t)n;
    return size ? (size_t)(got / size) : 0;
}
