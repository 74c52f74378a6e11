/* api.c - generic API objects: sion_generic_create_api, the register_*_cb
 * calls, and the lookup the parallel opens use. API ids are taken from the
 * sid table (src/sid/sid.c), as SIONlib does; a mutex guards the objects,
 * so they may be created and looked up from several threads. */
#include "par.h"
#include "../sid/sid.h"
#include "../core/error.h"
#include "sion.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

int sion_generic_create_api(char *name)
{
    if (!name) {
        core_fail(SHEAF_E_ARG, "sion_generic_create_api: no name given");
        core_report_error_rc(-1, -1);
        return -1;
    }
    par_api *a = calloc(1, sizeof *a);
    if (!a || !(a->name = strdup(name))) {
        free(a);
        core_fail(SHEAF_E_NOMEM, "sion_generic_create_api(%s): out of memory", name);
        core_report_error_rc(-1, -1);
        return -1;
    }
    par_install_sid_ops(); /* before any parallel sid exists */
    /* the id comes from the sid table, as in SIONlib: an MPI program's first sid is 1 */
    pthread_mutex_lock(&g_lock);
    int aid = api_register_kind(API_KIND_GENERIC_API, a);
    pthread_mutex_unlock(&g_lock);
    if (aid < 0) {
        free(a->name);
        free(a);
        core_report_error_rc(-1, -1);
        return -1;
    }
    return aid;
}

int sion_generic_free_api(int aid)
{
    par_api *a = NULL;
    pthread_mutex_lock(&g_lock);
    a = api_release_kind(aid, API_KIND_GENERIC_API);
    pthread_mutex_unlock(&g_lock);
    if (!a) {
        core_fail(SHEAF_E_ARG, "sion_generic_free_api: unknown api id %d", aid);
        core_report_error_rc(-1, SION_NOT_SUCCESS);
        return SION_NOT_SUCCESS;
    }
    free(a->name);
    free(a);
    return SION_SUCCESS;
}

/* Store one callback: field is the member of par_api to set. */
#define REGISTER(field, call)                                                                                          \
    do {                                                                                                               \
        int ok = 0;                                                                                                    \
        pthread_mutex_lock(&g_lock);                                                                                   \
        par_api *a_ = api_lookup_kind(aid, API_KIND_GENERIC_API, call);                                                \
        if (a_ && cb) {                                                                                                \
            api_lock_ticks(1); /* SIONlib's second lookup of the api id */                                             \
            a_->field = cb;                                                                                            \
            ok = 1;                                                                                                    \
        }                                                                                                              \
        pthread_mutex_unlock(&g_lock);                                                                                 \
        if (ok)                                                                                                        \
            return SION_SUCCESS;                                                                                       \
        if (!cb)                                                                                                       \
            core_fail(SHEAF_E_ARG, "%s: no callback given", call);                                                     \
        core_report_error_rc(-1, SION_NOT_SUCCESS);                                                                    \
        return SION_NOT_SUCCESS;                                                                                       \
    } while (0)

int sion_generic_register_create_local_commgroup_cb(int aid, sion_generic_create_lcg_cb cb)
{
    REGISTER(create_lcg, "sion_generic_register_create_local_commgroup_cb");
}
int sion_generic_register_free_local_commgroup_cb(int aid, sion_generic_free_lcg_cb cb)
{
    REGISTER(free_lcg, "sion_generic_register_free_local_commgroup_cb");
}
int sion_generic_register_barrier_cb(int aid, sion_generic_barrier_cb cb)
{
    REGISTER(barrier, "sion_generic_register_barrier_cb");
}
int sion_generic_register_bcastr_cb(int aid, sion_generic_bcastr_cb cb)
{
    REGISTER(bcast, "sion_generic_register_bcastr_cb");
}
int sion_generic_register_gatherr_cb(int aid, sion_generic_gatherr_cb cb)
{
    REGISTER(gather, "sion_generic_register_gatherr_cb");
}
int sion_generic_register_gathervr_cb(int aid, sion_generic_gathervr_cb cb)
{
    REGISTER(gatherv, "sion_generic_register_gathervr_cb");
}
int sion_generic_register_scatterr_cb(int aid, sion_generic_scatterr_cb cb)
{
    REGISTER(scatter, "sion_generic_register_scatterr_cb");
}
int sion_generic_register_scattervr_cb(int aid, sion_generic_scattervr_cb cb)
{
    REGISTER(scatterv, "sion_generic_register_scattervr_cb");
}
int sion_generic_register_get_multi_filename_cb(int aid, sion_generic_multi_filename_cb cb)
{
    REGISTER(filename, "sion_generic_register_get_multi_filename_cb");
}
int sion_generic_register_gather_and_execute_cb(int aid, sion_generic_gather_execute_cb cb)
{
    REGISTER(gather_exec, "sion_generic_register_gather_and_execute_cb");
}
int sion_generic_register_execute_and_scatter_cb(int aid, sion_generic_execute_scatter_cb cb)
{
    REGISTER(exec_scatter, "sion_generic_register_execute_and_scatter_cb");
}
int sion_generic_register_get_capability_cb(int aid, sion_generic_capability_cb cb)
{
    REGISTER(capability, "sion_generic_register_get_capability_cb");
}

int par_api_set_lcg_agreed(int aid)
{
    pthread_mutex_lock(&g_lock);
    /* sheaf's own call (SIONlib makes none): no user lock callbacks */
    par_api *a = api_lookup_internal(aid, API_KIND_GENERIC_API, "par_api_set_lcg_agreed");
    if (a)
        a->lcg_agreed = 1;
    pthread_mutex_unlock(&g_lock);
    return a ? 0 : SHEAF_E_ARG;
}

int par_api_get(int aid, par_api *out, const char *fname)
{
    int found = 0;
    par_install_sid_ops(); /* every parallel open passes here */
    pthread_mutex_lock(&g_lock);
    par_api *a = api_lookup_kind(aid, API_KIND_GENERIC_API, fname);
    if (a) {
        *out = *a;
        out->name = NULL; /* not ours: the object may be freed while a sid is open */
        found = 1;
    }
    pthread_mutex_unlock(&g_lock);
    if (!found)
        return SHEAF_E_ARG; /* the look-up said why */
    const char *missing = !out->create_lcg ? "create_local_commgroup"
                          : !out->free_lcg ? "free_local_commgroup"
                          : !out->barrier  ? "barrier"
                          : !out->bcast    ? "bcastr"
                          : !out->gather   ? "gatherr"
                          : !out->gatherv  ? "gathervr"
                          : !out->scatter  ? "scatterr"
                          : !out->scatterv ? "scattervr"
                                           : NULL;
    if (missing)
        return core_fail(SHEAF_E_ARG, "%s: generic api %d has no %s callback registered", fname, aid, missing);
    return 0;
}
