#include "cmd/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "util/parse.h"

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

int floe_cli_split_hostport(const char *s, char *host, size_t hn, int *port, floe_err_t *err)
{
    const char *colon = strrchr(s, ':');
    if (!colon) return floe_err_set(err, FLOE_EINVAL, "'%s' is not HOST:PORT", s);
    size_t n = (size_t)(colon - s);
    const char *h = s;
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hn) return floe_err_set(err, FLOE_EINVAL, "host too long in '%s'", s);
    memcpy(host, h, n);
    host[n] = 0;
    int64_t p;
    if (floe_parse_int64(colon + 1, 0, 65535, &p, err)) {
        floe_err_wrap(err, "port in '%s'", s);
        return -1;
    }
    *port = (int)p;
    return 0;
}
