/* Between a partition's inferred shape (table/rows.h) and the table's
 * Iceberg schema (iceberg/types.h).
 *
 * Seeding gives a fresh buffer the table's columns and types before any
 * row, so inference starts from what is committed (a double column stays
 * double when a record brings an integer).  Merging goes the other way
 * before a flush: every shape node gets its field id, and fields the table
 * does not have yet are added to a working copy of its schema with fresh
 * ids, ready for an add-schema update.  Neither writes anything to disk. */
#ifndef FLOE_TABLE_SCHEMA_MAP_H
#define FLOE_TABLE_SCHEMA_MAP_H

#include <stdbool.h>

#include "iceberg/types.h"
#include "table/rows.h"

/* Add every column of schema (borrowed) that rows lacks to rows' shape,
 * with its field id; rows already held read null in them (between rows
 * only, like every shape change).  Columns of types JSON
 * records never produce (decimal, date, uuid, ...) are refused with
 * FLOE_EUNSUPPORTED naming the column. */
int floe_tschema_seed(floe_rows_t *rows, const floe_ice_schema_t *schema, floe_err_t *err);

/* The shape kind of Iceberg kind k: 0 with *out, -1 for a kind floe's
 * converters do not write (decimal, date, uuid, ...). */
int floe_tschema_tkind(floe_ice_kind_t k, floe_tkind_t *out);

/* Make schema (modified in place; pass a copy) hold every field of rows'
 * shape and give each shape node its field id.  New fields take ids from
 * *last_column_id + 1 on (advanced).  *changed tells whether the schema
 * grew.  Widening: a long shape node under a double field is widened in
 * rows; a double shape node over an optional long field (a struct field,
 * list element or map value) replaces that field by a new optional double
 * field with a fresh id, same name, same place (Iceberg cannot promote
 * long to double: the files holding the old field must be rewritten, see
 * floe_tschema_widened).  Any other kind difference is refused with
 * FLOE_EINVAL naming the field; schema may then hold some of the
 * additions.  Requiredness: a new field is required when its node is, or,
 * while the table holds no data (fresh), when the records' schema says it
 * is never null (schema_non_null); a required field whose records' schema
 * now allows null (schema_nullable) becomes optional. */
int floe_tschema_merge(floe_rows_t *rows, floe_ice_schema_t *schema, int32_t *last_column_id,
                       bool fresh, bool *changed, floe_err_t *err);

/* One long field replaced by a double field (ids). */
typedef struct floe_twiden {
    int32_t from, to;
} floe_twiden_t;

/* The long fields of `before` that `after` replaced by double fields of
 * the same name at the same place, appended to *out (realloc'd; caller
 * frees) and *n.  Both schemas are borrowed.  -1 only when out of memory. */
int floe_tschema_widened(const floe_ice_schema_t *before, const floe_ice_schema_t *after,
                         floe_twiden_t **out, size_t *n);

/* The other direction: in schema (changed in place), each long field
 * w[i].from (a struct field, list element or map value) becomes an
 * optional double field w[i].to, same name, same place; ids not found, or
 * no longer long, are skipped.  The schema a widening commits (the
 * maintenance thread) and the engine's working schema after it.  0, or -1
 * with *err (out of memory; schema possibly half changed). */
int floe_tschema_apply_widened(floe_ice_schema_t *schema, const floe_twiden_t *w, size_t n,
                               floe_err_t *err);

#endif
