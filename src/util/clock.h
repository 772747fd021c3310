/* Clocks.  Monotonic time for timeouts and latencies; wall time for what is
 * stored (Kafka timestamps, snapshot timestamps). */
#ifndef FLOE_UTIL_CLOCK_H
#define FLOE_UTIL_CLOCK_H

#include <stdint.h>

int64_t floe_mono_ns(void);
int64_t floe_mono_us(void);
int64_t floe_mono_ms(void);
int64_t floe_wall_us(void); /* microseconds since the Unix epoch */
int64_t floe_wall_ms(void); /* milliseconds since the Unix epoch */
void floe_sleep_ms(int64_t ms);

#endif
