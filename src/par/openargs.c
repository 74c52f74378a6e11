/* openargs.c - the first exchange of a parallel open: every task's arguments
 * and options to task 0, compared there, one verdict back (openargs.h). */
#include "openargs.h"
#include "ctx.h"
#include "../core/error.h"
#include "sion.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQ_N (4 + PO_N) /* status, filenumber, lrank, lsize, options */
#define VERDICT_N 12

static const char *const opt_names[PO_N] = {
    "the file mode (read or write)",       "the number of files (numFiles)", "the file system block size (fsblksize)",
    "the key-value mode (keyval)",         "checksums (checksum)",           "coalescing I/O (collective)",
    "the collector group size (collsize)", "merged coalescing (cmerge)",     "buddy copies (buddy)",
    "the data endianness (endianness)"};

void par_open_req_init(par_open_req *r, int rc, int write, const core_mode *md, const int *numfiles,
                       const sion_int32 *fsblksize, const int *filenumber, const int *lrank, const int *lsize)
{
    memset(r, 0, sizeof *r);
    r->status = rc;
    r->lsize = 1;
    r->opt[PO_WRITE] = write;
    if (rc)
        return; /* the options of a task that failed are not compared */
    r->opt[PO_KEYVAL] = md->keyval;
    r->opt[PO_COLL] = md->collective;
    r->opt[PO_COLLSIZE] = md->collective ? md->collsize : -1;
    r->opt[PO_CMERGE] = md->cmerge;
    r->opt[PO_BUDDY] = md->buddy;
    if (!write)
        return; /* the rest are outputs of a read, or do not matter there */
    r->opt[PO_CHECKSUM] = md->checksum;
    r->opt[PO_ENDIAN] = md->data_big;
    r->opt[PO_NFILES] = numfiles ? *numfiles : 0;
    r->opt[PO_FSBLK] = fsblksize && *fsblksize > 0 ? *fsblksize : -1; /* <= 0: detect */
    r->filenumber = filenumber ? *filenumber : 0;
    r->lrank = lrank ? *lrank : 0;
    r->lsize = lsize ? *lsize : 1;
}

static void req_pack(const par_open_req *r, int64_t *e)
{
    e[0] = r->status;
    e[1] = r->filenumber;
    e[2] = r->lrank;
    e[3] = r->lsize;
    memcpy(e + 4, r->opt, sizeof r->opt);
}

int64_t par_open_req_get(const int64_t *all, int g, int field)
{
    const int64_t *e = all + (size_t)REQ_N * (size_t)g;
    return field >= 0 ? e[4 + field] : e[-field - 1];
}

static void verdict_pack(const par_open_verdict *v, int64_t *e)
{
    int64_t t[VERDICT_N] = {v->reason,    v->who,         v->field,  v->v0,     v->v1,     v->cbfail,
                            v->fsblksize, v->file0master, v->status, v->nfiles, v->ntasks, 0};
    memcpy(e, t, sizeof t);
}

static void verdict_unpack(const int64_t *e, par_open_verdict *v)
{
    *v = (par_open_verdict){e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10]};
}

static void opt_value(int field, int64_t x, char *buf, size_t len)
{
    switch (field) {
    case PO_WRITE:
        snprintf(buf, len, "%s", x ? "writing" : "reading");
        break;
    case PO_KEYVAL:
        snprintf(buf, len, "%s", sion_keyval_type_to_str((int)x));
        break;
    case PO_CHECKSUM:
    case PO_COLL:
    case PO_CMERGE:
        snprintf(buf, len, "%s", x ? "on" : "off");
        break;
    case PO_FSBLK:
    case PO_COLLSIZE:
        if (x < 0) {
            snprintf(buf, len, "%s", field == PO_FSBLK ? "-1 (detect)" : "not given");
            break;
        }
        snprintf(buf, len, "%lld", (long long)x);
        break;
    case PO_ENDIAN:
        snprintf(buf, len, "%s", x < 0 ? "host" : x ? "big" : "little");
        break;
    default:
        snprintf(buf, len, "%lld", (long long)x);
        break;
    }
}

static int verdict_message(const par_open_verdict *v, const char *fname)
{
    char a[64], b[64];
    switch (v->reason) {
    case SPLIT_TASK: /* the failing task's code on every task */
        return core_fail(v->status < 0 ? (int)v->status : SHEAF_E_ARG,
                         "%s: sion_generic_paropen failed on task "
                         "%lld (see its message)",
                         fname, (long long)v->who);
    case SPLIT_DISAGREE:
        opt_value((int)v->field, v->v0, a, sizeof a);
        opt_value((int)v->field, v->v1, b, sizeof b);
        return core_fail(SHEAF_E_ARG,
                         "%s: sion_generic_paropen: the tasks disagree on %s: task 0 gives %s, task "
                         "%lld gives %s (it must be the same on every task)",
                         fname, v->field >= 0 && v->field < PO_N ? opt_names[v->field] : "an option", a,
                         (long long)v->who, b);
    case SPLIT_NUMFILES:
        return core_fail(SHEAF_E_ARG,
                         "%s: sion_generic_paropen: task %lld gives a different number of files than "
                         "task 0",
                         fname, (long long)v->who);
    case SPLIT_LSIZE:
        return core_fail(SHEAF_E_ARG,
                         "%s: sion_generic_paropen: task %lld gives a local size that does not match "
                         "the number of tasks in its file",
                         fname, (long long)v->who);
    case SPLIT_LRANK:
        return core_fail(SHEAF_E_ARG,
                         "%s: sion_generic_paropen: task %lld gives a local rank that is out of range "
                         "or taken by another task of its file",
                         fname, (long long)v->who);
    case SPLIT_EMPTYFILE:
        return core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen: physical file %lld has no tasks", fname,
                         (long long)v->who);
    case SPLIT_FSBLK:
        return core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen: invalid file system block size %lld", fname,
                         (long long)v->who);
    case SPLIT_NOMEM:
        return core_fail(SHEAF_E_NOMEM, "%s: sion_generic_paropen: task 0 ran out of memory checking the split", fname);
    default:
        return core_fail(SHEAF_E_IO, "%s: sion_generic_paropen: task 0 refused the open", fname);
    }
}

int par_check_split(const int64_t *all, int gsize, int64_t *who, int64_t *file0master)
{
    int64_t nf = par_open_req_get(all, 0, PO_NFILES);
    int64_t *lsz = calloc((size_t)nf, sizeof *lsz), *cnt = calloc((size_t)nf, sizeof *cnt);
    int64_t *base = calloc((size_t)nf + 1, sizeof *base);
    unsigned char *seen = calloc((size_t)gsize, 1);
    int reason = SPLIT_OK;
    if (!lsz || !cnt || !base || !seen) {
        reason = SPLIT_NOMEM;
        goto out;
    }
    for (int g = 0; g < gsize && !reason; g++) {
        int64_t f = par_open_req_get(all, g, -2), ls = par_open_req_get(all, g, -4);
        if (cnt[f]++ == 0)
            lsz[f] = ls;
        else if (lsz[f] != ls) {
            *who = g;
            reason = SPLIT_LSIZE;
        }
    }
    for (int64_t k = 0; k < nf && !reason; k++) {
        if (cnt[k] == 0) {
            *who = k;
            reason = SPLIT_EMPTYFILE;
        } else if (cnt[k] != lsz[k]) {
            for (int g = 0; g < gsize; g++)
                if (par_open_req_get(all, g, -2) == k) {
                    *who = g;
                    break;
                }
            reason = SPLIT_LSIZE;
        }
        base[k + 1] = base[k] + cnt[k];
    }
    for (int g = 0; g < gsize && !reason; g++) {
        int64_t f = par_open_req_get(all, g, -2), lr = par_open_req_get(all, g, -3);
        int64_t slot = base[f] + lr; /* lrank < lsize == cnt checked by each task */
        if (seen[slot]) {
            *who = g;
            reason = SPLIT_LRANK;
        }
        seen[slot] = 1;
        if (f == 0 && lr == 0)
            *file0master = g;
    }
out:
    free(lsz);
    free(cnt);
    free(base);
    free(seen);
    return reason;
}

int par_open_exchange(const par_api *api, const char *fname, void *gcomm, int grank, int gsize,
                      const par_open_req *mine, par_open_root_fn root, void *ctx, par_open_verdict *v, int *cbfail)
{
    int64_t me[REQ_N], *all = NULL, out[VERDICT_N];
    par_open_verdict w = {SPLIT_OK, 0, -1, 0, 0, 0, -1, -1, 0, 0, 0};
    req_pack(mine, me);
    *cbfail = 0;
    int skipped = 0;
    if (grank == 0 && !(all = par_root_malloc((size_t)gsize * sizeof me, "options")))
        w.reason = SPLIT_NOMEM; /* still takes part (rootbuf.c) */
    if (par_gather_root_safe(api, gcomm, me, all, _SION_INT64, REQ_N, 0, grank == 0, gsize, &skipped)) {
        if (grank == 0)
            w.cbfail = 1;
        else
            *cbfail = 1; /* its record may have arrived: go on, fail at the agreement */
    }
    if (grank == 0 && all && !w.cbfail) {
        for (int g = 0; g < gsize && !w.reason; g++) {
            if (par_open_req_get(all, g, -1)) {
                w.reason = SPLIT_TASK;
                w.who = g;
                w.status = par_open_req_get(all, g, -1);
            }
            for (int f = 0; f < PO_N && !w.reason; f++) {
                int64_t a = par_open_req_get(all, 0, f), b = par_open_req_get(all, g, f);
                if (a != b)
                    w = (par_open_verdict){SPLIT_DISAGREE, g, f, a, b, 0, -1, -1, 0, 0, 0};
            }
        }
        if (!w.reason && root)
            root(ctx, all, gsize, &w);
    }
    free(all);
    verdict_pack(&w, out);
    if (api->bcast(out, gcomm, _SION_INT64, VERDICT_N, 0))
        *cbfail = 1; /* go on with what it delivered */
    verdict_unpack(out, v);
    if (v->cbfail)
        return core_fail(SHEAF_E_IO, "%s: sion_generic_paropen: the gather callback failed on task 0", fname);
    if (v->reason == SPLIT_ROOT) /* task 0 keeps its own message */
        return grank == 0 ? (int)v->status
                          : core_fail((int)v->status,
                                      "%s: task 0 could not read the container's first file (see "
                                      "its message)",
                                      fname);
    if (v->reason == SPLIT_TASK && mine->status) /* this task's own message stays, the first failing task's code */
        return v->status < 0 ? (int)v->status : (int)mine->status;
    if (v->reason)
        return verdict_message(v, fname);
    return 0;
}
