#include "table/schema_map.h"

#include <stdlib.h>
#include <string.h>

#include "table/rows_int.h"

static int ice_kind(floe_tkind_t k, floe_ice_kind_t *out)
{
    switch (k) {
    case FLOE_TK_BOOL: *out = FLOE_ICE_BOOLEAN; return 0;
    case FLOE_TK_INT: *out = FLOE_ICE_INT; return 0;
    case FLOE_TK_LONG: *out = FLOE_ICE_LONG; return 0;
    case FLOE_TK_DOUBLE: *out = FLOE_ICE_DOUBLE; return 0;
    case FLOE_TK_STRING: *out = FLOE_ICE_STRING; return 0;
    case FLOE_TK_BINARY: *out = FLOE_ICE_BINARY; return 0;
    case FLOE_TK_TIMESTAMPTZ: *out = FLOE_ICE_TIMESTAMPTZ; return 0;
    case FLOE_TK_STRUCT: *out = FLOE_ICE_STRUCT; return 0;
    case FLOE_TK_LIST: *out = FLOE_ICE_LIST; return 0;
    case FLOE_TK_MAP: *out = FLOE_ICE_MAP; return 0;
    case FLOE_TK_FLOAT: *out = FLOE_ICE_FLOAT; return 0;
    case FLOE_TK_DATE: *out = FLOE_ICE_DATE; return 0;
    case FLOE_TK_TIME: *out = FLOE_ICE_TIME; return 0;
    case FLOE_TK_TIMESTAMP: *out = FLOE_ICE_TIMESTAMP; return 0;
    case FLOE_TK_DECIMAL: *out = FLOE_ICE_DECIMAL; return 0;
    case FLOE_TK_UUID: *out = FLOE_ICE_UUID; return 0;
    case FLOE_TK_FIXED: *out = FLOE_ICE_FIXED; return 0;
    }
    return -1;
}

int floe_tschema_tkind(floe_ice_kind_t k, floe_tkind_t *out)
{
    switch (k) {
    case FLOE_ICE_BOOLEAN: *out = FLOE_TK_BOOL; return 0;
    case FLOE_ICE_INT: *out = FLOE_TK_INT; return 0;
    case FLOE_ICE_LONG: *out = FLOE_TK_LONG; return 0;
    case FLOE_ICE_DOUBLE: *out = FLOE_TK_DOUBLE; return 0;
    case FLOE_ICE_STRING: *out = FLOE_TK_STRING; return 0;
    case FLOE_ICE_BINARY: *out = FLOE_TK_BINARY; return 0;
    case FLOE_ICE_TIMESTAMPTZ: *out = FLOE_TK_TIMESTAMPTZ; return 0;
    case FLOE_ICE_STRUCT: *out = FLOE_TK_STRUCT; return 0;
    case FLOE_ICE_LIST: *out = FLOE_TK_LIST; return 0;
    case FLOE_ICE_MAP: *out = FLOE_TK_MAP; return 0;
    case FLOE_ICE_FLOAT: *out = FLOE_TK_FLOAT; return 0;
    case FLOE_ICE_DATE: *out = FLOE_TK_DATE; return 0;
    case FLOE_ICE_TIME: *out = FLOE_TK_TIME; return 0;
    case FLOE_ICE_TIMESTAMP: *out = FLOE_TK_TIMESTAMP; return 0;
    case FLOE_ICE_DECIMAL: *out = FLOE_TK_DECIMAL; return 0;
    case FLOE_ICE_UUID: *out = FLOE_TK_UUID; return 0;
    case FLOE_ICE_FIXED: *out = FLOE_TK_FIXED; return 0;
    default: return -1;
    }
}

/* ---- seeding: Iceberg type -> shape nodes ---------------------------- */

/* A shape subtree for field f, ids included; NULL with *err. */
static floe_rnode_t *node_from_field(const floe_ice_field_t *f, floe_err_t *err)
{
    floe_tkind_t k;
    if (floe_tschema_tkind(f->type->kind, &k) < 0) {
        char tn[64];
        floe_err_set(err, FLOE_EUNSUPPORTED,
                     "column '%s' has type %s, which floe's record converters do not write",
                     f->name, floe_ice_type_name(f->type, tn, sizeof tn));
        return NULL;
    }
    floe_rnode_t *n = floe_rnode_new(f->name, strlen(f->name), k);
    if (!n) {
        floe_err_oom(err);
        return NULL;
    }
    n->required = f->required;
    n->field_id = f->id;
    n->precision = f->type->precision;
    n->scale = f->type->scale;
    n->length = f->type->length;
    for (size_t i = 0; i < f->type->nfields; i++) {
        floe_rnode_t *kid = node_from_field(&f->type->fields[i], err);
        if (!kid || floe_rnode_add_kid(n, kid) < 0) {
            if (kid) floe_err_oom(err);
            floe_rnode_free(kid);
            floe_rnode_free(n);
            return NULL;
        }
    }
    return n;
}

/* A long node where the table has a double (another partition widened
 * the column): the buffer widens too, its values converted. */
static void widen_node(floe_rows_t *r, floe_rnode_t *n, const floe_ice_type_t *t)
{
    if (n->kind == FLOE_TK_LONG && t->kind == FLOE_ICE_DOUBLE) floe_rows_widen(r, n);
    /* a promotion Iceberg makes in place (int -> long, float -> double,
     * a wider decimal) that the table already made */
    floe_err_t ignore = {0};
    if ((n->kind == FLOE_TK_INT && t->kind == FLOE_ICE_LONG) ||
        (n->kind == FLOE_TK_FLOAT && t->kind == FLOE_ICE_DOUBLE))
        (void)floe_rows_promote(r, n, t->kind == FLOE_ICE_LONG ? FLOE_TK_LONG : FLOE_TK_DOUBLE, 0,
                                &ignore);
    if (n->kind == FLOE_TK_DECIMAL && t->kind == FLOE_ICE_DECIMAL && t->scale == n->scale &&
        t->precision > n->precision)
        (void)floe_rows_promote(r, n, FLOE_TK_DECIMAL, t->precision, &ignore);
}

/* The same for the element of a list and the value of a map. */
static void widen_kids(floe_rows_t *r, floe_rnode_t *n, const floe_ice_type_t *t)
{
    widen_node(r, n, t);
    if ((n->kind == FLOE_TK_LIST && t->kind == FLOE_ICE_LIST) ||
        (n->kind == FLOE_TK_MAP && t->kind == FLOE_ICE_MAP))
        for (size_t i = 0; i < n->nkids && i < t->nfields; i++)
            widen_kids(r, n->kids[i], t->fields[i].type);
}

/* Seed the fields of struct type t into shape struct s. */
static int seed_struct(floe_rows_t *r, floe_rnode_t *s, const floe_ice_type_t *t, floe_err_t *err)
{
    for (size_t i = 0; i < t->nfields; i++) {
        const floe_ice_field_t *f = &t->fields[i];
        floe_rnode_t *have = floe_rows_child(s, f->name);
        if (have) {
            if (have->kind == FLOE_TK_STRUCT && f->type->kind == FLOE_ICE_STRUCT &&
                seed_struct(r, have, f->type, err) < 0)
                return -1;
            widen_kids(r, have, f->type);
            continue; /* kinds are checked by sync */
        }
        floe_rnode_t *n = node_from_field(f, err);
        if (!n || floe_rows_attach(r, s, n, err) < 0) return -1;
    }
    return 0;
}

int floe_tschema_seed(floe_rows_t *rows, const floe_ice_schema_t *schema, floe_err_t *err)
{
    return seed_struct(rows, floe_rows_root(rows), schema->root, err);
}

/* ---- syncing: shape nodes -> Iceberg type ----------------------------- */

/* An Iceberg type for shape node n with fresh ids for everything below n
 * (n's own id is the caller's business).  NULL with *err. */
static floe_ice_type_t *type_from_node(floe_rnode_t *n, int32_t *last, floe_err_t *err)
{
    floe_ice_kind_t k;
    if (ice_kind(n->kind, &k) < 0) {
        floe_err_set(err, FLOE_EINVAL, "field '%s' has no Iceberg type", n->name);
        return NULL;
    }
    floe_ice_type_t *t = NULL;
    if (k == FLOE_ICE_DECIMAL) {
        t = floe_ice_type_decimal(n->precision, n->scale);
    } else if (k == FLOE_ICE_FIXED) {
        t = floe_ice_type_fixed(n->length);
    } else if (floe_ice_kind_is_primitive(k)) {
        t = floe_ice_type_prim(k);
    } else if (k == FLOE_ICE_STRUCT) {
        if (!(t = floe_ice_type_struct())) goto oom;
        for (size_t i = 0; i < n->nkids; i++) n->kids[i]->field_id = ++*last;
        for (size_t i = 0; i < n->nkids; i++) {
            floe_rnode_t *kid = n->kids[i];
            floe_ice_type_t *kt = type_from_node(kid, last, err);
            if (!kt) {
                floe_ice_type_free(t);
                return NULL;
            }
            bool req = kid->required || (kid->schema_non_null && !kid->schema_nullable);
            if (floe_ice_struct_add(t, kid->field_id, kid->name, req, kt, NULL) < 0) {
                floe_ice_type_free(t);
                goto oom;
            }
        }
        return t;
    } else if (k == FLOE_ICE_LIST) {
        floe_rnode_t *e = n->kids[0];
        e->field_id = ++*last;
        floe_ice_type_t *et = type_from_node(e, last, err);
        if (!et) return NULL;
        t = floe_ice_type_list(e->field_id, e->required, et);
    } else {
        floe_rnode_t *kn = n->kids[0], *vn = n->kids[1];
        kn->field_id = ++*last;
        vn->field_id = ++*last;
        floe_ice_type_t *kt = type_from_node(kn, last, err);
        if (!kt) return NULL;
        floe_ice_type_t *vt = type_from_node(vn, last, err);
        if (!vt) {
            floe_ice_type_free(kt);
            return NULL;
        }
        t = floe_ice_type_map(kn->field_id, kt, vn->field_id, vn->required, vt);
    }
    if (t) return t;
oom:
    floe_err_oom(err);
    return NULL;
}

static int sync_node(floe_rows_t *r, floe_rnode_t *n, floe_ice_type_t *t, int32_t *last,
                     bool *changed, bool fresh, floe_err_t *err);

/* Field f of the table is long where the records (kid) now hold doubles.
 * Iceberg cannot promote long to double in place, so f becomes a new,
 * optional double field with a fresh id at the same place (the engine
 * rewrites the files that hold the old one).  A required field keeps its
 * type: refused. */
static int widen_field(floe_ice_field_t *f, floe_rnode_t *kid, int32_t *last, bool *changed,
                       floe_err_t *err)
{
    if (f->required)
        return floe_err_set(err, FLOE_EINVAL,
                            "field '%s' is a required long in the table: it cannot become a double",
                            kid->name);
    floe_ice_type_t *d = floe_ice_type_prim(FLOE_ICE_DOUBLE);
    if (!d) return floe_err_oom(err);
    floe_ice_type_free(f->type);
    f->type = d;
    f->id = ++*last;
    f->required = false;
    kid->field_id = f->id;
    *changed = true;
    return 0;
}

/* Kind check of shape node kid against table field f: a long buffer node
 * under a double field widens; a double node over a long field widens the
 * field.  1 when the kinds now agree, 0 when they cannot. */
static int reconcile(floe_rows_t *r, floe_ice_field_t *f, floe_rnode_t *kid, int32_t *last,
                     bool *changed, floe_err_t *err)
{
    floe_ice_kind_t want;
    widen_node(r, kid, f->type);
    if (ice_kind(kid->kind, &want) < 0) return 0;
    if (want == FLOE_ICE_DOUBLE && f->type->kind == FLOE_ICE_LONG)
        return widen_field(f, kid, last, changed, err) < 0 ? -1 : 1;
    floe_ice_type_t *ft = f->type;
    /* Iceberg's in-place promotions: the field keeps its id */
    if ((want == FLOE_ICE_LONG && ft->kind == FLOE_ICE_INT) ||
        (want == FLOE_ICE_DOUBLE && ft->kind == FLOE_ICE_FLOAT) ||
        (want == FLOE_ICE_DECIMAL && ft->kind == FLOE_ICE_DECIMAL && kid->scale == ft->scale &&
         kid->precision > ft->precision)) {
        ft->kind = want;
        ft->precision = want == FLOE_ICE_DECIMAL ? kid->precision : 0;
        *changed = true;
        return 1;
    }
    if (want != ft->kind) return 0;
    if (want == FLOE_ICE_DECIMAL) return kid->scale == ft->scale && kid->precision == ft->precision;
    if (want == FLOE_ICE_FIXED) return kid->length == ft->length;
    return 1;
}

/* Shape struct s against Iceberg struct t. */
static int sync_struct(floe_rows_t *r, floe_rnode_t *s, floe_ice_type_t *t, int32_t *last,
                       bool *changed, bool fresh, floe_err_t *err)
{
    for (size_t i = 0; i < s->nkids; i++) {
        floe_rnode_t *kid = s->kids[i];
        floe_ice_field_t *f = NULL;
        for (size_t j = 0; j < t->nfields && !f; j++)
            if (strcmp(t->fields[j].name, kid->name) == 0) f = &t->fields[j];
        if (!f) {
            kid->field_id = ++*last;
            floe_ice_type_t *kt = type_from_node(kid, last, err);
            if (!kt) return -1;
            /* a field the schema says is never null is required while the
             * table holds no data; Iceberg adds only optional ones after */
            bool req = kid->required || (fresh && kid->schema_non_null && !kid->schema_nullable);
            if (floe_ice_struct_add(t, kid->field_id, kid->name, req, kt, NULL) < 0)
                return floe_err_oom(err);
            *changed = true;
            continue;
        }
        int ok = reconcile(r, f, kid, last, changed, err);
        if (ok < 0) return -1;
        if (!ok) {
            char tn[64];
            return floe_err_set(
                err, FLOE_EINVAL, "field '%s' is %s in the table but %s in the records", kid->name,
                floe_ice_type_name(f->type, tn, sizeof tn), floe_tkind_name(kid->kind));
        }
        if (f->required && !kid->required && !kid->no_nulls && kid->schema_nullable) {
            f->required = false; /* a schema version allows null now */
            *changed = true;
        } else if (f->required && !kid->required && !kid->no_nulls && !kid->schema_non_null) {
            return floe_err_set(err, FLOE_EINVAL,
                                "field '%s' is required in the table but optional in the records",
                                kid->name);
        }
        kid->field_id = f->id;
        if (sync_node(r, kid, f->type, last, changed, fresh, err) < 0) return -1;
    }
    return 0;
}

static int sync_node(floe_rows_t *r, floe_rnode_t *n, floe_ice_type_t *t, int32_t *last,
                     bool *changed, bool fresh, floe_err_t *err)
{
    if (n->kind == FLOE_TK_STRUCT) return sync_struct(r, n, t, last, changed, fresh, err);
    /* list element, map key and value: same ids, same kinds */
    for (size_t i = 0; i < n->nkids; i++) {
        floe_rnode_t *kid = n->kids[i];
        floe_ice_field_t *f = &t->fields[i];
        int ok = reconcile(r, f, kid, last, changed, err);
        if (ok < 0) return -1;
        if (!ok) {
            char tn[64];
            return floe_err_set(
                err, FLOE_EINVAL, "elements of '%s' are %s in the table but %s in the records",
                n->name, floe_ice_type_name(f->type, tn, sizeof tn), floe_tkind_name(kid->kind));
        }
        kid->field_id = f->id;
        if (sync_node(r, kid, f->type, last, changed, fresh, err) < 0) return -1;
    }
    return 0;
}

int floe_tschema_merge(floe_rows_t *rows, floe_ice_schema_t *schema, int32_t *last_column_id,
                       bool fresh, bool *changed, floe_err_t *err)
{
    *changed = false;
    return sync_struct(rows, floe_rows_root(rows), schema->root, last_column_id, changed, fresh,
                       err);
}

/* ---- widenings between two schemas ------------------------------------ */

static int push_widen(floe_twiden_t **out, size_t *n, int32_t from, int32_t to)
{
    floe_twiden_t *v = realloc(*out, (*n + 1) * sizeof *v);
    if (!v) return -1;
    v[*n] = (floe_twiden_t){from, to};
    *out = v;
    (*n)++;
    return 0;
}

static int widened_type(const floe_ice_type_t *a, const floe_ice_type_t *b, floe_twiden_t **out,
                        size_t *n);

static int widened_field(const floe_ice_field_t *fa, const floe_ice_field_t *fb,
                         floe_twiden_t **out, size_t *n)
{
    if (fa->type->kind == FLOE_ICE_LONG && fb->type->kind == FLOE_ICE_DOUBLE && fa->id != fb->id)
        return push_widen(out, n, fa->id, fb->id);
    if (fa->type->kind != fb->type->kind) return 0;
    return widened_type(fa->type, fb->type, out, n);
}

static int widened_type(const floe_ice_type_t *a, const floe_ice_type_t *b, floe_twiden_t **out,
                        size_t *n)
{
    if (a->kind == FLOE_ICE_STRUCT) {
        for (size_t i = 0; i < a->nfields; i++)
            for (size_t j = 0; j < b->nfields; j++)
                if (!strcmp(a->fields[i].name, b->fields[j].name)) {
                    if (widened_field(&a->fields[i], &b->fields[j], out, n) < 0) return -1;
                    break;
                }
        return 0;
    }
    if (a->kind == FLOE_ICE_LIST || a->kind == FLOE_ICE_MAP)
        for (size_t i = 0; i < a->nfields && i < b->nfields; i++)
            if (widened_field(&a->fields[i], &b->fields[i], out, n) < 0) return -1;
    return 0;
}

int floe_tschema_widened(const floe_ice_schema_t *before, const floe_ice_schema_t *after,
                         floe_twiden_t **out, size_t *n)
{
    return widened_type(before->root, after->root, out, n);
}

int floe_tschema_apply_widened(floe_ice_schema_t *schema, const floe_twiden_t *w, size_t n,
                               floe_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        floe_ice_field_t *f = (floe_ice_field_t *)floe_ice_schema_find(schema, w[i].from);
        if (!f || f->type->kind != FLOE_ICE_LONG) continue;
        floe_ice_type_t *d = floe_ice_type_prim(FLOE_ICE_DOUBLE);
        if (!d) return floe_err_oom(err);
        floe_ice_type_free(f->type);
        f->type = d;
        f->id = w[i].to;
        f->required = false;
    }
    return 0;
}
