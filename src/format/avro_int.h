/* Avro internals shared by src/format/avro_*.c.  Not a public interface. */
#ifndef FLOE_FORMAT_AVRO_INT_H
#define FLOE_FORMAT_AVRO_INT_H

#include <jansson.h>

#include "format/avro.h"
#include "util/compress.h"

/* Nesting deeper than this is refused when parsing schemas and decoding
 * data (recursive schemas could otherwise exhaust the stack). */
#define AVRO_MAX_DEPTH 256
/* Items per array/map whose item type may encode to zero bytes: the input
 * length cannot bound their count, so this does. */
#define AVRO_MAX_ZERO_SIZE_ITEMS (1u << 20)

typedef struct avro_field {
    char *name;
    floe_avro_schema_t *type;
    json_t *props; /* every key but name and type (owned) */
    json_t *def;   /* props["default"] (borrowed) or NULL */
    char **aliases;
    size_t n_aliases;
    /* the default as a value, built after parsing; NULL when there is no
     * default or it does not fit the type (def_bad set) */
    floe_avro_value_t *def_value;
    int def_state; /* 0 not built, 1 building, 2 built */
    bool def_bad;
} avro_field_t;

struct floe_avro_schema {
    floe_avro_type_t type;
    floe_avro_logical_t logical;
    char *fullname; /* named types */
    char *name;     /* points into fullname */
    char *ns;       /* namespace ("" for none), named types */
    char **aliases; /* full names */
    size_t n_aliases;
    json_t *props;        /* every key but the structural ones (owned) */
    avro_field_t *fields; /* record */
    size_t n_fields;
    floe_avro_schema_t *items;     /* array items, map values */
    floe_avro_schema_t **branches; /* union */
    size_t n_branches;
    char **symbols; /* enum */
    size_t n_symbols;
    int enum_default; /* index, or -1 */
    size_t fixed_size;
    int precision, scale;          /* decimal */
    bool min_zero;                 /* may encode to zero bytes */
    bool from_ref;                 /* named type defined by a reference */
    floe_avro_schema_t *next_node; /* every node of a root, for freeing */
    struct avro_root *root;        /* what owns this node */
};

/* What a root owns besides its nodes. */
typedef struct avro_root {
    floe_avro_schema_t *nodes; /* list through next_node */
    floe_arena_t arena;        /* default values */
} avro_root_t;

struct floe_avro_value {
    const floe_avro_schema_t *s;
    floe_arena_t *arena;
    bool set; /* false: unset (record fields, unions) */
    union {
        bool b;
        int32_t i;
        int64_t l;
        float f;
        double d;
        int e; /* enum index */
        struct {
            uint8_t *p;
            size_t n;
        } bytes;                   /* bytes, string, fixed */
        floe_avro_value_t *fields; /* record: n_fields values */
        struct {
            floe_avro_value_t **items;
            size_t n, cap;
        } arr;
        struct {
            char **keys;
            floe_avro_value_t **vals;
            size_t n, cap;
        } map;
        struct {
            int branch;
            floe_avro_value_t *val;
        } un;
    } u;
};

/* avro_json.c */
/* Build a value of schema s from a JSON default (allocated in a); -1 when
 * it does not fit the schema. */
int avro_value_from_json(floe_arena_t *a, const floe_avro_schema_t *s, const json_t *j,
                         floe_avro_value_t **out, int depth);
/* Default value of field i of record s (built once, while parsing, in the
 * schema root's arena), or NULL when there is none or it does not fit. */
const floe_avro_value_t *avro_field_default(const floe_avro_schema_t *s, size_t i);

/* avro_value.c: room for one more array item / map entry; -1 when the
 * arena is out of memory. */
int avro_array_grow(floe_avro_value_t *v);
int avro_map_grow(floe_avro_value_t *v);

/* avro_schema.c */
/* Whether two named/unnamed nodes are the same type for union branch
 * selection (same type and, for named types, same full name). */
bool avro_schema_same(const floe_avro_schema_t *a, const floe_avro_schema_t *b);
/* The name a union branch is known by ("long", full name for named). */
const char *avro_branch_name(const floe_avro_schema_t *s);

/* avro_binary.c */
int avro_read_long(floe_slice_t *in, int64_t *out, floe_err_t *err);
int avro_put_long(floe_buf_t *b, int64_t v);
int avro_put_bytes(floe_buf_t *b, const void *p, size_t n);

/* avro_codec.c, over util/compress.h (ctx: the caller's, may be NULL):
 * compress appends to out; decompress appends at most max_out bytes to out
 * (more is FLOE_ECORRUPT: a block bigger than the reader allows). */
int avro_codec_compress(floe_codec_ctx_t *ctx, floe_avro_codec_t c, const uint8_t *p, size_t n,
                        floe_buf_t *out, floe_err_t *err);
int avro_codec_decompress(floe_codec_ctx_t *ctx, floe_avro_codec_t c, const uint8_t *p, size_t n,
                          size_t max_out, floe_buf_t *out, floe_err_t *err);

#endif
