/* The broker: the node's own state under its data dir, which the Kafka
 * API handlers (broker_module.c) serve and the table engine reads:
 *   - the topic registry (topics.h, topics.c): topics, their partitions'
 *     logs and their configs, one JSON file per topic;
 *   - producer-id blocks (producer_ids.c);
 *   - durability waits for acks=all and the flusher thread that fsyncs
 *     (durability.c), and the periodic flush.ms / retention tick.
 *
 * Layout under the data dir:
 *   log/<topic>-<partition>/           one floe_log_t per partition
 *                                      (floe_broker_partition_dir)
 *   meta/topics/<topic>.json           {"name","id","partitions","configs"}
 *   meta/producer-ids                  next unallocated producer-id block
 *
 * Threading: registry calls take an internal lock and may be made from any
 * thread; logs are thread-safe themselves.  Deleting a topic while another
 * thread uses one of its logs is the caller's problem (only the loop
 * thread deletes).  Durability callbacks run on the loop given to
 * floe_broker_attach_loop. */
#ifndef FLOE_KAFKA_BROKER_H
#define FLOE_KAFKA_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka/handler.h"
#include "kafka/topics.h"
#include "log/log.h"
#include "net/loop.h"
#include "util/err.h"

/* Checks a topic's configs as a whole, as they would be after a create or
 * an alter: keys[i] = values[i], n of them (borrowed for the call), the
 * topic's own set.  0, or -1 with *err naming the key and why; the broker
 * then refuses the request with INVALID_CONFIG and that message.  Called
 * with the topic registry locked: it must not call into the broker. */
typedef int (*floe_topic_configs_check_fn)(void *arg, const char *topic, const char *const *keys,
                                           const char *const *values, size_t n, floe_err_t *err);

/* What retention and DeleteRecords must keep of one partition: the
 * records a reader has not taken yet (a table topic's table, design.md
 * invariant 8). */
typedef struct floe_retention_floor {
    int64_t offset;         /* records at or above it stay; 0 keeps all */
    int64_t max_held_bytes; /* retention holds back at most this many bytes
                               for the floor, then deletes the oldest of
                               them anyway; -1 no limit (DeleteRecords
                               never passes the floor) */
} floe_retention_floor_t;

/* The floor of partition p of topic t: 1 with *out filled, 0 when the
 * partition has none (retention deletes as Kafka does).  Called on the
 * thread that runs floe_broker_tick and DeleteRecords (the loop), without
 * the registry lock: it may read t's configs (floe_topic_config). */
typedef int (*floe_retention_floor_fn)(void *arg, floe_topic_t *t, int32_t partition,
                                       floe_retention_floor_t *out);

typedef struct floe_broker_config {
    const char *data_dir;       /* required */
    bool auto_create_topics;    /* default true */
    int32_t default_partitions; /* default 1 */
    bool acks_all_fsync;        /* acks=all waits for fsync; default true */
    int64_t flush_interval_ms;  /* background flush check; default 1000 */
    int64_t retention_check_ms; /* how often retention runs, as Kafka's
                                     log.retention.check.interval.ms;
                                     default 300000 */
    bool cleaner_disable;       /* no log cleaner thread (log.cleaner.enable
                                   false): compacted topics grow */
    int64_t cleaner_backoff_ms; /* the cleaner looks for dirty compacted
                                   logs this often; default 15000 */
    /* defaults for every topic (server config "log.*" mapped to topic
     * names, and "table.*"); borrowed during floe_broker_open only */
    const floe_kv_t *topic_defaults;
    int ntopic_defaults;
    /* The table.* keys are the table engine's, which kafka/ does not know:
     * this check (NULL: none) sees every create and alter, validate_only
     * ones too.  `floe serve` wires the table configs' check. */
    floe_topic_configs_check_fn check_configs;
    void *check_arg;
    /* Table topics keep what their table has not committed: retention
     * and DeleteRecords ask this (NULL: no partition has a floor).  `floe
     * serve` wires the table engine's committed offsets. */
    floe_retention_floor_fn retention_floor;
    void *floor_arg;
} floe_broker_config_t;

/* Open the data dir (creating it), load every topic and open its logs
 * (recovering them), start the flusher thread and the log cleaner thread
 * (compaction of cleanup.policy=compact topics, at a low priority; one
 * INFO line per log a run rewrote).  Caller frees with
 * floe_broker_close.  FLOE_ECORRUPT on a damaged topic description or
 * producer-ids file. */
int floe_broker_open(const floe_broker_config_t *cfg, floe_broker_t **out, floe_err_t *err);
/* Flush (fsync) and close every log, stop the flusher thread, free. */
void floe_broker_close(floe_broker_t *b);

/* Deliver durability callbacks on this loop (floe_loop_post); call once
 * before serving. Borrowed. */
void floe_broker_attach_loop(floe_broker_t *b, floe_loop_t *loop);

const floe_broker_config_t *floe_broker_config(const floe_broker_t *b);
const char *floe_broker_data_dir(const floe_broker_t *b);

/* The log cleaner's floe_log_cleaner_* metrics (Prometheus text,
 * appended to out): runs, errors, bytes read and written, records and
 * tombstones removed, segments cleaned, the last run's duration, the
 * highest dirty ratio at the last pass. */
int floe_broker_cleaner_metrics(floe_broker_t *b, floe_buf_t *out);

/* ---- producer ids ---- */

/* A producer id never handed out before, even across restarts (ids are
 * reserved in persisted blocks).  Returns -1 on I/O failure. */
int64_t floe_broker_next_producer_id(floe_broker_t *b, floe_err_t *err);

/* ---- durability ---- */

/* Call fn(arg, ok) on the loop once every offset < `offset` of log l is
 * fsynced (at once if it already is); ok false when the fsync failed.
 * Wakes the flusher thread.  Loop thread only. */
int floe_broker_when_durable(floe_broker_t *b, floe_log_t *l, int64_t offset,
                             void (*fn)(void *arg, bool ok), void *arg);
/* Flush logs whose flush.ms elapsed, and enforce retention every
 * retention_check_ms (called from a periodic timer).  A partition with a
 * floor (retention_floor) keeps every segment holding an offset at or
 * above it, up to the floor's max_held_bytes; while it holds bytes back a
 * WARN line says so, at most once a minute per partition; a range past
 * the floor deleted anyway is logged with its offsets. */
void floe_broker_tick(floe_broker_t *b);

/* DeleteRecords of one partition: raise its log start to `before` (-1:
 * the high watermark).  A partition with a floor is deleted up to the
 * floor at most: records its table has not committed stay, whatever
 * max_held_bytes says; the answer is then POLICY_VIOLATION (44), with
 * *low the log start actually reached, so that an admin client reports
 * the partition as not done (kafkajs's deleteTopicRecords throws, Java's
 * lowWatermarks future fails) instead of passing over records it asked
 * to delete and that are still there.  *kerr: 0, 3 (no such partition),
 * 1 (before past the high watermark), 44, or -1 on an I/O error (err,
 * logged).  *low: the log start afterwards (-1 when no partition). */
void floe_broker_delete_records(floe_broker_t *b, floe_topic_t *t, int32_t partition,
                                int64_t before, int64_t *low, int16_t *kerr);

#endif
