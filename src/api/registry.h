/* registry.h - the table of open sids. sion_* calls take an int sid; this maps
 * it to a core_container. Guarded by a mutex: different sids may be used from
 * different threads at the same time. */
#ifndef API_REGISTRY_H
#define API_REGISTRY_H
#include "../core/container.h"

/* Store c, return its sid (>= 0) or SHEAF_E_NOMEM. */
int api_register(core_container *c);
/* Look up a sid; NULL (with message "invalid sid N") if not open. */
core_container *api_lookup(int sid, const char *call);
/* Remove the sid from the table and return its container. */
core_container *api_release(int sid);
#endif
