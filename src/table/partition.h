/* Partitioned writes: the rows of a buffer grouped by their partition
 * tuple (each spec field's transform applied to its source column), so
 * that each group goes to its own data file. */
#ifndef FLOE_TABLE_PARTITION_H
#define FLOE_TABLE_PARTITION_H

#include "iceberg/spec.h"
#include "table/rows.h"

typedef struct tgroup {
    floe_buf_t key;           /* the tuple, serialized (for lookups) */
    floe_ice_value_t *values; /* one per spec field (owned) */
    size_t nvalues;
    uint32_t *rows; /* ascending row indexes */
    size_t nrows, caprows;
} tgroup_t;

typedef struct tgroups {
    tgroup_t *g;
    size_t n, cap;
    uint32_t *slots; /* open-addressing index into g, +1 */
    size_t nslots;
} tgroups_t;

/* Group every row of rows under spec (partitioned: nfields > 0), reading
 * source columns by field id; schema (the working schema) gives their
 * types.  Source fields must be primitives outside lists and maps; a row
 * without a value for one gets null there.  *out is reset first. */
int floe_tpartition_group(floe_rows_t *rows, const floe_ice_spec_t *spec,
                          const floe_ice_schema_t *schema, tgroups_t *out, floe_err_t *err);
void floe_tgroups_free(tgroups_t *g);

/* Same partition fields (sources, transforms, names), ids aside. */
bool floe_tspec_equiv(const floe_ice_spec_t *a, const floe_ice_spec_t *b);

#endif
