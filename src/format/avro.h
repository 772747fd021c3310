/* Apache Avro: schemas, values, binary encoding, object container files and
 * writer->reader schema resolution.
 *
 * Why our own: Iceberg manifests need custom schema attributes (field-id,
 * element-id, key-id, value-id) kept in the container header and custom
 * header metadata keys; Debian's libavro drops the first and cannot write
 * the second.  Facts come from the Avro 1.11 specification.
 *
 * The pieces:
 *   schema    floe_avro_schema_t, parsed from JSON, every attribute kept;
 *             one root owns the whole tree (named types may be shared or
 *             recursive inside it).
 *   value     floe_avro_value_t, a datum shaped by a schema node.  Values
 *             live in a caller's floe_arena_t and are freed with it; they
 *             borrow their schema, which must outlive them.
 *   binary    floe_avro_encode / floe_avro_decode / floe_avro_skip.
 *   container floe_avro_writer_t / floe_avro_reader_t ("Obj\x01" files).
 *   resolve   floe_avro_resolver_t: decode bytes written with one schema
 *             as values of another (the spec's schema resolution).
 *
 * A typical Iceberg manifest write:
 *
 *   floe_avro_schema_t *s;
 *   floe_avro_schema_parse(json, strlen(json), &s, err);
 *   floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;   // codec null
 *   floe_avro_writer_t *w;
 *   floe_avro_writer_new(&w, s, &o, err);
 *   floe_avro_writer_set_meta_str(w, "format-version", "2", err);
 *   floe_arena_t a; floe_arena_init(&a, 0, 0);
 *   floe_avro_value_t *e = floe_avro_value_new(&a, s);
 *   floe_avro_rec_set_int(e, "status", 1, err);
 *   floe_avro_value_t *df = floe_avro_field(e, "data_file");
 *   floe_avro_rec_set_string(df, "file_path", path, err);
 *   floe_avro_value_t *m = floe_avro_field(df, "column_sizes");
 *   floe_avro_value_t *kv = floe_avro_array_append(m, err); // array<record>
 *   ...
 *   floe_avro_writer_append(w, e, err);
 *   floe_avro_writer_finish(w, err);
 *   floe_slice_t bytes = floe_avro_writer_bytes(w);           // the file
 *
 * Unset record fields encode as their schema default, else as null when the
 * field's type is a union with a null branch (unset arrays and maps as
 * empty, unset records field by field), else encoding fails naming the
 * field.  Setters on a union value pick the branch that fits the
 * value (set_long picks a long branch, set_null the null branch, ...);
 * getters see through unions.
 *
 * Thread safety: a schema is immutable after parsing and may be shared by
 * threads; writers, readers, resolvers and values are single-threaded. */
#ifndef FLOE_FORMAT_AVRO_H
#define FLOE_FORMAT_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

/* ------------------------------------------------------------------ */
/* Schemas                                                              */
/* ------------------------------------------------------------------ */

typedef enum floe_avro_type {
    FLOE_AVRO_NULL = 0,
    FLOE_AVRO_BOOLEAN,
    FLOE_AVRO_INT,
    FLOE_AVRO_LONG,
    FLOE_AVRO_FLOAT,
    FLOE_AVRO_DOUBLE,
    FLOE_AVRO_BYTES,
    FLOE_AVRO_STRING,
    FLOE_AVRO_RECORD,
    FLOE_AVRO_ENUM,
    FLOE_AVRO_ARRAY,
    FLOE_AVRO_MAP,
    FLOE_AVRO_UNION,
    FLOE_AVRO_FIXED
} floe_avro_type_t;

/* Logical types we interpret.  Unknown or invalid logical types are kept
 * as plain attributes and the schema reads as its underlying type, as the
 * spec requires. */
typedef enum floe_avro_logical {
    FLOE_AVRO_LOGICAL_NONE = 0,
    FLOE_AVRO_LOGICAL_DECIMAL,                /* bytes or fixed; precision, scale */
    FLOE_AVRO_LOGICAL_UUID,                   /* string or fixed(16) */
    FLOE_AVRO_LOGICAL_DATE,                   /* int: days since 1970-01-01 */
    FLOE_AVRO_LOGICAL_TIME_MILLIS,            /* int */
    FLOE_AVRO_LOGICAL_TIME_MICROS,            /* long */
    FLOE_AVRO_LOGICAL_TIMESTAMP_MILLIS,       /* long, UTC */
    FLOE_AVRO_LOGICAL_TIMESTAMP_MICROS,       /* long, UTC */
    FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MILLIS, /* long, no zone */
    FLOE_AVRO_LOGICAL_LOCAL_TIMESTAMP_MICROS  /* long, no zone */
} floe_avro_logical_t;

/* One node of a parsed schema.  Nodes are owned by the root returned from
 * floe_avro_schema_parse; every pointer obtained from a schema accessor is
 * borrowed and valid until that root is freed. */
typedef struct floe_avro_schema floe_avro_schema_t;

/* Parse an Avro schema from JSON text (json need not be NUL-terminated).
 * Keeps every attribute (field-id, element-id, doc, aliases, unknown
 * keys).  Names are resolved with namespaces; references to named types
 * defined earlier (including recursive ones) are allowed.
 * On success *out is the root; caller frees it with floe_avro_schema_free. */
int floe_avro_schema_parse(const char *json, size_t len, floe_avro_schema_t **out, floe_err_t *err);

/* A schema's JSON text (borrowed). */
typedef struct floe_avro_text {
    const char *json;
    size_t len;
} floe_avro_text_t;

/* Parse json with the named types that refs[0..nrefs) define known by
 * their full names (schema references, as a registry has them): each
 * reference is parsed first, in order (a reference's own references come
 * before it), into the same root, then json; *out is json's schema.  A
 * name defined twice is an error.  Caller frees with floe_avro_schema_free. */
int floe_avro_schema_parse_refs(const char *json, size_t len, const floe_avro_text_t *refs,
                                size_t nrefs, floe_avro_schema_t **out, floe_err_t *err);

/* Free a root returned by floe_avro_schema_parse (NULL is fine).  Only
 * roots may be freed; values, writers and resolvers using it must be gone. */
void floe_avro_schema_free(floe_avro_schema_t *root);

/* The schema as JSON text, every attribute included; named types are
 * written in full at first use and by full name after.  Primitives with no
 * attributes are written as plain strings ("long").  Returns a NUL-
 * terminated string the caller frees with free(), or NULL (err filled). */
char *floe_avro_schema_to_json(const floe_avro_schema_t *s, floe_err_t *err);
/* As floe_avro_schema_to_json, but named types defined by references
 * (floe_avro_schema_parse_refs) are written by full name only: the text
 * a registry stores for a schema with references. */
char *floe_avro_schema_to_json_own(const floe_avro_schema_t *s, floe_err_t *err);

/* Parsing Canonical Form (spec "Schema Fingerprints"): the caller frees the
 * result with free(); NULL on allocation failure. */
char *floe_avro_schema_canonical(const floe_avro_schema_t *s, floe_err_t *err);

/* The spec's 64-bit Rabin fingerprint (CRC-64-AVRO) of n bytes, and of a
 * schema's Parsing Canonical Form (what single-object encoding and schema
 * registries key schemas by).  The schema form returns 0, or -1 on
 * allocation failure. */
uint64_t floe_avro_fingerprint64(const void *p, size_t n);
int floe_avro_schema_fingerprint64(const floe_avro_schema_t *s, uint64_t *out, floe_err_t *err);

/* Single-object encoding: C3 01, the writer schema's fingerprint (8 bytes,
 * little-endian), then the datum.  _header writes the 10 header bytes into
 * out; _parse checks them in p[0..n) and returns the fingerprint in *fp,
 * 0 on success or -1 (FLOE_ECORRUPT / FLOE_ETRUNC) when p does not start
 * with one.  The datum follows at p + FLOE_AVRO_SINGLE_OBJECT_HEADER. */
#define FLOE_AVRO_SINGLE_OBJECT_HEADER 10
void floe_avro_single_object_header(uint64_t fingerprint,
                                    uint8_t out[FLOE_AVRO_SINGLE_OBJECT_HEADER]);
int floe_avro_single_object_parse(const uint8_t *p, size_t n, uint64_t *fp, floe_err_t *err);

floe_avro_type_t floe_avro_schema_type(const floe_avro_schema_t *s);
floe_avro_logical_t floe_avro_schema_logical(const floe_avro_schema_t *s);
/* "null", "boolean", ..., "fixed". Never NULL. */
const char *floe_avro_type_name(floe_avro_type_t t);

/* Named types (record, enum, fixed): full name ("ns.name") and the name
 * without namespace; NULL for other types.  Borrowed. */
const char *floe_avro_schema_fullname(const floe_avro_schema_t *s);
const char *floe_avro_schema_name(const floe_avro_schema_t *s);

/* Records. Field index i is in [0, field_count). Borrowed results. */
size_t floe_avro_schema_field_count(const floe_avro_schema_t *s);
const char *floe_avro_schema_field_name(const floe_avro_schema_t *s, size_t i);
const floe_avro_schema_t *floe_avro_schema_field_type(const floe_avro_schema_t *s, size_t i);
/* Index of the field called name, or -1. */
int floe_avro_schema_field_index(const floe_avro_schema_t *s, const char *name);
/* Whether field i has a "default" attribute. */
bool floe_avro_schema_field_has_default(const floe_avro_schema_t *s, size_t i);

/* Integer attribute of field i (e.g. "field-id"): 0 and *out set when the
 * attribute is present and an integer, else -1. */
int floe_avro_schema_field_prop_int(const floe_avro_schema_t *s, size_t i, const char *key,
                                    int64_t *out);
/* Integer attribute of a schema node itself (arrays' "element-id", maps'
 * "key-id"/"value-id", or any other): 0 and *out, or -1 when absent. */
int floe_avro_schema_prop_int(const floe_avro_schema_t *s, const char *key, int64_t *out);
/* String attribute of a node (e.g. "logicalType", "doc"): borrowed string,
 * or NULL when absent or not a string. */
const char *floe_avro_schema_prop_str(const floe_avro_schema_t *s, const char *key);
/* Any attribute of a node (field_index < 0) or of one of its fields, as
 * JSON text; caller frees with free().  NULL when absent. */
char *floe_avro_schema_prop_json(const floe_avro_schema_t *s, int field_index, const char *key);

/* Arrays: item type. Maps: value type (keys are strings). Borrowed. */
const floe_avro_schema_t *floe_avro_schema_items(const floe_avro_schema_t *s);
const floe_avro_schema_t *floe_avro_schema_values(const floe_avro_schema_t *s);

/* Unions: branches in declaration order. Borrowed. */
size_t floe_avro_schema_branch_count(const floe_avro_schema_t *s);
const floe_avro_schema_t *floe_avro_schema_branch(const floe_avro_schema_t *s, size_t i);
/* For ["null", X] or [X, "null"]: X; NULL for any other schema. */
const floe_avro_schema_t *floe_avro_schema_nullable_inner(const floe_avro_schema_t *s);

/* Enums: symbols; index of a symbol or -1. Borrowed. */
size_t floe_avro_schema_symbol_count(const floe_avro_schema_t *s);
const char *floe_avro_schema_symbol(const floe_avro_schema_t *s, size_t i);
int floe_avro_schema_symbol_index(const floe_avro_schema_t *s, const char *sym);

/* Fixed: size in bytes (0 for other types). */
size_t floe_avro_schema_fixed_size(const floe_avro_schema_t *s);
/* Decimal logical type: precision and scale (0 when not a decimal). */
int floe_avro_schema_decimal_precision(const floe_avro_schema_t *s);
int floe_avro_schema_decimal_scale(const floe_avro_schema_t *s);

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

/* A datum.  Allocated in a floe_arena_t (freed with the arena), borrowing
 * its schema node (which must outlive the arena's use). */
typedef struct floe_avro_value floe_avro_value_t;

/* A new value for schema s: records get all fields unset (see the top of
 * this file), arrays and maps are empty, unions have no branch chosen,
 * numbers are 0.  NULL when the arena is out of memory. */
floe_avro_value_t *floe_avro_value_new(floe_arena_t *a, const floe_avro_schema_t *s);

/* The schema node the value was created for (a union for union values). */
const floe_avro_schema_t *floe_avro_value_schema(const floe_avro_value_t *v);

/* The type held after seeing through unions: FLOE_AVRO_NULL for a null
 * branch or an unchosen union or unset field. */
floe_avro_type_t floe_avro_value_type(const floe_avro_value_t *v);
bool floe_avro_value_is_null(const floe_avro_value_t *v);
/* Union branch index, or -1 when v is not a union or none is chosen. */
int floe_avro_value_branch(const floe_avro_value_t *v);
/* For a union: the value of the chosen branch (NULL if none); else v. */
const floe_avro_value_t *floe_avro_value_unwrap(const floe_avro_value_t *v);

/* --- writing values.  Every setter sees through unions: it chooses the
 * first branch that can hold the value (set_long: long, then int if it
 * fits, float, double; set_int: int, then long, ...; set_string: string,
 * then bytes; set_bytes: bytes, fixed of equal size, then string;
 * set_double: double, then float).  Returns 0, or -1 with err filled when
 * the schema cannot hold the value.  Byte/string data is copied into the
 * value's arena. */
int floe_avro_set_null(floe_avro_value_t *v, floe_err_t *err);
int floe_avro_set_bool(floe_avro_value_t *v, bool b, floe_err_t *err);
int floe_avro_set_int(floe_avro_value_t *v, int32_t x, floe_err_t *err);
int floe_avro_set_long(floe_avro_value_t *v, int64_t x, floe_err_t *err);
int floe_avro_set_float(floe_avro_value_t *v, float x, floe_err_t *err);
int floe_avro_set_double(floe_avro_value_t *v, double x, floe_err_t *err);
int floe_avro_set_string(floe_avro_value_t *v, const char *s, floe_err_t *err);
int floe_avro_set_stringn(floe_avro_value_t *v, const char *s, size_t n, floe_err_t *err);
/* bytes, fixed (n must equal the size) or string. */
int floe_avro_set_bytes(floe_avro_value_t *v, const void *p, size_t n, floe_err_t *err);
/* Enum by symbol or by index. */
int floe_avro_set_enum(floe_avro_value_t *v, const char *symbol, floe_err_t *err);
int floe_avro_set_enum_index(floe_avro_value_t *v, int index, floe_err_t *err);
/* Choose union branch i explicitly and return its value (NULL + err when i
 * is out of range or v is not a union).  Borrowed from v's arena. */
floe_avro_value_t *floe_avro_set_branch(floe_avro_value_t *v, int i, floe_err_t *err);
/* Decimal (bytes or fixed) from a 64-bit unscaled value: two's complement
 * big-endian, minimal length for bytes, sign-extended for fixed. */
int floe_avro_set_decimal_i64(floe_avro_value_t *v, int64_t unscaled, floe_err_t *err);

/* Record field by name, for writing: when v is a union, its record branch
 * is chosen first.  NULL when v is NULL, holds no record or has no such
 * field; every writing function given NULL fails with an error (no crash),
 * so chains like floe_avro_rec_set_int(floe_avro_field(e, "x"), ...) report
 * a missing field.  Borrowed (lives in v's arena). */
floe_avro_value_t *floe_avro_field(floe_avro_value_t *v, const char *name);
floe_avro_value_t *floe_avro_field_at(floe_avro_value_t *v, size_t i);

/* Shorthands: set field `name` of record v.  -1 with err naming the field
 * when it does not exist or cannot hold the value. */
int floe_avro_rec_set_null(floe_avro_value_t *v, const char *name, floe_err_t *err);
int floe_avro_rec_set_bool(floe_avro_value_t *v, const char *name, bool b, floe_err_t *err);
int floe_avro_rec_set_int(floe_avro_value_t *v, const char *name, int32_t x, floe_err_t *err);
int floe_avro_rec_set_long(floe_avro_value_t *v, const char *name, int64_t x, floe_err_t *err);
int floe_avro_rec_set_float(floe_avro_value_t *v, const char *name, float x, floe_err_t *err);
int floe_avro_rec_set_double(floe_avro_value_t *v, const char *name, double x, floe_err_t *err);
int floe_avro_rec_set_string(floe_avro_value_t *v, const char *name, const char *s,
                             floe_err_t *err);
int floe_avro_rec_set_bytes(floe_avro_value_t *v, const char *name, const void *p, size_t n,
                            floe_err_t *err);
int floe_avro_rec_set_enum(floe_avro_value_t *v, const char *name, const char *symbol,
                           floe_err_t *err);

/* Append a new (default-initialized) item to array v (choosing the array
 * branch of a union) and return it for filling; NULL + err on failure. */
floe_avro_value_t *floe_avro_array_append(floe_avro_value_t *v, floe_err_t *err);
/* Add entry key (copied) to map v (choosing the map branch of a union) and
 * return its value for filling; a key already present is replaced (its
 * value is reset).  NULL + err on failure. */
floe_avro_value_t *floe_avro_map_put(floe_avro_value_t *v, const char *key, floe_err_t *err);

/* --- reading values.  Every reading function accepts NULL (what a missing
 * or unset field reads as) and treats it as a null value, so reads chain:
 * floe_avro_array_len(floe_avro_get(rec, "tags")).  Getters see through
 * unions.  Numeric getters accept
 * the promotions Avro allows (get_long on an int, get_double on int, long,
 * float).  Return 0, or -1 when the value has another type (err filled). */
int floe_avro_get_bool(const floe_avro_value_t *v, bool *out, floe_err_t *err);
int floe_avro_get_int(const floe_avro_value_t *v, int32_t *out, floe_err_t *err);
int floe_avro_get_long(const floe_avro_value_t *v, int64_t *out, floe_err_t *err);
int floe_avro_get_float(const floe_avro_value_t *v, float *out, floe_err_t *err);
int floe_avro_get_double(const floe_avro_value_t *v, double *out, floe_err_t *err);
/* string, bytes or fixed contents, borrowed from the value (strings are
 * also NUL-terminated at ptr[len]). */
int floe_avro_get_bytes(const floe_avro_value_t *v, floe_slice_t *out, floe_err_t *err);
int floe_avro_get_string(const floe_avro_value_t *v, const char **out, size_t *len,
                         floe_err_t *err);
/* Enum index and symbol (symbol borrowed from the schema; may be NULL). */
int floe_avro_get_enum(const floe_avro_value_t *v, int *index, const char **symbol,
                       floe_err_t *err);
/* Decimal bytes/fixed as a 64-bit unscaled value; -1 when it overflows. */
int floe_avro_get_decimal_i64(const floe_avro_value_t *v, int64_t *out, floe_err_t *err);

/* Record field by name / index for reading: NULL when v (seen through a
 * union) is not a record or has no such field.  An unset field of a value
 * built by hand reads as NULL too (decoded values are always complete).
 * Borrowed. */
const floe_avro_value_t *floe_avro_get(const floe_avro_value_t *v, const char *name);
const floe_avro_value_t *floe_avro_get_at(const floe_avro_value_t *v, size_t i);

/* Arrays and maps (seen through unions); 0 / NULL for other types. */
size_t floe_avro_array_len(const floe_avro_value_t *v);
const floe_avro_value_t *floe_avro_array_at(const floe_avro_value_t *v, size_t i);
size_t floe_avro_map_len(const floe_avro_value_t *v);
const char *floe_avro_map_key_at(const floe_avro_value_t *v, size_t i);
const floe_avro_value_t *floe_avro_map_value_at(const floe_avro_value_t *v, size_t i);
const floe_avro_value_t *floe_avro_map_get(const floe_avro_value_t *v, const char *key);

/* Deep equality of two values (schemas compared structurally, floats
 * bit-for-bit except that NaN equals NaN). */
bool floe_avro_value_equal(const floe_avro_value_t *a, const floe_avro_value_t *b);

/* A JSON rendering for tests and debugging, appended to out: records and
 * maps as objects, arrays as arrays, unions as their branch's value,
 * bytes/fixed as {"$bytes":"<hex>"}, enums as their symbol, floats as
 * numbers (NaN/Infinity as strings).  0, or -1 on allocation failure. */
int floe_avro_value_to_json(const floe_avro_value_t *v, floe_buf_t *out, floe_err_t *err);

/* ------------------------------------------------------------------ */
/* Binary encoding                                                      */
/* ------------------------------------------------------------------ */

/* Append the Avro binary encoding of v to out.  Fails (-1, err naming the
 * path of the field; out unchanged) on an unset field that has no default
 * and is not nullable, an array, a map or a record (see the top). */
int floe_avro_encode(const floe_avro_value_t *v, floe_buf_t *out, floe_err_t *err);

/* Decode one datum of schema s from *in, advancing it past the datum.
 * The value and its strings live in arena a (strings copied, so *in may be
 * freed after); give the arena a cap to bound memory for untrusted input.
 * Errors: FLOE_ETRUNC when the input ends early, FLOE_ECORRUPT for bad
 * bytes (negative lengths, bad union index, ...), FLOE_ENOMEM past the cap. */
int floe_avro_decode(const floe_avro_schema_t *s, floe_slice_t *in, floe_arena_t *a,
                     floe_avro_value_t **out, floe_err_t *err);

/* Skip one datum of schema s in *in without building a value. */
int floe_avro_skip(const floe_avro_schema_t *s, floe_slice_t *in, floe_err_t *err);

/* ------------------------------------------------------------------ */
/* Schema resolution                                                    */
/* ------------------------------------------------------------------ */

/* Reads data written with a writer schema as values of a reader schema:
 * fields matched by name (and reader aliases), reader-only fields filled
 * from their defaults, writer-only fields skipped, int->long->float->
 * double and string<->bytes promotions, unions on either side, enum
 * symbols by name (reader's enum default when unknown), named types
 * matched by unqualified name or alias. */
typedef struct floe_avro_resolver floe_avro_resolver_t;

/* Whether data of primitive type w reads as primitive type r by the spec's
 * promotions: int -> long, float, double; long -> float, double; float ->
 * double; string <-> bytes. */
bool floe_avro_promotable(floe_avro_type_t w, floe_avro_type_t r);

/* Check the two schemas can be resolved and prepare.  Both schemas are
 * borrowed and must outlive the resolver.  A mismatch that can only occur
 * for some data (a writer union branch the reader cannot take) is reported
 * when such data is decoded.  Caller frees with floe_avro_resolver_free. */
int floe_avro_resolver_new(const floe_avro_schema_t *writer, const floe_avro_schema_t *reader,
                           floe_avro_resolver_t **out, floe_err_t *err);
void floe_avro_resolver_free(floe_avro_resolver_t *r);

/* Decode one datum written with the writer schema from *in (advanced) into
 * a value of the reader schema, allocated in a.  Errors as floe_avro_decode. */
int floe_avro_resolver_decode(floe_avro_resolver_t *r, floe_slice_t *in, floe_arena_t *a,
                              floe_avro_value_t **out, floe_err_t *err);

/* ------------------------------------------------------------------ */
/* Object container files                                               */
/* ------------------------------------------------------------------ */

typedef enum floe_avro_codec {
    FLOE_AVRO_CODEC_NULL = 0,
    FLOE_AVRO_CODEC_DEFLATE, /* "deflate": raw RFC 1951 */
    FLOE_AVRO_CODEC_SNAPPY,  /* "snappy": + 4-byte big-endian CRC32 */
    FLOE_AVRO_CODEC_ZSTD     /* "zstandard" */
} floe_avro_codec_t;

/* "null", "deflate", "snappy", "zstandard". */
const char *floe_avro_codec_name(floe_avro_codec_t c);
/* Name (as in avro.codec) -> codec; -1 with err for unknown names. */
int floe_avro_codec_parse(const char *name, floe_avro_codec_t *out, floe_err_t *err);

/* Receives the file's bytes as the writer produces them.  Returns 0 or -1
 * with err filled (the writer then fails).  p is borrowed for the call. */
typedef int (*floe_avro_sink_fn)(void *ctx, const void *p, size_t n, floe_err_t *err);

typedef struct floe_avro_writer_opts {
    floe_avro_codec_t codec;
    int level;              /* codec level; 0 = codec default */
    size_t block_bytes;     /* flush a block at this uncompressed size; 0 = 64 KiB */
    const uint8_t *sync;    /* 16 bytes, or NULL for random */
    floe_avro_sink_fn sink; /* NULL: keep the file in memory (writer_bytes) */
    void *sink_ctx;
} floe_avro_writer_opts_t;

#define FLOE_AVRO_WRITER_OPTS_INIT                   \
    {                                                \
        FLOE_AVRO_CODEC_NULL, 0, 0, NULL, NULL, NULL \
    }

typedef struct floe_avro_writer floe_avro_writer_t;

/* A container writer for datums of schema s (borrowed; must outlive the
 * writer).  opts may be NULL (codec null, in memory).  avro.schema and
 * avro.codec are written by the writer.  Caller frees with
 * floe_avro_writer_free. */
int floe_avro_writer_new(floe_avro_writer_t **out, const floe_avro_schema_t *s,
                         const floe_avro_writer_opts_t *opts, floe_err_t *err);

/* Header metadata, before the first append: key and value are copied.  A
 * key set twice keeps the last value; "avro.*" keys are refused except
 * that avro.schema may be given to write a schema text verbatim (it must
 * parse to the same canonical form as s). */
int floe_avro_writer_set_meta(floe_avro_writer_t *w, const char *key, const void *val, size_t len,
                              floe_err_t *err);
int floe_avro_writer_set_meta_str(floe_avro_writer_t *w, const char *key, const char *val,
                                  floe_err_t *err);

/* Append one datum (its schema must be the writer's schema node; v is
 * borrowed for the call). */
int floe_avro_writer_append(floe_avro_writer_t *w, const floe_avro_value_t *v, floe_err_t *err);
/* Append one datum already encoded in Avro binary with the writer's schema
 * (n bytes, borrowed for the call; not validated). */
int floe_avro_writer_append_encoded(floe_avro_writer_t *w, const void *p, size_t n,
                                    floe_err_t *err);

/* Datums appended so far, and bytes produced so far (header and flushed
 * blocks; compressed), so callers can roll files at a target size. */
uint64_t floe_avro_writer_count(const floe_avro_writer_t *w);
uint64_t floe_avro_writer_bytes_written(const floe_avro_writer_t *w);

/* Flush the last block (and the header if nothing was appended).  After
 * finish, only writer_bytes/take and free may be called. */
int floe_avro_writer_finish(floe_avro_writer_t *w, floe_err_t *err);

/* In-memory mode: the file so far (after finish: the whole file),
 * borrowed until the writer is freed or take is called. */
floe_slice_t floe_avro_writer_bytes(const floe_avro_writer_t *w);
/* In-memory mode: hand the bytes to the caller (frees with free()). */
uint8_t *floe_avro_writer_take(floe_avro_writer_t *w, size_t *len);

void floe_avro_writer_free(floe_avro_writer_t *w);

/* Convenience: encode values[0..n) into a complete in-memory container file
 * with the given metadata (meta_keys/meta_vals: n_meta NUL-terminated
 * strings).  *out is the caller's to free with free(). */
int floe_avro_write_file(const floe_avro_schema_t *s, const floe_avro_writer_opts_t *opts,
                         const char *const *meta_keys, const char *const *meta_vals, size_t n_meta,
                         const floe_avro_value_t *const *values, size_t n, uint8_t **out,
                         size_t *out_len, floe_err_t *err);

typedef struct floe_avro_reader_opts {
    /* Resolve every datum to this schema (borrowed; must outlive the
     * reader); NULL reads with the file's own schema. */
    const floe_avro_schema_t *reader_schema;
    size_t max_block_bytes;   /* compressed and uncompressed; 0 = 64 MiB */
    uint64_t max_block_count; /* datums per block; 0 = 16M */
} floe_avro_reader_opts_t;

#define FLOE_AVRO_READER_OPTS_INIT \
    {                              \
        NULL, 0, 0                 \
    }

typedef struct floe_avro_reader floe_avro_reader_t;

/* Open a container file held in memory (data borrowed until the reader is
 * freed).  Parses and checks the header (magic, metadata map, avro.schema,
 * avro.codec, sync marker).  opts may be NULL.  Caller frees with
 * floe_avro_reader_free. */
int floe_avro_reader_open(floe_avro_reader_t **out, const void *data, size_t len,
                          const floe_avro_reader_opts_t *opts, floe_err_t *err);

/* The writer's schema from the header (owned by the reader). */
const floe_avro_schema_t *floe_avro_reader_schema(const floe_avro_reader_t *r);
/* The header's avro.schema text exactly as stored (borrowed from data;
 * not NUL-terminated). */
floe_slice_t floe_avro_reader_schema_json(const floe_avro_reader_t *r);
floe_avro_codec_t floe_avro_reader_codec(const floe_avro_reader_t *r);

/* Header metadata, all keys including avro.*: count, i-th key
 * (NUL-terminated, owned by the reader) and value (borrowed from data). */
size_t floe_avro_reader_meta_count(const floe_avro_reader_t *r);
const char *floe_avro_reader_meta_key(const floe_avro_reader_t *r, size_t i);
floe_slice_t floe_avro_reader_meta_val(const floe_avro_reader_t *r, size_t i);
/* Value of key: true and *val set when present. */
bool floe_avro_reader_meta(const floe_avro_reader_t *r, const char *key, floe_slice_t *val);

/* Next datum, allocated in arena a (which the caller may reset between
 * calls; resetting after every datum is fastest, as floe_arena_reset keeps
 * only the arena's first block).  Returns 1 with *out set, 0 at the clean end of the file, -1 on
 * error (truncated or corrupt block, bad sync marker, decode error; the
 * reader stays failed). */
int floe_avro_reader_next(floe_avro_reader_t *r, floe_arena_t *a, floe_avro_value_t **out,
                          floe_err_t *err);

void floe_avro_reader_free(floe_avro_reader_t *r);

#endif
