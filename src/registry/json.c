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

#define MAX_REF_DEPTH 16
#define MAX_DOCS 64

typedef struct docs {
    floe_jschema_doc_t d[MAX_DOCS];
    size_t n;
} docs_t;

/* The documents refs name, and theirs, into ds (each once). */
static int collect(floe_registry_t *r, const reg_ref_t *refs, size_t nrefs, docs_t *ds, int depth,
                   reg_status_t *st)
{
    if (depth > MAX_REF_DEPTH)
        return reg_fail(st, 422, 42201, "Invalid schema: references nested deeper than %d",
                        MAX_REF_DEPTH);
    for (size_t i = 0; i < nrefs; i++) {
        bool have = false;
        for (size_t k = 0; k < ds->n && !have; k++) have = !strcmp(ds->d[k].name, refs[i].name);
        if (have) continue;
        const reg_schema_t *sc = reg_ref_schema(r, &refs[i]);
        if (!sc || sc->type != &reg_type_json)
            return reg_fail(st, 422, 42201,
                            "Invalid schema: reference %s is not a registered JSON schema",
                            refs[i].name);
        if (ds->n == MAX_DOCS)
            return reg_fail(st, 422, 42201, "Invalid schema: more than %d references", MAX_DOCS);
        ds->d[ds->n++] = (floe_jschema_doc_t){refs[i].name, sc->text, strlen(sc->text)};
        if (collect(r, sc->refs, sc->nrefs, ds, depth + 1, st)) return -1;
    }
    return 0;
}

static int load(floe_registry_t *r, const char *text, size_t len, const reg_ref_t *refs,
                size_t nrefs, floe_jschema_t **out, reg_status_t *st)
{
    docs_t ds = {.n = 0};
    if (collect(r, refs, nrefs, &ds, 0, st)) return -1;
    floe_err_t err = {0};
    if (floe_jschema_parse(text, len, ds.d, ds.n, out, &err))
        return reg_fail(st, err.code == FLOE_ENOMEM ? 500 : 422,
                        err.code == FLOE_ENOMEM ? 50001 : 42201, "Invalid schema: %s", err.msg);
    return 0;
}

static int js_parse(floe_registry_t *r, const char *text, size_t len, const reg_ref_t *refs,
                    size_t nrefs, char **canon, void **parsed, reg_status_t *st)
{
    floe_jschema_t *s = NULL;
    *canon = NULL;
    if (load(r, text, len, refs, nrefs, &s, st)) return -1;
    if (!(*canon = floe_jschema_canonical(s))) {
        floe_jschema_free(s);
        return reg_fail(st, 500, 50001, "out of memory");
    }
    if (parsed) *parsed = s;
    else
        floe_jschema_free(s);
    return 0;
}

static bool js_compatible(const void *reader, const void *writer, floe_buf_t *msgs)
{
    return floe_registry_json_compatible(reader, writer, msgs);
}

static char *js_render(floe_registry_t *r, const reg_schema_t *sc, const char *format)
{
    (void)r;
    (void)sc;
    (void)format;
    return NULL;
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

const reg_type_t reg_type_json = {"JSON", js_parse, js_compatible, js_render, js_free, js_same};

int floe_registry_json_schema(floe_registry_t *r, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    *out = NULL;
    pthread_mutex_lock(&r->mu);
    const reg_schema_t *sc = reg_schema_by_id(r, id);
    reg_status_t st = {0};
    int rc = -1;
    if (!sc) floe_err_set(err, FLOE_ENOENT, "schema id %d is not in the registry", (int)id);
    else if (sc->type != &reg_type_json)
        floe_err_set(err, FLOE_EINVAL, "schema id %d is not a JSON schema", (int)id);
    else if (load(r, sc->text, strlen(sc->text), sc->refs, sc->nrefs, out, &st))
        floe_err_set(err, FLOE_EINVAL, "schema id %d: %s", (int)id, st.msg);
    else
        rc = 0;
    pthread_mutex_unlock(&r->mu);
    return rc;
}
