/* Partition transforms, partition specs and sort orders.
 *
 * Plain value types; specs and orders own their arrays and names
 * (free with floe_ice_spec_free / floe_ice_sort_order_free). */
#ifndef FLOE_ICEBERG_SPEC_H
#define FLOE_ICEBERG_SPEC_H

#include "iceberg/types.h"

typedef enum floe_ice_transform_kind {
    FLOE_ICE_T_IDENTITY = 1,
    FLOE_ICE_T_BUCKET,
    FLOE_ICE_T_TRUNCATE,
    FLOE_ICE_T_YEAR,
    FLOE_ICE_T_MONTH,
    FLOE_ICE_T_DAY,
    FLOE_ICE_T_HOUR,
    FLOE_ICE_T_VOID,
} floe_ice_transform_kind_t;

typedef struct floe_ice_transform {
    floe_ice_transform_kind_t kind;
    int32_t param; /* bucket N, truncate W */
} floe_ice_transform_t;

/* "identity", "bucket[16]", "truncate[5]", "day", ...  Returns 0 or -1. */
int floe_ice_transform_parse(const char *s, floe_ice_transform_t *out, floe_err_t *err);
/* Spec name into buf; returns buf. */
const char *floe_ice_transform_name(floe_ice_transform_t t, char *buf, size_t size);
/* Whether the transform accepts this source type. */
bool floe_ice_transform_can_apply(floe_ice_transform_t t, const floe_ice_type_t *src);
/* Result type of the transform for a source type; caller frees.  NULL with
 * *err when the transform does not apply to that type. */
floe_ice_type_t *floe_ice_transform_result_type(floe_ice_transform_t t, const floe_ice_type_t *src,
                                                floe_err_t *err);
/* Apply to a value of the source type; *out is filled (caller clears).
 * Nulls map to nulls; void maps everything to null. */
int floe_ice_transform_apply(floe_ice_transform_t t, const floe_ice_type_t *src,
                             const floe_ice_value_t *in, floe_ice_value_t *out, floe_err_t *err);
/* The spec's 32-bit murmur3 hash of a value (Appendix B).  -1 with *err for
 * types that have no hash. */
int floe_ice_bucket_hash(const floe_ice_value_t *v, int32_t *hash, floe_err_t *err);
/* Human string of a transform result for partition paths: dates as
 * 2017-11-16, months as 2017-11, hours as 2017-11-16-22, null as "null".
 * Appends to out (not URL-escaped). */
int floe_ice_transform_human(floe_ice_transform_t t, const floe_ice_value_t *v, floe_buf_t *out);

/* ---- partition specs ---- */

typedef struct floe_ice_partition_field {
    int32_t source_id;
    int32_t field_id; /* >= 1000 by convention */
    char *name;       /* owned */
    floe_ice_transform_t transform;
} floe_ice_partition_field_t;

typedef struct floe_ice_spec {
    int32_t spec_id;
    size_t nfields;
    floe_ice_partition_field_t *fields; /* owned */
} floe_ice_spec_t;

floe_ice_spec_t *floe_ice_spec_new(int32_t spec_id); /* unpartitioned */
void floe_ice_spec_free(floe_ice_spec_t *s);
floe_ice_spec_t *floe_ice_spec_dup(const floe_ice_spec_t *s);
/* Copies name.  0 or -1 (ENOMEM). */
int floe_ice_spec_add(floe_ice_spec_t *s, int32_t source_id, int32_t field_id, const char *name,
                      floe_ice_transform_t t);
/* Same fields (ids, sources, transforms, names); spec ids ignored. */
bool floe_ice_spec_same(const floe_ice_spec_t *a, const floe_ice_spec_t *b);
/* Parse "region, day(ts), bucket(user_id, 16), truncate(email, 5),
 * void(x), year(a.b)" against a schema.  New partition field ids start at
 * *last_partition_id + 1 (updated).  Names follow the usual convention:
 * region, ts_day, user_id_bucket, email_trunc, a_b_year.  Caller frees. */
floe_ice_spec_t *floe_ice_spec_parse(const floe_ice_schema_t *schema, const char *text,
                                     int32_t spec_id, int32_t *last_partition_id, floe_err_t *err);
/* Check every field's source exists in schema and accepts its transform. */
int floe_ice_spec_validate(const floe_ice_spec_t *s, const floe_ice_schema_t *schema,
                           floe_err_t *err);
/* The partition struct type (fields named and numbered as the partition
 * fields); caller frees. */
floe_ice_type_t *floe_ice_spec_partition_type(const floe_ice_spec_t *s,
                                              const floe_ice_schema_t *schema, floe_err_t *err);
/* "a=1/b=2" with URL-escaped values, appended to out. */
int floe_ice_spec_partition_path(const floe_ice_spec_t *s, const floe_ice_value_t *values,
                                 floe_buf_t *out, floe_err_t *err);

/* ---- sort orders ---- */

typedef struct floe_ice_sort_field {
    floe_ice_transform_t transform;
    int32_t source_id;
    bool descending;
    bool nulls_last;
} floe_ice_sort_field_t;

typedef struct floe_ice_sort_order {
    int32_t order_id; /* 0 = unsorted */
    size_t nfields;
    floe_ice_sort_field_t *fields; /* owned */
} floe_ice_sort_order_t;

floe_ice_sort_order_t *floe_ice_sort_order_new(int32_t order_id);
void floe_ice_sort_order_free(floe_ice_sort_order_t *o);
floe_ice_sort_order_t *floe_ice_sort_order_dup(const floe_ice_sort_order_t *o);
int floe_ice_sort_order_add(floe_ice_sort_order_t *o, floe_ice_sort_field_t f);

#endif
