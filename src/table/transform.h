/* Value transforms: steps between a record's JSON value and the shredder
 * (topic config `table.transforms`, applied in order).
 *
 *   debezium_unwrap  a Debezium change event (JSON, with or without the
 *                    `schema`/`payload` envelope) -> the row it describes:
 *                    `after` for op c/r/u, `before` for d; with
 *                    `table.cdc.metadata` a `_cdc` struct (op, ts from
 *                    ts_ms as an RFC 3339 time, source as it came) is
 *                    added.  A tombstone (null value) yields no row.
 *   flatten          nested objects become top-level fields named by
 *                    their path joined with the delimiter (a_b_c);
 *                    arrays and scalars are kept as they are.
 *
 * The steps work on JSON text and hand JSON text on, so every converter
 * that ends in JSON (json, avro) takes them. */
#ifndef FLOE_TABLE_TRANSFORM_H
#define FLOE_TABLE_TRANSFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/rows.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum floe_xform_step {
    FLOE_XF_DEBEZIUM_UNWRAP = 1,
    FLOE_XF_FLATTEN,
} floe_xform_step_t;

enum { FLOE_XFORM_MAX = 8, FLOE_XFORM_DELIM_MAX = 8 };

typedef struct floe_xform {
    floe_xform_step_t steps[FLOE_XFORM_MAX];
    int nsteps;
    bool cdc_metadata;                    /* debezium_unwrap adds `_cdc` */
    char delim[FLOE_XFORM_DELIM_MAX + 1]; /* flatten's delimiter, NUL-terminated */
} floe_xform_t;

/* The change a record carried (debezium_unwrap), for the write modes. */
typedef enum floe_xform_op {
    FLOE_XOP_NONE = 0, /* no change semantics: a plain row */
    FLOE_XOP_CREATE,   /* c, and r (a snapshot read) */
    FLOE_XOP_UPDATE,   /* u */
    FLOE_XOP_DELETE,   /* d, or a tombstone */
} floe_xform_op_t;

/* Parse the comma list `list` (borrowed; blanks around names allowed, ""
 * = no steps) into x->steps.  The other fields are left as they are.
 * Returns 0, or -1 with *err naming the unknown step and the known ones. */
int floe_xform_parse(const char *list, floe_xform_t *x, floe_err_t *err);

/* Run x's steps (x borrowed) over one value: in/n its JSON text, or
 * value_null for a tombstone.  rows (borrowed) gives the nesting limit.
 * Returns 1 with the result in *out (reset first; caller owns it), 0 when
 * the record yields no row (a tombstone under debezium_unwrap), or -1
 * with *err (FLOE_ECORRUPT: the value is not what a step takes;
 * FLOE_ENOMEM).  *op gets the change the record carried. */
int floe_xform_apply(const floe_xform_t *x, floe_rows_t *rows, const uint8_t *in, size_t n,
                     bool value_null, floe_buf_t *out, floe_xform_op_t *op, floe_err_t *err);

#endif
