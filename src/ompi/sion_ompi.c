/* sion_ompi.c - the hybrid layer (libsheaf_ompi): every thread of every MPI
 * rank is a task (task = rank * nthreads + thread), on the generic API.
 *
 * A group (global, or one physical file's) is an MPI communicator of whole
 * processes plus the thread team of this process. A collective first moves
 * the threads' data to the process's master thread (thread 0) through shared
 * memory (teamcomm.c), the master runs the MPI collective for the whole
 * process, and the result goes back to the threads. Only thread 0 calls MPI,
 * so MPI_THREAD_FUNNELED is enough. Task order: rank-major, so a process's
 * threads are contiguous in every collective and one MPI call per collective
 * suffices. Physical files are split at process granularity.
 *
 * Communicators: the global group is gComm itself (no duplicate: the reasons
 * are at the top of src/mpi/sion_mpi.c; sheaf makes only collective calls on
 * it); a physical file's group is MPI_Comm_split(gComm) at process
 * granularity, kept by the communicator cache (src/mpi/commcache.h) for the
 * next open of the same (gComm, file split) pair. So an open creates at most
 * one communicator, and a repeated open none. */
#include "sion.h"
#include "sion_ompi.h"
#include "ompi_int.h"
#include "sheaf_comm_mpi.h"
#include <stdio.h>
#include "ompi_test_hook.h"
#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int grow(hy_group *g, size_t n)
{
    if (n <= g->cap)
        return 0;
    char *b = realloc(g->buf, n);
    if (!b)
        return 1;
    g->buf = b;
    g->cap = n;
    return 0;
}

/* A collective's end: every thread learns the master's result. Every
 * collective on a `broken` group fails at once, on every thread, moving no
 * data (no other process is in it: cb_create_lcg). */
static int finish(hy_group *g)
{
#pragma omp barrier
    int rc = g->mpirc != MPI_SUCCESS;
#pragma omp barrier
    return rc;
}

static int cb_barrier(void *group)
{
    hy_group *g = group;
    if (g->broken)
        return 1;
#pragma omp barrier
#pragma omp master
    g->mpirc = MPI_Barrier(g->comm);
    return finish(g);
}

static int cb_bcast(void *data, void *group, int datatype, int nelem, int root)
{
    hy_group *g = group;
    if (g->broken)
        return 1;
    size_t n = team_type_size(datatype) * (size_t)(nelem > 0 ? nelem : 0);
    int t = omp_get_thread_num(), rp = root / g->nthreads, rt = root % g->nthreads;
    if (g->prank == rp && t == rt)
        g->team->ptr[0] = data;
#pragma omp barrier
#pragma omp master
    {
        g->mpirc = n > INT_MAX || grow(g, n) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
        if (g->prank == rp && g->mpirc == MPI_SUCCESS)
            memcpy(g->buf, g->team->ptr[0], n);
        if (g->mpirc == MPI_SUCCESS)
            g->mpirc = MPI_Bcast(g->buf, (int)n, MPI_BYTE, rp, g->comm);
    }
#pragma omp barrier
    if (g->mpirc == MPI_SUCCESS && n)
        memcpy(data, g->buf, n);
    return finish(g);
}

static int cb_gather(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    hy_group *g = group;
    if (g->broken)
        return 1;
    size_t e = team_type_size(datatype) * (size_t)(nelem > 0 ? nelem : 0), mine = e * (size_t)g->nthreads;
    int t = omp_get_thread_num(), rp = root / g->nthreads, rt = root % g->nthreads;
    g->team->ptr[t] = in;
#pragma omp barrier
#pragma omp master
    {
        size_t all = mine * (size_t)g->nprocs;
        g->mpirc = (all > INT_MAX || grow(g, mine + (g->prank == rp ? all : 0))) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
        if (g->mpirc == MPI_SUCCESS) {
            for (int i = 0; i < g->nthreads; i++)
                memcpy(g->buf + (size_t)i * e, g->team->ptr[i], e);
            g->mpirc = MPI_Gather(g->buf, (int)mine, MPI_BYTE, g->prank == rp ? g->buf + mine : NULL, (int)mine,
                                  MPI_BYTE, rp, g->comm);
        }
    }
#pragma omp barrier
    if (g->prank == rp && t == rt && g->mpirc == MPI_SUCCESS)
        memcpy(out, g->buf + mine, mine * (size_t)g->nprocs);
    return finish(g);
}

/* SIONlib's order: the root's array is `in`, each task's destination `out`
 * (scatterv below is the other way round, as in SIONlib). */
static int cb_scatter(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    hy_group *g = group;
    if (g->broken)
        return 1;
    size_t e = team_type_size(datatype) * (size_t)(nelem > 0 ? nelem : 0), mine = e * (size_t)g->nthreads;
    int t = omp_get_thread_num(), rp = root / g->nthreads, rt = root % g->nthreads;
    if (g->prank == rp && t == rt)
        g->team->ptr[0] = in;
#pragma omp barrier
#pragma omp master
    {
        size_t all = mine * (size_t)g->nprocs;
        g->mpirc = (all > INT_MAX || grow(g, mine)) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
        if (g->mpirc == MPI_SUCCESS)
            g->mpirc = MPI_Scatter(g->prank == rp ? g->team->ptr[0] : NULL, (int)mine, MPI_BYTE, g->buf, (int)mine,
                                   MPI_BYTE, rp, g->comm);
    }
#pragma omp barrier
    if (g->mpirc == MPI_SUCCESS && e)
        memcpy(out, g->buf + (size_t)t * e, e);
    return finish(g);
}

/* Per-process byte counts from per-task element counts (root process's master). */
static int process_counts(hy_group *g, const int *counts, size_t es)
{
    free(g->pc);
    free(g->pd);
    g->pc = malloc((size_t)g->nprocs * sizeof *g->pc);
    g->pd = malloc((size_t)g->nprocs * sizeof *g->pd);
    if (!g->pc || !g->pd)
        return 1;
    long long off = 0;
    for (int p = 0; p < g->nprocs; p++) {
        long long s = 0;
        for (int i = 0; i < g->nthreads; i++)
            s += counts[p * g->nthreads + i] > 0 ? counts[p * g->nthreads + i] : 0;
        s *= (long long)es;
        if (s > INT_MAX || off > INT_MAX)
            return 1;
        g->pc[p] = (int)s;
        g->pd[p] = (int)off;
        off += s;
    }
    return off > INT_MAX;
}

static int cb_gatherv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    hy_group *g = group;
    if (g->broken)
        return 1;
    size_t es = team_type_size(datatype);
    int t = omp_get_thread_num(), rp = root / g->nthreads, rt = root % g->nthreads;
    g->team->ptr[t] = in;
    g->team->count[t] = nelem > 0 ? nelem : 0;
    if (g->prank == rp && t == rt)
        g->team->displ[0] = (int64_t)(intptr_t)counts; /* the root thread's counts, for its master */
#pragma omp barrier
#pragma omp master
    {
        size_t mine = 0;
        for (int i = 0; i < g->nthreads; i++)
            mine += (size_t)g->team->count[i] * es;
        int bad = mine > INT_MAX || grow(g, mine);
        if (!bad && g->prank == rp)
            bad = process_counts(g, (const int *)(intptr_t)g->team->displ[0], es);
        size_t off = 0;
        for (int i = 0; !bad && i < g->nthreads; i++) {
            memcpy(g->buf + off, g->team->ptr[i], (size_t)g->team->count[i] * es);
            off += (size_t)g->team->count[i] * es;
        }
        g->team->ptr[0] = NULL;
        g->mpirc = bad ? MPI_ERR_NO_MEM : MPI_SUCCESS;
        /* the root thread's out is only known to it: receive into a staging area */
        char *recv = NULL;
        size_t total = 0;
        if (!bad && g->prank == rp) {
            total = (size_t)g->pd[g->nprocs - 1] + (size_t)g->pc[g->nprocs - 1];
            recv = malloc(total ? total : 1);
            if (!recv)
                g->mpirc = MPI_ERR_NO_MEM;
        }
        if (g->mpirc == MPI_SUCCESS)
            g->mpirc = MPI_Gatherv(g->buf, (int)mine, MPI_BYTE, recv, g->pc, g->pd, MPI_BYTE, rp, g->comm);
        g->team->ptr[0] = recv;
        g->team->displ[1] = (int64_t)total;
    }
#pragma omp barrier
    if (g->prank == rp && t == rt) {
        if (g->mpirc == MPI_SUCCESS && g->team->ptr[0])
            memcpy(out, g->team->ptr[0], (size_t)g->team->displ[1]);
        free(g->team->ptr[0]);
    }
    return finish(g);
}

static int cb_scatterv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    hy_group *g = group;
    if (g->broken)
        return 1;
    size_t es = team_type_size(datatype);
    int t = omp_get_thread_num(), rp = root / g->nthreads, rt = root % g->nthreads;
    g->team->count[t] = nelem > 0 ? nelem : 0;
    if (g->prank == rp && t == rt) {
        g->team->ptr[0] = out;
        g->team->displ[0] = (int64_t)(intptr_t)counts;
    }
#pragma omp barrier
#pragma omp master
    {
        size_t mine = 0;
        for (int i = 0; i < g->nthreads; i++)
            mine += (size_t)g->team->count[i] * es;
        int bad = mine > INT_MAX || grow(g, mine);
        if (!bad && g->prank == rp)
            bad = process_counts(g, (const int *)(intptr_t)g->team->displ[0], es);
        g->mpirc = bad ? MPI_ERR_NO_MEM
                       : MPI_Scatterv(g->prank == rp ? g->team->ptr[0] : NULL, g->pc, g->pd, MPI_BYTE, g->buf,
                                      (int)mine, MPI_BYTE, rp, g->comm);
    }
#pragma omp barrier
    if (g->mpirc == MPI_SUCCESS) {
        size_t off = 0;
        for (int i = 0; i < t; i++)
            off += (size_t)g->team->count[i] * es;
        memcpy(in, g->buf + off, (size_t)g->team->count[t] * es);
    }
    return finish(g);
}

/* ---- groups ------------------------------------------------------------- */

static hy_group *g_hand; /* master -> team hand-over of a new group */
#ifdef SHEAF_OMPI_TEST_HOOK
int ompi_test_fail;
#endif

/* Collective over the threads of this process: the master wraps its comm
 * (the others' arguments are ignored) into a group all threads share, in
 * `spare` (a zeroed object the open allocated before its agreement, so that
 * this cannot fail on one process only) or, without one, a new object;
 * owned: comm and lease are released with the group. NULL on all threads
 * when out of memory (the master then releases an owned comm). */
static hy_group *group_make(hy_group *spare, MPI_Comm comm, team_group *team, int owned, cc_entry *lease)
{
    hy_group *g = NULL;
#pragma omp barrier
#pragma omp master
    {
        g = spare ? spare : calloc(1, sizeof *g);
        if (g) {
            g->comm = comm;
            g->owned = owned;
            g->lease = lease;
            g->team = team;
            g->nthreads = omp_get_num_threads();
            g->nprocs = 1;
            if (comm != MPI_COMM_NULL) {
                MPI_Comm_size(comm, &g->nprocs);
                MPI_Comm_rank(comm, &g->prank);
            }
        } else if (owned) {
            cc_release(lease, comm);
        }
        g_hand = g;
    }
#pragma omp barrier
    g = g_hand;
#pragma omp barrier
    return g;
}

static int cb_create_lcg(void **local_group, void *global_group, int grank, int gsize, int lrank, int lsize,
                         int filenumber, int numfiles)
{
    hy_group *gg = global_group;
    int t = omp_get_thread_num();
    /* the threads of a process must share one file, in thread order */
    gg->team->count[t] = filenumber;
    gg->team->displ[t] = lrank - t;
#pragma omp barrier
    int consistent = gg->team->displ[0] % gg->nthreads == 0; /* the same verdict on every thread */
    for (int i = 0; i < gg->nthreads; i++)
        consistent &= gg->team->count[i] == gg->team->count[0] && gg->team->displ[i] == gg->team->displ[0];
    int first = gg->lspare != NULL; /* the open's own local group (read before the master takes the spare) */
#pragma omp barrier
    MPI_Comm lc = MPI_COMM_NULL;
    cc_entry *lease = NULL;
    hy_group *spare = NULL;
#pragma omp master
    {
        /* a process whose threads straddle files (a read of a set written
         * with another task layout) becomes a group of its own, so no process
         * waits for it. As the open's own local group it is made `broken`
         * rather than refused: its callbacks fail, so the open goes on to its
         * global agreement and fails there on every task (a refusal would
         * make this process leave before it while the others wait in it).
         * The communicator comes from the cache when this (gComm, split) pair
         * was opened before (not for a straddling process: numfiles -1). */
        int color = consistent ? gg->team->count[0] : numfiles + gg->prank;
        cc_split key = {consistent ? numfiles : -1, color, lrank, lsize};
        int how = gg->cc_how;
        gg->cc_how = CC_OFF; /* only the first local group of an open is cached */
        gg->mpirc = cc_split_comm(gg->comm, how, &key, color, lrank, &gg->spare, &lc, &lease);
        cc_unreserve(gg->spare); /* not needed: a hit, or not cached */
        gg->spare = NULL;
        spare = gg->lspare; /* the first local group of an open: cannot fail here (buddy's later ones can) */
        gg->lspare = NULL;
        if (spare)
            spare->broken = gg->straddled = !consistent;
    }
    int failed = finish(gg);
    hy_group *l = group_make(spare, lc, gg->team, 1, lease);
    *local_group = l;
    return !l || failed || (!consistent && !first);
}

/* Collective over the threads of this process: free a group (not its team). */
static void group_drop(hy_group *g)
{
#pragma omp barrier
#pragma omp master
    {
        if (g) {
            if (g->owned)
                cc_release(g->lease, g->comm);
            cc_unreserve(g->spare);
            free(g->lspare);
            free(g->buf);
            free(g->pc);
            free(g->pd);
            free(g);
        }
    }
#pragma omp barrier
}

static int cb_free_lcg(void *local_group)
{
    group_drop(local_group);
    return 0;
}

/* ---- the API object -------------------------------------------------------- */
static team_api g_api = TEAM_API_INIT;

static const binding_callbacks g_callbacks = {.create_lcg = cb_create_lcg,
                                              .free_lcg = cb_free_lcg,
                                              .barrier = cb_barrier,
                                              .bcast = cb_bcast,
                                              .gather = cb_gather,
                                              .gatherv = cb_gatherv,
                                              .scatter = cb_scatter,
                                              .scatterv = cb_scatterv,
                                              .gather_exec = hy_gather_exec,
                                              .exec_scatter = hy_exec_scatter,
                                              .capability = team_capability,
                                              /* the open's own local group fails on every process or none: its group
     * object and cache entry are reserved before the binding's agreement, and
     * a process whose threads straddle files gets a `broken` group that fails
     * the open's global agreement (cb_create_lcg); buddy's later groups are
     * not covered by this promise and have their own agreement (src/par/buddy.c) */
                                              .lcg_agreed = 1};

/* What the master thread works out before the generic open. */
typedef struct prep {
    int rc;
    char msg[SHEAF_COMM_MSGLEN + 64]; /* room for another rank's message and its rank */
    MPI_Comm comm;                    /* gComm itself: no duplicate (as in sion_mpi.c, whose top comment says why) */
    int rank, size, write, buddy, bycount, nfiles, filenumber, lprank, lpsize;
    cc_entry *spare;   /* the communicator cache's entry, reserved before the agreement (commcache.h) */
    hy_group *gg, *lg; /* the global and the first local group object, allocated before the agreement */
} prep;
static prep g_prep;

static void prep_fail(prep *pr, int rc, const char *fmt, const char *fname, const char *what)
{
    if (pr->rc)
        return;
    pr->rc = rc;
    snprintf(pr->msg, sizeof pr->msg, fmt, fname, what);
}

/* Only the master thread calls MPI, so MPI_THREAD_FUNNELED is what the
 * layer needs; as SIONlib, a plain MPI_Init (MPI_THREAD_SINGLE) is accepted
 * when the master thread is the one that initialized MPI (a warning on rank
 * 0); otherwise refused on every rank. 1: refused here. */
static int thread_level_refused(int *level)
{
    MPI_Query_thread(level);
    if (*level >= MPI_THREAD_FUNNELED)
        return 0;
    int ismain = 0;
    return MPI_Is_thread_main(&ismain) != MPI_SUCCESS || !ismain;
}

/* This rank's own checks: 0 or a reason number for the agreement (1: mode
 * or numFiles, 2: lComm, 3: numFiles too large; set by prepare: 4 thread
 * level, 5 the communicator cache's entry could not be reserved, 6 out of
 * memory for the thread team or a group object); *why: the mode parser's
 * message. lrank/lsize: the rank in lComm. */
static int prep_local(prep *pr, const char *file_mode, const int *numFiles, const MPI_Comm *lComm, int *lrank,
                      int *lsize, char *why, size_t whylen)
{
    int bad = binding_mode_parse(file_mode, &pr->write, &pr->buddy) != 0;
    if (bad) /* the parser's own message (e.g. files=auto, which only sion_paropen_mpi takes) */
        snprintf(why, whylen, "%s", sheaf_last_error());
    pr->bycount = pr->write && numFiles && *numFiles > 0;
    if (pr->write && !pr->bycount) {
        if (!numFiles)
            bad = 1;
        else if (!lComm || *lComm == MPI_COMM_NULL || MPI_Comm_rank(*lComm, lrank) != MPI_SUCCESS ||
                 MPI_Comm_size(*lComm, lsize) != MPI_SUCCESS)
            bad = 2;
    }
    if (pr->bycount && *numFiles > pr->size)
        bad = 3;
    return bad;
}

/* This rank's failure (a reason number of prep_local, not 0) as its code
 * and message. */
static void prep_reason(prep *pr, const char *fname, int bad, const char *why)
{
    if (bad >= 5)
        prep_fail(pr, SHEAF_E_NOMEM, "%s: sion_paropen_ompi: %s", fname,
                  bad == 5 ? "out of memory (an entry of the communicator cache)"
                           : "out of memory (the thread team or a group object of the hybrid binding)");
    else
        prep_fail(pr, SHEAF_E_ARG, "%s: sion_paropen_ompi: %s", fname,
                  bad == 4   ? "MPI runs below MPI_THREAD_FUNNELED and the OpenMP master thread is not the thread "
                               "that initialized MPI (use MPI_Init_thread with MPI_THREAD_FUNNELED)"
                  : bad == 3 ? "numFiles is larger than the number of MPI processes"
                  : bad == 2 ? "numFiles <= 0 needs a valid local communicator lComm"
                  : why[0]   ? why
                             : "invalid file mode or missing numFiles");
}

/* One agreement over gComm (sheaf_comm_agree over gComm itself,
 * sheaf_comm_mpi_ref: no allocation, no MPI call of its own; one
 * MPI_Allreduce when every rank was fine, the message's broadcast more when
 * one failed): this rank's failure, and the values that must agree: the
 * thread counts, the mode and numFiles (mf: -1 read, 0 lComm, > 0 numFiles),
 * each as minimum and negated maximum, and (negated) whether some rank runs
 * below MPI_THREAD_FUNNELED. A rank that failed keeps its own message, the
 * others take the first failing rank's. */
static void prep_agree(prep *pr, const char *fname, int bad, int nthreads, int mf, int below, const char *why)
{
    if (bad)
        prep_reason(pr, fname, bad, why);
    int64_t v[5] = {nthreads, -nthreads, mf, -mf, -below};
    sheaf_comm_mpi_ref_t ref;
    sheaf_comm_agreement a;
    int rc = sheaf_comm_agree(sheaf_comm_mpi_ref(&ref, pr->comm), pr->rc, pr->rc ? pr->msg : NULL, v, 5, &a);
    if (pr->rc)
        return;
    if (rc) {
        pr->rc = a.rank < 0 ? SHEAF_E_IO : a.code < 0 ? a.code : SHEAF_E_ARG;
        if (a.rank < 0)
            snprintf(pr->msg, sizeof pr->msg, "%s: sion_paropen_ompi: the agreement over gComm failed: %s", fname,
                     a.msg);
        else
            snprintf(pr->msg, sizeof pr->msg, "%s (failed on rank %d)", a.msg, a.rank);
        return;
    }
    if (v[0] != -v[1])
        prep_fail(pr, SHEAF_E_ARG, "%s: sion_paropen_ompi: %s", fname,
                  "the MPI processes run different numbers of threads");
    else if (v[2] == -1 && -v[3] >= 0)
        prep_fail(pr, SHEAF_E_ARG, "%s: sion_paropen_ompi: %s", fname,
                  "the ranks disagree on the file mode (read or write): some open for reading, some for writing "
                  "(it must be the same on every rank)");
    else if (v[2] != -v[3])
        prep_fail(pr, SHEAF_E_ARG, "%s: sion_paropen_ompi: %s", fname,
                  "the ranks disagree on the number of files (numFiles; <= 0 means lComm; it must be the same on "
                  "every rank)");
    static int warned; /* once per process (master thread only) */
    if (!pr->rc && v[4] && pr->rank == 0 && !warned++)
        binding_warn(0,
                     "%s: sion_paropen_ompi: MPI was initialized below MPI_THREAD_FUNNELED; sheaf calls MPI from "
                     "the master thread only, which works with common MPI libraries (MPI_Init_thread with "
                     "MPI_THREAD_FUNNELED is the correct level)",
                     fname);
}

/* A write's file split: numFiles > 0, contiguous rank ranges; else lComm,
 * files numbered by the order of their rank-0 processes in gComm. */
static void prep_split(prep *pr, const char *fname, const int *numFiles, const MPI_Comm *lComm, int lrank, int lsize)
{
    if (pr->bycount) {
        int per = pr->size / *numFiles, f = pr->rank / per;
        if (f > *numFiles - 1)
            f = *numFiles - 1;
        pr->nfiles = *numFiles;
        pr->filenumber = f;
        pr->lprank = pr->rank - f * per;
        pr->lpsize = f == *numFiles - 1 ? pr->size - (*numFiles - 1) * per : per;
        return;
    }
    int isroot = lrank == 0, before = 0, nf = 0;
    int rc = MPI_Exscan(&isroot, &before, 1, MPI_INT, MPI_SUM, pr->comm);
    if (pr->rank == 0)
        before = 0;
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(&before, 1, MPI_INT, 0, *lComm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(&isroot, &nf, 1, MPI_INT, MPI_SUM, pr->comm);
    if (rc != MPI_SUCCESS) {
        prep_fail(pr, SHEAF_E_IO, "%s: sion_paropen_ompi: %s", fname, "numbering the files over lComm failed");
        return;
    }
    pr->nfiles = nf;
    pr->filenumber = before;
    pr->lprank = lrank;
    pr->lpsize = lsize;
}

/* What a miss of the communicator cache and the groups of the open need,
 * before the agreement: a failure here fails the open on every rank there.
 * 0, or the reason number (prep_local). */
static int prep_reserve(prep *pr, MPI_Comm gComm)
{
    if (!pr->buddy && cc_reserve(gComm, &pr->spare) != MPI_SUCCESS)
        return 5;
    pr->gg = OMPI_HOOK_FAILS(OMPI_FAIL_GROUP) ? NULL : calloc(1, sizeof *pr->gg);
    pr->lg = OMPI_HOOK_FAILS(OMPI_FAIL_LGROUP) ? NULL : calloc(1, sizeof *pr->lg);
    return pr->gg && pr->lg ? 0 : 6;
}

/* Master thread: MPI checks and the file split, all agreed over gComm.
 * nomem: this process could not make its thread team (or API id); it still
 * takes part in the agreement, which fails the open on every rank. */
static void prepare(prep *pr, const char *fname, const char *file_mode, const int *numFiles, MPI_Comm gComm,
                    const MPI_Comm *lComm, int nthreads, int nomem)
{
    memset(pr, 0, sizeof *pr);
    pr->comm = MPI_COMM_NULL;
    int init = 0, level = 0;
    MPI_Initialized(&init);
    if (!init) {
        prep_fail(pr, SHEAF_E_ARG, "%s: sion_paropen_ompi: %s", fname, "MPI is not initialized");
        return;
    }
    if (gComm == MPI_COMM_NULL) {
        prep_fail(pr, SHEAF_E_ARG, "%s: sion_paropen_ompi: %s", fname, "gComm is MPI_COMM_NULL");
        return;
    }
    int notmain = thread_level_refused(&level);
    pr->comm = gComm;
    MPI_Comm_rank(pr->comm, &pr->rank);
    MPI_Comm_size(pr->comm, &pr->size);
    char why[512] = "";
    int lrank = 0, lsize = 1;
    int bad = prep_local(pr, file_mode, numFiles, lComm, &lrank, &lsize, why, sizeof why);
    if (notmain)
        bad = 4;
    /* the cache entry and the group objects before the agreement, so that a
     * failure to allocate them fails the open on every rank (commcache.h) */
    if (!bad)
        bad = nomem ? 6 : prep_reserve(pr, gComm);
    int mf = !pr->write ? -1 : pr->bycount ? *numFiles : 0;
    prep_agree(pr, fname, bad, nthreads, mf, level < MPI_THREAD_FUNNELED, why);
    if (!pr->rc && pr->write)
        prep_split(pr, fname, numFiles, lComm, lrank, lsize);
    if (pr->rc) {
        cc_unreserve(pr->spare);
        free(pr->gg);
        free(pr->lg);
        pr->spare = NULL;
        pr->gg = pr->lg = NULL;
    }
}

int sion_paropen_ompi(const char *fname, const char *file_mode, int *numFiles, MPI_Comm gComm, const MPI_Comm *lComm,
                      sion_int64 *chunksize, sion_int32 *fsblksize, int *globalrank, FILE **fileptr, char **newfname)
{
    int aid = team_api_id(&g_api, "sheaf_ompi", &g_callbacks);
    binding_clear_error();
    const char *shown = fname ? fname : "(null)";
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    team_group *team = team_new();
    if (OMPI_HOOK_FAILS(OMPI_FAIL_TEAM)) {
        team_free(team);
        team = NULL;
    }
#pragma omp master
    prepare(&g_prep, shown, file_mode, numFiles, gComm, lComm, nt, aid < 0 || !team);
#pragma omp barrier
    prep pr = g_prep;
#pragma omp barrier
    if (pr.rc) {
        binding_fail(pr.rc, "%s", pr.msg);
        binding_report_error(pr.rank * nt + t);
        if (team)
            team_free(team);
        return SION_ID_UNDEF;
    }
    /* from here every process goes through sion_generic_paropen: the group
     * objects exist (allocated before the agreement), group_make cannot fail */
    hy_group *g = group_make(pr.gg, pr.comm, team, 0, NULL);
    /* how the ranks agree on reusing a cached local communicator
     * (commcache.h); buddy splits more groups off gComm in the same open */
    int how = pr.buddy ? CC_OFF : !pr.write ? CC_READ : pr.bycount ? CC_SAME : CC_AGREE;
#pragma omp master
    {
        g->cc_how = how;
        g->spare = pr.spare;
        g->lspare = pr.lg;
    }
    int grank = pr.rank * nt + t, gsize = pr.size * nt;
    if (globalrank)
        *globalrank = grank;
    int fn = pr.filenumber, nf = pr.nfiles, lr = pr.lprank * nt + t, ls = pr.lpsize * nt;
    int sid = sion_generic_paropen(aid, fname, file_mode, chunksize, fsblksize, g, grank, gsize, &fn, &nf, &lr, &ls,
                                   fileptr, newfname);
    if (sid < 0) {
        if (g->straddled) /* the cause, in place of "a callback of the local group failed"; the agreed code */
            binding_fail(sheaf_last_error_code(),
                         "%s: sion_paropen_ompi: the file's task mapping puts the threads "
                         "of MPI process %d in different physical files or out of thread order (the hybrid binding "
                         "reads a multi-file set only when each process's threads are consecutive tasks of one "
                         "file)",
                         shown, pr.rank);
#pragma omp master
        {
            if (how != CC_OFF)
                cc_purge(pr.comm); /* the failure is on every rank: the caches stay alike */
        }
        group_drop(g);
        team_free(team);
        return SION_ID_UNDEF;
    }
#pragma omp master
    {
        if (numFiles && !(pr.write && *numFiles > 0))
            *numFiles = nf;
    }
#pragma omp barrier
    return sid;
}

int sion_parclose_ompi(int sid)
{
    hy_group *g = binding_global_group(sid);
    if (!g) {
        binding_fail(SHEAF_E_ARG, "sion_parclose_ompi: sid %d was not opened in parallel", sid);
        binding_report_error(-1);
        return SION_NOT_SUCCESS;
    }
    team_group *team = g->team;
    int rc = sion_generic_parclose(sid);
    group_drop(g);
    team_free(team);
    return rc;
}
