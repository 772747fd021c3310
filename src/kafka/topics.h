/* The broker's topic registry (kafka/broker.h, topics.c): topics, their
 * partitions' logs and configs, persisted as DATA/meta/topics/<topic>.json
 * (written durably: a temp file, fsync, rename, fsync of the folder; a
 * failed fsync is an error, never ignored).  Every function takes the
 * registry's lock as it needs: any thread. */
#ifndef FLOE_KAFKA_TOPICS_H
#define FLOE_KAFKA_TOPICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka/handler.h"
#include "log/log.h"
#include "util/err.h"

/* A topic config key/value (both owned by whoever built the list). */
typedef struct floe_kv {
    const char *key;
    const char *value;
} floe_kv_t;

typedef struct floe_topic floe_topic_t;

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
 * topic configs, and table.* ones by the broker config's check_configs;
 * else FLOE_EINVAL with a message that names the key).  Kafka error code in *kerr (36 exists, 17 invalid name,
 * 37 bad partitions, 40 bad config, -1 when its description or logs could
 * not be written: logged once) when it fails.  validate_only checks
 * without creating.  configs borrowed. */
int floe_broker_create_topic(floe_broker_t *b, const char *name, int32_t nparts,
                             const floe_kv_t *configs, int nconfigs, bool validate_only,
                             floe_topic_t **out, int16_t *kerr, floe_err_t *err);
/* Delete a topic: close and remove its logs and metadata.  The topic is
 * gone from the registry and freed even when this fails; -1 (logged
 * once) means its description could not be removed durably, so a crash
 * may bring the topic back, empty. */
int floe_broker_delete_topic(floe_broker_t *b, floe_topic_t *t, floe_err_t *err);
/* Grow to nparts partitions (never shrink: *kerr 37). */
int floe_broker_add_partitions(floe_broker_t *b, floe_topic_t *t, int32_t nparts,
                               bool validate_only, int16_t *kerr, floe_err_t *err);

/* Set (value non-NULL) or delete (value NULL, back to default) topic
 * configs and persist them; all or nothing.  *kerr 40 on a bad key/value,
 * also when the set they make fails the broker config's check_configs.
 * validate_only checks without changing anything. */
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

/* fn(ctx, t, partition) is called after a produce appended records to
 * partition `partition` of t, on the thread that appended them, before
 * the producer is answered: readers of the logs in other threads (the
 * table engine) learn of new records without polling.  It must be quick
 * and must not call into the broker.  One observer; NULL removes it.  Set
 * it before the Kafka server serves, remove it once it stopped (calls
 * read it without a lock). */
typedef void (*floe_append_observer_fn)(void *ctx, floe_topic_t *t, int32_t partition);
void floe_broker_set_append_observer(floe_broker_t *b, floe_append_observer_fn fn, void *ctx);
/* The produce path appended to partition `partition` of t: tell the
 * append observer, if any. */
void floe_broker_appended(floe_broker_t *b, floe_topic_t *t, int32_t partition);

/* The folder of a partition's log: DATA/log/<topic>-<partition>, the one
 * place that spells it (the group offsets log is __consumer_offsets-0).
 * Into out; FLOE_ERANGE (out "") when it does not fit. */
int floe_broker_partition_dir(const char *data_dir, const char *topic, int32_t partition, char *out,
                              size_t size, floe_err_t *err);

#endif
