/* floe_err_t: the one error type used across floe.
 *
 * A function that can fail returns 0 on success and -1 on failure, and fills
 * the caller's floe_err_t (if non-NULL) with a code, a human-readable message
 * and whether retrying the same operation may succeed.  Kafka protocol error
 * codes are a separate space owned by src/kafka; this is floe's own. */
#ifndef FLOE_UTIL_ERR_H
#define FLOE_UTIL_ERR_H

#include <stdbool.h>

typedef enum floe_code {
    FLOE_OK = 0,
    FLOE_EINVAL,       /* bad argument or configuration */
    FLOE_ENOMEM,       /* allocation failed or a cap was hit */
    FLOE_EIO,          /* the OS or a remote store failed */
    FLOE_ENOENT,       /* no such file, table, topic, ... */
    FLOE_EEXIST,       /* already exists */
    FLOE_ECORRUPT,     /* bytes do not decode: bad CRC, bad magic, ... */
    FLOE_ETRUNC,       /* input ended early */
    FLOE_ERANGE,       /* a value is out of range */
    FLOE_ECONFLICT,    /* optimistic commit lost a race: reload and retry */
    FLOE_EUNKNOWN,     /* outcome unknown (timeout mid-commit): do not clean up */
    FLOE_EUNSUPPORTED, /* valid but not implemented or not allowed */
    FLOE_ETIMEOUT,     /* gave up waiting */
    FLOE_ECLOSED,      /* the peer or the object is closed */
    FLOE_CODE_MAX
} floe_code_t;

#define FLOE_ERR_MSG_MAX 256

typedef struct floe_err {
    floe_code_t code;
    bool retriable;
    char msg[FLOE_ERR_MSG_MAX];
} floe_err_t;

/* Fill *err (if non-NULL) and return -1, so callers can write
 * `return floe_err_set(err, FLOE_EINVAL, "bad size '%s'", s);`.
 * The message is truncated to FLOE_ERR_MSG_MAX-1 bytes. */
int floe_err_set(floe_err_t *err, floe_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, marking the error retriable. */
int floe_err_retry(floe_err_t *err, floe_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* FLOE_ENOMEM "out of memory": the one message for a failed allocation.
 * Returns -1. */
int floe_err_oom(floe_err_t *err);

/* Fill *err from errno with "<what>: <strerror>"; retriable for the
 * transient codes EAGAIN, EINTR, ETIMEDOUT, ECONNRESET and ECONNREFUSED.
 * Returns -1. */
int floe_err_errno(floe_err_t *err, int errnum, const char *what);

/* Prefix an existing message with context: "<ctx>: <old message>". */
void floe_err_wrap(floe_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void floe_err_clear(floe_err_t *err);

/* Stable short name of a code, e.g. "corrupt". Never NULL. */
const char *floe_code_name(floe_code_t code);

#endif
