/* Protobuf messages as JSON text for the shredder (proto_conv.h). */
#include "table/proto_conv.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/tstamp.h"
#include "util/base64.h"
#include "util/json.h"
#include "util/varint.h"

#define MAX_DEPTH 64

int floe_proto_conv_indexes(const uint8_t *p, size_t n, int32_t *idx, size_t *nidx, size_t *used,
                            floe_err_t *err)
{
    uint32_t raw;
    int r = floe_uvarint32_decode(p, n, &raw);
    if (r <= 0) return floe_err_set(err, FLOE_ECORRUPT, "protobuf: no message indexes");
    size_t off = (size_t)r;
    /* zigzag, as the format has it; an odd first varint (a negative count)
     * can only be a count written plain, by serializers that write plain
     * varints (python3-confluent-kafka 1.7): the rest are plain too */
    bool plain = raw & 1;
    uint32_t count = plain ? raw : raw >> 1;
    if (count == 0) {
        idx[0] = 0;
        *nidx = 1;
        *used = off;
        return 0;
    }
    if (count > FLOE_PROTO_MAX_INDEXES)
        return floe_err_set(err, FLOE_ECORRUPT, "protobuf: %u message indexes", (unsigned)count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t v;
        if ((r = floe_uvarint32_decode(p + off, n - off, &v)) <= 0)
            return floe_err_set(err, FLOE_ECORRUPT, "protobuf: truncated message indexes");
        idx[i] = plain ? (v > INT32_MAX ? -1 : (int32_t)v) : floe_unzigzag32(v);
        off += (size_t)r;
    }
    *nidx = (size_t)count;
    *used = off;
    return 0;
}

/* One field occurrence of the message being decoded. */
typedef struct ent {
    uint32_t fi, seq; /* index in the message's fields; position */
    floe_proto_wire_t w;
} ent_t;

typedef struct dec {
    ent_t *e; /* a stack: each message's occurrences above its parent's */
    size_t n, cap;
    floe_buf_t *out;
    floe_err_t *err;
    const uint8_t *base; /* the whole value, for byte offsets */
} dec_t;

static int nomem(dec_t *d)
{
    return floe_err_oom(d->err);
}

static int put(dec_t *d, const char *s)
{
    return floe_buf_append_str(d->out, s) ? nomem(d) : 0;
}

static int corrupt(dec_t *d, const floe_proto_field_t *f, const uint8_t *at, const char *what)
{
    return floe_err_set(d->err, FLOE_ECORRUPT, "protobuf: field %s (%d): %s at byte %td", f->name,
                        (int)f->number, what, at - d->base);
}

static int put_i64(dec_t *d, int64_t v)
{
    char b[24], *e = b + sizeof b, *q = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--q = '-';
    return floe_buf_append(d->out, q, (size_t)(e - q)) ? nomem(d) : 0;
}

/* "name": of field f. */
static int put_name(dec_t *d, const floe_proto_field_t *f)
{
    if (!f->plain) return floe_json_cstr(d->out, f->name) || put(d, ":") ? nomem(d) : 0;
    size_t n = strlen(f->name);
    if (floe_buf_reserve(d->out, n + 3)) return nomem(d);
    uint8_t *o = d->out->data + d->out->len;
    o[0] = '"';
    memcpy(o + 1, f->name, n);
    o[n + 1] = '"';
    o[n + 2] = ':';
    d->out->len += n + 3;
    return 0;
}

/* A double that reads back as a fraction, never as a JSON integer.  A
 * value that is r / 10^k for an integer r below 2^53 and k <= 9 is
 * written as that decimal (strtod of it gives v again: both are the
 * double nearest the same real number); others take %.17g. */
static int put_double(dec_t *d, double v)
{
    static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (!isfinite(v)) return put(d, "null");
    for (int k = 0; k < 10 && fabs(v) < 1e15; k++) {
        double r = nearbyint(v * p10[k]);
        if (fabs(r) >= 9007199254740992.0 || r / p10[k] != v) continue;
        char b[40], *e = b + sizeof b, *q = e;
        uint64_t u = (uint64_t)fabs(r);
        int digits = 0;
        do {
            *--q = (char)('0' + u % 10);
            u /= 10;
            if (++digits == k) *--q = '.';
        } while (u || digits < k);
        if (digits == k) *--q = '0'; /* 0.xx */
        if (signbit(v)) *--q = '-';
        if (floe_buf_append(d->out, q, (size_t)(e - q))) return nomem(d);
        return k ? 0 : put(d, ".0");
    }
    char b[40];
    int k = snprintf(b, sizeof b, "%.17g", v);
    if (!strpbrk(b, ".eE")) snprintf(b + k, sizeof b - (size_t)k, ".0");
    return put(d, b);
}

static int put_enum(dec_t *d, const floe_proto_enum_t *e, int32_t v)
{
    for (size_t i = 0; i < e->nvals; i++)
        if (e->vals[i].number == v) return floe_json_cstr(d->out, e->vals[i].name) ? nomem(d) : 0;
    char b[24];
    snprintf(b, sizeof b, "\"%d\"", (int)v);
    return put(d, b);
}

int floe_proto_conv_wire_type(int t)
{
    switch (t) {
    case FLOE_PT_DOUBLE:
    case FLOE_PT_FIXED64:
    case FLOE_PT_SFIXED64: return 1;
    case FLOE_PT_FLOAT:
    case FLOE_PT_FIXED32:
    case FLOE_PT_SFIXED32: return 5;
    case FLOE_PT_STRING:
    case FLOE_PT_BYTES:
    case FLOE_PT_MESSAGE: return 2;
    default: return 0;
    }
}

static int message(dec_t *d, const floe_proto_msg_t *m, const uint8_t *p, size_t n, int depth);

/* A scalar or enum value v of field f (its wire value already read). */
static int scalar(dec_t *d, const floe_proto_field_t *f, int t, uint64_t v)
{
    switch (t) {
    case FLOE_PT_INT32:
    case FLOE_PT_SFIXED32: return put_i64(d, (int32_t)(uint32_t)v);
    case FLOE_PT_UINT32:
    case FLOE_PT_FIXED32: return put_i64(d, (uint32_t)v);
    case FLOE_PT_SINT32: return put_i64(d, floe_unzigzag32((uint32_t)v));
    case FLOE_PT_SINT64: return put_i64(d, floe_unzigzag64(v));
    case FLOE_PT_BOOL: return put(d, v ? "true" : "false");
    case FLOE_PT_ENUM: return put_enum(d, f->en, (int32_t)(uint32_t)v);
    case FLOE_PT_FLOAT: {
        uint32_t b = (uint32_t)v;
        float x;
        memcpy(&x, &b, 4);
        return put_double(d, x);
    }
    case FLOE_PT_DOUBLE: {
        double x;
        memcpy(&x, &v, 8);
        return put_double(d, x);
    }
    default: return put_i64(d, (int64_t)v); /* int64, uint64, fixed64, sfixed64 */
    }
}

/* One occurrence w of field f (not packed). */
static int value(dec_t *d, const floe_proto_field_t *f, const floe_proto_wire_t *w, int depth)
{
    if (w->wt != floe_proto_conv_wire_type(f->type))
        return corrupt(d, f, w->p ? w->p : d->base, "wrong wire type");
    switch (f->type) {
    case FLOE_PT_STRING: return floe_json_str(d->out, w->p, w->len) ? nomem(d) : 0;
    case FLOE_PT_BYTES:
        return floe_buf_append_u8(d->out, '"') || floe_base64_encode(d->out, w->p, w->len) ||
                       floe_buf_append_u8(d->out, '"')
                   ? nomem(d)
                   : 0;
    case FLOE_PT_MESSAGE: return message(d, f->msg, w->p, w->len, depth + 1);
    default: return scalar(d, f, f->type, w->v);
    }
}

/* The elements of a packed occurrence of f. */
static int packed(dec_t *d, const floe_proto_field_t *f, const floe_proto_wire_t *w, bool *first)
{
    size_t off = 0;
    int wt = floe_proto_conv_wire_type(f->type);
    while (off < w->len) {
        uint64_t v;
        if (wt == 0) {
            int r = floe_uvarint64_decode(w->p + off, w->len - off, &v);
            if (r <= 0) return corrupt(d, f, w->p + off, "truncated packed varint");
            off += (size_t)r;
        } else {
            size_t k = wt == 1 ? 8 : 4;
            if (w->len - off < k) return corrupt(d, f, w->p + off, "truncated packed value");
            v = k == 8 ? floe_rd_le64(w->p + off) : floe_rd_le32(w->p + off);
            off += k;
        }
        if ((!*first && put(d, ",")) || scalar(d, f, f->type, v)) return -1;
        *first = false;
    }
    return 0;
}

/* The default of an absent field, or NULL to leave it out (null). */
static const char *absent(const floe_proto_msg_t *m, const floe_proto_field_t *f)
{
    if (f->label == FLOE_PL_REPEATED) return "[]";
    if (f->type == FLOE_PT_MESSAGE || f->oneof >= 0) return NULL;
    if (m->syntax != 3 && !m->map_entry) return f->default_value ? "" : NULL;
    switch (f->type) {
    case FLOE_PT_STRING:
    case FLOE_PT_BYTES: return "\"\"";
    case FLOE_PT_BOOL: return "false";
    case FLOE_PT_FLOAT:
    case FLOE_PT_DOUBLE: return "0.0";
    case FLOE_PT_ENUM: return "";
    default: return "0";
    }
}

/* A proto2 [default = ...] as JSON. */
static int put_default(dec_t *d, const floe_proto_field_t *f)
{
    const char *v = f->default_value;
    switch (f->type) {
    case FLOE_PT_STRING: return floe_json_cstr(d->out, v) ? nomem(d) : 0;
    case FLOE_PT_BYTES: /* C-escaped in the descriptor; kept as written */
        return floe_json_cstr(d->out, v) ? nomem(d) : 0;
    case FLOE_PT_ENUM: return floe_json_cstr(d->out, v) ? nomem(d) : 0;
    case FLOE_PT_BOOL: return put(d, !strcmp(v, "true") ? "true" : "false");
    case FLOE_PT_FLOAT:
    case FLOE_PT_DOUBLE: return put_double(d, strtod(v, NULL));
    default: return put_i64(d, strtoll(v, NULL, 0));
    }
}

static int cmp_ent(const void *a, const void *b)
{
    const ent_t *x = a, *y = b;
    return x->fi != y->fi ? (x->fi < y->fi ? -1 : 1) : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* ---- well-known types ---- */

static bool is_wkt(const floe_proto_msg_t *m, const char *name)
{
    return !strncmp(m->full, ".google.protobuf.", 17) && !strcmp(m->full + 17, name);
}

static bool is_wrapper(const floe_proto_msg_t *m)
{
    static const char *const w[] = {"DoubleValue", "FloatValue",  "Int64Value",
                                    "UInt64Value", "Int32Value",  "UInt32Value",
                                    "BoolValue",   "StringValue", "BytesValue"};
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        if (is_wkt(m, w[i])) return true;
    return false;
}

/* Field `number`'s last occurrence in p[0..n) into *w: 1, 0 absent, -1. */
static int last_of(dec_t *d, const uint8_t *p, size_t n, uint32_t number, floe_proto_wire_t *w)
{
    size_t off = 0;
    floe_proto_wire_t x;
    int r, found = 0;
    while ((r = floe_proto_wire_next(p, n, &off, &x, d->err)) == 1)
        if (x.number == number) {
            *w = x;
            found = 1;
        }
    return r < 0 ? -1 : found;
}

int floe_proto_conv_timestamp(const uint8_t *p, size_t n, int64_t *us, floe_err_t *err)
{
    dec_t d = {.err = err, .base = p};
    floe_proto_wire_t s = {0}, ns = {0};
    int a = last_of(&d, p, n, 1, &s), b = a < 0 ? -1 : last_of(&d, p, n, 2, &ns);
    if (a < 0 || b < 0) return -1;
    if ((a && s.wt != 0) || (b && ns.wt != 0))
        return floe_err_set(err, FLOE_ECORRUPT, "protobuf: wrong wire type in a Timestamp");
    int64_t sec = (int64_t)s.v, nanos = (int32_t)(uint32_t)ns.v;
    if (sec < -62135596800LL || sec > 253402300799LL || nanos < 0 || nanos > 999999999) return 0;
    *us = sec * 1000000 + nanos / 1000;
    return 1;
}

static int timestamp(dec_t *d, const uint8_t *p, size_t n)
{
    int64_t us;
    char t[40];
    int r = floe_proto_conv_timestamp(p, n, &us, d->err);
    if (r < 0) return -1;
    if (!r || !floe_tstamp_format(us, t)) return put(d, "null");
    return floe_buf_printf(d->out, "\"%s\"", t) ? nomem(d) : 0;
}

/* google.protobuf.Struct / Value / ListValue as JSON text into out. */
static int struct_json(dec_t *d, const floe_proto_msg_t *m, const uint8_t *p, size_t n, int depth,
                       floe_buf_t *out);

static int sj_value(dec_t *d, const floe_proto_msg_t *value, const uint8_t *p, size_t n, int depth,
                    floe_buf_t *out)
{
    size_t off = 0;
    floe_proto_wire_t x, kind = {0};
    int r;
    bool have = false;
    while ((r = floe_proto_wire_next(p, n, &off, &x, d->err)) == 1)
        if (x.number >= 1 && x.number <= 6) kind = x, have = true;
    if (r < 0) return -1;
    if (!have || kind.number == 1) return floe_buf_append_str(out, "null") ? nomem(d) : 0;
    const floe_proto_field_t *f = floe_proto_msg_field(value, kind.number);
    if (!f || kind.wt != floe_proto_conv_wire_type(f->type))
        return corrupt(d, &value->fields[0], p, "bad Value");
    switch (kind.number) {
    case 2: {
        double v;
        memcpy(&v, &kind.v, 8);
        char b[40];
        if (!isfinite(v)) snprintf(b, sizeof b, "null");
        else
            snprintf(b, sizeof b, "%.17g", v);
        return floe_buf_append_str(out, b) ? nomem(d) : 0;
    }
    case 3: return floe_json_str(out, kind.p, kind.len) ? nomem(d) : 0;
    case 4: return floe_buf_append_str(out, kind.v ? "true" : "false") ? nomem(d) : 0;
    default: return struct_json(d, f->msg, kind.p, kind.len, depth + 1, out);
    }
}

static int struct_json(dec_t *d, const floe_proto_msg_t *m, const uint8_t *p, size_t n, int depth,
                       floe_buf_t *out)
{
    if (depth > MAX_DEPTH) return corrupt(d, &m->fields[0], p, "Struct nested too deep");
    bool list = is_wkt(m, "ListValue");
    const floe_proto_field_t *f = &m->fields[0]; /* Struct.fields / ListValue.values */
    if (floe_buf_append_u8(out, list ? '[' : '{')) return nomem(d);
    size_t off = 0;
    floe_proto_wire_t x;
    int r;
    bool first = true;
    while ((r = floe_proto_wire_next(p, n, &off, &x, d->err)) == 1) {
        if (x.number != 1) continue;
        if (x.wt != 2) return corrupt(d, f, p, "bad Struct");
        if (!first && floe_buf_append_u8(out, ',')) return nomem(d);
        first = false;
        if (list) {
            if (sj_value(d, f->msg, x.p, x.len, depth + 1, out)) return -1;
            continue;
        }
        /* a map entry: key 1 (string), value 2 (Value) */
        floe_proto_wire_t k = {0}, v = {0};
        int a = last_of(d, x.p, x.len, 1, &k), b = a < 0 ? -1 : last_of(d, x.p, x.len, 2, &v);
        if (a < 0 || b < 0) return -1;
        if ((a && k.wt != 2) || (b && v.wt != 2)) return corrupt(d, f, x.p, "bad Struct entry");
        const floe_proto_msg_t *value = floe_proto_msg_field(f->msg, 2)->msg;
        if (floe_json_str(out, a ? k.p : (const uint8_t *)"", a ? k.len : 0) ||
            floe_buf_append_u8(out, ':'))
            return nomem(d);
        if (b                                  ? sj_value(d, value, v.p, v.len, depth + 1, out)
            : floe_buf_append_str(out, "null") ? nomem(d)
                                               : 0)
            return -1;
    }
    if (r < 0) return -1;
    return floe_buf_append_u8(out, list ? ']' : '}') ? nomem(d) : 0;
}

floe_proto_wkt_t floe_proto_conv_wkt(const floe_proto_msg_t *m)
{
    if (!m->full || strncmp(m->full, ".google.protobuf.", 17)) return FLOE_PWKT_NONE;
    if (is_wkt(m, "Timestamp")) return FLOE_PWKT_TIMESTAMP;
    if (is_wrapper(m)) return FLOE_PWKT_WRAPPER;
    if (is_wkt(m, "Struct") || is_wkt(m, "Value") || is_wkt(m, "ListValue")) return FLOE_PWKT_JSON;
    return FLOE_PWKT_NONE;
}

/* A Struct, Value or ListValue m as its JSON text into out. */
static int struct_text(dec_t *d, const floe_proto_msg_t *m, const uint8_t *p, size_t n, int depth,
                       floe_buf_t *out)
{
    return is_wkt(m, "Value") ? sj_value(d, m, p, n, depth, out)
                              : struct_json(d, m, p, n, depth, out);
}

int floe_proto_conv_struct_text(const floe_proto_msg_t *m, const uint8_t *p, size_t n,
                                floe_buf_t *out, floe_err_t *err)
{
    dec_t d = {.err = err, .base = p};
    return struct_text(&d, m, p, n, 0, out);
}

/* ---- messages ---- */

static int message(dec_t *d, const floe_proto_msg_t *m, const uint8_t *p, size_t n, int depth)
{
    if (depth > MAX_DEPTH)
        return floe_err_set(d->err, FLOE_ECORRUPT, "protobuf: messages nested deeper than %d",
                            MAX_DEPTH);
    switch (floe_proto_conv_wkt(m)) {
    case FLOE_PWKT_TIMESTAMP: return timestamp(d, p, n);
    case FLOE_PWKT_WRAPPER: {
        floe_proto_wire_t w = {0};
        int a = last_of(d, p, n, 1, &w);
        if (a < 0) return -1;
        if (!a) return put(d, absent(m, &m->fields[0]));
        return value(d, &m->fields[0], &w, depth);
    }
    case FLOE_PWKT_JSON: {
        floe_buf_t t = FLOE_BUF_INIT;
        int rc = struct_text(d, m, p, n, depth, &t);
        if (!rc && floe_json_str(d->out, t.data, t.len)) rc = nomem(d);
        floe_buf_free(&t);
        return rc;
    }
    case FLOE_PWKT_NONE: break;
    }
    /* gather this message's occurrences of known fields */
    size_t base = d->n, off = 0;
    floe_proto_wire_t w;
    int r;
    bool sorted = true;
    uint32_t seq = 0;
    while ((r = floe_proto_wire_next(p, n, &off, &w, d->err)) == 1) {
        const floe_proto_field_t *f = floe_proto_msg_field(m, (int32_t)w.number);
        if (!f) continue; /* unknown: skipped */
        if (d->n == d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 64;
            ent_t *e = realloc(d->e, cap * sizeof *e);
            if (!e) return nomem(d);
            d->e = e;
            d->cap = cap;
        }
        uint32_t fi = (uint32_t)(f - m->fields);
        if (d->n > base && d->e[d->n - 1].fi > fi) sorted = false;
        d->e[d->n++] = (ent_t){fi, seq++, w};
    }
    if (r < 0) {
        floe_err_wrap(d->err, "in %s", m->full ? m->full : m->name);
        return -1;
    }
    if (!sorted) qsort(d->e + base, d->n - base, sizeof *d->e, cmp_ent);
    int rc = put(d, "{");
    bool first = true;
    size_t k = base, end = d->n;
    for (size_t i = 0; i < m->nfields && !rc; i++) {
        const floe_proto_field_t *f = &m->fields[i];
        size_t k2 = k;
        while (k2 < end && d->e[k2].fi == i) k2++;
        const char *dflt = k2 == k ? absent(m, f) : NULL;
        if (k2 == k && !dflt) continue;
        if ((!first && put(d, ",")) || put_name(d, f)) {
            rc = -1;
            break;
        }
        first = false;
        if (k2 == k) {
            /* "" from absent(): a proto2 default, or proto3's zero enum value */
            rc = dflt[0]            ? put(d, dflt)
                 : f->default_value ? put_default(d, f)
                                    : put_enum(d, f->en, 0);
            continue;
        }
        if (f->label == FLOE_PL_REPEATED) {
            bool one = true;
            rc = put(d, "[");
            for (size_t j = k; j < k2 && !rc; j++) {
                /* entries may grow d->e: copy the occurrence first */
                floe_proto_wire_t x = d->e[j].w;
                if (x.wt == 2 && floe_proto_packable(f->type)) {
                    rc = packed(d, f, &x, &one);
                } else {
                    rc = (!one && put(d, ",")) || value(d, f, &x, depth) ? -1 : 0;
                    one = false;
                }
            }
            if (!rc) rc = put(d, "]");
        } else {
            floe_proto_wire_t x = d->e[k2 - 1].w;
            rc = value(d, f, &x, depth);
        }
        k = k2;
        d->n = end; /* nested messages pushed above end: drop them */
    }
    if (!rc) rc = put(d, "}");
    d->n = base;
    return rc;
}

int floe_proto_conv_json(const floe_proto_msg_t *m, const uint8_t *p, size_t n, floe_buf_t *out,
                         floe_buf_t *scratch, floe_err_t *err)
{
    dec_t d = {.out = out, .err = err, .base = p};
    if (scratch) { /* the occurrence stack of an earlier call, reused */
        d.e = (ent_t *)(void *)scratch->data;
        d.cap = scratch->cap / sizeof *d.e;
    }
    int rc = message(&d, m, p, n, 0);
    if (scratch) {
        scratch->data = (uint8_t *)d.e;
        scratch->cap = d.cap * sizeof *d.e;
        scratch->len = 0;
    } else {
        free(d.e);
    }
    return rc;
}
