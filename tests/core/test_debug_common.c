/* test_debug_common.c - only sion.h: SIONlib's sion_common.h defines DPRINTF,
 * DPRINTFP, DPRINTTS and DPRINTFTS2 empty, so code that uses them without
 * including sion_debug.h compiles (SIONlib's serial test_genapi_1 does, with
 * variables that do not exist). */
#include "sion.h"

int debug_macros_from_sion_h(void)
{
    DPRINTF((1, "%d\n", no_such_variable));
    DPRINTFP((256, "f", commgroup->rank, "x\n"));
    DPRINTTS(no_rank, "step");
    DPRINTFTS2(no_rank, "step");
    return 0;
}
