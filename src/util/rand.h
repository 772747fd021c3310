/* Random bytes for identifiers (UUIDs, Avro sync markers, producer ids).
 * Not for secrets. */
#ifndef FLOE_UTIL_RAND_H
#define FLOE_UTIL_RAND_H

#include <stddef.h>
#include <stdint.h>

/* Fill out[0..n) from getrandom(2); when the kernel has no entropy source
 * to offer, from a clock-seeded generator, still distinct per call and per
 * process.  Thread-safe; never fails. */
void floe_rand_bytes(void *out, size_t n);

/* A random 64-bit value (floe_rand_bytes). */
uint64_t floe_rand_u64(void);

#endif
