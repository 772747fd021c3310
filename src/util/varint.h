/* Kafka/protobuf-style variable-length integers.
 *
 * Unsigned varints carry 7 bits a byte, least significant group first, the
 * high bit set on every byte but the last.  Signed values are zigzag-encoded
 * first (0,-1,1,-2 -> 0,1,2,3).  Kafka calls the 32-bit signed form "varint"
 * (at most 5 bytes) and the 64-bit one "varlong" (at most 10 bytes).
 *
 * Decoders return the number of bytes consumed (> 0), or -1 when the input
 * is truncated, longer than the type allows, or overflows it. */
#ifndef FLOE_UTIL_VARINT_H
#define FLOE_UTIL_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define FLOE_VARINT32_MAX_LEN 5
#define FLOE_VARINT64_MAX_LEN 10

static inline uint32_t floe_zigzag32(int32_t v)
{
    return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}
static inline int32_t floe_unzigzag32(uint32_t v)
{
    return (int32_t)((v >> 1) ^ (~(v & 1) + 1));
}
static inline uint64_t floe_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t floe_unzigzag64(uint64_t v)
{
    return (int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

/* Encode into out (room for FLOE_VARINT64_MAX_LEN); returns bytes written. */
size_t floe_uvarint_encode(uint8_t *out, uint64_t v);
static inline size_t floe_varint_encode(uint8_t *out, int32_t v)
{
    return floe_uvarint_encode(out, floe_zigzag32(v));
}
static inline size_t floe_varlong_encode(uint8_t *out, int64_t v)
{
    return floe_uvarint_encode(out, floe_zigzag64(v));
}
/* Bytes floe_uvarint_encode would write. */
size_t floe_uvarint_len(uint64_t v);

int floe_uvarint32_decode(const uint8_t *p, size_t n, uint32_t *out);
int floe_uvarint64_decode(const uint8_t *p, size_t n, uint64_t *out);
int floe_varint_decode(const uint8_t *p, size_t n, int32_t *out);
int floe_varlong_decode(const uint8_t *p, size_t n, int64_t *out);

#endif
