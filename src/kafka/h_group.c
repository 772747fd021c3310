/* Wire handlers of the consumer group APIs: FindCoordinator, JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, ListGroups,
 * DescribeGroups, DeleteGroups.  They translate the generated request
 * structs into the coordinator's plain structs (kafka/group.h) and back;
 * JoinGroup and SyncGroup answer when the coordinator completes them.  One
 * timer follows floe_group_next_deadline for session expiry and rebalance
 * timeouts.  The broker itself coordinates every group. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kafka/broker.h"
#include "kafka/group.h"
#include "kafka/groups_module.h"
#include "kafka/handler.h"
#include "kafka/offset_store.h"
#include "util/clock.h"
#include "util/diag.h"

typedef struct gstate {
    floe_kafka_srv_t *srv;
    floe_group_coord_t *coord;
    floe_offset_store_t *store;
    floe_kafka_timer_t *timer;
    int64_t timer_at;                 /* monotonic ms the timer fires; INT64_MAX: none */
    floe_kafka_timer_t *expire_timer; /* offsets.retention.check.interval.ms */
    bool stopped;
} gstate_t;

/* ---- helpers ------------------------------------------------------------- */

/* Decoded strings are NUL-terminated; null ones become NULL. */
static const char *cs(floe_kstr_t s)
{
    return s.len < 0 ? NULL : s.ptr;
}

static const char *cs0(floe_kstr_t s)
{
    return s.len < 0 ? "" : s.ptr;
}

static floe_kstr_t ks(floe_arena_t *a, const char *s)
{
    if (!s) return floe_kstr_null();
    char *c = floe_arena_strndup(a, s, strlen(s));
    return c ? floe_kstr(c) : floe_kstr("");
}

static floe_kbytes_t kb(floe_arena_t *a, const uint8_t *p, size_t n)
{
    floe_kbytes_t b = {(const uint8_t *)"", 0};
    if (!n) return b;
    uint8_t *c = floe_arena_alloc(a, n);
    if (!c) return b;
    memcpy(c, p, n);
    b.ptr = c;
    b.len = (int32_t)n;
    return b;
}

static void timer_fire(void *arg);

/* Where __consumer_offsets lives: the broker's data dir; NULL without a
 * broker (offsets then stay in memory). */
static const char *groups_data_dir(floe_kafka_srv_t *srv)
{
    floe_broker_t *b = floe_kafka_srv_broker(srv);
    return b ? floe_broker_data_dir(b) : NULL;
}

/* Keep the one timer at the coordinator's next deadline. */
static void reschedule(gstate_t *st)
{
    if (st->stopped) return;
    int64_t at = floe_group_next_deadline(st->coord);
    if (st->timer && at >= st->timer_at) return;
    if (st->timer) {
        floe_kafka_timer_cancel(st->srv, st->timer);
        st->timer = NULL;
        st->timer_at = INT64_MAX;
    }
    if (at == INT64_MAX) return;
    int64_t delay = at - floe_mono_ms();
    if (delay < 0) delay = 0;
    st->timer = floe_kafka_timer_add(st->srv, delay, timer_fire, st);
    if (st->timer) st->timer_at = at;
}

static void timer_fire(void *arg)
{
    gstate_t *st = arg;
    st->timer = NULL;
    st->timer_at = INT64_MAX;
    floe_group_tick(st->coord, floe_mono_ms());
    reschedule(st);
}

/* "/127.0.0.1" from "127.0.0.1:5123", as Kafka shows client hosts. */
static const char *client_host(floe_kafka_req_t *req)
{
    const char *peer = floe_kafka_req_peer(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    const char *colon = strrchr(peer, ':');
    size_t n = colon ? (size_t)(colon - peer) : strlen(peer);
    char *h = floe_arena_alloc(a, n + 2);
    if (!h) return "";
    h[0] = '/';
    memcpy(h + 1, peer, n);
    h[n + 1] = 0;
    return h;
}

#define NEW_RESP(type, req)                               \
    type##_t *rs = type##_new(floe_kafka_req_arena(req)); \
    if (!rs) {                                            \
        floe_kafka_fail(req, "out of memory");            \
        return;                                           \
    }

/* ---- FindCoordinator ----------------------------------------------------- */

static void h_find_coordinator(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_find_coordinator_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    NEW_RESP(floe_k_find_coordinator_resp, req);
    int32_t node = floe_kafka_srv_node_id(st->srv);
    floe_kstr_t host = floe_kstr(floe_kafka_srv_host(st->srv));
    int32_t port = floe_kafka_srv_port(st->srv);
    rs->node_id = node;
    rs->host = host;
    rs->port = port;
    rs->error_message = floe_kstr_null();
    if (floe_kafka_req_version(req) >= 4 && rq->coordinator_keys.n > 0) {
        int32_t n = rq->coordinator_keys.n;
        rs->coordinators.v = floe_k_find_coordinator_resp_coordinator_new_array(a, n);
        if (!rs->coordinators.v) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        rs->coordinators.n = n;
        for (int32_t i = 0; i < n; i++) {
            floe_k_find_coordinator_resp_coordinator_t *c = &rs->coordinators.v[i];
            c->key = rq->coordinator_keys.v[i];
            c->node_id = node;
            c->host = host;
            c->port = port;
            c->error_code = 0;
            c->error_message = floe_kstr_null();
        }
    }
    floe_kafka_respond(req, rs);
}

/* ---- JoinGroup ----------------------------------------------------------- */

static void join_done(void *opaque, const floe_group_join_res_t *r)
{
    floe_kafka_req_t *req = opaque;
    floe_arena_t *a = floe_kafka_req_arena(req);
    floe_k_join_group_resp_t *rs = floe_k_join_group_resp_new(a);
    if (!rs) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    rs->error_code = r->error;
    rs->generation_id = r->generation_id;
    rs->protocol_type = r->protocol_type ? floe_kstr(r->protocol_type) : floe_kstr_null();
    /* before v7 the name is not nullable: an error answers "" */
    rs->protocol_name = r->protocol_name                   ? floe_kstr(r->protocol_name)
                        : floe_kafka_req_version(req) >= 7 ? floe_kstr_null()
                                                           : floe_kstr("");
    rs->leader = floe_kstr(r->leader_id ? r->leader_id : "");
    rs->member_id = floe_kstr(r->member_id ? r->member_id : "");
    if (r->member_count) {
        rs->members.v = floe_k_join_group_resp_join_group_response_member_new_array(
            a, (int32_t)r->member_count);
        if (!rs->members.v) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        rs->members.n = (int32_t)r->member_count;
        for (size_t i = 0; i < r->member_count; i++) {
            const floe_group_join_member_t *m = &r->members[i];
            rs->members.v[i].member_id = floe_kstr(m->member_id);
            rs->members.v[i].group_instance_id =
                m->instance_id ? floe_kstr(m->instance_id) : floe_kstr_null();
            rs->members.v[i].metadata.ptr = m->metadata ? m->metadata : (const uint8_t *)"";
            rs->members.v[i].metadata.len = (int32_t)m->metadata_len;
        }
    }
    /* the result is borrowed: encode now */
    floe_kafka_respond(req, rs);
}

static void h_join_group(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_join_group_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    int16_t ver = floe_kafka_req_version(req);
    int32_t np = rq->protocols.n > 0 ? rq->protocols.n : 0;
    floe_group_protocol_t *protos = np ? floe_arena_calloc(a, (size_t)np, sizeof *protos) : NULL;
    if (np && !protos) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    for (int32_t i = 0; i < np; i++) {
        protos[i].name = cs0(rq->protocols.v[i].name);
        floe_kbytes_t m = rq->protocols.v[i].metadata;
        protos[i].metadata = m.len > 0 ? m.ptr : NULL;
        protos[i].metadata_len = m.len > 0 ? (size_t)m.len : 0;
    }
    floe_group_join_req_t r = {
        .group_id = cs0(rq->group_id),
        .member_id = cs0(rq->member_id),
        .instance_id = cs(rq->group_instance_id),
        .client_id = floe_kafka_req_client_id(req),
        .client_host = client_host(req),
        .protocol_type = cs0(rq->protocol_type),
        .session_timeout_ms = rq->session_timeout_ms,
        .rebalance_timeout_ms = ver >= 1 && rq->rebalance_timeout_ms > 0 ? rq->rebalance_timeout_ms
                                                                         : rq->session_timeout_ms,
        .api_version = ver,
        .protocol_count = (size_t)np,
        .protocols = protos,
    };
    floe_group_join(st->coord, &r, floe_mono_ms(), join_done, req);
    reschedule(st);
}

/* ---- SyncGroup ----------------------------------------------------------- */

static void sync_done(void *opaque, const floe_group_sync_res_t *r)
{
    floe_kafka_req_t *req = opaque;
    floe_k_sync_group_resp_t *rs = floe_k_sync_group_resp_new(floe_kafka_req_arena(req));
    if (!rs) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    rs->error_code = r->error;
    rs->protocol_type = r->protocol_type ? floe_kstr(r->protocol_type) : floe_kstr_null();
    rs->protocol_name = r->protocol_name ? floe_kstr(r->protocol_name) : floe_kstr_null();
    rs->assignment.ptr = r->assignment_len ? r->assignment : (const uint8_t *)"";
    rs->assignment.len = (int32_t)r->assignment_len;
    floe_kafka_respond(req, rs);
}

static void h_sync_group(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_sync_group_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    int32_t n = rq->assignments.n > 0 ? rq->assignments.n : 0;
    floe_group_assignment_t *as = n ? floe_arena_calloc(a, (size_t)n, sizeof *as) : NULL;
    if (n && !as) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        as[i].member_id = cs0(rq->assignments.v[i].member_id);
        floe_kbytes_t b = rq->assignments.v[i].assignment;
        as[i].data = b.len > 0 ? b.ptr : NULL;
        as[i].len = b.len > 0 ? (size_t)b.len : 0;
    }
    floe_group_sync_req_t r = {
        .group_id = cs0(rq->group_id),
        .member_id = cs0(rq->member_id),
        .instance_id = cs(rq->group_instance_id),
        .generation_id = rq->generation_id,
        .protocol_type = cs(rq->protocol_type),
        .protocol_name = cs(rq->protocol_name),
        .assignment_count = (size_t)n,
        .assignments = as,
    };
    floe_group_sync(st->coord, &r, floe_mono_ms(), sync_done, req);
    reschedule(st);
}

/* ---- Heartbeat, LeaveGroup ----------------------------------------------- */

static void h_heartbeat(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_heartbeat_req_t *rq = floe_kafka_req_body(req);
    NEW_RESP(floe_k_heartbeat_resp, req);
    rs->error_code =
        floe_group_heartbeat(st->coord, cs0(rq->group_id), cs0(rq->member_id),
                             cs(rq->group_instance_id), rq->generation_id, floe_mono_ms());
    /* a heartbeat only pushes deadlines later: the timer stays; if it fires
     * early it finds nothing due and re-arms */
    floe_kafka_respond(req, rs);
}

static void h_leave_group(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_leave_group_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    NEW_RESP(floe_k_leave_group_resp, req);
    const char *group = cs0(rq->group_id);
    int64_t now = floe_mono_ms();
    if (floe_kafka_req_version(req) < 3) {
        rs->error_code = floe_group_leave(st->coord, group, cs0(rq->member_id), NULL, now);
    } else {
        int32_t n = rq->members.n > 0 ? rq->members.n : 0;
        if (n) {
            rs->members.v = floe_k_leave_group_resp_member_response_new_array(a, n);
            if (!rs->members.v) {
                floe_kafka_fail(req, "out of memory");
                return;
            }
            rs->members.n = n;
        }
        for (int32_t i = 0; i < n; i++) {
            const floe_k_leave_group_req_member_identity_t *m = &rq->members.v[i];
            int16_t e = floe_group_leave(st->coord, group, cs0(m->member_id),
                                         cs(m->group_instance_id), now);
            rs->members.v[i].member_id = m->member_id;
            rs->members.v[i].group_instance_id = m->group_instance_id;
            rs->members.v[i].error_code = e;
            if (e == FLOE_GERR_COORDINATOR_NOT_AVAILABLE) rs->error_code = e;
        }
    }
    reschedule(st);
    floe_kafka_respond(req, rs);
}

/* ---- OffsetCommit, OffsetFetch ------------------------------------------- */

/* Kafka refuses commits for partitions that do not exist.  Without a
 * broker (protocol tests) every partition is taken as known. */
static bool topic_partition_known(gstate_t *st, floe_kstr_t topic, int32_t partition)
{
    floe_broker_t *b = floe_kafka_srv_broker(st->srv);
    if (!b) return true;
    if (topic.len < 0) return false;
    floe_topic_t *t = floe_broker_topic(b, topic.ptr, (size_t)topic.len);
    return t && partition >= 0 && partition < floe_topic_partitions(t);
}

static void h_offset_commit(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_offset_commit_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    NEW_RESP(floe_k_offset_commit_resp, req);
    int32_t nt = rq->topics.n > 0 ? rq->topics.n : 0;
    size_t total = 0;
    for (int32_t t = 0; t < nt; t++)
        if (rq->topics.v[t].partitions.n > 0) total += (size_t)rq->topics.v[t].partitions.n;
    floe_offset_commit_part_t *parts = total ? floe_arena_calloc(a, total, sizeof *parts) : NULL;
    if (nt) rs->topics.v = floe_k_offset_commit_resp_offset_commit_response_topic_new_array(a, nt);
    if ((total && !parts) || (nt && !rs->topics.v)) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    rs->topics.n = nt;
    size_t k = 0;
    for (int32_t t = 0; t < nt; t++) {
        const floe_k_offset_commit_req_offset_commit_request_topic_t *tp = &rq->topics.v[t];
        for (int32_t p = 0; p < tp->partitions.n; p++, k++) {
            const floe_k_offset_commit_req_offset_commit_request_partition_t *pp =
                &tp->partitions.v[p];
            parts[k].topic = cs0(tp->name);
            parts[k].partition = pp->partition_index;
            parts[k].offset = pp->committed_offset;
            parts[k].leader_epoch = pp->committed_leader_epoch;
            parts[k].metadata = cs(pp->committed_metadata);
            parts[k].error = topic_partition_known(st, tp->name, pp->partition_index)
                                 ? 0
                                 : FLOE_GERR_UNKNOWN_TOPIC_OR_PARTITION;
        }
    }
    const char *group = cs0(rq->group_id);
    if (!*group) {
        for (size_t i = 0; i < total; i++) parts[i].error = FLOE_GERR_INVALID_GROUP_ID;
    } else if (!st->store) {
        int64_t now = floe_mono_ms(), wall = floe_wall_ms();
        int16_t ge =
            floe_group_commit_check(st->coord, group, cs0(rq->member_id), cs(rq->group_instance_id),
                                    rq->generation_id_or_member_epoch, now);
        for (size_t i = 0; i < total; i++) {
            if (parts[i].error) continue;
            parts[i].error =
                ge ? ge : floe_group_commit_check_partition(st->coord, parts[i].metadata);
            floe_group_offset_t o = {parts[i].offset, parts[i].leader_epoch,
                                     parts[i].metadata ? parts[i].metadata : "", wall};
            if (!parts[i].error && floe_group_offset_put(st->coord, group, parts[i].topic,
                                                         parts[i].partition, &o, now))
                parts[i].error = FLOE_GERR_UNKNOWN_SERVER_ERROR;
        }
    } else {
        floe_err_t err;
        if (floe_offset_store_commit(st->store, group, cs0(rq->member_id),
                                     cs(rq->group_instance_id), rq->generation_id_or_member_epoch,
                                     parts, total, floe_mono_ms(), floe_wall_ms(), &err))
            FLOE_ERROR("groups: offset commit for %s failed: %s", group, err.msg);
    }
    k = 0;
    for (int32_t t = 0; t < nt; t++) {
        const floe_k_offset_commit_req_offset_commit_request_topic_t *tp = &rq->topics.v[t];
        floe_k_offset_commit_resp_offset_commit_response_topic_t *rt = &rs->topics.v[t];
        rt->name = tp->name;
        int32_t np = tp->partitions.n > 0 ? tp->partitions.n : 0;
        if (np) {
            rt->partitions.v =
                floe_k_offset_commit_resp_offset_commit_response_partition_new_array(a, np);
            if (!rt->partitions.v) {
                floe_kafka_fail(req, "out of memory");
                return;
            }
            rt->partitions.n = np;
        }
        for (int32_t p = 0; p < np; p++, k++) {
            rt->partitions.v[p].partition_index = parts[k].partition;
            rt->partitions.v[p].error_code = parts[k].error;
        }
    }
    reschedule(st);
    floe_kafka_respond(req, rs);
}

/* The partitions of one topic, for "fetch all": collected from the sorted
 * iteration. */
typedef struct fetch_all {
    floe_arena_t *a;
    const char *group;
    const floe_group_coord_t *coord;
    int32_t ntopics;
    const char *last;
    bool oom;
    /* second pass */
    floe_k_offset_fetch_resp_offset_fetch_response_topics_t *topics;
    int32_t ti;
} fetch_all_t;

static void fa_count(void *o, const char *topic, int32_t p, const floe_group_offset_t *off)
{
    (void)p;
    (void)off;
    fetch_all_t *f = o;
    if (!f->last || strcmp(f->last, topic)) f->ntopics++;
    f->last = topic;
}

static int32_t fa_partitions(const floe_group_coord_t *c, const char *group, const char *topic);

typedef struct pcount {
    const char *topic;
    int32_t n;
} pcount_t;

static void pc_fn(void *o, const char *topic, int32_t p, const floe_group_offset_t *off)
{
    (void)p;
    (void)off;
    pcount_t *pc = o;
    if (!strcmp(topic, pc->topic)) pc->n++;
}

static int32_t fa_partitions(const floe_group_coord_t *c, const char *group, const char *topic)
{
    pcount_t pc = {topic, 0};
    floe_group_offsets_each(c, group, pc_fn, &pc);
    return pc.n;
}

static void fa_fill(void *o, const char *topic, int32_t p, const floe_group_offset_t *off)
{
    fetch_all_t *f = o;
    if (f->oom) return;
    if (!f->last || strcmp(f->last, topic)) {
        f->ti++;
        f->last = topic;
        floe_k_offset_fetch_resp_offset_fetch_response_topics_t *t = &f->topics[f->ti];
        t->name = ks(f->a, topic);
        int32_t n = fa_partitions(f->coord, f->group, topic);
        t->partitions.v =
            floe_k_offset_fetch_resp_offset_fetch_response_partitions_new_array(f->a, n);
        if (!t->partitions.v) {
            f->oom = true;
            return;
        }
        t->partitions.n = 0;
    }
    floe_k_offset_fetch_resp_offset_fetch_response_topics_t *t = &f->topics[f->ti];
    floe_k_offset_fetch_resp_offset_fetch_response_partitions_t *pp =
        &t->partitions.v[t->partitions.n++];
    pp->partition_index = p;
    pp->committed_offset = off->offset;
    pp->committed_leader_epoch = off->leader_epoch;
    pp->metadata = ks(f->a, off->metadata);
    pp->error_code = 0;
}

/* Fill one group's answer in the v8 shape (the v0-7 structs have the same
 * layout field for field, see below).  topics NULL = all committed. */
static int fetch_group(gstate_t *st, floe_arena_t *a, const char *group,
                       const floe_k_offset_fetch_req_offset_fetch_request_topics_t *topics,
                       int32_t ntopics, bool all,
                       floe_k_offset_fetch_resp_offset_fetch_response_topics_t **out_v,
                       int32_t *out_n)
{
    if (all) {
        fetch_all_t f = {.a = a, .group = group, .coord = st->coord};
        floe_group_offsets_each(st->coord, group, fa_count, &f);
        *out_n = f.ntopics;
        *out_v = NULL;
        if (!f.ntopics) return 0;
        f.topics = floe_k_offset_fetch_resp_offset_fetch_response_topics_new_array(a, f.ntopics);
        if (!f.topics) return -1;
        f.last = NULL;
        f.ti = -1;
        floe_group_offsets_each(st->coord, group, fa_fill, &f);
        *out_v = f.topics;
        return f.oom ? -1 : 0;
    }
    *out_n = ntopics;
    *out_v = NULL;
    if (!ntopics) return 0;
    floe_k_offset_fetch_resp_offset_fetch_response_topics_t *tv =
        floe_k_offset_fetch_resp_offset_fetch_response_topics_new_array(a, ntopics);
    if (!tv) return -1;
    for (int32_t t = 0; t < ntopics; t++) {
        tv[t].name = topics[t].name;
        int32_t np = topics[t].partition_indexes.n > 0 ? topics[t].partition_indexes.n : 0;
        tv[t].partitions.n = np;
        if (!np) continue;
        tv[t].partitions.v =
            floe_k_offset_fetch_resp_offset_fetch_response_partitions_new_array(a, np);
        if (!tv[t].partitions.v) return -1;
        for (int32_t p = 0; p < np; p++) {
            floe_k_offset_fetch_resp_offset_fetch_response_partitions_t *pp =
                &tv[t].partitions.v[p];
            floe_group_offset_t o;
            pp->partition_index = topics[t].partition_indexes.v[p];
            if (floe_group_offset_get(st->coord, group, cs0(topics[t].name), pp->partition_index,
                                      &o) == 0) {
                pp->committed_offset = o.offset;
                pp->committed_leader_epoch = o.leader_epoch;
                pp->metadata = ks(a, o.metadata);
            } else {
                pp->committed_offset = -1;
                pp->committed_leader_epoch = -1;
                pp->metadata = floe_kstr("");
            }
            pp->error_code = 0;
        }
    }
    *out_v = tv;
    return 0;
}

/* The v0-7 request/response topic structs match the v8 ones field for
 * field; the generator names them differently.  Check that at compile time
 * and share one filler. */
_Static_assert(sizeof(floe_k_offset_fetch_req_offset_fetch_request_topic_t) ==
                   sizeof(floe_k_offset_fetch_req_offset_fetch_request_topics_t),
               "offset fetch request topic layouts differ");
_Static_assert(sizeof(floe_k_offset_fetch_resp_offset_fetch_response_topic_t) ==
                   sizeof(floe_k_offset_fetch_resp_offset_fetch_response_topics_t),
               "offset fetch response topic layouts differ");
_Static_assert(sizeof(floe_k_offset_fetch_resp_offset_fetch_response_partition_t) ==
                   sizeof(floe_k_offset_fetch_resp_offset_fetch_response_partitions_t),
               "offset fetch response partition layouts differ");
#define SAME_FIELD(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #f " moved")
SAME_FIELD(floe_k_offset_fetch_req_offset_fetch_request_topic_t,
           floe_k_offset_fetch_req_offset_fetch_request_topics_t, partition_indexes);
SAME_FIELD(floe_k_offset_fetch_resp_offset_fetch_response_topic_t,
           floe_k_offset_fetch_resp_offset_fetch_response_topics_t, partitions);
SAME_FIELD(floe_k_offset_fetch_resp_offset_fetch_response_partition_t,
           floe_k_offset_fetch_resp_offset_fetch_response_partitions_t, committed_offset);
SAME_FIELD(floe_k_offset_fetch_resp_offset_fetch_response_partition_t,
           floe_k_offset_fetch_resp_offset_fetch_response_partitions_t, committed_leader_epoch);
SAME_FIELD(floe_k_offset_fetch_resp_offset_fetch_response_partition_t,
           floe_k_offset_fetch_resp_offset_fetch_response_partitions_t, metadata);
SAME_FIELD(floe_k_offset_fetch_resp_offset_fetch_response_partition_t,
           floe_k_offset_fetch_resp_offset_fetch_response_partitions_t, error_code);

static void h_offset_fetch(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_offset_fetch_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    NEW_RESP(floe_k_offset_fetch_resp, req);
    int16_t ver = floe_kafka_req_version(req);
    if (ver < 8) {
        floe_k_offset_fetch_resp_offset_fetch_response_topics_t *v;
        int32_t n;
        /* v0-1 have no null topics: an empty list there means none */
        bool all = rq->topics.n < 0;
        if (fetch_group(st, a, cs0(rq->group_id),
                        (const floe_k_offset_fetch_req_offset_fetch_request_topics_t *)rq->topics.v,
                        rq->topics.n > 0 ? rq->topics.n : 0, all, &v, &n)) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        rs->topics.v = (floe_k_offset_fetch_resp_offset_fetch_response_topic_t *)v;
        rs->topics.n = n;
    } else {
        int32_t ng = rq->groups.n > 0 ? rq->groups.n : 0;
        if (ng) {
            rs->groups.v = floe_k_offset_fetch_resp_offset_fetch_response_group_new_array(a, ng);
            if (!rs->groups.v) {
                floe_kafka_fail(req, "out of memory");
                return;
            }
            rs->groups.n = ng;
        }
        for (int32_t g = 0; g < ng; g++) {
            const floe_k_offset_fetch_req_offset_fetch_request_group_t *rg = &rq->groups.v[g];
            floe_k_offset_fetch_resp_offset_fetch_response_group_t *og = &rs->groups.v[g];
            og->group_id = rg->group_id;
            og->error_code = 0;
            if (fetch_group(st, a, cs0(rg->group_id), rg->topics.v,
                            rg->topics.n > 0 ? rg->topics.n : 0, rg->topics.n < 0, &og->topics.v,
                            &og->topics.n)) {
                floe_kafka_fail(req, "out of memory");
                return;
            }
        }
    }
    floe_kafka_respond(req, rs);
}

/* ---- ListGroups, DescribeGroups, DeleteGroups ---------------------------- */

typedef struct list_ctx {
    const floe_karr_str_t *filter;
    floe_arena_t *a;
    floe_k_list_groups_resp_listed_group_t *v;
    int32_t n;
    bool count_only;
} list_ctx_t;

static void list_fn(void *o, const char *group, const char *pt, floe_group_state_t s)
{
    list_ctx_t *l = o;
    const char *name = floe_group_state_name(s);
    if (l->filter->n > 0) {
        bool match = false;
        for (int32_t i = 0; i < l->filter->n && !match; i++)
            if (l->filter->v[i].len >= 0 && !strcasecmp(l->filter->v[i].ptr, name))
                match = true; /* Kafka parses states case-insensitively */
        if (!match) return;
    }
    if (!l->count_only) {
        l->v[l->n].group_id = ks(l->a, group);
        l->v[l->n].protocol_type = ks(l->a, pt);
        l->v[l->n].group_state = floe_kstr(name);
    }
    l->n++;
}

static void h_list_groups(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_list_groups_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    NEW_RESP(floe_k_list_groups_resp, req);
    list_ctx_t l = {.filter = &rq->states_filter, .a = a, .count_only = true};
    floe_group_list(st->coord, list_fn, &l);
    if (l.n) {
        int32_t n = l.n;
        l.v = floe_k_list_groups_resp_listed_group_new_array(a, n);
        if (!l.v) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        l.n = 0;
        l.count_only = false;
        floe_group_list(st->coord, list_fn, &l);
        rs->groups.v = l.v;
        rs->groups.n = l.n;
    }
    floe_kafka_respond(req, rs);
}

static void h_describe_groups(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_describe_groups_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    NEW_RESP(floe_k_describe_groups_resp, req);
    int32_t n = rq->groups.n > 0 ? rq->groups.n : 0;
    if (n) {
        rs->groups.v = floe_k_describe_groups_resp_described_group_new_array(a, n);
        if (!rs->groups.v) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        rs->groups.n = n;
    }
    for (int32_t i = 0; i < n; i++) {
        floe_k_describe_groups_resp_described_group_t *g = &rs->groups.v[i];
        g->group_id = rq->groups.v[i];
        floe_group_desc_t d;
        if (floe_group_describe(st->coord, cs0(rq->groups.v[i]), &d)) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        g->error_code = 0;
        g->group_state = floe_kstr(floe_group_state_name(d.state));
        g->protocol_type = ks(a, d.protocol_type);
        g->protocol_data = ks(a, d.protocol_name);
        if (d.member_count) {
            g->members.v = floe_k_describe_groups_resp_described_group_member_new_array(
                a, (int32_t)d.member_count);
            if (!g->members.v) {
                floe_group_desc_free(&d);
                floe_kafka_fail(req, "out of memory");
                return;
            }
            g->members.n = (int32_t)d.member_count;
            for (size_t k = 0; k < d.member_count; k++) {
                const floe_group_member_desc_t *m = &d.members[k];
                floe_k_describe_groups_resp_described_group_member_t *o = &g->members.v[k];
                o->member_id = ks(a, m->member_id);
                o->group_instance_id = ks(a, m->instance_id);
                o->client_id = ks(a, m->client_id);
                o->client_host = ks(a, m->client_host);
                o->member_metadata = kb(a, m->metadata, m->metadata_len);
                o->member_assignment = kb(a, m->assignment, m->assignment_len);
            }
        }
        floe_group_desc_free(&d);
    }
    floe_kafka_respond(req, rs);
}

static void h_delete_groups(floe_kafka_req_t *req, void *ctx)
{
    gstate_t *st = ctx;
    const floe_k_delete_groups_req_t *rq = floe_kafka_req_body(req);
    floe_arena_t *a = floe_kafka_req_arena(req);
    NEW_RESP(floe_k_delete_groups_resp, req);
    int32_t n = rq->groups_names.n > 0 ? rq->groups_names.n : 0;
    if (n) {
        rs->results.v = floe_k_delete_groups_resp_deletable_group_result_new_array(a, n);
        if (!rs->results.v) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        rs->results.n = n;
    }
    for (int32_t i = 0; i < n; i++) {
        floe_err_t err;
        rs->results.v[i].group_id = rq->groups_names.v[i];
        rs->results.v[i].error_code =
            st->store ? floe_offset_store_delete_group(st->store, cs0(rq->groups_names.v[i]), &err)
                      : floe_group_delete(st->coord, cs0(rq->groups_names.v[i]));
        if (rs->results.v[i].error_code == FLOE_GERR_UNKNOWN_SERVER_ERROR)
            FLOE_ERROR("groups: delete %s: %s", cs0(rq->groups_names.v[i]), err.msg);
    }
    reschedule(st);
    floe_kafka_respond(req, rs);
}

/* ---- the module ---------------------------------------------------------- */

/* The server config of the group coordinator: process-wide, set before
 * the server starts, copied by groups_init. */
typedef struct groups_conf {
    floe_group_config_t group;
    int64_t retention_minutes;  /* offsets.retention.minutes, into group */
    int64_t retention_check_ms; /* offsets.retention.check.interval.ms */
} groups_conf_t;

#define F(f) FLOE_CONF_FIELD(groups_conf_t, f)

static const floe_conf_key_t KEYS[] = {
    {.name = "group.initial.rebalance.delay.ms",
     .type = FLOE_CONF_DURATION,
     .max = 86400000,
     .def = "3000",
     F(group.initial_rebalance_delay_ms),
     .doc = "How long a new group waits for more members before its first rebalance."},
    {.name = "group.min.session.timeout.ms",
     .type = FLOE_CONF_DURATION,
     .max = 86400000,
     .def = "6000",
     F(group.min_session_timeout_ms),
     .doc = "Smallest session timeout a member may ask for."},
    {.name = "group.max.session.timeout.ms",
     .type = FLOE_CONF_DURATION,
     .min = 1,
     .max = 86400000,
     .def = "1800000",
     F(group.max_session_timeout_ms),
     .doc = "Largest session timeout a member may ask for; at least the smallest."},
    {.name = "group.max.size",
     .type = FLOE_CONF_INT,
     .min = 1,
     .max = INT32_MAX,
     .def = "2147483647",
     F(group.max_size),
     .doc = "Members a group may have; one more gets `GROUP_MAX_SIZE_REACHED`."},
    {.name = "offset.metadata.max.bytes",
     .type = FLOE_CONF_SIZE,
     .max = INT32_MAX,
     .def = "4096",
     F(group.offset_metadata_max_bytes),
     .doc = "Longest metadata string an offset commit may carry."},
    {.name = "offsets.retention.minutes",
     .type = FLOE_CONF_INT,
     .min = -1,
     .max = 525600000,
     .def = "10080",
     F(retention_minutes),
     .doc = "Committed offsets of a group that has been Empty this long (of commit-only groups: "
            "since their commit) are deleted; -1 keeps them forever."},
    {.name = "offsets.retention.check.interval.ms",
     .type = FLOE_CONF_DURATION,
     .min = 1,
     .max = 86400000,
     .def = "600000",
     F(retention_check_ms),
     .doc = "How often expired offsets are looked for."},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

#undef F

static groups_conf_t g_conf;
static bool g_conf_set;

const floe_conf_key_t *floe_groups_config_keys(size_t *n)
{
    *n = NKEYS;
    return KEYS;
}

static void conf_init(void)
{
    if (g_conf_set) return;
    floe_group_config_default(&g_conf.group);
    floe_err_t err;
    if (floe_conf_defaults(KEYS, NKEYS, &g_conf, &err) < 0) FLOE_ERROR("groups: %s", err.msg);
    g_conf_set = true;
}

int floe_groups_config_set(const char *key, const char *value, floe_err_t *err)
{
    const floe_conf_key_t *k = floe_conf_find(KEYS, NKEYS, key);
    if (!k) return 1;
    conf_init();
    return floe_conf_set(k, &g_conf, value, err);
}

int floe_groups_config_check(floe_err_t *err)
{
    conf_init();
    if (g_conf.group.min_session_timeout_ms > g_conf.group.max_session_timeout_ms)
        return floe_err_set(err, FLOE_EINVAL,
                            "group.min.session.timeout.ms (%d) is above "
                            "group.max.session.timeout.ms (%d)",
                            (int)g_conf.group.min_session_timeout_ms,
                            (int)g_conf.group.max_session_timeout_ms);
    return 0;
}

typedef struct api_reg {
    int16_t key, min, max;
    floe_kafka_handler_fn fn;
} api_reg_t;

static const api_reg_t APIS[] = {
    {FLOE_KAPI_FIND_COORDINATOR, 0, 4, h_find_coordinator},
    {FLOE_KAPI_JOIN_GROUP, 0, 9, h_join_group},
    {FLOE_KAPI_SYNC_GROUP, 0, 5, h_sync_group},
    {FLOE_KAPI_HEARTBEAT, 0, 4, h_heartbeat},
    {FLOE_KAPI_LEAVE_GROUP, 0, 5, h_leave_group},
    {FLOE_KAPI_OFFSET_COMMIT, 0, 8, h_offset_commit},
    {FLOE_KAPI_OFFSET_FETCH, 0, 8, h_offset_fetch},
    {FLOE_KAPI_LIST_GROUPS, 0, 4, h_list_groups},
    {FLOE_KAPI_DESCRIBE_GROUPS, 0, 5, h_describe_groups},
    {FLOE_KAPI_DELETE_GROUPS, 0, 2, h_delete_groups},
};

static void groups_free(void *state);

/* Periodically delete offsets past offsets.retention.minutes. */
static void expire_fire(void *arg)
{
    gstate_t *st = arg;
    st->expire_timer = NULL;
    if (st->stopped) return;
    floe_err_t err;
    if (st->store && floe_offset_store_expire(st->store, floe_mono_ms(), floe_wall_ms(), &err) < 0)
        FLOE_ERROR("groups: expiring offsets: %s", err.msg);
    st->expire_timer = floe_kafka_timer_add(st->srv, g_conf.retention_check_ms, expire_fire, st);
}

static int groups_init(floe_kafka_srv_t *srv, void **state, floe_err_t *err)
{
    gstate_t *st = calloc(1, sizeof *st);
    if (!st) return floe_err_set(err, FLOE_ENOMEM, "groups: out of memory");
    st->srv = srv;
    st->timer_at = INT64_MAX;
    conf_init();
    floe_group_config_t cfg = g_conf.group;
    cfg.offsets_retention_ms = g_conf.retention_minutes * 60000;
    if (floe_group_coord_new(&cfg, &st->coord, err)) goto fail;
    const char *data_dir = groups_data_dir(srv);
    if (data_dir) {
        char dir[4096];
        if (floe_broker_partition_dir(data_dir, FLOE_OFFSETS_TOPIC, 0, dir, sizeof dir, err) ||
            floe_offset_store_open(dir, NULL, st->coord, floe_mono_ms(), &st->store, err))
            goto fail;
    }
    for (size_t i = 0; i < sizeof APIS / sizeof APIS[0]; i++)
        if (floe_kafka_register(srv, APIS[i].key, APIS[i].min, APIS[i].max, APIS[i].fn, st, err))
            goto fail;
    reschedule(st);
    st->expire_timer = floe_kafka_timer_add(srv, g_conf.retention_check_ms, expire_fire, st);
    *state = st;
    return 0;
fail:
    floe_err_wrap(err, "groups");
    groups_free(st);
    return -1;
}

/* Answer every deferred JoinGroup/SyncGroup and stop the timer; requests
 * arriving while the server drains still get answers. */
static void groups_stop(void *state)
{
    gstate_t *st = state;
    st->stopped = true;
    if (st->timer) floe_kafka_timer_cancel(st->srv, st->timer);
    st->timer = NULL;
    if (st->expire_timer) floe_kafka_timer_cancel(st->srv, st->expire_timer);
    st->expire_timer = NULL;
    floe_group_shutdown(st->coord);
}

static void groups_free(void *state)
{
    gstate_t *st = state;
    if (!st) return;
    if (st->timer) floe_kafka_timer_cancel(st->srv, st->timer);
    if (st->expire_timer) floe_kafka_timer_cancel(st->srv, st->expire_timer);
    floe_group_coord_free(st->coord);
    floe_offset_store_close(st->store);
    free(st);
}

const floe_kafka_module_t floe_groups_module = {"groups", groups_init, groups_stop, groups_free};
