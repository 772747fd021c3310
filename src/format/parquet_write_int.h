/* Parquet writer internals shared by parquet_write.c (pages, row groups),
 * parquet_stats.c (statistics) and parquet_dict.c (dictionary encoding). */
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

#endif
