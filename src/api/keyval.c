/* keyval.c - public key-value calls (sion_common.h), on src/core/keyval.c. */
#define _FILE_OFFSET_BITS 64
#include "../sid/sid.h"
#include "../core/error.h"
#include "../core/keyval.h"
#include "sion.h"
#include <stdint.h>

/* A duplicate made with SION_DUP_RANK_KEY reads one key only. */
static int key_refused(core_container *c, uint64_t key, const char *call)
{
    if (!c->key_only || key == c->only_key)
        return 0;
    core_fail(SHEAF_E_ARG, "%s: %s: this duplicate reads key %llu only, not key %llu", c->name, call,
              (unsigned long long)c->only_key, (unsigned long long)key);
    return 1;
}

size_t sion_fwrite_key(const void *data, uint64_t key, size_t size, size_t nitems, int sid)
{
    LOOKUP(sid, "sion_fwrite_key", 0);
    if (core_kv_check(c, "sion_fwrite_key"))
        FAIL(0);
    if (size == 0 || nitems == 0)
        return 0;
    if (!data) {
        core_fail(SHEAF_E_ARG, "%s: sion_fwrite_key with a NULL buffer", c->name);
        FAIL(0);
    }
    if (nitems > SIZE_MAX / size) {
        core_fail(SHEAF_E_ARG, "%s: sion_fwrite_key size overflow (%zu x %zu)", c->name, size, nitems);
        FAIL(0);
    }
    if (core_kv_write(c, key, data, (uint64_t)size * nitems))
        FAIL(0);
    return nitems;
}

size_t sion_fread_key(void *data, uint64_t key, size_t size, size_t nitems, int sid)
{
    LOOKUP(sid, "sion_fread_key", 0);
    if (key_refused(c, key, "sion_fread_key") || core_kv_check(c, "sion_fread_key"))
        FAIL(0);
    if (size == 0 || nitems == 0)
        return 0;
    if (!data) {
        core_fail(SHEAF_E_ARG, "%s: sion_fread_key with a NULL buffer", c->name);
        FAIL(0);
    }
    uint64_t got = 0;
    if (core_kv_read(c, key, data, size, nitems, &got))
        FAIL(0);
    return (size_t)got;
}

int sion_fread_key_iterator_reset(int sid)
{
    LOOKUP(sid, "sion_fread_key_iterator_reset", SION_NOT_SUCCESS);
    if (core_kv_iter_reset(c))
        FAIL(SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

int sion_fread_key_iterator_next(int sid, uint64_t *key, size_t *size)
{
    LOOKUP(sid, "sion_fread_key_iterator_next", SION_NOT_SUCCESS);
    uint64_t k = 0, len = 0;
    int r;
    do /* a SION_DUP_RANK_KEY duplicate walks the records of its key only */
        r = core_kv_iter_next(c, &k, &len);
    while (r > 0 && c->key_only && k != c->only_key);
    if (r < 0)
        FAIL(SION_NOT_SUCCESS);
    if (r == 0)
        return SION_NOT_SUCCESS;
    if (len > SIZE_MAX) {
        core_fail(SHEAF_E_ARG, "%s: record of %llu bytes does not fit size_t", c->name, (unsigned long long)len);
        FAIL(SION_NOT_SUCCESS);
    }
    if (key)
        *key = k;
    if (size)
        *size = (size_t)len;
    return SION_SUCCESS;
}

int sion_seek_key(int sid, uint64_t key, int entrynum, sion_int64 posinentry)
{
    LOOKUP(sid, "sion_seek_key", SION_NOT_SUCCESS);
    if (key_refused(c, key, "sion_seek_key") || core_kv_seek(c, key, entrynum, posinentry))
        FAIL(SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

int sion_key_full_scan(int sid)
{
    LOOKUP(sid, "sion_key_full_scan", SION_NOT_SUCCESS);
    if (core_kv_full_scan(c))
        FAIL(SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

int sion_key_list_iterator_reset(int sid)
{
    LOOKUP(sid, "sion_key_list_iterator_reset", SION_NOT_SUCCESS);
    if (core_kv_keylist_reset(c))
        FAIL(SION_NOT_SUCCESS);
    return SION_SUCCESS;
}

int sion_key_list_iterator_next(int sid, uint64_t *key)
{
    LOOKUP(sid, "sion_key_list_iterator_next", SION_NOT_SUCCESS);
    uint64_t k = 0;
    int r;
    do
        r = core_kv_keylist_next(c, &k);
    while (r > 0 && c->key_only && k != c->only_key);
    if (r > 0 && key)
        *key = k;
    if (r < 0)
        FAIL(SION_NOT_SUCCESS);
    return r ? SION_SUCCESS : SION_NOT_SUCCESS;
}

int sion_key_get_stat(int sid, uint64_t key, sion_key_stat_t *stat)
{
    LOOKUP(sid, "sion_key_get_stat", SION_NOT_SUCCESS);
    if (!stat) {
        core_fail(SHEAF_E_ARG, "%s: sion_key_get_stat with a NULL stat", c->name);
        FAIL(SION_NOT_SUCCESS);
    }
    int64_t n = 0, tot = 0;
    if (key_refused(c, key, "sion_key_get_stat") || core_kv_stat(c, key, &n, &tot))
        FAIL(SION_NOT_SUCCESS);
    stat->key = key;
    stat->num_blocks = n;
    stat->total_size = tot;
    return SION_SUCCESS;
}
