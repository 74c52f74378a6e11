/* teamcomm.h - collectives over the threads of one OpenMP team, for the
 * generic API callbacks of the OpenMP and hybrid layers (internal).
 *
 * A team_group is shared by the threads of the team that made it. Every
 * operation must be called by all threads of the team (it contains
 * `omp barrier`s); data move through pointers each thread publishes in the
 * group, so no buffer is sized in advance. Nested parallel regions are not
 * supported: the team is the innermost enclosing one. */
#ifndef SHEAF_TEAMCOMM_H
#define SHEAF_TEAMCOMM_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "sion_datatypes.h"
#include "../par/binding.h"

typedef struct team_group {
    int size;
    void **ptr;     /* [size]: the buffer each thread publishes */
    int *count;     /* [size]: element counts (v-collectives) */
    int64_t *displ; /* [size+1]: root's displacements (scatterv) */
    void **aux;     /* [size]: a second pointer per thread (coalescing I/O specs) */
} team_group;

/* Collective over the team: one thread allocates, all get the same group
 * (NULL on all when out of memory). */
team_group *team_new(void);
/* Collective: all threads stop using g, one frees it. */
void team_free(team_group *g);

size_t team_type_size(int datatype); /* bytes of a _SION_* element, 0 if unknown */
int team_barrier(team_group *g);
/* 1 on every thread when any thread passes a non-zero flag (no allocation). */
int team_any(team_group *g, int flag);
int team_bcast(team_group *g, void *data, size_t esize, int nelem, int root);
int team_gather(team_group *g, const void *in, void *out, size_t esize, int nelem, int root);
int team_gatherv(team_group *g, const void *in, void *out, size_t esize, const int *counts, int nelem, int root);
int team_scatter(team_group *g, void *in, const void *out, size_t esize, int nelem, int root);
int team_scatterv(team_group *g, void *in, const void *out, size_t esize, const int *counts, int nelem, int root);
/* Coalescing I/O over the team (the gather_and_execute / execute_and_scatter
 * contract of sion_generic.h): each thread passes its buffer and spec
 * (offset, length); the collector calls the process function on the data of
 * tasks first..last in pieces of at most `piece` bytes, straight from (write:
 * pw) or into (read: pr) their buffers, no copies. Returns 0 on a task when
 * its group's I/O succeeded, 1 otherwise (the collector's verdict). */
int team_coll_exec(team_group *g, void *data, sion_int64 *spec, int64_t piece, int collector, int first, int last,
                   int sid, int (*pw)(const void *, sion_int64 *, int), int (*pr)(void *, sion_int64 *, int));

/* ---- what both OpenMP bindings (sion_omp.c, sion_ompi.c) share ---- */
/* The capability callback, as SIONlib: thread 0 (of each process) can
 * collect, the other threads only send, so a collector group always starts
 * at thread 0 / a process boundary (core_coll_layout_cap). */
int team_capability(void *group);
/* A binding's API id, created from its callbacks by the first thread that
 * asks (once per process and binding); -1 on every call when that failed
 * (out of memory). One team_api per binding, TEAM_API_INIT. */
typedef struct team_api {
    pthread_mutex_t lock;
    int made, aid;
} team_api;
#define TEAM_API_INIT                                                                                                  \
    {                                                                                                                  \
        PTHREAD_MUTEX_INITIALIZER, 0, -1                                                                               \
    }
int team_api_id(team_api *api, const char *name, const binding_callbacks *cb);
#endif
