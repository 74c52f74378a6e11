/* serial.c - sion_open, sion_open_rank, sion_close. */
#include "../sid/sid.h"
#include "../core/error.h"
#include "sion.h"
#include <stdlib.h>
#include <string.h>

static int fail_id(void)
{
    core_report_error_rc(-1, SION_ID_UNDEF);
    return SION_ID_UNDEF;
}

static FILE *export_fp(core_container *c) { return c->files[0].f.fp; }

/* sion_open for writing: one physical file from the caller's task table. */
static int serial_create(core_container **c, char *fname, const core_mode *mode, const int *ntasks, int *nfiles,
                         sion_int64 **chunksizes, sion_int32 *fsblksize, int **globalranks)
{
    const char *shown = fname ? fname : "(null)";
    if (!ntasks || !chunksizes || !*chunksizes)
        return core_fail(SHEAF_E_ARG, "%s: sion_open for writing needs ntasks and chunksizes", shown);
    if (nfiles && *nfiles > 1)
        return core_fail(SHEAF_E_ARG,
                         "%s: the serial API writes one physical file (nfiles=%d requested); "
                         "use a parallel open for multi-file sets",
                         shown, *nfiles);
    int n = *ntasks > 0 ? *ntasks : 0;
    int64_t *gr = NULL, *cs = malloc((size_t)(n ? n : 1) * sizeof *cs);
    if (cs && globalranks && *globalranks)
        gr = malloc((size_t)(n ? n : 1) * sizeof *gr);
    if (!cs || (globalranks && *globalranks && !gr)) {
        free(cs);
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    }
    for (int t = 0; t < n; t++) {
        cs[t] = (*chunksizes)[t];
        if (gr)
            gr[t] = (*globalranks)[t];
    }
    int rc = core_create(c, fname, mode, *ntasks, cs, gr, fsblksize);
    free(gr);
    free(cs);
    if (rc)
        return rc;
    if (nfiles)
        *nfiles = 1;
    /* the caller's chunksizes stay as given: SIONlib's serial write open
     * aligns only its own copy (so do the parallel opens) */
    return 0;
}

/* The task table of an open container into the caller's arrays (allocated here when
 * *chunksizes / *globalranks are NULL: the caller's only on success). */
static int export_tasks(core_container *c, const char *fname, sion_int64 **chunksizes, int **globalranks)
{
    sion_int64 *own_cs = NULL;
    int *own_gr = NULL;
    if (chunksizes) {
        if (!*chunksizes)
            *chunksizes = own_cs = malloc((size_t)c->ntasks * sizeof **chunksizes);
        if (*chunksizes)
            for (int t = 0; t < c->ntasks; t++)
                (*chunksizes)[t] = c->tasks[t].chunksize;
    }
    if (globalranks) {
        if (!*globalranks)
            *globalranks = own_gr = malloc((size_t)c->ntasks * sizeof **globalranks);
        if (*globalranks)
            for (int t = 0; t < c->ntasks; t++)
                (*globalranks)[t] = (int)c->tasks[t].globalrank;
    }
    if ((chunksizes && !*chunksizes) || (globalranks && !*globalranks)) {
        if (own_cs)
            *chunksizes = NULL;
        if (own_gr)
            *globalranks = NULL;
        free(own_cs);
        free(own_gr);
        return core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    }
    return 0;
}

/* sion_open for reading: the container, its key-value mode checked, its description out. */
static int serial_open_read(core_container **cp, char *fname, core_mode *mode, int *ntasks, int *nfiles,
                            sion_int64 **chunksizes, sion_int32 *fsblksize, int **globalranks)
{
    int rc = core_open_read(cp, fname, mode);
    if (rc)
        return rc;
    core_container *c = *cp;
    if (mode->keyval != SION_KEYVAL_NOTSET && mode->keyval != SION_KEYVAL_UNKNOWN && mode->keyval != c->keyval) {
        rc = core_fail(SHEAF_E_ARG, "%s: mode asks for key-value mode %s but the file has %s", fname,
                       sion_keyval_type_to_str(mode->keyval), sion_keyval_type_to_str(c->keyval));
        core_close(c);
        return rc;
    }
    if (ntasks)
        *ntasks = c->ntasks;
    if (nfiles)
        *nfiles = c->nfiles;
    if (fsblksize)
        *fsblksize = c->fsblksize;
    if ((rc = export_tasks(c, fname, chunksizes, globalranks)))
        core_close(c);
    return rc;
}

int sion_open(char *fname, const char *file_mode, int *ntasks, int *nfiles, sion_int64 **chunksizes,
              sion_int32 *fsblksize, int **globalranks, FILE **fileptr)
{
    core_clear_error();
    core_mode mode;
    if (core_mode_parse(file_mode, &mode))
        return fail_id();
    core_container *c = NULL;
    if (mode.write ? serial_create(&c, fname, &mode, ntasks, nfiles, chunksizes, fsblksize, globalranks)
                   : serial_open_read(&c, fname, &mode, ntasks, nfiles, chunksizes, fsblksize, globalranks))
        return fail_id();
    if (fileptr)
        *fileptr = export_fp(c);
    /* SIONlib numbers a serial open of a multi-file set as it builds it: a
     * handle for file 0 first (kept for ever), then the set's own (returned),
     * then one for each further file (given back at the close, before the
     * set's own); sheaf takes the same numbers */
    int multi = !mode.write && c->nfiles > 1;
    if (multi)
        api_hold_ids(1, API_KIND_LEAKED, NULL);
    int sid = api_register(c);
    if (sid < 0) {
        core_close(c);
        return fail_id();
    }
    if (multi)
        api_hold_ids(c->nfiles - 1, API_KIND_HELD, c);
    return sid;
}

int sion_open_rank(char *fname, const char *file_mode, sion_int64 *chunksize, sion_int32 *fsblksize, int *rank,
                   FILE **fileptr)
{
    core_clear_error();
    core_mode mode;
    if (core_mode_parse(file_mode, &mode))
        return fail_id();
    if (mode.write) {
        core_fail(SHEAF_E_ARG, "%s: sion_open_rank opens for reading only", fname ? fname : "(null)");
        return fail_id();
    }
    if (!rank) {
        core_fail(SHEAF_E_ARG, "%s: sion_open_rank needs a rank", fname ? fname : "(null)");
        return fail_id();
    }
    core_container *c = NULL;
    if (core_open_read_rank(&c, fname, &mode, *rank))
        return fail_id();
    core_task *t = &c->tasks[*rank];
    if (chunksize)
        *chunksize = t->chunksize;
    if (fsblksize)
        *fsblksize = c->fsblksize;
    if (fileptr)
        *fileptr = c->files[t->file].f.fp;
    int sid = api_register(c);
    if (sid < 0) {
        core_close(c);
        return fail_id();
    }
    return sid;
}

int sion_close(int sid)
{
    core_clear_error();
    core_container *c = api_lookup(sid, "sion_close");
    if (c && (c->par || c->dup)) {
        core_fail(SHEAF_E_ARG, "%s: sion_close: sid %d %s", c->name, sid,
                  c->dup ? "is a duplicate: release it with sion_dedup"
                         : "was opened in parallel: close it collectively with the matching sion_parclose_* call");
        c = NULL;
    } else if (c) {
        c = api_release(sid);
    }
    if (!c) {
        core_report_error_rc(-1, SION_NOT_SUCCESS);
        return SION_NOT_SUCCESS;
    }
    if (core_close(c)) {
        core_report_error_rc(-1, SION_NOT_SUCCESS);
        return SION_NOT_SUCCESS;
    }
    return SION_SUCCESS;
}
