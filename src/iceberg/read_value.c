/* Leaf values of Parquet column chunks as JSON text (read_int.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/read_int.h"
#include "util/base64.h"
#include "util/clock.h"
#include "util/json.h"

static int put_base64(floe_buf_t *b, const uint8_t *p, size_t n)
{
    return floe_buf_append_u8(b, '"') || floe_base64_encode(b, p, n) || floe_buf_append_u8(b, '"')
               ? -1
               : 0;
}

/* Shortest text that reads back as the same double; NaN and infinities as
 * strings (JSON has no literal for them). */
static int put_double(floe_buf_t *b, double d)
{
    if (isnan(d)) return floe_buf_append_str(b, "\"NaN\"");
    if (isinf(d)) return floe_buf_append_str(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    char s[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, d);
        if (strtod(s, NULL) == d) break;
    }
    if (!strpbrk(s, ".en")) strcat(s, ".0");
    return floe_buf_append_str(b, s);
}

/* Unscaled big-endian two's complement (at most 16 bytes). */
static bool be_int128(const uint8_t *p, size_t n, __int128 *out)
{
    if (n == 0 || n > 16) return false;
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++) u = (u << 8) | p[i];
    *out = (__int128)u;
    return true;
}

/* Timestamps as ISO-8601 text in UTC (with Z when adjusted to UTC). */
static int put_timestamp(floe_buf_t *b, int64_t v, floe_pq_unit_t unit, bool utc)
{
    char t[48];
    int digits = unit == FLOE_PQ_MILLIS ? 3 : unit == FLOE_PQ_MICROS ? 6 : 9;
    if (floe_time_iso(t, sizeof t, v, digits, utc) < 0) return floe_buf_append_str(b, t);
    return floe_buf_printf(b, "\"%s\"", t);
}

static int put_date(floe_buf_t *b, int32_t days)
{
    char t[48];
    if (floe_time_iso(t, sizeof t, days, FLOE_TIME_DATE, false) < 0)
        return floe_buf_append_str(b, t);
    return floe_buf_printf(b, "\"%s\"", t);
}

static int put_time(floe_buf_t *b, int64_t v, floe_pq_unit_t unit)
{
    int64_t per = unit == FLOE_PQ_MILLIS ? 1000 : unit == FLOE_PQ_MICROS ? 1000000 : 1000000000;
    if (v < 0) return floe_buf_printf(b, "%" PRId64, v);
    int64_t s = v / per, f = v % per;
    int w = unit == FLOE_PQ_MILLIS ? 3 : unit == FLOE_PQ_MICROS ? 6 : 9;
    return floe_buf_printf(b, "\"%02lld:%02lld:%02lld.%0*lld\"", (long long)(s / 3600),
                           (long long)(s / 60 % 60), (long long)(s % 60), w, (long long)f);
}

/* One leaf value, typed by the Parquet node and (when known) the Iceberg
 * type, which wins for promoted columns (an old long file under a double). */
int floe_ice_json_value(floe_buf_t *b, const floe_pq_node_t *n, const floe_ice_type_t *ice,
                        const floe_pq_column_t *c, size_t i)
{
    floe_ice_kind_t k = ice ? ice->kind : 0;
    switch (c->phys) {
    case FLOE_PQ_BOOLEAN:
        return floe_buf_append_str(b, ((const uint8_t *)c->values)[i] ? "true" : "false");
    case FLOE_PQ_INT32: {
        int32_t v = ((const int32_t *)c->values)[i];
        if (n->logical == FLOE_PQ_LT_DATE || k == FLOE_ICE_DATE) return put_date(b, v);
        if (n->logical == FLOE_PQ_LT_DECIMAL) return floe_ice_decimal_text(b, v, n->scale);
        if (n->logical == FLOE_PQ_LT_TIME) return put_time(b, v, n->unit);
        if (k == FLOE_ICE_DOUBLE || k == FLOE_ICE_FLOAT) return put_double(b, (double)v);
        if (n->logical == FLOE_PQ_LT_INT && !n->is_signed)
            return floe_buf_printf(b, "%" PRIu32, (uint32_t)v);
        return floe_buf_printf(b, "%" PRId32, v);
    }
    case FLOE_PQ_INT64: {
        int64_t v = ((const int64_t *)c->values)[i];
        if (n->logical == FLOE_PQ_LT_TIMESTAMP) return put_timestamp(b, v, n->unit, n->utc);
        if (k == FLOE_ICE_TIMESTAMP || k == FLOE_ICE_TIMESTAMPTZ)
            return put_timestamp(b, v, FLOE_PQ_MICROS, k == FLOE_ICE_TIMESTAMPTZ);
        if (n->logical == FLOE_PQ_LT_TIME || k == FLOE_ICE_TIME)
            return put_time(b, v, n->logical == FLOE_PQ_LT_TIME ? n->unit : FLOE_PQ_MICROS);
        if (n->logical == FLOE_PQ_LT_DECIMAL) return floe_ice_decimal_text(b, v, n->scale);
        if (k == FLOE_ICE_DOUBLE || k == FLOE_ICE_FLOAT) return put_double(b, (double)v);
        if (n->logical == FLOE_PQ_LT_INT && !n->is_signed)
            return floe_buf_printf(b, "%" PRIu64, (uint64_t)v);
        return floe_buf_printf(b, "%" PRId64, v);
    }
    case FLOE_PQ_INT96: {
        /* legacy timestamps: nanoseconds of the day, then the Julian day */
        const floe_slice_t *s = &((const floe_slice_t *)c->values)[i];
        if (s->len != 12) return floe_buf_append_str(b, "null");
        int64_t nanos = (int64_t)floe_rd_le64(s->ptr);
        int64_t jd = (int32_t)floe_rd_le32(s->ptr + 8);
        return put_timestamp(b, (jd - 2440588) * 86400000000000LL + nanos, FLOE_PQ_NANOS, true);
    }
    case FLOE_PQ_FLOAT: return put_double(b, (double)((const float *)c->values)[i]);
    case FLOE_PQ_DOUBLE: return put_double(b, ((const double *)c->values)[i]);
    case FLOE_PQ_BYTE_ARRAY:
    case FLOE_PQ_FIXED: {
        const floe_slice_t *s = &((const floe_slice_t *)c->values)[i];
        __int128 d;
        if (n->logical == FLOE_PQ_LT_DECIMAL && be_int128(s->ptr, s->len, &d))
            return floe_ice_decimal_text(b, d, n->scale);
        if ((n->logical == FLOE_PQ_LT_UUID || k == FLOE_ICE_UUID) && s->len == 16) {
            const uint8_t *u = s->ptr;
            return floe_buf_printf(
                b, "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
        }
        if (n->logical == FLOE_PQ_LT_STRING || n->logical == FLOE_PQ_LT_ENUM ||
            n->logical == FLOE_PQ_LT_JSON || k == FLOE_ICE_STRING)
            return floe_json_str(b, s->ptr, s->len);
        return put_base64(b, s->ptr, s->len);
    }
    default: return floe_buf_append_str(b, "null");
    }
}
