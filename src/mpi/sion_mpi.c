/* sion_mpi.c - the MPI layer (libsheaf_mpi): SIONlib's sion_*_mpi calls on
 * top of the generic API (sion_generic.h).
 *
 * One generic API object per process ("sheaf_mpi"), created and given its
 * MPI callbacks on first use (pthread_once). The global group object handed
 * to the generic layer wraps gComm itself; the local group of a physical
 * file is MPI_Comm_split(gComm, color = file number, key = rank in the file),
 * with MPI_ERRORS_RETURN, freed by the matching close. So a parallel open
 * creates exactly one communicator (issue 19: it used to MPI_Comm_dup gComm
 * as well, and at 8 ranks on a 2-core machine a dup costs ~50 ms, as much as
 * the rest of the open).
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
#include "sion.h"
#include "sion_mpi.h"
#include "../par/binding.h"
#ifdef SHEAF_HAVE_FGFS
#include "sheaf_fgfs_mpi.h"
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A group object: the global group (one per open, kept in the list of open
 * sids until its close; comm is the caller's gComm, not owned) or a local
 * group (one per physical file; comm owned, freed with it). */
typedef struct mpi_group {
    MPI_Comm comm;
    int owned; /* 1: comm was created here and is freed with the group */
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
    l->owned = 1;
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
    if (l->owned && l->comm != MPI_COMM_NULL && MPI_Comm_free(&l->comm) != MPI_SUCCESS)
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

static const binding_callbacks g_callbacks = {
    .create_lcg = cb_create_lcg, .free_lcg = cb_free_lcg, .barrier = cb_barrier, .bcast = cb_bcast,
    .gather = cb_gather, .gatherv = cb_gatherv, .scatter = cb_scatter, .scatterv = cb_scatterv,
    .gather_exec = cb_gather_exec, .exec_scatter = cb_exec_scatter, .capability = cb_capability};

static void init_api(void) { g_aid = binding_create_api("sheaf_mpi", &g_callbacks); }

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

/* The global group around the caller's gComm (not owned: never freed
 * here); NULL (message recorded) when out of memory. */
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
    if (g->owned && g->comm != MPI_COMM_NULL)
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
 * NULL) holds two pairs {v, -v, w, -w} reduced to {min v, -max v, min w,
 * -max w} on the way. Returns 0 when every rank was fine, else the failure
 * code on all ranks; the ranks that were fine record the first failing
 * rank's message. */
static int agree(const char *call, const char *fname, MPI_Comm comm, int rank, int localrc, int minmax[4])
{
    int v[5] = {localrc ? rank : INT_MAX, 0, 0, 0, 0}, r[5];
    for (int i = 0; minmax && i < 4; i++)
        v[1 + i] = minmax[i];
    int rc = MPI_Allreduce(v, r, 5, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS)
        return localrc ? localrc : mpi_fail(call, fname, SHEAF_E_IO, "MPI_Allreduce over gComm failed", rc);
    for (int i = 0; minmax && i < 4; i++)
        minmax[i] = r[1 + i];
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
static int open_failed(mpi_group *g, int rank)
{
    group_free(g);
    binding_report_error(rank);
    return -1;
}

/* ---- files=auto: one physical file per storage group ---------------------
 * The groups come from FGFS (libsheaf_fgfs_mpi): the parallel descriptor of
 * the container's directory over gComm (FGFS duplicates it for itself). Ranks that resolve the
 * directory to the same global name (file://HOST/... for node-local storage,
 * nfs://SERVER:/EXPORT/... and so on for shared storage) share its storage
 * and form one group; groups are numbered 0..ngroups-1 by FGFS. */

/* Remove the token "files=auto" from mode: *out is a malloc'd copy without
 * it (*found = 1) or NULL when the token is absent (*found = 0). Other
 * files=... values stay, and core_mode_parse refuses them. */
static int mode_strip_auto(const char *mode, char **out, int *found)
{
    *out = NULL;
    *found = 0;
    if (!mode)
        return 0;
    char *o = malloc(strlen(mode) + 1);
    if (!o)
        return binding_fail(SHEAF_E_NOMEM, "out of memory");
    size_t k = 0;
    for (const char *p = mode;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 10 && !strncmp(p, "files=auto", 10)) {
            *found = 1;
        } else if (len) {
            if (k)
                o[k++] = ',';
            memcpy(o + k, p, len);
            k += len;
        }
        if (!end)
            break;
        p = end + 1;
    }
    o[k] = '\0';
    if (!*found) {
        free(o);
        return 0;
    }
    *out = o;
    return 0;
}

typedef struct auto_desc {
    int group, ngroups;     /* this rank's storage group, number of groups */
} auto_desc;

#ifdef SHEAF_HAVE_FGFS
/* Directory of fname (malloc'd; NULL: out of memory). */
static char *dir_of(const char *fname)
{
    const char *sl = strrchr(fname, '/');
    if (!sl)
        return strdup(".");
    if (sl == fname)
        return strdup("/");
    size_t n = (size_t)(sl - fname);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, fname, n);
        d[n] = '\0';
    }
    return d;
}

static int fgfs_code(int frc)
{
    return frc == SHEAF_FGFS_ENOMEM ? SHEAF_E_NOMEM : frc == SHEAF_FGFS_EINVAL ? SHEAF_E_ARG : SHEAF_E_IO;
}
#endif

/* The storage group of this rank for the directory of fname. Collective
 * over comm (gComm): with FGFS, one MPI_Comm_dup (FGFS's
 * private communicator) + 1 MPI_Allreduce, FGFS init (1 reduce + 1 bcast of
 * 32 bytes; it parses the mount table: /proc/self/mountinfo or
 * $SHEAF_FGFS_MOUNTINFO), the parallel descriptor (1 reduce + 1 bcast of the
 * table of distinct names: about 70 bytes per group, bounded by FGFS's
 * max_group_bytes, 1 MiB), MPI_Comm_free, and 1 agreement. Returns 0 on
 * every rank or a failure on every rank, with the message of the first rank
 * that failed. Without FGFS: fails on every rank (no communication). */
static int auto_groups(const char *call, const char *fname, MPI_Comm comm, int rank, auto_desc *d)
{
#ifndef SHEAF_HAVE_FGFS
    (void)comm;
    (void)rank;
    (void)d;
    return binding_fail(SHEAF_E_ARG, "%s: %s: files=auto needs FGFS (libsheaf_fgfs, which tells the ranks that "
                        "share storage), and this sheaf was built without it (SHEAF_FGFS off: xxhash.h was not "
                        "found at build time); give numFiles or lComm instead", fname, call);
#else
    char *dir = dir_of(fname);
    int lrc = dir ? 0 : binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
    sheaf_fgfs_comm fc;
    int frc = sheaf_fgfs_comm_mpi(comm, &fc); /* taken part in even after a local failure */
    if (frc && !lrc)
        lrc = binding_fail(fgfs_code(frc), "%s: %s: files=auto: %s", fname, call, sheaf_fgfs_last_error());
    int arc = agree(call, fname, comm, rank, lrc, NULL);
    if (arc) {
        if (!frc)
            fc.ops->free_comm(&fc);
        free(dir);
        return arc;
    }
    /* init and the descriptor fail on every rank or on none: the rank that
     * failed has its own message, the others EREMOTE */
    sheaf_fgfs_ctx *ctx = NULL;
    sheaf_fgfs_pardesc pd;
    memset(&pd, 0, sizeof pd);
    frc = sheaf_fgfs_init(&fc, NULL, &ctx);
    if (!frc)
        frc = sheaf_fgfs_pardesc_of(ctx, dir, &pd);
    if (ctx)
        sheaf_fgfs_finalize(ctx);
    fc.ops->free_comm(&fc);
    lrc = 0;
    if (frc && frc != SHEAF_FGFS_EREMOTE)
        lrc = binding_fail(fgfs_code(frc), "%s: %s: files=auto: FGFS cannot tell which ranks share the storage of "
                           "%s: %s", fname, call, dir, sheaf_fgfs_last_error());
    arc = agree(call, fname, comm, rank, lrc, NULL);
    if (!arc && frc) /* every rank saw EREMOTE: not expected, but never go on */
        arc = binding_fail(SHEAF_E_IO, "%s: %s: files=auto: FGFS cannot tell which ranks share the storage of %s: "
                           "%s", fname, call, dir, sheaf_fgfs_last_error());
    free(dir);
    d->group = pd.group;
    d->ngroups = pd.ngroups;
    return arc;
#endif
}

/* files=auto, write: the ranks of this rank's storage group form its local
 * communicator; when numFiles (req) asks for more files than there are
 * groups, each group is cut into k = req / ngroups contiguous pieces (at
 * most one per rank, in rank order). One MPI_Comm_split over comm (two with
 * k > 1). Local result: *lc (MPI_ERRORS_RETURN) or MPI_COMM_NULL and a
 * failure; the caller agrees. */
static int auto_split_write(const char *call, const char *fname, MPI_Comm comm, int rank, const auto_desc *d,
                            int req, MPI_Comm *lc)
{
    *lc = MPI_COMM_NULL;
    MPI_Comm gc = MPI_COMM_NULL;
    int rc = MPI_Comm_split(comm, d->group, rank, &gc);
    if (rc != MPI_SUCCESS)
        return mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Comm_split by storage group failed", rc);
    int k = d->ngroups > 0 && req > d->ngroups ? req / d->ngroups : 1;
    if (k > 1) {
        int gr = 0, gs = 1, f = 0, lr = 0, ls = 0;
        MPI_Comm_rank(gc, &gr);
        MPI_Comm_size(gc, &gs);
        split_by_count(gr, gs, k < gs ? k : gs, &f, &lr, &ls);
        rc = MPI_Comm_split(gc, f, gr, lc);
        MPI_Comm_free(&gc);
        if (rc != MPI_SUCCESS) {
            *lc = MPI_COMM_NULL;
            return mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Comm_split of a storage group failed", rc);
        }
    } else {
        *lc = gc;
    }
    MPI_Comm_set_errhandler(*lc, MPI_ERRORS_RETURN);
    return 0;
}

/* files=auto, read: can every rank read its physical file in its storage?
 * Rank 0 reads the metadata of file 0 (the generic open reads it again) and
 * (1 agreement) checks, with every rank's storage group (1 MPI_Gather), that
 * the tasks of each physical file are in one storage group now, as they were
 * when the set was written (on node-local storage: the same ranks on each
 * node). Each rank gets the verdict and its (file, local rank) (1
 * MPI_Scatter of 3 ints), the master of each file checks that the file is
 * there (access), the ranks of each file are split off (MPI_Comm_split) into
 * *lc, and 1 agreement ends it. Returns 0 on every rank (*lc set) or a
 * failure on every rank (*lc MPI_COMM_NULL), with the message of the first
 * rank that failed. */
static int auto_read_check(const char *call, const char *fname, MPI_Comm comm, int rank, int size,
                           const auto_desc *d, MPI_Comm *lc)
{
    int *grp = NULL, *fl = NULL, mine[3] = {0, -1, -1}, lrc = 0;
    sheaf__binding_v1_set m;
    memset(&m, 0, sizeof m);
    m.mapping_size = -1;
    *lc = MPI_COMM_NULL;
    if (rank == 0) {
        int mrc;
        if (!(grp = malloc((size_t)size * sizeof *grp)) || !(fl = malloc((size_t)size * 3 * sizeof *fl)))
            lrc = binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
        else if ((mrc = binding_set_read(fname, &m)) != 0) {
            char why[1024];
            snprintf(why, sizeof why, "%s", sheaf_last_error());
            lrc = binding_fail(mrc, "%s: %s: files=auto: rank 0 cannot read the first physical file of the set in its "
                               "storage (%s); on node-local storage a set is read with the ranks placed on the nodes "
                               "as when it was written (rank 0 on the node of the first file)", fname, call, why);
        }
    }
    if ((lrc = agree(call, fname, comm, rank, lrc, NULL)) != 0) {
        free(grp);
        free(fl);
        free(m.mapping);
        return lrc;
    }
    int one = d->group, rc = MPI_Gather(&one, 1, MPI_INT, grp, 1, MPI_INT, 0, comm);
    if (rc != MPI_SUCCESS)
        lrc = mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Gather of the storage groups failed", rc);
    if (rank == 0) {
        int nf = m.nfiles > 1 ? m.nfiles : 1;
        /* tasks of the set: file 0's own for a single file, else the
         * mapping's; a set of another size, or a broken mapping, is left to
         * the generic open's own message (file -1: nothing to check here) */
        int judge = !lrc && (nf == 1 ? m.ntasks == size : m.mapping && m.mapping_size == size);
        for (int g = 0; g < size; g++) {
            int f = nf > 1 && judge ? m.mapping[2 * g] : 0, l = nf > 1 && judge ? m.mapping[2 * g + 1] : g;
            if (f < 0 || f >= nf)
                judge = 0;
            fl[3 * g + 1] = f;
            fl[3 * g + 2] = l;
        }
        int *first = judge ? malloc((size_t)nf * sizeof *first) : NULL;
        if (judge && !first && !lrc)
            lrc = binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
        for (int f = 0; first && f < nf; f++)
            first[f] = -1;
        for (int g = 0; first && g < size && !lrc; g++) {
            int f = fl[3 * g + 1];
            if (first[f] < 0)
                first[f] = g;
            else if (grp[first[f]] != grp[g])
                lrc = binding_fail(SHEAF_E_ARG, "%s: %s: files=auto: physical file %d of %d was written by tasks that "
                                   "shared its storage, but in this run its tasks %d and %d are in different storage "
                                   "groups (of %d): the ranks are placed on the nodes differently from the run that "
                                   "wrote the set. Read it with the writer's placement (the same ranks on each node), "
                                   "or copy the physical files to storage all ranks share", fname, call, f, nf,
                                   first[f], g, d->ngroups);
        }
        free(first);
        for (int g = 0; g < size; g++) {
            fl[3 * g] = lrc;
            if (!judge)
                fl[3 * g + 1] = fl[3 * g + 2] = -1;
        }
    }
    free(grp);
    free(m.mapping);
    rc = MPI_Scatter(fl, 3, MPI_INT, mine, 3, MPI_INT, 0, comm);
    free(fl);
    if (rc != MPI_SUCCESS && !lrc)
        lrc = mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Scatter of the physical files failed", rc);
    if (!lrc && !mine[0] && mine[1] >= 0 && mine[2] == 0) {
        char *path = binding_member_name(fname, mine[1]);
        int e = 0;
        if (!path)
            lrc = binding_fail(SHEAF_E_NOMEM, "%s: %s: out of memory", fname, call);
        else if (access(path, R_OK) != 0 && (e = errno) != 0)
            lrc = binding_fail(e == ENOENT ? SHEAF_E_NOTFOUND : SHEAF_E_IO,
                               "%s: %s: files=auto: rank %d, the master of physical file %d, cannot read %s in its "
                               "storage (%s); on node-local storage a set is read with the ranks placed on the nodes "
                               "as when it was written", fname, call, rank, mine[1], path, strerror(e));
        free(path);
    }
    /* every rank takes part (the caller may not want *lc: it frees it) */
    rc = MPI_Comm_split(comm, mine[1] >= 0 ? mine[1] : 0, rank, lc);
    if (rc != MPI_SUCCESS) {
        *lc = MPI_COMM_NULL;
        if (!lrc)
            lrc = mpi_fail(call, fname, SHEAF_E_IO, "files=auto: MPI_Comm_split by physical file failed", rc);
    } else {
        MPI_Comm_set_errhandler(*lc, MPI_ERRORS_RETURN);
    }
    lrc = agree(call, fname, comm, rank, lrc, NULL);
    if (lrc && *lc != MPI_COMM_NULL)
        MPI_Comm_free(lc);
    return lrc;
}

int sion_paropen_mpi(const char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm,
                     const MPI_Comm *lComm, sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank,
                     FILE **fileptr, char **newfname)
{
    static const char call[] = "sion_paropen_mpi";
    const char *shown = fname ? fname : "(null)";
    binding_clear_error();
    if (check_mpi(call, shown, gComm)) {
        binding_report_error(-1);
        return -1;
    }
    MPI_Comm comm = gComm; /* no duplicate: see the top of this file */
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (globalrank)
        *globalrank = rank;

    /* local checks, then one agreement over gComm */
    int lrc = 0, aid = api_id(), files_auto = 0;
    char *automode = NULL; /* files=auto: the mode without the key, for the generic layer */
    int mwrite = 0, buddy = 0;
    int write = 0, bycount = 0, lrank = 0, lsize = 0, filenumber = 0, nfiles = 0;
    MPI_Comm lc = MPI_COMM_NULL, autolc = MPI_COMM_NULL;
    mpi_group *g = group_new(call, shown, comm);
    if (!g)
        lrc = SHEAF_E_NOMEM;
    else if (aid < 0)
        lrc = mpi_fail(call, shown, SHEAF_E_NOMEM, "cannot create the MPI API object (out of memory)", MPI_SUCCESS);
    else if (!fname)
        lrc = mpi_fail(call, shown, SHEAF_E_ARG, "file name is NULL", MPI_SUCCESS);
    else if (mode_strip_auto(file_mode, &automode, &files_auto))
        lrc = SHEAF_E_NOMEM;
    else if (binding_mode_parse(files_auto ? automode : file_mode, &mwrite, &buddy))
        lrc = sheaf_last_error_code() ? sheaf_last_error_code() : SHEAF_E_ARG;
    else if (files_auto && buddy)
        lrc = binding_fail(SHEAF_E_ARG, "%s: %s: files=auto and buddy cannot be combined (the buddy copies are "
                           "placed by their own rule)", shown, call);
    else if ((write = mwrite) && files_auto) {
        /* numFiles: > 0 asks for at least that many files; lComm is an output */
        if (numFiles && *numFiles > size)
            lrc = binding_fail(SHEAF_E_ARG, "%s: %s: numFiles=%d is larger than the number of tasks (%d)", shown, call,
                               *numFiles, size);
    } else if (write) {
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
     * same split (numFiles > 0, or 0: lComm; with files=auto the number
     * asked for, 0 when none), and all or none with files=auto; checked on
     * every rank, so the generic layer is entered by all ranks or none */
    int req = files_auto && write && numFiles && *numFiles > 0 ? *numFiles : 0;
    int nf = !write ? -1 : files_auto ? req : bycount ? *numFiles : 0;
    int mm[4] = {nf, -nf, files_auto, -files_auto};
    lrc = agree(call, shown, comm, rank, lrc, mm);
    if (lrc == 0 && mm[2] != -mm[3])
        lrc = binding_fail(SHEAF_E_ARG, "%s: %s: the ranks disagree on files=auto: rank %d %s it, other ranks %s (it "
                           "must be the same on every rank)", shown, call, rank, files_auto ? "gives" : "does not give",
                           files_auto ? "do not" : "do");
    else if (lrc == 0 && mm[0] == -1 && -mm[1] >= 0)
        lrc = binding_fail(SHEAF_E_ARG, "%s: %s: the ranks disagree on the file mode (read or write): rank %d opens "
                           "for %s, other ranks for %s (it must be the same on every rank)", shown, call, rank,
                           write ? "writing" : "reading", write ? "reading" : "writing");
    else if (lrc == 0 && mm[0] != -mm[1])
        lrc = binding_fail(SHEAF_E_ARG, "%s: %s: the ranks disagree on the number of files (numFiles): from %d to %d "
                           "(<= 0 means lComm; it must be the same on every rank)", shown, call, mm[0], -mm[1]);
    if (lrc == 0 && files_auto) {
        /* the storage groups of the directory; writing, one local
         * communicator per group (or per piece of one), numbered below as an
         * lComm is; reading, a check that the set can be read here */
        auto_desc d = {0, 0};
        lrc = auto_groups(call, shown, comm, rank, &d);
        if (lrc == 0 && write) {
            lrc = auto_split_write(call, shown, comm, rank, &d, req, &autolc);
            lrc = agree(call, shown, comm, rank, lrc, NULL);
            if (lrc == 0) {
                lc = autolc;
                MPI_Comm_rank(lc, &lrank);
                MPI_Comm_size(lc, &lsize);
            }
        } else if (lrc == 0) {
            lrc = auto_read_check(call, shown, comm, rank, size, &d, &autolc);
        }
    }
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
    if (lrc) {
        free(automode);
        if (autolc != MPI_COMM_NULL)
            MPI_Comm_free(&autolc);
        return open_failed(g, rank);
    }

    /* write: the split is an input; read: everything is an output */
    int sid = sion_generic_paropen(aid, fname, files_auto ? automode : file_mode, chunksize, fsblksize, g, rank,
                                   size, &filenumber, &nfiles, &lrank, &lsize, fileptr, newfname);
    free(automode);
    if (sid < 0) {
        group_free(g);
        if (autolc != MPI_COMM_NULL)
            MPI_Comm_free(&autolc);
        return -1;
    }
    if (numFiles && !(write && bycount))
        *numFiles = nfiles;
    if (files_auto) {
        /* the ranks of this rank's physical file, for the caller (SIONlib's
         * lComm output); the caller frees it */
        if (lComm)
            *(MPI_Comm *)(uintptr_t)lComm = autolc;
        else
            MPI_Comm_free(&autolc);
    }
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
    binding_clear_error();
    if (check_mpi(call, shown, gComm)) {
        binding_report_error(-1);
        return -1;
    }
    MPI_Comm comm = gComm; /* no duplicate: see the top of this file */
    int rank = 0, size = 1, lrc = 0, aid = api_id();
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mpi_group *g = group_new(call, shown, comm);
    if (!g)
        lrc = SHEAF_E_NOMEM;
    else if (aid < 0)
        lrc = mpi_fail(call, shown, SHEAF_E_NOMEM, "cannot create the MPI API object (out of memory)", MPI_SUCCESS);
    if ((lrc = agree(call, shown, comm, rank, lrc, NULL)) != 0)
        return open_failed(g, rank);
    int sid = sion_generic_paropen_mapped(aid, fname, file_mode, numFiles, g, rank, size, nlocaltasks,
                                          globalranks, chunksizes, mapping_filenrs, mapping_lranks, fsblksize,
                                          fileptr);
    if (sid < 0) {
        group_free(g);
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
    MPI_Comm lc = lComm;
    int sid = paropen_namebuf(fname, file_mode, numFiles, gComm, &lc, chunksize, fsblksize, globalrank, fileptr,
                              newfname);
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
