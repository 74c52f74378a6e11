/* dup.c - sion_dup / sion_dedup: a read handle of its own for another thread. */
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/partask.h"
#include "sion.h"

int sion_dup(int sid, int mode, int rank, uint64_t key)
{
    LOOKUP(sid, "sion_dup", SION_ID_UNDEF);
    if (!c->par && !c->dup) {
        core_fail(SHEAF_E_ARG, "%s: sion_dup: sid %d was opened with the serial API; open it again instead", c->name,
                  sid);
        FAIL(SION_ID_UNDEF);
    }
    if (mode != SION_DUP_ALL && mode != SION_DUP_RANK && mode != SION_DUP_RANK_KEY) {
        core_fail(SHEAF_E_ARG, "%s: sion_dup: unknown mode %d (SION_DUP_ALL, SION_DUP_RANK, SION_DUP_RANK_KEY)",
                  c->name, mode);
        FAIL(SION_ID_UNDEF);
    }
    if (mode == SION_DUP_RANK_KEY && c->keyval != SION_KEYVAL_INLINE) {
        core_fail(SHEAF_E_ARG, "%s: sion_dup: SION_DUP_RANK_KEY needs a key-value container", c->name);
        FAIL(SION_ID_UNDEF);
    }
    core_container *d = NULL;
    if (core_dup(&d, c, mode == SION_DUP_ALL ? -1 : rank))
        FAIL(SION_ID_UNDEF);
    d->dup = 1;
    if (mode == SION_DUP_RANK_KEY) {
        d->key_only = 1;
        d->only_key = key;
    }
    int nsid = api_register(d);
    if (nsid < 0) {
        core_close(d);
        FAIL(SION_ID_UNDEF);
    }
    return nsid;
}

int sion_dedup(int sid)
{
    LOOKUP(sid, "sion_dedup", SION_ID_NOT_VALID); /* SIONlib's value for a sid that is not open */
    if (!c->dup) {
        core_fail(SHEAF_E_ARG, "%s: sion_dedup: sid %d is not a duplicate made by sion_dup", c->name, sid);
        FAIL(SION_NOT_SUCCESS);
    }
    api_release(sid);
    if (core_close(c))
        FAIL(SION_NOT_SUCCESS);
    return SION_SUCCESS;
}
