#include "cmd/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"

void floe_cli_quiet_logs(void)
{
    const char *lv = getenv("FLOE_LOG_LEVEL");
    if (!lv || !*lv) floe_diag_set_level(FLOE_DIAG_OFF);
}

void floe_cli_fail(const char *group, const char *sub, const floe_err_t *err)
{
    char msg[FLOE_ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->code ? err->msg : "failed");
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    if (sub) fprintf(stderr, "floe %s %s: %s\n", group, sub, msg);
    else
        fprintf(stderr, "floe %s: %s\n", group, msg);
}
