/* Schema evolution: the changes the spec allows without rewriting data
 * ("Schema Evolution"), refusing the rest with a clear error. */
#include "iceberg/types.h"

#include <stdlib.h>
#include <string.h>

static floe_ice_field_t *find_mut(floe_ice_schema_t *s, const char *name)
{
    return (floe_ice_field_t *)floe_ice_schema_find_name(s, name);
}

static void reassign_ids(floe_ice_type_t *t, int32_t *last)
{
    for (size_t i = 0; i < t->nfields; i++) {
        t->fields[i].id = ++*last;
        reassign_ids(t->fields[i].type, last);
    }
}

int floe_ice_schema_add_column(floe_ice_schema_t *s, int32_t *last_column_id, const char *parent,
                               const char *name, floe_ice_type_t *type, const char *doc,
                               floe_err_t *err)
{
    if (!type) return floe_err_oom(err);
    floe_ice_type_t *st = s->root;
    if (parent && *parent) {
        const floe_ice_field_t *pf = find_mut(s, parent);
        if (!pf) {
            floe_ice_type_free(type);
            return floe_err_set(err, FLOE_EINVAL, "add column '%s': no parent column '%s'", name,
                                parent);
        }
        st = pf->type;
        if (st->kind != FLOE_ICE_STRUCT) {
            floe_ice_type_free(type);
            return floe_err_set(err, FLOE_EINVAL, "add column '%s': parent '%s' is not a struct",
                                name, parent);
        }
    }
    if (!name || !*name || strchr(name, '.')) {
        floe_ice_type_free(type);
        return floe_err_set(err, FLOE_EINVAL, "add column: bad name '%s'", name ? name : "");
    }
    for (size_t i = 0; i < st->nfields; i++)
        if (strcmp(st->fields[i].name, name) == 0) {
            floe_ice_type_free(type);
            return floe_err_set(err, FLOE_EINVAL, "add column '%s': a column with that name exists",
                                name);
        }
    int32_t last = *last_column_id;
    int32_t id = ++last;
    reassign_ids(type, &last);
    if (floe_ice_struct_add(st, id, name, false, type, doc) < 0) return floe_err_oom(err);
    *last_column_id = last;
    return 0;
}

int floe_ice_schema_make_optional(floe_ice_schema_t *s, const char *name, floe_err_t *err)
{
    floe_ice_field_t *f = find_mut(s, name);
    if (!f) return floe_err_set(err, FLOE_EINVAL, "make optional: no column '%s'", name);
    for (size_t i = 0; i < s->n_identifier_ids; i++)
        if (s->identifier_ids[i] == f->id)
            return floe_err_set(err, FLOE_EINVAL, "make optional: '%s' is an identifier field",
                                name);
    f->required = false;
    return 0;
}

int floe_ice_schema_promote(floe_ice_schema_t *s, const char *name, const floe_ice_type_t *to,
                            floe_err_t *err)
{
    floe_ice_field_t *f = find_mut(s, name);
    if (!f) return floe_err_set(err, FLOE_EINVAL, "promote: no column '%s'", name);
    floe_ice_type_t *from = f->type;
    char a[48], b[48];
    floe_ice_type_name(from, a, sizeof a);
    floe_ice_type_name(to, b, sizeof b);
    if (!floe_ice_kind_is_primitive(to->kind) || !floe_ice_kind_is_primitive(from->kind))
        return floe_err_set(err, FLOE_EINVAL,
                            "promote '%s': only primitive columns can change type", name);
    if (floe_ice_type_equal(from, to)) return 0;
    bool ok = (from->kind == FLOE_ICE_INT && to->kind == FLOE_ICE_LONG) ||
              (from->kind == FLOE_ICE_FLOAT && to->kind == FLOE_ICE_DOUBLE) ||
              (from->kind == FLOE_ICE_DECIMAL && to->kind == FLOE_ICE_DECIMAL &&
               to->scale == from->scale && to->precision >= from->precision);
    if (!ok)
        return floe_err_set(err, FLOE_EINVAL,
                            "incompatible change of column '%s' from %s to %s (allowed: int->long, "
                            "float->double, decimal(P,S)->decimal(P2,S) with P2>=P)",
                            name, a, b);
    from->kind = to->kind;
    from->precision = to->precision;
    from->scale = to->scale;
    return 0;
}

int floe_ice_schema_rename(floe_ice_schema_t *s, const char *name, const char *new_name,
                           floe_err_t *err)
{
    floe_ice_field_t *f = find_mut(s, name);
    if (!f) return floe_err_set(err, FLOE_EINVAL, "rename: no column '%s'", name);
    if (!new_name || !*new_name || strchr(new_name, '.'))
        return floe_err_set(err, FLOE_EINVAL, "rename '%s': bad new name", name);
    /* the sibling struct: the parent path is everything before the last dot */
    const floe_ice_type_t *parent = s->root;
    const char *dot = strrchr(name, '.');
    if (dot) {
        char *pp = strndup(name, (size_t)(dot - name));
        if (!pp) return floe_err_oom(err);
        const floe_ice_field_t *pf = floe_ice_schema_find_name(s, pp);
        free(pp);
        parent = pf ? pf->type : NULL;
    }
    if (!parent || parent->kind != FLOE_ICE_STRUCT)
        return floe_err_set(err, FLOE_EINVAL, "rename '%s': only struct fields can be renamed",
                            name);
    for (size_t i = 0; i < parent->nfields; i++)
        if (strcmp(parent->fields[i].name, new_name) == 0)
            return floe_err_set(err, FLOE_EINVAL, "rename '%s': '%s' already exists", name,
                                new_name);
    char *n = strdup(new_name);
    if (!n) return floe_err_oom(err);
    free(f->name);
    f->name = n;
    return 0;
}
