/* endian.h - byte order helpers. All functions are pure and thread-safe. */
#ifndef CORE_ENDIAN_H
#define CORE_ENDIAN_H
#include <stdint.h>

int core_host_is_big(void);
uint32_t core_bswap32(uint32_t v);
uint64_t core_bswap64(uint64_t v);

/* Little-endian fields of sheaf's own records (journal, checksum trailer). */
static inline void core_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void core_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t core_get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t core_get_le64(const unsigned char *p)
{
    return (uint64_t)core_get_le32(p) | (uint64_t)core_get_le32(p + 4) << 32;
}
#endif
