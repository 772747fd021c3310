/* Iceberg table metadata: snapshots, refs, logs, properties, and the
 * REST-style updates and requirements that change it.
 *
 * floe_ice_metadata_t is a value type (as iceberg-cpp's TableMetadata):
 * readable fields, every pointer owned by the metadata, freed with
 * floe_ice_metadata_free.  Change it only through floe_ice_update_apply so
 * ids, logs and sequence numbers stay consistent. */
#ifndef FLOE_ICEBERG_METADATA_H
#define FLOE_ICEBERG_METADATA_H

#include "iceberg/spec.h"

typedef struct floe_ice_kv {
    char *key;   /* owned */
    char *value; /* owned */
} floe_ice_kv_t;

typedef struct floe_ice_props {
    size_t n;
    floe_ice_kv_t *kv; /* owned */
} floe_ice_props_t;

/* Borrowed value or NULL. */
const char *floe_ice_props_get(const floe_ice_props_t *p, const char *key);
/* A property as an integer in [min, max], or def when absent or not such
 * a number (table properties are strings any writer may set). */
int64_t floe_ice_props_get_i64(const floe_ice_props_t *p, const char *key, int64_t min, int64_t max,
                               int64_t def);
/* A property as a boolean (floe_parse_bool: "true"/"false", any case), or
 * def likewise. */
bool floe_ice_props_get_bool(const floe_ice_props_t *p, const char *key, bool def);
/* Copies key and value; replaces an existing key.  0 or -1 (ENOMEM). */
int floe_ice_props_set(floe_ice_props_t *p, const char *key, const char *value);
int floe_ice_props_remove(floe_ice_props_t *p, const char *key);
int floe_ice_props_copy(floe_ice_props_t *dst, const floe_ice_props_t *src);
void floe_ice_props_clear(floe_ice_props_t *p);

typedef struct floe_ice_snapshot {
    int64_t snapshot_id;
    int64_t parent_id; /* -1: none */
    int64_t sequence_number;
    int64_t timestamp_ms;
    char *manifest_list;      /* owned */
    char *operation;          /* owned: append, overwrite, delete, replace */
    floe_ice_props_t summary; /* without "operation" */
    int32_t schema_id;        /* -1: unknown */
} floe_ice_snapshot_t;

void floe_ice_snapshot_free(floe_ice_snapshot_t *s);
floe_ice_snapshot_t *floe_ice_snapshot_dup(const floe_ice_snapshot_t *s);

typedef struct floe_ice_ref {
    char *name; /* owned */
    int64_t snapshot_id;
    bool is_tag;
    int64_t max_ref_age_ms;        /* -1: unset */
    int64_t max_snapshot_age_ms;   /* -1: unset */
    int32_t min_snapshots_to_keep; /* -1: unset */
} floe_ice_ref_t;

typedef struct floe_ice_snapshot_log {
    int64_t timestamp_ms;
    int64_t snapshot_id;
} floe_ice_snapshot_log_t;

typedef struct floe_ice_metadata_log {
    int64_t timestamp_ms;
    char *file; /* owned */
} floe_ice_metadata_log_t;

typedef struct floe_ice_metadata {
    int format_version; /* 1 or 2 */
    char table_uuid[37];
    char *location; /* owned */
    int64_t last_sequence_number;
    int64_t last_updated_ms;
    int32_t last_column_id;
    floe_ice_schema_t **schemas;
    size_t nschemas;
    int32_t current_schema_id;
    floe_ice_spec_t **specs;
    size_t nspecs;
    int32_t default_spec_id;
    int32_t last_partition_id;
    floe_ice_sort_order_t **orders;
    size_t norders;
    int32_t default_sort_order_id;
    floe_ice_props_t properties;
    int64_t current_snapshot_id; /* -1: none (main branch head) */
    floe_ice_snapshot_t **snapshots;
    size_t nsnapshots;
    floe_ice_snapshot_log_t *snapshot_log;
    size_t nsnapshot_log;
    floe_ice_metadata_log_t *metadata_log;
    size_t nmetadata_log;
    floe_ice_ref_t *refs;
    size_t nrefs;
    /* Transient (not serialized): ids chosen by the latest add-schema,
     * add-spec and add-sort-order updates, for "-1 = last added". */
    int32_t last_added_schema_id, last_added_spec_id, last_added_order_id;
} floe_ice_metadata_t;

/* A new v2 table: schema (ids as given; last-column-id is their max),
 * spec (may be NULL: unpartitioned) and order (NULL: unsorted) are copied,
 * as are location and props (may be NULL).  Fresh random uuid.
 * Caller frees with floe_ice_metadata_free. */
floe_ice_metadata_t *floe_ice_metadata_new_table(const floe_ice_schema_t *schema,
                                                 const floe_ice_spec_t *spec,
                                                 const floe_ice_sort_order_t *order,
                                                 const char *location,
                                                 const floe_ice_props_t *props, floe_err_t *err);
void floe_ice_metadata_free(floe_ice_metadata_t *m);
floe_ice_metadata_t *floe_ice_metadata_dup(const floe_ice_metadata_t *m);

/* Parse metadata JSON (v1 or v2; v1 is upgraded in memory to the v2
 * model, keeping format_version 1).  Untrusted input: every field checked.
 * Caller frees.  NULL with *err (ECORRUPT) on bad input. */
floe_ice_metadata_t *floe_ice_metadata_from_json(const char *json, size_t len, floe_err_t *err);
/* Serialize; caller frees the string with free(). */
char *floe_ice_metadata_to_json(const floe_ice_metadata_t *m, floe_err_t *err);

/* Schema and spec JSON (the forms used in metadata and in manifest
 * headers); caller frees with free(). */
char *floe_ice_schema_to_json(const floe_ice_schema_t *s, floe_err_t *err);
floe_ice_schema_t *floe_ice_schema_from_json(const char *json, size_t len, floe_err_t *err);
/* Just the fields array of a spec, as manifests' "partition-spec" header. */
char *floe_ice_spec_fields_to_json(const floe_ice_spec_t *s, floe_err_t *err);
char *floe_ice_spec_to_json(const floe_ice_spec_t *s, floe_err_t *err);
/* Parse a spec's fields array (as in manifest headers); caller frees. */
floe_ice_spec_t *floe_ice_spec_fields_from_json(const char *json, size_t len, int32_t spec_id,
                                                floe_err_t *err);

/* Lookups: borrowed pointers, NULL when absent. */
const floe_ice_schema_t *floe_ice_metadata_schema(const floe_ice_metadata_t *m, int32_t id);
const floe_ice_schema_t *floe_ice_metadata_current_schema(const floe_ice_metadata_t *m);
const floe_ice_spec_t *floe_ice_metadata_spec(const floe_ice_metadata_t *m, int32_t id);
const floe_ice_spec_t *floe_ice_metadata_default_spec(const floe_ice_metadata_t *m);
const floe_ice_snapshot_t *floe_ice_metadata_snapshot(const floe_ice_metadata_t *m, int64_t id);
const floe_ice_snapshot_t *floe_ice_metadata_current_snapshot(const floe_ice_metadata_t *m);
const floe_ice_ref_t *floe_ice_metadata_ref(const floe_ice_metadata_t *m, const char *name);

/* ---- updates (REST "TableUpdate") ---- */

typedef enum floe_ice_update_kind {
    FLOE_ICE_UP_ASSIGN_UUID = 1,
    FLOE_ICE_UP_UPGRADE_FORMAT_VERSION,
    FLOE_ICE_UP_ADD_SCHEMA,
    FLOE_ICE_UP_SET_CURRENT_SCHEMA, /* id -1: the last added schema */
    FLOE_ICE_UP_ADD_SPEC,
    FLOE_ICE_UP_SET_DEFAULT_SPEC, /* id -1: the last added spec */
    FLOE_ICE_UP_ADD_SORT_ORDER,
    FLOE_ICE_UP_SET_DEFAULT_SORT_ORDER, /* id -1: the last added order */
    FLOE_ICE_UP_ADD_SNAPSHOT,
    FLOE_ICE_UP_SET_SNAPSHOT_REF,
    FLOE_ICE_UP_REMOVE_SNAPSHOTS,
    FLOE_ICE_UP_REMOVE_SNAPSHOT_REF,
    FLOE_ICE_UP_SET_LOCATION,
    FLOE_ICE_UP_SET_PROPERTIES,
    FLOE_ICE_UP_REMOVE_PROPERTIES, /* props keys; values ignored */
} floe_ice_update_kind_t;

/* One update.  Pointers are owned by the update (floe_ice_update_clear). */
typedef struct floe_ice_update {
    floe_ice_update_kind_t kind;
    char *str;                     /* uuid, location */
    int32_t id;                    /* format version, schema/spec/order id */
    floe_ice_schema_t *schema;     /* add-schema */
    floe_ice_spec_t *spec;         /* add-spec */
    floe_ice_sort_order_t *order;  /* add-sort-order */
    floe_ice_snapshot_t *snapshot; /* add-snapshot */
    floe_ice_ref_t ref;            /* set-snapshot-ref; remove: ref.name */
    int64_t *snapshot_ids;
    size_t nsnapshot_ids;   /* remove-snapshots */
    floe_ice_props_t props; /* set/remove-properties */
} floe_ice_update_t;

void floe_ice_update_clear(floe_ice_update_t *u);

/* Apply one update to m in place.  Adding a schema/spec/order equal to an
 * existing one reuses that id (recorded so "-1 = last added" still works).
 * An added snapshot must have sequence number > last-sequence-number
 * (v2); setting the "main" ref updates current-snapshot-id and the
 * snapshot log.  Returns 0, or -1 with *err (EINVAL) leaving m possibly
 * half-changed (apply to a copy). */
int floe_ice_update_apply(floe_ice_metadata_t *m, const floe_ice_update_t *u, floe_err_t *err);

/* ---- requirements (REST "TableRequirement") ---- */

typedef enum floe_ice_req_kind {
    FLOE_ICE_REQ_ASSERT_CREATE = 1,
    FLOE_ICE_REQ_ASSERT_TABLE_UUID,
    FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID, /* value -1: ref must not exist */
    FLOE_ICE_REQ_ASSERT_LAST_ASSIGNED_FIELD_ID,
    FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID,
    FLOE_ICE_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID,
    FLOE_ICE_REQ_ASSERT_DEFAULT_SPEC_ID,
    FLOE_ICE_REQ_ASSERT_DEFAULT_SORT_ORDER_ID,
} floe_ice_req_kind_t;

typedef struct floe_ice_req {
    floe_ice_req_kind_t kind;
    char uuid[37];
    char ref[128];
    int64_t value;
} floe_ice_req_t;

/* Check a requirement against the current metadata (NULL: table does not
 * exist).  0, or -1 with FLOE_ECONFLICT and a message saying which
 * requirement failed. */
int floe_ice_req_check(const floe_ice_req_t *r, const floe_ice_metadata_t *m, floe_err_t *err);

/* REST JSON of updates and requirements ({"action": ...} / {"type": ...}).
 * to_json appends a JSON object to out; from_json parses one object
 * (untrusted) into *u / *r (caller clears u). */
int floe_ice_update_to_json(const floe_ice_update_t *u, floe_buf_t *out, floe_err_t *err);
int floe_ice_update_from_json(const char *json, size_t len, floe_ice_update_t *u, floe_err_t *err);
int floe_ice_req_to_json(const floe_ice_req_t *r, floe_buf_t *out, floe_err_t *err);
int floe_ice_req_from_json(const char *json, size_t len, floe_ice_req_t *r, floe_err_t *err);

/* A random version-4 UUID string into out[37]. */
void floe_ice_uuid4(char out[37]);
/* A new random positive snapshot id. */
int64_t floe_ice_new_snapshot_id(void);

#endif
