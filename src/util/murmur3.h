/* MurmurHash3 x86_32, the hash Iceberg's bucket transform is defined on.
 * Iceberg hashes int and long both as the 8-byte little-endian long, dates as
 * int, strings as UTF-8 bytes; those encodings are the caller's (iceberg/). */
#ifndef FLOE_UTIL_MURMUR3_H
#define FLOE_UTIL_MURMUR3_H

#include <stddef.h>
#include <stdint.h>

uint32_t floe_murmur3_32(const void *key, size_t len, uint32_t seed);

#endif
