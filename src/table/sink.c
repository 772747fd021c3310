/* Rows on their way into an output table: buffer, open files, row groups,
 * file rolls (sink.h). */
#include "table/sink.h"

#include <stdlib.h>
#include <string.h>

#include "table/ptuple.h"
#include "util/diag.h"

/* The drain step: FLOE_TSINK_DRAIN_BYTES, or table.flush.bytes when that
 * is smaller. */
static uint64_t drain_step(const floe_tsink_t *s)
{
    uint64_t fb = s->env->cfg->flush_bytes;
    return fb < FLOE_TSINK_DRAIN_BYTES ? fb : FLOE_TSINK_DRAIN_BYTES;
}

int floe_tsink_init(floe_tsink_t *s, floe_tsink_env_t *env, floe_tout_t *out, int32_t file_id,
                    unsigned flags, floe_err_t *err)
{
    memset(s, 0, sizeof *s);
    floe_rows_opts_t ro = {.widen_long_to_double = true,
                           .infer_timestamps = env->cfg->json_infer_timestamps,
                           .coerce = env->cfg->json_coerce,
                           .max_depth = 32,
                           .max_leaves = 2048};
    if (!(s->rows = floe_rows_new(&ro))) return floe_err_oom(err);
    s->env = env;
    s->out = out;
    s->file_id = file_id;
    s->flags = flags;
    s->look_every = (size_t)(drain_step(s) / 4);
    s->held_shape = UINT64_MAX;
    return 0;
}

void floe_tsink_abort(floe_tsink_t *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        floe_tsink_file_t *f = &s->files[i];
        floe_dfw_abort(f->w);
        floe_buf_free(&f->key);
        free(f->path);
        for (size_t k = 0; k < f->nvalues; k++) floe_ice_value_clear(&f->values[k]);
        free(f->values);
    }
    s->nfiles = 0;
}

void floe_tsink_discard(floe_tsink_t *s)
{
    floe_tsink_abort(s);
    floe_rows_clear(s->rows);
    floe_buf_reset(&s->ops);
    s->drained = 0;
    s->since = 0;
}

void floe_tsink_clear(floe_tsink_t *s)
{
    floe_tsink_abort(s);
    free(s->files);
    floe_rows_free(s->rows);
    free(s->up);
    floe_buf_free(&s->ops);
    memset(s, 0, sizeof *s);
}

/* Mark the long nodes the table may hold in its files (ids up to the
 * output's committed_max_id): a fraction there waits for the widening
 * (rows.h hold). */
static void mark_holds(floe_rnode_t *n, int32_t max_id)
{
    for (size_t i = 0; i < n->nkids; i++) {
        floe_rnode_t *k = n->kids[i];
        k->hold = k->kind == FLOE_TK_LONG && k->field_id > 0 && k->field_id <= max_id;
        mark_holds(k, max_id);
    }
}

int floe_tsink_seed(floe_tsink_t *s, floe_err_t *err)
{
    if (s->seeded != s->out->schema_version) {
        if (floe_tschema_seed(s->rows, s->out->work, err) < 0) return -1;
        s->seeded = s->out->schema_version;
    }
    uint64_t shape = floe_rows_shape_version(s->rows);
    if (shape != s->held_shape || s->out->committed_max_id != s->held_max) {
        mark_holds(floe_rows_root(s->rows), s->out->committed_max_id);
        s->held_shape = shape;
        s->held_max = s->out->committed_max_id;
    }
    return 0;
}

int floe_tsink_merge_schema(floe_tsink_t *s, floe_err_t *err)
{
    bool grew;
    if (floe_tout_merge_schema(s->out, s->rows, &grew, err) < 0) return -1;
    if (grew) s->seeded = s->out->schema_version; /* this buffer has every field already */
    return 0;
}

/* ---- which longs may widen --------------------------------------------------- */

/* A summary of a partition spec's source fields, for the pins' key. */
static uint64_t spec_sum(const floe_ice_spec_t *sp)
{
    uint64_t h = sp ? sp->nfields : 0;
    for (size_t i = 0; sp && i < sp->nfields; i++)
        h = h * 1000003u + (uint64_t)(uint32_t)sp->fields[i].source_id;
    return h;
}

static void pin_walk(floe_tsink_t *s, floe_rnode_t *n, uint64_t max_bytes)
{
    for (size_t i = 0; i < n->nkids; i++) {
        floe_rnode_t *k = n->kids[i];
        k->pinned = false;
        k->pin_why = NULL;
        if (k->kind == FLOE_TK_LONG && k->field_id > 0) {
            floe_twiden_verdict_t v = floe_tout_may_widen(s->out, k->field_id, max_bytes,
                                                          s->widen_why, sizeof s->widen_why);
            k->pinned = v != FLOE_TWIDEN_OK;
            if (v == FLOE_TWIDEN_LARGE) k->pin_why = s->widen_why;
        }
        pin_walk(s, k, max_bytes);
    }
}

void floe_tsink_pin(floe_tsink_t *s, uint64_t max_bytes)
{
    const floe_tout_t *o = s->out;
    const floe_ice_metadata_t *md = o->ice ? floe_ice_table_metadata(o->ice) : NULL;
    struct floe_tsink_pins k = {.set = true,
                                .shape = floe_rows_shape_version(s->rows),
                                .schema = o->schema_version,
                                .max_bytes = max_bytes,
                                .spec_sum = spec_sum(o->spec),
                                .snapshot = md ? md->current_snapshot_id : -1,
                                .schema_id = md ? md->current_schema_id : -1,
                                .nspecs = md ? md->nspecs : 0};
    const struct floe_tsink_pins *p = &s->pins;
    if (p->set && p->shape == k.shape && p->schema == k.schema && p->max_bytes == k.max_bytes &&
        p->spec_sum == k.spec_sum && p->snapshot == k.snapshot && p->schema_id == k.schema_id &&
        p->nspecs == k.nspecs)
        return;
    s->pins = k;
    pin_walk(s, floe_rows_root(s->rows), max_bytes);
}

/* ---- files ------------------------------------------------------------- */

/* Close open file i and hand it to the output's pending list. */
static int close_file(floe_tsink_t *s, size_t i, floe_err_t *err)
{
    floe_tsink_file_t f = s->files[i];
    s->files[i] = s->files[--s->nfiles];
    floe_ice_data_file_t df;
    int rc = floe_dfw_close(f.w, &df, err);
    floe_buf_free(&f.key);
    free(f.path);
    if (rc < 0) {
        for (size_t k = 0; k < f.nvalues; k++) floe_ice_value_clear(&f.values[k]);
        free(f.values);
        return -1;
    }
    df.spec_id = f.spec_id;
    df.partition = f.values; /* ownership moves to the data file */
    df.npartition = f.nvalues;
    s->env->files_written++;
    s->env->bytes_written += (uint64_t)df.file_size;
    FLOE_DEBUG("table %s.%s: closed %s (%lld rows, %lld bytes)", s->out->ns, s->out->name, df.path,
               (long long)df.record_count, (long long)df.file_size);
    return floe_tout_add_pending(s->out, &df, err);
}

static int close_all(floe_tsink_t *s, floe_err_t *err)
{
    while (s->nfiles)
        if (close_file(s, s->nfiles - 1, err) < 0) return -1;
    return 0;
}

/* The folder of a partition tuple's files under data/ ("a=1/b=2/"; ""
 * unpartitioned), as a C string in part. */
static int tuple_folder(const floe_tout_t *o, const floe_ice_value_t *values, floe_buf_t *part,
                        floe_err_t *err)
{
    if (o->spec && o->spec->nfields) {
        if (floe_ice_spec_partition_path(o->spec, values, part, err) < 0) return -1;
        if (floe_buf_append_u8(part, '/') < 0) return floe_err_oom(err);
    }
    return floe_buf_cstr(part) ? 0 : floe_err_oom(err);
}

/* The open file for (spec, key), opened for the buffer's shape when there
 * is none; the least recently used one closes past FLOE_TSINK_MAX_OPEN.
 * Takes *values when it opens a file. */
static floe_tsink_file_t *file_for(floe_tsink_t *s, const floe_buf_t *key,
                                   floe_ice_value_t **values, size_t nvalues, floe_err_t *err)
{
    floe_tout_t *o = s->out;
    int32_t spec_id = o->spec ? o->spec->spec_id : 0;
    for (size_t i = 0; i < s->nfiles; i++) {
        floe_tsink_file_t *f = &s->files[i];
        if (f->spec_id == spec_id && f->key.len == key->len &&
            (!key->len || !memcmp(f->key.data, key->data, key->len))) {
            if (floe_dfw_shape_version(f->w) == floe_rows_shape_version(s->rows)) {
                f->used = ++s->clock;
                return f;
            }
            if (close_file(s, i, err) < 0) return NULL; /* old shape */
            break;
        }
    }
    if (s->nfiles >= FLOE_TSINK_MAX_OPEN) {
        size_t lru = 0;
        for (size_t i = 1; i < s->nfiles; i++)
            if (s->files[i].used < s->files[lru].used) lru = i;
        if (close_file(s, lru, err) < 0) return NULL;
    }
    if (s->nfiles == s->capfiles) {
        size_t cap = s->capfiles ? s->capfiles * 2 : 4;
        floe_tsink_file_t *v = realloc(s->files, cap * sizeof *v);
        if (!v) {
            floe_err_oom(err);
            return NULL;
        }
        s->files = v;
        s->capfiles = cap;
    }
    char path[2400];
    floe_buf_t part = FLOE_BUF_INIT;
    int rc = tuple_folder(o, *values, &part, err);
    if (rc == 0)
        rc = floe_tout_file_path(o, s->env->writer_id, s->file_id, (const char *)part.data, path,
                                 sizeof path, err);
    floe_buf_free(&part);
    if (rc < 0) return NULL;
    floe_dfw_opts_t fo = {.codec = FLOE_CODEC_ZSTD, .level = 1, .scratch = s->env->pq_scratch};
    floe_dfw_t *w = floe_dfw_open(s->env->io, path, s->rows, o->schema_json, &fo, err);
    if (!w) return NULL;
    floe_tsink_file_t *f = &s->files[s->nfiles++];
    memset(f, 0, sizeof *f);
    f->w = w;
    f->spec_id = spec_id;
    f->used = ++s->clock;
    f->values = *values;
    f->nvalues = nvalues;
    *values = NULL;
    if (!(f->path = strdup(path))) {
        floe_err_oom(err);
        return NULL;
    }
    if (floe_buf_append(&f->key, key->data, key->len) < 0) {
        floe_err_oom(err);
        return NULL;
    }
    return f;
}

/* Cut a row group in every open file; roll those at the target size. */
static int cut_row_groups(floe_tsink_t *s, floe_err_t *err)
{
    for (size_t i = s->nfiles; i-- > 0;) {
        floe_tsink_file_t *f = &s->files[i];
        if (floe_dfw_flush(f->w, err) < 0) return -1;
        if (floe_dfw_bytes(f->w) >= s->env->cfg->target_file_bytes && close_file(s, i, err) < 0)
            return -1;
    }
    s->drained = 0;
    return 0;
}

/* Hand the buffered rows to the open files (one per partition tuple) and
 * empty the buffer; once table.flush.bytes of rows went there since the
 * last cut, or with cut, every open file gets a row group. */
static int drain(floe_tsink_t *s, bool cut, floe_err_t *err)
{
    floe_tout_t *o = s->out;
    size_t bytes = floe_rows_bytes(s->rows);
    if (floe_rows_count(s->rows)) {
        if (floe_tsink_merge_schema(s, err) < 0) return -1;
        if (s->flags & FLOE_TSINK_PARTITIONED) floe_tout_resolve_spec(o, s->env->cfg->partition_by);
        int rc = 0;
        if (!o->spec || !o->spec->nfields) {
            floe_buf_t none = FLOE_BUF_INIT;
            floe_ice_value_t *nov = NULL;
            floe_tsink_file_t *f = file_for(s, &none, &nov, 0, err);
            rc = f ? floe_dfw_append(f->w, s->rows, err) : -1;
        } else {
            floe_tptuples_t gs = {0};
            rc = floe_tptuples_group(s->rows, o->spec, o->work, &gs, err);
            for (size_t g = 0; rc == 0 && g < gs.n; g++) {
                floe_tptuple_t *grp = &gs.g[g];
                floe_tsink_file_t *f = file_for(s, &grp->key, &grp->values, grp->nvalues, err);
                if (!f) rc = -1;
                else
                    rc = floe_dfw_append_sel(f->w, s->rows, grp->rows, grp->nrows, err);
            }
            floe_tptuples_free(&gs);
        }
        if (rc < 0) return -1;
        s->rows_written += floe_rows_count(s->rows);
        floe_rows_clear(s->rows);
        s->drained += bytes;
    }
    if ((cut || s->drained >= s->env->cfg->flush_bytes) && cut_row_groups(s, err) < 0) return -1;
    return 0;
}

int floe_tsink_drain_due(floe_tsink_t *s, floe_err_t *err)
{
    if (s->up) return 0;           /* an upsert buffer holds the commit's rows until the seal */
    uint64_t step = drain_step(s); /* table.flush.bytes is live */
    s->since = 0;
    s->look_every = (size_t)(step / 4);
    return floe_rows_bytes(s->rows) >= step ? drain(s, false, err) : 0;
}

int floe_tsink_set_upsert(floe_tsink_t *s, const char *ids, const char *cdc, floe_err_t *err)
{
    floe_tupsert_cols_t *u = floe_tupsert_cols_new(ids, cdc, err);
    if (!u) return -1;
    free(s->up);
    s->up = u;
    return 0;
}

int floe_tsink_note_op(floe_tsink_t *s, bool del, floe_err_t *err)
{
    size_t n = floe_rows_count(s->rows);
    while (s->ops.len + 1 < n)
        if (floe_buf_append_u8(&s->ops, 0) < 0) return floe_err_oom(err);
    if (n && s->ops.len == n - 1 && floe_buf_append_u8(&s->ops, del) < 0) return floe_err_oom(err);
    return 0;
}

/* Mark the id nodes and the structs above them as holding no null. */
static void mark_no_nulls(floe_rnode_t *const *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (floe_rnode_t *k = ids[i]; k && k->parent; k = k->parent) k->no_nulls = true;
}

/* Log key i of b with its new row at (path, pos), or deleted (path NULL). */
static int log_key(floe_tout_t *o, const floe_tupsert_batch_t *b, size_t i, const char *path,
                   int64_t pos, floe_err_t *err)
{
    return floe_tupsert_log_add(&o->uplog, floe_tupsert_batch_key(b, i), path, pos) < 0
               ? floe_err_oom(err)
               : 0;
}

/* Write rows sel[0..nsel) of the buffer (ascending) to the open file of
 * partition tuple (key, *values) and log each row's key (keyof[row]) at
 * its position there. */
static int upsert_write_rows(floe_tsink_t *s, const floe_tupsert_batch_t *b, const uint32_t *keyof,
                             const floe_buf_t *key, floe_ice_value_t **values, size_t nvalues,
                             const uint32_t *sel, size_t nsel, floe_err_t *err)
{
    if (!nsel) return 0;
    floe_tsink_file_t *f = file_for(s, key, values, nvalues, err);
    if (!f) return -1;
    int64_t base = (int64_t)floe_dfw_rows(f->w);
    if (floe_dfw_append_sel(f->w, s->rows, sel, nsel, err) < 0) return -1;
    for (size_t j = 0; j < nsel; j++)
        if (log_key(s->out, b, keyof[sel[j]], f->path, base + (int64_t)j, err) < 0) return -1;
    s->rows_written += nsel;
    return 0;
}

/* The surviving rows of b, grouped by partition tuple (a partitioned
 * table: each tuple's rows go to its own file). */
static int upsert_write_partitioned(floe_tsink_t *s, const floe_tupsert_batch_t *b,
                                    const uint32_t *keyof, floe_err_t *err)
{
    floe_tout_t *o = s->out;
    size_t n = floe_rows_count(s->rows);
    uint8_t *keep = calloc(n, 1);
    uint32_t *sel = malloc(n * sizeof *sel);
    floe_tptuples_t gs = {0};
    int rc = keep && sel ? 0 : floe_err_oom(err);
    for (size_t j = 0; rc == 0 && j < b->nsel; j++) keep[b->sel[j]] = 1;
    if (rc == 0) rc = floe_tptuples_group(s->rows, o->spec, o->work, &gs, err);
    for (size_t g = 0; rc == 0 && g < gs.n; g++) {
        floe_tptuple_t *grp = &gs.g[g];
        size_t nsel = 0;
        for (size_t r = 0; r < grp->nrows; r++)
            if (keep[grp->rows[r]]) sel[nsel++] = grp->rows[r];
        rc = upsert_write_rows(s, b, keyof, &grp->key, &grp->values, grp->nvalues, sel, nsel, err);
    }
    floe_tptuples_free(&gs);
    free(sel);
    free(keep);
    return rc;
}

/* The upsert seal: the last change of each key into the open file of its
 * partition tuple, every key touched logged in the output with its new
 * row's file and position (the commit deletes its older row wherever that
 * lives: upsert_write.h). */
static int upsert_drain(floe_tsink_t *s, floe_err_t *err)
{
    floe_tout_t *o = s->out;
    size_t n = floe_rows_count(s->rows);
    if (!n) return 0;
    floe_tupsert_batch_t b = {0};
    floe_rnode_t *ids[FLOE_TUPSERT_MAX_IDS];
    uint32_t *keyof = NULL;
    int rc = floe_tupsert_id_nodes(s->rows, s->up, ids, err);
    if (rc == 0) {
        mark_no_nulls(ids, s->up->nids);
        rc = floe_tsink_merge_schema(s, err);
    }
    int32_t fids[FLOE_TUPSERT_MAX_IDS];
    for (size_t i = 0; rc == 0 && i < s->up->nids; i++) fids[i] = ids[i]->field_id;
    if (rc == 0) rc = floe_tout_set_identifiers(o, fids, s->up->nids, err);
    if (rc == 0) rc = floe_tupsert_dedupe(s->rows, s->up, s->ops.data, s->ops.len, &b, err);
    if (rc == 0 && (s->flags & FLOE_TSINK_PARTITIONED))
        floe_tout_resolve_spec(o, s->env->cfg->partition_by);
    if (rc == 0 && !(keyof = malloc(n * sizeof *keyof))) rc = floe_err_oom(err);
    for (size_t i = 0; rc == 0 && i < b.nkeys; i++)
        if (b.key_row[i] != UINT32_MAX) keyof[b.key_row[i]] = (uint32_t)i;
    if (rc == 0 && b.nsel) {
        if (o->spec && o->spec->nfields) {
            rc = upsert_write_partitioned(s, &b, keyof, err);
        } else {
            floe_buf_t none = FLOE_BUF_INIT;
            floe_ice_value_t *nov = NULL;
            rc = upsert_write_rows(s, &b, keyof, &none, &nov, 0, b.sel, b.nsel, err);
        }
    }
    for (size_t i = 0; rc == 0 && i < b.nkeys; i++)
        if (b.key_row[i] == UINT32_MAX) rc = log_key(o, &b, i, NULL, -1, err);
    free(keyof);
    if (rc == 0) {
        floe_rows_clear(s->rows);
        floe_buf_reset(&s->ops);
    }
    floe_tupsert_batch_free(&b);
    return rc;
}

int floe_tsink_seal(floe_tsink_t *s, floe_err_t *err)
{
    s->since = 0;
    if (s->up && upsert_drain(s, err) < 0) return -1;
    return drain(s, true, err) < 0 || close_all(s, err) < 0 ? -1 : 0;
}

uint64_t floe_tsink_file_bytes(const floe_tsink_t *s)
{
    /* an upsert buffer stands for the files of its commit */
    uint64_t b = s->up ? floe_rows_bytes(s->rows) : 0;
    for (size_t i = 0; i < s->nfiles; i++) b += floe_dfw_bytes(s->files[i].w);
    return b;
}

uint64_t floe_tsink_buffered(const floe_tsink_t *s)
{
    uint64_t b = floe_rows_bytes(s->rows);
    for (size_t i = 0; i < s->nfiles; i++) b += floe_dfw_buffered(s->files[i].w);
    return b;
}
