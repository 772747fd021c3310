/* The classic consumer group coordinator (see group.h).  The state machine
 * follows Apache Kafka's GroupCoordinator: facts about states, error codes
 * and timers come from its documented behaviour; the code is ours. */
#include "kafka/group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "util/clock.h"
#include "util/diag.h"

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

static bool str_eq(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static bool is_empty(const char *s)
{
    return !s || !*s;
}

/* Grow *arr (elements of size sz) so that one more fits. */
static int grow(void *arrp, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    void *p = realloc(*(void **)arrp, nc * sz);
    if (!p) return -1;
    *(void **)arrp = p;
    *cap = nc;
    return 0;
}

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

/* ---- groups and members -------------------------------------------------- */

static group_t *find_group(const floe_group_coord_t *c, const char *id)
{
    if (!id) return NULL;
    for (size_t i = 0; i < c->ngroups; i++)
        if (strcmp(c->groups[i]->id, id) == 0) return c->groups[i];
    return NULL;
}

static group_t *new_group(floe_group_coord_t *c, const char *id, int64_t now)
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

static void free_protos(gmember_t *m)
{
    for (size_t i = 0; i < m->nprotos; i++) {
        free(m->protos[i].name);
        free(m->protos[i].meta);
    }
    free(m->protos);
    m->protos = NULL;
    m->nprotos = 0;
}

static void free_member(gmember_t *m)
{
    free(m->id);
    free(m->instance_id);
    free(m->client_id);
    free(m->client_host);
    free_protos(m);
    free(m->assignment);
    free(m);
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
    free_protos(m);
    m->protos = v;
    m->nprotos = n;
    return 0;
}

static const gproto_t *member_proto(const gmember_t *m, const char *name)
{
    for (size_t i = 0; i < m->nprotos; i++)
        if (name && strcmp(m->protos[i].name, name) == 0) return &m->protos[i];
    return NULL;
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

static gmember_t *find_member(const group_t *g, const char *id)
{
    if (is_empty(id)) return NULL;
    for (size_t i = 0; i < g->nmembers; i++)
        if (strcmp(g->members[i]->id, id) == 0) return g->members[i];
    return NULL;
}

static gmember_t *find_static(const group_t *g, const char *instance_id)
{
    if (is_empty(instance_id)) return NULL;
    for (size_t i = 0; i < g->nmembers; i++)
        if (str_eq(g->members[i]->instance_id, instance_id)) return g->members[i];
    return NULL;
}

/* A static instance now owned by another member id: the caller is a fenced
 * zombie. */
static bool is_fenced(const group_t *g, const char *member_id, const char *instance_id)
{
    const gmember_t *s = find_static(g, instance_id);
    return s && !str_eq(s->id, member_id);
}

static ssize_t find_pending(const group_t *g, const char *id)
{
    if (is_empty(id)) return -1;
    for (size_t i = 0; i < g->npending; i++)
        if (strcmp(g->pending[i].id, id) == 0) return (ssize_t)i;
    return -1;
}

static void remove_pending_at(group_t *g, size_t i)
{
    free(g->pending[i].id);
    memmove(&g->pending[i], &g->pending[i + 1], (g->npending - i - 1) * sizeof *g->pending);
    g->npending--;
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
            if (member_proto(g->members[j], name)) n++;
        if (n == g->nmembers) return true;
    }
    return false;
}

/* ---- completions --------------------------------------------------------- */

static void join_error(floe_group_join_cb cb, void *opaque, int16_t error, const char *member_id)
{
    floe_group_join_res_t r = {
        .error = error,
        .generation_id = -1,
        .leader_id = "",
        .member_id = member_id ? member_id : "",
    };
    cb(opaque, &r);
}

static void sync_error(floe_group_sync_cb cb, void *opaque, int16_t error)
{
    floe_group_sync_res_t r = {.error = error};
    cb(opaque, &r);
}

static void fail_member_callbacks(gmember_t *m, int16_t error)
{
    if (m->join_cb) {
        floe_group_join_cb cb = m->join_cb;
        m->join_cb = NULL;
        join_error(cb, m->join_opaque, error, m->id);
    }
    if (m->sync_cb) {
        floe_group_sync_cb cb = m->sync_cb;
        m->sync_cb = NULL;
        sync_error(cb, m->sync_opaque, error);
    }
}

/* Answer a join with the current generation (no rebalance needed).  The
 * leader gets every member's metadata. */
static void join_respond(group_t *g, gmember_t *m, floe_group_join_cb cb, void *opaque)
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
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, m->id);
            return;
        }
        for (size_t i = 0; i < g->nmembers; i++) {
            const gmember_t *o = g->members[i];
            const gproto_t *p = member_proto(o, g->protocol_name);
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

static void reset_assignments(group_t *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        gmember_t *m = g->members[i];
        free(m->assignment);
        m->assignment = NULL;
        m->assignment_len = 0;
    }
}

static void prepare_rebalance(floe_group_coord_t *c, group_t *g, int64_t now)
{
    if (g->state == FLOE_GROUP_COMPLETING_REBALANCE) {
        /* Followers waiting for the old generation's assignment rejoin. */
        reset_assignments(g);
        for (size_t i = 0; i < g->nmembers; i++) {
            gmember_t *m = g->members[i];
            if (m->sync_cb) {
                floe_group_sync_cb cb = m->sync_cb;
                m->sync_cb = NULL;
                sync_error(cb, m->sync_opaque, FLOE_GERR_REBALANCE_IN_PROGRESS);
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
        prepare_rebalance(c, g, now);
}

static void remove_member_at(group_t *g, size_t i)
{
    gmember_t *m = g->members[i];
    memmove(&g->members[i], &g->members[i + 1], (g->nmembers - i - 1) * sizeof *g->members);
    g->nmembers--;
    if (g->leader == m) g->leader = g->nmembers ? g->members[0] : NULL;
    free_member(m);
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
            if (!member_proto(g->members[j], name)) everyone = false;
        if (!everyone) continue;
        size_t votes = 0;
        for (size_t j = 0; j < g->nmembers; j++) {
            const gmember_t *m = g->members[j];
            for (size_t k = 0; k < m->nprotos; k++) {
                /* a member votes for its first protocol that all support */
                const char *n = m->protos[k].name;
                bool all = true;
                for (size_t q = 0; q < g->nmembers && all; q++)
                    if (!member_proto(g->members[q], n)) all = false;
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
            fail_member_callbacks(g->members[i], FLOE_GERR_UNKNOWN_MEMBER_ID);
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
            fail_member_callbacks(g->members[0], FLOE_GERR_UNKNOWN_SERVER_ERROR);
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
        join_respond(g, m, cb, opaque);
    }
}

static bool all_joined(const group_t *g)
{
    if (g->npending) return false;
    for (size_t i = 0; i < g->nmembers; i++)
        if (!g->members[i]->join_cb) return false;
    return true;
}

static void try_complete_join(floe_group_coord_t *c, group_t *g, int64_t now)
{
    if (g->state == FLOE_GROUP_PREPARING_REBALANCE && !g->initial_delay && all_joined(g))
        complete_join(c, g, now);
}

static void rebalance(floe_group_coord_t *c, group_t *g, int64_t now)
{
    maybe_prepare_rebalance(c, g, now);
    try_complete_join(c, g, now);
}

/* Remove a member that left or timed out, and let the others rebalance. */
static void remove_member_and_update(floe_group_coord_t *c, group_t *g, gmember_t *m, int64_t now)
{
    fail_member_callbacks(m, FLOE_GERR_UNKNOWN_MEMBER_ID);
    for (size_t i = 0; i < g->nmembers; i++) {
        if (g->members[i] == m) {
            remove_member_at(g, i);
            break;
        }
    }
    if (g->state == FLOE_GROUP_STABLE || g->state == FLOE_GROUP_COMPLETING_REBALANCE)
        rebalance(c, g, now);
    else
        try_complete_join(c, g, now);
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
        join_error(m->join_cb, m->join_opaque, FLOE_GERR_REBALANCE_IN_PROGRESS, m->id);
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
        join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
        free(id);
        return;
    }
    m->id = id;
    m->instance_id = is_empty(r->instance_id) ? NULL : strdup(r->instance_id);
    m->client_id = strdup(r->client_id ? r->client_id : "");
    m->client_host = strdup(r->client_host ? r->client_host : "");
    if ((!is_empty(r->instance_id) && !m->instance_id) || !m->client_id || !m->client_host ||
        set_protos(m, r)) {
        join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
        free_member(m);
        return;
    }
    if (g->nmembers == 0) {
        char *pt = strdup(r->protocol_type);
        if (!pt) {
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
            free_member(m);
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
    rebalance(c, g, now);
}

static void join_unknown(floe_group_coord_t *c, group_t *g, const floe_group_join_req_t *r,
                         int64_t now, floe_group_join_cb cb, void *opaque)
{
    gmember_t *old = find_static(g, r->instance_id);
    if (old) {
        /* A static member restarted: it takes over its old slot under a new
         * id; the old id is fenced. */
        FLOE_INFO("groups: %s: static member %s rejoined, replacing %s", g->id, r->instance_id,
                  old->id);
        char *id = new_member_id(c, r->instance_id);
        if (!id) {
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, "");
            return;
        }
        fail_member_callbacks(old, FLOE_GERR_FENCED_INSTANCE_ID);
        bool same = protos_match(old, r);
        free(old->id);
        old->id = id;
        if (update_member(old, r, cb, opaque)) {
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, id);
            return;
        }
        old->deadline = now + r->session_timeout_ms;
        if (g->state == FLOE_GROUP_STABLE && same && old != g->leader) {
            /* Nothing changed for the group: hand back the generation it
             * is in; the member syncs to get its old assignment. */
            old->join_cb = NULL;
            join_respond(g, old, cb, opaque);
            return;
        }
        rebalance(c, g, now);
        return;
    }
    if ((int64_t)(g->nmembers + g->npending) >= c->cfg.max_size) {
        join_error(cb, opaque, FLOE_GERR_GROUP_MAX_SIZE_REACHED, "");
        return;
    }
    bool is_static = !is_empty(r->instance_id);
    char *id = new_member_id(c, is_static ? r->instance_id : r->client_id);
    if (!id) {
        join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, "");
        return;
    }
    if (!is_static && r->api_version >= 4) {
        /* KIP-394: hand out the id first; the member joins again with it,
         * so a client that times out does not leave orphan members. */
        if (grow(&g->pending, &g->cappending, g->npending, sizeof *g->pending)) {
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, "");
            free(id);
            return;
        }
        g->pending[g->npending].id = id;
        g->pending[g->npending].deadline = now + r->session_timeout_ms;
        g->npending++;
        join_error(cb, opaque, FLOE_GERR_MEMBER_ID_REQUIRED, id);
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
        remove_pending_at(g, (size_t)pi);
        add_member_and_rebalance(c, g, id, r, now, cb, opaque);
        return;
    }
    if (is_fenced(g, r->member_id, r->instance_id)) {
        join_error(cb, opaque, FLOE_GERR_FENCED_INSTANCE_ID, r->member_id);
        return;
    }
    gmember_t *m = find_member(g, r->member_id);
    if (!m) {
        join_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID, r->member_id);
        return;
    }
    switch (g->state) {
    case FLOE_GROUP_PREPARING_REBALANCE:
        if (update_member(m, r, cb, opaque)) {
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, m->id);
            return;
        }
        try_complete_join(c, g, now);
        return;
    case FLOE_GROUP_COMPLETING_REBALANCE:
        if (protos_match(m, r)) { /* a lost response: send it again */
            m->deadline = now + m->session_timeout_ms;
            join_respond(g, m, cb, opaque);
            return;
        }
        break;
    case FLOE_GROUP_STABLE:
        if (m != g->leader && protos_match(m, r)) {
            m->deadline = now + m->session_timeout_ms;
            join_respond(g, m, cb, opaque);
            return;
        }
        break;
    default: join_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID, r->member_id); return;
    }
    /* New metadata, or the leader rejoins: everyone rebalances. */
    if (update_member(m, r, cb, opaque)) {
        join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, m->id);
        return;
    }
    rebalance(c, g, now);
}

void floe_group_join(floe_group_coord_t *c, const floe_group_join_req_t *r, int64_t now,
                     floe_group_join_cb cb, void *opaque)
{
    const char *mid = r->member_id ? r->member_id : "";
    if (c->shut_down) {
        join_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE, mid);
        return;
    }
    if (is_empty(r->group_id)) {
        join_error(cb, opaque, FLOE_GERR_INVALID_GROUP_ID, mid);
        return;
    }
    if (r->session_timeout_ms < c->cfg.min_session_timeout_ms ||
        r->session_timeout_ms > c->cfg.max_session_timeout_ms) {
        join_error(cb, opaque, FLOE_GERR_INVALID_SESSION_TIMEOUT, mid);
        return;
    }
    group_t *g = find_group(c, r->group_id);
    if (!g) {
        if (*mid) {
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID, mid);
            return;
        }
        g = new_group(c, r->group_id, now);
        if (!g) {
            join_error(cb, opaque, FLOE_GERR_UNKNOWN_SERVER_ERROR, mid);
            return;
        }
    }
    if (g->state == FLOE_GROUP_DEAD) {
        join_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE, mid);
        return;
    }
    if (!supports_protocols(g, r)) {
        join_error(cb, opaque, FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL, mid);
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
        sync_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    group_t *g = find_group(c, r->group_id);
    if (!g) {
        sync_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID);
        return;
    }
    if (g->state == FLOE_GROUP_DEAD) {
        sync_error(cb, opaque, FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (is_fenced(g, r->member_id, r->instance_id)) {
        sync_error(cb, opaque, FLOE_GERR_FENCED_INSTANCE_ID);
        return;
    }
    gmember_t *m = find_member(g, r->member_id);
    if (!m) {
        sync_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID);
        return;
    }
    if (r->generation_id != g->generation) {
        sync_error(cb, opaque, FLOE_GERR_ILLEGAL_GENERATION);
        return;
    }
    if ((r->protocol_type && !str_eq(r->protocol_type, g->protocol_type)) ||
        (r->protocol_name && !str_eq(r->protocol_name, g->protocol_name))) {
        sync_error(cb, opaque, FLOE_GERR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    switch (g->state) {
    case FLOE_GROUP_PREPARING_REBALANCE:
        sync_error(cb, opaque, FLOE_GERR_REBALANCE_IN_PROGRESS);
        return;
    case FLOE_GROUP_STABLE:
        m->deadline = now + m->session_timeout_ms;
        sync_respond(g, m, cb, opaque);
        return;
    case FLOE_GROUP_COMPLETING_REBALANCE: break;
    default: sync_error(cb, opaque, FLOE_GERR_UNKNOWN_MEMBER_ID); return;
    }
    if (m->sync_cb) /* a retried sync replaces the earlier one */
        sync_error(m->sync_cb, m->sync_opaque, FLOE_GERR_REBALANCE_IN_PROGRESS);
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
        reset_assignments(g);
        for (size_t i = 0; i < g->nmembers; i++)
            fail_member_callbacks(g->members[i], FLOE_GERR_UNKNOWN_SERVER_ERROR);
        prepare_rebalance(c, g, now);
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
    group_t *g = find_group(c, group_id);
    if (!g) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    if (g->state == FLOE_GROUP_DEAD) return FLOE_GERR_COORDINATOR_NOT_AVAILABLE;
    if (is_fenced(g, member_id, instance_id)) return FLOE_GERR_FENCED_INSTANCE_ID;
    gmember_t *m = find_member(g, member_id);
    if (g->state == FLOE_GROUP_EMPTY || !m) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    if (generation_id != g->generation) return FLOE_GERR_ILLEGAL_GENERATION;
    m->deadline = now + m->session_timeout_ms;
    if (g->state == FLOE_GROUP_PREPARING_REBALANCE) return FLOE_GERR_REBALANCE_IN_PROGRESS;
    return FLOE_GERR_NONE;
}

int16_t floe_group_leave(floe_group_coord_t *c, const char *group_id, const char *member_id,
                         const char *instance_id, int64_t now)
{
    group_t *g = find_group(c, group_id);
    if (!g) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    if (g->state == FLOE_GROUP_DEAD) return FLOE_GERR_COORDINATOR_NOT_AVAILABLE;
    gmember_t *m;
    if (is_empty(member_id)) {
        m = find_static(g, instance_id);
        if (!m) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    } else {
        if (is_fenced(g, member_id, instance_id)) return FLOE_GERR_FENCED_INSTANCE_ID;
        ssize_t pi = find_pending(g, member_id);
        if (pi >= 0) {
            remove_pending_at(g, (size_t)pi);
            try_complete_join(c, g, now);
            return FLOE_GERR_NONE;
        }
        m = find_member(g, member_id);
        if (!m) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    }
    FLOE_DEBUG("groups: %s: member %s left", g->id, m->id);
    remove_member_and_update(c, g, m, now);
    return FLOE_GERR_NONE;
}

/* ---- timers -------------------------------------------------------------- */

static bool kept_alive(const gmember_t *m)
{
    return m->join_cb || m->sync_cb;
}

static bool forgettable(const floe_group_coord_t *c, const group_t *g, int64_t *when)
{
    if (g->state != FLOE_GROUP_EMPTY || g->noffsets || g->npending || g->nmembers) return false;
    int64_t r = c->cfg.empty_group_retention_ms;
    *when = g->empty_since > INT64_MAX - r ? INT64_MAX : g->empty_since + r;
    return true;
}

static void free_group(group_t *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        fail_member_callbacks(g->members[i], FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
        free_member(g->members[i]);
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
            remove_pending_at(g, i);
            changed = true;
        } else {
            i++;
        }
    }
    if (changed) try_complete_join(c, g, now);

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
            remove_member_and_update(c, g, m, now);
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
        if (forgettable(c, c->groups[i], &when) && when <= now) {
            free_group(c->groups[i]);
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
        if (forgettable(c, g, &when) && when < t) t = when;
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
            fail_member_callbacks(g->members[k], FLOE_GERR_COORDINATOR_NOT_AVAILABLE);
    }
}

void floe_group_coord_free(floe_group_coord_t *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->ngroups; i++) free_group(c->groups[i]);
    free(c->groups);
    free(c);
}

/* ---- List, Describe, Delete ---------------------------------------------- */

void floe_group_list(const floe_group_coord_t *c, floe_group_list_fn fn, void *opaque)
{
    for (size_t i = 0; i < c->ngroups; i++) {
        const group_t *g = c->groups[i];
        fn(opaque, g->id, g->protocol_type ? g->protocol_type : "", g->state);
    }
}

floe_group_state_t floe_group_state(const floe_group_coord_t *c, const char *group_id)
{
    const group_t *g = find_group(c, group_id);
    return g ? g->state : FLOE_GROUP_DEAD;
}

int floe_group_describe(const floe_group_coord_t *c, const char *group_id, floe_group_desc_t *out)
{
    memset(out, 0, sizeof *out);
    out->protocol_type = "";
    out->protocol_name = "";
    out->generation_id = -1;
    const group_t *g = find_group(c, group_id);
    if (!g) {
        out->state = FLOE_GROUP_DEAD;
        return 0;
    }
    out->state = g->state;
    out->generation_id = g->generation;
    if (g->protocol_type) out->protocol_type = g->protocol_type;
    bool stable = g->state == FLOE_GROUP_STABLE;
    if (stable && g->protocol_name) out->protocol_name = g->protocol_name;
    if (!g->nmembers) return 0;
    out->members = calloc(g->nmembers, sizeof *out->members);
    if (!out->members) return -1;
    out->member_count = g->nmembers;
    for (size_t i = 0; i < g->nmembers; i++) {
        const gmember_t *m = g->members[i];
        floe_group_member_desc_t *d = &out->members[i];
        d->member_id = m->id;
        d->instance_id = m->instance_id;
        d->client_id = m->client_id;
        d->client_host = m->client_host;
        if (stable) {
            const gproto_t *p = member_proto(m, g->protocol_name);
            if (p) {
                d->metadata = p->meta;
                d->metadata_len = p->len;
            }
            d->assignment = m->assignment;
            d->assignment_len = m->assignment_len;
        }
    }
    return 0;
}

void floe_group_desc_free(floe_group_desc_t *d)
{
    free(d->members);
    d->members = NULL;
    d->member_count = 0;
}

int16_t floe_group_delete_check(const floe_group_coord_t *c, const char *group_id)
{
    const group_t *g = find_group(c, group_id);
    if (!g || g->state == FLOE_GROUP_DEAD) return FLOE_GERR_GROUP_ID_NOT_FOUND;
    if (g->state != FLOE_GROUP_EMPTY || g->npending) return FLOE_GERR_NON_EMPTY_GROUP;
    return FLOE_GERR_NONE;
}

int16_t floe_group_delete(floe_group_coord_t *c, const char *group_id)
{
    int16_t e = floe_group_delete_check(c, group_id);
    if (e) return e;
    for (size_t i = 0; i < c->ngroups; i++) {
        if (strcmp(c->groups[i]->id, group_id) == 0) {
            free_group(c->groups[i]);
            memmove(&c->groups[i], &c->groups[i + 1], (c->ngroups - i - 1) * sizeof *c->groups);
            c->ngroups--;
            break;
        }
    }
    return FLOE_GERR_NONE;
}

/* ---- offsets ------------------------------------------------------------- */

int16_t floe_group_commit_check(floe_group_coord_t *c, const char *group_id, const char *member_id,
                                const char *instance_id, int32_t generation_id, int64_t now)
{
    group_t *g = find_group(c, group_id);
    if (!g) /* no group management: only a standalone commit is allowed */
        return generation_id < 0 ? FLOE_GERR_NONE : FLOE_GERR_ILLEGAL_GENERATION;
    if (g->state == FLOE_GROUP_DEAD) return FLOE_GERR_COORDINATOR_NOT_AVAILABLE;
    if (is_fenced(g, member_id, instance_id)) return FLOE_GERR_FENCED_INSTANCE_ID;
    if (generation_id < 0 && g->state == FLOE_GROUP_EMPTY) return FLOE_GERR_NONE;
    gmember_t *m = find_member(g, member_id);
    if (!m) return FLOE_GERR_UNKNOWN_MEMBER_ID;
    if (generation_id != g->generation) return FLOE_GERR_ILLEGAL_GENERATION;
    if (g->state == FLOE_GROUP_COMPLETING_REBALANCE) return FLOE_GERR_REBALANCE_IN_PROGRESS;
    m->deadline = now + m->session_timeout_ms;
    return FLOE_GERR_NONE;
}

int16_t floe_group_commit_check_partition(const floe_group_coord_t *c, const char *metadata)
{
    if (metadata && strlen(metadata) > c->cfg.offset_metadata_max_bytes)
        return FLOE_GERR_OFFSET_METADATA_TOO_LARGE;
    return FLOE_GERR_NONE;
}

static int cmp_key(const goffset_t *o, const char *topic, int32_t partition)
{
    int r = strcmp(o->topic, topic);
    if (r) return r;
    return o->partition < partition ? -1 : o->partition > partition;
}

/* Index of (topic, partition), or where it would be inserted (*found false). */
static size_t offset_search(const group_t *g, const char *topic, int32_t partition, bool *found)
{
    size_t lo = 0, hi = g->noffsets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = cmp_key(&g->offsets[mid], topic, partition);
        if (r == 0) {
            *found = true;
            return mid;
        }
        if (r < 0) lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

int floe_group_offset_put(floe_group_coord_t *c, const char *group_id, const char *topic,
                          int32_t partition, const floe_group_offset_t *o, int64_t now)
{
    group_t *g = find_group(c, group_id);
    if (!g && !(g = new_group(c, group_id, now))) return -1;
    char *meta = strdup(o->metadata ? o->metadata : "");
    if (!meta) return -1;
    bool found;
    size_t i = offset_search(g, topic, partition, &found);
    if (!found) {
        char *t = strdup(topic);
        if (!t || grow(&g->offsets, &g->capoffsets, g->noffsets, sizeof *g->offsets)) {
            free(t);
            free(meta);
            return -1;
        }
        memmove(&g->offsets[i + 1], &g->offsets[i], (g->noffsets - i) * sizeof *g->offsets);
        g->noffsets++;
        g->offsets[i].topic = t;
        g->offsets[i].partition = partition;
        g->offsets[i].metadata = NULL;
    }
    goffset_t *e = &g->offsets[i];
    free(e->metadata);
    e->metadata = meta;
    e->offset = o->offset;
    e->leader_epoch = o->leader_epoch;
    e->commit_ts = o->commit_timestamp;
    return 0;
}

void floe_group_offset_remove(floe_group_coord_t *c, const char *group_id, const char *topic,
                              int32_t partition)
{
    group_t *g = find_group(c, group_id);
    if (!g) return;
    bool found;
    size_t i = offset_search(g, topic, partition, &found);
    if (!found) return;
    free(g->offsets[i].topic);
    free(g->offsets[i].metadata);
    memmove(&g->offsets[i], &g->offsets[i + 1], (g->noffsets - i - 1) * sizeof *g->offsets);
    g->noffsets--;
    int64_t when;
    if (forgettable(c, g, &when)) { /* its last offset was deleted */
        for (size_t k = 0; k < c->ngroups; k++) {
            if (c->groups[k] == g) {
                free_group(g);
                memmove(&c->groups[k], &c->groups[k + 1], (c->ngroups - k - 1) * sizeof *c->groups);
                c->ngroups--;
                break;
            }
        }
    }
}

static void fill_offset(const goffset_t *e, floe_group_offset_t *out)
{
    out->offset = e->offset;
    out->leader_epoch = e->leader_epoch;
    out->metadata = e->metadata;
    out->commit_timestamp = e->commit_ts;
}

int floe_group_offset_get(const floe_group_coord_t *c, const char *group_id, const char *topic,
                          int32_t partition, floe_group_offset_t *out)
{
    const group_t *g = find_group(c, group_id);
    if (!g) return -1;
    bool found;
    size_t i = offset_search(g, topic, partition, &found);
    if (!found) return -1;
    fill_offset(&g->offsets[i], out);
    return 0;
}

void floe_group_offsets_each(const floe_group_coord_t *c, const char *group_id,
                             floe_group_offset_fn fn, void *opaque)
{
    const group_t *g = find_group(c, group_id);
    if (!g) return;
    for (size_t i = 0; i < g->noffsets; i++) {
        floe_group_offset_t o;
        fill_offset(&g->offsets[i], &o);
        fn(opaque, g->offsets[i].topic, g->offsets[i].partition, &o);
    }
}

void floe_group_offsets_expired(const floe_group_coord_t *c, int64_t now, int64_t wall,
                                floe_group_expired_fn fn, void *opaque)
{
    int64_t r = c->cfg.offsets_retention_ms;
    if (r <= 0) return;
    for (size_t i = 0; i < c->ngroups; i++) {
        const group_t *g = c->groups[i];
        if (g->state != FLOE_GROUP_EMPTY || g->npending) continue;
        bool managed = g->protocol_type != NULL;
        if (managed && (g->empty_since > INT64_MAX - r || g->empty_since + r > now)) continue;
        for (size_t k = 0; k < g->noffsets; k++) {
            const goffset_t *o = &g->offsets[k];
            if (!managed && o->commit_ts > wall - r) continue;
            fn(opaque, g->id, o->topic, o->partition);
        }
    }
}
