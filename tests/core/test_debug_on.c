/* test_debug_on.c - compiled with -DSION_DEBUG: the DPRINTF macros print. */
#include "sion.h"
#include "sion_debug.h"

#ifndef SION_DEBUG
#error "compile with -DSION_DEBUG"
#endif

int debug_macros_on(const char *file)
{
    int evaluated = 0;
    sion_debug_on(128 | 1 | 2, file);
    DPRINTF((1, "plain %d\n", 7));
    DPRINTFP((2, "myfunc", 3, "with rank %d\n", 3));
    DPRINTF((4, "not in the mask\n"));
    DPRINTFTS(_SION_DEFAULT_RANK, "open");
    DPRINTFTS2(_SION_DEFAULT_RANK, "masked");
    ONLY_DEBUG(evaluated = 1;)
    sion_debug_off();
    return evaluated;
}
