/* Table side of the engine: opening (or creating) a table topic's tables,
 * resuming from their snapshot summaries, deleting files no snapshot
 * references, and the commit: schema first, then the dead-letter table,
 * then the main table, each snapshot recording the next offset of every
 * partition it covers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/scan.h"
#include "table/engine_int.h"
#include "table/ptuple.h"
#include "table/offsets.h"
#include "table/schema_map.h"
#include "util/clock.h"
#include "util/diag.h"

int floe_tout_data_dir(const floe_tout_t *o, char *buf, size_t size)
{
    const floe_ice_metadata_t *md = o->ice ? floe_ice_table_metadata(o->ice) : NULL;
    if (!md || !md->location) return -1;
    int n = snprintf(buf, size, "%s/data", md->location);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

int floe_tout_add_pending(floe_tout_t *o, floe_ice_data_file_t *f, floe_err_t *err)
{
    if (o->npending == o->cappending) {
        size_t cap = o->cappending ? o->cappending * 2 : 16;
        floe_ice_data_file_t *p = realloc(o->pending, cap * sizeof *p);
        if (!p) {
            floe_ice_data_file_clear(f);
            return floe_err_oom(err);
        }
        o->pending = p;
        o->cappending = cap;
    }
    o->pending[o->npending++] = *f;
    return 0;
}

void floe_tout_drop_pending(floe_tout_t *o, bool keep, floe_fileio_t *io)
{
    for (size_t i = 0; i < o->npending; i++) {
        floe_err_t e;
        if (!keep && floe_fileio_remove(io, o->pending[i].path, &e) < 0)
            FLOE_WARN("cannot delete uncommitted file %s: %s", o->pending[i].path, e.msg);
        floe_ice_data_file_clear(&o->pending[i]);
    }
    o->npending = 0;
}

void floe_tout_clear(floe_tout_t *o)
{
    floe_tout_drop_pending(o, true, NULL);
    free(o->pending);
    floe_tout_drop_rewrites(o, true, NULL);
    free(o->rewrites);
    free(o->removes);
    floe_tout_clear_widened(o);
    floe_ice_table_free(o->ice);
    floe_ice_schema_free(o->work);
    free(o->schema_json);
    free(o->committed);
    floe_ice_spec_free(o->spec);
    memset(o, 0, sizeof *o);
}

static int set_work(floe_tout_t *o, floe_ice_schema_t *work, floe_err_t *err)
{
    char *json = floe_ice_schema_to_json(work, err);
    if (!json) {
        floe_ice_schema_free(work);
        return -1;
    }
    floe_ice_schema_free(o->work);
    free(o->schema_json);
    o->work = work;
    o->schema_json = json;
    o->schema_version++;
    return 0;
}

int floe_tout_merge_schema(floe_tout_t *o, floe_tsink_t *s, floe_err_t *err)
{
    bool changed;
    int32_t last = o->last_column_id;
    /* sync into a copy: a refused field must not leave half an addition */
    floe_ice_schema_t *w = floe_ice_schema_dup(o->work);
    if (!w) return floe_err_oom(err);
    if (floe_tschema_merge(s->rows, w, &last, &changed, err) < 0) {
        floe_ice_schema_free(w);
        floe_err_wrap(err, "table %s.%s", o->ns, o->name);
        return -1;
    }
    if (!changed) {
        floe_ice_schema_free(w);
        return 0;
    }
    if (floe_tout_note_widened(o, o->work, w, err) < 0) {
        floe_ice_schema_free(w);
        return -1;
    }
    o->last_column_id = last;
    o->schema_dirty = true;
    if (set_work(o, w, err) < 0) return -1;
    s->seeded = o->schema_version; /* this buffer has every field already */
    FLOE_INFO("table %s.%s: schema grows to %d columns (last column id %d)", o->ns, o->name,
              (int)o->work->root->nfields, (int)last);
    return 0;
}

/* Take the loaded table `ice` (owned) as the output's state. */
static int adopt(floe_tout_t *o, floe_ice_table_t *ice, int32_t nparts, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(ice);
    const floe_ice_schema_t *cur = floe_ice_metadata_current_schema(md);
    floe_ice_schema_t *w = cur ? floe_ice_schema_dup(cur) : NULL;
    int64_t *committed = calloc((size_t)(nparts > 0 ? nparts : 1), sizeof *committed);
    if (!w || !committed) {
        floe_ice_schema_free(w);
        free(committed);
        floe_ice_table_free(ice);
        return floe_err_oom(err);
    }
    if (floe_offsets_read(md, committed, (size_t)nparts, err) < 0 || set_work(o, w, err) < 0) {
        free(committed);
        floe_ice_table_free(ice);
        return -1;
    }
    floe_ice_table_free(o->ice);
    o->ice = ice;
    free(o->committed);
    o->committed = committed;
    o->last_column_id = md->last_column_id;
    o->schema_dirty = false;
    floe_tout_clear_widened(o);
    const floe_ice_spec_t *ds = floe_ice_metadata_default_spec(md);
    floe_ice_spec_free(o->spec);
    o->spec = ds ? floe_ice_spec_dup(ds) : NULL;
    o->spec_dirty = false;
    o->spec_text[0] = '\0';
    o->spec_waiting = false;
    return 0;
}

void floe_tout_resolve_spec(floe_tout_t *o, const char *text)
{
    if (!strcmp(text, o->spec_text) && !o->spec_waiting) return;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    int32_t last_pid = md->last_partition_id;
    floe_err_t err;
    floe_ice_spec_t *want =
        text[0] ? floe_ice_spec_parse(o->work, text, 0, &last_pid, &err) : floe_ice_spec_new(0);
    if (!want) {
        /* the source fields may come with later records: keep the current
         * spec and try again at the next flush */
        if (!o->spec_waiting || strcmp(text, o->spec_text))
            FLOE_WARN("table %s.%s: table.partition.by '%s' not applied yet: %s", o->ns, o->name,
                      text, err.msg);
        snprintf(o->spec_text, sizeof o->spec_text, "%s", text);
        o->spec_waiting = true;
        return;
    }
    snprintf(o->spec_text, sizeof o->spec_text, "%s", text);
    o->spec_waiting = false;
    if (o->spec && floe_tspec_equiv(o->spec, want)) {
        floe_ice_spec_free(want);
        return;
    }
    /* an equal spec the table already has keeps its ids; else a new one */
    int32_t next_id = 0;
    for (size_t i = 0; i < md->nspecs; i++) {
        if (floe_tspec_equiv(md->specs[i], want)) {
            floe_ice_spec_free(want);
            floe_ice_spec_free(o->spec);
            o->spec = floe_ice_spec_dup(md->specs[i]);
            o->spec_dirty = md->specs[i]->spec_id != md->default_spec_id;
            return;
        }
        if (md->specs[i]->spec_id >= next_id) next_id = md->specs[i]->spec_id + 1;
    }
    want->spec_id = next_id;
    floe_ice_spec_free(o->spec);
    o->spec = want;
    o->spec_dirty = true;
    FLOE_INFO("table %s.%s: partitioning by '%s' (spec %d) from the next files", o->ns, o->name,
              text, (int)next_id);
}

/* ---- orphans -------------------------------------------------------------- */

typedef struct strset {
    char **v;
    size_t n, cap;
} strset_t;

static int strset_add(strset_t *s, const char *x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(x))) return -1;
    s->n++;
    return 0;
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool strset_has(const strset_t *s, const char *x)
{
    return s->n && bsearch(&x, s->v, s->n, sizeof *s->v, cmpstr) != NULL;
}

static void strset_free(strset_t *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

/* Delete unreferenced files under dir: in data/ (recursively: partition
 * folders) every file floe wrote that no snapshot references, temp files of
 * interrupted writes included; in metadata/ unreferenced manifests and temp
 * files.  A name that lists as empty is a file (or an empty folder, whose
 * removal fails harmlessly). */
static int sweep(floe_fileio_t *io, const char *dir, const strset_t *refs, bool data,
                 size_t *removed, floe_err_t *err)
{
    char **names;
    size_t n;
    if (floe_fileio_list(io, dir, &names, &n, err) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char **sub;
        size_t nsub;
        floe_err_t le;
        if (data && floe_fileio_list(io, path, &sub, &nsub, &le) == 0) {
            floe_fileio_names_free(sub, nsub);
            if (nsub) {
                if (sweep(io, path, refs, data, removed, err) < 0) {
                    floe_fileio_names_free(names, n);
                    return -1;
                }
                continue;
            }
        }
        size_t len = strlen(names[i]);
        bool tmp = names[i][0] == '.' && len > 4 && !strcmp(names[i] + len - 4, ".tmp");
        bool candidate = data || tmp || (len > 5 && !strcmp(names[i] + len - 5, ".avro"));
        if (!candidate || strset_has(refs, path)) continue;
        floe_err_t e;
        if (floe_fileio_remove(io, path, &e) < 0) continue; /* e.g. an empty folder */
        (*removed)++;
    }
    floe_fileio_names_free(names, n);
    return 0;
}

/* Delete the data files and manifests under the table that no snapshot
 * references: what a run wrote before it died uncommitted.  Only safe
 * before this engine writes: floe is the table's one writer. */
static int remove_orphans(floe_tout_t *o, floe_fileio_t *io, size_t *removed, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    strset_t refs = {0};
    int rc = -1;
    *removed = 0;
    for (size_t i = 0; i < md->nsnapshots; i++) {
        const floe_ice_snapshot_t *s = md->snapshots[i];
        floe_ice_snapshot_content_t c;
        if (s->manifest_list && strset_add(&refs, s->manifest_list) < 0) goto oom;
        if (floe_ice_snapshot_content_read(io, s, &c, err) < 0) goto out;
        for (size_t m = 0; m < c.nmanifests; m++) {
            if (strset_add(&refs, c.manifests[m].path) < 0) {
                floe_ice_snapshot_content_free(&c);
                goto oom;
            }
            for (size_t k = 0; k < c.nentries[m]; k++)
                if (strset_add(&refs, c.entries[m][k].file.path) < 0) {
                    floe_ice_snapshot_content_free(&c);
                    goto oom;
                }
        }
        floe_ice_snapshot_content_free(&c);
    }
    if (refs.n) qsort(refs.v, refs.n, sizeof *refs.v, cmpstr);
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/data", md->location);
    if (sweep(io, dir, &refs, true, removed, err) < 0) goto out;
    snprintf(dir, sizeof dir, "%s/metadata", md->location);
    if (sweep(io, dir, &refs, false, removed, err) < 0) goto out;
    rc = 0;
    goto out;
oom:
    floe_err_oom(err);
out:
    strset_free(&refs);
    return rc;
}

/* ---- open ----------------------------------------------------------------- */

static int open_out(floe_ttable_t *t, floe_tout_t *o, floe_rows_t *initial, floe_err_t *err)
{
    floe_ice_catalog_t *cat = t->e->cfg.catalog;
    floe_ice_table_t *ice = NULL;
    if (floe_ice_catalog_load_table(cat, o->ns, o->name, &ice, err) < 0) {
        if (err->code != FLOE_ENOENT) return -1;
        floe_ice_schema_t *s = floe_ice_schema_new(0, floe_ice_type_struct());
        if (!s) return floe_err_oom(err);
        int32_t last = 0;
        bool changed;
        floe_ice_props_t props = {0};
        int rc = floe_tschema_merge(initial, s, &last, &changed, err);
        if (rc == 0 && (floe_ice_props_set(&props, "floe.topic", t->topic) < 0 ||
                        floe_ice_props_set(&props, "write.parquet.compression-codec", "zstd") < 0))
            rc = floe_err_oom(err);
        if (rc == 0)
            rc = floe_ice_catalog_create_table(cat, o->ns, o->name, s, NULL, NULL, &props, &ice,
                                               err);
        floe_ice_props_clear(&props);
        floe_ice_schema_free(s);
        if (rc < 0) {
            if (err->code != FLOE_EEXIST) return -1;
            if (floe_ice_catalog_load_table(cat, o->ns, o->name, &ice, err) < 0) return -1;
        } else {
            FLOE_INFO("table %s.%s created for topic %s", o->ns, o->name, t->topic);
        }
    }
    if (adopt(o, ice, t->nparts, err) < 0) return -1;
    size_t removed;
    if (remove_orphans(o, floe_ice_catalog_io(cat), &removed, err) < 0) return -1;
    if (removed)
        FLOE_INFO("table %s.%s: deleted %zu files no snapshot references", o->ns, o->name, removed);
    return 0;
}

int floe_ttable_open(floe_ttable_t *t, floe_err_t *err)
{
    snprintf(t->main.ns, sizeof t->main.ns, "%s", t->cfg.namespace_);
    snprintf(t->main.name, sizeof t->main.name, "%s", t->cfg.name);
    snprintf(t->dlq.ns, sizeof t->dlq.ns, "%s", t->cfg.namespace_);
    snprintf(t->dlq.name, sizeof t->dlq.name, "%s_dlq", t->cfg.name);
    floe_ice_uuid4(t->writer_id);
    if (open_out(t, &t->main, t->parts[0]->main.rows, err) < 0 ||
        open_out(t, &t->dlq, t->parts[0]->dlq.rows, err) < 0)
        return -1;
    size_t finished;
    floe_err_t fe;
    if (floe_ttable_redrive_finish(t, &finished, &fe) < 0)
        FLOE_WARN("table %s.%s: cannot finish an interrupted re-drive yet: %s", t->main.ns,
                  t->main.name, fe.msg);
    floe_buf_t b = FLOE_BUF_INIT;
    for (int32_t i = 0; i < t->nparts; i++) {
        int64_t c = t->main.committed[i];
        t->parts[i]->next = c >= 0 ? c : 0;
    }
    floe_offsets_encode(t->main.committed, (size_t)t->nparts, &b);
    FLOE_INFO("table %s.%s: topic %s, %d partitions, resuming at %s", t->main.ns, t->main.name,
              t->topic, (int)t->nparts, b.len ? floe_buf_cstr(&b) : "{}");
    floe_buf_free(&b);
    return 0;
}

/* ---- commit --------------------------------------------------------------- */

typedef struct vctx {
    const floe_tout_t *o;
    const char *commit_id;
    int32_t nparts;
} vctx_t;

/* Before each attempt: skip when our commit already landed (an earlier
 * attempt whose outcome was unknown), refuse when another writer moved the
 * offsets since we loaded them. */
static int validate(void *ctx, const floe_ice_table_t *cur, floe_err_t *err)
{
    vctx_t *v = ctx;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(cur);
    const floe_ice_snapshot_t *s = floe_offsets_snapshot(md);
    const char *id = s ? floe_ice_props_get(&s->summary, FLOE_COMMIT_ID_KEY) : NULL;
    if (id && !strcmp(id, v->commit_id)) return 1;
    int64_t *now = malloc((size_t)(v->nparts > 0 ? v->nparts : 1) * sizeof *now);
    if (!now) return floe_err_oom(err);
    int rc = floe_offsets_read(md, now, (size_t)v->nparts, err);
    for (int32_t i = 0; rc == 0 && i < v->nparts; i++)
        if (now[i] != v->o->committed[i])
            rc = floe_err_set(err, FLOE_ECONFLICT,
                              "%s.%s: partition %d offsets moved to %lld (expected %lld): "
                              "another writer commits to this table",
                              v->o->ns, v->o->name, (int)i, (long long)now[i],
                              (long long)v->o->committed[i]);
    free(now);
    return rc;
}

static int commit_schema(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    floe_ice_req_t reqs[2] = {
        {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID},
        {.kind = FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID, .value = md->current_schema_id}};
    memcpy(reqs[0].uuid, md->table_uuid, sizeof reqs[0].uuid);
    int32_t next_id = 0;
    for (size_t i = 0; i < md->nschemas; i++)
        if (md->schemas[i]->schema_id >= next_id) next_id = md->schemas[i]->schema_id + 1;
    floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SCHEMA},
                                {.kind = FLOE_ICE_UP_SET_CURRENT_SCHEMA, .id = -1}};
    ups[0].schema = floe_ice_schema_dup(o->work);
    if (!ups[0].schema) return floe_err_oom(err);
    ups[0].schema->schema_id = next_id;
    floe_ice_table_t *nt = NULL;
    int rc = floe_ice_catalog_commit(t->e->cfg.catalog, o->ns, o->name, reqs, 2, ups, 2, &nt, err);
    floe_ice_update_clear(&ups[0]);
    if (rc < 0) return -1;
    floe_ice_table_free(o->ice);
    o->ice = nt;
    o->schema_dirty = false;
    FLOE_INFO("table %s.%s: schema %d committed (%d top-level columns)", o->ns, o->name,
              (int)next_id, (int)o->work->root->nfields);
    return 0;
}

static int commit_spec(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    floe_ice_req_t reqs[2] = {
        {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID},
        {.kind = FLOE_ICE_REQ_ASSERT_DEFAULT_SPEC_ID, .value = md->default_spec_id}};
    memcpy(reqs[0].uuid, md->table_uuid, sizeof reqs[0].uuid);
    floe_ice_update_t ups[2] = {{.kind = FLOE_ICE_UP_ADD_SPEC},
                                {.kind = FLOE_ICE_UP_SET_DEFAULT_SPEC, .id = -1}};
    size_t nups = 2;
    bool exists = false;
    for (size_t i = 0; i < md->nspecs; i++) exists |= md->specs[i]->spec_id == o->spec->spec_id;
    if (exists) { /* back to an earlier spec: only make it the default */
        ups[0] = ups[1];
        ups[0].id = o->spec->spec_id;
        nups = 1;
    } else if (!(ups[0].spec = floe_ice_spec_dup(o->spec))) {
        return floe_err_oom(err);
    }
    floe_ice_table_t *nt = NULL;
    int rc =
        floe_ice_catalog_commit(t->e->cfg.catalog, o->ns, o->name, reqs, 2, ups, nups, &nt, err);
    if (!exists) floe_ice_update_clear(&ups[0]);
    if (rc < 0) return -1;
    floe_ice_table_free(o->ice);
    o->ice = nt;
    o->spec_dirty = false;
    FLOE_INFO("table %s.%s: partition spec %d committed", o->ns, o->name, (int)o->spec->spec_id);
    return 0;
}

/* Commit the pending files of o (unless !with_pending) with offsets next[]
 * (one per partition), together with a widening's rewrites: the rewritten
 * files replace the old ones in the same snapshot as the schema that
 * needs them.  Returns 1 when a snapshot was made (or found made), 0 when
 * there was nothing to commit, -1 on failure. */
static int commit_out(floe_ttable_t *t, floe_tout_t *o, const int64_t *next, bool always,
                      bool with_pending, const char *extra_key, const char *extra_value,
                      floe_err_t *err)
{
    /* a grown schema goes in the same commit as the files that need it */
    bool with_schema = o->schema_dirty;
    bool moved = false;
    size_t npending = with_pending ? o->npending : 0;
    for (int32_t i = 0; i < t->nparts; i++)
        if (next[i] != o->committed[i]) moved = true;
    if (!npending && !o->nrewrites && !(always && moved)) return 0;
    floe_ice_catalog_t *cat = t->e->cfg.catalog;
    char commit_id[37];
    floe_ice_uuid4(commit_id);
    floe_buf_t offs = FLOE_BUF_INIT;
    int rc = -1;
    floe_ice_commit_t *c = floe_ice_commit_new(
        cat, o->ns, o->name, o->nremoves ? FLOE_ICE_OP_REWRITE : FLOE_ICE_OP_APPEND, err);
    if (!c) goto out;
    if (floe_offsets_encode(next, (size_t)t->nparts, &offs) < 0 || !floe_buf_cstr(&offs)) {
        floe_err_oom(err);
        goto out;
    }
    for (size_t i = 0; i < npending; i++)
        if (floe_ice_commit_add(c, &o->pending[i], err) < 0) goto out;
    for (size_t i = 0; i < o->nrewrites; i++)
        if (floe_ice_commit_add(c, &o->rewrites[i], err) < 0) goto out;
    for (size_t i = 0; i < o->nremoves; i++)
        if (floe_ice_commit_remove(c, o->removes[i], err) < 0) goto out;
    if (with_schema && floe_ice_commit_set_schema(c, o->work, err) < 0) goto out;
    if (floe_ice_commit_set_summary(c, FLOE_OFFSETS_KEY, (char *)offs.data, err) < 0 ||
        floe_ice_commit_set_summary(c, FLOE_COMMIT_ID_KEY, commit_id, err) < 0 ||
        floe_ice_commit_set_summary(c, "floe.topic", t->topic, err) < 0 ||
        (extra_key && floe_ice_commit_set_summary(c, extra_key, extra_value, err) < 0))
        goto out;
    vctx_t v = {o, commit_id, t->nparts};
    floe_ice_commit_set_validate(c, validate, &v);
    floe_ice_commit_set_max_attempts(c, 10);
    int64_t snap = -1;
    int r = floe_ice_commit_run(c, &snap, err);
    if (r < 0) goto out;
    /* committed now (r == 0) or found committed by an earlier attempt (1) */
    if (with_pending) floe_tout_drop_pending(o, true, NULL);
    if (o->nremoves)
        FLOE_INFO("table %s.%s: %zu rewritten files replace %zu in snapshot %lld", o->ns, o->name,
                  o->nrewrites, o->nremoves, (long long)snap);
    floe_tout_drop_rewrites(o, true, NULL);
    floe_tout_clear_widened(o);
    if (o->committed != next) memcpy(o->committed, next, (size_t)t->nparts * sizeof *next);
    if (with_schema) {
        o->schema_dirty = false;
        FLOE_INFO("table %s.%s: schema with %d top-level columns committed with the data", o->ns,
                  o->name, (int)o->work->root->nfields);
    }
    floe_ice_table_t *nt = NULL;
    floe_err_t le;
    if (floe_ice_catalog_load_table(cat, o->ns, o->name, &nt, &le) == 0) {
        floe_ice_table_free(o->ice);
        o->ice = nt;
    }
    FLOE_DEBUG("table %s.%s: snapshot %lld, offsets %s", o->ns, o->name, (long long)snap,
               (char *)offs.data);
    rc = 1;
out:
    floe_ice_commit_free(c);
    floe_buf_free(&offs);
    return rc;
}

int floe_tout_commit(floe_ttable_t *t, floe_tout_t *o, const int64_t *next, bool always,
                     const char *extra_key, const char *extra_value, floe_err_t *err)
{
    /* a widened column: rewrite the files that hold the old field (they
     * go in with the schema that needs them) */
    if (o->nwidened && floe_tout_widen(t, o, err) < 0) return -1;
    return commit_out(t, o, next, always, true, extra_key, extra_value, err);
}

/* After a failed write or commit: back to the last committed state.  Open
 * files are dropped, buffers emptied, pending files deleted (kept when the
 * outcome is unknown: the next open's orphan sweep decides), and every
 * partition reads again from the committed offsets. */
void floe_ttable_reset(floe_ttable_t *t, bool keep_files)
{
    floe_fileio_t *io = floe_ice_catalog_io(t->e->cfg.catalog);
    for (int32_t i = 0; i < t->nparts; i++) {
        floe_tpart_t *p = t->parts[i];
        floe_tsink_abort(&p->main);
        floe_tsink_abort(&p->dlq);
        floe_rows_clear(p->main.rows);
        floe_rows_clear(p->dlq.rows);
    }
    floe_tout_drop_pending(&t->main, keep_files, io);
    floe_tout_drop_pending(&t->dlq, keep_files, io);
    floe_tout_drop_rewrites(&t->main, keep_files, io);
    floe_tout_drop_rewrites(&t->dlq, keep_files, io);
    floe_tout_t *outs[2] = {&t->main, &t->dlq};
    for (int k = 0; k < 2; k++) {
        floe_ice_table_t *ice;
        floe_err_t e;
        if (floe_ice_catalog_load_table(t->e->cfg.catalog, outs[k]->ns, outs[k]->name, &ice, &e) ==
            0)
            adopt(outs[k], ice, t->nparts, &e);
    }
    for (int32_t i = 0; i < t->nparts; i++)
        t->parts[i]->next = t->main.committed[i] >= 0 ? t->main.committed[i] : 0;
}

int floe_ttable_commit_spec(floe_ttable_t *t, floe_err_t *err)
{
    /* a new partition spec may name fields only the grown schema has: that
     * schema goes first then (with the rewrites of a widening, at the
     * offsets already committed); otherwise it rides with the data */
    if (!t->main.spec_dirty) return 0;
    if (t->main.schema_dirty) {
        if (t->main.nwidened && floe_tout_widen(t, &t->main, err) < 0) return -1;
        if ((t->main.nrewrites
                 ? commit_out(t, &t->main, t->main.committed, false, false, NULL, NULL, err)
                 : commit_schema(t, &t->main, err)) < 0)
            return -1;
    }
    return commit_spec(t, &t->main, err);
}

int floe_ttable_commit(floe_ttable_t *t, floe_err_t *err)
{
    int64_t t0 = floe_mono_ms();
    int64_t *next = malloc((size_t)t->nparts * sizeof *next);
    if (!next) return floe_err_oom(err);
    for (int32_t i = 0; i < t->nparts; i++) {
        if (floe_tpart_seal(t->parts[i], err) < 0) goto fail;
        next[i] = t->parts[i]->next;
    }
    if (floe_ttable_commit_spec(t, err) < 0) goto fail;
    /* the DLQ first: a main snapshot at offset N implies every bad record
     * below N is in the DLQ table already */
    int d = floe_tout_commit(t, &t->dlq, next, false, NULL, NULL, err);
    if (d < 0) goto fail;
    int m = floe_tout_commit(t, &t->main, next, true, NULL, NULL, err);
    if (m < 0) goto fail;
    if (m == 0 && d == 0) {
        free(next);
        return 0;
    }
    t->commits++;
    t->last_commit_ms = floe_wall_ms();
    for (int32_t i = 0; i < t->nparts; i++) {
        /* what was read is in the table now; what arrived since waits */
        floe_tpart_t *p = t->parts[i];
        p->pending_ts_ms = -1;
        p->behind_since_ms = p->log_end > t->main.committed[i] ? t->last_commit_ms : -1;
    }
    t->last_commit_latency_ms = floe_mono_ms() - t0;
    floe_tsource_t *src = t->e->src;
    if (src->ops->committed)
        for (int32_t i = 0; i < t->nparts; i++)
            src->ops->committed(src, t->topic, i, t->main.committed[i]);
    free(next);
    return 0;
fail:
    t->commit_failures++;
    FLOE_ERROR("table %s.%s: commit failed (%s): %s; re-reading from the committed offsets",
               t->main.ns, t->main.name, floe_code_name(err->code), err->msg);
    floe_ttable_reset(t, err->code == FLOE_EUNKNOWN);
    free(next);
    return -1;
}
