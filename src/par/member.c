/* member.c - the members of a parallel set: the path of member k (the
 * API's multi-file name callback, else core_member_name) and the labels of a
 * task in its member. Below the opens, closes and buddy copies that use it. */
#include "par.h"
#include "../core/error.h"
#include "../core/partask.h"
#include <stdlib.h>
#include <string.h>

char *par_member_path(const par_api *api, const char *fname, int k)
{
    char *p = NULL;
    if (api->filename) {
        char *u = api->filename(fname, k);
        p = u ? strdup(u) : NULL; /* the callback's memory: SIONlib callers malloc it */
        free(u);
        if (!u) {
            core_fail(SHEAF_E_ARG, "%s: the multi-file name callback gave no name for file %d", fname, k);
            return NULL;
        }
    } else {
        p = core_member_name(fname, k);
    }
    if (!p)
        core_fail(SHEAF_E_NOMEM, "%s: out of memory", fname);
    return p;
}

void par_label_task(core_container *c, int i, int filenumber, int lrank, int nfiles)
{
    core_task *t = &c->tasks[i];
    t->lrank = lrank;
    c->files[t->file].m.filenumber = filenumber;
    c->files[t->file].m.nfiles = nfiles;
}
