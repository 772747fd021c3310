/* Iceberg types, schemas and single values (see types.h). */
#include "iceberg/types.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ---- */

floe_ice_type_t *floe_ice_type_prim(floe_ice_kind_t kind)
{
    floe_ice_type_t *t = calloc(1, sizeof *t);
    if (t) t->kind = kind;
    return t;
}

floe_ice_type_t *floe_ice_type_decimal(int32_t precision, int32_t scale)
{
    floe_ice_type_t *t = floe_ice_type_prim(FLOE_ICE_DECIMAL);
    if (t) {
        t->precision = precision;
        t->scale = scale;
    }
    return t;
}

floe_ice_type_t *floe_ice_type_fixed(int32_t length)
{
    floe_ice_type_t *t = floe_ice_type_prim(FLOE_ICE_FIXED);
    if (t) t->length = length;
    return t;
}

floe_ice_type_t *floe_ice_type_struct(void)
{
    return floe_ice_type_prim(FLOE_ICE_STRUCT);
}

static int set_field(floe_ice_field_t *f, int32_t id, const char *name, bool required,
                     floe_ice_type_t *type, const char *doc)
{
    memset(f, 0, sizeof *f);
    f->id = id;
    f->required = required;
    f->type = type;
    f->name = strdup(name ? name : "");
    f->doc = doc ? strdup(doc) : NULL;
    if (!f->name || (doc && !f->doc)) {
        free(f->name);
        free(f->doc);
        f->name = f->doc = NULL;
        return -1;
    }
    return 0;
}

floe_ice_type_t *floe_ice_type_list(int32_t element_id, bool element_required,
                                    floe_ice_type_t *element)
{
    floe_ice_type_t *t = floe_ice_type_prim(FLOE_ICE_LIST);
    if (t) t->fields = calloc(1, sizeof *t->fields);
    if (!t || !t->fields || !element ||
        set_field(&t->fields[0], element_id, "element", element_required, element, NULL) < 0) {
        if (t) free(t->fields);
        free(t);
        floe_ice_type_free(element);
        return NULL;
    }
    t->nfields = 1;
    return t;
}

floe_ice_type_t *floe_ice_type_map(int32_t key_id, floe_ice_type_t *key, int32_t value_id,
                                   bool value_required, floe_ice_type_t *value)
{
    floe_ice_type_t *t = floe_ice_type_prim(FLOE_ICE_MAP);
    if (t) t->fields = calloc(2, sizeof *t->fields);
    if (!t || !t->fields || !key || !value ||
        set_field(&t->fields[0], key_id, "key", true, key, NULL) < 0) {
        if (t) free(t->fields);
        free(t);
        floe_ice_type_free(key);
        floe_ice_type_free(value);
        return NULL;
    }
    if (set_field(&t->fields[1], value_id, "value", value_required, value, NULL) < 0) {
        t->nfields = 1;
        floe_ice_type_free(t);
        floe_ice_type_free(value);
        return NULL;
    }
    t->nfields = 2;
    return t;
}

int floe_ice_struct_add(floe_ice_type_t *st, int32_t id, const char *name, bool required,
                        floe_ice_type_t *type, const char *doc)
{
    if (!type) return -1;
    floe_ice_field_t *nf = realloc(st->fields, (st->nfields + 1) * sizeof *nf);
    if (!nf) {
        floe_ice_type_free(type);
        return -1;
    }
    st->fields = nf;
    if (set_field(&nf[st->nfields], id, name, required, type, doc) < 0) {
        floe_ice_type_free(type);
        return -1;
    }
    st->nfields++;
    return 0;
}

void floe_ice_type_free(floe_ice_type_t *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nfields; i++) {
        free(t->fields[i].name);
        free(t->fields[i].doc);
        floe_ice_type_free(t->fields[i].type);
    }
    free(t->fields);
    free(t);
}

floe_ice_type_t *floe_ice_type_dup(const floe_ice_type_t *t)
{
    if (!t) return NULL;
    floe_ice_type_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *t;
    c->fields = NULL;
    c->nfields = 0;
    if (t->nfields) {
        c->fields = calloc(t->nfields, sizeof *c->fields);
        if (!c->fields) {
            free(c);
            return NULL;
        }
        for (size_t i = 0; i < t->nfields; i++) {
            const floe_ice_field_t *f = &t->fields[i];
            floe_ice_type_t *ft = floe_ice_type_dup(f->type);
            if (!ft || set_field(&c->fields[i], f->id, f->name, f->required, ft, f->doc) < 0) {
                floe_ice_type_free(ft);
                floe_ice_type_free(c);
                return NULL;
            }
            c->nfields++;
        }
    }
    return c;
}

bool floe_ice_type_equal(const floe_ice_type_t *a, const floe_ice_type_t *b)
{
    if (a->kind != b->kind || a->nfields != b->nfields) return false;
    if (a->kind == FLOE_ICE_DECIMAL && (a->precision != b->precision || a->scale != b->scale))
        return false;
    if (a->kind == FLOE_ICE_FIXED && a->length != b->length) return false;
    for (size_t i = 0; i < a->nfields; i++) {
        const floe_ice_field_t *x = &a->fields[i], *y = &b->fields[i];
        if (x->id != y->id || x->required != y->required || strcmp(x->name, y->name) != 0 ||
            !floe_ice_type_equal(x->type, y->type))
            return false;
    }
    return true;
}

static const struct {
    floe_ice_kind_t k;
    const char *name;
} prim_names[] = {
    {FLOE_ICE_BOOLEAN, "boolean"},
    {FLOE_ICE_INT, "int"},
    {FLOE_ICE_LONG, "long"},
    {FLOE_ICE_FLOAT, "float"},
    {FLOE_ICE_DOUBLE, "double"},
    {FLOE_ICE_DATE, "date"},
    {FLOE_ICE_TIME, "time"},
    {FLOE_ICE_TIMESTAMP, "timestamp"},
    {FLOE_ICE_TIMESTAMPTZ, "timestamptz"},
    {FLOE_ICE_STRING, "string"},
    {FLOE_ICE_UUID, "uuid"},
    {FLOE_ICE_BINARY, "binary"},
    {FLOE_ICE_STRUCT, "struct"},
    {FLOE_ICE_LIST, "list"},
    {FLOE_ICE_MAP, "map"},
};

const char *floe_ice_type_name(const floe_ice_type_t *t, char *buf, size_t size)
{
    if (t->kind == FLOE_ICE_DECIMAL) {
        snprintf(buf, size, "decimal(%" PRId32 ", %" PRId32 ")", t->precision, t->scale);
        return buf;
    }
    if (t->kind == FLOE_ICE_FIXED) {
        snprintf(buf, size, "fixed[%" PRId32 "]", t->length);
        return buf;
    }
    for (size_t i = 0; i < sizeof prim_names / sizeof prim_names[0]; i++)
        if (prim_names[i].k == t->kind) {
            snprintf(buf, size, "%s", prim_names[i].name);
            return buf;
        }
    snprintf(buf, size, "?");
    return buf;
}

floe_ice_type_t *floe_ice_type_parse(const char *name, floe_err_t *err)
{
    for (size_t i = 0; i < sizeof prim_names / sizeof prim_names[0]; i++)
        if (prim_names[i].k != FLOE_ICE_STRUCT && prim_names[i].k != FLOE_ICE_LIST &&
            prim_names[i].k != FLOE_ICE_MAP && strcmp(name, prim_names[i].name) == 0) {
            floe_ice_type_t *t = floe_ice_type_prim(prim_names[i].k);
            if (!t) floe_err_oom(err);
            return t;
        }
    int p, s, n = 0;
    unsigned len;
    if (sscanf(name, "decimal(%d ,%d )%n", &p, &s, &n) == 2 && name[n] == '\0') {
        if (p < 1 || p > 38 || s < 0 || s > p) {
            floe_err_set(err, FLOE_EINVAL,
                         "decimal(%d,%d): precision must be 1..38 and scale 0..precision", p, s);
            return NULL;
        }
        floe_ice_type_t *t = floe_ice_type_decimal(p, s);
        if (!t) floe_err_oom(err);
        return t;
    }
    n = 0;
    if (sscanf(name, "fixed[%u]%n", &len, &n) == 1 && name[n] == '\0') {
        if (len < 1 || len > (1u << 30)) {
            floe_err_set(err, FLOE_EINVAL, "fixed[%u]: bad length", len);
            return NULL;
        }
        floe_ice_type_t *t = floe_ice_type_fixed((int32_t)len);
        if (!t) floe_err_oom(err);
        return t;
    }
    floe_err_set(err, FLOE_EINVAL, "unknown type '%.64s'", name);
    return NULL;
}

/* ---- schemas ---- */

floe_ice_schema_t *floe_ice_schema_new(int32_t schema_id, floe_ice_type_t *root)
{
    floe_ice_schema_t *s = calloc(1, sizeof *s);
    if (!s || !root) {
        free(s);
        floe_ice_type_free(root);
        return NULL;
    }
    s->schema_id = schema_id;
    s->root = root;
    return s;
}

void floe_ice_schema_free(floe_ice_schema_t *s)
{
    if (!s) return;
    floe_ice_type_free(s->root);
    free(s->identifier_ids);
    free(s);
}

floe_ice_schema_t *floe_ice_schema_dup(const floe_ice_schema_t *s)
{
    floe_ice_schema_t *c = floe_ice_schema_new(s->schema_id, floe_ice_type_dup(s->root));
    if (!c) return NULL;
    if (s->n_identifier_ids) {
        c->identifier_ids = malloc(s->n_identifier_ids * sizeof(int32_t));
        if (!c->identifier_ids) {
            floe_ice_schema_free(c);
            return NULL;
        }
        memcpy(c->identifier_ids, s->identifier_ids, s->n_identifier_ids * sizeof(int32_t));
        c->n_identifier_ids = s->n_identifier_ids;
    }
    return c;
}

bool floe_ice_schema_same(const floe_ice_schema_t *a, const floe_ice_schema_t *b)
{
    if (a->n_identifier_ids != b->n_identifier_ids) return false;
    for (size_t i = 0; i < a->n_identifier_ids; i++)
        if (a->identifier_ids[i] != b->identifier_ids[i]) return false;
    return floe_ice_type_equal(a->root, b->root);
}

static const floe_ice_field_t *find_id(const floe_ice_type_t *t, int32_t id)
{
    for (size_t i = 0; i < t->nfields; i++) {
        if (t->fields[i].id == id) return &t->fields[i];
        const floe_ice_field_t *f = find_id(t->fields[i].type, id);
        if (f) return f;
    }
    return NULL;
}

const floe_ice_field_t *floe_ice_schema_find(const floe_ice_schema_t *s, int32_t id)
{
    return find_id(s->root, id);
}

const floe_ice_field_t *floe_ice_schema_find_name(const floe_ice_schema_t *s, const char *dotted)
{
    const floe_ice_type_t *t = s->root;
    const floe_ice_field_t *f = NULL;
    const char *p = dotted;
    while (t) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        f = NULL;
        for (size_t i = 0; i < t->nfields; i++)
            if (strlen(t->fields[i].name) == n && memcmp(t->fields[i].name, p, n) == 0) {
                f = &t->fields[i];
                break;
            }
        if (!f) return NULL;
        if (!dot) return f;
        t = f->type;
        p = dot + 1;
    }
    return NULL;
}

static bool path_to(const floe_ice_type_t *t, int32_t id, floe_buf_t *b)
{
    for (size_t i = 0; i < t->nfields; i++) {
        size_t mark = b->len;
        if (mark) floe_buf_append_u8(b, '.');
        floe_buf_append_str(b, t->fields[i].name);
        if (t->fields[i].id == id || path_to(t->fields[i].type, id, b)) return true;
        b->len = mark;
    }
    return false;
}

const char *floe_ice_schema_field_name(const floe_ice_schema_t *s, int32_t id, char *buf,
                                       size_t size)
{
    floe_buf_t b = FLOE_BUF_INIT;
    bool ok = path_to(s->root, id, &b);
    const char *r = NULL;
    if (ok && floe_buf_cstr(&b) && b.len < size) {
        memcpy(buf, b.data, b.len + 1);
        r = buf;
    }
    floe_buf_free(&b);
    return r;
}

static int32_t max_id(const floe_ice_type_t *t)
{
    int32_t m = 0;
    for (size_t i = 0; i < t->nfields; i++) {
        if (t->fields[i].id > m) m = t->fields[i].id;
        int32_t c = max_id(t->fields[i].type);
        if (c > m) m = c;
    }
    return m;
}

int32_t floe_ice_schema_max_id(const floe_ice_schema_t *s)
{
    return max_id(s->root);
}

static int collect_ids(const floe_ice_type_t *t, int32_t **ids, size_t *n, size_t *cap,
                       floe_err_t *err)
{
    for (size_t i = 0; i < t->nfields; i++) {
        const floe_ice_field_t *f = &t->fields[i];
        if (f->id <= 0)
            return floe_err_set(err, FLOE_EINVAL, "field '%s' has id %d (must be > 0)", f->name,
                                f->id);
        if (t->kind == FLOE_ICE_STRUCT) {
            if (!f->name[0])
                return floe_err_set(err, FLOE_EINVAL, "field %d has an empty name", f->id);
            for (size_t j = 0; j < i; j++)
                if (strcmp(t->fields[j].name, f->name) == 0)
                    return floe_err_set(err, FLOE_EINVAL, "duplicate field name '%s'", f->name);
        }
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 32;
            int32_t *p = realloc(*ids, nc * sizeof *p);
            if (!p) return floe_err_oom(err);
            *ids = p;
            *cap = nc;
        }
        (*ids)[(*n)++] = f->id;
        if (collect_ids(f->type, ids, n, cap, err) < 0) return -1;
    }
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int floe_ice_schema_validate(const floe_ice_schema_t *s, floe_err_t *err)
{
    if (!s->root || s->root->kind != FLOE_ICE_STRUCT)
        return floe_err_set(err, FLOE_EINVAL, "schema root must be a struct");
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    if (collect_ids(s->root, &ids, &n, &cap, err) < 0) {
        free(ids);
        return -1;
    }
    if (n > 1) qsort(ids, n, sizeof *ids, cmp_i32);
    for (size_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1]) {
            int32_t d = ids[i];
            free(ids);
            return floe_err_set(err, FLOE_EINVAL, "duplicate field id %d", d);
        }
    free(ids);
    for (size_t i = 0; i < s->n_identifier_ids; i++) {
        const floe_ice_field_t *f = floe_ice_schema_find(s, s->identifier_ids[i]);
        if (!f)
            return floe_err_set(err, FLOE_EINVAL, "identifier field %d not in schema",
                                s->identifier_ids[i]);
        if (!f->required || !floe_ice_kind_is_primitive(f->type->kind) ||
            f->type->kind == FLOE_ICE_FLOAT || f->type->kind == FLOE_ICE_DOUBLE)
            return floe_err_set(
                err, FLOE_EINVAL,
                "identifier field '%s' must be a required primitive (not float/double)", f->name);
    }
    return 0;
}

/* ---- values ---- */

void floe_ice_value_clear(floe_ice_value_t *v)
{
    free(v->bytes);
    memset(v, 0, sizeof *v);
}

int floe_ice_value_copy(floe_ice_value_t *dst, const floe_ice_value_t *src)
{
    *dst = *src;
    dst->bytes = NULL;
    if (src->bytes) {
        dst->bytes = malloc(src->len ? src->len : 1);
        if (!dst->bytes) return -1;
        memcpy(dst->bytes, src->bytes, src->len);
    }
    return 0;
}

int floe_ice_value_set_bytes(floe_ice_value_t *v, floe_ice_kind_t kind, const void *p, size_t n)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->bytes = malloc(n ? n : 1);
    if (!v->bytes) return -1;
    if (n) memcpy(v->bytes, p, n);
    v->len = n;
    return 0;
}

int floe_ice_value_set_decimal(floe_ice_value_t *v, __int128 unscaled, int32_t scale)
{
    uint8_t be[16];
    unsigned __int128 u = (unsigned __int128)unscaled;
    for (int i = 15; i >= 0; i--) {
        be[i] = (uint8_t)u;
        u >>= 8;
    }
    /* minimal two's complement: drop leading bytes that only extend the sign */
    size_t start = 0;
    while (start < 15 && ((be[start] == 0x00 && !(be[start + 1] & 0x80)) ||
                          (be[start] == 0xff && (be[start + 1] & 0x80))))
        start++;
    if (floe_ice_value_set_bytes(v, FLOE_ICE_DECIMAL, be + start, 16 - start) < 0) return -1;
    v->scale = scale;
    return 0;
}

int floe_ice_value_set_decimal64(floe_ice_value_t *v, int64_t unscaled, int32_t scale)
{
    return floe_ice_value_set_decimal(v, unscaled, scale);
}

__int128 floe_ice_value_decimal(const floe_ice_value_t *v)
{
    if (!v->len) return 0;
    unsigned __int128 u = (v->bytes[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    size_t n = v->len > 16 ? 16 : v->len;
    for (size_t i = v->len - n; i < v->len; i++) u = (u << 8) | v->bytes[i];
    return (__int128)u;
}

int floe_ice_decimal_text(floe_buf_t *out, __int128 unscaled, int32_t scale)
{
    char digits[64];
    int n = 0;
    bool neg = unscaled < 0;
    unsigned __int128 u =
        neg ? (unsigned __int128)(-(unscaled + 1)) + 1 : (unsigned __int128)unscaled;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u && n < 60);
    while (n <= scale && n < 60) digits[n++] = '0';
    char s[72];
    int k = 0;
    if (neg) s[k++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        s[k++] = digits[i];
        if (i == scale && scale > 0) s[k++] = '.';
    }
    s[k] = 0;
    return floe_buf_append_str(out, s);
}

static int cmp_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t n = na < nb ? na : nb;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (na > nb) - (na < nb);
}

#define CMP(x, y) (((x) > (y)) - ((x) < (y)))

int floe_ice_value_cmp(const floe_ice_value_t *a, const floe_ice_value_t *b)
{
    switch (a->kind) {
    case FLOE_ICE_BOOLEAN: return CMP(a->v.b, b->v.b);
    case FLOE_ICE_INT:
    case FLOE_ICE_DATE: return CMP(a->v.i, b->v.i);
    case FLOE_ICE_LONG:
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ: return CMP(a->v.l, b->v.l);
    case FLOE_ICE_FLOAT: return CMP(a->v.f, b->v.f);
    case FLOE_ICE_DOUBLE: return CMP(a->v.d, b->v.d);
    case FLOE_ICE_DECIMAL: {
        __int128 x = floe_ice_value_decimal(a), y = floe_ice_value_decimal(b);
        return CMP(x, y);
    }
    default: return cmp_bytes(a->bytes, a->len, b->bytes, b->len);
    }
}

bool floe_ice_value_eq(const floe_ice_value_t *a, const floe_ice_value_t *b)
{
    if (a->is_null || b->is_null) return a->is_null == b->is_null;
    if (a->kind != b->kind) return false;
    return floe_ice_value_cmp(a, b) == 0;
}

int floe_ice_value_serialize(const floe_ice_value_t *v, floe_buf_t *out, floe_err_t *err)
{
    if (v->is_null) return floe_err_set(err, FLOE_EINVAL, "null has no single-value form");
    int rc;
    switch (v->kind) {
    case FLOE_ICE_BOOLEAN: rc = floe_buf_append_u8(out, v->v.b ? 1 : 0); break;
    case FLOE_ICE_INT:
    case FLOE_ICE_DATE: rc = floe_buf_append_le32(out, (uint32_t)v->v.i); break;
    case FLOE_ICE_LONG:
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ: rc = floe_buf_append_le64(out, (uint64_t)v->v.l); break;
    case FLOE_ICE_FLOAT: {
        uint32_t u;
        memcpy(&u, &v->v.f, 4);
        rc = floe_buf_append_le32(out, u);
        break;
    }
    case FLOE_ICE_DOUBLE: {
        uint64_t u;
        memcpy(&u, &v->v.d, 8);
        rc = floe_buf_append_le64(out, u);
        break;
    }
    case FLOE_ICE_STRING:
    case FLOE_ICE_BINARY:
    case FLOE_ICE_FIXED:
    case FLOE_ICE_UUID:
    case FLOE_ICE_DECIMAL: rc = floe_buf_append(out, v->bytes, v->len); break;
    default: return floe_err_set(err, FLOE_EINVAL, "nested values have no single-value form");
    }
    if (rc < 0) return floe_err_oom(err);
    return 0;
}

int floe_ice_value_deserialize(const floe_ice_type_t *t, const uint8_t *p, size_t n,
                               floe_ice_value_t *out, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->kind = t->kind;
    size_t want = 0;
    switch (t->kind) {
    case FLOE_ICE_BOOLEAN: want = 1; break;
    case FLOE_ICE_INT:
    case FLOE_ICE_DATE:
    case FLOE_ICE_FLOAT: want = 4; break;
    case FLOE_ICE_LONG:
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ:
    case FLOE_ICE_DOUBLE: want = 8; break;
    case FLOE_ICE_UUID: want = 16; break;
    case FLOE_ICE_FIXED: want = (size_t)t->length; break;
    case FLOE_ICE_STRING:
    case FLOE_ICE_BINARY:
    case FLOE_ICE_DECIMAL: want = n; break;
    default: return floe_err_set(err, FLOE_EINVAL, "nested types have no single-value form");
    }
    if (n != want)
        return floe_err_set(err, FLOE_ECORRUPT, "single value: %zu bytes, expected %zu", n, want);
    switch (t->kind) {
    case FLOE_ICE_BOOLEAN:
        if (p[0] > 1) return floe_err_set(err, FLOE_ECORRUPT, "boolean byte %u", p[0]);
        out->v.b = p[0];
        break;
    case FLOE_ICE_INT:
    case FLOE_ICE_DATE: out->v.i = (int32_t)floe_rd_le32(p); break;
    case FLOE_ICE_FLOAT: {
        uint32_t u = floe_rd_le32(p);
        memcpy(&out->v.f, &u, 4);
        break;
    }
    case FLOE_ICE_DOUBLE: {
        uint64_t u = floe_rd_le64(p);
        memcpy(&out->v.d, &u, 8);
        break;
    }
    case FLOE_ICE_LONG:
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ: out->v.l = (int64_t)floe_rd_le64(p); break;
    default:
        if (t->kind == FLOE_ICE_DECIMAL && (n == 0 || n > 16))
            return floe_err_set(err, FLOE_ECORRUPT, "decimal of %zu bytes", n);
        if (floe_ice_value_set_bytes(out, t->kind, p, n) < 0) return floe_err_oom(err);
        out->scale = t->scale;
        break;
    }
    return 0;
}

/* Howard Hinnant's civil-calendar algorithms (public domain facts). */
int32_t floe_ice_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int32_t)(era * 146097 + (int64_t)doe - 719468);
}

void floe_ice_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}
