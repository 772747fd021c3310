/* The broker's topic registry: topics, their partitions' logs, their
 * configs (persisted as JSON under DATA/meta/topics/), producer-id blocks
 * (DATA/meta/producer-ids) and durability waits (acks=all).
 *
 * Layout under the data dir:
 *   log/<topic>-<partition>/           one floe_log_t per partition
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
#include "log/log.h"
#include "net/loop.h"
#include "util/err.h"

/* A topic config key/value (both owned by whoever built the list). */
typedef struct floe_kv {
    const char *key;
    const char *value;
} floe_kv_t;

/* Checks a topic's configs as a whole, as they would be after a create or
 * an alter: keys[i] = values[i], n of them (borrowed for the call), the
 * topic's own set.  0, or -1 with *err naming the key and why; the broker
 * then refuses the request with INVALID_CONFIG and that message.  Called
 * with the topic registry locked: it must not call into the broker. */
typedef int (*floe_topic_configs_check_fn)(void *arg, const char *topic, const char *const *keys,
                                           const char *const *values, size_t n, floe_err_t *err);

typedef struct floe_broker_config {
    const char *data_dir;       /* required */
    bool auto_create_topics;    /* default true */
    int32_t default_partitions; /* default 1 */
    bool acks_all_fsync;        /* acks=all waits for fsync; default true */
    int64_t flush_interval_ms;  /* background flush check; default 1000 */
    int64_t retention_check_ms; /* how often retention runs, as Kafka's
                                     log.retention.check.interval.ms;
                                     default 300000 */
    /* defaults for every topic (server config "log.*" mapped to topic
     * names, and "table.*"); borrowed during floe_broker_open only */
    const floe_kv_t *topic_defaults;
    int ntopic_defaults;
    /* The table.* keys are the table engine's, which kafka/ does not know:
     * this check (NULL: none) sees every create and alter, validate_only
     * ones too.  `floe serve` wires the table configs' check. */
    floe_topic_configs_check_fn check_configs;
    void *check_arg;
} floe_broker_config_t;

typedef struct floe_topic floe_topic_t;

/* Open the data dir (creating it), load every topic and open its logs
 * (recovering them).  Caller frees with floe_broker_close. */
int floe_broker_open(const floe_broker_config_t *cfg, floe_broker_t **out, floe_err_t *err);
/* Flush (fsync) and close every log, stop the flusher thread, free. */
void floe_broker_close(floe_broker_t *b);

/* Deliver durability callbacks on this loop (floe_loop_post); call once
 * before serving. Borrowed. */
void floe_broker_attach_loop(floe_broker_t *b, floe_loop_t *loop);

const floe_broker_config_t *floe_broker_config(const floe_broker_t *b);
const char *floe_broker_data_dir(const floe_broker_t *b);

/* ---- topics ---- */

/* Kafka's rule: 1..249 chars of [a-zA-Z0-9._-], not "." or "..". */
bool floe_topic_name_valid(const char *name, size_t len);

/* The group coordinator's offsets log (DATA/log/__consumer_offsets-0): a
 * name no client may create, or its directory would be the offsets'. */
#define FLOE_OFFSETS_TOPIC "__consumer_offsets"

/* Find a topic by name (len bytes; need not be NUL-terminated).  Borrowed
 * until the topic is deleted. */
floe_topic_t *floe_broker_topic(floe_broker_t *b, const char *name, size_t len);
/* Find by topic id (16 bytes). */
floe_topic_t *floe_broker_topic_by_id(floe_broker_t *b, const uint8_t id[16]);

/* Snapshot of the topics (borrowed pointers, array the caller frees with
 * free()).  Returns the count, -1 on allocation failure. */
int floe_broker_topics(floe_broker_t *b, floe_topic_t ***out);

/* Create a topic with nparts partitions and configs (validated: known Kafka
 * topic configs, and table.* ones by cfg->check_configs; else FLOE_EINVAL
 * with a message that names the key).  Kafka error code in *kerr (36 exists, 17 invalid name,
 * 37 bad partitions, 40 bad config) when it fails.  validate_only checks
 * without creating.  configs borrowed. */
int floe_broker_create_topic(floe_broker_t *b, const char *name, int32_t nparts,
                             const floe_kv_t *configs, int nconfigs, bool validate_only,
                             floe_topic_t **out, int16_t *kerr, floe_err_t *err);
/* Delete a topic: close and remove its logs and metadata. */
int floe_broker_delete_topic(floe_broker_t *b, floe_topic_t *t, floe_err_t *err);
/* Grow to nparts partitions (never shrink: *kerr 37). */
int floe_broker_add_partitions(floe_broker_t *b, floe_topic_t *t, int32_t nparts,
                               bool validate_only, int16_t *kerr, floe_err_t *err);

/* Set (value non-NULL) or delete (value NULL, back to default) topic
 * configs and persist them; all or nothing.  *kerr 40 on a bad key/value,
 * also when the set they make fails cfg->check_configs.  validate_only
 * checks without changing anything. */
int floe_broker_alter_configs(floe_broker_t *b, floe_topic_t *t, const floe_kv_t *changes,
                              int nchanges, bool replace_all, bool validate_only, int16_t *kerr,
                              floe_err_t *err);

const char *floe_topic_name(const floe_topic_t *t);
const uint8_t *floe_topic_id(const floe_topic_t *t); /* 16 bytes */
int32_t floe_topic_partitions(const floe_topic_t *t);
bool floe_topic_internal(const floe_topic_t *t); /* name starts with "__" */
/* The log of one partition, or NULL when out of range.  Borrowed. */
floe_log_t *floe_topic_log(floe_topic_t *t, int32_t partition);
/* The value of a config: the topic's own, else the server default, else
 * Kafka's default; NULL when unknown.  *is_default says which.  Borrowed
 * until the next alter of this topic. */
const char *floe_topic_config(floe_topic_t *t, const char *key, bool *is_default);
/* Every config the topic has or could have (known keys with defaults, then
 * the topic's table.* keys): calls fn for each. */
void floe_topic_each_config(floe_topic_t *t,
                            void (*fn)(const char *key, const char *value, bool is_default,
                                       bool sensitive, void *arg),
                            void *arg);
/* message.timestamp.type is LogAppendTime. */
bool floe_topic_log_append_time(floe_topic_t *t);

/* ---- observing topics ---- */

typedef enum floe_topic_event {
    FLOE_TOPIC_CHANGED = 1, /* created, configs altered or partitions added */
    FLOE_TOPIC_DELETING,    /* about to be deleted: its logs are still open */
} floe_topic_event_t;

/* fn(ctx, t, ev) is called after every change to a topic, and before a
 * deletion closes its logs (so an observer reading them from another
 * thread can stop first), on the thread that made the change.  One
 * observer; NULL removes it.  Existing topics are not replayed: list them
 * with floe_broker_topics. */
typedef void (*floe_topic_observer_fn)(void *ctx, floe_topic_t *t, floe_topic_event_t ev);
void floe_broker_set_observer(floe_broker_t *b, floe_topic_observer_fn fn, void *ctx);

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
/* Flush logs whose flush.ms elapsed (called from a periodic timer). */
void floe_broker_tick(floe_broker_t *b);

#endif
