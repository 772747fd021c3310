#define _POSIX_C_SOURCE 200809L
#include "util/clock.h"

#include <errno.h>
#include <time.h>

static int64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t floe_mono_ns(void)
{
    return ns_of(CLOCK_MONOTONIC);
}
int64_t floe_mono_us(void)
{
    return ns_of(CLOCK_MONOTONIC) / 1000;
}
int64_t floe_mono_ms(void)
{
    return ns_of(CLOCK_MONOTONIC) / 1000000;
}
int64_t floe_wall_us(void)
{
    return ns_of(CLOCK_REALTIME) / 1000;
}
int64_t floe_wall_ms(void)
{
    return ns_of(CLOCK_REALTIME) / 1000000;
}

void floe_sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}
