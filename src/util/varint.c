#include "util/varint.h"

size_t floe_uvarint_encode(uint8_t *out, uint64_t v)
{
    size_t i = 0;
    while (v >= 0x80) {
        out[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[i++] = (uint8_t)v;
    return i;
}

size_t floe_uvarint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Shared decoder: at most maxlen bytes, and the last byte may only carry the
 * bits that still fit in `bits`. */
static int decode(const uint8_t *p, size_t n, unsigned bits, uint64_t *out)
{
    size_t maxlen = (bits + 6) / 7;
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < maxlen; i++) {
        uint64_t b = p[i];
        unsigned shift = (unsigned)(7 * i);
        if (i == maxlen - 1) {
            unsigned room = bits - shift;           /* bits left for this byte */
            if (b & 0x80) return -1;                /* too long */
            if (room < 7 && (b >> room)) return -1; /* overflow */
        }
        v |= (b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return (int)(i + 1);
        }
    }
    return -1; /* truncated (or too long, caught above) */
}

int floe_uvarint32_decode(const uint8_t *p, size_t n, uint32_t *out)
{
    uint64_t v;
    int r = decode(p, n, 32, &v);
    if (r > 0) *out = (uint32_t)v;
    return r;
}

int floe_uvarint64_decode(const uint8_t *p, size_t n, uint64_t *out)
{
    return decode(p, n, 64, out);
}

int floe_varint_decode(const uint8_t *p, size_t n, int32_t *out)
{
    uint32_t v;
    int r = floe_uvarint32_decode(p, n, &v);
    if (r > 0) *out = floe_unzigzag32(v);
    return r;
}

int floe_varlong_decode(const uint8_t *p, size_t n, int64_t *out)
{
    uint64_t v;
    int r = floe_uvarint64_decode(p, n, &v);
    if (r > 0) *out = floe_unzigzag64(v);
    return r;
}
