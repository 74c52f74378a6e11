/* state.c - the per-sid state of a parallel open (par.h's par_state): its
 * release (with its buddy levels, buddy.c) and the global group of a sid
 * (for the bindings, binding.c). */
#include "par.h"
#include "../sid/sid.h"
#include <stdlib.h>

void *par_global_group(int sid)
{
    core_container *c = api_lookup(sid, "par_global_group");
    if (!c || !c->par || c->dup)
        return NULL;
    return ((par_state *)c->par)->gcomm;
}

void par_state_free(par_state *p)
{
    if (!p)
        return;
    par_buddy_free(p);
    core_meta_free(&p->meta);
    free(p->cbuf);
    free(p->fname);
    free(p);
}
