/* Avro datum -> JSON text for the shredder (avro_conv.h). */
#include "table/avro_conv.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/base64.h"
#include "util/json.h"
#include "util/varint.h"

#define MAX_DEPTH 64

int floe_confluent_header(const uint8_t *p, size_t n, int32_t *id, floe_err_t *err)
{
    if (n < FLOE_CONFLUENT_HEADER)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "not in the Confluent wire format: %zu bytes, fewer than its 5-byte "
                            "header",
                            n);
    if (p[0] != 0)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "not in the Confluent wire format: magic byte %u, want 0", p[0]);
    *id = (int32_t)((uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4]);
    return 0;
}

/* ---- the recursion check ---- */

static int check(const floe_avro_schema_t *s, const floe_avro_schema_t **stack, int depth,
                 floe_err_t *err)
{
    if (depth >= MAX_DEPTH)
        return floe_err_set(err, FLOE_EINVAL, "the schema nests deeper than %d levels", MAX_DEPTH);
    switch (floe_avro_schema_type(s)) {
    case FLOE_AVRO_RECORD:
        for (int i = 0; i < depth; i++)
            if (stack[i] == s)
                return floe_err_set(err, FLOE_EINVAL,
                                    "record %s contains itself: recursive schemas have no table "
                                    "shape",
                                    floe_avro_schema_fullname(s));
        stack[depth] = s;
        for (size_t i = 0; i < floe_avro_schema_field_count(s); i++)
            if (check(floe_avro_schema_field_type(s, i), stack, depth + 1, err)) return -1;
        return 0;
    case FLOE_AVRO_ARRAY: return check(floe_avro_schema_items(s), stack, depth, err);
    case FLOE_AVRO_MAP: return check(floe_avro_schema_values(s), stack, depth, err);
    case FLOE_AVRO_UNION:
        for (size_t i = 0; i < floe_avro_schema_branch_count(s); i++)
            if (check(floe_avro_schema_branch(s, i), stack, depth, err)) return -1;
        return 0;
    default: return 0;
    }
}

int floe_avro_conv_check(const floe_avro_schema_t *s, floe_err_t *err)
{
    const floe_avro_schema_t *stack[MAX_DEPTH];
    return check(s, stack, 0, err);
}

/* ---- decoding ---- */

typedef floe_avro_in_t dec_t;

int floe_avro_in_corrupt(floe_avro_in_t *d, const char *what)
{
    return floe_err_set(d->err, FLOE_ECORRUPT, "avro: %s at byte %zu", what, d->off);
}

static int nomem(dec_t *d)
{
    return floe_err_oom(d->err);
}

int floe_avro_in_long(floe_avro_in_t *d, int64_t *v)
{
    int r = floe_varlong_decode(d->p + d->off, d->n - d->off, v);
    if (r <= 0) return floe_avro_in_corrupt(d, "truncated or overlong varint");
    d->off += (size_t)r;
    return 0;
}

int floe_avro_in_bytes(floe_avro_in_t *d, const uint8_t **p, size_t *len)
{
    int64_t n;
    if (floe_avro_in_long(d, &n)) return -1;
    if (n < 0 || (uint64_t)n > d->n - d->off)
        return floe_avro_in_corrupt(d, "byte length past the end");
    *p = d->p + d->off;
    *len = (size_t)n;
    d->off += (size_t)n;
    return 0;
}

int floe_avro_in_block(floe_avro_in_t *d, int64_t *count)
{
    if (floe_avro_in_long(d, count)) return -1;
    if (*count < 0) {
        int64_t size;
        if (*count == INT64_MIN || floe_avro_in_long(d, &size))
            return floe_avro_in_corrupt(d, "bad block count");
        *count = -*count;
    }
    if ((uint64_t)*count > d->n - d->off)
        return floe_avro_in_corrupt(d, "block count past the end");
    return 0;
}

int floe_avro_in_fixed(floe_avro_in_t *d, size_t len, const uint8_t **p)
{
    if (len > d->n - d->off) return floe_avro_in_corrupt(d, "value past the end");
    *p = d->p + d->off;
    d->off += len;
    return 0;
}

static int put(dec_t *d, const char *s)
{
    return floe_buf_append_str(d->out, s) ? nomem(d) : 0;
}

static int put_base64(dec_t *d, const uint8_t *p, size_t n)
{
    if (floe_buf_append_u8(d->out, '"') || floe_base64_encode(d->out, p, n) ||
        floe_buf_append_u8(d->out, '"'))
        return nomem(d);
    return 0;
}

/* A double that reads back as a fraction, never as a JSON integer (a
 * double column must not be inferred long); NaN and infinities as null. */
static int put_double(dec_t *d, double v)
{
    if (!isfinite(v)) return put(d, "null");
    char b[40];
    int k = snprintf(b, sizeof b, "%.17g", v);
    if (!strpbrk(b, ".eE")) snprintf(b + k, sizeof b - (size_t)k, ".0");
    return put(d, b);
}

/* Days since the epoch -> civil date (Howard Hinnant's algorithm). */
static void civil(int64_t days, int64_t *y, int *m, int *dd)
{
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    *dd = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int put_date(dec_t *d, int64_t days)
{
    int64_t y;
    int m, dd;
    civil(days, &y, &m, &dd);
    char b[48];
    snprintf(b, sizeof b, "\"%04" PRId64 "-%02d-%02d\"", y, m, dd);
    return put(d, b);
}

/* Microseconds of a day as HH:MM:SS.ffffff (no quotes). */
static void fmt_time(char *b, size_t n, int64_t us)
{
    int64_t s = us / 1000000;
    snprintf(b, n, "%02d:%02d:%02d.%06d", (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60),
             (int)(us % 1000000));
}

static int put_time(dec_t *d, int64_t us)
{
    if (us < 0 || us >= 86400000000LL) return put(d, "null");
    char t[32], b[40];
    fmt_time(t, sizeof t, us);
    snprintf(b, sizeof b, "\"%s\"", t);
    return put(d, b);
}

static int put_timestamp(dec_t *d, int64_t us, bool utc)
{
    int64_t days = us / 86400000000LL, rest = us % 86400000000LL, y;
    if (rest < 0) { /* floor, without overflow near INT64_MIN */
        rest += 86400000000LL;
        days--;
    }
    int m, dd;
    civil(days, &y, &m, &dd);
    if (y < 0 || y > 9999) return put(d, "null");
    char t[32], b[80];
    fmt_time(t, sizeof t, rest);
    snprintf(b, sizeof b, "\"%04" PRId64 "-%02d-%02dT%s%s\"", y, m, dd, t, utc ? "Z" : "");
    return put(d, b);
}

/* Big-endian two's complement (at most 16 bytes) at `scale` as decimal text. */
static int put_decimal(dec_t *d, const uint8_t *p, size_t n, int scale)
{
    if (n > 16)
        return floe_err_set(d->err, FLOE_EINVAL, "avro: a decimal of %zu bytes is wider than 16",
                            n);
    __int128 v = n && (p[0] & 0x80) ? -1 : 0;
    for (size_t i = 0; i < n; i++) v = (__int128)((unsigned __int128)v << 8) | p[i];
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    char digits[64];
    int k = 0;
    do {
        digits[k++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (k <= scale) digits[k++] = '0';
    char b[80];
    size_t j = 0;
    b[j++] = '"';
    if (neg) b[j++] = '-';
    for (int i = k - 1; i >= 0; i--) {
        b[j++] = digits[i];
        if (i == scale && scale > 0) b[j++] = '.';
    }
    b[j++] = '"';
    b[j] = 0;
    return put(d, b);
}

static int datum(dec_t *d, const floe_avro_schema_t *s, int depth);

/* Array and map blocks: count (negative: followed by a byte size), then
 * items, until a zero count.  A map is written as a list of {"key",
 * "value"} objects: its keys are data, not columns. */
static int blocks(dec_t *d, const floe_avro_schema_t *item, bool map, int depth)
{
    if (put(d, "[")) return -1;
    bool first = true;
    for (;;) {
        int64_t count;
        if (floe_avro_in_block(d, &count)) return -1;
        if (count == 0) break;
        for (int64_t i = 0; i < count; i++) {
            if (!first && put(d, ",")) return -1;
            first = false;
            if (map) {
                const uint8_t *k = NULL;
                size_t kl = 0;
                if (floe_avro_in_bytes(d, &k, &kl)) return -1;
                if (put(d, "{\"key\":") || floe_json_str(d->out, k, kl) || put(d, ",\"value\":"))
                    return nomem(d);
            }
            if (datum(d, item, depth + 1) || (map && put(d, "}"))) return -1;
        }
    }
    return put(d, "]");
}

static const char *branch_name(const floe_avro_schema_t *b)
{
    const char *n = floe_avro_schema_name(b);
    return n ? n : floe_avro_type_name(floe_avro_schema_type(b));
}

static int datum(dec_t *d, const floe_avro_schema_t *s, int depth)
{
    if (depth > MAX_DEPTH) return floe_avro_in_corrupt(d, "nested too deep");
    floe_avro_logical_t lt = floe_avro_schema_logical(s);
    int64_t l;
    switch (floe_avro_schema_type(s)) {
    case FLOE_AVRO_NULL: return put(d, "null");
    case FLOE_AVRO_BOOLEAN:
        if (d->off >= d->n || d->p[d->off] > 1) return floe_avro_in_corrupt(d, "bad boolean");
        return put(d, d->p[d->off++] ? "true" : "false");
    case FLOE_AVRO_INT:
    case FLOE_AVRO_LONG: {
        if (floe_avro_in_long(d, &l)) return -1;
        if (floe_avro_schema_type(s) == FLOE_AVRO_INT && (l < INT32_MIN || l > INT32_MAX))
            return floe_avro_in_corrupt(d, "int out of range");
        switch (lt) {
        case FLOE_AVRO_LOGICAL_DATE: return put_date(d, l);
        case FLOE_AVRO_LOGICAL_TIME_MILLIS: return put_time(d, l * 1000);
        case FLOE_AVRO_LOGICAL_TIME_MICROS: return put_time(d, l);
        case FLOE_AVRO_LOGICAL_TIMESTAMP_MILLIS:
        case FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MILLIS:
            if (l > INT64_MAX / 1000 || l < INT64_MIN / 1000) return put(d, "null");
            return put_timestamp(d, l * 1000, lt == FLOE_AVRO_LOGICAL_TIMESTAMP_MILLIS);
        case FLOE_AVRO_LOGICAL_TIMESTAMP_MICROS:
        case FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MICROS:
            return put_timestamp(d, l, lt == FLOE_AVRO_LOGICAL_TIMESTAMP_MICROS);
        default: {
            char b[24];
            snprintf(b, sizeof b, "%" PRId64, l);
            return put(d, b);
        }
        }
    }
    case FLOE_AVRO_FLOAT: {
        const uint8_t *p = NULL;
        if (floe_avro_in_fixed(d, 4, &p)) return -1;
        uint32_t u =
            (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        return put_double(d, f);
    }
    case FLOE_AVRO_DOUBLE: {
        const uint8_t *p = NULL;
        if (floe_avro_in_fixed(d, 8, &p)) return -1;
        uint64_t u = 0;
        for (int i = 7; i >= 0; i--) u = u << 8 | p[i];
        double v;
        memcpy(&v, &u, 8);
        return put_double(d, v);
    }
    case FLOE_AVRO_STRING:
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED: {
        const uint8_t *p = NULL;
        size_t n = floe_avro_schema_fixed_size(s);
        if (floe_avro_schema_type(s) == FLOE_AVRO_FIXED ? floe_avro_in_fixed(d, n, &p)
                                                        : floe_avro_in_bytes(d, &p, &n))
            return -1;
        if (lt == FLOE_AVRO_LOGICAL_DECIMAL)
            return put_decimal(d, p, n, floe_avro_schema_decimal_scale(s));
        if (floe_avro_schema_type(s) == FLOE_AVRO_STRING)
            return floe_json_str(d->out, p, n) ? nomem(d) : 0;
        return put_base64(d, p, n);
    }
    case FLOE_AVRO_ENUM: {
        if (floe_avro_in_long(d, &l)) return -1;
        if (l < 0 || (uint64_t)l >= floe_avro_schema_symbol_count(s))
            return floe_avro_in_corrupt(d, "enum index out of range");
        return floe_json_cstr(d->out, floe_avro_schema_symbol(s, (size_t)l)) ? nomem(d) : 0;
    }
    case FLOE_AVRO_ARRAY: return blocks(d, floe_avro_schema_items(s), false, depth);
    case FLOE_AVRO_MAP: return blocks(d, floe_avro_schema_values(s), true, depth);
    case FLOE_AVRO_UNION: {
        if (floe_avro_in_long(d, &l)) return -1;
        if (l < 0 || (uint64_t)l >= floe_avro_schema_branch_count(s))
            return floe_avro_in_corrupt(d, "union branch out of range");
        const floe_avro_schema_t *b = floe_avro_schema_branch(s, (size_t)l);
        if (floe_avro_schema_nullable_inner(s) || floe_avro_schema_type(b) == FLOE_AVRO_NULL)
            return datum(d, b, depth + 1);
        if (put(d, "{") || floe_json_cstr(d->out, branch_name(b)) || put(d, ":")) return nomem(d);
        return datum(d, b, depth + 1) || put(d, "}") ? -1 : 0;
    }
    case FLOE_AVRO_RECORD: {
        if (put(d, "{")) return -1;
        for (size_t i = 0; i < floe_avro_schema_field_count(s); i++) {
            if ((i && put(d, ",")) || floe_json_cstr(d->out, floe_avro_schema_field_name(s, i)) ||
                put(d, ":"))
                return nomem(d);
            if (datum(d, floe_avro_schema_field_type(s, i), depth + 1)) return -1;
        }
        return put(d, "}");
    }
    }
    return floe_avro_in_corrupt(d, "unknown schema type");
}

int floe_avro_conv_json(const floe_avro_schema_t *s, const uint8_t *p, size_t n, floe_buf_t *out,
                        floe_err_t *err)
{
    dec_t d = {p, n, 0, out, err};
    if (datum(&d, s, 0)) return -1;
    if (d.off != n) return floe_avro_in_corrupt(&d, "bytes left after the datum");
    return 0;
}
