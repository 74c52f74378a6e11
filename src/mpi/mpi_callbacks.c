/* mpi_callbacks.c - the MPI binding's callbacks for the generic layer: local
 * groups (MPI_Comm_split of gComm, kept between opens by the communicator
 * cache), barrier, bcast, gather(v), scatter(v) on a group's communicator,
 * and the API object they are registered with. */
#include "mpi_internal.h"
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_aid = -1;

/* ---- callbacks ------------------------------------------------------------ */

static MPI_Datatype mpi_type(int datatype)
{
    switch (datatype) {
    case _SION_INT32:
        return MPI_INT32_T;
    case _SION_INT64:
        return MPI_INT64_T;
    case _SION_CHAR:
        return MPI_CHAR;
    default:
        return MPI_DATATYPE_NULL;
    }
}

/* The local group of a physical file: MPI_Comm_split(gComm, color = file
 * number, key = rank in the file), from the communicator cache when this
 * (gComm, file split) pair was opened before (commcache.h). How the ranks
 * agree on a cache hit is the global group's cc_how, set by the open: CC_SAME
 * for a write with numFiles > 0 (the split is a function of gComm and
 * numFiles), CC_READ for a read (CC_SAME for a one-file set, CC_AGREE
 * otherwise), CC_AGREE for a write with lComm, CC_OFF with buddy (its extra
 * groups are split off the same gComm in the same open). Only the first
 * local group of an open is cached; it takes the cache entry and the group
 * object the open reserved before its agreement (sion_mpi.c, open_reserve),
 * so the split is the only thing here that can fail, and it fails on every
 * rank or none. */
static int cb_create_lcg(void **local_group, void *global_group, int grank, int gsize, int lrank, int lsize,
                         int filenumber, int numfiles)
{
    (void)grank;
    (void)gsize;
    mpi_group *g = global_group;
    MPI_Comm gcomm = mpi_group_comm(g);
    if (!local_group || gcomm == MPI_COMM_NULL)
        return 1;
    mpi_group *l = g->lspare ? g->lspare : calloc(1, sizeof *l);
    g->lspare = NULL;
    /* still take part in the split when out of memory, so no rank waits */
    cc_split key = {numfiles, filenumber, lrank, lsize};
    int how = g->cc_how;
    g->cc_how = CC_OFF;
    MPI_Comm comm = MPI_COMM_NULL;
    cc_entry *lease = NULL;
    int rc =
        cc_split_comm(gcomm, how, &key, filenumber >= 0 ? filenumber : MPI_UNDEFINED, lrank, &g->spare, &comm, &lease);
    cc_unreserve(g->spare); /* not needed: a hit, or not cached */
    g->spare = NULL;
    if (rc != MPI_SUCCESS || !l) {
        if (rc == MPI_SUCCESS)
            cc_release(lease, comm);
        free(l);
        return 1;
    }
    l->comm = comm;
    l->owned = 1;
    l->lease = lease;
    l->sid = -1;
    *local_group = l;
    return 0;
}

/* The local group's communicator goes back to the cache (or is freed). */
static int cb_free_lcg(void *local_group)
{
    mpi_group *l = local_group;
    if (!l)
        return 0;
    if (l->owned)
        cc_release(l->lease, l->comm);
    free(l);
    return 0;
}

static int cb_barrier(void *group) { return MPI_Barrier(mpi_group_comm(group)) == MPI_SUCCESS ? 0 : 1; }

static int cb_bcast(void *data, void *group, int datatype, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    if (t == MPI_DATATYPE_NULL)
        return 1;
    return MPI_Bcast(data, nelem, t, root, mpi_group_comm(group)) == MPI_SUCCESS ? 0 : 1;
}

static int cb_gather(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    if (t == MPI_DATATYPE_NULL)
        return 1;
    return MPI_Gather(in, nelem, t, out, nelem, t, root, mpi_group_comm(group)) == MPI_SUCCESS ? 0 : 1;
}

/* Test hook (mpi_internal.h): asked before the root allocates its
 * displacements; non-zero makes the allocation fail as out of memory would.
 * While a hook is set every communicator takes the heap path below, so the
 * test reaches it at small sizes. */
static int (*g_alloc_fault)(const char *what);
void mpi_set_alloc_fault_hook(int (*fn)(const char *what)) { g_alloc_fault = fn; }

/* Communicators up to this size keep the root's displacements on its stack:
 * the root cannot run out of memory for them, so it always takes part and no
 * task needs to hear about it first. Above it they come from the heap, and
 * every task (all know the size) waits for the root's verdict. */
#define VCOLL_STACK 1024

static int heap_path(int n) { return n > VCOLL_STACK || g_alloc_fault != NULL; }

/* Displacements (in elements) from the counts of every task of comm, into
 * displs (n entries). 0 when a count is negative or the total does not fit
 * an int. */
static int displacements(int n, const int *counts, int *displs)
{
    long long total = 0;
    for (int i = 0; i < n; i++) {
        if (!counts || counts[i] < 0 || total > INT_MAX)
            return 0;
        displs[i] = (int)total;
        total += counts[i];
    }
    return total <= INT_MAX;
}

/* gatherv and scatterv: the root's displacements, then the exchange. `mine`
 * is each task's own nelem elements, `all` the root's packed array
 * (counts[i] elements for task i, in rank order; counts are read on the root
 * only). A root that cannot take part must not leave the others waiting in
 * the collective: on the heap path (size > VCOLL_STACK) its verdict goes to
 * every task first (one MPI_Bcast) and a failure fails the call on every
 * task; on the stack path it only fails on bad counts, and then takes part
 * with zero counts and a non-zero return (the parallel layer's per-call
 * context carries that failure to every task with its next message). */
static int vector_coll(int scatter, void *mine, void *all, void *group, int datatype, int *counts, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    MPI_Comm comm = mpi_group_comm(group);
    int rank, n;
    if (t == MPI_DATATYPE_NULL || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 1;
    int stack_d[VCOLL_STACK], stack_z[VCOLL_STACK], *displs = NULL, *cnt = counts, ready = 1, rc = MPI_SUCCESS;
    int heap = heap_path(n);
    if (rank == root) {
        int fail = g_alloc_fault && g_alloc_fault(scatter ? "scatterv" : "gatherv");
        displs = !heap ? stack_d : fail ? NULL : malloc((size_t)(n > 0 ? n : 1) * sizeof *displs);
        ready = displs && displacements(n, counts, displs);
    }
    if (heap)
        rc = MPI_Bcast(&ready, 1, MPI_INT, root, comm);
    else if (!ready) { /* stack path, bad counts: take part receiving/sending nothing */
        memset(stack_z, 0, sizeof(int) * (size_t)n);
        memset(stack_d, 0, sizeof(int) * (size_t)n);
        cnt = stack_z;
    }
    if (rc == MPI_SUCCESS && (ready || !heap))
        rc = scatter ? MPI_Scatterv(all, cnt, displs, t, mine, nelem, t, root, comm)
                     : MPI_Gatherv(mine, nelem, t, all, cnt, displs, t, root, comm);
    if (displs != stack_d)
        free(displs);
    return rc == MPI_SUCCESS && ready ? 0 : 1;
}

/* gatherv: `in` has nelem elements on every task; counts (valid on the root
 * only) say how many arrive from each task, packed in rank order into `out`.
 * A total above INT_MAX elements is refused (non-zero return on every task). */
static int cb_gatherv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    return vector_coll(0, in, out, group, datatype, counts, nelem, root);
}

/* SIONlib's order: scatter takes the root's array first (`in`, read on the
 * root only) and each task's destination second (`out`), as MPI_Scatter. */
static int cb_scatter(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    MPI_Datatype t = mpi_type(datatype);
    if (t == MPI_DATATYPE_NULL)
        return 1;
    return MPI_Scatter(in, nelem, t, out, nelem, t, root, mpi_group_comm(group)) == MPI_SUCCESS ? 0 : 1;
}

/* scatterv is the other way round in SIONlib: each task's destination is
 * `in` (nelem elements), the root's array `out` (counts[i] for task i). */
static int cb_scatterv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    return vector_coll(1, in, out, group, datatype, counts, nelem, root);
}

static int cb_capability(void *group) { return SION_CAPABILITY_FULL; }

static const binding_callbacks g_callbacks = {.create_lcg = cb_create_lcg,
                                              .free_lcg = cb_free_lcg,
                                              .barrier = cb_barrier,
                                              .bcast = cb_bcast,
                                              .gather = cb_gather,
                                              .gatherv = cb_gatherv,
                                              .scatter = cb_scatter,
                                              .scatterv = cb_scatterv,
                                              .gather_exec = mpi_cb_gather_exec,
                                              .exec_scatter = mpi_cb_exec_scatter,
                                              .capability = cb_capability,
                                              .lcg_agreed =
                                                  1 /* the split fails on every rank or none (cb_create_lcg) */};

static void init_api(void) { g_aid = binding_create_api("sheaf_mpi", &g_callbacks); }

/* The process's API id, or -1 (never created: out of memory). */
int mpi_api_id(void)
{
    pthread_once(&g_once, init_api);
    return g_aid;
}
