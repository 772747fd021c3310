/* Instants written as text: RFC 3339 date-times such as
 * "2026-12-02T17:16:57.123Z" or "2026-12-02 18:16:57+01:00", the form JSON
 * producers use for timestamps.  JSON inference types such strings as
 * timestamptz columns, so that time transforms (day(ts)) apply to them. */
#ifndef FLOE_TABLE_TSTAMP_H
#define FLOE_TABLE_TSTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parse p[0..n) as a complete date-time with a zone (Z, +HH:MM, +HHMM or
 * +HH; 'T', 't' or ' ' between date and time; 1 to 9 fraction digits,
 * kept to the microsecond).  True with *us = microseconds since
 * 1970-01-01T00:00:00Z; false for anything else (no partial matches, no
 * zone-less local times, years 0001..9999 only). */
bool floe_tstamp_parse(const uint8_t *p, size_t n, int64_t *us);

/* us (microseconds since the epoch) as RFC 3339 UTC text with six
 * fraction digits, "2026-12-02T17:16:57.123000Z", into out (at least 32
 * bytes): true, or false for an instant outside years 0001..9999. */
bool floe_tstamp_format(int64_t us, char *out);

#endif
