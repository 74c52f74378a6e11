/* buddy.c - buddy checkpointing (mode key "buddy" or "buddy=N", N <= 9).
 *
 * A write open in buddy mode opens, next to the container, N more
 * containers named "<name>_BUDDY_00" ... "<name>_BUDDY_<N-1>" (SIONlib's names,
 * sion_generic_buddy.c numbers the copies from 0; multi-file sets
 * add the usual .%06d suffixes) with the same tasks, chunk sizes and file
 * split, and every byte written with sion_fwrite / sion_coll_fwrite (and
 * every sion_flush) goes to all of them; the close and reinit handle them
 * with the container. A read open in buddy mode that cannot open the
 * container (a physical file missing, metadata damaged) opens the first
 * buddy copy that can be opened instead, with a warning. All of it is
 * collective and agreed like the opens themselves, so every task ends up
 * on the same copy.
 * Limits: the copies are written by the task itself into separate files of
 * the same file system (SIONlib places them on partner tasks' files to
 * survive the loss of a node's storage); bytes written through the
 * exported FILE* or fd and key-value records are not copied. */
#include "par.h"
#include "../api/registry.h"
#include "../core/error.h"
#include "../core/journal.h"
#include "sion.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *par_buddy_name(const char *fname, int level)
{
    size_t n = strlen(fname) + 16;
    char *b = malloc(n);
    if (b)
        snprintf(b, n, "%s_BUDDY_%02d", fname, level - 1); /* copy 1 is _BUDDY_00, as in SIONlib */
    return b;
}

int par_buddy_write(core_container *c, const void *data, uint64_t n)
{
    par_state *p = c->par;
    for (int b = 0; p && b < p->nbuddy; b++) {
        core_container *bc = api_lookup(p->buddy[b], "buddy write");
        int rc = bc ? core_write(bc, data, n) : SHEAF_E_ARG;
        if (rc) {
            char why[1024]; /* the message is about to be replaced: keep its text */
            snprintf(why, sizeof why, "%s", sheaf_last_error());
            return core_fail(rc, "%s: writing the buddy copy %d failed: %s", c->name, b + 1, why);
        }
    }
    return 0;
}

int par_buddy_flush(core_container *c)
{
    par_state *p = c->par;
    for (int b = 0; p && b < p->nbuddy; b++) {
        core_container *bc = api_lookup(p->buddy[b], "buddy flush");
        int rc = bc ? core_durable_flush(bc) : SHEAF_E_ARG; /* as durable as the container itself */
        if (rc)
            return rc;
    }
    return 0;
}
