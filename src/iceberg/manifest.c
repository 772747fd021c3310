/* Manifests and manifest lists (spec "Manifests", "Manifest Lists") as
 * Avro containers written with format/avro. */
#include "iceberg/manifest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/avro.h"

/* ---- value helpers ---- */

void floe_ice_data_file_init(floe_ice_data_file_t *f)
{
    memset(f, 0, sizeof *f);
    f->sort_order_id = -1;
}

int floe_ice_data_file_set_path(floe_ice_data_file_t *f, const char *path, const char *format)
{
    char *p = strdup(path), *fm = strdup(format ? format : "PARQUET");
    if (!p || !fm) {
        free(p);
        free(fm);
        return -1;
    }
    free(f->path);
    free(f->format);
    f->path = p;
    f->format = fm;
    return 0;
}

floe_ice_col_metrics_t *floe_ice_data_file_metrics(floe_ice_data_file_t *f, int32_t id)
{
    for (size_t i = 0; i < f->nmetrics; i++)
        if (f->metrics[i].id == id) return &f->metrics[i];
    floe_ice_col_metrics_t *nm = realloc(f->metrics, (f->nmetrics + 1) * sizeof *nm);
    if (!nm) return NULL;
    f->metrics = nm;
    floe_ice_col_metrics_t *m = &nm[f->nmetrics++];
    memset(m, 0, sizeof *m);
    m->id = id;
    m->size = m->values = m->nulls = m->nans = -1;
    return m;
}

static int buf_copy(floe_buf_t *dst, const floe_buf_t *src)
{
    memset(dst, 0, sizeof *dst);
    if (!src->len) return 0;
    return floe_buf_append(dst, src->data, src->len);
}

int floe_ice_data_file_copy(floe_ice_data_file_t *dst, const floe_ice_data_file_t *src)
{
    *dst = *src;
    dst->path = dst->format = NULL;
    dst->partition = NULL;
    dst->metrics = NULL;
    dst->split_offsets = NULL;
    dst->equality_ids = NULL;
    dst->npartition = dst->nmetrics = dst->nsplit_offsets = dst->nequality_ids = 0;
    if (src->path && !(dst->path = strdup(src->path))) goto fail;
    if (src->format && !(dst->format = strdup(src->format))) goto fail;
    if (src->npartition) {
        if (!(dst->partition = calloc(src->npartition, sizeof *dst->partition))) goto fail;
        for (size_t i = 0; i < src->npartition; i++) {
            if (floe_ice_value_copy(&dst->partition[i], &src->partition[i]) < 0) goto fail;
            dst->npartition++;
        }
    }
    if (src->nmetrics) {
        if (!(dst->metrics = calloc(src->nmetrics, sizeof *dst->metrics))) goto fail;
        for (size_t i = 0; i < src->nmetrics; i++) {
            dst->metrics[i] = src->metrics[i];
            if (buf_copy(&dst->metrics[i].lower, &src->metrics[i].lower) < 0 ||
                buf_copy(&dst->metrics[i].upper, &src->metrics[i].upper) < 0) {
                floe_buf_free(&dst->metrics[i].lower);
                goto fail;
            }
            dst->nmetrics++;
        }
    }
    if (src->nsplit_offsets) {
        if (!(dst->split_offsets = malloc(src->nsplit_offsets * sizeof(int64_t)))) goto fail;
        memcpy(dst->split_offsets, src->split_offsets, src->nsplit_offsets * sizeof(int64_t));
        dst->nsplit_offsets = src->nsplit_offsets;
    }
    if (src->nequality_ids) {
        if (!(dst->equality_ids = malloc(src->nequality_ids * sizeof(int32_t)))) goto fail;
        memcpy(dst->equality_ids, src->equality_ids, src->nequality_ids * sizeof(int32_t));
        dst->nequality_ids = src->nequality_ids;
    }
    return 0;
fail:
    floe_ice_data_file_clear(dst);
    return -1;
}

void floe_ice_data_file_clear(floe_ice_data_file_t *f)
{
    free(f->path);
    free(f->format);
    for (size_t i = 0; i < f->npartition; i++) floe_ice_value_clear(&f->partition[i]);
    free(f->partition);
    for (size_t i = 0; i < f->nmetrics; i++) {
        floe_buf_free(&f->metrics[i].lower);
        floe_buf_free(&f->metrics[i].upper);
    }
    free(f->metrics);
    free(f->split_offsets);
    free(f->equality_ids);
    floe_ice_data_file_init(f);
}

int floe_ice_manifest_file_copy(floe_ice_manifest_file_t *dst, const floe_ice_manifest_file_t *src)
{
    *dst = *src;
    dst->path = NULL;
    dst->partitions = NULL;
    dst->npartitions = 0;
    if (!(dst->path = strdup(src->path ? src->path : ""))) return -1;
    if (src->npartitions) {
        if (!(dst->partitions = calloc(src->npartitions, sizeof *dst->partitions))) goto fail;
        for (size_t i = 0; i < src->npartitions; i++) {
            dst->partitions[i] = src->partitions[i];
            if (buf_copy(&dst->partitions[i].lower, &src->partitions[i].lower) < 0 ||
                buf_copy(&dst->partitions[i].upper, &src->partitions[i].upper) < 0) {
                floe_buf_free(&dst->partitions[i].lower);
                goto fail;
            }
            dst->npartitions++;
        }
    }
    return 0;
fail:
    floe_ice_manifest_file_clear(dst);
    return -1;
}

void floe_ice_manifest_file_clear(floe_ice_manifest_file_t *m)
{
    free(m->path);
    for (size_t i = 0; i < m->npartitions; i++) {
        floe_buf_free(&m->partitions[i].lower);
        floe_buf_free(&m->partitions[i].upper);
    }
    free(m->partitions);
    memset(m, 0, sizeof *m);
}

void floe_ice_manifest_entries_inherit(floe_ice_manifest_entry_t *entries, size_t n,
                                       const floe_ice_manifest_file_t *m)
{
    for (size_t k = 0; k < n; k++) {
        floe_ice_manifest_entry_t *e = &entries[k];
        if (e->sequence_number < 0) e->sequence_number = m->sequence_number;
        if (e->file_sequence_number < 0) e->file_sequence_number = m->sequence_number;
        if (e->snapshot_id < 0) e->snapshot_id = m->added_snapshot_id;
        e->file.spec_id = m->spec_id;
    }
}

void floe_ice_manifest_entries_free(floe_ice_manifest_entry_t *entries, size_t n)
{
    for (size_t i = 0; i < n; i++) floe_ice_data_file_clear(&entries[i].file);
    free(entries);
}

void floe_ice_manifest_files_free(floe_ice_manifest_file_t *files, size_t n)
{
    for (size_t i = 0; i < n; i++) floe_ice_manifest_file_clear(&files[i]);
    free(files);
}

/* ---- Avro schemas ---- */

/* Avro names: [A-Za-z_][A-Za-z0-9_]*; others escaped as _xHH (as Iceberg
 * writers and readers do). */
static int avro_name(floe_buf_t *b, const char *name)
{
    for (size_t i = 0; name[i]; i++) {
        unsigned char c = (unsigned char)name[i];
        bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        bool digit = c >= '0' && c <= '9';
        int rc;
        if (letter || c == '_' || (digit && i > 0)) rc = floe_buf_append_u8(b, c);
        else if (digit)
            rc = floe_buf_printf(b, "_%c", c);
        else
            rc = floe_buf_printf(b, "_x%X", c);
        if (rc < 0) return -1;
    }
    return 0;
}

static int decimal_bytes(int32_t precision)
{
    /* smallest n with 10^precision - 1 < 2^(8n-1) */
    int n = 1;
    double maxv = 1;
    for (int i = 0; i < precision; i++) maxv *= 10;
    double lim = 128;
    while (lim < maxv) {
        lim *= 256;
        n++;
    }
    return n;
}

static int avro_prim(floe_buf_t *b, const floe_ice_type_t *t, int32_t id)
{
    switch (t->kind) {
    case FLOE_ICE_BOOLEAN: return floe_buf_append_str(b, "\"boolean\"");
    case FLOE_ICE_INT: return floe_buf_append_str(b, "\"int\"");
    case FLOE_ICE_LONG: return floe_buf_append_str(b, "\"long\"");
    case FLOE_ICE_FLOAT: return floe_buf_append_str(b, "\"float\"");
    case FLOE_ICE_DOUBLE: return floe_buf_append_str(b, "\"double\"");
    case FLOE_ICE_DATE:
        return floe_buf_append_str(b, "{\"type\":\"int\",\"logicalType\":\"date\"}");
    case FLOE_ICE_TIME:
        return floe_buf_append_str(b, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}");
    case FLOE_ICE_TIMESTAMP:
        return floe_buf_append_str(
            b, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":false}");
    case FLOE_ICE_TIMESTAMPTZ:
        return floe_buf_append_str(
            b, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":true}");
    case FLOE_ICE_STRING: return floe_buf_append_str(b, "\"string\"");
    case FLOE_ICE_BINARY: return floe_buf_append_str(b, "\"bytes\"");
    case FLOE_ICE_UUID:
        return floe_buf_printf(b,
                               "{\"type\":\"fixed\",\"name\":\"uuid_fixed_%" PRId32
                               "\",\"size\":16,\"logicalType\":\"uuid\"}",
                               id);
    case FLOE_ICE_FIXED:
        return floe_buf_printf(
            b, "{\"type\":\"fixed\",\"name\":\"fixed_%" PRId32 "\",\"size\":%" PRId32 "}", id,
            t->length);
    case FLOE_ICE_DECIMAL:
        return floe_buf_printf(b,
                               "{\"type\":\"fixed\",\"name\":\"decimal_%" PRId32 "\",\"size\":%d,"
                               "\"logicalType\":\"decimal\",\"precision\":%" PRId32
                               ",\"scale\":%" PRId32 "}",
                               id, decimal_bytes(t->precision), t->precision, t->scale);
    default: return -1;
    }
}

static int map_field(floe_buf_t *b, const char *name, int fid, int kid, int vid, const char *vtype)
{
    return floe_buf_printf(
        b,
        "{\"name\":\"%s\",\"type\":[\"null\",{\"type\":\"array\",\"logicalType\":\"map\",\"items\":"
        "{\"type\":\"record\",\"name\":\"k%d_v%d\",\"fields\":[{\"name\":\"key\",\"type\":\"int\","
        "\"field-id\":%d},"
        "{\"name\":\"value\",\"type\":\"%s\",\"field-id\":%d}]}}],\"default\":null,\"field-id\":%d}"
        ",",
        name, kid, vid, kid, vtype, vid, fid);
}

char *floe_ice_manifest_avro_schema(const floe_ice_type_t *pt, floe_err_t *err)
{
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_buf_append_str(
        &b,
        "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
        "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
        "{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":"
        "3},"
        "{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-"
        "id\":4},"
        "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
        "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
        "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
        "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
        "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[");
    for (size_t i = 0; rc == 0 && i < pt->nfields; i++) {
        const floe_ice_field_t *f = &pt->fields[i];
        rc |= floe_buf_append_str(&b, i ? ",{\"name\":\"" : "{\"name\":\"");
        rc |= avro_name(&b, f->name);
        rc |= floe_buf_append_str(&b, "\",\"type\":[\"null\",");
        rc |= avro_prim(&b, f->type, f->id);
        rc |= floe_buf_printf(&b, "],\"default\":null,\"field-id\":%" PRId32 "}", f->id);
    }
    rc |= floe_buf_append_str(
        &b, "]},\"field-id\":102},"
            "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
            "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},");
    rc |= map_field(&b, "column_sizes", 108, 117, 118, "long");
    rc |= map_field(&b, "value_counts", 109, 119, 120, "long");
    rc |= map_field(&b, "null_value_counts", 110, 121, 122, "long");
    rc |= map_field(&b, "nan_value_counts", 137, 138, 139, "long");
    rc |= map_field(&b, "lower_bounds", 125, 126, 127, "bytes");
    rc |= map_field(&b, "upper_bounds", 128, 129, 130, "bytes");
    rc |= floe_buf_append_str(
        &b,
        "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":"
        "131},"
        "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\","
        "\"element-id\":133}],\"default\":null,\"field-id\":132},"
        "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\","
        "\"element-id\":136}],\"default\":null,\"field-id\":135},"
        "{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":140}"
        "]},\"field-id\":2}]}");
    if (rc || !floe_buf_cstr(&b)) {
        floe_buf_free(&b);
        floe_err_set(err, FLOE_EINVAL,
                     "cannot build the manifest schema (unsupported partition type?)");
        return NULL;
    }
    size_t len;
    return (char *)floe_buf_detach(&b, &len);
}

static const char manifest_list_schema[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
    "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"
    "{\"name\":\"sequence_number\",\"type\":\"long\",\"field-id\":515},"
    "{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516},"
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"
    "{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"
    "{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"
    "{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"
    "{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"
    "{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"
    "{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514},"
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":"
    "\"record\",\"name\":\"r508\",\"fields\":["
    "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"
    "{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"default\":null,\"field-id\":518},"
    "{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":510},"
    "{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":511}"
    "]},\"element-id\":508}],\"default\":null,\"field-id\":507},"
    "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":519}]}";

const char *floe_ice_manifest_list_avro_schema(void)
{
    return manifest_list_schema;
}

/* ---- writing ---- */

static int set_partition_value(floe_avro_value_t *fv, const floe_ice_type_t *t,
                               const floe_ice_value_t *v, floe_err_t *err)
{
    if (v->is_null) return floe_avro_set_null(fv, err);
    switch (t->kind) {
    case FLOE_ICE_BOOLEAN: return floe_avro_set_bool(fv, v->v.b, err);
    case FLOE_ICE_INT:
    case FLOE_ICE_DATE: return floe_avro_set_int(fv, v->v.i, err);
    case FLOE_ICE_LONG:
    case FLOE_ICE_TIME:
    case FLOE_ICE_TIMESTAMP:
    case FLOE_ICE_TIMESTAMPTZ: return floe_avro_set_long(fv, v->v.l, err);
    case FLOE_ICE_FLOAT: return floe_avro_set_float(fv, v->v.f, err);
    case FLOE_ICE_DOUBLE: return floe_avro_set_double(fv, v->v.d, err);
    case FLOE_ICE_STRING: return floe_avro_set_stringn(fv, (const char *)v->bytes, v->len, err);
    case FLOE_ICE_DECIMAL: {
        /* fixed of decimal_bytes(P): sign-extend the minimal form */
        size_t n = (size_t)decimal_bytes(t->precision);
        uint8_t buf[32];
        if (v->len > n || n > sizeof buf)
            return floe_err_set(err, FLOE_ERANGE, "decimal partition value too wide");
        memset(buf, v->len && (v->bytes[0] & 0x80) ? 0xff : 0x00, n);
        memcpy(buf + n - v->len, v->bytes, v->len);
        return floe_avro_set_bytes(fv, buf, n, err);
    }
    default: return floe_avro_set_bytes(fv, v->bytes, v->len, err);
    }
}

static int put_map_long(floe_avro_value_t *df, const char *name, const floe_ice_data_file_t *f,
                        size_t off, floe_err_t *err)
{
    floe_avro_value_t *m = floe_avro_field(df, name);
    if (!m) return floe_err_set(err, FLOE_EINVAL, "manifest schema lacks %s", name);
    bool any = false;
    for (size_t i = 0; i < f->nmetrics; i++) {
        int64_t x = *(const int64_t *)((const char *)&f->metrics[i] + off);
        if (x < 0) continue;
        floe_avro_value_t *kv = floe_avro_array_append(m, err);
        if (!kv || floe_avro_rec_set_int(kv, "key", f->metrics[i].id, err) < 0 ||
            floe_avro_rec_set_long(kv, "value", x, err) < 0)
            return -1;
        any = true;
    }
    return any ? 0 : floe_avro_set_null(m, err);
}

static int put_map_bytes(floe_avro_value_t *df, const char *name, const floe_ice_data_file_t *f,
                         bool upper, floe_err_t *err)
{
    floe_avro_value_t *m = floe_avro_field(df, name);
    if (!m) return floe_err_set(err, FLOE_EINVAL, "manifest schema lacks %s", name);
    bool any = false;
    for (size_t i = 0; i < f->nmetrics; i++) {
        const floe_ice_col_metrics_t *c = &f->metrics[i];
        if (upper ? !c->has_upper : !c->has_lower) continue;
        const floe_buf_t *b = upper ? &c->upper : &c->lower;
        floe_avro_value_t *kv = floe_avro_array_append(m, err);
        if (!kv || floe_avro_rec_set_int(kv, "key", c->id, err) < 0 ||
            floe_avro_rec_set_bytes(kv, "value", b->data ? b->data : (const uint8_t *)"", b->len,
                                    err) < 0)
            return -1;
        any = true;
    }
    return any ? 0 : floe_avro_set_null(m, err);
}

static int fill_entry(floe_avro_value_t *e, const floe_ice_type_t *pt,
                      const floe_ice_manifest_entry_t *me, floe_err_t *err)
{
    const floe_ice_data_file_t *f = &me->file;
    if (floe_avro_rec_set_int(e, "status", (int32_t)me->status, err) < 0 ||
        floe_avro_rec_set_long(e, "snapshot_id", me->snapshot_id, err) < 0 ||
        floe_avro_rec_set_long(e, "sequence_number", me->sequence_number, err) < 0 ||
        floe_avro_rec_set_long(e, "file_sequence_number", me->file_sequence_number, err) < 0)
        return -1;
    floe_avro_value_t *df = floe_avro_field(e, "data_file");
    if (!df) return floe_err_set(err, FLOE_EINVAL, "manifest schema lacks data_file");
    if (floe_avro_rec_set_int(df, "content", (int32_t)f->content, err) < 0 ||
        floe_avro_rec_set_string(df, "file_path", f->path ? f->path : "", err) < 0 ||
        floe_avro_rec_set_string(df, "file_format", f->format ? f->format : "PARQUET", err) < 0 ||
        floe_avro_rec_set_long(df, "record_count", f->record_count, err) < 0 ||
        floe_avro_rec_set_long(df, "file_size_in_bytes", f->file_size, err) < 0)
        return -1;
    floe_avro_value_t *part = floe_avro_field(df, "partition");
    if (!part) return floe_err_set(err, FLOE_EINVAL, "manifest schema lacks partition");
    if (f->npartition != pt->nfields)
        return floe_err_set(err, FLOE_EINVAL, "data file %s has %zu partition values, spec has %zu",
                            f->path ? f->path : "?", f->npartition, pt->nfields);
    for (size_t i = 0; i < pt->nfields; i++) {
        floe_avro_value_t *fv = floe_avro_field_at(part, i);
        if (!fv || set_partition_value(fv, pt->fields[i].type, &f->partition[i], err) < 0) {
            floe_err_wrap(err, "partition field %s", pt->fields[i].name);
            return -1;
        }
    }
    if (put_map_long(df, "column_sizes", f, offsetof(floe_ice_col_metrics_t, size), err) < 0 ||
        put_map_long(df, "value_counts", f, offsetof(floe_ice_col_metrics_t, values), err) < 0 ||
        put_map_long(df, "null_value_counts", f, offsetof(floe_ice_col_metrics_t, nulls), err) <
            0 ||
        put_map_long(df, "nan_value_counts", f, offsetof(floe_ice_col_metrics_t, nans), err) < 0 ||
        put_map_bytes(df, "lower_bounds", f, false, err) < 0 ||
        put_map_bytes(df, "upper_bounds", f, true, err) < 0)
        return -1;
    floe_avro_value_t *so = floe_avro_field(df, "split_offsets");
    if (f->nsplit_offsets) {
        for (size_t i = 0; i < f->nsplit_offsets; i++) {
            floe_avro_value_t *x = floe_avro_array_append(so, err);
            if (!x || floe_avro_set_long(x, f->split_offsets[i], err) < 0) return -1;
        }
    } else if (floe_avro_set_null(so, err) < 0) {
        return -1;
    }
    floe_avro_value_t *eq = floe_avro_field(df, "equality_ids");
    if (f->nequality_ids) {
        for (size_t i = 0; i < f->nequality_ids; i++) {
            floe_avro_value_t *x = floe_avro_array_append(eq, err);
            if (!x || floe_avro_set_int(x, f->equality_ids[i], err) < 0) return -1;
        }
    } else if (floe_avro_set_null(eq, err) < 0) {
        return -1;
    }
    if (f->sort_order_id >= 0 &&
        floe_avro_rec_set_int(df, "sort_order_id", f->sort_order_id, err) < 0)
        return -1;
    return 0;
}

/* Partition summaries: per partition field, nulls/NaNs seen and the
 * min/max of the values of live entries. */
static int summarize(const floe_ice_type_t *pt, const floe_ice_manifest_entry_t *entries, size_t n,
                     floe_ice_manifest_file_t *out, floe_err_t *err)
{
    if (!pt->nfields) return 0;
    out->partitions = calloc(pt->nfields, sizeof *out->partitions);
    if (!out->partitions) return floe_err_oom(err);
    out->npartitions = pt->nfields;
    for (size_t k = 0; k < pt->nfields; k++) {
        floe_ice_field_summary_t *s = &out->partitions[k];
        floe_ice_kind_t kind = pt->fields[k].type->kind;
        bool fl = kind == FLOE_ICE_FLOAT || kind == FLOE_ICE_DOUBLE;
        s->contains_nan = fl ? 0 : -1;
        const floe_ice_value_t *lo = NULL, *hi = NULL;
        for (size_t i = 0; i < n; i++) {
            if (entries[i].status == FLOE_ICE_DELETED) continue;
            const floe_ice_value_t *v = &entries[i].file.partition[k];
            if (v->is_null) {
                s->contains_null = true;
                continue;
            }
            if (fl && ((kind == FLOE_ICE_FLOAT && v->v.f != v->v.f) ||
                       (kind == FLOE_ICE_DOUBLE && v->v.d != v->v.d))) {
                s->contains_nan = 1;
                continue;
            }
            if (!lo || floe_ice_value_cmp(v, lo) < 0) lo = v;
            if (!hi || floe_ice_value_cmp(v, hi) > 0) hi = v;
        }
        if (lo) {
            if (floe_ice_value_serialize(lo, &s->lower, err) < 0 ||
                floe_ice_value_serialize(hi, &s->upper, err) < 0)
                return -1;
            s->has_lower = s->has_upper = true;
        }
    }
    return 0;
}

static int write_bytes(floe_fileio_t *io, const char *path, floe_slice_t bytes, floe_err_t *err)
{
    return floe_fileio_write(io, path, bytes.ptr, bytes.len, FLOE_IO_EXCL, err);
}

int floe_ice_manifest_write(floe_fileio_t *io, const char *path, const floe_ice_schema_t *schema,
                            const floe_ice_spec_t *spec, int content,
                            const floe_ice_manifest_entry_t *entries, size_t n,
                            const floe_ice_manifest_opts_t *opts, floe_ice_manifest_file_t *out,
                            floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    floe_ice_type_t *pt = floe_ice_spec_partition_type(spec, schema, err);
    if (!pt) return -1;
    char *avsc = floe_ice_manifest_avro_schema(pt, err);
    char *schema_json = floe_ice_schema_to_json(schema, err);
    char *spec_json = floe_ice_spec_fields_to_json(spec, err);
    floe_avro_schema_t *as = NULL;
    floe_avro_writer_t *w = NULL;
    floe_arena_t arena;
    floe_arena_init(&arena, 0, 0);
    int rc = -1;
    if (!avsc || !schema_json || !spec_json) goto done;
    if (floe_avro_schema_parse(avsc, strlen(avsc), &as, err) < 0) goto done;
    floe_avro_writer_opts_t wo = FLOE_AVRO_WRITER_OPTS_INIT;
    if (opts) wo.codec = (floe_avro_codec_t)opts->codec;
    if (floe_avro_writer_new(&w, as, &wo, err) < 0) goto done;
    char sid[16], pid[16];
    snprintf(sid, sizeof sid, "%" PRId32, schema->schema_id);
    snprintf(pid, sizeof pid, "%" PRId32, spec->spec_id);
    if (floe_avro_writer_set_meta_str(w, "schema", schema_json, err) < 0 ||
        floe_avro_writer_set_meta_str(w, "schema-id", sid, err) < 0 ||
        floe_avro_writer_set_meta_str(w, "partition-spec", spec_json, err) < 0 ||
        floe_avro_writer_set_meta_str(w, "partition-spec-id", pid, err) < 0 ||
        floe_avro_writer_set_meta_str(w, "format-version", "2", err) < 0 ||
        floe_avro_writer_set_meta_str(w, "content", content ? "deletes" : "data", err) < 0)
        goto done;
    out->min_sequence_number = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        const floe_ice_manifest_entry_t *me = &entries[i];
        bool is_delete = me->file.content != FLOE_ICE_CONTENT_DATA;
        if (is_delete != (content != 0)) {
            floe_err_set(err, FLOE_EINVAL, "%s file %s in a %s manifest",
                         is_delete ? "delete" : "data", me->file.path ? me->file.path : "?",
                         content ? "delete" : "data");
            goto done;
        }
        if (me->file.spec_id != spec->spec_id) {
            floe_err_set(err, FLOE_EINVAL, "file %s has spec %d, manifest spec %d",
                         me->file.path ? me->file.path : "?", me->file.spec_id, spec->spec_id);
            goto done;
        }
        floe_arena_reset(&arena);
        floe_avro_value_t *e = floe_avro_value_new(&arena, as);
        if (!e) {
            floe_err_oom(err);
            goto done;
        }
        if (fill_entry(e, pt, me, err) < 0 || floe_avro_writer_append(w, e, err) < 0) goto done;
        switch (me->status) {
        case FLOE_ICE_ADDED:
            out->added_files++;
            out->added_rows += me->file.record_count;
            break;
        case FLOE_ICE_EXISTING:
            out->existing_files++;
            out->existing_rows += me->file.record_count;
            break;
        default:
            out->deleted_files++;
            out->deleted_rows += me->file.record_count;
            break;
        }
        if (me->status != FLOE_ICE_DELETED && me->sequence_number < out->min_sequence_number)
            out->min_sequence_number = me->sequence_number;
    }
    if (out->min_sequence_number == INT64_MAX) out->min_sequence_number = 0;
    if (floe_avro_writer_finish(w, err) < 0) goto done;
    floe_slice_t bytes = floe_avro_writer_bytes(w);
    if (summarize(pt, entries, n, out, err) < 0) goto done;
    if (!(out->path = strdup(path))) {
        floe_err_oom(err);
        goto done;
    }
    out->length = (int64_t)bytes.len;
    out->spec_id = spec->spec_id;
    out->content = content ? 1 : 0;
    if (write_bytes(io, path, bytes, err) < 0) goto done;
    rc = 0;
done:
    if (rc < 0) floe_ice_manifest_file_clear(out);
    floe_arena_free(&arena);
    floe_avro_writer_free(w);
    floe_avro_schema_free(as);
    floe_ice_type_free(pt);
    free(avsc);
    free(schema_json);
    free(spec_json);
    return rc;
}

int floe_ice_manifest_list_write(floe_fileio_t *io, const char *path, int64_t snapshot_id,
                                 int64_t parent_id, int64_t sequence_number,
                                 const floe_ice_manifest_file_t *files, size_t n,
                                 const floe_ice_manifest_opts_t *opts, floe_err_t *err)
{
    floe_avro_schema_t *as = NULL;
    floe_avro_writer_t *w = NULL;
    floe_arena_t arena;
    floe_arena_init(&arena, 0, 0);
    int rc = -1;
    if (floe_avro_schema_parse(manifest_list_schema, strlen(manifest_list_schema), &as, err) < 0)
        goto done;
    floe_avro_writer_opts_t wo = FLOE_AVRO_WRITER_OPTS_INIT;
    if (opts) wo.codec = (floe_avro_codec_t)opts->codec;
    if (floe_avro_writer_new(&w, as, &wo, err) < 0) goto done;
    char sid[24], pid[24], seq[24];
    snprintf(sid, sizeof sid, "%" PRId64, snapshot_id);
    snprintf(pid, sizeof pid, "%" PRId64, parent_id);
    snprintf(seq, sizeof seq, "%" PRId64, sequence_number);
    if (floe_avro_writer_set_meta_str(w, "snapshot-id", sid, err) < 0 ||
        (parent_id >= 0 && floe_avro_writer_set_meta_str(w, "parent-snapshot-id", pid, err) < 0) ||
        floe_avro_writer_set_meta_str(w, "sequence-number", seq, err) < 0 ||
        floe_avro_writer_set_meta_str(w, "format-version", "2", err) < 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        const floe_ice_manifest_file_t *m = &files[i];
        floe_arena_reset(&arena);
        floe_avro_value_t *v = floe_avro_value_new(&arena, as);
        if (!v) {
            floe_err_oom(err);
            goto done;
        }
        if (floe_avro_rec_set_string(v, "manifest_path", m->path, err) < 0 ||
            floe_avro_rec_set_long(v, "manifest_length", m->length, err) < 0 ||
            floe_avro_rec_set_int(v, "partition_spec_id", m->spec_id, err) < 0 ||
            floe_avro_rec_set_int(v, "content", m->content, err) < 0 ||
            floe_avro_rec_set_long(v, "sequence_number", m->sequence_number, err) < 0 ||
            floe_avro_rec_set_long(v, "min_sequence_number", m->min_sequence_number, err) < 0 ||
            floe_avro_rec_set_long(v, "added_snapshot_id", m->added_snapshot_id, err) < 0 ||
            floe_avro_rec_set_int(v, "added_files_count", m->added_files, err) < 0 ||
            floe_avro_rec_set_int(v, "existing_files_count", m->existing_files, err) < 0 ||
            floe_avro_rec_set_int(v, "deleted_files_count", m->deleted_files, err) < 0 ||
            floe_avro_rec_set_long(v, "added_rows_count", m->added_rows, err) < 0 ||
            floe_avro_rec_set_long(v, "existing_rows_count", m->existing_rows, err) < 0 ||
            floe_avro_rec_set_long(v, "deleted_rows_count", m->deleted_rows, err) < 0)
            goto done;
        floe_avro_value_t *parts = floe_avro_field(v, "partitions");
        if (!m->npartitions) {
            if (floe_avro_set_null(parts, err) < 0) goto done;
        }
        for (size_t k = 0; k < m->npartitions; k++) {
            const floe_ice_field_summary_t *s = &m->partitions[k];
            floe_avro_value_t *r = floe_avro_array_append(parts, err);
            if (!r || floe_avro_rec_set_bool(r, "contains_null", s->contains_null, err) < 0)
                goto done;
            if (s->contains_nan >= 0 &&
                floe_avro_rec_set_bool(r, "contains_nan", s->contains_nan != 0, err) < 0)
                goto done;
            if (s->has_lower &&
                floe_avro_rec_set_bytes(r, "lower_bound",
                                        s->lower.data ? s->lower.data : (const uint8_t *)"",
                                        s->lower.len, err) < 0)
                goto done;
            if (s->has_upper &&
                floe_avro_rec_set_bytes(r, "upper_bound",
                                        s->upper.data ? s->upper.data : (const uint8_t *)"",
                                        s->upper.len, err) < 0)
                goto done;
        }
        if (floe_avro_writer_append(w, v, err) < 0) goto done;
    }
    if (floe_avro_writer_finish(w, err) < 0) goto done;
    if (write_bytes(io, path, floe_avro_writer_bytes(w), err) < 0) goto done;
    rc = 0;
done:
    floe_arena_free(&arena);
    floe_avro_writer_free(w);
    floe_avro_schema_free(as);
    return rc;
}

/* ---- reading ---- */

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
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            floe_ice_manifest_entry_t *ne = realloc(*entries, nc * sizeof *ne);
            if (!ne) {
                floe_err_oom(err);
                goto done;
            }
            *entries = ne;
            cap = nc;
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
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            floe_ice_manifest_file_t *nf = realloc(*files, nc * sizeof *nf);
            if (!nf) {
                floe_err_oom(err);
                goto done;
            }
            *files = nf;
            cap = nc;
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
