/* endian.h - byte order helpers. All functions are pure and thread-safe. */
#ifndef CORE_ENDIAN_H
#define CORE_ENDIAN_H
#include <stdint.h>

int core_host_is_big(void);
uint32_t core_bswap32(uint32_t v);
uint64_t core_bswap64(uint64_t v);
#endif
