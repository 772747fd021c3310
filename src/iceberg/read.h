/* Reading a table's data files: a Parquet data file through FileIO, and
 * the rows of a table (or of one data file) as JSON objects, mapped to the
 * table's current schema by field id, with the delete files that apply
 * removed (read_rows.c, read_value.c, read_deletes.c).
 *
 * A row is one JSON object whose keys are the schema's top-level columns in
 * schema order: a column a file lacks reads null (older files after schema
 * evolution), a column the schema dropped is left out, a promoted column
 * is written in its new type.  Structs become objects, lists arrays, maps
 * with string keys objects and other maps arrays of {"key","value"};
 * longs are JSON numbers, dates "2026-12-02", timestamps ISO-8601 text
 * (with Z when adjusted to UTC), decimals exact numbers, binary and fixed
 * base64 strings, UUIDs their text, NaN and infinities strings.
 *
 * Every function here reads untrusted bytes: damaged files fail with
 * FLOE_ECORRUPT, never crash.  No state is shared: different threads may
 * read at once with different objects. */
#ifndef FLOE_ICEBERG_READ_H
#define FLOE_ICEBERG_READ_H

#include "format/parquet.h"
#include "iceberg/scan.h"
#include "storage/fileio.h"
#include "util/buf.h"

/* The largest data file read whole into memory (16 GiB). */
#define FLOE_ICE_DATA_FILE_MAX ((size_t)1 << 34)

/* Read the Parquet data file at path through io into *data (reset first)
 * and open a reader on it.  The reader borrows data->data: keep *data
 * unchanged until floe_pq_reader_free.  NULL with *err: FLOE_ENOENT when
 * the file is absent, FLOE_ECORRUPT when it is not Parquet. */
floe_pq_reader_t *floe_ice_parquet_open(floe_fileio_t *io, const char *path, floe_buf_t *data,
                                        floe_err_t *err);

/* ---- rows ---- */

/* Receives one row: json[0..len) is a JSON object (no newline), borrowed
 * until the call returns.  Return 0 to go on, or -1 with *err set to stop
 * the read, which then fails with that error. */
typedef int (*floe_ice_row_fn)(void *arg, const char *json, size_t len, floe_err_t *err);

/* The deletes that apply to one data file. */
typedef struct floe_ice_deletes floe_ice_deletes_t;

/* An empty set.  Caller frees with floe_ice_deletes_free.  NULL with *err
 * (FLOE_ENOMEM). */
floe_ice_deletes_t *floe_ice_deletes_new(floe_err_t *err);
void floe_ice_deletes_free(floe_ice_deletes_t *d);

/* Delete the rows at positions pos[0..n) (0-based, in file order, any
 * order; pos borrowed for the call). */
int floe_ice_deletes_add_positions(floe_ice_deletes_t *d, const int64_t *pos, size_t n,
                                   floe_err_t *err);

/* Delete the rows whose equality fields ids[0..nids) (field ids, any
 * order) are equal to those of some row of the equality delete file
 * data[0..len) (untrusted Parquet; what names it in errors), as the spec
 * says: every field equal, and a null in the delete row matches only a
 * null (`col IS NULL`).  A data file that lacks a field (added to the table
 * later) reads it as null.  Values compare in the type schema gives the
 * field (so an int in an old data file equals the same long in a delete
 * file); pass the schema the data files are read in, NULL for the files'
 * own types.  Everything borrowed for the call.  Fails with
 * FLOE_EUNSUPPORTED when a field is a struct, list or map or inside a list
 * or map, FLOE_ECORRUPT when the file lacks a field, is damaged, or a
 * field is a float or double (which the spec forbids); d is then as it
 * was. */
int floe_ice_deletes_add_equality(floe_ice_deletes_t *d, const int32_t *ids, size_t nids,
                                  const uint8_t *data, size_t len, const char *what,
                                  const floe_ice_schema_t *schema, floe_err_t *err);

/* The deletes of scan task t (borrowed for the call): the positions its
 * position delete files name for t's data file, and the rows of its
 * equality delete files (floe_ice_deletes_add_equality; the scan plan
 * decides which files apply: iceberg/scan.h).  schema is the one the data
 * file is read in (borrowed for the call).  Delete files are read through
 * io.  Caller frees *out with floe_ice_deletes_free.  Fails with
 * FLOE_EUNSUPPORTED on a delete file that is not Parquet, otherwise as
 * floe_ice_deletes_add_equality. */
int floe_ice_deletes_load(floe_fileio_t *io, const floe_ice_scan_task_t *t,
                          const floe_ice_schema_t *schema, floe_ice_deletes_t **out,
                          floe_err_t *err);

/* The positions (0-based, ascending, each once) of the rows of the data
 * file r reads that d deletes: its positions within the file's rows, and
 * the rows its equality deletes match (compared as floe_ice_read_file
 * does, in schema's types; NULL: the file's own).  Only the key columns
 * are decoded.  *pos is malloc'd (caller frees; NULL when none).  d, r and
 * schema borrowed for the call; what names the file in errors. */
int floe_ice_deletes_rows(const floe_ice_deletes_t *d, floe_pq_reader_t *r,
                          const floe_ice_schema_t *schema, const char *what, int64_t **pos,
                          size_t *npos, floe_err_t *err);

/* ---- which data files a position delete file names ---- */

/* false when the file_path bounds of position delete file df (borrowed)
 * prove it names no row of data file `path`; true otherwise (also for a
 * file without bounds: only reading it tells). */
bool floe_ice_position_delete_may_name(const floe_ice_data_file_t *df, const char *path);

/* Whether df's file_path bounds are equal: then it names that one data
 * file (*path, *len: borrowed from df), as Iceberg writers record it. */
bool floe_ice_position_delete_single(const floe_ice_data_file_t *df, const char **path,
                                     size_t *len);

/* The distinct data file paths a position delete file names, with how
 * many of its rows name each (owned; floe_ice_pos_targets_clear). */
typedef struct floe_ice_pos_targets {
    char **paths;
    int64_t *rows;
    size_t n;
} floe_ice_pos_targets_t;

/* Read the file_path column of position delete file df through io into
 * *out (cleared on failure); with equal file_path bounds, take them
 * without reading (its record count as the rows).  FLOE_EUNSUPPORTED when not Parquet,
 * FLOE_ECORRUPT when damaged. */
int floe_ice_position_delete_targets(floe_fileio_t *io, const floe_ice_data_file_t *df,
                                     floe_ice_pos_targets_t *out, floe_err_t *err);
/* The same from the bytes of a position delete file (untrusted). */
int floe_ice_position_delete_targets_parse(const uint8_t *data, size_t len, const char *what,
                                           floe_ice_pos_targets_t *out, floe_err_t *err);
/* Rows of t naming path (0: none). */
int64_t floe_ice_pos_targets_rows(const floe_ice_pos_targets_t *t, const char *path);
void floe_ice_pos_targets_clear(floe_ice_pos_targets_t *t);

/* The rows of one Parquet file data[0..len) (untrusted) in schema's
 * top-level columns (NULL: the file's own top-level columns, typed by
 * Parquet alone), without the rows dels deletes (NULL: none), each handed
 * to fn(arg, ...) in file order.  *left counts down the rows still to
 * hand over (< 0: no limit); deleted rows do not count.  what names the
 * file in errors.  All borrowed for the call. */
int floe_ice_read_file(const uint8_t *data, size_t len, const char *what,
                       const floe_ice_schema_t *schema, const floe_ice_deletes_t *dels,
                       int64_t *left, floe_ice_row_fn fn, void *arg, floe_err_t *err);

/* The rows of md's current snapshot in its current schema (see the top of
 * this header), data file after data file as the scan plan lists them,
 * with the delete files that apply to each (iceberg/scan.h) taken out,
 * handed to fn(arg, ...); stops after limit rows (< 0: all).  Files are
 * read through io.  Everything borrowed for the call.  A table without a
 * snapshot has no rows.  Fails with FLOE_EUNSUPPORTED on a file that is
 * not Parquet, FLOE_ECORRUPT on a damaged file, or fn's error. */
int floe_ice_read_table(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t limit,
                        floe_ice_row_fn fn, void *arg, floe_err_t *err);

/* Receives one row with where it lives: the data file's path and the
 * row's position in it (0-based, counting deleted rows), both as a
 * position delete file names them; json as floe_ice_row_fn's. */
typedef int (*floe_ice_row_pos_fn)(void *arg, const char *path, int64_t pos, const char *json,
                                   size_t len, floe_err_t *err);

/* floe_ice_read_table without a limit, each live row handed with its
 * data file and position (what a writer of position deletes needs). */
int floe_ice_read_table_pos(floe_fileio_t *io, const floe_ice_metadata_t *md,
                            floe_ice_row_pos_fn fn, void *arg, floe_err_t *err);

#endif
