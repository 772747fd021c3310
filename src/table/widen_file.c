/* Rewriting a data file with widened columns (widen_file.h): a
 * Parquet-level transcode, one row group at a time.  Every column chunk is
 * decoded and written again as it was, except the widened leaves, whose
 * int64 values become doubles under the new field id. */
#include "table/widen_file.h"

#include <stdlib.h>
#include <string.h>

#include "format/parquet.h"
#include "iceberg/metadata.h"
#include "iceberg/read.h"

int32_t floe_twiden_find(const floe_twiden_t *w, size_t n, int32_t from)
{
    for (size_t i = 0; i < n; i++)
        if (w[i].from == from) return w[i].to;
    return 0;
}

/* Replace field `from` (anywhere in t) by an optional double field `to`. */
static bool replace_field(floe_ice_type_t *t, int32_t from, int32_t to)
{
    for (size_t i = 0; i < t->nfields; i++) {
        floe_ice_field_t *f = &t->fields[i];
        if (f->id == from) {
            floe_ice_type_t *d = floe_ice_type_prim(FLOE_ICE_DOUBLE);
            if (!d) return false;
            floe_ice_type_free(f->type);
            f->type = d;
            f->id = to;
            f->required = false;
            return true;
        }
        if (replace_field(f->type, from, to)) return true;
    }
    return false;
}

/* The file's own `iceberg.schema` with the widened fields replaced, or
 * (none or unreadable) a copy of fallback.  Caller frees; NULL on ENOMEM. */
static char *file_schema_json(const char *kv, const floe_twiden_t *w, size_t n,
                              const char *fallback)
{
    floe_err_t e;
    floe_ice_schema_t *s = kv ? floe_ice_schema_from_json(kv, strlen(kv), &e) : NULL;
    if (!s) return strdup(fallback);
    for (size_t i = 0; i < n; i++) replace_field(s->root, w[i].from, w[i].to);
    char *json = floe_ice_schema_to_json(s, &e);
    floe_ice_schema_free(s);
    return json;
}

static int sink(void *ctx, const void *p, size_t n, floe_err_t *err)
{
    return floe_outfile_write(ctx, p, n, err);
}

/* Metrics of one widened leaf, over every row group. */
typedef struct wstat {
    int col;
    int32_t id;
    bool bounds;
    int64_t values, nulls, nans;
    bool has;
    double min, max;
} wstat_t;

static void put_double(floe_buf_t *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++) floe_buf_append_u8(b, (uint8_t)(u >> (8 * i)));
}

/* Set the metrics of out for the widened leaves: the old ids' entries go,
 * the new ids' entries hold what was counted.  Other columns keep the
 * metrics the old file had (their values are copied unchanged). */
static int widened_metrics(floe_ice_data_file_t *out, const floe_twiden_t *w, size_t nw,
                           const wstat_t *st, size_t nst, floe_err_t *err)
{
    size_t k = 0;
    for (size_t i = 0; i < out->nmetrics; i++) {
        floe_ice_col_metrics_t *m = &out->metrics[i];
        if (floe_twiden_find(w, nw, m->id)) {
            floe_buf_free(&m->lower);
            floe_buf_free(&m->upper);
            continue;
        }
        out->metrics[k++] = *m;
    }
    out->nmetrics = k;
    for (size_t i = 0; i < nst; i++) {
        floe_ice_col_metrics_t *m = floe_ice_data_file_metrics(out, st[i].id);
        if (!m) return floe_err_oom(err);
        m->values = st[i].values;
        m->nulls = st[i].nulls;
        m->nans = st[i].nans;
        if (st[i].bounds && st[i].has) {
            put_double(&m->lower, st[i].min);
            put_double(&m->upper, st[i].max);
            m->has_lower = m->has_upper = true;
        }
    }
    return 0;
}

int floe_twiden_file(floe_fileio_t *io, const floe_ice_data_file_t *in, const char *out_path,
                     const floe_twiden_t *w, size_t nw, const char *fallback_schema,
                     floe_ice_data_file_t *out, floe_err_t *err)
{
    floe_buf_t data = FLOE_BUF_INIT;
    floe_pq_reader_t *r = NULL;
    floe_pq_schema_t *ns = NULL;
    floe_pq_writer_t *pw = NULL;
    floe_outfile_t *of = NULL;
    int *map = NULL;
    wstat_t *st = NULL;
    size_t nst = 0;
    char *json = NULL;
    int rc = -1;
    floe_ice_data_file_init(out);
    if (!(r = floe_ice_parquet_open(io, in->path, &data, err))) goto out;
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    int nn = floe_pq_schema_num_nodes(s), ncols = floe_pq_schema_num_columns(s);
    if (!(ns = floe_pq_schema_new()) || !(map = calloc((size_t)nn + 1, sizeof *map)) ||
        !(st = calloc((size_t)ncols + 1, sizeof *st))) {
        floe_err_oom(err);
        goto out;
    }
    /* the same tree; widened leaves become optional doubles, new ids */
    for (int i = 0; i < nn; i++) {
        floe_pq_node_t n = *floe_pq_schema_node(s, i);
        if (n.parent >= i) {
            floe_err_set(err, FLOE_ECORRUPT, "%s: schema node %d before its parent", in->path, i);
            goto out;
        }
        if (n.parent >= 0) n.parent = map[n.parent];
        int32_t to =
            n.phys == FLOE_PQ_INT64 && n.field_id > 0 ? floe_twiden_find(w, nw, n.field_id) : 0;
        if (to) {
            int col = floe_pq_schema_column_of(s, i);
            st[nst++] =
                (wstat_t){.col = col, .id = to, .bounds = floe_pq_schema_max_rep(s, col) == 0};
            n.phys = FLOE_PQ_DOUBLE;
            n.logical = FLOE_PQ_LT_NONE;
            n.field_id = to;
        }
        if ((map[i] = floe_pq_schema_add(ns, &n, err)) < 0) goto out;
    }
    if (!nst) { /* the file holds none of the widened fields */
        rc = 0;
        goto out;
    }
    if (!(json =
              file_schema_json(floe_pq_reader_kv(r, "iceberg.schema"), w, nw, fallback_schema))) {
        floe_err_oom(err);
        goto out;
    }
    floe_pq_write_opts_t po = floe_pq_write_opts_default(); /* zstd, as the engine writes */
    po.row_group_size = SIZE_MAX / 4;                       /* one per input row group */
    po.delta_byte_array = false;
    if (floe_fileio_create(io, out_path, FLOE_IO_EXCL, &of, err) < 0) goto out;
    if (!(pw = floe_pq_writer_new(ns, &po, sink, of, err)) ||
        floe_pq_writer_set_kv(pw, "iceberg.schema", json, err) < 0)
        goto out;
    int nrg = floe_pq_reader_num_row_groups(r);
    for (int g = 0; g < nrg; g++) {
        for (int c = 0; c < ncols; c++) {
            floe_pq_column_t col;
            if (floe_pq_read_column(r, g, c, &col, err) < 0) goto out;
            wstat_t *ws = NULL;
            for (size_t k = 0; k < nst; k++)
                if (st[k].col == c) ws = &st[k];
            int maxdef = floe_pq_schema_max_def(s, c);
            if (ws) {
                ws->values += (int64_t)col.n_levels;
                for (size_t k = 0; col.def && k < col.n_levels; k++)
                    if (col.def[k] < maxdef) ws->nulls++;
                for (size_t k = 0; k < col.n_values; k++) {
                    int64_t l;
                    memcpy(&l, (uint8_t *)col.values + 8 * k, 8);
                    double d = (double)l;
                    memcpy((uint8_t *)col.values + 8 * k, &d, 8);
                    if (!ws->has) ws->min = ws->max = d;
                    ws->has = true;
                    if (d < ws->min) ws->min = d;
                    if (d > ws->max) ws->max = d;
                }
            }
            int wr = floe_pq_write_column(pw, c, col.n_levels, maxdef ? col.def : NULL,
                                          floe_pq_schema_max_rep(s, c) ? col.rep : NULL, col.values,
                                          col.n_values, err);
            floe_pq_column_free(&col);
            if (wr < 0) goto out;
        }
        if (floe_pq_writer_rows(pw, (size_t)floe_pq_reader_row_group_rows(r, g), err) < 0 ||
            floe_pq_writer_flush(pw, err) < 0)
            goto out;
    }
    if (floe_pq_writer_close(pw, err) < 0) goto out;
    uint64_t size = of->written;
    floe_outfile_t *done = of;
    of = NULL;
    if (floe_outfile_close(done, err) < 0) goto out;
    /* published: describe it (on failure below, the caller's cleanup of
     * out_path applies) */
    if (floe_ice_data_file_copy(out, in) < 0) {
        floe_ice_data_file_init(out);
        floe_err_oom(err);
        goto out;
    }
    free(out->path);
    out->path = strdup(out_path);
    free(out->split_offsets);
    out->split_offsets = NULL;
    out->nsplit_offsets = 0;
    out->file_size = (int64_t)size;
    out->record_count = floe_pq_reader_num_rows(r);
    if (!out->path) {
        floe_err_oom(err);
        goto out;
    }
    if (widened_metrics(out, w, nw, st, nst, err) < 0) goto out;
    rc = 1;
out:
    if (rc < 0) {
        floe_ice_data_file_clear(out);
        if (!of) { /* published or never created: remove what may be there */
            floe_err_t e;
            if (pw) floe_fileio_remove(io, out_path, &e);
        }
    }
    if (of) floe_outfile_abort(of);
    floe_pq_writer_free(pw);
    floe_pq_schema_free(ns);
    floe_pq_reader_free(r);
    floe_buf_free(&data);
    free(map);
    free(st);
    free(json);
    return rc;
}
