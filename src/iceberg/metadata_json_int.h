/* Metadata JSON internals shared by metadata_json.c (schemas, specs, sort
 * orders, snapshots, table metadata) and rest_json.c (REST updates and
 * requirements).  Readers take untrusted JSON: every member is
 * type-checked and errors name the member. */
#ifndef FLOE_ICEBERG_METADATA_JSON_INT_H
#define FLOE_ICEBERG_METADATA_JSON_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "iceberg/metadata.h"

/* ---- helpers ---- */

/* Set "metadata: <what>" (FLOE_ECORRUPT) on err; returns -1. */
int mj_bad(floe_err_t *err, const char *what);
/* Member key of o as an integer into *out: 0, 1 when missing or null and
 * not required (*out left as is), -1 with *err. */
int mj_get_i64(json_t *o, const char *key, bool required, int64_t *out, floe_err_t *err);
int mj_get_i32(json_t *o, const char *key, bool required, int32_t *out, floe_err_t *err);
/* Member key of o as a string, borrowed from o; NULL when missing (an
 * error with *err only when required) or not a string. */
const char *mj_get_str(json_t *o, const char *key, bool required, floe_err_t *err);
/* Set o[key] = v, taking ownership of v (NULL v: out of memory); -1 when
 * out of memory. */
int mj_set_new(json_t *o, const char *key, json_t *v);
/* Compact text of j, taking ownership of j (NULL j: out of memory);
 * caller frees the text with free(); NULL with *err. */
char *mj_dump(json_t *j, floe_err_t *err);
/* Parse len bytes of text (caller frees with json_decref); NULL with *err. */
json_t *mj_load(const char *text, size_t len, floe_err_t *err);

/* ---- values to and from JSON: *_to_json returns a new reference (NULL
 * when out of memory); *_from_json returns a new value the caller frees
 * with its floe_ice_*_free, or NULL with *err ---- */

json_t *mj_schema_to_json(const floe_ice_schema_t *s);
floe_ice_schema_t *mj_schema_from_json(json_t *j, floe_err_t *err);
json_t *mj_spec_to_json(const floe_ice_spec_t *s);
/* A spec from its fields array fs; *next_v1_id numbers v1 fields without
 * an id. */
floe_ice_spec_t *mj_spec_from_fields(json_t *fs, int32_t spec_id, int32_t *next_v1_id,
                                     floe_err_t *err);
floe_ice_spec_t *mj_spec_from_json(json_t *j, int32_t *next_v1_id, floe_err_t *err);
json_t *mj_order_to_json(const floe_ice_sort_order_t *o);
floe_ice_sort_order_t *mj_order_from_json(json_t *j, floe_err_t *err);
json_t *mj_props_to_json(const floe_ice_props_t *p);
/* The string members of object j (may be NULL or null) into *p, but for
 * member skip (may be NULL); -1 with *err. */
int mj_props_from_json(json_t *j, floe_ice_props_t *p, const char *skip, floe_err_t *err);
json_t *mj_snapshot_to_json(const floe_ice_snapshot_t *s);
floe_ice_snapshot_t *mj_snapshot_from_json(json_t *j, floe_err_t *err);
json_t *mj_ref_to_json(const floe_ice_ref_t *r);
/* A ref from j into *r (owned by *r); its snapshot id is member id_key. */
int mj_ref_from_json(json_t *j, floe_ice_ref_t *r, const char *id_key, floe_err_t *err);

#endif
