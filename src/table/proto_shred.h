/* Protobuf messages straight into the table buffer's columns (rows.h): the
 * protobuf converter's path when no value transforms are configured.
 *
 * One pass over the wire bytes, no intermediate values.  The columns are
 * those the JSON rendering of the message (proto_conv.h) gives through
 * JSON inference, so a table keeps one schema whichever path wrote a row:
 * integers of every kind -> long, float and double -> double (NaN and
 * infinities null), bool, string, bytes -> base64 string, enum -> its
 * value's name, message -> struct, repeated -> list, map -> list of
 * {key, value} structs, Timestamp -> timestamptz (or string without
 * table.json.infer.timestamps), wrappers -> their value, Struct/Value/
 * ListValue -> their JSON text; absent proto3 scalars take their default,
 * fields with presence are null.
 *
 * The plan of a message (per schema id and message) points at the shape's
 * nodes and is rebuilt when the shape changes.  A value the plan cannot
 * place as the JSON path would, without asking anything of the shape (a
 * field with no column yet, a column of another type, a singular field
 * given twice, bad bytes), makes floe_proto_shred answer
 * FLOE_PROTO_SHRED_JSON: the caller rolls the row back and takes the JSON
 * path for that record, which creates or widens the columns (or says why
 * the record is refused); the records after it take the typed path again. */
#ifndef FLOE_TABLE_PROTO_SHRED_H
#define FLOE_TABLE_PROTO_SHRED_H

#include <stdint.h>

#include "format/proto.h"
#include "table/rows.h"
#include "util/err.h"

/* floe_proto_shred's answer for a row the JSON path must take. */
#define FLOE_PROTO_SHRED_JSON 1

typedef struct floe_proto_shred floe_proto_shred_t;

/* A shredder for rows (borrowed; must outlive it).  NULL when out of
 * memory.  Caller frees with floe_proto_shred_free. */
floe_proto_shred_t *floe_proto_shred_new(floe_rows_t *rows);
void floe_proto_shred_free(floe_proto_shred_t *a);

/* Shred message m (resolved; borrowed, with its schema, until
 * floe_proto_shred_forget(id) or the shredder is freed) of schema id `id`
 * from p[0..n), which it must fill exactly, into the buffer's root for
 * the current row (between floe_rows_begin and floe_rows_end).  0, or
 * FLOE_PROTO_SHRED_JSON (the row may hold partial writes: the caller rolls
 * it back and takes the JSON path), or -1 with err (FLOE_ENOMEM; bad bytes
 * answer FLOE_PROTO_SHRED_JSON with err naming them). */
int floe_proto_shred(floe_proto_shred_t *a, int32_t id, const floe_proto_msg_t *m, const uint8_t *p,
                     size_t n, floe_err_t *err);

/* Drop the plans of schema id (before its schema is freed). */
void floe_proto_shred_forget(floe_proto_shred_t *a, int32_t id);

#endif
