/* Table metadata model: construction, copies, lookups, updates and
 * requirements (JSON lives in metadata_json.c). */
#include "iceberg/metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/parse.h"
#include "util/rand.h"

/* ---- properties ---- */

const char *floe_ice_props_get(const floe_ice_props_t *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) return p->kv[i].value;
    return NULL;
}

int64_t floe_ice_props_get_i64(const floe_ice_props_t *p, const char *key, int64_t min, int64_t max,
                               int64_t def)
{
    const char *v = floe_ice_props_get(p, key);
    int64_t x;
    if (!v || floe_parse_int64(v, min, max, &x, NULL) < 0) return def;
    return x;
}

bool floe_ice_props_get_bool(const floe_ice_props_t *p, const char *key, bool def)
{
    const char *v = floe_ice_props_get(p, key);
    bool b;
    if (!v || floe_parse_bool(v, &b, NULL) < 0) return def;
    return b;
}

int floe_ice_props_set(floe_ice_props_t *p, const char *key, const char *value)
{
    char *v = strdup(value ? value : "");
    if (!v) return -1;
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) {
            free(p->kv[i].value);
            p->kv[i].value = v;
            return 0;
        }
    char *k = strdup(key);
    floe_ice_kv_t *nkv = k ? realloc(p->kv, (p->n + 1) * sizeof *nkv) : NULL;
    if (!nkv) {
        free(k);
        free(v);
        return -1;
    }
    p->kv = nkv;
    nkv[p->n].key = k;
    nkv[p->n].value = v;
    p->n++;
    return 0;
}

int floe_ice_props_remove(floe_ice_props_t *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) {
            free(p->kv[i].key);
            free(p->kv[i].value);
            memmove(&p->kv[i], &p->kv[i + 1], (p->n - i - 1) * sizeof *p->kv);
            p->n--;
            return 0;
        }
    return 0;
}

int floe_ice_props_copy(floe_ice_props_t *dst, const floe_ice_props_t *src)
{
    memset(dst, 0, sizeof *dst);
    for (size_t i = 0; i < src->n; i++)
        if (floe_ice_props_set(dst, src->kv[i].key, src->kv[i].value) < 0) {
            floe_ice_props_clear(dst);
            return -1;
        }
    return 0;
}

void floe_ice_props_clear(floe_ice_props_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->kv[i].key);
        free(p->kv[i].value);
    }
    free(p->kv);
    memset(p, 0, sizeof *p);
}

/* ---- snapshots ---- */

void floe_ice_snapshot_free(floe_ice_snapshot_t *s)
{
    if (!s) return;
    free(s->manifest_list);
    free(s->operation);
    floe_ice_props_clear(&s->summary);
    free(s);
}

floe_ice_snapshot_t *floe_ice_snapshot_dup(const floe_ice_snapshot_t *s)
{
    floe_ice_snapshot_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *s;
    c->manifest_list = s->manifest_list ? strdup(s->manifest_list) : NULL;
    c->operation = s->operation ? strdup(s->operation) : NULL;
    memset(&c->summary, 0, sizeof c->summary);
    if ((s->manifest_list && !c->manifest_list) || (s->operation && !c->operation) ||
        floe_ice_props_copy(&c->summary, &s->summary) < 0) {
        floe_ice_snapshot_free(c);
        return NULL;
    }
    return c;
}

/* ---- ids ---- */

void floe_ice_uuid4(char out[37])
{
    uint8_t b[16];
    floe_rand_bytes(b, sizeof b);
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    static const char hex[] = "0123456789abcdef";
    int o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = '\0';
}

int64_t floe_ice_new_snapshot_id(void)
{
    uint64_t v = floe_rand_u64();
    v &= (1ULL << 53) - 1; /* exact in JSON readers that use doubles */
    return v ? (int64_t)v : 1;
}

/* ---- metadata ---- */

static int push_ptr(void ***arr, size_t *n, void *p)
{
    void **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na) return -1;
    *arr = na;
    na[(*n)++] = p;
    return 0;
}

floe_ice_metadata_t *floe_ice_metadata_new_table(const floe_ice_schema_t *schema,
                                                 const floe_ice_spec_t *spec,
                                                 const floe_ice_sort_order_t *order,
                                                 const char *location,
                                                 const floe_ice_props_t *props, floe_err_t *err)
{
    if (floe_ice_schema_validate(schema, err) < 0) return NULL;
    if (spec && floe_ice_spec_validate(spec, schema, err) < 0) return NULL;
    floe_ice_metadata_t *m = calloc(1, sizeof *m);
    if (!m) goto oom;
    m->format_version = 2;
    floe_ice_uuid4(m->table_uuid);
    m->location = strdup(location ? location : "");
    m->last_updated_ms = floe_wall_ms();
    m->current_snapshot_id = -1;
    m->last_added_schema_id = m->last_added_spec_id = m->last_added_order_id = -1;
    m->last_partition_id = 999;
    floe_ice_schema_t *s = floe_ice_schema_dup(schema);
    if (!m->location || !s || push_ptr((void ***)&m->schemas, &m->nschemas, s) < 0) {
        floe_ice_schema_free(s);
        goto oom;
    }
    s->schema_id = 0;
    m->current_schema_id = 0;
    m->last_column_id = floe_ice_schema_max_id(s);
    floe_ice_spec_t *sp = spec ? floe_ice_spec_dup(spec) : floe_ice_spec_new(0);
    if (!sp || push_ptr((void ***)&m->specs, &m->nspecs, sp) < 0) {
        floe_ice_spec_free(sp);
        goto oom;
    }
    sp->spec_id = 0;
    for (size_t i = 0; i < sp->nfields; i++)
        if (sp->fields[i].field_id > m->last_partition_id)
            m->last_partition_id = sp->fields[i].field_id;
    floe_ice_sort_order_t *o = order ? floe_ice_sort_order_dup(order) : floe_ice_sort_order_new(0);
    if (!o || push_ptr((void ***)&m->orders, &m->norders, o) < 0) {
        floe_ice_sort_order_free(o);
        goto oom;
    }
    if (o->nfields == 0) o->order_id = 0;
    else if (o->order_id == 0)
        o->order_id = 1;
    m->default_sort_order_id = o->order_id;
    if (props && floe_ice_props_copy(&m->properties, props) < 0) goto oom;
    return m;
oom:
    floe_ice_metadata_free(m);
    floe_err_oom(err);
    return NULL;
}

void floe_ice_metadata_free(floe_ice_metadata_t *m)
{
    if (!m) return;
    free(m->location);
    for (size_t i = 0; i < m->nschemas; i++) floe_ice_schema_free(m->schemas[i]);
    free(m->schemas);
    for (size_t i = 0; i < m->nspecs; i++) floe_ice_spec_free(m->specs[i]);
    free(m->specs);
    for (size_t i = 0; i < m->norders; i++) floe_ice_sort_order_free(m->orders[i]);
    free(m->orders);
    floe_ice_props_clear(&m->properties);
    for (size_t i = 0; i < m->nsnapshots; i++) floe_ice_snapshot_free(m->snapshots[i]);
    free(m->snapshots);
    free(m->snapshot_log);
    for (size_t i = 0; i < m->nmetadata_log; i++) free(m->metadata_log[i].file);
    free(m->metadata_log);
    for (size_t i = 0; i < m->nrefs; i++) free(m->refs[i].name);
    free(m->refs);
    free(m);
}

floe_ice_metadata_t *floe_ice_metadata_dup(const floe_ice_metadata_t *m)
{
    floe_ice_metadata_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *m;
    c->location = NULL;
    c->schemas = NULL;
    c->nschemas = 0;
    c->specs = NULL;
    c->nspecs = 0;
    c->orders = NULL;
    c->norders = 0;
    memset(&c->properties, 0, sizeof c->properties);
    c->snapshots = NULL;
    c->nsnapshots = 0;
    c->snapshot_log = NULL;
    c->nsnapshot_log = 0;
    c->metadata_log = NULL;
    c->nmetadata_log = 0;
    c->refs = NULL;
    c->nrefs = 0;
    if (!(c->location = strdup(m->location))) goto fail;
    for (size_t i = 0; i < m->nschemas; i++) {
        floe_ice_schema_t *s = floe_ice_schema_dup(m->schemas[i]);
        if (!s || push_ptr((void ***)&c->schemas, &c->nschemas, s) < 0) {
            floe_ice_schema_free(s);
            goto fail;
        }
    }
    for (size_t i = 0; i < m->nspecs; i++) {
        floe_ice_spec_t *s = floe_ice_spec_dup(m->specs[i]);
        if (!s || push_ptr((void ***)&c->specs, &c->nspecs, s) < 0) {
            floe_ice_spec_free(s);
            goto fail;
        }
    }
    for (size_t i = 0; i < m->norders; i++) {
        floe_ice_sort_order_t *s = floe_ice_sort_order_dup(m->orders[i]);
        if (!s || push_ptr((void ***)&c->orders, &c->norders, s) < 0) {
            floe_ice_sort_order_free(s);
            goto fail;
        }
    }
    if (floe_ice_props_copy(&c->properties, &m->properties) < 0) goto fail;
    for (size_t i = 0; i < m->nsnapshots; i++) {
        floe_ice_snapshot_t *s = floe_ice_snapshot_dup(m->snapshots[i]);
        if (!s || push_ptr((void ***)&c->snapshots, &c->nsnapshots, s) < 0) {
            floe_ice_snapshot_free(s);
            goto fail;
        }
    }
    if (m->nsnapshot_log) {
        if (!(c->snapshot_log = malloc(m->nsnapshot_log * sizeof *c->snapshot_log))) goto fail;
        memcpy(c->snapshot_log, m->snapshot_log, m->nsnapshot_log * sizeof *c->snapshot_log);
        c->nsnapshot_log = m->nsnapshot_log;
    }
    if (m->nmetadata_log) {
        if (!(c->metadata_log = calloc(m->nmetadata_log, sizeof *c->metadata_log))) goto fail;
        c->nmetadata_log = m->nmetadata_log;
        for (size_t i = 0; i < m->nmetadata_log; i++) {
            c->metadata_log[i].timestamp_ms = m->metadata_log[i].timestamp_ms;
            if (!(c->metadata_log[i].file = strdup(m->metadata_log[i].file))) goto fail;
        }
    }
    if (m->nrefs) {
        if (!(c->refs = calloc(m->nrefs, sizeof *c->refs))) goto fail;
        c->nrefs = m->nrefs;
        for (size_t i = 0; i < m->nrefs; i++) {
            c->refs[i] = m->refs[i];
            c->refs[i].name = NULL;
            if (!(c->refs[i].name = strdup(m->refs[i].name))) goto fail;
        }
    }
    return c;
fail:
    floe_ice_metadata_free(c);
    return NULL;
}

const floe_ice_schema_t *floe_ice_metadata_schema(const floe_ice_metadata_t *m, int32_t id)
{
    for (size_t i = 0; i < m->nschemas; i++)
        if (m->schemas[i]->schema_id == id) return m->schemas[i];
    return NULL;
}

const floe_ice_schema_t *floe_ice_metadata_current_schema(const floe_ice_metadata_t *m)
{
    return floe_ice_metadata_schema(m, m->current_schema_id);
}

const floe_ice_spec_t *floe_ice_metadata_spec(const floe_ice_metadata_t *m, int32_t id)
{
    for (size_t i = 0; i < m->nspecs; i++)
        if (m->specs[i]->spec_id == id) return m->specs[i];
    return NULL;
}

const floe_ice_spec_t *floe_ice_metadata_default_spec(const floe_ice_metadata_t *m)
{
    return floe_ice_metadata_spec(m, m->default_spec_id);
}

const floe_ice_snapshot_t *floe_ice_metadata_snapshot(const floe_ice_metadata_t *m, int64_t id)
{
    for (size_t i = 0; i < m->nsnapshots; i++)
        if (m->snapshots[i]->snapshot_id == id) return m->snapshots[i];
    return NULL;
}

const floe_ice_snapshot_t *floe_ice_metadata_current_snapshot(const floe_ice_metadata_t *m)
{
    return m->current_snapshot_id < 0 ? NULL
                                      : floe_ice_metadata_snapshot(m, m->current_snapshot_id);
}

const floe_ice_ref_t *floe_ice_metadata_ref(const floe_ice_metadata_t *m, const char *name)
{
    for (size_t i = 0; i < m->nrefs; i++)
        if (strcmp(m->refs[i].name, name) == 0) return &m->refs[i];
    return NULL;
}

/* ---- updates ---- */

void floe_ice_update_clear(floe_ice_update_t *u)
{
    free(u->str);
    floe_ice_schema_free(u->schema);
    floe_ice_spec_free(u->spec);
    floe_ice_sort_order_free(u->order);
    floe_ice_snapshot_free(u->snapshot);
    free(u->ref.name);
    free(u->snapshot_ids);
    floe_ice_props_clear(&u->props);
    memset(u, 0, sizeof *u);
}

/* Give a new spec's fields the ids that equal fields (same source and
 * transform) have in earlier specs, and fresh ids to the rest, so that a
 * partition field keeps its id across spec evolution. */
static void bind_spec_ids(floe_ice_metadata_t *m, floe_ice_spec_t *sp)
{
    for (size_t i = 0; i < sp->nfields; i++) {
        floe_ice_partition_field_t *f = &sp->fields[i];
        int32_t found = -1;
        for (size_t s = 0; s < m->nspecs; s++)
            for (size_t j = 0; j < m->specs[s]->nfields; j++) {
                const floe_ice_partition_field_t *o = &m->specs[s]->fields[j];
                if (o->source_id == f->source_id && o->transform.kind == f->transform.kind &&
                    o->transform.param == f->transform.param)
                    found = o->field_id;
            }
        f->field_id = found >= 0 ? found : ++m->last_partition_id;
    }
}

static int set_ref(floe_ice_metadata_t *m, const floe_ice_ref_t *r, floe_err_t *err)
{
    const floe_ice_snapshot_t *s = floe_ice_metadata_snapshot(m, r->snapshot_id);
    if (!s)
        return floe_err_set(err, FLOE_EINVAL, "set-snapshot-ref '%s': unknown snapshot %lld",
                            r->name, (long long)r->snapshot_id);
    floe_ice_ref_t *slot = NULL;
    for (size_t i = 0; i < m->nrefs; i++)
        if (strcmp(m->refs[i].name, r->name) == 0) slot = &m->refs[i];
    if (!slot) {
        floe_ice_ref_t *nr = realloc(m->refs, (m->nrefs + 1) * sizeof *nr);
        if (!nr) return floe_err_oom(err);
        m->refs = nr;
        slot = &nr[m->nrefs];
        memset(slot, 0, sizeof *slot);
        if (!(slot->name = strdup(r->name))) return floe_err_oom(err);
        m->nrefs++;
    }
    char *name = slot->name;
    *slot = *r;
    slot->name = name;
    if (strcmp(r->name, "main") == 0) {
        if (r->is_tag) return floe_err_set(err, FLOE_EINVAL, "main must be a branch");
        if (m->current_snapshot_id != r->snapshot_id) {
            floe_ice_snapshot_log_t *nl =
                realloc(m->snapshot_log, (m->nsnapshot_log + 1) * sizeof *nl);
            if (!nl) return floe_err_oom(err);
            m->snapshot_log = nl;
            nl[m->nsnapshot_log].timestamp_ms = s->timestamp_ms;
            nl[m->nsnapshot_log].snapshot_id = s->snapshot_id;
            m->nsnapshot_log++;
        }
        m->current_snapshot_id = r->snapshot_id;
    }
    return 0;
}

static bool id_in(int64_t id, const int64_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return true;
    return false;
}

int floe_ice_update_apply(floe_ice_metadata_t *m, const floe_ice_update_t *u, floe_err_t *err)
{
    m->last_updated_ms = floe_wall_ms();
    switch (u->kind) {
    case FLOE_ICE_UP_ASSIGN_UUID:
        if (!u->str || strlen(u->str) != 36)
            return floe_err_set(err, FLOE_EINVAL, "assign-uuid: bad uuid");
        memcpy(m->table_uuid, u->str, 37);
        return 0;
    case FLOE_ICE_UP_UPGRADE_FORMAT_VERSION:
        if (u->id < m->format_version || u->id > 2)
            return floe_err_set(err, FLOE_EINVAL, "cannot change format version %d to %d",
                                m->format_version, u->id);
        m->format_version = u->id;
        return 0;
    case FLOE_ICE_UP_ADD_SCHEMA: {
        if (!u->schema) return floe_err_set(err, FLOE_EINVAL, "add-schema without schema");
        if (floe_ice_schema_validate(u->schema, err) < 0) return -1;
        int32_t maxid = -1;
        for (size_t i = 0; i < m->nschemas; i++) {
            if (floe_ice_schema_same(m->schemas[i], u->schema)) {
                m->last_added_schema_id = m->schemas[i]->schema_id;
                return 0;
            }
            if (m->schemas[i]->schema_id > maxid) maxid = m->schemas[i]->schema_id;
        }
        floe_ice_schema_t *s = floe_ice_schema_dup(u->schema);
        if (!s || push_ptr((void ***)&m->schemas, &m->nschemas, s) < 0) {
            floe_ice_schema_free(s);
            return floe_err_oom(err);
        }
        s->schema_id = maxid + 1;
        m->last_added_schema_id = s->schema_id;
        int32_t mx = floe_ice_schema_max_id(s);
        if (mx > m->last_column_id) m->last_column_id = mx;
        return 0;
    }
    case FLOE_ICE_UP_SET_CURRENT_SCHEMA: {
        int32_t id = u->id == -1 ? m->last_added_schema_id : u->id;
        if (!floe_ice_metadata_schema(m, id))
            return floe_err_set(err, FLOE_EINVAL, "set-current-schema: unknown schema %d", u->id);
        m->current_schema_id = id;
        return 0;
    }
    case FLOE_ICE_UP_ADD_SPEC: {
        if (!u->spec) return floe_err_set(err, FLOE_EINVAL, "add-spec without spec");
        floe_ice_spec_t *sp = floe_ice_spec_dup(u->spec);
        if (!sp) return floe_err_oom(err);
        bind_spec_ids(m, sp);
        int32_t maxid = -1;
        for (size_t i = 0; i < m->nspecs; i++) {
            if (floe_ice_spec_same(m->specs[i], sp)) {
                m->last_added_spec_id = m->specs[i]->spec_id;
                floe_ice_spec_free(sp);
                return 0;
            }
            if (m->specs[i]->spec_id > maxid) maxid = m->specs[i]->spec_id;
        }
        /* partition sources must exist in some schema */
        for (size_t i = 0; i < sp->nfields; i++) {
            bool ok = sp->fields[i].transform.kind == FLOE_ICE_T_VOID;
            for (size_t s = 0; s < m->nschemas && !ok; s++)
                if (floe_ice_schema_find(m->schemas[s], sp->fields[i].source_id)) ok = true;
            if (!ok) {
                floe_ice_spec_free(sp);
                return floe_err_set(err, FLOE_EINVAL, "add-spec: source id %d not in any schema",
                                    u->spec->fields[i].source_id);
            }
        }
        if (push_ptr((void ***)&m->specs, &m->nspecs, sp) < 0) {
            floe_ice_spec_free(sp);
            return floe_err_oom(err);
        }
        sp->spec_id = maxid + 1;
        m->last_added_spec_id = sp->spec_id;
        return 0;
    }
    case FLOE_ICE_UP_SET_DEFAULT_SPEC: {
        int32_t id = u->id == -1 ? m->last_added_spec_id : u->id;
        if (!floe_ice_metadata_spec(m, id))
            return floe_err_set(err, FLOE_EINVAL, "set-default-spec: unknown spec %d", u->id);
        m->default_spec_id = id;
        return 0;
    }
    case FLOE_ICE_UP_ADD_SORT_ORDER: {
        if (!u->order) return floe_err_set(err, FLOE_EINVAL, "add-sort-order without order");
        int32_t maxid = 0;
        for (size_t i = 0; i < m->norders; i++) {
            const floe_ice_sort_order_t *o = m->orders[i];
            if (o->nfields == u->order->nfields &&
                (o->nfields == 0 ||
                 memcmp(o->fields, u->order->fields, o->nfields * sizeof *o->fields) == 0)) {
                m->last_added_order_id = o->order_id;
                return 0;
            }
            if (o->order_id > maxid) maxid = o->order_id;
        }
        floe_ice_sort_order_t *o = floe_ice_sort_order_dup(u->order);
        if (!o || push_ptr((void ***)&m->orders, &m->norders, o) < 0) {
            floe_ice_sort_order_free(o);
            return floe_err_oom(err);
        }
        o->order_id = o->nfields ? maxid + 1 : 0;
        m->last_added_order_id = o->order_id;
        return 0;
    }
    case FLOE_ICE_UP_SET_DEFAULT_SORT_ORDER: {
        int32_t id = u->id == -1 ? m->last_added_order_id : u->id;
        for (size_t i = 0; i < m->norders; i++)
            if (m->orders[i]->order_id == id) {
                m->default_sort_order_id = id;
                return 0;
            }
        return floe_err_set(err, FLOE_EINVAL, "set-default-sort-order: unknown order %d", u->id);
    }
    case FLOE_ICE_UP_ADD_SNAPSHOT: {
        const floe_ice_snapshot_t *s = u->snapshot;
        if (!s) return floe_err_set(err, FLOE_EINVAL, "add-snapshot without snapshot");
        if (floe_ice_metadata_snapshot(m, s->snapshot_id))
            return floe_err_set(err, FLOE_EINVAL, "snapshot %lld already exists",
                                (long long)s->snapshot_id);
        if (m->format_version >= 2 && s->sequence_number <= m->last_sequence_number)
            return floe_err_set(err, FLOE_EINVAL, "snapshot sequence number %lld is not above %lld",
                                (long long)s->sequence_number, (long long)m->last_sequence_number);
        floe_ice_snapshot_t *c = floe_ice_snapshot_dup(s);
        if (!c || push_ptr((void ***)&m->snapshots, &m->nsnapshots, c) < 0) {
            floe_ice_snapshot_free(c);
            return floe_err_oom(err);
        }
        if (s->sequence_number > m->last_sequence_number)
            m->last_sequence_number = s->sequence_number;
        m->last_updated_ms = s->timestamp_ms;
        return 0;
    }
    case FLOE_ICE_UP_SET_SNAPSHOT_REF:
        if (!u->ref.name) return floe_err_set(err, FLOE_EINVAL, "set-snapshot-ref without name");
        return set_ref(m, &u->ref, err);
    case FLOE_ICE_UP_REMOVE_SNAPSHOT_REF:
        if (!u->ref.name) return floe_err_set(err, FLOE_EINVAL, "remove-snapshot-ref without name");
        for (size_t i = 0; i < m->nrefs; i++)
            if (strcmp(m->refs[i].name, u->ref.name) == 0) {
                free(m->refs[i].name);
                memmove(&m->refs[i], &m->refs[i + 1], (m->nrefs - i - 1) * sizeof *m->refs);
                m->nrefs--;
                break;
            }
        if (strcmp(u->ref.name, "main") == 0) m->current_snapshot_id = -1;
        return 0;
    case FLOE_ICE_UP_REMOVE_SNAPSHOTS: {
        size_t o = 0;
        for (size_t i = 0; i < m->nsnapshots; i++) {
            if (id_in(m->snapshots[i]->snapshot_id, u->snapshot_ids, u->nsnapshot_ids))
                floe_ice_snapshot_free(m->snapshots[i]);
            else
                m->snapshots[o++] = m->snapshots[i];
        }
        m->nsnapshots = o;
        o = 0;
        for (size_t i = 0; i < m->nsnapshot_log; i++)
            if (!id_in(m->snapshot_log[i].snapshot_id, u->snapshot_ids, u->nsnapshot_ids))
                m->snapshot_log[o++] = m->snapshot_log[i];
        m->nsnapshot_log = o;
        o = 0;
        for (size_t i = 0; i < m->nrefs; i++) {
            if (id_in(m->refs[i].snapshot_id, u->snapshot_ids, u->nsnapshot_ids)) {
                if (strcmp(m->refs[i].name, "main") == 0) m->current_snapshot_id = -1;
                free(m->refs[i].name);
            } else {
                m->refs[o++] = m->refs[i];
            }
        }
        m->nrefs = o;
        return 0;
    }
    case FLOE_ICE_UP_SET_LOCATION: {
        char *l = u->str ? strdup(u->str) : NULL;
        if (!l) return floe_err_set(err, FLOE_EINVAL, "set-location without location");
        free(m->location);
        m->location = l;
        return 0;
    }
    case FLOE_ICE_UP_SET_PROPERTIES:
        for (size_t i = 0; i < u->props.n; i++)
            if (floe_ice_props_set(&m->properties, u->props.kv[i].key, u->props.kv[i].value) < 0)
                return floe_err_oom(err);
        return 0;
    case FLOE_ICE_UP_REMOVE_PROPERTIES:
        for (size_t i = 0; i < u->props.n; i++)
            floe_ice_props_remove(&m->properties, u->props.kv[i].key);
        return 0;
    }
    return floe_err_set(err, FLOE_EINVAL, "unknown update %d", (int)u->kind);
}

int floe_ice_req_check(const floe_ice_req_t *r, const floe_ice_metadata_t *m, floe_err_t *err)
{
    if (r->kind == FLOE_ICE_REQ_ASSERT_CREATE) {
        if (m)
            return floe_err_set(err, FLOE_ECONFLICT, "assert-create failed: table already exists");
        return 0;
    }
    if (!m) return floe_err_set(err, FLOE_ECONFLICT, "requirement failed: table does not exist");
    switch (r->kind) {
    case FLOE_ICE_REQ_ASSERT_TABLE_UUID:
        if (strcmp(r->uuid, m->table_uuid) != 0)
            return floe_err_set(err, FLOE_ECONFLICT, "assert-table-uuid failed: %s != %s", r->uuid,
                                m->table_uuid);
        return 0;
    case FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID: {
        const floe_ice_ref_t *ref = floe_ice_metadata_ref(m, r->ref);
        int64_t cur = ref ? ref->snapshot_id : -1;
        if (!ref && strcmp(r->ref, "main") == 0) cur = m->current_snapshot_id;
        if (cur != r->value)
            return floe_err_set(err, FLOE_ECONFLICT,
                                "assert-ref-snapshot-id failed: ref %s is at %lld, expected %lld",
                                r->ref, (long long)cur, (long long)r->value);
        return 0;
    }
    case FLOE_ICE_REQ_ASSERT_LAST_ASSIGNED_FIELD_ID:
        if (m->last_column_id != r->value)
            return floe_err_set(err, FLOE_ECONFLICT,
                                "assert-last-assigned-field-id failed: %d != %lld",
                                m->last_column_id, (long long)r->value);
        return 0;
    case FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID:
        if (m->current_schema_id != r->value)
            return floe_err_set(err, FLOE_ECONFLICT, "assert-current-schema-id failed: %d != %lld",
                                m->current_schema_id, (long long)r->value);
        return 0;
    case FLOE_ICE_REQ_ASSERT_LAST_ASSIGNED_PARTITION_ID:
        if (m->last_partition_id != r->value)
            return floe_err_set(err, FLOE_ECONFLICT,
                                "assert-last-assigned-partition-id failed: %d != %lld",
                                m->last_partition_id, (long long)r->value);
        return 0;
    case FLOE_ICE_REQ_ASSERT_DEFAULT_SPEC_ID:
        if (m->default_spec_id != r->value)
            return floe_err_set(err, FLOE_ECONFLICT, "assert-default-spec-id failed: %d != %lld",
                                m->default_spec_id, (long long)r->value);
        return 0;
    case FLOE_ICE_REQ_ASSERT_DEFAULT_SORT_ORDER_ID:
        if (m->default_sort_order_id != r->value)
            return floe_err_set(err, FLOE_ECONFLICT,
                                "assert-default-sort-order-id failed: %d != %lld",
                                m->default_sort_order_id, (long long)r->value);
        return 0;
    default: return floe_err_set(err, FLOE_EINVAL, "unknown requirement %d", (int)r->kind);
    }
}
