/* Iceberg column metrics of a Parquet data file while it is written
 * (colstats.h). */
#include "iceberg/colstats.h"

#include <math.h>
#include <string.h>

void floe_ice_colstats_init(floe_ice_colstats_t *st, int32_t id, floe_ice_kind_t kind, bool bounds)
{
    memset(st, 0, sizeof *st);
    st->id = id;
    st->kind = kind;
    st->bounds = bounds;
}

/* NaNs among nv float or double values. */
static int64_t count_nans(floe_ice_kind_t kind, const void *vals, size_t nv)
{
    int64_t n = 0;
    const uint8_t *v8 = vals;
    if (kind == FLOE_ICE_DOUBLE) {
        for (size_t j = 0; j < nv; j++) {
            double x;
            memcpy(&x, v8 + 8 * j, 8);
            n += isnan(x);
        }
    } else if (kind == FLOE_ICE_FLOAT) {
        for (size_t j = 0; j < nv; j++) {
            float x;
            memcpy(&x, v8 + 4 * j, 4);
            n += isnan(x);
        }
    }
    return n;
}

/* One batch's counts: nl entries, full of them defined, nv values. */
static void tally(floe_ice_colstats_t *st, size_t nl, size_t full, const void *vals, size_t nv)
{
    st->values += (int64_t)nl;
    st->nulls += (int64_t)(nl - full);
    st->nans += count_nans(st->kind, vals, nv);
}

void floe_ice_colstats_add(floe_ice_colstats_t *st, const uint8_t *def, size_t nl, int maxdef,
                           const void *vals, size_t nv)
{
    size_t full = def ? 0 : nl;
    for (size_t i = 0; def && i < nl; i++) full += def[i] == maxdef;
    tally(st, nl, full, vals, nv);
}

void floe_ice_colstats_add16(floe_ice_colstats_t *st, const int16_t *def, size_t nl, int maxdef,
                             const void *vals, size_t nv)
{
    size_t full = def ? 0 : nl;
    for (size_t i = 0; def && i < nl; i++) full += def[i] == maxdef;
    tally(st, nl, full, vals, nv);
}

bool floe_ice_bound_truncate(floe_buf_t *b, bool upper, bool utf8)
{
    size_t cut = b->len, chars = 0;
    for (size_t i = 0; i < b->len; chars++) {
        if (chars == FLOE_ICE_BOUND_TRUNCATE) {
            cut = i;
            break;
        }
        uint8_t c = b->data[i];
        i += !utf8 || c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    }
    if (cut == b->len) return true;
    b->len = cut;
    if (!upper) return true;
    if (!utf8) {
        while (b->len) {
            if (b->data[b->len - 1] != 0xff) {
                b->data[b->len - 1]++;
                return true;
            }
            b->len--;
        }
        return false;
    }
    while (b->len) {
        size_t s = b->len - 1;
        while (s && (b->data[s] & 0xc0) == 0x80) s--;
        /* decode the last code point */
        uint32_t cp = b->data[s];
        size_t k = b->len - s;
        if (k == 2) cp = cp & 0x1f;
        else if (k == 3)
            cp = cp & 0x0f;
        else if (k == 4)
            cp = cp & 0x07;
        for (size_t i = s + 1; i < b->len; i++) cp = (cp << 6) | (b->data[i] & 0x3f);
        b->len = s;
        if (cp >= 0x10ffff) continue;
        cp++;
        if (cp == 0xd800) cp = 0xe000;
        uint8_t u[4];
        size_t m;
        if (cp < 0x80) {
            u[0] = (uint8_t)cp;
            m = 1;
        } else if (cp < 0x800) {
            u[0] = (uint8_t)(0xc0 | (cp >> 6));
            u[1] = (uint8_t)(0x80 | (cp & 0x3f));
            m = 2;
        } else if (cp < 0x10000) {
            u[0] = (uint8_t)(0xe0 | (cp >> 12));
            u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
            u[2] = (uint8_t)(0x80 | (cp & 0x3f));
            m = 3;
        } else {
            u[0] = (uint8_t)(0xf0 | (cp >> 18));
            u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
            u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
            u[3] = (uint8_t)(0x80 | (cp & 0x3f));
            m = 4;
        }
        floe_buf_append(b, u, m);
        return true;
    }
    return false;
}

/* A decimal bound as the Parquet writer keeps it (little-endian int32 or
 * int64, or big-endian two's complement bytes) rewritten in Iceberg's form:
 * the unscaled value's minimal big-endian two's complement bytes.  false
 * when it cannot be (wider than 16 bytes): no bound then. */
static bool decimal_bound(floe_buf_t *b, int32_t scale, bool *oom)
{
    __int128 x;
    if (b->len == 4 || b->len == 8) {
        int64_t v = 0;
        if (b->len == 4) {
            int32_t v32;
            memcpy(&v32, b->data, 4);
            v = v32;
        } else {
            memcpy(&v, b->data, 8);
        }
        x = v;
    } else if (b->len >= 1 && b->len <= 16) {
        floe_ice_value_t be = {.kind = FLOE_ICE_DECIMAL, .bytes = b->data, .len = b->len};
        x = floe_ice_value_decimal(&be);
    } else {
        return false;
    }
    floe_ice_value_t v;
    memset(&v, 0, sizeof v);
    if (floe_ice_value_set_decimal(&v, x, scale) < 0) {
        *oom = true;
        return false;
    }
    floe_buf_reset(b);
    *oom = floe_buf_append(b, v.bytes, v.len) < 0;
    floe_ice_value_clear(&v);
    return !*oom;
}

int floe_ice_colstats_fill(const floe_ice_colstats_t *st, size_t n, const floe_pq_writer_t *pq,
                           floe_ice_data_file_t *f, floe_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        const floe_ice_colstats_t *s = &st[i];
        floe_ice_col_metrics_t *m = floe_ice_data_file_metrics(f, s->id);
        if (!m) return floe_err_oom(err);
        m->size = (int64_t)floe_pq_writer_column_bytes(pq, (int)i);
        m->values = s->values;
        m->nulls = s->nulls;
        m->nans = s->kind == FLOE_ICE_DOUBLE || s->kind == FLOE_ICE_FLOAT ? s->nans : -1;
        m->has_lower = m->has_upper = false;
        floe_buf_reset(&m->lower);
        floe_buf_reset(&m->upper);
        floe_slice_t lo, hi;
        if (!s->bounds || !floe_pq_writer_bounds(pq, (int)i, &lo, &hi)) continue;
        /* the writer's bounds are PLAIN values: little-endian numbers as
         * Iceberg's single-value serialization has them, one byte for a
         * boolean, the bytes of a string, binary, fixed or uuid */
        if (floe_buf_append(&m->lower, lo.ptr, lo.len) < 0 ||
            floe_buf_append(&m->upper, hi.ptr, hi.len) < 0)
            return floe_err_oom(err);
        if (s->kind == FLOE_ICE_DECIMAL) {
            bool oom = false;
            if (!decimal_bound(&m->lower, s->scale, &oom) ||
                !decimal_bound(&m->upper, s->scale, &oom)) {
                if (oom) return floe_err_oom(err);
                continue;
            }
        }
        if (s->kind == FLOE_ICE_STRING || s->kind == FLOE_ICE_BINARY) {
            bool utf8 = s->kind == FLOE_ICE_STRING;
            floe_ice_bound_truncate(&m->lower, false, utf8);
            if (!floe_ice_bound_truncate(&m->upper, true, utf8)) {
                m->has_lower = true;
                continue;
            }
        }
        m->has_lower = m->has_upper = true;
    }
    return 0;
}
