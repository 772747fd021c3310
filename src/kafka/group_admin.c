/* The consumer group coordinator's admin side: ListGroups, DescribeGroups,
 * DeleteGroups, and the committed offsets it keeps in memory (see group.h,
 * group_int.h). */
#include "kafka/group_int.h"

#include <stdlib.h>
#include <string.h>

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
    const group_t *g = floe_grp_find(c, group_id);
    return g ? g->state : FLOE_GROUP_DEAD;
}

int floe_group_describe(const floe_group_coord_t *c, const char *group_id, floe_group_desc_t *out)
{
    memset(out, 0, sizeof *out);
    out->protocol_type = "";
    out->protocol_name = "";
    out->generation_id = -1;
    const group_t *g = floe_grp_find(c, group_id);
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
            const gproto_t *p = floe_grp_member_proto(m, g->protocol_name);
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
    const group_t *g = floe_grp_find(c, group_id);
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
            floe_grp_free(c->groups[i]);
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
    group_t *g = floe_grp_find(c, group_id);
    if (!g) /* no group management: only a standalone commit is allowed */
        return generation_id < 0 ? FLOE_GERR_NONE : FLOE_GERR_ILLEGAL_GENERATION;
    if (g->state == FLOE_GROUP_DEAD) return FLOE_GERR_COORDINATOR_NOT_AVAILABLE;
    if (floe_grp_is_fenced(g, member_id, instance_id)) return FLOE_GERR_FENCED_INSTANCE_ID;
    if (generation_id < 0 && g->state == FLOE_GROUP_EMPTY) return FLOE_GERR_NONE;
    gmember_t *m = floe_grp_find_member(g, member_id);
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
    group_t *g = floe_grp_find(c, group_id);
    if (!g && !(g = floe_grp_new(c, group_id, now))) return -1;
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
    group_t *g = floe_grp_find(c, group_id);
    if (!g) return;
    bool found;
    size_t i = offset_search(g, topic, partition, &found);
    if (!found) return;
    free(g->offsets[i].topic);
    free(g->offsets[i].metadata);
    memmove(&g->offsets[i], &g->offsets[i + 1], (g->noffsets - i - 1) * sizeof *g->offsets);
    g->noffsets--;
    int64_t when;
    if (floe_grp_forgettable(c, g, &when)) { /* its last offset was deleted */
        for (size_t k = 0; k < c->ngroups; k++) {
            if (c->groups[k] == g) {
                floe_grp_free(g);
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
    const group_t *g = floe_grp_find(c, group_id);
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
    const group_t *g = floe_grp_find(c, group_id);
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
