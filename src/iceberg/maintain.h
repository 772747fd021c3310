/* Table maintenance: what keeps a table that commits every second bounded
 * for months (snapshot expiry itself is in snapshot.h).
 *
 *   - the reachable-file walk: the files (metadata JSON, manifest lists,
 *     manifests, data and delete files) a set of snapshots reaches; expiry
 *     and orphan removal both decide from it;
 *   - orphan removal: files under the table location nothing reaches;
 *   - progress lookup: the newest snapshot of an ancestry carrying a
 *     summary key (floe's "floe.offsets"), across snapshots of other
 *     writers that lack it;
 *   - compaction planning: which small data files to bin-pack together
 *     (the rewrite itself commits with FLOE_ICE_OP_REWRITE, snapshot.h).
 *
 * Threads: every function may run on any thread; a reach set or a plan is
 * used by one thread at a time.  Deletes go through the catalog's FileIO in
 * batches (floe_fileio_remove_batch). */
#ifndef FLOE_ICEBERG_MAINTAIN_H
#define FLOE_ICEBERG_MAINTAIN_H

#include "iceberg/catalog.h"
#include "iceberg/manifest.h"
#include "iceberg/scan.h"

/* ---- the reachable-file walk ---- */

typedef enum floe_ice_file_kind {
    FLOE_ICE_FILE_METADATA = 1, /* a metadata JSON file: current or in the metadata-log */
    FLOE_ICE_FILE_MANIFEST_LIST,
    FLOE_ICE_FILE_MANIFEST,
    FLOE_ICE_FILE_DATA,
    FLOE_ICE_FILE_DELETES, /* position or equality delete file */
} floe_ice_file_kind_t;

typedef struct floe_ice_reach floe_ice_reach_t;

/* An empty set of files.  live_only: a content file counts only where a
 * manifest lists it live (ADDED or EXISTING), which is what readers of the
 * snapshot read; otherwise DELETED entries count too (what a removed
 * snapshot may have been the last to reference).  Paths are compared in a
 * normal form: "file:" URLs as local paths, s3a:// and s3n:// as s3://,
 * repeated slashes as one.  Caller frees with floe_ice_reach_free. */
floe_ice_reach_t *floe_ice_reach_new(bool live_only, floe_err_t *err);
void floe_ice_reach_free(floe_ice_reach_t *r);

/* Add one file (path copied).  Callers add files a walk cannot see, e.g.
 * the in-doubt files orphan removal must keep. */
int floe_ice_reach_add_file(floe_ice_reach_t *r, const char *path, floe_ice_file_kind_t kind,
                            int64_t size, floe_err_t *err);
/* Add t's metadata JSON files: its current one and those its metadata-log
 * names (t borrowed). */
int floe_ice_reach_add_metadata(floe_ice_reach_t *r, const floe_ice_table_t *t, floe_err_t *err);
/* Add what snapshot s (borrowed) reaches: its manifest list, manifests and
 * their content files.  A manifest already in the set is not read again,
 * so walking many snapshots that share manifests reads each once.  -1 with
 * *err when a file cannot be read (what was read before stays added). */
int floe_ice_reach_add_snapshot(floe_ice_reach_t *r, floe_fileio_t *io,
                                const floe_ice_snapshot_t *s, floe_err_t *err);
/* Add t's metadata files and every one of its snapshots. */
int floe_ice_reach_add_table(floe_ice_reach_t *r, floe_fileio_t *io, const floe_ice_table_t *t,
                             floe_err_t *err);

bool floe_ice_reach_has(const floe_ice_reach_t *r, const char *path);
size_t floe_ice_reach_count(const floe_ice_reach_t *r);

typedef struct floe_ice_reach_file {
    const char *path; /* as the table records it; borrowed from the set */
    floe_ice_file_kind_t kind;
    int64_t size; /* bytes as recorded (manifest length, file size); -1 unknown */
} floe_ice_reach_file_t;

/* The i-th file added (0 <= i < count), in the order added. */
floe_ice_reach_file_t floe_ice_reach_file(const floe_ice_reach_t *r, size_t i);

/* ---- orphan removal ---- */

typedef struct floe_ice_orphan_opts {
    /* Only files last modified at least this long ago are deleted: a
     * writer's files are unreferenced until its commit lands, so this must
     * exceed the longest write-to-commit time (Iceberg uses 3 days; floe's
     * table.orphan.min.age defaults to 1 hour).  0 is only safe while no
     * other writer can be between writing and committing. */
    int64_t min_age_ms;
    /* Files never deleted whatever their age (borrowed): those of a commit
     * whose outcome is unknown, and those of writes still in progress. */
    const char *const *in_doubt;
    size_t nin_doubt;
    bool dry_run;   /* find and list the orphans, delete nothing */
    int64_t now_ms; /* 0: the wall clock */
} floe_ice_orphan_opts_t;

typedef struct floe_ice_orphan_result {
    size_t files_listed;    /* files found under data/ and metadata/ */
    size_t files_reachable; /* of those, referenced by the table */
    size_t orphans;         /* unreferenced, old enough, not in doubt: deleted (or listed) */
    size_t files_deleted;
    int64_t bytes_deleted;
    size_t too_young;     /* unreferenced but newer than min_age_ms (or of unknown age) */
    size_t in_doubt_kept; /* unreferenced but listed in doubt */
    size_t failed;        /* deletes that failed, paths too long to build */
    char **paths;         /* the orphans (owned; floe_ice_orphan_result_clear) */
    size_t npaths;
} floe_ice_orphan_result_t;

/* Delete the files under table ns.name's location that nothing reaches:
 * in data/ (recursively) every unreferenced file, temp files of
 * interrupted writes included; in metadata/ unreferenced manifests,
 * manifest lists, metadata JSON files and temp files (never
 * version-hint.text, nor a vN.metadata.json at or after the current
 * version: a concurrent commit may just have published it).  The table
 * is listed first, then loaded, so a commit landing meanwhile is seen.
 * A path that cannot be built without truncation is never deleted (it
 * counts as failed).  *res is filled (caller clears it with
 * floe_ice_orphan_result_clear, also after a failure).  -1 with *err when
 * the listing or the table cannot be read (then nothing is deleted);
 * failed deletes only count in res->failed. */
int floe_ice_remove_orphans(floe_ice_catalog_t *cat, const char *ns, const char *name,
                            const floe_ice_orphan_opts_t *opts, floe_ice_orphan_result_t *res,
                            floe_err_t *err);
void floe_ice_orphan_result_clear(floe_ice_orphan_result_t *res);

/* ---- progress along an ancestry ---- */

/* The newest snapshot in the ancestry of snapshot `from` (itself first;
 * -1: main's head) whose summary has key, or NULL (borrowed from md).
 * Snapshots written by other writers (a compaction's "replace") may lack
 * the key; walking back finds the last one that recorded it.  The walk
 * stops at a parent that is no longer in the metadata (expired). */
const floe_ice_snapshot_t *floe_ice_ancestor_with_summary(const floe_ice_metadata_t *md,
                                                          int64_t from, const char *key);

/* ---- compaction planning ---- */

typedef struct floe_ice_compaction_opts {
    int64_t target_file_bytes; /* the size of the files to make (> 0) */
    int64_t small_file_bytes;  /* files this big or bigger stay; 0: 3/4 of the target */
    size_t min_input_files;    /* a group rewrites at least this many files (0: 5; at least 2) */
    int64_t max_bytes;         /* budget of one run: input bytes planned at most (0: none;
                                * the first group is planned whatever its size) */
    /* Also plan data files that delete files apply to: rewriting them must
     * apply the deletes (floe_ice_rewriter_add_deleting) and the commit
     * gives the new files the plan's sequence number; off, they are left
     * out. */
    bool with_deletes;
    /* With deletes: a data file whose deletes remove at least this percent
     * of its rows is planned whatever its size, alone if need be (0: off).
     * Rows named by position deletes are counted; an equality delete
     * file's rows are spread over the files it applies to by their rows. */
    int64_t delete_percent;
    /* With deletes: a partition with at least this many delete files has
     * every data file they remove rows of planned (0: off). */
    size_t delete_files;
    /* Size tiers (0: off).  A small file waits outside a run while it is
     * larger than tier_ratio times the small files of its group that came
     * after it: a slowly growing table's compacted file is rewritten once
     * the new data reaches 1/tier_ratio of it, not at every run (each byte
     * is rewritten about tier_ratio + 1 times on its way to the target
     * size, not once per run); the newer files compact among themselves
     * meanwhile. */
    int64_t tier_ratio;
} floe_ice_compaction_opts_t;

/* One rewrite: files of one partition spec and one partition tuple, to be
 * replaced (FLOE_ICE_OP_REWRITE) by files near the target size. */
typedef struct floe_ice_compaction_group {
    int32_t spec_id;
    const floe_ice_value_t *partition; /* the tuple (borrowed from the plan) */
    size_t npartition;
    const floe_ice_scan_task_t *const *tasks; /* the files, oldest first (borrowed) */
    size_t ntasks;
    int64_t bytes;        /* their total size */
    int64_t records;      /* their total record count (before deletes) */
    size_t ndeletes;      /* delete files applying to them (only with with_deletes) */
    int64_t deleted_rows; /* of records, deleted (equality deletes: an estimate) */
    bool forced;          /* planned for its deletes (planned first) */
} floe_ice_compaction_group_t;

typedef struct floe_ice_compaction_plan floe_ice_compaction_plan_t;

/* Plan the compaction of snapshot_id of md (-1: the current snapshot; md
 * and opts borrowed for the call): the live data files smaller than
 * small_file_bytes, and those the deletes force (delete_percent,
 * delete_files), grouped by (spec id, partition tuple), each group cut
 * in time order (data sequence number) into runs whose sizes add up to at
 * most target_file_bytes; runs of at least min_input_files files, or with
 * a forced file, become groups, forced ones first, then those with the
 * most files, within max_bytes.  A partial last run waits for more files.
 * Commit the groups with
 * floe_ice_commit_set_base(c, floe_ice_compaction_plan_snapshot(plan)),
 * and with deletes floe_ice_commit_set_data_sequence(c,
 * floe_ice_compaction_plan_sequence(plan)) and the removal of the
 * plan's drops.  Position delete files are read through io.
 * Caller frees *out with floe_ice_compaction_plan_free. */
int floe_ice_compaction_plan(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t snapshot_id,
                             const floe_ice_compaction_opts_t *opts,
                             floe_ice_compaction_plan_t **out, floe_err_t *err);
/* The snapshot planned on (-1: the table had none). */
int64_t floe_ice_compaction_plan_snapshot(const floe_ice_compaction_plan_t *p);
size_t floe_ice_compaction_plan_ngroups(const floe_ice_compaction_plan_t *p);
/* Borrowed; valid until floe_ice_compaction_plan_free. */
const floe_ice_compaction_group_t *
floe_ice_compaction_plan_group(const floe_ice_compaction_plan_t *p, size_t i);
/* The sequence number of the snapshot planned on (0: none). */
int64_t floe_ice_compaction_plan_sequence(const floe_ice_compaction_plan_t *p);
/* With deletes and groups: the live delete files that no data file left
 * outside the groups needs once the groups are rewritten with their
 * deletes applied (none applies to the rewritten files, which take the
 * plan's sequence number): the commit removes them.  Borrowed. */
size_t floe_ice_compaction_plan_ndrops(const floe_ice_compaction_plan_t *p);
const floe_ice_manifest_entry_t *floe_ice_compaction_plan_drop(const floe_ice_compaction_plan_t *p,
                                                               size_t i);
/* The candidate files found (small or forced; in groups or not). */
size_t floe_ice_compaction_plan_small_files(const floe_ice_compaction_plan_t *p);
void floe_ice_compaction_plan_free(floe_ice_compaction_plan_t *p);

#endif
