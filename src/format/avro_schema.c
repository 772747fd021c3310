/* Avro schemas: parsing from JSON (every attribute kept), writing back to
 * JSON, the Parsing Canonical Form, and accessors. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format/avro_int.h"
#include "util/mem.h"

static const char *const type_names[] = {"null",   "boolean", "int",    "long",   "float",
                                         "double", "bytes",   "string", "record", "enum",
                                         "array",  "map",     "union",  "fixed"};

const char *floe_avro_type_name(floe_avro_type_t t)
{
    if ((unsigned)t < sizeof type_names / sizeof type_names[0]) return type_names[t];
    return "unknown";
}

static int primitive_type(const char *s)
{
    for (int t = FLOE_AVRO_NULL; t <= FLOE_AVRO_STRING; t++)
        if (strcmp(s, type_names[t]) == 0) return t;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Parsing                                                              */
/* ------------------------------------------------------------------ */

typedef struct pctx {
    avro_root_t *root;
    floe_avro_schema_t **named;
    size_t n_named, cap_named;
    floe_err_t *err;
} pctx_t;

static floe_avro_schema_t *node_new(pctx_t *c, floe_avro_type_t t)
{
    floe_avro_schema_t *n = calloc(1, sizeof *n);
    if (!n) {
        floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        return NULL;
    }
    n->type = t;
    n->enum_default = -1;
    n->root = c->root;
    n->next_node = c->root->nodes;
    c->root->nodes = n;
    return n;
}

static bool valid_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_' ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

/* Every dot-separated part a valid name. */
static bool valid_fullname(const char *s)
{
    char buf[512];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, s, n + 1);
    char *save = NULL;
    size_t parts = 0;
    for (char *p = strtok_r(buf, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
        if (!valid_name(p)) return false;
        parts++;
    }
    return parts > 0 && s[0] != '.' && s[n - 1] != '.' && !strstr(s, "..");
}

static char *join_name(const char *ns, const char *name)
{
    size_t a = ns ? strlen(ns) : 0, b = strlen(name);
    char *s = malloc(a + b + 2);
    if (!s) return NULL;
    if (a) {
        memcpy(s, ns, a);
        s[a] = '.';
        memcpy(s + a + 1, name, b + 1);
    } else {
        memcpy(s, name, b + 1);
    }
    return s;
}

static floe_avro_schema_t *lookup_named(pctx_t *c, const char *full)
{
    for (size_t i = 0; i < c->n_named; i++)
        if (strcmp(c->named[i]->fullname, full) == 0) return c->named[i];
    return NULL;
}

static floe_avro_schema_t *resolve_ref(pctx_t *c, const char *name, const char *ns)
{
    if (strchr(name, '.') || !ns || !*ns) return lookup_named(c, name);
    char *full = join_name(ns, name);
    if (!full) return NULL;
    floe_avro_schema_t *s = lookup_named(c, full);
    free(full);
    return s ? s : lookup_named(c, name);
}

/* Give named node n its name, namespace and aliases, and register it. */
static int set_name(pctx_t *c, floe_avro_schema_t *n, json_t *obj, const char *enc_ns)
{
    json_t *jn = json_object_get(obj, "name");
    if (!json_is_string(jn))
        return floe_err_set(c->err, FLOE_EINVAL, "avro schema: %s without a string \"name\"",
                            floe_avro_type_name(n->type));
    const char *name = json_string_value(jn);
    json_t *jns = json_object_get(obj, "namespace");
    const char *ns = enc_ns;
    if (jns && !json_is_null(jns)) {
        if (!json_is_string(jns))
            return floe_err_set(c->err, FLOE_EINVAL,
                                "avro schema: \"namespace\" of %s is not a string", name);
        ns = json_string_value(jns);
    }
    const char *dot = strrchr(name, '.');
    if (dot) {
        if (!valid_fullname(name))
            return floe_err_set(c->err, FLOE_EINVAL, "avro schema: invalid name \"%s\"", name);
        n->fullname = strdup(name);
        if (!n->fullname) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        n->name = n->fullname + (dot - name) + 1;
        n->ns = strndup(name, (size_t)(dot - name));
    } else {
        if (!valid_name(name))
            return floe_err_set(c->err, FLOE_EINVAL, "avro schema: invalid name \"%s\"", name);
        if (ns && *ns && !valid_fullname(ns))
            return floe_err_set(c->err, FLOE_EINVAL, "avro schema: invalid namespace \"%s\"", ns);
        n->fullname = join_name(ns, name);
        if (!n->fullname) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        n->name = n->fullname + strlen(n->fullname) - strlen(name);
        n->ns = strdup(ns ? ns : "");
    }
    if (!n->ns) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    if (primitive_type(n->name) >= 0 && !strchr(n->fullname, '.'))
        return floe_err_set(c->err, FLOE_EINVAL, "avro schema: \"%s\" cannot name a %s", n->name,
                            floe_avro_type_name(n->type));
    if (lookup_named(c, n->fullname))
        return floe_err_set(c->err, FLOE_EINVAL, "avro schema: \"%s\" is defined twice",
                            n->fullname);
    json_t *al = json_object_get(obj, "aliases");
    if (al) {
        if (!json_is_array(al))
            return floe_err_set(c->err, FLOE_EINVAL,
                                "avro schema: \"aliases\" of %s is not an array", n->fullname);
        n->aliases = calloc(json_array_size(al) + 1, sizeof *n->aliases);
        if (!n->aliases) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        for (size_t i = 0; i < json_array_size(al); i++) {
            json_t *a = json_array_get(al, i);
            if (!json_is_string(a) || !valid_fullname(json_string_value(a)))
                return floe_err_set(c->err, FLOE_EINVAL, "avro schema: bad alias in %s",
                                    n->fullname);
            const char *as = json_string_value(a);
            n->aliases[n->n_aliases] = strchr(as, '.') ? strdup(as) : join_name(n->ns, as);
            if (!n->aliases[n->n_aliases++])
                return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        }
    }
    if (floe_grow(&c->named, &c->cap_named, c->n_named + 1, sizeof *c->named) != 0)
        return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    c->named[c->n_named++] = n;
    return 0;
}

/* Copy every key of obj except the listed ones into a new object. */
static json_t *props_except(json_t *obj, const char *const *skip)
{
    json_t *p = json_object();
    if (!p) return NULL;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        bool drop = false;
        for (const char *const *s = skip; *s; s++)
            if (strcmp(k, *s) == 0) drop = true;
        if (!drop && json_object_set(p, k, v) != 0) {
            json_decref(p);
            return NULL;
        }
    }
    return p;
}

static bool json_int_in(json_t *j, long long lo, long long hi, long long *out)
{
    if (!json_is_integer(j)) return false;
    long long v = json_integer_value(j);
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* Interpret "logicalType" (kept in props) where it is valid. */
static void set_logical(floe_avro_schema_t *n)
{
    const char *lt = json_string_value(json_object_get(n->props, "logicalType"));
    if (!lt) return;
    floe_avro_type_t t = n->type;
    if (strcmp(lt, "decimal") == 0 && (t == FLOE_AVRO_BYTES || t == FLOE_AVRO_FIXED)) {
        long long p, s = 0;
        if (!json_int_in(json_object_get(n->props, "precision"), 1, 1000, &p)) return;
        json_t *js = json_object_get(n->props, "scale");
        if (js && !json_int_in(js, 0, p, &s)) return;
        if (t == FLOE_AVRO_FIXED) {
            /* digits that fit in size bytes of two's complement */
            double maxd = 0;
            if (n->fixed_size == 0) return;
            double bits = 8.0 * (double)n->fixed_size - 1;
            maxd = bits * 0.30102999566398120; /* log10(2) */
            if ((double)p > maxd) return;
        }
        n->logical = FLOE_AVRO_LOGICAL_DECIMAL;
        n->precision = (int)p;
        n->scale = (int)s;
    } else if (strcmp(lt, "uuid") == 0 &&
               (t == FLOE_AVRO_STRING || (t == FLOE_AVRO_FIXED && n->fixed_size == 16))) {
        n->logical = FLOE_AVRO_LOGICAL_UUID;
    } else if (strcmp(lt, "date") == 0 && t == FLOE_AVRO_INT) {
        n->logical = FLOE_AVRO_LOGICAL_DATE;
    } else if (strcmp(lt, "time-millis") == 0 && t == FLOE_AVRO_INT) {
        n->logical = FLOE_AVRO_LOGICAL_TIME_MILLIS;
    } else if (strcmp(lt, "time-micros") == 0 && t == FLOE_AVRO_LONG) {
        n->logical = FLOE_AVRO_LOGICAL_TIME_MICROS;
    } else if (strcmp(lt, "timestamp-millis") == 0 && t == FLOE_AVRO_LONG) {
        n->logical = FLOE_AVRO_LOGICAL_TIMESTAMP_MILLIS;
    } else if (strcmp(lt, "timestamp-micros") == 0 && t == FLOE_AVRO_LONG) {
        n->logical = FLOE_AVRO_LOGICAL_TIMESTAMP_MICROS;
    } else if (strcmp(lt, "local-timestamp-millis") == 0 && t == FLOE_AVRO_LONG) {
        n->logical = FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MILLIS;
    } else if (strcmp(lt, "local-timestamp-micros") == 0 && t == FLOE_AVRO_LONG) {
        n->logical = FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MICROS;
    }
}

static int parse_node(pctx_t *c, json_t *j, const char *ns, int depth, floe_avro_schema_t **out);
static void root_free(avro_root_t *root);

static int parse_fields(pctx_t *c, floe_avro_schema_t *n, json_t *fields, int depth)
{
    if (!json_is_array(fields))
        return floe_err_set(c->err, FLOE_EINVAL, "avro schema: record %s needs a \"fields\" array",
                            n->fullname);
    size_t nf = json_array_size(fields);
    n->fields = calloc(nf ? nf : 1, sizeof *n->fields);
    if (!n->fields) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    static const char *const skip[] = {"name", "type", NULL};
    for (size_t i = 0; i < nf; i++) {
        json_t *jf = json_array_get(fields, i);
        avro_field_t *f = &n->fields[i];
        n->n_fields = i + 1;
        if (!json_is_object(jf) || !json_is_string(json_object_get(jf, "name")))
            return floe_err_set(c->err, FLOE_EINVAL, "avro schema: field %zu of %s has no name", i,
                                n->fullname);
        const char *fname = json_string_value(json_object_get(jf, "name"));
        if (!valid_name(fname))
            return floe_err_set(c->err, FLOE_EINVAL, "avro schema: invalid field name \"%s\" in %s",
                                fname, n->fullname);
        for (size_t k = 0; k < i; k++)
            if (strcmp(n->fields[k].name, fname) == 0)
                return floe_err_set(c->err, FLOE_EINVAL, "avro schema: field \"%s\" twice in %s",
                                    fname, n->fullname);
        f->name = strdup(fname);
        f->props = props_except(jf, skip);
        if (!f->name || !f->props)
            return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        f->def = json_object_get(f->props, "default");
        json_t *al = json_object_get(jf, "aliases");
        if (json_is_array(al) && json_array_size(al)) {
            f->aliases = calloc(json_array_size(al), sizeof *f->aliases);
            if (!f->aliases) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
            for (size_t k = 0; k < json_array_size(al); k++) {
                const char *a = json_string_value(json_array_get(al, k));
                if (!a) continue;
                if (!(f->aliases[f->n_aliases] = strdup(a)))
                    return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
                f->n_aliases++;
            }
        }
        json_t *jt = json_object_get(jf, "type");
        if (!jt)
            return floe_err_set(c->err, FLOE_EINVAL, "avro schema: field \"%s\" of %s has no type",
                                fname, n->fullname);
        if (parse_node(c, jt, n->ns, depth + 1, &f->type) != 0) {
            floe_err_wrap(c->err, "field %s.%s", n->fullname, fname);
            return -1;
        }
    }
    return 0;
}

static int parse_union(pctx_t *c, json_t *j, const char *ns, int depth, floe_avro_schema_t **out)
{
    floe_avro_schema_t *n = node_new(c, FLOE_AVRO_UNION);
    if (!n) return -1;
    size_t nb = json_array_size(j); /* an empty union is legal; it holds no value */
    n->branches = calloc(nb ? nb : 1, sizeof *n->branches);
    if (!n->branches) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
    for (size_t i = 0; i < nb; i++) {
        floe_avro_schema_t *b;
        if (parse_node(c, json_array_get(j, i), ns, depth + 1, &b) != 0) return -1;
        if (b->type == FLOE_AVRO_UNION)
            return floe_err_set(c->err, FLOE_EINVAL,
                                "avro schema: a union directly inside a union");
        for (size_t k = 0; k < i; k++)
            if (avro_schema_same(n->branches[k], b))
                return floe_err_set(c->err, FLOE_EINVAL, "avro schema: union holds %s twice",
                                    avro_branch_name(b));
        n->branches[i] = b;
        n->n_branches = i + 1;
    }
    *out = n;
    return 0;
}

static int parse_object(pctx_t *c, json_t *j, const char *ns, int depth, floe_avro_schema_t **out)
{
    json_t *jt = json_object_get(j, "type");
    if (json_is_object(jt) || json_is_array(jt)) return parse_node(c, jt, ns, depth + 1, out);
    if (!json_is_string(jt))
        return floe_err_set(c->err, FLOE_EINVAL, "avro schema: object without a string \"type\"");
    const char *t = json_string_value(jt);
    int prim = primitive_type(t);
    floe_avro_schema_t *n;
    if (prim >= 0) {
        static const char *const skip[] = {"type", NULL};
        if (!(n = node_new(c, (floe_avro_type_t)prim))) return -1;
        if (!(n->props = props_except(j, skip)))
            return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        set_logical(n);
        *out = n;
        return 0;
    }
    static const char *const skip_named[] = {"type",    "name", "namespace", "fields",
                                             "symbols", "size", NULL};
    static const char *const skip_coll[] = {"type", "items", "values", NULL};
    if (strcmp(t, "record") == 0 || strcmp(t, "error") == 0) {
        if (!(n = node_new(c, FLOE_AVRO_RECORD))) return -1;
        if (!(n->props = props_except(j, skip_named)))
            return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        if (strcmp(t, "error") == 0) json_object_set_new(n->props, "$error", json_true());
        if (set_name(c, n, j, ns) != 0) return -1;
        *out = n;
        return parse_fields(c, n, json_object_get(j, "fields"), depth);
    }
    if (strcmp(t, "enum") == 0) {
        if (!(n = node_new(c, FLOE_AVRO_ENUM))) return -1;
        if (!(n->props = props_except(j, skip_named)))
            return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        if (set_name(c, n, j, ns) != 0) return -1;
        json_t *sy = json_object_get(j, "symbols");
        if (!json_is_array(sy))
            return floe_err_set(c->err, FLOE_EINVAL,
                                "avro schema: enum %s needs a \"symbols\" array", n->fullname);
        size_t ns_ = json_array_size(sy);
        n->symbols = calloc(ns_ ? ns_ : 1, sizeof *n->symbols);
        if (!n->symbols) return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        for (size_t i = 0; i < ns_; i++) {
            const char *s = json_string_value(json_array_get(sy, i));
            if (!s || !valid_name(s))
                return floe_err_set(c->err, FLOE_EINVAL, "avro schema: bad symbol %zu in enum %s",
                                    i, n->fullname);
            for (size_t k = 0; k < i; k++)
                if (strcmp(n->symbols[k], s) == 0)
                    return floe_err_set(c->err, FLOE_EINVAL,
                                        "avro schema: symbol %s twice in enum %s", s, n->fullname);
            if (!(n->symbols[i] = strdup(s)))
                return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
            n->n_symbols = i + 1;
        }
        json_t *d = json_object_get(j, "default");
        if (d) {
            n->enum_default =
                json_is_string(d) ? floe_avro_schema_symbol_index(n, json_string_value(d)) : -1;
            if (n->enum_default < 0)
                return floe_err_set(c->err, FLOE_EINVAL,
                                    "avro schema: default of enum %s is not a symbol", n->fullname);
        }
        *out = n;
        return 0;
    }
    if (strcmp(t, "fixed") == 0) {
        if (!(n = node_new(c, FLOE_AVRO_FIXED))) return -1;
        if (!(n->props = props_except(j, skip_named)))
            return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        if (set_name(c, n, j, ns) != 0) return -1;
        long long size;
        if (!json_int_in(json_object_get(j, "size"), 0, 1 << 30, &size))
            return floe_err_set(c->err, FLOE_EINVAL,
                                "avro schema: fixed %s needs a \"size\" in [0, 2^30]", n->fullname);
        n->fixed_size = (size_t)size;
        set_logical(n);
        *out = n;
        return 0;
    }
    if (strcmp(t, "array") == 0 || strcmp(t, "map") == 0) {
        bool arr = t[0] == 'a';
        if (!(n = node_new(c, arr ? FLOE_AVRO_ARRAY : FLOE_AVRO_MAP))) return -1;
        if (!(n->props = props_except(j, skip_coll)))
            return floe_err_set(c->err, FLOE_ENOMEM, "avro schema: out of memory");
        json_t *it = json_object_get(j, arr ? "items" : "values");
        if (!it)
            return floe_err_set(c->err, FLOE_EINVAL, "avro schema: %s without \"%s\"", t,
                                arr ? "items" : "values");
        *out = n;
        return parse_node(c, it, ns, depth + 1, &n->items);
    }
    /* {"type": "SomeNamedType"} */
    floe_avro_schema_t *ref = resolve_ref(c, t, ns);
    if (!ref) return floe_err_set(c->err, FLOE_EINVAL, "avro schema: unknown type \"%s\"", t);
    *out = ref;
    return 0;
}

static int parse_node(pctx_t *c, json_t *j, const char *ns, int depth, floe_avro_schema_t **out)
{
    if (depth > AVRO_MAX_DEPTH)
        return floe_err_set(c->err, FLOE_EINVAL, "avro schema: nested deeper than %d",
                            AVRO_MAX_DEPTH);
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        int prim = primitive_type(s);
        if (prim >= 0) {
            floe_avro_schema_t *n = node_new(c, (floe_avro_type_t)prim);
            if (!n) return -1;
            *out = n;
            return 0;
        }
        floe_avro_schema_t *ref = resolve_ref(c, s, ns);
        if (!ref) return floe_err_set(c->err, FLOE_EINVAL, "avro schema: unknown type \"%s\"", s);
        *out = ref;
        return 0;
    }
    if (json_is_array(j)) return parse_union(c, j, ns, depth, out);
    if (json_is_object(j)) return parse_object(c, j, ns, depth, out);
    return floe_err_set(c->err, FLOE_EINVAL,
                        "avro schema: a type must be a string, object or array");
}

/* Whether nodes may encode to zero bytes: a fixpoint over the node list. */
static void compute_min_zero(avro_root_t *r)
{
    bool changed = true;
    while (changed) {
        changed = false;
        for (floe_avro_schema_t *n = r->nodes; n; n = n->next_node) {
            if (n->min_zero) continue;
            bool z = false;
            if (n->type == FLOE_AVRO_NULL) z = true;
            else if (n->type == FLOE_AVRO_FIXED)
                z = n->fixed_size == 0;
            else if (n->type == FLOE_AVRO_RECORD) {
                z = true;
                for (size_t i = 0; i < n->n_fields; i++)
                    if (!n->fields[i].type->min_zero) z = false;
            }
            if (z) {
                n->min_zero = true;
                changed = true;
            }
        }
    }
}

/* Parse json[0..len) into c (its root), as one more schema text. */
static int parse_text(pctx_t *c, const char *json, size_t len, floe_avro_schema_t **top)
{
    json_error_t je;
    json_t *j = json_loadb(json, len, JSON_DECODE_ANY, &je);
    if (!j)
        return floe_err_set(c->err, FLOE_EINVAL, "avro schema: bad JSON at line %d column %d: %s",
                            je.line, je.column, je.text);
    int rc = parse_node(c, j, "", 0, top);
    json_decref(j);
    return rc;
}

int floe_avro_schema_parse_refs(const char *json, size_t len, const floe_avro_text_t *refs,
                                size_t nrefs, floe_avro_schema_t **out, floe_err_t *err)
{
    *out = NULL;
    avro_root_t *root = calloc(1, sizeof *root);
    if (!root) return floe_err_set(err, FLOE_ENOMEM, "avro schema: out of memory");
    floe_arena_init(&root->arena, 4096, 0);
    pctx_t c = {root, NULL, 0, 0, err};
    floe_avro_schema_t *top = NULL;
    int rc = 0;
    for (size_t i = 0; i < nrefs && !rc; i++) rc = parse_text(&c, refs[i].json, refs[i].len, &top);
    /* the named types known so far came from the references */
    for (size_t i = 0; i < c.n_named; i++) c.named[i]->from_ref = true;
    if (!rc) rc = parse_text(&c, json, len, &top);
    free(c.named);
    if (rc != 0) {
        root_free(root);
        return -1;
    }
    compute_min_zero(root);
    /* validate defaults now so that a bad default is reported at parse */
    for (floe_avro_schema_t *n = root->nodes; n; n = n->next_node)
        for (size_t i = 0; i < n->n_fields; i++) (void)avro_field_default(n, i);
    *out = top;
    return 0;
}

int floe_avro_schema_parse(const char *json, size_t len, floe_avro_schema_t **out, floe_err_t *err)
{
    return floe_avro_schema_parse_refs(json, len, NULL, 0, out, err);
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static void root_free(avro_root_t *root)
{
    floe_avro_schema_t *n = root->nodes;
    while (n) {
        floe_avro_schema_t *next = n->next_node;
        free(n->fullname);
        free(n->ns);
        free_strv(n->aliases, n->n_aliases);
        json_decref(n->props);
        for (size_t i = 0; i < n->n_fields; i++) {
            free(n->fields[i].name);
            json_decref(n->fields[i].props);
            free_strv(n->fields[i].aliases, n->fields[i].n_aliases);
        }
        free(n->fields);
        free(n->branches);
        free_strv(n->symbols, n->n_symbols);
        free(n);
        n = next;
    }
    floe_arena_free(&root->arena);
    free(root);
}

void floe_avro_schema_free(floe_avro_schema_t *top)
{
    if (top && top->root) root_free(top->root);
}

/* ------------------------------------------------------------------ */
/* Writing JSON                                                         */
/* ------------------------------------------------------------------ */

bool avro_schema_same(const floe_avro_schema_t *a, const floe_avro_schema_t *b)
{
    if (a == b) return true;
    if (a->type != b->type) return false;
    if (a->fullname || b->fullname)
        return a->fullname && b->fullname && strcmp(a->fullname, b->fullname) == 0;
    return true; /* unions may hold one array and one map at most */
}

const char *avro_branch_name(const floe_avro_schema_t *s)
{
    return s->fullname ? s->fullname : floe_avro_type_name(s->type);
}

typedef struct jctx {
    const floe_avro_schema_t **done; /* named types already written */
    size_t n, cap;
    bool canonical;
    bool own; /* named types from references are written by name */
    bool oom;
} jctx_t;

static bool jctx_seen(jctx_t *c, const floe_avro_schema_t *s)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->done[i] == s) return true;
    if (floe_grow(&c->done, &c->cap, c->n + 1, sizeof *c->done) != 0) {
        c->oom = true;
        return true;
    }
    c->done[c->n++] = s;
    return false;
}

/* json_object_set_new that remembers allocation failure */
static void jset(jctx_t *c, json_t *o, const char *k, json_t *v)
{
    if (!v || json_object_set_new(o, k, v) != 0) c->oom = true;
}

static void jadd_props(jctx_t *c, json_t *o, json_t *props)
{
    if (c->canonical || !props) return;
    const char *k;
    json_t *v;
    json_object_foreach(props, k, v)
    {
        if (strcmp(k, "$error") == 0) continue;
        if (json_object_set(o, k, v) != 0) c->oom = true;
    }
}

static json_t *to_json(jctx_t *c, const floe_avro_schema_t *s, const char *enc_ns)
{
    json_t *o;
    switch (s->type) {
    case FLOE_AVRO_UNION: {
        json_t *a = json_array();
        if (!a) return NULL;
        for (size_t i = 0; i < s->n_branches; i++) {
            json_t *b = to_json(c, s->branches[i], enc_ns);
            if (!b || json_array_append_new(a, b) != 0) c->oom = true;
        }
        return a;
    }
    case FLOE_AVRO_RECORD:
    case FLOE_AVRO_ENUM:
    case FLOE_AVRO_FIXED:
        if ((c->own && s->from_ref) || jctx_seen(c, s)) {
            /* a reference: the short name when the namespace is the same */
            if (!c->canonical && strcmp(s->ns, enc_ns) == 0) return json_string(s->name);
            return json_string(s->fullname);
        }
        if (!(o = json_object())) return NULL;
        if (c->canonical) {
            jset(c, o, "name", json_string(s->fullname));
            jset(
                c, o, "type",
                json_string(s->type == FLOE_AVRO_RECORD ? "record" : floe_avro_type_name(s->type)));
        } else {
            bool err = s->type == FLOE_AVRO_RECORD && json_object_get(s->props, "$error");
            jset(c, o, "type", json_string(err ? "error" : floe_avro_type_name(s->type)));
            jset(c, o, "name", json_string(s->name));
            if (strcmp(s->ns, enc_ns) != 0) jset(c, o, "namespace", json_string(s->ns));
        }
        if (s->type == FLOE_AVRO_RECORD) {
            json_t *fs = json_array();
            if (!fs) c->oom = true;
            for (size_t i = 0; fs && i < s->n_fields; i++) {
                json_t *f = json_object();
                if (!f || json_array_append_new(fs, f) != 0) {
                    c->oom = true;
                    break;
                }
                jset(c, f, "name", json_string(s->fields[i].name));
                jset(c, f, "type", to_json(c, s->fields[i].type, s->ns));
                jadd_props(c, f, s->fields[i].props);
            }
            jset(c, o, "fields", fs);
        } else if (s->type == FLOE_AVRO_ENUM) {
            json_t *sy = json_array();
            if (!sy) c->oom = true;
            for (size_t i = 0; sy && i < s->n_symbols; i++)
                if (json_array_append_new(sy, json_string(s->symbols[i])) != 0) c->oom = true;
            jset(c, o, "symbols", sy);
        } else {
            jset(c, o, "size", json_integer((json_int_t)s->fixed_size));
        }
        jadd_props(c, o, s->props);
        return o;
    case FLOE_AVRO_ARRAY:
    case FLOE_AVRO_MAP:
        if (!(o = json_object())) return NULL;
        jset(c, o, "type", json_string(floe_avro_type_name(s->type)));
        jset(c, o, s->type == FLOE_AVRO_ARRAY ? "items" : "values", to_json(c, s->items, enc_ns));
        jadd_props(c, o, s->props);
        return o;
    default:
        if (c->canonical || !s->props || json_object_size(s->props) == 0)
            return json_string(floe_avro_type_name(s->type));
        if (!(o = json_object())) return NULL;
        jset(c, o, "type", json_string(floe_avro_type_name(s->type)));
        jadd_props(c, o, s->props);
        return o;
    }
}

static char *dump(const floe_avro_schema_t *s, bool canonical, bool own, floe_err_t *err)
{
    jctx_t c = {NULL, 0, 0, canonical, own, false};
    json_t *j = to_json(&c, s, "");
    char *out = NULL;
    if (j && !c.oom) out = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    json_decref(j);
    free(c.done);
    if (!out) floe_err_set(err, FLOE_ENOMEM, "avro schema: out of memory writing JSON");
    return out;
}

char *floe_avro_schema_to_json(const floe_avro_schema_t *s, floe_err_t *err)
{
    return dump(s, false, false, err);
}

char *floe_avro_schema_to_json_own(const floe_avro_schema_t *s, floe_err_t *err)
{
    return dump(s, false, true, err);
}

char *floe_avro_schema_canonical(const floe_avro_schema_t *s, floe_err_t *err)
{
    return dump(s, true, false, err);
}

/* ------------------------------------------------------------------ */
/* Fingerprints and single-object encoding                              */
/* ------------------------------------------------------------------ */

#define RABIN_EMPTY 0xc15d213aa4d7a795ull

static uint64_t rabin_table[256];
static pthread_once_t rabin_once = PTHREAD_ONCE_INIT;

static void rabin_init(void)
{
    for (int i = 0; i < 256; i++) {
        uint64_t fp = (uint64_t)i;
        for (int j = 0; j < 8; j++) fp = (fp >> 1) ^ (RABIN_EMPTY & (0 - (fp & 1)));
        rabin_table[i] = fp;
    }
}

uint64_t floe_avro_fingerprint64(const void *p, size_t n)
{
    pthread_once(&rabin_once, rabin_init);
    const uint8_t *b = p;
    uint64_t fp = RABIN_EMPTY;
    for (size_t i = 0; i < n; i++) fp = (fp >> 8) ^ rabin_table[(fp ^ b[i]) & 0xff];
    return fp;
}

int floe_avro_schema_fingerprint64(const floe_avro_schema_t *s, uint64_t *out, floe_err_t *err)
{
    char *c = floe_avro_schema_canonical(s, err);
    if (!c) return -1;
    *out = floe_avro_fingerprint64(c, strlen(c));
    free(c);
    return 0;
}

void floe_avro_single_object_header(uint64_t fingerprint,
                                    uint8_t out[FLOE_AVRO_SINGLE_OBJECT_HEADER])
{
    out[0] = 0xc3;
    out[1] = 0x01;
    for (int i = 0; i < 8; i++) out[2 + i] = (uint8_t)(fingerprint >> (8 * i));
}

int floe_avro_single_object_parse(const uint8_t *p, size_t n, uint64_t *fp, floe_err_t *err)
{
    if (n >= 1 && p[0] != 0xc3)
        return floe_err_set(err, FLOE_ECORRUPT, "avro: not single-object encoded (first byte %02x)",
                            p[0]);
    if (n >= 2 && p[1] != 0x01)
        return floe_err_set(err, FLOE_ECORRUPT, "avro: single-object version byte %02x, want 01",
                            p[1]);
    if (n < FLOE_AVRO_SINGLE_OBJECT_HEADER)
        return floe_err_set(err, FLOE_ETRUNC, "avro: single-object header needs 10 bytes, got %zu",
                            n);
    *fp = floe_rd_le64(p + 2);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Accessors                                                            */
/* ------------------------------------------------------------------ */

floe_avro_type_t floe_avro_schema_type(const floe_avro_schema_t *s)
{
    return s->type;
}
floe_avro_logical_t floe_avro_schema_logical(const floe_avro_schema_t *s)
{
    return s->logical;
}
const char *floe_avro_schema_fullname(const floe_avro_schema_t *s)
{
    return s->fullname;
}
const char *floe_avro_schema_name(const floe_avro_schema_t *s)
{
    return s->name;
}

size_t floe_avro_schema_field_count(const floe_avro_schema_t *s)
{
    return s->type == FLOE_AVRO_RECORD ? s->n_fields : 0;
}

const char *floe_avro_schema_field_name(const floe_avro_schema_t *s, size_t i)
{
    return i < floe_avro_schema_field_count(s) ? s->fields[i].name : NULL;
}

const floe_avro_schema_t *floe_avro_schema_field_type(const floe_avro_schema_t *s, size_t i)
{
    return i < floe_avro_schema_field_count(s) ? s->fields[i].type : NULL;
}

int floe_avro_schema_field_index(const floe_avro_schema_t *s, const char *name)
{
    for (size_t i = 0; i < floe_avro_schema_field_count(s); i++)
        if (strcmp(s->fields[i].name, name) == 0) return (int)i;
    return -1;
}

bool floe_avro_schema_field_has_default(const floe_avro_schema_t *s, size_t i)
{
    return i < floe_avro_schema_field_count(s) && s->fields[i].def != NULL;
}

static int prop_int(json_t *props, const char *key, int64_t *out)
{
    json_t *v = json_object_get(props, key);
    if (!json_is_integer(v)) return -1;
    *out = json_integer_value(v);
    return 0;
}

int floe_avro_schema_field_prop_int(const floe_avro_schema_t *s, size_t i, const char *key,
                                    int64_t *out)
{
    if (i >= floe_avro_schema_field_count(s)) return -1;
    return prop_int(s->fields[i].props, key, out);
}

int floe_avro_schema_prop_int(const floe_avro_schema_t *s, const char *key, int64_t *out)
{
    return prop_int(s->props, key, out);
}

const char *floe_avro_schema_prop_str(const floe_avro_schema_t *s, const char *key)
{
    return json_string_value(json_object_get(s->props, key));
}

char *floe_avro_schema_prop_json(const floe_avro_schema_t *s, int field_index, const char *key)
{
    json_t *props = s->props;
    if (field_index >= 0) {
        if ((size_t)field_index >= floe_avro_schema_field_count(s)) return NULL;
        props = s->fields[field_index].props;
    }
    json_t *v = json_object_get(props, key);
    return v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

const floe_avro_schema_t *floe_avro_schema_items(const floe_avro_schema_t *s)
{
    return s->type == FLOE_AVRO_ARRAY ? s->items : NULL;
}

const floe_avro_schema_t *floe_avro_schema_values(const floe_avro_schema_t *s)
{
    return s->type == FLOE_AVRO_MAP ? s->items : NULL;
}

size_t floe_avro_schema_branch_count(const floe_avro_schema_t *s)
{
    return s->type == FLOE_AVRO_UNION ? s->n_branches : 0;
}

const floe_avro_schema_t *floe_avro_schema_branch(const floe_avro_schema_t *s, size_t i)
{
    return i < floe_avro_schema_branch_count(s) ? s->branches[i] : NULL;
}

const floe_avro_schema_t *floe_avro_schema_nullable_inner(const floe_avro_schema_t *s)
{
    if (s->type != FLOE_AVRO_UNION || s->n_branches != 2) return NULL;
    if (s->branches[0]->type == FLOE_AVRO_NULL) return s->branches[1];
    if (s->branches[1]->type == FLOE_AVRO_NULL) return s->branches[0];
    return NULL;
}

size_t floe_avro_schema_symbol_count(const floe_avro_schema_t *s)
{
    return s->type == FLOE_AVRO_ENUM ? s->n_symbols : 0;
}

const char *floe_avro_schema_symbol(const floe_avro_schema_t *s, size_t i)
{
    return i < floe_avro_schema_symbol_count(s) ? s->symbols[i] : NULL;
}

int floe_avro_schema_symbol_index(const floe_avro_schema_t *s, const char *sym)
{
    for (size_t i = 0; i < floe_avro_schema_symbol_count(s); i++)
        if (s->symbols[i] && strcmp(s->symbols[i], sym) == 0) return (int)i;
    return -1;
}

size_t floe_avro_schema_fixed_size(const floe_avro_schema_t *s)
{
    return s->type == FLOE_AVRO_FIXED ? s->fixed_size : 0;
}

int floe_avro_schema_decimal_precision(const floe_avro_schema_t *s)
{
    return s->logical == FLOE_AVRO_LOGICAL_DECIMAL ? s->precision : 0;
}

int floe_avro_schema_decimal_scale(const floe_avro_schema_t *s)
{
    return s->logical == FLOE_AVRO_LOGICAL_DECIMAL ? s->scale : 0;
}
