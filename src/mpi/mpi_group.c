/* mpi_group.c - the MPI binding's group objects, the list of open sids,
 * failure messages and the agreement over gComm on errors found before the
 * generic layer. */
#include "mpi_internal.h"
#include "sheaf_comm_mpi.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static mpi_group *g_open; /* global groups of the open sids */

/* ---- global groups and the list of open sids ------------------------------ */

/* Local failure before the generic layer: record the message (a negative
 * SHEAF_E_* code is returned). */
int mpi_fail(const char *call, const char *fname, int code, const char *what, int mpirc)
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
int mpi_check(const char *call, const char *fname, MPI_Comm gComm)
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
mpi_group *mpi_group_new(const char *call, const char *fname, MPI_Comm comm)
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

void mpi_group_free(mpi_group *g)
{
    if (!g)
        return;
    if (g->owned)
        cc_release(g->lease, g->comm);
    cc_unreserve(g->spare);
    free(g->lspare);
    free(g);
}

void mpi_group_register(mpi_group *g, int sid)
{
    g->sid = sid;
    pthread_mutex_lock(&g_lock);
    g->next = g_open;
    g_open = g;
    pthread_mutex_unlock(&g_lock);
}

/* Remove and return the global group of sid (NULL if it has none here). */
mpi_group *mpi_group_unregister(int sid)
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

/* Collective over comm: every rank passes its local status (0, or a
 * negative code with the message recorded by binding_fail). minmax (may be
 * NULL) holds two pairs {v, -v, w, -w} reduced to {min v, -max v, min w,
 * -max w} on the way. Returns 0 when every rank was fine, else a failure
 * code on all ranks: a rank that failed keeps its own code and message, the
 * others record the first failing rank's code and message.
 *
 * sheaf_comm_agree over the caller's comm itself (sheaf_comm_mpi_ref: no
 * allocation, no MPI call of its own): one MPI_Allreduce when every rank was
 * fine (status and minmax travel together), the message's broadcast more
 * only when one failed. */
int mpi_agree(const char *call, const char *fname, MPI_Comm comm, int localrc, int minmax[4])
{
    sheaf_comm_mpi_ref_t ref;
    sheaf_comm_agreement a;
    int64_t v[4] = {0, 0, 0, 0};
    int n = minmax ? 4 : 0;
    for (int i = 0; i < n; i++)
        v[i] = minmax[i];
    int rc = sheaf_comm_agree(sheaf_comm_mpi_ref(&ref, comm), localrc, localrc ? sheaf_last_error() : NULL,
                              n ? v : NULL, n, &a);
    if (localrc)
        return localrc; /* this rank's own message stands */
    if (!rc) {
        for (int i = 0; i < n; i++)
            minmax[i] = (int)v[i];
        return 0;
    }
    if (a.rank < 0) /* the exchange itself failed */
        return binding_fail(SHEAF_E_IO, "%s: %s: the agreement over gComm failed: %s", fname ? fname : "(null)", call,
                            a.msg);
    return binding_fail(a.code < 0 ? a.code : SHEAF_E_ARG, "%s (failed on rank %d)", a.msg, a.rank);
}

/* ---- file splits ---------------------------------------------------------- */

/* Physical file of this rank when *numFiles > 0 cuts size ranks into numFiles
 * contiguous ranges of size/numFiles (the remainder joins the last one). */
void mpi_split_by_count(int rank, int size, int numfiles, int *filenumber, int *lrank, int *lsize)
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
int mpi_open_failed(mpi_group *g, int rank)
{
    mpi_group_free(g);
    binding_report_error(rank);
    return -1;
}
