/* sion_mpi.c - the MPI layer (libsheaf_mpi): SIONlib's sion_*_mpi calls on
 * top of the generic API (sion_generic.h).
 *
 * One generic API object per process ("sheaf_mpi", mpi_callbacks.c), created
 * and given its MPI callbacks on first use (pthread_once). The global group
 * object handed to the generic layer wraps gComm itself; the local group of
 * a physical file is MPI_Comm_split(gComm, color = file number, key = rank in
 * the file), with MPI_ERRORS_RETURN, kept by the communicator cache
 * (commcache.h) after the close for the next open of the same (gComm, file
 * split) pair. So a parallel open creates at most one communicator, and a
 * repeated open of the same pair none (issue 19: it used to MPI_Comm_dup gComm
 * as well, and at 8 ranks on a 2-core machine a dup costs ~50 ms and a split
 * ~80 ms, as much as the rest of the open).
 *
 * Why gComm needs no duplicate (the reason a library usually dups is to
 * keep its messages apart from the application's):
 *  - Over the global group sheaf makes collective calls only (gather, bcast,
 *    scatter(v), gatherv, allreduce, exscan, comm_split); its
 *    point-to-point messages (coll_exchange) travel in the local group, a
 *    communicator sheaf created. MPI never matches a collective with a
 *    point-to-point message, so the application's pending sends, receives
 *    (MPI_ANY_TAG / MPI_ANY_SOURCE included) and probes on gComm cannot see
 *    sheaf's traffic nor take it.
 *  - Collectives on one communicator are matched in the order each rank
 *    issues them (MPI standard, "Collective Communication", section
 *    "Correctness"). sion_paropen_mpi, sion_parclose_mpi,
 *    sion_parreinit_mpi and the collective I/O calls are themselves
 *    collective over gComm, so every rank issues sheaf's collectives at the
 *    same point of its sequence on gComm; with threads, MPI already requires
 *    the application to order collectives on one communicator, and the dup
 *    was a collective on gComm too. The application's own nonblocking
 *    collectives still pending on gComm are matched before sheaf's (issue
 *    order), which MPI allows.
 *  - gComm's error handler stays the application's: sheaf does not change
 *    it (that would race with the application's threads). With the default
 *    MPI_ERRORS_ARE_FATAL an MPI failure on gComm ends the job, as it does
 *    in the application's own calls and in SIONlib (which uses gComm as
 *    given); with MPI_ERRORS_RETURN it is a failure code on every rank as
 *    before. The local group has MPI_ERRORS_RETURN.
 *  - gComm must stay valid until the matching close (as in SIONlib); a
 *    program that frees it before sion_parclose_mpi is erroneous.
 *
 * The mode key files=auto (sion_mpi.h) is handled here, before the generic
 * layer: FGFS (libsheaf_fgfs_mpi's public API, when SHEAF_HAVE_FGFS) groups
 * the ranks by the storage of the container's directory; a write turns the
 * groups into local communicators (then numbered as an lComm open), a read
 * checks the set's mapping against them. The key is removed from the mode
 * the generic layer sees (the core refuses it elsewhere).
 *
 * Memory: O(1) per rank, except the displacement array of a gatherv /
 * scatterv on its root (O(tasks of that group)), and with files=auto on
 * rank 0 at a read the storage groups and file 0's metadata (O(P)), on
 * every rank FGFS's table of distinct names (O(groups)). */
#include "mpi_internal.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- public calls --------------------------------------------------------- */

/* One open's inputs and what sion_paropen_mpi works out before the generic
 * layer. */
typedef struct open_args {
    const char *call, *shown;
    MPI_Comm comm; /* gComm: no duplicate, see the top of this file */
    int rank, size;
    int files_auto; /* the mode has files=auto */
    char *automode; /* files=auto: the mode without the key, for the generic layer */
    int write, buddy, bycount, req;
    int lrank, lsize, filenumber, nfiles;
    MPI_Comm lc;     /* lComm (not owned) or autolc */
    MPI_Comm autolc; /* files=auto: this rank's file's communicator (owned until handed back) */
} open_args;

/* The checks each rank makes on its own arguments: 0 or a failure code with
 * the message recorded. */
static int open_local_checks(open_args *a, const char *fname, const char *file_mode, const int *numFiles,
                             const MPI_Comm *lComm, int aid)
{
    const char *call = a->call, *shown = a->shown;
    if (aid < 0)
        return mpi_fail(call, shown, SHEAF_E_NOMEM, "cannot create the MPI API object (out of memory)", MPI_SUCCESS);
    if (!fname)
        return mpi_fail(call, shown, SHEAF_E_ARG, "file name is NULL", MPI_SUCCESS);
    if (mpi_mode_strip_auto(file_mode, &a->automode, &a->files_auto))
        return SHEAF_E_NOMEM;
    if (binding_mode_parse(a->files_auto ? a->automode : file_mode, &a->write, &a->buddy))
        return sheaf_last_error_code() ? sheaf_last_error_code() : SHEAF_E_ARG;
    if (a->files_auto && a->buddy)
        return binding_fail(SHEAF_E_ARG,
                            "%s: %s: files=auto and buddy cannot be combined (the buddy copies are "
                            "placed by their own rule)",
                            shown, call);
    if (!a->write)
        return 0;
    if (!a->files_auto && !numFiles)
        return mpi_fail(call, shown, SHEAF_E_ARG, "numFiles is NULL (needed for writing)", MPI_SUCCESS);
    /* files=auto: numFiles > 0 asks for at least that many files; lComm is an output */
    if (numFiles && *numFiles > 0) {
        a->bycount = !a->files_auto;
        if (*numFiles > a->size)
            return binding_fail(SHEAF_E_ARG, "%s: %s: numFiles=%d is larger than the number of tasks (%d)", shown, call,
                                *numFiles, a->size);
        return 0;
    }
    if (a->files_auto)
        return 0;
    if (!lComm || *lComm == MPI_COMM_NULL)
        return mpi_fail(call, shown, SHEAF_E_ARG,
                        "numFiles <= 0 needs a local communicator lComm (it is NULL or MPI_COMM_NULL)", MPI_SUCCESS);
    int rc;
    a->lc = *lComm;
    if ((rc = MPI_Comm_rank(a->lc, &a->lrank)) != MPI_SUCCESS || (rc = MPI_Comm_size(a->lc, &a->lsize)) != MPI_SUCCESS)
        return mpi_fail(call, shown, SHEAF_E_ARG, "lComm is not a valid communicator", rc);
    return 0;
}

/* Every rank must open the same way (-1: read) and, writing, ask for the
 * same split (numFiles > 0, or 0: lComm; with files=auto the number asked
 * for, 0 when none), and all or none with files=auto; checked on every rank
 * (1 agreement), so the generic layer is entered by all ranks or none. */
static int open_agree_mode(open_args *a, const int *numFiles, int lrc)
{
    const char *call = a->call, *shown = a->shown;
    a->req = a->files_auto && a->write && numFiles && *numFiles > 0 ? *numFiles : 0;
    int nf = !a->write ? -1 : a->files_auto ? a->req : a->bycount ? *numFiles : 0;
    int mm[4] = {nf, -nf, a->files_auto, -a->files_auto};
    lrc = mpi_agree(call, shown, a->comm, lrc, mm);
    if (lrc)
        return lrc;
    if (mm[2] != -mm[3])
        return binding_fail(SHEAF_E_ARG,
                            "%s: %s: the ranks disagree on files=auto: rank %d %s it, other ranks %s (it "
                            "must be the same on every rank)",
                            shown, call, a->rank, a->files_auto ? "gives" : "does not give",
                            a->files_auto ? "do not" : "do");
    if (mm[0] == -1 && -mm[1] >= 0)
        return binding_fail(SHEAF_E_ARG,
                            "%s: %s: the ranks disagree on the file mode (read or write): rank %d opens "
                            "for %s, other ranks for %s (it must be the same on every rank)",
                            shown, call, a->rank, a->write ? "writing" : "reading", a->write ? "reading" : "writing");
    if (mm[0] != -mm[1])
        return binding_fail(SHEAF_E_ARG,
                            "%s: %s: the ranks disagree on the number of files (numFiles): from %d to %d "
                            "(<= 0 means lComm; it must be the same on every rank)",
                            shown, call, mm[0], -mm[1]);
    return 0;
}

/* files=auto: the storage groups of the directory; writing, one local
 * communicator per group (or per piece of one), numbered afterwards as an
 * lComm is; reading, a check that the set can be read here. */
static int open_auto(open_args *a)
{
    auto_desc d = {0, 0};
    int lrc = mpi_auto_groups(a->call, a->shown, a->comm, &d);
    if (lrc)
        return lrc;
    if (!a->write)
        return mpi_auto_read_check(a->call, a->shown, a->comm, a->rank, a->size, &d, &a->autolc);
    lrc = mpi_auto_split_write(a->call, a->shown, a->comm, a->rank, &d, a->req, &a->autolc);
    lrc = mpi_agree(a->call, a->shown, a->comm, lrc, NULL);
    if (lrc == 0) {
        a->lc = a->autolc;
        MPI_Comm_rank(a->lc, &a->lrank);
        MPI_Comm_size(a->lc, &a->lsize);
    }
    return lrc;
}

/* A write with lComm (or files=auto): number the files by the order of their
 * rank-0 tasks in gComm (1 MPI_Allreduce, 1 MPI_Exscan, 1 MPI_Bcast over
 * the local communicator, 1 agreement). */
static int open_number_files(open_args *a)
{
    const char *call = a->call, *shown = a->shown;
    int mine[2] = {a->lrank == 0, a->lrank == 0 ? a->lsize : 0}, sum[2] = {0, 0}, before = 0, isroot = a->lrank == 0;
    int rc = MPI_Allreduce(mine, sum, 2, MPI_INT, MPI_SUM, a->comm);
    if (rc != MPI_SUCCESS)
        return mpi_fail(call, shown, SHEAF_E_IO, "MPI_Allreduce over gComm failed", rc);
    if (sum[0] < 1 || sum[1] != a->size)
        return binding_fail(SHEAF_E_ARG,
                            "%s: %s: lComm is not a partition of gComm (%d local communicators with %d "
                            "tasks in all, gComm has %d)",
                            shown, call, sum[0], sum[1], a->size);
    int lrc = 0;
    rc = MPI_Exscan(&isroot, &before, 1, MPI_INT, MPI_SUM, a->comm);
    if (a->rank == 0)
        before = 0; /* MPI_Exscan leaves rank 0's result undefined */
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(&before, 1, MPI_INT, 0, a->lc);
    if (rc != MPI_SUCCESS)
        lrc = mpi_fail(call, shown, SHEAF_E_IO, "numbering the physical files failed", rc);
    lrc = mpi_agree(call, shown, a->comm, lrc, NULL);
    a->filenumber = before;
    a->nfiles = sum[0];
    return lrc;
}

/* How the ranks agree on reusing a cached local communicator (commcache.h). */
static int cache_how(const open_args *a)
{
    if (a->buddy)
        return CC_OFF; /* buddy splits more groups off gComm in the same open */
    if (!a->write)
        return CC_READ; /* one file: CC_SAME, else CC_AGREE (decided with the set's file count) */
    return a->bycount ? CC_SAME : CC_AGREE;
}

/* What the local group of this open needs, allocated before the agreement:
 * the communicator cache's entry (commcache.h) and the local group object.
 * An allocation failure is then a failure of the open on every rank, found
 * in the agreement the binding makes anyway, never a cache entry missing on
 * one rank after the split, nor a rank that leaves the open after it. */
static int open_reserve(const open_args *a, mpi_group *g)
{
    if (cache_how(a) != CC_OFF && cc_reserve(a->comm, &g->spare) != MPI_SUCCESS)
        return mpi_fail(a->call, a->shown, SHEAF_E_NOMEM, "out of memory (an entry of the communicator cache)",
                        MPI_SUCCESS);
    if (!(g->lspare = calloc(1, sizeof *g->lspare)))
        return mpi_fail(a->call, a->shown, SHEAF_E_NOMEM, "out of memory (the local group)", MPI_SUCCESS);
    return 0;
}

/* Everything before the generic layer: 0 on every rank, or a failure on
 * every rank (message recorded). */
static int open_prepare(open_args *a, mpi_group *g, const char *fname, const char *file_mode, int *numFiles,
                        const MPI_Comm *lComm, int aid, int lrc)
{
    if (!lrc)
        lrc = open_local_checks(a, fname, file_mode, numFiles, lComm, aid);
    if (!lrc)
        lrc = open_reserve(a, g);
    lrc = open_agree_mode(a, numFiles, lrc);
    if (lrc == 0 && a->files_auto)
        lrc = open_auto(a);
    if (lrc == 0 && a->write && a->bycount) {
        a->nfiles = *numFiles;
        mpi_split_by_count(a->rank, a->size, a->nfiles, &a->filenumber, &a->lrank, &a->lsize);
    } else if (lrc == 0 && a->write) {
        lrc = open_number_files(a);
    }
    return lrc;
}

int sion_paropen_mpi(const char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, const MPI_Comm *lComm,
                     sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr, char **newfname)
{
    open_args a;
    memset(&a, 0, sizeof a);
    a.call = "sion_paropen_mpi";
    a.shown = fname ? fname : "(null)";
    binding_clear_error();
    if (mpi_check(a.call, a.shown, gComm)) {
        binding_report_error(-1);
        return -1;
    }
    a.comm = gComm; /* no duplicate: see the top of this file */
    a.lc = a.autolc = MPI_COMM_NULL;
    a.size = 1;
    MPI_Comm_rank(a.comm, &a.rank);
    MPI_Comm_size(a.comm, &a.size);
    if (globalrank)
        *globalrank = a.rank;
    mpi_group *g = mpi_group_new(a.call, a.shown, a.comm);
    int lrc = open_prepare(&a, g, fname, file_mode, numFiles, lComm, mpi_api_id(), g ? 0 : SHEAF_E_NOMEM);
    if (lrc) {
        free(a.automode);
        if (a.autolc != MPI_COMM_NULL)
            MPI_Comm_free(&a.autolc);
        return mpi_open_failed(g, a.rank);
    }
    g->cc_how = cache_how(&a);
    /* write: the split is an input; read: everything is an output */
    int sid = sion_generic_paropen(mpi_api_id(), fname, a.files_auto ? a.automode : file_mode, chunksize, fsblksize, g,
                                   a.rank, a.size, &a.filenumber, &a.nfiles, &a.lrank, &a.lsize, fileptr, newfname);
    free(a.automode);
    if (sid < 0) {
        if (cache_how(&a) != CC_OFF)
            cc_purge(a.comm); /* the failure is on every rank: the caches stay alike */
        mpi_group_free(g);
        if (a.autolc != MPI_COMM_NULL)
            MPI_Comm_free(&a.autolc);
        return -1;
    }
    if (numFiles && !(a.write && a.bycount))
        *numFiles = a.nfiles;
    if (a.files_auto) {
        /* the ranks of this rank's physical file, for the caller (SIONlib's
         * lComm output); the caller frees it */
        if (lComm)
            *(MPI_Comm *)(uintptr_t)lComm = a.autolc;
        else
            MPI_Comm_free(&a.autolc);
    }
    mpi_group_register(g, sid);
    return sid;
}

int sion_parclose_mpi(int sid)
{
    int rc = sion_generic_parclose(sid);
    mpi_group_free(mpi_group_unregister(sid));
    return rc;
}

int sion_parreinit_mpi(int sid, sion_int64 chunksize) { return sion_generic_parreinit(sid, chunksize); }

int sion_paropen_mapped_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, int *nlocaltasks,
                            int **globalranks, sion_int64 **chunksizes, int **mapping_filenrs, int **mapping_lranks,
                            sion_int32 *fsblksize, FILE **fileptr)
{
    static const char call[] = "sion_paropen_mapped_mpi";
    const char *shown = fname ? fname : "(null)";
    binding_clear_error();
    if (mpi_check(call, shown, gComm)) {
        binding_report_error(-1);
        return -1;
    }
    MPI_Comm comm = gComm; /* no duplicate: see the top of this file */
    int rank = 0, size = 1, lrc = 0, aid = mpi_api_id();
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mpi_group *g = mpi_group_new(call, shown, comm);
    if (!g)
        lrc = SHEAF_E_NOMEM;
    else if (aid < 0)
        lrc = mpi_fail(call, shown, SHEAF_E_NOMEM, "cannot create the MPI API object (out of memory)", MPI_SUCCESS);
    if ((lrc = mpi_agree(call, shown, comm, lrc, NULL)) != 0)
        return mpi_open_failed(g, rank);
    int sid = sion_generic_paropen_mapped(aid, fname, file_mode, numFiles, g, rank, size, nlocaltasks, globalranks,
                                          chunksizes, mapping_filenrs, mapping_lranks, fsblksize, fileptr);
    if (sid < 0) {
        mpi_group_free(g);
        return -1;
    }
    mpi_group_register(g, sid);
    return sid;
}

int sion_parclose_mapped_mpi(int sid)
{
    int rc = sion_generic_parclose_mapped(sid);
    mpi_group_free(mpi_group_unregister(sid));
    return rc;
}

size_t sion_coll_fwrite_mpi(const void *data, size_t size, size_t nitems, int sid)
{
    return sion_coll_fwrite(data, size, nitems, sid);
}

size_t sion_coll_fread_mpi(void *data, size_t size, size_t nitems, int sid)
{
    return sion_coll_fread(data, size, nitems, sid);
}

/* The deprecated calls take a caller's buffer for the file name. */
static int paropen_namebuf(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, const MPI_Comm *lComm,
                           sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr,
                           char *newfname)
{
    char *name = NULL;
    int sid = sion_paropen_mpi(fname, file_mode, numFiles, gComm, lComm, chunksize, fsblksize, globalrank, fileptr,
                               newfname ? &name : NULL);
    if (newfname) {
        if (sid >= 0 && name) {
            size_t n = strlen(name);
            if (n > SION_FILENAME_LENGTH - 1)
                n = SION_FILENAME_LENGTH - 1;
            memcpy(newfname, name, n);
            newfname[n] = '\0';
        }
        free(name);
    }
    return sid;
}

int sion_paropen_comms_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, MPI_Comm lComm,
                           sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr,
                           char *newfname)
{
    int local = 0;
    if (!numFiles)
        numFiles = &local;
    *numFiles = 0;
    MPI_Comm lc = lComm;
    int sid =
        paropen_namebuf(fname, file_mode, numFiles, gComm, &lc, chunksize, fsblksize, globalrank, fileptr, newfname);
    if (lc != lComm && lc != MPI_COMM_NULL) /* files=auto made one; this call cannot hand it back */
        MPI_Comm_free(&lc);
    return sid;
}

int sion_paropen_multi_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, MPI_Comm *lComm,
                           sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr,
                           char *newfname)
{
    return paropen_namebuf(fname, file_mode, numFiles, gComm, lComm, chunksize, fsblksize, globalrank, fileptr,
                           newfname);
}
