/* Helpers shared by the commands (`floe topic`, `floe table`, `floe serve`,
 * `floe sink`): quiet library logging, the one-line error contract (exit
 * 1, one line on stderr saying what and why), HOST:PORT. */
#ifndef FLOE_CMD_CLI_H
#define FLOE_CMD_CLI_H

#include <stddef.h>

#include "util/err.h"

/* Library log lines (FLOE_WARN ...) would add lines to stderr: turn them
 * off unless FLOE_LOG_LEVEL asks for them. */
void floe_cli_quiet_logs(void);

/* Print "floe GROUP SUB: MESSAGE" ("floe table scan: ...") as one line on
 * stderr, without SUB when it is NULL; newlines in the message become
 * spaces.  Arguments borrowed. */
void floe_cli_fail(const char *group, const char *sub, const floe_err_t *err);

/* Split "HOST:PORT" (an IPv6 host in brackets) into host (hn bytes) and
 * *port (0..65535).  s borrowed.  0, or -1 with *err saying what is
 * wrong. */
int floe_cli_split_hostport(const char *s, char *host, size_t hn, int *port, floe_err_t *err);

#endif
