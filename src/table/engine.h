/* The table-topic engine: turns table topics into Iceberg tables.
 *
 * For every topic with table.enable=true, each partition's records are read
 * from the source (never from log internals), converted into a columnar
 * buffer (L1), written as Parquet row groups at table.flush.bytes (L2) into
 * files rolled at table.target.file.size (L3), and committed every
 * table.commit.interval.ms as one Iceberg snapshot per table whose summary
 * holds the next offset of every partition (floe.offsets).  On start the
 * table's summary is the truth: a record is in the table once, or not yet;
 * files written but never committed are deleted.  Records that do not
 * convert go to the dead-letter table <name>_dlq (or are dropped, or pause
 * the table, per table.invalid.record.action).
 *
 * The engine runs in its own thread: a slow object store delays freshness,
 * never the producers.  It reads the partitions the source says have news
 * (source.h) and sleeps while nothing arrives and no commit is due, so an
 * idle engine costs nothing however many partitions it holds. */
#ifndef FLOE_TABLE_ENGINE_H
#define FLOE_TABLE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "iceberg/catalog.h"
#include "table/config.h"
#include "table/maint.h"
#include "table/source.h"

typedef struct floe_engine floe_engine_t;

typedef struct floe_engine_config {
    floe_ice_catalog_t *catalog;    /* borrowed; must outlive the engine */
    floe_config_get_fn get_default; /* server-wide table.* defaults; may be NULL */
    void *default_ctx;
    int64_t discover_ms; /* how often topics are listed; default 1000 */
    size_t read_bytes;   /* per partition per step; default 1 MiB */
    /* Other engines write the same tables, each the partitions its source
     * is assigned (floe sink workers of one consumer group): at open,
     * unreferenced files younger than table.orphan.min.age are kept (they
     * may be another worker's, not yet committed).  (Shared or not, an
     * engine commits only the offsets of the partitions it read, and a
     * commit fails when the table moved such a partition since:
     * commit.h.) */
    bool shared;
    /* writer schemas for table.*.converter=avro (a schema registry);
     * fn NULL: none, avro records go to the DLQ */
    floe_conv_schemas_t schemas;
    /* where upsert tables keep their key indexes (borrowed; must outlive
     * the engine); NULL: in memory only, rebuilt at every start */
    const char *state_dir;
} floe_engine_config_t;

/* src is borrowed and must outlive the engine.  Caller frees with
 * floe_engine_free.  NULL with *err on failure. */
floe_engine_t *floe_engine_new(const floe_engine_config_t *cfg, floe_tsource_t *src,
                               floe_err_t *err);
/* Run the engine in its own thread until floe_engine_stop. */
int floe_engine_start(floe_engine_t *e, floe_err_t *err);
/* Stop the thread after a last commit of what it holds.  Idempotent. */
void floe_engine_stop(floe_engine_t *e);
void floe_engine_free(floe_engine_t *e);

/* One synchronous round, for tests and one-shot sinks (not while the
 * thread runs): list topics, read every partition up to its end, commit
 * every table whose interval passed or that wrote table.commit.max.bytes
 * (all of them with force_commit).
 * Returns records converted, or -1 with *err when the source cannot list
 * its topics (the tables found earlier are read and committed all the
 * same).  A table's own failures pause that table and show in the
 * status, not here. */
int64_t floe_engine_run_once(floe_engine_t *e, bool force_commit, floe_err_t *err);

/* Re-drive table `name` ("ns.table", its topic, or the bare table name in
 * namespace default): move the dead-letter
 * rows that convert under the table's configuration now into the table,
 * exactly once, and take them out of the DLQ table.  Runs in the engine
 * thread between rounds (in the caller's thread when the engine does not
 * run); blocks until done.  The outcome as JSON ({"table", "redrive_id",
 * "examined", "moved", "still_invalid", "undecodable", "files_rewritten",
 * "finished_earlier"}) is appended to out.  0, or -1 with *err: FLOE_ENOENT
 * when no table topic has that name. */
int floe_engine_redrive(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err);

/* Maintenance asked for by an operator (`floe table compact | expire |
 * remove-orphans`, the admin API): req on table `name` (as
 * floe_tmaint_run names it) on the maintenance thread, after what it is
 * doing; blocks until done.  The outcome as JSON is appended to out.  0,
 * or -1 with *err (FLOE_ENOENT: no such table). */
int floe_engine_maintain(floe_engine_t *e, const char *name, const floe_tmaint_req_t *req,
                         floe_buf_t *out, floe_err_t *err);
/* The maintenance state of table `name` (its figures, counters, the
 * operation under way and its progress) as a JSON object appended to out;
 * FLOE_ENOENT when no table topic writes it.  Any thread. */
int floe_engine_maintenance_json(floe_engine_t *e, const char *name, floe_buf_t *out,
                                 floe_err_t *err);
/* Pause table `name` (named as for floe_engine_redrive) on purpose: it
 * reads nothing until floe_engine_resume (a configuration change does not
 * lift it; a restart of the engine does), while what it buffered still
 * commits.  Any other pause it had is replaced (a resume finds the cause
 * again if it persists).  The table's state ({"table", "state", "reason",
 * "pause_kind", "paused_since_ms"}) is appended to out.  Runs like a
 * re-drive; 0, or -1 with *err (FLOE_ENOENT: no such table). */
int floe_engine_pause(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err);
/* Resume table `name` whatever paused it: its configuration is looked at
 * again and every partition reads once before the answer, so the state
 * appended to out (as for pause) shows a cause that persists (paused
 * again).  0, or -1 with *err (FLOE_ENOENT: no such table). */
int floe_engine_resume(floe_engine_t *e, const char *name, floe_buf_t *out, floe_err_t *err);

/* The source's assignment changed (floe sink: a consumer group
 * rebalance): commit every table now, then reload each and read every
 * partition again from its table's offsets, which the source hears
 * through committed() before this returns.  A consumer source calls it
 * in its rebalance: before it gives partitions up (what was read of them
 * is committed, nothing more will be) and after it takes new ones (they
 * start where the table says, whoever wrote it).  Runs in the engine
 * thread between rounds (in the caller's when the thread does not run);
 * blocks until done.  0, or -1 with *err (FLOE_ECLOSED: the engine is
 * stopping). */
int floe_engine_resync(floe_engine_t *e, floe_err_t *err);

/* The engine's state as JSON (tables, partitions, committed and read
 * offsets, log ends, files, state and reason), appended to out; and the
 * same as Prometheus text.  Thread-safe: built when asked, by the engine
 * thread between two partition steps (the one last built when the engine
 * is busy for more than 2 s, in a long commit), or by the caller when the
 * thread does not run (then not while another thread calls run_once). */
int floe_engine_status_json(floe_engine_t *e, floe_buf_t *out);
int floe_engine_metrics(floe_engine_t *e, floe_buf_t *out);

#endif
