/* A table-engine source over a Kafka consumer group (librdkafka's
 * high-level consumer): `floe sink` reads an existing Kafka cluster with
 * it (design.md, invariant 6).  Workers sharing a group.id share the
 * partitions; each feeds its engine the partitions it is assigned.
 *
 * Exactly once: the table, not the group, says where a partition
 * resumes.  In a rebalance the consumer asks the engine to resync
 * (floe_engine_resync, set with floe_ksource_set_resync): before giving
 * partitions up, so that what was read of them is committed, and after
 * taking new ones, so that the engine reads them from the table's offsets,
 * which it reports through committed(); the consumer then assigns them at
 * those offsets.  Group offsets are committed after each table commit,
 * for lag tools only.  A partition that is not assigned does not exist
 * for the engine (fetch: FLOE_ENOENT); a worker that lost a partition
 * without hearing of it (a pause past its session timeout) finds its next
 * commit refused (commit.h).
 *
 * A poll thread consumes into a bounded buffer per partition (the
 * partition pauses in librdkafka when its buffer is full), tells the
 * engine which partitions got messages (watch, changed) and lists the
 * topics from the cluster's metadata every few seconds.  Messages are
 * handed out as librdkafka holds them (no copy); transaction markers and,
 * with isolation.level=read_committed (the default), aborted records never
 * arrive: the offsets they leave out are simply skipped. */
#ifndef FLOE_TABLE_SOURCE_KAFKA_H
#define FLOE_TABLE_SOURCE_KAFKA_H

#include <stddef.h>
#include <stdint.h>

#include "table/source.h"

typedef struct floe_ksource floe_ksource_t;

/* Topics that become tables: one topic by name, or every topic whose
 * whole name matches a POSIX extended regular expression, with the
 * table.* configs of their tables (table.enable=true is implied). */
typedef struct floe_ksource_table {
    const char *topic; /* or NULL */
    const char *regex; /* or NULL */
    size_t nconfigs;
    const char *const *keys, *const *values;
} floe_ksource_table_t;

typedef struct floe_ksource_config {
    /* librdkafka consumer properties, passed through; group.id is
     * required; enable.auto.commit is forced off; isolation.level
     * defaults to read_committed and auto.offset.reset to earliest */
    size_t nprops;
    const char *const *prop_keys, *const *prop_values;
    size_t ntables;
    const floe_ksource_table_t *tables;
    size_t buffer_bytes; /* per partition before it pauses; default 8 MiB */
    int64_t metadata_ms; /* how often topics are listed; default 5000 */
    int64_t connect_ms;  /* how long start waits for the cluster; default 15000 */
} floe_ksource_config_t;

/* A source with a consumer configured by cfg (everything copied).  NULL
 * with *err: a missing group.id, a bad property (librdkafka's message
 * names it), a bad regex. */
floe_ksource_t *floe_ksource_new(const floe_ksource_config_t *cfg, floe_err_t *err);

/* What the consumer calls in each rebalance, in its poll thread, with no
 * lock held: the engine's floe_engine_resync.  Set before start. */
typedef int (*floe_ksource_resync_fn)(void *arg, floe_err_t *err);
void floe_ksource_set_resync(floe_ksource_t *s, floe_ksource_resync_fn fn, void *arg);

/* Check that the cluster answers and that every topic named exists (a
 * regex may match none yet), subscribe and start the poll thread.  0, or
 * -1 with *err: FLOE_ETIMEOUT (the cluster did not answer within
 * connect_ms), FLOE_ENOENT (a topic named does not exist). */
int floe_ksource_start(floe_ksource_t *s, floe_err_t *err);

/* Leave the group: stop reading (fetch finds nothing more), revoke the
 * partitions (the resync commits what the engine read of them), commit
 * the group offsets and close the consumer.  Call while the engine still
 * runs, then stop it.  Idempotent. */
void floe_ksource_close(floe_ksource_t *s);
/* Close, then free. */
void floe_ksource_free(floe_ksource_t *s);

/* The engine-facing interface (borrowed from s). */
floe_tsource_t *floe_ksource_source(floe_ksource_t *s);

typedef struct floe_ksource_stats {
    uint64_t records, bytes; /* delivered by the consumer so far */
    uint64_t rebalances;     /* assignments taken */
    int32_t assigned;        /* partitions assigned now */
    int64_t lag;             /* records of those above the tables' offsets */
} floe_ksource_stats_t;

/* Counters and the lag now.  Any thread. */
void floe_ksource_stats(floe_ksource_t *s, floe_ksource_stats_t *out);

#endif
