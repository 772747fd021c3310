/* JSON Schema documents -> nodes (jschema.h). */
#include "format/jschema.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_NODES 100000
#define MAX_DOCS 64

typedef struct doc {
    char *name;
    json_t *root;
} doc_t;

typedef struct memo {
    const json_t *j;
    floe_jsnode_t *n;
} memo_t;

struct floe_jschema {
    doc_t docs[MAX_DOCS + 1]; /* [0] the schema itself */
    size_t ndocs;
    floe_jsnode_t **nodes; /* every node, for freeing */
    size_t nnodes, cap;
    memo_t *memo;
    size_t nmemo, memocap;
    floe_jsnode_t *root;
};

typedef struct bctx {
    floe_jschema_t *s;
    floe_err_t *err;
    char path[512];
} bctx_t;

static const char *const kind_names[] = {
    [FLOE_JS_ANY] = "any",         [FLOE_JS_NONE] = "false",      [FLOE_JS_NULL] = "null",
    [FLOE_JS_BOOLEAN] = "boolean", [FLOE_JS_INTEGER] = "integer", [FLOE_JS_NUMBER] = "number",
    [FLOE_JS_STRING] = "string",   [FLOE_JS_OBJECT] = "object",   [FLOE_JS_ARRAY] = "array",
    [FLOE_JS_ENUM] = "enum",       [FLOE_JS_ANYOF] = "anyOf",     [FLOE_JS_ONEOF] = "oneOf",
    [FLOE_JS_ALLOF] = "allOf",     [FLOE_JS_NOT] = "not"};

const char *floe_js_kind_name(floe_js_kind_t k)
{
    return k >= FLOE_JS_ANY && k <= FLOE_JS_NOT ? kind_names[k] : "?";
}

static int bad(bctx_t *b, const char *what)
{
    return floe_err_set(b->err, FLOE_EINVAL, "%s at #%s", what, b->path);
}

static floe_jsnode_t *node_new(bctx_t *b, floe_js_kind_t kind)
{
    floe_jschema_t *s = b->s;
    if (s->nnodes >= MAX_NODES) {
        floe_err_set(b->err, FLOE_ERANGE, "schema has more than %d nodes", MAX_NODES);
        return NULL;
    }
    if (s->nnodes == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        floe_jsnode_t **n = realloc(s->nodes, cap * sizeof *n);
        if (!n) {
            floe_err_oom(b->err);
            return NULL;
        }
        s->nodes = n;
        s->cap = cap;
    }
    floe_jsnode_t *n = calloc(1, sizeof *n);
    if (!n) {
        floe_err_oom(b->err);
        return NULL;
    }
    n->kind = kind;
    n->min_len = n->max_len = n->min_props = n->max_props = n->min_items = n->max_items = -1;
    s->nodes[s->nnodes++] = n;
    return n;
}

static void node_free(floe_jsnode_t *n)
{
    free(n->names);
    free(n->props);
    free(n->required);
    free(n->tuple);
    for (size_t i = 0; i < n->nenum; i++) free((char *)n->enums[i]);
    free(n->enums);
    free(n->subs);
    free(n);
}

void floe_jschema_free(floe_jschema_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nnodes; i++) node_free(s->nodes[i]);
    free(s->nodes);
    free(s->memo);
    for (size_t i = 0; i < s->ndocs; i++) {
        free(s->docs[i].name);
        json_decref(s->docs[i].root);
    }
    free(s);
}

const floe_jsnode_t *floe_jschema_root(const floe_jschema_t *s)
{
    return s->root;
}

char *floe_jschema_canonical(const floe_jschema_t *s)
{
    return json_dumps(s->docs[0].root, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* ---- $ref ---------------------------------------------------------------- */

/* The value a JSON pointer p (after '#') names in root, or NULL. */
static json_t *pointer(json_t *root, const char *p)
{
    json_t *at = root;
    char tok[256];
    while (*p) {
        if (*p != '/') return NULL;
        p++;
        size_t n = 0;
        while (*p && *p != '/') {
            char c = *p++;
            if (c == '~' && (*p == '0' || *p == '1')) c = *p++ == '0' ? '~' : '/';
            else if (c == '%' && p[0] && p[1]) { /* URI fragment escapes */
                char hex[3] = {p[0], p[1], 0};
                char *end;
                long v = strtol(hex, &end, 16);
                if (*end) return NULL;
                c = (char)v;
                p += 2;
            }
            if (n + 1 >= sizeof tok) return NULL;
            tok[n++] = c;
        }
        tok[n] = '\0';
        if (json_is_object(at)) {
            at = json_object_get(at, tok);
        } else if (json_is_array(at)) {
            char *end;
            long i = strtol(tok, &end, 10);
            if (!n || *end || i < 0) return NULL;
            at = json_array_get(at, (size_t)i);
        } else {
            return NULL;
        }
        if (!at) return NULL;
    }
    return at;
}

/* The schema "$ref": ref names, seen from document *doc (updated to the
 * document it lands in). */
static json_t *resolve(bctx_t *b, const char *ref, size_t *doc)
{
    const char *hash = strchr(ref, '#');
    size_t nlen = hash ? (size_t)(hash - ref) : strlen(ref);
    const char *frag = hash ? hash + 1 : "";
    size_t d = *doc;
    if (nlen) {
        bool found = false;
        for (size_t i = 0; i < b->s->ndocs && !found; i++) {
            const char *name = b->s->docs[i].name;
            const char *id = json_string_value(json_object_get(b->s->docs[i].root, "$id"));
            if ((name && strlen(name) == nlen && !strncmp(name, ref, nlen)) ||
                (id && strlen(id) == nlen && !strncmp(id, ref, nlen))) {
                d = i;
                found = true;
            }
        }
        if (!found) return NULL;
    }
    json_t *t = pointer(b->s->docs[d].root, frag);
    if (t) *doc = d;
    return t;
}

/* ---- building ------------------------------------------------------------ */

static int build(bctx_t *b, json_t *j, size_t doc, int depth, floe_jsnode_t **out);

/* Append "/seg" to the path for the call; restore with the returned length. */
static size_t path_push(bctx_t *b, const char *seg)
{
    size_t at = strlen(b->path);
    snprintf(b->path + at, sizeof b->path - at, "/%s", seg);
    return at;
}

static int sub(bctx_t *b, json_t *j, const char *seg, size_t doc, int depth, floe_jsnode_t **out)
{
    size_t at = path_push(b, seg);
    int rc = build(b, j, doc, depth + 1, out);
    if (!rc) b->path[at] = '\0';
    return rc;
}

static int num_kw(bctx_t *b, json_t *j, const char *kw, floe_js_num_t *out)
{
    json_t *v = json_object_get(j, kw);
    if (!v) return 0;
    if (json_is_boolean(v)) return 0; /* draft 4 exclusiveMinimum: true */
    if (!json_is_number(v)) {
        char m[80];
        snprintf(m, sizeof m, "'%s' is not a number", kw);
        return bad(b, m);
    }
    out->set = true;
    out->v = json_number_value(v);
    return 0;
}

static int count_kw(bctx_t *b, json_t *j, const char *kw, int64_t *out)
{
    json_t *v = json_object_get(j, kw);
    if (!v) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char m[80];
        snprintf(m, sizeof m, "'%s' is not a non-negative integer", kw);
        return bad(b, m);
    }
    *out = json_integer_value(v);
    return 0;
}

static int str_kw(bctx_t *b, json_t *j, const char *kw, const char **out)
{
    json_t *v = json_object_get(j, kw);
    if (!v) return 0;
    if (!json_is_string(v)) {
        char m[80];
        snprintf(m, sizeof m, "'%s' is not a string", kw);
        return bad(b, m);
    }
    *out = json_string_value(v); /* borrowed from the document */
    return 0;
}

static int fill_object(bctx_t *b, floe_jsnode_t *n, json_t *j, size_t doc, int depth)
{
    json_t *props = json_object_get(j, "properties"), *req = json_object_get(j, "required"),
           *ap = json_object_get(j, "additionalProperties");
    if (props && !json_is_object(props)) return bad(b, "'properties' is not an object");
    if (req && !json_is_array(req) && !json_is_boolean(req))
        return bad(b, "'required' is not an array");
    size_t np = props ? json_object_size(props) : 0;
    if (np) {
        n->names = calloc(np, sizeof *n->names);
        n->props = calloc(np, sizeof *n->props);
        n->required = calloc(np, sizeof *n->required);
        if (!n->names || !n->props || !n->required) return floe_err_oom(b->err);
    }
    const char *k;
    json_t *v;
    size_t at = path_push(b, "properties");
    json_object_foreach(props, k, v)
    {
        n->names[n->nprops] = k;
        if (sub(b, v, k, doc, depth, &n->props[n->nprops])) return -1;
        n->nprops++;
    }
    b->path[at] = '\0';
    for (size_t i = 0; json_is_array(req) && i < json_array_size(req); i++) {
        const char *name = json_string_value(json_array_get(req, i));
        if (!name) return bad(b, "'required' holds a value that is not a string");
        bool found = false;
        for (size_t p = 0; p < n->nprops && !found; p++)
            if (!strcmp(n->names[p], name)) found = n->required[p] = true;
        if (!found) n->nreq_other++;
    }
    if (json_is_false(ap)) n->closed = true;
    else if (ap && !json_is_true(ap)) {
        if (sub(b, ap, "additionalProperties", doc, depth, &n->additional)) return -1;
        if (n->additional->kind == FLOE_JS_ANY) n->additional = NULL;
        else if (n->additional->kind == FLOE_JS_NONE)
            n->additional = NULL, n->closed = true;
    }
    json_t *pp = json_object_get(j, "patternProperties");
    if (pp && !json_is_object(pp)) return bad(b, "'patternProperties' is not an object");
    n->pattern_props = pp && json_object_size(pp);
    return count_kw(b, j, "minProperties", &n->min_props) ||
           count_kw(b, j, "maxProperties", &n->max_props);
}

static int fill_array(bctx_t *b, floe_jsnode_t *n, json_t *j, size_t doc, int depth)
{
    json_t *items = json_object_get(j, "items"), *prefix = json_object_get(j, "prefixItems");
    json_t *tuple = json_is_array(items) ? items : prefix;
    if (tuple && !json_is_array(tuple)) return bad(b, "'prefixItems' is not an array");
    if (tuple && json_array_size(tuple)) {
        n->ntuple = json_array_size(tuple);
        if (!(n->tuple = calloc(n->ntuple, sizeof *n->tuple))) return floe_err_oom(b->err);
        for (size_t i = 0; i < n->ntuple; i++) {
            char seg[48];
            snprintf(seg, sizeof seg, "%s/%zu", tuple == items ? "items" : "prefixItems", i);
            if (sub(b, json_array_get(tuple, i), seg, doc, depth, &n->tuple[i])) return -1;
        }
    }
    if (items && !json_is_array(items) && sub(b, items, "items", doc, depth, &n->items)) return -1;
    json_t *u = json_object_get(j, "uniqueItems");
    if (u && !json_is_boolean(u)) return bad(b, "'uniqueItems' is not a boolean");
    n->unique = json_is_true(u);
    return count_kw(b, j, "minItems", &n->min_items) || count_kw(b, j, "maxItems", &n->max_items);
}

/* The keywords of kind k from schema object j into n. */
static int fill_typed(bctx_t *b, floe_jsnode_t *n, json_t *j, size_t doc, int depth)
{
    switch (n->kind) {
    case FLOE_JS_INTEGER:
    case FLOE_JS_NUMBER: {
        json_t *xmin = json_object_get(j, "exclusiveMinimum"),
               *xmax = json_object_get(j, "exclusiveMaximum");
        if (num_kw(b, j, "minimum", &n->min) || num_kw(b, j, "maximum", &n->max) ||
            num_kw(b, j, "exclusiveMinimum", &n->xmin) ||
            num_kw(b, j, "exclusiveMaximum", &n->xmax) || num_kw(b, j, "multipleOf", &n->multiple))
            return -1;
        /* draft 4: a boolean exclusive flag makes the bound exclusive */
        if (json_is_true(xmin) && n->min.set) n->xmin = n->min, n->min.set = false;
        if (json_is_true(xmax) && n->max.set) n->xmax = n->max, n->max.set = false;
        if (n->multiple.set && !(n->multiple.v > 0)) return bad(b, "'multipleOf' is not positive");
        return 0;
    }
    case FLOE_JS_STRING:
        return count_kw(b, j, "minLength", &n->min_len) ||
               count_kw(b, j, "maxLength", &n->max_len) || str_kw(b, j, "pattern", &n->pattern) ||
               str_kw(b, j, "format", &n->format);
    case FLOE_JS_OBJECT: return fill_object(b, n, j, doc, depth);
    case FLOE_JS_ARRAY: return fill_array(b, n, j, doc, depth);
    default: return 0;
    }
}

static int type_named(bctx_t *b, json_t *t, floe_js_kind_t *k)
{
    static const struct {
        const char *name;
        floe_js_kind_t kind;
    } types[] = {{"null", FLOE_JS_NULL},       {"boolean", FLOE_JS_BOOLEAN},
                 {"integer", FLOE_JS_INTEGER}, {"number", FLOE_JS_NUMBER},
                 {"string", FLOE_JS_STRING},   {"object", FLOE_JS_OBJECT},
                 {"array", FLOE_JS_ARRAY}};
    const char *s = json_string_value(t);
    for (size_t i = 0; s && i < sizeof types / sizeof *types; i++)
        if (!strcmp(s, types[i].name)) {
            *k = types[i].kind;
            return 0;
        }
    return bad(b, "'type' names no JSON Schema type");
}

/* The kind a schema without "type" has by its keywords. */
static floe_js_kind_t implied_kind(json_t *j)
{
    static const char *const obj[] = {"properties",        "additionalProperties", "required",
                                      "patternProperties", "minProperties",        "maxProperties"};
    static const char *const arr[] = {"items", "prefixItems", "minItems", "maxItems",
                                      "uniqueItems"};
    static const char *const num[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                                      "multipleOf"};
    static const char *const str[] = {"minLength", "maxLength", "pattern"};
    for (size_t i = 0; i < sizeof obj / sizeof *obj; i++)
        if (json_object_get(j, obj[i])) return FLOE_JS_OBJECT;
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++)
        if (json_object_get(j, arr[i])) return FLOE_JS_ARRAY;
    for (size_t i = 0; i < sizeof num / sizeof *num; i++)
        if (json_object_get(j, num[i])) return FLOE_JS_NUMBER;
    for (size_t i = 0; i < sizeof str / sizeof *str; i++)
        if (json_object_get(j, str[i])) return FLOE_JS_STRING;
    return FLOE_JS_ANY;
}

static int parts_add(bctx_t *b, floe_jsnode_t ***parts, size_t *n, floe_jsnode_t *p)
{
    floe_jsnode_t **x = realloc(*parts, (*n + 1) * sizeof *x);
    if (!x) return floe_err_oom(b->err);
    *parts = x;
    x[(*n)++] = p;
    return 0;
}

static int fill_enum(bctx_t *b, floe_jsnode_t *n, json_t *j)
{
    json_t *e = json_object_get(j, "enum"), *c = json_object_get(j, "const");
    if (e && (!json_is_array(e) || !json_array_size(e)))
        return bad(b, "'enum' is not a non-empty array");
    size_t k = e ? json_array_size(e) : 1;
    if (!(n->enums = calloc(k, sizeof *n->enums))) return floe_err_oom(b->err);
    for (size_t i = 0; i < k; i++) {
        char *t = json_dumps(e ? json_array_get(e, i) : c,
                             JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        if (!t) return floe_err_oom(b->err);
        n->enums[n->nenum++] = t;
    }
    return 0;
}

/* Schema object j (kind decided here) into n, which is already memoized. */
static int fill(bctx_t *b, floe_jsnode_t *n, json_t *j, size_t doc, int depth)
{
    floe_jsnode_t **parts = NULL;
    size_t np = 0;
    int rc = -1;
    json_t *type = json_object_get(j, "type");
    floe_js_kind_t k;
    if (json_object_get(j, "enum") || json_object_get(j, "const")) {
        floe_jsnode_t *e = node_new(b, FLOE_JS_ENUM);
        if (!e || fill_enum(b, e, j) || parts_add(b, &parts, &np, e)) goto out;
    } else if (json_is_array(type)) {
        size_t nt = json_array_size(type);
        if (!nt) {
            bad(b, "'type' is an empty array");
            goto out;
        }
        floe_jsnode_t *any = nt > 1 ? node_new(b, FLOE_JS_ANYOF) : NULL;
        if (nt > 1 && (!any || !(any->subs = calloc(nt, sizeof *any->subs)))) {
            if (any) floe_err_oom(b->err);
            goto out;
        }
        for (size_t i = 0; i < nt; i++) {
            floe_jsnode_t *t;
            if (type_named(b, json_array_get(type, i), &k) || !(t = node_new(b, k)) ||
                fill_typed(b, t, j, doc, depth))
                goto out;
            if (any) any->subs[any->nsubs++] = t;
            else if (parts_add(b, &parts, &np, t))
                goto out;
        }
        if (any && parts_add(b, &parts, &np, any)) goto out;
    } else {
        if (type) {
            if (type_named(b, type, &k)) goto out;
        } else {
            k = implied_kind(j);
        }
        bool combined = json_object_get(j, "anyOf") || json_object_get(j, "oneOf") ||
                        json_object_get(j, "allOf") || json_object_get(j, "not");
        if (k != FLOE_JS_ANY || !combined) {
            floe_jsnode_t *t = node_new(b, k);
            if (!t || fill_typed(b, t, j, doc, depth) || parts_add(b, &parts, &np, t)) goto out;
        }
    }
    static const struct {
        const char *kw;
        floe_js_kind_t kind;
    } combs[] = {{"anyOf", FLOE_JS_ANYOF},
                 {"oneOf", FLOE_JS_ONEOF},
                 {"allOf", FLOE_JS_ALLOF},
                 {"not", FLOE_JS_NOT}};
    for (size_t c = 0; c < sizeof combs / sizeof *combs; c++) {
        json_t *a = json_object_get(j, combs[c].kw);
        if (!a) continue;
        bool not = combs[c].kind == FLOE_JS_NOT;
        if (!not &&(!json_is_array(a) || !json_array_size(a))) {
            char m[80];
            snprintf(m, sizeof m, "'%s' is not a non-empty array", combs[c].kw);
            bad(b, m);
            goto out;
        }
        size_t ns = not ? 1 : json_array_size(a);
        floe_jsnode_t *cn = node_new(b, combs[c].kind);
        if (!cn) goto out;
        if (!(cn->subs = calloc(ns, sizeof *cn->subs))) {
            floe_err_oom(b->err);
            goto out;
        }
        for (size_t i = 0; i < ns; i++) {
            char seg[48];
            if (not ) snprintf(seg, sizeof seg, "not");
            else
                snprintf(seg, sizeof seg, "%s/%zu", combs[c].kw, i);
            if (sub(b, not ? a : json_array_get(a, i), seg, doc, depth, &cn->subs[i])) goto out;
            cn->nsubs++;
        }
        if (parts_add(b, &parts, &np, cn)) goto out;
    }
    if (np == 1) {
        floe_jsnode_t *p = parts[0];
        /* n takes p's content; p stays listed (freed with the rest), empty */
        *n = *p;
        memset(p, 0, sizeof *p);
        p->kind = FLOE_JS_ANY;
    } else {
        n->kind = FLOE_JS_ALLOF;
        n->subs = parts;
        n->nsubs = np;
        parts = NULL;
    }
    n->has_default = json_object_get(j, "default") != NULL;
    rc = 0;
out:
    free(parts);
    return rc;
}

static int build(bctx_t *b, json_t *j, size_t doc, int depth, floe_jsnode_t **out)
{
    floe_jschema_t *s = b->s;
    *out = NULL;
    if (depth > MAX_DEPTH)
        return floe_err_set(b->err, FLOE_ERANGE, "schema nested deeper than %d", MAX_DEPTH);
    for (int hops = 0; json_is_object(j) && json_object_get(j, "$ref"); hops++) {
        const char *ref = json_string_value(json_object_get(j, "$ref"));
        if (!ref) return bad(b, "'$ref' is not a string");
        if (hops > MAX_DEPTH) return bad(b, "'$ref' chain does not end");
        json_t *t = resolve(b, ref, &doc);
        if (!t) {
            char m[300];
            snprintf(m, sizeof m, "'$ref' %.200s resolves to nothing", ref);
            return bad(b, m);
        }
        j = t;
    }
    for (size_t i = 0; i < s->nmemo; i++)
        if (s->memo[i].j == j) {
            *out = s->memo[i].n;
            return 0;
        }
    if (json_is_boolean(j)) {
        *out = node_new(b, json_is_true(j) ? FLOE_JS_ANY : FLOE_JS_NONE);
        return *out ? 0 : -1;
    }
    if (!json_is_object(j)) return bad(b, "a schema is neither an object nor a boolean");
    floe_jsnode_t *n = node_new(b, FLOE_JS_ANY);
    if (!n) return -1;
    if (s->nmemo == s->memocap) {
        size_t cap = s->memocap ? s->memocap * 2 : 16;
        memo_t *m = realloc(s->memo, cap * sizeof *m);
        if (!m) return floe_err_oom(b->err);
        s->memo = m;
        s->memocap = cap;
    }
    s->memo[s->nmemo++] = (memo_t){j, n};
    if (fill(b, n, j, doc, depth)) return -1;
    *out = n;
    return 0;
}

static int load(bctx_t *b, const char *name, const char *text, size_t len)
{
    floe_jschema_t *s = b->s;
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return floe_err_set(b->err, FLOE_EINVAL, "%s%s%s is not JSON: %s (line %d, column %d)",
                            name ? "reference " : "", name ? name : "the schema", "", je.text,
                            je.line, je.column);
    if (!json_is_object(j) && !json_is_boolean(j)) {
        json_decref(j);
        return floe_err_set(b->err, FLOE_EINVAL, "%s is neither an object nor a boolean",
                            name ? name : "the schema");
    }
    doc_t *d = &s->docs[s->ndocs++];
    d->root = j;
    if (name && !(d->name = strdup(name))) return floe_err_oom(b->err);
    return 0;
}

int floe_jschema_parse(const char *text, size_t len, const floe_jschema_doc_t *docs, size_t ndocs,
                       floe_jschema_t **out, floe_err_t *err)
{
    *out = NULL;
    if (ndocs > MAX_DOCS)
        return floe_err_set(err, FLOE_ERANGE, "more than %d referenced schemas", MAX_DOCS);
    floe_jschema_t *s = calloc(1, sizeof *s);
    if (!s) return floe_err_oom(err);
    bctx_t b = {s, err, ""};
    int rc = load(&b, NULL, text, len);
    for (size_t i = 0; !rc && i < ndocs; i++)
        rc = load(&b, docs[i].name, docs[i].text, docs[i].len);
    if (!rc) rc = build(&b, s->docs[0].root, 0, 0, &s->root);
    if (rc) {
        floe_jschema_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* ---- queries ------------------------------------------------------------- */

bool floe_jsnode_nullable(const floe_jsnode_t *n)
{
    switch (n->kind) {
    case FLOE_JS_ANY:
    case FLOE_JS_NULL: return true;
    case FLOE_JS_ENUM:
        for (size_t i = 0; i < n->nenum; i++)
            if (!strcmp(n->enums[i], "null")) return true;
        return false;
    case FLOE_JS_ANYOF:
    case FLOE_JS_ONEOF:
        for (size_t i = 0; i < n->nsubs; i++)
            if (n->subs[i]->kind == FLOE_JS_NULL) return true;
        return false;
    case FLOE_JS_ALLOF: return n->nsubs == 1 && floe_jsnode_nullable(n->subs[0]);
    default: return false;
    }
}

const floe_jsnode_t *floe_jsnode_value(const floe_jsnode_t *n)
{
    for (int hops = 0; hops < MAX_DEPTH; hops++) {
        if (n->kind == FLOE_JS_NULL) return NULL;
        if (n->kind == FLOE_JS_ALLOF && n->nsubs == 1) {
            n = n->subs[0];
            continue;
        }
        if (n->kind != FLOE_JS_ANYOF && n->kind != FLOE_JS_ONEOF) return n;
        const floe_jsnode_t *one = NULL;
        size_t nn = 0;
        for (size_t i = 0; i < n->nsubs; i++)
            if (n->subs[i]->kind != FLOE_JS_NULL) one = n->subs[i], nn++;
        if (nn == 0) return NULL;
        if (nn > 1) return n;
        n = one;
    }
    return n;
}
