/* UTF-8 validation (RFC 3629): no overlongs, no surrogates, nothing past
 * U+10FFFF. */
#ifndef FLOE_UTIL_UTF8_H
#define FLOE_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid sequence starting at p (lead byte >= 0x80, p < end),
 * or 0 when it is invalid or cut short by end. */
static inline size_t floe_utf8_seq(const uint8_t *p, const uint8_t *end)
{
    uint8_t c = p[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return n;
}

/* Whether p[0..n) is valid UTF-8; *bad_at (if non-NULL) gets the offset of
 * the first invalid byte. */
static inline bool floe_utf8_valid(const uint8_t *p, size_t n, size_t *bad_at)
{
    const uint8_t *s = p, *end = p + n;
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t k = floe_utf8_seq(p, end);
        if (!k) {
            if (bad_at) *bad_at = (size_t)(p - s);
            return false;
        }
        p += k;
    }
    return true;
}

#endif
