/* mode.c - parse SIONlib mode strings. */
#include "mode.h"
#include "error.h"
#include "sion_const.h"
#include <stdlib.h>
#include <string.h>

static int keyval_from(const char *v)
{
    if (!v || !*v || !strcmp(v, "default") || !strcmp(v, "inline"))
        return SION_KEYVAL_INLINE;
    if (!strcmp(v, "meta"))
        return SION_KEYVAL_META;
    if (!strcmp(v, "hash"))
        return SION_KEYVAL_HASH;
    if (!strcmp(v, "none"))
        return SION_KEYVAL_NONE;
    if (!strcmp(v, "unknown"))
        return SION_KEYVAL_UNKNOWN;
    return -1;
}

int core_mode_parse(const char *mode, core_mode *m)
{
    memset(m, 0, sizeof *m);
    m->keyval = SION_KEYVAL_NOTSET;
    m->data_big = -1;
    m->collsize = -1;
    if (!mode)
        mode = "";
    const char *p = mode;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char tok[256];
        if (len >= sizeof tok)
            return core_fail(SHEAF_E_ARG, "mode token too long in \"%.64s...\"", mode);
        memcpy(tok, p, len);
        tok[len] = '\0';
        char *val = strchr(tok, '=');
        if (val)
            *val++ = '\0';
        if (!strcmp(tok, "w") || !strcmp(tok, "wb") || !strcmp(tok, "bw")) {
            m->write = 1;
            m->explicit_rw = 1;
        } else if (!strcmp(tok, "r") || !strcmp(tok, "rb") || !strcmp(tok, "br")) {
            m->write = 0;
            m->explicit_rw = 1;
        } else if (!strcmp(tok, "posix")) {
            m->posix = 1;
        } else if (!strcmp(tok, "ansi")) {
            m->posix = 0;
        } else if (!strcmp(tok, "keyval")) {
            int k = keyval_from(val);
            if (k < 0)
                return core_fail(SHEAF_E_ARG, "mode \"%s\": unknown keyval value \"%s\"", mode, val);
            m->keyval = k;
        } else if (!strcmp(tok, "endianness")) {
            if (val && !strcmp(val, "big"))
                m->data_big = 1;
            else if (val && !strcmp(val, "little"))
                m->data_big = 0;
            else
                return core_fail(SHEAF_E_ARG, "mode \"%s\": endianness must be big or little", mode);
        } else if (!strcmp(tok, "collective")) {
            m->collective = 1;
        } else if (!strcmp(tok, "collsize")) {
            /* as SIONlib 1.7: the group size only; coalescing needs "collective"
             * (or SION_COLLSIZE / SION_COLLNUM) */
            m->collsize = val ? atoi(val) : -1;
        } else if (!strcmp(tok, "collectivemerge") || !strcmp(tok, "cmerge")) {
            m->cmerge = 1; /* merge mode of coalescing; alone it changes nothing (SIONlib) */
        } else if (!strcmp(tok, "checksum")) {
            m->checksum = 1;
        } else if (!strcmp(tok, "nochecksum")) {
            m->nochecksum = 1;
        } else if (!strcmp(tok, "buddy")) {
            m->buddy = (val && atoi(val) > 0) ? atoi(val) : 1;
        } else if (!strcmp(tok, "files")) {
            /* sheaf's own key: only sion_paropen_mpi knows files=auto (it removes the key
             * before the generic layer parses the mode); anywhere else it would be
             * silently ignored, so it is refused */
            if (val && !strcmp(val, "auto"))
                return core_fail(SHEAF_E_ARG,
                                 "mode \"%s\": files=auto is taken only by sion_paropen_mpi "
                                 "(it chooses the physical files from the storage the ranks share); this open "
                                 "does not support it",
                                 mode);
            return core_fail(SHEAF_E_ARG, "mode \"%s\": files=%s: the only value is auto (sion_paropen_mpi)", mode,
                             val ? val : "");
        } /* anything else (buffered, compress, ...) is ignored like SIONlib */
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}
