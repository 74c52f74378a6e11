/* sion_mpi.c - the MPI layer (libsheaf_mpi): SIONlib's sion_*_mpi calls on
 * top of the generic API (sion_generic.h).
 *
 * One generic API object per process ("sheaf_mpi"), created and given its
 * MPI callbacks on first use (pthread_once). Each parallel open duplicates
 * gComm (MPI_ERRORS_RETURN on the copy, so an MPI failure is a return code
 * and the caller's communicator is left untouched); that copy is the global
 * group object handed to the generic layer and is freed by the matching
 * close. The local group of a physical file is MPI_Comm_split(copy,
 * color = file number, key = rank in the file).
 *
 * Memory: O(1) per rank, except the displacement array of a gatherv /
 * scatterv on its root (O(tasks of that group)). */
#include "sion.h"
#include "sion_mpi.h"
#include "../par/binding.h"
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A group object: the global group (one per open, kept in the list of open
 * sids until its close) or a local group (one per physical file). */
typedef struct mpi_group {
    MPI_Comm comm;
    int sid;
    struct mpi_group *next;
} mpi_group;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_aid = -1;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static mpi_group *g_open; /* global groups of the open sids */

/* ---- callbacks ------------------------------------------------------------ */

static MPI_Datatype mpi_type(int datatype)
{
    switch (datatype) {
    case _SION_INT32: return MPI_INT32_T;
    case _SION_INT64: return MPI_INT64_T;
    case _SION_CHAR:  return MPI_CHAR;
    default:          return MPI_DATATYPE_NULL;
    }
}

static MPI_Comm group_comm(void *group)
{
    return group ? ((mpi_group *)group)->comm : MPI_COMM_NULL;
}

static int cb_create_lcg(void **local_group, void *global_group, int grank, int gsize, int lrank, int lsize,
                         int filenumber, int numfiles)
{
    MPI_Comm gcomm = group_comm(global_group);
    if (!local_group || gcomm == MPI_COMM_NULL)
        return 1;
    mpi_group *l = calloc(1, sizeof *l);
    /* still take part in the split when out of memory, so no rank waits */
    MPI_Comm comm = MPI_COMM_NULL;
    int rc = MPI_Comm_split(gcomm, filenumber >= 0 ? filenumber : MPI_UNDEFINED, lrank, &comm);
    if (rc != MPI_SUCCESS || !l) {
        if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        free(l);
        return 1;
    }
    if (comm != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    l->comm = comm;
    l->sid = -1;
    *local_group = l;
    return 0;
}

static int cb_free_lcg(void *local_group)
{
    mpi_group *l = local_group;
    int rc = 0;
    if (!l)
        return 0;
    if (l->comm != MPI_COMM_NULL && MPI_Comm_free(&l->comm) != MPI_SUCCESS)
        rc = 1;
    free(l);
    return rc;
}

static int cb_barrier(void *group)
{
    return MPI_Barrier(group_comm(group)) == MPI_SUCCESS ? 0 : 1;
}

static int cb_bcast(void *data, void *group, int datatype, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    if (t == MPI_DATATYPE_NULL)
        return 1;
    return MPI_Bcast(data, nelem, t, root, group_comm(group)) == MPI_SUCCESS ? 0 : 1;
}

static int cb_gather(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    if (t == MPI_DATATYPE_NULL)
        return 1;
    return MPI_Gather(in, nelem, t, out, nelem, t, root, group_comm(group)) == MPI_SUCCESS ? 0 : 1;
}

/* Displacements (in elements) from the counts of every task of comm, on a
 * root. NULL when a count is negative, the total does not fit an int, or
 * out of memory. */
static int *displacements(MPI_Comm comm, const int *counts)
{
    int n;
    if (!counts || MPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return NULL;
    int *displs = malloc((size_t)(n > 0 ? n : 1) * sizeof *displs);
    if (!displs)
        return NULL;
    long long total = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0 || total > INT_MAX) {
            free(displs);
            return NULL;
        }
        displs[i] = (int)total;
        total += counts[i];
    }
    if (total > INT_MAX) {
        free(displs);
        return NULL;
    }
    return displs;
}

/* gatherv: `in` has nelem elements on every task; counts (valid on the root
 * only) say how many arrive from each task, packed in rank order into `out`.
 * A total above INT_MAX elements is refused on the root (non-zero return). */
static int cb_gatherv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    MPI_Comm comm = group_comm(group);
    int rank;
    if (t == MPI_DATATYPE_NULL || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return 1;
    int *displs = NULL;
    if (rank == root && !(displs = displacements(comm, counts)))
        return 1;
    int rc = MPI_Gatherv(in, nelem, t, out, counts, displs, t, root, comm);
    free(displs);
    return rc == MPI_SUCCESS ? 0 : 1;
}

/* SIONlib's order: scatter takes the root's array first (`in`, read on the
 * root only) and each task's destination second (`out`), as MPI_Scatter. */
static int cb_scatter(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    if (t == MPI_DATATYPE_NULL)
        return 1;
    return MPI_Scatter(in, nelem, t, out, nelem, t, root, group_comm(group)) == MPI_SUCCESS ? 0 : 1;
}

/* scatterv is the other way round in SIONlib: each task's destination is
 * `in` (nelem elements), the root's array `out` (counts[i] for task i). */

static int cb_scatterv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    MPI_Comm comm = group_comm(group);
    int rank;
    if (t == MPI_DATATYPE_NULL || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return 1;
    int *displs = NULL;
    if (rank == root && !(displs = displacements(comm, counts)))
        return 1;
    int rc = MPI_Scatterv(out, counts, displs, t, in, nelem, t, root, comm);
    free(displs);
    return rc == MPI_SUCCESS ? 0 : 1;
}

/* ---- coalescing I/O: gather_and_execute / execute_and_scatter ---------------
 * Point-to-point inside the local group. A sender sends its spec (offset,
 * length), then its data in pieces of at most `piece` bytes (write) or
 * receives them (read), then receives the collector's verdict (0 = the whole
 * group's I/O succeeded). The collector serves its senders in order, one at
 * a time, through one buffer of `piece` bytes: its memory stays bounded. */
enum { TAG_SPEC = 7301, TAG_DATA = 7302, TAG_VERDICT = 7303 };

/* write: data flows sender -> collector; read: collector -> sender */
static int coll_exchange(int write, void *data, sion_int64 *spec, sion_int64 fsblksize, void *group, int collector,
                         int first, int last, int sid, int (*pw)(const void *, sion_int64 *, int),
                         int (*pr)(void *, sion_int64 *, int))
{
    MPI_Comm comm = group_comm(group);
    int me, size, bad = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_rank(comm, &me) || MPI_Comm_size(comm, &size))
        return 1;
    int64_t piece = binding_coll_piece(fsblksize);
    if (first > last)
        return 0;
    if (me == collector) {
        char *buf = malloc((size_t)piece);
        bad = !buf;
        for (int s = first; s <= last && s < size; s++) {
            sion_int64 sp[2];
            if (MPI_Recv(sp, 2, MPI_INT64_T, s, TAG_SPEC, comm, MPI_STATUS_IGNORE)) {
                bad = 1;
                continue;
            }
            for (int64_t done = 0; sp[1] > 0 && done < sp[1]; done += piece) {
                sion_int64 part[2] = {sp[0] + done, sp[1] - done < piece ? sp[1] - done : piece};
                char one;
                char *b = buf ? buf : &one;
                int n = buf ? (int)part[1] : 0;
                if (write) {
                    if (MPI_Recv(b, n, MPI_BYTE, s, TAG_DATA, comm, MPI_STATUS_IGNORE) || !buf || pw(buf, part, sid))
                        bad = 1;
                } else {
                    if (!buf || pr(buf, part, sid))
                        bad = 1;
                    if (MPI_Send(b, n, MPI_BYTE, s, TAG_DATA, comm))
                        bad = 1;
                }
            }
        }
        free(buf);
        sion_int64 end[2] = {-1, 0}; /* end of the group: what the collector combined goes out now */
        if (write && pw(NULL, end, sid))
            bad = 1;
        for (int s = first; s <= last && s < size; s++)
            if (MPI_Send(&bad, 1, MPI_INT, s, TAG_VERDICT, comm))
                bad = 1;
        return bad;
    }
    if (me < first || me > last)
        return 0;
    if (MPI_Send(spec, 2, MPI_INT64_T, collector, TAG_SPEC, comm))
        bad = 1;
    for (int64_t done = 0; spec[1] > 0 && done < spec[1]; done += piece) {
        int n = (int)(spec[1] - done < piece ? spec[1] - done : piece);
        char one, *b = data ? (char *)data + done : &one;
        if (write ? MPI_Send(b, data ? n : 0, MPI_BYTE, collector, TAG_DATA, comm)
                  : MPI_Recv(b, data ? n : 0, MPI_BYTE, collector, TAG_DATA, comm, MPI_STATUS_IGNORE))
            bad = 1;
    }
    int verdict = 1;
    if (MPI_Recv(&verdict, 1, MPI_INT, collector, TAG_VERDICT, comm, MPI_STATUS_IGNORE))
        bad = 1;
    return bad || verdict;
}

static int cb_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                          int collector, int first, int last, int sid, int process(const void *, sion_int64 *, int))
{
    if (spec_len < 2)
        return 1;
    return coll_exchange(1, (void *)indata, spec, fsblksize, group, collector, first, last, sid, process, NULL);
}

static int cb_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                           int collector, int first, int last, int sid, int process(void *, sion_int64 *, int))
{
    if (spec_len < 2)
        return 1;
    return coll_exchange(0, outdata, spec, fsblksize, group, collector, first, last, sid, NULL, process);
}

static int cb_capability(void *group) { return SION_CAPABILITY_FULL; }

static void init_api(void)
{
    static char name[] = "sheaf_mpi";
    int aid = sion_generic_create_api(name);
    if (aid < 0)
        return;
    int ok = sion_generic_register_create_local_commgroup_cb(aid, cb_create_lcg) == SION_SUCCESS &&
             sion_generic_register_free_local_commgroup_cb(aid, cb_free_lcg) == SION_SUCCESS &&
             sion_generic_register_barrier_cb(aid, cb_barrier) == SION_SUCCESS &&
             sion_generic_register_bcastr_cb(aid, cb_bcast) == SION_SUCCESS &&
             sion_generic_register_gatherr_cb(aid, cb_gather) == SION_SUCCESS &&
             sion_generic_register_gathervr_cb(aid, cb_gatherv) == SION_SUCCESS &&
             sion_generic_register_scatterr_cb(aid, cb_scatter) == SION_SUCCESS &&
             sion_generic_register_scattervr_cb(aid, cb_scatterv) == SION_SUCCESS &&
             sion_generic_register_gather_and_execute_cb(aid, cb_gather_exec) == SION_SUCCESS &&
             sion_generic_register_execute_and_scatter_cb(aid, cb_exec_scatter) == SION_SUCCESS &&
             sion_generic_register_get_capability_cb(aid, cb_capability) == SION_SUCCESS;
    if (!ok) {
        sion_generic_free_api(aid);
        return;
    }
    g_aid = aid;
}

/* The process's API id, or -1 (never created: out of memory). */
static int api_id(void)
{
    pthread_once(&g_once, init_api);
    return g_aid;
}

/* ---- global groups and the list of open sids ------------------------------ */

/* Local failure before the generic layer: record the message (a negative
 * SHEAF_E_* code is returned). */
static int mpi_fail(const char *call, const char *fname, int code, const char *what, int mpirc)
{
    if (mpirc != MPI_SUCCESS) {
        char err[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(mpirc, err, &len) != MPI_SUCCESS)
            len = 0;
        err[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
        return binding_fail(code, "%s: %s: %s: %s", fname ? fname : "(null)", call, what, err);
    }
    return binding_fail(code, "%s: %s: %s", fname ? fname : "(null)", call, what);
}

/* Is MPI usable from here? 0, or a failure code with a message. */
static int check_mpi(const char *call, const char *fname, MPI_Comm gComm)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return mpi_fail(call, fname, SHEAF_E_ARG,
                        init ? "MPI was already finalized" : "MPI is not initialized (call MPI_Init first)",
                        MPI_SUCCESS);
    if (gComm == MPI_COMM_NULL)
        return mpi_fail(call, fname, SHEAF_E_ARG, "gComm is MPI_COMM_NULL", MPI_SUCCESS);
    return 0;
}

/* Duplicate gComm (collective over gComm) with MPI_ERRORS_RETURN. Fails
 * (message recorded) only when MPI_Comm_dup fails. */
static int dup_comm(const char *call, const char *fname, MPI_Comm gComm, MPI_Comm *out)
{
    *out = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(gComm, out);
    if (rc != MPI_SUCCESS) {
        *out = MPI_COMM_NULL;
        return mpi_fail(call, fname, SHEAF_E_IO, "MPI_Comm_dup(gComm) failed", rc);
    }
    MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return 0;
}

/* The global group around a duplicated communicator; NULL (message
 * recorded) when out of memory. */
static mpi_group *group_new(const char *call, const char *fname, MPI_Comm comm)
{
    mpi_group *g = calloc(1, sizeof *g);
    if (!g) {
        mpi_fail(call, fname, SHEAF_E_NOMEM, "out of memory", MPI_SUCCESS);
        return NULL;
    }
    g->comm = comm;
    g->sid = -1;
    return g;
}

static void group_free(mpi_group *g)
{
    if (!g)
        return;
    if (g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    free(g);
}

static void group_register(mpi_group *g, int sid)
{
    g->sid = sid;
    pthread_mutex_lock(&g_lock);
    g->next = g_open;
    g_open = g;
    pthread_mutex_unlock(&g_lock);
}

/* Remove and return the global group of sid (NULL if it has none here). */
static mpi_group *group_unregister(int sid)
{
    mpi_group *g = NULL;
    pthread_mutex_lock(&g_lock);
    for (mpi_group **p = &g_open; *p; p = &(*p)->next)
        if ((*p)->sid == sid) {
            g = *p;
            *p = g->next;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return g;
}

/* ---- agreement on errors found before the generic layer ------------------- */

#define AGREE_MSG 1024

/* Collective over comm: every rank passes its local status (0, or a
 * negative code with the message recorded by binding_fail). minmax (may be
 * NULL) is a pair {v, -v} reduced to {min v, -max v} on the way. Returns 0
 * when every rank was fine, else the failure code on all ranks; the ranks
 * that were fine record the first failing rank's message. */
static int agree(const char *call, const char *fname, MPI_Comm comm, int rank, int localrc, int minmax[2])
{
    int v[3] = {localrc ? rank : INT_MAX, minmax ? minmax[0] : 0, minmax ? minmax[1] : 0}, r[3];
    int rc = MPI_Allreduce(v, r, 3, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS)
        return localrc ? localrc : mpi_fail(call, fname, SHEAF_E_IO, "MPI_Allreduce over gComm failed", rc);
    if (minmax) {
        minmax[0] = r[1];
        minmax[1] = r[2];
    }
    if (r[0] == INT_MAX)
        return 0;
    /* the first failing rank tells the others why */
    char buf[sizeof(int) + AGREE_MSG];
    memset(buf, 0, sizeof buf);
    if (rank == r[0]) {
        memcpy(buf, &localrc, sizeof(int));
        strncpy(buf + sizeof(int), sheaf_last_error(), AGREE_MSG - 1);
    }
    rc = MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, r[0], comm);
    if (localrc)
        return localrc;
    int code = SHEAF_E_ARG;
    if (rc == MPI_SUCCESS) {
        memcpy(&code, buf, sizeof(int));
        if (code >= 0)
            code = SHEAF_E_ARG;
    }
    buf[sizeof buf - 1] = '\0';
    return binding_fail(code, "%s (failed on rank %d)", rc == MPI_SUCCESS ? buf + sizeof(int) : "open failed",
                        r[0]);
}

/* ---- public calls --------------------------------------------------------- */

/* Physical file of this rank when *numFiles > 0 cuts size ranks into numFiles
 * contiguous ranges of size/numFiles (the remainder joins the last one). */
static void split_by_count(int rank, int size, int numfiles, int *filenumber, int *lrank, int *lsize)
{
    int per = size / numfiles;
    int f = rank / per;
    if (f > numfiles - 1)
        f = numfiles - 1;
    *filenumber = f;
    *lrank = rank - f * per;
    *lsize = f == numfiles - 1 ? size - (numfiles - 1) * per : per;
}

/* Failure after the agreement: release what the open made, report, -1. */
static int open_failed(MPI_Comm *comm, mpi_group *g, int rank)
{
    if (g)
        g->comm = MPI_COMM_NULL;
    free(g);
    if (*comm != MPI_COMM_NULL)
        MPI_Comm_free(comm);
    binding_report_error(rank);
    return -1;
}

int sion_paropen_mpi(const char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm,
                     const MPI_Comm *lComm, sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank,
                     FILE **fileptr, char **newfname)
{
    static const char call[] = "sion_paropen_mpi";
    const char *shown = fname ? fname : "(null)";
    MPI_Comm comm = MPI_COMM_NULL;
    binding_clear_error();
    if (check_mpi(call, shown, gComm) || dup_comm(call, shown, gComm, &comm)) {
        binding_report_error(-1);
        return -1;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (globalrank)
        *globalrank = rank;

    /* local checks, then one agreement over gComm */
    int lrc = 0, aid = api_id();
    int write = 0, bycount = 0, lrank = 0, lsize = 0, filenumber = 0, nfiles = 0;
    MPI_Comm lc = MPI_COMM_NULL;
    mpi_group *g = group_new(call, shown, comm);
    if (!g)
        lrc = SHEAF_E_NOMEM;
    else if (aid < 0)
        lrc = mpi_fail(call, shown, SHEAF_E_NOMEM, "cannot create the MPI API object (out of memory)", MPI_SUCCESS);
    else if (!fname)
        lrc = mpi_fail(call, shown, SHEAF_E_ARG, "file name is NULL", MPI_SUCCESS);
    else if (binding_mode_write(file_mode, &write))
        lrc = sheaf_last_error_code() ? sheaf_last_error_code() : SHEAF_E_ARG;
    else if (write) {
        if (!numFiles)
            lrc = mpi_fail(call, shown, SHEAF_E_ARG, "numFiles is NULL (needed for writing)", MPI_SUCCESS);
        else if (*numFiles > 0) {
            bycount = 1;
            if (*numFiles > size)
                lrc = binding_fail(SHEAF_E_ARG, "%s: %s: numFiles=%d is larger than the number of tasks (%d)",
                                   shown, call, *numFiles, size);
        } else if (!lComm || *lComm == MPI_COMM_NULL) {
            lrc = mpi_fail(call, shown, SHEAF_E_ARG,
                           "numFiles <= 0 needs a local communicator lComm (it is NULL or MPI_COMM_NULL)",
                           MPI_SUCCESS);
        } else {
            int rc;
            lc = *lComm;
            if ((rc = MPI_Comm_rank(lc, &lrank)) != MPI_SUCCESS || (rc = MPI_Comm_size(lc, &lsize)) != MPI_SUCCESS)
                lrc = mpi_fail(call, shown, SHEAF_E_ARG, "lComm is not a valid communicator", rc);
        }
    }
    /* every rank must open the same way (-1: read) and, writing, ask for the
     * same split (numFiles > 0, or 0: lComm); checked on every rank, so the
     * generic layer is entered by all ranks or none */
    int nf = !write ? -1 : bycount ? *numFiles : 0;
    int mm[2] = {nf, -nf};
    lrc = agree(call, shown, comm, rank, lrc, mm);
    if (lrc == 0 && mm[0] == -1 && -mm[1] >= 0)
        lrc = binding_fail(SHEAF_E_ARG, "%s: %s: the ranks disagree on the file mode (read or write): rank %d opens "
                           "for %s, other ranks for %s (it must be the same on every rank)", shown, call, rank,
                           write ? "writing" : "reading", write ? "reading" : "writing");
    else if (lrc == 0 && mm[0] != -mm[1])
        lrc = binding_fail(SHEAF_E_ARG, "%s: %s: the ranks disagree on the number of files (numFiles): from %d to %d "
                           "(<= 0 means lComm; it must be the same on every rank)", shown, call, mm[0], -mm[1]);
    if (lrc == 0 && write && bycount) {
        nfiles = *numFiles;
        split_by_count(rank, size, nfiles, &filenumber, &lrank, &lsize);
    } else if (lrc == 0 && write) {
        /* lComm: number the files by the order of their rank-0 tasks in gComm */
        int mine[2] = {lrank == 0, lrank == 0 ? lsize : 0}, sum[2] = {0, 0}, before = 0, isroot = lrank == 0;
        int rc = MPI_Allreduce(mine, sum, 2, MPI_INT, MPI_SUM, comm);
        if (rc != MPI_SUCCESS)
            lrc = mpi_fail(call, shown, SHEAF_E_IO, "MPI_Allreduce over gComm failed", rc);
        else if (sum[0] < 1 || sum[1] != size)
            lrc = binding_fail(SHEAF_E_ARG,
                               "%s: %s: lComm is not a partition of gComm (%d local communicators with %d "
                               "tasks in all, gComm has %d)", shown, call, sum[0], sum[1], size);
        if (lrc == 0) {
            rc = MPI_Exscan(&isroot, &before, 1, MPI_INT, MPI_SUM, comm);
            if (rank == 0)
                before = 0; /* MPI_Exscan leaves rank 0's result undefined */
            if (rc == MPI_SUCCESS)
                rc = MPI_Bcast(&before, 1, MPI_INT, 0, lc);
            if (rc != MPI_SUCCESS)
                lrc = mpi_fail(call, shown, SHEAF_E_IO, "numbering the physical files failed", rc);
            lrc = agree(call, shown, comm, rank, lrc, NULL);
            filenumber = before;
            nfiles = sum[0];
        }
    }
    if (lrc)
        return open_failed(&comm, g, rank);

    /* write: the split is an input; read: everything is an output */
    int sid = sion_generic_paropen(aid, fname, file_mode, chunksize, fsblksize, g, rank, size, &filenumber,
                                   &nfiles, &lrank, &lsize, fileptr, newfname);
    if (sid < 0) {
        g->comm = MPI_COMM_NULL;
        free(g);
        MPI_Comm_free(&comm);
        return -1;
    }
    if (numFiles && !(write && bycount))
        *numFiles = nfiles;
    group_register(g, sid);
    return sid;
}

int sion_parclose_mpi(int sid)
{
    int rc = sion_generic_parclose(sid);
    group_free(group_unregister(sid));
    return rc;
}

int sion_parreinit_mpi(int sid, sion_int64 chunksize)
{
    return sion_generic_parreinit(sid, chunksize);
}

int sion_paropen_mapped_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, int *nlocaltasks,
                            int **globalranks, sion_int64 **chunksizes, int **mapping_filenrs,
                            int **mapping_lranks, sion_int32 *fsblksize, FILE **fileptr)
{
    static const char call[] = "sion_paropen_mapped_mpi";
    const char *shown = fname ? fname : "(null)";
    MPI_Comm comm = MPI_COMM_NULL;
    binding_clear_error();
    if (check_mpi(call, shown, gComm) || dup_comm(call, shown, gComm, &comm)) {
        binding_report_error(-1);
        return -1;
    }
    int rank = 0, size = 1, lrc = 0, aid = api_id();
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mpi_group *g = group_new(call, shown, comm);
    if (!g)
        lrc = SHEAF_E_NOMEM;
    else if (aid < 0)
        lrc = mpi_fail(call, shown, SHEAF_E_NOMEM, "cannot create the MPI API object (out of memory)", MPI_SUCCESS);
    if ((lrc = agree(call, shown, comm, rank, lrc, NULL)) != 0)
        return open_failed(&comm, g, rank);
    int sid = sion_generic_paropen_mapped(aid, fname, file_mode, numFiles, g, rank, size, nlocaltasks,
                                          globalranks, chunksizes, mapping_filenrs, mapping_lranks, fsblksize,
                                          fileptr);
    if (sid < 0) {
        g->comm = MPI_COMM_NULL;
        free(g);
        MPI_Comm_free(&comm);
        return -1;
    }
    group_register(g, sid);
    return sid;
}

int sion_parclose_mapped_mpi(int sid)
{
    int rc = sion_generic_parclose_mapped(sid);
    group_free(group_unregister(sid));
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
static int paropen_namebuf(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm,
                           const MPI_Comm *lComm, sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank,
                           FILE **fileptr, char *newfname)
{
    char *name = NULL;
    int sid = sion_paropen_mpi(fname, file_mode, numFiles, gComm, lComm, chunksize, fsblksize, globalrank,
                               fileptr, newfname ? &name : NULL);
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
    return paropen_namebuf(fname, file_mode, numFiles, gComm, &lComm, chunksize, fsblksize, globalrank, fileptr,
                           newfname);
}

int sion_paropen_multi_mpi(char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, MPI_Comm *lComm,
                           sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr,
                           char *newfname)
{
    return paropen_namebuf(fname, file_mode, numFiles, gComm, lComm, chunksize, fsblksize, globalrank, fileptr,
                           newfname);
}
