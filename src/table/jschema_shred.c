/* JSON values typed by their JSON Schema -> columns in one pass
 * (jschema_shred.h). */
#include "table/jschema_shred.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/json_int.h"
#include "table/tstamp.h"

#define PLANS 8
#define MAX_SCHEMA_DEPTH 64

typedef enum mode {
    M_NULL = 1, /* null only: no column */
    M_LONG,
    M_DOUBLE,
    M_BOOL,
    M_STRING,
    M_DATE,
    M_TIME,
    M_TSTZ,
    M_JSON, /* any value, kept as its JSON text */
    M_STRUCT,
    M_MAP,
    M_LIST,
} mode_t_;

/* How one schema node's values reach the columns. */
typedef struct plan plan_t;
struct plan {
    mode_t_ m;
    bool nullable;
    floe_rnode_t *n; /* NULL for M_NULL */
    /* M_STRUCT: properties; M_LIST: the items; M_MAP: the values */
    plan_t *kids;
    size_t nkids;
    const char **names;
    size_t *name_lens;
    bool *required;
    bool closed;          /* additionalProperties: false */
    size_t nreq_other;    /* required names that are not properties */
    floe_rnode_t **extra; /* struct fields no property sets */
    size_t nextra;
};

typedef struct entry {
    bool used;
    int32_t id;
    const floe_jschema_t *s;
    uint64_t shape;
    bool spread; /* the root's properties are the table's columns */
    plan_t root;
} entry_t;

struct floe_jschema_shred {
    floe_rows_t *r;
    entry_t e[PLANS];
    size_t next;
    floe_buf_t key, text; /* scanner scratch, a string's text */
};

static void plan_clear(plan_t *p)
{
    for (size_t i = 0; i < p->nkids; i++) plan_clear(&p->kids[i]);
    free(p->kids);
    free(p->names);
    free(p->name_lens);
    free(p->required);
    free(p->extra);
    memset(p, 0, sizeof *p);
}

floe_jschema_shred_t *floe_jschema_shred_new(floe_rows_t *rows)
{
    floe_jschema_shred_t *j = calloc(1, sizeof *j);
    if (j) j->r = rows;
    return j;
}

void floe_jschema_shred_free(floe_jschema_shred_t *j)
{
    if (!j) return;
    for (size_t i = 0; i < PLANS; i++) plan_clear(&j->e[i].root);
    floe_buf_free(&j->key);
    floe_buf_free(&j->text);
    free(j);
}

/* ---- the plan: schema -> shape nodes ----------------------------------- */

typedef struct bctx {
    floe_rows_t *r;
    int32_t id;
    floe_err_t *err;
    const floe_jsnode_t *stack[MAX_SCHEMA_DEPTH]; /* the schemas being bound: recursion */
    int depth;
} bctx_t;

/* The dotted path of node n (and leaf under it, when not NULL). */
static const char *path_of(const floe_rnode_t *n, const char *leaf, char *buf, size_t size)
{
    floe_rows_path(n, buf, size);
    size_t at = strlen(buf);
    if (leaf && at + 1 < size) snprintf(buf + at, size - at, "%s%s", at ? "." : "", leaf);
    return buf;
}

static bool all_strings(const floe_jsnode_t *v)
{
    for (size_t i = 0; i < v->nenum; i++)
        if (v->enums[i][0] != '"' && strcmp(v->enums[i], "null")) return false;
    return true;
}

/* The mode of value node v (NULL: null only), or -1 with err naming the
 * field `what` for a schema without a column type. */
static int mode_of(bctx_t *b, const floe_jsnode_t *v, const char *what, mode_t_ *m)
{
    if (!v) {
        *m = M_NULL;
        return 0;
    }
    switch (v->kind) {
    case FLOE_JS_INTEGER: *m = M_LONG; return 0;
    case FLOE_JS_NUMBER: *m = M_DOUBLE; return 0;
    case FLOE_JS_BOOLEAN: *m = M_BOOL; return 0;
    case FLOE_JS_STRING:
        *m = !v->format                        ? M_STRING
             : !strcmp(v->format, "date")      ? M_DATE
             : !strcmp(v->format, "date-time") ? M_TSTZ
             : !strcmp(v->format, "time")      ? M_TIME
                                               : M_STRING;
        return 0;
    case FLOE_JS_ENUM: *m = all_strings(v) ? M_STRING : M_JSON; return 0;
    case FLOE_JS_ANY: *m = M_JSON; return 0;
    case FLOE_JS_OBJECT: *m = v->nprops ? M_STRUCT : v->additional ? M_MAP : M_JSON; return 0;
    case FLOE_JS_ARRAY: *m = v->items && !v->ntuple ? M_LIST : M_JSON; return 0;
    default: break;
    }
    return floe_err_set(b->err, FLOE_EINVAL,
                        "schema id %d: '%s' is %s of several types, which has no Iceberg column "
                        "type",
                        (int)b->id, what, floe_js_kind_name(v->kind));
}

static floe_tkind_t kind_of(mode_t_ m)
{
    switch (m) {
    case M_LONG: return FLOE_TK_LONG;
    case M_DOUBLE: return FLOE_TK_DOUBLE;
    case M_BOOL: return FLOE_TK_BOOL;
    case M_DATE: return FLOE_TK_DATE;
    case M_TIME: return FLOE_TK_TIME;
    case M_TSTZ: return FLOE_TK_TIMESTAMPTZ;
    case M_STRUCT: return FLOE_TK_STRUCT;
    case M_MAP: return FLOE_TK_MAP;
    case M_LIST: return FLOE_TK_LIST;
    default: return FLOE_TK_STRING;
    }
}

/* Whether existing node n holds values of mode m; 0 or -1 with err.  A
 * long column meeting a number widens to double as the JSON path's does
 * (table.json widening, docs/widening.md): in the buffer at once, or, for
 * a column the table holds, by the engine first (floe_rows_held: the
 * partition waits at this record). */
static int fit(bctx_t *b, floe_rnode_t *n, mode_t_ m)
{
    floe_tkind_t k = kind_of(m);
    if (n->kind == k) return 0;
    if (n->kind == FLOE_TK_INT && k == FLOE_TK_LONG)
        return floe_rows_promote(b->r, n, FLOE_TK_LONG, 0, b->err);
    if (n->kind == FLOE_TK_DOUBLE && k == FLOE_TK_LONG) return 0; /* written widened */
    char path[256];
    floe_rows_path(n, path, sizeof path);
    if (n->kind == FLOE_TK_LONG && k == FLOE_TK_DOUBLE) {
        if (!b->r->opts.widen_long_to_double || n->pinned || n->required) {
            if (n->pinned) b->r->widen_refused++;
            return floe_err_set(b->err, FLOE_EINVAL,
                                "schema id %d: field '%s' is long in the table but double in the "
                                "schema, and the column may not widen%s%s",
                                (int)b->id, path, n->pin_why ? ": " : "",
                                n->pin_why ? n->pin_why : "");
        }
        if (n->hold) {
            b->r->held = n->field_id;
            return floe_err_set(b->err, FLOE_EINVAL,
                                "schema id %d: field '%s' is long in the table but double in the "
                                "schema (the column must widen to double first)",
                                (int)b->id, path);
        }
        floe_rows_widen(b->r, n);
        return 0;
    }
    return floe_err_set(b->err, FLOE_EINVAL,
                        "schema id %d: field '%s' is %s in the table but %s in the schema, a "
                        "change Iceberg cannot make",
                        (int)b->id, path, floe_tkind_name(n->kind), floe_tkind_name(k));
}

static int push(bctx_t *b, const floe_jsnode_t *v, const char *name)
{
    for (int i = 0; i < b->depth; i++)
        if (b->stack[i] == v)
            return floe_err_set(b->err, FLOE_EINVAL,
                                "schema id %d: '%s' is recursive (through $ref), which has no "
                                "Iceberg column type",
                                (int)b->id, name);
    if (b->depth >= MAX_SCHEMA_DEPTH || b->depth > b->r->opts.max_depth)
        return floe_err_set(b->err, FLOE_ERANGE, "schema id %d nests deeper than %d", (int)b->id,
                            b->r->opts.max_depth);
    b->stack[b->depth++] = v;
    return 0;
}

static int make(bctx_t *b, const floe_jsnode_t *s, const char *name, floe_rnode_t **out);

static int make_kid(bctx_t *b, floe_rnode_t *n, const floe_jsnode_t *s, const char *name)
{
    floe_rnode_t *kid;
    if (make(b, s, name, &kid)) return -1;
    if (kid && floe_rnode_add_kid(n, kid) < 0) {
        floe_rnode_free(kid);
        return floe_err_oom(b->err);
    }
    return 0;
}

/* A fresh, optional node subtree `name` for schema s: *out, or NULL when s
 * makes no column (null only, a struct of nothing). */
static int make(bctx_t *b, const floe_jsnode_t *s, const char *name, floe_rnode_t **out)
{
    *out = NULL;
    const floe_jsnode_t *v = floe_jsnode_value(s);
    mode_t_ m;
    if (mode_of(b, v, name, &m)) return -1;
    if (m == M_NULL) return 0;
    if (push(b, v, name)) return -1;
    floe_rnode_t *n = floe_rnode_new(name, strlen(name), kind_of(m));
    int rc = n ? 0 : floe_err_oom(b->err);
    if (!rc && m == M_STRUCT)
        for (size_t i = 0; i < v->nprops && !rc; i++) rc = make_kid(b, n, v->props[i], v->names[i]);
    if (!rc && m == M_LIST) rc = make_kid(b, n, v->items, "element");
    if (!rc && m == M_MAP) {
        floe_rnode_t *k = floe_rnode_new("key", 3, FLOE_TK_STRING);
        if (!k || floe_rnode_add_kid(n, k) < 0) {
            floe_rnode_free(k);
            rc = floe_err_oom(b->err);
        } else {
            k->required = true;
            rc = make_kid(b, n, v->additional, "value");
            if (!rc && n->nkids < 2)
                rc = floe_err_set(b->err, FLOE_EINVAL,
                                  "schema id %d: '%s' is a map of nulls, which has no Iceberg "
                                  "column type",
                                  (int)b->id, name);
        }
    }
    if (!rc && m == M_LIST && n->nkids < 1)
        rc = floe_err_set(b->err, FLOE_EINVAL,
                          "schema id %d: '%s' is a list of nulls, which has no Iceberg column type",
                          (int)b->id, name);
    b->depth--;
    if (rc || (n->kind == FLOE_TK_STRUCT && n->nkids == 0)) {
        floe_rnode_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* The node of field `name` (schema s) under struct st: found (and
 * checked), or made and attached; NULL when s has no column. */
static int field_node(bctx_t *b, floe_rnode_t *st, const char *name, const floe_jsnode_t *s,
                      floe_rnode_t **out)
{
    *out = NULL;
    const floe_jsnode_t *v = floe_jsnode_value(s);
    floe_rnode_t *kid = floe_rows_child(st, name);
    if (kid && kid->sys)
        return floe_err_set(b->err, FLOE_EINVAL, "schema id %d: field name '%s' is reserved",
                            (int)b->id, name);
    mode_t_ m;
    if (mode_of(b, v, name, &m)) return -1;
    if (m == M_NULL) {
        *out = kid;
        return 0;
    }
    if (kid) {
        if (fit(b, kid, m)) return -1;
        *out = kid;
        return 0;
    }
    floe_rnode_t *sub;
    if (make(b, s, name, &sub)) return -1;
    if (!sub) return 0;
    if (floe_rows_attach(b->r, st, sub, b->err) < 0) return -1;
    *out = sub;
    return 0;
}

static int bind(bctx_t *b, plan_t *p, const floe_jsnode_t *s, floe_rnode_t *n);

static int bind_struct(bctx_t *b, plan_t *p, const floe_jsnode_t *v, floe_rnode_t *st)
{
    size_t np = v->nprops;
    p->closed = v->closed;
    p->nreq_other = v->nreq_other;
    p->nkids = np;
    if (np &&
        (!(p->kids = calloc(np, sizeof *p->kids)) || !(p->names = calloc(np, sizeof *p->names)) ||
         !(p->name_lens = calloc(np, sizeof *p->name_lens)) ||
         !(p->required = calloc(np, sizeof *p->required))))
        return floe_err_oom(b->err);
    for (size_t i = 0; i < np; i++) {
        floe_rnode_t *kid;
        p->names[i] = v->names[i];
        p->name_lens[i] = strlen(v->names[i]);
        p->required[i] = v->required[i];
        if (field_node(b, st, v->names[i], v->props[i], &kid) ||
            bind(b, &p->kids[i], v->props[i], kid))
            return -1;
    }
    if (!st->parent) return 0; /* the root: floe_rows_end fills the rest */
    if (st->nkids && !(p->extra = malloc(st->nkids * sizeof *p->extra)))
        return floe_err_oom(b->err);
    for (size_t j = 0; j < st->nkids; j++) {
        bool set = false;
        for (size_t i = 0; i < np && !set; i++) set = p->kids[i].n == st->kids[j];
        if (!set) p->extra[p->nextra++] = st->kids[j];
    }
    return 0;
}

static int bind(bctx_t *b, plan_t *p, const floe_jsnode_t *s, floe_rnode_t *n)
{
    const floe_jsnode_t *v = floe_jsnode_value(s);
    p->nullable = floe_jsnode_nullable(s);
    p->n = n;
    if (mode_of(b, v, n ? n->name : "value", &p->m)) return -1;
    if (!n || p->m == M_NULL) {
        p->m = M_NULL;
        p->n = NULL;
        return 0;
    }
    if (p->m == M_JSON || p->m == M_STRING || p->m == M_LONG || p->m == M_DOUBLE ||
        p->m == M_BOOL || p->m == M_DATE || p->m == M_TIME || p->m == M_TSTZ)
        return 0;
    if (push(b, v, n->name)) return -1;
    int rc;
    if (p->m == M_STRUCT) {
        rc = bind_struct(b, p, v, n);
    } else {
        const floe_jsnode_t *it = p->m == M_LIST ? v->items : v->additional;
        floe_rnode_t *e = n->kids[p->m == M_LIST ? 0 : 1];
        mode_t_ em;
        p->nkids = 1;
        rc = !(p->kids = calloc(1, sizeof *p->kids))           ? floe_err_oom(b->err)
             : mode_of(b, floe_jsnode_value(it), e->name, &em) ? -1
             : em != M_NULL && fit(b, e, em)                   ? -1
                                                               : bind(b, &p->kids[0], it, e);
    }
    b->depth--;
    return rc;
}

/* The top-level plan: an object with properties spreads over the root
 * (*spread), any other schema is the root's field `value`. */
static int bind_root(bctx_t *b, plan_t *p, const floe_jsnode_t *s, bool *spread)
{
    floe_rnode_t *root = floe_rows_root(b->r);
    const floe_jsnode_t *v = floe_jsnode_value(s);
    *spread = v && v->kind == FLOE_JS_OBJECT && v->nprops;
    if (*spread) {
        p->m = M_STRUCT;
        p->n = root;
        p->nullable = false;
        return bind_struct(b, p, v, root);
    }
    p->m = M_STRUCT;
    p->n = root;
    p->nkids = 1;
    static const char *const value_name[] = {"value"};
    static bool no[] = {false};
    floe_rnode_t *kid;
    if (!(p->kids = calloc(1, sizeof *p->kids)) || !(p->names = malloc(sizeof *p->names)) ||
        !(p->name_lens = malloc(sizeof *p->name_lens)) ||
        !(p->required = malloc(sizeof *p->required)))
        return floe_err_oom(b->err);
    p->names[0] = value_name[0];
    p->name_lens[0] = 5;
    p->required[0] = no[0];
    if (field_node(b, root, "value", s, &kid) || bind(b, &p->kids[0], s, kid)) return -1;
    return 0;
}

/* ---- shredding ------------------------------------------------------- */

typedef struct dctx {
    sh_t s;
    floe_jschema_shred_t *j;
    int32_t id;
} dctx_t;

/* The value does not match the schema: FLOE_ECORRUPT with where and why. */
static int mismatch(dctx_t *d, const floe_rnode_t *n, const char *leaf, const char *why)
{
    char path[256];
    path_of(n, leaf, path, sizeof path);
    return floe_err_set(d->s.err, FLOE_ECORRUPT,
                        "value does not match schema id %d: '%s' %s (byte %zu)", (int)d->id,
                        path[0] ? path : "value", why, (size_t)(d->s.p - d->s.start));
}

static inline int put_val(dctx_t *d, floe_rnode_t *n, int rep, const void *v, size_t w)
{
    return floe_rcol_put(n, rep, v, w, d->s.err);
}

static int put_bytes(dctx_t *d, floe_rnode_t *n, int rep, const void *p, size_t len)
{
    return floe_rcol_put_bytes(n, rep, p, len, d->s.err);
}

/* The string at s->p (at its quote) into j->text. */
static int string_text(dctx_t *d, const plan_t *p)
{
    if (d->s.p >= d->s.end || *d->s.p != '"') return mismatch(d, p->n, NULL, "is not a string");
    d->s.p++;
    floe_buf_reset(&d->j->text);
    return js_string_into(&d->s, &d->j->text) < 0 ? -1 : 0;
}

/* The text of the string at s->p (at its quote): borrowed from the input
 * when it has no escapes (the common case), else unescaped into j->text. */
static int string_slice(dctx_t *d, const plan_t *p, floe_buf_t *out)
{
    sh_t *s = &d->s;
    if (*s->p != '"') return mismatch(d, p->n, NULL, "is not a string");
    const uint8_t *q = js_plain_run(s->p + 1, s->end);
    if (q < s->end && *q == '"') {
        out->data = (uint8_t *)s->p + 1;
        out->len = (size_t)(q - s->p - 1);
        s->p = q + 1;
        return 0;
    }
    if (string_text(d, p)) return -1;
    *out = d->j->text;
    return 0;
}

/* RFC 3339 full-date, partial or full time, as microseconds of a day or
 * days since the epoch, through the date-time parser. */
static bool date_time_part(const floe_buf_t *t, bool date, int64_t *out)
{
    char buf[80];
    if (t->len > 48) return false;
    int64_t us;
    if (date) {
        if (t->len != 10) return false;
        snprintf(buf, sizeof buf, "%.*sT00:00:00Z", (int)t->len, (const char *)t->data);
        if (!floe_tstamp_parse((const uint8_t *)buf, strlen(buf), &us)) return false;
        *out = us / 86400000000LL;
        return true;
    }
    char last = t->len ? (char)t->data[t->len - 1] : 0;
    bool zoned = last == 'Z' || last == 'z' ||
                 (t->len > 6 && (t->data[t->len - 6] == '+' || t->data[t->len - 6] == '-'));
    snprintf(buf, sizeof buf, "1970-01-02T%.*s%s", (int)t->len, (const char *)t->data,
             zoned ? "" : "Z");
    if (!floe_tstamp_parse((const uint8_t *)buf, strlen(buf), &us)) return false;
    us %= 86400000000LL;
    if (us < 0) us += 86400000000LL;
    *out = us;
    return true;
}

static int value(dctx_t *d, const plan_t *p, int rep);

static int null_value(dctx_t *d, const plan_t *p, int rep)
{
    if (js_lit(&d->s, "null", 4) < 0) return -1;
    if (!p->nullable) return mismatch(d, p->n, NULL, "is null, which its schema does not allow");
    if (!p->n) return 0;
    return floe_rows_write_nulls(p->n, p->n->def - 1, rep) < 0 ? floe_err_oom(d->s.err) : 0;
}

static int list(dctx_t *d, const plan_t *p, int rep)
{
    floe_rnode_t *l = p->n, *e = l->kids[0];
    if (*d->s.p != '[') return mismatch(d, l, NULL, "is not an array");
    if (++d->s.depth > d->j->r->opts.max_depth)
        return floe_err_set(d->s.err, FLOE_ERANGE, "JSON nested deeper than %d",
                            d->j->r->opts.max_depth);
    d->s.p++;
    js_ws(&d->s);
    if (d->s.p < d->s.end && *d->s.p == ']') {
        d->s.p++;
        d->s.depth--;
        return floe_rows_write_nulls(e, l->def, rep) < 0 ? floe_err_oom(d->s.err) : 0;
    }
    for (int i = 0;; i++) {
        if (value(d, &p->kids[0], i ? e->rep : rep)) return -1;
        int k = js_next_item(&d->s, ']');
        if (k < 0) return -1;
        if (!k) break;
    }
    d->s.depth--;
    return 0;
}

/* An object: a struct's properties or a map's entries. */
static int object(dctx_t *d, const plan_t *p, int rep)
{
    floe_rnode_t *n = p->n;
    bool map = p->m == M_MAP;
    if (d->s.p >= d->s.end || *d->s.p != '{') return mismatch(d, n, NULL, "is not an object");
    if (++d->s.depth > d->j->r->opts.max_depth)
        return floe_err_set(d->s.err, FLOE_ERANGE, "JSON nested deeper than %d",
                            d->j->r->opts.max_depth);
    d->s.p++;
    js_ws(&d->s);
    uint8_t small[64], *seen = small;
    if (!map && p->nkids > sizeof small && !(seen = calloc(p->nkids, 1)))
        return floe_err_oom(d->s.err);
    if (!map) memset(seen, 0, p->nkids < sizeof small ? sizeof small : p->nkids);
    int rc = 0;
    size_t hint = 0, nentries = 0;
    bool empty = d->s.p < d->s.end && *d->s.p == '}';
    if (empty) d->s.p++;
    while (!empty) {
        floe_slice_t k;
        if (js_key(&d->s, &k) < 0) goto fail;
        if (map) {
            int r = nentries++ ? n->kids[0]->rep : rep;
            if (put_bytes(d, n->kids[0], r, k.ptr, k.len) || value(d, &p->kids[0], r)) goto fail;
        } else {
            size_t i = hint < p->nkids && p->name_lens[hint] == k.len &&
                               !memcmp(p->names[hint], k.ptr, k.len)
                           ? hint
                           : p->nkids;
            for (size_t x = 0; i == p->nkids && x < p->nkids; x++)
                if (p->name_lens[x] == k.len && !memcmp(p->names[x], k.ptr, k.len)) i = x;
            if (i == p->nkids) {
                if (p->closed) {
                    char leaf[128];
                    snprintf(leaf, sizeof leaf, "%.*s", (int)(k.len < 100 ? k.len : 100),
                             (const char *)k.ptr);
                    mismatch(d, n, leaf, "is not a property of the schema");
                    goto fail;
                }
                if (js_skip_value(&d->s) < 0) goto fail;
            } else {
                if (seen[i]) {
                    mismatch(d, n, p->names[i], "appears twice");
                    goto fail;
                }
                seen[i] = 1;
                hint = i + 1;
                if (p->kids[i].n && !n->parent) p->kids[i].n->stamp = d->j->r->row_stamp;
                if (value(d, &p->kids[i], rep)) goto fail;
            }
        }
        int more = js_next_item(&d->s, '}');
        if (more < 0) goto fail;
        if (!more) break;
    }
    if (map) {
        if (!nentries && floe_rows_write_nulls(n, n->def, rep) < 0) goto oom;
    } else {
        for (size_t i = 0; i < p->nkids; i++) {
            if (seen[i]) continue;
            if (p->required[i]) {
                mismatch(d, n, p->names[i], "is required and missing");
                goto fail;
            }
            floe_rnode_t *kn = p->kids[i].n;
            if (!kn) continue;
            if (!n->parent) kn->stamp = d->j->r->row_stamp;
            if (floe_rows_write_nulls(kn, kn->def - 1, rep) < 0) goto oom;
        }
        for (size_t i = 0; i < p->nextra; i++)
            if (floe_rows_write_nulls(p->extra[i], n->def, rep) < 0) goto oom;
    }
    d->s.depth--;
    goto out;
oom:
    floe_err_oom(d->s.err);
fail:
    rc = -1;
out:
    if (seen != small) free(seen);
    return rc;
}

static int value(dctx_t *d, const plan_t *p, int rep)
{
    sh_t *s = &d->s;
    js_ws(s);
    if (s->p >= s->end) return js_syntax(s, "expected a value");
    if (*s->p == 'n' && p->m != M_JSON) return null_value(d, p, rep);
    floe_rnode_t *n = p->n;
    bool is_int;
    int64_t iv;
    double dv;
    switch (p->m) {
    case M_NULL:
        if (js_skip_value(s) < 0) return -1;
        return mismatch(d, NULL, NULL, "is not null, the only value its schema allows");
    case M_LONG:
    case M_DOUBLE:
        if (*s->p != '-' && (*s->p < '0' || *s->p > '9'))
            return mismatch(d, n, NULL, "is not a number");
        if (js_number(s, &is_int, &iv, &dv) < 0) return -1;
        if (p->m == M_DOUBLE) {
            if (is_int) dv = (double)iv;
            return put_val(d, n, rep, &dv, 8);
        }
        if (!is_int) {
            if (!(dv == floor(dv) && dv >= -9223372036854775808.0 && dv < 9223372036854775808.0))
                return mismatch(d, n, NULL, "is not an integer");
            iv = (int64_t)dv;
        }
        if (n->kind == FLOE_TK_DOUBLE) { /* the column widened */
            dv = (double)iv;
            return put_val(d, n, rep, &dv, 8);
        }
        return put_val(d, n, rep, &iv, 8);
    case M_BOOL: {
        uint8_t v = *s->p == 't';
        if (*s->p != 't' && *s->p != 'f') return mismatch(d, n, NULL, "is not a boolean");
        if (v ? js_lit(s, "true", 4) < 0 : js_lit(s, "false", 5) < 0) return -1;
        return put_val(d, n, rep, &v, 1);
    }
    case M_STRING: { /* unescaped straight into the column */
        if (*s->p != '"') return mismatch(d, n, NULL, "is not a string");
        s->p++;
        floe_rcol_t *col = n->col;
        if (js_string_into(s, &col->bytes) < 0) return -1;
        if (col->bytes.len > UINT32_MAX)
            return floe_err_set(s->err, FLOE_ERANGE, "column '%s' over 4 GiB", n->name);
        uint32_t end = (uint32_t)col->bytes.len;
        return put_val(d, n, rep, &end, 4);
    }
    case M_DATE:
    case M_TIME:
    case M_TSTZ: {
        floe_buf_t t = FLOE_BUF_INIT; /* borrowed: data and len only */
        if (string_slice(d, p, &t)) return -1;
        int64_t v;
        bool ok = p->m == M_TSTZ ? floe_tstamp_parse(t.data, t.len, &v)
                                 : date_time_part(&t, p->m == M_DATE, &v);
        if (!ok)
            return mismatch(d, n, NULL,
                            p->m == M_DATE   ? "is not an RFC 3339 date (format date)"
                            : p->m == M_TIME ? "is not an RFC 3339 time (format time)"
                                             : "is not an RFC 3339 date-time (format date-time)");
        if (p->m == M_DATE) {
            int32_t days = (int32_t)v;
            return put_val(d, n, rep, &days, 4);
        }
        return put_val(d, n, rep, &v, 8);
    }
    case M_JSON: {
        const uint8_t *at = s->p;
        if (*at == 'n') {
            if (js_lit(s, "null", 4) < 0) return -1;
            return floe_rows_write_nulls(n, n->def - 1, rep) < 0 ? floe_err_oom(s->err) : 0;
        }
        if (js_skip_value(s) < 0) return -1;
        return put_bytes(d, n, rep, at, (size_t)(s->p - at));
    }
    case M_STRUCT:
    case M_MAP: return object(d, p, rep);
    case M_LIST: return list(d, p, rep);
    }
    return mismatch(d, n, NULL, "has no plan");
}

/* ---- the entry point --------------------------------------------------- */

static entry_t *plan_for(floe_jschema_shred_t *j, int32_t id, const floe_jschema_t *s,
                         floe_err_t *err)
{
    uint64_t shape = floe_rows_shape_version(j->r);
    entry_t *e = NULL;
    for (size_t i = 0; i < PLANS && !e; i++)
        if (j->e[i].used && j->e[i].id == id && j->e[i].s == s) e = &j->e[i];
    if (e && e->shape == shape) return e;
    if (!e) e = &j->e[j->next++ % PLANS];
    plan_clear(&e->root);
    e->used = false;
    bctx_t b = {.r = j->r, .id = id, .err = err};
    if (bind_root(&b, &e->root, floe_jschema_root(s), &e->spread)) {
        plan_clear(&e->root);
        return NULL;
    }
    e->used = true;
    e->id = id;
    e->s = s;
    e->shape = floe_rows_shape_version(j->r);
    return e;
}

int floe_jschema_shred(floe_jschema_shred_t *j, int32_t id, const floe_jschema_t *s,
                       const uint8_t *p, size_t n, floe_err_t *err)
{
    entry_t *e = plan_for(j, id, s, err);
    if (!e) return -1;
    dctx_t d = {.s = {.r = j->r, .start = p, .p = p, .end = p + n, .err = err}, .j = j, .id = id};
    d.s.key = j->key;
    const plan_t *root = &e->root;
    int rc;
    js_ws(&d.s);
    if (e->spread) {
        rc = d.s.p < d.s.end && *d.s.p == 'n' ? mismatch(&d, NULL, NULL, "is null")
                                              : object(&d, root, 0);
    } else {
        if (root->kids[0].n) root->kids[0].n->stamp = j->r->row_stamp;
        rc = value(&d, &root->kids[0], 0);
    }
    j->key = d.s.key; /* keep the scratch it grew */
    if (rc) return -1;
    js_ws(&d.s);
    if (d.s.p != d.s.end) return js_syntax(&d.s, "bytes left after the value");
    return 0;
}
