/* Internals of the consumer group coordinator (group.h), shared by its three
 * files: group.c (groups, members, the rebalance, timers, the coordinator),
 * group_join.c (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and
 * group_admin.c (List, Describe, Delete, committed offsets).  Like group.h,
 * nothing here is thread-safe: one thread owns a coordinator. */
#ifndef FLOE_KAFKA_GROUP_INT_H
#define FLOE_KAFKA_GROUP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/group.h"

/* ---- types --------------------------------------------------------------- */

typedef struct gproto {
    char *name;
    uint8_t *meta;
    size_t len;
} gproto_t;

typedef struct gmember {
    char *id;
    char *instance_id; /* NULL if dynamic */
    char *client_id;
    char *client_host;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;
    gproto_t *protos;
    size_t nprotos;
    uint8_t *assignment;
    size_t assignment_len;
    floe_group_join_cb join_cb; /* set while awaiting the join response */
    void *join_opaque;
    floe_group_sync_cb sync_cb; /* set while awaiting the sync response */
    void *sync_opaque;
    int64_t deadline; /* session expiry */
} gmember_t;

typedef struct gpending {
    char *id;
    int64_t deadline;
} gpending_t;

typedef struct goffset {
    char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;
    int64_t commit_ts;
} goffset_t;

typedef struct group {
    char *id;
    floe_group_state_t state;
    int32_t generation;
    char *protocol_type;
    char *protocol_name;
    gmember_t *leader;
    gmember_t **members; /* in join order */
    size_t nmembers, capmembers;
    gpending_t *pending; /* ids handed out with MEMBER_ID_REQUIRED */
    size_t npending, cappending;
    goffset_t *offsets; /* sorted by (topic, partition) */
    size_t noffsets, capoffsets;
    int64_t join_deadline;     /* while PreparingRebalance */
    bool initial_delay;        /* the pending join is the initial delayed one */
    int64_t initial_remaining; /* how much longer the initial delay may grow */
    bool new_member_added;
    int64_t empty_since;
} group_t;

struct floe_group_coord {
    floe_group_config_t cfg;
    group_t **groups;
    size_t ngroups, capgroups;
    uint64_t id_state;
    bool shut_down;
};

/* ---- small helpers ------------------------------------------------------- */

static inline bool str_eq(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static inline bool is_empty(const char *s)
{
    return !s || !*s;
}

/* Grow *arr (elements of size sz) so that one more fits. */
static inline int grow(void *arrp, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    void *p = realloc(*(void **)arrp, nc * sz);
    if (!p) return -1;
    *(void **)arrp = p;
    *cap = nc;
    return 0;
}

/* ---- groups and members (group.c) ---------------------------------------- */

/* The group named id, or NULL (id NULL or unknown). */
group_t *floe_grp_find(const floe_group_coord_t *c, const char *id);
/* A new Empty group named id (copied), owned by c; NULL when out of memory. */
group_t *floe_grp_new(floe_group_coord_t *c, const char *id, int64_t now);
/* Fail a group's waiting callbacks with COORDINATOR_NOT_AVAILABLE and free it
 * with its members and offsets; the caller removes it from c->groups. */
void floe_grp_free(group_t *g);
/* Whether g may be forgotten (Empty, with no members, pending member ids or
 * offsets left), and then *when: after the empty-group retention. */
bool floe_grp_forgettable(const floe_group_coord_t *c, const group_t *g, int64_t *when);

/* Free m's protocols (m keeps none). */
void floe_grp_free_protos(gmember_t *m);
/* Free a member and everything it owns; it must not be in a group's list. */
void floe_grp_free_member(gmember_t *m);
/* m's protocol called name (borrowed from m), or NULL. */
const gproto_t *floe_grp_member_proto(const gmember_t *m, const char *name);
/* A member of g by member id or by group.instance.id; NULL for an empty or
 * unknown one. */
gmember_t *floe_grp_find_member(const group_t *g, const char *id);
gmember_t *floe_grp_find_static(const group_t *g, const char *instance_id);
/* Whether instance_id belongs to a member other than member_id. */
bool floe_grp_is_fenced(const group_t *g, const char *member_id, const char *instance_id);
/* Forget the i-th member id handed out with MEMBER_ID_REQUIRED. */
void floe_grp_remove_pending_at(group_t *g, size_t i);

/* ---- completions (group.c) ------------------------------------------------ */

/* Answer a join or sync with an error (member_id is borrowed; NULL is ""). */
void floe_grp_join_error(floe_group_join_cb cb, void *opaque, int16_t error, const char *member_id);
void floe_grp_sync_error(floe_group_sync_cb cb, void *opaque, int16_t error);
/* Answer m's waiting join and sync, if any, with error. */
void floe_grp_fail_member_callbacks(gmember_t *m, int16_t error);
/* Answer m's join with g's current generation; the leader also gets every
 * member's metadata. */
void floe_grp_join_respond(group_t *g, gmember_t *m, floe_group_join_cb cb, void *opaque);

/* ---- the rebalance (group.c) ---------------------------------------------- */

/* Drop every member's assignment. */
void floe_grp_reset_assignments(group_t *g);
/* Move g to PreparingRebalance and set its join deadline. */
void floe_grp_prepare_rebalance(floe_group_coord_t *c, group_t *g, int64_t now);
/* Start a rebalance unless g is already preparing one, and finish the join
 * phase if every member has rejoined. */
void floe_grp_rebalance(floe_group_coord_t *c, group_t *g, int64_t now);
/* Finish the join phase if g is preparing a rebalance and every member has
 * rejoined. */
void floe_grp_try_complete_join(floe_group_coord_t *c, group_t *g, int64_t now);
/* Remove m (failing its callbacks with UNKNOWN_MEMBER_ID) and free it; the
 * others rebalance. */
void floe_grp_remove_member_and_update(floe_group_coord_t *c, group_t *g, gmember_t *m,
                                       int64_t now);

#endif
