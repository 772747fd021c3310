/* The deletes that apply to one data file (read.h): row positions from
 * position delete files, and the keys of equality delete files.
 *
 * An equality key is the values of the file's equality fields, each
 * rendered as the JSON text the reader prints (typed by the table schema,
 * so a value stored in a promoted type renders the same) and ended by a
 * NUL byte, which JSON text never holds; a null renders as "null", so a
 * null in a delete row matches exactly the rows whose value is null (the
 * spec's `col IS NULL`).  Files with the same equality fields share one
 * sorted set of keys. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/read_int.h"

/* Iceberg's reserved field ids of position delete files. */
#define ICE_DELETE_FILE_PATH 2147483546
#define ICE_DELETE_POS 2147483545

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

floe_ice_deletes_t *floe_ice_deletes_new(floe_err_t *err)
{
    floe_ice_deletes_t *d = calloc(1, sizeof *d);
    if (!d) floe_err_oom(err);
    return d;
}

void floe_ice_deletes_free(floe_ice_deletes_t *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->neq; i++) {
        free(d->eq[i].ids);
        floe_buf_free(&d->eq[i].bytes);
        free(d->eq[i].keys);
    }
    free(d->eq);
    free(d->pos);
    free(d);
}

/* ---- positions ---- */

static int add_position(floe_ice_deletes_t *d, int64_t pos, floe_err_t *err)
{
    if (d->npos == d->cappos) {
        size_t nc = d->cappos ? d->cappos * 2 : 64;
        int64_t *np = realloc(d->pos, nc * sizeof *np);
        if (!np) return floe_err_oom(err);
        d->pos = np;
        d->cappos = nc;
    }
    d->pos[d->npos++] = pos;
    return 0;
}

int floe_ice_deletes_add_positions(floe_ice_deletes_t *d, const int64_t *pos, size_t n,
                                   floe_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (add_position(d, pos[i], err)) return -1;
    if (d->npos) qsort(d->pos, d->npos, sizeof *d->pos, cmp_i64);
    return 0;
}

/* The positions that position delete file r (named what) deletes from data
 * file `path`, added to d unsorted. */
static int load_positions(floe_ice_deletes_t *d, floe_pq_reader_t *r, const char *what,
                          const char *path, floe_err_t *err)
{
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    int pn = floe_pq_schema_find_field(s, ICE_DELETE_FILE_PATH);
    int on = floe_pq_schema_find_field(s, ICE_DELETE_POS);
    int pc = pn < 0 ? -1 : floe_pq_schema_column_of(s, pn),
        oc = on < 0 ? -1 : floe_pq_schema_column_of(s, on);
    if (pc < 0 || oc < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "delete file %s lacks file_path/pos", what);
    size_t plen = strlen(path);
    int rc = 0;
    for (int rg = 0; !rc && rg < floe_pq_reader_num_row_groups(r); rg++) {
        floe_pq_column_t cp, co;
        if (floe_pq_read_column(r, rg, pc, &cp, err)) return -1;
        if (floe_pq_read_column(r, rg, oc, &co, err)) {
            floe_pq_column_free(&cp);
            return -1;
        }
        if (cp.phys != FLOE_PQ_BYTE_ARRAY || co.phys != FLOE_PQ_INT64 || cp.n_values != co.n_values)
            rc =
                floe_err_set(err, FLOE_ECORRUPT, "delete file %s: bad file_path/pos columns", what);
        for (size_t i = 0; !rc && i < cp.n_values; i++) {
            const floe_slice_t *sp = &((const floe_slice_t *)cp.values)[i];
            if (sp->len == plen && !memcmp(sp->ptr, path, plen))
                rc = add_position(d, ((const int64_t *)co.values)[i], err);
        }
        floe_pq_column_free(&cp);
        floe_pq_column_free(&co);
    }
    return rc;
}

bool floe_ice_position_delete_may_name(const floe_ice_data_file_t *df, const char *path)
{
    if (df->content != FLOE_ICE_CONTENT_POSITION_DELETES) return false;
    size_t n = strlen(path);
    for (size_t i = 0; i < df->nmetrics; i++) {
        const floe_ice_col_metrics_t *m = &df->metrics[i];
        if (m->id != ICE_DELETE_FILE_PATH) continue;
        if (m->has_lower) {
            size_t k = m->lower.len < n ? m->lower.len : n;
            int c = memcmp(path, m->lower.data, k);
            if (c < 0 || (c == 0 && n < m->lower.len)) return false;
        }
        if (m->has_upper) {
            size_t k = m->upper.len < n ? m->upper.len : n;
            int c = memcmp(path, m->upper.data, k);
            /* an upper bound may be truncated: a longer path with its
             * prefix may still lie below the true bound */
            if (c > 0) return false;
        }
    }
    return true;
}

void floe_ice_pos_targets_clear(floe_ice_pos_targets_t *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->paths[i]);
    free(t->paths);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* Count one more row naming path[0..len) (runs of one path come in a row:
 * the spec sorts position deletes by path). */
static int target_add(floe_ice_pos_targets_t *t, const uint8_t *path, size_t len, floe_err_t *err)
{
    for (size_t i = t->n; i-- > 0;)
        if (strlen(t->paths[i]) == len && !memcmp(t->paths[i], path, len)) {
            t->rows[i]++;
            return 0;
        }
    char **np = realloc(t->paths, (t->n + 1) * sizeof *np);
    if (np) t->paths = np;
    int64_t *nr = np ? realloc(t->rows, (t->n + 1) * sizeof *nr) : NULL;
    if (nr) t->rows = nr;
    char *p = nr ? strndup((const char *)path, len) : NULL;
    if (!p) return floe_err_oom(err);
    t->paths[t->n] = p;
    t->rows[t->n++] = 1;
    return 0;
}

/* The targets of the position delete file r reads (named what). */
static int read_targets(floe_pq_reader_t *r, const char *what, floe_ice_pos_targets_t *out,
                        floe_err_t *err)
{
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    int pn = floe_pq_schema_find_field(s, ICE_DELETE_FILE_PATH);
    int pc = pn < 0 ? -1 : floe_pq_schema_column_of(s, pn);
    int rc = pc < 0 ? floe_err_set(err, FLOE_ECORRUPT, "delete file %s lacks file_path", what) : 0;
    for (int rg = 0; !rc && rg < floe_pq_reader_num_row_groups(r); rg++) {
        floe_pq_column_t cp;
        if (floe_pq_read_column(r, rg, pc, &cp, err)) {
            rc = -1;
            break;
        }
        if (cp.phys != FLOE_PQ_BYTE_ARRAY)
            rc = floe_err_set(err, FLOE_ECORRUPT, "delete file %s: bad file_path column", what);
        for (size_t i = 0; !rc && i < cp.n_values; i++) {
            const floe_slice_t *sp = &((const floe_slice_t *)cp.values)[i];
            rc = target_add(out, sp->ptr, sp->len, err);
        }
        floe_pq_column_free(&cp);
    }
    if (rc) floe_ice_pos_targets_clear(out);
    return rc;
}

int floe_ice_position_delete_targets_parse(const uint8_t *data, size_t len, const char *what,
                                           floe_ice_pos_targets_t *out, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    floe_pq_reader_t *r = floe_pq_reader_open(data, len, err);
    if (!r) {
        floe_err_wrap(err, "%s", what);
        return -1;
    }
    int rc = read_targets(r, what, out, err);
    floe_pq_reader_free(r);
    return rc;
}

int floe_ice_position_delete_targets(floe_fileio_t *io, const floe_ice_data_file_t *df,
                                     floe_ice_pos_targets_t *out, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    const char *one;
    size_t len;
    if (floe_ice_position_delete_single(df, &one, &len)) {
        /* equal bounds: every row names that file */
        int rc = target_add(out, (const uint8_t *)one, len, err);
        if (rc == 0) out->rows[0] = df->record_count > 0 ? df->record_count : 1;
        return rc;
    }
    if (!floe_ice_is_parquet(df))
        return floe_err_set(err, FLOE_EUNSUPPORTED, "delete file %s is %s, not Parquet", df->path,
                            df->format);
    floe_buf_t data = FLOE_BUF_INIT;
    floe_pq_reader_t *r = floe_ice_parquet_open(io, df->path, &data, err);
    int rc = r ? read_targets(r, df->path, out, err) : -1;
    floe_pq_reader_free(r);
    floe_buf_free(&data);
    return rc;
}

bool floe_ice_position_delete_single(const floe_ice_data_file_t *df, const char **path, size_t *len)
{
    for (size_t i = 0; df->content == FLOE_ICE_CONTENT_POSITION_DELETES && i < df->nmetrics; i++) {
        const floe_ice_col_metrics_t *m = &df->metrics[i];
        if (m->id != ICE_DELETE_FILE_PATH || !m->has_lower || !m->has_upper ||
            m->lower.len != m->upper.len || memcmp(m->lower.data, m->upper.data, m->lower.len))
            continue;
        *path = (const char *)m->lower.data;
        *len = m->lower.len;
        return true;
    }
    return false;
}

int64_t floe_ice_pos_targets_rows(const floe_ice_pos_targets_t *t, const char *path)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->paths[i], path)) return t->rows[i];
    return 0;
}

/* ---- equality keys ---- */

int floe_ice_key_col_bind(floe_ice_key_col_t *k, const floe_pq_schema_t *ps, int32_t id,
                          const floe_ice_schema_t *schema, const char *what, floe_err_t *err)
{
    memset(k, 0, sizeof *k);
    k->id = id;
    k->col = -1;
    const floe_ice_field_t *f = schema ? floe_ice_schema_find(schema, id) : NULL;
    k->type = f ? f->type : NULL;
    if (k->type && (k->type->kind == FLOE_ICE_STRUCT || k->type->kind == FLOE_ICE_LIST ||
                    k->type->kind == FLOE_ICE_MAP))
        return floe_err_set(err, FLOE_EUNSUPPORTED,
                            "equality field %d of %s is a struct, list or map", (int)id, what);
    if (k->type && (k->type->kind == FLOE_ICE_FLOAT || k->type->kind == FLOE_ICE_DOUBLE))
        return floe_err_set(err, FLOE_ECORRUPT,
                            "equality field %d of %s is a float or double, which Iceberg "
                            "does not allow",
                            (int)id, what);
    int node = floe_pq_schema_find_field(ps, id);
    if (node < 0) return 0; /* added to the table after this file: null */
    k->col = floe_pq_schema_column_of(ps, node);
    if (k->col < 0)
        return floe_err_set(err, FLOE_EUNSUPPORTED,
                            "equality field %d of %s is a struct, list or map", (int)id, what);
    if (floe_pq_schema_max_rep(ps, k->col) > 0)
        return floe_err_set(err, FLOE_EUNSUPPORTED,
                            "equality field %d of %s sits inside a list or map", (int)id, what);
    k->node = floe_pq_schema_node(ps, node);
    if (k->node->phys == FLOE_PQ_FLOAT || k->node->phys == FLOE_PQ_DOUBLE)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "equality field %d of %s is a float or double, which Iceberg "
                            "does not allow",
                            (int)id, what);
    k->max_def = floe_pq_schema_max_def(ps, k->col);
    return 0;
}

int floe_ice_key_col_start(floe_ice_key_col_t *k, const floe_pq_column_t *chunk, int64_t nrows,
                           const char *what, floe_err_t *err)
{
    k->chunk = chunk;
    k->vpos = 0;
    if (chunk && (int64_t)chunk->n_levels != nrows)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "%s: column of field %d holds %zu values for %lld rows", what,
                            (int)k->id, chunk->n_levels, (long long)nrows);
    return 0;
}

int floe_ice_key_col_put(floe_ice_key_col_t *k, size_t row, floe_buf_t *b, const char *what,
                         floe_err_t *err)
{
    const floe_pq_column_t *c = k->chunk;
    int rc;
    if (!c || (c->def && c->def[row] < k->max_def)) {
        rc = floe_buf_append_str(b, "null");
    } else {
        if (k->vpos >= c->n_values)
            return floe_err_set(err, FLOE_ECORRUPT,
                                "%s: column of field %d has fewer values than levels say", what,
                                (int)k->id);
        rc = floe_ice_json_value(b, k->node, k->type, c, k->vpos++);
    }
    if (rc || floe_buf_append_u8(b, 0)) return floe_err_oom(err);
    return 0;
}

static int cmp_key(const void *x, const void *y, void *arg)
{
    const struct floe_ice_eq_key *a = x, *b = y;
    const uint8_t *base = arg;
    int c = memcmp(base + a->off, base + b->off, a->len < b->len ? a->len : b->len);
    return c ? c : a->len < b->len ? -1 : a->len > b->len;
}

bool floe_ice_eq_set_has(const floe_ice_eq_set_t *s, const void *key, size_t len)
{
    size_t lo = 0, hi = s->nkeys;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct floe_ice_eq_key *m = &s->keys[mid];
        int c = memcmp(s->bytes.data + m->off, key, m->len < len ? m->len : len);
        if (!c) c = m->len < len ? -1 : m->len > len;
        if (!c) return true;
        if (c < 0) lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* The set of d for these field ids (sorted, nids > 0), created empty when
 * d has none yet. */
static floe_ice_eq_set_t *eq_set_for(floe_ice_deletes_t *d, const int32_t *ids, size_t nids,
                                     floe_err_t *err)
{
    for (size_t i = 0; i < d->neq; i++)
        if (d->eq[i].nids == nids && !memcmp(d->eq[i].ids, ids, nids * sizeof *ids))
            return &d->eq[i];
    floe_ice_eq_set_t *v = realloc(d->eq, (d->neq + 1) * sizeof *v);
    if (!v) goto oom;
    d->eq = v;
    floe_ice_eq_set_t *s = &d->eq[d->neq];
    memset(s, 0, sizeof *s);
    if (!(s->ids = malloc(nids * sizeof *ids))) goto oom;
    memcpy(s->ids, ids, nids * sizeof *ids);
    s->nids = nids;
    d->neq++;
    return s;
oom:
    floe_err_oom(err);
    return NULL;
}

static int add_key(floe_ice_eq_set_t *s, size_t off, size_t len, floe_err_t *err)
{
    if (s->nkeys == s->capkeys) {
        size_t nc = s->capkeys ? s->capkeys * 2 : 64;
        struct floe_ice_eq_key *v = realloc(s->keys, nc * sizeof *v);
        if (!v) return floe_err_oom(err);
        s->keys = v;
        s->capkeys = nc;
    }
    s->keys[s->nkeys++] = (struct floe_ice_eq_key){off, len};
    return 0;
}

/* The keys of every row of equality delete file r (named what) into s,
 * unsorted (sort_keys). */
static int load_keys(floe_ice_eq_set_t *s, floe_pq_reader_t *r, const char *what,
                     const floe_ice_schema_t *schema, floe_err_t *err)
{
    const floe_pq_schema_t *ps = floe_pq_reader_schema(r);
    size_t nkeys0 = s->nkeys, len0 = s->bytes.len; /* a failed file adds nothing */
    floe_ice_key_col_t *kc = calloc(s->nids, sizeof *kc);
    floe_pq_column_t *chunks = calloc(s->nids, sizeof *chunks);
    int rc = kc && chunks ? 0 : floe_err_oom(err);
    for (size_t i = 0; !rc && i < s->nids; i++) {
        rc = floe_ice_key_col_bind(&kc[i], ps, s->ids[i], schema, what, err);
        if (!rc && kc[i].col < 0)
            rc = floe_err_set(err, FLOE_ECORRUPT, "equality delete file %s lacks field %d", what,
                              (int)s->ids[i]);
    }
    for (int rg = 0; !rc && rg < floe_pq_reader_num_row_groups(r); rg++) {
        int64_t nrows = floe_pq_reader_row_group_rows(r, rg);
        size_t loaded = 0;
        while (!rc && loaded < s->nids) {
            if (floe_pq_read_column(r, rg, kc[loaded].col, &chunks[loaded], err)) {
                rc = -1;
                break;
            }
            loaded++;
            rc = floe_ice_key_col_start(&kc[loaded - 1], &chunks[loaded - 1], nrows, what, err);
        }
        for (int64_t row = 0; !rc && row < nrows; row++) {
            size_t off = s->bytes.len;
            for (size_t i = 0; !rc && i < s->nids; i++)
                rc = floe_ice_key_col_put(&kc[i], (size_t)row, &s->bytes, what, err);
            if (!rc) rc = add_key(s, off, s->bytes.len - off, err);
        }
        for (size_t i = 0; i < loaded; i++) floe_pq_column_free(&chunks[i]);
    }
    free(kc);
    free(chunks);
    if (rc) {
        s->nkeys = nkeys0;
        s->bytes.len = len0;
    }
    return rc;
}

/* Sort the keys of every set of d (after loading: once, not per file). */
static void sort_keys(floe_ice_deletes_t *d)
{
    for (size_t i = 0; i < d->neq; i++)
        if (d->eq[i].nkeys)
            qsort_r(d->eq[i].keys, d->eq[i].nkeys, sizeof *d->eq[i].keys, cmp_key,
                    d->eq[i].bytes.data);
}

/* Add equality delete file r (named what) with field ids[0..nids). */
static int add_equality(floe_ice_deletes_t *d, const int32_t *ids, size_t nids, floe_pq_reader_t *r,
                        const char *what, const floe_ice_schema_t *schema, floe_err_t *err)
{
    if (!nids)
        return floe_err_set(err, FLOE_ECORRUPT, "equality delete file %s has no equality_ids",
                            what);
    int32_t *sorted = malloc(nids * sizeof *sorted);
    if (!sorted) return floe_err_oom(err);
    memcpy(sorted, ids, nids * sizeof *sorted);
    qsort(sorted, nids, sizeof *sorted, cmp_i32);
    floe_ice_eq_set_t *s = eq_set_for(d, sorted, nids, err);
    free(sorted);
    if (!s) return -1;
    return load_keys(s, r, what, schema, err);
}

int floe_ice_deletes_add_equality(floe_ice_deletes_t *d, const int32_t *ids, size_t nids,
                                  const uint8_t *data, size_t len, const char *what,
                                  const floe_ice_schema_t *schema, floe_err_t *err)
{
    floe_pq_reader_t *r = floe_pq_reader_open(data, len, err);
    if (!r) {
        floe_err_wrap(err, "%s", what);
        return -1;
    }
    int rc = add_equality(d, ids, nids, r, what, schema, err);
    floe_pq_reader_free(r);
    sort_keys(d);
    return rc;
}

/* ---- equality deletes against one data file ---- */

int floe_ice_eq_check_bind(floe_ice_eq_check_t *q, const floe_ice_deletes_t *dels,
                           const floe_pq_schema_t *ps, const floe_ice_schema_t *schema,
                           const char *what, floe_err_t *err)
{
    q->dels = dels;
    for (size_t i = 0; dels && i < dels->neq; i++) q->nkc += dels->eq[i].nids;
    if (!q->nkc) return 0;
    if (!(q->kc = calloc(q->nkc, sizeof *q->kc))) return floe_err_oom(err);
    size_t k = 0;
    for (size_t i = 0; i < dels->neq; i++)
        for (size_t j = 0; j < dels->eq[i].nids; j++)
            if (floe_ice_key_col_bind(&q->kc[k++], ps, dels->eq[i].ids[j], schema, what, err))
                return -1;
    return 0;
}

int floe_ice_eq_check_row(floe_ice_eq_check_t *q, size_t row, bool *deleted, const char *what,
                          floe_err_t *err)
{
    *deleted = false;
    size_t k = 0;
    for (size_t i = 0; i < (q->nkc ? q->dels->neq : 0); i++) {
        const floe_ice_eq_set_t *s = &q->dels->eq[i];
        q->key.len = 0;
        for (size_t j = 0; j < s->nids; j++)
            if (floe_ice_key_col_put(&q->kc[k++], row, &q->key, what, err)) return -1;
        if (!*deleted && floe_ice_eq_set_has(s, q->key.data, q->key.len)) *deleted = true;
    }
    return 0;
}

void floe_ice_eq_check_clear(floe_ice_eq_check_t *q)
{
    free(q->kc);
    floe_buf_free(&q->key);
    memset(q, 0, sizeof *q);
}

static int push_pos(int64_t **v, size_t *n, size_t *cap, int64_t pos, floe_err_t *err)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        int64_t *nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return floe_err_oom(err);
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = pos;
    return 0;
}

int floe_ice_deletes_rows(const floe_ice_deletes_t *d, floe_pq_reader_t *r,
                          const floe_ice_schema_t *schema, const char *what, int64_t **pos,
                          size_t *npos, floe_err_t *err)
{
    *pos = NULL;
    *npos = 0;
    size_t cap = 0, di = 0;
    floe_ice_eq_check_t q = {0};
    floe_pq_column_t *chunks = NULL;
    int rc = floe_ice_eq_check_bind(&q, d, floe_pq_reader_schema(r), schema, what, err);
    if (!rc && q.nkc && !(chunks = calloc(q.nkc, sizeof *chunks))) rc = floe_err_oom(err);
    int64_t base = 0;
    for (int rg = 0; !rc && rg < floe_pq_reader_num_row_groups(r); rg++) {
        int64_t nrows = floe_pq_reader_row_group_rows(r, rg);
        size_t loaded = 0;
        for (; !rc && loaded < q.nkc; loaded++) {
            const floe_pq_column_t *c = NULL;
            if (q.kc[loaded].col >= 0) {
                if (floe_pq_read_column(r, rg, q.kc[loaded].col, &chunks[loaded], err)) {
                    rc = -1;
                    break;
                }
                c = &chunks[loaded];
            }
            rc = floe_ice_key_col_start(&q.kc[loaded], c, nrows, what, err);
        }
        for (int64_t row = 0; !rc && row < nrows; row++) {
            bool del = false;
            if (q.nkc) rc = floe_ice_eq_check_row(&q, (size_t)row, &del, what, err);
            while (d && di < d->npos && d->pos[di] < base + row) di++;
            if (d && di < d->npos && d->pos[di] == base + row) del = true;
            if (!rc && del) rc = push_pos(pos, npos, &cap, base + row, err);
        }
        for (size_t i = 0; i < loaded; i++)
            if (q.kc[i].col >= 0) floe_pq_column_free(&chunks[i]);
        base += nrows;
    }
    free(chunks);
    floe_ice_eq_check_clear(&q);
    if (rc) {
        free(*pos);
        *pos = NULL;
        *npos = 0;
    }
    return rc;
}

/* ---- the deletes of a scan task ---- */

bool floe_ice_is_parquet(const floe_ice_data_file_t *f)
{
    return !f->format || !strcmp(f->format, "PARQUET") || !strcmp(f->format, "parquet");
}

int floe_ice_deletes_load(floe_fileio_t *io, const floe_ice_scan_task_t *t,
                          const floe_ice_schema_t *schema, floe_ice_deletes_t **out,
                          floe_err_t *err)
{
    floe_ice_deletes_t *d = floe_ice_deletes_new(err);
    if (!d) return -1;
    floe_buf_t data = FLOE_BUF_INIT;
    int rc = 0;
    for (size_t k = 0; k < t->ndeletes && !rc; k++) {
        const floe_ice_data_file_t *df = t->deletes[k];
        if (df->content != FLOE_ICE_CONTENT_POSITION_DELETES &&
            df->content != FLOE_ICE_CONTENT_EQUALITY_DELETES)
            continue;
        if (!floe_ice_is_parquet(df)) {
            rc = floe_err_set(err, FLOE_EUNSUPPORTED, "delete file %s is %s, not Parquet", df->path,
                              df->format);
            break;
        }
        floe_pq_reader_t *r = floe_ice_parquet_open(io, df->path, &data, err);
        if (!r) {
            rc = -1;
            break;
        }
        if (df->content == FLOE_ICE_CONTENT_POSITION_DELETES)
            rc = load_positions(d, r, df->path, t->file->path, err);
        else
            rc = add_equality(d, df->equality_ids, df->nequality_ids, r, df->path, schema, err);
        floe_pq_reader_free(r);
    }
    floe_buf_free(&data);
    if (rc) {
        floe_ice_deletes_free(d);
        return -1;
    }
    if (d->npos) qsort(d->pos, d->npos, sizeof *d->pos, cmp_i64);
    sort_keys(d);
    *out = d;
    return 0;
}
