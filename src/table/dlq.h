/* The dead-letter table's layout, in one place: its columns (where the
 * record was, what it held, which stage failed and why), writing a row
 * into a buffer, and reading the rows of one of its data files back (for
 * a re-drive).  A row holds the message as the source handed it out, so a
 * row read back converts like the record did. */
#ifndef FLOE_TABLE_DLQ_H
#define FLOE_TABLE_DLQ_H

#include "format/parquet.h"
#include "iceberg/types.h"
#include "table/convert.h"
#include "table/rows.h"
#include "table/source.h"

/* Give an empty buffer the dead-letter columns: partition, offset,
 * timestamp, key, value, stage, reason, headers.  0 or -1 with *err. */
int floe_tdlq_shape(floe_rows_t *r, floe_err_t *err);

/* Append a dead-letter row to r (shaped by floe_tdlq_shape): message m
 * (borrowed; a record, or bytes that did not decode) of Kafka partition
 * `partition`, the stage that failed and why.  0, or -1 with *err when out
 * of memory (the row undone). */
int floe_tdlq_row(floe_rows_t *r, int32_t partition, const floe_tmsg_t *m, floe_conv_stage_t stage,
                  const char *why, floe_err_t *err);

/* One row read back.  Slices borrow from the decoded columns, headers from
 * the reader's scratch, until the callback returns. */
typedef struct floe_tdlq_entry {
    int32_t partition;
    floe_tmsg_t msg; /* offset, timestamp, key, value, headers (a list) */
    floe_conv_stage_t stage;
    floe_slice_t reason;
} floe_tdlq_entry_t;

/* Called for each row, index counting from 0 in file order; a return
 * below 0 stops the walk (and is returned). */
typedef int (*floe_tdlq_fn)(void *ctx, const floe_tdlq_entry_t *r, size_t index, floe_err_t *err);

/* Call fn for every row of the DLQ data file rd (borrowed; path names it
 * in errors), whose columns are found by field id in schema (the DLQ
 * table's).  0, or -1 with *err (FLOE_ECORRUPT: the file does not hold
 * dead-letter rows, or its columns disagree). */
int floe_tdlq_each(floe_pq_reader_t *rd, const floe_ice_schema_t *schema, const char *path,
                   floe_tdlq_fn fn, void *ctx, floe_err_t *err);

#endif
