/* A small blocking HTTP client (libcurl): the operator CLI asking a running
 * server, and the object store and REST catalog clients to come.  One
 * request per call, no connection reuse, no proxy (floe's calls go where
 * they are pointed).  Thread-safe: every call has its own handle. */
#ifndef FLOE_HTTP_CLIENT_H
#define FLOE_HTTP_CLIENT_H

#include <stddef.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct floe_http_call {
    const char *method;         /* "GET" (default when NULL), "POST", "PUT", ... */
    const char *url;            /* required */
    const char *const *headers; /* "Name: value" lines, NULL-terminated; may be NULL */
    const void *body;           /* request body (may be NULL: none, or empty for POST) */
    size_t body_len;
    long connect_timeout_ms; /* default 1000 */
    long timeout_ms;         /* the whole call; 0: no limit */
    size_t max_answer;       /* largest answer body taken; default 64 MiB */
    const char *ca_file;     /* PEM CAs an https server's certificate is checked against;
                                NULL: the system's */
} floe_http_call_t;

/* Make the call c describes (everything borrowed for the call).  When an
 * answer came, whatever its status, returns 0 with the status in *status
 * and the body appended to *answer (caller frees with floe_buf_free).
 * Otherwise -1 with *err: FLOE_EIO and libcurl's reason when the server
 * cannot be reached or the call timed out, FLOE_ERANGE when the body is
 * larger than max_answer, FLOE_EINVAL without a url. */
int floe_http_call(const floe_http_call_t *c, long *status, floe_buf_t *answer, floe_err_t *err);

#endif
