/* Internals of the table reader (read.h) shared by read_rows.c (record
 * assembly, files, tables), read_value.c (leaf values as JSON) and
 * read_deletes.c (position and equality deletes). */
#ifndef FLOE_ICEBERG_READ_INT_H
#define FLOE_ICEBERG_READ_INT_H

#include "iceberg/read.h"

/* Leaf value i of column chunk c (node n of its file) as JSON appended to
 * b, typed by n and, when known, by the schema type ice, which wins for
 * promoted columns (an old int file under a long).  0, or -1 when out of
 * memory. */
int floe_ice_json_value(floe_buf_t *b, const floe_pq_node_t *n, const floe_ice_type_t *ice,
                        const floe_pq_column_t *c, size_t i);

/* One column of an equality key in one file (data or delete file): the
 * field's values row by row, rendered as JSON text so that a value in a
 * data file and the same value in a delete file give the same bytes, also
 * when one file holds it in an older (promoted) type. */
typedef struct floe_ice_key_col {
    int32_t id;
    const floe_ice_type_t *type;   /* the schema's; NULL when the schema lacks it */
    const floe_pq_node_t *node;    /* borrowed from the file's schema; NULL when the
                                       file lacks the field: null in every row */
    int col, max_def;              /* its leaf column and definition level */
    const floe_pq_column_t *chunk; /* the row group's chunk (borrowed) */
    size_t vpos;                   /* its next value */
} floe_ice_key_col_t;

/* Bind *k to field id of the file whose schema is ps (what names the file
 * in errors); schema gives the value type (may be NULL).  FLOE_EUNSUPPORTED
 * when the field is a struct, list or map, or sits inside a list or map;
 * FLOE_ECORRUPT when it is a float or double (the spec forbids them as
 * equality fields). */
int floe_ice_key_col_bind(floe_ice_key_col_t *k, const floe_pq_schema_t *ps, int32_t id,
                          const floe_ice_schema_t *schema, const char *what, floe_err_t *err);
/* Start a row group of nrows rows whose chunk of k's column is chunk
 * (borrowed until the next start; NULL when k has no column). */
int floe_ice_key_col_start(floe_ice_key_col_t *k, const floe_pq_column_t *chunk, int64_t nrows,
                           const char *what, floe_err_t *err);
/* Append the value of row `row` of the row group (rows in order, each
 * once) and a NUL byte to b: "null" for null, so null equals null. */
int floe_ice_key_col_put(floe_ice_key_col_t *k, size_t row, floe_buf_t *b, const char *what,
                         floe_err_t *err);

/* The rows of one equality delete file (or of several with the same
 * equality fields): their keys, sorted. */
typedef struct floe_ice_eq_set {
    int32_t *ids; /* equality field ids, ascending: the key's column order */
    size_t nids;
    floe_buf_t bytes; /* the keys back to back */
    struct floe_ice_eq_key {
        size_t off, len;
    } * keys;
    size_t nkeys, capkeys;
} floe_ice_eq_set_t;

struct floe_ice_deletes {
    int64_t *pos; /* deleted row positions, sorted */
    size_t npos, cappos;
    floe_ice_eq_set_t *eq; /* one per set of equality field ids */
    size_t neq;
};

/* The equality deletes of one data file: the key columns of every set of
 * dels, bound to that file, set after set. */
typedef struct floe_ice_eq_check {
    const floe_ice_deletes_t *dels; /* borrowed */
    floe_ice_key_col_t *kc;         /* kc[k].col: the leaf column to decode (-1: none) */
    size_t nkc;
    floe_buf_t key;
} floe_ice_eq_check_t;

/* Bind q (zeroed by the caller) to the file of Parquet schema ps.  Clear
 * with floe_ice_eq_check_clear, also after a failure. */
int floe_ice_eq_check_bind(floe_ice_eq_check_t *q, const floe_ice_deletes_t *dels,
                           const floe_pq_schema_t *ps, const floe_ice_schema_t *schema,
                           const char *what, floe_err_t *err);
/* Whether some equality delete matches row `row` of the row group started
 * (floe_ice_key_col_start on every q->kc[k]); rows in order, each once. */
int floe_ice_eq_check_row(floe_ice_eq_check_t *q, size_t row, bool *deleted, const char *what,
                          floe_err_t *err);
void floe_ice_eq_check_clear(floe_ice_eq_check_t *q);

/* Whether data file or delete file f is Parquet (no format: assumed). */
bool floe_ice_is_parquet(const floe_ice_data_file_t *f);

/* Whether key[0..len) (floe_ice_key_col_put's format) is in s. */
bool floe_ice_eq_set_has(const floe_ice_eq_set_t *s, const void *key, size_t len);

#endif
