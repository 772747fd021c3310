/* Record converters: one Kafka record (a source message, source.h) -> one
 * row of the table buffer.
 *
 * Every row carries a `_kafka` struct (partition, offset, timestamp, key,
 * headers) and the value's columns: `value` (binary) for raw, `value`
 * (string) for string, the object's own fields for json.  A record that
 * cannot be converted leaves no trace in the buffer; the caller routes it
 * to the dead-letter table with the stage and reason given here. */
#ifndef FLOE_TABLE_CONVERT_H
#define FLOE_TABLE_CONVERT_H

#include <stdint.h>

#include "format/avro.h"
#include "format/jschema.h"
#include "format/proto.h"
#include "table/rows.h"
#include "table/source.h"
#include "table/transform.h"
#include "util/err.h"

typedef enum floe_conv_kind {
    FLOE_CONV_RAW = 1,
    FLOE_CONV_STRING,
    FLOE_CONV_JSON,
    FLOE_CONV_AVRO,        /* Confluent wire format, schema from a registry (avro_conv.h) */
    FLOE_CONV_PROTOBUF,    /* the same with message indexes (proto_conv.h) */
    FLOE_CONV_JSON_SCHEMA, /* the same with JSON text, typed by its JSON Schema (jschema_shred.h) */
} floe_conv_kind_t;

/* "raw" | "string" | "json" | "avro" | "protobuf" | "json_schema".  Returns 0 or -1 with a message listing them. */
int floe_conv_kind_parse(const char *s, floe_conv_kind_t *out, floe_err_t *err);
const char *floe_conv_kind_name(floe_conv_kind_t k);

/* Where a bad record failed: the DLQ's `stage` column. */
typedef enum floe_conv_stage {
    FLOE_STAGE_DECODE = 1, /* the batch or record bytes */
    FLOE_STAGE_CONVERT,    /* key, value or headers do not convert */
    FLOE_STAGE_SCHEMA,     /* the value does not fit the table's shape */
    FLOE_STAGE_RETENTION,  /* not a record: a range of offsets the log
                              deleted before the table read it */
} floe_conv_stage_t;
/* "decode", "convert", "schema", "retention" (the DLQ's words); "?" for
 * anything else. */
const char *floe_conv_stage_name(floe_conv_stage_t s);
/* The stage a DLQ row names (s: its `stage` column), or 0 for none. */
floe_conv_stage_t floe_conv_stage_parse(floe_slice_t s);

typedef struct floe_conv floe_conv_t;

/* A converter writing into rows (borrowed; it must hold no row yet: the
 * `_kafka` fields are added now).  key: raw (binary) or string; json keys
 * are kept as their text.  Caller frees with floe_conv_free; NULL with *err
 * on failure. */
floe_conv_t *floe_conv_new(floe_rows_t *rows, floe_conv_kind_t value, floe_conv_kind_t key,
                           floe_err_t *err);
void floe_conv_free(floe_conv_t *c);

/* Where the avro converter finds the writer schema of a record: fn(arg,
 * id, out, err) fills *out with the parsed schema of global id `id` (the
 * converter owns it and frees it with floe_avro_schema_free), or returns
 * -1 with err (FLOE_ENOENT: no such id).  Called from the converter's
 * thread; schemas are cached by id for the converter's life. */
typedef int (*floe_conv_schema_fn)(void *arg, int32_t id, floe_avro_schema_t **out,
                                   floe_err_t *err);
/* The same for the protobuf converter: *out a resolved schema the
 * converter frees with floe_proto_schema_free. */
typedef int (*floe_conv_proto_fn)(void *arg, int32_t id, floe_proto_schema_t **out,
                                  floe_err_t *err);
/* The global id of version `version` (0: the latest live one) of subject:
 * for producers that send no id (table.value.schema.subject); -1 with err
 * (FLOE_ENOENT: no such subject or version). */
typedef int (*floe_conv_id_fn)(void *arg, const char *subject, int32_t version, int32_t *id,
                               floe_err_t *err);
/* The same for the json_schema converter: *out a parsed JSON Schema the
 * converter frees with floe_jschema_free. */
typedef int (*floe_conv_json_fn)(void *arg, int32_t id, floe_jschema_t **out, floe_err_t *err);
typedef struct floe_conv_schemas {
    floe_conv_schema_fn fn; /* NULL: no registry (avro records go to the DLQ) */
    void *arg;
    floe_conv_proto_fn proto; /* NULL: protobuf records go to the DLQ; arg as above */
    floe_conv_json_fn json;   /* NULL: json_schema records go to the DLQ; arg as above */
    floe_conv_id_fn id_of;    /* NULL: no subjects to name; arg as above */
} floe_conv_schemas_t;

/* Give c its schema source (copied; arg borrowed, must outlive c). */
void floe_conv_set_schemas(floe_conv_t *c, const floe_conv_schemas_t *s);

/* Plain Avro binary: values (and keys) carry no magic byte and no schema
 * id; they decode with the schema of registry subject value_subject at
 * value_version (0: the latest, asked for again while c runs, and at once
 * when a record does not decode) and key_subject's latest.  NULL or "":
 * the id is in the record.  Names copied.  0, or -1 with err. */
int floe_conv_set_subjects(floe_conv_t *c, const char *value_subject, int32_t value_version,
                           const char *key_subject, floe_err_t *err);

/* Give c the value transforms x (copied) applied to json and avro values
 * before they are shredded; none by default. */
void floe_conv_set_transforms(floe_conv_t *c, const floe_xform_t *x);

/* The change the last record floe_conv_record took carried (FLOE_XOP_NONE
 * without debezium_unwrap).  A record that yields no row (a tombstone
 * under debezium_unwrap) returns 0 from floe_conv_record and leaves the
 * buffer as it was. */
floe_xform_op_t floe_conv_last_op(const floe_conv_t *c);

/* Make c convert for an upsert table (table.id.columns ids,
 * table.cdc.field cdc; both borrowed for the call): every row must hold
 * its id columns (else the record is refused, FLOE_STAGE_SCHEMA), and a
 * tombstone (null value, or one debezium_unwrap drops) becomes a row of
 * its key's id columns that deletes (the key: a JSON object, with or
 * without Debezium's schema/payload envelope, or the one id column's
 * value).  0, or -1 with *err. */
int floe_conv_set_upsert(floe_conv_t *c, const char *ids, const char *cdc, floe_err_t *err);
/* Whether the last record floe_conv_record took deletes its key (upsert:
 * a tombstone, Debezium op d, or the cdc column saying d/D/delete). */
bool floe_conv_last_deletes(const floe_conv_t *c);

/* Append record m (borrowed; kind FLOE_TMSG_RECORD) of Kafka partition
 * `partition` as a row.  Returns 0, or -1 with *stage and *err set and the
 * buffer as before the call. */
int floe_conv_record(floe_conv_t *c, int32_t partition, const floe_tmsg_t *m,
                     floe_conv_stage_t *stage, floe_err_t *err);

#endif
