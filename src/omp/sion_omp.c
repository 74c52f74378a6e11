/* sion_omp.c - the OpenMP layer (libsheaf_omp): every thread of the current
 * team is one task of a single-file container, on top of the generic API.
 *
 * One generic API object per process ("sheaf_omp", created on first use).
 * Each open makes a team_group (teamcomm.c) that serves as both the global
 * and the local group (one physical file), remembered per sid until the
 * close. Collectives are shared-memory copies between omp barriers. */
#include "sion.h"
#include "sion_omp.h"
#include "teamcomm.h"
#include "../par/binding.h"
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>

/* ---- callbacks ------------------------------------------------------------ */
static int cb_create_lcg(void **local_group, void *global_group, int grank, int gsize, int lrank, int lsize,
                         int filenumber, int numfiles)
{
    *local_group = global_group; /* one file: the team is the file's group */
    return 0;
}
static int cb_free_lcg(void *local_group) { return 0; }
static int cb_barrier(void *group) { return team_barrier(group); }
static int cb_bcast(void *data, void *group, int datatype, int nelem, int root)
{
    return team_bcast(group, data, team_type_size(datatype), nelem, root);
}
static int cb_gather(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    return team_gather(group, in, out, team_type_size(datatype), nelem, root);
}
static int cb_gatherv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    return team_gatherv(group, in, out, team_type_size(datatype), counts, nelem, root);
}
static int cb_scatter(void *in, void *out, void *group, int datatype, int nelem, int root)
{
    return team_scatter(group, out, in, team_type_size(datatype), nelem, root); /* root array: in (SIONlib) */
}
static int cb_scatterv(void *in, void *out, void *group, int datatype, int *counts, int nelem, int root)
{
    return team_scatterv(group, in, out, team_type_size(datatype), counts, nelem, root);
}

static int cb_gather_exec(const void *indata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                          int collector, int first, int last, int sid, int process(const void *, sion_int64 *, int))
{
    return spec_len < 2
               ? 1
               : team_coll_exec(group, (void *)indata, spec, fsblksize, collector, first, last, sid, process, NULL);
}
static int cb_exec_scatter(void *outdata, sion_int64 *spec, int spec_len, sion_int64 fsblksize, void *group,
                           int collector, int first, int last, int sid, int process(void *, sion_int64 *, int))
{
    return spec_len < 2 ? 1
                        : team_coll_exec(group, outdata, spec, fsblksize, collector, first, last, sid, NULL, process);
}

static team_api g_api = TEAM_API_INIT;

static const binding_callbacks g_callbacks = {.create_lcg = cb_create_lcg,
                                              .free_lcg = cb_free_lcg,
                                              .barrier = cb_barrier,
                                              .bcast = cb_bcast,
                                              .gather = cb_gather,
                                              .gatherv = cb_gatherv,
                                              .scatter = cb_scatter,
                                              .scatterv = cb_scatterv,
                                              .gather_exec = cb_gather_exec,
                                              .exec_scatter = cb_exec_scatter,
                                              .capability = team_capability,
                                              .lcg_agreed = 1 /* never fails: the team is the group */};

/* ---- sid -> team group ---------------------------------------------------- */
typedef struct open_team {
    int sid;
    team_group *g;
    struct open_team *next;
} open_team;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static open_team *g_open;

static int remember(int sid, team_group *g)
{
    open_team *o = malloc(sizeof *o);
    if (!o)
        return -1;
    o->sid = sid;
    o->g = g;
    pthread_mutex_lock(&g_lock);
    o->next = g_open;
    g_open = o;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

static team_group *forget(int sid)
{
    team_group *g = NULL;
    pthread_mutex_lock(&g_lock);
    for (open_team **pp = &g_open; *pp; pp = &(*pp)->next)
        if ((*pp)->sid == sid) {
            open_team *o = *pp;
            *pp = o->next;
            g = o->g;
            free(o);
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return g;
}

int sion_paropen_omp(const char *fname, const char *file_mode, sion_int64 *chunksize, sion_int32 *fsblksize,
                     int *globalrank, FILE **fileptr, char **newfname)
{
    int aid = team_api_id(&g_api, "sheaf_omp", &g_callbacks);
    int me = omp_get_thread_num(), n = omp_get_num_threads();
    /* every thread makes the same decision from shared facts, so none waits alone */
    team_group *g = aid >= 0 ? team_new() : NULL;
    if (!g) {
        binding_fail(SHEAF_E_NOMEM, "%s: sion_paropen_omp: out of memory for the thread team",
                     fname ? fname : "(null)");
        binding_report_error(me);
        return SION_ID_UNDEF;
    }
    int fn = 0, nf = 1, lr = me, ls = n;
    int sid = sion_generic_paropen(aid, fname, file_mode, chunksize, fsblksize, g, me, n, &fn, &nf, &lr, &ls, fileptr,
                                   newfname);
    /* sid >= 0 on all threads or on none (the generic layer agrees); the
     * bookkeeping below must succeed on all threads too */
    int failed = team_any(g, sid >= 0 && remember(sid, g) != 0);
    if (sid >= 0 && !failed) {
        if (globalrank)
            *globalrank = me;
        return sid;
    }
    if (sid >= 0) { /* opened, but a thread could not record it: close again */
        forget(sid);
        sion_generic_parclose(sid);
        binding_fail(SHEAF_E_NOMEM, "%s: sion_paropen_omp: out of memory on a thread", fname ? fname : "(null)");
        binding_report_error(me);
    }
    team_free(g);
    return SION_ID_UNDEF;
}

int sion_parclose_omp(int sid)
{
    team_group *g = forget(sid);
    /* an unknown sid on one thread only would leave the others waiting: the
     * generic close refuses it on this thread; the others' closes then fail
     * in their agreement step only if the team is complete, so the caller
     * must pass the sid it got from sion_paropen_omp on every thread */
    if (!g) {
        binding_fail(SHEAF_E_ARG, "sion_parclose_omp: sid %d was not opened with sion_paropen_omp", sid);
        binding_report_error(omp_get_thread_num());
        return SION_NOT_SUCCESS;
    }
    int rc = sion_generic_parclose(sid);
    team_free(g);
    return rc;
}
