/* Base64 (RFC 4648, the standard alphabet with '=' padding). */
#ifndef FLOE_UTIL_BASE64_H
#define FLOE_UTIL_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Append the base64 text of p[0..n) to out.  0 or -1 (out of memory). */
int floe_base64_encode(floe_buf_t *out, const void *p, size_t n);

/* Decode s[0..n) (padding required when the length needs it; no
 * whitespace) appending the bytes to out.  0, or -1 when s is not base64
 * (out then holds a partial result) or out of memory. */
int floe_base64_decode(floe_buf_t *out, const char *s, size_t n);

#endif
