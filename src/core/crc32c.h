/* crc32c.h - CRC-32C (Castagnoli), as used by iSCSI, ext4 and Btrfs: the
 * integrity check of sheaf's journal records (and per-block checksums).
 * Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run
 * time), else a table. Thread-safe. */
#ifndef CORE_CRC32C_H
#define CORE_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: crc32c(0, NULL, 0) == 0; crc32c(crc32c(0, a, n), b, m) is
 * the CRC of a followed by b. */
uint32_t core_crc32c(uint32_t crc, const void *buf, size_t n);
/* 1 when the hardware instruction is in use (for reports and benchmarks). */
int core_crc32c_hw(void);
#endif
