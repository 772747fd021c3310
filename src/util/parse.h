/* Parsers for human-written sizes and durations in configs and flags.
 *
 * Sizes: a whole number with an optional unit, case-insensitive:
 *   B; KB MB GB TB (powers of 1000); KiB MiB GiB TiB (powers of 1024).
 *   "64MB" = 64000000, "32MiB" = 33554432, "4096" = 4096.
 * Durations: a number (fractions allowed) with an optional unit:
 *   us, ms, s, m or min, h, d; no unit means milliseconds (Kafka's *.ms).
 *   "10s" = 10000 ms, "500ms", "1.5s" = 1500 ms.  Results must be a whole,
 *   non-negative number of the output unit.
 * Both reject empty input, signs, junk after the unit and overflow, with a
 * message that quotes the input and says what is accepted. */
#ifndef FLOE_UTIL_PARSE_H
#define FLOE_UTIL_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

int floe_parse_size(const char *s, uint64_t *out, floe_err_t *err);
int floe_parse_duration_ms(const char *s, int64_t *out, floe_err_t *err);
int floe_parse_duration_us(const char *s, int64_t *out, floe_err_t *err);
/* A decimal integer in [min,max], nothing else. */
int floe_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out, floe_err_t *err);
/* "true"/"false" (also 1/0, yes/no, on/off). */
int floe_parse_bool(const char *s, bool *out, floe_err_t *err);

#endif
