/* JSON shredder internals shared by json_scan.c (the lexer), json_infer.c
 * (type inference) and json_shred.c (shredding into the rows buffer). */
#ifndef FLOE_TABLE_JSON_INT_H
#define FLOE_TABLE_JSON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "table/rows_int.h"

enum { SH_OK = 0, SH_ERR = -1, SH_EVOLVE = -2 };

typedef struct sh {
    floe_rows_t *r;
    const uint8_t *start, *p, *end;
    floe_err_t *err;
    int depth;
    /* the shape change an attempt asked for */
    floe_rnode_t *ev_parent; /* attach ev_sub under it ... */
    floe_rnode_t *ev_sub;
    floe_rnode_t *ev_widen; /* ... or widen this long node */
    floe_buf_t key;         /* unescaped key scratch */
} sh_t;

/* ---- json_scan.c ---- */

/* Set a syntax error at s->p on s->err; returns SH_ERR. */
int js_syntax(sh_t *s, const char *what);
/* Set the out-of-memory error on s->err; returns SH_ERR. */
int js_oom(sh_t *s);

/* Skip JSON whitespace. */
static inline void js_ws(sh_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

/* The first byte of [p, end) that ends a plain string run: '"', '\\', a
 * control character or a byte >= 0x80.  Eight bytes at a time: a word
 * with none of them is skipped whole (the tests may flag a clean byte
 * after a real hit, never miss one, and the byte loop decides). */
static inline const uint8_t *js_plain_run(const uint8_t *p, const uint8_t *end)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    while (end - p >= 8) {
        uint64_t x, q, b;
        memcpy(&x, p, 8);
        q = x ^ (ones * '"');
        b = x ^ (ones * '\\');
        uint64_t hit =
            (x | ((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x)) & high;
        if (hit) break;
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) p++;
    return p;
}

static inline int js_lit(sh_t *s, const char *word, size_t n)
{
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return js_syntax(s, "unknown literal");
    s->p += n;
    return SH_OK;
}

/* After an item of an object or array: 1 when a ',' announces another,
 * 0 when `close` ends the container (consumed), else a syntax error. */
static inline int js_next_item(sh_t *s, uint8_t close)
{
    js_ws(s);
    if (s->p < s->end && *s->p == ',') {
        s->p++;
        js_ws(s);
        return 1;
    }
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return 0;
    }
    return js_syntax(s, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

/* Unescape the string at s->p (just past the opening quote) onto out,
 * checking UTF-8.  Leaves s->p past the closing quote. */
int js_string_into(sh_t *s, floe_buf_t *out);
/* A key and its ':': *k borrows the input, or s->key when escaped. */
int js_key(sh_t *s, floe_slice_t *k);
/* A JSON number: *is_int and *iv when it is an int64, else *dv. */
int js_number(sh_t *s, bool *is_int, int64_t *iv, double *dv);
/* Skip (and validate) the value at s->p; a string's text is left in
 * s->key. */
int js_skip_value(sh_t *s);

/* ---- json_infer.c ---- */

/* Infer the shape of the value at s->p under `name`.  *out (caller frees
 * with floe_rnode_free) is NULL when the value carries no type. */
int js_infer(sh_t *s, const uint8_t *name, size_t name_len, floe_rnode_t **out);

#endif
