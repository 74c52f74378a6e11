/* teamcomm.c - collectives over the threads of one OpenMP team (see teamcomm.h).
 * Pattern of each operation: publish a pointer, barrier, copy, barrier (the
 * second barrier keeps the published buffers alive until every thread has
 * copied). */
#include "teamcomm.h"
#include "sion_const.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static team_group *g_new; /* hand-over from the allocating thread to the team */

team_group *team_new(void)
{
    team_group *g;
#pragma omp barrier
#pragma omp single
    {
        int n = omp_get_num_threads();
        g = calloc(1, sizeof *g);
        if (g) {
            g->size = n;
            g->ptr = calloc((size_t)n, sizeof *g->ptr);
            g->count = calloc((size_t)n, sizeof *g->count);
            g->displ = calloc((size_t)n + 1, sizeof *g->displ);
            g->aux = calloc((size_t)n, sizeof *g->aux);
            if (!g->ptr || !g->count || !g->displ || !g->aux) {
                free(g->ptr);
                free(g->count);
                free(g->displ);
                free(g->aux);
                free(g);
                g = NULL;
            }
        }
        g_new = g;
    } /* implicit barrier: g_new is visible to all */
    g = g_new;
#pragma omp barrier
    return g;
}

void team_free(team_group *g)
{
#pragma omp barrier
#pragma omp single
    {
        if (g) {
            free(g->ptr);
            free(g->count);
            free(g->displ);
            free(g->aux);
            free(g);
        }
    }
}

size_t team_type_size(int datatype)
{
    switch (datatype) {
    case _SION_INT32:
        return 4;
    case _SION_INT64:
        return 8;
    case _SION_CHAR:
        return 1;
    default:
        return 0;
    }
}

int team_barrier(team_group *g)
{
    (void)g;
#pragma omp barrier
    return 0;
}

int team_any(team_group *g, int flag)
{
    int any = 0;
    g->count[omp_get_thread_num()] = flag != 0;
#pragma omp barrier
    for (int t = 0; t < g->size; t++)
        any |= g->count[t];
#pragma omp barrier
    return any;
}

int team_bcast(team_group *g, void *data, size_t esize, int nelem, int root)
{
    int me = omp_get_thread_num();
    if (me == root)
        g->ptr[root] = data;
#pragma omp barrier
    if (me != root && nelem > 0)
        memcpy(data, g->ptr[root], esize * (size_t)nelem);
#pragma omp barrier
    return 0;
}

int team_gather(team_group *g, const void *in, void *out, size_t esize, int nelem, int root)
{
    int me = omp_get_thread_num();
    g->ptr[me] = (void *)(uintptr_t)in;
#pragma omp barrier
    if (me == root)
        for (int t = 0; t < g->size; t++)
            memcpy((char *)out + (size_t)t * esize * (size_t)nelem, g->ptr[t], esize * (size_t)nelem);
#pragma omp barrier
    return 0;
}

int team_gatherv(team_group *g, const void *in, void *out, size_t esize, const int *counts, int nelem, int root)
{
    int me = omp_get_thread_num(), rc = 0;
    g->ptr[me] = (void *)(uintptr_t)in;
    g->count[me] = nelem;
#pragma omp barrier
    if (me == root) {
        size_t off = 0;
        for (int t = 0; t < g->size; t++) {
            int n = counts[t] < g->count[t] ? counts[t] : g->count[t];
            if (counts[t] != g->count[t])
                rc = 1; /* a mismatch is an error, as in MPI; copy what both agree on */
            if (n > 0)
                memcpy((char *)out + off * esize, g->ptr[t], esize * (size_t)n);
            off += (size_t)(counts[t] > 0 ? counts[t] : 0);
        }
    }
#pragma omp barrier
    return rc;
}

int team_scatter(team_group *g, void *in, const void *out, size_t esize, int nelem, int root)
{
    int me = omp_get_thread_num();
    if (me == root)
        g->ptr[root] = (void *)(uintptr_t)out;
#pragma omp barrier
    if (nelem > 0)
        memcpy(in, (const char *)g->ptr[root] + (size_t)me * esize * (size_t)nelem, esize * (size_t)nelem);
#pragma omp barrier
    return 0;
}

int team_scatterv(team_group *g, void *in, const void *out, size_t esize, const int *counts, int nelem, int root)
{
    int me = omp_get_thread_num(), rc = 0;
    if (me == root) {
        g->ptr[root] = (void *)(uintptr_t)out;
        g->displ[0] = 0;
        for (int t = 0; t < g->size; t++) {
            g->count[t] = counts[t];
            g->displ[t + 1] = g->displ[t] + (counts[t] > 0 ? counts[t] : 0);
        }
    }
#pragma omp barrier
    int n = g->count[me] < nelem ? g->count[me] : nelem;
    if (g->count[me] != nelem)
        rc = 1;
    if (n > 0)
        memcpy(in, (const char *)g->ptr[root] + (size_t)g->displ[me] * esize, esize * (size_t)n);
#pragma omp barrier
    return rc;
}

int team_coll_exec(team_group *g, void *data, sion_int64 *spec, int64_t piece, int collector, int first, int last,
                   int sid, int (*pw)(const void *, sion_int64 *, int), int (*pr)(void *, sion_int64 *, int))
{
    int me = omp_get_thread_num();
    g->ptr[me] = data;
    g->aux[me] = spec;
    g->count[me] = 0;
#pragma omp barrier
    if (me == collector) {
        int bad = 0;
        if (piece < 1)
            piece = 1;
        for (int s = first; s <= last && s < g->size; s++) {
            const sion_int64 *sp = g->aux[s];
            char *d = g->ptr[s];
            for (int64_t done = 0; sp[1] > 0 && done < sp[1] && !bad; done += piece) {
                sion_int64 part[2] = {sp[0] + done, sp[1] - done < piece ? sp[1] - done : piece};
                bad = pw ? pw(d + done, part, sid) != 0 : pr(d + done, part, sid) != 0;
            }
        }
        sion_int64 end[2] = {-1, 0}; /* end of the group: what the collector combined goes out now */
        if (pw && pw(NULL, end, sid))
            bad = 1;
        for (int s = first; s <= last && s < g->size; s++)
            g->count[s] = bad;
        g->count[me] = bad;
    }
#pragma omp barrier
    int verdict = g->count[me];
#pragma omp barrier
    return verdict;
}

int team_capability(void *group)
{
    (void)group;
    return omp_get_thread_num() == 0 ? SION_CAPABILITY_FULL : SION_CAPABILITY_ONLY_SENDER;
}

int team_api_id(team_api *api, const char *name, const binding_callbacks *cb)
{
    pthread_mutex_lock(&api->lock);
    if (!api->made) {
        api->aid = binding_create_api(name, cb);
        api->made = 1;
    }
    int aid = api->aid;
    pthread_mutex_unlock(&api->lock);
    return aid;
}
