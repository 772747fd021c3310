/* The maintenance thread of the table engine: what keeps the tables of
 * table topics bounded while they run (design.md, invariant 9).
 *
 * Every table the engine writes (a topic's main table and its dead-letter
 * table) is attached here with its table.* settings.  A background thread
 * at low priority (nice 10, lowest best-effort I/O priority) runs per
 * table and on a schedule:
 *   - compaction every table.compaction.interval.ms when the table
 *     committed since (maint_ops.h; budget table.compaction.max.bytes.per.run);
 *   - snapshot expiry every table.expire.interval.ms (every tenth tick
 *     when nothing committed since);
 *   - orphan removal every table.orphan.min.age (files that young stay,
 *     and never younger than two commit intervals: the engine's files
 *     awaiting their commit), never touching files in doubt;
 *   - the figures of the status and metrics after each of those;
 *   - widenings asked for by the engine (table/widen.c): rounds of
 *     rewrites, then a "fence" the engine acknowledges (it holds its
 *     commits of the table), the last round and one replace snapshot;
 *   - operator requests (compact, expire, remove-orphans).
 * A low-priority thread starves while the CPU is busy, and a table that
 * commits every 100 ms then grows; so a second, catch-up thread keeps
 * normal priority and takes only what is late: scheduled work overdue by
 * twice its interval (at least 5 s), a widening step or a request waiting
 * 5 s.  The two never work on the same table at once.  A table committing
 * every 100 ms can win every race against a slower rewrite's commit: after
 * two lost races the commit asks the engine to hold its commits of that
 * table until it lands (floe_tmaint_fence_poll).
 * It never shares a loaded table with the engine: each operation loads
 * the table itself and commits optimistically; the engine's commits retry
 * over its snapshots (they keep the engine's offsets, maint_ops.h).
 *
 * Threads: the engine thread attaches, configures and detaches tables and
 * polls widenings; any thread may ask for an operation (blocking) or the
 * status; the two maintenance threads do the work.  Shared state sits behind
 * one mutex, held only for bookkeeping, never across storage I/O.  When
 * the thread is not started (tests, one-shot runs), operations run in the
 * caller's thread and widenings advance through floe_tmaint_widen_step. */
#ifndef FLOE_TABLE_MAINT_H
#define FLOE_TABLE_MAINT_H

#include "table/config.h"
#include "table/maint_ops.h"
#include "util/buf.h"

typedef struct floe_tmaint floe_tmaint_t;
typedef struct floe_tmaint_table floe_tmaint_table_t;

/* A maintenance service over catalog cat (borrowed; it must outlive the
 * service).  Caller frees with floe_tmaint_free.  NULL with *err. */
floe_tmaint_t *floe_tmaint_new(floe_ice_catalog_t *cat, floe_err_t *err);
/* Run the threads.  0, or -1 with *err. */
int floe_tmaint_start(floe_tmaint_t *m, floe_err_t *err);
/* Stop the threads: the operations under way are cancelled between files
 * (its uncommitted outputs removed), requests still queued fail with
 * FLOE_ECLOSED.  Idempotent. */
void floe_tmaint_stop(floe_tmaint_t *m);
/* Stop and free; every table must be detached. */
void floe_tmaint_free(floe_tmaint_t *m);

/* ---- tables (engine thread) ---- */

/* Attach output table ns.name of topic (strings copied) with the settings
 * of cfg (copied; see floe_tmaint_configure); main: the topic's main
 * table (where widenings happen), else its dead-letter table.  The first
 * compaction, expiry and orphan removal come one interval from now.
 * Returns the handle (valid until floe_tmaint_detach), NULL with *err. */
floe_tmaint_table_t *floe_tmaint_attach(floe_tmaint_t *m, const char *ns, const char *name,
                                        const char *topic, bool main,
                                        const floe_table_config_t *cfg, floe_err_t *err);
/* Detach: an operation of the thread on the table is cancelled and waited
 * for (a widening's uncommitted rewrites removed).  NULL is a no-op. */
void floe_tmaint_detach(floe_tmaint_table_t *h);
/* Take the table's live table.* settings (copied). */
void floe_tmaint_configure(floe_tmaint_table_t *h, const floe_table_config_t *cfg);
/* The engine committed a snapshot to the table (it has new files). */
void floe_tmaint_note_commit(floe_tmaint_table_t *h);

/* Files that a commit of unknown outcome may reference: never deleted by
 * orphan removal while this service lives (path copied).  Kept by table
 * name (ns.name), whether or not the table is attached. */
void floe_tmaint_in_doubt_add(floe_tmaint_t *m, const char *ns, const char *name, const char *path);
/* The files in doubt of table ns.name: a malloc'd array of malloc'd
 * strings (caller frees each and the array), *n of them.  -1 with *err
 * when out of memory, also when a file could not be noted earlier (then
 * no orphan removal may run). */
int floe_tmaint_in_doubt(floe_tmaint_t *m, const char *ns, const char *name, char ***paths,
                         size_t *n, floe_err_t *err);

/* Whether the engine must hold its commits of h's table now: a
 * maintenance commit (compaction, expiry) that lost two races to the
 * engine's commits asks for it, and this acknowledges the ask; it ends
 * once that commit is over.  Engine thread, once per round between its
 * commits; an atomic load when nothing is asked.  NULL: false. */
bool floe_tmaint_fence_poll(floe_tmaint_table_t *h);

/* ---- widenings (engine thread; see table/widen.c) ---- */

typedef enum floe_tmaint_widen_state {
    FLOE_TMW_NONE = 0, /* no widening asked for, or the last one done */
    FLOE_TMW_RUNNING,  /* rewriting while the engine commits */
    FLOE_TMW_FENCE,    /* asks the engine to hold its commits of the table */
    FLOE_TMW_FENCED,   /* the engine holds them: last round and commit */
    FLOE_TMW_SWITCHED, /* the widened schema is in the table: the engine applies it */
    FLOE_TMW_FAILED,   /* the job failed (reason in the status); tried again later */
} floe_tmaint_widen_state_t;

/* Ask for the long fields pairs[i].from of the main table to become
 * double fields pairs[i].to (ids the engine reserved; copied).  Fields
 * already asked for are ignored; others join the next job if one runs. */
int floe_tmaint_widen_ask(floe_tmaint_table_t *h, const floe_twiden_t *pairs, size_t n,
                          floe_err_t *err);
/* The state of the table's widening.  With FLOE_TMW_SWITCHED, *pairs and
 * *n (may be NULL) get the pairs now in the table (borrowed until
 * floe_tmaint_widen_applied). */
floe_tmaint_widen_state_t floe_tmaint_widen_poll(floe_tmaint_table_t *h,
                                                 const floe_twiden_t **pairs, size_t *n);
/* The engine holds its commits of the table (after FLOE_TMW_FENCE), until
 * the state is SWITCHED, FAILED or NONE. */
void floe_tmaint_widen_fenced(floe_tmaint_table_t *h);
/* The engine took the switched schema: the job is over. */
void floe_tmaint_widen_applied(floe_tmaint_table_t *h);
/* Without the thread: advance the table's widening as far as it goes
 * without the engine (rounds; with the fence acknowledged, the commit).
 * Returns the state reached. */
floe_tmaint_widen_state_t floe_tmaint_widen_step(floe_tmaint_table_t *h);

/* ---- operator requests (any thread) ---- */

typedef enum floe_tmaint_op {
    FLOE_TMAINT_COMPACT = 1,
    FLOE_TMAINT_EXPIRE,
    FLOE_TMAINT_ORPHANS,
} floe_tmaint_op_t;

typedef struct floe_tmaint_req {
    floe_tmaint_op_t op;
    int64_t older_than_ms;            /* EXPIRE, ORPHANS: an age; -1: the table's setting */
    int keep;                         /* EXPIRE: snapshots kept; 0: the table property */
    bool dry_run;                     /* ORPHANS */
    floe_tmaint_progress_fn progress; /* may be NULL; called in the working thread */
    void *progress_ctx;
} floe_tmaint_req_t;

/* Run req on table `name` ("ns.table", a table topic's name, or a bare
 * table name in namespace default; any table of the catalog) on the
 * maintenance thread (in the caller's thread when it does not run), after
 * the operation under way; blocks until done.  The outcome as JSON
 * ({"table", "op", ...figures; a compaction's "progress" lines too}) is
 * appended to out.  0, or -1 with *err:
 * FLOE_ENOENT for an unknown table, FLOE_ECLOSED while stopping. */
int floe_tmaint_run(floe_tmaint_t *m, const char *name, const floe_tmaint_req_t *req,
                    floe_buf_t *out, floe_err_t *err);

/* ---- status (any thread) ---- */

/* `,"KEY":{...}` for the status JSON of the table of h: figures
 * (data files, average size, metadata bytes, snapshots, manifests),
 * counters (compactions, expiries, orphans), the operation under way with
 * its progress, a widening's state.  Appended to js. */
int floe_tmaint_status_json(floe_tmaint_table_t *h, const char *key, floe_buf_t *js);
/* The same for table `name` (as floe_tmaint_run names it) as a JSON
 * object; FLOE_ENOENT when no attached table has that name. */
int floe_tmaint_table_json(floe_tmaint_t *m, const char *name, floe_buf_t *out, floe_err_t *err);
/* Prometheus families of every attached table (floe_table_data_files,
 * ..._maintenance_*), appended to out. */
int floe_tmaint_metrics(floe_tmaint_t *m, floe_buf_t *out);

#endif
