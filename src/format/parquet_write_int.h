/* Parquet writer internals shared by parquet_write.c (pages, row groups),
 * parquet_stats.c (statistics), parquet_dict.c (dictionary encoding) and
 * parquet_chunk.c (column chunks copied from a file read). */
#ifndef FLOE_FORMAT_PARQUET_WRITE_INT_H
#define FLOE_FORMAT_PARQUET_WRITE_INT_H

#include <string.h>

#include "format/parquet_int.h"

typedef struct pq_col {
    int node;
    floe_pq_phys_t phys;
    const floe_pq_node_t *spec;
    size_t width;  /* fixed-width bytes; 0 for byte arrays */
    size_t settle; /* page buffers stop growing near this */
    int16_t max_def, max_rep;
    int bw_def, bw_rep;
    /* open page (levels are at most 64: the schema caps nesting) */
    uint8_t *def, *rep;
    size_t nlev, cap_lev;
    size_t page_vals;
    size_t page_rows;
    int mode;
    bool decided; /* dictionary kept past the first page */
    /* dictionary */
    uint64_t *slots; /* hash << 32 | (entry index + 1); 0 = empty */
    size_t nslots;
    floe_buf_t dvals; /* fixed width: entries back to back; bytes: data */
    uint32_t *doff;   /* byte arrays: entry start offsets (n + 1) */
    size_t doff_cap;
    size_t dict_n;
    size_t dict_bytes; /* PLAIN size of the dictionary page */
    uint32_t *idx;
    size_t nidx, cap_idx;
    size_t plain_bytes; /* PLAIN size of the dictionary-encoded values so far */
    bool dict_used;     /* the chunk has dictionary-encoded pages */
    bool dict_failed;   /* a chunk of this file gave its dictionary up:
                                 * later chunks start in the fallback */
    /* fallback values */
    floe_buf_t vals;
    floe_buf_t lens; /* int32 lengths for DELTA_(LENGTH_)BYTE_ARRAY */
    /* statistics */
    bool has_minmax;
    floe_buf_t min, max;
    int64_t null_count;
    bool has_fbounds; /* bounds over every row group flushed */
    floe_buf_t fmin, fmax;
    /* chunk */
    floe_buf_t chunk;
    int64_t chunk_uncompressed;
    int64_t num_values;
    uint32_t encodings;
    size_t rows_pending;
} pq_col_t;

/* ---- parquet_stats.c ---- */

/* Unsigned integer annotations sort differently: leave them without bounds. */
static inline bool pq_stats_ordered(const pq_col_t *c)
{
    if (c->spec->logical == FLOE_PQ_LT_INT && !c->spec->is_signed) return false;
    if (c->phys == FLOE_PQ_BYTE_ARRAY && c->spec->logical == FLOE_PQ_LT_DECIMAL) return false;
    return true;
}

/* Fold one PLAIN-encoded value (n bytes) into the chunk's min/max; NaNs
 * are left out. */
void pq_stats_add(pq_col_t *c, const uint8_t *v, size_t n);
/* The same for n numeric values laid out per the column's type, in one
 * loop. */
void pq_stats_batch(pq_col_t *c, const uint8_t *v, size_t n);
/* Fold the closing chunk's bounds into the bounds over every row group. */
void pq_fbounds_add(pq_col_t *c);

/* Byte-array order: unsigned bytes, then length. */
static inline int pq_cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    int r = m ? memcmp(a, b, m) : 0;
    if (r) return r;
    return an < bn ? -1 : an > bn;
}

/* pq_cmp_bytes with the first 8 bytes compared as one big-endian word: most
 * pairs of distinct values differ there. */
static inline int pq_cmp_bytes_fast(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    if (an >= 8 && bn >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
    return pq_cmp_bytes(a, an, b, bn);
}

/* Statistics of n byte-array values.  Inline, with the comparisons above:
 * the writer's value loop calls it per batch, and inlined there it does
 * not spill registers around every memcmp. */
static inline void pq_stats_bytes(pq_col_t *c, const floe_slice_t *sl, size_t n)
{
    if (!n) return;
    size_t mn = 0, mx = 0;
    for (size_t i = 1; i < n; i++) {
        if (pq_cmp_bytes_fast(sl[i].ptr, sl[i].len, sl[mn].ptr, sl[mn].len) < 0) mn = i;
        else if (pq_cmp_bytes_fast(sl[i].ptr, sl[i].len, sl[mx].ptr, sl[mx].len) > 0)
            mx = i;
    }
    pq_stats_add(c, sl[mn].ptr, sl[mn].len);
    pq_stats_add(c, sl[mx].ptr, sl[mx].len);
}

/* ---- parquet_dict.c ---- */

/* Index of value v (n bytes) in the chunk's dictionary, inserting it if
 * new; -1 when out of memory. */
int64_t pq_dict_put(pq_col_t *c, const uint8_t *v, size_t n);
/* Dictionary entry e: *p borrows from the dictionary.  Inline: the
 * fallback re-encodes every value of a page through it. */
static inline void pq_dict_entry(const pq_col_t *c, size_t e, const uint8_t **p, size_t *n)
{
    if (c->width) {
        *p = c->dvals.data + e * c->width;
        *n = c->width;
    } else {
        *p = c->dvals.data + c->doff[e];
        *n = c->doff[e + 1] - c->doff[e];
    }
}

/* ---- parquet_write.c ---- */

enum { M_DICT, M_PLAIN, M_DELTA, M_DLBA };

struct floe_pq_scratch {
    floe_buf_t page, z, hdr; /* encoded page, compressed page, page header */
    floe_codec_ctx_t *cctx;  /* shared by writers of level `level` */
    int level;
};

/* Values given as indices into another chunk's dictionary (floe_pq_write_chunk). */
typedef struct dict_src {
    const uint8_t *vals;   /* its entries, in the reader's value layout */
    const uint32_t *idx;   /* per value: an entry */
    const uint32_t *remap; /* entry -> index in the column's own dictionary */
} dict_src_t;

struct floe_pq_writer {
    const floe_pq_schema_t *s;
    floe_pq_write_opts_t o;
    char *created_by;
    floe_pq_sink_fn sink;
    void *sink_ctx;
    floe_codec_ctx_t *cctx; /* the scratch's (shared) or own_cctx */
    floe_codec_ctx_t *own_cctx;
    int pq_codec;
    pq_col_t *cols;
    int ncols;
    uint64_t offset; /* bytes written to the sink */
    uint64_t rows, rg_rows;
    pq_row_group_meta_t *rgs;
    int nrg;
    size_t cap_rg;
    pq_kv_t *kv;
    int nkv;
    floe_pq_scratch_t own, *sc; /* sc: own or the caller's shared one */
    uint8_t *lev8;              /* int16 levels narrowed: def then rep */
    size_t cap_lev8;
    bool closed, failed;
};

/* The encoding of a column once it has no dictionary. */
static inline int pq_fallback_mode(const floe_pq_writer_t *w, const pq_col_t *c)
{
    if (!w->o.delta) return M_PLAIN;
    if (c->phys == FLOE_PQ_INT32 || c->phys == FLOE_PQ_INT64) return M_DELTA;
    if (c->phys == FLOE_PQ_BYTE_ARRAY) return M_DLBA;
    return M_PLAIN;
}

/* Append n raw bytes; the buffer was reserved by the caller's batch
 * reservation or grows here. */
static inline int pq_app(floe_buf_t *b, const void *p, size_t n)
{
    if (b->cap - b->len < n && floe_buf_reserve(b, n) < 0) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/* Append one value in a non-dictionary mode. */
static inline int pq_put_fallback(pq_col_t *c, const uint8_t *v, size_t n)
{
    int rc = 0;
    switch (c->mode) {
    case M_PLAIN:
        if (!c->width) {
            uint32_t l = (uint32_t)n;
            rc = pq_app(&c->vals, &l, 4); /* little-endian hosts only (x86-64, arm64) */
        }
        if (!rc) rc = pq_app(&c->vals, v, n);
        break;
    case M_DELTA: {
        int64_t x;
        if (c->phys == FLOE_PQ_INT32) {
            int32_t y;
            memcpy(&y, v, 4);
            x = y;
        } else
            memcpy(&x, v, 8);
        rc = pq_app(&c->vals, &x, 8);
        break;
    }
    default: { /* DLBA (DELTA_BYTE_ARRAY chosen per page) */
        int32_t l = (int32_t)n;
        rc = pq_app(&c->lens, &l, 4);
        if (!rc) rc = pq_app(&c->vals, v, n);
        break;
    }
    }
    if (rc == 0 && pq_stats_ordered(c)) pq_stats_add(c, v, n);
    return rc;
}

/* The column col of w, checked to exist and to take the levels given;
 * NULL with *err otherwise. */
pq_col_t *pq_column_for(floe_pq_writer_t *w, int col, size_t n_levels, bool has_def, bool has_rep,
                        floe_err_t *err);
/* The levels (unchecked) and values of one batch into column c; values
 * come from ds instead when it is not NULL. */
int pq_write_levels(floe_pq_writer_t *w, pq_col_t *c, size_t n_levels, const uint8_t *def,
                    const uint8_t *rep, const void *values, size_t n_values, const dict_src_t *ds,
                    floe_err_t *err);
/* Leave dictionary mode; with drop, the open page's values are re-encoded
 * and the dictionary freed. */
int pq_dict_abandon(floe_pq_writer_t *w, pq_col_t *c, bool drop, floe_err_t *err);
/* Encode the open page of c and append it to the column chunk. */
int pq_page_flush(floe_pq_writer_t *w, pq_col_t *c, floe_err_t *err);
/* Room for extra more bytes in a buffer that may grow large (column
 * chunks); -1 when out of memory. */
int pq_big_reserve(floe_buf_t *b, size_t extra);

/* ---- parquet_chunk.c ---- */

/* Append n values given as dictionary indices ds->idx[from..from+n). */
int pq_put_dict_src(pq_col_t *c, const dict_src_t *ds, size_t from, size_t n, floe_err_t *err);

#endif
