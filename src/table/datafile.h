/* Data files of a table topic: the rows of a buffer, as Parquet, through
 * a FileIO, with the Iceberg metrics a manifest entry carries.
 *
 * A file is opened for the buffer's current shape (its nodes must carry
 * field ids: floe_tschema_merge first) and stays with that shape: when the
 * shape changes, close the file and open another.  Each append writes the
 * buffered rows' columns; each flush cuts a row group (the L2 layer); the
 * caller rolls the file when floe_dfw_bytes passes the target (L3).  The
 * file becomes visible only at close. */
#ifndef FLOE_TABLE_DATAFILE_H
#define FLOE_TABLE_DATAFILE_H

#include "iceberg/manifest.h"
#include "storage/fileio.h"
#include "table/rows.h"
#include "util/compress.h"

typedef struct floe_dfw_opts {
    floe_codec_t codec;              /* default zstd */
    int level;                       /* 0: codec default */
    struct floe_pq_scratch *scratch; /* Parquet temporaries shared by the files
                                      * one thread writes (borrowed); NULL: own */
} floe_dfw_opts_t;

typedef struct floe_dfw floe_dfw_t;

/* Open path on io (borrowed; must outlive the writer).  schema_json is the
 * table schema's JSON, stored as the file's `iceberg.schema` entry (copied).
 * NULL with *err on failure. */
floe_dfw_t *floe_dfw_open(floe_fileio_t *io, const char *path, floe_rows_t *rows,
                          const char *schema_json, const floe_dfw_opts_t *opts, floe_err_t *err);
/* The shape version the file was opened for. */
uint64_t floe_dfw_shape_version(const floe_dfw_t *w);
/* Write every row held by rows (not cleared: the caller clears).  rows'
 * shape must be the one the file was opened with (FLOE_EINVAL otherwise). */
int floe_dfw_append(floe_dfw_t *w, floe_rows_t *rows, floe_err_t *err);
/* Write only rows sel[0..nsel) (ascending row indexes) of rows; sel NULL
 * means every row.  Same shape rule as floe_dfw_append. */
int floe_dfw_append_sel(floe_dfw_t *w, floe_rows_t *rows, const uint32_t *sel, size_t nsel,
                        floe_err_t *err);
/* End the current row group. */
int floe_dfw_flush(floe_dfw_t *w, floe_err_t *err);
/* Bytes written plus bytes buffered; rows appended. */
uint64_t floe_dfw_bytes(const floe_dfw_t *w);
/* Bytes buffered for the open row group (encoded, not yet written). */
uint64_t floe_dfw_buffered(const floe_dfw_t *w);
uint64_t floe_dfw_rows(const floe_dfw_t *w);
/* Footer, publish, and describe the file in *f (initialised here; caller
 * clears with floe_ice_data_file_clear).  Frees w, also on failure (then
 * the file is not published). */
int floe_dfw_close(floe_dfw_t *w, floe_ice_data_file_t *f, floe_err_t *err);
/* Drop the file unpublished and free w. */
void floe_dfw_abort(floe_dfw_t *w);

#endif
