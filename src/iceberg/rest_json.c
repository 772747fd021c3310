/* JSON for the REST catalog's table updates and requirements (the
 * "updates" and "requirements" of a CommitTableRequest), on top of the
 * metadata JSON of metadata_json.c. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "iceberg/metadata_json_int.h"

/* ---- REST updates and requirements ---- */

static const char *const update_names[] = {
    NULL,
    "assign-uuid",
    "upgrade-format-version",
    "add-schema",
    "set-current-schema",
    "add-spec",
    "set-default-spec",
    "add-sort-order",
    "set-default-sort-order",
    "add-snapshot",
    "set-snapshot-ref",
    "remove-snapshots",
    "remove-snapshot-ref",
    "set-location",
    "set-properties",
    "remove-properties",
};

static int append_dump(json_t *o, floe_buf_t *out, floe_err_t *err)
{
    char *s = mj_dump(o, err);
    if (!s) return -1;
    int rc = floe_buf_append_str(out, s);
    free(s);
    if (rc < 0) return floe_err_oom(err);
    return 0;
}

int floe_ice_update_to_json(const floe_ice_update_t *u, floe_buf_t *out, floe_err_t *err)
{
    if (u->kind < FLOE_ICE_UP_ASSIGN_UUID || u->kind > FLOE_ICE_UP_REMOVE_PROPERTIES)
        return floe_err_set(err, FLOE_EINVAL, "unknown update kind");
    json_t *o = json_object();
    int rc = !o;
    if (o) rc |= mj_set_new(o, "action", json_string(update_names[u->kind]));
    switch (u->kind) {
    case FLOE_ICE_UP_ASSIGN_UUID:
        rc |= mj_set_new(o, "uuid", json_string(u->str ? u->str : ""));
        break;
    case FLOE_ICE_UP_UPGRADE_FORMAT_VERSION:
        rc |= mj_set_new(o, "format-version", json_integer(u->id));
        break;
    case FLOE_ICE_UP_ADD_SCHEMA:
        rc |= !u->schema || mj_set_new(o, "schema", mj_schema_to_json(u->schema));
        break;
    case FLOE_ICE_UP_SET_CURRENT_SCHEMA:
        rc |= mj_set_new(o, "schema-id", json_integer(u->id));
        break;
    case FLOE_ICE_UP_ADD_SPEC:
        rc |= !u->spec || mj_set_new(o, "spec", mj_spec_to_json(u->spec));
        break;
    case FLOE_ICE_UP_SET_DEFAULT_SPEC: rc |= mj_set_new(o, "spec-id", json_integer(u->id)); break;
    case FLOE_ICE_UP_ADD_SORT_ORDER:
        rc |= !u->order || mj_set_new(o, "sort-order", mj_order_to_json(u->order));
        break;
    case FLOE_ICE_UP_SET_DEFAULT_SORT_ORDER:
        rc |= mj_set_new(o, "sort-order-id", json_integer(u->id));
        break;
    case FLOE_ICE_UP_ADD_SNAPSHOT:
        rc |= !u->snapshot || mj_set_new(o, "snapshot", mj_snapshot_to_json(u->snapshot));
        break;
    case FLOE_ICE_UP_SET_SNAPSHOT_REF: {
        json_t *r = mj_ref_to_json(&u->ref);
        rc |= !r || !u->ref.name;
        if (r) {
            const char *k;
            json_t *v;
            json_object_foreach(r, k, v) rc |= json_object_set(o, k, v);
            json_decref(r);
        }
        if (u->ref.name) rc |= mj_set_new(o, "ref-name", json_string(u->ref.name));
        break;
    }
    case FLOE_ICE_UP_REMOVE_SNAPSHOTS: {
        json_t *a = json_array();
        rc |= mj_set_new(o, "snapshot-ids", a);
        for (size_t i = 0; !rc && i < u->nsnapshot_ids; i++)
            rc |= json_array_append_new(a, json_integer(u->snapshot_ids[i]));
        break;
    }
    case FLOE_ICE_UP_REMOVE_SNAPSHOT_REF:
        rc |= mj_set_new(o, "ref-name", json_string(u->ref.name ? u->ref.name : ""));
        break;
    case FLOE_ICE_UP_SET_LOCATION:
        rc |= mj_set_new(o, "location", json_string(u->str ? u->str : ""));
        break;
    case FLOE_ICE_UP_SET_PROPERTIES:
        rc |= mj_set_new(o, "updates", mj_props_to_json(&u->props));
        break;
    case FLOE_ICE_UP_REMOVE_PROPERTIES: {
        json_t *a = json_array();
        rc |= mj_set_new(o, "removals", a);
        for (size_t i = 0; !rc && i < u->props.n; i++)
            rc |= json_array_append_new(a, json_string(u->props.kv[i].key));
        break;
    }
    }
    if (rc) {
        json_decref(o);
        return floe_err_set(err, FLOE_ENOMEM, "cannot render update");
    }
    return append_dump(o, out, err);
}

static int update_from(json_t *j, floe_ice_update_t *u, floe_err_t *err)
{
    if (!json_is_object(j)) return mj_bad(err, "update must be an object");
    const char *a = mj_get_str(j, "action", true, err);
    if (!a) return -1;
    for (int k = 1; k <= FLOE_ICE_UP_REMOVE_PROPERTIES; k++)
        if (strcmp(a, update_names[k]) == 0) u->kind = (floe_ice_update_kind_t)k;
    int32_t dummy = 0;
    switch (u->kind) {
    case FLOE_ICE_UP_ASSIGN_UUID:
    case FLOE_ICE_UP_SET_LOCATION: {
        const char *s =
            mj_get_str(j, u->kind == FLOE_ICE_UP_ASSIGN_UUID ? "uuid" : "location", true, err);
        if (!s) return -1;
        if (!(u->str = strdup(s))) return floe_err_oom(err);
        return 0;
    }
    case FLOE_ICE_UP_UPGRADE_FORMAT_VERSION:
        return mj_get_i32(j, "format-version", true, &u->id, err) ? -1 : 0;
    case FLOE_ICE_UP_ADD_SCHEMA:
        if (mj_get_i32(j, "last-column-id", false, &dummy, err) < 0) return -1;
        return (u->schema = mj_schema_from_json(json_object_get(j, "schema"), err)) ? 0 : -1;
    case FLOE_ICE_UP_SET_CURRENT_SCHEMA:
        return mj_get_i32(j, "schema-id", true, &u->id, err) ? -1 : 0;
    case FLOE_ICE_UP_ADD_SPEC: {
        int32_t next = 1000;
        json_t *sj = json_object_get(j, "spec");
        if (json_is_object(sj) && !json_object_get(sj, "spec-id"))
            return (u->spec = mj_spec_from_fields(json_object_get(sj, "fields"), 0, &next, err))
                       ? 0
                       : -1;
        return (u->spec = mj_spec_from_json(sj, &next, err)) ? 0 : -1;
    }
    case FLOE_ICE_UP_SET_DEFAULT_SPEC: return mj_get_i32(j, "spec-id", true, &u->id, err) ? -1 : 0;
    case FLOE_ICE_UP_ADD_SORT_ORDER:
        return (u->order = mj_order_from_json(json_object_get(j, "sort-order"), err)) ? 0 : -1;
    case FLOE_ICE_UP_SET_DEFAULT_SORT_ORDER:
        return mj_get_i32(j, "sort-order-id", true, &u->id, err) ? -1 : 0;
    case FLOE_ICE_UP_ADD_SNAPSHOT:
        return (u->snapshot = mj_snapshot_from_json(json_object_get(j, "snapshot"), err)) ? 0 : -1;
    case FLOE_ICE_UP_SET_SNAPSHOT_REF: {
        const char *n = mj_get_str(j, "ref-name", true, err);
        if (!n || mj_ref_from_json(j, &u->ref, "snapshot-id", err) < 0) return -1;
        if (!(u->ref.name = strdup(n))) return floe_err_oom(err);
        return 0;
    }
    case FLOE_ICE_UP_REMOVE_SNAPSHOT_REF: {
        const char *n = mj_get_str(j, "ref-name", true, err);
        if (!n) return -1;
        if (!(u->ref.name = strdup(n))) return floe_err_oom(err);
        return 0;
    }
    case FLOE_ICE_UP_REMOVE_SNAPSHOTS: {
        json_t *ids = json_object_get(j, "snapshot-ids");
        if (!json_is_array(ids)) return mj_bad(err, "snapshot-ids must be an array");
        size_t n = json_array_size(ids);
        if (n && !(u->snapshot_ids = calloc(n, sizeof *u->snapshot_ids))) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++) {
            json_t *v = json_array_get(ids, i);
            if (!json_is_integer(v)) return mj_bad(err, "snapshot-ids must hold integers");
            u->snapshot_ids[u->nsnapshot_ids++] = json_integer_value(v);
        }
        return 0;
    }
    case FLOE_ICE_UP_SET_PROPERTIES:
        return mj_props_from_json(json_object_get(j, "updates"), &u->props, NULL, err);
    case FLOE_ICE_UP_REMOVE_PROPERTIES: {
        json_t *r = json_object_get(j, "removals");
        if (!json_is_array(r)) return mj_bad(err, "removals must be an array");
        size_t i;
        json_t *v;
        json_array_foreach(r, i, v)
        {
            if (!json_is_string(v)) return mj_bad(err, "removals must hold strings");
            if (floe_ice_props_set(&u->props, json_string_value(v), "") < 0)
                return floe_err_oom(err);
        }
        return 0;
    }
    }
    return floe_err_set(err, FLOE_EUNSUPPORTED, "update action '%.64s' not supported", a);
}

int floe_ice_update_from_json(const char *json, size_t len, floe_ice_update_t *u, floe_err_t *err)
{
    memset(u, 0, sizeof *u);
    json_t *j = mj_load(json, len, err);
    if (!j) return -1;
    int rc = update_from(j, u, err);
    json_decref(j);
    if (rc < 0) floe_ice_update_clear(u);
    return rc;
}

static const struct {
    floe_ice_req_kind_t k;
    const char *name, *key;
} req_names[] = {
    {FLOE_ICE_REQ_ASSERT_CREATE, "assert-create", NULL},
    {FLOE_ICE_REQ_ASSERT_TABLE_UUID, "assert-table-uuid", NULL},
    {FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID, "assert-ref-snapshot-id", "snapshot-id"},
    {FLOE_ICE_REQ_ASSERT_LAST_ASSIGNED_FIELD_ID, "assert-last-assigned-field-id",
     "last-assigned-field-id"},
    {FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID, "assert-current-schema-id", "current-schema-id"},
    {FLOE_ICE_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID, "assert-last-assigned-partition-id",
     "last-assigned-partition-id"},
    {FLOE_ICE_REQ_ASSERT_DEFAULT_SPEC_ID, "assert-default-spec-id", "default-spec-id"},
    {FLOE_ICE_REQ_ASSERT_DEFAULT_SORT_ORDER_ID, "assert-default-sort-order-id",
     "default-sort-order-id"},
};

int floe_ice_req_to_json(const floe_ice_req_t *r, floe_buf_t *out, floe_err_t *err)
{
    for (size_t i = 0; i < sizeof req_names / sizeof req_names[0]; i++) {
        if (req_names[i].k != r->kind) continue;
        json_t *o = json_object();
        int rc = !o || mj_set_new(o, "type", json_string(req_names[i].name));
        if (r->kind == FLOE_ICE_REQ_ASSERT_TABLE_UUID)
            rc |= mj_set_new(o, "uuid", json_string(r->uuid));
        if (r->kind == FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID) {
            rc |= mj_set_new(o, "ref", json_string(r->ref));
            rc |= mj_set_new(o, "snapshot-id", r->value < 0 ? json_null() : json_integer(r->value));
        } else if (req_names[i].key) {
            rc |= mj_set_new(o, req_names[i].key, json_integer(r->value));
        }
        if (rc) {
            json_decref(o);
            return floe_err_oom(err);
        }
        return append_dump(o, out, err);
    }
    return floe_err_set(err, FLOE_EINVAL, "unknown requirement kind");
}

int floe_ice_req_from_json(const char *json, size_t len, floe_ice_req_t *r, floe_err_t *err)
{
    memset(r, 0, sizeof *r);
    json_t *j = mj_load(json, len, err);
    if (!j) return -1;
    int rc = -1;
    const char *t = json_is_object(j) ? mj_get_str(j, "type", true, err) : NULL;
    if (!json_is_object(j)) mj_bad(err, "requirement must be an object");
    for (size_t i = 0; t && i < sizeof req_names / sizeof req_names[0]; i++) {
        if (strcmp(t, req_names[i].name) != 0) continue;
        r->kind = req_names[i].k;
        rc = 0;
        if (r->kind == FLOE_ICE_REQ_ASSERT_TABLE_UUID) {
            const char *u = mj_get_str(j, "uuid", true, err);
            if (!u || strlen(u) != 36) rc = mj_bad(err, "assert-table-uuid needs a uuid");
            else
                memcpy(r->uuid, u, 37);
        } else if (r->kind == FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID) {
            const char *ref = mj_get_str(j, "ref", true, err);
            if (!ref || strlen(ref) >= sizeof r->ref)
                rc = mj_bad(err, "assert-ref-snapshot-id needs a ref");
            else {
                memcpy(r->ref, ref, strlen(ref) + 1);
                r->value = -1;
                if (mj_get_i64(j, "snapshot-id", false, &r->value, err) < 0) rc = -1;
            }
        } else if (req_names[i].key) {
            if (mj_get_i64(j, req_names[i].key, true, &r->value, err) != 0) rc = -1;
        }
    }
    if (t && rc < 0 && !r->kind)
        floe_err_set(err, FLOE_EUNSUPPORTED, "requirement '%.64s' not supported", t);
    json_decref(j);
    return rc;
}
