/* The delete files of an upsert table's commit and its key index
 * (upsert_write.h). */
#include "table/upsert_write.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/read.h"
#include "iceberg/scan.h"
#include "table/datafile.h"
#include "table/keyidx.h"
#include "table/schema_map.h"
#include "util/diag.h"
#include "util/fs.h"

#define ICE_DELETE_FILE_PATH 2147483546
#define ICE_DELETE_POS 2147483545

static const char POS_SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":2147483546,\"name\":\"file_path\",\"required\":true,\"type\":\"string\"},"
    "{\"id\":2147483545,\"name\":\"pos\",\"required\":true,\"type\":\"long\"}]}";

int floe_tupsert_index_path(const floe_ttable_t *t, char *buf, size_t size)
{
    if (!t->state_dir) return -1;
    int n = snprintf(buf, size, "%s/%s.%s.keyidx", t->state_dir, t->main.ns, t->main.name);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* ---- rebuilding the index from the table ------------------------------- */

typedef struct rebuild {
    floe_tkeyidx_t *x;
    const floe_tupsert_cols_t *cols;
    floe_buf_t key;
    uint64_t skipped;
} rebuild_t;

/* The key of a row the reader rendered as JSON (upsert.h's format); 0
 * when a column is missing or not a key kind. */
static int json_key(const floe_tupsert_cols_t *c, json_t *row, floe_buf_t *key)
{
    char num[24];
    key->len = 0;
    for (size_t i = 0; i < c->nids; i++) {
        json_t *v = row;
        char part[128];
        for (const char *p = c->ids[i]; v && *p;) {
            const char *dot = strchr(p, '.');
            size_t len = dot ? (size_t)(dot - p) : strlen(p);
            snprintf(part, sizeof part, "%.*s", (int)len, p);
            v = json_is_object(v) ? json_object_get(v, part) : NULL;
            p += len + (dot != NULL);
        }
        int rc;
        if (json_is_integer(v))
            rc = floe_tupsert_key_part(
                key, 'n', num,
                (size_t)snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v)));
        else if (json_is_string(v))
            rc = floe_tupsert_key_part(key, 's', json_string_value(v), json_string_length(v));
        else if (json_is_boolean(v))
            rc = floe_tupsert_key_part(key, 'b', json_is_true(v) ? "1" : "0", 1);
        else
            return 0;
        if (rc < 0) return -1;
    }
    return 1;
}

static int rebuild_row(void *arg, const char *path, int64_t pos, const char *json, size_t len,
                       floe_err_t *err)
{
    rebuild_t *b = arg;
    json_t *row = json_loadb(json, len, 0, NULL);
    if (!row)
        return floe_err_set(err, FLOE_ECORRUPT, "upsert index: a row of %s is not JSON", path);
    int k = json_key(b->cols, row, &b->key);
    json_decref(row);
    if (k < 0) return floe_err_oom(err);
    if (k == 0) {
        b->skipped++;
        return 0;
    }
    /* a key twice (rows the index would not have let in): the later wins */
    if (floe_tkeyidx_put(b->x, b->key.data, b->key.len, path, pos, NULL) < 0)
        return floe_err_oom(err);
    return 0;
}

/* x bounded in memory (table.upsert.index.memory.bytes), its keys beyond
 * that in a page file at the index's path; unbounded without a data dir. */
static int index_bound(floe_ttable_t *t, floe_tkeyidx_t *x, floe_err_t *err)
{
    char path[4400];
    if (floe_tupsert_index_path(t, path, sizeof path) < 0) return 0;
    if (floe_fs_mkdirs(t->state_dir, err) < 0) return -1;
    return floe_tkeyidx_set_bound(x, (size_t)t->cfg.index_mem_bytes, path, err);
}

/* A fresh index of md's current snapshot. */
static floe_tkeyidx_t *rebuild(floe_ttable_t *t, const floe_tupsert_cols_t *cols,
                               const floe_ice_metadata_t *md, floe_err_t *err)
{
    rebuild_t b = {.x = floe_tkeyidx_new(), .cols = cols};
    if (!b.x) {
        floe_err_oom(err);
        return NULL;
    }
    if (index_bound(t, b.x, err) < 0) {
        floe_tkeyidx_free(b.x);
        return NULL;
    }
    if (floe_ice_read_table_pos(floe_ice_catalog_io(t->catalog), md, rebuild_row, &b, err) < 0) {
        floe_err_wrap(err, "upsert: rebuilding the key index of %s.%s", t->main.ns, t->main.name);
        floe_tkeyidx_free(b.x);
        floe_buf_free(&b.key);
        return NULL;
    }
    floe_buf_free(&b.key);
    floe_tkeyidx_set_state(b.x, md->table_uuid, md->current_snapshot_id);
    t->index_rebuilds++;
    FLOE_INFO("table %s.%s: key index rebuilt from snapshot %lld: %zu keys, %zu bytes in memory, "
              "%zu on disk%s",
              t->main.ns, t->main.name, (long long)md->current_snapshot_id, floe_tkeyidx_count(b.x),
              floe_tkeyidx_mem(b.x), floe_tkeyidx_disk(b.x),
              b.skipped ? " (rows without their id columns skipped)" : "");
    return b.x;
}

/* t->keyidx reflecting md's current snapshot: the one in memory, the
 * saved one, or a rebuild. */
static int index_fresh(floe_ttable_t *t, const floe_tupsert_cols_t *cols,
                       const floe_ice_metadata_t *md, floe_err_t *err)
{
    floe_tkeyidx_t *x = t->keyidx;
    if (x && floe_tkeyidx_snapshot(x) == md->current_snapshot_id &&
        !strcmp(floe_tkeyidx_uuid(x), md->table_uuid))
        return 0;
    floe_tkeyidx_free(x);
    t->keyidx = NULL;
    char path[4400];
    if (floe_tupsert_index_path(t, path, sizeof path) == 0) {
        floe_err_t le;
        x = floe_tkeyidx_load(path, &le);
        if (x && floe_tkeyidx_snapshot(x) == md->current_snapshot_id &&
            !strcmp(floe_tkeyidx_uuid(x), md->table_uuid) && index_bound(t, x, &le) == 0) {
            t->keyidx = x;
            return 0;
        }
        if (x || le.code != FLOE_ENOENT)
            FLOE_WARN("table %s.%s: key index %s not used (%s); rebuilding it from the table",
                      t->main.ns, t->main.name, path, x ? "of another snapshot" : le.msg);
        floe_tkeyidx_free(x);
    }
    return (t->keyidx = rebuild(t, cols, md, err)) ? 0 : -1;
}

/* ---- delete files -------------------------------------------------------- */

/* The shape kind of a key column of Iceberg kind k (upsert.h's kinds). */
static int tkind_of(floe_ice_kind_t k, floe_tkind_t *out)
{
    return floe_tschema_tkind(k, out) < 0 || !(*out == FLOE_TK_LONG || *out == FLOE_TK_INT ||
                                               *out == FLOE_TK_STRING || *out == FLOE_TK_BOOL)
               ? -1
               : 0;
}

/* Write rows (field ids set) as a delete file of kind content into o's
 * pending files, in partition (spec_id, values[0..nvalues)) (copied),
 * under the partition's folder when spec (may be NULL) says it. */
static int write_deletes(floe_ttable_t *t, floe_tout_t *o, floe_rows_t *rows, const char *prefix,
                         const char *schema_json, floe_ice_content_t content, const int32_t *eq,
                         size_t neq, const floe_ice_spec_t *spec, int32_t spec_id,
                         const floe_ice_value_t *values, size_t nvalues, floe_err_t *err)
{
    char path[2400];
    floe_buf_t folder = FLOE_BUF_INIT;
    int rc = 0;
    if (spec && spec->nfields == nvalues && nvalues &&
        (floe_ice_spec_partition_path(spec, values, &folder, err) < 0 ||
         floe_buf_append_u8(&folder, '/') < 0))
        rc = -1;
    if (rc == 0 && floe_buf_append_str(&folder, prefix) < 0) rc = floe_err_oom(err);
    if (rc == 0 && !floe_buf_cstr(&folder)) rc = floe_err_oom(err);
    if (rc == 0)
        rc = floe_tout_file_path(o, t->writer_id, 0, (const char *)folder.data, path, sizeof path,
                                 err);
    floe_buf_free(&folder);
    if (rc < 0) return -1;
    floe_dfw_opts_t fo = {.codec = FLOE_CODEC_ZSTD, .level = 1, .scratch = t->files.pq_scratch};
    floe_dfw_t *w = floe_dfw_open(t->files.io, path, rows, schema_json, &fo, err);
    if (!w) return -1;
    floe_ice_data_file_t df;
    if (floe_dfw_append(w, rows, err) < 0 || floe_dfw_flush(w, err) < 0) {
        floe_dfw_abort(w);
        return -1;
    }
    if (floe_dfw_close(w, &df, err) < 0) return -1;
    df.content = content;
    df.spec_id = spec_id;
    if (nvalues && !(df.partition = calloc(nvalues, sizeof *df.partition))) rc = floe_err_oom(err);
    for (; rc == 0 && df.npartition < nvalues; df.npartition++)
        if (floe_ice_value_copy(&df.partition[df.npartition], &values[df.npartition]) < 0)
            rc = floe_err_oom(err);
    if (rc == 0 && neq) {
        if (!(df.equality_ids = malloc(neq * sizeof *eq))) {
            rc = floe_err_oom(err);
        } else {
            memcpy(df.equality_ids, eq, neq * sizeof *eq);
            df.nequality_ids = neq;
        }
    }
    if (rc < 0) {
        floe_ice_data_file_clear(&df);
        return -1;
    }
    t->files.files_written++;
    t->files.bytes_written += (uint64_t)df.file_size;
    return floe_tout_add_pending(o, &df, err);
}

/* The leaf of dot path `path` under rows' root, made with its structs
 * (required, ids from schema). */
static floe_rnode_t *eq_node(floe_rows_t *rows, const floe_ice_schema_t *schema, const char *path,
                             floe_err_t *err)
{
    floe_rnode_t *n = floe_rows_root(rows);
    char prefix[128];
    for (const char *p = path; *p;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        snprintf(prefix, sizeof prefix, "%.*s", (int)(p + len - path), path);
        const floe_ice_field_t *f = floe_ice_schema_find_name(schema, prefix);
        if (!f) {
            floe_err_set(err, FLOE_EINVAL, "upsert: no column '%s' in the schema", prefix);
            return NULL;
        }
        floe_tkind_t k = FLOE_TK_STRUCT;
        if (dot ? f->type->kind != FLOE_ICE_STRUCT : tkind_of(f->type->kind, &k) < 0) {
            floe_err_set(err, FLOE_EINVAL, "upsert: column '%s' cannot be a key", prefix);
            return NULL;
        }
        floe_rnode_t *kid = floe_rows_child(n, f->name);
        if (!kid && !(kid = floe_rows_add_field(rows, n, f->name, k, true, err))) return NULL;
        kid->field_id = f->id;
        n = kid;
        p += len + (dot != NULL);
    }
    return n;
}

/* Put the key part at *p (upsert.h's format) into leaf n. */
static int put_part(floe_rows_t *rows, floe_rnode_t *n, const uint8_t **p, const uint8_t *end)
{
    if (end - *p < 5) return -1;
    uint32_t len = (uint32_t)(*p)[1] | (uint32_t)(*p)[2] << 8 | (uint32_t)(*p)[3] << 16 |
                   (uint32_t)(*p)[4] << 24;
    const uint8_t *v = *p + 5;
    if ((size_t)(end - v) < len) return -1;
    *p = v + len;
    char num[24];
    switch (n->kind) {
    case FLOE_TK_LONG:
    case FLOE_TK_INT:
        if (len >= sizeof num) return -1;
        memcpy(num, v, len);
        num[len] = 0;
        return n->kind == FLOE_TK_LONG ? floe_rows_put_long(rows, n, strtoll(num, NULL, 10))
                                       : floe_rows_put_int(rows, n, (int32_t)strtol(num, NULL, 10));
    case FLOE_TK_BOOL: return floe_rows_put_bool(rows, n, len == 1 && v[0] == '1');
    default: return floe_rows_put_bytes(rows, n, v, len);
    }
}

/* The id of an unpartitioned spec of o's table, for equality deletes: an
 * equality delete file of an unpartitioned spec applies to the data files
 * of every partition (spec "Scan Planning": global deletes), so it takes
 * a key's old row out wherever the row lives, even when an update moved
 * the key to another partition (an equality delete in the new row's
 * partition would miss it).  A table without one (made partitioned by
 * another tool) gets one added, not as the default spec. */
static int global_spec(floe_ttable_t *t, floe_tout_t *o, int32_t *spec_id, floe_err_t *err)
{
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    for (size_t i = 0; i < md->nspecs; i++)
        if (!md->specs[i]->nfields) {
            *spec_id = md->specs[i]->spec_id;
            return 0;
        }
    floe_ice_req_t req = {.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID};
    memcpy(req.uuid, md->table_uuid, sizeof req.uuid);
    floe_ice_update_t up = {.kind = FLOE_ICE_UP_ADD_SPEC, .spec = floe_ice_spec_new(-1)};
    if (!up.spec) return floe_err_oom(err);
    floe_ice_table_t *nt = NULL;
    int rc = floe_ice_catalog_commit(t->catalog, o->ns, o->name, &req, 1, &up, 1, &nt, err);
    floe_ice_update_clear(&up);
    if (rc < 0) return -1;
    floe_tout_reloaded(o, nt);
    md = floe_ice_table_metadata(o->ice);
    for (size_t i = 0; i < md->nspecs; i++)
        if (!md->specs[i]->nfields) {
            *spec_id = md->specs[i]->spec_id;
            FLOE_INFO("table %s.%s: unpartitioned spec %d added for global equality deletes", o->ns,
                      o->name, (int)*spec_id);
            return 0;
        }
    return floe_err_set(err, FLOE_EINVAL, "%s.%s: no unpartitioned spec after adding one", o->ns,
                        o->name);
}

/* An equality delete file holding every key of the uplog once, global
 * (global_spec). */
static int equality_file(floe_ttable_t *t, floe_tout_t *o, const floe_tupsert_cols_t *cols,
                         floe_err_t *err)
{
    const floe_tupsert_log_t *l = &o->uplog;
    int32_t spec_id = 0;
    if (global_spec(t, o, &spec_id, err) < 0) return -1;
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_tkeyidx_t *seen = floe_tkeyidx_new();
    floe_rnode_t *leaf[FLOE_TUPSERT_MAX_IDS];
    int32_t ids[FLOE_TUPSERT_MAX_IDS];
    int rc = rows && seen ? 0 : floe_err_oom(err);
    for (size_t i = 0; rc == 0 && i < cols->nids; i++) {
        if (!(leaf[i] = eq_node(rows, o->work, cols->ids[i], err))) rc = -1;
        else
            ids[i] = leaf[i]->field_id;
    }
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        floe_slice_t k = floe_tupsert_log_key(l, i);
        int r = floe_tkeyidx_put(seen, k.ptr, k.len, "", 0, NULL);
        if (r < 0) rc = floe_err_oom(err);
        if (r != 0) continue;
        const uint8_t *p = k.ptr, *end = k.ptr + k.len;
        floe_rows_begin(rows);
        for (size_t c = 0; rc == 0 && c < cols->nids; c++)
            if (put_part(rows, leaf[c], &p, end) < 0)
                rc = floe_err_set(err, FLOE_ECORRUPT, "upsert: a key does not fit its columns");
        if (rc == 0) rc = floe_rows_end(rows, err);
        else
            floe_rows_rollback(rows);
    }
    if (rc == 0 && floe_rows_count(rows))
        rc = write_deletes(t, o, rows, "eqdel-", o->schema_json, FLOE_ICE_CONTENT_EQUALITY_DELETES,
                           ids, cols->nids, NULL, spec_id, NULL, 0, err);
    floe_tkeyidx_free(seen);
    floe_rows_free(rows);
    return rc;
}

/* Whether any spec of o's table (or of its new files) is partitioned. */
static bool partitioned(const floe_tout_t *o, const floe_ice_metadata_t *md)
{
    bool any = o->spec && o->spec->nfields;
    for (size_t i = 0; !any && i < md->nspecs; i++) any = md->specs[i]->nfields > 0;
    return any;
}

typedef struct kord {
    uint64_t order;
    size_t i;
} kord_t;

static int kord_cmp(const void *a, const void *b)
{
    const kord_t *x = a, *y = b;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The uplog's entries in the index's order (floe_tkeyidx_order), or NULL
 * for their own order (an index in memory, or no memory to sort). */
static kord_t *index_order(const floe_tkeyidx_t *x, const floe_tupsert_log_t *l)
{
    kord_t *o = floe_tkeyidx_disk(x) && l->n ? malloc(l->n * sizeof *o) : NULL;
    if (!o) return NULL;
    for (size_t i = 0; i < l->n; i++) {
        floe_slice_t k = floe_tupsert_log_key(l, i);
        o[i] = (kord_t){floe_tkeyidx_order(x, k.ptr, k.len), i};
    }
    qsort(o, l->n, sizeof *o, kord_cmp);
    return o;
}

/* t->upparts knowing the partition of every data file of md's current
 * snapshot (kept from the last commit, else read from its manifests) and
 * of o's pending files. */
static int parts_fresh(floe_ttable_t *t, floe_tout_t *o, const floe_ice_metadata_t *md,
                       floe_err_t *err)
{
    if (!t->upparts ||
        !floe_tupsert_parts_reflects(t->upparts, md->table_uuid, md->current_snapshot_id)) {
        floe_tupsert_parts_free(t->upparts);
        if (!(t->upparts = floe_tupsert_parts_new())) return floe_err_oom(err);
        floe_ice_scan_t *sc = NULL;
        int rc = floe_ice_scan_plan(floe_ice_catalog_io(t->catalog), md, -1, NULL, 0, &sc, err);
        for (size_t i = 0; rc == 0 && i < floe_ice_scan_ntasks(sc); i++) {
            const floe_ice_data_file_t *f = floe_ice_scan_task(sc, i)->file;
            rc = floe_tupsert_parts_put(t->upparts, f->path, f->spec_id, f->partition,
                                        f->npartition, err);
        }
        floe_ice_scan_free(sc);
        if (rc < 0) {
            floe_tupsert_parts_free(t->upparts);
            t->upparts = NULL;
            floe_err_wrap(err, "upsert: the partitions of %s.%s's data files", o->ns, o->name);
            return -1;
        }
        floe_tupsert_parts_set_state(t->upparts, md->table_uuid, md->current_snapshot_id);
    }
    for (size_t i = 0; i < o->npending; i++) {
        const floe_ice_data_file_t *f = &o->pending[i];
        if (f->content == FLOE_ICE_CONTENT_DATA &&
            floe_tupsert_parts_put(t->upparts, f->path, f->spec_id, f->partition, f->npartition,
                                   err) < 0)
            return -1;
    }
    return 0;
}

/* Position deletes d[0..nd) (sorted in one partition) as one delete file
 * of that partition (spec_id, values). */
static int position_group(floe_ttable_t *t, floe_tout_t *o, const floe_tupsert_posdel_t *d,
                          size_t nd, int32_t spec_id, const floe_ice_value_t *values,
                          size_t nvalues, floe_err_t *err)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    int rc = rows ? 0 : floe_err_oom(err);
    floe_rnode_t *fp = rc == 0 ? floe_rows_add_field(rows, floe_rows_root(rows), "file_path",
                                                     FLOE_TK_STRING, true, err)
                               : NULL;
    floe_rnode_t *pos =
        fp ? floe_rows_add_field(rows, floe_rows_root(rows), "pos", FLOE_TK_LONG, true, err) : NULL;
    if (rc == 0 && !pos) rc = -1;
    if (rc == 0) {
        fp->field_id = ICE_DELETE_FILE_PATH;
        pos->field_id = ICE_DELETE_POS;
    }
    for (size_t i = 0; rc == 0 && i < nd; i++) {
        floe_rows_begin(rows);
        if (floe_rows_put_bytes(rows, fp, d[i].path, strlen(d[i].path)) < 0 ||
            floe_rows_put_long(rows, pos, d[i].pos) < 0)
            rc = floe_err_oom(err);
        if (rc == 0) rc = floe_rows_end(rows, err);
    }
    const floe_ice_spec_t *spec = floe_ice_metadata_spec(floe_ice_table_metadata(o->ice), spec_id);
    if (rc == 0)
        rc = write_deletes(t, o, rows, "posdel-", POS_SCHEMA, FLOE_ICE_CONTENT_POSITION_DELETES,
                           NULL, 0, spec, spec_id, values, nvalues, err);
    floe_rows_free(rows);
    return rc;
}

/* The rows the uplog's keys had, as position delete files, one per
 * partition of the data files holding them (a row an update moves to
 * another partition is deleted in its old one); the index learns where
 * their new rows are. */
static int position_files(floe_ttable_t *t, floe_tout_t *o, floe_err_t *err)
{
    const floe_tupsert_log_t *l = &o->uplog;
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    floe_tkeyidx_t *x = t->keyidx;
    size_t cap = l->n ? l->n : 1;
    floe_tupsert_posdel_t *d = malloc(cap * sizeof *d);
    size_t *ends = malloc(cap * sizeof *ends);
    size_t nd = 0, ng = 0;
    int rc = d && ends ? 0 : floe_err_oom(err);
    kord_t *ord = rc == 0 ? index_order(x, l) : NULL;
    for (size_t j = 0; rc == 0 && j < l->n; j++) {
        size_t i = ord ? ord[j].i : j;
        floe_slice_t k = floe_tupsert_log_key(l, i);
        floe_tkeyidx_loc_t old;
        int r = l->file[i] == UINT32_MAX
                    ? floe_tkeyidx_del(x, k.ptr, k.len, &old)
                    : floe_tkeyidx_put(x, k.ptr, k.len, l->files[l->file[i]], l->pos[i], &old);
        if (r < 0) rc = floe_err_oom(err);
        else if (r == 1)
            d[nd++] = (floe_tupsert_posdel_t){old.path, old.pos, NULL};
    }
    free(ord);
    bool parted = partitioned(o, md);
    /* the map follows every commit (cheaper than reading the manifests) */
    if (rc == 0 && parted) rc = parts_fresh(t, o, md, err);
    if (rc == 0 && nd && parted) {
        rc = floe_tupsert_posdel_group(t->upparts, d, nd, ends, &ng, err);
        for (size_t g = 0, from = 0; rc == 0 && g < ng; from = ends[g++])
            rc = position_group(t, o, d + from, ends[g] - from, d[from].part->spec_id,
                                d[from].part->values, d[from].part->nvalues, err);
    } else if (rc == 0 && nd) { /* unpartitioned: one file */
        floe_tupsert_parts_t *one = floe_tupsert_parts_new();
        rc = one ? 0 : floe_err_oom(err);
        for (size_t i = 0; rc == 0 && i < nd; i++)
            rc = floe_tupsert_parts_put(one, d[i].path, o->spec ? o->spec->spec_id : 0, NULL, 0,
                                        err);
        if (rc == 0) rc = floe_tupsert_posdel_group(one, d, nd, ends, &ng, err);
        if (rc == 0) rc = position_group(t, o, d, nd, d[0].part->spec_id, NULL, 0, err);
        floe_tupsert_parts_free(one);
    }
    free(ends);
    free(d);
    return rc;
}

int floe_tupsert_prepare(floe_ttable_t *t, floe_tout_t *o, int64_t *require_snapshot,
                         floe_err_t *err)
{
    *require_snapshot = -2;
    if (t->cfg.write_mode != FLOE_WRITE_UPSERT || o != &t->main || !o->uplog.n) return 0;
    floe_tupsert_cols_t cols;
    if (floe_tupsert_cols_parse(t->cfg.id_columns, t->cfg.cdc_field, &cols, err) < 0) return -1;
    if (t->cfg.delete_mode == FLOE_DELETE_EQUALITY) return equality_file(t, o, &cols, err);
    /* the table as it is now: the index must reflect it */
    floe_ice_table_t *nt;
    if (floe_ice_catalog_load_table(t->catalog, o->ns, o->name, &nt, err) < 0) return -1;
    floe_tout_reloaded(o, nt);
    const floe_ice_metadata_t *md = floe_ice_table_metadata(o->ice);
    int rc = index_fresh(t, &cols, md, err);
    if (rc == 0) {
        *require_snapshot = md->current_snapshot_id;
        rc = position_files(t, o, err);
    }
    if (rc < 0) floe_tupsert_failed(t);
    return rc;
}

void floe_tupsert_committed(floe_ttable_t *t, const char *uuid, int64_t snap)
{
    if (!t->keyidx) return;
    if (snap < 0) {
        floe_tupsert_failed(t);
        return;
    }
    floe_tkeyidx_set_state(t->keyidx, uuid, snap);
    /* it knew the files of the snapshot built on and of this commit */
    if (t->upparts) floe_tupsert_parts_set_state(t->upparts, uuid, snap);
    char path[4400];
    floe_err_t e;
    if (floe_tupsert_index_path(t, path, sizeof path) == 0 &&
        (floe_fs_mkdirs(t->state_dir, &e) < 0 || floe_tkeyidx_save(t->keyidx, path, &e) < 0))
        FLOE_WARN("table %s.%s: cannot save the key index (rebuilt at the next start): %s",
                  t->main.ns, t->main.name, e.msg);
}

void floe_tupsert_failed(floe_ttable_t *t)
{
    floe_tkeyidx_free(t->keyidx);
    t->keyidx = NULL;
}
