/* Avro binary encoding: values to bytes, bytes to values, and skipping.
 * Every length read from the input is checked against what is left. */
#include <stdlib.h>
#include <string.h>

#include "format/avro_int.h"
#include "util/varint.h"

/* ------------------------------------------------------------------ */
/* Primitives                                                           */
/* ------------------------------------------------------------------ */

int avro_put_long(floe_buf_t *b, int64_t v)
{
    if (floe_buf_reserve(b, FLOE_VARINT64_MAX_LEN) != 0) return -1;
    uint64_t z = floe_zigzag64(v);
    uint8_t *p = b->data + b->len;
    while (z >= 0x80) {
        *p++ = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    *p++ = (uint8_t)z;
    b->len = (size_t)(p - b->data);
    return 0;
}

int avro_put_bytes(floe_buf_t *b, const void *p, size_t n)
{
    if (avro_put_long(b, (int64_t)n) != 0) return -1;
    return n ? floe_buf_append(b, p, n) : 0;
}

int avro_read_long(floe_slice_t *in, int64_t *out, floe_err_t *err)
{
    uint64_t x = 0;
    for (size_t i = 0;; i++) {
        if (i >= in->len) return floe_err_set(err, FLOE_ETRUNC, "avro: input ends inside a varint");
        if (i >= FLOE_VARINT64_MAX_LEN)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: varint longer than 10 bytes");
        uint8_t b = in->ptr[i];
        if (i == 9 && (b & 0x7e))
            return floe_err_set(err, FLOE_ECORRUPT, "avro: varint overflows 64 bits");
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            in->ptr += i + 1;
            in->len -= i + 1;
            *out = floe_unzigzag64(x);
            return 0;
        }
    }
}

static int read_int(floe_slice_t *in, int32_t *out, floe_err_t *err)
{
    int64_t x;
    if (avro_read_long(in, &x, err) != 0) return -1;
    if (x < INT32_MIN || x > INT32_MAX)
        return floe_err_set(err, FLOE_ECORRUPT, "avro: int value %lld out of range", (long long)x);
    *out = (int32_t)x;
    return 0;
}

static int need(floe_slice_t *in, size_t n, const char *what, floe_err_t *err)
{
    if (in->len < n)
        return floe_err_set(err, FLOE_ETRUNC,
                            "avro: input ends inside %s (%zu bytes needed, %zu left)", what, n,
                            in->len);
    return 0;
}

/* A byte/string length: non-negative and no more than what is left. */
static int read_len(floe_slice_t *in, size_t *out, const char *what, floe_err_t *err)
{
    int64_t n;
    if (avro_read_long(in, &n, err) != 0) return -1;
    if (n < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "avro: negative %s length %lld", what,
                            (long long)n);
    if ((uint64_t)n > in->len)
        return floe_err_set(err, FLOE_ETRUNC, "avro: %s of %lld bytes but %zu left", what,
                            (long long)n, in->len);
    *out = (size_t)n;
    return 0;
}

/* An array or map block header: the item count (0 ends the value), with
 * the spec's negative-count form (followed by the block's byte size). */
static int read_block_count(floe_slice_t *in, const floe_avro_schema_t *item, uint64_t so_far,
                            size_t *count, int64_t *bytes, floe_err_t *err)
{
    int64_t n;
    *bytes = -1;
    if (avro_read_long(in, &n, err) != 0) return -1;
    if (n < 0) {
        if (n == INT64_MIN) return floe_err_set(err, FLOE_ECORRUPT, "avro: bad block count");
        n = -n;
        if (avro_read_long(in, bytes, err) != 0) return -1;
        if (*bytes < 0 || (uint64_t)*bytes > in->len)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: bad block size %lld", (long long)*bytes);
    }
    /* every item takes a byte at least unless its type can be empty */
    if (item->min_zero) {
        if ((uint64_t)n > AVRO_MAX_ZERO_SIZE_ITEMS - so_far || so_far > AVRO_MAX_ZERO_SIZE_ITEMS)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: more than %u empty items",
                                AVRO_MAX_ZERO_SIZE_ITEMS);
    } else if ((uint64_t)n > in->len) {
        return floe_err_set(err, FLOE_ETRUNC, "avro: block of %lld items but %zu bytes left",
                            (long long)n, in->len);
    }
    *count = (size_t)n;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Encoding                                                             */
/* ------------------------------------------------------------------ */

static int enc(const floe_avro_value_t *v, floe_buf_t *o, floe_err_t *err, int depth);

static int oom(floe_err_t *err)
{
    return floe_err_set(err, FLOE_ENOMEM, "avro: out of memory encoding");
}

static int enc_unset(const floe_avro_value_t *v, floe_buf_t *o, floe_err_t *err)
{
    const floe_avro_schema_t *s = v->s;
    switch (s->type) {
    case FLOE_AVRO_NULL: return 0;
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: return avro_put_long(o, 0) ? oom(err) : 0;
    case FLOE_AVRO_UNION:
        for (size_t i = 0; i < s->n_branches; i++)
            if (s->branches[i]->type == FLOE_AVRO_NULL)
                return avro_put_long(o, (int64_t)i) ? oom(err) : 0;
        return floe_err_set(err, FLOE_EINVAL, "avro: union value not set (no null branch)");
    default:
        return floe_err_set(err, FLOE_EINVAL, "avro: %s value not set",
                            s->fullname ? s->fullname : floe_avro_type_name(s->type));
    }
}

static int enc_record(const floe_avro_value_t *v, floe_buf_t *o, floe_err_t *err, int depth)
{
    const floe_avro_schema_t *s = v->s;
    for (size_t i = 0; i < s->n_fields; i++) {
        const floe_avro_value_t *fv = &v->u.fields[i];
        const avro_field_t *f = &s->fields[i];
        if (!fv->set && f->def) {
            const floe_avro_value_t *d = avro_field_default(s, i);
            if (!d) {
                return floe_err_set(err, FLOE_EINVAL,
                                    "avro: field %s.%s: default does not fit its type", s->fullname,
                                    f->name);
            }
            fv = d;
        }
        if (enc(fv, o, err, depth + 1) != 0) {
            floe_err_wrap(err, "field %s", f->name);
            return -1;
        }
    }
    return 0;
}

static int enc(const floe_avro_value_t *v, floe_buf_t *o, floe_err_t *err, int depth)
{
    if (depth > AVRO_MAX_DEPTH)
        return floe_err_set(err, FLOE_EINVAL, "avro: value nested too deep");
    const floe_avro_schema_t *s = v->s;
    if (s->type == FLOE_AVRO_RECORD) return enc_record(v, o, err, depth);
    if (!v->set) return enc_unset(v, o, err);
    uint8_t b[8];
    int rc = 0;
    switch (s->type) {
    case FLOE_AVRO_NULL: return 0;
    case FLOE_AVRO_BOOLEAN: rc = floe_buf_append_u8(o, v->u.b ? 1 : 0); break;
    case FLOE_AVRO_INT: rc = avro_put_long(o, v->u.i); break;
    case FLOE_AVRO_LONG: rc = avro_put_long(o, v->u.l); break;
    case FLOE_AVRO_FLOAT: {
        uint32_t x;
        memcpy(&x, &v->u.f, 4);
        rc = floe_buf_append_le32(o, x);
        break;
    }
    case FLOE_AVRO_DOUBLE: {
        uint64_t x;
        memcpy(&x, &v->u.d, 8);
        rc = floe_buf_append_le64(o, x);
        break;
    }
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING: rc = avro_put_bytes(o, v->u.bytes.p, v->u.bytes.n); break;
    case FLOE_AVRO_FIXED:
        if (v->u.bytes.n != s->fixed_size)
            return floe_err_set(err, FLOE_EINVAL, "avro: fixed %s holds %zu bytes, not %zu",
                                s->fullname, v->u.bytes.n, s->fixed_size);
        rc = v->u.bytes.n ? floe_buf_append(o, v->u.bytes.p, v->u.bytes.n) : 0;
        break;
    case FLOE_AVRO_ENUM: rc = avro_put_long(o, v->u.e); break;
    case FLOE_AVRO_ARRAY:
        if (v->u.arr.n) {
            if (avro_put_long(o, (int64_t)v->u.arr.n) != 0) return oom(err);
            for (size_t i = 0; i < v->u.arr.n; i++)
                if (enc(v->u.arr.items[i], o, err, depth + 1) != 0) {
                    floe_err_wrap(err, "item %zu", i);
                    return -1;
                }
        }
        rc = avro_put_long(o, 0);
        break;
    case FLOE_AVRO_MAP:
        if (v->u.map.n) {
            if (avro_put_long(o, (int64_t)v->u.map.n) != 0) return oom(err);
            for (size_t i = 0; i < v->u.map.n; i++) {
                if (avro_put_bytes(o, v->u.map.keys[i], strlen(v->u.map.keys[i])) != 0)
                    return oom(err);
                if (enc(v->u.map.vals[i], o, err, depth + 1) != 0) {
                    floe_err_wrap(err, "key %s", v->u.map.keys[i]);
                    return -1;
                }
            }
        }
        rc = avro_put_long(o, 0);
        break;
    case FLOE_AVRO_UNION:
        if (avro_put_long(o, v->u.un.branch) != 0) return oom(err);
        return enc(v->u.un.val, o, err, depth + 1);
    case FLOE_AVRO_RECORD: break; /* handled above */
    }
    (void)b;
    return rc ? oom(err) : 0;
}

int floe_avro_encode(const floe_avro_value_t *v, floe_buf_t *out, floe_err_t *err)
{
    size_t mark = out->len;
    if (enc(v, out, err, 0) != 0) {
        out->len = mark;
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                             */
/* ------------------------------------------------------------------ */

static int nomem(floe_err_t *err)
{
    return floe_err_set(err, FLOE_ENOMEM, "avro: out of memory (or past the arena cap) decoding");
}

static int dec(const floe_avro_schema_t *s, floe_slice_t *in, floe_arena_t *a, floe_avro_value_t *v,
               floe_err_t *err, int depth);

static int dec_bytes(floe_slice_t *in, floe_arena_t *a, size_t n, floe_avro_value_t *v,
                     floe_err_t *err)
{
    uint8_t *p = floe_arena_alloc(a, n + 1);
    if (!p) return nomem(err);
    if (n) memcpy(p, in->ptr, n);
    p[n] = 0;
    in->ptr += n;
    in->len -= n;
    v->u.bytes.p = p;
    v->u.bytes.n = n;
    return 0;
}

static int dec_array(const floe_avro_schema_t *s, floe_slice_t *in, floe_arena_t *a,
                     floe_avro_value_t *v, floe_err_t *err, int depth)
{
    bool is_map = s->type == FLOE_AVRO_MAP;
    for (;;) {
        size_t count;
        int64_t bytes;
        uint64_t so_far = is_map ? v->u.map.n : v->u.arr.n;
        if (read_block_count(in, s->items, so_far, &count, &bytes, err) != 0) return -1;
        if (count == 0) return 0;
        size_t total = (size_t)so_far + count;
        size_t cap = is_map ? v->u.map.cap : v->u.arr.cap;
        floe_avro_value_t *vals = floe_arena_alloc(a, count * sizeof *vals);
        if (!vals) return nomem(err);
        if (total > cap) {
            /* grow geometrically: many small blocks stay linear in memory */
            size_t ncap = cap * 2 > total ? cap * 2 : total;
            floe_avro_value_t **ptrs = floe_arena_alloc(a, ncap * sizeof *ptrs);
            char **keys = is_map ? floe_arena_alloc(a, ncap * sizeof *keys) : NULL;
            if (!ptrs || (is_map && !keys)) return nomem(err);
            if (is_map) {
                if (so_far) {
                    memcpy(ptrs, v->u.map.vals, so_far * sizeof *ptrs);
                    memcpy(keys, v->u.map.keys, so_far * sizeof *keys);
                }
                v->u.map.vals = ptrs;
                v->u.map.keys = keys;
                v->u.map.cap = ncap;
            } else {
                if (so_far) memcpy(ptrs, v->u.arr.items, so_far * sizeof *ptrs);
                v->u.arr.items = ptrs;
                v->u.arr.cap = ncap;
            }
        }
        floe_avro_value_t **ptrs = is_map ? v->u.map.vals : v->u.arr.items;
        char **keys = is_map ? v->u.map.keys : NULL;
        size_t start_len = in->len;
        for (size_t i = 0; i < count; i++) {
            if (is_map) {
                size_t kn;
                if (read_len(in, &kn, "map key", err) != 0) return -1;
                char *k = floe_arena_strndup(a, (const char *)in->ptr, kn);
                if (!k) return nomem(err);
                in->ptr += kn;
                in->len -= kn;
                keys[so_far + i] = k;
            }
            if (dec(s->items, in, a, &vals[i], err, depth + 1) != 0) return -1;
            ptrs[so_far + i] = &vals[i];
            if (is_map) v->u.map.n++;
            else
                v->u.arr.n++;
        }
        /* a block that states its size must be exactly that long, so that
         * skipping by size and decoding agree */
        if (bytes >= 0 && (uint64_t)(start_len - in->len) != (uint64_t)bytes)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "avro: %s block says %lld bytes, its items take %zu",
                                is_map ? "map" : "array", (long long)bytes, start_len - in->len);
    }
}

static int dec(const floe_avro_schema_t *s, floe_slice_t *in, floe_arena_t *a, floe_avro_value_t *v,
               floe_err_t *err, int depth)
{
    if (depth > AVRO_MAX_DEPTH)
        return floe_err_set(err, FLOE_ECORRUPT, "avro: data nested deeper than %d", AVRO_MAX_DEPTH);
    memset(v, 0, sizeof *v);
    v->s = s;
    v->arena = a;
    v->set = true;
    switch (s->type) {
    case FLOE_AVRO_NULL: return 0;
    case FLOE_AVRO_BOOLEAN:
        if (need(in, 1, "a boolean", err) != 0) return -1;
        if (in->ptr[0] > 1)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: boolean byte %u is not 0 or 1",
                                in->ptr[0]);
        v->u.b = in->ptr[0];
        in->ptr++;
        in->len--;
        return 0;
    case FLOE_AVRO_INT: return read_int(in, &v->u.i, err);
    case FLOE_AVRO_LONG: return avro_read_long(in, &v->u.l, err);
    case FLOE_AVRO_FLOAT: {
        if (need(in, 4, "a float", err) != 0) return -1;
        uint32_t x = floe_rd_le32(in->ptr);
        memcpy(&v->u.f, &x, 4);
        in->ptr += 4;
        in->len -= 4;
        return 0;
    }
    case FLOE_AVRO_DOUBLE: {
        if (need(in, 8, "a double", err) != 0) return -1;
        uint64_t x = floe_rd_le64(in->ptr);
        memcpy(&v->u.d, &x, 8);
        in->ptr += 8;
        in->len -= 8;
        return 0;
    }
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING: {
        size_t n;
        if (read_len(in, &n, s->type == FLOE_AVRO_STRING ? "string" : "bytes", err) != 0) return -1;
        return dec_bytes(in, a, n, v, err);
    }
    case FLOE_AVRO_FIXED:
        if (need(in, s->fixed_size, "a fixed", err) != 0) return -1;
        return dec_bytes(in, a, s->fixed_size, v, err);
    case FLOE_AVRO_ENUM: {
        int64_t i;
        if (avro_read_long(in, &i, err) != 0) return -1;
        if (i < 0 || (uint64_t)i >= s->n_symbols)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: enum %s index %lld out of range",
                                s->fullname, (long long)i);
        v->u.e = (int)i;
        return 0;
    }
    case FLOE_AVRO_RECORD:
        v->u.fields = floe_arena_alloc(a, (s->n_fields ? s->n_fields : 1) * sizeof *v);
        if (!v->u.fields) return nomem(err);
        for (size_t i = 0; i < s->n_fields; i++)
            if (dec(s->fields[i].type, in, a, &v->u.fields[i], err, depth + 1) != 0) {
                if (depth < 8) floe_err_wrap(err, "field %s", s->fields[i].name);
                return -1;
            }
        return 0;
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: return dec_array(s, in, a, v, err, depth);
    case FLOE_AVRO_UNION: {
        int64_t i;
        if (avro_read_long(in, &i, err) != 0) return -1;
        if (i < 0 || (uint64_t)i >= s->n_branches)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "avro: union index %lld out of range (%zu branches)", (long long)i,
                                s->n_branches);
        floe_avro_value_t *b = floe_arena_alloc(a, sizeof *b);
        if (!b) return nomem(err);
        v->u.un.branch = (int)i;
        v->u.un.val = b;
        return dec(s->branches[i], in, a, b, err, depth + 1);
    }
    }
    return floe_err_set(err, FLOE_EINVAL, "avro: bad schema type");
}

int floe_avro_decode(const floe_avro_schema_t *s, floe_slice_t *in, floe_arena_t *a,
                     floe_avro_value_t **out, floe_err_t *err)
{
    floe_avro_value_t *v = floe_arena_alloc(a, sizeof *v);
    if (!v) return nomem(err);
    floe_slice_t cur = *in;
    if (dec(s, &cur, a, v, err, 0) != 0) return -1;
    *in = cur;
    *out = v;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Skipping                                                             */
/* ------------------------------------------------------------------ */

static int skip(const floe_avro_schema_t *s, floe_slice_t *in, floe_err_t *err, int depth)
{
    if (depth > AVRO_MAX_DEPTH)
        return floe_err_set(err, FLOE_ECORRUPT, "avro: data nested deeper than %d", AVRO_MAX_DEPTH);
    int64_t x;
    size_t n;
    switch (s->type) {
    case FLOE_AVRO_NULL: return 0;
    case FLOE_AVRO_BOOLEAN: n = 1; break;
    case FLOE_AVRO_INT: {
        int32_t i;
        return read_int(in, &i, err);
    }
    case FLOE_AVRO_LONG:
    case FLOE_AVRO_ENUM: return avro_read_long(in, &x, err);
    case FLOE_AVRO_FLOAT: n = 4; break;
    case FLOE_AVRO_DOUBLE: n = 8; break;
    case FLOE_AVRO_FIXED: n = s->fixed_size; break;
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
        if (read_len(in, &n, "string", err) != 0) return -1;
        break;
    case FLOE_AVRO_RECORD:
        for (size_t i = 0; i < s->n_fields; i++)
            if (skip(s->fields[i].type, in, err, depth + 1) != 0) return -1;
        return 0;
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: {
        uint64_t so_far = 0;
        for (;;) {
            size_t count;
            int64_t bytes;
            if (read_block_count(in, s->items, so_far, &count, &bytes, err) != 0) return -1;
            if (count == 0) return 0;
            if (bytes >= 0) { /* the block says how long it is */
                in->ptr += bytes;
                in->len -= (size_t)bytes;
                so_far += count;
                continue;
            }
            for (size_t i = 0; i < count; i++) {
                if (s->type == FLOE_AVRO_MAP) {
                    size_t kn;
                    if (read_len(in, &kn, "map key", err) != 0) return -1;
                    in->ptr += kn;
                    in->len -= kn;
                }
                if (skip(s->items, in, err, depth + 1) != 0) return -1;
            }
            so_far += count;
        }
    }
    case FLOE_AVRO_UNION:
        if (avro_read_long(in, &x, err) != 0) return -1;
        if (x < 0 || (uint64_t)x >= s->n_branches)
            return floe_err_set(err, FLOE_ECORRUPT, "avro: union index %lld out of range",
                                (long long)x);
        return skip(s->branches[x], in, err, depth + 1);
    default: return floe_err_set(err, FLOE_EINVAL, "avro: bad schema type");
    }
    if (need(in, n, "a value", err) != 0) return -1;
    in->ptr += n;
    in->len -= n;
    return 0;
}

int floe_avro_skip(const floe_avro_schema_t *s, floe_slice_t *in, floe_err_t *err)
{
    floe_slice_t cur = *in;
    if (skip(s, &cur, err, 0) != 0) return -1;
    *in = cur;
    return 0;
}
