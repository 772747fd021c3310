/* JSON for schemas, specs, sort orders, snapshots and table metadata (spec
 * "Table Metadata and Snapshots", Appendix C); the REST updates and
 * requirements are in rest_json.c.  The reader takes untrusted text: every
 * member is type-checked, nesting is bounded, and errors say which member
 * is wrong. */
#include "iceberg/metadata.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata_json_int.h"

#define MAX_DEPTH 64

/* ---- small helpers ---- */

int mj_bad(floe_err_t *err, const char *what)
{
    return floe_err_set(err, FLOE_ECORRUPT, "metadata: %s", what);
}

int mj_get_i64(json_t *o, const char *key, bool required, int64_t *out, floe_err_t *err)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required) return floe_err_set(err, FLOE_ECORRUPT, "metadata: missing '%s'", key);
        return 1;
    }
    if (!json_is_integer(v))
        return floe_err_set(err, FLOE_ECORRUPT, "metadata: '%s' is not an integer", key);
    *out = json_integer_value(v);
    return 0;
}

int mj_get_i32(json_t *o, const char *key, bool required, int32_t *out, floe_err_t *err)
{
    int64_t v = 0;
    int rc = mj_get_i64(o, key, required, &v, err);
    if (rc) return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return floe_err_set(err, FLOE_ECORRUPT, "metadata: '%s' out of range", key);
    *out = (int32_t)v;
    return 0;
}

const char *mj_get_str(json_t *o, const char *key, bool required, floe_err_t *err)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        if (required) floe_err_set(err, FLOE_ECORRUPT, "metadata: missing '%s'", key);
        return NULL;
    }
    if (!json_is_string(v)) {
        floe_err_set(err, FLOE_ECORRUPT, "metadata: '%s' is not a string", key);
        return NULL;
    }
    return json_string_value(v);
}

static int get_bool(json_t *o, const char *key, bool *out, floe_err_t *err)
{
    json_t *v = json_object_get(o, key);
    if (!v || !json_is_boolean(v))
        return floe_err_set(err, FLOE_ECORRUPT, "metadata: '%s' must be a boolean", key);
    *out = json_is_true(v);
    return 0;
}

int mj_set_new(json_t *o, const char *key, json_t *v)
{
    if (!v) return -1;
    return json_object_set_new(o, key, v);
}

/* ---- types and schemas ---- */

static json_t *type_to_json(const floe_ice_type_t *t)
{
    char name[48];
    if (floe_ice_kind_is_primitive(t->kind))
        return json_string(floe_ice_type_name(t, name, sizeof name));
    json_t *o = json_object();
    if (!o) return NULL;
    int rc = 0;
    if (t->kind == FLOE_ICE_STRUCT) {
        json_t *fs = json_array();
        rc |= mj_set_new(o, "type", json_string("struct"));
        rc |= mj_set_new(o, "fields", fs);
        for (size_t i = 0; rc == 0 && i < t->nfields; i++) {
            const floe_ice_field_t *f = &t->fields[i];
            json_t *fo = json_object();
            if (!fo) {
                rc = -1;
                break;
            }
            rc |= json_array_append_new(fs, fo);
            rc |= mj_set_new(fo, "id", json_integer(f->id));
            rc |= mj_set_new(fo, "name", json_string(f->name));
            rc |= mj_set_new(fo, "required", json_boolean(f->required));
            rc |= mj_set_new(fo, "type", type_to_json(f->type));
            if (f->doc) rc |= mj_set_new(fo, "doc", json_string(f->doc));
        }
    } else if (t->kind == FLOE_ICE_LIST) {
        rc |= mj_set_new(o, "type", json_string("list"));
        rc |= mj_set_new(o, "element-id", json_integer(t->fields[0].id));
        rc |= mj_set_new(o, "element", type_to_json(t->fields[0].type));
        rc |= mj_set_new(o, "element-required", json_boolean(t->fields[0].required));
    } else {
        rc |= mj_set_new(o, "type", json_string("map"));
        rc |= mj_set_new(o, "key-id", json_integer(t->fields[0].id));
        rc |= mj_set_new(o, "key", type_to_json(t->fields[0].type));
        rc |= mj_set_new(o, "value-id", json_integer(t->fields[1].id));
        rc |= mj_set_new(o, "value", type_to_json(t->fields[1].type));
        rc |= mj_set_new(o, "value-required", json_boolean(t->fields[1].required));
    }
    if (rc) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *mj_schema_to_json(const floe_ice_schema_t *s)
{
    json_t *o = type_to_json(s->root);
    if (!o) return NULL;
    json_t *ids = json_array();
    int rc = mj_set_new(o, "schema-id", json_integer(s->schema_id));
    rc |= mj_set_new(o, "identifier-field-ids", ids);
    for (size_t i = 0; rc == 0 && i < s->n_identifier_ids; i++)
        rc |= json_array_append_new(ids, json_integer(s->identifier_ids[i]));
    if (rc) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static floe_ice_type_t *type_from_json(json_t *j, int depth, floe_err_t *err)
{
    if (depth > MAX_DEPTH) {
        mj_bad(err, "types nested too deeply");
        return NULL;
    }
    if (json_is_string(j)) return floe_ice_type_parse(json_string_value(j), err);
    if (!json_is_object(j)) {
        mj_bad(err, "type must be a string or an object");
        return NULL;
    }
    const char *kind = mj_get_str(j, "type", true, err);
    if (!kind) return NULL;
    if (strcmp(kind, "struct") == 0) {
        json_t *fs = json_object_get(j, "fields");
        if (!json_is_array(fs)) {
            mj_bad(err, "struct 'fields' must be an array");
            return NULL;
        }
        floe_ice_type_t *st = floe_ice_type_struct();
        if (!st) {
            floe_err_oom(err);
            return NULL;
        }
        size_t i;
        json_t *f;
        json_array_foreach(fs, i, f)
        {
            int32_t id = 0;
            bool req = false;
            const char *name, *doc = NULL;
            if (!json_is_object(f) || mj_get_i32(f, "id", true, &id, err) != 0 ||
                !(name = mj_get_str(f, "name", true, err)) ||
                get_bool(f, "required", &req, err) < 0) {
                if (!json_is_object(f)) mj_bad(err, "field must be an object");
                floe_ice_type_free(st);
                return NULL;
            }
            json_t *dj = json_object_get(f, "doc");
            if (json_is_string(dj)) doc = json_string_value(dj);
            floe_ice_type_t *ft = type_from_json(json_object_get(f, "type"), depth + 1, err);
            if (!ft) {
                floe_ice_type_free(st);
                return NULL;
            }
            if (floe_ice_struct_add(st, id, name, req, ft, doc) < 0) {
                floe_ice_type_free(st);
                floe_err_oom(err);
                return NULL;
            }
        }
        return st;
    }
    if (strcmp(kind, "list") == 0) {
        int32_t id = 0;
        bool req = false;
        if (mj_get_i32(j, "element-id", true, &id, err) != 0 ||
            get_bool(j, "element-required", &req, err) < 0)
            return NULL;
        floe_ice_type_t *et = type_from_json(json_object_get(j, "element"), depth + 1, err);
        if (!et) return NULL;
        floe_ice_type_t *t = floe_ice_type_list(id, req, et);
        if (!t) floe_err_oom(err);
        return t;
    }
    if (strcmp(kind, "map") == 0) {
        int32_t kid = 0, vid = 0;
        bool req = false;
        if (mj_get_i32(j, "key-id", true, &kid, err) != 0 ||
            mj_get_i32(j, "value-id", true, &vid, err) != 0 ||
            get_bool(j, "value-required", &req, err) < 0)
            return NULL;
        floe_ice_type_t *kt = type_from_json(json_object_get(j, "key"), depth + 1, err);
        if (!kt) return NULL;
        floe_ice_type_t *vt = type_from_json(json_object_get(j, "value"), depth + 1, err);
        if (!vt) {
            floe_ice_type_free(kt);
            return NULL;
        }
        floe_ice_type_t *t = floe_ice_type_map(kid, kt, vid, req, vt);
        if (!t) floe_err_oom(err);
        return t;
    }
    floe_err_set(err, FLOE_ECORRUPT, "metadata: unknown nested type '%.32s'", kind);
    return NULL;
}

floe_ice_schema_t *mj_schema_from_json(json_t *j, floe_err_t *err)
{
    if (!json_is_object(j)) {
        mj_bad(err, "schema must be an object");
        return NULL;
    }
    const char *kind = mj_get_str(j, "type", true, err);
    if (!kind) return NULL;
    if (strcmp(kind, "struct") != 0) {
        mj_bad(err, "schema type must be struct");
        return NULL;
    }
    int32_t sid = 0;
    if (mj_get_i32(j, "schema-id", false, &sid, err) < 0) return NULL;
    floe_ice_type_t *root = type_from_json(j, 0, err);
    if (!root) return NULL;
    floe_ice_schema_t *s = floe_ice_schema_new(sid, root);
    if (!s) {
        floe_err_oom(err);
        return NULL;
    }
    json_t *ids = json_object_get(j, "identifier-field-ids");
    if (ids && !json_is_null(ids)) {
        if (!json_is_array(ids)) {
            mj_bad(err, "identifier-field-ids must be an array");
            goto fail;
        }
        size_t n = json_array_size(ids);
        if (n) {
            s->identifier_ids = calloc(n, sizeof(int32_t));
            if (!s->identifier_ids) {
                floe_err_oom(err);
                goto fail;
            }
            for (size_t i = 0; i < n; i++) {
                json_t *v = json_array_get(ids, i);
                if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                    json_integer_value(v) > INT32_MAX) {
                    mj_bad(err, "identifier-field-ids must hold field ids");
                    goto fail;
                }
                s->identifier_ids[i] = (int32_t)json_integer_value(v);
            }
            s->n_identifier_ids = n;
        }
    }
    if (floe_ice_schema_validate(s, err) < 0) {
        err->code = FLOE_ECORRUPT;
        goto fail;
    }
    return s;
fail:
    floe_ice_schema_free(s);
    return NULL;
}

char *mj_dump(json_t *j, floe_err_t *err)
{
    if (!j) {
        floe_err_oom(err);
        return NULL;
    }
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!s) floe_err_oom(err);
    return s;
}

json_t *mj_load(const char *text, size_t len, floe_err_t *err)
{
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        floe_err_set(err, FLOE_ECORRUPT, "metadata: bad JSON at line %d: %.120s", je.line, je.text);
    return j;
}

char *floe_ice_schema_to_json(const floe_ice_schema_t *s, floe_err_t *err)
{
    return mj_dump(mj_schema_to_json(s), err);
}

floe_ice_schema_t *floe_ice_schema_from_json(const char *json, size_t len, floe_err_t *err)
{
    json_t *j = mj_load(json, len, err);
    if (!j) return NULL;
    floe_ice_schema_t *s = mj_schema_from_json(j, err);
    json_decref(j);
    return s;
}

/* ---- specs and sort orders ---- */

static json_t *spec_fields_to_json(const floe_ice_spec_t *s)
{
    json_t *a = json_array();
    if (!a) return NULL;
    for (size_t i = 0; i < s->nfields; i++) {
        const floe_ice_partition_field_t *f = &s->fields[i];
        char tn[48];
        json_t *o = json_object();
        if (!o || json_array_append_new(a, o) < 0 ||
            mj_set_new(o, "name", json_string(f->name)) < 0 ||
            mj_set_new(o, "transform",
                       json_string(floe_ice_transform_name(f->transform, tn, sizeof tn))) < 0 ||
            mj_set_new(o, "source-id", json_integer(f->source_id)) < 0 ||
            mj_set_new(o, "field-id", json_integer(f->field_id)) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *mj_spec_to_json(const floe_ice_spec_t *s)
{
    json_t *o = json_object();
    if (!o || mj_set_new(o, "spec-id", json_integer(s->spec_id)) < 0 ||
        mj_set_new(o, "fields", spec_fields_to_json(s)) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *floe_ice_spec_fields_to_json(const floe_ice_spec_t *s, floe_err_t *err)
{
    return mj_dump(spec_fields_to_json(s), err);
}

char *floe_ice_spec_to_json(const floe_ice_spec_t *s, floe_err_t *err)
{
    return mj_dump(mj_spec_to_json(s), err);
}

floe_ice_spec_t *mj_spec_from_fields(json_t *fs, int32_t spec_id, int32_t *next_v1_id,
                                     floe_err_t *err)
{
    if (!json_is_array(fs)) {
        mj_bad(err, "partition spec fields must be an array");
        return NULL;
    }
    floe_ice_spec_t *s = floe_ice_spec_new(spec_id);
    if (!s) {
        floe_err_oom(err);
        return NULL;
    }
    size_t i;
    json_t *f;
    json_array_foreach(fs, i, f)
    {
        int32_t src = 0, fid = 0;
        const char *name, *tr;
        floe_ice_transform_t t;
        if (!json_is_object(f)) {
            mj_bad(err, "partition field must be an object");
            goto fail;
        }
        if (mj_get_i32(f, "source-id", true, &src, err) != 0) goto fail;
        int rc = mj_get_i32(f, "field-id", false, &fid, err);
        if (rc < 0) goto fail;
        if (rc == 1) fid = (*next_v1_id)++; /* v1 specs may omit field ids */
        if (!(name = mj_get_str(f, "name", true, err)) ||
            !(tr = mj_get_str(f, "transform", true, err)))
            goto fail;
        if (floe_ice_transform_parse(tr, &t, err) < 0) {
            err->code = FLOE_ECORRUPT;
            goto fail;
        }
        if (floe_ice_spec_add(s, src, fid, name, t) < 0) {
            floe_err_oom(err);
            goto fail;
        }
    }
    return s;
fail:
    floe_ice_spec_free(s);
    return NULL;
}

floe_ice_spec_t *floe_ice_spec_fields_from_json(const char *json, size_t len, int32_t spec_id,
                                                floe_err_t *err)
{
    json_t *j = mj_load(json, len, err);
    if (!j) return NULL;
    int32_t next = 1000;
    floe_ice_spec_t *s = mj_spec_from_fields(j, spec_id, &next, err);
    json_decref(j);
    return s;
}

floe_ice_spec_t *mj_spec_from_json(json_t *j, int32_t *next_v1_id, floe_err_t *err)
{
    int32_t id = 0;
    if (!json_is_object(j)) {
        mj_bad(err, "partition spec must be an object");
        return NULL;
    }
    if (mj_get_i32(j, "spec-id", true, &id, err) != 0) return NULL;
    return mj_spec_from_fields(json_object_get(j, "fields"), id, next_v1_id, err);
}

json_t *mj_order_to_json(const floe_ice_sort_order_t *o)
{
    json_t *j = json_object(), *fs = json_array();
    if (!j || !fs || mj_set_new(j, "order-id", json_integer(o->order_id)) < 0 ||
        mj_set_new(j, "fields", fs) < 0) {
        json_decref(j);
        return NULL;
    }
    for (size_t i = 0; i < o->nfields; i++) {
        char tn[48];
        const floe_ice_sort_field_t *f = &o->fields[i];
        json_t *fo = json_object();
        if (!fo || json_array_append_new(fs, fo) < 0 ||
            mj_set_new(fo, "transform",
                       json_string(floe_ice_transform_name(f->transform, tn, sizeof tn))) < 0 ||
            mj_set_new(fo, "source-id", json_integer(f->source_id)) < 0 ||
            mj_set_new(fo, "direction", json_string(f->descending ? "desc" : "asc")) < 0 ||
            mj_set_new(fo, "null-order",
                       json_string(f->nulls_last ? "nulls-last" : "nulls-first")) < 0) {
            json_decref(j);
            return NULL;
        }
    }
    return j;
}

floe_ice_sort_order_t *mj_order_from_json(json_t *j, floe_err_t *err)
{
    int32_t id = 0;
    if (!json_is_object(j)) {
        mj_bad(err, "sort order must be an object");
        return NULL;
    }
    if (mj_get_i32(j, "order-id", true, &id, err) != 0) return NULL;
    json_t *fs = json_object_get(j, "fields");
    if (!json_is_array(fs)) {
        mj_bad(err, "sort order fields must be an array");
        return NULL;
    }
    floe_ice_sort_order_t *o = floe_ice_sort_order_new(id);
    if (!o) {
        floe_err_oom(err);
        return NULL;
    }
    size_t i;
    json_t *f;
    json_array_foreach(fs, i, f)
    {
        floe_ice_sort_field_t sf;
        memset(&sf, 0, sizeof sf);
        const char *tr, *dir, *no;
        if (!json_is_object(f)) {
            mj_bad(err, "sort field must be an object");
            goto fail;
        }
        if (!(tr = mj_get_str(f, "transform", true, err)) ||
            mj_get_i32(f, "source-id", true, &sf.source_id, err) != 0 ||
            !(dir = mj_get_str(f, "direction", true, err)) ||
            !(no = mj_get_str(f, "null-order", true, err)))
            goto fail;
        if (floe_ice_transform_parse(tr, &sf.transform, err) < 0) {
            err->code = FLOE_ECORRUPT;
            goto fail;
        }
        if (strcmp(dir, "asc") && strcmp(dir, "desc")) {
            mj_bad(err, "sort direction must be asc or desc");
            goto fail;
        }
        if (strcmp(no, "nulls-first") && strcmp(no, "nulls-last")) {
            mj_bad(err, "bad null-order");
            goto fail;
        }
        sf.descending = strcmp(dir, "desc") == 0;
        sf.nulls_last = strcmp(no, "nulls-last") == 0;
        if (floe_ice_sort_order_add(o, sf) < 0) {
            floe_err_oom(err);
            goto fail;
        }
    }
    return o;
fail:
    floe_ice_sort_order_free(o);
    return NULL;
}

/* ---- snapshots ---- */

json_t *mj_props_to_json(const floe_ice_props_t *p)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < p->n; i++)
        if (mj_set_new(o, p->kv[i].key, json_string(p->kv[i].value)) < 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

int mj_props_from_json(json_t *j, floe_ice_props_t *p, const char *skip, floe_err_t *err)
{
    if (!j || json_is_null(j)) return 0;
    if (!json_is_object(j)) return mj_bad(err, "properties must be an object");
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v)
    {
        if (skip && strcmp(k, skip) == 0) continue;
        if (!json_is_string(v))
            return floe_err_set(err, FLOE_ECORRUPT, "metadata: property '%.64s' is not a string",
                                k);
        if (floe_ice_props_set(p, k, json_string_value(v)) < 0) return floe_err_oom(err);
    }
    return 0;
}

json_t *mj_snapshot_to_json(const floe_ice_snapshot_t *s)
{
    json_t *o = json_object(), *sum = json_object();
    int rc = !o || !sum;
    if (!rc) {
        rc |= mj_set_new(o, "snapshot-id", json_integer(s->snapshot_id));
        if (s->parent_id >= 0)
            rc |= mj_set_new(o, "parent-snapshot-id", json_integer(s->parent_id));
        rc |= mj_set_new(o, "sequence-number", json_integer(s->sequence_number));
        rc |= mj_set_new(o, "timestamp-ms", json_integer(s->timestamp_ms));
        if (s->manifest_list) rc |= mj_set_new(o, "manifest-list", json_string(s->manifest_list));
        /* operation first, as other writers do */
        rc |= mj_set_new(sum, "operation", json_string(s->operation ? s->operation : "append"));
        for (size_t i = 0; i < s->summary.n; i++)
            rc |= mj_set_new(sum, s->summary.kv[i].key, json_string(s->summary.kv[i].value));
        rc |= json_object_set(o, "summary", sum);
        if (s->schema_id >= 0) rc |= mj_set_new(o, "schema-id", json_integer(s->schema_id));
    }
    json_decref(sum);
    if (rc) {
        json_decref(o);
        return NULL;
    }
    return o;
}

floe_ice_snapshot_t *mj_snapshot_from_json(json_t *j, floe_err_t *err)
{
    if (!json_is_object(j)) {
        mj_bad(err, "snapshot must be an object");
        return NULL;
    }
    floe_ice_snapshot_t *s = calloc(1, sizeof *s);
    if (!s) {
        floe_err_oom(err);
        return NULL;
    }
    s->parent_id = -1;
    s->schema_id = -1;
    const char *ml, *op = NULL;
    if (mj_get_i64(j, "snapshot-id", true, &s->snapshot_id, err) != 0 ||
        mj_get_i64(j, "parent-snapshot-id", false, &s->parent_id, err) < 0 ||
        mj_get_i64(j, "sequence-number", false, &s->sequence_number, err) < 0 ||
        mj_get_i64(j, "timestamp-ms", true, &s->timestamp_ms, err) != 0 ||
        mj_get_i32(j, "schema-id", false, &s->schema_id, err) < 0)
        goto fail;
    ml = mj_get_str(j, "manifest-list", false, err);
    if (!ml && json_object_get(j, "manifest-list") &&
        !json_is_null(json_object_get(j, "manifest-list")))
        goto fail;
    if (ml && !(s->manifest_list = strdup(ml))) goto oom;
    json_t *sum = json_object_get(j, "summary");
    if (sum && json_is_object(sum)) {
        op = mj_get_str(sum, "operation", false, err);
        if (mj_props_from_json(sum, &s->summary, "operation", err) < 0) goto fail;
    } else if (sum && !json_is_null(sum)) {
        mj_bad(err, "snapshot summary must be an object");
        goto fail;
    }
    if (!(s->operation = strdup(op ? op : "append"))) goto oom;
    return s;
oom:
    floe_err_oom(err);
fail:
    floe_ice_snapshot_free(s);
    return NULL;
}

json_t *mj_ref_to_json(const floe_ice_ref_t *r)
{
    json_t *o = json_object();
    int rc = !o;
    if (o) {
        rc |= mj_set_new(o, "snapshot-id", json_integer(r->snapshot_id));
        rc |= mj_set_new(o, "type", json_string(r->is_tag ? "tag" : "branch"));
        if (r->max_ref_age_ms >= 0)
            rc |= mj_set_new(o, "max-ref-age-ms", json_integer(r->max_ref_age_ms));
        if (r->max_snapshot_age_ms >= 0)
            rc |= mj_set_new(o, "max-snapshot-age-ms", json_integer(r->max_snapshot_age_ms));
        if (r->min_snapshots_to_keep >= 0)
            rc |= mj_set_new(o, "min-snapshots-to-keep", json_integer(r->min_snapshots_to_keep));
    }
    if (rc) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int mj_ref_from_json(json_t *j, floe_ice_ref_t *r, const char *id_key, floe_err_t *err)
{
    r->max_ref_age_ms = r->max_snapshot_age_ms = -1;
    r->min_snapshots_to_keep = -1;
    if (!json_is_object(j)) return mj_bad(err, "ref must be an object");
    const char *type = mj_get_str(j, "type", true, err);
    if (!type) return -1;
    if (strcmp(type, "tag") && strcmp(type, "branch"))
        return mj_bad(err, "ref type must be branch or tag");
    r->is_tag = strcmp(type, "tag") == 0;
    if (mj_get_i64(j, id_key, true, &r->snapshot_id, err) != 0 ||
        mj_get_i64(j, "max-ref-age-ms", false, &r->max_ref_age_ms, err) < 0 ||
        mj_get_i64(j, "max-snapshot-age-ms", false, &r->max_snapshot_age_ms, err) < 0 ||
        mj_get_i32(j, "min-snapshots-to-keep", false, &r->min_snapshots_to_keep, err) < 0)
        return -1;
    return 0;
}

/* ---- table metadata ---- */

char *floe_ice_metadata_to_json(const floe_ice_metadata_t *m, floe_err_t *err)
{
    json_t *o = json_object();
    if (!o) return mj_dump(NULL, err);
    int rc = 0;
    rc |= mj_set_new(o, "format-version", json_integer(m->format_version));
    rc |= mj_set_new(o, "table-uuid", json_string(m->table_uuid));
    rc |= mj_set_new(o, "location", json_string(m->location));
    if (m->format_version >= 2)
        rc |= mj_set_new(o, "last-sequence-number", json_integer(m->last_sequence_number));
    rc |= mj_set_new(o, "last-updated-ms", json_integer(m->last_updated_ms));
    rc |= mj_set_new(o, "last-column-id", json_integer(m->last_column_id));
    json_t *a = json_array();
    rc |= mj_set_new(o, "schemas", a);
    for (size_t i = 0; !rc && i < m->nschemas; i++)
        rc |= json_array_append_new(a, mj_schema_to_json(m->schemas[i]));
    rc |= mj_set_new(o, "current-schema-id", json_integer(m->current_schema_id));
    if (m->format_version == 1) {
        const floe_ice_schema_t *cs = floe_ice_metadata_current_schema(m);
        if (cs) rc |= mj_set_new(o, "schema", mj_schema_to_json(cs));
        const floe_ice_spec_t *ds = floe_ice_metadata_default_spec(m);
        if (ds) rc |= mj_set_new(o, "partition-spec", spec_fields_to_json(ds));
    }
    a = json_array();
    rc |= mj_set_new(o, "partition-specs", a);
    for (size_t i = 0; !rc && i < m->nspecs; i++)
        rc |= json_array_append_new(a, mj_spec_to_json(m->specs[i]));
    rc |= mj_set_new(o, "default-spec-id", json_integer(m->default_spec_id));
    rc |= mj_set_new(o, "last-partition-id", json_integer(m->last_partition_id));
    rc |= mj_set_new(o, "properties", mj_props_to_json(&m->properties));
    rc |= mj_set_new(o, "current-snapshot-id", json_integer(m->current_snapshot_id));
    a = json_array();
    rc |= mj_set_new(o, "snapshots", a);
    for (size_t i = 0; !rc && i < m->nsnapshots; i++)
        rc |= json_array_append_new(a, mj_snapshot_to_json(m->snapshots[i]));
    a = json_array();
    rc |= mj_set_new(o, "snapshot-log", a);
    for (size_t i = 0; !rc && i < m->nsnapshot_log; i++) {
        json_t *e = json_object();
        rc |= json_array_append_new(a, e);
        rc |= mj_set_new(e, "timestamp-ms", json_integer(m->snapshot_log[i].timestamp_ms));
        rc |= mj_set_new(e, "snapshot-id", json_integer(m->snapshot_log[i].snapshot_id));
    }
    a = json_array();
    rc |= mj_set_new(o, "metadata-log", a);
    for (size_t i = 0; !rc && i < m->nmetadata_log; i++) {
        json_t *e = json_object();
        rc |= json_array_append_new(a, e);
        rc |= mj_set_new(e, "timestamp-ms", json_integer(m->metadata_log[i].timestamp_ms));
        rc |= mj_set_new(e, "metadata-file", json_string(m->metadata_log[i].file));
    }
    a = json_array();
    rc |= mj_set_new(o, "sort-orders", a);
    for (size_t i = 0; !rc && i < m->norders; i++)
        rc |= json_array_append_new(a, mj_order_to_json(m->orders[i]));
    rc |= mj_set_new(o, "default-sort-order-id", json_integer(m->default_sort_order_id));
    a = json_object();
    rc |= mj_set_new(o, "refs", a);
    for (size_t i = 0; !rc && i < m->nrefs; i++)
        rc |= mj_set_new(a, m->refs[i].name, mj_ref_to_json(&m->refs[i]));
    if (rc) {
        json_decref(o);
        return mj_dump(NULL, err);
    }
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s) floe_err_oom(err);
    return s;
}

static int push(void ***arr, size_t *n, void *p)
{
    void **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na) return -1;
    *arr = na;
    na[(*n)++] = p;
    return 0;
}

static int parse_metadata(json_t *j, floe_ice_metadata_t *m, floe_err_t *err)
{
    if (!json_is_object(j)) return mj_bad(err, "top level must be an object");
    int32_t fv;
    if (mj_get_i32(j, "format-version", true, &fv, err) != 0) return -1;
    if (fv != 1 && fv != 2)
        return floe_err_set(err, FLOE_EUNSUPPORTED, "metadata: format-version %d not supported",
                            fv);
    m->format_version = fv;
    const char *uuid = mj_get_str(j, "table-uuid", fv >= 2, err);
    if (!uuid && fv >= 2) return -1;
    if (uuid) {
        if (strlen(uuid) != 36) return mj_bad(err, "table-uuid must be 36 characters");
        memcpy(m->table_uuid, uuid, 37);
    } else {
        floe_ice_uuid4(m->table_uuid);
    }
    const char *loc = mj_get_str(j, "location", true, err);
    if (!loc) return -1;
    if (!(m->location = strdup(loc))) return floe_err_oom(err);
    if (mj_get_i64(j, "last-sequence-number", fv >= 2, &m->last_sequence_number, err) < 0 ||
        mj_get_i64(j, "last-updated-ms", true, &m->last_updated_ms, err) != 0 ||
        mj_get_i32(j, "last-column-id", true, &m->last_column_id, err) != 0)
        return -1;

    /* schemas */
    json_t *schemas = json_object_get(j, "schemas");
    if (schemas && json_is_array(schemas)) {
        size_t i;
        json_t *sj;
        json_array_foreach(schemas, i, sj)
        {
            floe_ice_schema_t *s = mj_schema_from_json(sj, err);
            if (!s) return -1;
            if (push((void ***)&m->schemas, &m->nschemas, s) < 0) {
                floe_ice_schema_free(s);
                return floe_err_oom(err);
            }
        }
        if (mj_get_i32(j, "current-schema-id", true, &m->current_schema_id, err) != 0) return -1;
    } else if (fv == 1 && json_object_get(j, "schema")) {
        floe_ice_schema_t *s = mj_schema_from_json(json_object_get(j, "schema"), err);
        if (!s) return -1;
        if (push((void ***)&m->schemas, &m->nschemas, s) < 0) {
            floe_ice_schema_free(s);
            return floe_err_oom(err);
        }
        m->current_schema_id = s->schema_id;
    } else {
        return mj_bad(err, "missing 'schemas'");
    }
    if (!m->nschemas) return mj_bad(err, "no schemas");
    if (!floe_ice_metadata_current_schema(m))
        return mj_bad(err, "current-schema-id names no schema");

    /* partition specs */
    int32_t next_v1 = 1000;
    json_t *specs = json_object_get(j, "partition-specs");
    if (specs && json_is_array(specs)) {
        size_t i;
        json_t *sj;
        json_array_foreach(specs, i, sj)
        {
            floe_ice_spec_t *s = mj_spec_from_json(sj, &next_v1, err);
            if (!s) return -1;
            if (push((void ***)&m->specs, &m->nspecs, s) < 0) {
                floe_ice_spec_free(s);
                return floe_err_oom(err);
            }
        }
        if (mj_get_i32(j, "default-spec-id", true, &m->default_spec_id, err) != 0) return -1;
    } else if (fv == 1 && json_object_get(j, "partition-spec")) {
        floe_ice_spec_t *s =
            mj_spec_from_fields(json_object_get(j, "partition-spec"), 0, &next_v1, err);
        if (!s) return -1;
        if (push((void ***)&m->specs, &m->nspecs, s) < 0) {
            floe_ice_spec_free(s);
            return floe_err_oom(err);
        }
        m->default_spec_id = 0;
    } else {
        return mj_bad(err, "missing 'partition-specs'");
    }
    if (!floe_ice_metadata_default_spec(m)) return mj_bad(err, "default-spec-id names no spec");
    m->last_partition_id = 999;
    for (size_t i = 0; i < m->nspecs; i++)
        for (size_t k = 0; k < m->specs[i]->nfields; k++)
            if (m->specs[i]->fields[k].field_id > m->last_partition_id)
                m->last_partition_id = m->specs[i]->fields[k].field_id;
    int32_t lpi = m->last_partition_id;
    if (mj_get_i32(j, "last-partition-id", fv >= 2, &lpi, err) < 0) return -1;
    if (lpi > m->last_partition_id) m->last_partition_id = lpi;

    /* sort orders */
    json_t *orders = json_object_get(j, "sort-orders");
    if (orders && json_is_array(orders)) {
        size_t i;
        json_t *oj;
        json_array_foreach(orders, i, oj)
        {
            floe_ice_sort_order_t *o = mj_order_from_json(oj, err);
            if (!o) return -1;
            if (push((void ***)&m->orders, &m->norders, o) < 0) {
                floe_ice_sort_order_free(o);
                return floe_err_oom(err);
            }
        }
        if (mj_get_i32(j, "default-sort-order-id", fv >= 2, &m->default_sort_order_id, err) < 0)
            return -1;
    } else if (fv >= 2) {
        return mj_bad(err, "missing 'sort-orders'");
    }
    if (!m->norders) {
        floe_ice_sort_order_t *o = floe_ice_sort_order_new(0);
        if (!o || push((void ***)&m->orders, &m->norders, o) < 0) {
            floe_ice_sort_order_free(o);
            return floe_err_oom(err);
        }
        m->default_sort_order_id = 0;
    }

    if (mj_props_from_json(json_object_get(j, "properties"), &m->properties, NULL, err) < 0)
        return -1;
    m->current_snapshot_id = -1;
    if (mj_get_i64(j, "current-snapshot-id", false, &m->current_snapshot_id, err) < 0) return -1;

    json_t *snaps = json_object_get(j, "snapshots");
    if (snaps && !json_is_null(snaps)) {
        if (!json_is_array(snaps)) return mj_bad(err, "snapshots must be an array");
        size_t i;
        json_t *sj;
        json_array_foreach(snaps, i, sj)
        {
            floe_ice_snapshot_t *s = mj_snapshot_from_json(sj, err);
            if (!s) return -1;
            if (push((void ***)&m->snapshots, &m->nsnapshots, s) < 0) {
                floe_ice_snapshot_free(s);
                return floe_err_oom(err);
            }
        }
    }
    if (m->current_snapshot_id >= 0 && !floe_ice_metadata_current_snapshot(m))
        return mj_bad(err, "current-snapshot-id names no snapshot");

    json_t *log = json_object_get(j, "snapshot-log");
    if (log && !json_is_null(log)) {
        if (!json_is_array(log)) return mj_bad(err, "snapshot-log must be an array");
        size_t n = json_array_size(log);
        if (n && !(m->snapshot_log = calloc(n, sizeof *m->snapshot_log))) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(log, i);
            if (!json_is_object(e)) return mj_bad(err, "snapshot-log entry must be an object");
            if (mj_get_i64(e, "timestamp-ms", true, &m->snapshot_log[i].timestamp_ms, err) != 0 ||
                mj_get_i64(e, "snapshot-id", true, &m->snapshot_log[i].snapshot_id, err) != 0)
                return -1;
            m->nsnapshot_log++;
        }
    }
    log = json_object_get(j, "metadata-log");
    if (log && !json_is_null(log)) {
        if (!json_is_array(log)) return mj_bad(err, "metadata-log must be an array");
        size_t n = json_array_size(log);
        if (n && !(m->metadata_log = calloc(n, sizeof *m->metadata_log))) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(log, i);
            const char *f;
            if (!json_is_object(e)) return mj_bad(err, "metadata-log entry must be an object");
            if (mj_get_i64(e, "timestamp-ms", true, &m->metadata_log[i].timestamp_ms, err) != 0 ||
                !(f = mj_get_str(e, "metadata-file", true, err)))
                return -1;
            if (!(m->metadata_log[i].file = strdup(f))) return floe_err_oom(err);
            m->nmetadata_log++;
        }
    }

    json_t *refs = json_object_get(j, "refs");
    if (refs && !json_is_null(refs)) {
        if (!json_is_object(refs)) return mj_bad(err, "refs must be an object");
        size_t n = json_object_size(refs);
        if (n && !(m->refs = calloc(n, sizeof *m->refs))) return floe_err_oom(err);
        const char *k;
        json_t *v;
        json_object_foreach(refs, k, v)
        {
            floe_ice_ref_t *r = &m->refs[m->nrefs];
            if (mj_ref_from_json(v, r, "snapshot-id", err) < 0) return -1;
            if (!floe_ice_metadata_snapshot(m, r->snapshot_id))
                return floe_err_set(err, FLOE_ECORRUPT, "metadata: ref '%.64s' names no snapshot",
                                    k);
            if (!(r->name = strdup(k))) return floe_err_oom(err);
            m->nrefs++;
        }
    }
    /* v1 tables and older writers: main follows current-snapshot-id */
    if (m->current_snapshot_id >= 0 && !floe_ice_metadata_ref(m, "main")) {
        floe_ice_ref_t *nr = realloc(m->refs, (m->nrefs + 1) * sizeof *nr);
        if (!nr) return floe_err_oom(err);
        m->refs = nr;
        memset(&nr[m->nrefs], 0, sizeof *nr);
        nr[m->nrefs].snapshot_id = m->current_snapshot_id;
        nr[m->nrefs].max_ref_age_ms = nr[m->nrefs].max_snapshot_age_ms = -1;
        nr[m->nrefs].min_snapshots_to_keep = -1;
        if (!(nr[m->nrefs].name = strdup("main"))) return floe_err_oom(err);
        m->nrefs++;
    } else if (floe_ice_metadata_ref(m, "main") &&
               floe_ice_metadata_ref(m, "main")->snapshot_id != m->current_snapshot_id) {
        return mj_bad(err, "refs.main disagrees with current-snapshot-id");
    }
    return 0;
}

floe_ice_metadata_t *floe_ice_metadata_from_json(const char *json, size_t len, floe_err_t *err)
{
    json_t *j = mj_load(json, len, err);
    if (!j) return NULL;
    floe_ice_metadata_t *m = calloc(1, sizeof *m);
    if (!m) {
        json_decref(j);
        floe_err_oom(err);
        return NULL;
    }
    m->last_added_schema_id = m->last_added_spec_id = m->last_added_order_id = -1;
    int rc = parse_metadata(j, m, err);
    json_decref(j);
    if (rc < 0) {
        floe_ice_metadata_free(m);
        return NULL;
    }
    return m;
}
