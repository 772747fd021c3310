/* Memory helpers: array growth, byte comparisons for hot paths. */
#ifndef FLOE_UTIL_MEM_H
#define FLOE_UTIL_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Make room in an array for at least `need` elements of elem bytes: pp
 * points to the array pointer (T **, NULL when empty), *cap is its
 * capacity in elements.  When need > *cap the array is reallocated to
 * max(2 * *cap, need, 16) elements, so appends cost amortized O(1); need 0
 * counts as 1 (the array is never left NULL).  Returns 0, or -1 with the
 * array and *cap unchanged (still valid, still the caller's) when out of
 * memory or when the size would overflow.  Inline for the common case of
 * room to spare; floe_grow_to does the reallocation. */
int floe_grow_to(void *pp, size_t *cap, size_t need, size_t elem);
static inline int floe_grow(void *pp, size_t *cap, size_t need, size_t elem)
{
    return need && need <= *cap ? 0 : floe_grow_to(pp, cap, need, elem);
}

/* In base[0..n), elements of size bytes sorted as cmp says, the index of
 * the first that does not sort below key (n when all do): where key is,
 * or would be inserted.  cmp(key, elem) is <0, 0 or >0 as key sorts
 * before, with or after elem (as bsearch's). */
size_t floe_lower_bound(const void *key, const void *base, size_t n, size_t size,
                        int (*cmp)(const void *key, const void *elem));

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
