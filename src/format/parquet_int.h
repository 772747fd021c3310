/* Parquet internals shared by the writer, the reader and the footer code. */
#ifndef FLOE_FORMAT_PARQUET_INT_H
#define FLOE_FORMAT_PARQUET_INT_H

#include "format/parquet.h"
#include "format/thrift.h"

/* parquet.thrift enums */
enum {
    PQ_ENC_PLAIN = 0,
    PQ_ENC_PLAIN_DICT = 2,
    PQ_ENC_RLE = 3,
    PQ_ENC_BIT_PACKED = 4,
    PQ_ENC_DELTA_BP = 5,
    PQ_ENC_DELTA_LBA = 6,
    PQ_ENC_DELTA_BA = 7,
    PQ_ENC_RLE_DICT = 8,
    PQ_ENC_BSS = 9
};
enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICT = 2, PQ_PAGE_DATA_V2 = 3 };
enum {
    PQ_CODEC_NONE = 0,
    PQ_CODEC_SNAPPY = 1,
    PQ_CODEC_GZIP = 2,
    PQ_CODEC_LZO = 3,
    PQ_CODEC_BROTLI = 4,
    PQ_CODEC_LZ4 = 5,
    PQ_CODEC_ZSTD = 6,
    PQ_CODEC_LZ4_RAW = 7
};
enum {
    PQ_CT_UTF8 = 0,
    PQ_CT_MAP = 1,
    PQ_CT_MAP_KV = 2,
    PQ_CT_LIST = 3,
    PQ_CT_ENUM = 4,
    PQ_CT_DECIMAL = 5,
    PQ_CT_DATE = 6,
    PQ_CT_TIME_MILLIS = 7,
    PQ_CT_TIME_MICROS = 8,
    PQ_CT_TS_MILLIS = 9,
    PQ_CT_TS_MICROS = 10,
    PQ_CT_UINT_8 = 11,
    PQ_CT_INT_8 = 15,
    PQ_CT_JSON = 19
};

#define PQ_MAX_LEVEL 255

struct floe_pq_schema {
    floe_pq_node_t *nodes;
    int n, cap;
    int *parent_child_count;    /* per node: children */
    int *col_node;              /* per column: leaf node */
    int *node_col;              /* per node: column or -1 */
    int16_t *max_def, *max_rep; /* per column */
    int ncols;
};

/* Parquet codec number <-> floe codec; -1 when unsupported. */
int pq_codec_to_floe(int pq_codec, floe_codec_t *out);
int pq_codec_from_floe(floe_codec_t c);

/* Bytes per value of fixed-width physical types (0 for byte arrays). */
size_t pq_phys_width(floe_pq_phys_t p, int32_t type_length);

/* ---- encoders (parquet_enc.c) ---- */
static inline int pq_bit_width(uint64_t max)
{
    return max ? 64 - __builtin_clzll(max) : 0;
}
/* RLE/bit-packed hybrid of n values < 2^bw (no length prefix).  Returns 0 or -1 (OOM). */
int pq_rle_encode_u32(floe_buf_t *out, const uint32_t *v, size_t n, int bw);
int pq_rle_encode_u8(floe_buf_t *out, const uint8_t *v, size_t n, int bw);
/* DELTA_BINARY_PACKED of n values; is32 computes deltas in 32 bits. */
int pq_delta_encode(floe_buf_t *out, const int64_t *v, size_t n, bool is32);
int pq_delta_encode_i32(floe_buf_t *out, const int32_t *v, size_t n);
/* Bit-pack n 0/1 bytes LSB-first (PLAIN booleans). */
int pq_bool_pack(floe_buf_t *out, const uint8_t *v, size_t n);

/* ---- decoders: all check bounds; return 0 or -1 with err ---- */
typedef struct pq_rle_dec {
    const uint8_t *p, *end;
    int bw;
    uint32_t rle_left, rle_val;
    const uint8_t *bp;      /* data of the current bit-packed run */
    size_t bp_len;          /* its bytes */
    size_t bp_idx, bp_left; /* next value index in it, values left */
} pq_rle_dec_t;
void pq_rle_dec_init(pq_rle_dec_t *d, const uint8_t *p, size_t n, int bw);
/* Decode exactly n values into out; -1 when the data runs out or is bad. */
int pq_rle_dec_u32(pq_rle_dec_t *d, uint32_t *out, size_t n);
int pq_rle_dec_i16(pq_rle_dec_t *d, int16_t *out, size_t n, int16_t max);
/* Decode n values (each checked <= max) counting those equal to want into
 * *count, the first into *first; runs count whole, unexpanded. */
int pq_rle_count(pq_rle_dec_t *d, size_t n, uint32_t max, uint32_t want, uint64_t *count,
                 uint32_t *first);
/* DELTA_BINARY_PACKED: decode up to cap values; *consumed bytes used. */
int pq_delta_decode(const uint8_t *p, size_t n, int64_t *out, size_t count, bool is32,
                    size_t *consumed, floe_err_t *err);
/* Header value count of a DELTA_BINARY_PACKED stream. */
int pq_delta_count(const uint8_t *p, size_t n, size_t *count, floe_err_t *err);

/* ---- footer (parquet_meta.c) ---- */
typedef struct pq_stats {
    bool has_minmax;
    floe_buf_t min, max; /* PLAIN-encoded bound values */
    int64_t null_count;
} pq_stats_t;

typedef struct pq_chunk_meta {
    int phys;
    int codec;          /* parquet codec number */
    uint32_t encodings; /* bit set of PQ_ENC_* */
    int64_t num_values;
    int64_t total_uncompressed, total_compressed;
    int64_t data_page_offset, dict_page_offset; /* dict < 0: none */
    bool has_stats;
    pq_stats_t stats;
} pq_chunk_meta_t;

typedef struct pq_row_group_meta {
    int64_t num_rows, total_byte_size, file_offset, total_compressed;
    pq_chunk_meta_t *cols; /* ncols */
} pq_row_group_meta_t;

typedef struct pq_kv {
    char *key, *value;
} pq_kv_t;

/* Encode FileMetaData into out. */
int pq_footer_encode(floe_buf_t *out, const floe_pq_schema_t *s, int64_t num_rows,
                     const pq_row_group_meta_t *rgs, int nrg, const pq_kv_t *kv, int nkv,
                     const char *created_by, floe_err_t *err);

/* Decoded footer (reader side). */
typedef struct pq_file_meta {
    floe_pq_schema_t *schema;
    int64_t num_rows;
    pq_row_group_meta_t *rgs;
    int nrg;
    pq_kv_t *kv;
    int nkv;
    char *created_by;
} pq_file_meta_t;
int pq_footer_decode(const uint8_t *p, size_t n, pq_file_meta_t *m, floe_err_t *err);
void pq_file_meta_free(pq_file_meta_t *m);

/* A dictionary-encoded column chunk as its dictionary and indices. */
typedef struct pq_dict_chunk {
    void *dict; /* ndict entries in floe_pq_column_t's value layout (byte
                    * arrays: slices into the column's bytes) */
    size_t ndict;
    uint32_t *idx; /* per value (n_values of the column), each < ndict */
} pq_dict_chunk_t;
/* Decode chunk col of row group rg like floe_pq_read_column, but keep its
 * values as dictionary indices (out->values stays NULL; out->n_values
 * counts them): 1 with *out and *dc (caller frees both), 0 when the chunk
 * is not entirely dictionary-encoded (nothing decoded), -1 with *err. */
int pq_read_column_dict(floe_pq_reader_t *r, int rg, int col, floe_pq_column_t *out,
                        pq_dict_chunk_t *dc, floe_err_t *err);
void pq_dict_chunk_free(pq_dict_chunk_t *dc);

/* A column chunk as stored, described for copying it page by page. */
typedef struct pq_chunk_scan {
    const uint8_t *bytes; /* its pages, headers included (borrowed from the reader) */
    size_t len;
    int codec;                         /* parquet codec number */
    uint32_t encodings;                /* bit set of PQ_ENC_* of its pages */
    int64_t uncompressed;              /* headers plus uncompressed bodies */
    int64_t levels, nulls, rows, nans; /* counted from the pages' levels and values */
    const pq_stats_t *stats;           /* the chunk's statistics (NULL: none), borrowed */
} pq_chunk_scan_t;
/* Scan chunk col of row group rg of r (parquet_read.c): 1 with *out when
 * it has no dictionary and (with nans, for FLOAT/DOUBLE) PLAIN values only,
 * so its pages can be copied as they are; 0 when it must be decoded
 * instead; -1 with *err when it is corrupt.  With trust, the footer's
 * null count and row count are taken as they are; else (or when the
 * footer has none, or NaNs must be counted) levels are decoded, pages
 * decompressed, to count rows, nulls and NaNs, so a copy is checked as a
 * decode would be. */
int pq_chunk_scan(floe_pq_reader_t *r, int rg, int col, bool nans, bool trust, pq_chunk_scan_t *out,
                  floe_err_t *err);

/* Page header. */
typedef struct pq_page_header {
    int type;
    int32_t uncompressed, compressed;
    int32_t num_values; /* data & dict pages */
    int encoding;
    /* v2 */
    int32_t num_nulls, num_rows, def_len, rep_len;
    bool is_compressed;
} pq_page_header_t;
int pq_page_header_encode(floe_buf_t *out, const pq_page_header_t *h);
/* Decode a page header from p[0..n); *used = its length. */
int pq_page_header_decode(const uint8_t *p, size_t n, pq_page_header_t *h, size_t *used,
                          floe_err_t *err);

#endif
