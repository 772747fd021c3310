/* A table-topic partition's pipeline: read batches from the source,
 * decode, convert into the L1 buffer, route bad records, write row groups
 * (L2) into files rolled at the target size (L3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/batch.h"
#include "table/engine_int.h"
#include "table/ptuple.h"
#include "table/schema_map.h"
#include "util/clock.h"
#include "util/diag.h"

/* The dead-letter table's shape: where the record was, what it held, why
 * it failed. */
static int dlq_shape(floe_rows_t *r, floe_err_t *err)
{
    floe_rnode_t *root = floe_rows_root(r);
    static const struct {
        const char *name;
        floe_tkind_t kind;
        bool required;
    } f[] = {{"partition", FLOE_TK_INT, true},         {"offset", FLOE_TK_LONG, true},
             {"timestamp", FLOE_TK_TIMESTAMPTZ, true}, {"key", FLOE_TK_BINARY, false},
             {"value", FLOE_TK_BINARY, false},         {"stage", FLOE_TK_STRING, true},
             {"reason", FLOE_TK_STRING, true}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        floe_rnode_t *n = floe_rows_add_field(r, root, f[i].name, f[i].kind, f[i].required, err);
        if (!n) return -1;
        floe_rows_mark_sys(n);
    }
    floe_rnode_t *h =
        floe_rows_add_map(r, root, "headers", FLOE_TK_BINARY, FLOE_TK_BINARY, false, err);
    if (!h) return -1;
    floe_rows_mark_sys(h);
    return 0;
}

floe_tpart_t *floe_tpart_new(floe_ttable_t *t, int32_t id, floe_err_t *err)
{
    floe_tpart_t *p = calloc(1, sizeof *p);
    if (!p) {
        floe_err_oom(err);
        return NULL;
    }
    p->t = t;
    p->id = id;
    p->next = -1;
    p->pending_ts_ms = p->behind_since_ms = -1;
    floe_rows_opts_t ro = {.widen_long_to_double = true,
                           .infer_timestamps = t->cfg.json_infer_timestamps,
                           .coerce = t->cfg.json_coerce,
                           .max_depth = 32,
                           .max_leaves = 2048};
    if (!(p->main.rows = floe_rows_new(&ro)) || !(p->dlq.rows = floe_rows_new(&ro))) {
        floe_err_oom(err);
        goto fail;
    }
    if (!(p->conv = floe_conv_new(p->main.rows, t->cfg.value_conv, t->cfg.key_conv, err)) ||
        dlq_shape(p->dlq.rows, err) < 0)
        goto fail;
    return p;
fail:
    floe_tpart_free(p);
    return NULL;
}

void floe_tsink_abort(floe_tsink_t *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        floe_tsink_file_t *f = &s->files[i];
        floe_dfw_abort(f->w);
        floe_buf_free(&f->key);
        for (size_t k = 0; k < f->nvalues; k++) floe_ice_value_clear(&f->values[k]);
        free(f->values);
    }
    s->nfiles = 0;
}

void floe_tpart_free(floe_tpart_t *p)
{
    if (!p) return;
    floe_tsink_abort(&p->main);
    floe_tsink_abort(&p->dlq);
    free(p->main.files);
    free(p->dlq.files);
    floe_conv_free(p->conv);
    floe_rows_free(p->main.rows);
    floe_rows_free(p->dlq.rows);
    free(p);
}

/* ---- writing ----------------------------------------------------------- */

/* Close open file i of s and hand it to the output's pending list. */
static int close_file(floe_tpart_t *p, floe_tsink_t *s, size_t i, floe_tout_t *o, floe_err_t *err)
{
    floe_tsink_file_t f = s->files[i];
    s->files[i] = s->files[--s->nfiles];
    floe_ice_data_file_t df;
    int rc = floe_dfw_close(f.w, &df, err);
    floe_buf_free(&f.key);
    if (rc < 0) {
        for (size_t k = 0; k < f.nvalues; k++) floe_ice_value_clear(&f.values[k]);
        free(f.values);
        return -1;
    }
    df.spec_id = f.spec_id;
    df.partition = f.values; /* ownership moves to the data file */
    df.npartition = f.nvalues;
    p->t->files_written++;
    p->t->bytes_written += (uint64_t)df.file_size;
    FLOE_DEBUG("table %s.%s: closed %s (%lld rows, %lld bytes)", o->ns, o->name, df.path,
               (long long)df.record_count, (long long)df.file_size);
    return floe_tout_add_pending(o, &df, err);
}

static int close_all(floe_tpart_t *p, floe_tsink_t *s, floe_tout_t *o, floe_err_t *err)
{
    while (s->nfiles)
        if (close_file(p, s, s->nfiles - 1, o, err) < 0) return -1;
    return 0;
}

/* The open file for (spec, key), opened for the buffer's shape when there
 * is none; the least recently used one closes past TSINK_MAX_OPEN.  Takes
 * *values when it opens a file. */
static floe_tsink_file_t *file_for(floe_tpart_t *p, floe_tsink_t *s, floe_tout_t *o,
                                   const floe_buf_t *key, floe_ice_value_t **values, size_t nvalues,
                                   floe_err_t *err)
{
    int32_t spec_id = o->spec ? o->spec->spec_id : 0;
    for (size_t i = 0; i < s->nfiles; i++) {
        floe_tsink_file_t *f = &s->files[i];
        if (f->spec_id == spec_id && f->key.len == key->len &&
            (!key->len || !memcmp(f->key.data, key->data, key->len))) {
            if (floe_dfw_shape_version(f->w) == floe_rows_shape_version(s->rows)) {
                f->used = ++s->clock;
                return f;
            }
            if (close_file(p, s, i, o, err) < 0) return NULL; /* old shape */
            break;
        }
    }
    if (s->nfiles >= TSINK_MAX_OPEN) {
        size_t lru = 0;
        for (size_t i = 1; i < s->nfiles; i++)
            if (s->files[i].used < s->files[lru].used) lru = i;
        if (close_file(p, s, lru, o, err) < 0) return NULL;
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
    char dir[1024], path[2400];
    if (floe_tout_data_dir(o, dir, sizeof dir) < 0) {
        floe_err_set(err, FLOE_EINVAL, "table %s.%s has no location", o->ns, o->name);
        return NULL;
    }
    floe_buf_t part = FLOE_BUF_INIT;
    if (o->spec && o->spec->nfields &&
        (floe_ice_spec_partition_path(o->spec, *values, &part, err) < 0 ||
         floe_buf_append_u8(&part, '/') < 0)) {
        floe_buf_free(&part);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%.*s%05d-%s-%05llu.parquet", dir, (int)part.len,
             part.data ? (const char *)part.data : "", (int)p->id, p->t->writer_id,
             (unsigned long long)++o->file_seq);
    floe_buf_free(&part);
    floe_dfw_opts_t fo = {.codec = FLOE_CODEC_ZSTD, .level = 1, .scratch = p->t->e->pq_scratch};
    floe_dfw_t *w = floe_dfw_open(floe_ice_catalog_io(p->t->e->cfg.catalog), path, s->rows,
                                  o->schema_json, &fo, err);
    if (!w) return NULL;
    floe_tsink_file_t *f = &s->files[s->nfiles++];
    memset(f, 0, sizeof *f);
    f->w = w;
    f->spec_id = spec_id;
    f->used = ++s->clock;
    f->values = *values;
    f->nvalues = nvalues;
    *values = NULL;
    if (floe_buf_append(&f->key, key->data, key->len) < 0) {
        floe_err_oom(err);
        return NULL;
    }
    return f;
}

/* Cut a row group in every open file of s; roll those at the target size. */
static int cut_row_groups(floe_tpart_t *p, floe_tsink_t *s, floe_tout_t *o, floe_err_t *err)
{
    for (size_t i = s->nfiles; i-- > 0;) {
        floe_tsink_file_t *f = &s->files[i];
        if (floe_dfw_flush(f->w, err) < 0) return -1;
        if (floe_dfw_bytes(f->w) >= p->t->cfg.target_file_bytes && close_file(p, s, i, o, err) < 0)
            return -1;
    }
    s->drained = 0;
    return 0;
}

/* Hand the buffered rows to the open files (one per partition tuple) and
 * empty the buffer; once table.flush.bytes of rows went there since the
 * last cut, or with cut, every open file gets a row group. */
static int flush_sink(floe_tpart_t *p, floe_tsink_t *s, floe_tout_t *o, bool cut, floe_err_t *err)
{
    size_t bytes = floe_rows_bytes(s->rows);
    if (floe_rows_count(s->rows)) {
        if (floe_tout_merge_schema(o, s, err) < 0) return -1;
        if (o == &p->t->main) floe_tout_resolve_spec(o, p->t->cfg.partition_by);
        int rc = 0;
        if (!o->spec || !o->spec->nfields) {
            floe_buf_t none = FLOE_BUF_INIT;
            floe_ice_value_t *nov = NULL;
            floe_tsink_file_t *f = file_for(p, s, o, &none, &nov, 0, err);
            rc = f ? floe_dfw_append(f->w, s->rows, err) : -1;
        } else {
            floe_tptuples_t gs = {0};
            rc = floe_tptuples_group(s->rows, o->spec, o->work, &gs, err);
            for (size_t g = 0; rc == 0 && g < gs.n; g++) {
                floe_tptuple_t *grp = &gs.g[g];
                floe_tsink_file_t *f =
                    file_for(p, s, o, &grp->key, &grp->values, grp->nvalues, err);
                if (!f) rc = -1;
                else
                    rc = floe_dfw_append_sel(f->w, s->rows, grp->rows, grp->nrows, err);
            }
            floe_tptuples_free(&gs);
        }
        if (rc < 0) return -1;
        p->rows_written += floe_rows_count(s->rows);
        floe_rows_clear(s->rows);
        s->drained += bytes;
    }
    if ((cut || s->drained >= p->t->cfg.flush_bytes) && cut_row_groups(p, s, o, err) < 0) return -1;
    return 0;
}

int floe_tpart_flush_due(floe_tpart_t *p, floe_err_t *err)
{
    floe_ttable_t *t = p->t;
    uint64_t drain =
        t->cfg.flush_bytes < TSINK_DRAIN_BYTES ? t->cfg.flush_bytes : TSINK_DRAIN_BYTES;
    if (floe_rows_bytes(p->main.rows) >= drain && flush_sink(p, &p->main, &t->main, false, err) < 0)
        return -1;
    if (floe_rows_bytes(p->dlq.rows) >= drain && flush_sink(p, &p->dlq, &t->dlq, false, err) < 0)
        return -1;
    return 0;
}

uint64_t floe_tpart_buffered(const floe_tpart_t *p)
{
    uint64_t b = floe_rows_bytes(p->main.rows);
    for (size_t i = 0; i < p->main.nfiles; i++) b += floe_dfw_buffered(p->main.files[i].w);
    return b;
}

int floe_tpart_seal(floe_tpart_t *p, floe_err_t *err)
{
    floe_ttable_t *t = p->t;
    if (flush_sink(p, &p->main, &t->main, true, err) < 0 ||
        close_all(p, &p->main, &t->main, err) < 0 ||
        flush_sink(p, &p->dlq, &t->dlq, true, err) < 0 || close_all(p, &p->dlq, &t->dlq, err) < 0)
        return -1;
    return 0;
}

/* ---- bad records --------------------------------------------------------- */

int floe_tpart_dlq_row(floe_tpart_t *p, int32_t partition, const floe_record_t *rec, int64_t offset,
                       int64_t ts_ms, floe_slice_t raw, const char *stage, const char *why)
{
    floe_rows_t *r = p->dlq.rows;
    floe_rnode_t *root = floe_rows_root(r);
    floe_rows_begin(r);
    int rc = floe_rows_put_int(r, floe_rows_child(root, "partition"), partition);
    rc |= floe_rows_put_long(r, floe_rows_child(root, "offset"), offset);
    rc |= floe_rows_put_long(r, floe_rows_child(root, "timestamp"), ts_ms * 1000);
    floe_rnode_t *key = floe_rows_child(root, "key"), *val = floe_rows_child(root, "value");
    floe_rnode_t *hdrs = floe_rows_child(root, "headers");
    if (rec && !rec->key_null) rc |= floe_rows_put_bytes(r, key, rec->key.ptr, rec->key.len);
    else
        rc |= floe_rows_put_null(r, key);
    if (rec ? !rec->value_null : raw.len > 0)
        rc |= floe_rows_put_bytes(r, val, rec ? rec->value.ptr : raw.ptr,
                                  rec ? rec->value.len : raw.len);
    else
        rc |= floe_rows_put_null(r, val);
    if (rec && rec->header_count > 0 && (size_t)rec->header_count <= rec->headers_raw.len) {
        size_t n = (size_t)rec->header_count, k = 0;
        floe_slice_t *hk = malloc(n * sizeof *hk), *hv = malloc(n * sizeof *hv);
        bool *hn = malloc(n * sizeof *hn);
        floe_header_iter_t hi;
        floe_header_iter_init(&hi, rec);
        floe_record_header_t h;
        while (hk && hv && hn && k < n && floe_header_iter_next(&hi, &h) == 1) {
            hk[k] = h.key;
            hv[k] = h.value;
            hn[k++] = h.value_null;
        }
        rc |= hk && hv && hn ? floe_rows_put_map(r, hdrs, hk, hv, hn, k) : -1;
        free(hk);
        free(hv);
        free(hn);
    } else {
        rc |= floe_rows_put_null(r, hdrs);
    }
    rc |= floe_rows_put_bytes(r, floe_rows_child(root, "stage"), stage, strlen(stage));
    rc |= floe_rows_put_bytes(r, floe_rows_child(root, "reason"), why, strlen(why));
    floe_err_t e;
    if (rc || floe_rows_end(r, &e) < 0) {
        floe_rows_rollback(r);
        return -1;
    }
    return 0;
}

/* A record (rec, or a whole undecodable batch when rec is NULL) that did
 * not convert.  Returns 0 to go on, 1 when the table pauses on it. */
static int bad_record(floe_tpart_t *p, const floe_record_t *rec, int64_t offset, int64_t ts_ms,
                      floe_slice_t raw, floe_conv_stage_t stage, const char *why)
{
    floe_ttable_t *t = p->t;
    switch (t->cfg.invalid_action) {
    case FLOE_INVALID_PAUSE:
        t->state = T_PAUSED;
        snprintf(t->reason, sizeof t->reason, "partition %d offset %lld: %s: %s", (int)p->id,
                 (long long)offset, floe_conv_stage_name(stage), why);
        FLOE_WARN("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
        return 1;
    case FLOE_INVALID_DROP:
        if (p->dropped++ % 1000 == 0)
            FLOE_WARN(
                "table %s.%s: dropped record at partition %d offset %lld (%s: %s); %llu dropped",
                t->main.ns, t->main.name, (int)p->id, (long long)offset,
                floe_conv_stage_name(stage), why, (unsigned long long)p->dropped);
        return 0;
    case FLOE_INVALID_DLQ: break;
    }
    if (t->dlq.committed && offset < t->dlq.committed[p->id]) return 0; /* already there */
    if (floe_tpart_dlq_row(p, p->id, rec, offset, ts_ms, raw, floe_conv_stage_name(stage), why) <
        0) {
        t->state = T_PAUSED;
        snprintf(t->reason, sizeof t->reason,
                 "partition %d offset %lld: cannot write the dead-letter row (out of memory)",
                 (int)p->id, (long long)offset);
        return 1;
    }
    if (p->dlq_records++ % 1000 == 0)
        FLOE_WARN("table %s.%s: record at partition %d offset %lld to %s (%s: %s); %llu so far",
                  t->main.ns, t->main.name, (int)p->id, (long long)offset, t->dlq.name,
                  floe_conv_stage_name(stage), why, (unsigned long long)p->dlq_records);
    return 0;
}

/* ---- the step ------------------------------------------------------------- */

/* Convert the records of one stored batch from p->next on.  Returns 1
 * when the table paused, 0 otherwise, -1 on an engine failure. */
static int one_batch(floe_tpart_t *p, const uint8_t *b, size_t len, const floe_batch_hdr_t *h,
                     int64_t *converted, floe_err_t *err)
{
    floe_ttable_t *t = p->t;
    int64_t last = h->base_offset + h->last_offset_delta;
    if (last < p->next) return 0;
    if (h->attributes & 0x20) { /* control batch: transaction markers */
        p->next = last + 1;
        return 0;
    }
    if (p->pending_ts_ms < 0 || h->base_timestamp < p->pending_ts_ms)
        p->pending_ts_ms = h->base_timestamp; /* freshness: the batch's first record */
    floe_slice_t records;
    floe_err_t e;
    if (floe_batch_records(b, len, h, &t->e->scratch, FLOE_BATCH_MAX_DECOMPRESSED, &records, &e) <
        0) {
        int rc = bad_record(p, NULL, h->base_offset, h->base_timestamp, floe_slice(b, len),
                            FLOE_STAGE_DECODE, e.msg);
        if (rc == 0) p->next = last + 1;
        return rc;
    }
    floe_record_iter_t it;
    floe_record_iter_init(&it, h, records);
    floe_record_t rec;
    int64_t main_from = t->main.committed ? t->main.committed[p->id] : -1;
    uint64_t shape = floe_rows_shape_version(p->main.rows);
    uint64_t drain =
        t->cfg.flush_bytes < TSINK_DRAIN_BYTES ? t->cfg.flush_bytes : TSINK_DRAIN_BYTES;
    size_t since = 0;
    int rc;
    while ((rc = floe_record_iter_next(&it, &rec, &e)) == 1) {
        if (rec.offset < p->next) continue;
        if (rec.offset >= main_from) {
            floe_conv_stage_t stage;
            if (floe_conv_record(p->conv, p->id, &rec, &stage, &e) == 0) {
                (*converted)++;
                p->records++;
                p->bytes += rec.value.len + rec.key.len;
            } else if (bad_record(p, &rec, rec.offset, rec.timestamp, rec.value, stage, e.msg)) {
                return 1;
            }
        }
        p->next = rec.offset + 1;
        /* a large batch drains on the way: the buffer stays about drain bytes */
        since += rec.value.len + rec.key.len;
        if (since >= drain / 4) {
            since = 0;
            if (floe_rows_bytes(p->main.rows) >= drain &&
                flush_sink(p, &p->main, &t->main, false, err) < 0)
                return -1;
        }
    }
    if (rc < 0) { /* the rest of the batch does not decode */
        if (bad_record(p, NULL, p->next, h->base_timestamp, floe_slice(b, len), FLOE_STAGE_DECODE,
                       e.msg))
            return 1;
        p->next = last + 1;
    }
    if (floe_rows_shape_version(p->main.rows) != shape &&
        floe_tout_merge_schema(&t->main, &p->main, err) < 0)
        return -1;
    return 0;
}

static bool is_source(const floe_ice_spec_t *sp, int32_t id)
{
    for (size_t i = 0; sp && i < sp->nfields; i++)
        if (sp->fields[i].source_id == id) return true;
    return false;
}

/* Pin the buffer's nodes that a partition spec of the table (or the one
 * new files get) takes values from: such a long column cannot become a
 * new double field (the specs name its id), so fractions there go to the
 * dead-letter table. */
static void pin_sources(const floe_tout_t *o, floe_rnode_t *n)
{
    const floe_ice_metadata_t *md = o->ice ? floe_ice_table_metadata(o->ice) : NULL;
    for (size_t i = 0; i < n->nkids; i++) {
        floe_rnode_t *k = n->kids[i];
        if (k->field_id > 0 && !k->pinned) {
            bool src = is_source(o->spec, k->field_id);
            for (size_t j = 0; md && !src && j < md->nspecs; j++)
                src = is_source(md->specs[j], k->field_id);
            k->pinned = src;
        }
        pin_sources(o, k);
    }
}

int64_t floe_tpart_step(floe_tpart_t *p, floe_err_t *err)
{
    floe_ttable_t *t = p->t;
    floe_engine_t *e = t->e;
    if (t->state != T_RUNNING) return 0;
    /* fields other partitions added */
    if (p->main.seeded != t->main.schema_version) {
        if (floe_tschema_seed(p->main.rows, t->main.work, err) < 0) return -1;
        p->main.seeded = t->main.schema_version;
    }
    pin_sources(&t->main, floe_rows_root(p->main.rows));
    floe_buf_reset(&e->readbuf);
    int64_t start, end;
    floe_err_t re;
    if (e->src->ops->read(e->src, t->topic, p->id, p->next, e->cfg.read_bytes, &e->readbuf, &start,
                          &end, &re) < 0) {
        if (re.code == FLOE_ERANGE) {
            FLOE_WARN("table %s.%s: partition %d records [%lld, %lld) were deleted by retention "
                      "before reaching the table",
                      t->main.ns, t->main.name, (int)p->id, (long long)p->next, (long long)start);
            p->next = start;
            return 0;
        }
        if (re.code == FLOE_ENOENT) return 0; /* topic going away: discovery drops it */
        *err = re;
        return -1;
    }
    p->log_start = start;
    p->log_end = end;
    int64_t committed = t->main.committed ? t->main.committed[p->id] : -1;
    if (end > (committed >= 0 ? committed : start) && p->behind_since_ms < 0)
        p->behind_since_ms = floe_wall_ms();
    int64_t converted = 0;
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, e->readbuf.data, e->readbuf.len);
    const uint8_t *b;
    size_t len;
    floe_batch_hdr_t h;
    floe_err_t be;
    int rc;
    uint64_t drain =
        t->cfg.flush_bytes < TSINK_DRAIN_BYTES ? t->cfg.flush_bytes : TSINK_DRAIN_BYTES;
    while ((rc = floe_batch_iter_next(&it, &b, &len, &h, &be)) == 1) {
        int r = one_batch(p, b, len, &h, &converted, err);
        if (r < 0) return -1;
        if (r > 0) break; /* paused */
        /* drain between batches: the buffer stays about drain bytes */
        if (floe_rows_bytes(p->main.rows) >= drain &&
            flush_sink(p, &p->main, &t->main, false, err) < 0)
            return -1;
    }
    if (rc < 0 && t->state == T_RUNNING) {
        /* a stored batch fails its checks (the log validated it on append:
         * the disk changed it).  Keep its bytes in the DLQ and skip exactly
         * that batch when its header still says which offsets it held. */
        const uint8_t *bad = it.p + it.off;
        size_t nbad = it.n - it.off;
        floe_batch_hdr_t bh;
        floe_err_t he;
        if (floe_batch_decode_hdr(bad, nbad, &bh, &he) < 0 ||
            bh.base_offset + bh.last_offset_delta < p->next) {
            t->state = T_PAUSED;
            snprintf(t->reason, sizeof t->reason,
                     "partition %d offset %lld: stored batch unreadable: %s", (int)p->id,
                     (long long)p->next, be.msg);
            FLOE_ERROR("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
        } else {
            size_t blen =
                (size_t)bh.batch_length + 12 <= nbad ? (size_t)bh.batch_length + 12 : nbad;
            FLOE_ERROR("table %s.%s: partition %d: stored batch at offsets [%lld, %lld] fails its "
                       "checks: %s",
                       t->main.ns, t->main.name, (int)p->id, (long long)bh.base_offset,
                       (long long)(bh.base_offset + bh.last_offset_delta), be.msg);
            if (bad_record(p, NULL, bh.base_offset, bh.base_timestamp, floe_slice(bad, blen),
                           FLOE_STAGE_DECODE, be.msg) == 0)
                p->next = bh.base_offset + bh.last_offset_delta + 1;
        }
    }
    if (floe_tpart_flush_due(p, err) < 0) return -1;
    return converted;
}
