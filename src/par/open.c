/* open.c - sion_generic_paropen: the entry and the buddy wrappers. It
 * dispatches to the write open (open_write.c), the read open (open_read.c)
 * and the buddy copies (buddy.c, buddy_read.c); the helpers they share are
 * in open_task.c, below them all (open_int.h).
 *
 * The protocol (collectives in order; doc/parallel.md has the table):
 *   write open : G gather split -> G bcast verdict -> create local group ->
 *                L gather chunk sizes -> master creates the file (META1) ->
 *                L scatter layout -> tasks attach -> G agree (gather + bcast)
 *   read open  : task 0 reads file 0 -> G bcast header facts -> G scatter
 *                (file, lrank, lsize) -> create local group -> master reads its
 *                file -> L scatter task layout -> L scatterv block tables ->
 *                tasks attach -> G agree
 *   write close: tasks detach -> L gather block counts -> L gatherv block
 *                sizes -> (multi-file) G gather mapping to file 0's master ->
 *                masters write META2 (+ mapping) and the header -> G agree
 *   read close : detach -> G agree
 * Every task takes part in every collective even after a local failure, so
 * a failure never leaves another task waiting; G agree turns it into a
 * failure of the call on all tasks. */
#include "open_int.h"
#include "ctx.h"
#include "../sid/sid.h"
#include "../core/endian.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *shown(const char *fname) { return fname ? fname : "(null)"; }

static int valid_rw_mode(const char *mode, core_mode *md, const char *fname)
{
    int rc = core_mode_parse(mode, md);
    if (rc)
        return rc;
    if (!md->explicit_rw)
        return core_fail(SHEAF_E_ARG, "%s: file mode \"%s\" says neither write (w, wb, bw) nor read (r, rb, br)", fname,
                         mode ? mode : "(null)");
    return 0;
}

/* ---- buddy copies (buddy.c has the rest) ---------------------------------- */

/* After the write open of the container: open its buddy copies (buddy.c);
 * on failure (agreed, so on all tasks) release them and close the container. */
static int open_buddies_write(const par_open_args *a, int sid, sion_int64 chunk_req)
{
    if (sid < 0)
        return sid;
    core_container *c = api_lookup(sid, "sion_generic_paropen");
    par_state *p = c->par; /* a sid this open just registered */
    int levels = a->md->buddy > PAR_BUDDY_MAX ? PAR_BUDDY_MAX : a->md->buddy;
    int rc = par_buddy_open_write(p, levels, chunk_req, a->fname);
    if (!rc)
        return sid;
    int keep = sheaf_last_error_code();
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", sheaf_last_error());
    par_buddy_free(p);
    sion_generic_parclose(sid);
    return core_fail(keep ? keep : SHEAF_E_IO, "%s", msg);
}

/* Read open in buddy mode: the container, else the first buddy copy that opens. */
static int open_buddy_read(const par_open_args *a, int sid)
{
    if (sid >= 0) {
        core_container *c = api_lookup(sid, "sion_generic_paropen");
        if (c && c->par) /* opened with buddy (sion_get_io_info) */
            ((par_state *)c->par)->mode.buddy = a->md->buddy;
        return sid;
    }
    char why[1024];
    snprintf(why, sizeof why, "%s", sheaf_last_error());
    int levels = a->md->buddy > PAR_BUDDY_MAX ? PAR_BUDDY_MAX : a->md->buddy;
    for (int b = 1; b <= levels; b++) {
        char *bn = par_buddy_name(a->fname, b);
        if (!bn)
            return core_fail(SHEAF_E_NOMEM, "%s: out of memory", a->fname);
        int bsid = par_buddy_open_read(a, b);
        if (bsid >= 0) {
            if (a->grank == 0)
                core_warn(a->grank, "%s: cannot be read (%s); reading its buddy copy %s", a->fname, why, bn);
            free(bn);
            return bsid;
        }
        free(bn);
    }
    return core_fail(SHEAF_E_NOTFOUND,
                     "%s: neither the container nor any of its %d buddy copies can be read "
                     "(container: %s)",
                     a->fname, levels, why);
}

int sion_generic_paropen(int aid, const char *fname, const char *mode, sion_int64 *chunksize, sion_int32 *fsblksize,
                         void *gcommgroup, int grank, int gsize, int *filenumber, int *numfiles, const int *lrank,
                         const int *lsize, FILE **fileptr, char **newfname)
{
    core_clear_error();
    par_api api;
    const char *nm = shown(fname);
    if (par_api_get(aid, &api, nm))
        goto fail;
    if (gsize < 1 || grank < 0 || grank >= gsize) {
        core_fail(SHEAF_E_ARG, "%s: task %d of %d tasks is not possible", nm, grank, gsize);
        goto fail;
    }
    core_mode md;
    int mrc = fname && *fname ? valid_rw_mode(mode, &md, nm) : core_fail(SHEAF_E_ARG, "no file name given");
    if (mrc)
        memset(&md, 0, sizeof md);
    /* a mode every task parses the same way decides the path; a task whose
     * mode fails still follows its w/r so that it meets the others */
    int write = mrc ? (mode && strchr(mode, 'w') != NULL) : md.write;
    int sid, agreed = 1;
    sion_int64 chunk_req = chunksize ? *chunksize : 0;
    /* SIONlib hands lrank/lsize back in read mode through these pointers */
    par_open_args a = {&api,
                       nm,
                       &md,
                       mrc,
                       chunksize,
                       fsblksize,
                       gcommgroup,
                       grank,
                       gsize,
                       filenumber,
                       numfiles,
                       (int *)(uintptr_t)lrank,
                       (int *)(uintptr_t)lsize,
                       fileptr,
                       newfname};
    sid = write ? par_open_write(&a) : par_open_read(&a, &agreed);
    /* buddy levels are among the options every task agreed on (a write that
     * failed tries no copy; a read whose options disagreed neither) */
    if (!mrc && md.buddy > 0 && agreed)
        sid = write ? open_buddies_write(&a, sid, chunk_req) : open_buddy_read(&a, sid);
    if (sid >= 0) {
        /* SIONlib's open takes and gives back internal handles through its
         * sid table: its lock callbacks are called 6 times per task, and on
         * task 0 2 (write) or 8 (read) more; sheaf's tables need 2 per task
         * (task 0 of a read: 3). Measured with SIONlib 1.7.6's OpenMP layer
         * (src/sid/README.md). */
        api_lock_ticks(4 + (grank != 0 ? 0 : write ? 2 : 7));
        return sid;
    }
fail:
    core_report_error_rc(grank, SION_ID_UNDEF);
    return SION_ID_UNDEF;
}
