/* endian.c - byte order helpers and the public sion_swap / sion_get_endianness. */
#include "endian.h"
#include "sion_common.h"
#include <string.h>

int core_host_is_big(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

uint32_t core_bswap32(uint32_t v) { return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24); }

uint64_t core_bswap64(uint64_t v)
{
    return ((uint64_t)core_bswap32((uint32_t)v) << 32) | core_bswap32((uint32_t)(v >> 32));
}

int sion_get_endianness(void) { return core_host_is_big(); }

void sion_swap(void *target, void *source, int size, int n, int do_swap)
{
    if (!target || !source || size <= 0 || n <= 0)
        return;
    unsigned char *t = target;
    const unsigned char *s = source;
    size_t total = (size_t)size * (size_t)n;
    if (!do_swap || size == 1) {
        if (t != s)
            memmove(t, s, total);
        return;
    }
    for (int i = 0; i < n; i++) {
        unsigned char *te = t + (size_t)i * (size_t)size;
        const unsigned char *se = s + (size_t)i * (size_t)size;
        for (int lo = 0, hi = size - 1; lo <= hi; lo++, hi--) {
            unsigned char a = se[lo], b = se[hi]; /* works in place too */
            te[lo] = b;
            te[hi] = a;
        }
    }
}
