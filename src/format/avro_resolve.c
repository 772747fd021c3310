/* Avro schema resolution (spec "Schema Resolution"): data written with a
 * writer schema read as values of a reader schema.  The datum is decoded
 * with the writer schema, then converted node by node. */
#include <stdlib.h>
#include <string.h>

#include "format/avro_int.h"

struct floe_avro_resolver {
    const floe_avro_schema_t *w, *r;
};

/* Named types match by unqualified name, or by a reader alias naming the
 * writer's type. */
static bool names_match(const floe_avro_schema_t *w, const floe_avro_schema_t *r)
{
    if (strcmp(w->name, r->name) == 0) return true;
    for (size_t i = 0; i < r->n_aliases; i++) {
        const char *a = r->aliases[i];
        const char *dot = strrchr(a, '.');
        if (strcmp(a, w->fullname) == 0 || strcmp(dot ? dot + 1 : a, w->name) == 0) return true;
    }
    return false;
}

bool floe_avro_promotable(floe_avro_type_t w, floe_avro_type_t r)
{
    switch (w) {
    case FLOE_AVRO_INT: return r == FLOE_AVRO_LONG || r == FLOE_AVRO_FLOAT || r == FLOE_AVRO_DOUBLE;
    case FLOE_AVRO_LONG: return r == FLOE_AVRO_FLOAT || r == FLOE_AVRO_DOUBLE;
    case FLOE_AVRO_FLOAT: return r == FLOE_AVRO_DOUBLE;
    case FLOE_AVRO_STRING: return r == FLOE_AVRO_BYTES;
    case FLOE_AVRO_BYTES: return r == FLOE_AVRO_STRING;
    default: return false;
    }
}

/* Shallow match used to pick a reader union branch. */
static bool shallow_match(const floe_avro_schema_t *w, const floe_avro_schema_t *r, bool exact)
{
    if (w->type != r->type) return !exact && floe_avro_promotable(w->type, r->type);
    switch (w->type) {
    case FLOE_AVRO_RECORD:
    case FLOE_AVRO_ENUM: return names_match(w, r);
    case FLOE_AVRO_FIXED: return names_match(w, r) && w->fixed_size == r->fixed_size;
    default: return true;
    }
}

static int reader_branch(const floe_avro_schema_t *w, const floe_avro_schema_t *r)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->n_branches; i++)
            if (shallow_match(w, r->branches[i], pass == 0)) return (int)i;
    return -1;
}

static int reader_field_match(const avro_field_t *rf, const floe_avro_schema_t *w)
{
    int i = floe_avro_schema_field_index(w, rf->name);
    for (size_t k = 0; i < 0 && k < rf->n_aliases; k++)
        i = floe_avro_schema_field_index(w, rf->aliases[k]);
    return i;
}

/* ------------------------------------------------------------------ */
/* Compatibility check                                                  */
/* ------------------------------------------------------------------ */

typedef struct pair {
    const floe_avro_schema_t *w, *r;
} pair_t;

typedef struct cctx {
    pair_t stack[AVRO_MAX_DEPTH + 1];
    int depth;
    floe_err_t *err;
} cctx_t;

static int check(cctx_t *c, const floe_avro_schema_t *w, const floe_avro_schema_t *r);

static int check_in(cctx_t *c, const floe_avro_schema_t *w, const floe_avro_schema_t *r)
{
    for (int i = 0; i < c->depth; i++)
        if (c->stack[i].w == w && c->stack[i].r == r) return 0; /* recursive: in progress */
    if (c->depth >= AVRO_MAX_DEPTH)
        return floe_err_set(c->err, FLOE_EINVAL, "avro resolve: schemas nested too deep");
    c->stack[c->depth++] = (pair_t){w, r};
    int rc = check(c, w, r);
    c->depth--;
    return rc;
}

static int mismatch(cctx_t *c, const floe_avro_schema_t *w, const floe_avro_schema_t *r)
{
    return floe_err_set(c->err, FLOE_EINVAL, "avro resolve: writer's %s cannot be read as %s",
                        avro_branch_name(w), avro_branch_name(r));
}

static int check(cctx_t *c, const floe_avro_schema_t *w, const floe_avro_schema_t *r)
{
    if (w->type == FLOE_AVRO_UNION) {
        /* data only fails if it holds a branch the reader cannot take */
        floe_err_t first = {0};
        for (size_t i = 0; i < w->n_branches; i++) {
            floe_err_t e = {0};
            floe_err_t *saved = c->err;
            c->err = &e;
            int rc = check_in(c, w->branches[i], r);
            c->err = saved;
            if (rc == 0) return 0;
            if (i == 0) first = e;
        }
        if (c->err) *c->err = first;
        return -1;
    }
    if (r->type == FLOE_AVRO_UNION) {
        int b = reader_branch(w, r);
        if (b < 0) return mismatch(c, w, r);
        return check_in(c, w, r->branches[b]);
    }
    if (w->type != r->type) return floe_avro_promotable(w->type, r->type) ? 0 : mismatch(c, w, r);
    switch (w->type) {
    case FLOE_AVRO_RECORD:
        if (!names_match(w, r)) return mismatch(c, w, r);
        for (size_t j = 0; j < r->n_fields; j++) {
            const avro_field_t *rf = &r->fields[j];
            int i = reader_field_match(rf, w);
            if (i >= 0) {
                if (check_in(c, w->fields[i].type, rf->type) != 0) {
                    floe_err_wrap(c->err, "field %s.%s", r->fullname, rf->name);
                    return -1;
                }
            } else if (!avro_field_default(r, j)) {
                return floe_err_set(
                    c->err, FLOE_EINVAL,
                    "avro resolve: reader field %s.%s is not in the writer's schema and has %s",
                    r->fullname, rf->name, rf->def ? "a default that does not fit" : "no default");
            }
        }
        return 0;
    case FLOE_AVRO_ENUM: return names_match(w, r) ? 0 : mismatch(c, w, r);
    case FLOE_AVRO_FIXED:
        if (!names_match(w, r) || w->fixed_size != r->fixed_size) return mismatch(c, w, r);
        return 0;
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: return check_in(c, w->items, r->items);
    default: return 0;
    }
}

int floe_avro_resolver_new(const floe_avro_schema_t *writer, const floe_avro_schema_t *reader,
                           floe_avro_resolver_t **out, floe_err_t *err)
{
    *out = NULL;
    cctx_t *c = calloc(1, sizeof *c);
    if (!c) return floe_err_set(err, FLOE_ENOMEM, "avro resolve: out of memory");
    c->err = err;
    int rc = check_in(c, writer, reader);
    free(c);
    if (rc != 0) return -1;
    floe_avro_resolver_t *r = calloc(1, sizeof *r);
    if (!r) return floe_err_set(err, FLOE_ENOMEM, "avro resolve: out of memory");
    r->w = writer;
    r->r = reader;
    *out = r;
    return 0;
}

void floe_avro_resolver_free(floe_avro_resolver_t *r)
{
    free(r);
}

/* ------------------------------------------------------------------ */
/* Conversion                                                           */
/* ------------------------------------------------------------------ */

static int nomem(floe_err_t *err)
{
    return floe_err_set(err, FLOE_ENOMEM, "avro resolve: out of memory (or past the arena cap)");
}

/* Deep copy of src (a schema default) into arena a, so the caller's value
 * never points into the schema's own memory. */
static int copy_value(const floe_avro_value_t *src, floe_arena_t *a, floe_avro_value_t *dst,
                      int depth)
{
    if (depth > AVRO_MAX_DEPTH) return -1;
    *dst = *src;
    dst->arena = a;
    const floe_avro_schema_t *s = src->s;
    switch (s->type) {
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_STRING:
    case FLOE_AVRO_FIXED: {
        uint8_t *p = floe_arena_alloc(a, src->u.bytes.n + 1);
        if (!p) return -1;
        if (src->u.bytes.n) memcpy(p, src->u.bytes.p, src->u.bytes.n);
        p[src->u.bytes.n] = 0;
        dst->u.bytes.p = p;
        return 0;
    }
    case FLOE_AVRO_RECORD:
        dst->u.fields = floe_arena_alloc(a, (s->n_fields ? s->n_fields : 1) * sizeof *dst);
        if (!dst->u.fields) return -1;
        for (size_t i = 0; i < s->n_fields; i++)
            if (copy_value(&src->u.fields[i], a, &dst->u.fields[i], depth + 1) != 0) return -1;
        return 0;
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: {
        size_t n = s->type == FLOE_AVRO_ARRAY ? src->u.arr.n : src->u.map.n;
        floe_avro_value_t **ptrs = floe_arena_alloc(a, (n ? n : 1) * sizeof *ptrs);
        floe_avro_value_t *vals = floe_arena_alloc(a, (n ? n : 1) * sizeof *vals);
        if (!ptrs || !vals) return -1;
        for (size_t i = 0; i < n; i++) {
            const floe_avro_value_t *sv =
                s->type == FLOE_AVRO_ARRAY ? src->u.arr.items[i] : src->u.map.vals[i];
            if (copy_value(sv, a, &vals[i], depth + 1) != 0) return -1;
            ptrs[i] = &vals[i];
        }
        if (s->type == FLOE_AVRO_ARRAY) {
            dst->u.arr.items = ptrs;
            dst->u.arr.cap = n;
        } else {
            char **keys = floe_arena_alloc(a, (n ? n : 1) * sizeof *keys);
            if (!keys) return -1;
            for (size_t i = 0; i < n; i++)
                if (!(keys[i] =
                          floe_arena_strndup(a, src->u.map.keys[i], strlen(src->u.map.keys[i]))))
                    return -1;
            dst->u.map.keys = keys;
            dst->u.map.vals = ptrs;
            dst->u.map.cap = n;
        }
        return 0;
    }
    case FLOE_AVRO_UNION:
        if (!src->set) return 0;
        dst->u.un.val = floe_arena_alloc(a, sizeof *dst);
        if (!dst->u.un.val) return -1;
        return copy_value(src->u.un.val, a, dst->u.un.val, depth + 1);
    default: return 0;
    }
}

static int conv(const floe_avro_value_t *wv, const floe_avro_schema_t *rs, floe_arena_t *a,
                floe_avro_value_t *out, floe_err_t *err, int depth)
{
    if (depth > AVRO_MAX_DEPTH)
        return floe_err_set(err, FLOE_ECORRUPT, "avro resolve: data nested too deep");
    if (wv->s->type == FLOE_AVRO_UNION) wv = wv->u.un.val;
    const floe_avro_schema_t *ws = wv->s;
    memset(out, 0, sizeof *out);
    out->s = rs;
    out->arena = a;
    out->set = true;
    if (rs->type == FLOE_AVRO_UNION) {
        int b = reader_branch(ws, rs);
        if (b < 0)
            return floe_err_set(err, FLOE_EINVAL,
                                "avro resolve: writer's %s has no branch in the reader's union",
                                avro_branch_name(ws));
        floe_avro_value_t *bv = floe_arena_alloc(a, sizeof *bv);
        if (!bv) return nomem(err);
        out->u.un.branch = b;
        out->u.un.val = bv;
        return conv(wv, rs->branches[b], a, bv, err, depth + 1);
    }
    if (ws->type != rs->type) {
        if (!floe_avro_promotable(ws->type, rs->type))
            return floe_err_set(err, FLOE_EINVAL, "avro resolve: writer's %s cannot be read as %s",
                                avro_branch_name(ws), avro_branch_name(rs));
        switch (rs->type) {
        case FLOE_AVRO_LONG: out->u.l = wv->u.i; return 0;
        case FLOE_AVRO_FLOAT:
            out->u.f = ws->type == FLOE_AVRO_INT ? (float)wv->u.i : (float)wv->u.l;
            return 0;
        case FLOE_AVRO_DOUBLE:
            out->u.d = ws->type == FLOE_AVRO_INT    ? (double)wv->u.i
                       : ws->type == FLOE_AVRO_LONG ? (double)wv->u.l
                                                    : (double)wv->u.f;
            return 0;
        case FLOE_AVRO_BYTES:
        case FLOE_AVRO_STRING: out->u.bytes = wv->u.bytes; return 0;
        default:
            return floe_err_set(err, FLOE_EINVAL, "avro resolve: writer's %s cannot be read as %s",
                                avro_branch_name(ws), avro_branch_name(rs));
        }
    }
    switch (rs->type) {
    case FLOE_AVRO_RECORD:
        out->u.fields = floe_arena_alloc(a, (rs->n_fields ? rs->n_fields : 1) * sizeof *out);
        if (!out->u.fields) return nomem(err);
        for (size_t j = 0; j < rs->n_fields; j++) {
            const avro_field_t *rf = &rs->fields[j];
            int i = reader_field_match(rf, ws);
            if (i >= 0) {
                if (conv(&wv->u.fields[i], rf->type, a, &out->u.fields[j], err, depth + 1) != 0)
                    return -1;
                continue;
            }
            const floe_avro_value_t *d = avro_field_default(rs, j);
            if (!d)
                return floe_err_set(err, FLOE_EINVAL,
                                    "avro resolve: no value for reader field %s.%s", rs->fullname,
                                    rf->name);
            if (copy_value(d, a, &out->u.fields[j], 0) != 0) return nomem(err);
        }
        return 0;
    case FLOE_AVRO_ENUM: {
        const char *sym = ws->symbols[wv->u.e];
        int i = floe_avro_schema_symbol_index(rs, sym);
        if (i < 0) i = rs->enum_default;
        if (i < 0)
            return floe_err_set(err, FLOE_EINVAL,
                                "avro resolve: symbol %s is not in the reader's enum %s", sym,
                                rs->fullname);
        out->u.e = i;
        return 0;
    }
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: {
        bool arr = rs->type == FLOE_AVRO_ARRAY;
        size_t n = arr ? wv->u.arr.n : wv->u.map.n;
        floe_avro_value_t **ptrs = floe_arena_alloc(a, (n ? n : 1) * sizeof *ptrs);
        floe_avro_value_t *vals = floe_arena_alloc(a, (n ? n : 1) * sizeof *vals);
        if (!ptrs || !vals) return nomem(err);
        for (size_t i = 0; i < n; i++) {
            if (conv(arr ? wv->u.arr.items[i] : wv->u.map.vals[i], rs->items, a, &vals[i], err,
                     depth + 1) != 0)
                return -1;
            ptrs[i] = &vals[i];
        }
        if (arr) {
            out->u.arr.items = ptrs;
            out->u.arr.n = out->u.arr.cap = n;
        } else {
            out->u.map.keys = wv->u.map.keys; /* same arena */
            out->u.map.vals = ptrs;
            out->u.map.n = out->u.map.cap = n;
        }
        return 0;
    }
    default:
        out->u = wv->u; /* same primitive; bytes stay in the same arena */
        return 0;
    }
}

int floe_avro_resolver_decode(floe_avro_resolver_t *r, floe_slice_t *in, floe_arena_t *a,
                              floe_avro_value_t **out, floe_err_t *err)
{
    floe_slice_t cur = *in;
    floe_avro_value_t *wv;
    if (floe_avro_decode(r->w, &cur, a, &wv, err) != 0) return -1;
    floe_avro_value_t *v = floe_arena_alloc(a, sizeof *v);
    if (!v) return nomem(err);
    if (conv(wv, r->r, a, v, err, 0) != 0) return -1;
    *in = cur;
    *out = v;
    return 0;
}
