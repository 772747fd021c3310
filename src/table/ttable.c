/* A table topic's pause state (ttable.h). */
#include "table/ttable.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/diag.h"

void floe_ttable_pause(floe_ttable_t *t, floe_tpause_t why, const char *fmt, ...)
{
    if (t->paused != FLOE_TPAUSE_NONE) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->reason, sizeof t->reason, fmt, ap);
    va_end(ap);
    t->paused = why;
    /* a record the configuration says to stop on is the user's choice */
    if (why == FLOE_TPAUSE_INVALID)
        FLOE_WARN("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
    else
        FLOE_ERROR("table %s.%s paused: %s", t->main.ns, t->main.name, t->reason);
}

void floe_ttable_resume(floe_ttable_t *t)
{
    t->paused = FLOE_TPAUSE_NONE;
    t->reason[0] = '\0';
}
