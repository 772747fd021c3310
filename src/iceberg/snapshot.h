/* Snapshot producers (fast append, row delta, rewrite) with optimistic
 * commits, and snapshot expiry.
 *
 * Every producer merges small manifests as it commits, as Iceberg's
 * MergeAppend does, from the table properties commit.manifest-merge.enabled
 * (default true), commit.manifest.min-count-to-merge (100) and
 * commit.manifest.target-size-bytes (8 MiB): the manifest list then stays
 * short however many commits happen.  Merged manifests carry the entries
 * of others as EXISTING with their snapshot id and sequence numbers.
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
 * with FLOE_ECONFLICT (final, not retried) if it is no longer live.  Other
 * commits landing meanwhile (appends) are no conflict: the rewrite is
 * re-applied on the new head, keeping their files. */
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
/* Rewrite only: the snapshot the rewrite was planned on.  The commit then
 * also fails with FLOE_ECONFLICT (final) when that snapshot has left
 * main's history, or when a file committed since would lose its effect:
 * a delete file that applies to a removed data file (a position delete
 * only when it names it; an equality delete unless it also applies to
 * the added files, see set_data_sequence), or a data file that a removed
 * delete file applies to.  Other commits meanwhile never conflict. */
void floe_ice_commit_set_base(floe_ice_commit_t *c, int64_t snapshot_id);
/* Rewrite only: the data sequence number of the data files it adds
 * (their file sequence number stays the commit's), as Iceberg's rewrite
 * with the starting sequence number does.  A compaction that applied the
 * deletes of its plan gives its files the planned snapshot's sequence
 * number: the equality deletes it applied (older) no longer apply to
 * them, those committed since (newer) still do, as they did to the files
 * replaced.  -1 with *err (EINVAL) on another producer or seq < 0. */
int floe_ice_commit_set_data_sequence(floe_ice_commit_t *c, int64_t seq, floe_err_t *err);
/* Attempts before giving up with FLOE_ECONFLICT (default 1000). */
void floe_ice_commit_set_max_attempts(floe_ice_commit_t *c, int n);
/* Avro codec of manifests (floe_avro_codec_t; default null). */
void floe_ice_commit_set_codec(floe_ice_commit_t *c, int codec);
/* Run.  0: committed (*snapshot_id set when non-NULL); 1: skipped by the
 * validate callback; -1 with *err. */
int floe_ice_commit_run(floe_ice_commit_t *c, int64_t *snapshot_id, floe_err_t *err);
/* Attempts made by the last run (1 = no conflict). */
int floe_ice_commit_attempts(const floe_ice_commit_t *c);

/* What the last successful run did, for metrics. */
typedef struct floe_ice_commit_stats {
    int attempts;
    size_t manifests;              /* in the new snapshot's manifest list */
    size_t manifests_created;      /* of those, written by this commit (new, rewritten, merged) */
    size_t manifests_merged;       /* small manifests folded into merged ones */
    size_t metadata_files_deleted; /* old metadata files removed after the commit */
} floe_ice_commit_stats_t;
void floe_ice_commit_stats(const floe_ice_commit_t *c, floe_ice_commit_stats_t *out);
void floe_ice_commit_free(floe_ice_commit_t *c);

/* Snapshot expiry: remove old snapshots from ns.name, then (delete_files)
 * delete the manifest lists, manifests, data and delete files that no
 * remaining snapshot reaches (the walk of maintain.h), in batches.
 *
 * Which snapshots stay (Iceberg's rules): every ref's head; along each
 * branch's ancestry from its head, the newest keep_last snapshots and all
 * those newer than the age limit (a branch's own min-snapshots-to-keep and
 * max-snapshot-age-ms, when set, win); snapshots outside every ancestry
 * when newer than the age limit; and with protect_summary_key, the newest
 * snapshot of main's ancestry whose summary has that key (where floe
 * finds its committed offsets after snapshots of other writers) with every
 * snapshot between it and main's head, so walking back still finds it. */
typedef struct floe_ice_expire_opts {
    /* Expire snapshots older than this wall time (ms since the epoch).
     * 0: now minus the table's history.expire.max-snapshot-age-ms (Iceberg
     * default 5 days); -1: no age limit (only keep_last and refs keep). */
    int64_t older_than_ms;
    /* Snapshots kept per branch.  0: the table's
     * history.expire.min-snapshots-to-keep (default 1). */
    int keep_last;
    bool delete_files;
    const char *protect_summary_key; /* borrowed; NULL: none */
    /* Called before each attempt (1, 2, ...; may be NULL): a caller whose
     * attempts keep losing to a faster writer can hold that writer off. */
    void (*before_attempt)(void *ctx, int attempt);
    void *before_attempt_ctx;
} floe_ice_expire_opts_t;

typedef struct floe_ice_expire_result {
    size_t snapshots_removed;
    size_t files_deleted; /* all kinds */
    size_t manifest_lists_deleted, manifests_deleted, data_files_deleted, delete_files_deleted;
    int64_t bytes_deleted;  /* of the deleted files whose size the table records */
    size_t delete_failures; /* files that could not be deleted (logged; orphans later) */
} floe_ice_expire_result_t;

/* opts borrowed; res (may be NULL) filled.  -1 with *err: ECONFLICT after
 * 100 lost races; when the snapshots were removed but a remaining
 * snapshot's files could not be read, nothing is deleted and *err says so
 * (res->snapshots_removed is set). */
int floe_ice_expire_snapshots(floe_ice_catalog_t *cat, const char *ns, const char *name,
                              const floe_ice_expire_opts_t *opts, floe_ice_expire_result_t *res,
                              floe_err_t *err);

#endif
