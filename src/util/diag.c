#define _POSIX_C_SOURCE 200809L
#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/clock.h"

static int level = -1; /* -1: not yet read from the environment */

static const char *const names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};

int floe_diag_level_parse(const char *s)
{
    static const char *const lc[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i <= FLOE_DIAG_OFF; i++)
        if (s && strcasecmp(s, lc[i]) == 0) return i;
    return -1;
}

floe_diag_level_t floe_diag_get_level(void)
{
    int l = __atomic_load_n(&level, __ATOMIC_RELAXED);
    if (l < 0) {
        l = floe_diag_level_parse(getenv("FLOE_LOG_LEVEL"));
        if (l < 0) l = FLOE_DIAG_INFO;
        __atomic_store_n(&level, l, __ATOMIC_RELAXED);
    }
    return (floe_diag_level_t)l;
}

void floe_diag_set_level(floe_diag_level_t l)
{
    __atomic_store_n(&level, (int)l, __ATOMIC_RELAXED);
}

void floe_diag(floe_diag_level_t l, const char *fmt, ...)
{
    if (l < floe_diag_get_level() || l >= FLOE_DIAG_OFF) return;
    char line[2048];
    floe_time_iso(line, 64, floe_wall_ms(), 3, true);
    size_t n = strlen(line);
    n += (size_t)snprintf(line + n, sizeof line - n, " %s ", names[l]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n, fmt, ap);
    va_end(ap);
    if (m < 0) m = 0;
    n += (size_t)m;
    if (n > sizeof line - 2) n = sizeof line - 2; /* truncated */
    while (n && line[n - 1] == '\n') n--;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}
