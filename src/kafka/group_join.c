/* The consumer group coordinator's member requests: JoinGroup, SyncGroup,
 * Heartbeat and LeaveGroup (see group.h, group_int.h). */
#include "kafka/group_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "util/diag.h"

/* ---- member ids and protocols -------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Kafka's form: "<client id or instance id>-<uuid>". */
static char *new_member_id(floe_group_coord_t *c, const char *prefix)
{
    uint64_t a = splitmix64(&c->id_state), b = splitmix64(&c->id_state);
    b = (b & 0xffffffffffff0fffull) | 0x4000ull;             /* version 4 */
    a = (a & 0x3fffffffffffffffull) | 0x8000000000000000ull; /* variant */
    char *s = NULL;
    if (asprintf(&s, "%s-%08x-%04x-%04x-%04x-%012llx", prefix ? prefix : "", (unsigned)(b >> 32),
                 (unsigned)((b >> 16) & 0xffff), (unsigned)(b & 0xffff), (unsigned)(a >> 48),
                 (unsigned long long)(a & 0xffffffffffffull)) < 0)
        return NULL;
    return s;
}

/* Replace m's protocols with copies of the request's.  All or nothing: on
 * allocation failure m keeps its old ones and -1 is returned. */
static int set_protos(gmember_t *m, const floe_group_join_req_t *r)
{
    size_t n = r->protocol_count;
    gproto_t *v = n ? calloc(n, sizeof *v) : NULL;
    if (n && !v) return -1;
    for (size_t i = 0; i < n; i++) {
        const floe_group_protocol_t *p = &r->protocols[i];
        v[i].name = strdup(p->name ? p->name : "");
        v[i].len = p->metadata_len;
        v[i].meta = malloc(p->metadata_len ? p->metadata_len : 1);
        if (!v[i].name || !v[i].meta) {
            for (size_t k = 0; k <= i; k++) {
                free(v[k].name);
                free(v[k].meta);
            }
            free(v);
            return -1;
        }
        if (p->metadata_len) memcpy(v[i].meta, p->metadata, p->metadata_len);
    }
    floe_grp_free_protos(m);
    m->protos = v;
    m->nprotos = n;
    return 0;
}

/* Same protocols, same metadata, same order. */
static bool protos_match(const gmember_t *m, const floe_group_join_req_t *r)
{
    if (m->nprotos != r->protocol_count) return false;
    for (size_t i = 0; i < m->nprotos; i++) {
        const floe_group_protocol_t *p = &r->protocols[i];
        if (!str_eq(m->protos[i].name, p->name ? p->name : "") ||
            m->protos[i].len != p->metadata_len ||
            (p->metadata_len && memcmp(m->protos[i].meta, p->metadata, p->metadata_len)))
            return false;
    }
    return true;
}

static ssize_t find_pending(const group_t *g, const char *id)
{
    if (is_empty(id)) return -1;
    for (size_t i = 0; i < g->npending; i++)
        if (strcmp(g->pending[i].id, id) == 0) return (ssize_t)i;
    return -1;
}

/* Whether a member can join: same protocol type as the group and at least
 * one protocol every member supports. */
static bool supports_protocols(const group_t *g, const floe_group_join_req_t *r)
{
    if (is_empty(r->protocol_type) || r->protocol_count == 0) return false;
    if (g->nmembers == 0) return true;
    if (!str_eq(g->protocol_type, r->protocol_type)) return false;
    for (size_t i = 0; i < r->protocol_count; i++) {
        const char *name = r->protocols[i].name ? r->protocols[i].name : "";
        size_t n = 0;
        for (size_t j = 0; j < g->nmembers; j++)
            if (floe_grp_member_proto(g->members[j], name)) n++;
        if (n == g->nmembers) return true;
    }
    return false;
}

/* ---- JoinGroup ----------------------------------------------------------- */

/* New protocols and timeouts from a rejoin, and its callback.  -1 (out of
 * memory) leaves the member and any pending callback as they were. */
static int update_member(gmember_t *m, const floe_group_join_req_t *r, floe_group_join_cb cb,
                         void *opaque)
{
    if (set_protos(m, r)) return -1;
    m->session_timeout_ms = r->session_timeout_ms;
    m->rebalance_timeout_ms = r->rebalance_timeout_ms;
    if (m->join_cb) /* a retried join replaces the earlier one */
        floe_grp_join_error(m->join_cb, m->join_opaque, FLOE_GERR_REBALANCE_IN_PROGRESS, m->id);
    m->join_cb = cb;
    m->join_opaque = opaque;
    return 0;
}

static void add_member_and_rebalance(floe_group_coord_t *c, group_t *g, char *id,
                                     const floe_group_join_req_t *r, int64_t now,
                                     floe_group_join_cb cb, void *opaque)
{
    gmember_t *m = calloc(1, sizeof *m);
    if (!m || grow(&g->members, &g->capmembers, g->nmembers, sizeof *g->members)) {
        free(m);
        floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
        free(id);
        return;
    }
    m->id = id;
    m->instance_id = is_empty(r->instance_id) ? NULL : strdup(r->instance_id);
    m->client_id = strdup(r->client_id ? r->client_id : "");
    m->client_host = strdup(r->client_host ? r->client_host : "");
    if ((!is_empty(r->instance_id) && !m->instance_id) || !m->client_id || !m->client_host ||
        set_protos(m, r)) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
        floe_grp_free_member(m);
        return;
    }
    if (g->nmembers == 0) {
        char *pt = strdup(r->protocol_type);
        if (!pt) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
            floe_grp_free_member(m);
            return;
        }
        free(g->protocol_type);
        g->protocol_type = pt;
    }
    m->session_timeout_ms = r->session_timeout_ms;
    m->rebalance_timeout_ms = r->rebalance_timeout_ms;
    m->deadline = now + r->session_timeout_ms;
    m->join_cb = cb;
    m->join_opaque = opaque;
    g->members[g->nmembers++] = m;
    if (!g->leader) g->leader = m;
    if (g->state == FLOE_GROUP_PREPARING_REBALANCE && g->generation == 0)
        g->new_member_added = true;
    floe_grp_rebalance(c, g, now);
}

static void join_unknown(floe_group_coord_t *c, group_t *g, const floe_group_join_req_t *r,
                         int64_t now, floe_group_join_cb cb, void *opaque)
{
    gmember_t *old = floe_grp_find_static(g, r->instance_id);
    if (old) {
        /* A static member restarted: it takes over its old slot under a new
         * id; the old id is fenced. */
        FLOE_INFO("groups: %s: static member %s rejoined, replacing %s", g->id, r->instance_id,
                  old->id);
        char *id = new_member_id(c, r->instance_id);
        if (!id) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, "");
            return;
        }
        floe_grp_fail_member_callbacks(old, FLOE_GERR_FENCED_INSTANCE_ID);
        bool same = protos_match(old, r);
        free(old->id);
        old->id = id;
        if (update_member(old, r, cb, opaque)) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
            return;
        }
        old->deadline = now + r->session_timeout_ms;
        if (g->state == FLOE_GROUP_STABLE && same && old != g->leader) {
            /* Nothing changed for the group: hand back the generation it
             * is in; the member syncs to get its old assignment. */
            old->join_cb = NULL;
            floe_grp_join_respond(g, old, cb, opaque);
            return;
        }
        floe_grp_rebalance(c, g, now);
        return;
    }
    if ((int64_t)(g->nmembers + g->npending) >= c->cfg.max_size) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_GROUP_MAX_SIZE_REACHED, "");
        return;
    }
    bool is_static = !is_empty(r->instance_id);
    char *id = new_member_id(c, is_static ? r->instance_id : r->client_id);
    if (!id) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, "");
        return;
    }
    if (!is_static && r->api_version >= 4) {
        /* KIP-394: hand out the id first; the member joins again with it,
         * so a client that times out does not leave orphan members. */
        if (grow(&g->pending, &g->cappending, g->npending, sizeof *g->pending)) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, "");
            free(id);
            return;
        }
        g->pending[g->npending].id = id;
        g->pending[g->npending].deadline = now + r->session_timeout_ms;
        g->npending++;
        floe_grp_join_error(cb, opaque, FLOE_GERR_MEMBER_ID_REQUIRED, id);
        return;
    }
    add_member_and_rebalance(c, g, id, r, now, cb, opaque);
}

static void join_known(floe_group_coord_t *c, group_t *g, const floe_group_join_req_t *r,
                       int64_t now, floe_group_join_cb cb, void *opaque)
{
    ssize_t pi = find_pending(g, r->member_id);
    if (pi >= 0) {
        char *id = g->pending[pi].id;
        g->pending[pi].id = NULL;
        floe_grp_remove_pending_at(g, (size_t)pi);
        add_member_and_rebalance(c, g, id, r, now, cb, opaque);
        return;
    }
    if (floe_grp_is_fenced(g, r->member_id, r->instance_id)) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_FENCED_INSTANCE_ID, r->member_id);
        return;
    }
    gmember_t *m = floe_grp_find_member(g, r->member_id);
    if (!m) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID, r->member_id);
        return;
    }
    switch (g->state) {
    case FLOE_GROUP_PREPARING_REBALANCE:
        if (update_member(m, r, cb, opaque)) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, m->id);
            return;
        }
        floe_grp_try_complete_join(c, g, now);
        return;
    case FLOE_GROUP_COMPLETING_REBALANCE:
        if (protos_match(m, r)) { /* a lost response: send it again */
            m->deadline = now + m->session_timeout_ms;
            floe_grp_join_respond(g, m, cb, opaque);
            return;
        }
        break;
    case FLOE_GROUP_STABLE:
        if (m != g->leader && protos_match(m, r)) {
            m->deadline = now + m->session_timeout_ms;
            floe_grp_join_respond(g, m, cb, opaque);
            return;
        }
        break;
    default: floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID, r->member_id); return;
    }
    /* New metadata, or the leader rejoins: everyone rebalances. */
    if (update_member(m, r, cb, opaque)) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, m->id);
        return;
    }
    floe_grp_rebalance(c, g, now);
}

void floe_group_join(floe_group_coord_t *c, const floe_group_join_req_t *r, int64_t now,
                     floe_group_join_cb cb, void *opaque)
{
    const char *mid = r->member_id ? r->member_id : "";
    if (c->shut_down) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE, mid);
        return;
    }
    if (is_empty(r->group_id)) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_INVALID_GROUP_ID, mid);
        return;
    }
    if (r->session_timeout_ms < c->cfg.min_session_timeout_ms ||
        r->session_timeout_ms > c->cfg.max_session_timeout_ms) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_INVALID_SESSION_TIMEOUT, mid);
        return;
    }
    group_t *g = floe_grp_find(c, r->group_id);
    if (!g) {
        if (*mid) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID, mid);
            return;
        }
        g = floe_grp_new(c, r->group_id, now);
        if (!g) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, mid);
            return;
        }
    }
    if (g->state == FLOE_GROUP_DEAD) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE, mid);
        return;
    }
    if (!supports_protocols(g, r)) {
        floe_grp_join_error(cb, opaque, FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL, mid);
        return;
    }
    if (*mid) join_known(c, g, r, now, cb, opaque);
    else
        join_unknown(c, g, r, now, cb, opaque);
}

/* ---- SyncGroup ----------------------------------------------------------- */

static int set_assignment(gmember_t *m, const uint8_t *data, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p) return -1;
    if (len) memcpy(p, data, len);
    free(m->assignment);
    m->assignment = p;
    m->assignment_len = len;
    return 0;
}

static void sync_respond(const group_t *g, const gmember_t *m, floe_group_sync_cb cb, void *opaque)
{
    floe_group_sync_res_t r = {
        .error = FLOE_GERR_NONE,
        .protocol_type = g->protocol_type,
        .protocol_name = g->protocol_name,
        .assignment = m->assignment,
        .assignment_len = m->assignment_len,
    };
    cb(opaque, &r);
}

void floe_group_sync(floe_group_coord_t *c, const floe_group_sync_req_t *r, int64_t now,
                     floe_group_sync_cb cb, void *opaque)
{
    if (c->shut_down) {
        floe_grp_sync_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    group_t *g = floe_grp_find(c, r->group_id);
    if (!g) {
        floe_grp_sync_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID);
        return;
    }
    if (g->state == FLOE_GROUP_DEAD) {
        floe_grp_sync_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (floe_grp_is_fenced(g, r->member_id, r->instance_id)) {
        floe_grp_sync_error(cb, opaque, FLOE_GERR_FENCED_INSTANCE_ID);
        return;
    }
    gmember_t *m = floe_grp_find_member(g, r->member_id);
    if (!m) {
        floe_grp_sync_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID);
        return;
    }
    if (r->generation_id != g->generation) {
        floe_grp_sync_error(cb, opaque, FLOE_GERR_ILLEGAL_GENERATION);
        return;
    }
    if ((r->protocol_type && !str_eq(r->protocol_type, g->protocol_type)) ||
        (r->protocol_name && !str_eq(r->protocol_name, g->protocol_name))) {
        floe_grp_sync_error(cb, opaque, FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    switch (g->state) {
    case FLOE_GROUP_PREPARING_REBALANCE:
        floe_grp_sync_error(cb, opaque, FLOE_GERR_REBALANCE_IN_PROGRESS);
        return;
    case FLOE_GROUP_STABLE:
        m->deadline = now + m->session_timeout_ms;
        sync_respond(g, m, cb, opaque);
        return;
    case FLOE_GROUP_COMPLETING_REBALANCE: break;
    default: floe_grp_sync_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID); return;
    }
    if (m->sync_cb) /* a retried sync replaces the earlier one */
        floe_grp_sync_error(m->sync_cb, m->sync_opaque, FLOE_GERR_REBALANCE_IN_PROGRESS);
    m->sync_cb = cb;
    m->sync_opaque = opaque;
    m->deadline = now + m->session_timeout_ms;
    if (m != g->leader) return; /* followers wait for the leader */

    /* The leader's assignment: members it left out get an empty one. */
    bool oom = false;
    for (size_t i = 0; i < g->nmembers && !oom; i++) {
        gmember_t *o = g->members[i];
        const floe_group_assignment_t *a = NULL;
        for (size_t k = 0; k < r->assignment_count; k++)
            if (str_eq(r->assignments[k].member_id, o->id)) a = &r->assignments[k];
        if (set_assignment(o, a ? a->data : NULL, a ? a->len : 0)) oom = true;
    }
    if (oom) {
        floe_grp_reset_assignments(g);
        for (size_t i = 0; i < g->nmembers; i++)
            floe_grp_fail_member_callbacks(g->members[i], FLOE_GERR_UNKNOWN_SERVER_ERROR);
        floe_grp_prepare_rebalance(c, g, now);
        return;
    }
    g->state = FLOE_GROUP_STABLE;
    for (size_t i = 0; i < g->nmembers; i++) {
        gmember_t *o = g->members[i];
        if (!o->sync_cb) continue;
        floe_group_sync_cb ocb = o->sync_cb;
        o->sync_cb = NULL;
        sync_respond(g, o, ocb, o->sync_opaque);
    }
}

/* ---- Heartbeat, LeaveGroup ----------------------------------------------- */

int16_t floe_group_heartbeat(floe_group_coord_t *c, const char *group_id, const char *member_id,
                             const char *instance_id, int32_t generation_id, int64_t now)
{
    group_t *g = floe_grp_find(c, group_id);
    if (!g) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    if (g->state == FLOE_GROUP_DEAD) return FLOE_GERR_COORDINATOR_NOT_AVAILABLE;
    if (floe_grp_is_fenced(g, member_id, instance_id)) return FLOE_GERR_FENCED_INSTANCE_ID;
    gmember_t *m = floe_grp_find_member(g, member_id);
    if (g->state == FLOE_GROUP_EMPTY || !m) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    if (generation_id != g->generation) return FLOE_GERR_ILLEGAL_GENERATION;
    m->deadline = now + m->session_timeout_ms;
    if (g->state == FLOE_GROUP_PREPARING_REBALANCE) return FLOE_GERR_REBALANCE_IN_PROGRESS;
    return FLOE_GERR_NONE;
}

int16_t floe_group_leave(floe_group_coord_t *c, const char *group_id, const char *member_id,
                         const char *instance_id, int64_t now)
{
    group_t *g = floe_grp_find(c, group_id);
    if (!g) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    if (g->state == FLOE_GROUP_DEAD) return FLOE_GERR_COORDINATOR_NOT_AVAILABLE;
    gmember_t *m;
    if (is_empty(member_id)) {
        m = floe_grp_find_static(g, instance_id);
        if (!m) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    } else {
        if (floe_grp_is_fenced(g, member_id, instance_id)) return FLOE_GERR_FENCED_INSTANCE_ID;
        ssize_t pi = find_pending(g, member_id);
        if (pi >= 0) {
            floe_grp_remove_pending_at(g, (size_t)pi);
            floe_grp_try_complete_join(c, g, now);
            return FLOE_GERR_NONE;
        }
        m = floe_grp_find_member(g, member_id);
        if (!m) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    }
    FLOE_DEBUG("groups: %s: member %s left", g->id, m->id);
    floe_grp_remove_member_and_update(c, g, m, now);
    return FLOE_GERR_NONE;
}
