/* Snapshot producers (fast append, row delta, rewrite) with optimistic
 * commits, and snapshot expiry.
 *
 * A producer collects files, then floe_ice_commit_run() loops: load the
 * table, ask the validate callback (the table engine checks there whether
 * its source offsets are already committed), write manifests and a
 * manifest list on top of the current snapshot, and commit with the
 * requirements "table uuid unchanged" and "main still at the snapshot we
 * built on".  On FLOE_ECONFLICT it deletes what the attempt wrote and
 * re-applies on the new head; on FLOE_EUNKNOWN it reloads the table to see
 * whether its snapshot landed, and gives up with FLOE_EUNKNOWN (deleting
 * nothing) if it cannot tell.
 *
 * The data and delete files handed to a producer are the caller's: the
 * producer never deletes them.  After a failed commit other than
 * FLOE_EUNKNOWN the caller may delete them; after FLOE_EUNKNOWN it must
 * not until a reload shows the snapshot absent. */
#ifndef FLOE_ICEBERG_SNAPSHOT_H
#define FLOE_ICEBERG_SNAPSHOT_H

#include "iceberg/catalog.h"
#include "iceberg/manifest.h"

typedef enum floe_ice_op {
    FLOE_ICE_OP_APPEND = 1, /* data files only; operation "append" */
    FLOE_ICE_OP_ROW_DELTA, /* data + position/equality deletes; "overwrite" (or "append"/"delete") */
    FLOE_ICE_OP_REWRITE,   /* replace live files by new ones; "replace" (or
                                   "overwrite" when the records added differ
                                   from those removed: new data came along) */
} floe_ice_op_t;

typedef struct floe_ice_commit floe_ice_commit_t;

/* Called at every attempt with the freshly loaded table (borrowed).
 * Return 0 to go on, 1 to skip (already committed: run returns 1 and
 * writes nothing), or -1 with *err to abort. */
typedef int (*floe_ice_validate_fn)(void *ctx, const floe_ice_table_t *current, floe_err_t *err);

/* A producer for table ns.name of catalog cat (borrowed; must outlive the
 * producer).  Caller frees with floe_ice_commit_free. */
floe_ice_commit_t *floe_ice_commit_new(floe_ice_catalog_t *cat, const char *ns, const char *name,
                                       floe_ice_op_t op, floe_err_t *err);
/* Add a data or delete file (by f->content; copied).  Its spec_id and
 * partition values must match a spec of the table (checked at commit). */
int floe_ice_commit_add(floe_ice_commit_t *c, const floe_ice_data_file_t *f, floe_err_t *err);
/* Rewrite only: remove the live file at path (copied).  The commit fails
 * with FLOE_ECONFLICT if it is no longer live. */
int floe_ice_commit_remove(floe_ice_commit_t *c, const char *path, floe_err_t *err);
/* Make schema (borrowed; copied) the table's current schema in the same
 * commit as the files (added unless an equal schema exists), so evolved
 * columns and the data that needs them appear together.  The commit then
 * also requires that nobody changed the current schema meanwhile. */
int floe_ice_commit_set_schema(floe_ice_commit_t *c, const floe_ice_schema_t *schema,
                               floe_err_t *err);
/* Extra snapshot summary property (copied), e.g. "floe.offsets". */
int floe_ice_commit_set_summary(floe_ice_commit_t *c, const char *key, const char *value,
                                floe_err_t *err);
void floe_ice_commit_set_validate(floe_ice_commit_t *c, floe_ice_validate_fn fn, void *ctx);
/* Attempts before giving up with FLOE_ECONFLICT (default 1000). */
void floe_ice_commit_set_max_attempts(floe_ice_commit_t *c, int n);
/* Avro codec of manifests (floe_avro_codec_t; default null). */
void floe_ice_commit_set_codec(floe_ice_commit_t *c, int codec);
/* Run.  0: committed (*snapshot_id set when non-NULL); 1: skipped by the
 * validate callback; -1 with *err. */
int floe_ice_commit_run(floe_ice_commit_t *c, int64_t *snapshot_id, floe_err_t *err);
/* Attempts made by the last run (1 = no conflict). */
int floe_ice_commit_attempts(const floe_ice_commit_t *c);
void floe_ice_commit_free(floe_ice_commit_t *c);

/* Remove old snapshots from ns.name: keep every ref's head and the newest
 * keep_last snapshots (>= 1), remove the others older than
 * older_than_ms (0: no age limit), then, if delete_files, delete manifest
 * lists, manifests and data/delete files no remaining snapshot reaches. */
typedef struct floe_ice_expire_opts {
    int64_t older_than_ms;
    int keep_last;
    bool delete_files;
} floe_ice_expire_opts_t;

typedef struct floe_ice_expire_result {
    size_t snapshots_removed;
    size_t files_deleted;
} floe_ice_expire_result_t;

int floe_ice_expire_snapshots(floe_ice_catalog_t *cat, const char *ns, const char *name,
                              const floe_ice_expire_opts_t *opts, floe_ice_expire_result_t *res,
                              floe_err_t *err);

#endif
