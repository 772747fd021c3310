/* Memory helpers (mem.h). */
#include "util/mem.h"

#include <stdint.h>
#include <stdlib.h>

int floe_grow_to(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need == 0) need = 1;
    if (need <= *cap) return 0;
    size_t c = *cap > SIZE_MAX / 2 ? need : *cap * 2;
    if (c < need) c = need;
    if (c < 16) c = 16;
    if (elem && c > SIZE_MAX / elem) return -1;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, c * elem);
    if (!q) return -1;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}

size_t floe_lower_bound(const void *key, const void *base, size_t n, size_t size,
                        int (*cmp)(const void *key, const void *elem))
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(key, (const char *)base + mid * size) > 0) lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
