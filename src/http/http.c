/* libmicrohttpd glue: one internal poll() thread and a thread per
 * connection, prefix routing, request bodies gathered up to a cap. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "http/http.h"
#include "util/diag.h"

#define MAX_ROUTES 32
#define MAX_METRICS 16
#define MAX_BODY (64u << 20)

typedef struct route {
    char *prefix;
    floe_http_fn fn;
    void *arg;
} route_t;

typedef struct metrics_writer {
    floe_http_metrics_fn fn;
    void *arg;
} metrics_writer_t;

struct floe_http {
    struct MHD_Daemon *d;
    route_t routes[MAX_ROUTES];
    int nroutes;
    metrics_writer_t metrics[MAX_METRICS];
    int nmetrics;
    int port;
};

typedef struct pending {
    floe_buf_t body;
    int too_big;
} pending_t;

static int h_health(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)rq;
    (void)arg;
    return floe_buf_append_str(&rs->body, "ok\n");
}

static int h_metrics(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)rq;
    const floe_http_t *h = arg;
    rs->content_type = "text/plain; version=0.0.4";
    for (int i = 0; i < h->nmetrics; i++)
        if (h->metrics[i].fn(h->metrics[i].arg, &rs->body) < 0) return -1;
    return 0;
}

int floe_http_new(floe_http_t **out, floe_err_t *err)
{
    floe_http_t *h = calloc(1, sizeof *h);
    if (!h) return floe_err_oom(err);
    if (floe_http_route(h, "/health", h_health, NULL) ||
        floe_http_route(h, "/metrics", h_metrics, h)) {
        floe_http_free(h);
        return floe_err_oom(err);
    }
    *out = h;
    return 0;
}

int floe_http_metrics_add(floe_http_t *h, floe_http_metrics_fn fn, void *arg)
{
    if (h->nmetrics == MAX_METRICS) return -1;
    h->metrics[h->nmetrics++] = (metrics_writer_t){fn, arg};
    return 0;
}

int floe_http_route(floe_http_t *h, const char *prefix, floe_http_fn fn, void *arg)
{
    if (h->nroutes == MAX_ROUTES) return -1;
    char *p = strdup(prefix);
    if (!p) return -1;
    h->routes[h->nroutes++] = (route_t){p, fn, arg};
    return 0;
}

static const route_t *find_route(const floe_http_t *h, const char *path)
{
    const route_t *best = NULL;
    for (int i = 0; i < h->nroutes; i++) {
        size_t n = strlen(h->routes[i].prefix);
        if (!strncmp(path, h->routes[i].prefix, n) && (!best || n > strlen(best->prefix)))
            best = &h->routes[i];
    }
    return best;
}

const char *floe_http_query(const floe_http_req_t *req, const char *key, int *present)
{
    const char *v = NULL;
    size_t n = 0;
    enum MHD_Result r =
        MHD_lookup_connection_value_n(req->conn, MHD_GET_ARGUMENT_KIND, key, strlen(key), &v, &n);
    if (present) *present = r == MHD_YES;
    if (r != MHD_YES) return NULL;
    return v ? v : "";
}

const char *floe_http_header(const floe_http_req_t *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

/* Add each "Name: value\n" line of headers (may be NULL) to r. */
static void add_headers(struct MHD_Response *r, const char *headers)
{
    for (const char *p = headers; p && *p;) {
        const char *colon = strchr(p, ':'), *end = strchr(p, '\n');
        if (!end) end = p + strlen(p);
        char name[64], value[256];
        size_t nl = colon && colon < end ? (size_t)(colon - p) : 0;
        const char *v = nl ? colon + 1 : end;
        while (v < end && *v == ' ') v++;
        size_t vl = (size_t)(end - v);
        if (nl && nl < sizeof name && vl < sizeof value) {
            memcpy(name, p, nl);
            name[nl] = '\0';
            memcpy(value, v, vl);
            value[vl] = '\0';
            MHD_add_response_header(r, name, value);
        }
        p = *end ? end + 1 : end;
    }
}

static enum MHD_Result reply(struct MHD_Connection *conn, int status, const char *ctype, void *data,
                             size_t len, int owned, const char *etag, const char *headers)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, data, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
    if (!r) {
        if (owned) free(data);
        return MHD_NO;
    }
    /* no body, no type: 204 and 304 */
    if (len || (status != 204 && status != 304)) MHD_add_response_header(r, "Content-Type", ctype);
    if (etag && *etag) MHD_add_response_header(r, "ETag", etag);
    add_headers(r, headers);
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    floe_http_t *h = cls;
    pending_t *p = *con_cls;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p) return MHD_NO;
        *con_cls = p;
        return MHD_YES;
    }
    if (*upload_size) {
        if (p->body.len + *upload_size > MAX_BODY ||
            floe_buf_append(&p->body, upload, *upload_size))
            p->too_big = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    if (p->too_big) {
        static char msg[] = "request body too large\n";
        return reply(conn, 413, "text/plain", msg, sizeof msg - 1, 0, NULL, NULL);
    }
    const route_t *rt = find_route(h, url);
    if (!rt) {
        static char msg[] = "not found\n";
        return reply(conn, 404, "text/plain", msg, sizeof msg - 1, 0, NULL, NULL);
    }
    floe_http_req_t rq = {method, url, p->body.data, p->body.len, conn};
    floe_http_resp_t rs = {200, "text/plain", FLOE_BUF_INIT, "", NULL};
    if (rt->fn(&rq, &rs, rt->arg)) {
        floe_buf_free(&rs.body);
        static char msg[] = "internal error\n";
        return reply(conn, 500, "text/plain", msg, sizeof msg - 1, 0, NULL, NULL);
    }
    size_t len;
    uint8_t *data = floe_buf_detach(&rs.body, &len);
    return reply(conn, rs.status, rs.content_type ? rs.content_type : "text/plain", data, len, 1,
                 rs.etag, rs.headers);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    pending_t *p = *con_cls;
    if (p) {
        floe_buf_free(&p->body);
        free(p);
        *con_cls = NULL;
    }
}

int floe_http_start(floe_http_t *h, const char *host, int port, floe_err_t *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc)
        return floe_err_set(err, FLOE_EINVAL, "http: cannot resolve '%s': %s", host,
                            gai_strerror(rc));
    /* a thread per connection: a slow handler (a re-drive) holds up only
     * its own client, never /metrics or /health.  poll(), not select(): a
     * broker with thousands of partitions has descriptors above
     * FD_SETSIZE, which select mode refuses (epoll does not go with a
     * thread per connection) */
    unsigned flags =
        MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    h->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
                            ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, on_done, h,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)256, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) return floe_err_set(err, FLOE_EIO, "http: cannot listen on %s:%d", host, port);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : port;
    return 0;
}

int floe_http_port(const floe_http_t *h)
{
    return h->port;
}

void floe_http_free(floe_http_t *h)
{
    if (!h) return;
    if (h->d) MHD_stop_daemon(h->d);
    for (int i = 0; i < h->nroutes; i++) free(h->routes[i].prefix);
    free(h);
}
