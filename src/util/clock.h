/* Clocks.  Monotonic time for timeouts and latencies; wall time for what is
 * stored (Kafka timestamps, snapshot timestamps). */
#ifndef FLOE_UTIL_CLOCK_H
#define FLOE_UTIL_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

int64_t floe_mono_ns(void);
int64_t floe_mono_us(void);
int64_t floe_mono_ms(void);
int64_t floe_wall_us(void); /* microseconds since the Unix epoch */
int64_t floe_wall_ms(void); /* milliseconds since the Unix epoch */
void floe_sleep_ms(int64_t ms);
/* The CLOCK_REALTIME time ms from now, as pthread_cond_timedwait wants its
 * deadline. */
struct timespec floe_deadline_ms(int64_t ms);

/* floe_time_iso's digits for a date alone: t counts days. */
#define FLOE_TIME_DATE (-1)

/* The ISO-8601 text of a UTC time, the one time formatter (logs, the CLI,
 * table rows): t counts units of 10^-digits seconds since the Unix epoch
 * (digits 0..9: 3 for milliseconds, 6 for microseconds, 9 for nanoseconds)
 * and is written with that many fraction digits, then "Z" when zone:
 * "2026-12-02T15:10:46.934Z".  With FLOE_TIME_DATE, t counts days and the
 * text is "2026-12-02".  Times before 1970 count down (-1 ms is
 * "1969-12-31T23:59:59.999Z").  Writes into out[0..size) (40 bytes always
 * suffice) and returns the length; -1 when the time is beyond what the
 * calendar functions represent, with t written as a plain number instead. */
int floe_time_iso(char *out, size_t size, int64_t t, int digits, bool zone);

#endif
