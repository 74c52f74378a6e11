/* mapped.c - sion_generic_paropen_mapped / parclose_mapped: each task of the
 * global group handles several logical tasks (m:n).
 *
 * Global rank 0 coordinates: it gathers every logical task's description,
 * creates and finishes all physical files (write) or reads the whole set
 * (read), and scatters each process its tasks' layout. Memory O(N logical
 * tasks) on rank 0 only, O(own tasks) elsewhere; a constant number of
 * collectives, all over the global group (doc/parallel.md, "Mapped opens"):
 *   write open : counts (gather + bcast), records (gatherv), verdict (bcast),
 *                layouts (scatterv), agree (gather + bcast)
 *   write close: counts (gather + bcast: tasks and block entries in one
 *                head), block counts (gatherv), block sizes (gatherv), agree
 *   read open  : counts (gather + bcast), wanted tasks (gatherv), verdict
 *                (bcast), share (scatter), records (scatterv), block tables
 *                (scatterv), agree
 *   read close : agree
 * (The count step before the gathervs makes their counts agree on all tasks
 * even when rank 0 cannot take the data.) Every step runs on the per-call
 * context (ctx.h); the messages are wire.h's par_wire_m*. This file holds the
 * entry points, which dispatch to mapped_write.c and mapped_read.c; the steps
 * and helpers those share are in mapped_step.c, below them (mapped_int.h).
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
            core_warn(grank,
                      "%s: a mapped write keeps no checksums, no buddy copies and does no coalescing "
                      "(mode keys ignored)",
                      nm);
        md.checksum = md.buddy = md.collective = 0;
    }
    mapped_args a = {&api,           nm,        &md,         rc,          numFiles,   gcommgroup,
                     grank,          gsize,     nlocaltasks, globalranks, chunksizes, mapping_filenrs,
                     mapping_lranks, fsblksize, fileptr};
    sid = write ? par_mapped_write(&a) : par_mapped_read(&a);
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
    par_ctx x;
    par_ctx_init(&x, &p->api, p->fname, "sion_generic_parclose_mapped", p->gcomm, p->grank, p->gsize);
    if (p->write) {
        par_mapped_close_write(&x, c, p); /* frees c */
    } else {
        par_ctx_step(&x, "close");
        par_ctx_take(&x, core_close(c));
    }
    par_ctx_step(&x, "agree");
    int arc = par_ctx_agree(&x);
    int grank = p->grank;
    par_mapped_root_free(p->root);
    p->root = NULL;
    par_state_free(p);
    if (arc) {
        par_ctx_restore(&x);
        core_report_error(grank);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
