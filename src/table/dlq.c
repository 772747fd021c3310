/* The dead-letter table's layout: its shape, its rows, reading them back
 * (dlq.h). */
#include "table/dlq.h"

#include <stdlib.h>
#include <string.h>

/* The columns, in the order of the shape (headers is a map). */
enum { C_PART, C_OFF, C_TS, C_KEY, C_VAL, C_STAGE, C_REASON, C_HKEY, C_HVAL, NCOLS };

static const char *const col_names[NCOLS] = {"partition", "offset",      "timestamp",
                                             "key",       "value",       "stage",
                                             "reason",    "headers.key", "headers.value"};

int floe_tdlq_shape(floe_rows_t *r, floe_err_t *err)
{
    floe_rnode_t *root = floe_rows_root(r);
    static const struct {
        floe_tkind_t kind;
        bool required;
    } f[C_HKEY] = {[C_PART] = {FLOE_TK_INT, true},       [C_OFF] = {FLOE_TK_LONG, true},
                   [C_TS] = {FLOE_TK_TIMESTAMPTZ, true}, [C_KEY] = {FLOE_TK_BINARY, false},
                   [C_VAL] = {FLOE_TK_BINARY, false},    [C_STAGE] = {FLOE_TK_STRING, true},
                   [C_REASON] = {FLOE_TK_STRING, true}};
    for (int i = 0; i < C_HKEY; i++) {
        floe_rnode_t *n = floe_rows_add_field(r, root, col_names[i], f[i].kind, f[i].required, err);
        if (!n) return -1;
        floe_rows_mark_sys(n);
    }
    floe_rnode_t *h =
        floe_rows_add_map(r, root, "headers", FLOE_TK_BINARY, FLOE_TK_BINARY, false, err);
    if (!h) return -1;
    floe_rows_mark_sys(h);
    return 0;
}

/* The headers of m as a map (null when there are none). */
static int put_headers(floe_rows_t *r, floe_rnode_t *hdrs, const floe_theaders_t *h)
{
    size_t n = h->count;
    if (!n || (!h->list && n > h->raw.len)) return floe_rows_put_null(r, hdrs);
    floe_slice_t *hk = malloc(n * sizeof *hk), *hv = malloc(n * sizeof *hv);
    bool *hn = malloc(n * sizeof *hn);
    size_t k = 0;
    floe_theaders_iter_t it;
    floe_theaders_iter_init(&it, h);
    floe_record_header_t one;
    while (hk && hv && hn && k < n && floe_theaders_iter_next(&it, &one) == 1) {
        hk[k] = one.key;
        hv[k] = one.value;
        hn[k++] = one.value_null;
    }
    int rc = hk && hv && hn ? floe_rows_put_map(r, hdrs, hk, hv, hn, k) : -1;
    free(hk);
    free(hv);
    free(hn);
    return rc;
}

int floe_tdlq_row(floe_rows_t *r, int32_t partition, const floe_tmsg_t *m, floe_conv_stage_t stage,
                  const char *why, floe_err_t *err)
{
    floe_rnode_t *root = floe_rows_root(r);
    floe_rows_begin(r);
    int rc = floe_rows_put_int(r, floe_rows_child(root, "partition"), partition);
    rc |= floe_rows_put_long(r, floe_rows_child(root, "offset"), m->offset);
    rc |= floe_rows_put_long(r, floe_rows_child(root, "timestamp"), m->timestamp * 1000);
    floe_rnode_t *key = floe_rows_child(root, "key"), *val = floe_rows_child(root, "value");
    rc |= m->key_null ? floe_rows_put_null(r, key)
                      : floe_rows_put_bytes(r, key, m->key.ptr, m->key.len);
    rc |= m->value_null ? floe_rows_put_null(r, val)
                        : floe_rows_put_bytes(r, val, m->value.ptr, m->value.len);
    rc |= put_headers(r, floe_rows_child(root, "headers"), &m->headers);
    const char *sn = floe_conv_stage_name(stage);
    rc |= floe_rows_put_bytes(r, floe_rows_child(root, "stage"), sn, strlen(sn));
    rc |= floe_rows_put_bytes(r, floe_rows_child(root, "reason"), why, strlen(why));
    if (rc) {
        floe_rows_rollback(r);
        return floe_err_oom(err);
    }
    if (floe_rows_end(r, err) < 0) {
        floe_rows_rollback(r);
        return -1;
    }
    return 0;
}

/* ---- reading a DLQ file ----------------------------------------------------- */

static int corrupt(floe_err_t *err, const char *path, const char *what)
{
    return floe_err_set(err, FLOE_ECORRUPT, "dead-letter file %s: %s", path, what);
}

/* Parquet column of each DLQ field, found by field id. */
static int dlq_columns(const floe_ice_schema_t *schema, const floe_pq_schema_t *ps,
                       const char *path, int cols[NCOLS], floe_err_t *err)
{
    for (int i = 0; i < NCOLS; i++) {
        const floe_ice_field_t *f = floe_ice_schema_find_name(schema, col_names[i]);
        int node = f ? floe_pq_schema_find_field(ps, f->id) : -1;
        cols[i] = node >= 0 ? floe_pq_schema_column_of(ps, node) : -1;
        if (cols[i] < 0) return corrupt(err, path, col_names[i]);
    }
    return 0;
}

/* Value j of a byte-array column; the caller checked bounds. */
static floe_slice_t col_bytes(const floe_pq_column_t *c, size_t j)
{
    return ((const floe_slice_t *)c->values)[j];
}

/* A walk over one row group's columns. */
typedef struct walk {
    const char *path;
    floe_pq_column_t c[NCOLS];
    int16_t maxdef[NCOLS];
    size_t kv, vv, hl, hk, hv; /* next key/value value, header level/key/value */
    floe_record_header_t *hdrs;
    size_t caphdrs;
} walk_t;

static int push_header(walk_t *w, size_t n, floe_record_header_t h, floe_err_t *err)
{
    if (n == w->caphdrs) {
        size_t cap = w->caphdrs ? w->caphdrs * 2 : 16;
        floe_record_header_t *v = realloc(w->hdrs, cap * sizeof *v);
        if (!v) return floe_err_oom(err);
        w->hdrs = v;
        w->caphdrs = cap;
    }
    w->hdrs[n] = h;
    return 0;
}

/* The headers of the current row: the map's levels from a rep-0 one up to
 * the next, into w->hdrs (*n of them). */
static int decode_headers(walk_t *w, size_t *n, floe_err_t *err)
{
    const floe_pq_column_t *ck = &w->c[C_HKEY], *cv = &w->c[C_HVAL];
    *n = 0;
    if (w->hl >= ck->n_levels || ck->rep[w->hl] != 0)
        return corrupt(err, w->path, "headers levels out of step");
    do {
        if (ck->def[w->hl] == w->maxdef[C_HKEY]) {
            if (w->hk >= ck->n_values) return corrupt(err, w->path, "header keys short");
            floe_record_header_t h = {.key = col_bytes(ck, w->hk++)};
            h.value_null = cv->def[w->hl] < w->maxdef[C_HVAL];
            if (!h.value_null) {
                if (w->hv >= cv->n_values) return corrupt(err, w->path, "header values short");
                h.value = col_bytes(cv, w->hv++);
            }
            if (push_header(w, (*n)++, h, err) < 0) return -1;
        }
        w->hl++;
    } while (w->hl < ck->n_levels && ck->rep[w->hl] != 0);
    return 0;
}

/* Row r of the row group into *d. */
static int decode_row(walk_t *w, size_t r, floe_tdlq_entry_t *d, floe_err_t *err)
{
    const floe_pq_column_t *c = w->c;
    memset(d, 0, sizeof *d);
    d->partition = ((const int32_t *)c[C_PART].values)[r];
    d->stage = floe_conv_stage_parse(col_bytes(&c[C_STAGE], r));
    if (!d->stage) return corrupt(err, w->path, "unknown stage");
    d->reason = col_bytes(&c[C_REASON], r);
    floe_tmsg_t *m = &d->msg;
    m->kind = FLOE_TMSG_RECORD;
    m->offset = m->last = ((const int64_t *)c[C_OFF].values)[r];
    m->timestamp = ((const int64_t *)c[C_TS].values)[r] / 1000;
    m->key_null = c[C_KEY].def[r] < w->maxdef[C_KEY];
    if (!m->key_null) {
        if (w->kv >= c[C_KEY].n_values) return corrupt(err, w->path, "key values short");
        m->key = col_bytes(&c[C_KEY], w->kv++);
    }
    m->value_null = c[C_VAL].def[r] < w->maxdef[C_VAL];
    if (!m->value_null) {
        if (w->vv >= c[C_VAL].n_values) return corrupt(err, w->path, "value values short");
        m->value = col_bytes(&c[C_VAL], w->vv++);
    }
    if (decode_headers(w, &m->headers.count, err) < 0) return -1;
    m->headers.list = w->hdrs;
    return 0;
}

/* Required columns hold one value per row, optional ones one level per
 * row, the headers map one level per entry. */
static int check_lengths(const walk_t *w, size_t nrows, floe_err_t *err)
{
    for (int i = 0; i < C_HKEY; i++) {
        bool optional = i == C_KEY || i == C_VAL;
        if ((optional ? w->c[i].n_levels : w->c[i].n_values) != nrows || (optional && !w->c[i].def))
            return corrupt(err, w->path, "column lengths disagree");
    }
    const floe_pq_column_t *ck = &w->c[C_HKEY], *cv = &w->c[C_HVAL];
    if (ck->n_levels != cv->n_levels || !ck->def || !ck->rep || !cv->def)
        return corrupt(err, w->path, "headers columns disagree");
    return 0;
}

int floe_tdlq_each(floe_pq_reader_t *rd, const floe_ice_schema_t *schema, const char *path,
                   floe_tdlq_fn fn, void *ctx, floe_err_t *err)
{
    const floe_pq_schema_t *ps = floe_pq_reader_schema(rd);
    int cols[NCOLS];
    if (dlq_columns(schema, ps, path, cols, err) < 0) return -1;
    walk_t w = {.path = path};
    for (int i = 0; i < NCOLS; i++) w.maxdef[i] = (int16_t)floe_pq_schema_max_def(ps, cols[i]);
    size_t index = 0;
    int rc = 0;
    for (int rg = 0; rc == 0 && rg < floe_pq_reader_num_row_groups(rd); rg++) {
        int ok = 0;
        for (; ok < NCOLS; ok++)
            if (floe_pq_read_column(rd, rg, cols[ok], &w.c[ok], err) < 0) break;
        size_t nrows = (size_t)floe_pq_reader_row_group_rows(rd, rg);
        rc = ok < NCOLS ? -1 : check_lengths(&w, nrows, err);
        w.kv = w.vv = w.hl = w.hk = w.hv = 0;
        for (size_t r = 0; rc == 0 && r < nrows; r++) {
            floe_tdlq_entry_t d;
            rc = decode_row(&w, r, &d, err);
            if (rc == 0) rc = fn(ctx, &d, index++, err);
        }
        for (int i = 0; i < ok; i++) floe_pq_column_free(&w.c[i]);
    }
    free(w.hdrs);
    return rc;
}
