/* Test and benchmark support for Iceberg tables written by hand: a data or
 * delete file entry for a file on local disk, a commit of such files, and
 * a row collector for floe's reader (iceberg/read.h). */
#ifndef FLOE_TESTS_ICE_FILES_H
#define FLOE_TESTS_ICE_FILES_H

#include "iceberg/catalog.h"
#include "iceberg/manifest.h"
#include "iceberg/snapshot.h"

/* *f describes the Parquet file at path (a local file; takes ownership of
 * the malloc'd path): content, rows, its size on disk; unpartitioned. */
void ice_file_describe(floe_ice_data_file_t *f, char *path, floe_ice_content_t content,
                       int64_t rows);

/* Commit files[0..n) to ns.table as op (cleared after, whatever the
 * outcome); the error on stderr.  Returns what floe_ice_commit_run did. */
int ice_file_commit(floe_ice_catalog_t *cat, const char *ns, const char *table, floe_ice_op_t op,
                    floe_ice_data_file_t *files, size_t n);

/* A floe_ice_row_fn: appends the row and a newline to the floe_buf_t arg. */
int ice_rows_collect(void *arg, const char *json, size_t len, floe_err_t *err);

#endif
