/* The L1 buffer of a table-topic partition: rows held as columns.
 *
 * A floe_rows_t holds an inferred shape (a tree of typed, named nodes) and,
 * for every leaf, a column of Dremel definition/repetition levels plus the
 * non-null values, exactly what a Parquet page needs, so a flush writes
 * columns without touching rows again.
 *
 * Rows are appended one at a time between floe_rows_begin and
 * floe_rows_end; floe_rows_rollback forgets a row that turned out to be bad
 * (its columns and any fields it added), so a bad record never leaves half
 * a row behind.  JSON values are shredded by floe_rows_json (json_shred.c)
 * in one pass, without a DOM; a key never seen before, or a long field that
 * meets a fraction, evolves the shape at the row boundary and the row is
 * shredded again.
 *
 * Not thread-safe: one partition pipeline owns one floe_rows_t. */
#ifndef FLOE_TABLE_ROWS_H
#define FLOE_TABLE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"

typedef enum floe_tkind {
    FLOE_TK_BOOL = 1,
    FLOE_TK_INT,  /* int32 */
    FLOE_TK_LONG, /* int64 */
    FLOE_TK_DOUBLE,
    FLOE_TK_STRING, /* UTF-8 */
    FLOE_TK_BINARY,
    FLOE_TK_TIMESTAMPTZ, /* int64 microseconds since the epoch, UTC */
    FLOE_TK_STRUCT,
    FLOE_TK_LIST, /* kids[0] is the element */
    FLOE_TK_MAP,  /* kids[0] is the key (required), kids[1] the value */
    /* typed converters only (avro_shred.c); JSON never infers them */
    FLOE_TK_FLOAT,     /* 4-byte IEEE 754 */
    FLOE_TK_DATE,      /* int32 days since 1970-01-01 */
    FLOE_TK_TIME,      /* int64 microseconds since midnight */
    FLOE_TK_TIMESTAMP, /* int64 microseconds since the epoch, no zone */
    FLOE_TK_DECIMAL,   /* node precision/scale; values: big-endian two's
                        * complement, floe_decimal_bytes(precision) each */
    FLOE_TK_UUID,      /* 16 bytes */
    FLOE_TK_FIXED,     /* node length bytes */
} floe_tkind_t;

/* Bytes of a decimal of precision p as Parquet and Iceberg store it: the
 * fewest that hold 10^p - 1 in two's complement (1..16 for p <= 38). */
int floe_decimal_bytes(int precision);

/* Name of a kind as the Iceberg spec spells it ("long", "struct", ...). */
const char *floe_tkind_name(floe_tkind_t k);

typedef struct floe_rnode floe_rnode_t;
typedef struct floe_rcol floe_rcol_t;

struct floe_rnode {
    char *name; /* owned; "element" for list elements */
    size_t name_len;
    floe_tkind_t kind;
    bool required;
    int32_t field_id;     /* 0 until the table assigns one */
    int def;              /* definition level when this node is present */
    int rep;              /* repetition level of this node's instances */
    floe_rnode_t *parent; /* NULL for the root */
    floe_rnode_t **kids;  /* struct fields in order; list: the element */
    size_t nkids, capkids;
    floe_rcol_t *col;    /* the column of a primitive node, else NULL */
    uint64_t stamp;      /* object instance that last set this field */
    bool sys;            /* set only with floe_rows_put_* (e.g. _kafka) */
    bool pinned;         /* a long that may not widen (floe_tout_may_widen,
                          * a refused widening) */
    const char *pin_why; /* borrowed: what a refused fraction's error says
                          * (NULL: "a fraction") */
    bool hold;           /* a long the table committed: a fraction waits for
                          * the column to widen (floe_rows_held) instead of
                          * widening the buffer */
    size_t hint;         /* struct: index of the kid matched next, a guess */
    bool no_nulls;       /* optional, but no row holds a null in it (an upsert
                          * table's id column): may map to a required field */
    /* what the records' schema (Avro) says of a struct field: never null
     * (the table creates it required while it holds no data), or null
     * possible (a required table field becomes optional); neither: JSON */
    bool schema_non_null, schema_nullable;
    bool plain_name;          /* name is printable ASCII without '"' or '\\': a JSON
                            * key spells it byte for byte */
    int32_t precision, scale; /* FLOE_TK_DECIMAL */
    int32_t length;           /* FLOE_TK_FIXED */
};

/* A leaf column.  levels: one (def, rep) pair per entry; values: one per
 * entry whose def == node->def.  Fixed-width values (bool: 1 byte, int: 4,
 * long/double/timestamptz: 8, little-endian host order) sit in vals; for
 * string and binary, vals holds uint32 end offsets into bytes. */
struct floe_rcol {
    floe_rnode_t *node;
    floe_buf_t defs, reps; /* uint8 each; len = number of entries */
    floe_buf_t vals;
    floe_buf_t bytes;
    size_t nvals;
    /* marks taken by floe_rows_begin */
    size_t m_lev, m_vals, m_bytes, m_nvals;
};

typedef struct floe_rows_opts {
    bool widen_long_to_double; /* a fraction in a long field widens it; else the row is rejected */
    bool infer_timestamps; /* JSON strings holding RFC 3339 date-times make timestamptz fields */
    bool coerce;           /* a scalar of another JSON type converts when lossless ("42" -> long) */
    int max_depth;         /* nesting cap (default 32) */
    size_t max_leaves;     /* leaf-column cap (default 2048) */
} floe_rows_opts_t;

typedef struct floe_rows floe_rows_t;

/* opts may be NULL for defaults.  Returns NULL on allocation failure.
 * Caller frees with floe_rows_free. */
floe_rows_t *floe_rows_new(const floe_rows_opts_t *opts);
void floe_rows_free(floe_rows_t *r);

/* The root struct node: borrowed, valid until floe_rows_free. */
floe_rnode_t *floe_rows_root(floe_rows_t *r);
size_t floe_rows_count(const floe_rows_t *r);
/* Leaf columns in shape order (depth-first): borrowed, valid until the
 * next shape change or floe_rows_free. */
floe_rcol_t *const *floe_rows_leaves(const floe_rows_t *r, size_t *n);
/* Bytes held by the columns (levels, values, payloads). */
size_t floe_rows_bytes(const floe_rows_t *r);
/* Bumped on every shape change (field added, type widened). */
uint64_t floe_rows_shape_version(const floe_rows_t *r);
/* Values refused so far because a fraction met a pinned long field. */
uint64_t floe_rows_widen_refused(const floe_rows_t *r);

/* Add a field under a struct node (the root or a struct) before or between
 * rows.  Existing rows read null in it, so a required field may only be
 * added while the buffer holds no row.  Primitive kinds and STRUCT only
 * (structs get fields with further calls).  Returns the node (borrowed) or
 * NULL with *err set. */
floe_rnode_t *floe_rows_add_field(floe_rows_t *r, floe_rnode_t *parent, const char *name,
                                  floe_tkind_t kind, bool required, floe_err_t *err);
/* Make required field n optional (Iceberg's required -> optional), the
 * rows it holds kept: their definition levels move up by one. */
void floe_rows_make_optional(floe_rows_t *r, floe_rnode_t *n);
/* Add a map field (keys required, values optional) of primitive kinds
 * under a struct, on the same terms as floe_rows_add_field. */
floe_rnode_t *floe_rows_add_map(floe_rows_t *r, floe_rnode_t *parent, const char *name,
                                floe_tkind_t key_kind, floe_tkind_t value_kind, bool required,
                                floe_err_t *err);

/* Mark a field (and so its subtree) as set only through floe_rows_put_*:
 * a JSON key of the same name is rejected instead of shredded into it. */
static inline void floe_rows_mark_sys(floe_rnode_t *n)
{
    n->sys = true;
}

/* A child of a struct node by name, or NULL. */
floe_rnode_t *floe_rows_child(const floe_rnode_t *parent, const char *name);

/* Row protocol.  Between begin and end, fields are set with floe_rows_json
 * and the floe_rows_put_* calls; end fills every field not set with null
 * (failing if a required one was not set); rollback undoes the row. */
void floe_rows_begin(floe_rows_t *r);
int floe_rows_end(floe_rows_t *r, floe_err_t *err);
void floe_rows_rollback(floe_rows_t *r);

/* Shred one JSON object into the fields of `parent` (a struct node; the
 * root for a record value) for the current row, inferring and evolving the
 * shape as needed.  On failure (*err: FLOE_ECORRUPT for malformed JSON with
 * the byte position, FLOE_EINVAL for a value that does not fit the shape,
 * FLOE_ERANGE for a cap) the caller rolls the row back.
 * Empty objects, empty arrays and nulls in fields never seen before add no
 * column: there is no type to give them yet. */
int floe_rows_json(floe_rows_t *r, floe_rnode_t *parent, const uint8_t *json, size_t len,
                   floe_err_t *err);

/* Set a primitive field of a struct that is present in every row (the root
 * or a required struct under it) for the current row.  The value's C type
 * must match the node's kind.  Return 0, or -1 on allocation failure. */
int floe_rows_put_long(floe_rows_t *r, floe_rnode_t *n, int64_t v);
int floe_rows_put_int(floe_rows_t *r, floe_rnode_t *n, int32_t v);
int floe_rows_put_double(floe_rows_t *r, floe_rnode_t *n, double v);
int floe_rows_put_bool(floe_rows_t *r, floe_rnode_t *n, bool v);
int floe_rows_put_bytes(floe_rows_t *r, floe_rnode_t *n, const void *p, size_t len);
/* Null an optional field (a primitive, or a whole struct/list/map). */
int floe_rows_put_null(floe_rows_t *r, floe_rnode_t *n);
/* Set a map field of string/binary keys and values: n entries; vals[i]
 * with val_null[i] set is a null value.  Slices are copied. */
int floe_rows_put_map(floe_rows_t *r, floe_rnode_t *m, const floe_slice_t *keys,
                      const floe_slice_t *vals, const bool *val_null, size_t n);

/* After floe_rows_json failed on a fraction in a long field marked hold:
 * that field's id (the row is refused, the caller waits for the widening
 * before offering it again); 0 otherwise.  Reset by floe_rows_begin. */
int32_t floe_rows_held(const floe_rows_t *r);

/* Whether primitive node n got a non-null value in the row being built
 * (between floe_rows_begin and floe_rows_end). */
bool floe_rows_is_set(const floe_rows_t *r, const floe_rnode_t *n);

/* Forget every row but keep the shape (after a flush). */
void floe_rows_clear(floe_rows_t *r);

/* Promote leaf n in place to a wider kind (int -> long, float -> double,
 * long -> double; a decimal to a larger precision of the same scale, given
 * in precision), converting the values held.  0, or -1 with err when the
 * promotion is not one of these or memory runs out. */
int floe_rows_promote(floe_rows_t *r, floe_rnode_t *n, floe_tkind_t to, int32_t precision,
                      floe_err_t *err);

/* Whether a and b hold the same rows: the same shape (names and kinds
 * of every node, in order) and the same levels and values in every
 * column.  When not, what differs first goes to why[0..size). */
bool floe_rows_same(const floe_rows_t *a, const floe_rows_t *b, char *why, size_t size);

/* Read access for writers and tests.  Entry i of a column: def/rep levels;
 * value j (the j-th non-null entry). */
static inline int64_t floe_rcol_long(const floe_rcol_t *c, size_t j)
{
    int64_t v;
    memcpy(&v, c->vals.data + 8 * j, 8);
    return v;
}
static inline double floe_rcol_double(const floe_rcol_t *c, size_t j)
{
    double v;
    memcpy(&v, c->vals.data + 8 * j, 8);
    return v;
}
static inline int32_t floe_rcol_int(const floe_rcol_t *c, size_t j)
{
    int32_t v;
    memcpy(&v, c->vals.data + 4 * j, 4);
    return v;
}
static inline floe_slice_t floe_rcol_bytes(const floe_rcol_t *c, size_t j)
{
    uint32_t end, start = 0;
    memcpy(&end, c->vals.data + 4 * j, 4);
    if (j) memcpy(&start, c->vals.data + 4 * (j - 1), 4);
    return floe_slice(c->bytes.data + start, end - start);
}

#endif
