/* Parquet files: schema trees, a streaming columnar writer and a reader.
 *
 * SCHEMA.  A tree of nodes added parent-first with floe_pq_schema_add().
 * Top-level fields have parent -1 (the root is implicit).  Groups have phys
 * FLOE_PQ_GROUP; leaves carry a physical type and an optional logical type.
 * Leaf columns are numbered in depth-first order of the tree (Parquet's
 * column order); floe_pq_schema_column_of() maps a leaf node to its column.
 * Standard nesting, which every reader expects:
 *   struct: optional group s { optional int32 a; ... }
 *   list:   optional group l (LIST) { repeated group list { optional T element; } }
 *   map:    optional group m (MAP)  { repeated group key_value {
 *               required K key; optional V value; } }
 *
 * WRITER.  For each batch of rows, feed every leaf column its definition
 * and repetition levels and its non-null values (one value per level whose
 * definition level is the column's max), then call floe_pq_writer_rows()
 * with the number of rows the batch held.  A batch holds whole rows (its
 * first repetition level is 0).  Values are borrowed only during the call.
 * Value arrays by physical type:
 *   BOOLEAN uint8_t (0/1), INT32 int32_t, INT64 int64_t, FLOAT float,
 *   DOUBLE double, BYTE_ARRAY and FIXED floe_slice_t (FIXED: type_length
 *   bytes each; decimals big-endian two's complement).
 * def may be NULL when the column's max definition level is 0, rep when its
 * max repetition level is 0.  Pages are cut at page_size, row groups at
 * row_group_size (memory stays bounded by about one row group);
 * floe_pq_writer_bytes() tells callers when to roll to a new file.
 *
 *   floe_pq_schema_t *s = floe_pq_schema_new();
 *   floe_pq_node_t n = floe_pq_leaf("id", FLOE_PQ_REQUIRED, FLOE_PQ_INT64, 1);
 *   floe_pq_schema_add(s, &n, &err);
 *   floe_pq_write_opts_t o = floe_pq_write_opts_default();   // zstd
 *   floe_pq_writer_t *w = floe_pq_writer_new(s, &o, sink, ctx, &err);
 *   floe_pq_writer_set_kv(w, "iceberg.schema", json, &err);
 *   floe_pq_write_column(w, 0, n, NULL, NULL, ids, n, &err);
 *   floe_pq_writer_rows(w, n, &err);
 *   floe_pq_writer_close(w, &err); floe_pq_writer_free(w);
 *
 * Writers and readers are not thread-safe: one thread at a time per object.
 *
 * READER.  floe_pq_reader_open() parses the footer of a whole file held in
 * memory; floe_pq_read_column() decodes one column chunk of one row group
 * into levels and values (same value layout as the writer; INT96 comes as
 * 12-byte slices).  Project by field id with floe_pq_schema_find_field()
 * and floe_pq_schema_columns_under().  Every offset, length and count read
 * from the file is checked; bad input fails with FLOE_ECORRUPT. */
#ifndef FLOE_FORMAT_PARQUET_H
#define FLOE_FORMAT_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/compress.h"
#include "util/err.h"

typedef enum floe_pq_phys {
    FLOE_PQ_GROUP = -1,
    FLOE_PQ_BOOLEAN = 0,
    FLOE_PQ_INT32 = 1,
    FLOE_PQ_INT64 = 2,
    FLOE_PQ_INT96 = 3,
    FLOE_PQ_FLOAT = 4,
    FLOE_PQ_DOUBLE = 5,
    FLOE_PQ_BYTE_ARRAY = 6,
    FLOE_PQ_FIXED = 7
} floe_pq_phys_t;

typedef enum floe_pq_rep {
    FLOE_PQ_REQUIRED = 0,
    FLOE_PQ_OPTIONAL = 1,
    FLOE_PQ_REPEATED = 2
} floe_pq_rep_t;

typedef enum floe_pq_logical {
    FLOE_PQ_LT_NONE = 0,
    FLOE_PQ_LT_STRING, /* BYTE_ARRAY, UTF-8 */
    FLOE_PQ_LT_ENUM,
    FLOE_PQ_LT_JSON,
    FLOE_PQ_LT_UUID,      /* FIXED[16] */
    FLOE_PQ_LT_DECIMAL,   /* INT32, INT64, FIXED or BYTE_ARRAY; precision, scale */
    FLOE_PQ_LT_DATE,      /* INT32 days since 1970-01-01 */
    FLOE_PQ_LT_TIME,      /* INT64 (us, ns) or INT32 (ms); unit, utc */
    FLOE_PQ_LT_TIMESTAMP, /* INT64; unit, utc */
    FLOE_PQ_LT_INT,       /* bit_width, is_signed */
    FLOE_PQ_LT_LIST,      /* group */
    FLOE_PQ_LT_MAP,       /* group */
    FLOE_PQ_LT_UNKNOWN    /* a logical type this reader does not know */
} floe_pq_logical_t;

typedef enum floe_pq_unit {
    FLOE_PQ_MILLIS = 0,
    FLOE_PQ_MICROS = 1,
    FLOE_PQ_NANOS = 2
} floe_pq_unit_t;

/* One schema node.  name is copied by floe_pq_schema_add. */
typedef struct floe_pq_node {
    const char *name;
    int parent; /* node index, or -1 for a top-level field */
    floe_pq_rep_t rep;
    floe_pq_phys_t phys; /* FLOE_PQ_GROUP for groups */
    floe_pq_logical_t logical;
    int32_t type_length;      /* FIXED only */
    int32_t precision, scale; /* DECIMAL */
    int32_t field_id;         /* < 0: none */
    floe_pq_unit_t unit;      /* TIME, TIMESTAMP */
    bool utc;                 /* TIME, TIMESTAMP: isAdjustedToUTC */
    int8_t bit_width;         /* INT */
    bool is_signed;           /* INT */
} floe_pq_node_t;

/* Convenience initialisers (parent -1; set .parent for nested nodes). */
floe_pq_node_t floe_pq_leaf(const char *name, floe_pq_rep_t rep, floe_pq_phys_t phys,
                            int32_t field_id);
floe_pq_node_t floe_pq_group(const char *name, floe_pq_rep_t rep, floe_pq_logical_t lt,
                             int32_t field_id);

typedef struct floe_pq_schema floe_pq_schema_t;

/* Caller frees with floe_pq_schema_free.  NULL when out of memory. */
floe_pq_schema_t *floe_pq_schema_new(void);
void floe_pq_schema_free(floe_pq_schema_t *s);
/* Add a node (copied); parents must exist already.  Returns the new node's
 * index, or -1 with err filled (bad parent, bad type combination). */
int floe_pq_schema_add(floe_pq_schema_t *s, const floe_pq_node_t *n, floe_err_t *err);

/* Accessors; pointers are borrowed from the schema. */
int floe_pq_schema_num_nodes(const floe_pq_schema_t *s);
const floe_pq_node_t *floe_pq_schema_node(const floe_pq_schema_t *s, int node);
int floe_pq_schema_num_children(const floe_pq_schema_t *s, int node); /* node -1: root */
int floe_pq_schema_child(const floe_pq_schema_t *s, int node, int i);
int floe_pq_schema_num_columns(const floe_pq_schema_t *s);
int floe_pq_schema_column_node(const floe_pq_schema_t *s, int col);
int floe_pq_schema_column_of(const floe_pq_schema_t *s, int node); /* -1: not a leaf */
int floe_pq_schema_max_def(const floe_pq_schema_t *s, int col);
int floe_pq_schema_max_rep(const floe_pq_schema_t *s, int col);
/* Node with this field id, or -1. */
int floe_pq_schema_find_field(const floe_pq_schema_t *s, int32_t field_id);
/* Leaf columns under node (itself if a leaf) into cols[0..max); returns the
 * count (may exceed max: then only max were stored). */
int floe_pq_schema_columns_under(const floe_pq_schema_t *s, int node, int *cols, int max);

/* ---- writer ---- */

/* Receives the file's bytes in order.  Returns 0, or -1 with err filled. */
typedef int (*floe_pq_sink_fn)(void *ctx, const void *p, size_t n, floe_err_t *err);

typedef struct floe_pq_write_opts {
    floe_codec_t codec;     /* default zstd */
    int level;              /* codec level; default 1 (zstd), 0 = the codec's own default */
    size_t page_size;       /* uncompressed page target, default 1 MiB */
    size_t row_group_size;  /* buffered bytes per row group, default 64 MiB */
    size_t dict_limit;      /* dictionary bytes before falling back, default 1 MiB */
    bool dictionary;        /* try RLE_DICTIONARY (default true) */
    bool delta;             /* DELTA_* encodings where they win (default true) */
    bool delta_byte_array;  /* with delta: DELTA_BYTE_ARRAY allowed for strings
                                 (default true); off, strings use
                                 DELTA_LENGTH_BYTE_ARRAY, which more readers
                                 decode in v1 pages (icebird's hyparquet 1.19) */
    bool page_v2;           /* write DATA_PAGE_V2 headers (default false) */
    const char *created_by; /* default "floe" ; borrowed until writer_new returns */
    struct floe_pq_scratch *scratch; /* shared temporaries (borrowed; must outlive
                                 the writer); NULL: the writer has its own */
} floe_pq_write_opts_t;

/* The temporaries a writer encodes and compresses a page in (about two
 * pages' worth).  Writers used by one thread at a time may share one, so
 * that many open files hold them once.  Caller frees with
 * floe_pq_scratch_free after the last writer using it is freed.  NULL when
 * out of memory. */
typedef struct floe_pq_scratch floe_pq_scratch_t;
floe_pq_scratch_t *floe_pq_scratch_new(void);
void floe_pq_scratch_free(floe_pq_scratch_t *s);

floe_pq_write_opts_t floe_pq_write_opts_default(void);

typedef struct floe_pq_writer floe_pq_writer_t;
typedef struct floe_pq_reader floe_pq_reader_t;

/* A writer over schema s (borrowed: must outlive the writer) emitting to
 * sink(ctx, ...).  The 4-byte magic is written at once.  Caller frees with
 * floe_pq_writer_free.  Returns NULL with err filled on failure. */
floe_pq_writer_t *floe_pq_writer_new(const floe_pq_schema_t *s, const floe_pq_write_opts_t *o,
                                     floe_pq_sink_fn sink, void *ctx, floe_err_t *err);
/* Add (or replace) a key-value metadata entry; both strings are copied. */
int floe_pq_writer_set_kv(floe_pq_writer_t *w, const char *key, const char *value, floe_err_t *err);
/* Append n_levels entries to leaf column col (see the header comment). */
int floe_pq_write_column(floe_pq_writer_t *w, int col, size_t n_levels, const int16_t *def,
                         const int16_t *rep, const void *values, size_t n_values, floe_err_t *err);
/* The same with levels as bytes (levels never exceed 64), as row buffers
 * hold them: no widening copy.  Levels and values are borrowed during the
 * call only. */
int floe_pq_write_column8(floe_pq_writer_t *w, int col, size_t n_levels, const uint8_t *def,
                          const uint8_t *rep, const void *values, size_t n_values, floe_err_t *err);
/* What a column chunk copied by floe_pq_write_chunk held. */
typedef struct floe_pq_chunk_counts {
    int64_t levels; /* entries (value_count) */
    int64_t nulls;  /* entries below the max definition level */
    int64_t nans;   /* NaN values (FLOAT and DOUBLE) */
    int64_t rows;
} floe_pq_chunk_counts_t;

/* Append column chunk rcol of row group rg of reader r (borrowed for the
 * call) to column col as it is stored: its compressed pages are copied,
 * not decoded and encoded again.  Done only when the copy gives the file a
 * decode-and-write would: same physical type and max levels, the writer's
 * codec, no dictionary pages (one dictionary per chunk), PLAIN floats
 * (NaNs are counted), and min/max statistics where the column keeps
 * statistics.  The pages' levels are still decoded to count rows and
 * nulls, so a copy is checked as a decode would be.  Returns 1 when
 * copied (*counts filled; the column holds the chunk's rows, as after
 * floe_pq_write_column), 0 when not (nothing changed: write the decoded
 * column instead), -1 with *err (a corrupt chunk, ENOMEM). */
int floe_pq_write_chunk(floe_pq_writer_t *w, int col, floe_pq_reader_t *r, int rg, int rcol,
                        floe_pq_chunk_counts_t *counts, floe_err_t *err);
/* Mark n_rows complete rows: every column must have received exactly the
 * levels of those rows.  May flush a row group to the sink. */
int floe_pq_writer_rows(floe_pq_writer_t *w, size_t n_rows, floe_err_t *err);
/* Flush the buffered rows as a row group now (no-op when none). */
int floe_pq_writer_flush(floe_pq_writer_t *w, floe_err_t *err);
/* Bytes written to the sink plus bytes buffered for the open row group. */
uint64_t floe_pq_writer_bytes(const floe_pq_writer_t *w);
uint64_t floe_pq_writer_num_rows(const floe_pq_writer_t *w);
/* Lower and upper bound of column col over the row groups flushed so far
 * (PLAIN-encoded values in the column's sort order, NaN left out, not
 * truncated; none for unsigned or decimal byte-array annotations): what
 * table metrics such as Iceberg's need without a second pass.  false when
 * there is none.  The slices are borrowed until the next call on w. */
bool floe_pq_writer_bounds(const floe_pq_writer_t *w, int col, floe_slice_t *min,
                           floe_slice_t *max);
/* Bytes of column col in the row groups flushed so far (its chunks as
 * written, compressed, page headers included): Iceberg's column_sizes. */
uint64_t floe_pq_writer_column_bytes(const floe_pq_writer_t *w, int col);
/* Flush and write the footer; the writer accepts nothing afterwards. */
int floe_pq_writer_close(floe_pq_writer_t *w, floe_err_t *err);
void floe_pq_writer_free(floe_pq_writer_t *w);

/* A sink appending to a floe_buf_t (ctx), and one writing to a FILE *. */
int floe_pq_sink_buf(void *ctx, const void *p, size_t n, floe_err_t *err);
int floe_pq_sink_file(void *ctx, const void *p, size_t n, floe_err_t *err);

/* ---- reader ---- */

/* Parse the footer of the file data[0..len) (borrowed until free).  Caller
 * frees with floe_pq_reader_free.  NULL with err filled on bad input. */
floe_pq_reader_t *floe_pq_reader_open(const uint8_t *data, size_t len, floe_err_t *err);
/* Same over a file read into memory (the reader owns the copy). */
floe_pq_reader_t *floe_pq_reader_open_file(const char *path, floe_err_t *err);
void floe_pq_reader_free(floe_pq_reader_t *r);

const floe_pq_schema_t *floe_pq_reader_schema(const floe_pq_reader_t *r);
int64_t floe_pq_reader_num_rows(const floe_pq_reader_t *r);
int floe_pq_reader_num_row_groups(const floe_pq_reader_t *r);
int64_t floe_pq_reader_row_group_rows(const floe_pq_reader_t *r, int rg);
/* Value of a key-value metadata entry (borrowed, NUL-terminated), or NULL. */
const char *floe_pq_reader_kv(const floe_pq_reader_t *r, const char *key);
const char *floe_pq_reader_created_by(const floe_pq_reader_t *r);

/* Bytes per value in the value arrays the writer takes and the reader
 * returns, for physical type p (floe_slice_t for byte arrays, fixed and
 * INT96). */
size_t floe_pq_value_size(floe_pq_phys_t p);

/* Decoded column chunk.  Owns its memory: free with floe_pq_column_free
 * (slices point into it).  def/rep are NULL when the max level is 0. */
typedef struct floe_pq_column {
    size_t n_levels;
    int16_t *def, *rep;
    size_t n_values;
    void *values;
    floe_pq_phys_t phys;
    floe_buf_t bytes; /* backing store of byte-array values */
} floe_pq_column_t;

/* Decode column col of row group rg into *out (initialised here). */
int floe_pq_read_column(floe_pq_reader_t *r, int rg, int col, floe_pq_column_t *out,
                        floe_err_t *err);
void floe_pq_column_free(floe_pq_column_t *c);

#endif
