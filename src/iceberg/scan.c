/* Scan planning over manifests (see scan.h). */
#include "iceberg/scan.h"

#include <stdlib.h>
#include <string.h>

struct floe_ice_scan {
    size_t manifests_read, manifests_skipped;
    floe_ice_manifest_entry_t *data;
    size_t ndata;
    floe_ice_manifest_entry_t *dels;
    size_t ndels;
    floe_ice_scan_task_t *tasks;
    size_t ntasks;
};

void floe_ice_snapshot_content_free(floe_ice_snapshot_content_t *c)
{
    for (size_t i = 0; i < c->nmanifests; i++)
        if (c->entries) floe_ice_manifest_entries_free(c->entries[i], c->nentries[i]);
    floe_ice_manifest_files_free(c->manifests, c->nmanifests);
    free(c->entries);
    free(c->nentries);
    memset(c, 0, sizeof *c);
}

typedef bool (*keep_fn)(void *ctx, const floe_ice_manifest_file_t *m);

/* Read the manifest list and the manifests keep() accepts (all when keep
 * is NULL); skipped manifests stay listed with no entries. */
static int content_read(floe_fileio_t *io, const floe_ice_snapshot_t *snap, keep_fn keep, void *ctx,
                        floe_ice_snapshot_content_t *out, size_t *skipped, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!snap->manifest_list)
        return floe_err_set(err, FLOE_EUNSUPPORTED, "snapshot %lld has no manifest list",
                            (long long)snap->snapshot_id);
    if (floe_ice_manifest_list_read(io, snap->manifest_list, &out->manifests, &out->nmanifests,
                                    err) < 0)
        return -1;
    if (out->nmanifests) {
        out->entries = calloc(out->nmanifests, sizeof *out->entries);
        out->nentries = calloc(out->nmanifests, sizeof *out->nentries);
        if (!out->entries || !out->nentries) {
            floe_ice_snapshot_content_free(out);
            return floe_err_oom(err);
        }
    }
    for (size_t i = 0; i < out->nmanifests; i++) {
        if (keep && !keep(ctx, &out->manifests[i])) {
            (*skipped)++;
            continue;
        }
        if (floe_ice_manifest_read(io, out->manifests[i].path, &out->entries[i], &out->nentries[i],
                                   err) < 0) {
            floe_ice_snapshot_content_free(out);
            return -1;
        }
        floe_ice_manifest_entries_inherit(out->entries[i], out->nentries[i], &out->manifests[i]);
    }
    return 0;
}

int floe_ice_snapshot_content_read(floe_fileio_t *io, const floe_ice_snapshot_t *snap,
                                   floe_ice_snapshot_content_t *out, floe_err_t *err)
{
    size_t skipped = 0;
    return content_read(io, snap, NULL, NULL, out, &skipped, err);
}

typedef struct prune_ctx {
    const floe_ice_metadata_t *md;
    const floe_ice_schema_t *schema;
    const floe_ice_scan_pred_t *preds;
    size_t npreds;
} prune_ctx_t;

/* false when a data manifest's partition summaries prove that no file in
 * it matches a predicate (the predicate value, transformed, lies outside a
 * field's [lower, upper], or is null where the field holds no nulls) */
static bool manifest_may_match(void *ctx, const floe_ice_manifest_file_t *m)
{
    const prune_ctx_t *p = ctx;
    if (m->content != 0 || !p->schema) return true;
    const floe_ice_spec_t *spec = floe_ice_metadata_spec(p->md, m->spec_id);
    if (!spec || spec->nfields != m->npartitions) return true;
    for (size_t q = 0; q < p->npreds; q++) {
        const floe_ice_field_t *src = floe_ice_schema_find(p->schema, p->preds[q].source_id);
        if (!src) continue;
        for (size_t i = 0; i < spec->nfields; i++) {
            const floe_ice_partition_field_t *pf = &spec->fields[i];
            const floe_ice_field_summary_t *fs = &m->partitions[i];
            if (pf->source_id != p->preds[q].source_id || pf->transform.kind == FLOE_ICE_T_VOID)
                continue;
            floe_ice_value_t tv;
            floe_err_t e;
            if (floe_ice_transform_apply(pf->transform, src->type, &p->preds[q].value, &tv, &e) < 0)
                continue;
            bool out = false;
            if (tv.is_null) {
                out = !fs->contains_null;
            } else if (fs->has_lower && fs->has_upper) {
                floe_ice_type_t *rt = floe_ice_transform_result_type(pf->transform, src->type, &e);
                floe_ice_value_t lo, hi;
                if (rt &&
                    floe_ice_value_deserialize(rt, fs->lower.data, fs->lower.len, &lo, &e) == 0) {
                    if (floe_ice_value_deserialize(rt, fs->upper.data, fs->upper.len, &hi, &e) ==
                        0) {
                        out = floe_ice_value_cmp(&tv, &lo) < 0 || floe_ice_value_cmp(&tv, &hi) > 0;
                        floe_ice_value_clear(&hi);
                    }
                    floe_ice_value_clear(&lo);
                }
                floe_ice_type_free(rt);
            } else if (!fs->has_lower && !fs->has_upper && fs->contains_nan <= 0) {
                out = true; /* only nulls in this field */
            }
            floe_ice_value_clear(&tv);
            if (out) return false;
        }
    }
    return true;
}

static bool same_partition(const floe_ice_data_file_t *a, const floe_ice_data_file_t *b)
{
    if (a->spec_id != b->spec_id || a->npartition != b->npartition) return false;
    for (size_t i = 0; i < a->npartition; i++)
        if (!floe_ice_value_eq(&a->partition[i], &b->partition[i])) return false;
    return true;
}

static bool unpartitioned(const floe_ice_metadata_t *md, int32_t spec_id)
{
    const floe_ice_spec_t *s = floe_ice_metadata_spec(md, spec_id);
    if (!s) return false;
    for (size_t i = 0; i < s->nfields; i++)
        if (s->fields[i].transform.kind != FLOE_ICE_T_VOID) return false;
    return true;
}

bool floe_ice_delete_applies(const floe_ice_metadata_t *md, const floe_ice_manifest_entry_t *del,
                             const floe_ice_manifest_entry_t *data)
{
    bool scope = same_partition(&del->file, &data->file) || unpartitioned(md, del->file.spec_id);
    if (del->file.content == FLOE_ICE_CONTENT_POSITION_DELETES)
        return scope && del->sequence_number >= data->sequence_number;
    if (del->file.content == FLOE_ICE_CONTENT_EQUALITY_DELETES)
        return scope && del->sequence_number > data->sequence_number;
    return false;
}

/* false when a predicate proves the file holds no matching row */
static bool may_match(const floe_ice_metadata_t *md, const floe_ice_schema_t *schema,
                      const floe_ice_data_file_t *f, const floe_ice_scan_pred_t *preds,
                      size_t npreds)
{
    const floe_ice_spec_t *spec = floe_ice_metadata_spec(md, f->spec_id);
    if (!spec || spec->nfields != f->npartition) return true;
    for (size_t p = 0; p < npreds; p++) {
        const floe_ice_field_t *src = floe_ice_schema_find(schema, preds[p].source_id);
        if (!src) continue;
        for (size_t i = 0; i < spec->nfields; i++) {
            const floe_ice_partition_field_t *pf = &spec->fields[i];
            if (pf->source_id != preds[p].source_id || pf->transform.kind == FLOE_ICE_T_VOID)
                continue;
            floe_ice_value_t tv;
            floe_err_t e;
            if (floe_ice_transform_apply(pf->transform, src->type, &preds[p].value, &tv, &e) < 0)
                continue;
            bool eq = floe_ice_value_eq(&tv, &f->partition[i]);
            floe_ice_value_clear(&tv);
            if (!eq) return false;
        }
    }
    return true;
}

int floe_ice_scan_plan(floe_fileio_t *io, const floe_ice_metadata_t *md, int64_t snapshot_id,
                       const floe_ice_scan_pred_t *preds, size_t npreds, floe_ice_scan_t **out,
                       floe_err_t *err)
{
    *out = NULL;
    floe_ice_scan_t *s = calloc(1, sizeof *s);
    if (!s) return floe_err_oom(err);
    if (snapshot_id < 0) snapshot_id = md->current_snapshot_id;
    if (snapshot_id < 0) {
        *out = s;
        return 0;
    }
    const floe_ice_snapshot_t *snap = floe_ice_metadata_snapshot(md, snapshot_id);
    if (!snap) {
        free(s);
        return floe_err_set(err, FLOE_ENOENT, "no snapshot %lld", (long long)snapshot_id);
    }
    const floe_ice_schema_t *schema = floe_ice_metadata_current_schema(md);
    floe_ice_snapshot_content_t c;
    prune_ctx_t pc = {md, schema, preds, npreds};
    if (content_read(io, snap, npreds ? manifest_may_match : NULL, &pc, &c, &s->manifests_skipped,
                     err) < 0) {
        free(s);
        return -1;
    }
    s->manifests_read = c.nmanifests - s->manifests_skipped;
    size_t total = 0;
    for (size_t i = 0; i < c.nmanifests; i++) total += c.nentries[i];
    if (total) {
        s->data = calloc(total, sizeof *s->data);
        s->dels = calloc(total, sizeof *s->dels);
        if (!s->data || !s->dels) goto oom;
    }
    /* move live entries out of the content (ownership transfer) */
    for (size_t i = 0; i < c.nmanifests; i++)
        for (size_t k = 0; k < c.nentries[i]; k++) {
            floe_ice_manifest_entry_t *e = &c.entries[i][k];
            if (e->status == FLOE_ICE_DELETED) continue;
            if (e->file.content == FLOE_ICE_CONTENT_DATA) {
                if (npreds && schema && !may_match(md, schema, &e->file, preds, npreds)) continue;
                s->data[s->ndata++] = *e;
            } else {
                s->dels[s->ndels++] = *e;
            }
            floe_ice_data_file_init(&e->file);
        }
    floe_ice_snapshot_content_free(&c);
    if (s->ndata && !(s->tasks = calloc(s->ndata, sizeof *s->tasks))) goto oom2;
    for (size_t i = 0; i < s->ndata; i++) {
        floe_ice_scan_task_t *t = &s->tasks[s->ntasks++];
        const floe_ice_manifest_entry_t *d = &s->data[i];
        t->file = &d->file;
        t->sequence_number = d->sequence_number;
        t->snapshot_id = d->snapshot_id;
        for (size_t k = 0; k < s->ndels; k++) {
            const floe_ice_manifest_entry_t *x = &s->dels[k];
            bool applies = floe_ice_delete_applies(md, x, d);
            if (!applies) continue;
            const floe_ice_data_file_t **nd = realloc(t->deletes, (t->ndeletes + 1) * sizeof *nd);
            if (!nd) goto oom2;
            t->deletes = nd;
            nd[t->ndeletes++] = &x->file;
        }
    }
    *out = s;
    return 0;
oom:
    floe_ice_snapshot_content_free(&c);
oom2:
    floe_ice_scan_free(s);
    return floe_err_oom(err);
}

size_t floe_ice_scan_ntasks(const floe_ice_scan_t *s)
{
    return s->ntasks;
}
size_t floe_ice_scan_manifests_skipped(const floe_ice_scan_t *s)
{
    return s->manifests_skipped;
}
const floe_ice_scan_task_t *floe_ice_scan_task(const floe_ice_scan_t *s, size_t i)
{
    return &s->tasks[i];
}
size_t floe_ice_scan_ndelete_files(const floe_ice_scan_t *s)
{
    return s->ndels;
}
const floe_ice_manifest_entry_t *floe_ice_scan_delete_file(const floe_ice_scan_t *s, size_t i)
{
    return &s->dels[i];
}

void floe_ice_scan_free(floe_ice_scan_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->ntasks; i++) free(s->tasks[i].deletes);
    free(s->tasks);
    for (size_t i = 0; i < s->ndata; i++) floe_ice_data_file_clear(&s->data[i].file);
    for (size_t i = 0; i < s->ndels; i++) floe_ice_data_file_clear(&s->dels[i].file);
    free(s->data);
    free(s->dels);
    free(s);
}
