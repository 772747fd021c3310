/* Partition transforms (spec: "Partition Transforms", Appendix B hashing). */
#include "iceberg/spec.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/murmur3.h"

#define US_PER_DAY ((int64_t)86400000000)
#define US_PER_HOUR ((int64_t)3600000000)

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static const struct {
    floe_ice_transform_kind_t k;
    const char *name;
} tnames[] = {
    {FLOE_ICE_T_IDENTITY, "identity"}, {FLOE_ICE_T_YEAR, "year"}, {FLOE_ICE_T_MONTH, "month"},
    {FLOE_ICE_T_DAY, "day"},           {FLOE_ICE_T_HOUR, "hour"}, {FLOE_ICE_T_VOID, "void"},
};

int floe_ice_transform_parse(const char *s, floe_ice_transform_t *out, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof tnames / sizeof tnames[0]; i++)
        if (strcmp(s, tnames[i].name) == 0) {
            out->kind = tnames[i].k;
            return 0;
        }
    int n = 0;
    long long p;
    if (sscanf(s, "bucket[%lld]%n", &p, &n) == 1 && s[n] == '\0') out->kind = FLOE_ICE_T_BUCKET;
    else if ((n = 0, sscanf(s, "truncate[%lld]%n", &p, &n) == 1 && s[n] == '\0'))
        out->kind = FLOE_ICE_T_TRUNCATE;
    else
        return floe_err_set(err, FLOE_EINVAL, "unknown transform '%.64s'", s);
    if (p < 1 || p > INT32_MAX)
        return floe_err_set(err, FLOE_EINVAL, "transform '%.64s': parameter must be 1..2^31-1", s);
    out->param = (int32_t)p;
    return 0;
}

const char *floe_ice_transform_name(floe_ice_transform_t t, char *buf, size_t size)
{
    if (t.kind == FLOE_ICE_T_BUCKET) snprintf(buf, size, "bucket[%" PRId32 "]", t.param);
    else if (t.kind == FLOE_ICE_T_TRUNCATE)
        snprintf(buf, size, "truncate[%" PRId32 "]", t.param);
    else {
        snprintf(buf, size, "unknown");
        for (size_t i = 0; i < sizeof tnames / sizeof tnames[0]; i++)
            if (tnames[i].k == t.kind) snprintf(buf, size, "%s", tnames[i].name);
    }
    return buf;
}

bool floe_ice_transform_can_apply(floe_ice_transform_t t, const floe_ice_type_t *src)
{
    floe_ice_kind_t k = src->kind;
    if (!floe_ice_kind_is_primitive(k)) return false;
    switch (t.kind) {
    case FLOE_ICE_T_IDENTITY:
    case FLOE_ICE_T_VOID: return true;
    case FLOE_ICE_T_BUCKET:
        return k != FLOE_ICE_BOOLEAN && k != FLOE_ICE_FLOAT && k != FLOE_ICE_DOUBLE;
    case FLOE_ICE_T_TRUNCATE:
        return k == FLOE_ICE_INT || k == FLOE_ICE_LONG || k == FLOE_ICE_DECIMAL ||
               k == FLOE_ICE_STRING || k == FLOE_ICE_BINARY;
    case FLOE_ICE_T_YEAR:
    case FLOE_ICE_T_MONTH:
    case FLOE_ICE_T_DAY:
        return k == FLOE_ICE_DATE || k == FLOE_ICE_TIMESTAMP || k == FLOE_ICE_TIMESTAMPTZ;
    case FLOE_ICE_T_HOUR: return k == FLOE_ICE_TIMESTAMP || k == FLOE_ICE_TIMESTAMPTZ;
    }
    return false;
}

floe_ice_type_t *floe_ice_transform_result_type(floe_ice_transform_t t, const floe_ice_type_t *src,
                                                floe_err_t *err)
{
    if (!floe_ice_transform_can_apply(t, src)) {
        char a[32], b[48];
        floe_err_set(err, FLOE_EINVAL, "transform %s does not apply to type %s",
                     floe_ice_transform_name(t, b, sizeof b), floe_ice_type_name(src, a, sizeof a));
        return NULL;
    }
    floe_ice_type_t *r;
    switch (t.kind) {
    case FLOE_ICE_T_BUCKET:
    case FLOE_ICE_T_YEAR:
    case FLOE_ICE_T_MONTH:
    case FLOE_ICE_T_HOUR: r = floe_ice_type_prim(FLOE_ICE_INT); break;
    case FLOE_ICE_T_DAY: r = floe_ice_type_prim(FLOE_ICE_DATE); break;
    default: r = floe_ice_type_dup(src); break;
    }
    if (!r) floe_err_oom(err);
    return r;
}

static uint32_t hash_long(int64_t v)
{
    uint8_t b[8];
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(u >> (8 * i));
    return floe_murmur3_32(b, 8, 0);
}

int floe_ice_bucket_hash(const floe_ice_value_t *v, int32_t *hash, floe_err_t *err)
{
    uint32_t h;
    switch (v->kind) {
    case FLOE_ICE_BOOLEAN: h = hash_long(v->v.b ? 1 : 0); break;
    case FLOE_ICE_INT:
    case FLOE_ICE_DATE: h = hash_long(v->v.i); break;
    case FLOE_ICE_LONG:
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ: h = hash_long(v->v.l); break;
    case FLOE_ICE_FLOAT:
    case FLOE_ICE_DOUBLE: {
        double d = v->kind == FLOE_ICE_FLOAT ? (double)v->v.f : v->v.d;
        int64_t bits;
        if (d == 0.0) d = 0.0;                   /* -0.0 hashes as 0.0 */
        if (d != d) bits = 0x7ff8000000000000LL; /* canonical NaN */
        else
            memcpy(&bits, &d, 8);
        h = hash_long(bits);
        break;
    }
    case FLOE_ICE_STRING:
    case FLOE_ICE_UUID:
    case FLOE_ICE_FIXED:
    case FLOE_ICE_BINARY:
    case FLOE_ICE_DECIMAL: h = floe_murmur3_32(v->bytes, v->len, 0); break;
    default: return floe_err_set(err, FLOE_EINVAL, "no hash for nested values");
    }
    *hash = (int32_t)h;
    return 0;
}

/* Number of bytes in the first w code points of UTF-8 text. */
static size_t utf8_prefix(const uint8_t *p, size_t n, int32_t w)
{
    size_t i = 0;
    int32_t cps = 0;
    while (i < n) {
        if ((p[i] & 0xc0) != 0x80) {
            if (cps == w) break;
            cps++;
        }
        i++;
    }
    return i;
}

int floe_ice_transform_apply(floe_ice_transform_t t, const floe_ice_type_t *src,
                             const floe_ice_value_t *in, floe_ice_value_t *out, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!floe_ice_transform_can_apply(t, src)) {
        char a[32], b[48];
        return floe_err_set(err, FLOE_EINVAL, "transform %s does not apply to type %s",
                            floe_ice_transform_name(t, b, sizeof b),
                            floe_ice_type_name(src, a, sizeof a));
    }
    if (in->is_null || t.kind == FLOE_ICE_T_VOID) {
        out->is_null = true;
        out->kind = src->kind;
        if (t.kind == FLOE_ICE_T_BUCKET || t.kind == FLOE_ICE_T_YEAR ||
            t.kind == FLOE_ICE_T_MONTH || t.kind == FLOE_ICE_T_HOUR)
            out->kind = FLOE_ICE_INT;
        else if (t.kind == FLOE_ICE_T_DAY)
            out->kind = FLOE_ICE_DATE;
        return 0;
    }
    if (in->kind != src->kind)
        return floe_err_set(err, FLOE_EINVAL, "value kind %d does not match source type %d",
                            in->kind, src->kind);
    switch (t.kind) {
    case FLOE_ICE_T_IDENTITY:
        if (floe_ice_value_copy(out, in) < 0) return floe_err_oom(err);
        return 0;
    case FLOE_ICE_T_BUCKET: {
        int32_t h;
        if (floe_ice_bucket_hash(in, &h, err) < 0) return -1;
        out->kind = FLOE_ICE_INT;
        out->v.i = (int32_t)(((uint32_t)h & INT32_MAX) % (uint32_t)t.param);
        return 0;
    }
    case FLOE_ICE_T_TRUNCATE: {
        int64_t w = t.param;
        switch (src->kind) {
        case FLOE_ICE_INT: {
            int64_t v = in->v.i;
            *out = *in;
            out->v.i = (int32_t)(v - (((v % w) + w) % w));
            return 0;
        }
        case FLOE_ICE_LONG: {
            int64_t v = in->v.l;
            *out = *in;
            out->v.l = v - (((v % w) + w) % w);
            return 0;
        }
        case FLOE_ICE_DECIMAL: {
            __int128 v = floe_ice_value_decimal(in);
            __int128 r = v - (((v % w) + w) % w);
            if (floe_ice_value_set_decimal(out, r, in->scale) < 0) return floe_err_oom(err);
            return 0;
        }
        case FLOE_ICE_STRING: {
            size_t n = utf8_prefix(in->bytes, in->len, t.param);
            if (floe_ice_value_set_bytes(out, FLOE_ICE_STRING, in->bytes, n) < 0)
                return floe_err_oom(err);
            return 0;
        }
        default: {
            size_t n = in->len < (size_t)w ? in->len : (size_t)w;
            if (floe_ice_value_set_bytes(out, FLOE_ICE_BINARY, in->bytes, n) < 0)
                return floe_err_oom(err);
            return 0;
        }
        }
    }
    case FLOE_ICE_T_YEAR:
    case FLOE_ICE_T_MONTH:
    case FLOE_ICE_T_DAY:
    case FLOE_ICE_T_HOUR: {
        int64_t days, us = 0;
        if (src->kind == FLOE_ICE_DATE) days = in->v.i;
        else {
            us = in->v.l;
            days = floordiv(us, US_PER_DAY);
        }
        out->kind = FLOE_ICE_INT;
        if (t.kind == FLOE_ICE_T_HOUR) {
            out->v.i = (int32_t)floordiv(us, US_PER_HOUR);
            return 0;
        }
        if (t.kind == FLOE_ICE_T_DAY) {
            out->kind = FLOE_ICE_DATE;
            out->v.i = (int32_t)days;
            return 0;
        }
        int64_t y;
        unsigned m, d;
        floe_ice_civil_from_days(days, &y, &m, &d);
        out->v.i = t.kind == FLOE_ICE_T_YEAR ? (int32_t)(y - 1970)
                                             : (int32_t)((y - 1970) * 12 + (int64_t)m - 1);
        return 0;
    }
    default: break;
    }
    return floe_err_set(err, FLOE_EINVAL, "bad transform");
}

static int human_date(int64_t days, floe_buf_t *out)
{
    int64_t y;
    unsigned m, d;
    floe_ice_civil_from_days(days, &y, &m, &d);
    return floe_buf_printf(out, "%04" PRId64 "-%02u-%02u", y, m, d);
}

static int human_value(const floe_ice_value_t *v, floe_buf_t *out)
{
    static const char hex[] = "0123456789abcdef";
    switch (v->kind) {
    case FLOE_ICE_BOOLEAN: return floe_buf_append_str(out, v->v.b ? "true" : "false");
    case FLOE_ICE_INT: return floe_buf_printf(out, "%" PRId32, v->v.i);
    case FLOE_ICE_LONG: return floe_buf_printf(out, "%" PRId64, v->v.l);
    case FLOE_ICE_FLOAT: return floe_buf_printf(out, "%.9g", (double)v->v.f);
    case FLOE_ICE_DOUBLE: return floe_buf_printf(out, "%.17g", v->v.d);
    case FLOE_ICE_DATE: return human_date(v->v.i, out);
    case FLOE_ICE_TIME: {
        int64_t us = v->v.l;
        return floe_buf_printf(out, "%02" PRId64 ":%02" PRId64 ":%02" PRId64 ".%06" PRId64,
                               us / US_PER_HOUR, us / 60000000 % 60, us / 1000000 % 60,
                               us % 1000000);
    }
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ: {
        int64_t days = floordiv(v->v.l, US_PER_DAY), rem = v->v.l - days * US_PER_DAY;
        if (human_date(days, out) < 0) return -1;
        return floe_buf_printf(out, "T%02" PRId64 ":%02" PRId64 ":%02" PRId64 ".%06" PRId64 "%s",
                               rem / US_PER_HOUR, rem / 60000000 % 60, rem / 1000000 % 60,
                               rem % 1000000, v->kind == FLOE_ICE_TIMESTAMPTZ ? "+00:00" : "");
    }
    case FLOE_ICE_STRING: return floe_buf_append(out, v->bytes, v->len);
    case FLOE_ICE_DECIMAL: return floe_ice_decimal_text(out, floe_ice_value_decimal(v), v->scale);
    case FLOE_ICE_UUID:
        for (size_t i = 0; i < v->len; i++) {
            if ((i == 4 || i == 6 || i == 8 || i == 10) && floe_buf_append_u8(out, '-') < 0)
                return -1;
            if (floe_buf_printf(out, "%c%c", hex[v->bytes[i] >> 4], hex[v->bytes[i] & 15]) < 0)
                return -1;
        }
        return 0;
    default: /* binary, fixed: hex */
        for (size_t i = 0; i < v->len; i++)
            if (floe_buf_printf(out, "%c%c", hex[v->bytes[i] >> 4], hex[v->bytes[i] & 15]) < 0)
                return -1;
        return 0;
    }
}

int floe_ice_transform_human(floe_ice_transform_t t, const floe_ice_value_t *v, floe_buf_t *out)
{
    if (v->is_null) return floe_buf_append_str(out, "null");
    int64_t y;
    unsigned m, d;
    switch (t.kind) {
    case FLOE_ICE_T_YEAR: return floe_buf_printf(out, "%04" PRId32, 1970 + v->v.i);
    case FLOE_ICE_T_MONTH: {
        int64_t mm = v->v.i;
        y = 1970 + floordiv(mm, 12);
        return floe_buf_printf(out, "%04" PRId64 "-%02" PRId64, y, mm - floordiv(mm, 12) * 12 + 1);
    }
    case FLOE_ICE_T_DAY: return human_date(v->v.i, out);
    case FLOE_ICE_T_HOUR: {
        int64_t h = v->v.i, days = floordiv(h, 24);
        floe_ice_civil_from_days(days, &y, &m, &d);
        return floe_buf_printf(out, "%04" PRId64 "-%02u-%02u-%02" PRId64, y, m, d, h - days * 24);
    }
    default: return human_value(v, out);
    }
}
