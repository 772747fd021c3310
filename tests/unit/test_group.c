/* The group coordinator state machine, driven by hand with explicit time. */
#include <stdint.h>
#include <stdlib.h>

#include "kafka/group.h"
#include "test.h"
#include "util/diag.h"

/* A captured JoinGroup or SyncGroup completion. */
typedef struct jres {
    int done;
    int16_t error;
    int32_t generation;
    char member_id[128];
    char leader_id[128];
    char protocol[32];
    size_t member_count;
    char members[8][128];
    char meta[8][32];
} jres_t;

typedef struct sres {
    int done;
    int16_t error;
    char assignment[64];
} sres_t;

static void on_join(void *o, const floe_group_join_res_t *r)
{
    jres_t *j = o;
    j->done++;
    j->error = r->error;
    j->generation = r->generation_id;
    snprintf(j->member_id, sizeof j->member_id, "%s", r->member_id);
    snprintf(j->leader_id, sizeof j->leader_id, "%s", r->leader_id);
    snprintf(j->protocol, sizeof j->protocol, "%s", r->protocol_name ? r->protocol_name : "");
    j->member_count = r->member_count;
    for (size_t i = 0; i < r->member_count && i < 8; i++) {
        snprintf(j->members[i], sizeof j->members[i], "%s", r->members[i].member_id);
        snprintf(j->meta[i], sizeof j->meta[i], "%.*s", (int)r->members[i].metadata_len,
                 (const char *)r->members[i].metadata);
    }
}

static void on_sync(void *o, const floe_group_sync_res_t *r)
{
    sres_t *s = o;
    s->done++;
    s->error = r->error;
    snprintf(s->assignment, sizeof s->assignment, "%.*s", (int)r->assignment_len,
             r->assignment ? (const char *)r->assignment : "");
}

static floe_group_coord_t *coord(int64_t delay)
{
    floe_group_config_t cfg;
    floe_group_config_default(&cfg);
    cfg.initial_rebalance_delay_ms = delay;
    cfg.min_session_timeout_ms = 10;
    cfg.member_id_seed = 42;
    floe_group_coord_t *c = NULL;
    floe_err_t err;
    if (floe_group_coord_new(&cfg, &c, &err)) abort();
    return c;
}

static floe_group_protocol_t P_RANGE[] = {{"range", (const uint8_t *)"mr", 2}};
static floe_group_protocol_t P_BOTH[] = {{"roundrobin", (const uint8_t *)"rr", 2},
                                         {"range", (const uint8_t *)"r2", 2}};
static floe_group_protocol_t P_RR[] = {{"roundrobin", (const uint8_t *)"x", 1}};

static floe_group_join_req_t jreq(const char *group, const char *member, int version)
{
    floe_group_join_req_t r = {
        .group_id = group,
        .member_id = member,
        .client_id = "cli",
        .client_host = "/127.0.0.1",
        .protocol_type = "consumer",
        .session_timeout_ms = 1000,
        .rebalance_timeout_ms = 5000,
        .api_version = (int16_t)version,
        .protocol_count = 1,
        .protocols = P_RANGE,
    };
    return r;
}

static void join(floe_group_coord_t *c, const char *g, const char *member, int64_t now, jres_t *out)
{
    floe_group_join_req_t r = jreq(g, member, 2);
    floe_group_join(c, &r, now, on_join, out);
}

static void sync_req(floe_group_coord_t *c, const char *g, const char *member, int32_t gen,
                     size_t n, const floe_group_assignment_t *a, int64_t now, sres_t *out)
{
    floe_group_sync_req_t r = {.group_id = g,
                               .member_id = member,
                               .generation_id = gen,
                               .assignment_count = n,
                               .assignments = a};
    floe_group_sync(c, &r, now, on_sync, out);
}

/* Join with v4+: MEMBER_ID_REQUIRED first, then a real join with that id. */
static void member_id_required_flow(void)
{
    floe_group_coord_t *c = coord(0);
    floe_group_join_req_t r = jreq("g", "", 4);
    jres_t a = {0};
    floe_group_join(c, &r, 0, on_join, &a);
    CHECK_EQ(a.done, 1);
    CHECK_EQ(a.error, FLOE_GERR_MEMBER_ID_REQUIRED);
    CHECK(strncmp(a.member_id, "cli-", 4) == 0);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_EMPTY);

    jres_t b = {0};
    r.member_id = a.member_id;
    floe_group_join(c, &r, 1, on_join, &b);
    CHECK_EQ(b.done, 1);
    CHECK_EQ(b.error, 0);
    CHECK_EQ(b.generation, 1);
    CHECK_STR(b.member_id, a.member_id);
    CHECK_STR(b.leader_id, a.member_id);
    CHECK_STR(b.protocol, "range");
    CHECK_EQ(b.member_count, 1);
    CHECK_STR(b.meta[0], "mr");
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_COMPLETING_REBALANCE);

    /* An id never handed out is unknown. */
    jres_t x = {0};
    r.member_id = "cli-bogus";
    floe_group_join(c, &r, 2, on_join, &x);
    CHECK_EQ(x.error, FLOE_GERR_UNKNOWN_MEMBER_ID);
    floe_group_coord_free(c);
}

/* The pending id expires after the session timeout if the client never
 * comes back. */
static void pending_member_expires(void)
{
    floe_group_coord_t *c = coord(0);
    floe_group_join_req_t r = jreq("g", "", 5);
    jres_t a = {0};
    floe_group_join(c, &r, 0, on_join, &a);
    CHECK_EQ(a.error, FLOE_GERR_MEMBER_ID_REQUIRED);
    CHECK_EQ(floe_group_next_deadline(c), 1000);
    floe_group_tick(c, 1000);
    jres_t b = {0};
    r.member_id = a.member_id;
    floe_group_join(c, &r, 1001, on_join, &b);
    CHECK_EQ(b.error, FLOE_GERR_UNKNOWN_MEMBER_ID);
    floe_group_coord_free(c);
}

static void invalid_requests(void)
{
    floe_group_coord_t *c = coord(0);
    jres_t a = {0};
    floe_group_join_req_t r = jreq("", "", 2);
    floe_group_join(c, &r, 0, on_join, &a);
    CHECK_EQ(a.error, FLOE_GERR_INVALID_GROUP_ID);
    r = jreq("g", "", 2);
    r.session_timeout_ms = 5;
    floe_group_join(c, &r, 0, on_join, &a);
    CHECK_EQ(a.error, FLOE_GERR_INVALID_SESSION_TIMEOUT);
    r = jreq("g", "", 2);
    r.protocol_count = 0;
    floe_group_join(c, &r, 0, on_join, &a);
    CHECK_EQ(a.error, FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL);
    r = jreq("nogroup", "m1", 2);
    floe_group_join(c, &r, 0, on_join, &a);
    CHECK_EQ(a.error, FLOE_GERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ(a.done, 4);
    /* Heartbeat/sync on unknown groups and members */
    CHECK_EQ(floe_group_heartbeat(c, "none", "m", NULL, 0, 0), FLOE_GERR_UNKNOWN_MEMBER_ID);
    sres_t s = {0};
    sync_req(c, "none", "m", 0, 0, NULL, 0, &s);
    CHECK_EQ(s.error, FLOE_GERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ(floe_group_leave(c, "none", "m", NULL, 0), FLOE_GERR_UNKNOWN_MEMBER_ID);
    floe_group_coord_free(c);
}

/* Two members: one join completes when both joined; the leader's sync
 * hands out assignments; followers wait for it. */
static void two_members_join_and_sync(void)
{
    floe_group_coord_t *c = coord(0);
    jres_t a = {0}, b = {0}, a2 = {0};
    join(c, "g", "", 0, &a); /* delay 0: completes at once alone */
    CHECK_EQ(a.done, 1);
    CHECK_EQ(a.generation, 1);
    sres_t sa = {0};
    floe_group_assignment_t as1[] = {{a.member_id, (const uint8_t *)"A-all", 5}};
    sync_req(c, "g", a.member_id, 1, 1, as1, 1, &sa);
    CHECK_EQ(sa.done, 1);
    CHECK_STR(sa.assignment, "A-all");
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_STABLE);

    /* b joins: a rebalance starts; b waits for a */
    join(c, "g", "", 10, &b);
    CHECK_EQ(b.done, 0);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_PREPARING_REBALANCE);
    CHECK_EQ(floe_group_heartbeat(c, "g", a.member_id, NULL, 1, 20),
             FLOE_GERR_REBALANCE_IN_PROGRESS);
    join(c, "g", a.member_id, 30, &a2);
    CHECK_EQ(a2.done, 1);
    CHECK_EQ(b.done, 1);
    CHECK_EQ(a2.generation, 2);
    CHECK_EQ(b.generation, 2);
    CHECK_STR(a2.leader_id, a.member_id);
    CHECK_STR(b.leader_id, a.member_id);
    CHECK_EQ(a2.member_count, 2);
    CHECK_EQ(b.member_count, 0);
    CHECK_STR(a2.members[0], a.member_id);
    CHECK_STR(a2.members[1], b.member_id);

    /* stale generation */
    CHECK_EQ(floe_group_heartbeat(c, "g", a.member_id, NULL, 1, 31), FLOE_GERR_ILLEGAL_GENERATION);
    sres_t stale = {0};
    sync_req(c, "g", b.member_id, 1, 0, NULL, 31, &stale);
    CHECK_EQ(stale.error, FLOE_GERR_ILLEGAL_GENERATION);

    /* follower syncs first and waits */
    sres_t sb = {0}, sa2 = {0};
    sync_req(c, "g", b.member_id, 2, 0, NULL, 40, &sb);
    CHECK_EQ(sb.done, 0);
    CHECK_EQ(floe_group_heartbeat(c, "g", b.member_id, NULL, 2, 41), FLOE_GERR_NONE);
    floe_group_assignment_t as2[] = {{a.member_id, (const uint8_t *)"A-half", 6},
                                     {b.member_id, (const uint8_t *)"B-half", 6}};
    sync_req(c, "g", a.member_id, 2, 2, as2, 50, &sa2);
    CHECK_EQ(sa2.done, 1);
    CHECK_EQ(sb.done, 1);
    CHECK_STR(sa2.assignment, "A-half");
    CHECK_STR(sb.assignment, "B-half");
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_STABLE);
    /* A sync in Stable returns the stored assignment. */
    sres_t again = {0};
    sync_req(c, "g", b.member_id, 2, 0, NULL, 60, &again);
    CHECK_STR(again.assignment, "B-half");

    floe_group_desc_t d;
    CHECK_EQ(floe_group_describe(c, "g", &d), 0);
    CHECK_EQ(d.state, FLOE_GROUP_STABLE);
    CHECK_STR(d.protocol_type, "consumer");
    CHECK_STR(d.protocol_name, "range");
    CHECK_EQ(d.member_count, 2);
    CHECK_STR(d.members[1].member_id, b.member_id);
    CHECK_EQ(d.members[1].assignment_len, 6);
    CHECK_EQ(d.members[1].metadata_len, 2);
    CHECK_STR(d.members[1].client_host, "/127.0.0.1");
    floe_group_desc_free(&d);
    floe_group_coord_free(c);
}

/* A member that does not rejoin within the rebalance timeout is dropped. */
static void rebalance_timeout_drops_laggard(void)
{
    floe_group_coord_t *c = coord(0);
    jres_t a = {0}, b = {0}, a2 = {0}, cnew = {0};
    join(c, "g", "", 0, &a);
    join(c, "g", "", 0, &b); /* b triggers gen 2 with a rejoining */
    join(c, "g", a.member_id, 1, &a2);
    CHECK_EQ(b.generation, 2);
    sres_t s1 = {0}, s2 = {0};
    sync_req(c, "g", a.member_id, 2, 0, NULL, 2, &s1);
    sync_req(c, "g", b.member_id, 2, 0, NULL, 2, &s2);
    CHECK_EQ(s1.done + s2.done, 2);
    /* a third member joins; only a rejoins; b keeps heartbeating but never
     * rejoins */
    join(c, "g", "", 100, &cnew);
    join(c, "g", a.member_id, 110, &a2);
    CHECK_EQ(cnew.done, 0);
    CHECK_EQ(floe_group_heartbeat(c, "g", b.member_id, NULL, 2, 900),
             FLOE_GERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ(floe_group_next_deadline(c), 1900); /* b's session, before 5100 */
    /* session of b expires at 1900, before the rebalance timeout (5100) */
    floe_group_tick(c, 1900);
    CHECK_EQ(cnew.done, 1);
    CHECK_EQ(cnew.generation, 3);
    CHECK_EQ(a2.member_count, 2);
    CHECK_EQ(floe_group_heartbeat(c, "g", b.member_id, NULL, 3, 1901), FLOE_GERR_UNKNOWN_MEMBER_ID);
    floe_group_coord_free(c);
}

/* With a long session, the rebalance timeout ends the wait instead. */
static void rebalance_timeout_expiry(void)
{
    floe_group_coord_t *c = coord(0);
    floe_group_join_req_t r = jreq("g", "", 2);
    r.session_timeout_ms = 100000;
    r.rebalance_timeout_ms = 3000;
    jres_t a = {0}, b = {0}, a2 = {0};
    floe_group_join(c, &r, 0, on_join, &a);
    sres_t s = {0};
    sync_req(c, "g", a.member_id, 1, 0, NULL, 0, &s);
    CHECK_EQ(s.done, 1);
    floe_group_join(c, &r, 10, on_join, &b);
    CHECK_EQ(floe_group_next_deadline(c), 3010);
    floe_group_tick(c, 3009);
    CHECK_EQ(b.done, 0);
    floe_group_tick(c, 3010);
    CHECK_EQ(b.done, 1);
    CHECK_EQ(b.error, 0);
    CHECK_EQ(b.generation, 2);
    CHECK_STR(b.leader_id, b.member_id); /* a was dropped, b leads */
    CHECK_EQ(b.member_count, 1);
    r.member_id = a.member_id;
    floe_group_join(c, &r, 3011, on_join, &a2);
    CHECK_EQ(a2.error, FLOE_GERR_UNKNOWN_MEMBER_ID);
    floe_group_coord_free(c);
}

/* The initial rebalance delay holds the first generation back, and grows
 * while members keep arriving (up to the rebalance timeout). */
static void initial_rebalance_delay(void)
{
    floe_group_coord_t *c = coord(100);
    jres_t a = {0}, b = {0}, d = {0};
    join(c, "g", "", 0, &a);
    CHECK_EQ(a.done, 0);
    CHECK_EQ(floe_group_next_deadline(c), 100);
    join(c, "g", "", 50, &b);
    floe_group_tick(c, 99);
    CHECK_EQ(a.done + b.done, 0);
    floe_group_tick(c, 100); /* b arrived: wait one more delay */
    CHECK_EQ(a.done + b.done, 0);
    CHECK_EQ(floe_group_next_deadline(c), 200);
    floe_group_tick(c, 200);
    CHECK_EQ(a.done, 1);
    CHECK_EQ(b.done, 1);
    CHECK_EQ(a.generation, 1);
    CHECK_EQ(b.generation, 1);
    CHECK_EQ(a.member_count, 2);
    /* once a generation exists, a join does not get the initial delay */
    sres_t s1 = {0}, s2 = {0};
    sync_req(c, "g", a.member_id, 1, 0, NULL, 201, &s1);
    sync_req(c, "g", b.member_id, 1, 0, NULL, 201, &s2);
    join(c, "g", "", 300, &d);
    CHECK_EQ(d.done, 0);
    CHECK_EQ(floe_group_next_deadline(c), 1201); /* sessions end before 5300 */
    floe_group_coord_free(c);
}

/* Members vote: the protocol every member supports and most prefer. */
static void protocol_selection(void)
{
    floe_group_coord_t *c = coord(50);
    floe_group_join_req_t r1 = jreq("g", "", 2), r2 = jreq("g", "", 2), r3 = jreq("g", "", 2);
    r1.protocols = P_BOTH;
    r1.protocol_count = 2;
    r2.protocols = P_BOTH;
    r2.protocol_count = 2;
    jres_t a = {0}, b = {0}, x = {0};
    floe_group_join(c, &r1, 0, on_join, &a);
    floe_group_join(c, &r2, 0, on_join, &b);
    r3.protocols = P_RR;
    r3.protocol_type = "connect";
    floe_group_join(c, &r3, 0, on_join, &x);
    CHECK_EQ(x.error, FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL);
    floe_group_tick(c, 50); /* b came during the delay: one more */
    CHECK_EQ(a.done, 0);
    floe_group_tick(c, 100);
    CHECK_EQ(a.done, 1);
    CHECK_EQ(a.error, 0);
    CHECK_STR(a.protocol, "roundrobin");
    CHECK_STR(b.protocol, "roundrobin");
    CHECK_STR(a.meta[1], "rr");
    /* a member supporting only range cannot join a group where one member
     * ... here all support range, so range-only is fine, roundrobin-only is
     * fine; but a member with a protocol nobody has is rejected */
    floe_group_protocol_t other[] = {{"sticky", (const uint8_t *)"s", 1}};
    r3 = jreq("g", "", 2);
    r3.protocols = other;
    floe_group_join(c, &r3, 60, on_join, &x);
    CHECK_EQ(x.error, FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL);
    /* a range-only member joining moves the group to range */
    jres_t d = {0}, a2 = {0}, b2 = {0};
    r3 = jreq("g", "", 2);
    floe_group_join(c, &r3, 70, on_join, &d);
    r1.member_id = a.member_id;
    r2.member_id = b.member_id;
    floe_group_join(c, &r1, 71, on_join, &a2);
    floe_group_join(c, &r2, 72, on_join, &b2);
    CHECK_EQ(d.done, 1);
    CHECK_STR(d.protocol, "range");
    CHECK_EQ(a2.member_count, 3);
    CHECK_STR(a2.meta[0], "r2");
    floe_group_coord_free(c);
}

/* Session timeout: a silent member is removed, the rest rebalance;
 * heartbeats keep members alive. */
static void session_expiry(void)
{
    floe_group_coord_t *c = coord(0);
    jres_t a = {0}, b = {0}, a2 = {0}, a3 = {0};
    join(c, "g", "", 0, &a);
    join(c, "g", "", 0, &b);
    join(c, "g", a.member_id, 0, &a2);
    sres_t s1 = {0}, s2 = {0};
    sync_req(c, "g", a.member_id, 2, 0, NULL, 0, &s1);
    sync_req(c, "g", b.member_id, 2, 0, NULL, 0, &s2);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_STABLE);
    for (int64_t t = 500; t <= 3000; t += 500)
        CHECK_EQ(floe_group_heartbeat(c, "g", a.member_id, NULL, 2, t), 0);
    floe_group_tick(c, 999);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_STABLE);
    floe_group_tick(c, 3000); /* b silent since 0 */
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_PREPARING_REBALANCE);
    CHECK_EQ(floe_group_heartbeat(c, "g", a.member_id, NULL, 2, 3001),
             FLOE_GERR_REBALANCE_IN_PROGRESS);
    join(c, "g", a.member_id, 3002, &a3);
    CHECK_EQ(a3.generation, 3);
    CHECK_EQ(a3.member_count, 1);
    /* a stops too: the group empties */
    sres_t s3 = {0};
    sync_req(c, "g", a.member_id, 3, 0, NULL, 3003, &s3);
    floe_group_tick(c, 4003);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_EMPTY);
    floe_group_desc_t d;
    floe_group_describe(c, "g", &d);
    CHECK_EQ(d.generation_id, 4);
    floe_group_desc_free(&d);
    /* with no offsets it is forgotten after the retention */
    floe_group_tick(c, 4003 + 600000);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_DEAD);
    CHECK_EQ(floe_group_next_deadline(c), INT64_MAX);
    floe_group_coord_free(c);
}

/* LeaveGroup: the leader leaves, another member leads; a member leaving
 * during a rebalance lets it finish without waiting. */
static void leave_group(void)
{
    floe_group_coord_t *c = coord(0);
    jres_t a = {0}, b = {0}, a2 = {0}, b2 = {0}, cc = {0};
    join(c, "g", "", 0, &a);
    join(c, "g", "", 0, &b);
    join(c, "g", a.member_id, 0, &a2);
    sres_t s1 = {0}, s2 = {0};
    sync_req(c, "g", a.member_id, 2, 0, NULL, 0, &s1);
    sync_req(c, "g", b.member_id, 2, 0, NULL, 0, &s2);
    CHECK_EQ(floe_group_leave(c, "g", a.member_id, NULL, 10), 0);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_PREPARING_REBALANCE);
    CHECK_EQ(floe_group_leave(c, "g", a.member_id, NULL, 10), FLOE_GERR_UNKNOWN_MEMBER_ID);
    join(c, "g", b.member_id, 11, &b2);
    CHECK_EQ(b2.done, 1);
    CHECK_EQ(b2.generation, 3);
    CHECK_STR(b2.leader_id, b.member_id);
    CHECK_EQ(b2.member_count, 1);
    /* a new member joins; b leaves instead of rejoining */
    join(c, "g", "", 20, &cc);
    CHECK_EQ(cc.done, 0);
    CHECK_EQ(floe_group_leave(c, "g", b.member_id, NULL, 21), 0);
    CHECK_EQ(cc.done, 1);
    CHECK_EQ(cc.generation, 4);
    CHECK_STR(cc.leader_id, cc.member_id);
    CHECK_EQ(floe_group_leave(c, "g", cc.member_id, NULL, 22), 0);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_EMPTY);
    floe_group_coord_free(c);
}

/* A rebalance starting while followers wait for their assignment tells
 * them REBALANCE_IN_PROGRESS. */
static void rebalance_interrupts_sync(void)
{
    floe_group_coord_t *c = coord(0);
    jres_t a = {0}, b = {0}, a2 = {0}, d = {0};
    join(c, "g", "", 0, &a);
    join(c, "g", "", 0, &b);
    join(c, "g", a.member_id, 0, &a2);
    sres_t sb = {0};
    sync_req(c, "g", b.member_id, 2, 0, NULL, 1, &sb);
    CHECK_EQ(sb.done, 0);
    /* a commit during CompletingRebalance is refused */
    CHECK_EQ(floe_group_commit_check(c, "g", b.member_id, NULL, 2, 1),
             FLOE_GERR_REBALANCE_IN_PROGRESS);
    join(c, "g", "", 2, &d);
    CHECK_EQ(sb.done, 1);
    CHECK_EQ(sb.error, FLOE_GERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_PREPARING_REBALANCE);
    sres_t late = {0};
    sync_req(c, "g", a.member_id, 2, 0, NULL, 3, &late);
    CHECK_EQ(late.error, FLOE_GERR_REBALANCE_IN_PROGRESS);
    floe_group_coord_free(c);
}

/* Rejoining with the same metadata while Stable returns the current
 * generation (no rebalance); the leader rejoining triggers one. */
static void rejoin_stable(void)
{
    floe_group_coord_t *c = coord(0);
    jres_t a = {0}, b = {0}, a2 = {0}, b2 = {0};
    join(c, "g", "", 0, &a);
    join(c, "g", "", 0, &b);
    join(c, "g", a.member_id, 0, &a2);
    sres_t s1 = {0}, s2 = {0};
    sync_req(c, "g", a.member_id, 2, 0, NULL, 0, &s1);
    sync_req(c, "g", b.member_id, 2, 0, NULL, 0, &s2);
    join(c, "g", b.member_id, 5, &b2);
    CHECK_EQ(b2.done, 1);
    CHECK_EQ(b2.generation, 2);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_STABLE);
    join(c, "g", a.member_id, 6, &a2);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_PREPARING_REBALANCE);
    floe_group_coord_free(c);
}

/* Static members: a restarted instance takes its slot back without a
 * rebalance; the old member id is fenced. */
static void static_membership(void)
{
    floe_group_coord_t *c = coord(0);
    floe_group_join_req_t r1 = jreq("g", "", 5), r2 = jreq("g", "", 5);
    r1.instance_id = "i1";
    r2.instance_id = "i2";
    jres_t a = {0}, b = {0}, a2 = {0}, b2 = {0};
    floe_group_join(c, &r1, 0, on_join, &a);
    CHECK_EQ(a.error, 0); /* static members skip MEMBER_ID_REQUIRED */
    CHECK(strncmp(a.member_id, "i1-", 3) == 0);
    floe_group_join(c, &r2, 0, on_join, &b);
    r1.member_id = a.member_id;
    floe_group_join(c, &r1, 0, on_join, &a2);
    CHECK_EQ(b.generation, 2);
    sres_t s1 = {0}, s2 = {0};
    floe_group_assignment_t as[] = {{a.member_id, (const uint8_t *)"A", 1},
                                    {b.member_id, (const uint8_t *)"B", 1}};
    sync_req(c, "g", b.member_id, 2, 0, NULL, 0, &s2);
    sync_req(c, "g", a.member_id, 2, 2, as, 0, &s1);
    CHECK_STR(s2.assignment, "B");
    /* i2 restarts with no member id */
    floe_group_join(c, &r2, 10, on_join, &b2);
    CHECK_EQ(b2.error, 0);
    CHECK_EQ(b2.generation, 2);
    CHECK(strcmp(b2.member_id, b.member_id) != 0);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_STABLE);
    sres_t s3 = {0};
    floe_group_sync_req_t sr = {
        .group_id = "g", .member_id = b2.member_id, .instance_id = "i2", .generation_id = 2};
    floe_group_sync(c, &sr, 11, on_sync, &s3);
    CHECK_STR(s3.assignment, "B");
    /* the old incarnation is fenced */
    CHECK_EQ(floe_group_heartbeat(c, "g", b.member_id, "i2", 2, 12), FLOE_GERR_FENCED_INSTANCE_ID);
    CHECK_EQ(floe_group_commit_check(c, "g", b.member_id, "i2", 2, 12),
             FLOE_GERR_FENCED_INSTANCE_ID);
    /* leave by instance id alone */
    CHECK_EQ(floe_group_leave(c, "g", "", "i2", 13), 0);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_PREPARING_REBALANCE);
    floe_group_coord_free(c);
}

static void count_group(void *o, const char *g, const char *pt, floe_group_state_t st)
{
    (void)pt;
    (void)st;
    (void)g;
    (*(int *)o)++;
}

static void offsets_and_delete(void)
{
    floe_group_coord_t *c = coord(0);
    /* standalone commit on an unknown group */
    CHECK_EQ(floe_group_commit_check(c, "solo", "", NULL, -1, 0), 0);
    CHECK_EQ(floe_group_commit_check(c, "solo", "", NULL, 3, 0), FLOE_GERR_ILLEGAL_GENERATION);
    floe_group_offset_t o = {
        .offset = 42, .leader_epoch = -1, .metadata = "m", .commit_timestamp = 1000};
    CHECK_EQ(floe_group_offset_put(c, "solo", "t", 1, &o, 0), 0);
    o.offset = 7;
    CHECK_EQ(floe_group_offset_put(c, "solo", "t", 0, &o, 0), 0);
    o.offset = 9;
    CHECK_EQ(floe_group_offset_put(c, "solo", "a", 5, &o, 0), 0);
    o.offset = 43;
    CHECK_EQ(floe_group_offset_put(c, "solo", "t", 1, &o, 0), 0);
    floe_group_offset_t got;
    CHECK_EQ(floe_group_offset_get(c, "solo", "t", 1, &got), 0);
    CHECK_EQ(got.offset, 43);
    CHECK_STR(got.metadata, "m");
    CHECK_EQ(floe_group_offset_get(c, "solo", "t", 2, &got), -1);
    CHECK_EQ(floe_group_state(c, "solo"), FLOE_GROUP_EMPTY);
    int n = 0;
    floe_group_list(c, count_group, &n);
    CHECK_EQ(n, 1);
    /* the group stays while it has offsets */
    floe_group_tick(c, 10000000);
    CHECK_EQ(floe_group_state(c, "solo"), FLOE_GROUP_EMPTY);
    CHECK_EQ(floe_group_commit_check_partition(c, "short"), 0);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    CHECK_EQ(floe_group_commit_check_partition(c, big), FLOE_GERR_OFFSET_METADATA_TOO_LARGE);

    /* group members must commit in their generation */
    jres_t a = {0};
    join(c, "g", "", 0, &a);
    CHECK_EQ(floe_group_commit_check(c, "g", a.member_id, NULL, 1, 1),
             FLOE_GERR_REBALANCE_IN_PROGRESS);
    sres_t s = {0};
    sync_req(c, "g", a.member_id, 1, 0, NULL, 1, &s);
    CHECK_EQ(floe_group_commit_check(c, "g", a.member_id, NULL, 1, 2), 0);
    CHECK_EQ(floe_group_commit_check(c, "g", a.member_id, NULL, 0, 2),
             FLOE_GERR_ILLEGAL_GENERATION);
    CHECK_EQ(floe_group_commit_check(c, "g", "x", NULL, 1, 2), FLOE_GERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ(floe_group_commit_check(c, "g", "", NULL, -1, 2), FLOE_GERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ(floe_group_delete(c, "g"), FLOE_GERR_NON_EMPTY_GROUP);
    CHECK_EQ(floe_group_delete(c, "nope"), FLOE_GERR_GROUP_ID_NOT_FOUND);
    CHECK_EQ(floe_group_delete(c, "solo"), 0);
    CHECK_EQ(floe_group_state(c, "solo"), FLOE_GROUP_DEAD);
    CHECK_EQ(floe_group_offset_get(c, "solo", "t", 1, &got), -1);
    floe_group_offset_put(c, "g", "t", 0, &o, 3);
    floe_group_offset_remove(c, "g", "t", 0);
    CHECK_EQ(floe_group_state(c, "g"), FLOE_GROUP_STABLE); /* members keep it */
    floe_group_coord_free(c);
}

/* A pending join is answered (with an error) when the coordinator goes. */
static int freed_count;
static void on_join_count(void *o, const floe_group_join_res_t *r)
{
    (void)o;
    if (r->error == FLOE_GERR_COORDINATOR_NOT_AVAILABLE) freed_count++;
}

static void free_completes_pending(void)
{
    floe_group_coord_t *c = coord(1000);
    floe_group_join_req_t r = jreq("g", "", 2);
    floe_group_join(c, &r, 0, on_join_count, NULL);
    floe_group_join(c, &r, 0, on_join_count, NULL);
    freed_count = 0;
    floe_group_coord_free(c);
    CHECK_EQ(freed_count, 2);
}

static void shutdown_answers_pending(void)
{
    floe_group_coord_t *c = coord(1000);
    jres_t a = {0}, b = {0};
    join(c, "g", "", 0, &a);
    CHECK_EQ(a.done, 0);
    floe_group_shutdown(c);
    CHECK_EQ(a.done, 1);
    CHECK_EQ(a.error, FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
    join(c, "g", "", 1, &b);
    CHECK_EQ(b.error, FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
    floe_group_coord_free(c);
}

static void add_name(void *o, const char *g, const char *t, int32_t p)
{
    (void)t;
    (void)p;
    strcat(o, g);
    strcat(o, ";");
}

/* An Empty group that had members keeps its offsets for the retention
 * after it became empty; commit-only groups by commit timestamp. */
static void offsets_retention(void)
{
    floe_group_config_t cfg;
    floe_group_config_default(&cfg);
    cfg.initial_rebalance_delay_ms = 0;
    cfg.min_session_timeout_ms = 10;
    cfg.offsets_retention_ms = 1000;
    floe_group_coord_t *c;
    floe_err_t err;
    CHECK_EQ(floe_group_coord_new(&cfg, &c, &err), 0);
    jres_t a = {0};
    join(c, "m", "", 0, &a);
    sres_t s = {0};
    sync_req(c, "m", a.member_id, 1, 0, NULL, 0, &s);
    floe_group_offset_t o = {
        .offset = 1, .leader_epoch = -1, .metadata = "", .commit_timestamp = 0};
    CHECK_EQ(floe_group_offset_put(c, "m", "t", 0, &o, 0), 0);
    CHECK_EQ(floe_group_offset_put(c, "solo", "t", 0, &o, 0), 0);
    char names[128] = "";
    floe_group_offsets_expired(c, 5000, 999, add_name, names);
    CHECK_STR(names, ""); /* m has a member; solo's commit is 999 ms old */
    floe_group_offsets_expired(c, 5000, 1000, add_name, names);
    CHECK_STR(names, "solo;");
    CHECK_EQ(floe_group_leave(c, "m", a.member_id, NULL, 6000), 0);
    CHECK_EQ(floe_group_state(c, "m"), FLOE_GROUP_EMPTY);
    names[0] = 0;
    floe_group_offsets_expired(c, 6999, 0, add_name, names);
    CHECK_STR(names, "");
    floe_group_offsets_expired(c, 7000, 0, add_name, names);
    CHECK_STR(names, "m;");
    floe_group_coord_free(c);
}

TEST_MAIN(floe_diag_set_level(FLOE_DIAG_WARN); RUN(offsets_retention);
          RUN(shutdown_answers_pending); RUN(member_id_required_flow); RUN(pending_member_expires);
          RUN(invalid_requests); RUN(two_members_join_and_sync);
          RUN(rebalance_timeout_drops_laggard); RUN(rebalance_timeout_expiry);
          RUN(initial_rebalance_delay); RUN(protocol_selection); RUN(session_expiry);
          RUN(leave_group); RUN(rebalance_interrupts_sync); RUN(rejoin_stable);
          RUN(static_membership); RUN(offsets_and_delete); RUN(free_completes_pending))
