/* Avro datums -> typed columns in one pass (avro_shred.h). */
#include "table/avro_shred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/avro_conv.h"
#include "table/rows_int.h"
#include "util/utf8.h"

#define PLANS 8

/* How one schema node's datum reaches the columns. */
typedef struct plan plan_t;
struct plan {
    const floe_avro_schema_t *s;
    floe_avro_type_t t;
    floe_avro_logical_t lt;
    floe_rnode_t *n; /* the node the value goes to; NULL: no column, skipped */
    plan_t *kids;    /* record fields, union branches; array items, map values: 1 */
    size_t nkids;
    floe_rnode_t **extra; /* record: struct fields no field of this record sets */
    size_t nextra;
    int null_branch; /* union: the null branch, or -1 */
    bool nullable;   /* union [null, X] or [X]: its value goes to n itself */
    int width;       /* decimal: bytes of each value in n */
};

typedef struct entry {
    bool used;
    int32_t id;
    const floe_avro_schema_t *s;
    uint64_t shape; /* the buffer's shape version the plan points into */
    plan_t root;
} entry_t;

struct floe_avro_shred {
    floe_rows_t *r;
    entry_t e[PLANS];
    size_t next;
};

static void plan_clear(plan_t *p)
{
    for (size_t i = 0; i < p->nkids; i++) plan_clear(&p->kids[i]);
    free(p->kids);
    free(p->extra);
    memset(p, 0, sizeof *p);
}

floe_avro_shred_t *floe_avro_shred_new(floe_rows_t *rows)
{
    floe_avro_shred_t *a = calloc(1, sizeof *a);
    if (a) a->r = rows;
    return a;
}

void floe_avro_shred_free(floe_avro_shred_t *a)
{
    if (!a) return;
    for (size_t i = 0; i < PLANS; i++) plan_clear(&a->e[i].root);
    free(a);
}

/* ---- the plan: schema -> shape nodes ----------------------------------- */

typedef struct bctx {
    floe_rows_t *r;
    int32_t id;
    floe_err_t *err;
} bctx_t;

/* The schema whose values a node holds: s, or X for [null, X] and [X];
 * NULL for null (no column). */
static const floe_avro_schema_t *value_schema(const floe_avro_schema_t *s)
{
    if (floe_avro_schema_type(s) == FLOE_AVRO_UNION) {
        const floe_avro_schema_t *x = floe_avro_schema_nullable_inner(s);
        if (x) return value_schema(x);
        size_t nb = floe_avro_schema_branch_count(s), nn = 0;
        const floe_avro_schema_t *one = NULL;
        for (size_t i = 0; i < nb; i++)
            if (floe_avro_schema_type(floe_avro_schema_branch(s, i)) != FLOE_AVRO_NULL) {
                nn++;
                one = floe_avro_schema_branch(s, i);
            }
        if (nn == 0) return NULL;
        if (nn == 1 && nb == 1) return value_schema(one);
        return s;
    }
    return floe_avro_schema_type(s) == FLOE_AVRO_NULL ? NULL : s;
}

/* Whether a datum of s may be null (null itself, a union with null). */
static bool holds_null(const floe_avro_schema_t *s)
{
    if (floe_avro_schema_type(s) == FLOE_AVRO_NULL) return true;
    if (floe_avro_schema_type(s) != FLOE_AVRO_UNION) return false;
    for (size_t i = 0; i < floe_avro_schema_branch_count(s); i++)
        if (floe_avro_schema_type(floe_avro_schema_branch(s, i)) == FLOE_AVRO_NULL) return true;
    return false;
}

/* What struct field n of schema s says of nulls (rows.h): made is whether
 * n was made for it now.  A field that may be null, or that earlier rows
 * hold as null (made after them), lets its column be optional, and a
 * required one (a table's, seeded) becomes so. */
static void note_nulls(bctx_t *b, floe_rnode_t *n, const floe_avro_schema_t *s, bool made)
{
    if (!n) return;
    if (holds_null(s) || (made && floe_rows_count(b->r))) {
        n->schema_nullable = true;
        floe_rows_make_optional(b->r, n);
    } else if (made) {
        n->schema_non_null = true;
    }
}

static bool nullable_union(const floe_avro_schema_t *s)
{
    return floe_avro_schema_type(s) == FLOE_AVRO_UNION && value_schema(s) != s;
}

/* The column a value schema v makes: kind, decimal precision and scale,
 * fixed length. */
typedef struct want {
    floe_tkind_t kind;
    int32_t precision, scale, length;
} want_t;

static int want_of(bctx_t *b, const floe_avro_schema_t *v, want_t *w)
{
    memset(w, 0, sizeof *w);
    floe_avro_logical_t lt = floe_avro_schema_logical(v);
    switch (floe_avro_schema_type(v)) {
    case FLOE_AVRO_BOOLEAN: w->kind = FLOE_TK_BOOL; return 0;
    case FLOE_AVRO_INT:
        w->kind = lt == FLOE_AVRO_LOGICAL_DATE          ? FLOE_TK_DATE
                  : lt == FLOE_AVRO_LOGICAL_TIME_MILLIS ? FLOE_TK_TIME
                                                        : FLOE_TK_INT;
        return 0;
    case FLOE_AVRO_LONG:
        switch (lt) {
        case FLOE_AVRO_LOGICAL_TIME_MICROS: w->kind = FLOE_TK_TIME; return 0;
        case FLOE_AVRO_LOGICAL_TIMESTAMP_MILLIS:
        case FLOE_AVRO_LOGICAL_TIMESTAMP_MICROS: w->kind = FLOE_TK_TIMESTAMPTZ; return 0;
        case FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MILLIS:
        case FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MICROS: w->kind = FLOE_TK_TIMESTAMP; return 0;
        default: w->kind = FLOE_TK_LONG; return 0;
        }
    case FLOE_AVRO_FLOAT: w->kind = FLOE_TK_FLOAT; return 0;
    case FLOE_AVRO_DOUBLE: w->kind = FLOE_TK_DOUBLE; return 0;
    case FLOE_AVRO_STRING:
        w->kind = lt == FLOE_AVRO_LOGICAL_UUID ? FLOE_TK_UUID : FLOE_TK_STRING;
        return 0;
    case FLOE_AVRO_ENUM: w->kind = FLOE_TK_STRING; return 0;
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED:
        if (lt == FLOE_AVRO_LOGICAL_DECIMAL) {
            w->kind = FLOE_TK_DECIMAL;
            w->precision = floe_avro_schema_decimal_precision(v);
            w->scale = floe_avro_schema_decimal_scale(v);
            if (w->precision < 1 || w->precision > 38 || w->scale < 0 || w->scale > w->precision)
                return floe_err_set(b->err, FLOE_EINVAL,
                                    "schema id %d: decimal(%d, %d) is not an Iceberg decimal "
                                    "(precision 1 to 38, scale 0 to precision)",
                                    (int)b->id, (int)w->precision, (int)w->scale);
            return 0;
        }
        if (floe_avro_schema_type(v) == FLOE_AVRO_BYTES) {
            w->kind = FLOE_TK_BINARY;
        } else if (lt == FLOE_AVRO_LOGICAL_UUID && floe_avro_schema_fixed_size(v) == 16) {
            w->kind = FLOE_TK_UUID;
        } else {
            w->kind = FLOE_TK_FIXED;
            w->length = (int32_t)floe_avro_schema_fixed_size(v);
            if (w->length < 1)
                return floe_err_set(b->err, FLOE_EINVAL,
                                    "schema id %d: fixed of size 0 has no Iceberg type",
                                    (int)b->id);
        }
        return 0;
    case FLOE_AVRO_RECORD:
    case FLOE_AVRO_UNION: w->kind = FLOE_TK_STRUCT; return 0;
    case FLOE_AVRO_ARRAY: w->kind = FLOE_TK_LIST; return 0;
    case FLOE_AVRO_MAP: w->kind = FLOE_TK_MAP; return 0;
    case FLOE_AVRO_NULL: break;
    }
    return floe_err_set(b->err, FLOE_EINVAL, "schema id %d: no column type for %s", (int)b->id,
                        floe_avro_type_name(floe_avro_schema_type(v)));
}

static const char *branch_name(const floe_avro_schema_t *br)
{
    const char *n = floe_avro_schema_name(br);
    return n ? n : floe_avro_type_name(floe_avro_schema_type(br));
}

static void kind_text(floe_tkind_t k, int32_t p, int32_t s, int32_t len, char *buf, size_t size)
{
    if (k == FLOE_TK_DECIMAL) snprintf(buf, size, "decimal(%d, %d)", (int)p, (int)s);
    else if (k == FLOE_TK_FIXED)
        snprintf(buf, size, "fixed[%d]", (int)len);
    else
        snprintf(buf, size, "%s", floe_tkind_name(k));
}

/* Whether existing node n can hold values of v, promoting n in place
 * when v is wider by a promotion Iceberg makes (int -> long, float ->
 * double, decimal precision).  0, or -1 with err naming both types. */
static int fit(bctx_t *b, floe_rnode_t *n, const floe_avro_schema_t *v)
{
    want_t w;
    if (want_of(b, v, &w)) return -1;
    floe_tkind_t k = n->kind;
    if (k == w.kind) {
        if (k == FLOE_TK_FIXED && n->length != w.length) goto misfit;
        if (k != FLOE_TK_DECIMAL) return 0;
        if (n->scale != w.scale) goto misfit;
        if (w.precision > n->precision)
            return floe_rows_promote(b->r, n, FLOE_TK_DECIMAL, w.precision, b->err);
        return 0;
    }
    /* the column is wider: values widen as they are written */
    if ((w.kind == FLOE_TK_INT && k == FLOE_TK_LONG) ||
        (w.kind == FLOE_TK_FLOAT && k == FLOE_TK_DOUBLE))
        return 0;
    /* the schema is wider: the column is promoted */
    if ((w.kind == FLOE_TK_LONG && k == FLOE_TK_INT) ||
        (w.kind == FLOE_TK_DOUBLE && k == FLOE_TK_FLOAT))
        return floe_rows_promote(b->r, n, w.kind, 0, b->err);
misfit:;
    char path[256], have[48], got[48];
    kind_text(k, n->precision, n->scale, n->length, have, sizeof have);
    kind_text(w.kind, w.precision, w.scale, w.length, got, sizeof got);
    return floe_err_set(b->err, FLOE_EINVAL,
                        "schema id %d: field '%s' is %s in the table but %s in the schema, a "
                        "change Iceberg cannot make",
                        (int)b->id, floe_rows_path(n, path, sizeof path), have, got);
}

static int make(bctx_t *b, const floe_avro_schema_t *s, const char *name, int depth,
                floe_rnode_t **out);

/* Make the kid `name` of schema s under fresh node n (no kid when s has
 * no column). */
static int make_kid(bctx_t *b, floe_rnode_t *n, const floe_avro_schema_t *s, const char *name,
                    int depth)
{
    floe_rnode_t *kid;
    if (make(b, s, name, depth, &kid)) return -1;
    if (kid && floe_rnode_add_kid(n, kid) < 0) {
        floe_rnode_free(kid);
        return floe_err_oom(b->err);
    }
    return 0;
}

/* A fresh, optional node subtree `name` for schema s: *out, or NULL when
 * s makes no column (null, or a struct, list or map of nothing). */
static int make(bctx_t *b, const floe_avro_schema_t *s, const char *name, int depth,
                floe_rnode_t **out)
{
    *out = NULL;
    const floe_avro_schema_t *v = value_schema(s);
    if (!v) return 0;
    if (depth > b->r->opts.max_depth)
        return floe_err_set(b->err, FLOE_ERANGE, "schema id %d nests deeper than %d", (int)b->id,
                            b->r->opts.max_depth);
    want_t w;
    if (want_of(b, v, &w)) return -1;
    floe_rnode_t *n = floe_rnode_new(name, strlen(name), w.kind);
    if (!n) return floe_err_oom(b->err);
    n->precision = w.precision;
    n->scale = w.scale;
    n->length = w.length;
    int rc = 0;
    switch (floe_avro_schema_type(v)) {
    case FLOE_AVRO_RECORD:
        for (size_t i = 0; i < floe_avro_schema_field_count(v) && !rc; i++) {
            size_t had = n->nkids;
            const floe_avro_schema_t *ft = floe_avro_schema_field_type(v, i);
            rc = make_kid(b, n, ft, floe_avro_schema_field_name(v, i), depth + 1);
            if (!rc && n->nkids > had) n->kids[had]->schema_non_null = !holds_null(ft);
        }
        break;
    case FLOE_AVRO_UNION:
        for (size_t i = 0; i < floe_avro_schema_branch_count(v) && !rc; i++) {
            const floe_avro_schema_t *br = floe_avro_schema_branch(v, i);
            if (floe_avro_schema_type(br) != FLOE_AVRO_NULL)
                rc = make_kid(b, n, br, branch_name(br), depth + 1);
        }
        break;
    case FLOE_AVRO_ARRAY:
        rc = make_kid(b, n, floe_avro_schema_items(v), "element", depth + 1);
        break;
    case FLOE_AVRO_MAP: {
        floe_rnode_t *k = floe_rnode_new("key", 3, FLOE_TK_STRING);
        if (!k || floe_rnode_add_kid(n, k) < 0) {
            floe_rnode_free(k);
            rc = floe_err_oom(b->err);
            break;
        }
        k->required = true;
        rc = make_kid(b, n, floe_avro_schema_values(v), "value", depth + 1);
        if (!rc && n->nkids < 2) n->nkids = 0, floe_rnode_free(k); /* a map of nulls */
        break;
    }
    default: break;
    }
    if (rc || (!n->col && n->nkids == 0)) {
        floe_rnode_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* The node of field `name` (schema s) under struct st: found (and
 * checked), or made and attached; NULL in *out when s has no column. */
static int field_node(bctx_t *b, floe_rnode_t *st, const char *name, const floe_avro_schema_t *s,
                      int depth, floe_rnode_t **out)
{
    *out = NULL;
    const floe_avro_schema_t *v = value_schema(s);
    floe_rnode_t *kid = floe_rows_child(st, name);
    if (kid && kid->sys)
        return floe_err_set(b->err, FLOE_EINVAL, "schema id %d: field name '%s' is reserved",
                            (int)b->id, name);
    if (!v) {
        *out = kid; /* nulls go to a column that exists */
        return 0;
    }
    if (kid) {
        if (fit(b, kid, v)) return -1;
        *out = kid;
        return 0;
    }
    floe_rnode_t *sub;
    if (make(b, s, name, depth, &sub)) return -1;
    if (!sub) return 0;
    if (floe_rows_attach(b->r, st, sub, b->err) < 0) return -1;
    *out = sub;
    return 0;
}

static int bind(bctx_t *b, plan_t *p, const floe_avro_schema_t *s, floe_rnode_t *n, int depth);

static int kids_alloc(bctx_t *b, plan_t *p, size_t n)
{
    p->nkids = n;
    if (!n) return 0;
    if (!(p->kids = calloc(n, sizeof *p->kids))) {
        p->nkids = 0;
        return floe_err_oom(b->err);
    }
    return 0;
}

/* Bind record plan p (schema s) to struct node st: fields found or made,
 * the struct's other fields noted for nulls (none for the root, which
 * floe_rows_end fills). */
static int bind_record(bctx_t *b, plan_t *p, const floe_avro_schema_t *s, floe_rnode_t *st,
                       int depth)
{
    size_t nf = floe_avro_schema_field_count(s);
    if (kids_alloc(b, p, nf)) return -1;
    for (size_t i = 0; i < nf; i++) {
        const floe_avro_schema_t *ft = floe_avro_schema_field_type(s, i);
        const char *name = floe_avro_schema_field_name(s, i);
        bool made = !floe_rows_child(st, name);
        floe_rnode_t *kid;
        if (field_node(b, st, name, ft, depth + 1, &kid)) return -1;
        note_nulls(b, kid, ft, made);
        if (bind(b, &p->kids[i], ft, kid, depth + 1)) return -1;
    }
    if (st->parent && st->nkids && !(p->extra = malloc(st->nkids * sizeof *p->extra)))
        return floe_err_oom(b->err);
    for (size_t j = 0; j < st->nkids; j++) {
        bool set = false;
        for (size_t i = 0; i < nf && !set; i++) set = p->kids[i].n == st->kids[j];
        if (set || st->kids[j]->sys) continue;
        /* this record's schema leaves the field null */
        st->kids[j]->schema_nullable = true;
        floe_rows_make_optional(b->r, st->kids[j]);
        if (st->parent) p->extra[p->nextra++] = st->kids[j];
    }
    return 0;
}

static int bind(bctx_t *b, plan_t *p, const floe_avro_schema_t *s, floe_rnode_t *n, int depth)
{
    p->s = s;
    p->t = floe_avro_schema_type(s);
    p->lt = floe_avro_schema_logical(s);
    p->n = n;
    p->null_branch = -1;
    if (!n) return 0;
    switch (p->t) {
    case FLOE_AVRO_UNION: {
        size_t nb = floe_avro_schema_branch_count(s);
        p->nullable = nullable_union(s);
        if (kids_alloc(b, p, nb)) return -1;
        for (size_t i = 0; i < nb; i++) {
            const floe_avro_schema_t *br = floe_avro_schema_branch(s, i);
            if (floe_avro_schema_type(br) == FLOE_AVRO_NULL) {
                p->null_branch = (int)i;
                p->kids[i].t = FLOE_AVRO_NULL;
                p->kids[i].s = br;
                continue;
            }
            floe_rnode_t *kid = n;
            if (!p->nullable && field_node(b, n, branch_name(br), br, depth + 1, &kid)) return -1;
            if (bind(b, &p->kids[i], br, kid, depth + 1)) return -1;
        }
        return 0;
    }
    case FLOE_AVRO_RECORD: return bind_record(b, p, s, n, depth);
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: {
        const floe_avro_schema_t *it =
            p->t == FLOE_AVRO_ARRAY ? floe_avro_schema_items(s) : floe_avro_schema_values(s);
        floe_rnode_t *e = n->kids[p->t == FLOE_AVRO_ARRAY ? 0 : 1];
        const floe_avro_schema_t *v = value_schema(it);
        if (kids_alloc(b, p, 1) || (v && fit(b, e, v))) return -1;
        return bind(b, &p->kids[0], it, e, depth + 1);
    }
    default:
        if (n->kind == FLOE_TK_DECIMAL) p->width = floe_decimal_bytes(n->precision);
        return 0;
    }
}

/* The plan of the top-level schema s: a record spreads over the root, any
 * other schema is the root's field `value`. */
static int bind_root(bctx_t *b, plan_t *p, const floe_avro_schema_t *s)
{
    floe_rnode_t *root = floe_rows_root(b->r);
    if (floe_avro_schema_type(s) == FLOE_AVRO_RECORD) return bind(b, p, s, root, 0);
    p->s = s;
    p->t = FLOE_AVRO_RECORD;
    p->n = root;
    p->null_branch = -1;
    floe_rnode_t *kid;
    bool made = !floe_rows_child(root, "value");
    if (kids_alloc(b, p, 1) || field_node(b, root, "value", s, 1, &kid)) return -1;
    note_nulls(b, kid, s, made);
    return bind(b, &p->kids[0], s, kid, 1);
}

/* ---- decoding -------------------------------------------------------- */

typedef floe_avro_in_t dec_t;

static inline int put_val(dec_t *d, floe_rnode_t *n, int rep, const void *v, size_t w)
{
    return floe_rcol_put(n, rep, v, w, d->err);
}

static int put_bytes(dec_t *d, floe_rnode_t *n, int rep, const void *p, size_t len)
{
    return floe_rcol_put_bytes(n, rep, p, len, d->err);
}

static int put_null(dec_t *d, floe_rnode_t *n, int rep)
{
    if (n->required) {
        char path[256];
        return floe_err_set(d->err, FLOE_EINVAL, "field '%s' is required in the table, null here",
                            floe_rows_path(n, path, sizeof path));
    }
    return floe_rows_write_nulls(n, n->def - 1, rep) < 0 ? floe_err_oom(d->err) : 0;
}

/* A decimal's two's complement bytes p[0..len) at the column's width. */
static int put_decimal(dec_t *d, const plan_t *pl, int rep, const uint8_t *p, size_t len)
{
    size_t w = (size_t)pl->width;
    uint8_t b[16];
    if (len > w) { /* the extra leading bytes must only repeat the sign */
        uint8_t sign = (p[len - w] & 0x80) ? 0xff : 0;
        for (size_t i = 0; i < len - w; i++)
            if (p[i] != sign) return floe_avro_in_corrupt(d, "decimal wider than its precision");
        p += len - w;
        len = w;
    }
    uint8_t pad = len && (p[0] & 0x80) ? 0xff : 0;
    memset(b, pad, w - len);
    memcpy(b + (w - len), p, len);
    return put_bytes(d, pl->n, rep, b, w);
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" -> 16 bytes. */
static bool uuid_parse(const uint8_t *p, size_t n, uint8_t out[16])
{
    if (n != 36) return false;
    size_t o = 0;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (p[i++] != '-') return false;
            continue;
        }
        int hi = hexval(p[i]), lo = hexval(p[i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[o++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return true;
}

static int value(dec_t *d, const plan_t *p, int rep);

static int skip(dec_t *d, const plan_t *p)
{
    floe_slice_t in = {d->p + d->off, d->n - d->off};
    floe_err_t e = {0};
    if (floe_avro_skip(p->s, &in, &e) < 0) return floe_avro_in_corrupt(d, "bad datum");
    d->off = (size_t)(in.ptr - d->p);
    return 0;
}

/* Array and map blocks: count (negative: then a byte size), items, until
 * a zero count. */
static int blocks(dec_t *d, const plan_t *p, int rep)
{
    floe_rnode_t *n = p->n;
    bool map = p->t == FLOE_AVRO_MAP;
    floe_rnode_t *first_leaf = n->kids[0]; /* list element or map key: its rep */
    size_t i = 0;
    for (;;) {
        int64_t count;
        if (floe_avro_in_block(d, &count)) return -1;
        if (count == 0) break;
        for (int64_t j = 0; j < count; j++, i++) {
            int r = i ? first_leaf->rep : rep;
            if (map) {
                const uint8_t *k = NULL;
                size_t kl = 0;
                size_t bad;
                if (floe_avro_in_bytes(d, &k, &kl)) return -1;
                if (!floe_utf8_valid(k, kl, &bad))
                    return floe_avro_in_corrupt(d, "map key is not UTF-8");
                if (put_bytes(d, n->kids[0], r, k, kl)) return -1;
            }
            if (value(d, &p->kids[0], r)) return -1;
        }
    }
    if (i == 0 && floe_rows_write_nulls(map ? n : first_leaf, n->def, rep) < 0)
        return floe_err_oom(d->err);
    return 0;
}

static int value(dec_t *d, const plan_t *p, int rep)
{
    floe_rnode_t *n = p->n;
    if (!n) return skip(d, p);
    int64_t l;
    switch (p->t) {
    case FLOE_AVRO_NULL: return put_null(d, n, rep);
    case FLOE_AVRO_BOOLEAN: {
        if (d->off >= d->n || d->p[d->off] > 1) return floe_avro_in_corrupt(d, "bad boolean");
        uint8_t v = d->p[d->off++];
        return put_val(d, n, rep, &v, 1);
    }
    case FLOE_AVRO_INT:
    case FLOE_AVRO_LONG:
        if (floe_avro_in_long(d, &l)) return -1;
        if (p->t == FLOE_AVRO_INT && (l < INT32_MIN || l > INT32_MAX))
            return floe_avro_in_corrupt(d, "int out of range");
        switch (p->lt) {
        case FLOE_AVRO_LOGICAL_TIME_MILLIS: l *= 1000; break;
        case FLOE_AVRO_LOGICAL_TIMESTAMP_MILLIS:
        case FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MILLIS:
            if (l > INT64_MAX / 1000 || l < INT64_MIN / 1000)
                return floe_avro_in_corrupt(d, "timestamp-millis out of the microsecond range");
            l *= 1000;
            break;
        default: break;
        }
        if (n->kind == FLOE_TK_INT || n->kind == FLOE_TK_DATE) {
            int32_t v = (int32_t)l;
            return put_val(d, n, rep, &v, 4);
        }
        return put_val(d, n, rep, &l, 8);
    case FLOE_AVRO_FLOAT: {
        const uint8_t *b = NULL;
        if (floe_avro_in_fixed(d, 4, &b)) return -1;
        uint32_t u =
            (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        if (n->kind == FLOE_TK_FLOAT) return put_val(d, n, rep, &f, 4);
        double v = f;
        return put_val(d, n, rep, &v, 8);
    }
    case FLOE_AVRO_DOUBLE: {
        const uint8_t *b = NULL;
        if (floe_avro_in_fixed(d, 8, &b)) return -1;
        uint64_t u = 0;
        for (int i = 7; i >= 0; i--) u = u << 8 | b[i];
        double v;
        memcpy(&v, &u, 8);
        return put_val(d, n, rep, &v, 8);
    }
    case FLOE_AVRO_STRING:
    case FLOE_AVRO_BYTES:
    case FLOE_AVRO_FIXED: {
        const uint8_t *b = NULL;
        size_t len = floe_avro_schema_fixed_size(p->s);
        if (p->t == FLOE_AVRO_FIXED ? floe_avro_in_fixed(d, len, &b)
                                    : floe_avro_in_bytes(d, &b, &len))
            return -1;
        if (n->kind == FLOE_TK_DECIMAL) return put_decimal(d, p, rep, b, len);
        if (p->t == FLOE_AVRO_STRING) {
            if (n->kind == FLOE_TK_UUID) {
                uint8_t u[16];
                if (!uuid_parse(b, len, u))
                    return floe_avro_in_corrupt(d, "uuid string is not 8-4-4-4-12 hex");
                return put_bytes(d, n, rep, u, 16);
            }
            size_t bad;
            if (!floe_utf8_valid(b, len, &bad))
                return floe_avro_in_corrupt(d, "string is not UTF-8");
        }
        return put_bytes(d, n, rep, b, len);
    }
    case FLOE_AVRO_ENUM: {
        if (floe_avro_in_long(d, &l)) return -1;
        if (l < 0 || (uint64_t)l >= floe_avro_schema_symbol_count(p->s))
            return floe_avro_in_corrupt(d, "enum index out of range");
        const char *sym = floe_avro_schema_symbol(p->s, (size_t)l);
        return put_bytes(d, n, rep, sym, strlen(sym));
    }
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP: return blocks(d, p, rep);
    case FLOE_AVRO_UNION: {
        if (floe_avro_in_long(d, &l)) return -1;
        if (l < 0 || (uint64_t)l >= p->nkids)
            return floe_avro_in_corrupt(d, "union branch out of range");
        const plan_t *br = &p->kids[l];
        if ((int)l == p->null_branch) return put_null(d, n, rep);
        if (p->nullable) return value(d, br, rep);
        /* a struct of branches: this one set, the others null */
        for (size_t j = 0; j < n->nkids; j++)
            if (n->kids[j] != br->n && floe_rows_write_nulls(n->kids[j], n->def, rep) < 0)
                return floe_err_oom(d->err);
        return value(d, br, rep);
    }
    case FLOE_AVRO_RECORD:
        for (size_t i = 0; i < p->nkids; i++)
            if (value(d, &p->kids[i], rep)) return -1;
        for (size_t i = 0; i < p->nextra; i++)
            if (floe_rows_write_nulls(p->extra[i], n->def, rep) < 0) return floe_err_oom(d->err);
        return 0;
    }
    return floe_avro_in_corrupt(d, "unknown schema type");
}

/* ---- the entry point --------------------------------------------------- */

static entry_t *plan_for(floe_avro_shred_t *a, int32_t id, const floe_avro_schema_t *s,
                         floe_err_t *err)
{
    uint64_t shape = floe_rows_shape_version(a->r);
    entry_t *e = NULL;
    for (size_t i = 0; i < PLANS && !e; i++)
        if (a->e[i].used && a->e[i].id == id && a->e[i].s == s) e = &a->e[i];
    if (e && e->shape == shape) return e;
    if (!e) e = &a->e[a->next++ % PLANS];
    plan_clear(&e->root);
    e->used = false;
    bctx_t b = {a->r, id, err};
    if (bind_root(&b, &e->root, s)) {
        plan_clear(&e->root);
        return NULL;
    }
    e->used = true;
    e->id = id;
    e->s = s;
    e->shape = floe_rows_shape_version(a->r);
    return e;
}

int floe_avro_shred(floe_avro_shred_t *a, int32_t id, const floe_avro_schema_t *s, const uint8_t *p,
                    size_t n, floe_err_t *err)
{
    entry_t *e = plan_for(a, id, s, err);
    if (!e) return -1;
    dec_t d = {p, n, 0, NULL, err};
    const plan_t *root = &e->root;
    for (size_t i = 0; i < root->nkids; i++) {
        const plan_t *k = &root->kids[i];
        if (k->n) k->n->stamp = a->r->row_stamp; /* set: floe_rows_end leaves it */
        if (value(&d, k, 0)) return -1;
    }
    if (d.off != n) return floe_avro_in_corrupt(&d, "bytes left after the datum");
    return 0;
}
