/* The classic consumer group coordinator, as a pure state machine.
 *
 * Plain C structs in, plain C structs out: no wire codecs, no sockets, no
 * clock.  Every call takes the current time (monotonic ms) from the caller,
 * so tests drive time by hand.  floe_group_tick() fires what is due
 * (session expiry, rebalance timeout, initial rebalance delay) and
 * floe_group_next_deadline() says when to call it next.
 *
 * Groups move Empty -> PreparingRebalance -> CompletingRebalance -> Stable
 * as in Apache Kafka's GroupCoordinator: JoinGroup (coordinator-assigned
 * member ids, MEMBER_ID_REQUIRED for v4+), SyncGroup (the leader's
 * assignment is handed to every member), Heartbeat, LeaveGroup, session
 * timeouts, generations, static members (group.instance.id).  Committed
 * offsets are kept in memory here too; making them durable is
 * offset_store.h's job (check, append to the log, then apply).
 *
 * JoinGroup and SyncGroup may complete later: their callback fires either
 * inside the call or inside a later call (another member's join, a leave,
 * a tick).  Callbacks must not call back into the coordinator; everything
 * a result points to is borrowed for the duration of the callback only.
 *
 * Not thread-safe: one thread (the broker's event loop) owns a coordinator. */
#ifndef FLOE_KAFKA_GROUP_H
#define FLOE_KAFKA_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Kafka error codes the coordinator answers with. */
enum {
    FLOE_GERR_NONE = 0,
    FLOE_GERR_UNKNOWN_SERVER_ERROR = -1,
    FLOE_GERR_UNKNOWN_TOPIC_OR_PARTITION = 3,
    FLOE_GERR_OFFSET_METADATA_TOO_LARGE = 12,
    FLOE_GERR_COORDINATOR_NOT_AVAILABLE = 15,
    FLOE_GERR_ILLEGAL_GENERATION = 22,
    FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL = 23,
    FLOE_GERR_INVALID_GROUP_ID = 24,
    FLOE_GERR_UNKNOWN_MEMBER_ID = 25,
    FLOE_GERR_INVALID_SESSION_TIMEOUT = 26,
    FLOE_GERR_REBALANCE_IN_PROGRESS = 27,
    FLOE_GERR_NON_EMPTY_GROUP = 68,
    FLOE_GERR_GROUP_ID_NOT_FOUND = 69,
    FLOE_GERR_MEMBER_ID_REQUIRED = 79,
    FLOE_GERR_GROUP_MAX_SIZE_REACHED = 81,
    FLOE_GERR_FENCED_INSTANCE_ID = 82,
};

typedef enum floe_group_state {
    FLOE_GROUP_EMPTY = 0,
    FLOE_GROUP_PREPARING_REBALANCE,
    FLOE_GROUP_COMPLETING_REBALANCE,
    FLOE_GROUP_STABLE,
    FLOE_GROUP_DEAD,
} floe_group_state_t;

/* Kafka's names: "Empty", "PreparingRebalance", "CompletingRebalance",
 * "Stable", "Dead".  Static strings. */
const char *floe_group_state_name(floe_group_state_t s);

typedef struct floe_group_config {
    int64_t initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms, 3000 */
    int32_t min_session_timeout_ms;     /* group.min.session.timeout.ms, 6000 */
    int32_t max_session_timeout_ms;     /* group.max.session.timeout.ms, 1800000 */
    int32_t max_size;                   /* group.max.size, INT32_MAX */
    uint32_t offset_metadata_max_bytes; /* offset.metadata.max.bytes, 4096 */
    /* An Empty group with no committed offsets is forgotten this long after
     * it became empty (Kafka drops such groups at its periodic cleanup). */
    int64_t empty_group_retention_ms; /* 600000 */
    /* offsets.retention.minutes as ms (7 days); <= 0 keeps offsets forever.
     * See floe_group_offsets_expired. */
    int64_t offsets_retention_ms;
    /* Seed for member ids; 0 picks one from the wall clock. */
    uint64_t member_id_seed;
} floe_group_config_t;

void floe_group_config_default(floe_group_config_t *cfg);

typedef struct floe_group_coord floe_group_coord_t;

/* Create a coordinator; cfg is copied.  Caller frees with
 * floe_group_coord_free. */
int floe_group_coord_new(const floe_group_config_t *cfg, floe_group_coord_t **out, floe_err_t *err);

/* Free everything.  Pending JoinGroup/SyncGroup callbacks fire first with
 * COORDINATOR_NOT_AVAILABLE so their owners can release what they hold. */
void floe_group_coord_free(floe_group_coord_t *c);

/* Broker shutdown: answer every pending JoinGroup/SyncGroup with
 * COORDINATOR_NOT_AVAILABLE, and every later one at once with the same
 * (clients then look for another coordinator).  Other calls keep working. */
void floe_group_shutdown(floe_group_coord_t *c);

/* ---- JoinGroup ---------------------------------------------------------- */

typedef struct floe_group_protocol {
    const char *name;
    const uint8_t *metadata;
    size_t metadata_len;
} floe_group_protocol_t;

/* Everything borrowed for the call; the coordinator copies what it keeps. */
typedef struct floe_group_join_req {
    const char *group_id;
    const char *member_id;     /* "" on a first join */
    const char *instance_id;   /* group.instance.id; NULL for dynamic members */
    const char *client_id;     /* from the request header */
    const char *client_host;   /* peer address, shown by DescribeGroups */
    const char *protocol_type; /* "consumer" */
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms; /* v0 has none: pass the session timeout */
    int16_t api_version;          /* >= 4: a first join gets MEMBER_ID_REQUIRED */
    size_t protocol_count;
    const floe_group_protocol_t *protocols;
} floe_group_join_req_t;

typedef struct floe_group_join_member {
    const char *member_id;
    const char *instance_id; /* NULL if dynamic */
    const uint8_t *metadata; /* for the selected protocol */
    size_t metadata_len;
} floe_group_join_member_t;

typedef struct floe_group_join_res {
    int16_t error;
    int32_t generation_id;     /* -1 on error */
    const char *protocol_type; /* NULL on error */
    const char *protocol_name; /* NULL on error */
    const char *leader_id;     /* "" on error */
    const char *member_id;     /* the caller's id ("" or the new id) */
    size_t member_count;       /* non-zero for the leader only */
    const floe_group_join_member_t *members;
} floe_group_join_res_t;

/* Called exactly once per JoinGroup; res is borrowed for the call. */
typedef void (*floe_group_join_cb)(void *opaque, const floe_group_join_res_t *res);

void floe_group_join(floe_group_coord_t *c, const floe_group_join_req_t *req, int64_t now_ms,
                     floe_group_join_cb cb, void *opaque);

/* ---- SyncGroup ---------------------------------------------------------- */

typedef struct floe_group_assignment {
    const char *member_id;
    const uint8_t *data;
    size_t len;
} floe_group_assignment_t;

typedef struct floe_group_sync_req {
    const char *group_id;
    const char *member_id;
    const char *instance_id; /* NULL if dynamic */
    int32_t generation_id;
    const char *protocol_type; /* v5+; NULL if not sent */
    const char *protocol_name; /* v5+; NULL if not sent */
    size_t assignment_count;   /* the leader's; 0 for followers */
    const floe_group_assignment_t *assignments;
} floe_group_sync_req_t;

typedef struct floe_group_sync_res {
    int16_t error;
    const char *protocol_type; /* NULL on error */
    const char *protocol_name;
    const uint8_t *assignment; /* this member's; may be empty */
    size_t assignment_len;
} floe_group_sync_res_t;

typedef void (*floe_group_sync_cb)(void *opaque, const floe_group_sync_res_t *res);

void floe_group_sync(floe_group_coord_t *c, const floe_group_sync_req_t *req, int64_t now_ms,
                     floe_group_sync_cb cb, void *opaque);

/* ---- Heartbeat, LeaveGroup ---------------------------------------------- */

/* Returns a Kafka error code (NONE, REBALANCE_IN_PROGRESS,
 * ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ...). */
int16_t floe_group_heartbeat(floe_group_coord_t *c, const char *group_id, const char *member_id,
                             const char *instance_id, int32_t generation_id, int64_t now_ms);

/* Remove one member (LeaveGroup; v3+ sends several, call once each).
 * member_id may be "" when instance_id names a static member.  Returns the
 * member's error code: NONE, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
 * COORDINATOR_NOT_AVAILABLE (dead group). */
int16_t floe_group_leave(floe_group_coord_t *c, const char *group_id, const char *member_id,
                         const char *instance_id, int64_t now_ms);

/* ---- Timers -------------------------------------------------------------- */

/* Fire everything due at now_ms: expire members whose session timed out,
 * finish rebalances whose timeout or initial delay ran out, forget empty
 * groups without offsets. */
void floe_group_tick(floe_group_coord_t *c, int64_t now_ms);

/* The earliest time floe_group_tick has something to do; INT64_MAX if
 * nothing is scheduled. */
int64_t floe_group_next_deadline(const floe_group_coord_t *c);

/* ---- ListGroups, DescribeGroups, DeleteGroups ---------------------------- */

typedef void (*floe_group_list_fn)(void *opaque, const char *group_id, const char *protocol_type,
                                   floe_group_state_t state);

/* Call fn for every group (strings borrowed for the call).  protocol_type
 * is "" for groups that never had members. */
void floe_group_list(const floe_group_coord_t *c, floe_group_list_fn fn, void *opaque);

typedef struct floe_group_member_desc {
    const char *member_id;
    const char *instance_id; /* NULL if dynamic */
    const char *client_id;
    const char *client_host;
    const uint8_t *metadata; /* only when Stable, else empty */
    size_t metadata_len;
    const uint8_t *assignment; /* only when Stable, else empty */
    size_t assignment_len;
} floe_group_member_desc_t;

typedef struct floe_group_desc {
    floe_group_state_t state;  /* DEAD for an unknown group */
    const char *protocol_type; /* "" if none */
    const char *protocol_name; /* only when Stable, else "" */
    int32_t generation_id;
    size_t member_count;
    floe_group_member_desc_t *members;
} floe_group_desc_t;

/* Describe one group.  *out borrows from the coordinator until the next
 * call that changes it; release out->members with floe_group_desc_free
 * (a heap array).  Returns 0, or -1 when out of memory. */
int floe_group_describe(const floe_group_coord_t *c, const char *group_id, floe_group_desc_t *out);
void floe_group_desc_free(floe_group_desc_t *d);

/* The state of a group (DEAD when unknown). */
floe_group_state_t floe_group_state(const floe_group_coord_t *c, const char *group_id);

/* Whether DeleteGroups may delete the group: NONE, GROUP_ID_NOT_FOUND,
 * NON_EMPTY_GROUP. */
int16_t floe_group_delete_check(const floe_group_coord_t *c, const char *group_id);

/* Delete an Empty group and its offsets.  Returns the same codes as
 * floe_group_delete_check; only NONE deletes. */
int16_t floe_group_delete(floe_group_coord_t *c, const char *group_id);

/* ---- Committed offsets --------------------------------------------------- */

typedef struct floe_group_offset {
    int64_t offset;
    int32_t leader_epoch;     /* -1 if unknown */
    const char *metadata;     /* never NULL */
    int64_t commit_timestamp; /* wall ms */
} floe_group_offset_t;

/* May this OffsetCommit proceed?  Applies Kafka's checks (generation -1 on
 * an Empty or unknown group is a standalone commit; otherwise the member
 * must belong to the current generation and the group must not be
 * completing a rebalance) and counts as a heartbeat.  Returns NONE or the
 * error every partition of the request gets. */
int16_t floe_group_commit_check(floe_group_coord_t *c, const char *group_id, const char *member_id,
                                const char *instance_id, int32_t generation_id, int64_t now_ms);

/* Per-partition check: OFFSET_METADATA_TOO_LARGE or NONE. */
int16_t floe_group_commit_check_partition(const floe_group_coord_t *c, const char *metadata);

/* Store (or replace) a committed offset, creating the group (Empty) if
 * needed.  Strings are copied.  Returns 0 or -1 when out of memory. */
int floe_group_offset_put(floe_group_coord_t *c, const char *group_id, const char *topic,
                          int32_t partition, const floe_group_offset_t *o, int64_t now_ms);

/* Remove one committed offset (a tombstone).  No-op if absent. */
void floe_group_offset_remove(floe_group_coord_t *c, const char *group_id, const char *topic,
                              int32_t partition);

/* Look one up.  Returns 0 and fills *out (borrowed until the next change of
 * the group), or -1 when there is none. */
int floe_group_offset_get(const floe_group_coord_t *c, const char *group_id, const char *topic,
                          int32_t partition, floe_group_offset_t *out);

typedef void (*floe_group_offset_fn)(void *opaque, const char *topic, int32_t partition,
                                     const floe_group_offset_t *o);

/* Call fn for each committed offset of the group, ordered by topic then
 * partition.  Must not change the group from fn. */
void floe_group_offsets_each(const floe_group_coord_t *c, const char *group_id,
                             floe_group_offset_fn fn, void *opaque);

/* Committed offsets whose retention has passed (Kafka's KIP-211 rules):
 * a group with members keeps its offsets; a group that had members keeps
 * them for offsets_retention_ms after it became Empty; a group only used
 * for commits (or one replayed after a restart, whose history is unknown)
 * keeps each offset for offsets_retention_ms after its commit timestamp.
 * Calls fn for each (strings borrowed for the call) without removing any:
 * the caller writes tombstones, then calls floe_group_offset_remove.
 * now_ms monotonic, wall_ms wall clock. */
typedef void (*floe_group_expired_fn)(void *opaque, const char *group_id, const char *topic,
                                      int32_t partition);
void floe_group_offsets_expired(const floe_group_coord_t *c, int64_t now_ms, int64_t wall_ms,
                                floe_group_expired_fn fn, void *opaque);

#endif
