/* mapped.c - sion_generic_paropen_mapped / parclose_mapped: each task of the
 * global group handles several logical tasks (m:n).
 *
 * Global rank 0 coordinates: it gathers every logical task's description,
 * creates and finishes all physical files (write) or reads the whole set
 * (read), and scatters each process its tasks' layout. Memory O(N logical
 * tasks) on rank 0 only, O(own tasks) elsewhere; a constant number of
 * collectives, all over the global group:
 *   write open : gather (count, status), bcast (can rank 0 take them),
 *                gatherv (task records), bcast verdict, scatterv (layouts),
 *                agree (gather + bcast)
 *   write close: gather (block total, status), bcast (can rank 0 take them),
 *                gatherv (block counts), gatherv (block sizes), agree
 *   read open  : gather (count), bcast (can rank 0 take them), gatherv
 *                (wanted tasks), bcast verdict, scatter (own task count),
 *                scatterv (task records), scatterv (block tables), agree
 * (A bcast before each gatherv makes its counts agree on all tasks even when
 * rank 0 cannot take the data.)
 *   read close : agree
 * A process may own no logical task (write: none given; read: none
 * requested, or none left by the automatic distribution when there are more
 * processes than tasks), as in SIONlib: it takes part in the collectives and
 * gets a sid that only the mapped close accepts. */
#include "mapped_int.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

void par_mapped_root_free(mapped_root *r)
{
    if (!r)
        return;
    for (int k = 0; r->meta && k < r->nfiles; k++)
        core_meta_free(&r->meta[k]);
    free(r->meta);
    free(r->pcount);
    free(r->rec);
    free(r);
}

/* The tasks of this process (n of them) attached to their files; with no
 * task (SIONlib allows a process to own none) an empty container that only
 * the mapped close accepts. */
int par_mapped_attach_own(core_container **c, const char *fname, const core_mode *md, int write, int32_t n,
                      const core_attach_spec *sp)
{
    if (n > 0)
        return core_attach_tasks(c, fname, md, write, n, sp);
    core_mode m = *md;
    m.write = write;
    if (!(*c = core_container_new(fname, &m)))
        return SHEAF_E_NOMEM;
    (*c)->attached = 1;
    return 0;
}

static const char *const mo_names[MO_N] = {"the file mode (read or write)", "the number of files (numFiles)",
                                           "the file system block size (fsblksize)", "the key-value mode (keyval)"};

/* First step of every mapped call: gather (count, status, options) of each
 * process to rank 0, which checks that the options agree (opts NULL: a close,
 * nothing to compare), allocates what it needs (alloc(total) returns 0 or a
 * code) and broadcasts (status, total, disagreement). On rank 0 *pcount
 * receives the counts (malloc'd). Returns the agreed status (0 ok) on every
 * task, with a message naming a disagreement. */
int par_mapped_count_phase(const par_api *api, const char *fname, void *gcomm, int grank, int gsize, int64_t count,
                       int rc, const int64_t *opts, int **pcount, int64_t limit,
                       int (*alloc)(void *ctx, int64_t total), void *ctx, int64_t *total_out, int *cbfail_out)
{
    int64_t head[HEAD_N] = {count, rc}, *heads = NULL, dummy[HEAD_N];
    int64_t verdict[6] = {0, 0, -1, -1, 0, 0}; /* status, total, disagreeing task, option, its value, task 0's */
    if (opts && !rc)
        memcpy(head + 2, opts, MO_N * sizeof *opts);
    int culprit = -1;
    if (grank == 0) {
        heads = malloc((size_t)gsize * sizeof head);
        *pcount = malloc((size_t)gsize * sizeof **pcount);
        if (!heads || !*pcount)
            verdict[0] = core_fail(SHEAF_E_NOMEM, "%s: out of memory on task 0", fname);
    }
    int cbfail = api->gather(head, heads ? heads : dummy, gcomm, _SION_INT64, HEAD_N, 0) != 0;
    *cbfail_out = grank != 0 && cbfail; /* a task whose callback failed goes on and fails at the agreement */
    if (grank == 0 && !verdict[0]) {
        for (int g = 0; g < gsize; g++) {
            const int64_t *e = heads + HEAD_N * g;
            if (e[1] && !verdict[0]) {
                verdict[0] = e[1];
                culprit = g;
            }
            for (int f = 0; f < MO_N && !verdict[0] && !heads[1]; f++)
                if (e[2 + f] != heads[2 + f]) {
                    verdict[0] = SHEAF_E_ARG;
                    verdict[2] = g;
                    verdict[3] = f;
                    verdict[4] = e[2 + f];
                    verdict[5] = heads[2 + f];
                }
            (*pcount)[g] = (int)e[0];           /* -1: "distribute for me" (mapped read) */
            verdict[1] += e[0] > 0 ? e[0] : 0;
        }
        if (!verdict[0] && verdict[1] > limit)
            verdict[0] = core_fail(SHEAF_E_ARG, "%s: %lld entries are too many for one mapped call", fname,
                                   (long long)verdict[1]);
        if (!verdict[0] && cbfail)
            verdict[0] = core_fail(SHEAF_E_IO, "%s: the gather callback failed on task 0", fname);
        if (!verdict[0])
            verdict[0] = alloc(ctx, verdict[1]);
    }
    free(heads);
    if (api->bcast(verdict, gcomm, _SION_INT64, 6, 0))
        *cbfail_out = 1; /* go on with what it delivered */
    *total_out = verdict[1];
    if (verdict[0] && verdict[2] >= 0 && verdict[3] >= 0 && verdict[3] < MO_N) {
        int f = (int)verdict[3];
        if (f == MO_WRITE)
            return core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen_mapped: the tasks disagree on %s: task 0 opens "
                             "for %s, task %lld for %s (it must be the same on every task)", fname, mo_names[f],
                             verdict[5] ? "writing" : "reading", (long long)verdict[2],
                             verdict[4] ? "writing" : "reading");
        return core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen_mapped: the tasks disagree on %s: task 0 gives %lld, "
                         "task %lld gives %lld (it must be the same on every task)", fname, mo_names[f],
                         (long long)verdict[5], (long long)verdict[2], (long long)verdict[4]);
    }
    if (verdict[0] && !rc) {
        if (grank == 0 && culprit > 0)
            return core_fail((int)verdict[0], "%s: the mapped call failed on task %d (see its message)", fname,
                             culprit);
        if (grank != 0)
            return core_fail((int)verdict[0], "%s: a mapped call failed on another task (task 0 reports it)", fname);
    }
    return (int)verdict[0];
}

/* counts[g] = pcount[g] * k on rank 0 when ok, zeros otherwise (NULL off rank 0). */
int *par_mapped_scaled_counts(const int *pcount, int gsize, int k, int ok, int grank)
{
    if (grank != 0)
        return NULL;
    int *c = calloc((size_t)gsize, sizeof *c);
    for (int i = 0; c && ok && i < gsize; i++)
        c[i] = pcount[i] > 0 ? pcount[i] * k : 0;
    return c;
}

int sion_generic_paropen_mapped(int aid, char *fname, const char *mode, int *numFiles, void *gcommgroup, int grank,
                                int gsize, int *nlocaltasks, int **globalranks, sion_int64 **chunksizes,
                                int **mapping_filenrs, int **mapping_lranks, sion_int32 *fsblksize, FILE **fileptr)
{
    core_clear_error();
    par_api api;
    const char *nm = fname ? fname : "(null)";
    if (par_api_get(aid, &api, nm))
        goto fail;
    if (gsize < 1 || grank < 0 || grank >= gsize) {
        core_fail(SHEAF_E_ARG, "%s: task %d of %d tasks is not possible", nm, grank, gsize);
        goto fail;
    }
    core_mode md;
    memset(&md, 0, sizeof md);
    int rc = (!fname || !*fname) ? core_fail(SHEAF_E_ARG, "no file name given") : core_mode_parse(mode, &md);
    if (!rc && !md.explicit_rw)
        rc = core_fail(SHEAF_E_ARG, "%s: file mode \"%s\" says neither write (w, wb, bw) nor read (r, rb, br)", nm,
                       mode ? mode : "(null)");
    if (!rc && (!numFiles || !nlocaltasks))
        rc = core_fail(SHEAF_E_ARG, "%s: sion_generic_paropen_mapped needs numFiles and nlocaltasks", nm);
    int write = rc ? (mode && strchr(mode, 'w') != NULL) : md.write;
    int sid;
    if (write && !rc && (md.checksum || md.buddy || md.collective)) {
        if (grank == 0)
            core_warn(grank, "%s: a mapped write keeps no checksums, no buddy copies and does no coalescing "
                      "(mode keys ignored)", nm);
        md.checksum = md.buddy = md.collective = 0;
    }
    if (write) {
        int nl = rc ? 0 : *nlocaltasks;
        if (!rc && (nl < 0 || (nl > 0 && (!globalranks || !*globalranks || !chunksizes || !*chunksizes ||
                                          !mapping_filenrs || !*mapping_filenrs || !mapping_lranks ||
                                          !*mapping_lranks))))
            rc = core_fail(SHEAF_E_ARG, "%s: a mapped write needs nlocaltasks >= 0 and the arrays globalranks, "
                           "chunksizes, mapping_filenrs and mapping_lranks", nm);
        if (rc)
            nl = 0;
        int zero = 1;
        sid = par_mapped_write(&api, nm, &md, rc, rc ? &zero : numFiles, gcommgroup, grank, gsize, nl,
                           nl ? *globalranks : NULL, nl ? *chunksizes : NULL, nl ? *mapping_filenrs : NULL,
                           nl ? *mapping_lranks : NULL, fsblksize, fileptr);
    } else {
        sid = par_mapped_read(&api, nm, &md, rc, numFiles, gcommgroup, grank, gsize, nlocaltasks, globalranks,
                          chunksizes, mapping_filenrs, mapping_lranks, fsblksize, fileptr);
    }
    if (sid >= 0)
        return sid;
fail:
    core_report_error_rc(grank, SION_ID_UNDEF);
    return SION_ID_UNDEF;
}

int sion_generic_parclose_mapped(int sid)
{
    core_clear_error();
    core_container *c = api_lookup(sid, "sion_generic_parclose_mapped");
    par_state *p = c ? c->par : NULL;
    if (c && (!p || !p->mapped || c->dup)) {
        core_fail(SHEAF_E_ARG, "%s: sion_generic_parclose_mapped: sid %d was not opened with a mapped open", c->name,
                  sid);
        c = NULL;
    }
    if (!c) { /* SIONlib: SION_ID_NOT_VALID, as the non-mapped close */
        core_report_error_rc(-1, SION_ID_NOT_VALID);
        return SION_ID_NOT_VALID;
    }
    api_release(sid);
    c->par = NULL;
    int rc;
    if (p->write) {
        rc = par_mapped_close_write(c, p); /* frees c */
    } else {
        rc = core_close(c);
    }
    int arc = par_agree(&p->api, p->gcomm, p->grank, p->gsize, rc, p->fname, "sion_generic_parclose_mapped");
    int grank = p->grank;
    par_mapped_root_free(p->root);
    p->root = NULL;
    par_state_free(p);
    if (arc) {
        core_report_error(grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
