/* Iceberg partition tuples ("ptuple", never a Kafka partition: that is
 * pipeline.h's floe_tpart_t): the rows of a buffer grouped by their
 * partition tuple (each spec field's transform applied to its source
 * column), so that each group goes to its own data file. */
#ifndef FLOE_TABLE_PTUPLE_H
#define FLOE_TABLE_PTUPLE_H

#include "iceberg/spec.h"
#include "table/rows.h"

/* The rows of one partition tuple. */
typedef struct floe_tptuple {
    floe_buf_t key;           /* the tuple, serialized (for lookups) */
    floe_ice_value_t *values; /* one per spec field (owned) */
    size_t nvalues;
    uint32_t *rows; /* ascending row indexes */
    size_t nrows, caprows;
} floe_tptuple_t;

/* The tuples of a buffer, with an index by serialized tuple. */
typedef struct floe_tptuples {
    floe_tptuple_t *g;
    size_t n, cap;
    uint32_t *slots; /* open-addressing index into g, +1 */
    size_t nslots;
} floe_tptuples_t;

/* Group every row of rows under spec (partitioned: nfields > 0), reading
 * source columns by field id; schema (the working schema) gives their
 * types.  Source fields must be primitives outside lists and maps; a row
 * without a value for one gets null there.  *out is reset first. */
int floe_tptuples_group(floe_rows_t *rows, const floe_ice_spec_t *spec,
                        const floe_ice_schema_t *schema, floe_tptuples_t *out, floe_err_t *err);
/* Free what *g holds (the values no data file took included); *g is
 * empty after. */
void floe_tptuples_free(floe_tptuples_t *g);

/* Same partition fields (sources, transforms, names), ids aside. */
bool floe_tspec_equiv(const floe_ice_spec_t *a, const floe_ice_spec_t *b);

#endif
