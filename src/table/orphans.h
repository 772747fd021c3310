/* The orphan sweep at open: files under a table that no snapshot
 * references (what a run wrote before it died uncommitted) are deleted.
 * Kept in one place so it can give way to iceberg/'s own orphan removal,
 * which shares the walk of reachable files with snapshot expiry. */
#ifndef FLOE_TABLE_ORPHANS_H
#define FLOE_TABLE_ORPHANS_H

#include <stddef.h>

#include "iceberg/metadata.h"
#include "storage/fileio.h"

/* Delete the data files and manifests under the table of md (borrowed)
 * that no snapshot references: in data/ (partition folders included)
 * every file, temp files of interrupted writes too; in metadata/ manifests
 * and temp files.  Only safe before this engine writes: floe is the
 * table's one writer.  *removed gets the count.  0, or -1 with *err (a
 * listing or snapshot read failed; some files may be gone). */
int floe_torphans_remove(const floe_ice_metadata_t *md, floe_fileio_t *io, size_t *removed,
                         floe_err_t *err);

#endif
