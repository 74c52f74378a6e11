/* registry.h - the table of open sids. sion_* calls take an int sid; this maps
 * it to a core_container. Guarded by a mutex: different sids may be used from
 * different threads at the same time. */
#ifndef API_REGISTRY_H
#define API_REGISTRY_H
#include "../core/container.h"
#include "../core/error.h"

/* Store c, return its sid (>= 0) or SHEAF_E_NOMEM. */
int api_register(core_container *c);
/* Look up a sid; NULL (with message "invalid sid N") if not open. */
core_container *api_lookup(int sid, const char *call);
/* Start of every sid-taking call: clear the thread's last error and bind
 * `core_container *c` to the sid, or report and return errval. */
#define LOOKUP(sid, call, errval)                      \
    core_clear_error();                                \
    core_container *c = api_lookup((sid), (call));     \
    if (c && c->ntasks < 1) /* a mapped open's process that owns no task */ \
        c = (core_fail(SHEAF_E_ARG, "%s: %s: this process owns no logical task of the mapped open (sid %d); " \
                       "only sion_parclose_mapped_* accepts it", c->name, (call), (sid)), NULL); \
    if (!c) {                                          \
        core_report_error(-1);                         \
        return (errval);                               \
    }

/* Report the recorded error (SIONlib style) and return errval. */
#define FAIL(errval) do { core_report_error(-1); return (errval); } while (0)

/* Remove the sid from the table and return its container. */
core_container *api_release(int sid);
#endif
