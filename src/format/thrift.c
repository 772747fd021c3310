/* Thrift compact protocol encoder and checked decoder. */
#include "format/thrift.h"

#include <string.h>

#include "util/varint.h"

void floe_thrift_w_init(floe_thrift_w_t *w, floe_buf_t *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

static void put(floe_thrift_w_t *w, const void *p, size_t n)
{
    if (floe_buf_append(w->out, p, n) < 0) w->oom = true;
}

static void put_u8(floe_thrift_w_t *w, uint8_t b)
{
    put(w, &b, 1);
}

static void put_uvarint(floe_thrift_w_t *w, uint64_t v)
{
    uint8_t tmp[FLOE_VARINT64_MAX_LEN];
    put(w, tmp, floe_uvarint_encode(tmp, v));
}

static void field(floe_thrift_w_t *w, int16_t id, int type)
{
    int16_t delta = (int16_t)(id - w->last[w->depth]);
    if (delta > 0 && delta <= 15) {
        put_u8(w, (uint8_t)((delta << 4) | type));
    } else {
        put_u8(w, (uint8_t)type);
        put_uvarint(w, floe_zigzag32(id));
    }
    w->last[w->depth] = id;
}

void floe_thrift_w_i32(floe_thrift_w_t *w, int16_t id, int32_t v)
{
    field(w, id, FLOE_TT_I32);
    put_uvarint(w, floe_zigzag32(v));
}

void floe_thrift_w_i64(floe_thrift_w_t *w, int16_t id, int64_t v)
{
    field(w, id, FLOE_TT_I64);
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_w_bool(floe_thrift_w_t *w, int16_t id, bool v)
{
    field(w, id, v ? FLOE_TT_TRUE : FLOE_TT_FALSE);
}

void floe_thrift_w_bin(floe_thrift_w_t *w, int16_t id, const void *p, size_t n)
{
    field(w, id, FLOE_TT_BINARY);
    floe_thrift_w_elem_bin(w, p, n);
}

void floe_thrift_w_str(floe_thrift_w_t *w, int16_t id, const char *s)
{
    floe_thrift_w_bin(w, id, s, strlen(s));
}

static void push(floe_thrift_w_t *w)
{
    if (w->depth + 1 >= FLOE_THRIFT_MAX_DEPTH) {
        w->oom = true;
        return;
    }
    w->last[++w->depth] = 0;
}

void floe_thrift_w_struct_begin(floe_thrift_w_t *w, int16_t id)
{
    field(w, id, FLOE_TT_STRUCT);
    push(w);
}

void floe_thrift_w_struct_end(floe_thrift_w_t *w)
{
    put_u8(w, FLOE_TT_STOP);
    if (w->depth > 0) w->depth--;
}

void floe_thrift_w_empty(floe_thrift_w_t *w, int16_t id)
{
    floe_thrift_w_struct_begin(w, id);
    floe_thrift_w_struct_end(w);
}

void floe_thrift_w_list(floe_thrift_w_t *w, int16_t id, int elem_type, uint32_t count)
{
    field(w, id, FLOE_TT_LIST);
    if (count < 15) {
        put_u8(w, (uint8_t)((count << 4) | (uint32_t)elem_type));
    } else {
        put_u8(w, (uint8_t)(0xf0 | elem_type));
        put_uvarint(w, count);
    }
}

void floe_thrift_w_elem_i32(floe_thrift_w_t *w, int32_t v)
{
    put_uvarint(w, floe_zigzag32(v));
}
void floe_thrift_w_elem_i64(floe_thrift_w_t *w, int64_t v)
{
    put_uvarint(w, floe_zigzag64(v));
}

void floe_thrift_w_elem_bin(floe_thrift_w_t *w, const void *p, size_t n)
{
    put_uvarint(w, n);
    put(w, p, n);
}

void floe_thrift_w_elem_struct_begin(floe_thrift_w_t *w)
{
    push(w);
}

int floe_thrift_w_finish(floe_thrift_w_t *w)
{
    put_u8(w, FLOE_TT_STOP);
    return w->oom || w->depth != 0 ? -1 : 0;
}

/* ---- reader ---- */

void floe_thrift_r_init(floe_thrift_r_t *r, const void *p, size_t n)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->end = r->p + n;
}

void floe_thrift_r_fail(floe_thrift_r_t *r, const char *why)
{
    if (!r->error) r->error = why;
    r->p = r->end;
}

static uint64_t get_uvarint(floe_thrift_r_t *r)
{
    uint64_t v;
    if (r->error) return 0;
    int n = floe_uvarint64_decode(r->p, (size_t)(r->end - r->p), &v);
    if (n < 0) {
        floe_thrift_r_fail(r, "truncated or bad varint");
        return 0;
    }
    r->p += n;
    return v;
}

bool floe_thrift_r_field(floe_thrift_r_t *r, int *type, int16_t *id)
{
    if (r->error) return false;
    if (r->p >= r->end) {
        floe_thrift_r_fail(r, "truncated struct");
        return false;
    }
    uint8_t b = *r->p++;
    if (b == FLOE_TT_STOP) {
        if (r->depth > 0) r->depth--;
        return false;
    }
    *type = b & 0x0f;
    int delta = b >> 4;
    if (delta) {
        *id = (int16_t)(r->last[r->depth] + delta);
    } else {
        uint64_t v = get_uvarint(r);
        if (v > 0xffff) {
            floe_thrift_r_fail(r, "bad field id");
            return false;
        }
        *id = (int16_t)floe_unzigzag32((uint32_t)v);
    }
    if (*type == FLOE_TT_STOP || *type > FLOE_TT_STRUCT) {
        floe_thrift_r_fail(r, "bad field type");
        return false;
    }
    r->last[r->depth] = *id;
    return !r->error;
}

void floe_thrift_r_struct_begin(floe_thrift_r_t *r)
{
    if (r->depth + 1 >= FLOE_THRIFT_MAX_DEPTH) {
        floe_thrift_r_fail(r, "structs nested too deep");
        return;
    }
    r->last[++r->depth] = 0;
}

static bool is_int(int type)
{
    return type == FLOE_TT_BYTE || type == FLOE_TT_I16 || type == FLOE_TT_I32 ||
           type == FLOE_TT_I64;
}

int64_t floe_thrift_r_elem_int(floe_thrift_r_t *r, int type)
{
    if (r->error) return 0;
    if (type == FLOE_TT_BYTE) {
        if (r->p >= r->end) {
            floe_thrift_r_fail(r, "truncated byte");
            return 0;
        }
        return (int8_t)*r->p++;
    }
    if (type == FLOE_TT_TRUE || type == FLOE_TT_FALSE) {
        if (r->p >= r->end) {
            floe_thrift_r_fail(r, "truncated bool");
            return 0;
        }
        return *r->p++ == 1;
    }
    if (!is_int(type)) {
        floe_thrift_r_fail(r, "expected an integer");
        return 0;
    }
    return floe_unzigzag64(get_uvarint(r));
}

int32_t floe_thrift_r_i32(floe_thrift_r_t *r, int type)
{
    int64_t v = floe_thrift_r_elem_int(r, type);
    if (v < INT32_MIN || v > INT32_MAX) {
        floe_thrift_r_fail(r, "i32 out of range");
        return 0;
    }
    return (int32_t)v;
}

int64_t floe_thrift_r_i64(floe_thrift_r_t *r, int type)
{
    return floe_thrift_r_elem_int(r, type);
}

bool floe_thrift_r_bool(floe_thrift_r_t *r, int type)
{
    if (type == FLOE_TT_TRUE) return true;
    if (type == FLOE_TT_FALSE) return false;
    floe_thrift_r_fail(r, "expected a bool");
    return false;
}

floe_slice_t floe_thrift_r_bin(floe_thrift_r_t *r, int type)
{
    floe_slice_t s = {NULL, 0};
    if (type != FLOE_TT_BINARY) {
        floe_thrift_r_fail(r, "expected binary");
        return s;
    }
    uint64_t n = get_uvarint(r);
    if (r->error) return s;
    if (n > (uint64_t)(r->end - r->p)) {
        floe_thrift_r_fail(r, "binary longer than input");
        return s;
    }
    s.ptr = r->p;
    s.len = (size_t)n;
    r->p += n;
    return s;
}

uint32_t floe_thrift_r_list(floe_thrift_r_t *r, int type, int *elem_type)
{
    *elem_type = FLOE_TT_STOP;
    if (type != FLOE_TT_LIST && type != FLOE_TT_SET) {
        floe_thrift_r_fail(r, "expected a list");
        return 0;
    }
    if (r->p >= r->end) {
        floe_thrift_r_fail(r, "truncated list");
        return 0;
    }
    uint8_t b = *r->p++;
    uint64_t n = b >> 4;
    *elem_type = b & 0x0f;
    if (n == 15) n = get_uvarint(r);
    /* every element takes at least one byte (empty structs: their stop byte) */
    if (n > (uint64_t)(r->end - r->p)) {
        floe_thrift_r_fail(r, "list longer than input");
        return 0;
    }
    if (*elem_type == FLOE_TT_STOP || *elem_type > FLOE_TT_STRUCT) {
        floe_thrift_r_fail(r, "bad list element type");
        return 0;
    }
    return (uint32_t)n;
}

static void skip_depth(floe_thrift_r_t *r, int type, int depth)
{
    if (r->error) return;
    if (depth > FLOE_THRIFT_MAX_DEPTH) {
        floe_thrift_r_fail(r, "values nested too deep");
        return;
    }
    switch (type) {
    case FLOE_TT_TRUE:
    case FLOE_TT_FALSE: return; /* value in the header */
    case FLOE_TT_BYTE: floe_thrift_r_elem_int(r, type); return;
    case FLOE_TT_I16:
    case FLOE_TT_I32:
    case FLOE_TT_I64: get_uvarint(r); return;
    case FLOE_TT_DOUBLE:
        if (r->end - r->p < 8) floe_thrift_r_fail(r, "truncated double");
        else
            r->p += 8;
        return;
    case FLOE_TT_BINARY: floe_thrift_r_bin(r, type); return;
    case FLOE_TT_LIST:
    case FLOE_TT_SET: {
        int et;
        uint32_t n = floe_thrift_r_list(r, type, &et);
        for (uint32_t i = 0; i < n && !r->error; i++) {
            if (et == FLOE_TT_TRUE || et == FLOE_TT_FALSE) floe_thrift_r_elem_int(r, et);
            else
                skip_depth(r, et, depth + 1);
        }
        return;
    }
    case FLOE_TT_MAP: {
        uint64_t n = get_uvarint(r);
        if (n == 0) return;
        if (r->p >= r->end || n > (uint64_t)(r->end - r->p)) {
            floe_thrift_r_fail(r, "truncated map");
            return;
        }
        uint8_t kv = *r->p++;
        for (uint64_t i = 0; i < n && !r->error; i++) {
            int kt = kv >> 4, vt = kv & 15;
            if (kt == FLOE_TT_TRUE || kt == FLOE_TT_FALSE) floe_thrift_r_elem_int(r, kt);
            else
                skip_depth(r, kt, depth + 1);
            if (vt == FLOE_TT_TRUE || vt == FLOE_TT_FALSE) floe_thrift_r_elem_int(r, vt);
            else
                skip_depth(r, vt, depth + 1);
        }
        return;
    }
    case FLOE_TT_STRUCT: {
        floe_thrift_r_struct_begin(r);
        int t;
        int16_t id;
        while (floe_thrift_r_field(r, &t, &id)) skip_depth(r, t, depth + 1);
        return;
    }
    default: floe_thrift_r_fail(r, "bad value type");
    }
}

void floe_thrift_r_skip(floe_thrift_r_t *r, int type)
{
    skip_depth(r, type, 0);
}
