#include "util/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const code_names[FLOE_CODE_MAX] = {
    [FLOE_OK] = "ok",
    [FLOE_EINVAL] = "invalid",
    [FLOE_ENOMEM] = "no memory",
    [FLOE_EIO] = "io",
    [FLOE_ENOENT] = "not found",
    [FLOE_EEXIST] = "exists",
    [FLOE_ECORRUPT] = "corrupt",
    [FLOE_ETRUNC] = "truncated",
    [FLOE_ERANGE] = "out of range",
    [FLOE_ECONFLICT] = "conflict",
    [FLOE_EUNKNOWN] = "outcome unknown",
    [FLOE_EUNSUPPORTED] = "unsupported",
    [FLOE_ETIMEOUT] = "timeout",
    [FLOE_ECLOSED] = "closed",
};

const char *floe_code_name(floe_code_t code)
{
    if ((unsigned)code >= FLOE_CODE_MAX || !code_names[code]) return "unknown";
    return code_names[code];
}

static int vset(floe_err_t *err, floe_code_t code, bool retriable, const char *fmt, va_list ap)
{
    if (!err) return -1;
    err->code = code;
    err->retriable = retriable;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return -1;
}

int floe_err_set(floe_err_t *err, floe_code_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, false, fmt, ap);
    va_end(ap);
    return -1;
}

int floe_err_retry(floe_err_t *err, floe_code_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, true, fmt, ap);
    va_end(ap);
    return -1;
}

int floe_err_oom(floe_err_t *err)
{
    return floe_err_set(err, FLOE_ENOMEM, "out of memory");
}

int floe_err_errno(floe_err_t *err, int errnum, const char *what)
{
    floe_code_t code = FLOE_EIO;
    bool retriable = false;
    switch (errnum) {
    case ENOENT: code = FLOE_ENOENT; break;
    case EEXIST: code = FLOE_EEXIST; break;
    case ENOMEM: code = FLOE_ENOMEM; break;
    case EINVAL: code = FLOE_EINVAL; break;
    case EAGAIN:
    case EINTR:
    case ETIMEDOUT:
    case ECONNRESET:
    case ECONNREFUSED: retriable = true; break;
    default: break;
    }
    if (!err) return -1;
    err->code = code;
    err->retriable = retriable;
    snprintf(err->msg, sizeof err->msg, "%s: %s", what, strerror(errnum));
    return -1;
}

void floe_err_wrap(floe_err_t *err, const char *fmt, ...)
{
    if (!err) return;
    char prefix[FLOE_ERR_MSG_MAX], old[FLOE_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* build by hand: snprintf of two full-size strings trips -Wformat-truncation */
    size_t n = strnlen(prefix, sizeof prefix);
    if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
    memcpy(err->msg, prefix, n);
    err->msg[n++] = ':';
    err->msg[n++] = ' ';
    size_t m = strnlen(old, sizeof old);
    if (m > sizeof err->msg - 1 - n) m = sizeof err->msg - 1 - n;
    memcpy(err->msg + n, old, m);
    err->msg[n + m] = '\0';
}

void floe_err_clear(floe_err_t *err)
{
    if (!err) return;
    err->code = FLOE_OK;
    err->retriable = false;
    err->msg[0] = '\0';
}
