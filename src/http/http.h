/* The HTTP listener (libmicrohttpd): routes by path prefix to handlers that
 * other modules register, each with its own state as the route's argument
 * (the table engine's /admin/tables, the schema registry's /subjects...).
 * Every listener answers GET /health with "ok", and GET /metrics with the
 * Prometheus text of the writers modules add.  Handlers and
 * writers run on microhttpd's threads, one per connection, so they must be
 * thread-safe. */
#ifndef FLOE_HTTP_HTTP_H
#define FLOE_HTTP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct floe_http floe_http_t;

typedef struct floe_http_req {
    const char *method;  /* "GET", "POST", ... borrowed */
    const char *path;    /* URL path without the query, borrowed */
    const uint8_t *body; /* request body, borrowed (NULL when empty) */
    size_t body_len;
    void *conn; /* the server's connection, for floe_http_query/header */
} floe_http_req_t;

typedef struct floe_http_resp {
    int status;               /* default 200 */
    const char *content_type; /* static string; default text/plain */
    floe_buf_t body;          /* filled by the handler; freed by the server */
    char etag[128];           /* sent as the ETag header when not empty */
    /* more headers, static text: "Name: value" lines ended by "\n", or
     * NULL (WWW-Authenticate on a 401, Cache-Control on a token) */
    const char *headers;
} floe_http_resp_t;

/* The value of query argument key, URL-decoded (borrowed until the
 * handler returns): NULL when absent, "" when given empty ("?k=" or
 * "?k").  *present (may be NULL) tells absent from empty. */
const char *floe_http_query(const floe_http_req_t *req, const char *key, int *present);
/* The value of request header name (any case), borrowed until the handler
 * returns; NULL when absent. */
const char *floe_http_header(const floe_http_req_t *req, const char *name);

/* Fill resp for req.  Return 0; -1 makes a 500. */
typedef int (*floe_http_fn)(const floe_http_req_t *req, floe_http_resp_t *resp, void *arg);

/* Caller frees with floe_http_free. */
int floe_http_new(floe_http_t **out, floe_err_t *err);
/* Route requests whose path starts with prefix (longest prefix wins).
 * prefix is copied; arg is borrowed.  Call before floe_http_start. */
int floe_http_route(floe_http_t *h, const char *prefix, floe_http_fn fn, void *arg);
/* Appends Prometheus text for GET /metrics to out.  0, or -1 (the scrape
 * answers 500). */
typedef int (*floe_http_metrics_fn)(void *arg, floe_buf_t *out);
/* Add a writer to /metrics: writers answer in the order added, each with
 * its arg (borrowed; must outlive h).  Call before floe_http_start.  -1
 * when out of memory or full. */
int floe_http_metrics_add(floe_http_t *h, floe_http_metrics_fn fn, void *arg);
/* The process's own metrics, a floe_http_metrics_fn (arg unused): resident
 * memory and CPU (Prometheus's standard process_* names), and the malloc
 * heap split into bytes in use and bytes held free. */
int floe_http_process_metrics(void *arg, floe_buf_t *out);

/* Listen on host:port (0 picks a free port) with an internal thread. */
int floe_http_start(floe_http_t *h, const char *host, int port, floe_err_t *err);
int floe_http_port(const floe_http_t *h);
/* Stop listening and free everything. */
void floe_http_free(floe_http_t *h);

#endif
