/* Avro values and JSON: schema defaults as values, value equality, and a
 * JSON rendering for tests and debugging. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/avro_int.h"
#include "util/json.h"

/* Decode a JSON string's UTF-8 into bytes, each code point 0..255 one byte
 * (the spec's encoding of bytes and fixed defaults).  -1 when a code point
 * is above 255 or the UTF-8 is bad. */
static int latin1_bytes(floe_arena_t *a, const char *s, size_t n, uint8_t **out, size_t *out_n)
{
    uint8_t *d = floe_arena_alloc(a, n + 1);
    if (!d) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        uint8_t c = (uint8_t)s[i];
        if (c < 0x80) {
            d[k++] = c;
            i++;
        } else if ((c & 0xe0) == 0xc0 && i + 1 < n) {
            unsigned cp = ((unsigned)(c & 0x1f) << 6) | ((uint8_t)s[i + 1] & 0x3f);
            if (cp > 0xff) return -1;
            d[k++] = (uint8_t)cp;
            i += 2;
        } else {
            return -1;
        }
    }
    d[k] = 0;
    *out = d;
    *out_n = k;
    return 0;
}

static int number(const json_t *j, double *out)
{
    if (json_is_number(j)) {
        *out = json_number_value(j);
        return 0;
    }
    const char *s = json_string_value(j);
    if (!s) return -1;
    if (strcmp(s, "NaN") == 0) *out = NAN;
    else if (strcmp(s, "Infinity") == 0)
        *out = INFINITY;
    else if (strcmp(s, "-Infinity") == 0)
        *out = -INFINITY;
    else
        return -1;
    return 0;
}

int avro_value_from_json(floe_arena_t *a, const floe_avro_schema_t *s, const json_t *j,
                         floe_avro_value_t **out, int depth)
{
    if (depth > AVRO_MAX_DEPTH) return -1;
    floe_avro_value_t *v = floe_avro_value_new(a, s);
    if (!v) return -1;
    v->set = true;
    switch (s->type) {
    case FLOE_AVRO_NULL:
        if (!json_is_null(j)) return -1;
        break;
    case FLOE_AVRO_BOOLEAN:
        if (!json_is_boolean(j)) return -1;
        v->u.b = json_is_true(j);
        break;
    case FLOE_AVRO_INT:
    case FLOE_AVRO_LONG: {
        long long x;
        if (json_is_integer(j)) x = json_integer_value(j);
        else if (json_is_real(j) && json_real_value(j) == floor(json_real_value(j)) &&
                 fabs(json_real_value(j)) < 9.2e18)
            x = (long long)json_real_value(j);
        else
            return -1;
        if (s->type == FLOE_AVRO_INT) {
            if (x < INT32_MIN || x > INT32_MAX) return -1;
            v->u.i = (int32_t)x;
        } else {
            v->u.l = x;
        }
        break;
    }
    case FLOE_AVRO_FLOAT:
    case FLOE_AVRO_DOUBLE: {
        double d;
        if (number(j, &d) != 0) return -1;
        if (s->type == FLOE_AVRO_FLOAT) v->u.f = (float)d;
        else
            v->u.d = d;
        break;
    }
    case FLOE_AVRO_STRING: {
        if (!json_is_string(j)) return -1;
        size_t n = json_string_length(j);
        char *p = floe_arena_strndup(a, json_string_value(j), n);
        if (!p) return -1;
        v->u.bytes.p = (uint8_t *)p;
        v->u.bytes.n = n;
        break;
    }
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED:
        if (!json_is_string(j) || latin1_bytes(a, json_string_value(j), json_string_length(j),
                                               &v->u.bytes.p, &v->u.bytes.n) != 0)
            return -1;
        if (s->type == FLOE_AVRO_FIXED && v->u.bytes.n != s->fixed_size) return -1;
        break;
    case FLOE_AVRO_ENUM: {
        if (!json_is_string(j)) return -1;
        int i = floe_avro_schema_symbol_index(s, json_string_value(j));
        if (i < 0) return -1;
        v->u.e = i;
        break;
    }
    case FLOE_AVRO_ARRAY: {
        if (!json_is_array(j)) return -1;
        for (size_t i = 0; i < json_array_size(j); i++) {
            floe_avro_value_t *item;
            if (avro_array_grow(v) != 0 ||
                avro_value_from_json(a, s->items, json_array_get(j, i), &item, depth + 1) != 0)
                return -1;
            v->u.arr.items[v->u.arr.n++] = item;
        }
        break;
    }
    case FLOE_AVRO_MAP: {
        if (!json_is_object(j)) return -1;
        const char *k;
        json_t *jv;
        json_object_foreach((json_t *)j, k, jv)
        {
            floe_avro_value_t *val;
            char *key = floe_arena_strndup(a, k, strlen(k));
            if (!key || avro_map_grow(v) != 0 ||
                avro_value_from_json(a, s->items, jv, &val, depth + 1) != 0)
                return -1;
            v->u.map.keys[v->u.map.n] = key;
            v->u.map.vals[v->u.map.n++] = val;
        }
        break;
    }
    case FLOE_AVRO_RECORD:
        if (!json_is_object(j)) return -1;
        for (size_t i = 0; i < s->n_fields; i++) {
            json_t *jf = json_object_get(j, s->fields[i].name);
            floe_avro_value_t *fv;
            if (jf) {
                if (avro_value_from_json(a, s->fields[i].type, jf, &fv, depth + 1) != 0) return -1;
            } else {
                const floe_avro_value_t *d = avro_field_default(s, i);
                if (!d) return -1;
                fv = (floe_avro_value_t *)d;
            }
            v->u.fields[i] = *fv;
        }
        break;
    case FLOE_AVRO_UNION:
        /* the spec: the first branch; other branches accepted as writers
         * in the wild put defaults of any branch */
        for (size_t i = 0; i < s->n_branches; i++) {
            floe_avro_value_t *bv;
            if (avro_value_from_json(a, s->branches[i], j, &bv, depth + 1) == 0) {
                v->u.un.branch = (int)i;
                v->u.un.val = bv;
                *out = v;
                return 0;
            }
        }
        return -1;
    }
    *out = v;
    return 0;
}

const floe_avro_value_t *avro_field_default(const floe_avro_schema_t *cs, size_t i)
{
    /* Defaults are built once, while the schema is being parsed (the first
     * call for every field happens there), so later calls only read. */
    floe_avro_schema_t *s = (floe_avro_schema_t *)cs;
    avro_field_t *f = &s->fields[i];
    if (f->def_state == 2) return f->def_value;
    if (f->def_state == 1 || !f->def) return NULL; /* cyclic or none */
    f->def_state = 1;
    floe_avro_value_t *v = NULL;
    if (avro_value_from_json(&s->root->arena, f->type, f->def, &v, 0) != 0) {
        v = NULL;
        f->def_bad = true;
    }
    f->def_value = v;
    f->def_state = 2;
    return v;
}

/* ------------------------------------------------------------------ */
/* Equality                                                             */
/* ------------------------------------------------------------------ */

static bool same_schema(const floe_avro_schema_t *a, const floe_avro_schema_t *b)
{
    if (a->type != b->type) return false;
    if (a->fullname || b->fullname)
        return a->fullname && b->fullname && strcmp(a->fullname, b->fullname) == 0;
    return true;
}

static bool eq(const floe_avro_value_t *a, const floe_avro_value_t *b, int depth)
{
    if (depth > AVRO_MAX_DEPTH) return false;
    bool na = floe_avro_value_is_null(a), nb = floe_avro_value_is_null(b);
    if (na || nb) return na && nb;
    a = floe_avro_value_unwrap(a);
    b = floe_avro_value_unwrap(b);
    if (!same_schema(a->s, b->s)) return false;
    switch (a->s->type) {
    case FLOE_AVRO_NULL: return true;
    case FLOE_AVRO_BOOLEAN: return a->u.b == b->u.b;
    case FLOE_AVRO_INT: return a->u.i == b->u.i;
    case FLOE_AVRO_LONG: return a->u.l == b->u.l;
    case FLOE_AVRO_FLOAT:
        return (isnan(a->u.f) && isnan(b->u.f)) || memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case FLOE_AVRO_DOUBLE:
        return (isnan(a->u.d) && isnan(b->u.d)) || memcmp(&a->u.d, &b->u.d, sizeof a->u.d) == 0;
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
    case FLOE_AVRO_FIXED:
        return a->u.bytes.n == b->u.bytes.n &&
               (a->u.bytes.n == 0 || memcmp(a->u.bytes.p, b->u.bytes.p, a->u.bytes.n) == 0);
    case FLOE_AVRO_ENUM: return strcmp(a->s->symbols[a->u.e], b->s->symbols[b->u.e]) == 0;
    case FLOE_AVRO_RECORD:
        if (a->s->n_fields != b->s->n_fields) return false;
        for (size_t i = 0; i < a->s->n_fields; i++)
            if (strcmp(a->s->fields[i].name, b->s->fields[i].name) != 0 ||
                !eq(&a->u.fields[i], &b->u.fields[i], depth + 1))
                return false;
        return true;
    case FLOE_AVRO_ARRAY:
        if (a->u.arr.n != b->u.arr.n) return false;
        for (size_t i = 0; i < a->u.arr.n; i++)
            if (!eq(a->u.arr.items[i], b->u.arr.items[i], depth + 1)) return false;
        return true;
    case FLOE_AVRO_MAP: {
        if (a->u.map.n != b->u.map.n) return false;
        /* the same entries in the same order (decoded maps may repeat a key) */
        bool inorder = true;
        for (size_t i = 0; inorder && i < a->u.map.n; i++)
            inorder = strcmp(a->u.map.keys[i], b->u.map.keys[i]) == 0 &&
                      eq(a->u.map.vals[i], b->u.map.vals[i], depth + 1);
        if (inorder) return true;
        for (size_t i = 0; i < a->u.map.n; i++) {
            const floe_avro_value_t *o = floe_avro_map_get(b, a->u.map.keys[i]);
            if (!o || !eq(floe_avro_map_get(a, a->u.map.keys[i]), o, depth + 1)) return false;
        }
        return true;
    }
    case FLOE_AVRO_UNION: return false; /* unwrapped above */
    }
    return false;
}

bool floe_avro_value_equal(const floe_avro_value_t *a, const floe_avro_value_t *b)
{
    return eq(a, b, 0);
}

/* ------------------------------------------------------------------ */
/* JSON rendering                                                       */
/* ------------------------------------------------------------------ */

static int put_double(floe_buf_t *o, double d)
{
    if (isnan(d)) return floe_buf_append_str(o, "\"NaN\"");
    if (isinf(d)) return floe_buf_append_str(o, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return floe_buf_printf(o, "%.17g", d);
}

static int render(const floe_avro_value_t *v, floe_buf_t *o, int depth)
{
    if (depth > AVRO_MAX_DEPTH) return -1;
    if (floe_avro_value_is_null(v)) return floe_buf_append_str(o, "null");
    v = floe_avro_value_unwrap(v);
    int rc = 0;
    switch (v->s->type) {
    case FLOE_AVRO_NULL: return floe_buf_append_str(o, "null");
    case FLOE_AVRO_BOOLEAN: return floe_buf_append_str(o, v->u.b ? "true" : "false");
    case FLOE_AVRO_INT: return floe_buf_printf(o, "%d", (int)v->u.i);
    case FLOE_AVRO_LONG: return floe_buf_printf(o, "%lld", (long long)v->u.l);
    case FLOE_AVRO_FLOAT: return put_double(o, (double)v->u.f);
    case FLOE_AVRO_DOUBLE: return put_double(o, v->u.d);
    case FLOE_AVRO_STRING: return floe_json_str(o, v->u.bytes.p, v->u.bytes.n);
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED:
        rc = floe_buf_append_str(o, "{\"$bytes\":\"");
        for (size_t i = 0; i < v->u.bytes.n && rc == 0; i++)
            rc = floe_buf_printf(o, "%02x", v->u.bytes.p[i]);
        return rc ? rc : floe_buf_append_str(o, "\"}");
    case FLOE_AVRO_ENUM: return floe_json_cstr(o, v->s->symbols[v->u.e]);
    case FLOE_AVRO_RECORD:
        rc = floe_buf_append_u8(o, '{');
        for (size_t i = 0; i < v->s->n_fields && rc == 0; i++) {
            if (i) rc = floe_buf_append_u8(o, ',');
            const char *name = v->s->fields[i].name;
            if (rc == 0) rc = floe_json_cstr(o, name);
            if (rc == 0) rc = floe_buf_append_u8(o, ':');
            if (rc == 0) rc = render(&v->u.fields[i], o, depth + 1);
        }
        return rc ? rc : floe_buf_append_u8(o, '}');
    case FLOE_AVRO_ARRAY:
        rc = floe_buf_append_u8(o, '[');
        for (size_t i = 0; i < v->u.arr.n && rc == 0; i++) {
            if (i) rc = floe_buf_append_u8(o, ',');
            if (rc == 0) rc = render(v->u.arr.items[i], o, depth + 1);
        }
        return rc ? rc : floe_buf_append_u8(o, ']');
    case FLOE_AVRO_MAP:
        rc = floe_buf_append_u8(o, '{');
        for (size_t i = 0; i < v->u.map.n && rc == 0; i++) {
            if (i) rc = floe_buf_append_u8(o, ',');
            const char *k = v->u.map.keys[i];
            if (rc == 0) rc = floe_json_cstr(o, k);
            if (rc == 0) rc = floe_buf_append_u8(o, ':');
            if (rc == 0) rc = render(v->u.map.vals[i], o, depth + 1);
        }
        return rc ? rc : floe_buf_append_u8(o, '}');
    case FLOE_AVRO_UNION: return -1;
    }
    return -1;
}

int floe_avro_value_to_json(const floe_avro_value_t *v, floe_buf_t *out, floe_err_t *err)
{
    if (render(v, out, 0) != 0)
        return floe_err_set(err, FLOE_ENOMEM, "avro: out of memory rendering JSON");
    return 0;
}
