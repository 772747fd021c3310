/* Iceberg types, schemas and single values.
 *
 * A schema is a tree of floe_ice_type_t nodes.  Struct, list and map nodes
 * hold floe_ice_field_t children (list: one "element" field; map: "key" and
 * "value"), each with its field id, so nested ids are explicit everywhere.
 * These are plain value types (like iceberg-cpp's): every node and string is
 * malloc'd and owned by its parent; floe_ice_type_free frees a whole tree.
 * Values (floe_ice_value_t) carry partition values and column bounds; their
 * byte payloads are owned by the value (free with floe_ice_value_clear). */
#ifndef FLOE_ICEBERG_TYPES_H
#define FLOE_ICEBERG_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef enum floe_ice_kind {
    FLOE_ICE_BOOLEAN = 1,
    FLOE_ICE_INT,
    FLOE_ICE_LONG,
    FLOE_ICE_FLOAT,
    FLOE_ICE_DOUBLE,
    FLOE_ICE_DECIMAL,
    FLOE_ICE_DATE,
    FLOE_ICE_TIME,
    FLOE_ICE_TIMESTAMP,
    FLOE_ICE_TIMESTAMPTZ,
    FLOE_ICE_STRING,
    FLOE_ICE_UUID,
    FLOE_ICE_FIXED,
    FLOE_ICE_BINARY,
    FLOE_ICE_STRUCT,
    FLOE_ICE_LIST,
    FLOE_ICE_MAP,
} floe_ice_kind_t;

typedef struct floe_ice_type floe_ice_type_t;

typedef struct floe_ice_field {
    int32_t id;
    char *name; /* owned */
    bool required;
    floe_ice_type_t *type; /* owned */
    char *doc;             /* owned, may be NULL */
} floe_ice_field_t;

struct floe_ice_type {
    floe_ice_kind_t kind;
    int32_t precision, scale; /* decimal */
    int32_t length;           /* fixed */
    size_t nfields;           /* struct: n; list: 1 (element); map: 2 (key, value) */
    floe_ice_field_t *fields; /* owned array */
};

typedef struct floe_ice_schema {
    int32_t schema_id;
    floe_ice_type_t *root;   /* owned; kind STRUCT */
    int32_t *identifier_ids; /* owned */
    size_t n_identifier_ids;
} floe_ice_schema_t;

/* ---- types ---- */

static inline bool floe_ice_kind_is_primitive(floe_ice_kind_t k)
{
    return k != FLOE_ICE_STRUCT && k != FLOE_ICE_LIST && k != FLOE_ICE_MAP;
}

/* A new primitive node; NULL on allocation failure.  Caller frees with
 * floe_ice_type_free (or hands it to a parent). */
floe_ice_type_t *floe_ice_type_prim(floe_ice_kind_t kind);
floe_ice_type_t *floe_ice_type_decimal(int32_t precision, int32_t scale);
floe_ice_type_t *floe_ice_type_fixed(int32_t length);
floe_ice_type_t *floe_ice_type_struct(void);
/* List and map take ownership of the element/key/value types (also on
 * failure, when they are freed). */
floe_ice_type_t *floe_ice_type_list(int32_t element_id, bool element_required,
                                    floe_ice_type_t *element);
floe_ice_type_t *floe_ice_type_map(int32_t key_id, floe_ice_type_t *key, int32_t value_id,
                                   bool value_required, floe_ice_type_t *value);
/* Append a field to a struct node; takes ownership of `type` (freed on
 * failure); copies name and doc.  Returns 0 or -1 (ENOMEM). */
int floe_ice_struct_add(floe_ice_type_t *st, int32_t id, const char *name, bool required,
                        floe_ice_type_t *type, const char *doc);

void floe_ice_type_free(floe_ice_type_t *t);
/* Deep copy; NULL on allocation failure. */
floe_ice_type_t *floe_ice_type_dup(const floe_ice_type_t *t);
bool floe_ice_type_equal(const floe_ice_type_t *a, const floe_ice_type_t *b);

/* Primitive type names as in the JSON spec: "int", "decimal(9,2)",
 * "fixed[16]".  Writes into buf (>= 32 bytes); returns buf. */
const char *floe_ice_type_name(const floe_ice_type_t *t, char *buf, size_t size);
/* Parse a primitive type name; NULL with *err on unknown names. */
floe_ice_type_t *floe_ice_type_parse(const char *name, floe_err_t *err);

/* ---- schemas ---- */

/* Takes ownership of root (a STRUCT).  NULL on allocation failure (root is
 * freed). */
floe_ice_schema_t *floe_ice_schema_new(int32_t schema_id, floe_ice_type_t *root);
void floe_ice_schema_free(floe_ice_schema_t *s);
floe_ice_schema_t *floe_ice_schema_dup(const floe_ice_schema_t *s);
/* Same fields, ids and identifier ids (schema id ignored). */
bool floe_ice_schema_same(const floe_ice_schema_t *a, const floe_ice_schema_t *b);

/* Find a field by id anywhere in the tree; borrowed pointer or NULL. */
const floe_ice_field_t *floe_ice_schema_find(const floe_ice_schema_t *s, int32_t id);
/* Find a field by dotted name ("a.b.c"; list elements as "l.element", map
 * parts as "m.key"/"m.value"); borrowed pointer or NULL. */
const floe_ice_field_t *floe_ice_schema_find_name(const floe_ice_schema_t *s, const char *dotted);
/* Full dotted name of field `id` into buf; returns buf or NULL. */
const char *floe_ice_schema_field_name(const floe_ice_schema_t *s, int32_t id, char *buf,
                                       size_t size);
/* Highest field id used in the tree (0 when empty). */
int32_t floe_ice_schema_max_id(const floe_ice_schema_t *s);
/* Check ids are unique and positive, names unique per struct, identifier
 * ids point at required primitive fields.  Returns 0 or -1 with *err. */
int floe_ice_schema_validate(const floe_ice_schema_t *s, floe_err_t *err);

/* ---- schema evolution ----
 * Each call changes schema s in place (work on a floe_ice_schema_dup and
 * add the result with an add-schema update).  Incompatible changes are
 * refused with EINVAL and a message naming the column; s is then unchanged. */

/* Add an optional column `name` to the struct at dotted path `parent`
 * (NULL or "" for top level; "l.element" / "m.value" reach into lists and
 * maps).  Takes ownership of type (freed on failure); every field id inside
 * it is (re)assigned from *last_column_id + 1, which is advanced. */
int floe_ice_schema_add_column(floe_ice_schema_t *s, int32_t *last_column_id, const char *parent,
                               const char *name, floe_ice_type_t *type, const char *doc,
                               floe_err_t *err);
/* Make a required column optional. */
int floe_ice_schema_make_optional(floe_ice_schema_t *s, const char *name, floe_err_t *err);
/* Widen a primitive column: int->long, float->double, decimal(P,S) ->
 * decimal(P2,S) with P2 >= P.  `to` is borrowed. */
int floe_ice_schema_promote(floe_ice_schema_t *s, const char *name, const floe_ice_type_t *to,
                            floe_err_t *err);
/* Rename a column (the id stays). */
int floe_ice_schema_rename(floe_ice_schema_t *s, const char *name, const char *new_name,
                           floe_err_t *err);

/* ---- single values ---- */

typedef struct floe_ice_value {
    floe_ice_kind_t kind; /* 0 with is_null for an untyped null */
    bool is_null;
    union {
        bool b;
        int32_t i; /* int, date */
        int64_t l; /* long, time, timestamp(tz) (micros) */
        float f;
        double d;
    } v;
    /* string (UTF-8), binary, fixed, uuid (16 bytes), decimal (unscaled,
     * big-endian two's complement, minimal length) */
    uint8_t *bytes; /* owned */
    size_t len;
    int32_t scale; /* decimal */
} floe_ice_value_t;

void floe_ice_value_clear(floe_ice_value_t *v);
int floe_ice_value_copy(floe_ice_value_t *dst, const floe_ice_value_t *src);
/* Constructors for byte-backed values: copy the bytes.  0 or -1 (ENOMEM). */
int floe_ice_value_set_bytes(floe_ice_value_t *v, floe_ice_kind_t kind, const void *p, size_t n);
/* Decimal from a 64-bit unscaled value. */
int floe_ice_value_set_decimal64(floe_ice_value_t *v, int64_t unscaled, int32_t scale);
/* Unscaled decimal as __int128 (values up to precision 38). */
__int128 floe_ice_value_decimal(const floe_ice_value_t *v);
int floe_ice_value_set_decimal(floe_ice_value_t *v, __int128 unscaled, int32_t scale);
/* The exact text of the decimal unscaled * 10^-scale ("-0.05" for -5,
 * scale 2) appended to out; a scale beyond 58 digits is cut there.  0 or
 * -1 (ENOMEM). */
int floe_ice_decimal_text(floe_buf_t *out, __int128 unscaled, int32_t scale);

/* Compare two non-null values of the same kind: <0, 0, >0.  Strings and
 * binaries compare bytewise unsigned (UTF-8 order = code point order). */
int floe_ice_value_cmp(const floe_ice_value_t *a, const floe_ice_value_t *b);
bool floe_ice_value_eq(const floe_ice_value_t *a, const floe_ice_value_t *b);

/* The spec's single-value binary serialization (Appendix D), appended to
 * out.  Nulls are not serializable (return -1, EINVAL). */
int floe_ice_value_serialize(const floe_ice_value_t *v, floe_buf_t *out, floe_err_t *err);
/* Inverse, for type t (primitive); bytes are copied.  Returns 0 or -1 with
 * ECORRUPT on a wrong length. */
int floe_ice_value_deserialize(const floe_ice_type_t *t, const uint8_t *p, size_t n,
                               floe_ice_value_t *out, floe_err_t *err);

/* Days since 1970-01-01 of a civil date, and back. */
int32_t floe_ice_days_from_civil(int64_t y, unsigned m, unsigned d);
void floe_ice_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
