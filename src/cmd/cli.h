/* Helpers shared by the operator CLI (`floe topic`, `floe table`): quiet
 * library logging and the one-line error contract (exit 1, one line on
 * stderr saying what and why). */
#ifndef FLOE_CMD_CLI_H
#define FLOE_CMD_CLI_H

#include "util/err.h"

/* Library log lines (FLOE_WARN ...) would add lines to stderr: turn them
 * off unless FLOE_LOG_LEVEL asks for them. */
void floe_cli_quiet_logs(void);

/* Print "floe GROUP SUB: MESSAGE" ("floe table scan: ...") as one line on
 * stderr, without SUB when it is NULL; newlines in the message become
 * spaces.  Arguments borrowed. */
void floe_cli_fail(const char *group, const char *sub, const floe_err_t *err);

#endif
