/* Diagnostics: one line per event, to stderr, timestamped (UTC, ms), written with
 * a single write() so lines from threads never interleave.
 *   2026-12-02T14:30:00.123Z INFO  kafka: client 127.0.0.1:5123 connected
 * The level threshold is process-wide; FLOE_LOG_LEVEL (debug|info|warn|error)
 * in the environment sets the initial one. */
#ifndef FLOE_UTIL_DIAG_H
#define FLOE_UTIL_DIAG_H

typedef enum floe_diag_level {
    FLOE_DIAG_DEBUG = 0,
    FLOE_DIAG_INFO,
    FLOE_DIAG_WARN,
    FLOE_DIAG_ERROR,
    FLOE_DIAG_OFF
} floe_diag_level_t;

void floe_diag_set_level(floe_diag_level_t level);
floe_diag_level_t floe_diag_get_level(void);
/* "debug", "info", "warn", "error", "off" -> level; -1 if unknown. */
int floe_diag_level_parse(const char *s);

void floe_diag(floe_diag_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define FLOE_DEBUG(...) floe_diag(FLOE_DIAG_DEBUG, __VA_ARGS__)
#define FLOE_INFO(...) floe_diag(FLOE_DIAG_INFO, __VA_ARGS__)
#define FLOE_WARN(...) floe_diag(FLOE_DIAG_WARN, __VA_ARGS__)
#define FLOE_ERROR(...) floe_diag(FLOE_DIAG_ERROR, __VA_ARGS__)

#endif
