/* http/: the libmicrohttpd server wrapper (routes by longest prefix, each
 * handler with its own argument; /health; /metrics from the writers
 * modules add) driven by floe's HTTP client (libcurl): methods, bodies,
 * statuses, the answer cap, a server that is gone. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "http/client.h"
#include "http/http.h"
#include "http/rest_int.h"
#include "test.h"

/* Answers "<arg> <method> <path> <body>". */
static int echo(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    rs->content_type = "text/plain";
    return floe_buf_printf(&rs->body, "%s %s %s %.*s", (const char *)arg, rq->method, rq->path,
                           (int)rq->body_len, rq->body ? (const char *)rq->body : "");
}

/* Answers the query: "deleted=<given or not> permanent=<value or ->". */
static int query(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)arg;
    int deleted;
    floe_http_query(rq, "deleted", &deleted);
    const char *v = floe_http_query(rq, "permanent", NULL);
    return floe_buf_printf(&rs->body, "deleted=%s permanent=%s", deleted ? "given" : "no",
                           v ? v : "-");
}

static int teapot(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)rq;
    (void)arg;
    rs->status = 418;
    return floe_buf_append_str(&rs->body, "short and stout");
}

static int broken(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)rq;
    (void)rs;
    (void)arg;
    return -1;
}

/* Answers what the request's query and headers hold, with an ETag; an
 * empty 204 for /q/none. */
static int queries(const floe_http_req_t *rq, floe_http_resp_t *rs, void *arg)
{
    (void)arg;
    if (!strcmp(rq->path, "/q/none")) {
        rs->status = 204;
        return 0;
    }
    int present = -1;
    const char *k = floe_http_query(rq, "k", &present);
    const char *h = floe_http_header(rq, "x-test");
    snprintf(rs->etag, sizeof rs->etag, "\"e1\"");
    return floe_buf_printf(&rs->body, "k=[%s] present=%d h=[%s]", k ? k : "(null)", present,
                           h ? h : "(null)");
}

/* One raw HTTP/1.0 exchange: the whole answer, headers included (caller
 * frees). */
static char *raw(int port, const char *request)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(write(fd, request, strlen(request)) == (ssize_t)strlen(request));
    floe_buf_t b = FLOE_BUF_INIT;
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) floe_buf_append(&b, chunk, (size_t)n);
    close(fd);
    floe_buf_append_u8(&b, 0);
    size_t len;
    return (char *)floe_buf_detach(&b, &len);
}

/* Query arguments (absent, empty, URL-decoded), request headers in any
 * case, the ETag header; no Content-Type on an empty 204. */
static void query_headers_etag(void)
{
    floe_err_t e;
    floe_http_t *h = NULL;
    CHECK(floe_http_new(&h, &e) == 0);
    CHECK(floe_http_route(h, "/q", queries, NULL) == 0);
    CHECK(floe_http_start(h, "127.0.0.1", 0, &e) == 0);
    int port = floe_http_port(h);
    char *got = raw(port, "GET /q?k=a%20b HTTP/1.0\r\nX-Test: hi\r\n\r\n");
    CHECK(strstr(got, "k=[a b] present=1 h=[hi]") != NULL);
    CHECK(strstr(got, "\r\nETag: \"e1\"\r\n") != NULL);
    free(got);
    got = raw(port, "GET /q?k=&x=1 HTTP/1.0\r\n\r\n");
    CHECK(strstr(got, "k=[] present=1 h=[(null)]") != NULL);
    free(got);
    got = raw(port, "GET /q?k HTTP/1.0\r\n\r\n");
    CHECK(strstr(got, "k=[] present=1") != NULL);
    free(got);
    got = raw(port, "GET /q?x=1 HTTP/1.0\r\n\r\n");
    CHECK(strstr(got, "k=[(null)] present=0") != NULL);
    free(got);
    got = raw(port, "GET /q/none HTTP/1.0\r\n\r\n");
    CHECK(!strncmp(got, "HTTP/1.1 204", 12) || !strncmp(got, "HTTP/1.0 204", 12));
    CHECK(strstr(got, "Content-Type") == NULL);
    free(got);
    floe_http_free(h);
}

static floe_http_t *start(int *port)
{
    floe_err_t e;
    floe_http_t *h = NULL;
    static char a[] = "A", b[] = "B";
    CHECK(floe_http_new(&h, &e) == 0);
    CHECK(floe_http_route(h, "/x", echo, a) == 0);
    CHECK(floe_http_route(h, "/x/y", echo, b) == 0);
    CHECK(floe_http_route(h, "/tea", teapot, NULL) == 0);
    CHECK(floe_http_route(h, "/q", query, NULL) == 0);
    CHECK(floe_http_route(h, "/broken", broken, NULL) == 0);
    CHECK(floe_http_start(h, "127.0.0.1", 0, &e) == 0);
    *port = floe_http_port(h);
    CHECK(*port > 0);
    return h;
}

/* One call; the answer as a string (caller frees) and *status, or NULL
 * with *err. */
static char *call(const char *method, const char *url, const char *body, size_t max, long *status,
                  floe_err_t *err)
{
    floe_http_call_t c = {.method = method,
                          .url = url,
                          .body = body,
                          .body_len = body ? strlen(body) : 0,
                          .timeout_ms = 10000,
                          .max_answer = max};
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_http_call(&c, status, &b, err)) {
        floe_buf_free(&b);
        return NULL;
    }
    floe_buf_append_u8(&b, 0);
    size_t n;
    return (char *)floe_buf_detach(&b, &n);
}

/* A broker with thousands of partitions has descriptors above
 * FD_SETSIZE (1024) open when the listener starts; the server's own
 * descriptors then land above it too, and it still serves. */
static void serves_with_descriptors_above_fd_setsize(void)
{
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    if (rl.rlim_cur < 2048) {
        rl.rlim_cur = rl.rlim_max < 2048 ? rl.rlim_max : 2048;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    if (rl.rlim_cur < 1200) {
        printf("ok - serves_with_descriptors_above_fd_setsize # SKIP open-file limit %llu\n",
               (unsigned long long)rl.rlim_cur);
        return;
    }
    /* every descriptor below 1100 taken: whatever the server opens is
     * above FD_SETSIZE */
    int held[1100], n = 0;
    int fd;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd < 1100) held[n++] = fd;
    CHECK(fd >= 1024);
    if (fd >= 0) held[n++] = fd;
    int port;
    floe_http_t *h = start(&port);
    char url[200];
    floe_err_t e;
    long st = 0;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x/fd", port);
    char *got = call("POST", url, "high", 0, &st, &e);
    CHECK_EQ(st, 200);
    CHECK_STR(got, "A POST /x/fd high");
    free(got);
    floe_http_free(h);
    for (int i = 0; i < n; i++) close(held[i]);
}

static void routes_answer_with_their_argument(void)
{
    int port;
    floe_http_t *h = start(&port);
    char url[200];
    floe_err_t e;
    long st;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x/1", port);
    char *got = call(NULL, url, NULL, 0, &st, &e);
    CHECK_STR(got, "A GET /x/1 ");
    CHECK_EQ(st, 200);
    free(got);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x/y/2", port);
    got = call("POST", url, "hello", 0, &st, &e);
    CHECK_STR(got, "B POST /x/y/2 hello");
    free(got);
    got = call("PUT", url, "put body", 0, &st, &e);
    CHECK_STR(got, "B PUT /x/y/2 put body");
    free(got);
    got = call("DELETE", url, NULL, 0, &st, &e);
    CHECK_STR(got, "B DELETE /x/y/2 ");
    free(got);
    /* query arguments arrive decoded, apart from the path */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/q/s?deleted&permanent=tr%%75e", port);
    got = call("DELETE", url, NULL, 0, &st, &e);
    CHECK_STR(got, "deleted=given permanent=true");
    free(got);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/q/s?permanently=1&x=waytoolongavalue", port);
    got = call(NULL, url, NULL, 0, &st, &e);
    CHECK_STR(got, "deleted=no permanent=-");
    free(got);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/q", port);
    got = call(NULL, url, NULL, 0, &st, &e);
    CHECK_STR(got, "deleted=no permanent=-");
    free(got);
    /* statuses other than 200 are answers too */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/tea", port);
    got = call(NULL, url, NULL, 0, &st, &e);
    CHECK_STR(got, "short and stout");
    CHECK_EQ(st, 418);
    free(got);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/nothing", port);
    got = call(NULL, url, NULL, 0, &st, &e);
    CHECK(got != NULL);
    CHECK_EQ(st, 404);
    free(got);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/broken", port);
    got = call(NULL, url, NULL, 0, &st, &e);
    CHECK(got != NULL);
    CHECK_EQ(st, 500);
    free(got);
    floe_http_free(h);
}

static int counter(void *arg, floe_buf_t *out)
{
    return floe_buf_printf(out, "%s 1\n", (const char *)arg);
}

static int failing(void *arg, floe_buf_t *out)
{
    (void)arg;
    (void)out;
    return -1;
}

/* /health, and /metrics: every writer in the order added, the process's
 * own metrics among them; a failing writer makes the scrape fail. */
static void health_and_metrics(void)
{
    floe_err_t e;
    floe_http_t *h = NULL;
    static char a[] = "first_total", b[] = "second_total";
    CHECK(floe_http_new(&h, &e) == 0);
    CHECK(floe_http_metrics_add(h, counter, a) == 0);
    CHECK(floe_http_metrics_add(h, floe_http_process_metrics, NULL) == 0);
    CHECK(floe_http_metrics_add(h, counter, b) == 0);
    CHECK(floe_http_start(h, "127.0.0.1", 0, &e) == 0);
    char url[200];
    long st;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/health", floe_http_port(h));
    char *got = call(NULL, url, NULL, 0, &st, &e);
    CHECK_STR(got, "ok\n");
    free(got);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", floe_http_port(h));
    got = call(NULL, url, NULL, 0, &st, &e);
    CHECK_EQ(st, 200);
    CHECK(got && !strncmp(got, "first_total 1\n", 14));
    const char *rss = got ? strstr(got, "\nprocess_resident_memory_bytes ") : NULL;
    CHECK(rss && atol(rss + 32) > 0);
    CHECK(got && strstr(got, "floe_heap_bytes{state=\"in_use\"} ") != NULL);
    size_t n = got ? strlen(got) : 0;
    CHECK(n > 15 && !strcmp(got + n - 15, "second_total 1\n"));
    free(got);
    floe_http_free(h);

    CHECK(floe_http_new(&h, &e) == 0);
    CHECK(floe_http_metrics_add(h, counter, a) == 0);
    CHECK(floe_http_metrics_add(h, failing, NULL) == 0);
    CHECK(floe_http_start(h, "127.0.0.1", 0, &e) == 0);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", floe_http_port(h));
    got = call(NULL, url, NULL, 0, &st, &e);
    CHECK_EQ(st, 500);
    free(got);
    floe_http_free(h);
}

static void client_errors(void)
{
    int port;
    floe_http_t *h = start(&port);
    char url[200];
    floe_err_t e;
    long st;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/tea", port);
    CHECK(call(NULL, url, NULL, 5, &st, &e) == NULL);
    CHECK_EQ(e.code, FLOE_ERANGE);
    floe_http_free(h); /* the port is closed now */
    CHECK(call(NULL, url, NULL, 0, &st, &e) == NULL);
    CHECK_EQ(e.code, FLOE_EIO);
    CHECK(strstr(e.msg, url) != NULL);
    floe_http_call_t none = {0};
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_http_call(&none, &st, &b, &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
}

/* HTTP Basic credentials (RFC 7617, as OAuth2 clients send them, each
 * part form-urlencoded): decoded through util/base64, padding exact. */
static void basic_credentials(void)
{
    char id[64], secret[64];
    CHECK(floe_rest_basic_credentials("Basic dXNlcjpwYXNz", id, secret, sizeof id));
    CHECK_STR(id, "user");
    CHECK_STR(secret, "pass");
    /* "ab:c" and "ab:cd": one and two padding characters */
    CHECK(floe_rest_basic_credentials("Basic YWI6Yw==", id, secret, sizeof id));
    CHECK_STR(secret, "c");
    CHECK(floe_rest_basic_credentials("basic YWI6Y2Q=", id, secret, sizeof id));
    CHECK_STR(id, "ab");
    CHECK_STR(secret, "cd");
    /* "a%3Ab:s+t" -> "a:b", "s t"; an empty secret */
    CHECK(floe_rest_basic_credentials("Basic YSUzQWI6cyt0", id, secret, sizeof id));
    CHECK_STR(id, "a:b");
    CHECK_STR(secret, "s t");
    CHECK(floe_rest_basic_credentials("Basic dTo=", id, secret, sizeof id));
    CHECK_STR(id, "u");
    CHECK_STR(secret, "");
    CHECK(!floe_rest_basic_credentials("Basic dXNlcg==", id, secret, sizeof id));    /* no ':' */
    CHECK(!floe_rest_basic_credentials("Basic dXNlcjpwYXN", id, secret, sizeof id)); /* length */
    CHECK(!floe_rest_basic_credentials("Basic dXN*cjpwYXNz", id, secret, sizeof id));
    CHECK(!floe_rest_basic_credentials("Basic dQA6cA==", id, secret, sizeof id)); /* NUL inside */
    CHECK(!floe_rest_basic_credentials("Bearer dXNlcjpwYXNz", id, secret, sizeof id));
    CHECK(!floe_rest_basic_credentials("Basic ", id, secret, sizeof id));
    CHECK(!floe_rest_basic_credentials("Basic dXNlcjpwYXNz", id, secret, 8)); /* too long */
}

TEST_MAIN({
    RUN(basic_credentials);
    RUN(routes_answer_with_their_argument);
    RUN(health_and_metrics);
    RUN(client_errors);
    RUN(query_headers_etag);
    RUN(serves_with_descriptors_above_fd_setsize);
})
