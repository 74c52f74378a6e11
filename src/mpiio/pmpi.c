/* pmpi.c - libsheaf-mpiio-pmpi.so: sheaf's MPI-IO layer under unmodified
 * MPI-IO programs, through the MPI profiling interface.
 *
 * MPI_File_open takes a file over when its info has sheaf_cache=pfr (or
 * nocache/none/dache) or the environment has SHEAF_MPIIO=pfr, nocache or
 * dache; when sheaf's open fails (bad or mismatched hints, a DACHe it cannot
 * build as asked) MPI_File_open fails on every rank, or with the hint
 * sheaf_fallback=true (SHEAF_MPIIO_FALLBACK=1) the MPI library serves the
 * file and rank 0 prints a warning. The
 * real MPI-IO handle is opened too, with the same view kept on it, and is the
 * handle the program sees. Sheaf serves every data call of a taken-over file
 * (doc/mpiio.md section 6): open/close, set_view, seek, get_position, sync,
 * get_size, set_size, preallocate, blocking collective and independent reads
 * and writes here; nonblocking calls (done at the call, a completed
 * generalized request handed back), split collectives (done at _begin, the
 * status kept for _end), shared and ordered pointers (sheaf's own shared
 * pointer: shared.c) in pmpi_req.c - so nothing reaches the file behind a
 * cache. A dache file's independent calls go through DACHe; the other modes
 * open with sheaf_independent=serve (independent calls through the realm
 * cache of this rank's own realm, other realms straight to the file, their
 * owners' cached copies dropped at the next collective call or sync: io.c),
 * sheaf_write_through=true and sheaf_shared_fp=auto (unless given).
 * SHEAF_MPIIO_VERBOSE: one line per call sheaf serves.
 * Counts beyond INT_MAX in a call sheaf serves are MPI_ERR_COUNT (on every
 * rank of a collective call). set_view with a data representation other than
 * "native" and set_atomicity(true) hand the file back to the real handle for
 * good (collectively, after a sync). Uses the public API of libsheaf_mpiio
 * only. SHEAF_MPIIO_REPORT=1: rank 0 reports each taken-over file at close. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "pmpi_impl.h"
#include "sheaf_comm_mpi.h"

#define MAXF 256
typedef pmpi_entry entry;
static entry table[MAXF];

entry *pmpi_lookup(MPI_File f)
{
    if (f == MPI_FILE_NULL)
        return NULL;
    for (int i = 0; i < MAXF; i++)
        if (table[i].sf && table[i].real == f)
            return &table[i];
    return NULL;
}
/* find: a call sheaf serves when the file is taken over */
static entry *find(MPI_File f)
{
    entry *e = pmpi_lookup(f);
    if (e)
        e->served++;
    return e;
}
entry *pmpi_route(MPI_File f, const char *call)
{
    entry *e = pmpi_lookup(f);
    if (!e)
        return NULL;
    e->served++;
    if (e->verbose)
        fprintf(stderr, "sheaf-mpiio: rank %d: %s(%s): served by sheaf (%s)\n", e->rank, call, e->name,
                e->dache ? "dache" : "realms");
    return e;
}

int pmpi_to_mpi(entry *e, int rc)
{
    if (rc == 0)
        return MPI_SUCCESS;
    if (getenv("SHEAF_MPIIO_VERBOSE"))
        fprintf(stderr, "sheaf-mpiio: %s\n", sheaf_file_errmsg(e ? e->sf : NULL));
    switch (rc) {
    case SHEAF_MPIIO_EARG:
        return MPI_ERR_ARG;
    case SHEAF_MPIIO_ENOMEM:
        return MPI_ERR_NO_MEM;
    case SHEAF_MPIIO_EMODE:
        return MPI_ERR_AMODE;
    default:
        return MPI_ERR_IO;
    }
}

static int wanted(MPI_Info info)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info != MPI_INFO_NULL) {
        MPI_Info_get(info, "sheaf_cache", MPI_MAX_INFO_VAL, v, &flag);
        if (flag)
            return strcmp(v, "pfr") == 0 || strcmp(v, "nocache") == 0 || strcmp(v, "none") == 0 ||
                   strcmp(v, "dache") == 0;
    }
    const char *env = getenv("SHEAF_MPIIO");
    return env && (strcmp(env, "pfr") == 0 || strcmp(env, "nocache") == 0 || strcmp(env, "dache") == 0);
}

/* sheaf_fallback=true (or SHEAF_MPIIO_FALLBACK=1): a file sheaf cannot take
 * over as asked runs on the MPI library's MPI-IO with a warning instead of
 * failing the open */
static int wants_fallback(MPI_Info info)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info != MPI_INFO_NULL) {
        MPI_Info_get(info, "sheaf_fallback", MPI_MAX_INFO_VAL, v, &flag);
        if (flag)
            return strcmp(v, "true") == 0;
    }
    const char *env = getenv("SHEAF_MPIIO_FALLBACK");
    return env && strcmp(env, "1") == 0;
}

/* DACHe serves independent calls too (its cache is coherent) */
static int wants_dache(MPI_Info info)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info != MPI_INFO_NULL) {
        MPI_Info_get(info, "sheaf_cache", MPI_MAX_INFO_VAL, v, &flag);
        if (flag)
            return strcmp(v, "dache") == 0;
    }
    const char *env = getenv("SHEAF_MPIIO");
    return env && strcmp(env, "dache") == 0;
}

/* sheaf could not take the file over (the same on every rank): with fallback
 * asked on every rank, the real handle serves everything and rank 0 warns;
 * else the open fails on every rank (the real handle closed) with rank 0
 * printing why - never a silent fallback (issue 30) */
static int not_taken(MPI_Comm comm, const char *filename, MPI_File *fh, const char *why, int fallback)
{
    int r = 0;
    MPI_Comm_rank(comm, &r);
    if (fallback) {
        if (r == 0 || getenv("SHEAF_MPIIO_VERBOSE"))
            fprintf(stderr,
                    "sheaf-mpiio: warning: %s not taken over, served by the MPI library's MPI-IO "
                    "(sheaf_fallback): %s\n",
                    filename, why);
        return MPI_SUCCESS;
    }
    if (r == 0 || getenv("SHEAF_MPIIO_VERBOSE"))
        fprintf(stderr,
                "sheaf-mpiio: MPI_File_open(%s) failed: %s (the hint sheaf_fallback=true or "
                "SHEAF_MPIIO_FALLBACK=1 runs it on the MPI library's MPI-IO instead)\n",
                filename, why);
    PMPI_File_close(fh);
    *fh = MPI_FILE_NULL;
    /* MPI: open errors go to MPI_FILE_NULL's handler. Called only when it is
     * not MPI_ERRORS_RETURN (the default): Open MPI takes MPI_FILE_NULL in
     * MPI_File_call_errhandler for an invalid file and aborts through
     * MPI_COMM_WORLD's handler */
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (MPI_File_get_errhandler(MPI_FILE_NULL, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL) {
        if (eh != MPI_ERRORS_RETURN)
            MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_ARG);
        MPI_Errhandler_free(&eh);
    }
    return MPI_ERR_ARG;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    int rc = PMPI_File_open(comm, filename, amode, info, fh);
    if (rc != MPI_SUCCESS)
        return rc;
    int slot = -1;
    for (int i = 0; i < MAXF && slot < 0; i++)
        if (!table[i].sf)
            slot = i;
    int want = wanted(info), dache = wants_dache(info), fb = wants_fallback(info), ok = slot >= 0 || !want;
    /* one agreement (one MPI_Allreduce) on every open, taken over or not: a
   * free table slot where wanted, and whether each rank wants the file
   * taken over, as DACHe and with fallback (minimum, maximum) - a rank that
   * asked alone would wait in sheaf_file_open for the others */
    int64_t v[6] = {want, -want, dache, -dache, fb, -fb};
    sheaf_comm_mpi_ref_t ref;
    sheaf_comm_agreement a;
    int bad = sheaf_comm_agree(sheaf_comm_mpi_ref(&ref, comm), ok ? 0 : -1, ok ? NULL : "table full", v, 6, &a);
    if (!bad && v[1] == 0)
        return MPI_SUCCESS; /* nobody asked */
    const char *why = bad             ? "the file table is full (or the agreement failed)"
                      : v[0] != -v[1] ? "sheaf_cache/SHEAF_MPIIO asks for sheaf on some ranks only"
                      : v[2] != -v[3] ? "sheaf_cache=dache on some ranks only"
                                      : NULL;
    MPI_Info mine;
    if (info != MPI_INFO_NULL)
        MPI_Info_dup(info, &mine);
    else
        MPI_Info_create(&mine);
    if (dache)
        MPI_Info_set(mine, "sheaf_cache", "dache");
    else {
        /* every data call is sheaf's (issue 30): independent ones through the
         * realm cache of their realm's owner or straight to the file, the
         * shared and ordered pointers sheaf's own */
        MPI_Info_set(mine, "sheaf_write_through", "true");
        MPI_Info_set(mine, "sheaf_independent", "serve");
        char sv[MPI_MAX_INFO_VAL + 1];
        int has = 0;
        MPI_Info_get(mine, "sheaf_shared_fp", MPI_MAX_INFO_VAL, sv, &has);
        if (!has)
            MPI_Info_set(mine, "sheaf_shared_fp", "auto");
    }
    /* the real open created the file; delete-on-close is the real handle's */
    int samode = amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                           MPI_MODE_SEQUENTIAL);
    sheaf_file sf = NULL;
    int src = why ? -1 : sheaf_file_open(comm, filename, samode, mine, &sf);
    MPI_Info_free(&mine);
    if (src != 0)
        return not_taken(comm, filename, fh, why ? why : sheaf_mpiio_open_errmsg(), !bad && v[4] == 1);
    table[slot].real = *fh;
    table[slot].sf = sf;
    table[slot].dache = dache;
    MPI_Comm_rank(comm, &table[slot].rank);
    table[slot].served = 1, table[slot].fellback = 0, table[slot].split = 0;
    table[slot].verbose = getenv("SHEAF_MPIIO_VERBOSE") != NULL;
    snprintf(table[slot].name, sizeof table[slot].name, "%s", filename);
    return MPI_SUCCESS;
}

/* SHEAF_MPIIO_REPORT=1: rank 0 (with SHEAF_MPIIO_VERBOSE every rank) reports
 * the file at close */
static void report(entry *e)
{
    if ((e->rank != 0 && !e->verbose) || !getenv("SHEAF_MPIIO_REPORT"))
        return;
    sheaf_mpiio_stats st;
    sheaf_file_stats(e->sf, &st);
    fprintf(stderr,
            "sheaf-mpiio: %s served by sheaf (%llu collective calls, %llu rounds, %d aggregators; "
            "rank %d's MPI_File calls: %lu served, %lu fell back; independent bytes: %llu through its realm "
            "cache, %llu straight to the file)\n",
            e->name, (unsigned long long)st.coll_calls, (unsigned long long)st.rounds_total, st.naggs, e->rank,
            e->served, e->fellback, (unsigned long long)st.indep_cached_bytes,
            (unsigned long long)st.indep_direct_bytes);
}

/* give the file back to the real handle for good (collective) */
static int demote(entry *e)
{
    report(e);
    int rc = sheaf_file_close(&e->sf);
    e->sf = NULL;
    return rc == 0 ? MPI_SUCCESS : MPI_ERR_IO;
}

int MPI_File_close(MPI_File *fh)
{
    entry *e = fh ? find(*fh) : NULL;
    if (e) {
        report(e);
        int rc = sheaf_file_close(&e->sf);
        e->sf = NULL;
        int r2 = PMPI_File_close(fh);
        return rc ? MPI_ERR_IO : r2;
    }
    return PMPI_File_close(fh);
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                      MPI_Info info)
{
    int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
    entry *e = find(fh);
    if (!e)
        return rc;
    if (datarep && strcmp(datarep, "native") != 0) {
        demote(e);
        return rc;
    }
    int src = sheaf_file_set_view(e->sf, disp, etype, filetype);
    return rc != MPI_SUCCESS ? rc : pmpi_to_mpi(e, src);
}

int MPI_File_set_atomicity(MPI_File fh, int flag)
{
    entry *e = find(fh);
    if (e && flag)
        demote(e);
    return PMPI_File_set_atomicity(fh, flag);
}

/* both MPICH and Open MPI keep a byte count in the status */
void pmpi_set_status(MPI_Status *st, MPI_Count bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_cancelled(st, 0);
    MPI_Status_set_elements_x(st, MPI_BYTE, bytes);
}
static MPI_Count bytes_of(MPI_Datatype t, MPI_Count count)
{
    int size = 0;
    if (t != MPI_DATATYPE_NULL)
        MPI_Type_size(t, &size);
    return (MPI_Count)size * count;
}
int pmpi_count(entry *e, MPI_Count count, int begin)
{
    return count > INT_MAX || count < 0 || (begin && e->split) ? -1 : (int)count;
}
int pmpi_done(entry *e, int rc, MPI_Datatype t, MPI_Count count, MPI_Status *st)
{
    if (count > INT_MAX)
        return MPI_ERR_COUNT;
    if (rc == 0)
        pmpi_set_status(st, bytes_of(t, count));
    return pmpi_to_mpi(e, rc);
}
int pmpi_begun(entry *e, int rc, MPI_Datatype t, MPI_Count count)
{
    if (count > INT_MAX)
        return MPI_ERR_COUNT;
    if (e->split)
        return MPI_ERR_OTHER; /* MPI: one split collective at a time per handle */
    if (rc == 0) {
        e->split = 1;
        e->split_bytes = bytes_of(t, count);
    }
    return pmpi_to_mpi(e, rc);
}
int pmpi_ended(entry *e, MPI_Status *st)
{
    if (!e->split)
        return MPI_ERR_OTHER; /* no _begin (or it failed) */
    e->split = 0;
    pmpi_set_status(st, e->split_bytes);
    return MPI_SUCCESS;
}

/* blocking calls: every one through sheaf (collective: the two-phase engine
 * or DACHe; independent: DACHe, or sheaf_independent=serve) */
PMPI_RW_PTR(, _all, _all, ST)
PMPI_RW_AT(, _at_all, _at_all, ST)
PMPI_RW_PTR(, , , ST)
PMPI_RW_AT(, _at, _at, ST)

int MPI_File_seek(MPI_File fh, MPI_Offset off, int whence)
{
    entry *e = find(fh);
    if (!e)
        return PMPI_File_seek(fh, off, whence);
    return pmpi_to_mpi(e, sheaf_file_seek(e->sf, off, whence));
}
int MPI_File_get_position(MPI_File fh, MPI_Offset *off)
{
    entry *e = find(fh);
    if (!e)
        return PMPI_File_get_position(fh, off);
    return pmpi_to_mpi(e, sheaf_file_get_position(e->sf, off));
}
int MPI_File_sync(MPI_File fh)
{
    entry *e = find(fh);
    int rc = e ? pmpi_to_mpi(e, sheaf_file_sync(e->sf)) : MPI_SUCCESS;
    int r2 = PMPI_File_sync(fh);
    return rc ? rc : r2;
}
int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    entry *e = find(fh);
    if (!e)
        return PMPI_File_get_size(fh, size);
    return pmpi_to_mpi(e, sheaf_file_get_size(e->sf, size));
}
int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    entry *e = find(fh);
    if (!e)
        return PMPI_File_set_size(fh, size);
    return pmpi_to_mpi(e, sheaf_file_set_size(e->sf, size));
}
int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    entry *e = find(fh);
    if (!e)
        return PMPI_File_preallocate(fh, size);
    return pmpi_to_mpi(e, sheaf_file_preallocate(e->sf, size));
}
