/* JSON Schema compatibility for the registry (registry.h), by the rules of
 * the Confluent registry's JSON Schema provider: the writer's schema (the
 * "original") is compared with the reader's (the "update"), and every
 * difference is either one the reader takes (it accepts all the writer
 * wrote) or an incompatibility:
 *
 *   types     integer -> number extends (ok), number -> integer narrows,
 *             any other change of type is incompatible; a reader of
 *             true/{} reads anything, false is read by anything;
 *   bounds    maximum/maxLength/maxItems/maxProperties added or lowered,
 *             minimum/minLength/minItems/minProperties added or raised,
 *             pattern added or changed, multipleOf added or not a divisor
 *             of the old one, uniqueItems added: incompatible; removing
 *             or relaxing them is fine;
 *   objects   a property added while the writer's content model is open
 *             (no additionalProperties, no patternProperties) must accept
 *             anything; added to a closed or partially open model it must
 *             be covered by the model, and be optional or have a default;
 *             a property removed is fine while the reader's model is open,
 *             else it must be covered by the reader's additionalProperties;
 *             required added without a default, additionalProperties
 *             removed (false) or narrowed (a schema where there was none):
 *             incompatible;
 *   enums     values added: fine; removed or changed: incompatible;
 *   anyOf/oneOf/allOf  a writer that matches one branch of the reader's
 *             anyOf/oneOf is read; between combinations of the same kind,
 *             every branch of the smaller side must pair with a compatible
 *             branch of the other; allOf/oneOf -> anyOf extends, anyOf ->
 *             oneOf only for one branch; branches added to anyOf/oneOf or
 *             removed from allOf: fine, the reverse: incompatible;
 *   not       compatible when the reader's negated schema reads no more
 *             than the writer's did. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "registry/registry.h"

#define MAX_DEPTH 64

typedef struct ctx {
    floe_buf_t *msgs;
    int nproblems;
    const floe_jsnode_t *stack_o[MAX_DEPTH], *stack_u[MAX_DEPTH];
    int depth;
} ctx_t;

static void problem(ctx_t *c, const char *type, const char *path, const char *desc)
{
    c->nproblems++;
    if (c->msgs)
        floe_buf_printf(c->msgs, "{errorType:'%s', description:'%s', path:'#%s'}\n", type, desc,
                        path);
}

static bool compare(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path);

/* A silent trial: whether u reads what o accepts. */
static bool fits(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u)
{
    ctx_t t = *c;
    t.msgs = NULL;
    t.nproblems = 0;
    return compare(&t, o, u, "") && t.nproblems == 0;
}

/* A bound: added, or (an upper one) lowered, or (a lower one) raised, is
 * incompatible. */
static void bound(ctx_t *c, bool is_upper, bool oset, double ov, bool uset, double uv,
                  const char *kw, const char *path)
{
    char p[600], d[128];
    snprintf(p, sizeof p, "%s/%s", path, kw);
    if (uset && !oset) {
        snprintf(d, sizeof d, "'%s' was added", kw);
        problem(c, "BOUND_ADDED", p, d);
    } else if (uset && oset && (is_upper ? uv < ov : uv > ov)) {
        snprintf(d, sizeof d, "'%s' was %s", kw, is_upper ? "lowered" : "raised");
        problem(c, "BOUND_NARROWED", p, d);
    }
}

#define upper(c, os, ov, us, uv, kw, path) bound(c, true, os, ov, us, uv, kw, path)
#define lower(c, os, ov, us, uv, kw, path) bound(c, false, os, ov, us, uv, kw, path)

static void counts(ctx_t *c, int64_t omin, int64_t umin, int64_t omax, int64_t umax,
                   const char *minkw, const char *maxkw, const char *path)
{
    lower(c, omin >= 0, (double)omin, umin >= 0, (double)umin, minkw, path);
    upper(c, omax >= 0, (double)omax, umax >= 0, (double)umax, maxkw, path);
}

static void numbers(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    upper(c, o->max.set, o->max.v, u->max.set, u->max.v, "maximum", path);
    lower(c, o->min.set, o->min.v, u->min.set, u->min.v, "minimum", path);
    upper(c, o->xmax.set, o->xmax.v, u->xmax.set, u->xmax.v, "exclusiveMaximum", path);
    lower(c, o->xmin.set, o->xmin.v, u->xmin.set, u->xmin.v, "exclusiveMinimum", path);
    if (u->multiple.set && (!o->multiple.set || fmod(o->multiple.v, u->multiple.v) != 0))
        problem(c, "MULTIPLE_OF_CHANGED", path,
                "'multipleOf' was added or is not a divisor of the old one");
    if (o->kind == FLOE_JS_NUMBER && u->kind == FLOE_JS_INTEGER)
        problem(c, "TYPE_NARROWED", path, "number became integer");
}

static void strings(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    counts(c, o->min_len, u->min_len, o->max_len, u->max_len, "minLength", "maxLength", path);
    if (u->pattern && (!o->pattern || strcmp(o->pattern, u->pattern)))
        problem(c, o->pattern ? "PATTERN_CHANGED" : "PATTERN_ADDED", path,
                "'pattern' was added or changed");
}

static bool has_enum(const floe_jsnode_t *n, const char *v)
{
    for (size_t i = 0; i < n->nenum; i++)
        if (!strcmp(n->enums[i], v)) return true;
    return false;
}

static void enums(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    for (size_t i = 0; i < o->nenum; i++)
        if (!has_enum(u, o->enums[i])) {
            char d[300];
            snprintf(d, sizeof d, "enum value %.200s was removed", o->enums[i]);
            problem(c, "ENUM_ARRAY_NARROWED", path, d);
        }
}

/* Whether object s's content model is open: any other property is
 * allowed, with any value. */
static bool open_model(const floe_jsnode_t *s)
{
    return !s->pattern_props && !s->additional && !s->closed;
}

static int prop_index(const floe_jsnode_t *s, const char *name)
{
    for (size_t i = 0; i < s->nprops; i++)
        if (!strcmp(s->names[i], name)) return (int)i;
    return -1;
}

static void objects(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    char p[600];
    for (size_t i = 0; i < o->nprops; i++) {
        snprintf(p, sizeof p, "%s/properties/%s", path, o->names[i]);
        int k = prop_index(u, o->names[i]);
        if (k >= 0) {
            if (!o->required[i] && u->required[k] && !u->props[k]->has_default)
                problem(c, "REQUIRED_ATTRIBUTE_ADDED", p,
                        "the property became required without a default");
            compare(c, o->props[i], u->props[k], p);
        } else if (!open_model(u)) {
            if (u->additional) {
                if (!fits(c, o->props[i], u->additional))
                    problem(c, "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", p,
                            "the property was removed and additionalProperties does not read it");
            } else if (o->props[i]->kind != FLOE_JS_NONE && !u->pattern_props) {
                problem(c, "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", p,
                        "the property was removed from a closed content model");
            }
        }
    }
    for (size_t k = 0; k < u->nprops; k++) {
        if (prop_index(o, u->names[k]) >= 0) continue;
        snprintf(p, sizeof p, "%s/properties/%s", path, u->names[k]);
        if (open_model(o)) {
            if (u->props[k]->kind != FLOE_JS_ANY)
                problem(c, "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", p,
                        "the property was added while the old content model was open");
            continue;
        }
        if (o->additional && !fits(c, o->additional, u->props[k]))
            problem(c, "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", p,
                    "the property was added and does not read the old additionalProperties");
        if (u->required[k] && !u->props[k]->has_default)
            problem(c, "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", p,
                    "a required property without a default was added");
    }
    snprintf(p, sizeof p, "%s/additionalProperties", path);
    if (o->closed != u->closed) {
        if (u->closed)
            problem(c, "ADDITIONAL_PROPERTIES_REMOVED", p, "additional properties were allowed");
    } else if (!o->additional && u->additional) {
        problem(c, "ADDITIONAL_PROPERTIES_NARROWED", p,
                "additionalProperties became a schema where any value was allowed");
    } else if (o->additional && u->additional) {
        compare(c, o->additional, u->additional, p);
    }
    counts(c, o->min_props, u->min_props, o->max_props, u->max_props, "minProperties",
           "maxProperties", path);
}

static void arrays(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    char p[600];
    snprintf(p, sizeof p, "%s/items", path);
    if (u->items && !o->items && u->items->kind != FLOE_JS_ANY)
        problem(c, "SCHEMA_ADDED", p, "items got a schema where any item was allowed");
    else if (u->items && o->items)
        compare(c, o->items, u->items, p);
    size_t n = o->ntuple < u->ntuple ? o->ntuple : u->ntuple;
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/items/%zu", path, i);
        compare(c, o->tuple[i], u->tuple[i], p);
    }
    for (size_t i = n; i < u->ntuple; i++)
        if (u->tuple[i]->kind != FLOE_JS_ANY) {
            snprintf(p, sizeof p, "%s/items/%zu", path, i);
            problem(c, "ITEM_ADDED_TO_OPEN_CONTENT_MODEL", p,
                    "a positional item was added while any item was allowed there");
        }
    counts(c, o->min_items, u->min_items, o->max_items, u->max_items, "minItems", "maxItems", path);
    if (u->unique && !o->unique) problem(c, "UNIQUE_ITEMS_ADDED", path, "uniqueItems was added");
}

static bool is_combined(const floe_jsnode_t *n)
{
    return n->kind == FLOE_JS_ANYOF || n->kind == FLOE_JS_ONEOF || n->kind == FLOE_JS_ALLOF;
}

/* Kuhn's augmenting path for the bipartite matching of compatible pairs. */
static bool augment(const bool *ok, size_t nu, size_t i, int *match_u, bool *seen)
{
    for (size_t k = 0; k < nu; k++) {
        if (!ok[i * nu + k] || seen[k]) continue;
        seen[k] = true;
        if (match_u[k] < 0 || augment(ok, nu, (size_t)match_u[k], match_u, seen)) {
            match_u[k] = (int)i;
            return true;
        }
    }
    return false;
}

static void combined(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    bool changed = false;
    if (o->kind != u->kind) {
        bool ext = u->kind == FLOE_JS_ANYOF || (u->kind == FLOE_JS_ONEOF && o->nsubs == 1) ||
                   (u->kind == FLOE_JS_ALLOF && o->nsubs == 1 && u->nsubs == 1);
        if (!ext) {
            problem(c, "COMBINED_TYPE_CHANGED", path, "the kind of combination changed");
            changed = true;
        }
    }
    if (changed) return;
    size_t no = o->nsubs, nu = u->nsubs;
    if (no < nu && u->kind == FLOE_JS_ALLOF)
        problem(c, "PRODUCT_TYPE_EXTENDED", path, "allOf got more schemas");
    if (no > nu && u->kind != FLOE_JS_ALLOF)
        problem(c, "SUM_TYPE_NARROWED", path, "anyOf/oneOf lost schemas");
    if (no > 64 || nu > 64) {
        problem(c, "COMBINED_TYPE_SUBSCHEMAS_CHANGED", path, "too many schemas to compare");
        return;
    }
    bool ok[64 * 64], seen[64];
    int match_u[64];
    for (size_t i = 0; i < no; i++)
        for (size_t k = 0; k < nu; k++) ok[i * nu + k] = fits(c, o->subs[i], u->subs[k]);
    for (size_t k = 0; k < nu; k++) match_u[k] = -1;
    size_t matched = 0;
    for (size_t i = 0; i < no; i++) {
        memset(seen, 0, sizeof seen);
        if (augment(ok, nu, i, match_u, seen)) matched++;
    }
    if (matched < (no < nu ? no : nu))
        problem(c, "COMBINED_TYPE_SUBSCHEMAS_CHANGED", path,
                "a schema of the combination has no compatible counterpart");
}

static bool compare_in(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    if (!is_combined(o) && is_combined(u)) {
        if (u->nsubs == 1 && fits(c, o, u->subs[0])) return true;
        if (u->kind != FLOE_JS_ALLOF && u->nsubs > 1)
            for (size_t i = 0; i < u->nsubs; i++)
                if (fits(c, o, u->subs[i])) return true;
    } else if (is_combined(o) && !is_combined(u) && o->nsubs == 1 && fits(c, o->subs[0], u)) {
        return true;
    }
    bool numeric = (o->kind == FLOE_JS_INTEGER || o->kind == FLOE_JS_NUMBER) &&
                   (u->kind == FLOE_JS_INTEGER || u->kind == FLOE_JS_NUMBER);
    if (o->kind != u->kind && !numeric && !(is_combined(o) && is_combined(u))) {
        if (o->kind == FLOE_JS_NONE || u->kind == FLOE_JS_ANY) return true;
        char d[128];
        snprintf(d, sizeof d, "%s became %s", floe_js_kind_name(o->kind),
                 floe_js_kind_name(u->kind));
        problem(c, "TYPE_CHANGED", path[0] ? path : "/", d);
        return false;
    }
    int before = c->nproblems;
    if (numeric) numbers(c, o, u, path);
    else
        switch (o->kind) {
        case FLOE_JS_STRING: strings(c, o, u, path); break;
        case FLOE_JS_ENUM: enums(c, o, u, path); break;
        case FLOE_JS_OBJECT: objects(c, o, u, path); break;
        case FLOE_JS_ARRAY: arrays(c, o, u, path); break;
        case FLOE_JS_ANYOF:
        case FLOE_JS_ONEOF:
        case FLOE_JS_ALLOF: combined(c, o, u, path); break;
        case FLOE_JS_NOT:
            if (!fits(c, u->subs[0], o->subs[0]))
                problem(c, "NOT_TYPE_EXTENDED", path, "the schema under 'not' was narrowed");
            break;
        default: break;
        }
    return c->nproblems == before;
}

/* compare_in with a cycle guard: a pair already being compared is taken as
 * compatible (recursive schemas through $ref). */
static bool compare(ctx_t *c, const floe_jsnode_t *o, const floe_jsnode_t *u, const char *path)
{
    for (int i = 0; i < c->depth; i++)
        if (c->stack_o[i] == o && c->stack_u[i] == u) return true;
    if (c->depth >= MAX_DEPTH) {
        problem(c, "TYPE_CHANGED", path, "schemas nested deeper than the checker follows");
        return false;
    }
    c->stack_o[c->depth] = o;
    c->stack_u[c->depth++] = u;
    bool ok = compare_in(c, o, u, path);
    c->depth--;
    return ok;
}

bool floe_registry_json_compatible(const floe_jschema_t *reader, const floe_jschema_t *writer,
                                   floe_buf_t *msgs)
{
    ctx_t c = {.msgs = msgs};
    compare(&c, floe_jschema_root(writer), floe_jschema_root(reader), "");
    return c.nproblems == 0;
}
