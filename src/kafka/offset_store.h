/* Committed consumer offsets, durable in the internal topic
 * __consumer_offsets (one partition: a floe_log_t in its own directory).
 *
 * Records use Apache Kafka's own layout for that topic, so the bytes are
 * familiar to anyone who has dumped it:
 *   key   (version 1): int16 1 | string group | string topic | int32 partition
 *   value (version 3): int16 3 | int64 offset | int32 leader_epoch |
 *                      string metadata | int64 commit_timestamp
 *   a null value is a tombstone (offset deleted, e.g. by DeleteGroups).
 * Strings are int16 length + bytes.  At open the log is replayed into the
 * coordinator, last value winning; other key versions (Kafka's group
 * metadata, version 2) are skipped.  When most records are superseded the
 * store compacts the topic at open (rewrites the live offsets into a fresh
 * log and swaps directories), so it does not grow without bound.
 *
 * Thread use: like the coordinator, one thread. */
#ifndef FLOE_KAFKA_OFFSET_STORE_H
#define FLOE_KAFKA_OFFSET_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka/group.h"
#include "log/log.h"
#include "util/err.h"

typedef struct floe_offset_store floe_offset_store_t;

/* Open (creating) the log in dir, e.g. DATA/log/__consumer_offsets-0, and
 * replay it into coord (borrowed; must outlive the store).  cfg NULL =
 * log defaults with flush.ms 1000 (an append more than a second after the
 * last fsync fsyncs; every commit is written before it is acknowledged).  now_ms: monotonic time for groups it creates.  Caller
 * closes with floe_offset_store_close. */
int floe_offset_store_open(const char *dir, const floe_log_config_t *cfg, floe_group_coord_t *coord,
                           int64_t now_ms, floe_offset_store_t **out, floe_err_t *err);

/* Flush and close.  NULL is fine. */
void floe_offset_store_close(floe_offset_store_t *s);

/* One partition of an OffsetCommit; error is filled by the commit. */
typedef struct floe_offset_commit_part {
    const char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1 if not sent */
    const char *metadata; /* NULL = "" */
    int16_t error;        /* in: 0, or an error the caller already decided
                              (e.g. UNKNOWN_TOPIC_OR_PARTITION), kept;
                              out: the Kafka error code */
} floe_offset_commit_part_t;

/* OffsetCommit: check the member (floe_group_commit_check), append the
 * accepted partitions as one batch, then apply them to the coordinator.
 * Every part's error is set (a group-level refusal applies to all).  A
 * storage failure answers UNKNOWN_SERVER_ERROR for the parts and returns
 * -1 with err filled; otherwise returns 0.  now_ms: monotonic;
 * wall_ms: the commit timestamp stored. */
int floe_offset_store_commit(floe_offset_store_t *s, const char *group_id, const char *member_id,
                             const char *instance_id, int32_t generation_id,
                             floe_offset_commit_part_t *parts, size_t nparts, int64_t now_ms,
                             int64_t wall_ms, floe_err_t *err);

/* DeleteGroups for one group: NONE (tombstones written, group gone),
 * GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, or UNKNOWN_SERVER_ERROR on a storage
 * failure (err filled). */
int16_t floe_offset_store_delete_group(floe_offset_store_t *s, const char *group_id,
                                       floe_err_t *err);

/* Delete the offsets whose retention has passed (floe_group_offsets_expired):
 * tombstones first, then the coordinator forgets them.  Returns how many
 * were deleted, or -1 on a storage failure (nothing forgotten; err filled).
 * now_ms monotonic, wall_ms wall clock. */
int64_t floe_offset_store_expire(floe_offset_store_t *s, int64_t now_ms, int64_t wall_ms,
                                 floe_err_t *err);

/* One decoded __consumer_offsets record (offset-commit keys only). */
typedef struct floe_offset_record {
    char *group; /* heap copies: free with floe_offset_record_clear */
    char *topic;
    int32_t partition;
    bool tombstone;            /* null value: the offset was deleted */
    floe_group_offset_t value; /* value.metadata is a heap copy too */
} floe_offset_record_t;

/* Decode a record's key and value (untrusted bytes from disk; every length
 * checked).  Returns 1 when decoded (clear *out afterwards), 0 for a
 * well-formed key of another kind (group metadata) or a malformed record,
 * -1 when out of memory. */
int floe_offset_record_decode(const uint8_t *key, size_t key_len, const uint8_t *value,
                              size_t value_len, bool value_null, floe_offset_record_t *out);
void floe_offset_record_clear(floe_offset_record_t *r);

/* Number of records replayed at open and the number of live offsets
 * (for tests and metrics). */
int64_t floe_offset_store_replayed(const floe_offset_store_t *s);

#endif
