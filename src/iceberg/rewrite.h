/* Rewriting data files: the data path of compaction.
 *
 * A rewriter reads data files of one partition (same spec, same partition
 * tuple) and writes their rows again, in the table's current schema, into
 * new Parquet files with large row groups, rolled near a target size:
 * many small files become few large ones.  Rows, nulls, nested values and
 * the `_kafka` columns come out exactly as they went in; columns are
 * matched by field id, never by name, so renames and reordering are free.
 * Each output is described as a manifest entry needs it: record count,
 * size, the inputs' spec id and partition values, and Iceberg metrics from
 * the one collector every data file writer uses (iceberg/colstats.h).
 *
 * Schema evolution across inputs:
 *   - a column an input lacks (added after it was written) reads null; a
 *     field added inside an existing struct, list element or map value is
 *     null where its parent is present and absent where the parent is;
 *   - Iceberg's promotions int -> long, float -> double and decimal
 *     precision widening, and a column made optional, convert on the way;
 *   - floe's own widening of a long field to a new double field (a new
 *     field id at the same place, see table/schema_map.h) converts the old
 *     field's values when the caller names the pair in opts.remap;
 *   - columns the current schema dropped are left out.
 *
 * Row filters: each input may come with the positions of rows to drop
 * (what a position delete file says of it), or with the delete files that
 * apply to it (floe_ice_rewriter_add_deleting: position and equality
 * deletes), so compaction writes only the rows a reader would see.
 *
 * Safety: the rows written must equal the rows read minus the dropped ones,
 * or the rewrite fails.  A failed or aborted rewrite removes every output
 * it wrote or started; outputs are published (visible) only once finished,
 * and only the caller's commit makes them part of the table.
 *
 * Memory: one input file (read whole) plus about one output row group.
 * Not thread-safe: one thread per rewriter; independent rewriters may run
 * in parallel. */
#ifndef FLOE_ICEBERG_REWRITE_H
#define FLOE_ICEBERG_REWRITE_H

#include "format/parquet.h"
#include "iceberg/manifest.h"
#include "iceberg/read.h"
#include "storage/fileio.h"

/* A long field replaced by a new double field (floe's widening). */
typedef struct floe_ice_field_remap {
    int32_t from, to;
} floe_ice_field_remap_t;

/* Encoded bytes of an output row group by default: about the rows of one
 * row group of the table's own files (cut at 32 MB of rows in memory,
 * ~5x smaller encoded), so a compacted file keeps several row groups
 * that a reader scans in parallel; 32 MiB made a 1M-row file one row
 * group that DuckDB read on one thread, 2.2x slower than the 20 files it
 * replaced (bench/upsert). */
#define FLOE_ICE_REWRITE_ROW_GROUP ((size_t)4 << 20)

typedef struct floe_ice_rewrite_opts {
    floe_codec_t codec;        /* default zstd */
    int level;                 /* default 1, as the table's own files; 0: codec default */
    uint64_t target_file_size; /* start a new output once one passes this; 0: one output */
    size_t row_group_size;     /* output row groups: encoded bytes, FLOE_ICE_REWRITE_ROW_GROUP */
    const floe_ice_field_remap_t *remap; /* borrowed until the rewriter is freed */
    size_t nremap;
    struct floe_pq_scratch *scratch; /* Parquet temporaries (borrowed); NULL: own */
    bool decode_all;                 /* decode and encode every column chunk again; by default
                      * chunks that need no change are copied page by page */
} floe_ice_rewrite_opts_t;

floe_ice_rewrite_opts_t floe_ice_rewrite_opts_default(void);

/* Names output file number seq (0, 1, ...): a path that does not exist yet
 * (it is created exclusively).  Returns a malloc'd string the rewriter
 * frees, or NULL with *err. */
typedef char *(*floe_ice_rewrite_name_fn)(void *ctx, unsigned seq, floe_err_t *err);

typedef struct floe_ice_rewriter floe_ice_rewriter_t;

/* A rewriter writing through io into files named by name(ctx, ...) with
 * table schema `schema` (its fields carry the ids; stored as each output's
 * `iceberg.schema`).  io, schema and ctx are borrowed until the rewriter is
 * finished or aborted.  NULL with *err (a schema type Parquet cannot hold,
 * ENOMEM). */
floe_ice_rewriter_t *floe_ice_rewriter_new(floe_fileio_t *io, const floe_ice_schema_t *schema,
                                           floe_ice_rewrite_name_fn name, void *ctx,
                                           const floe_ice_rewrite_opts_t *opts, floe_err_t *err);

/* Append the rows of data file `in` (a Parquet data file of the same spec
 * and partition as the inputs before it; borrowed for the call), except the
 * rows at positions deleted[0..ndeleted) (strictly ascending, 0-based; NULL
 * when none).  The file's row count must match in->record_count.  Errors:
 * EINVAL (another partition, a bad position list), ECORRUPT (the file does
 * not decode, or its row count differs), EUNSUPPORTED (a column whose
 * stored type cannot become the table's), storage errors.  After a
 * failure the rewriter only takes floe_ice_rewriter_abort. */
int floe_ice_rewriter_add(floe_ice_rewriter_t *rw, const floe_ice_data_file_t *in,
                          const int64_t *deleted, size_t ndeleted, floe_err_t *err);

/* The same with the deletes that apply to `in` (iceberg/read.h: positions
 * and equality deletes, e.g. floe_ice_deletes_load of its scan task; NULL:
 * none) taken out: the rows they delete are found in the file itself
 * (equality keys compared in the rewriter's schema), then dropped. */
int floe_ice_rewriter_add_deleting(floe_ice_rewriter_t *rw, const floe_ice_data_file_t *in,
                                   const floe_ice_deletes_t *dels, floe_err_t *err);

/* Finish: close the last output, check that the rows written equal the
 * rows added, and describe the outputs in *out[0..*nout) (malloc'd; caller
 * clears each with floe_ice_data_file_clear and frees the array; none when
 * every row was dropped).  Frees rw, also on failure, when every output is
 * removed. */
int floe_ice_rewriter_finish(floe_ice_rewriter_t *rw, floe_ice_data_file_t **out, size_t *nout,
                             floe_err_t *err);

/* Drop the rewrite: remove every output written or started, free rw.
 * NULL is a no-op. */
void floe_ice_rewriter_abort(floe_ice_rewriter_t *rw);

/* Progress: rows and bytes (file sizes) read so far, rows written. */
typedef struct floe_ice_rewrite_stats {
    int64_t files_in, rows_in, bytes_in, rows_dropped, rows_out;
} floe_ice_rewrite_stats_t;
floe_ice_rewrite_stats_t floe_ice_rewriter_stats(const floe_ice_rewriter_t *rw);

/* One input of floe_ice_rewrite. */
typedef struct floe_ice_rewrite_input {
    const floe_ice_data_file_t *file; /* borrowed */
    const int64_t *deleted;           /* rows to drop, ascending; NULL: none */
    size_t ndeleted;
} floe_ice_rewrite_input_t;

/* The whole rewrite in one call: new, add each input, finish (abort on any
 * failure).  Same ownership and errors as those. */
int floe_ice_rewrite(floe_fileio_t *io, const floe_ice_schema_t *schema,
                     const floe_ice_rewrite_input_t *in, size_t nin, floe_ice_rewrite_name_fn name,
                     void *ctx, const floe_ice_rewrite_opts_t *opts, floe_ice_data_file_t **out,
                     size_t *nout, floe_err_t *err);

#endif
