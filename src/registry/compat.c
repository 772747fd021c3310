/* Avro schema compatibility for the registry (registry.h): can a reader
 * schema read what a writer schema wrote, by the Avro specification's
 * schema resolution rules, with the reasons when it cannot.  Unlike the
 * decoder's own check (format/avro_resolve.c), which lets data decide
 * union branches and enum symbols, a registry must refuse any writer
 * branch or symbol the reader could not take. */
#include <stdio.h>
#include <string.h>

#include "registry/registry.h"

#define MAX_DEPTH 64

typedef struct ctx {
    const floe_avro_schema_t *stack_r[MAX_DEPTH], *stack_w[MAX_DEPTH];
    int depth;
    floe_buf_t *msgs;
    int nproblems;
} ctx_t;

static void problem(ctx_t *c, const char *type, const char *path, const char *fmt, const char *a,
                    const char *b)
{
    c->nproblems++;
    if (!c->msgs) return;
    char desc[512];
    snprintf(desc, sizeof desc, fmt, a ? a : "", b ? b : "");
    floe_buf_printf(c->msgs, "{errorType:'%s', description:'%s', path:'%s'}\n", type, desc,
                    path[0] ? path : "/");
}

static const char *tname(const floe_avro_schema_t *s)
{
    const char *n = floe_avro_schema_fullname(s);
    return n ? n : floe_avro_type_name(floe_avro_schema_type(s));
}

static bool check(ctx_t *c, const floe_avro_schema_t *r, const floe_avro_schema_t *w,
                  const char *path);

/* check() with a cycle guard: a pair already being compared is taken as
 * compatible (recursive named types). */
static bool check_in(ctx_t *c, const floe_avro_schema_t *r, const floe_avro_schema_t *w,
                     const char *path)
{
    for (int i = 0; i < c->depth; i++)
        if (c->stack_r[i] == r && c->stack_w[i] == w) return true;
    if (c->depth >= MAX_DEPTH) {
        problem(c, "TYPE_MISMATCH", path, "schemas nested deeper than the checker follows%s%s",
                NULL, NULL);
        return false;
    }
    c->stack_r[c->depth] = r;
    c->stack_w[c->depth++] = w;
    bool ok = check(c, r, w, path);
    c->depth--;
    return ok;
}

/* A silent trial: would r read w, without recording problems. */
static bool fits(ctx_t *c, const floe_avro_schema_t *r, const floe_avro_schema_t *w)
{
    ctx_t t = *c;
    t.msgs = NULL;
    t.nproblems = 0;
    return check(&t, r, w, "");
}

static bool check_record(ctx_t *c, const floe_avro_schema_t *r, const floe_avro_schema_t *w,
                         const char *path)
{
    bool ok = true;
    for (size_t j = 0; j < floe_avro_schema_field_count(r); j++) {
        const char *name = floe_avro_schema_field_name(r, j);
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/fields/%zu", path, j);
        int i = floe_avro_schema_field_index(w, name);
        if (i < 0) {
            if (!floe_avro_schema_field_has_default(r, j)) {
                problem(c, "READER_FIELD_MISSING_DEFAULT_VALUE", sub,
                        "The field '%s' in the new schema has no default value and is missing in "
                        "the old schema%s",
                        name, NULL);
                ok = false;
            }
            continue;
        }
        if (!check_in(c, floe_avro_schema_field_type(r, j),
                      floe_avro_schema_field_type(w, (size_t)i), sub))
            ok = false;
    }
    return ok;
}

static bool check_enum(ctx_t *c, const floe_avro_schema_t *r, const floe_avro_schema_t *w,
                       const char *path)
{
    if (floe_avro_schema_prop_str(r, "default")) return true;
    bool ok = true;
    for (size_t i = 0; i < floe_avro_schema_symbol_count(w); i++) {
        const char *sym = floe_avro_schema_symbol(w, i);
        if (floe_avro_schema_symbol_index(r, sym) < 0) {
            problem(c, "MISSING_ENUM_SYMBOLS", path,
                    "The new schema is missing enum symbol '%s' of enum %s", sym, tname(w));
            ok = false;
        }
    }
    return ok;
}

static bool check(ctx_t *c, const floe_avro_schema_t *r, const floe_avro_schema_t *w,
                  const char *path)
{
    floe_avro_type_t rt = floe_avro_schema_type(r), wt = floe_avro_schema_type(w);
    if (wt == FLOE_AVRO_UNION) {
        bool ok = true;
        for (size_t i = 0; i < floe_avro_schema_branch_count(w); i++)
            if (!check_in(c, r, floe_avro_schema_branch(w, i), path)) ok = false;
        return ok;
    }
    if (rt == FLOE_AVRO_UNION) {
        for (size_t i = 0; i < floe_avro_schema_branch_count(r); i++)
            if (fits(c, floe_avro_schema_branch(r, i), w)) return true;
        problem(c, "MISSING_UNION_BRANCH", path,
                "The new schema's union has no branch that reads the old schema's %s%s", tname(w),
                NULL);
        return false;
    }
    if (rt != wt) {
        if (floe_avro_promotable(wt, rt)) return true;
        problem(c, "TYPE_MISMATCH", path, "The type %s in the old schema cannot be read as %s",
                tname(w), tname(r));
        return false;
    }
    switch (rt) {
    case FLOE_AVRO_RECORD:
    case FLOE_AVRO_ENUM:
    case FLOE_AVRO_FIXED:
        if (strcmp(floe_avro_schema_name(r), floe_avro_schema_name(w))) {
            problem(c, "NAME_MISMATCH", path, "The name %s in the old schema does not match %s",
                    tname(w), tname(r));
            return false;
        }
        if (rt == FLOE_AVRO_RECORD) return check_record(c, r, w, path);
        if (rt == FLOE_AVRO_ENUM) return check_enum(c, r, w, path);
        if (floe_avro_schema_fixed_size(r) != floe_avro_schema_fixed_size(w)) {
            problem(c, "FIXED_SIZE_MISMATCH", path, "The size of fixed %s differs%s", tname(r),
                    NULL);
            return false;
        }
        return true;
    case FLOE_AVRO_ARRAY: {
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/items", path);
        return check_in(c, floe_avro_schema_items(r), floe_avro_schema_items(w), sub);
    }
    case FLOE_AVRO_MAP: {
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/values", path);
        return check_in(c, floe_avro_schema_values(r), floe_avro_schema_values(w), sub);
    }
    default: return true;
    }
}

bool floe_registry_avro_compatible(const floe_avro_schema_t *reader,
                                   const floe_avro_schema_t *writer, floe_buf_t *msgs)
{
    ctx_t c = {.msgs = msgs};
    return check_in(&c, reader, writer, "") && c.nproblems == 0;
}
