/* The state of an output table between commits: the one file that
 * changes it (tout.h lists the invariants). */
#include "table/tout.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/offsets.h"
#include "table/ptuple.h"
#include "util/diag.h"
#include "util/fs.h"

void floe_tout_init(floe_tout_t *o, const char *ns, const char *name)
{
    snprintf(o->ns, sizeof o->ns, "%s", ns);
    snprintf(o->name, sizeof o->name, "%s", name);
}

void floe_tout_clear(floe_tout_t *o)
{
    floe_tout_drop_pending(o, FLOE_TFILES_KEEP, NULL);
    free(o->pending);
    floe_tout_widened_done(o);
    floe_ice_table_free(o->ice);
    floe_ice_schema_free(o->work);
    free(o->schema_json);
    free(o->committed);
    floe_ice_spec_free(o->spec);
    memset(o, 0, sizeof *o);
}

/* work (taken, also on failure) becomes the working schema. */
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

int floe_tout_adopt(floe_tout_t *o, floe_ice_table_t *ice, int32_t nparts, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(ice);
    const floe_ice_schema_t *cur = floe_ice_metadata_current_schema(md);
    floe_ice_schema_t *w = cur ? floe_ice_schema_dup(cur) : NULL;
    int64_t *committed = calloc((size_t)(nparts > 0 ? nparts : 1), sizeof *committed);
    int rc = -1;
    if (!w || !committed) {
        floe_err_oom(err);
        floe_ice_schema_free(w);
        goto out;
    }
    if (floe_offsets_read(md, committed, (size_t)nparts, err) < 0) {
        floe_ice_schema_free(w);
        goto out;
    }
    if (set_work(o, w, err) < 0) goto out;
    floe_ice_table_free(o->ice);
    o->ice = ice;
    ice = NULL;
    free(o->committed);
    o->committed = committed;
    committed = NULL;
    o->nparts = nparts;
    o->last_column_id = md->last_column_id;
    o->committed_max_id = floe_ice_schema_max_id(cur);
    if (o->committed_max_id < md->last_column_id) o->committed_max_id = md->last_column_id;
    o->schema_dirty = false;
    floe_tout_widened_done(o);
    const floe_ice_spec_t *ds = floe_ice_metadata_default_spec(md);
    floe_ice_spec_free(o->spec);
    o->spec = ds ? floe_ice_spec_dup(ds) : NULL;
    o->spec_dirty = false;
    o->spec_text[0] = '\0';
    o->spec_waiting = false;
    rc = 0;
out:
    free(committed);
    floe_ice_table_free(ice);
    return rc;
}

int floe_tout_set_partitions(floe_tout_t *o, int32_t nparts, floe_err_t *err)
{
    if (!o->committed || nparts <= o->nparts) return 0;
    int64_t *c = realloc(o->committed, (size_t)nparts * sizeof *c);
    if (!c) return floe_err_oom(err);
    for (int32_t i = o->nparts; i < nparts; i++) c[i] = -1;
    o->committed = c;
    o->nparts = nparts;
    return 0;
}

void floe_tout_reloaded(floe_tout_t *o, floe_ice_table_t *nt)
{
    floe_ice_table_free(o->ice);
    o->ice = nt;
}

/* ---- paths ---------------------------------------------------------------- */

int floe_tout_data_dir(const floe_tout_t *o, char *buf, size_t size, floe_err_t *err)
{
    const floe_ice_metadata_t *md = o->ice ? floe_ice_table_metadata(o->ice) : NULL;
    if (!md || !md->location)
        return floe_err_set(err, FLOE_EINVAL, "table %s.%s has no location", o->ns, o->name);
    return floe_path_join(buf, size, md->location, "data", err);
}

int floe_tout_file_path(floe_tout_t *o, const char *writer_id, int32_t id, const char *part,
                        char *buf, size_t size, floe_err_t *err)
{
    char dir[1024];
    if (floe_tout_data_dir(o, dir, sizeof dir, err) < 0) return -1;
    return floe_path_fmt(buf, size, err, "%s/%s%05d-%s-%05llu.parquet", dir, part, (int)id,
                         writer_id, (unsigned long long)++o->file_seq);
}

int floe_tout_rewrite_path(floe_tout_t *o, const char *writer_id, const char *in, char *buf,
                           size_t size, floe_err_t *err)
{
    const char *slash = strrchr(in, '/');
    int dirlen = slash ? (int)(slash - in) : 0;
    return floe_path_fmt(buf, size, err, "%.*s/w-%s-%05llu.parquet", dirlen, in, writer_id,
                         (unsigned long long)++o->file_seq);
}

int32_t floe_tout_reserve_id(floe_tout_t *o)
{
    return ++o->last_column_id;
}

/* ---- widening: may a long become a double -------------------------------- */

int64_t floe_tout_live_bytes(const floe_tout_t *o)
{
    const floe_ice_metadata_t *md = o->ice ? floe_ice_table_metadata(o->ice) : NULL;
    const floe_ice_snapshot_t *cur = md ? floe_ice_metadata_current_snapshot(md) : NULL;
    if (!cur) return 0;
    return floe_ice_props_get_i64(&cur->summary, "total-files-size", 0, INT64_MAX, -1);
}

static bool is_source(const floe_ice_spec_t *sp, int32_t id)
{
    for (size_t i = 0; sp && i < sp->nfields; i++)
        if (sp->fields[i].source_id == id) return true;
    return false;
}

floe_twiden_verdict_t floe_tout_may_widen(const floe_tout_t *o, int32_t field_id,
                                          uint64_t max_bytes, char *why, size_t size)
{
    const floe_ice_metadata_t *md = o->ice ? floe_ice_table_metadata(o->ice) : NULL;
    if (is_source(o->spec, field_id)) return FLOE_TWIDEN_SOURCE;
    for (size_t j = 0; md && j < md->nspecs; j++)
        if (is_source(md->specs[j], field_id)) return FLOE_TWIDEN_SOURCE;
    int64_t live = floe_tout_live_bytes(o);
    if (live >= 0 && (uint64_t)live <= max_bytes) return FLOE_TWIDEN_OK;
    /* a field the table has not committed yet is in no live file */
    const floe_ice_schema_t *cs = md ? floe_ice_metadata_current_schema(md) : NULL;
    if (!cs || !floe_ice_schema_find(cs, field_id)) return FLOE_TWIDEN_OK;
    if (live < 0)
        snprintf(why, size,
                 "a fraction (widening the column to double would rewrite every data file of "
                 "the table, whose size its snapshot does not tell; "
                 "table.json.widen.max.bytes %llu)",
                 (unsigned long long)max_bytes);
    else
        snprintf(why, size,
                 "a fraction (widening the column to double would rewrite the table's %lld "
                 "bytes of data files, above table.json.widen.max.bytes %llu)",
                 (long long)live, (unsigned long long)max_bytes);
    return FLOE_TWIDEN_LARGE;
}

/* ---- schema and spec ------------------------------------------------------ */

/* Record the widenings from `before` to `after` (working schemas). */
static int note_widened(floe_tout_t *o, const floe_ice_schema_t *before,
                        const floe_ice_schema_t *after, floe_err_t *err)
{
    size_t n0 = o->nwidened;
    if (floe_tschema_widened(before, after, &o->widened, &o->nwidened) < 0)
        return floe_err_oom(err);
    /* a long the table may hold in its files widens only through the
     * maintenance thread (the buffer holds such a fraction back): never
     * here, where only pending files would be rewritten */
    for (size_t i = n0; i < o->nwidened; i++)
        if (o->widened[i].from <= o->committed_max_id) {
            int32_t from = o->widened[i].from;
            o->nwidened = n0;
            return floe_err_set(err, FLOE_EINVAL,
                                "table %s.%s: field %d is a committed long: it widens through "
                                "the maintenance thread, not in a buffer",
                                o->ns, o->name, (int)from);
        }
    for (size_t i = n0; i < o->nwidened; i++) {
        char name[256];
        FLOE_INFO("table %s.%s: column '%s' widens from long (field %d) to double (field %d); "
                  "the files written since the last commit are rewritten at the next one",
                  o->ns, o->name,
                  floe_ice_schema_field_name(after, o->widened[i].to, name, sizeof name) ? name
                                                                                         : "?",
                  (int)o->widened[i].from, (int)o->widened[i].to);
    }
    return 0;
}

int floe_tout_merge_schema(floe_tout_t *o, floe_rows_t *rows, bool *grew, floe_err_t *err)
{
    bool changed;
    int32_t last = o->last_column_id;
    *grew = false;
    /* merge into a copy: a refused field must not leave half an addition */
    floe_ice_schema_t *w = floe_ice_schema_dup(o->work);
    if (!w) return floe_err_oom(err);
    const floe_ice_metadata_t *md = o->ice ? floe_ice_table_metadata(o->ice) : NULL;
    bool fresh = !o->npending && !(md && floe_ice_metadata_current_snapshot(md));
    if (floe_tschema_merge(rows, w, &last, fresh, &changed, err) < 0) {
        floe_ice_schema_free(w);
        floe_err_wrap(err, "table %s.%s", o->ns, o->name);
        return -1;
    }
    if (!changed) {
        floe_ice_schema_free(w);
        return 0;
    }
    if (note_widened(o, o->work, w, err) < 0) {
        floe_ice_schema_free(w);
        return -1;
    }
    o->last_column_id = last;
    o->schema_dirty = true;
    if (set_work(o, w, err) < 0) return -1;
    *grew = true;
    FLOE_INFO("table %s.%s: schema grows to %d columns (last column id %d)", o->ns, o->name,
              (int)o->work->root->nfields, (int)last);
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

/* ---- files ------------------------------------------------------------------ */

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

/* Delete an uncommitted file, saying so when that fails. */
static void delete_uncommitted(floe_fileio_t *io, const char *path)
{
    floe_err_t e;
    if (floe_fileio_remove(io, path, &e) < 0)
        FLOE_WARN("cannot delete uncommitted file %s: %s", path, e.msg);
}

void floe_tout_replace_pending(floe_tout_t *o, size_t i, floe_ice_data_file_t *f, floe_fileio_t *io)
{
    delete_uncommitted(io, o->pending[i].path);
    floe_ice_data_file_clear(&o->pending[i]);
    o->pending[i] = *f;
}

void floe_tout_drop_pending(floe_tout_t *o, floe_tfiles_t fate, floe_fileio_t *io)
{
    for (size_t i = 0; i < o->npending; i++) {
        if (fate == FLOE_TFILES_DELETE) delete_uncommitted(io, o->pending[i].path);
        floe_ice_data_file_clear(&o->pending[i]);
    }
    o->npending = 0;
    floe_tupsert_log_clear(&o->uplog);
}

/* Make field id under struct t required, with the structs on the way;
 * true when found. */
static bool mark_required(floe_ice_type_t *t, int32_t id)
{
    for (size_t i = 0; t && i < t->nfields; i++) {
        floe_ice_field_t *f = &t->fields[i];
        if (f->id == id || (f->type->kind == FLOE_ICE_STRUCT && mark_required(f->type, id))) {
            f->required = true;
            return true;
        }
    }
    return false;
}

int floe_tout_set_identifiers(floe_tout_t *o, const int32_t *ids, size_t n, floe_err_t *err)
{
    const floe_ice_schema_t *cur = o->work;
    bool same = cur->n_identifier_ids == n;
    for (size_t i = 0; same && i < n; i++) same = cur->identifier_ids[i] == ids[i];
    for (size_t i = 0; same && i < n; i++) {
        const floe_ice_field_t *f = floe_ice_schema_find(cur, ids[i]);
        same = f && f->required;
    }
    if (same) return 0;
    floe_ice_schema_t *w = floe_ice_schema_dup(cur);
    int32_t *copy = w ? malloc(n * sizeof *copy) : NULL;
    if (!copy) {
        floe_ice_schema_free(w);
        return floe_err_oom(err);
    }
    for (size_t i = 0; i < n; i++) {
        copy[i] = ids[i];
        if (!mark_required(w->root, ids[i])) {
            free(copy);
            floe_ice_schema_free(w);
            return floe_err_set(err, FLOE_EINVAL, "upsert: no field %d in the schema", (int)ids[i]);
        }
    }
    free(w->identifier_ids);
    w->identifier_ids = copy;
    w->n_identifier_ids = n;
    o->schema_dirty = true;
    return set_work(o, w, err);
}

void floe_tout_widened_done(floe_tout_t *o)
{
    free(o->widened);
    o->widened = NULL;
    o->nwidened = 0;
}

/* ---- commits ----------------------------------------------------------------- */

/* Work became the table's schema: every id of it may be in files now. */
static void work_committed(floe_tout_t *o)
{
    int32_t mx = floe_ice_schema_max_id(o->work);
    if (mx > o->committed_max_id) o->committed_max_id = mx;
    o->schema_dirty = false;
}

void floe_tout_schema_committed(floe_tout_t *o, floe_ice_table_t *nt)
{
    floe_tout_reloaded(o, nt);
    work_committed(o);
}

int floe_tout_widen_committed(floe_tout_t *o, floe_ice_table_t *nt, const floe_twiden_t *w,
                              size_t n, floe_err_t *err)
{
    floe_tout_reloaded(o, nt);
    floe_ice_schema_t *work = floe_ice_schema_dup(o->work);
    floe_twiden_t *v = realloc(o->widened, (o->nwidened + n) * sizeof *v);
    if (v) o->widened = v;
    if (!work || !v) {
        floe_ice_schema_free(work);
        return floe_err_oom(err);
    }
    if (floe_tschema_apply_widened(work, w, n, err) < 0) {
        floe_ice_schema_free(work);
        return -1;
    }
    if (set_work(o, work, err) < 0) return -1;
    memcpy(o->widened + o->nwidened, w, n * sizeof *w);
    o->nwidened += n;
    for (size_t i = 0; i < n; i++)
        if (w[i].to > o->committed_max_id) o->committed_max_id = w[i].to;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(nt);
    if (md->last_column_id > o->last_column_id) o->last_column_id = md->last_column_id;
    return 0;
}

void floe_tout_spec_committed(floe_tout_t *o, floe_ice_table_t *nt)
{
    floe_tout_reloaded(o, nt);
    o->spec_dirty = false;
}

void floe_tout_snapshot_committed(floe_tout_t *o, const int64_t *next, int32_t nparts,
                                  unsigned flags)
{
    if (flags & FLOE_TSNAP_PENDING) floe_tout_drop_pending(o, FLOE_TFILES_KEEP, NULL);
    if (o->committed != next) memcpy(o->committed, next, (size_t)nparts * sizeof *next);
    if (flags & FLOE_TSNAP_SCHEMA) work_committed(o);
}
