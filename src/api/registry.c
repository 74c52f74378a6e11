/* registry.c - growable sid table guarded by a mutex. */
#include "registry.h"
#include "../core/error.h"
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static core_container **g_tab;
static int g_cap;

int api_register(core_container *c)
{
    pthread_mutex_lock(&g_lock);
    int sid = -1;
    for (int i = 0; i < g_cap; i++)
        if (!g_tab[i]) { sid = i; break; }
    if (sid < 0) {
        int ncap = g_cap ? 2 * g_cap : 16;
        core_container **nt = realloc(g_tab, (size_t)ncap * sizeof *nt);
        if (!nt) {
            pthread_mutex_unlock(&g_lock);
            return core_fail(SHEAF_E_NOMEM, "out of memory registering an open container");
        }
        for (int i = g_cap; i < ncap; i++)
            nt[i] = NULL;
        sid = g_cap;
        g_tab = nt;
        g_cap = ncap;
    }
    g_tab[sid] = c;
    pthread_mutex_unlock(&g_lock);
    return sid;
}

core_container *api_lookup(int sid, const char *call)
{
    core_container *c = NULL;
    pthread_mutex_lock(&g_lock);
    if (sid >= 0 && sid < g_cap)
        c = g_tab[sid];
    pthread_mutex_unlock(&g_lock);
    if (!c)
        core_fail(SHEAF_E_ARG, "%s: invalid sid %d (not an open container)", call, sid);
    return c;
}

core_container *api_release(int sid)
{
    core_container *c = NULL;
    pthread_mutex_lock(&g_lock);
    if (sid >= 0 && sid < g_cap) {
        c = g_tab[sid];
        g_tab[sid] = NULL;
    }
    pthread_mutex_unlock(&g_lock);
    return c;
}
