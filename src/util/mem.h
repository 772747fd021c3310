/* Byte comparisons for hot paths. */
#ifndef FLOE_UTIL_MEM_H
#define FLOE_UTIL_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether a[0..n) equals b[0..n).  Inline, 8 bytes a step: for the short
 * keys and dictionary entries that dominate, cheaper than a memcmp call. */
static inline bool floe_mem_eq_short(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    for (; n >= 8; n -= 8, x += 8, y += 8) {
        uint64_t u, v;
        memcpy(&u, x, 8);
        memcpy(&v, y, 8);
        if (u != v) return false;
    }
    for (; n; n--)
        if (*x++ != *y++) return false;
    return true;
}

#endif
