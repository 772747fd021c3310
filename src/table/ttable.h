/* One table topic inside the engine: the data every layer of src/table
 * works on.  The layers, each calling only the ones below it:
 *
 *   engine.c, engine_status.c  thread, discovery, rounds; status JSON and
 *                              metrics (engine_int.h)
 *   redrive.c                  dead-letter rows back into the table
 *   commit.c                   open, commit, reset a table (commit.h)
 *     widen.c                  widening a committed long (widen.h)
 *     maint.c, maint_ops.c,    the maintenance thread and what it does to
 *     maint_widen.c            one table (maint.h, maint_ops.h); it knows
 *                              nothing of the layers above or below
 *   pipeline.c                 one Kafka partition: fetch, convert, route
 *                              bad records (pipeline.h)
 *   sink.c, dlq.c              rows into files (sink.h); the dead-letter
 *                              layout (dlq.h)
 *   tout.c                     an output table's state (tout.h)
 *
 * This header holds only data and the pause state; the functions are in
 * the layers' headers.  The engine thread owns every table; the
 * maintenance thread works on the same Iceberg tables through its own
 * loads and commits, never through this struct. */
#ifndef FLOE_TABLE_TTABLE_H
#define FLOE_TABLE_TTABLE_H

#include "iceberg/catalog.h"
#include "table/config.h"
#include "table/sink.h"
#include "table/source.h"
#include "table/tout.h"

/* Why a table stopped; FLOE_TPAUSE_NONE while it runs. */
typedef enum floe_tpause {
    FLOE_TPAUSE_NONE = 0,
    FLOE_TPAUSE_CONFIG,     /* its table.* configs do not load; lifts when they do */
    FLOE_TPAUSE_INVALID,    /* a record did not convert under invalid.record.action=pause */
    FLOE_TPAUSE_DLQ,        /* a dead-letter row could not be written (out of memory) */
    FLOE_TPAUSE_UNREADABLE, /* stored bytes that can be neither read nor skipped */
    FLOE_TPAUSE_FAILED,     /* reading, converting or writing failed (storage, memory) */
    FLOE_TPAUSE_OPERATOR,   /* paused on purpose (`floe table pause`): only a resume
                             * lifts it, never a configuration change */
} floe_tpause_t;

/* The kind's name in the status and metrics ("" for FLOE_TPAUSE_NONE). */
const char *floe_tpause_name(floe_tpause_t why);

typedef struct floe_tpart floe_tpart_t;               /* pipeline.h */
typedef struct floe_tmaint floe_tmaint_t;             /* maint.h */
typedef struct floe_tmaint_table floe_tmaint_table_t; /* maint.h */
typedef struct floe_tkeyidx floe_tkeyidx_t;           /* keyidx.h */

typedef struct floe_ttable {
    char *topic;
    floe_table_config_t cfg;
    floe_ice_catalog_t *catalog; /* borrowed from the engine */
    floe_tsource_t *src;         /* borrowed from the engine */
    floe_conv_schemas_t schemas; /* the engine's, for avro converters */
    size_t read_bytes;           /* per partition per step */
    floe_tsink_env_t files;      /* what the sinks share (cfg, writer_id) */
    floe_tout_t main, dlq;
    floe_tpart_t **parts;
    int32_t nparts;
    int64_t next_commit_ms;
    floe_tpause_t paused;
    char reason[640];        /* why, while paused */
    int64_t paused_since_ms; /* wall clock, while paused */
    /* the pause a retry lifted (floe_ttable_retry): the same again is no news */
    floe_tpause_t retried;
    char retried_reason[640];
    int64_t retried_since_ms;
    bool seen; /* still listed at the last discovery */
    /* the engine's scheduling (engine.c): listed as having something to
     * commit; the commit under way is for table.commit.max.bytes */
    bool dirty, commit_now;
    uint64_t open_bytes; /* what the partitions' open files hold (their open_bytes) */
    char writer_id[37];
    /* other writers commit to the same table, each its own partitions
     * (floe sink workers): files of theirs may lie uncommitted */
    bool shared;
    /* the maintenance service (borrowed from the engine; NULL: none) and
     * its handles of main and dlq (NULL until the tables are open) */
    floe_tmaint_t *maint;
    floe_tmaint_table_t *maint_main, *maint_dlq;
    /* widenings (widen.c): committed long fields asked to become doubles
     * (from -> reserved id), fields refused (their fractions are dead
     * letters), and the fence: commits held while the rewrite commits */
    floe_twiden_t *wide;
    size_t nwide;
    int32_t *nowiden;
    size_t nnowiden;
    bool fenced;
    bool maint_fenced; /* a maintenance commit holds our commits (maint.h) */
    /* upsert tables in position mode: the key index (keyidx.h; NULL until
     * needed or after a failure) and the folder it is saved in (borrowed
     * from the engine; NULL: kept in memory only) */
    floe_tkeyidx_t *keyidx;
    /* and the partition of each data file the index may name (upsert.h;
     * NULL until a partitioned table needs it) */
    struct floe_tupsert_parts *upparts;
    const char *state_dir;
    uint64_t index_rebuilds;
    /* counters (files and bytes written are in files) */
    uint64_t commits, commit_failures, size_commits, pauses;
    int64_t last_commit_ms, last_commit_latency_ms;
} floe_ttable_t;

/* Stop the table for `why` (not FLOE_TPAUSE_NONE), the reason printf-style;
 * logged as an error (a warning for FLOE_TPAUSE_INVALID and _OPERATOR).
 * A table paused already keeps its first reason.  The same pause again
 * right after a retry keeps the time it first paused and is not logged
 * again. */
void floe_ttable_pause(floe_ttable_t *t, floe_tpause_t why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Run the table again: the cause is gone, or an operator said so. */
void floe_ttable_resume(floe_ttable_t *t);
/* Bytes of data files the table wrote since its last commit: the closed
 * ones awaiting it (both outputs) and what the open ones hold. */
uint64_t floe_ttable_uncommitted_bytes(const floe_ttable_t *t);

/* Run the table again to see whether its cause is gone (its configuration
 * changed): pausing again on the same cause is not news (see pause). */
void floe_ttable_retry(floe_ttable_t *t);

#endif
