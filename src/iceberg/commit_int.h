/* Internals shared by the snapshot producers (commit.c) and the other
 * writers of a table's metadata (snapshot expiry). */
#ifndef FLOE_ICEBERG_COMMIT_INT_H
#define FLOE_ICEBERG_COMMIT_INT_H

#include "iceberg/catalog.h"
#include "iceberg/manifest.h"

/* One optimistic attempt on t, the table as just loaded (borrowed for the
 * call).  Returns 0 (done), a positive value (done, nothing committed:
 * passed through to the caller), or -1 with *err; FLOE_ECONFLICT marked
 * retriable (floe_err_retry) means "lost a race, nothing published: go
 * again"; a conflict not marked so (a file to rewrite is gone) is final. */
typedef int (*floe_ice_attempt_fn)(void *ctx, const floe_ice_table_t *t, floe_err_t *err);

/* The one retry loop of every table writer: load ns.name, run fn on it;
 * on a retriable FLOE_ECONFLICT sleep a jittered backoff that grows with the attempts
 * (so racing writers stop colliding in lockstep) and go again, at most
 * max_attempts times (then FLOE_ECONFLICT, retriable).  what names the
 * operation in messages ("commit", "expire").  *attempts (may be NULL)
 * receives the number of attempts made.  Returns what the last attempt
 * returned. */
int floe_ice_retry(floe_ice_catalog_t *cat, const char *ns, const char *name, const char *what,
                   int max_attempts, floe_ice_attempt_fn fn, void *ctx, int *attempts,
                   floe_err_t *err);

/* reqs[0..2): the table is still md's (same uuid) and main is still at
 * md's head: what every writer of a new table version requires. */
void floe_ice_reqs_same_head(const floe_ice_metadata_t *md, floe_ice_req_t reqs[2]);

/* ---- manifest merging at commit (merge.c) ---- */

/* The table properties that drive it, with Iceberg's defaults:
 * commit.manifest-merge.enabled (true), commit.manifest.min-count-to-merge
 * (100), commit.manifest.target-size-bytes (8 MiB). */
typedef struct floe_ice_merge_cfg {
    bool enabled;
    int64_t min_count;
    int64_t target_bytes;
} floe_ice_merge_cfg_t;

void floe_ice_merge_cfg_from(const floe_ice_props_t *props, floe_ice_merge_cfg_t *cfg);

/* Writes one manifest of entries[0..n) (borrowed) for spec_id and content
 * (0 data, 1 deletes) as the committing snapshot's, filling *out (the
 * caller of the merge owns it then). */
typedef int (*floe_ice_manifest_writer_fn)(void *ctx, int32_t spec_id, int content,
                                           const floe_ice_manifest_entry_t *entries, size_t n,
                                           floe_ice_manifest_file_t *out, floe_err_t *err);

/* Merge the manifest list *list[0..*n) of the snapshot being committed
 * (newest manifests first), in place: the result replaces *list (the old
 * array is freed).  Small manifests of one content and spec are rewritten
 * together through wr; see merge.c for the rule.  *merged receives how
 * many manifests were folded into merged ones.  On failure *list is
 * unchanged (manifests wr wrote are the caller's to delete). */
int floe_ice_merge_manifests(floe_fileio_t *io, const floe_ice_merge_cfg_t *cfg,
                             int64_t snapshot_id, floe_ice_manifest_file_t **list, size_t *n,
                             floe_ice_manifest_writer_fn wr, void *ctx, size_t *merged,
                             floe_err_t *err);

/* Files one delete request takes at most (S3 DeleteObjects: 1,000). */
#define FLOE_ICE_DELETE_BATCH 1000

/* Delete paths[0..n) (borrowed) in batches of FLOE_ICE_DELETE_BATCH
 * through floe_fileio_remove_batch; done[i] tells whether paths[i] is
 * gone.  Failures are logged (one line per batch), not returned: returns
 * how many paths could not be deleted. */
size_t floe_ice_delete_batched(floe_fileio_t *io, const char *const *paths, size_t n, bool *done);

#endif
