/* CRC32C (Castagnoli), as Kafka record batches use it.
 *
 * floe_crc32c(0, p, n) is the standard checksum of p[0..n); pass a previous
 * result as crc to continue over more bytes.  The SSE4.2 instruction is used
 * when the CPU has it (checked once, at first call), else slicing-by-8. */
#ifndef FLOE_UTIL_CRC32C_H
#define FLOE_UTIL_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n);

/* The two code paths, exposed for tests and benchmarks. */
uint32_t floe_crc32c_sw(uint32_t crc, const void *p, size_t n);
uint32_t floe_crc32c_hw(uint32_t crc, const void *p, size_t n);
bool floe_crc32c_hw_available(void);

#endif
