/* registry.h - the table of open sids. sion_* calls take an int sid; this maps
 * it to a core_container. Guarded by a mutex: different sids may be used from
 * different threads at the same time. */
#ifndef API_REGISTRY_H
#define API_REGISTRY_H
#include "../core/container.h"
#include "../core/error.h"
#include <stdint.h>

/* Kinds of objects that share the id space, as in SIONlib (sion_fd.c). */
enum { API_KIND_SID = 1, API_KIND_GENERIC_API = 2 };

/* Store c, return its sid (>= 0) or SHEAF_E_NOMEM. Ids increase from 0 and are
 * never reused (registry.c). */
int api_register(core_container *c);
/* Look up a sid; NULL (with message "invalid sid N", saying whether it was
 * closed) if it is not an open container. */
core_container *api_lookup(int sid, const char *call);
/* Use up n ids without an object: numbers SIONlib gives to internal handles
 * (the per-file handles of a serial open of a multi-file set), so that the
 * sids a program sees are SIONlib's. They are never valid. */
void api_skip_ids(int n);
/* sion_lock_register_lock_callbacks: once per process; the user's lock is then
 * taken around every operation on the table of ids (as SIONlib's sid table). */
int api_set_lock_callbacks(int (*lock)(void *), int (*unlock)(void *), void *data);
int api_lock_callbacks_defined(void);
/* The same for any kind of object (generic API objects: src/par/api.c). */
int api_register_kind(int kind, void *obj);
void *api_lookup_kind(int id, int kind, const char *call);
void *api_release_kind(int id, int kind);
/* Start of every sid-taking call: clear the thread's last error and bind
 * `core_container *c` to the sid, or report and return errval. */
#define LOOKUP(sid, call, errval)                      \
    core_clear_error();                                \
    core_container *c = api_lookup((sid), (call));     \
    if (c && c->ntasks < 1) /* a mapped open's process that owns no task */ \
        c = (core_fail(SHEAF_E_ARG, "%s: %s: this process owns no logical task of the mapped open (sid %d); " \
                       "only sion_parclose_mapped_* accepts it", c->name, (call), (sid)), NULL); \
    if (!c) {                                          \
        core_report_error_rc(-1, (int)(intptr_t)(errval)); \
        return (errval);                               \
    }

/* Report the recorded error (SIONlib style: rc= the value returned) and return errval. */
#define FAIL(errval) do { core_report_error_rc(-1, (int)(intptr_t)(errval)); return (errval); } while (0)

/* Remove the sid from the table and return its container. */
core_container *api_release(int sid);
#endif
