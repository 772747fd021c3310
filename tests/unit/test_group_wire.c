/* The group APIs over the wire: an in-process Kafka server with only the
 * groups module (no broker: offsets in memory), driven by a raw client that
 * encodes requests with the declared codecs, at old and flexible versions;
 * and the module's server config keys, each through its table. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kafka/group.h"
#include "kafka/groups_module.h"
#include "kafka/proto.h"
#include "kafka/proto_gen.h"
#include "kafka/server.h"
#include "net/loop.h"
#include "test.h"
#include "util/clock.h"

static floe_loop_t *loop;
static floe_kafka_srv_t *srv;
static pthread_t loop_thread;
static int port;

static void *run_loop(void *arg)
{
    (void)arg;
    floe_err_t err;
    floe_loop_run(loop, &err);
    return NULL;
}

static void server_start(void)
{
    floe_err_t err;
    if (floe_groups_config_set("group.initial.rebalance.delay.ms", "0", &err) ||
        floe_groups_config_set("group.min.session.timeout.ms", "100", &err) ||
        floe_loop_new(&loop, &err))
        abort();
    floe_kafka_srv_config_t cfg = {.host = "127.0.0.1", .port = 0};
    if (floe_kafka_srv_new(loop, &cfg, NULL, &srv, &err)) {
        fprintf(stderr, "server: %s\n", err.msg);
        abort();
    }
    static const floe_kafka_module_t *const mods[] = {&floe_groups_module, NULL};
    if (floe_kafka_srv_add_modules(srv, mods, &err)) {
        fprintf(stderr, "modules: %s\n", err.msg);
        abort();
    }
    port = floe_kafka_srv_port(srv);
    pthread_create(&loop_thread, NULL, run_loop, NULL);
}

static void server_stop(void)
{
    floe_loop_stop(loop);
    pthread_join(loop_thread, NULL);
    floe_kafka_srv_shutdown(srv, 100);
    floe_kafka_srv_free(srv);
    floe_loop_free(loop);
}

/* ---- a raw client ---- */

typedef struct client {
    int fd;
    int32_t corr;
    floe_arena_t arena;
} client_t;

static void client_open(client_t *c)
{
    memset(c, 0, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a)) abort();
    floe_arena_init(&c->arena, 0, 0);
}

static void client_close(client_t *c)
{
    close(c->fd);
    floe_arena_free(&c->arena);
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) abort();
        p += w;
        n -= (size_t)w;
    }
}

static void recv_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0) abort();
        p += r;
        n -= (size_t)r;
    }
}

/* Send one request (body: a floe_k_<api>_req_t). */
static void csend(client_t *c, int16_t key, int16_t ver, const void *body)
{
    const floe_kapi_t *api = floe_kapi_find(key);
    bool flex = floe_kapi_flexible(api, ver);
    floe_buf_t b = FLOE_BUF_INIT;
    floe_err_t err;
    floe_buf_append_be32(&b, 0);
    floe_buf_append_be16(&b, (uint16_t)key);
    floe_buf_append_be16(&b, (uint16_t)ver);
    floe_buf_append_be32(&b, (uint32_t)++c->corr);
    floe_buf_append_be16(&b, 4);
    floe_buf_append(&b, "test", 4);
    if (flex) floe_buf_append_u8(&b, 0); /* no tagged fields */
    if (floe_kproto_encode(api->req, ver, flex, body, &b, &err)) abort();
    floe_wr_be32(b.data, (uint32_t)(b.len - 4));
    send_all(c->fd, b.data, b.len);
    floe_buf_free(&b);
}

/* Read the next response into out (a floe_k_<api>_resp_t, arena-backed). */
static void crecv(client_t *c, int16_t key, int16_t ver, void *out)
{
    const floe_kapi_t *api = floe_kapi_find(key);
    bool flex = floe_kapi_flexible(api, ver);
    uint8_t lenb[4];
    recv_all(c->fd, lenb, 4);
    uint32_t n = floe_rd_be32(lenb);
    uint8_t *p = floe_arena_alloc(&c->arena, n);
    recv_all(c->fd, p, n);
    size_t off = 4;     /* correlation id */
    if (flex) off += 1; /* empty tagged fields */
    size_t used;
    floe_err_t err;
    if (floe_kproto_decode(api->resp, ver, flex, p + off, n - off, &used, &c->arena, out, &err)) {
        fprintf(stderr, "decode: %s\n", err.msg);
        abort();
    }
}

static floe_kstr_t S(const char *s)
{
    return floe_kstr(s);
}

static floe_k_join_group_req_t *join_req(client_t *c, const char *member)
{
    floe_k_join_group_req_t *r = floe_k_join_group_req_new(&c->arena);
    r->group_id = S("wg");
    r->session_timeout_ms = 10000;
    r->rebalance_timeout_ms = 10000;
    r->member_id = S(member);
    r->protocol_type = S("consumer");
    r->protocols.v = floe_k_join_group_req_join_group_request_protocol_new_array(&c->arena, 1);
    r->protocols.n = 1;
    r->protocols.v[0].name = S("range");
    r->protocols.v[0].metadata.ptr = (const uint8_t *)"META";
    r->protocols.v[0].metadata.len = 4;
    return r;
}

static int16_t heartbeat(client_t *c, int16_t ver, const char *member, int32_t gen)
{
    floe_k_heartbeat_req_t *r = floe_k_heartbeat_req_new(&c->arena);
    r->group_id = S("wg");
    r->member_id = S(member);
    r->generation_id = gen;
    csend(c, FLOE_KAPI_HEARTBEAT, ver, r);
    floe_k_heartbeat_resp_t rs;
    crecv(c, FLOE_KAPI_HEARTBEAT, ver, &rs);
    return rs.error_code;
}

static void wire_find_coordinator(void)
{
    client_t c;
    client_open(&c);
    floe_k_find_coordinator_req_t *r = floe_k_find_coordinator_req_new(&c.arena);
    r->key = S("wg");
    csend(&c, FLOE_KAPI_FIND_COORDINATOR, 2, r);
    floe_k_find_coordinator_resp_t rs;
    crecv(&c, FLOE_KAPI_FIND_COORDINATOR, 2, &rs);
    CHECK_EQ(rs.error_code, 0);
    CHECK_EQ(rs.port, port);
    CHECK(floe_kstr_eq(rs.host, "127.0.0.1"));
    r->coordinator_keys.v = floe_arena_calloc(&c.arena, 2, sizeof(floe_kstr_t));
    r->coordinator_keys.v[0] = S("a");
    r->coordinator_keys.v[1] = S("b");
    r->coordinator_keys.n = 2;
    csend(&c, FLOE_KAPI_FIND_COORDINATOR, 4, r);
    crecv(&c, FLOE_KAPI_FIND_COORDINATOR, 4, &rs);
    CHECK_EQ(rs.coordinators.n, 2);
    if (rs.coordinators.n == 2) {
        CHECK(floe_kstr_eq(rs.coordinators.v[1].key, "b"));
        CHECK_EQ(rs.coordinators.v[1].port, port);
    }
    client_close(&c);
}

/* Two members over two connections, JoinGroup answered late for the one
 * that waits; SyncGroup; commits and fetches; describe, list, leave,
 * delete. */
static void wire_group_lifecycle(void)
{
    client_t a, b;
    client_open(&a);
    client_open(&b);
    /* v5: MEMBER_ID_REQUIRED first */
    floe_k_join_group_req_t *ja = join_req(&a, "");
    csend(&a, FLOE_KAPI_JOIN_GROUP, 5, ja);
    floe_k_join_group_resp_t jr;
    crecv(&a, FLOE_KAPI_JOIN_GROUP, 5, &jr);
    CHECK_EQ(jr.error_code, FLOE_GERR_MEMBER_ID_REQUIRED);
    char ida[200];
    snprintf(ida, sizeof ida, "%.*s", jr.member_id.len, jr.member_id.ptr);
    CHECK(strncmp(ida, "test-", 5) == 0);
    ja->member_id = S(ida);
    csend(&a, FLOE_KAPI_JOIN_GROUP, 5, ja);
    crecv(&a, FLOE_KAPI_JOIN_GROUP, 5, &jr);
    CHECK_EQ(jr.error_code, 0);
    CHECK_EQ(jr.generation_id, 1);
    CHECK(floe_kstr_eq(jr.leader, ida));
    CHECK_EQ(jr.members.n, 1);
    /* leader syncs at v3 */
    floe_k_sync_group_req_t *sa = floe_k_sync_group_req_new(&a.arena);
    sa->group_id = S("wg");
    sa->generation_id = 1;
    sa->member_id = S(ida);
    sa->assignments.v = floe_k_sync_group_req_sync_group_request_assignment_new_array(&a.arena, 1);
    sa->assignments.n = 1;
    sa->assignments.v[0].member_id = S(ida);
    sa->assignments.v[0].assignment.ptr = (const uint8_t *)"ALL";
    sa->assignments.v[0].assignment.len = 3;
    csend(&a, FLOE_KAPI_SYNC_GROUP, 3, sa);
    floe_k_sync_group_resp_t sr;
    crecv(&a, FLOE_KAPI_SYNC_GROUP, 3, &sr);
    CHECK_EQ(sr.error_code, 0);
    CHECK_EQ(sr.assignment.len, 3);

    /* b joins with v2 (no MEMBER_ID_REQUIRED): its answer waits for a */
    floe_k_join_group_req_t *jb = join_req(&b, "");
    csend(&b, FLOE_KAPI_JOIN_GROUP, 2, jb);
    /* b's join arrives on another connection: wait until a sees it */
    int16_t hb = 0;
    for (int64_t until = floe_mono_ms() + 60000; /* a hang guard */
         hb != FLOE_GERR_REBALANCE_IN_PROGRESS && floe_mono_ms() < until;) {
        hb = heartbeat(&a, 0, ida, 1);
        if (hb != FLOE_GERR_REBALANCE_IN_PROGRESS) usleep(2000);
    }
    CHECK_EQ(hb, FLOE_GERR_REBALANCE_IN_PROGRESS);
    csend(&a, FLOE_KAPI_JOIN_GROUP, 7, ja); /* a rejoins, flexible version */
    crecv(&a, FLOE_KAPI_JOIN_GROUP, 7, &jr);
    CHECK_EQ(jr.error_code, 0);
    CHECK_EQ(jr.generation_id, 2);
    CHECK_EQ(jr.members.n, 2);
    CHECK(floe_kstr_eq(jr.protocol_type, "consumer"));
    CHECK(floe_kstr_eq(jr.protocol_name, "range"));
    floe_k_join_group_resp_t jrb;
    crecv(&b, FLOE_KAPI_JOIN_GROUP, 2, &jrb);
    CHECK_EQ(jrb.error_code, 0);
    CHECK_EQ(jrb.generation_id, 2);
    CHECK_EQ(jrb.members.n, 0);
    CHECK(floe_kstr_eq(jrb.leader, ida));
    char idb[200];
    snprintf(idb, sizeof idb, "%.*s", jrb.member_id.len, jrb.member_id.ptr);

    /* b (follower) syncs first and waits; a's sync (v5) releases it */
    floe_k_sync_group_req_t *sb = floe_k_sync_group_req_new(&b.arena);
    sb->group_id = S("wg");
    sb->generation_id = 2;
    sb->member_id = S(idb);
    csend(&b, FLOE_KAPI_SYNC_GROUP, 4, sb);
    sa->generation_id = 2;
    sa->protocol_type = S("consumer");
    sa->protocol_name = S("range");
    sa->assignments.v = floe_k_sync_group_req_sync_group_request_assignment_new_array(&a.arena, 2);
    sa->assignments.n = 2;
    sa->assignments.v[0].member_id = S(ida);
    sa->assignments.v[0].assignment.ptr = (const uint8_t *)"P0";
    sa->assignments.v[0].assignment.len = 2;
    sa->assignments.v[1].member_id = S(idb);
    sa->assignments.v[1].assignment.ptr = (const uint8_t *)"P1P2";
    sa->assignments.v[1].assignment.len = 4;
    csend(&a, FLOE_KAPI_SYNC_GROUP, 5, sa);
    crecv(&a, FLOE_KAPI_SYNC_GROUP, 5, &sr);
    CHECK_EQ(sr.error_code, 0);
    CHECK(floe_kstr_eq(sr.protocol_name, "range"));
    floe_k_sync_group_resp_t srb;
    crecv(&b, FLOE_KAPI_SYNC_GROUP, 4, &srb);
    CHECK_EQ(srb.error_code, 0);
    CHECK(srb.assignment.len == 4 && memcmp(srb.assignment.ptr, "P1P2", 4) == 0);
    CHECK_EQ(heartbeat(&b, 4, idb, 2), 0);
    CHECK_EQ(heartbeat(&b, 4, idb, 1), FLOE_GERR_ILLEGAL_GENERATION);
    CHECK_EQ(heartbeat(&b, 4, "nobody", 2), FLOE_GERR_UNKNOWN_MEMBER_ID);

    /* OffsetCommit v8 (flexible) from b; a wrong generation is refused */
    floe_k_offset_commit_req_t *oc = floe_k_offset_commit_req_new(&b.arena);
    oc->group_id = S("wg");
    oc->generation_id_or_member_epoch = 2;
    oc->member_id = S(idb);
    oc->topics.v = floe_k_offset_commit_req_offset_commit_request_topic_new_array(&b.arena, 1);
    oc->topics.n = 1;
    oc->topics.v[0].name = S("t1");
    oc->topics.v[0].partitions.v =
        floe_k_offset_commit_req_offset_commit_request_partition_new_array(&b.arena, 2);
    oc->topics.v[0].partitions.n = 2;
    oc->topics.v[0].partitions.v[0].partition_index = 1;
    oc->topics.v[0].partitions.v[0].committed_offset = 11;
    oc->topics.v[0].partitions.v[0].committed_metadata = S("m1");
    oc->topics.v[0].partitions.v[1].partition_index = 2;
    oc->topics.v[0].partitions.v[1].committed_offset = 22;
    csend(&b, FLOE_KAPI_OFFSET_COMMIT, 8, oc);
    floe_k_offset_commit_resp_t ocr;
    crecv(&b, FLOE_KAPI_OFFSET_COMMIT, 8, &ocr);
    CHECK_EQ(ocr.topics.n, 1);
    CHECK_EQ(ocr.topics.v[0].partitions.n, 2);
    CHECK_EQ(ocr.topics.v[0].partitions.v[0].error_code, 0);
    CHECK_EQ(ocr.topics.v[0].partitions.v[1].partition_index, 2);
    oc->generation_id_or_member_epoch = 1;
    csend(&b, FLOE_KAPI_OFFSET_COMMIT, 2, oc);
    crecv(&b, FLOE_KAPI_OFFSET_COMMIT, 2, &ocr);
    CHECK_EQ(ocr.topics.v[0].partitions.v[0].error_code, FLOE_GERR_ILLEGAL_GENERATION);

    /* OffsetFetch v5 listed partitions (one never committed) */
    floe_k_offset_fetch_req_t *of = floe_k_offset_fetch_req_new(&a.arena);
    of->group_id = S("wg");
    of->topics.v = floe_k_offset_fetch_req_offset_fetch_request_topic_new_array(&a.arena, 1);
    of->topics.n = 1;
    of->topics.v[0].name = S("t1");
    of->topics.v[0].partition_indexes.v = floe_arena_calloc(&a.arena, 2, sizeof(int32_t));
    of->topics.v[0].partition_indexes.v[0] = 1;
    of->topics.v[0].partition_indexes.v[1] = 0;
    of->topics.v[0].partition_indexes.n = 2;
    csend(&a, FLOE_KAPI_OFFSET_FETCH, 5, of);
    floe_k_offset_fetch_resp_t ofr;
    crecv(&a, FLOE_KAPI_OFFSET_FETCH, 5, &ofr);
    CHECK_EQ(ofr.topics.n, 1);
    if (ofr.topics.n == 1 && ofr.topics.v[0].partitions.n == 2) {
        CHECK_EQ(ofr.topics.v[0].partitions.v[0].committed_offset, 11);
        CHECK(floe_kstr_eq(ofr.topics.v[0].partitions.v[0].metadata, "m1"));
        CHECK_EQ(ofr.topics.v[0].partitions.v[1].committed_offset, -1);
    } else {
        CHECK(0);
    }
    /* v7 with null topics: everything committed */
    of->topics.n = -1;
    of->topics.v = NULL;
    csend(&a, FLOE_KAPI_OFFSET_FETCH, 7, of);
    crecv(&a, FLOE_KAPI_OFFSET_FETCH, 7, &ofr);
    CHECK_EQ(ofr.topics.n, 1);
    if (ofr.topics.n == 1) {
        CHECK_EQ(ofr.topics.v[0].partitions.n, 2);
        CHECK_EQ(ofr.topics.v[0].partitions.v[1].committed_offset, 22);
    }
    /* v8: groups array, one known, one unknown */
    floe_k_offset_fetch_req_t *of8 = floe_k_offset_fetch_req_new(&a.arena);
    of8->groups.v = floe_k_offset_fetch_req_offset_fetch_request_group_new_array(&a.arena, 2);
    of8->groups.n = 2;
    of8->groups.v[0].group_id = S("wg");
    of8->groups.v[0].topics.n = -1;
    of8->groups.v[1].group_id = S("other");
    of8->groups.v[1].topics.n = -1;
    csend(&a, FLOE_KAPI_OFFSET_FETCH, 8, of8);
    crecv(&a, FLOE_KAPI_OFFSET_FETCH, 8, &ofr);
    CHECK_EQ(ofr.groups.n, 2);
    if (ofr.groups.n == 2) {
        CHECK_EQ(ofr.groups.v[0].topics.n, 1);
        CHECK_EQ(ofr.groups.v[1].topics.n, 0);
        if (ofr.groups.v[0].topics.n == 1)
            CHECK_EQ(ofr.groups.v[0].topics.v[0].partitions.v[0].committed_offset, 11);
    }

    /* DescribeGroups v5 and ListGroups v4 with a state filter */
    floe_k_describe_groups_req_t *dg = floe_k_describe_groups_req_new(&a.arena);
    dg->groups.v = floe_arena_calloc(&a.arena, 2, sizeof(floe_kstr_t));
    dg->groups.v[0] = S("wg");
    dg->groups.v[1] = S("nope");
    dg->groups.n = 2;
    csend(&a, FLOE_KAPI_DESCRIBE_GROUPS, 5, dg);
    floe_k_describe_groups_resp_t dgr;
    crecv(&a, FLOE_KAPI_DESCRIBE_GROUPS, 5, &dgr);
    CHECK_EQ(dgr.groups.n, 2);
    if (dgr.groups.n == 2) {
        CHECK(floe_kstr_eq(dgr.groups.v[0].group_state, "Stable"));
        CHECK(floe_kstr_eq(dgr.groups.v[0].protocol_data, "range"));
        CHECK_EQ(dgr.groups.v[0].members.n, 2);
        if (dgr.groups.v[0].members.n == 2) {
            CHECK(floe_kstr_eq(dgr.groups.v[0].members.v[0].client_id, "test"));
            CHECK(floe_kstr_eq(dgr.groups.v[0].members.v[0].client_host, "/127.0.0.1"));
            CHECK_EQ(dgr.groups.v[0].members.v[1].member_assignment.len, 4);
        }
        CHECK(floe_kstr_eq(dgr.groups.v[1].group_state, "Dead"));
    }
    floe_k_list_groups_req_t *lg = floe_k_list_groups_req_new(&a.arena);
    lg->states_filter.v = floe_arena_calloc(&a.arena, 1, sizeof(floe_kstr_t));
    lg->states_filter.v[0] = S("Stable");
    lg->states_filter.n = 1;
    csend(&a, FLOE_KAPI_LIST_GROUPS, 4, lg);
    floe_k_list_groups_resp_t lgr;
    crecv(&a, FLOE_KAPI_LIST_GROUPS, 4, &lgr);
    CHECK_EQ(lgr.groups.n, 1);
    if (lgr.groups.n == 1) CHECK(floe_kstr_eq(lgr.groups.v[0].group_id, "wg"));
    lg->states_filter.v[0] = S("Empty");
    csend(&a, FLOE_KAPI_LIST_GROUPS, 4, lg);
    crecv(&a, FLOE_KAPI_LIST_GROUPS, 4, &lgr);
    CHECK_EQ(lgr.groups.n, 0);

    /* DeleteGroups refuses a live group */
    floe_k_delete_groups_req_t *del = floe_k_delete_groups_req_new(&a.arena);
    del->groups_names.v = floe_arena_calloc(&a.arena, 2, sizeof(floe_kstr_t));
    del->groups_names.v[0] = S("wg");
    del->groups_names.v[1] = S("nope");
    del->groups_names.n = 2;
    csend(&a, FLOE_KAPI_DELETE_GROUPS, 2, del);
    floe_k_delete_groups_resp_t dr;
    crecv(&a, FLOE_KAPI_DELETE_GROUPS, 2, &dr);
    CHECK_EQ(dr.results.n, 2);
    if (dr.results.n == 2) {
        CHECK_EQ(dr.results.v[0].error_code, FLOE_GERR_NON_EMPTY_GROUP);
        CHECK_EQ(dr.results.v[1].error_code, FLOE_GERR_GROUP_ID_NOT_FOUND);
    }

    /* LeaveGroup v1 for a (single member), v4 batch for b and a stranger */
    floe_k_leave_group_req_t *lv = floe_k_leave_group_req_new(&a.arena);
    lv->group_id = S("wg");
    lv->member_id = S(ida);
    csend(&a, FLOE_KAPI_LEAVE_GROUP, 1, lv);
    floe_k_leave_group_resp_t lr;
    crecv(&a, FLOE_KAPI_LEAVE_GROUP, 1, &lr);
    CHECK_EQ(lr.error_code, 0);
    csend(&a, FLOE_KAPI_LEAVE_GROUP, 1, lv);
    crecv(&a, FLOE_KAPI_LEAVE_GROUP, 1, &lr);
    CHECK_EQ(lr.error_code, FLOE_GERR_UNKNOWN_MEMBER_ID);
    lv->members.v = floe_k_leave_group_req_member_identity_new_array(&a.arena, 2);
    lv->members.n = 2;
    lv->members.v[0].member_id = S(idb);
    lv->members.v[1].member_id = S("stranger");
    csend(&a, FLOE_KAPI_LEAVE_GROUP, 4, lv);
    crecv(&a, FLOE_KAPI_LEAVE_GROUP, 4, &lr);
    CHECK_EQ(lr.error_code, 0);
    CHECK_EQ(lr.members.n, 2);
    if (lr.members.n == 2) {
        CHECK_EQ(lr.members.v[0].error_code, 0);
        CHECK_EQ(lr.members.v[1].error_code, FLOE_GERR_UNKNOWN_MEMBER_ID);
    }
    /* now empty: deletable, and its offsets go with it */
    csend(&a, FLOE_KAPI_DELETE_GROUPS, 0, del);
    crecv(&a, FLOE_KAPI_DELETE_GROUPS, 0, &dr);
    CHECK_EQ(dr.results.n, 2);
    if (dr.results.n == 2) CHECK_EQ(dr.results.v[0].error_code, 0);
    of->topics.n = -1;
    csend(&a, FLOE_KAPI_OFFSET_FETCH, 7, of);
    crecv(&a, FLOE_KAPI_OFFSET_FETCH, 7, &ofr);
    CHECK_EQ(ofr.topics.n, 0);
    client_close(&a);
    client_close(&b);
}

/* A JoinGroup still waiting when the client disconnects does not upset the
 * server; the waiting member is dropped at the rebalance timeout. */
static void wire_disconnect_while_waiting(void)
{
    client_t a, b;
    client_open(&a);
    client_open(&b);
    floe_k_join_group_req_t *ja = join_req(&a, "");
    ja->group_id = S("dg");
    ja->session_timeout_ms = 200;
    ja->rebalance_timeout_ms = 200;
    csend(&a, FLOE_KAPI_JOIN_GROUP, 2, ja);
    floe_k_join_group_resp_t jr;
    crecv(&a, FLOE_KAPI_JOIN_GROUP, 2, &jr);
    CHECK_EQ(jr.error_code, 0);
    floe_k_join_group_req_t *jb = join_req(&b, "");
    jb->group_id = S("dg");
    jb->session_timeout_ms = 200;
    jb->rebalance_timeout_ms = 200;
    csend(&b, FLOE_KAPI_JOIN_GROUP, 2, jb);
    client_close(&b); /* b's join is pending */
    /* a never rejoins: the timer ends the rebalance and a's session */
    floe_k_describe_groups_req_t *dg = floe_k_describe_groups_req_new(&a.arena);
    dg->groups.v = floe_arena_calloc(&a.arena, 1, sizeof(floe_kstr_t));
    dg->groups.v[0] = S("dg");
    dg->groups.n = 1;
    floe_k_describe_groups_resp_t dgr;
    int64_t until = floe_mono_ms() + 60000; /* a hang guard */
    do {
        usleep(50000);
        csend(&a, FLOE_KAPI_DESCRIBE_GROUPS, 0, dg);
        crecv(&a, FLOE_KAPI_DESCRIBE_GROUPS, 0, &dgr);
    } while (floe_mono_ms() < until &&
             !(dgr.groups.n == 1 && floe_kstr_eq(dgr.groups.v[0].group_state, "Empty")));
    CHECK(dgr.groups.n == 1 && floe_kstr_eq(dgr.groups.v[0].group_state, "Empty"));
    client_close(&a);
}

/* The group coordinator's keys, each through its table: the default
 * parses, junk and a value past the range are refused naming the key, and
 * the session timeouts must stay ordered.  (After the server: it copied
 * its config at start.) */
static void group_config_keys_from_their_table(void)
{
    size_t n;
    const floe_conf_key_t *k = floe_groups_config_keys(&n);
    CHECK_EQ(n, 7);
    floe_err_t e;
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(floe_groups_config_set(k[i].name, k[i].def, &e), 0);
        CHECK_EQ(floe_groups_config_set(k[i].name, "abc", &e), -1);
        CHECK(!strncmp(e.msg, k[i].name, strlen(k[i].name)));
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)k[i].max + 1);
        CHECK_EQ(floe_groups_config_set(k[i].name, v, &e), -1);
        CHECK(strstr(e.msg, "is outside") != NULL);
    }
    CHECK_EQ(floe_groups_config_set("group.max.sise", "1", &e), 1);
    CHECK_EQ(floe_groups_config_check(&e), 0);
    CHECK_EQ(floe_groups_config_set("group.min.session.timeout.ms", "10s", &e), 0);
    CHECK_EQ(floe_groups_config_set("group.max.session.timeout.ms", "5s", &e), 0);
    CHECK_EQ(floe_groups_config_check(&e), -1);
    CHECK_STR(e.msg, "group.min.session.timeout.ms (10000) is above group.max.session.timeout.ms "
                     "(5000)");
    CHECK_EQ(floe_groups_config_set("group.max.session.timeout.ms", "30min", &e), 0);
    CHECK_EQ(floe_groups_config_check(&e), 0);
}

TEST_MAIN(server_start(); RUN(wire_find_coordinator); RUN(wire_group_lifecycle);
          RUN(wire_disconnect_while_waiting); server_stop();
          RUN(group_config_keys_from_their_table))
