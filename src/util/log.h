/* Logging: one line per event, to stderr, timestamped (UTC, ms), written with
 * a single write() so lines from threads never interleave.
 *   2026-12-02T14:30:00.123Z INFO  kafka: client 127.0.0.1:5123 connected
 * The level threshold is process-wide; FLOE_LOG_LEVEL (debug|info|warn|error)
 * in the environment sets the initial one. */
#ifndef FLOE_UTIL_LOG_H
#define FLOE_UTIL_LOG_H

typedef enum floe_log_level {
    FLOE_LOG_DEBUG = 0,
    FLOE_LOG_INFO,
    FLOE_LOG_WARN,
    FLOE_LOG_ERROR,
    FLOE_LOG_OFF
} floe_log_level_t;

void floe_log_set_level(floe_log_level_t level);
floe_log_level_t floe_log_get_level(void);
/* "debug", "info", "warn", "error", "off" -> level; -1 if unknown. */
int floe_log_level_parse(const char *s);

void floe_log(floe_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define FLOE_DEBUG(...) floe_log(FLOE_LOG_DEBUG, __VA_ARGS__)
#define FLOE_INFO(...) floe_log(FLOE_LOG_INFO, __VA_ARGS__)
#define FLOE_WARN(...) floe_log(FLOE_LOG_WARN, __VA_ARGS__)
#define FLOE_ERROR(...) floe_log(FLOE_LOG_ERROR, __VA_ARGS__)

#endif
