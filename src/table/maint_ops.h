/* Maintenance of one table, operation by operation: compaction, snapshot
 * expiry, orphan removal and the figures that show a table stays bounded.
 * The maintenance thread (maint.h) runs them on a schedule for the tables
 * of running table topics; `floe table compact | expire | remove-orphans`
 * runs them on a data dir when no server runs.  They keep floe's own rules
 * on top of iceberg/maintain.h:
 *   - a rewrite snapshot (compaction) carries floe.offsets, floe.commit-id
 *     and floe.topic copied from its parent at each attempt, so the latest
 *     snapshot always tells the engine's progress and whether its commit
 *     landed;
 *   - expiry keeps the newest snapshot with floe.offsets and those after
 *     it, and waits while a re-drive is unfinished (the DLQ table still
 *     holds rows the main table got: its snapshot tells which).
 *
 * No threads here: every function works in the caller's thread; several
 * may run at once on different tables.  The catalog is borrowed. */
#ifndef FLOE_TABLE_MAINT_OPS_H
#define FLOE_TABLE_MAINT_OPS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "format/parquet.h"
#include "iceberg/catalog.h"
#include "iceberg/maintain.h"
#include "iceberg/snapshot.h"
#include "table/schema_map.h"

/* A line of progress for an operator ("group 3 of 10: ..."), borrowed for
 * the call. */
typedef void (*floe_tmaint_progress_fn)(void *ctx, const char *line);

/* ---- compaction ---- */

typedef struct floe_tmaint_compact_opts {
    int64_t target_file_bytes;        /* files to make (> 0): table.target.file.size */
    size_t min_input_files;           /* table.compaction.min.input.files (at least 2) */
    int64_t max_bytes;                /* input bytes of one run at most; 0: no limit */
    int64_t tier_ratio;               /* floe_ice_compaction_opts_t's; 0: every small file goes */
    int64_t delete_percent;           /* table.compaction.delete.percent (0: off) */
    size_t delete_files;              /* table.compaction.delete.files (0: off) */
    floe_pq_scratch_t *scratch;       /* Parquet temporaries (borrowed); NULL: own */
    const atomic_bool *cancel;        /* set: stop between files (outputs removed) */
    floe_tmaint_progress_fn progress; /* may be NULL */
    void *progress_ctx;
    /* before each commit attempt (1, 2, ...; may be NULL): see
     * floe_tmaint_keep_t.contended */
    void (*contended)(void *ctx, int attempt);
    void *contended_ctx;
} floe_tmaint_compact_opts_t;

typedef struct floe_tmaint_compact_result {
    size_t small_files; /* small live files the plan saw */
    size_t groups, files_in, files_out;
    int64_t bytes_in, bytes_out, records;
    int64_t rows_deleted;        /* of records, removed by the deletes applied */
    size_t delete_files_removed; /* delete files no live data file needed any more */
    int64_t snapshot_id;         /* of the replace snapshot; -1: none made */
    int64_t duration_ms;
    /* outputs of a commit whose outcome is unknown: never delete them
     * while this process runs (owned; floe_tmaint_compact_result_clear) */
    char **in_doubt;
    size_t nin_doubt;
} floe_tmaint_compact_result_t;

/* Compact table ns.name: plan its small live data files and those that
 * deletes thinned (floe_ice_compaction_plan), rewrite each group into
 * files near the target size in the table's current schema
 * (iceberg/rewrite.h: rows, `_kafka` columns, field ids and partition
 * values kept; the rows the delete files delete left out; record counts
 * checked), and commit every group of the run in one "replace" snapshot
 * based on the planned one, with the planned sequence number, removing
 * the delete files no data file needs any more: appends landing meanwhile
 * never conflict, nor deletes that do not apply to a file it replaces.
 * *res is filled (clear it also after a failure).  0 (also when there was
 * nothing to compact), or -1 with *err: the outputs are removed, except
 * after FLOE_EUNKNOWN (listed in res->in_doubt); FLOE_ECONFLICT when a
 * planned file left the table meanwhile (plan again later). */
int floe_tmaint_compact(floe_ice_catalog_t *cat, const char *ns, const char *name,
                        const floe_tmaint_compact_opts_t *opts, floe_tmaint_compact_result_t *res,
                        floe_err_t *err);
void floe_tmaint_compact_result_clear(floe_tmaint_compact_result_t *res);

/* The commit options of every rewrite of a table topic's table (compaction
 * and widening): set c's validate callback so that each attempt copies
 * floe.offsets, floe.commit-id and floe.topic from the newest snapshot of
 * the head's ancestry carrying them.  ctx must stay valid until the commit
 * is freed; c is borrowed. */
typedef struct floe_tmaint_keep {
    floe_ice_commit_t *c;
    /* called after the copy, may be NULL: the caller's own checks */
    int (*then)(void *ctx, const floe_ice_table_t *current, floe_err_t *err);
    void *then_ctx;
    /* called first at each attempt with its number (may be NULL): a rewrite
     * that keeps losing the race to a writer committing every 100 ms can
     * ask that writer to hold off (maint.h, the fence) */
    void (*contended)(void *ctx, int attempt);
    void *contended_ctx;
    int attempt;
} floe_tmaint_keep_t;
void floe_tmaint_keep_progress(floe_ice_commit_t *c, floe_tmaint_keep_t *ctx);

/* ---- expiry ---- */

typedef struct floe_tmaint_expire_opts {
    int64_t older_than_ms; /* wall time; 0: the table's history.expire.max-snapshot-age-ms */
    int keep_last;         /* 0: the table's history.expire.min-snapshots-to-keep */
    void (*contended)(void *ctx, int attempt); /* as floe_tmaint_keep_t's; may be NULL */
    void *contended_ctx;
} floe_tmaint_expire_opts_t;

typedef struct floe_tmaint_expire_result {
    size_t snapshots_removed, files_deleted;
    int64_t bytes_deleted;
    size_t delete_failures;
    bool waited; /* skipped: a re-drive of the table is unfinished */
} floe_tmaint_expire_result_t;

/* Expire snapshots of ns.name (floe_ice_expire_snapshots, files deleted),
 * keeping where floe finds its offsets.  Skipped (res->waited) while the
 * table's snapshots name a re-drive its dead-letter table <name>_dlq does
 * not (that re-drive's finish reads the rows it added).  0, or -1 with
 * *err. */
int floe_tmaint_expire(floe_ice_catalog_t *cat, const char *ns, const char *name,
                       const floe_tmaint_expire_opts_t *opts, floe_tmaint_expire_result_t *res,
                       floe_err_t *err);

/* ---- orphans ---- */

/* floe_ice_remove_orphans with floe's words for the caller's log: *res
 * filled (clear with floe_ice_orphan_result_clear).  0, or -1 with *err. */
int floe_tmaint_remove_orphans(floe_ice_catalog_t *cat, const char *ns, const char *name,
                               const floe_ice_orphan_opts_t *opts, floe_ice_orphan_result_t *res,
                               floe_err_t *err);

/* ---- widening ---- */

/* The rewrite of a widening (table/widen.c tells the whole story): the
 * live data files of ns.name holding a long field pairs[i].from are
 * rewritten with its values as doubles under field pairs[i].to (a new id
 * the engine reserved), in rounds while other writers keep appending;
 * the last round and the commit happen while nobody else commits data
 * (the engine holds its commits: the "fence"), so one snapshot replaces
 * every such file and makes the double fields the schema: readers see
 * the old table or the new one, never an old value as null. */
typedef struct floe_tmaint_widen floe_tmaint_widen_t;

/* A widening of ns.name (strings and pairs copied; cat borrowed, it must
 * outlive the job; scratch borrowed, may be NULL).  Caller frees with
 * floe_tmaint_widen_free.  NULL with *err. */
floe_tmaint_widen_t *floe_tmaint_widen_new(floe_ice_catalog_t *cat, const char *ns,
                                           const char *name, const floe_twiden_t *pairs,
                                           size_t npairs, floe_pq_scratch_t *scratch,
                                           floe_err_t *err);
/* One round: rewrite the live files of the current snapshot that may hold
 * a widened field and that no earlier round rewrote.  *files and *bytes
 * (input) get this round's figures.  Stops between files when *cancel
 * (may be NULL) is set (FLOE_ECLOSED).  0, or -1 with *err (this round's
 * unfinished output removed; earlier ones kept for the next try). */
int floe_tmaint_widen_round(floe_tmaint_widen_t *w, const atomic_bool *cancel, size_t *files,
                            int64_t *bytes, floe_err_t *err);
/* With the fence up: a last round, then the commit of every rewrite, the
 * removal of the files they replace and the widened schema (the table's
 * current schema with the pairs applied at each attempt), as one replace
 * snapshot carrying the engine's progress (floe_tmaint_keep_progress).
 * 0 with *snapshot_id; -1 with *err: FLOE_ECONFLICT when data files were
 * added since the last round or a rewritten file left the table (round
 * and commit again); FLOE_EUNKNOWN: the outputs may be in the table (keep
 * them; floe_tmaint_widen_landed tells). */
int floe_tmaint_widen_commit(floe_tmaint_widen_t *w, const atomic_bool *cancel,
                             int64_t *snapshot_id, floe_err_t *err);
/* Whether the table's current schema holds every pairs[i].to (the
 * widening is in the table).  1, 0, or -1 with *err. */
int floe_tmaint_widen_landed(floe_tmaint_widen_t *w, floe_err_t *err);
/* Files rewritten so far (input files) and their bytes. */
size_t floe_tmaint_widen_done(const floe_tmaint_widen_t *w, int64_t *bytes);
/* The outputs written so far (borrowed, valid until the next call on w). */
size_t floe_tmaint_widen_outputs(const floe_tmaint_widen_t *w, const char ***paths);
/* Whether data file f may hold a field w[i].from: its metrics say so, or
 * it has none (then only opening it tells).  Borrowed. */
bool floe_tmaint_may_hold(const floe_ice_data_file_t *f, const floe_twiden_t *w, size_t n);
/* The path of a maintenance output: "DIR/PREFIX-RUN-SEQ.parquet" (prefix
 * "c" for compaction, "w" for a widening; run a uuid naming one job), a
 * malloc'd string the caller frees; NULL with *err when too long or out
 * of memory. */
char *floe_tmaint_output_path(const char *dir, const char *prefix, const char *run, unsigned seq,
                              floe_err_t *err);
/* Free the job; its uncommitted outputs are removed unless keep_files
 * (after a commit that landed or whose outcome is unknown). */
void floe_tmaint_widen_free(floe_tmaint_widen_t *w, bool keep_files);

/* ---- figures ---- */

typedef struct floe_tmaint_stats {
    int64_t data_files;          /* live, in the current snapshot (-1: unknown) */
    int64_t data_bytes;          /* their total size (-1: unknown) */
    int64_t records;             /* -1: unknown */
    int64_t manifests;           /* in the current manifest list (-1: unknown) */
    int64_t snapshots;           /* kept in the metadata */
    int64_t metadata_json_bytes; /* the current vN.metadata.json */
    int64_t metadata_bytes;      /* every file in the metadata folder */
    int64_t metadata_files;
} floe_tmaint_stats_t;

/* The figures of ns.name from its current metadata, the current snapshot's
 * summary and a listing of its metadata folder (no manifest is read).
 * 0, or -1 with *err. */
int floe_tmaint_stats(floe_ice_catalog_t *cat, const char *ns, const char *name,
                      floe_tmaint_stats_t *st, floe_err_t *err);

#endif
