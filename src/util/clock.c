#define _POSIX_C_SOURCE 200809L
#include "util/clock.h"

#include <errno.h>
#include <stdio.h>
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

struct timespec floe_deadline_ms(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + (ms % 1000) * 1000000;
    ts.tv_sec += (time_t)(ms / 1000 + ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    return ts;
}

int floe_time_iso(char *out, size_t size, int64_t t, int digits, bool zone)
{
    bool date = digits == FLOE_TIME_DATE;
    if (digits < 0) digits = 0;
    if (digits > 9) digits = 9;
    int64_t per = 1;
    for (int i = 0; i < digits; i++) per *= 10;
    int64_t s = t / per, frac = t % per;
    if (frac < 0) {
        frac += per;
        s--;
    }
    struct tm tm;
    time_t tt = (time_t)s;
    if ((date && (s > INT64_MAX / 86400 || s < INT64_MIN / 86400)) ||
        !gmtime_r(date ? &(time_t){tt * 86400} : &tt, &tm)) {
        snprintf(out, size, "%lld", (long long)t);
        return -1;
    }
    if (date)
        return snprintf(out, size, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    char f[24] = "";
    if (digits) snprintf(f, sizeof f, ".%0*lld", digits, (long long)frac); /* 0 <= frac < per */
    return snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d%s%s", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, f,
                    zone ? "Z" : "");
}
