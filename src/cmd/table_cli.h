/* Internals of `floe table` shared between its files. */
#ifndef FLOE_CMD_TABLE_CLI_H
#define FLOE_CMD_TABLE_CLI_H

#include <stdio.h>

#include "iceberg/metadata.h"
#include "storage/fileio.h"
#include "util/buf.h"

/* Print the rows of md's current snapshot to out as JSON lines, in the
 * current schema (columns a data file lacks read null; nested structs,
 * lists and maps become JSON objects and arrays), reading the data files
 * through io with floe's Parquet reader and applying position deletes.
 * Stops after limit rows (< 0: all).  Everything borrowed.  Fails with
 * FLOE_EUNSUPPORTED on equality deletes, FLOE_ECORRUPT on a bad file. */
int floe_cli_scan(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t limit, FILE *out,
                  floe_err_t *err);

/* The rows of one Parquet file data[0..len) (untrusted) as JSON lines on
 * out, in schema's top-level columns (NULL: the file's own top-level
 * columns, typed by Parquet alone), skipping the row positions in
 * dels[0..ndels) (sorted).  *left counts down the rows still to print
 * (< 0: no limit).  what names the file in errors.  All borrowed. */
int floe_cli_scan_parquet(const uint8_t *data, size_t len, const char *what,
                          const floe_ice_schema_t *schema, const int64_t *dels, size_t ndels,
                          int64_t *left, FILE *out, floe_err_t *err);

/* A JSON string literal of p[0..n) appended to b; invalid UTF-8 becomes
 * U+FFFD.  0 or -1 (ENOMEM). */
int floe_cli_json_str(floe_buf_t *b, const void *p, size_t n);

#endif
