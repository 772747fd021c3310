/* Column chunks copied from a file being read into a writer's column
 * (compaction): the compressed pages as they are when the encodings allow,
 * else a dictionary-encoded chunk merged into the column's dictionary. */
#include <stdlib.h>
#include <string.h>

#include "format/parquet_write_int.h"
#include "util/mem.h"

/* Append n values given as dictionary indices ds->idx[from..from+n): as
 * indices into the column's dictionary while it has one, else as values. */
int pq_put_dict_src(pq_col_t *c, const dict_src_t *ds, size_t from, size_t n, floe_err_t *err)
{
    const uint32_t *in = ds->idx + from;
    if (c->mode == M_DICT) {
        if (floe_grow(&c->idx, &c->cap_idx, c->nidx + n, sizeof *c->idx) != 0)
            return floe_err_oom(err);
        uint32_t *out = c->idx + c->nidx;
        if (c->width) {
            for (size_t i = 0; i < n; i++) out[i] = ds->remap[in[i]];
        } else {
            size_t pb = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t e = ds->remap[in[i]];
                out[i] = e;
                pb += 4 + c->doff[e + 1] - c->doff[e];
            }
            c->plain_bytes += pb;
        }
        c->nidx += n;
        return 0;
    }
    /* the dictionary was given up: the entries' values */
    bool sliced = c->phys == FLOE_PQ_BYTE_ARRAY || c->phys == FLOE_PQ_FIXED;
    size_t esz = sliced ? sizeof(floe_slice_t) : c->width;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *v = ds->vals + (size_t)in[i] * esz;
        floe_slice_t sl = {v, c->width};
        if (sliced) memcpy(&sl, v, sizeof sl);
        if (pq_put_fallback(c, sl.ptr, sl.len) < 0) return floe_err_oom(err);
    }
    return 0;
}

/* A dictionary-encoded chunk into column c while it is in dictionary mode:
 * each entry of the chunk's dictionary is looked up (or added) once, and
 * the chunk's indices are mapped onto the column's dictionary; no value is
 * hashed per row.  1 done, 0 not dictionary-encoded, -1 with *err. */
static int merge_dict_chunk(floe_pq_writer_t *w, pq_col_t *c, floe_pq_reader_t *r, int rg, int rcol,
                            floe_pq_chunk_counts_t *counts, floe_err_t *err)
{
    floe_pq_column_t col;
    pq_dict_chunk_t dc;
    int k = pq_read_column_dict(r, rg, rcol, &col, &dc, err);
    if (k <= 0) return k;
    int rc = -1;
    size_t n = col.n_levels;
    bool sliced = c->phys == FLOE_PQ_BYTE_ARRAY || c->phys == FLOE_PQ_FIXED;
    size_t esz = sliced ? sizeof(floe_slice_t) : c->width;
    uint32_t *remap = malloc((dc.ndict ? dc.ndict : 1) * sizeof *remap);
    size_t need = (c->max_def ? n : 0) + (c->max_rep ? n : 0);
    if (!remap || floe_grow(&w->lev8, &w->cap_lev8, need, 1) != 0) {
        floe_err_oom(err);
        goto out;
    }
    memset(counts, 0, sizeof *counts);
    for (size_t e = 0; e < dc.ndict; e++) {
        const uint8_t *v = (const uint8_t *)dc.dict + e * esz;
        floe_slice_t sl = {v, c->width};
        if (sliced) memcpy(&sl, v, sizeof sl);
        int64_t x = pq_dict_put(c, sl.ptr, sl.len);
        if (x < 0) {
            floe_err_oom(err);
            goto out;
        }
        remap[e] = (uint32_t)x;
        if (c->phys == FLOE_PQ_FLOAT || c->phys == FLOE_PQ_DOUBLE) {
            bool nan;
            if (c->phys == FLOE_PQ_FLOAT) {
                float f;
                memcpy(&f, v, 4);
                nan = f != f;
            } else {
                double d;
                memcpy(&d, v, 8);
                nan = d != d;
            }
            /* NaN entries flagged in the high bit of their slot for the count */
            if (nan) remap[e] |= 1u << 31;
        }
    }
    if (c->phys == FLOE_PQ_FLOAT || c->phys == FLOE_PQ_DOUBLE) {
        for (size_t i = 0; i < col.n_values; i++) counts->nans += remap[dc.idx[i]] >> 31;
        for (size_t e = 0; e < dc.ndict; e++) remap[e] &= ~(1u << 31);
    }
    uint8_t *d8 = c->max_def ? w->lev8 : NULL, *r8 = c->max_rep ? w->lev8 + (d8 ? n : 0) : NULL;
    counts->rows = (int64_t)n;
    if (d8)
        for (size_t i = 0; i < n; i++) d8[i] = (uint8_t)col.def[i];
    if (r8) {
        counts->rows = 0;
        for (size_t i = 0; i < n; i++) {
            r8[i] = (uint8_t)col.rep[i];
            counts->rows += r8[i] == 0;
        }
    }
    dict_src_t ds = {dc.dict, dc.idx, remap};
    if (pq_write_levels(w, c, n, d8, r8, NULL, col.n_values, &ds, err) < 0) goto out;
    counts->levels = (int64_t)n;
    counts->nulls = (int64_t)(n - col.n_values);
    rc = 1;
out:
    if (rc < 0) w->failed = true;
    free(remap);
    pq_dict_chunk_free(&dc);
    floe_pq_column_free(&col);
    return rc;
}

int floe_pq_write_chunk(floe_pq_writer_t *w, int col, floe_pq_reader_t *r, int rg, int rcol,
                        floe_pq_chunk_counts_t *counts, floe_err_t *err)
{
    pq_col_t *c = pq_column_for(w, col, 0, true, true, err);
    if (!c) return -1;
    const floe_pq_schema_t *rs = floe_pq_reader_schema(r);
    if (rcol < 0 || rcol >= rs->ncols)
        return floe_err_set(err, FLOE_EINVAL, "no column %d in the file read", rcol);
    const floe_pq_node_t *rn = &rs->nodes[rs->col_node[rcol]];
    if (rn->phys != c->phys ||
        (c->phys == FLOE_PQ_FIXED && rn->type_length != c->spec->type_length) ||
        rs->max_def[rcol] != c->max_def || rs->max_rep[rcol] != c->max_rep)
        return 0;
    /* a file floe wrote counts nulls as this writer does: its footer is
     * trusted; others' pages are counted */
    const char *by = floe_pq_reader_created_by(r);
    bool trust = by && !strncmp(by, "floe", 4);
    pq_chunk_scan_t sc;
    int k = pq_chunk_scan(r, rg, rcol, c->phys == FLOE_PQ_FLOAT || c->phys == FLOE_PQ_DOUBLE, trust,
                          &sc, err);
    if (k < 0) return -1;
    if (k == 0) /* dictionary-encoded: merged into the column's dictionary */
        return c->mode == M_DICT ? merge_dict_chunk(w, c, r, rg, rcol, counts, err) : 0;
    bool has_vals = sc.levels > sc.nulls;
    if (sc.codec != w->pq_codec ||
        (pq_stats_ordered(c) && has_vals && (!sc.stats || !sc.stats->has_minmax)))
        return 0;
    /* this chunk's own pages so far go first; the copied ones use no
     * dictionary, so the chunk leaves dictionary mode */
    if (c->mode == M_DICT) {
        if (!c->dict_used && c->nlev == 0 && c->dict_n == 0) c->mode = pq_fallback_mode(w, c);
        else if (pq_dict_abandon(w, c, !c->dict_used, err) < 0)
            goto fail;
        c->decided = true;
    }
    if (pq_page_flush(w, c, err) < 0) goto fail;
    if (pq_big_reserve(&c->chunk, sc.len) < 0 || floe_buf_append(&c->chunk, sc.bytes, sc.len) < 0) {
        floe_err_oom(err);
        goto fail;
    }
    c->chunk_uncompressed += sc.uncompressed;
    c->num_values += sc.levels;
    c->null_count += sc.nulls;
    c->encodings |= sc.encodings;
    c->rows_pending += (size_t)sc.rows;
    if (pq_stats_ordered(c) && has_vals) {
        pq_stats_add(c, sc.stats->min.data, sc.stats->min.len);
        pq_stats_add(c, sc.stats->max.data, sc.stats->max.len);
    }
    counts->levels = sc.levels;
    counts->nulls = sc.nulls;
    counts->nans = sc.nans;
    counts->rows = sc.rows;
    return 1;
fail:
    w->failed = true;
    return -1;
}
