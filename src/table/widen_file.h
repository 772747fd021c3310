/* Rewriting one data file with long fields turned into doubles: the pure
 * transcoder of a widening (widen.h decides which files). */
#ifndef FLOE_TABLE_WIDEN_FILE_H
#define FLOE_TABLE_WIDEN_FILE_H

#include "iceberg/manifest.h"
#include "storage/fileio.h"
#include "table/schema_map.h"

/* The field that replaces `from` among w[0..n), or 0 when none does. */
int32_t floe_twiden_find(const floe_twiden_t *w, size_t n, int32_t from);

/* Rewrite data file `in` (borrowed) at out_path with the fields
 * w[].from turned into doubles w[].to: 1 with *out filled (caller clears;
 * same partition, spec and metrics, the widened columns' metrics
 * recomputed), 0 when the file holds none of them (nothing written), -1
 * with *err (nothing left at out_path).  The file keeps its own
 * `iceberg.schema` entry with the fields replaced (fallback_schema when it
 * has none). */
int floe_twiden_file(floe_fileio_t *io, const floe_ice_data_file_t *in, const char *out_path,
                     const floe_twiden_t *w, size_t nw, const char *fallback_schema,
                     floe_ice_data_file_t *out, floe_err_t *err);

#endif
