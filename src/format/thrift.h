/* Thrift compact protocol: the encoding of Parquet's footer and page headers.
 *
 * Writer: appends to a caller-owned floe_buf_t; struct nesting is tracked
 * for field-id deltas.  Reader: reads from borrowed bytes, checks every
 * length against the end of input, caps nesting depth and collection sizes,
 * and records the first error; once failed, every read returns zero values
 * and floe_thrift_r_failed() says so. */
#ifndef FLOE_FORMAT_THRIFT_H
#define FLOE_FORMAT_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum {
    FLOE_TT_STOP = 0,
    FLOE_TT_TRUE = 1,
    FLOE_TT_FALSE = 2,
    FLOE_TT_BYTE = 3,
    FLOE_TT_I16 = 4,
    FLOE_TT_I32 = 5,
    FLOE_TT_I64 = 6,
    FLOE_TT_DOUBLE = 7,
    FLOE_TT_BINARY = 8,
    FLOE_TT_LIST = 9,
    FLOE_TT_SET = 10,
    FLOE_TT_MAP = 11,
    FLOE_TT_STRUCT = 12
};

#define FLOE_THRIFT_MAX_DEPTH 32

typedef struct floe_thrift_w {
    floe_buf_t *out; /* borrowed */
    int depth;
    int16_t last[FLOE_THRIFT_MAX_DEPTH];
    bool oom; /* an append failed */
} floe_thrift_w_t;

/* Start writing the top-level struct into out (borrowed). */
void floe_thrift_w_init(floe_thrift_w_t *w, floe_buf_t *out);
void floe_thrift_w_i32(floe_thrift_w_t *w, int16_t id, int32_t v);
void floe_thrift_w_i64(floe_thrift_w_t *w, int16_t id, int64_t v);
void floe_thrift_w_bool(floe_thrift_w_t *w, int16_t id, bool v);
void floe_thrift_w_bin(floe_thrift_w_t *w, int16_t id, const void *p, size_t n);
void floe_thrift_w_str(floe_thrift_w_t *w, int16_t id, const char *s);
/* Field of struct type: begin, write its fields, end. */
void floe_thrift_w_struct_begin(floe_thrift_w_t *w, int16_t id);
void floe_thrift_w_struct_end(floe_thrift_w_t *w);
/* An empty struct field (e.g. the StringType arm of a union). */
void floe_thrift_w_empty(floe_thrift_w_t *w, int16_t id);
/* List field header; then write `count` elements with the _elem calls. */
void floe_thrift_w_list(floe_thrift_w_t *w, int16_t id, int elem_type, uint32_t count);
void floe_thrift_w_elem_i32(floe_thrift_w_t *w, int32_t v);
void floe_thrift_w_elem_i64(floe_thrift_w_t *w, int64_t v);
void floe_thrift_w_elem_bin(floe_thrift_w_t *w, const void *p, size_t n);
void floe_thrift_w_elem_struct_begin(floe_thrift_w_t *w);
/* End of the top-level struct (writes its stop byte); returns 0, or -1 when
 * an allocation failed somewhere along the way. */
int floe_thrift_w_finish(floe_thrift_w_t *w);

typedef struct floe_thrift_r {
    const uint8_t *p, *end; /* borrowed */
    int depth;
    int16_t last[FLOE_THRIFT_MAX_DEPTH];
    const char *error; /* first failure, static string */
} floe_thrift_r_t;

void floe_thrift_r_init(floe_thrift_r_t *r, const void *p, size_t n);
static inline bool floe_thrift_r_failed(const floe_thrift_r_t *r)
{
    return r->error != NULL;
}
void floe_thrift_r_fail(floe_thrift_r_t *r, const char *why);

/* Next field of the current struct: returns false at its stop byte (the
 * struct is then left) or on error.  *type is FLOE_TT_*, *id the field id. */
bool floe_thrift_r_field(floe_thrift_r_t *r, int *type, int16_t *id);
/* Enter a struct (a field of struct type, or a struct list element). */
void floe_thrift_r_struct_begin(floe_thrift_r_t *r);
/* Values; `type` is the field's type (checked; bools need it). */
int32_t floe_thrift_r_i32(floe_thrift_r_t *r, int type);
int64_t floe_thrift_r_i64(floe_thrift_r_t *r, int type);
bool floe_thrift_r_bool(floe_thrift_r_t *r, int type);
/* Borrowed bytes of a binary/string value. */
floe_slice_t floe_thrift_r_bin(floe_thrift_r_t *r, int type);
/* List header: element type and count (count capped by remaining bytes). */
uint32_t floe_thrift_r_list(floe_thrift_r_t *r, int type, int *elem_type);
/* A list element of integer/binary/bool type (for i32/i64/binary lists). */
int64_t floe_thrift_r_elem_int(floe_thrift_r_t *r, int elem_type);
/* Skip a value of the given type (nested structs and lists included). */
void floe_thrift_r_skip(floe_thrift_r_t *r, int type);

#endif
