/* sid.h - the table of open sids, below both src/api and src/par.
 *
 * sion_* calls take an int sid; this maps it to a core_container (and a
 * generic API id to its object). Guarded by a mutex: different sids may be
 * used from different threads at the same time. The names keep the prefix
 * api_ (ids of the API, as SIONlib's sion_fd.c hands them out).
 *
 * It also holds the hooks through which the calls every sid shares
 * (src/api/common.c) reach the state a parallel open hangs on
 * core_container.par, without knowing the layer that opened it (src/par
 * installs them: sid_set_par_ops). So src/api never includes src/par and
 * src/par never includes src/api: both include this folder and src/core.
 * Layer order: doc/design.md "Layers". */
#ifndef SID_SID_H
#define SID_SID_H
#include "../core/container.h"
#include "../core/error.h"
#include <stdint.h>

/* Kinds of objects that share the id space, as in SIONlib (sion_fd.c). */
enum {
    API_KIND_SID = 1,
    API_KIND_GENERIC_API = 2,
    /* numbers of SIONlib's internal handles, never valid as an id: HELD is
        * released with the object that holds it, LEAKED never (as SIONlib) */
    API_KIND_HELD = 3,
    API_KIND_LEAKED = 4
};

/* Store c, return its sid (>= 0) or SHEAF_E_NOMEM. Ids are SIONlib's: small,
 * reused after a close, in SIONlib's order (sid.c). */
int api_register(core_container *c);
/* Look up a sid; NULL (with message "invalid sid N", saying whether it was
 * closed) if it is not an open container. */
core_container *api_lookup(int sid, const char *call);
/* Take n ids and give them back at once: a handle SIONlib opens and closes
 * inside a call (task 0's serial open of file 0 in a parallel read open), so
 * that the sids a program sees are SIONlib's. */
void api_skip_ids(int n);
/* Take n ids that are never valid: kind API_KIND_HELD ids are given back when
 * the id of owner (an open object) is released, just before it; kind
 * API_KIND_LEAKED ids never (SIONlib's serial open of a multi-file set keeps
 * file 0's handle). */
void api_hold_ids(int n, int kind, void *owner);
/* sion_lock_register_lock_callbacks: once per process; the user's lock is then
 * taken around every operation on the table of ids (as SIONlib's sid table). */
int api_set_lock_callbacks(int (*lock)(void *), int (*unlock)(void *), void *data);
int api_lock_callbacks_defined(void);
/* Call the user's lock and unlock callbacks n times more (SIONlib's counts; sid.c). */
void api_lock_ticks(int n);
/* The same for any kind of object (generic API objects: src/par/api.c). */
int api_register_kind(int kind, void *obj);
void *api_lookup_kind(int id, int kind, const char *call);
/* The same for a lookup SIONlib does not make (no user lock callbacks). */
void *api_lookup_internal(int id, int kind, const char *call);
void *api_release_kind(int id, int kind);
/* Start of every sid-taking call: clear the thread's last error and bind
 * `core_container *c` to the sid, or report and return errval. */
#define LOOKUP(sid, call, errval)                                                                                      \
    core_clear_error();                                                                                                \
    core_container *c = api_lookup((sid), (call));                                                                     \
    if (c) /* SIONlib's second lookup of a valid sid (its type, then its object) */                                    \
        api_lock_ticks(1);                                                                                             \
    if (c && c->ntasks < 1) /* a mapped open's process that owns no task */                                            \
        c = (core_fail(SHEAF_E_ARG,                                                                                    \
                       "%s: %s: this process owns no logical task of the mapped open (sid %d); "                       \
                       "only sion_parclose_mapped_* accepts it",                                                       \
                       c->name, (call), (sid)),                                                                        \
             NULL);                                                                                                    \
    if (!c) {                                                                                                          \
        core_report_error_rc(-1, (int)(intptr_t)(errval));                                                             \
        return (errval);                                                                                               \
    }

/* Report the recorded error (SIONlib style: rc= the value returned) and return errval. */
#define FAIL(errval)                                                                                                   \
    do {                                                                                                               \
        core_report_error_rc(-1, (int)(intptr_t)(errval));                                                             \
        return (errval);                                                                                               \
    } while (0)

/* Remove the sid from the table and return its container. */
core_container *api_release(int sid);

/* ---- hooks of the parallel layer --------------------------------------------
 * One physical file a task writes into besides its own container file
 * (sion_get_io_info): name (owned by the parallel state, valid while the sid is
 * open), bytes of the task's data there, SION_ROLE_* of the task for it. */
typedef struct sid_io_file {
    const char *name;
    int64_t bytes;
    int role;
} sid_io_file;

/* What a parallel open lends the shared calls; every member may be NULL
 * (nothing to do). Called only for containers whose c->par is set and that
 * are not duplicates (c->dup), with c->par as the parallel layer left it. */
typedef struct sid_par_ops {
    /* sion_seek: 1 when the handle is one task of its physical file (a
     * non-mapped parallel open: ranks are file-local), 0 for several (mapped). */
    int (*one_task)(const core_container *c);
    /* sion_flush in write mode, after the core's durable flush: make what the
     * parallel layer writes for this task (buddy copies) durable too. */
    int (*flush)(core_container *c);
    /* sion_get_io_info: -1 when the sid reports nothing (SIONlib's NULL: not
     * opened in buddy mode), else the number of files besides the container
     * file, in SIONlib's order; the first min(n, max) are written to out. */
    int (*io_files)(core_container *c, sid_io_file *out, int max);
} sid_par_ops;

/* Install the hooks (src/par, before its first open; idempotent, one table
 * per process: there is one parallel layer). */
void sid_set_par_ops(const sid_par_ops *ops);
/* The hooks for c: NULL for a serial open, a duplicate, or when none are
 * installed. */
const sid_par_ops *sid_par_ops_of(const core_container *c);
#endif
