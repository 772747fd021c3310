/* The classic consumer group coordinator (see group.h).  The state machine
 * follows Apache Kafka's GroupCoordinator: facts about states, error codes
 * and timers come from its documented behaviour; the code is ours.
 * This file: groups, members, the rebalance, timers, the coordinator;
 * group_join.c answers JoinGroup, SyncGroup, Heartbeat and LeaveGroup,
 * group_admin.c List, Describe, Delete and committed offsets. */
#include "kafka/group_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/diag.h"

/* ---- small helpers ------------------------------------------------------- */

const char *floe_group_state_name(floe_group_state_t s)
{
    switch (s) {
    case FLOE_GROUP_EMPTY: return "Empty";
    case FLOE_GROUP_PREPARING_REBALANCE: return "PreparingRebalance";
    case FLOE_GROUP_COMPLETING_REBALANCE: return "CompletingRebalance";
    case FLOE_GROUP_STABLE: return "Stable";
    case FLOE_GROUP_DEAD: return "Dead";
    }
    return "Dead";
}

void floe_group_config_default(floe_group_config_t *cfg)
{
    cfg->initial_rebalance_delay_ms = 3000;
    cfg->min_session_timeout_ms = 6000;
    cfg->max_session_timeout_ms = 1800000;
    cfg->max_size = INT32_MAX;
    cfg->offset_metadata_max_bytes = 4096;
    cfg->empty_group_retention_ms = 600000;
    cfg->offsets_retention_ms = 7LL * 24 * 3600 * 1000;
    cfg->member_id_seed = 0;
}

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---- groups and members -------------------------------------------------- */

group_t *floe_grp_find(const floe_group_coord_t *c, const char *id)
{
    if (!id) return NULL;
    for (size_t i = 0; i < c->ngroups; i++)
        if (strcmp(c->groups[i]->id, id) == 0) return c->groups[i];
    return NULL;
}

group_t *floe_grp_new(floe_group_coord_t *c, const char *id, int64_t now)
{
    if (grow(&c->groups, &c->capgroups, c->ngroups, sizeof *c->groups)) return NULL;
    group_t *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->id = strdup(id);
    if (!g->id) {
        free(g);
        return NULL;
    }
    g->state = FLOE_GROUP_EMPTY;
    g->join_deadline = INT64_MAX;
    g->empty_since = now;
    c->groups[c->ngroups++] = g;
    return g;
}

void floe_grp_free_protos(gmember_t *m)
{
    for (size_t i = 0; i < m->nprotos; i++) {
        free(m->protos[i].name);
        free(m->protos[i].meta);
    }
    free(m->protos);
    m->protos = NULL;
    m->nprotos = 0;
}

void floe_grp_free_member(gmember_t *m)
{
    free(m->id);
    free(m->instance_id);
    free(m->client_id);
    free(m->client_host);
    floe_grp_free_protos(m);
    free(m->assignment);
    free(m);
}

const gproto_t *floe_grp_member_proto(const gmember_t *m, const char *name)
{
    for (size_t i = 0; i < m->nprotos; i++)
        if (name && strcmp(m->protos[i].name, name) == 0) return &m->protos[i];
    return NULL;
}

gmember_t *floe_grp_find_member(const group_t *g, const char *id)
{
    if (is_empty(id)) return NULL;
    for (size_t i = 0; i < g->nmembers; i++)
        if (strcmp(g->members[i]->id, id) == 0) return g->members[i];
    return NULL;
}

gmember_t *floe_grp_find_static(const group_t *g, const char *instance_id)
{
    if (is_empty(instance_id)) return NULL;
    for (size_t i = 0; i < g->nmembers; i++)
        if (str_eq(g->members[i]->instance_id, instance_id)) return g->members[i];
    return NULL;
}

/* A static instance now owned by another member id: the caller is a fenced
 * zombie. */
bool floe_grp_is_fenced(const group_t *g, const char *member_id, const char *instance_id)
{
    const gmember_t *s = floe_grp_find_static(g, instance_id);
    return s && !str_eq(s->id, member_id);
}

void floe_grp_remove_pending_at(group_t *g, size_t i)
{
    free(g->pending[i].id);
    memmove(&g->pending[i], &g->pending[i + 1], (g->npending - i - 1) * sizeof *g->pending);
    g->npending--;
}

/* ---- completions --------------------------------------------------------- */

void floe_grp_join_error(floe_group_join_cb cb, void *opaque, int16_t error, const char *member_id)
{
    floe_group_join_res_t r = {
        .error = error,
        .generation_id = -1,
        .leader_id = "",
        .member_id = member_id ? member_id : "",
    };
    cb(opaque, &r);
}

void floe_grp_sync_error(floe_group_sync_cb cb, void *opaque, int16_t error)
{
    floe_group_sync_res_t r = {.error = error};
    cb(opaque, &r);
}

void floe_grp_fail_member_callbacks(gmember_t *m, int16_t error)
{
    if (m->join_cb) {
        floe_group_join_cb cb = m->join_cb;
        m->join_cb = NULL;
        floe_grp_join_error(cb, m->join_opaque, error, m->id);
    }
    if (m->sync_cb) {
        floe_group_sync_cb cb = m->sync_cb;
        m->sync_cb = NULL;
        floe_grp_sync_error(cb, m->sync_opaque, error);
    }
}

/* Answer a join with the current generation (no rebalance needed).  The
 * leader gets every member's metadata. */
void floe_grp_join_respond(group_t *g, gmember_t *m, floe_group_join_cb cb, void *opaque)
{
    floe_group_join_res_t r = {
        .error = FLOE_GERR_NONE,
        .generation_id = g->generation,
        .protocol_type = g->protocol_type,
        .protocol_name = g->protocol_name,
        .leader_id = g->leader ? g->leader->id : "",
        .member_id = m->id,
    };
    floe_group_join_member_t *list = NULL;
    if (m == g->leader && g->nmembers) {
        list = calloc(g->nmembers, sizeof *list);
        if (!list) {
            floe_grp_join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, m->id);
            return;
        }
        for (size_t i = 0; i < g->nmembers; i++) {
            const gmember_t *o = g->members[i];
            const gproto_t *p = floe_grp_member_proto(o, g->protocol_name);
            list[i].member_id = o->id;
            list[i].instance_id = o->instance_id;
            list[i].metadata = p ? p->meta : NULL;
            list[i].metadata_len = p ? p->len : 0;
        }
        r.members = list;
        r.member_count = g->nmembers;
    }
    cb(opaque, &r);
    free(list);
}

/* ---- the rebalance ------------------------------------------------------- */

void floe_grp_reset_assignments(group_t *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        gmember_t *m = g->members[i];
        free(m->assignment);
        m->assignment = NULL;
        m->assignment_len = 0;
    }
}

void floe_grp_prepare_rebalance(floe_group_coord_t *c, group_t *g, int64_t now)
{
    if (g->state == FLOE_GROUP_COMPLETING_REBALANCE) {
        /* Followers waiting for the old generation's assignment rejoin. */
        floe_grp_reset_assignments(g);
        for (size_t i = 0; i < g->nmembers; i++) {
            gmember_t *m = g->members[i];
            if (m->sync_cb) {
                floe_group_sync_cb cb = m->sync_cb;
                m->sync_cb = NULL;
                floe_grp_sync_error(cb, m->sync_opaque, FLOE_GERR_REBALANCE_IN_PROGRESS);
            }
        }
    }
    int64_t rt = 0;
    for (size_t i = 0; i < g->nmembers; i++)
        if (g->members[i]->rebalance_timeout_ms > rt) rt = g->members[i]->rebalance_timeout_ms;
    int64_t delay = c->cfg.initial_rebalance_delay_ms;
    if (g->state == FLOE_GROUP_EMPTY && delay > 0) {
        /* Wait a little for more members of a fresh group, so the first
         * generation is not followed at once by a second. */
        if (delay > rt) delay = rt;
        g->initial_delay = true;
        g->initial_remaining = rt - delay > 0 ? rt - delay : 0;
        g->new_member_added = false;
        g->join_deadline = now + delay;
    } else {
        g->initial_delay = false;
        g->join_deadline = now + rt;
    }
    g->state = FLOE_GROUP_PREPARING_REBALANCE;
}

static void maybe_prepare_rebalance(floe_group_coord_t *c, group_t *g, int64_t now)
{
    if (g->state == FLOE_GROUP_STABLE || g->state == FLOE_GROUP_COMPLETING_REBALANCE ||
        g->state == FLOE_GROUP_EMPTY)
        floe_grp_prepare_rebalance(c, g, now);
}

static void remove_member_at(group_t *g, size_t i)
{
    gmember_t *m = g->members[i];
    memmove(&g->members[i], &g->members[i + 1], (g->nmembers - i - 1) * sizeof *g->members);
    g->nmembers--;
    if (g->leader == m) g->leader = g->nmembers ? g->members[0] : NULL;
    floe_grp_free_member(m);
}

/* Choose the protocol: among those every member supports, the one most
 * members list first (ties: the leader's order). */
static const char *select_protocol(const group_t *g)
{
    const gmember_t *ref = g->leader ? g->leader : g->members[0];
    const char *best = NULL;
    size_t best_votes = 0;
    for (size_t i = 0; i < ref->nprotos; i++) {
        const char *name = ref->protos[i].name;
        bool everyone = true;
        for (size_t j = 0; j < g->nmembers && everyone; j++)
            if (!floe_grp_member_proto(g->members[j], name)) everyone = false;
        if (!everyone) continue;
        size_t votes = 0;
        for (size_t j = 0; j < g->nmembers; j++) {
            const gmember_t *m = g->members[j];
            for (size_t k = 0; k < m->nprotos; k++) {
                /* a member votes for its first protocol that all support */
                const char *n = m->protos[k].name;
                bool all = true;
                for (size_t q = 0; q < g->nmembers && all; q++)
                    if (!floe_grp_member_proto(g->members[q], n)) all = false;
                if (!all) continue;
                if (strcmp(n, name) == 0) votes++;
                break;
            }
        }
        if (!best || votes > best_votes) {
            best = name;
            best_votes = votes;
        }
    }
    return best;
}

/* Every known member has rejoined: start the next generation. */
static void complete_join(floe_group_coord_t *c, group_t *g, int64_t now)
{
    (void)c;
    for (size_t i = 0; i < g->nmembers;) {
        if (!g->members[i]->join_cb) {
            floe_grp_fail_member_callbacks(g->members[i], FLOE_GERR_UNKNOWN_MEMBER_ID);
            remove_member_at(g, i);
        } else {
            i++;
        }
    }
    g->join_deadline = INT64_MAX;
    g->initial_delay = false;
    g->new_member_added = false;
    g->generation++;
    free(g->protocol_name);
    g->protocol_name = NULL;
    if (g->nmembers == 0) {
        g->state = FLOE_GROUP_EMPTY;
        g->empty_since = now;
        FLOE_INFO("groups: %s: generation %d is empty", g->id, g->generation);
        return;
    }
    const char *sel = select_protocol(g);
    g->protocol_name = xstrdup(sel);
    if (!g->protocol_name) {
        /* Out of memory, or no common protocol (members were checked on
         * join, so only the former): fail everyone and empty the group. */
        while (g->nmembers) {
            floe_grp_fail_member_callbacks(g->members[0], FLOE_GERR_UNKNOWN_SERVER_ERROR);
            remove_member_at(g, 0);
        }
        g->state = FLOE_GROUP_EMPTY;
        g->empty_since = now;
        return;
    }
    g->state = FLOE_GROUP_COMPLETING_REBALANCE;
    FLOE_INFO("groups: %s: generation %d with %zu member%s, protocol %s", g->id, g->generation,
              g->nmembers, g->nmembers == 1 ? "" : "s", g->protocol_name);
    for (size_t i = 0; i < g->nmembers; i++) {
        gmember_t *m = g->members[i];
        floe_group_join_cb cb = m->join_cb;
        void *opaque = m->join_opaque;
        m->join_cb = NULL;
        m->deadline = now + m->session_timeout_ms;
        floe_grp_join_respond(g, m, cb, opaque);
    }
}

static bool all_joined(const group_t *g)
{
    if (g->npending) return false;
    for (size_t i = 0; i < g->nmembers; i++)
        if (!g->members[i]->join_cb) return false;
    return true;
}

void floe_grp_try_complete_join(floe_group_coord_t *c, group_t *g, int64_t now)
{
    if (g->state == FLOE_GROUP_PREPARING_REBALANCE && !g->initial_delay && all_joined(g))
        complete_join(c, g, now);
}

void floe_grp_rebalance(floe_group_coord_t *c, group_t *g, int64_t now)
{
    maybe_prepare_rebalance(c, g, now);
    floe_grp_try_complete_join(c, g, now);
}

/* Remove a member that left or timed out, and let the others rebalance. */
void floe_grp_remove_member_and_update(floe_group_coord_t *c, group_t *g, gmember_t *m, int64_t now)
{
    floe_grp_fail_member_callbacks(m, FLOE_GERR_UNKNOWN_MEMBER_ID);
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i] == m) {
            remove_member_at(g, i);
            break;
        }
    }
    if (g->state == FLOE_GROUP_STABLE || g->state == FLOE_GROUP_COMPLETING_REBALANCE)
        floe_grp_rebalance(c, g, now);
    else
        floe_grp_try_complete_join(c, g, now);
}

/* ---- timers -------------------------------------------------------------- */

static bool kept_alive(const gmember_t *m)
{
    return m->join_cb || m->sync_cb;
}

bool floe_grp_forgettable(const floe_group_coord_t *c, const group_t *g, int64_t *when)
{
    if (g->state != FLOE_GROUP_EMPTY || g->noffsets || g->npending || g->nmembers) return false;
    int64_t r = c->cfg.empty_group_retention_ms;
    *when = g->empty_since > INT64_MAX - r ? INT64_MAX : g->empty_since + r;
    return true;
}

void floe_grp_free(group_t *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        floe_grp_fail_member_callbacks(g->members[i], FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
        floe_grp_free_member(g->members[i]);
    }
    free(g->members);
    for (size_t i = 0; i < g->npending; i++) free(g->pending[i].id);
    free(g->pending);
    for (size_t i = 0; i < g->noffsets; i++) {
        free(g->offsets[i].topic);
        free(g->offsets[i].metadata);
    }
    free(g->offsets);
    free(g->protocol_type);
    free(g->protocol_name);
    free(g->id);
    free(g);
}

static void tick_group(floe_group_coord_t *c, group_t *g, int64_t now)
{
    bool changed = false;
    for (size_t i = 0; i < g->npending;) {
        if (g->pending[i].deadline <= now) {
            floe_grp_remove_pending_at(g, i);
            changed = true;
        } else {
            i++;
        }
    }
    if (changed) floe_grp_try_complete_join(c, g, now);

    if (g->state == FLOE_GROUP_PREPARING_REBALANCE && g->join_deadline <= now) {
        if (g->initial_delay && g->new_member_added && g->initial_remaining > 0) {
            /* Members keep arriving: wait another delay, up to the
             * rebalance timeout in total. */
            int64_t d = c->cfg.initial_rebalance_delay_ms;
            if (d > g->initial_remaining) d = g->initial_remaining;
            g->initial_remaining -= d;
            g->new_member_added = false;
            g->join_deadline = now + d;
        } else {
            complete_join(c, g, now);
        }
    }

    for (size_t i = 0; i < g->nmembers;) {
        gmember_t *m = g->members[i];
        if (!kept_alive(m) && m->deadline <= now) {
            FLOE_INFO("groups: %s: member %s expired (session timeout)", g->id, m->id);
            floe_grp_remove_member_and_update(c, g, m, now);
            i = 0; /* the member list changed */
        } else {
            i++;
        }
    }
}

void floe_group_tick(floe_group_coord_t *c, int64_t now)
{
    for (size_t i = 0; i < c->ngroups; i++) tick_group(c, c->groups[i], now);
    for (size_t i = 0; i < c->ngroups;) {
        int64_t when;
        if (floe_grp_forgettable(c, c->groups[i], &when) && when <= now) {
            floe_grp_free(c->groups[i]);
            memmove(&c->groups[i], &c->groups[i + 1], (c->ngroups - i - 1) * sizeof *c->groups);
            c->ngroups--;
        } else {
            i++;
        }
    }
}

int64_t floe_group_next_deadline(const floe_group_coord_t *c)
{
    int64_t t = INT64_MAX;
    for (size_t i = 0; i < c->ngroups; i++) {
        const group_t *g = c->groups[i];
        int64_t when;
        if (floe_grp_forgettable(c, g, &when) && when < t) t = when;
        for (size_t k = 0; k < g->npending; k++)
            if (g->pending[k].deadline < t) t = g->pending[k].deadline;
        if (g->state == FLOE_GROUP_PREPARING_REBALANCE && g->join_deadline < t)
            t = g->join_deadline;
        for (size_t k = 0; k < g->nmembers; k++) {
            const gmember_t *m = g->members[k];
            if (!kept_alive(m) && m->deadline < t) t = m->deadline;
        }
    }
    return t;
}

/* ---- coordinator --------------------------------------------------------- */

int floe_group_coord_new(const floe_group_config_t *cfg, floe_group_coord_t **out, floe_err_t *err)
{
    floe_group_coord_t *c = calloc(1, sizeof *c);
    if (!c) return floe_err_set(err, FLOE_ENOMEM, "group coordinator: out of memory");
    if (cfg) c->cfg = *cfg;
    else
        floe_group_config_default(&c->cfg);
    if (c->cfg.min_session_timeout_ms < 0 ||
        c->cfg.max_session_timeout_ms < c->cfg.min_session_timeout_ms ||
        c->cfg.initial_rebalance_delay_ms < 0 || c->cfg.max_size < 1 ||
        c->cfg.empty_group_retention_ms < 0) {
        free(c);
        return floe_err_set(err, FLOE_EINVAL, "group coordinator: invalid configuration");
    }
    c->id_state = c->cfg.member_id_seed ? c->cfg.member_id_seed
                                        : (uint64_t)floe_wall_us() ^ (uint64_t)floe_mono_ns();
    *out = c;
    return 0;
}

void floe_group_shutdown(floe_group_coord_t *c)
{
    c->shut_down = true;
    for (size_t i = 0; i < c->ngroups; i++) {
        group_t *g = c->groups[i];
        for (size_t k = 0; k < g->nmembers; k++)
            floe_grp_fail_member_callbacks(g->members[k], FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
    }
}

void floe_group_coord_free(floe_group_coord_t *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->ngroups; i++) floe_grp_free(c->groups[i]);
    free(c->groups);
    free(c);
}
