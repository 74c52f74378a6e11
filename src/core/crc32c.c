/* crc32c.c - CRC-32C, reflected polynomial 0x82F63B78 (see crc32c.h). */
#include "crc32c.h"
#include <pthread.h>
#include <string.h>

static uint32_t table[256];
static int use_hw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    use_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t sw(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n--)
        crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t hw(uint32_t crc, const unsigned char *p, size_t n)
{
    uint64_t c = crc;
    while (n && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    while (n--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return (uint32_t)c;
}
#endif

uint32_t core_crc32c(uint32_t crc, const void *buf, size_t n)
{
    pthread_once(&once, init);
    const unsigned char *p = buf;
    crc = ~crc;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (use_hw)
        return ~hw(crc, p, n);
#endif
    return ~sw(crc, p, n);
}

int core_crc32c_hw(void)
{
    pthread_once(&once, init);
    return use_hw;
}
