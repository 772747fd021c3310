/* JSON Schema documents (drafts 4, 6, 7, 2019-09 and 2020-12, as far as
 * the Confluent serializers produce them) read into one model: a graph of
 * nodes, each one kind of schema with the keywords that matter for
 * compatibility (the registry) and for column types (table topics).
 *
 * How a document becomes nodes: true and {} accept anything (ANY), false
 * nothing (NONE); "enum" and "const" make an ENUM; "type": [A, B] makes an
 * ANYOF of one node per type; anyOf, oneOf, allOf and not make their
 * combined node; a schema with several of these is the ALLOF of them; a
 * schema without "type" takes its kind from its keywords (properties ->
 * object, items -> array, minimum -> number, minLength -> string) or is
 * ANY.  "$ref" resolves inside the document ("#", "#/definitions/..",
 * "#/$defs/.." or any JSON pointer) or to another document by the name it
 * was given (a registry reference's name), with an optional pointer after
 * '#'.  Cycles through "$ref" are kept as cycles: a node is built once per
 * schema object.
 *
 * Every input is untrusted: nesting and node counts are capped, errors
 * name what is wrong and where (a JSON pointer). */
#ifndef FLOE_FORMAT_JSCHEMA_H
#define FLOE_FORMAT_JSCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef enum floe_js_kind {
    FLOE_JS_ANY = 1, /* true, {} */
    FLOE_JS_NONE,    /* false */
    FLOE_JS_NULL,
    FLOE_JS_BOOLEAN,
    FLOE_JS_INTEGER,
    FLOE_JS_NUMBER,
    FLOE_JS_STRING,
    FLOE_JS_OBJECT,
    FLOE_JS_ARRAY,
    FLOE_JS_ENUM,
    FLOE_JS_ANYOF,
    FLOE_JS_ONEOF,
    FLOE_JS_ALLOF,
    FLOE_JS_NOT,
} floe_js_kind_t;

/* A number keyword: set or not. */
typedef struct floe_js_num {
    bool set;
    double v;
} floe_js_num_t;

typedef struct floe_jsnode floe_jsnode_t;
struct floe_jsnode {
    floe_js_kind_t kind;
    bool has_default; /* "default" given */
    /* INTEGER, NUMBER */
    floe_js_num_t min, max, xmin, xmax, multiple;
    /* STRING: -1 when absent */
    int64_t min_len, max_len;
    const char *pattern, *format; /* NULL when absent */
    /* OBJECT: properties in document order; required[i] for props[i] */
    size_t nprops;
    const char **names;
    floe_jsnode_t **props;
    bool *required;
    size_t nreq_other;         /* required names that are not properties */
    floe_jsnode_t *additional; /* the schema of additionalProperties; NULL: absent or boolean */
    bool closed;               /* additionalProperties: false */
    bool pattern_props;        /* patternProperties given */
    int64_t min_props, max_props;
    /* ARRAY */
    floe_jsnode_t *items; /* NULL: absent (any item) */
    size_t ntuple;        /* items as an array (draft 4-7) or prefixItems */
    floe_jsnode_t **tuple;
    int64_t min_items, max_items;
    bool unique;
    /* ENUM: the values as compact JSON text with sorted keys */
    size_t nenum;
    const char **enums;
    /* ANYOF, ONEOF, ALLOF: the branches; NOT: subs[0] */
    size_t nsubs;
    floe_jsnode_t **subs;
};

typedef struct floe_jschema floe_jschema_t;

/* A document a "$ref" may name: its name and text, borrowed for the call. */
typedef struct floe_jschema_doc {
    const char *name;
    const char *text;
    size_t len;
} floe_jschema_doc_t;

/* Parse text[0..len) with the documents it may refer to into *out (caller
 * frees with floe_jschema_free).  -1 with err (FLOE_EINVAL: not a JSON
 * Schema, with the reason and the pointer where). */
int floe_jschema_parse(const char *text, size_t len, const floe_jschema_doc_t *docs, size_t ndocs,
                       floe_jschema_t **out, floe_err_t *err);
void floe_jschema_free(floe_jschema_t *s);

/* The root node: borrowed, valid until floe_jschema_free. */
const floe_jsnode_t *floe_jschema_root(const floe_jschema_t *s);

/* The document as compact JSON, members in document order (the registry's
 * stored form: two texts of one schema differ at most in member order).
 * Caller frees with free(); NULL when out of memory. */
char *floe_jschema_canonical(const floe_jschema_t *s);

/* The name of a kind ("object", "anyOf", ...). */
const char *floe_js_kind_name(floe_js_kind_t k);

/* Whether node n accepts null (null, any, a combination with a null
 * branch, an enum holding null). */
bool floe_jsnode_nullable(const floe_jsnode_t *n);

/* The one node n stands for besides null: X for anyOf/oneOf [X, null],
 * type [X, "null"] and allOf [X]; n itself otherwise; NULL for null. */
const floe_jsnode_t *floe_jsnode_value(const floe_jsnode_t *n);

#endif
