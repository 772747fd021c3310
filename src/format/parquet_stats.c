/* Parquet writer: column chunk statistics (min/max in the column's sort
 * order, nulls) and the bounds over every row group of a file. */
#include <math.h>
#include <string.h>

#include "format/parquet_write_int.h"

/* Compare two PLAIN-encoded values of column c in its sort order. */
static int cmp_val(const pq_col_t *c, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    switch (c->phys) {
    case FLOE_PQ_BOOLEAN: return (int)a[0] - (int)b[0];
    case FLOE_PQ_INT32: {
        int32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case FLOE_PQ_INT64: {
        int64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case FLOE_PQ_FLOAT: {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (x > y) - (x < y);
    }
    case FLOE_PQ_DOUBLE: {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    case FLOE_PQ_FIXED:
        if (c->spec->logical == FLOE_PQ_LT_DECIMAL && an > 0 && bn > 0) {
            /* two's complement big-endian: the sign bit flips the order */
            int sa = a[0] >> 7, sb = b[0] >> 7;
            if (sa != sb) return sa ? -1 : 1;
        }
        return pq_cmp_bytes(a, an, b, bn);
    default: return pq_cmp_bytes(a, an, b, bn);
    }
}

void pq_stats_add(pq_col_t *c, const uint8_t *v, size_t n)
{
    if (c->phys == FLOE_PQ_FLOAT) {
        float f;
        memcpy(&f, v, 4);
        if (isnan(f)) return;
    } else if (c->phys == FLOE_PQ_DOUBLE) {
        double d;
        memcpy(&d, v, 8);
        if (isnan(d)) return;
    }
    if (!c->has_minmax) {
        c->min.len = c->max.len = 0;
        if (floe_buf_append(&c->min, v, n) < 0 || floe_buf_append(&c->max, v, n) < 0) return;
        c->has_minmax = true;
        return;
    }
    if (cmp_val(c, v, n, c->min.data, c->min.len) < 0) {
        c->min.len = 0;
        floe_buf_append(&c->min, v, n);
    } else if (cmp_val(c, v, n, c->max.data, c->max.len) > 0) {
        c->max.len = 0;
        floe_buf_append(&c->max, v, n);
    }
}

/* Statistics of n values of a numeric column (layout per phys), found in
 * one loop and merged with two stats_add calls. */
void pq_stats_batch(pq_col_t *c, const uint8_t *v, size_t n)
{
#define MINMAX(T, SKIP)                                       \
    {                                                         \
        T mn = 0, mx = 0, x;                                  \
        bool any = false;                                     \
        for (size_t i = 0; i < n; i++) {                      \
            memcpy(&x, v + i * sizeof(T), sizeof(T));         \
            if (SKIP) continue;                               \
            if (!any) {                                       \
                mn = mx = x;                                  \
                any = true;                                   \
                continue;                                     \
            }                                                 \
            mn = x < mn ? x : mn;                             \
            mx = x > mx ? x : mx;                             \
        }                                                     \
        if (any) {                                            \
            pq_stats_add(c, (const uint8_t *)&mn, sizeof(T)); \
            pq_stats_add(c, (const uint8_t *)&mx, sizeof(T)); \
        }                                                     \
        return;                                               \
    }
    switch (c->phys) {
    case FLOE_PQ_INT32: MINMAX(int32_t, false)
    case FLOE_PQ_INT64: MINMAX(int64_t, false)
    case FLOE_PQ_FLOAT: MINMAX(float, isnan(x))
    case FLOE_PQ_DOUBLE: MINMAX(double, isnan(x))
    default:
        for (size_t i = 0; i < n; i++) pq_stats_add(c, v + i * c->width, c->width);
        return;
    }
#undef MINMAX
}

/* Fold the closing chunk's bounds into the bounds over every row group. */
void pq_fbounds_add(pq_col_t *c)
{
    if (!c->has_minmax) return;
    if (!c->has_fbounds) {
        c->fmin.len = c->fmax.len = 0;
        if (floe_buf_append(&c->fmin, c->min.data, c->min.len) < 0 ||
            floe_buf_append(&c->fmax, c->max.data, c->max.len) < 0)
            return;
        /* an empty first value leaves data NULL: give comparisons a pointer */
        if (floe_buf_reserve(&c->fmin, 1) < 0 || floe_buf_reserve(&c->fmax, 1) < 0) return;
        c->has_fbounds = true;
        return;
    }
    if (cmp_val(c, c->min.data, c->min.len, c->fmin.data, c->fmin.len) < 0) {
        c->fmin.len = 0;
        floe_buf_append(&c->fmin, c->min.data, c->min.len);
    }
    if (cmp_val(c, c->max.data, c->max.len, c->fmax.data, c->fmax.len) > 0) {
        c->fmax.len = 0;
        floe_buf_append(&c->fmax, c->max.data, c->max.len);
    }
}
