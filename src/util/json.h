/* Writing JSON text: the one string escaper floe uses (RFC 8259).
 *
 * Output is always valid UTF-8 JSON: bytes that are not valid UTF-8 are
 * written as U+FFFD, control characters as \n, \r, \t or \u00XX. */
#ifndef FLOE_UTIL_JSON_H
#define FLOE_UTIL_JSON_H

#include <stddef.h>

#include "util/buf.h"

/* Append data[0..n) to b as a quoted JSON string.  0, or -1 when out of
 * memory (b then holds a partial string). */
int floe_json_str(floe_buf_t *b, const void *data, size_t n);

/* The same for a NUL-terminated string; NULL is written as null. */
int floe_json_cstr(floe_buf_t *b, const char *s);

#endif
