/* Reading manifests and manifest lists (spec "Manifests", "Manifest
 * Lists"): the Avro containers manifest.c writes, or another writer's. */
#include <stdlib.h>
#include <string.h>

#include "format/avro.h"
#include "iceberg/manifest.h"
#include "util/mem.h"

#define MAX_MANIFEST_BYTES ((size_t)512 << 20)

static int get_long(const floe_avro_value_t *r, const char *name, bool required, int64_t *out,
                    floe_err_t *err)
{
    const floe_avro_value_t *v = floe_avro_get(r, name);
    if (!v || floe_avro_value_is_null(v)) {
        if (required) return floe_err_set(err, FLOE_ECORRUPT, "manifest: missing %s", name);
        return 1;
    }
    if (floe_avro_get_long(v, out, err) < 0) {
        floe_err_wrap(err, "manifest field %s", name);
        if (err) err->code = FLOE_ECORRUPT;
        return -1;
    }
    return 0;
}

static int get_int(const floe_avro_value_t *r, const char *name, bool required, int32_t *out,
                   floe_err_t *err)
{
    int64_t x = 0;
    int rc = get_long(r, name, required, &x, err);
    if (rc) return rc;
    if (x < INT32_MIN || x > INT32_MAX)
        return floe_err_set(err, FLOE_ECORRUPT, "manifest: %s out of range", name);
    *out = (int32_t)x;
    return 0;
}

static char *get_strdup(const floe_avro_value_t *r, const char *name, floe_err_t *err)
{
    const char *s;
    size_t n;
    const floe_avro_value_t *v = floe_avro_get(r, name);
    if (!v || floe_avro_get_string(v, &s, &n, err) < 0) {
        floe_err_set(err, FLOE_ECORRUPT, "manifest: missing or bad %s", name);
        return NULL;
    }
    char *c = strndup(s, n);
    if (!c) floe_err_oom(err);
    return c;
}

static int read_partition_value(const floe_avro_value_t *v, const floe_ice_type_t *t,
                                floe_ice_value_t *out, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    out->kind = t->kind;
    if (!v || floe_avro_value_is_null(v)) {
        out->is_null = true;
        return 0;
    }
    int rc = 0;
    switch (t->kind) {
    case FLOE_ICE_BOOLEAN: rc = floe_avro_get_bool(v, &out->v.b, err); break;
    case FLOE_ICE_INT:
    case FLOE_ICE_DATE: rc = floe_avro_get_int(v, &out->v.i, err); break;
    case FLOE_ICE_LONG:
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ: rc = floe_avro_get_long(v, &out->v.l, err); break;
    case FLOE_ICE_FLOAT: rc = floe_avro_get_float(v, &out->v.f, err); break;
    case FLOE_ICE_DOUBLE: rc = floe_avro_get_double(v, &out->v.d, err); break;
    default: {
        floe_slice_t s;
        if (floe_avro_get_bytes(v, &s, err) < 0) {
            rc = -1;
            break;
        }
        if (t->kind == FLOE_ICE_DECIMAL) {
            floe_ice_value_t tmp = {
                .kind = FLOE_ICE_DECIMAL, .bytes = (uint8_t *)s.ptr, .len = s.len};
            if (s.len == 0 || s.len > 16)
                return floe_err_set(err, FLOE_ECORRUPT, "manifest: bad decimal partition value");
            rc = floe_ice_value_set_decimal(out, floe_ice_value_decimal(&tmp), t->scale);
        } else {
            rc = floe_ice_value_set_bytes(out, t->kind, s.ptr, s.len);
        }
        if (rc < 0) floe_err_oom(err);
        break;
    }
    }
    if (rc < 0 && err) err->code = FLOE_ECORRUPT;
    return rc;
}

static int read_map(const floe_avro_value_t *df, const char *name, floe_ice_data_file_t *f,
                    int which, floe_err_t *err)
{
    const floe_avro_value_t *m = floe_avro_get(df, name);
    if (!m || floe_avro_value_is_null(m)) return 0;
    size_t n = floe_avro_array_len(m);
    for (size_t i = 0; i < n; i++) {
        const floe_avro_value_t *kv = floe_avro_array_at(m, i);
        int32_t id = 0;
        if (get_int(kv, "key", true, &id, err) != 0) return -1;
        floe_ice_col_metrics_t *c = floe_ice_data_file_metrics(f, id);
        if (!c) return floe_err_oom(err);
        if (which < 4) {
            int64_t x;
            if (get_long(kv, "value", true, &x, err) != 0) return -1;
            if (which == 0) c->size = x;
            else if (which == 1)
                c->values = x;
            else if (which == 2)
                c->nulls = x;
            else
                c->nans = x;
        } else {
            floe_slice_t s;
            const floe_avro_value_t *bv = floe_avro_get(kv, "value");
            if (!bv || floe_avro_get_bytes(bv, &s, err) < 0)
                return floe_err_set(err, FLOE_ECORRUPT, "manifest: bad bound");
            floe_buf_t *b = which == 4 ? &c->lower : &c->upper;
            b->len = 0;
            if (s.len && floe_buf_append(b, s.ptr, s.len) < 0) return floe_err_oom(err);
            if (which == 4) c->has_lower = true;
            else
                c->has_upper = true;
        }
    }
    return 0;
}

static int read_entry(const floe_avro_value_t *e, const floe_ice_type_t *pt, int32_t spec_id,
                      floe_ice_manifest_entry_t *me, floe_err_t *err)
{
    memset(me, 0, sizeof *me);
    floe_ice_data_file_init(&me->file);
    int32_t st = 0;
    if (get_int(e, "status", true, &st, err) != 0) return -1;
    if (st < 0 || st > 2) return floe_err_set(err, FLOE_ECORRUPT, "manifest: bad status %d", st);
    me->status = (floe_ice_entry_status_t)st;
    me->snapshot_id = me->sequence_number = me->file_sequence_number = -1;
    if (get_long(e, "snapshot_id", false, &me->snapshot_id, err) < 0 ||
        get_long(e, "sequence_number", false, &me->sequence_number, err) < 0 ||
        get_long(e, "file_sequence_number", false, &me->file_sequence_number, err) < 0)
        return -1;
    const floe_avro_value_t *df = floe_avro_get(e, "data_file");
    if (!df) return floe_err_set(err, FLOE_ECORRUPT, "manifest: entry without data_file");
    floe_ice_data_file_t *f = &me->file;
    f->spec_id = spec_id;
    int32_t content = 0;
    if (get_int(df, "content", false, &content, err) < 0) return -1;
    if (content < 0 || content > 2)
        return floe_err_set(err, FLOE_ECORRUPT, "manifest: bad content %d", content);
    f->content = (floe_ice_content_t)content;
    if (!(f->path = get_strdup(df, "file_path", err)) ||
        !(f->format = get_strdup(df, "file_format", err)))
        return -1;
    if (get_long(df, "record_count", true, &f->record_count, err) != 0 ||
        get_long(df, "file_size_in_bytes", true, &f->file_size, err) != 0)
        return -1;
    const floe_avro_value_t *part = floe_avro_get(df, "partition");
    if (pt->nfields) {
        if (!part) return floe_err_set(err, FLOE_ECORRUPT, "manifest: entry without partition");
        if (!(f->partition = calloc(pt->nfields, sizeof *f->partition))) return floe_err_oom(err);
        for (size_t i = 0; i < pt->nfields; i++) {
            if (read_partition_value(floe_avro_get_at(part, i), pt->fields[i].type,
                                     &f->partition[i], err) < 0)
                return -1;
            f->npartition++;
        }
    }
    if (read_map(df, "column_sizes", f, 0, err) < 0 ||
        read_map(df, "value_counts", f, 1, err) < 0 ||
        read_map(df, "null_value_counts", f, 2, err) < 0 ||
        read_map(df, "nan_value_counts", f, 3, err) < 0 ||
        read_map(df, "lower_bounds", f, 4, err) < 0 || read_map(df, "upper_bounds", f, 5, err) < 0)
        return -1;
    const floe_avro_value_t *so = floe_avro_get(df, "split_offsets");
    size_t n = so ? floe_avro_array_len(so) : 0;
    if (n) {
        if (!(f->split_offsets = calloc(n, sizeof(int64_t)))) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++) {
            if (floe_avro_get_long(floe_avro_array_at(so, i), &f->split_offsets[i], err) < 0)
                return -1;
            f->nsplit_offsets++;
        }
    }
    const floe_avro_value_t *eq = floe_avro_get(df, "equality_ids");
    n = eq ? floe_avro_array_len(eq) : 0;
    if (n) {
        if (!(f->equality_ids = calloc(n, sizeof(int32_t)))) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++) {
            if (floe_avro_get_int(floe_avro_array_at(eq, i), &f->equality_ids[i], err) < 0)
                return -1;
            f->nequality_ids++;
        }
    }
    if (get_int(df, "sort_order_id", false, &f->sort_order_id, err) < 0) return -1;
    return 0;
}

static char *meta_str(floe_avro_reader_t *r, const char *key)
{
    floe_slice_t v;
    if (!floe_avro_reader_meta(r, key, &v)) return NULL;
    return strndup((const char *)v.ptr, v.len);
}

int floe_ice_manifest_parse(const void *data, size_t len, floe_ice_manifest_entry_t **entries,
                            size_t *n, floe_err_t *err)
{
    *entries = NULL;
    *n = 0;
    floe_avro_reader_t *r = NULL;
    floe_ice_schema_t *schema = NULL;
    floe_ice_spec_t *spec = NULL;
    floe_ice_type_t *pt = NULL;
    char *sj = NULL, *pj = NULL, *pid = NULL;
    floe_arena_t arena;
    floe_arena_init(&arena, 0, (size_t)64 << 20);
    size_t cap = 0;
    int rc = -1;
    floe_avro_reader_opts_t ro = FLOE_AVRO_READER_OPTS_INIT;
    if (floe_avro_reader_open(&r, data, len, &ro, err) < 0) goto done;
    sj = meta_str(r, "schema");
    pj = meta_str(r, "partition-spec");
    pid = meta_str(r, "partition-spec-id");
    if (!sj || !pj) {
        floe_err_set(err, FLOE_ECORRUPT, "manifest: header lacks schema or partition-spec");
        goto done;
    }
    int32_t spec_id = pid ? (int32_t)strtol(pid, NULL, 10) : 0;
    if (!(schema = floe_ice_schema_from_json(sj, strlen(sj), err))) goto done;
    if (!(spec = floe_ice_spec_fields_from_json(pj, strlen(pj), spec_id, err))) goto done;
    if (!(pt = floe_ice_spec_partition_type(spec, schema, err))) {
        if (err) err->code = FLOE_ECORRUPT;
        goto done;
    }
    for (;;) {
        floe_avro_value_t *v;
        floe_arena_reset(&arena);
        int got = floe_avro_reader_next(r, &arena, &v, err);
        if (got < 0) goto done;
        if (got == 0) break;
        if (floe_grow(entries, &cap, *n + 1, sizeof **entries) < 0) {
            floe_err_oom(err);
            goto done;
        }
        if (read_entry(v, pt, spec_id, &(*entries)[*n], err) < 0) {
            floe_ice_data_file_clear(&(*entries)[*n].file);
            goto done;
        }
        (*n)++;
    }
    rc = 0;
done:
    if (rc < 0) {
        floe_ice_manifest_entries_free(*entries, *n);
        *entries = NULL;
        *n = 0;
    }
    floe_arena_free(&arena);
    floe_avro_reader_free(r);
    floe_ice_schema_free(schema);
    floe_ice_spec_free(spec);
    floe_ice_type_free(pt);
    free(sj);
    free(pj);
    free(pid);
    return rc;
}

int floe_ice_manifest_read(floe_fileio_t *io, const char *path, floe_ice_manifest_entry_t **entries,
                           size_t *n, floe_err_t *err)
{
    floe_buf_t b = FLOE_BUF_INIT;
    *entries = NULL;
    *n = 0;
    if (floe_fileio_read(io, path, MAX_MANIFEST_BYTES, &b, err) < 0) {
        floe_buf_free(&b);
        return -1;
    }
    int rc = floe_ice_manifest_parse(b.data ? b.data : (const uint8_t *)"", b.len, entries, n, err);
    if (rc < 0) floe_err_wrap(err, "%s", path);
    floe_buf_free(&b);
    return rc;
}

static int read_manifest_file(const floe_avro_value_t *v, floe_ice_manifest_file_t *m,
                              floe_err_t *err)
{
    memset(m, 0, sizeof *m);
    if (!(m->path = get_strdup(v, "manifest_path", err))) return -1;
    int32_t content = 0;
    if (get_long(v, "manifest_length", true, &m->length, err) != 0 ||
        get_int(v, "partition_spec_id", true, &m->spec_id, err) != 0 ||
        get_int(v, "content", false, &content, err) < 0 ||
        get_long(v, "sequence_number", false, &m->sequence_number, err) < 0 ||
        get_long(v, "min_sequence_number", false, &m->min_sequence_number, err) < 0 ||
        get_long(v, "added_snapshot_id", true, &m->added_snapshot_id, err) != 0 ||
        get_int(v, "added_files_count", false, &m->added_files, err) < 0 ||
        get_int(v, "existing_files_count", false, &m->existing_files, err) < 0 ||
        get_int(v, "deleted_files_count", false, &m->deleted_files, err) < 0 ||
        get_long(v, "added_rows_count", false, &m->added_rows, err) < 0 ||
        get_long(v, "existing_rows_count", false, &m->existing_rows, err) < 0 ||
        get_long(v, "deleted_rows_count", false, &m->deleted_rows, err) < 0)
        return -1;
    if (content < 0 || content > 1)
        return floe_err_set(err, FLOE_ECORRUPT, "manifest list: bad content %d", content);
    m->content = content;
    const floe_avro_value_t *parts = floe_avro_get(v, "partitions");
    size_t n = parts ? floe_avro_array_len(parts) : 0;
    if (n) {
        if (!(m->partitions = calloc(n, sizeof *m->partitions))) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++) {
            const floe_avro_value_t *r = floe_avro_array_at(parts, i);
            floe_ice_field_summary_t *s = &m->partitions[i];
            m->npartitions++;
            const floe_avro_value_t *x = floe_avro_get(r, "contains_null");
            if (!x || floe_avro_get_bool(x, &s->contains_null, err) < 0)
                return floe_err_set(err, FLOE_ECORRUPT, "manifest list: bad contains_null");
            s->contains_nan = -1;
            x = floe_avro_get(r, "contains_nan");
            if (x && !floe_avro_value_is_null(x)) {
                bool b;
                if (floe_avro_get_bool(x, &b, err) < 0)
                    return floe_err_set(err, FLOE_ECORRUPT, "manifest list: bad contains_nan");
                s->contains_nan = b;
            }
            floe_slice_t sl;
            x = floe_avro_get(r, "lower_bound");
            if (x && !floe_avro_value_is_null(x)) {
                if (floe_avro_get_bytes(x, &sl, err) < 0)
                    return floe_err_set(err, FLOE_ECORRUPT, "manifest list: bad bound");
                if (sl.len && floe_buf_append(&s->lower, sl.ptr, sl.len) < 0)
                    return floe_err_oom(err);
                s->has_lower = true;
            }
            x = floe_avro_get(r, "upper_bound");
            if (x && !floe_avro_value_is_null(x)) {
                if (floe_avro_get_bytes(x, &sl, err) < 0)
                    return floe_err_set(err, FLOE_ECORRUPT, "manifest list: bad bound");
                if (sl.len && floe_buf_append(&s->upper, sl.ptr, sl.len) < 0)
                    return floe_err_oom(err);
                s->has_upper = true;
            }
        }
    }
    return 0;
}

int floe_ice_manifest_list_parse(const void *data, size_t len, floe_ice_manifest_file_t **files,
                                 size_t *n, floe_err_t *err)
{
    *files = NULL;
    *n = 0;
    floe_avro_reader_t *r = NULL;
    floe_arena_t arena;
    floe_arena_init(&arena, 0, (size_t)64 << 20);
    size_t cap = 0;
    int rc = -1;
    if (floe_avro_reader_open(&r, data, len, NULL, err) < 0) goto done;
    for (;;) {
        floe_avro_value_t *v;
        floe_arena_reset(&arena);
        int got = floe_avro_reader_next(r, &arena, &v, err);
        if (got < 0) goto done;
        if (got == 0) break;
        if (floe_grow(files, &cap, *n + 1, sizeof **files) < 0) {
            floe_err_oom(err);
            goto done;
        }
        if (read_manifest_file(v, &(*files)[*n], err) < 0) {
            floe_ice_manifest_file_clear(&(*files)[*n]);
            goto done;
        }
        (*n)++;
    }
    rc = 0;
done:
    if (rc < 0) {
        floe_ice_manifest_files_free(*files, *n);
        *files = NULL;
        *n = 0;
    }
    floe_arena_free(&arena);
    floe_avro_reader_free(r);
    return rc;
}

int floe_ice_manifest_list_read(floe_fileio_t *io, const char *path,
                                floe_ice_manifest_file_t **files, size_t *n, floe_err_t *err)
{
    floe_buf_t b = FLOE_BUF_INIT;
    *files = NULL;
    *n = 0;
    if (floe_fileio_read(io, path, MAX_MANIFEST_BYTES, &b, err) < 0) {
        floe_buf_free(&b);
        return -1;
    }
    int rc =
        floe_ice_manifest_list_parse(b.data ? b.data : (const uint8_t *)"", b.len, files, n, err);
    if (rc < 0) floe_err_wrap(err, "%s", path);
    floe_buf_free(&b);
    return rc;
}
