/* Avro values: creation, setters that choose union branches, getters that
 * see through unions, defaults from JSON, equality and a JSON rendering. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/avro_int.h"

/* ------------------------------------------------------------------ */
/* Creation                                                             */
/* ------------------------------------------------------------------ */

static int value_init(floe_avro_value_t *v, floe_arena_t *a, const floe_avro_schema_t *s, int depth)
{
    memset(v, 0, sizeof *v);
    v->s = s;
    v->arena = a;
    if (s->type == FLOE_AVRO_UNION) v->u.un.branch = -1;
    if (s->type == FLOE_AVRO_RECORD) {
        if (depth > AVRO_MAX_DEPTH) return -1;
        v->u.fields = floe_arena_alloc(a, (s->n_fields ? s->n_fields : 1) * sizeof *v);
        if (!v->u.fields) return -1;
        for (size_t i = 0; i < s->n_fields; i++)
            if (value_init(&v->u.fields[i], a, s->fields[i].type, depth + 1) != 0) return -1;
    }
    return 0;
}

floe_avro_value_t *floe_avro_value_new(floe_arena_t *a, const floe_avro_schema_t *s)
{
    floe_avro_value_t *v = floe_arena_alloc(a, sizeof *v);
    if (!v || value_init(v, a, s, 0) != 0) return NULL;
    return v;
}

const floe_avro_schema_t *floe_avro_value_schema(const floe_avro_value_t *v)
{
    return v ? v->s : NULL;
}

const floe_avro_value_t *floe_avro_value_unwrap(const floe_avro_value_t *v)
{
    if (!v) return NULL;
    if (v->s->type != FLOE_AVRO_UNION) return v;
    return v->set ? v->u.un.val : NULL;
}

floe_avro_type_t floe_avro_value_type(const floe_avro_value_t *v)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    if (!u) return FLOE_AVRO_NULL;
    if (!u->set && u->s->type != FLOE_AVRO_RECORD && u->s->type != FLOE_AVRO_ARRAY &&
        u->s->type != FLOE_AVRO_MAP)
        return FLOE_AVRO_NULL;
    return u->s->type;
}

bool floe_avro_value_is_null(const floe_avro_value_t *v)
{
    return floe_avro_value_type(v) == FLOE_AVRO_NULL;
}

int floe_avro_value_branch(const floe_avro_value_t *v)
{
    return v && v->s->type == FLOE_AVRO_UNION && v->set ? v->u.un.branch : -1;
}

static floe_avro_value_t *union_choose(floe_avro_value_t *v, int i)
{
    if (v->set && v->u.un.branch == i) return v->u.un.val;
    floe_avro_value_t *b = floe_arena_alloc(v->arena, sizeof *b);
    if (!b || value_init(b, v->arena, v->s->branches[i], 0) != 0) return NULL;
    v->u.un.branch = i;
    v->u.un.val = b;
    v->set = true;
    return b;
}

floe_avro_value_t *floe_avro_set_branch(floe_avro_value_t *v, int i, floe_err_t *err)
{
    if (!v) {
        floe_err_set(err, FLOE_EINVAL, "avro: no value to choose a branch of (a missing field?)");
        return NULL;
    }
    if (v->s->type != FLOE_AVRO_UNION || i < 0 || (size_t)i >= v->s->n_branches) {
        floe_err_set(err, FLOE_EINVAL, "avro: no union branch %d in %s", i,
                     floe_avro_type_name(v->s->type));
        return NULL;
    }
    floe_avro_value_t *b = union_choose(v, i);
    if (!b) floe_err_set(err, FLOE_ENOMEM, "avro: out of memory");
    return b;
}

/* ------------------------------------------------------------------ */
/* Setters                                                              */
/* ------------------------------------------------------------------ */

/* A wanted kind of schema for a setter, in preference order. */
typedef struct want {
    floe_avro_type_t t;
    size_t fixed_size; /* for FIXED: must equal; SIZE_MAX for any */
    int64_t lo, hi;    /* for INT from a long: range */
} want_t;

static bool fits(const floe_avro_schema_t *s, const want_t *w)
{
    if (s->type != w->t) return false;
    if (w->t == FLOE_AVRO_FIXED && w->fixed_size != SIZE_MAX && s->fixed_size != w->fixed_size)
        return false;
    return true;
}

/* The value to store into: v itself, or the branch of union v chosen by
 * the first fitting wanted kind.  NULL with err when nothing fits. */
static floe_avro_value_t *target(floe_avro_value_t *v, const want_t *w, size_t nw, const char *what,
                                 floe_err_t *err)
{
    if (!v) {
        floe_err_set(err, FLOE_EINVAL, "avro: no value to store %s in (a missing field?)", what);
        return NULL;
    }
    if (v->s->type != FLOE_AVRO_UNION) {
        for (size_t k = 0; k < nw; k++)
            if (fits(v->s, &w[k])) return v;
        floe_err_set(err, FLOE_EINVAL, "avro: cannot store %s in %s %s", what,
                     floe_avro_type_name(v->s->type), v->s->fullname ? v->s->fullname : "");
        return NULL;
    }
    /* keep the current branch when it fits */
    if (v->set)
        for (size_t k = 0; k < nw; k++)
            if (fits(v->s->branches[v->u.un.branch], &w[k])) return v->u.un.val;
    for (size_t k = 0; k < nw; k++)
        for (size_t i = 0; i < v->s->n_branches; i++)
            if (fits(v->s->branches[i], &w[k])) {
                floe_avro_value_t *b = union_choose(v, (int)i);
                if (!b) floe_err_set(err, FLOE_ENOMEM, "avro: out of memory");
                return b;
            }
    floe_err_set(err, FLOE_EINVAL, "avro: union has no branch for %s", what);
    return NULL;
}

#define W(t)              \
    {                     \
        t, SIZE_MAX, 0, 0 \
    }

int floe_avro_set_null(floe_avro_value_t *v, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_NULL)};
    floe_avro_value_t *t = target(v, w, 1, "null", err);
    if (!t) return -1;
    t->set = true;
    return 0;
}

int floe_avro_set_bool(floe_avro_value_t *v, bool b, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_BOOLEAN)};
    floe_avro_value_t *t = target(v, w, 1, "a boolean", err);
    if (!t) return -1;
    t->u.b = b;
    t->set = true;
    return 0;
}

/* Store an integer into t (int, long, float or double). */
static int store_int(floe_avro_value_t *t, int64_t x, floe_err_t *err)
{
    switch (t->s->type) {
    case FLOE_AVRO_INT:
        if (x < INT32_MIN || x > INT32_MAX)
            return floe_err_set(err, FLOE_ERANGE, "avro: %lld does not fit an int", (long long)x);
        t->u.i = (int32_t)x;
        break;
    case FLOE_AVRO_LONG: t->u.l = x; break;
    case FLOE_AVRO_FLOAT: t->u.f = (float)x; break;
    default: t->u.d = (double)x; break;
    }
    t->set = true;
    return 0;
}

int floe_avro_set_int(floe_avro_value_t *v, int32_t x, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_INT), W(FLOE_AVRO_LONG), W(FLOE_AVRO_FLOAT),
                               W(FLOE_AVRO_DOUBLE)};
    floe_avro_value_t *t = target(v, w, 4, "an int", err);
    return t ? store_int(t, x, err) : -1;
}

int floe_avro_set_long(floe_avro_value_t *v, int64_t x, floe_err_t *err)
{
    static const want_t wl[] = {W(FLOE_AVRO_LONG), W(FLOE_AVRO_INT), W(FLOE_AVRO_FLOAT),
                                W(FLOE_AVRO_DOUBLE)};
    static const want_t wn[] = {W(FLOE_AVRO_LONG), W(FLOE_AVRO_FLOAT), W(FLOE_AVRO_DOUBLE)};
    bool small = x >= INT32_MIN && x <= INT32_MAX;
    floe_avro_value_t *t =
        small ? target(v, wl, 4, "a long", err) : target(v, wn, 3, "a long", err);
    return t ? store_int(t, x, err) : -1;
}

int floe_avro_set_float(floe_avro_value_t *v, float x, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_FLOAT), W(FLOE_AVRO_DOUBLE)};
    floe_avro_value_t *t = target(v, w, 2, "a float", err);
    if (!t) return -1;
    if (t->s->type == FLOE_AVRO_FLOAT) t->u.f = x;
    else
        t->u.d = x;
    t->set = true;
    return 0;
}

int floe_avro_set_double(floe_avro_value_t *v, double x, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_DOUBLE), W(FLOE_AVRO_FLOAT)};
    floe_avro_value_t *t = target(v, w, 2, "a double", err);
    if (!t) return -1;
    if (t->s->type == FLOE_AVRO_FLOAT) t->u.f = (float)x;
    else
        t->u.d = x;
    t->set = true;
    return 0;
}

static int store_bytes(floe_avro_value_t *t, const void *p, size_t n, floe_err_t *err)
{
    uint8_t *d = floe_arena_alloc(t->arena, n + 1);
    if (!d) return floe_err_set(err, FLOE_ENOMEM, "avro: out of memory");
    if (n) memcpy(d, p, n);
    d[n] = 0;
    t->u.bytes.p = d;
    t->u.bytes.n = n;
    t->set = true;
    return 0;
}

int floe_avro_set_stringn(floe_avro_value_t *v, const char *s, size_t n, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_STRING), W(FLOE_AVRO_BYTES)};
    floe_avro_value_t *t = target(v, w, 2, "a string", err);
    return t ? store_bytes(t, s, n, err) : -1;
}

int floe_avro_set_string(floe_avro_value_t *v, const char *s, floe_err_t *err)
{
    return floe_avro_set_stringn(v, s, strlen(s), err);
}

int floe_avro_set_bytes(floe_avro_value_t *v, const void *p, size_t n, floe_err_t *err)
{
    const want_t w[] = {W(FLOE_AVRO_BYTES), {FLOE_AVRO_FIXED, n, 0, 0}, W(FLOE_AVRO_STRING)};
    floe_avro_value_t *t = target(v, w, 3, "bytes", err);
    if (!t) return -1;
    if (t->s->type == FLOE_AVRO_FIXED && t->s->fixed_size != n)
        return floe_err_set(err, FLOE_EINVAL, "avro: %zu bytes for fixed %s of size %zu", n,
                            t->s->fullname, t->s->fixed_size);
    return store_bytes(t, p, n, err);
}

int floe_avro_set_enum_index(floe_avro_value_t *v, int index, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_ENUM)};
    floe_avro_value_t *t = target(v, w, 1, "an enum symbol", err);
    if (!t) return -1;
    if (index < 0 || (size_t)index >= t->s->n_symbols)
        return floe_err_set(err, FLOE_EINVAL, "avro: enum %s has no symbol %d", t->s->fullname,
                            index);
    t->u.e = index;
    t->set = true;
    return 0;
}

int floe_avro_set_enum(floe_avro_value_t *v, const char *symbol, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_ENUM)};
    floe_avro_value_t *t = target(v, w, 1, "an enum symbol", err);
    if (!t) return -1;
    int i = floe_avro_schema_symbol_index(t->s, symbol);
    if (i < 0)
        return floe_err_set(err, FLOE_EINVAL, "avro: enum %s has no symbol \"%s\"", t->s->fullname,
                            symbol);
    t->u.e = i;
    t->set = true;
    return 0;
}

int floe_avro_set_decimal_i64(floe_avro_value_t *v, int64_t unscaled, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_BYTES), W(FLOE_AVRO_FIXED)};
    floe_avro_value_t *t = target(v, w, 2, "a decimal", err);
    if (!t) return -1;
    uint8_t be[8];
    floe_wr_be64(be, (uint64_t)unscaled);
    if (t->s->type == FLOE_AVRO_BYTES) {
        /* minimal two's complement: drop leading bytes that only repeat the
         * sign of the next one */
        size_t k = 0;
        while (k < 7 &&
               ((be[k] == 0x00 && !(be[k + 1] & 0x80)) || (be[k] == 0xff && (be[k + 1] & 0x80))))
            k++;
        return store_bytes(t, be + k, 8 - k, err);
    }
    size_t n = t->s->fixed_size;
    if (n == 0 || (n < 8 && (unscaled < -((int64_t)1 << (8 * n - 1)) ||
                             unscaled > ((int64_t)1 << (8 * n - 1)) - 1)))
        return floe_err_set(err, FLOE_ERANGE, "avro: decimal %lld does not fit fixed(%zu)",
                            (long long)unscaled, n);
    uint8_t *d = floe_arena_alloc(t->arena, n + 1);
    if (!d) return floe_err_set(err, FLOE_ENOMEM, "avro: out of memory");
    uint8_t sign = unscaled < 0 ? 0xff : 0x00;
    for (size_t i = 0; i < n; i++) {
        size_t from_end = n - 1 - i; /* 0 = least significant byte */
        d[i] = from_end < 8 ? be[7 - from_end] : sign;
    }
    d[n] = 0;
    t->u.bytes.p = d;
    t->u.bytes.n = n;
    t->set = true;
    return 0;
}

floe_avro_value_t *floe_avro_field_at(floe_avro_value_t *v, size_t i)
{
    static const want_t w[] = {W(FLOE_AVRO_RECORD)};
    floe_avro_value_t *t = target(v, w, 1, "a record", NULL);
    if (!t || i >= t->s->n_fields) return NULL;
    t->set = true;
    return &t->u.fields[i];
}

floe_avro_value_t *floe_avro_field(floe_avro_value_t *v, const char *name)
{
    if (!v) return NULL;
    const floe_avro_schema_t *s = v->s;
    if (s->type == FLOE_AVRO_UNION) {
        /* the record branch that has this field */
        if (v->set && s->branches[v->u.un.branch]->type == FLOE_AVRO_RECORD &&
            floe_avro_schema_field_index(s->branches[v->u.un.branch], name) >= 0)
            s = s->branches[v->u.un.branch];
        else
            for (size_t i = 0; i < s->n_branches; i++)
                if (s->branches[i]->type == FLOE_AVRO_RECORD &&
                    floe_avro_schema_field_index(s->branches[i], name) >= 0) {
                    if (!union_choose(v, (int)i)) return NULL;
                    s = s->branches[i];
                    break;
                }
    }
    int i = floe_avro_schema_field_index(s, name);
    if (i < 0) return NULL;
    return floe_avro_field_at(v, (size_t)i);
}

static floe_avro_value_t *rec_field(floe_avro_value_t *v, const char *name, floe_err_t *err)
{
    floe_avro_value_t *f = floe_avro_field(v, name);
    if (!f && !v)
        floe_err_set(err, FLOE_EINVAL, "avro: no record to set field \"%s\" in (a missing field?)",
                     name);
    else if (!f)
        floe_err_set(err, FLOE_EINVAL, "avro: record %s has no field \"%s\"",
                     v->s->fullname ? v->s->fullname : floe_avro_type_name(v->s->type), name);
    return f;
}

#define REC_SET(fn, setter, T)                                           \
    int fn(floe_avro_value_t *v, const char *name, T x, floe_err_t *err) \
    {                                                                    \
        floe_avro_value_t *f = rec_field(v, name, err);                  \
        if (!f) return -1;                                               \
        if (setter(f, x, err) == 0) return 0;                            \
        floe_err_wrap(err, "field %s", name);                            \
        return -1;                                                       \
    }
REC_SET(floe_avro_rec_set_bool, floe_avro_set_bool, bool)
REC_SET(floe_avro_rec_set_int, floe_avro_set_int, int32_t)
REC_SET(floe_avro_rec_set_long, floe_avro_set_long, int64_t)
REC_SET(floe_avro_rec_set_float, floe_avro_set_float, float)
REC_SET(floe_avro_rec_set_double, floe_avro_set_double, double)
REC_SET(floe_avro_rec_set_string, floe_avro_set_string, const char *)
REC_SET(floe_avro_rec_set_enum, floe_avro_set_enum, const char *)

int floe_avro_rec_set_null(floe_avro_value_t *v, const char *name, floe_err_t *err)
{
    floe_avro_value_t *f = rec_field(v, name, err);
    if (!f) return -1;
    if (floe_avro_set_null(f, err) == 0) return 0;
    floe_err_wrap(err, "field %s", name);
    return -1;
}

int floe_avro_rec_set_bytes(floe_avro_value_t *v, const char *name, const void *p, size_t n,
                            floe_err_t *err)
{
    floe_avro_value_t *f = rec_field(v, name, err);
    if (!f) return -1;
    if (floe_avro_set_bytes(f, p, n, err) == 0) return 0;
    floe_err_wrap(err, "field %s", name);
    return -1;
}

int avro_array_grow(floe_avro_value_t *t)
{
    if (t->u.arr.n < t->u.arr.cap) return 0;
    size_t cap = t->u.arr.cap ? t->u.arr.cap * 2 : 4;
    floe_avro_value_t **items = floe_arena_alloc(t->arena, cap * sizeof *items);
    if (!items) return -1;
    if (t->u.arr.n) memcpy(items, t->u.arr.items, t->u.arr.n * sizeof *items);
    t->u.arr.items = items;
    t->u.arr.cap = cap;
    return 0;
}

int avro_map_grow(floe_avro_value_t *t)
{
    if (t->u.map.n < t->u.map.cap) return 0;
    size_t cap = t->u.map.cap ? t->u.map.cap * 2 : 4;
    char **keys = floe_arena_alloc(t->arena, cap * sizeof *keys);
    floe_avro_value_t **vals = floe_arena_alloc(t->arena, cap * sizeof *vals);
    if (!keys || !vals) return -1;
    if (t->u.map.n) {
        memcpy(keys, t->u.map.keys, t->u.map.n * sizeof *keys);
        memcpy(vals, t->u.map.vals, t->u.map.n * sizeof *vals);
    }
    t->u.map.keys = keys;
    t->u.map.vals = vals;
    t->u.map.cap = cap;
    return 0;
}

floe_avro_value_t *floe_avro_array_append(floe_avro_value_t *v, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_ARRAY)};
    floe_avro_value_t *t = target(v, w, 1, "an array", err);
    if (!t) return NULL;
    floe_avro_value_t *item = floe_arena_alloc(t->arena, sizeof *item);
    if (!item || avro_array_grow(t) != 0 || value_init(item, t->arena, t->s->items, 0) != 0) {
        floe_err_set(err, FLOE_ENOMEM, "avro: out of memory");
        return NULL;
    }
    t->u.arr.items[t->u.arr.n++] = item;
    t->set = true;
    return item;
}

floe_avro_value_t *floe_avro_map_put(floe_avro_value_t *v, const char *key, floe_err_t *err)
{
    static const want_t w[] = {W(FLOE_AVRO_MAP)};
    floe_avro_value_t *t = target(v, w, 1, "a map", err);
    if (!t) return NULL;
    t->set = true;
    for (size_t i = 0; i < t->u.map.n; i++)
        if (strcmp(t->u.map.keys[i], key) == 0) {
            if (value_init(t->u.map.vals[i], t->arena, t->s->items, 0) != 0) break;
            return t->u.map.vals[i];
        }
    floe_avro_value_t *val = floe_arena_alloc(t->arena, sizeof *val);
    char *k = floe_arena_strndup(t->arena, key, strlen(key));
    if (!val || !k || avro_map_grow(t) != 0 || value_init(val, t->arena, t->s->items, 0) != 0) {
        floe_err_set(err, FLOE_ENOMEM, "avro: out of memory");
        return NULL;
    }
    t->u.map.keys[t->u.map.n] = k;
    t->u.map.vals[t->u.map.n++] = val;
    return val;
}

/* ------------------------------------------------------------------ */
/* Getters                                                              */
/* ------------------------------------------------------------------ */

/* The leaf under v, or NULL with err when there is none (null/unset). */
static const floe_avro_value_t *leaf(const floe_avro_value_t *v, const char *want, floe_err_t *err)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    if (!u || (!u->set && u->s->type != FLOE_AVRO_RECORD)) {
        floe_err_set(err, FLOE_EINVAL, "avro: value is null or unset, not %s", want);
        return NULL;
    }
    return u;
}

static int wrong(const floe_avro_value_t *u, const char *want, floe_err_t *err)
{
    return floe_err_set(err, FLOE_EINVAL, "avro: value is %s, not %s",
                        floe_avro_type_name(u->s->type), want);
}

int floe_avro_get_bool(const floe_avro_value_t *v, bool *out, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "boolean", err);
    if (!u) return -1;
    if (u->s->type != FLOE_AVRO_BOOLEAN) return wrong(u, "boolean", err);
    *out = u->u.b;
    return 0;
}

int floe_avro_get_long(const floe_avro_value_t *v, int64_t *out, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "long", err);
    if (!u) return -1;
    if (u->s->type == FLOE_AVRO_INT) *out = u->u.i;
    else if (u->s->type == FLOE_AVRO_LONG)
        *out = u->u.l;
    else
        return wrong(u, "long", err);
    return 0;
}

int floe_avro_get_int(const floe_avro_value_t *v, int32_t *out, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "int", err);
    if (!u) return -1;
    if (u->s->type == FLOE_AVRO_INT) *out = u->u.i;
    else if (u->s->type == FLOE_AVRO_LONG && u->u.l >= INT32_MIN && u->u.l <= INT32_MAX)
        *out = (int32_t)u->u.l;
    else
        return wrong(u, "int", err);
    return 0;
}

int floe_avro_get_double(const floe_avro_value_t *v, double *out, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "double", err);
    if (!u) return -1;
    switch (u->s->type) {
    case FLOE_AVRO_INT: *out = u->u.i; break;
    case FLOE_AVRO_LONG: *out = (double)u->u.l; break;
    case FLOE_AVRO_FLOAT: *out = u->u.f; break;
    case FLOE_AVRO_DOUBLE: *out = u->u.d; break;
    default: return wrong(u, "double", err);
    }
    return 0;
}

int floe_avro_get_float(const floe_avro_value_t *v, float *out, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "float", err);
    if (!u) return -1;
    switch (u->s->type) {
    case FLOE_AVRO_INT: *out = (float)u->u.i; break;
    case FLOE_AVRO_LONG: *out = (float)u->u.l; break;
    case FLOE_AVRO_FLOAT: *out = u->u.f; break;
    default: return wrong(u, "float", err);
    }
    return 0;
}

int floe_avro_get_bytes(const floe_avro_value_t *v, floe_slice_t *out, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "bytes", err);
    if (!u) return -1;
    if (u->s->type != FLOE_AVRO_BYTES && u->s->type != FLOE_AVRO_STRING &&
        u->s->type != FLOE_AVRO_FIXED)
        return wrong(u, "bytes", err);
    *out = floe_slice(u->u.bytes.p, u->u.bytes.n);
    return 0;
}

int floe_avro_get_string(const floe_avro_value_t *v, const char **out, size_t *len, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "string", err);
    if (!u) return -1;
    if (u->s->type != FLOE_AVRO_STRING && u->s->type != FLOE_AVRO_BYTES)
        return wrong(u, "string", err);
    *out = u->u.bytes.p ? (const char *)u->u.bytes.p : "";
    if (len) *len = u->u.bytes.n;
    return 0;
}

int floe_avro_get_enum(const floe_avro_value_t *v, int *index, const char **symbol, floe_err_t *err)
{
    const floe_avro_value_t *u = leaf(v, "enum", err);
    if (!u) return -1;
    if (u->s->type != FLOE_AVRO_ENUM) return wrong(u, "enum", err);
    if (index) *index = u->u.e;
    if (symbol) *symbol = u->s->symbols[u->u.e];
    return 0;
}

int floe_avro_get_decimal_i64(const floe_avro_value_t *v, int64_t *out, floe_err_t *err)
{
    floe_slice_t b;
    if (floe_avro_get_bytes(v, &b, err) != 0) return -1;
    if (b.len == 0) {
        *out = 0;
        return 0;
    }
    uint8_t sign = (b.ptr[0] & 0x80) ? 0xff : 0x00;
    size_t k = b.len > 8 ? b.len - 8 : 0;
    for (size_t i = 0; i < k; i++)
        if (b.ptr[i] != sign)
            return floe_err_set(err, FLOE_ERANGE, "avro: decimal of %zu bytes overflows 64 bits",
                                b.len);
    if (k && ((b.ptr[k] ^ sign) & 0x80))
        return floe_err_set(err, FLOE_ERANGE, "avro: decimal of %zu bytes overflows 64 bits",
                            b.len);
    uint64_t x = sign ? UINT64_MAX : 0;
    for (size_t i = k; i < b.len; i++) x = (x << 8) | b.ptr[i];
    *out = (int64_t)x;
    return 0;
}

const floe_avro_value_t *floe_avro_get_at(const floe_avro_value_t *v, size_t i)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    if (!u || u->s->type != FLOE_AVRO_RECORD || i >= u->s->n_fields) return NULL;
    const floe_avro_value_t *f = &u->u.fields[i];
    floe_avro_type_t t = f->s->type;
    if (!f->set && t != FLOE_AVRO_RECORD && t != FLOE_AVRO_ARRAY && t != FLOE_AVRO_MAP) return NULL;
    return f;
}

const floe_avro_value_t *floe_avro_get(const floe_avro_value_t *v, const char *name)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    if (!u || u->s->type != FLOE_AVRO_RECORD) return NULL;
    int i = floe_avro_schema_field_index(u->s, name);
    return i < 0 ? NULL : floe_avro_get_at(u, (size_t)i);
}

size_t floe_avro_array_len(const floe_avro_value_t *v)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    return u && u->s->type == FLOE_AVRO_ARRAY ? u->u.arr.n : 0;
}

const floe_avro_value_t *floe_avro_array_at(const floe_avro_value_t *v, size_t i)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    return u && u->s->type == FLOE_AVRO_ARRAY && i < u->u.arr.n ? u->u.arr.items[i] : NULL;
}

size_t floe_avro_map_len(const floe_avro_value_t *v)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    return u && u->s->type == FLOE_AVRO_MAP ? u->u.map.n : 0;
}

const char *floe_avro_map_key_at(const floe_avro_value_t *v, size_t i)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    return u && u->s->type == FLOE_AVRO_MAP && i < u->u.map.n ? u->u.map.keys[i] : NULL;
}

const floe_avro_value_t *floe_avro_map_value_at(const floe_avro_value_t *v, size_t i)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    return u && u->s->type == FLOE_AVRO_MAP && i < u->u.map.n ? u->u.map.vals[i] : NULL;
}

const floe_avro_value_t *floe_avro_map_get(const floe_avro_value_t *v, const char *key)
{
    const floe_avro_value_t *u = floe_avro_value_unwrap(v);
    if (!u || u->s->type != FLOE_AVRO_MAP) return NULL;
    /* the last entry wins, as when a decoded map repeats a key */
    for (size_t i = u->u.map.n; i-- > 0;)
        if (strcmp(u->u.map.keys[i], key) == 0) return u->u.map.vals[i];
    return NULL;
}
