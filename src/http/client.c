/* The HTTP client (client.h) on libcurl's easy interface. */
#include "http/client.h"

#include <curl/curl.h>
#include <pthread.h>
#include <string.h>

#define DEFAULT_MAX_ANSWER ((size_t)64 << 20)

typedef struct sink {
    floe_buf_t *out;
    size_t start, max;
    bool too_big, oom;
} sink_t;

static size_t on_body(char *p, size_t sz, size_t nm, void *arg)
{
    sink_t *s = arg;
    size_t n = sz * nm;
    if (s->out->len - s->start + n > s->max) {
        s->too_big = true;
        return 0;
    }
    if (floe_buf_append(s->out, p, n)) {
        s->oom = true;
        return 0;
    }
    return n;
}

/* libcurl's global state, set up once per process (and kept: its
 * teardown is not thread-safe). */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int floe_http_call(const floe_http_call_t *c, long *status, floe_buf_t *answer, floe_err_t *err)
{
    *status = 0;
    if (!c->url) return floe_err_set(err, FLOE_EINVAL, "http: no url");
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return floe_err_set(err, FLOE_EIO, "http: cannot start libcurl: %s",
                            curl_easy_strerror(curl_init_rc));
    CURL *h = curl_easy_init();
    if (!h) return floe_err_set(err, FLOE_EIO, "http: cannot start an HTTP client");
    struct curl_slist *hdrs = NULL;
    for (size_t i = 0; c->headers && c->headers[i]; i++) {
        struct curl_slist *n = curl_slist_append(hdrs, c->headers[i]);
        if (!n) {
            curl_slist_free_all(hdrs);
            curl_easy_cleanup(h);
            return floe_err_oom(err);
        }
        hdrs = n;
    }
    sink_t s = {answer, answer->len, c->max_answer ? c->max_answer : DEFAULT_MAX_ANSWER, false,
                false};
    char cerr[CURL_ERROR_SIZE] = "";
    const char *method = c->method ? c->method : "GET";
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     c->connect_timeout_ms > 0 ? c->connect_timeout_ms : 1000L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms > 0 ? c->timeout_ms : 0L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    if (hdrs) curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    if (c->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (!strcmp(method, "HEAD")) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (c->body || !strcmp(method, "POST") || !strcmp(method, "PUT")) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body ? (const char *)c->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD") && strcmp(method, "POST"))
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    CURLcode cc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    if (s.oom) return floe_err_oom(err);
    if (s.too_big)
        return floe_err_set(err, FLOE_ERANGE, "%s %s: the answer is larger than %zu bytes", method,
                            c->url, s.max);
    if (cc != CURLE_OK)
        return floe_err_set(err, FLOE_EIO, "%s %s: %s", method, c->url,
                            cerr[0] ? cerr : curl_easy_strerror(cc));
    return 0;
}
