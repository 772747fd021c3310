/* A table topic's pause state (ttable.h). */
#include "table/ttable.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"
#include "util/diag.h"

const char *floe_tpause_name(floe_tpause_t why)
{
    switch (why) {
    case FLOE_TPAUSE_NONE: return "";
    case FLOE_TPAUSE_CONFIG: return "config";
    case FLOE_TPAUSE_INVALID: return "invalid_record";
    case FLOE_TPAUSE_DLQ: return "dlq";
    case FLOE_TPAUSE_UNREADABLE: return "unreadable";
    case FLOE_TPAUSE_FAILED: return "failed";
    case FLOE_TPAUSE_OPERATOR: return "operator";
    }
    return "?";
}

void floe_ttable_pause(floe_ttable_t *t, floe_tpause_t why, const char *fmt, ...)
{
    if (t->paused != FLOE_TPAUSE_NONE) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->reason, sizeof t->reason, fmt, ap);
    va_end(ap);
    t->paused = why;
    if (why == t->retried && !strcmp(t->reason, t->retried_reason)) {
        t->paused_since_ms = t->retried_since_ms;
        FLOE_DEBUG("table %s.%s still paused: %s", t->main.ns, t->main.name, t->reason);
        return;
    }
    t->paused_since_ms = floe_wall_ms();
    t->pauses++;
    /* a record the configuration says to stop on, or an operator's pause,
     * is somebody's choice */
    if (why == FLOE_TPAUSE_INVALID || why == FLOE_TPAUSE_OPERATOR)
        FLOE_WARN("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
    else
        FLOE_ERROR("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
}

void floe_ttable_resume(floe_ttable_t *t)
{
    t->paused = FLOE_TPAUSE_NONE;
    t->reason[0] = '\0';
    t->paused_since_ms = 0;
    t->retried = FLOE_TPAUSE_NONE;
}

void floe_ttable_retry(floe_ttable_t *t)
{
    floe_tpause_t why = t->paused;
    int64_t since = t->paused_since_ms;
    memcpy(t->retried_reason, t->reason, sizeof t->reason);
    floe_ttable_resume(t);
    t->retried = why;
    t->retried_since_ms = since;
}

uint64_t floe_ttable_uncommitted_bytes(const floe_ttable_t *t)
{
    uint64_t b = t->open_bytes;
    for (size_t i = 0; i < t->main.npending; i++) b += (uint64_t)t->main.pending[i].file_size;
    for (size_t i = 0; i < t->dlq.npending; i++) b += (uint64_t)t->dlq.pending[i].file_size;
    return b;
}
