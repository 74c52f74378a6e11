/* close.c - sion_generic_parclose: write close (detach, L gather block
 * counts, L gatherv block sizes, G gather mapping to file 0's master for a
 * multi-file set, masters write META2, G agree); read close (detach, G agree). */
#include "open_int.h"
#include "../sid/sid.h"
#include "../core/endian.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Look up a parallel (non-mapped) sid; NULL with a message otherwise. */
core_container *par_open_lookup(int sid, const char *call, int mapped)
{
    core_container *c = api_lookup(sid, call);
    if (!c)
        return NULL;
    par_state *p = c->par;
    if (c->dup) {
        core_fail(SHEAF_E_ARG, "%s: sid %d is a duplicate (sion_dup); release it with sion_dedup", call, sid);
        return NULL;
    }
    if (!p) {
        core_fail(SHEAF_E_ARG, "%s: sid %d was opened with the serial API; close it with sion_close", call, sid);
        return NULL;
    }
    if (p->mapped != mapped) {
        core_fail(SHEAF_E_ARG, "%s: sid %d was opened with %s", call, sid,
                  p->mapped ? "a mapped open: use the mapped close" : "a non-mapped open: use the non-mapped close");
        return NULL;
    }
    return c;
}

/* Master of a checksummed file at close: flat holds, per task, its block
 * sizes then its block checksums; keep the sizes in flat (task order, as
 * core_par_write_tail_at wants them) and the checksums in meta.crcs. */
static int split_checksums(par_state *p, int64_t *flat, const int64_t *bcount)
{
    int64_t total = 0;
    for (int t = 0; t < p->lsize; t++)
        total += bcount[t];
    free(p->meta.crcs);
    p->meta.crcs = malloc((size_t)(total ? total : 1) * sizeof *p->meta.crcs);
    if (!p->meta.crcs)
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory for the checksums", p->fname);
    p->meta.ncrcs = total;
    int64_t in = 0, out = 0;
    for (int t = 0; t < p->lsize; t++) {
        for (int64_t b = 0; b < bcount[t]; b++)
            flat[out + b] = flat[in + b];
        for (int64_t b = 0; b < bcount[t]; b++)
            p->meta.crcs[out + b] = (uint32_t)flat[in + bcount[t] + b];
        in += 2 * bcount[t];
        out += bcount[t];
    }
    return 0;
}

int sion_generic_parclose(int sid)
{
    core_clear_error();
    core_container *c = par_open_lookup(sid, "sion_generic_parclose", 0);
    if (!c) { /* SIONlib: SION_ID_NOT_VALID for a sid that is not open (e.g. closed already) */
        core_report_error_rc(-1, SION_ID_NOT_VALID);
        return SION_ID_NOT_VALID;
    }
    par_state *p = c->par;
    const par_api *api = &p->api;
    int brc = p->write && p->nbuddy ? par_buddy_close_write(p) : 0; /* the copies first; agreed below */
    par_buddy_free(p);
    api_release(sid);
    c->par = NULL;
    int rc = brc;
    if (p->write) {
        /* the task's data and block table */
        int r0 = core_sync(c);
        if (!rc)
            rc = r0;
        int ck = p->mode.checksum; /* decided by the master at open: every task sends sizes + checksums */
        if (!rc && ck)
            rc = core_cksum_finish_task(c, 0);
        int64_t nb = c->tasks[0].nblocks;
        int64_t *bs = malloc((size_t)nb * (ck ? 2 : 1) * sizeof *bs);
        if (bs) {
            memcpy(bs, c->tasks[0].bsize, (size_t)nb * sizeof *bs);
            for (int64_t b = 0; ck && b < nb; b++)
                bs[nb + b] = c->tasks[0].crc_on ? c->tasks[0].bcrc[b] : 0;
        } else if (!rc) {
            rc = core_fail(SHEAF_E_NOMEM, "%s: out of memory", p->fname);
        }
        int r2 = core_detach_task(c, NULL, NULL);
        if (!rc)
            rc = r2;
        if (!bs)
            nb = 0;
        if (nb > INT32_MAX / 2) { /* more than one gatherv count can carry: this task fails and sends none */
            if (!rc)
                rc = core_fail(SHEAF_E_ARG, "%s: %lld blocks: more than a parallel close can gather (%d)", p->fname,
                               (long long)nb, INT32_MAX / 2);
            free(bs);
            bs = NULL;
            nb = 0;
        }
        /* L1 + L2: block counts and sizes to the master (announced and sent alike) */
        int64_t mine[2] = {nb, rc}, *cnt = NULL, dummy[2];
        int64_t *flat = NULL;
        int *counts = NULL, cbfail = 0, mrc = 0;
        if (p->lrank == 0) {
            cnt = malloc((size_t)p->lsize * sizeof mine);
            counts = malloc((size_t)p->lsize * sizeof *counts);
            if (!cnt || !counts)
                mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
        }
        if (api->gather(mine, cnt ? cnt : dummy, p->lcomm, _SION_INT64, 2, 0))
            cbfail = 1;
        int64_t total = 0, *bcount = NULL;
        if (p->lrank == 0 && cnt && counts) {
            bcount = malloc((size_t)p->lsize * sizeof *bcount);
            for (int t = 0; t < p->lsize; t++) {
                counts[t] = (int)cnt[2 * t] * (ck ? 2 : 1); /* as each task announced it */
                total += counts[t];
                if (bcount)
                    bcount[t] = cnt[2 * t];
            }
            flat = malloc((size_t)(total ? total : 1) * sizeof *flat);
            if (!flat || !bcount) {
                mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory on the master of file %d", p->fname, p->filenumber);
                for (int t = 0; t < p->lsize; t++)
                    counts[t] = 0;
            }
        }
        if (api->gatherv(bs ? bs : dummy, flat ? flat : dummy, p->lcomm, _SION_INT64, counts,
                         bs ? (int)nb * (ck ? 2 : 1) : 0, 0))
            cbfail = 1;
        free(bs);
        if (p->lrank == 0 && ck && flat && bcount && !mrc) /* [sizes, checksums] per task -> two tables */
            mrc = split_checksums(p, flat, bcount);
        /* G: the mapping to the task writing file 0 (multi-file only) */
        int32_t *map = NULL, me[2] = {p->filenumber, p->lrank}, mdummy[2];
        if (p->nfiles > 1) {
            if (p->grank == p->file0master && !(map = malloc((size_t)p->gsize * sizeof me)))
                mrc = core_fail(SHEAF_E_NOMEM, "%s: out of memory for the task mapping", p->fname);
            if (api->gather(me, map ? map : mdummy, p->gcomm, _SION_INT32, 2, p->file0master))
                cbfail = 1;
        }
        if (p->lrank == 0) {
            if (!mrc && cbfail)
                mrc = core_fail(SHEAF_E_IO, "%s: a collective callback failed while closing", p->fname);
            if (!mrc && p->have_meta) {
                char *path = par_member_path(api, p->fname, p->filenumber);
                /* the metadata is written even when a task failed: what the others
                 * wrote stays readable */
                mrc = path ? core_par_write_tail_at(path, p->fname, &p->meta, bcount, flat,
                                                    p->filenumber == 0 && p->nfiles > 1 ? map : NULL, p->gsize)
                           : SHEAF_E_NOMEM;
                free(path);
            }
            for (int t = 0; t < p->lsize && cnt && !mrc; t++)
                if (cnt[2 * t + 1] && !rc)
                    rc = core_fail((int)cnt[2 * t + 1], "%s: task %d of file %d failed writing its data", p->fname,
                                   t, p->filenumber);
            if (!rc)
                rc = mrc;
        }
        if (!rc && cbfail)
            rc = core_fail(SHEAF_E_IO, "%s: a collective callback failed while closing", p->fname);
        free(map);
        free(cnt);
        free(counts);
        free(flat);
        free(bcount);
    } else {
        int r0 = core_close(c);
        if (!rc)
            rc = r0;
    }
    int arc = par_agree(api, p->gcomm, p->grank, p->gsize, rc, p->fname, "sion_generic_parclose");
    int grank = p->grank;
    par_open_state_drop(p);
    if (arc) {
        core_report_error(grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
