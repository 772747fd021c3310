/* Avro datums straight into the table buffer's columns (rows.h), typed by
 * the writer schema: the avro converter's path when no value transforms
 * are configured (with transforms, values still go through JSON text,
 * avro_conv.h, since the transforms work on JSON).
 *
 * One pass over the bytes, no intermediate values.  The writer schema
 * decides the columns, compiled once per schema id and buffer shape into a
 * plan that points at the shape's nodes:
 *
 *   boolean, int, long, float, double -> boolean, int, long, float, double
 *   string, enum -> string;  bytes -> binary;  fixed(n) -> fixed[n]
 *   decimal(p, s) on bytes or fixed -> decimal(p, s)
 *   uuid on string or fixed(16) -> uuid
 *   date -> date;  time-millis/micros -> time (microseconds)
 *   timestamp-millis/micros -> timestamptz (microseconds)
 *   local-timestamp-millis/micros -> timestamp (microseconds)
 *   record -> struct;  array -> list;  map -> map<string, value>
 *   [null, X] -> X, optional;  any other union -> a struct with one field
 *   per non-null branch, named after the branch's type (or its name for a
 *   named type), exactly one of them set
 *   a record at the top spreads its fields over the table's columns;
 *   anything else is one column `value`.
 *
 * Every value column is optional.  Columns are matched by name along their
 * path, so the Iceberg field ids of a table stay those of the first schema
 * that had the field: a later schema version with a new field adds a
 * column; int -> long, float -> double and a decimal's wider precision
 * promote the column in place; any other change of type is refused with a
 * reason (the record goes to the dead-letter table). */
#ifndef FLOE_TABLE_AVRO_SHRED_H
#define FLOE_TABLE_AVRO_SHRED_H

#include <stdint.h>

#include "format/avro.h"
#include "table/rows.h"
#include "util/err.h"

typedef struct floe_avro_shred floe_avro_shred_t;

/* A shredder for rows (borrowed; must outlive it).  NULL when out of
 * memory.  Caller frees with floe_avro_shred_free. */
floe_avro_shred_t *floe_avro_shred_new(floe_rows_t *rows);
void floe_avro_shred_free(floe_avro_shred_t *a);

/* Shred one datum p[0..n) (which it must fill exactly) written with schema
 * s, of registry id `id` (s borrowed; checked by floe_avro_conv_check; the
 * plan for it is kept while the same s is passed for id), into the fields
 * of the buffer's root for the current row (between floe_rows_begin and
 * floe_rows_end), adding or promoting columns as the schema needs.
 * Returns 0, or -1 with err: FLOE_ECORRUPT for bytes that are not such a
 * datum (with the byte offset), FLOE_EINVAL for a schema the table's
 * columns cannot take (with the reason), FLOE_ERANGE past the buffer's
 * column or depth caps, FLOE_ENOMEM.  The caller then rolls the row back. */
int floe_avro_shred(floe_avro_shred_t *a, int32_t id, const floe_avro_schema_t *s, const uint8_t *p,
                    size_t n, floe_err_t *err);

#endif
