/* Manifests and manifest lists (spec "Manifests", "Manifest Lists") as
 * Avro containers written with format/avro: their values, Avro schemas and
 * writing; reading them is in manifest_read.c. */
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
