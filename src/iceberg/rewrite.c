/* Rewriting data files (rewrite.h): inputs in, row group by row group, out
 * into rolling Parquet files.  The schema side (which input column feeds
 * which output column, and how its levels map) is rewrite_map.c. */
#include "iceberg/rewrite.h"

#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "iceberg/read.h"
#include "iceberg/rewrite_int.h"

struct floe_ice_rewriter {
    floe_fileio_t *io;
    const floe_ice_schema_t *schema; /* borrowed: how equality deletes compare */
    char *schema_json;
    floe_ice_rewrite_name_fn name;
    void *ctx;
    floe_ice_rewrite_opts_t o;
    floe_pq_schema_t *ps; /* the outputs' Parquet schema */
    rw_leaf_t *leaves;
    int ncols;
    rw_plan_t *plans;           /* per column, for the input being added */
    floe_ice_colstats_t *stats; /* per column, for the open output */
    /* the open output */
    floe_outfile_t *of;
    floe_pq_writer_t *pw;
    unsigned seq;
    /* outputs finished, and every path started (removed on failure) */
    floe_ice_data_file_t *outs;
    size_t nouts, cap_outs;
    char **paths;
    size_t npaths;
    /* the partition every input shares */
    bool have_part;
    floe_ice_data_file_t part; /* spec_id and partition only */
    /* the input being added */
    floe_buf_t data;
    floe_pq_reader_t *r;
    floe_pq_column_t col; /* last column decoded, reused by the columns it feeds */
    int col_rg, col_idx;
    bool col_ok;
    /* scratch */
    floe_buf_t lev;       /* output levels: definition, then repetition */
    uint8_t *def8, *rep8; /* views into lev */
    floe_buf_t vsel, vconv, cbytes;
    floe_ice_rewrite_stats_t st;
    bool failed;
};

floe_ice_rewrite_opts_t floe_ice_rewrite_opts_default(void)
{
    floe_ice_rewrite_opts_t o;
    memset(&o, 0, sizeof o);
    o.codec = FLOE_CODEC_ZSTD;
    o.level = 1;
    o.row_group_size = FLOE_ICE_REWRITE_ROW_GROUP;
    return o;
}

floe_ice_rewrite_stats_t floe_ice_rewriter_stats(const floe_ice_rewriter_t *rw)
{
    return rw->st;
}

static void drop_column(floe_ice_rewriter_t *rw)
{
    if (rw->col_ok) floe_pq_column_free(&rw->col);
    rw->col_ok = false;
}

static void drop_input(floe_ice_rewriter_t *rw)
{
    drop_column(rw);
    floe_pq_reader_free(rw->r);
    rw->r = NULL;
}

static void rw_free(floe_ice_rewriter_t *rw)
{
    drop_input(rw);
    floe_pq_writer_free(rw->pw);
    if (rw->of) floe_outfile_abort(rw->of);
    for (size_t i = 0; i < rw->nouts; i++) floe_ice_data_file_clear(&rw->outs[i]);
    free(rw->outs);
    for (size_t i = 0; i < rw->npaths; i++) free(rw->paths[i]);
    free(rw->paths);
    floe_ice_data_file_clear(&rw->part);
    floe_pq_schema_free(rw->ps);
    free(rw->leaves);
    free(rw->plans);
    free(rw->stats);
    free(rw->schema_json);
    floe_buf_free(&rw->lev);
    floe_buf_free(&rw->data);
    floe_buf_free(&rw->vsel);
    floe_buf_free(&rw->vconv);
    floe_buf_free(&rw->cbytes);
    free(rw);
}

floe_ice_rewriter_t *floe_ice_rewriter_new(floe_fileio_t *io, const floe_ice_schema_t *schema,
                                           floe_ice_rewrite_name_fn name, void *ctx,
                                           const floe_ice_rewrite_opts_t *opts, floe_err_t *err)
{
    floe_ice_rewriter_t *rw = calloc(1, sizeof *rw);
    if (!rw) {
        floe_err_oom(err);
        return NULL;
    }
    rw->io = io;
    rw->schema = schema;
    rw->name = name;
    rw->ctx = ctx;
    rw->o = opts ? *opts : floe_ice_rewrite_opts_default();
    if (!rw->o.row_group_size) rw->o.row_group_size = FLOE_ICE_REWRITE_ROW_GROUP;
    floe_ice_data_file_init(&rw->part);
    if (!(rw->schema_json = floe_ice_schema_to_json(schema, err)) ||
        !(rw->ps = rw_parquet_schema(schema, &rw->leaves, err)))
        goto fail;
    rw->ncols = floe_pq_schema_num_columns(rw->ps);
    rw->plans = calloc((size_t)rw->ncols, sizeof *rw->plans);
    rw->stats = calloc((size_t)rw->ncols, sizeof *rw->stats);
    if (!rw->plans || !rw->stats) {
        floe_err_oom(err);
        goto fail;
    }
    return rw;
fail:
    floe_err_wrap(err, "rewrite");
    rw_free(rw);
    return NULL;
}

/* ---- outputs ---------------------------------------------------------------- */

static int sink(void *ctx, const void *p, size_t n, floe_err_t *err)
{
    return floe_outfile_write(ctx, p, n, err);
}

static int open_output(floe_ice_rewriter_t *rw, floe_err_t *err)
{
    char **pv = realloc(rw->paths, (rw->npaths + 1) * sizeof *pv);
    if (!pv) return floe_err_oom(err);
    rw->paths = pv;
    char *path = rw->name(rw->ctx, rw->seq++, err);
    if (!path) return -1;
    rw->paths[rw->npaths++] = path;
    if (floe_fileio_create(rw->io, path, FLOE_IO_EXCL, &rw->of, err) < 0) {
        rw->of = NULL;
        return -1;
    }
    floe_pq_write_opts_t po = floe_pq_write_opts_default();
    po.codec = rw->o.codec;
    po.level = rw->o.level;
    po.scratch = rw->o.scratch;
    po.row_group_size = rw->o.row_group_size;
    po.delta_byte_array = false; /* v1 pages every Iceberg reader decodes, as table files */
    po.page_size = 256u << 10;   /* as table data files (table/datafile.c) */
    if (!(rw->pw = floe_pq_writer_new(rw->ps, &po, sink, rw->of, err)) ||
        floe_pq_writer_set_kv(rw->pw, "iceberg.schema", rw->schema_json, err) < 0)
        return -1;
    for (int j = 0; j < rw->ncols; j++) {
        const rw_leaf_t *L = &rw->leaves[j];
        floe_ice_colstats_init(&rw->stats[j], floe_pq_schema_node(rw->ps, L->node)->field_id,
                               L->type->kind, L->reps[L->depth] == 0);
        rw->stats[j].scale = L->type->scale;
    }
    return 0;
}

/* Close the open output and describe it. */
static int close_output(floe_ice_rewriter_t *rw, floe_err_t *err)
{
    const char *path = rw->paths[rw->npaths - 1];
    uint64_t rows = floe_pq_writer_num_rows(rw->pw);
    if (floe_pq_writer_close(rw->pw, err) < 0) return -1;
    uint64_t size = rw->of->written;
    floe_outfile_t *of = rw->of;
    rw->of = NULL;
    if (floe_outfile_close(of, err) < 0) return -1;
    if (rw->nouts == rw->cap_outs) {
        size_t cap = rw->cap_outs ? rw->cap_outs * 2 : 4;
        floe_ice_data_file_t *v = realloc(rw->outs, cap * sizeof *v);
        if (!v) return floe_err_oom(err);
        rw->outs = v;
        rw->cap_outs = cap;
    }
    floe_ice_data_file_t *f = &rw->outs[rw->nouts];
    floe_ice_data_file_init(f);
    rw->nouts++;
    f->content = FLOE_ICE_CONTENT_DATA;
    f->spec_id = rw->part.spec_id;
    f->record_count = (int64_t)rows;
    f->file_size = (int64_t)size;
    if (floe_ice_data_file_set_path(f, path, "PARQUET") < 0) return floe_err_oom(err);
    if (rw->part.npartition) {
        f->partition = calloc(rw->part.npartition, sizeof *f->partition);
        if (!f->partition) return floe_err_oom(err);
        f->npartition = rw->part.npartition;
        for (size_t i = 0; i < f->npartition; i++)
            if (floe_ice_value_copy(&f->partition[i], &rw->part.partition[i]) < 0)
                return floe_err_oom(err);
    }
    if (floe_ice_colstats_fill(rw->stats, (size_t)rw->ncols, rw->pw, f, err) < 0) return -1;
    floe_pq_writer_free(rw->pw);
    rw->pw = NULL;
    return 0;
}

/* ---- one column of one row group ---------------------------------------------- */

static int get_column(floe_ice_rewriter_t *rw, int rg, int col, floe_err_t *err)
{
    if (rw->col_ok && rw->col_rg == rg && rw->col_idx == col) return 0;
    drop_column(rw);
    if (floe_pq_read_column(rw->r, rg, col, &rw->col, err) < 0) return -1;
    rw->col_ok = true;
    rw->col_rg = rg;
    rw->col_idx = col;
    return 0;
}

/* Room for n output levels of each kind. */
static int grow_levels(floe_ice_rewriter_t *rw, size_t n, floe_err_t *err)
{
    floe_buf_reset(&rw->lev);
    if (floe_buf_reserve(&rw->lev, 2 * n + 2) < 0) return floe_err_oom(err);
    rw->def8 = rw->lev.data;
    rw->rep8 = rw->lev.data + n + 1;
    return 0;
}

/* A decimal's unscaled value as stored (in_phys), into *x; false when it
 * does not fit 128 bits. */
static bool decimal_get(floe_pq_phys_t in_phys, const uint8_t *v, __int128 *x)
{
    if (in_phys == FLOE_PQ_INT32) {
        int32_t y;
        memcpy(&y, v, 4);
        *x = y;
        return true;
    }
    if (in_phys == FLOE_PQ_INT64) {
        int64_t y;
        memcpy(&y, v, 8);
        *x = y;
        return true;
    }
    floe_slice_t s;
    memcpy(&s, v, sizeof s);
    if (s.len > 16) return false;
    unsigned __int128 u = s.len && (s.ptr[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < s.len; i++) u = (u << 8) | s.ptr[i];
    *x = (__int128)u;
    return true;
}

/* Values vals[0..n) of the input's stored type converted to the output
 * column's; returns the converted array (in rw scratch) or NULL with *err. */
static const void *convert(floe_ice_rewriter_t *rw, const rw_plan_t *p, const floe_pq_node_t *out,
                           const void *vals, size_t n, floe_err_t *err)
{
    size_t osz = floe_pq_value_size(out->phys), isz = floe_pq_value_size(p->in_phys);
    floe_buf_reset(&rw->vconv);
    if (floe_buf_reserve(&rw->vconv, n * osz + 1) < 0) {
        floe_err_oom(err);
        return NULL;
    }
    const uint8_t *in = vals;
    uint8_t *o = rw->vconv.data;
    switch (p->conv) {
    case RW_CV_I32_I64:
    case RW_CV_I32_F64:
        for (size_t i = 0; i < n; i++) {
            int32_t y;
            memcpy(&y, in + 4 * i, 4);
            if (p->conv == RW_CV_I32_I64) {
                int64_t x = y;
                memcpy(o + 8 * i, &x, 8);
            } else {
                double x = y;
                memcpy(o + 8 * i, &x, 8);
            }
        }
        break;
    case RW_CV_F32_F64:
        for (size_t i = 0; i < n; i++) {
            float y;
            memcpy(&y, in + 4 * i, 4);
            double x = y;
            memcpy(o + 8 * i, &x, 8);
        }
        break;
    case RW_CV_I64_F64:
        for (size_t i = 0; i < n; i++) {
            int64_t y;
            memcpy(&y, in + 8 * i, 8);
            double x = (double)y;
            memcpy(o + 8 * i, &x, 8);
        }
        break;
    case RW_CV_MS_US:
        for (size_t i = 0; i < n; i++) {
            int64_t y;
            if (isz == 4) {
                int32_t z;
                memcpy(&z, in + 4 * i, 4);
                y = z;
            } else {
                memcpy(&y, in + 8 * i, 8);
            }
            if (__builtin_mul_overflow(y, 1000, &y)) {
                floe_err_set(err, FLOE_ERANGE, "column %s: time %lld ms out of range", out->name,
                             (long long)(y / 1000));
                return NULL;
            }
            memcpy(o + 8 * i, &y, 8);
        }
        break;
    case RW_CV_DECIMAL: {
        size_t len = out->phys == FLOE_PQ_FIXED ? (size_t)out->type_length : 0;
        floe_buf_reset(&rw->cbytes);
        if (len && floe_buf_reserve(&rw->cbytes, n * len + 1) < 0) {
            floe_err_oom(err);
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            __int128 x;
            bool ok = decimal_get(p->in_phys, in + isz * i, &x);
            if (ok && out->phys == FLOE_PQ_INT32) {
                ok = x >= INT32_MIN && x <= INT32_MAX;
                int32_t y = (int32_t)x;
                memcpy(o + 4 * i, &y, 4);
            } else if (ok && out->phys == FLOE_PQ_INT64) {
                ok = x >= INT64_MIN && x <= INT64_MAX;
                int64_t y = (int64_t)x;
                memcpy(o + 8 * i, &y, 8);
            } else if (ok) {
                /* big-endian two's complement in len bytes */
                uint8_t *b = rw->cbytes.data + len * i;
                unsigned __int128 u = (unsigned __int128)x;
                for (size_t k = len; k-- > 0;) {
                    b[k] = (uint8_t)u;
                    u >>= 8;
                }
                floe_slice_t s = {b, len};
                memcpy(o + sizeof s * i, &s, sizeof s);
            }
            if (!ok) {
                floe_err_set(err, FLOE_ERANGE, "column %s: a decimal does not fit the table's type",
                             out->name);
                return NULL;
            }
        }
        break;
    }
    default: return vals;
    }
    return o;
}

/* Write output column j for the kept rows of row group rg of the input
 * (rows [base, base + nrows) of the file; del[0..ndel) are the file
 * positions dropped among them). */
static int put_column(floe_ice_rewriter_t *rw, int j, int rg, int64_t base, size_t nrows,
                      const int64_t *del, size_t ndel, floe_err_t *err)
{
    const rw_plan_t *p = &rw->plans[j];
    const floe_pq_node_t *on = floe_pq_schema_node(rw->ps, rw->leaves[j].node);
    int maxdef = floe_pq_schema_max_def(rw->ps, j), maxrep = floe_pq_schema_max_rep(rw->ps, j);
    size_t kept = nrows - ndel;
    if (p->src < 0) { /* a column the file predates: one null per row */
        if (grow_levels(rw, kept, err) < 0) return -1;
        memset(rw->def8, 0, kept);
        memset(rw->rep8, 0, kept);
        floe_ice_colstats_add(&rw->stats[j], rw->def8, kept, maxdef, NULL, 0);
        return floe_pq_write_column8(rw->pw, j, kept, maxdef ? rw->def8 : NULL,
                                     maxrep ? rw->rep8 : NULL, NULL, 0, err);
    }
    if (p->identity && !ndel && p->conv == RW_CV_NONE && !rw->o.decode_all) {
        /* the chunk's pages as they are, when they can be */
        floe_pq_chunk_counts_t n;
        int k = floe_pq_write_chunk(rw->pw, j, rw->r, rg, p->src, &n, err);
        if (k < 0) return -1;
        if (k > 0) {
            rw->stats[j].values += n.levels;
            rw->stats[j].nulls += n.nulls;
            rw->stats[j].nans += n.nans;
            return 0;
        }
    }
    if (get_column(rw, rg, p->src, err) < 0) return -1;
    const floe_pq_column_t *c = &rw->col;
    if (p->identity && !ndel) {
        /* the column as it is; only its values may change type */
        const void *vals = c->values;
        if (p->conv != RW_CV_NONE && !(vals = convert(rw, p, on, vals, c->n_values, err)))
            return -1;
        floe_ice_colstats_add16(&rw->stats[j], c->def, c->n_levels, maxdef, vals, c->n_values);
        return floe_pq_write_column(rw->pw, j, c->n_levels, maxdef ? c->def : NULL,
                                    maxrep ? c->rep : NULL, vals, c->n_values, err);
    }
    /* entry by entry: rows dropped, levels mapped, entries below the
     * shared prefix skipped */
    if (grow_levels(rw, c->n_levels, err) < 0) return -1;
    size_t isz = floe_pq_value_size(p->in_phys);
    bool pick = p->same && ndel; /* values must be picked one by one */
    if (pick) {
        floe_buf_reset(&rw->vsel);
        if (floe_buf_reserve(&rw->vsel, c->n_values * isz + 1) < 0) return floe_err_oom(err);
    }
    size_t o = 0, vi = 0, vo = 0, k = 0;
    int64_t row = base - 1;
    bool drop = false;
    for (size_t e = 0; e < c->n_levels; e++) {
        int rep = c->rep ? c->rep[e] : 0, def = c->def ? c->def[e] : 0;
        if (rep == 0) {
            row++;
            while (k < ndel && del[k] < row) k++;
            drop = k < ndel && del[k] == row;
        }
        bool full = def == p->in_maxdef;
        if (!drop && rep <= p->rep_keep) {
            if (p->same && !full && p->defmap[def] == maxdef)
                return floe_err_set(err, FLOE_EUNSUPPORTED,
                                    "column %s (field %d): a null where the table requires a value",
                                    on->name, (int)on->field_id);
            rw->def8[o] = p->defmap[def];
            rw->rep8[o] = (uint8_t)rep;
            o++;
            if (pick && full) {
                memcpy(rw->vsel.data + isz * vo, (const uint8_t *)c->values + isz * vi, isz);
                vo++;
            }
        }
        vi += full;
    }
    const void *vals = NULL;
    size_t nv = 0;
    if (p->same) {
        vals = pick ? (const void *)rw->vsel.data : c->values;
        nv = pick ? vo : c->n_values;
        if (p->conv != RW_CV_NONE && !(vals = convert(rw, p, on, vals, nv, err))) return -1;
    }
    floe_ice_colstats_add(&rw->stats[j], maxdef ? rw->def8 : NULL, o, maxdef, vals, nv);
    return floe_pq_write_column8(rw->pw, j, o, maxdef ? rw->def8 : NULL, maxrep ? rw->rep8 : NULL,
                                 vals, nv, err);
}

/* ---- inputs -------------------------------------------------------------------- */

static bool same_partition(const floe_ice_data_file_t *a, const floe_ice_data_file_t *b)
{
    if (a->spec_id != b->spec_id || a->npartition != b->npartition) return false;
    for (size_t i = 0; i < a->npartition; i++) {
        const floe_ice_value_t *x = &a->partition[i], *y = &b->partition[i];
        if (x->is_null != y->is_null) return false;
        if (!x->is_null && (x->kind != y->kind || !floe_ice_value_eq(x, y))) return false;
    }
    return true;
}

static int take_partition(floe_ice_rewriter_t *rw, const floe_ice_data_file_t *in, floe_err_t *err)
{
    if (rw->have_part) {
        if (!same_partition(&rw->part, in))
            return floe_err_set(err, FLOE_EINVAL,
                                "%s: another partition (spec %d) than the files before it",
                                in->path, (int)in->spec_id);
        return 0;
    }
    rw->part.spec_id = in->spec_id;
    if (in->npartition) {
        rw->part.partition = calloc(in->npartition, sizeof *rw->part.partition);
        if (!rw->part.partition) return floe_err_oom(err);
        rw->part.npartition = in->npartition;
        for (size_t i = 0; i < in->npartition; i++)
            if (floe_ice_value_copy(&rw->part.partition[i], &in->partition[i]) < 0)
                return floe_err_oom(err);
    }
    rw->have_part = true;
    return 0;
}

/* Open input `in` into rw->r (its partition checked). */
static int open_input(floe_ice_rewriter_t *rw, const floe_ice_data_file_t *in, floe_err_t *err)
{
    if (in->content != FLOE_ICE_CONTENT_DATA || (in->format && strcmp(in->format, "PARQUET") != 0))
        return floe_err_set(err, FLOE_EINVAL, "%s: not a Parquet data file", in->path);
    if (take_partition(rw, in, err) < 0) return -1;
    drop_input(rw);
    return (rw->r = floe_ice_parquet_open(rw->io, in->path, &rw->data, err)) ? 0 : -1;
}

/* Write the rows of the open input `in` but those at del[0..ndel). */
static int add_input(floe_ice_rewriter_t *rw, const floe_ice_data_file_t *in, const int64_t *del,
                     size_t ndel, floe_err_t *err)
{
    for (size_t i = 0; i < ndel; i++)
        if (del[i] < 0 || (i && del[i] <= del[i - 1]))
            return floe_err_set(err, FLOE_EINVAL,
                                "%s: deleted positions must ascend strictly from 0", in->path);
    int64_t nrows = floe_pq_reader_num_rows(rw->r);
    if (in->record_count >= 0 && nrows != in->record_count)
        return floe_err_set(err, FLOE_ECORRUPT, "%s: holds %lld rows, its entry says %lld",
                            in->path, (long long)nrows, (long long)in->record_count);
    if (ndel && del[ndel - 1] >= nrows)
        return floe_err_set(err, FLOE_EINVAL, "%s: deleted position %lld past its %lld rows",
                            in->path, (long long)del[ndel - 1], (long long)nrows);
    if (rw_plan_input(rw->ps, rw->leaves, rw->ncols, floe_pq_reader_schema(rw->r), rw->o.remap,
                      rw->o.nremap, in->path, rw->plans, err) < 0)
        return -1;
    int nrg = floe_pq_reader_num_row_groups(rw->r);
    int64_t base = 0, sum = 0;
    size_t k = 0;
    for (int g = 0; g < nrg; g++) {
        int64_t n = floe_pq_reader_row_group_rows(rw->r, g);
        size_t k0 = k;
        while (k < ndel && del[k] < base + n) k++;
        size_t nd = k - k0;
        if ((size_t)n > nd) {
            if (!rw->pw && open_output(rw, err) < 0) return -1;
            for (int j = 0; j < rw->ncols; j++)
                if (put_column(rw, j, g, base, (size_t)n, del + k0, nd, err) < 0) {
                    floe_err_wrap(err, "%s", in->path);
                    return -1;
                }
            if (floe_pq_writer_rows(rw->pw, (size_t)n - nd, err) < 0) return -1;
            rw->st.rows_out += n - (int64_t)nd;
            if (rw->o.target_file_size && floe_pq_writer_bytes(rw->pw) >= rw->o.target_file_size &&
                close_output(rw, err) < 0)
                return -1;
        }
        base += n;
        sum += n;
        drop_column(rw);
    }
    if (sum != nrows)
        return floe_err_set(err, FLOE_ECORRUPT, "%s: row groups hold %lld rows, the footer %lld",
                            in->path, (long long)sum, (long long)nrows);
    rw->st.files_in++;
    rw->st.rows_in += nrows;
    rw->st.rows_dropped += (int64_t)ndel;
    rw->st.bytes_in += (int64_t)rw->data.len;
    drop_input(rw);
    return 0;
}

int floe_ice_rewriter_add(floe_ice_rewriter_t *rw, const floe_ice_data_file_t *in,
                          const int64_t *deleted, size_t ndeleted, floe_err_t *err)
{
    if (rw->failed) return floe_err_set(err, FLOE_ECLOSED, "rewrite: failed earlier");
    if (open_input(rw, in, err) < 0 || add_input(rw, in, deleted, ndeleted, err) < 0) {
        rw->failed = true;
        floe_err_wrap(err, "rewrite");
        return -1;
    }
    return 0;
}

int floe_ice_rewriter_add_deleting(floe_ice_rewriter_t *rw, const floe_ice_data_file_t *in,
                                   const floe_ice_deletes_t *dels, floe_err_t *err)
{
    if (rw->failed) return floe_err_set(err, FLOE_ECLOSED, "rewrite: failed earlier");
    int64_t *pos = NULL;
    size_t npos = 0;
    int rc = open_input(rw, in, err);
    if (rc == 0 && dels)
        rc = floe_ice_deletes_rows(dels, rw->r, rw->schema, in->path, &pos, &npos, err);
    if (rc == 0) rc = add_input(rw, in, pos, npos, err);
    free(pos);
    if (rc < 0) {
        rw->failed = true;
        floe_err_wrap(err, "rewrite");
    }
    return rc;
}

void floe_ice_rewriter_abort(floe_ice_rewriter_t *rw)
{
    if (!rw) return;
    if (rw->of) {
        floe_outfile_abort(rw->of);
        rw->of = NULL;
    }
    for (size_t i = 0; i < rw->npaths; i++) {
        floe_err_t e;
        floe_fileio_remove(rw->io, rw->paths[i], &e);
    }
    rw_free(rw);
}

int floe_ice_rewriter_finish(floe_ice_rewriter_t *rw, floe_ice_data_file_t **out, size_t *nout,
                             floe_err_t *err)
{
    *out = NULL;
    *nout = 0;
    if (rw->failed) {
        floe_ice_rewriter_abort(rw);
        return floe_err_set(err, FLOE_ECLOSED, "rewrite: failed earlier");
    }
    if (rw->pw && close_output(rw, err) < 0) goto fail;
    /* the rows written are the rows read minus those dropped */
    int64_t want = rw->st.rows_in - rw->st.rows_dropped, got = 0;
    for (size_t i = 0; i < rw->nouts; i++) got += rw->outs[i].record_count;
    if (got != want || rw->st.rows_out != want) {
        floe_err_set(err, FLOE_ECORRUPT,
                     "record counts differ: %lld rows read, %lld dropped, %lld written",
                     (long long)rw->st.rows_in, (long long)rw->st.rows_dropped, (long long)got);
        goto fail;
    }
    *out = rw->outs;
    *nout = rw->nouts;
    rw->outs = NULL;
    rw->nouts = 0;
    for (size_t i = 0; i < rw->npaths; i++) free(rw->paths[i]);
    rw->npaths = 0;
    rw_free(rw);
    return 0;
fail:
    floe_err_wrap(err, "rewrite");
    floe_ice_rewriter_abort(rw);
    return -1;
}

int floe_ice_rewrite(floe_fileio_t *io, const floe_ice_schema_t *schema,
                     const floe_ice_rewrite_input_t *in, size_t nin, floe_ice_rewrite_name_fn name,
                     void *ctx, const floe_ice_rewrite_opts_t *opts, floe_ice_data_file_t **out,
                     size_t *nout, floe_err_t *err)
{
    *out = NULL;
    *nout = 0;
    floe_ice_rewriter_t *rw = floe_ice_rewriter_new(io, schema, name, ctx, opts, err);
    if (!rw) return -1;
    for (size_t i = 0; i < nin; i++)
        if (floe_ice_rewriter_add(rw, in[i].file, in[i].deleted, in[i].ndeleted, err) < 0) {
            floe_ice_rewriter_abort(rw);
            return -1;
        }
    return floe_ice_rewriter_finish(rw, out, nout, err);
}
