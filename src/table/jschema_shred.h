/* JSON values typed by their JSON Schema straight into the table buffer's
 * columns (rows.h): the json_schema converter's path when no value
 * transforms are configured (with transforms, values go through the JSON
 * path and its inference, since the transforms work on JSON).
 *
 * One pass over the JSON text with the JSON path's scanner (json_int.h),
 * no intermediate tree.  The schema, not the values, decides the columns,
 * compiled once per schema id and buffer shape into a plan:
 *
 *   integer -> long;  number -> double;  boolean -> boolean
 *   string -> string, with format date -> date, date-time -> timestamptz,
 *   time -> time (microseconds, UTC); other formats (uuid, email, ...)
 *   stay strings, as Confluent's JSON Schema converter keeps them
 *   an enum of strings -> string
 *   object with properties -> struct (other keys are skipped, or refused
 *   under additionalProperties: false);  object with only an
 *   additionalProperties schema -> map<string, value>
 *   array with items -> list
 *   type [X, "null"], anyOf/oneOf [X, {"type": "null"}] -> X, nullable
 *   true, {}, objects and arrays without a schema for their content, and
 *   enums of other values -> string holding the value's JSON text
 *   an object with properties at the top spreads over the table's
 *   columns; anything else is one column `value`.
 *
 * A value must match its schema's types: a property in "required" must be
 * there, null only where the schema allows it, integers without fraction,
 * dates and times in RFC 3339 form; anything else refuses the record with
 * the reason (FLOE_ECORRUPT).  Every value column is optional (required is
 * checked per record, as above), so a later schema version may drop a
 * property.  Unions of several types, allOf of several schemas, false and
 * recursive schemas have no column type: the schema is refused
 * (FLOE_EINVAL).
 *
 * Columns are matched by name along their path, so the Iceberg field ids
 * stay those of the first schema version with the field: a new property
 * adds a column; integer -> number widens the long column to double as
 * the JSON path does (long -> double is no Iceberg promotion: the engine
 * replaces the field and rewrites its files, docs/widening.md; refused
 * where widening is not allowed); any other change of a property's type
 * is refused with the reason. */
#ifndef FLOE_TABLE_JSCHEMA_SHRED_H
#define FLOE_TABLE_JSCHEMA_SHRED_H

#include <stdint.h>

#include "format/jschema.h"
#include "table/rows.h"
#include "util/err.h"

typedef struct floe_jschema_shred floe_jschema_shred_t;

/* A shredder for rows (borrowed; must outlive it).  NULL when out of
 * memory.  Caller frees with floe_jschema_shred_free. */
floe_jschema_shred_t *floe_jschema_shred_new(floe_rows_t *rows);
void floe_jschema_shred_free(floe_jschema_shred_t *j);

/* Shred the JSON value p[0..n), written with schema s of registry id `id`
 * (s borrowed; the plan for it is kept while the same s is passed for
 * id), into the fields of the buffer's root for the current row (between
 * floe_rows_begin and floe_rows_end), adding columns as the schema needs.
 * Returns 0, or -1 with err: FLOE_ECORRUPT for text that is not JSON or a
 * value that does not match the schema (with the reason), FLOE_EINVAL for
 * a schema the table's columns cannot take, FLOE_ERANGE past the buffer's
 * caps, FLOE_ENOMEM.  The caller then rolls the row back. */
int floe_jschema_shred(floe_jschema_shred_t *j, int32_t id, const floe_jschema_t *s,
                       const uint8_t *p, size_t n, floe_err_t *err);

#endif
