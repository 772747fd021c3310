/* The JSON schema type of the registry (registry_int.h): JSON Schema
 * documents (format/jschema.h), stored as compact JSON in document order
 * (properties keep their order as columns) and compared as parsed JSON, so
 * that a lookup or a re-registration matches the schema, not its
 * spelling; "$ref" reaches definitions inside the document and, by a
 * reference's name, the schemas registered under other subjects.
 * Compatibility follows the Confluent registry's JSON Schema rules
 * (json_compat.c). */
#include <stdlib.h>
#include <string.h>

#include "registry/registry_int.h"

#define MAX_DOCS 64

typedef struct docs {
    floe_jschema_doc_t d[MAX_DOCS];
    size_t n;
} docs_t;

/* A referenced document under its reference's name; at most MAX_DOCS. */
static int take(void *arg, const reg_ref_t *ref, const reg_schema_t *sc, reg_status_t *st)
{
    docs_t *ds = arg;
    if (ds->n == MAX_DOCS)
        return reg_fail(st, 422, 42201, "Invalid schema: more than %d references", MAX_DOCS);
    ds->d[ds->n++] = (floe_jschema_doc_t){ref->name, sc->text, strlen(sc->text)};
    return 0;
}

static void *js_load(floe_registry_t *r, const char *text, size_t len, const reg_ref_t *refs,
                     size_t nrefs, reg_status_t *st)
{
    docs_t ds = {.n = 0};
    floe_jschema_t *s = NULL;
    floe_err_t err = {0};
    if (reg_refs_walk(r, &reg_type_json, &ds, refs, nrefs, st)) return NULL;
    if (floe_jschema_parse(text, len, ds.d, ds.n, &s, &err)) {
        reg_fail(st, err.code == FLOE_ENOMEM ? 500 : 422, err.code == FLOE_ENOMEM ? 50001 : 42201,
                 "Invalid schema: %s", err.msg);
        return NULL;
    }
    return s;
}

static char *js_canonical(const void *parsed, reg_status_t *st)
{
    char *canon = floe_jschema_canonical(parsed);
    if (!canon) reg_fail(st, 500, 50001, "out of memory");
    return canon;
}

static bool js_compatible(const void *reader, const void *writer, floe_buf_t *msgs)
{
    return floe_registry_json_compatible(reader, writer, msgs);
}

static void js_free(void *p)
{
    floe_jschema_free(p);
}

/* Two canonical texts are one schema when they differ only in the order
 * of object members. */
static bool js_same(const char *a, const char *b)
{
    json_t *x = json_loads(a, JSON_DECODE_ANY, NULL), *y = json_loads(b, JSON_DECODE_ANY, NULL);
    bool same = x && y && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return same;
}

/* A "$ref" names a document: each reference name once. */
const reg_type_t reg_type_json = {"JSON", "JSON",  js_load, js_canonical, js_compatible,
                                  NULL,   js_free, js_same, true,         take};

int floe_registry_json_schema(floe_registry_t *r, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    *out = reg_schema_load(r, id, &reg_type_json, err);
    return *out ? 0 : -1;
}
