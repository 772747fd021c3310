/* The S3 FileIO (s3.h): requests, retries, the operations, multipart. */
#include "storage/s3.h"

#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "storage/s3_xml.h"
#include "storage/sigv4.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/rand.h"

#define DEFAULT_PART ((size_t)16 << 20)
#define MIN_PART ((size_t)5 << 20) /* S3 refuses smaller parts but the last */
#define MAX_PARTS 10000
#define POOL_MAX 16
#define BACKOFF_BASE_MS 50
#define BACKOFF_CAP_MS 5000
#define RETRY_BUDGET_MS 60000
#define BIG_BODY ((size_t)1 << 20) /* curl sends a body over this in chunks this big */

enum {
    OP_GET,
    OP_HEAD,
    OP_PUT,
    OP_COPY,
    OP_LIST,
    OP_DELETE,
    OP_DELETE_MANY,
    OP_MPU_CREATE,
    OP_MPU_PART,
    OP_MPU_COMPLETE,
    OP_MPU_ABORT,
    NOPS
};
static const char *const OP_NAMES[NOPS] = {"GetObject",           "HeadObject",
                                           "PutObject",           "CopyObject",
                                           "ListObjectsV2",       "DeleteObject",
                                           "DeleteObjects",       "CreateMultipartUpload",
                                           "UploadPart",          "CompleteMultipartUpload",
                                           "AbortMultipartUpload"};
/* the statuses counted apart; others by class */
static const int STATUSES[] = {0,   200, 204, 206, 400, 403, 404, 409,
                               412, 416, 429, 500, 502, 503, 504};
#define NSTATUS (sizeof STATUSES / sizeof STATUSES[0] + 3) /* + 2xx, 4xx, 5xx */
static const double BUCKETS[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
#define NBUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])

typedef struct s3_io {
    floe_fileio_t base;
    char *scheme_host;   /* "http://127.0.0.1:7480" (no trailing '/') */
    char *scheme, *host; /* "http", "127.0.0.1:7480" */
    char *region, *akid, *secret, *token;
    char *ca_file; /* NULL: curl's default CAs */
    bool path_style;
    bool sign_payload; /* object bodies signed (else UNSIGNED-PAYLOAD) */
    size_t part_size;
    int in_flight, attempts, list_page, delete_page;
    long timeout_ms, connect_timeout_ms;
    pthread_mutex_t mu; /* the pool and the stats */
    CURL *pool[POOL_MAX];
    int npool;
    floe_s3_stats_t st;
    /* per operation: answers by status, and the latency of each attempt */
    unsigned long long by_status[NOPS][NSTATUS];
    unsigned long long lat[NOPS][NBUCKETS + 1];
    int64_t lat_sum_ns[NOPS];
} s3_io_t;

/* ---- libcurl setup ---- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* A handle from the pool (its connections stay open between requests). */
static CURL *handle_get(s3_io_t *s)
{
    CURL *h = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->npool) h = s->pool[--s->npool];
    pthread_mutex_unlock(&s->mu);
    if (h) curl_easy_reset(h);
    else
        h = curl_easy_init();
    return h;
}

static void handle_put(s3_io_t *s, CURL *h)
{
    pthread_mutex_lock(&s->mu);
    if (s->npool < POOL_MAX) {
        s->pool[s->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (h) curl_easy_cleanup(h);
}

static void stat_add(s3_io_t *s, unsigned long long *field, unsigned long long n)
{
    pthread_mutex_lock(&s->mu);
    *field += n;
    pthread_mutex_unlock(&s->mu);
}

/* ---- paths ---- */

bool floe_fileio_is_s3(const char *path)
{
    return !strncmp(path, "s3://", 5) || !strncmp(path, "s3a://", 6) || !strncmp(path, "s3n://", 6);
}

/* Split "s3://BUCKET/KEY" into bucket and key (malloc'd, caller frees).
 * The key may be empty (the bucket's root). */
static int split_path(const char *path, char **bucket, char **key, floe_err_t *err)
{
    *bucket = *key = NULL;
    const char *p = strstr(path, "://");
    if (!floe_fileio_is_s3(path) || !p)
        return floe_err_set(err, FLOE_EINVAL, "s3: '%s' is not an s3:// path", path);
    p += 3;
    const char *slash = strchr(p, '/');
    size_t bl = slash ? (size_t)(slash - p) : strlen(p);
    if (!bl) return floe_err_set(err, FLOE_EINVAL, "s3: '%s' names no bucket", path);
    const char *k = slash ? slash + 1 : "";
    while (*k == '/') k++;
    if (!(*bucket = strndup(p, bl)) || !(*key = strdup(k))) {
        free(*bucket);
        *bucket = NULL;
        return floe_err_oom(err);
    }
    /* "a//b" as written by a join after a trailing '/': one '/' */
    char *w = *key;
    for (const char *r = *key; *r; r++)
        if (!(*r == '/' && w > *key && w[-1] == '/')) *w++ = *r;
    *w = 0;
    return 0;
}

/* ---- one request ---- */

typedef struct req {
    const char *method;
    const char *bucket, *key;     /* key may be "" (bucket-level requests) */
    const floe_sigv4_kv_t *query; /* raw, encoded here */
    size_t nquery;
    const floe_sigv4_kv_t *headers; /* extra headers, signed too */
    size_t nheaders;
    const void *body;
    size_t body_len;
    const char *payload_sha; /* the body's SHA-256 (hex) when known; NULL: computed */
    floe_buf_t *answer;      /* body of a 2xx answer (appended); NULL: dropped */
    size_t max_answer;       /* 0: 64 MiB */
    /* results */
    long status;
    char etag[128];
    floe_buf_t error_body; /* the body of a non-2xx answer */
    bool too_big;
} req_t;

typedef struct sink {
    req_t *r;
    floe_buf_t *out;
    size_t start, max;
    bool oom;
} sink_t;

static size_t on_body(char *p, size_t sz, size_t nm, void *arg)
{
    sink_t *s = arg;
    size_t n = sz * nm;
    if (s->out->len - s->start + n > s->max) {
        s->r->too_big = true;
        return 0;
    }
    if (floe_buf_append(s->out, p, n) < 0) {
        s->oom = true;
        return 0;
    }
    return n;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *arg)
{
    req_t *r = arg;
    size_t n = sz * nm;
    if (n > 5 && !strncasecmp(p, "ETag:", 5)) {
        const char *v = p + 5;
        size_t l = n - 5;
        while (l && (*v == ' ' || *v == '\t')) v++, l--;
        while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' || v[l - 1] == ' ')) l--;
        if (l < sizeof r->etag) {
            memcpy(r->etag, v, l);
            r->etag[l] = 0;
        }
    }
    return n;
}

static bool retriable_status(long st)
{
    return st == 500 || st == 502 || st == 503 || st == 504 || st == 429;
}

/* curl failures after which the request may have reached the store. */
static bool maybe_sent(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_URL_MALFORMAT:
    case CURLE_SSL_CONNECT_ERROR: /* the TLS handshake comes before the request */
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_OUT_OF_MEMORY: return false;
    default: return true;
    }
}

static bool retriable_curl(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_UNSUPPORTED_PROTOCOL: /* a garbled answer ("HTTP/0.9") */
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
    }
}

/* The store's <Code> and <Message> of an error answer, in one line. */
static void store_error(req_t *r, floe_code_t code, floe_err_t *err)
{
    char c[64] = "", m[160] = "";
    s3_xml_text(r->error_body.data, r->error_body.len, "Code", c, sizeof c);
    s3_xml_text(r->error_body.data, r->error_body.len, "Message", m, sizeof m);
    if (!*c) snprintf(c, sizeof c, "HTTP %ld", r->status);
    floe_err_set(err, code, "s3: %s s3://%s/%s: %s%s%s", r->method, r->bucket, r->key, c,
                 *m ? ": " : "", m);
}

static int build_url(s3_io_t *s, req_t *r, floe_buf_t *url, floe_buf_t *path, floe_buf_t *query,
                     floe_buf_t *host)
{
    if (s->path_style) {
        if (floe_buf_printf(host, "%s", s->host) < 0 || floe_buf_append_u8(path, '/') < 0 ||
            floe_sigv4_uri_encode(r->bucket, 0, path) < 0 || floe_buf_append_u8(path, '/') < 0)
            return -1;
    } else {
        if (floe_buf_printf(host, "%s.%s", r->bucket, s->host) < 0 ||
            floe_buf_append_u8(path, '/') < 0)
            return -1;
    }
    if (floe_sigv4_uri_encode(r->key, 1, path) < 0) return -1;
    if (floe_sigv4_query(r->query, r->nquery, query, NULL) < 0) return -1;
    return floe_buf_printf(url, "%s://%.*s%.*s%s%.*s", s->scheme, (int)host->len,
                           (const char *)host->data, (int)path->len, (const char *)path->data,
                           query->len ? "?" : "", (int)query->len, (const char *)query->data);
}

/* One attempt.  Returns the CURLcode; fills r->status and the answer. */
static CURLcode attempt(s3_io_t *s, CURL *h, req_t *r, const char *url, const char *path,
                        const char *query, const char *host, const char *payload_sha,
                        floe_err_t *err, bool *oom)
{
    char date[17];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);

    floe_sigv4_kv_t hv[24];
    size_t nh = 0;
    hv[nh++] = (floe_sigv4_kv_t){"host", host};
    hv[nh++] = (floe_sigv4_kv_t){"x-amz-date", date};
    hv[nh++] = (floe_sigv4_kv_t){"x-amz-content-sha256", payload_sha};
    if (s->token) hv[nh++] = (floe_sigv4_kv_t){"x-amz-security-token", s->token};
    for (size_t i = 0; i < r->nheaders && nh < 24; i++) hv[nh++] = r->headers[i];
    floe_sigv4_req_t sr = {r->method, path,      query, hv,      nh,       payload_sha,
                           date,      s->region, "s3",  s->akid, s->secret};
    floe_buf_t auth = FLOE_BUF_INIT, line = FLOE_BUF_INIT;
    struct curl_slist *hl = NULL;
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    if (floe_sigv4_sign(&sr, &auth, NULL, err) < 0) {
        *oom = true;
        goto done;
    }
    for (size_t i = 0; i <= nh; i++) {
        line.len = 0;
        int w = i < nh ? floe_buf_printf(&line, "%s: %s", hv[i].name, hv[i].value)
                       : floe_buf_printf(&line, "Authorization: %.*s", (int)auth.len,
                                         (const char *)auth.data);
        struct curl_slist *n = w < 0 ? NULL : curl_slist_append(hl, floe_buf_cstr(&line));
        if (!n) {
            *oom = true;
            goto done;
        }
        hl = n;
    }
    struct curl_slist *n = curl_slist_append(hl, "Expect:");
    if (n) hl = n;
    n = curl_slist_append(hl, "Content-Type:");
    if (n) hl = n;

    r->status = 0;
    r->etag[0] = 0;
    r->error_body.len = 0;
    r->too_big = false;
    /* the body goes to the answer; one that is not 2xx moves to error_body */
    floe_buf_t drop = FLOE_BUF_INIT;
    floe_buf_t *dst = r->answer ? r->answer : &drop;
    sink_t sk = {r, dst, dst->len, r->max_answer ? r->max_answer : ((size_t)64 << 20), false};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    if (s->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, s->ca_file);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, s->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, s->timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sk);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    if (!strcmp(r->method, "HEAD")) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
        if (r->body || !strcmp(r->method, "PUT") || !strcmp(r->method, "POST")) {
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
            /* parts go out in big writes, not curl's default 64 KiB ones */
            if (r->body_len >= BIG_BODY)
                curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, (long)BIG_BODY);
        }
    }
    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    if (sk.oom) *oom = true;
    size_t got = dst->len - sk.start;
    if (rc != CURLE_OK || r->status < 200 || r->status >= 300) {
        size_t keep = got < 4096 ? got : 4096;
        if (rc == CURLE_OK && keep &&
            floe_buf_append(&r->error_body, dst->data + sk.start, keep) < 0)
            *oom = true;
        dst->len = sk.start;
    }
    stat_add(s, &s->st.bytes_down, got);
    stat_add(s, &s->st.bytes_up, r->body_len);
    floe_buf_free(&drop);
done:
    floe_buf_free(&auth);
    floe_buf_free(&line);
    curl_slist_free_all(hl);
    return rc;
}

static bool has_query(const req_t *r, const char *name)
{
    for (size_t i = 0; i < r->nquery; i++)
        if (!strcmp(r->query[i].name, name)) return true;
    return false;
}

/* The S3 API operation a request is, for the metrics. */
static int op_of(const req_t *r)
{
    const char *m = r->method;
    if (!strcmp(m, "HEAD")) return OP_HEAD;
    if (!strcmp(m, "GET")) return *r->key ? OP_GET : OP_LIST;
    if (!strcmp(m, "PUT")) {
        if (has_query(r, "partNumber")) return OP_MPU_PART;
        for (size_t i = 0; i < r->nheaders; i++)
            if (!strcmp(r->headers[i].name, "x-amz-copy-source")) return OP_COPY;
        return OP_PUT;
    }
    if (!strcmp(m, "POST"))
        return has_query(r, "uploads")    ? OP_MPU_CREATE
               : has_query(r, "uploadId") ? OP_MPU_COMPLETE
                                          : OP_DELETE_MANY;
    return has_query(r, "uploadId") ? OP_MPU_ABORT : OP_DELETE;
}

static size_t status_slot(long st)
{
    size_t n = sizeof STATUSES / sizeof STATUSES[0];
    for (size_t i = 0; i < n; i++)
        if (STATUSES[i] == st) return i;
    return st < 300 ? n : st < 500 ? n + 1 : n + 2;
}

/* Count one attempt: its answer's status (0: none) and how long it took. */
static void record(s3_io_t *s, int op, long status, int64_t ns)
{
    size_t b = 0;
    while (b < NBUCKETS && (double)ns / 1e9 > BUCKETS[b]) b++;
    pthread_mutex_lock(&s->mu);
    s->by_status[op][status_slot(status)]++;
    s->lat[op][b]++;
    s->lat_sum_ns[op] += ns;
    pthread_mutex_unlock(&s->mu);
}

/* Send r with retries.  0 when an answer came (any status: r->status; a
 * 4xx/5xx left for the caller to map, see fail_status); -1 with *err when
 * none came in the bounded attempts: FLOE_EUNKNOWN for a request that may
 * have been applied (sent, answer lost; only for writes: idempotent reads
 * say FLOE_EIO), FLOE_EIO otherwise (retriable).  A conditional PUT
 * answered 412 may have met its own first send: settle_412 decides. */
static int request(s3_io_t *s, req_t *r, floe_err_t *err)
{
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return floe_err_set(err, FLOE_EIO, "s3: cannot start libcurl: %s",
                            curl_easy_strerror(curl_init_rc));
    floe_buf_t url = FLOE_BUF_INIT, path = FLOE_BUF_INIT, query = FLOE_BUF_INIT,
               host = FLOE_BUF_INIT;
    char sha[65] = "UNSIGNED-PAYLOAD";
    /* object data (PutObject, UploadPart) may go unsigned; the rest is small */
    if (r->payload_sha) snprintf(sha, sizeof sha, "%s", r->payload_sha);
    else if (s->sign_payload || !r->body_len || strcmp(r->method, "PUT"))
        floe_sigv4_sha256_hex(r->body ? r->body : "", r->body ? r->body_len : 0, sha);
    int ret = -1;
    CURL *h = NULL;
    bool writes = strcmp(r->method, "GET") && strcmp(r->method, "HEAD");
    bool lost = false;
    if (build_url(s, r, &url, &path, &query, &host) < 0 || !floe_buf_cstr(&url) ||
        !floe_buf_cstr(&path) || !floe_buf_cstr(&query) || !floe_buf_cstr(&host)) {
        floe_err_oom(err);
        goto out;
    }
    if (!(h = handle_get(s))) {
        floe_err_set(err, FLOE_EIO, "s3: cannot start an HTTP client");
        goto out;
    }
    int64_t t0 = floe_mono_ns();
    int op = op_of(r);
    for (int i = 0;; i++) {
        bool oom = false;
        stat_add(s, &s->st.requests, 1);
        int64_t ta = floe_mono_ns();
        CURLcode c = attempt(s, h, r, (const char *)url.data, (const char *)path.data,
                             (const char *)query.data, (const char *)host.data, sha, err, &oom);
        record(s, op, c == CURLE_OK ? r->status : 0, floe_mono_ns() - ta);
        if (oom) {
            floe_err_oom(err);
            goto out;
        }
        if (c == CURLE_WRITE_ERROR && r->too_big) {
            floe_err_set(err, FLOE_ERANGE, "s3: s3://%s/%s is over the %zu byte limit", r->bucket,
                         r->key, r->max_answer);
            goto out;
        }
        bool again;
        if (c != CURLE_OK) {
            if (writes && maybe_sent(c)) {
                lost = true;
                stat_add(s, &s->st.lost_answers, 1);
            }
            again = retriable_curl(c);
            if (!again || i + 1 >= s->attempts) {
                floe_code_t code = writes && lost ? FLOE_EUNKNOWN : FLOE_EIO;
                floe_err_retry(err, code, "s3: %s s3://%s/%s: %s%s", r->method, r->bucket, r->key,
                               curl_easy_strerror(c),
                               code == FLOE_EUNKNOWN ? " (the store may have applied it)" : "");
                stat_add(s, &s->st.errors, 1);
                goto out;
            }
        } else if (retriable_status(r->status)) {
            /* a 5xx may come after the store applied a write */
            if (writes && r->status != 429 && r->status != 503) lost = true;
            again = true;
            if (i + 1 >= s->attempts) {
                store_error(r, writes && lost ? FLOE_EUNKNOWN : FLOE_EIO, err);
                if (err) err->retriable = true;
                stat_add(s, &s->st.errors, 1);
                goto out;
            }
        } else {
            /* (a 412 to a conditional PUT after a lost answer: settle_412) */
            ret = 0;
            goto out;
        }
        int64_t cap = BACKOFF_BASE_MS << (i < 10 ? i : 10);
        if (cap > BACKOFF_CAP_MS) cap = BACKOFF_CAP_MS;
        int64_t wait = (int64_t)(floe_rand_u64() % (uint64_t)(cap + 1));
        if ((floe_mono_ns() - t0) / 1000000 + wait > RETRY_BUDGET_MS) {
            char last[64];
            if (c != CURLE_OK) snprintf(last, sizeof last, "%s", curl_easy_strerror(c));
            else
                snprintf(last, sizeof last, "HTTP %ld", r->status);
            floe_err_retry(err, lost && writes ? FLOE_EUNKNOWN : FLOE_EIO,
                           "s3: %s s3://%s/%s: still failing after %d attempts in %ds (%s)",
                           r->method, r->bucket, r->key, i + 1, RETRY_BUDGET_MS / 1000, last);
            goto out;
        }
        stat_add(s, &s->st.retries, 1);
        floe_sleep_ms(wait);
    }
out:
    if (h) handle_put(s, h);
    floe_buf_free(&url);
    floe_buf_free(&path);
    floe_buf_free(&query);
    floe_buf_free(&host);
    return ret;
}

/* An answer that is not 2xx, as an error: 404 FLOE_ENOENT, 412
 * FLOE_EEXIST, 403/400 and the rest FLOE_EIO with the store's words. */
static int fail_status(req_t *r, floe_err_t *err)
{
    floe_code_t code = r->status == 404 ? FLOE_ENOENT : r->status == 412 ? FLOE_EEXIST : FLOE_EIO;
    store_error(r, code, err);
    return -1;
}

static bool ok_status(const req_t *r)
{
    return r->status >= 200 && r->status < 300;
}

static void req_done(req_t *r)
{
    floe_buf_free(&r->error_body);
}

/* ---- reads ---- */

static int s3_get(s3_io_t *s, const char *path, const char *range, size_t max, floe_buf_t *out,
                  floe_err_t *err)
{
    char *b, *k;
    if (split_path(path, &b, &k, err) < 0) return -1;
    floe_sigv4_kv_t hr[1] = {{"range", range}};
    req_t r = {.method = "GET",
               .bucket = b,
               .key = k,
               .headers = hr,
               .nheaders = range ? 1 : 0,
               .answer = out,
               .max_answer = max};
    int rc = request(s, &r, err);
    if (rc == 0 && !ok_status(&r)) {
        if (r.status == 416) rc = 0; /* a range past the end: nothing */
        else
            rc = fail_status(&r, err);
    }
    req_done(&r);
    free(b);
    free(k);
    return rc;
}

static int s3_read(floe_fileio_t *io, const char *path, size_t max, floe_buf_t *out,
                   floe_err_t *err)
{
    return s3_get((s3_io_t *)io, path, NULL, max, out, err);
}

static int s3_read_range(floe_fileio_t *io, const char *path, uint64_t off, size_t len,
                         floe_buf_t *out, floe_err_t *err)
{
    if (!len) return 0;
    char range[64];
    snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off,
             (unsigned long long)(off + len - 1));
    size_t start = out->len;
    if (s3_get((s3_io_t *)io, path, range, len + ((size_t)1 << 30), out, err) < 0) return -1;
    if (out->len - start > len) { /* a store that ignored Range: the whole object */
        size_t have = out->len - start;
        if (off >= have) {
            out->len = start;
        } else {
            size_t n = have - (size_t)off < len ? have - (size_t)off : len;
            memmove(out->data + start, out->data + start + off, n);
            out->len = start + n;
        }
    }
    return 0;
}

/* ---- listing ---- */

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const floe_fileio_entry_t *)a)->name, ((const floe_fileio_entry_t *)b)->name);
}

/* Entries under prefix (which ends in '/' or is empty).  max_pages 0: all. */
static int list_prefix(s3_io_t *s, const char *bucket, const char *prefix, bool delimit,
                       size_t max_keys, floe_fileio_entry_t **out, size_t *n, floe_err_t *err)
{
    size_t cap = 0, plen = strlen(prefix);
    char *token = NULL;
    char page[16];
    snprintf(page, sizeof page, "%zu", max_keys ? max_keys : (size_t)s->list_page);
    int rc = 0;
    for (;;) {
        floe_sigv4_kv_t q[5];
        size_t nq = 0;
        q[nq++] = (floe_sigv4_kv_t){"list-type", "2"};
        q[nq++] = (floe_sigv4_kv_t){"prefix", prefix};
        q[nq++] = (floe_sigv4_kv_t){"max-keys", page};
        if (delimit) q[nq++] = (floe_sigv4_kv_t){"delimiter", "/"};
        if (token) q[nq++] = (floe_sigv4_kv_t){"continuation-token", token};
        floe_buf_t ans = FLOE_BUF_INIT;
        req_t r = {
            .method = "GET", .bucket = bucket, .key = "", .query = q, .nquery = nq, .answer = &ans};
        rc = request(s, &r, err);
        if (rc == 0 && !ok_status(&r)) rc = fail_status(&r, err);
        req_done(&r);
        free(token);
        token = NULL;
        if (rc == 0) rc = s3_xml_list(ans.data, ans.len, plen, out, n, &cap, &token, err);
        floe_buf_free(&ans);
        if (rc < 0 || !token || max_keys) break;
    }
    free(token);
    if (rc < 0) {
        floe_fileio_entries_free(*out, *n);
        *out = NULL;
        *n = 0;
        return -1;
    }
    if (*n > 1) qsort(*out, *n, sizeof **out, cmp_entry);
    return 0;
}

/* bucket and "key/" of a folder path (caller frees both). */
static int dir_prefix(const char *dir, char **bucket, char **prefix, floe_err_t *err)
{
    char *k;
    if (split_path(dir, bucket, &k, err) < 0) return -1;
    size_t l = strlen(k);
    if (l && k[l - 1] != '/') {
        char *p = realloc(k, l + 2);
        if (!p) {
            free(k);
            free(*bucket);
            return floe_err_oom(err);
        }
        p[l] = '/';
        p[l + 1] = 0;
        k = p;
    }
    *prefix = k;
    return 0;
}

static int s3_list_entries(floe_fileio_t *io, const char *dir, floe_fileio_entry_t **out, size_t *n,
                           floe_err_t *err)
{
    char *b = NULL, *p = NULL;
    if (dir_prefix(dir, &b, &p, err) < 0) return -1;
    int rc = list_prefix((s3_io_t *)io, b, p, true, 0, out, n, err);
    free(b);
    free(p);
    return rc;
}

/* A key: HEAD.  A path ending in '/' (or a bucket): whether any key is
 * under it (one listing of one key), as a local folder exists; probing a
 * key costs one request, not two. */
static int s3_exists(floe_fileio_t *io, const char *path, bool *out, floe_err_t *err)
{
    s3_io_t *s = (s3_io_t *)io;
    char *b, *k;
    *out = false;
    if (split_path(path, &b, &k, err) < 0) return -1;
    size_t kl = strlen(k);
    int rc = 0;
    if (kl && k[kl - 1] != '/') {
        req_t r = {.method = "HEAD", .bucket = b, .key = k};
        rc = request(s, &r, err);
        if (rc == 0 && ok_status(&r)) *out = true;
        else if (rc == 0 && r.status != 404)
            rc = fail_status(&r, err);
        req_done(&r);
    } else {
        floe_fileio_entry_t *e = NULL;
        size_t ne = 0;
        rc = list_prefix(s, b, k, true, 1, &e, &ne, err);
        *out = rc == 0 && ne > 0;
        floe_fileio_entries_free(e, ne);
    }
    free(b);
    free(k);
    return rc;
}

/* ---- deletes ---- */

static int s3_remove(floe_fileio_t *io, const char *path, floe_err_t *err)
{
    char *b, *k;
    if (split_path(path, &b, &k, err) < 0) return -1;
    req_t r = {.method = "DELETE", .bucket = b, .key = k};
    int rc = *k ? request((s3_io_t *)io, &r, err) : 0;
    if (rc == 0 && *k && !ok_status(&r) && r.status != 404) rc = fail_status(&r, err);
    req_done(&r);
    free(b);
    free(k);
    return rc;
}

/* Content-MD5 (base64) of p[0..n): DeleteObjects requires it. */
static void md5_b64(const void *p, size_t n, char out[32])
{
    unsigned char d[16];
    unsigned int dl = 0;
    EVP_Digest(p, n, d, &dl, EVP_md5(), NULL);
    EVP_EncodeBlock((unsigned char *)out, d, 16);
}

static int s3_remove_batch(floe_fileio_t *io, const char *const *paths, size_t n, bool *done,
                           floe_err_t *err)
{
    s3_io_t *s = (s3_io_t *)io;
    int ret = 0;
    if (done)
        for (size_t i = 0; i < n; i++) done[i] = false;
    size_t i = 0;
    while (i < n) {
        /* one request: up to delete_page keys of one bucket */
        char *bucket, *k0;
        floe_err_t e;
        if (split_path(paths[i], &bucket, &k0, &e) < 0) {
            if (ret == 0 && err) *err = e;
            ret = -1;
            i++;
            continue;
        }
        free(k0);
        size_t j = i, cnt = 0;
        floe_buf_t body = FLOE_BUF_INIT;
        int rc = floe_buf_append_str(&body, "<Delete><Quiet>true</Quiet>");
        size_t *idx = malloc(sizeof *idx * (size_t)s->delete_page);
        char **keys = calloc((size_t)s->delete_page, sizeof *keys);
        if (!idx || !keys) rc = -1;
        for (; rc == 0 && j < n && cnt < (size_t)s->delete_page; j++) {
            char *b2, *k2;
            if (split_path(paths[j], &b2, &k2, &e) < 0) break;
            bool same = !strcmp(b2, bucket);
            free(b2);
            if (!same) {
                free(k2);
                break;
            }
            idx[cnt] = j;
            keys[cnt++] = k2;
            if (floe_buf_append_str(&body, "<Object><Key>") < 0 || s3_xml_escape(k2, &body) < 0 ||
                floe_buf_append_str(&body, "</Key></Object>") < 0)
                rc = -1;
        }
        if (rc == 0) rc = floe_buf_append_str(&body, "</Delete>");
        if (rc < 0) {
            floe_err_oom(&e);
        } else {
            char md5[32];
            md5_b64(body.data, body.len, md5);
            floe_sigv4_kv_t q[1] = {{"delete", ""}};
            floe_sigv4_kv_t hd[1] = {{"content-md5", md5}};
            floe_buf_t ans = FLOE_BUF_INIT;
            req_t r = {.method = "POST",
                       .bucket = bucket,
                       .key = "",
                       .query = q,
                       .nquery = 1,
                       .headers = hd,
                       .nheaders = 1,
                       .body = body.data,
                       .body_len = body.len,
                       .answer = &ans};
            rc = request(s, &r, &e);
            if (rc == 0 && !ok_status(&r)) rc = fail_status(&r, &e);
            req_done(&r);
            if (rc == 0) {
                /* Quiet: only failures are listed */
                bool *gone = malloc(cnt * sizeof *gone);
                if (!gone) rc = floe_err_oom(&e);
                for (size_t x = 0; gone && x < cnt; x++) gone[x] = true;
                if (gone && s3_xml_delete_errors(ans.data, ans.len, (const char *const *)keys, cnt,
                                                 gone, &e) < 0)
                    rc = -1;
                for (size_t x = 0; gone && x < cnt; x++)
                    if (done) done[idx[x]] = gone[x];
                free(gone);
            }
            floe_buf_free(&ans);
        }
        if (rc < 0) {
            if (ret == 0 && err) *err = e;
            ret = -1;
        }
        for (size_t x = 0; x < cnt; x++) free(keys[x]);
        free(keys);
        free(idx);
        floe_buf_free(&body);
        free(bucket);
        i = j > i ? j : i + 1;
    }
    if (ret == 0 && done)
        for (size_t x = 0; x < n; x++)
            if (!done[x]) {
                ret = floe_err_set(err, FLOE_EIO, "s3: cannot delete %s", paths[x]);
                break;
            }
    return ret;
}

/* ---- rename: copy, then delete ---- */

static int s3_rename(floe_fileio_t *io, const char *from, const char *to, bool noreplace,
                     floe_err_t *err)
{
    s3_io_t *s = (s3_io_t *)io;
    char *fb, *fk, *tb, *tk;
    if (split_path(from, &fb, &fk, err) < 0) return -1;
    if (split_path(to, &tb, &tk, err) < 0) {
        free(fb);
        free(fk);
        return -1;
    }
    floe_buf_t src = FLOE_BUF_INIT;
    int rc = floe_buf_append_u8(&src, '/') < 0 || floe_sigv4_uri_encode(fb, 0, &src) < 0 ||
                     floe_buf_append_u8(&src, '/') < 0 || floe_sigv4_uri_encode(fk, 1, &src) < 0 ||
                     !floe_buf_cstr(&src)
                 ? floe_err_oom(err)
                 : 0;
    floe_sigv4_kv_t hd[2] = {{"x-amz-copy-source", (const char *)src.data}, {"if-none-match", "*"}};
    req_t r = {
        .method = "PUT", .bucket = tb, .key = tk, .headers = hd, .nheaders = noreplace ? 2 : 1};
    if (rc == 0 && noreplace) { /* not every store honours If-None-Match on a copy */
        bool ex = false;
        if ((rc = s3_exists(io, to, &ex, err)) == 0 && ex)
            rc = floe_err_set(err, FLOE_EEXIST, "s3: %s exists", to);
    }
    if (rc == 0) rc = request(s, &r, err);
    if (rc == 0 && !ok_status(&r)) {
        if (r.status == 404) floe_err_set(err, FLOE_ENOENT, "s3: %s: no such object", from);
        else
            fail_status(&r, err);
        rc = -1;
    }
    req_done(&r);
    if (rc == 0) rc = s3_remove(io, from, err);
    floe_buf_free(&src);
    free(fb);
    free(fk);
    free(tb);
    free(tk);
    return rc;
}

/* ---- writes ---- */

typedef struct part {
    struct s3_out *o;
    int num;
    floe_buf_t data;
    pthread_t th;
    bool running;
    int rc;
    floe_err_t err;
    char etag[128];
    char sha[65]; /* of data; "": unsigned */
} part_t;

typedef struct s3_out {
    floe_outfile_t base;
    s3_io_t *s;
    char *bucket, *key;
    unsigned flags;
    floe_buf_t cur;
    char *upload_id;
    int nparts;         /* parts started */
    char (*etags)[128]; /* per part number - 1 */
    size_t etags_cap;
    part_t *flight; /* s->in_flight slots, a ring */
    int head, count;
    floe_sigv4_hash_t *hash; /* of cur, as written (signed payloads only) */
    floe_buf_t *spare;       /* emptied part buffers, kept for the next parts */
    int nspare;              /* at most s->in_flight */
    bool failed;
    floe_err_t err;
} s3_out_t;

static void *part_main(void *arg)
{
    part_t *p = arg;
    s3_out_t *o = p->o;
    char num[16];
    snprintf(num, sizeof num, "%d", p->num);
    floe_sigv4_kv_t q[2] = {{"partNumber", num}, {"uploadId", o->upload_id}};
    req_t r = {.method = "PUT",
               .bucket = o->bucket,
               .key = o->key,
               .query = q,
               .nquery = 2,
               .body = p->data.data,
               .body_len = p->data.len,
               .payload_sha = p->sha[0] ? p->sha : NULL};
    p->rc = request(o->s, &r, &p->err);
    if (p->rc == 0 && !ok_status(&r)) p->rc = fail_status(&r, &p->err);
    if (p->rc == 0 && !r.etag[0])
        p->rc = floe_err_set(&p->err, FLOE_EIO, "s3: part %d of s3://%s/%s: no ETag", p->num,
                             o->bucket, o->key);
    if (p->rc == 0) memcpy(p->etag, r.etag, sizeof p->etag);
    req_done(&r);
    return NULL;
}

/* Keep an uploaded part's buffer for a later part: a file's parts reuse
 * in_flight + 1 buffers instead of allocating (and faulting in) each. */
static void spare_put(s3_out_t *o, floe_buf_t *b)
{
    if (o->nspare < o->s->in_flight && b->cap) {
        b->len = 0;
        o->spare[o->nspare++] = *b;
        *b = (floe_buf_t)FLOE_BUF_INIT;
    }
    floe_buf_free(b);
}

/* Wait for the oldest part in flight; record its ETag or its failure. */
static void part_join_oldest(s3_out_t *o)
{
    part_t *p = &o->flight[o->head];
    pthread_join(p->th, NULL);
    p->running = false;
    if (p->rc < 0 && !o->failed) {
        o->failed = true;
        o->err = p->err;
    } else if (p->rc == 0) {
        memcpy(o->etags[p->num - 1], p->etag, sizeof p->etag);
    }
    spare_put(o, &p->data);
    o->head = (o->head + 1) % o->s->in_flight;
    o->count--;
}

static int start_upload(s3_out_t *o, floe_err_t *err)
{
    floe_sigv4_kv_t q[1] = {{"uploads", ""}};
    floe_buf_t ans = FLOE_BUF_INIT;
    req_t r = {.method = "POST",
               .bucket = o->bucket,
               .key = o->key,
               .query = q,
               .nquery = 1,
               .answer = &ans};
    int rc = request(o->s, &r, err);
    if (rc == 0 && !ok_status(&r)) rc = fail_status(&r, err);
    req_done(&r);
    char id[1024] = "";
    if (rc == 0 && !s3_xml_text(ans.data, ans.len, "UploadId", id, sizeof id))
        rc = floe_err_set(err, FLOE_EIO, "s3: no UploadId for s3://%s/%s", o->bucket, o->key);
    floe_buf_free(&ans);
    if (rc == 0 && !(o->upload_id = strdup(id))) rc = floe_err_oom(err);
    return rc;
}

/* Hand the current buffer to a part upload (waiting for a free slot). */
static int ship_part(s3_out_t *o, floe_err_t *err)
{
    if (!o->upload_id && start_upload(o, err) < 0) return -1;
    if (o->nparts >= MAX_PARTS)
        return floe_err_set(err, FLOE_ERANGE, "s3: s3://%s/%s: over %d parts", o->bucket, o->key,
                            MAX_PARTS);
    if (floe_grow(&o->etags, &o->etags_cap, (size_t)o->nparts + 1, sizeof *o->etags) != 0)
        return floe_err_oom(err);
    while (o->count == o->s->in_flight) part_join_oldest(o);
    if (o->failed) {
        if (err) *err = o->err;
        return -1;
    }
    part_t *p = &o->flight[(o->head + o->count) % o->s->in_flight];
    memset(p, 0, sizeof *p);
    p->o = o;
    p->num = ++o->nparts;
    p->data = o->cur;
    if (o->hash) floe_sigv4_hash_final_hex(o->hash, p->sha);
    o->cur = o->nspare ? o->spare[--o->nspare] : (floe_buf_t)FLOE_BUF_INIT;
    if (pthread_create(&p->th, NULL, part_main, p) != 0) {
        part_main(p); /* no thread: upload it here */
        p->running = false;
        if (p->rc < 0) {
            if (err) *err = p->err;
            floe_buf_free(&p->data);
            o->failed = true;
            o->err = p->err;
            return -1;
        }
        memcpy(o->etags[p->num - 1], p->etag, sizeof p->etag);
        spare_put(o, &p->data);
        return 0;
    }
    p->running = true;
    o->count++;
    return 0;
}

static void out_free(s3_out_t *o)
{
    while (o->count) part_join_oldest(o);
    floe_buf_free(&o->cur);
    for (int i = 0; i < o->nspare; i++) floe_buf_free(&o->spare[i]);
    free(o->spare);
    floe_sigv4_hash_free(o->hash);
    free(o->flight);
    free(o->etags);
    free(o->upload_id);
    free(o->bucket);
    free(o->key);
    free(o);
}

static void abort_upload(s3_out_t *o)
{
    while (o->count) part_join_oldest(o);
    if (!o->upload_id) return;
    floe_sigv4_kv_t q[1] = {{"uploadId", o->upload_id}};
    req_t r = {.method = "DELETE", .bucket = o->bucket, .key = o->key, .query = q, .nquery = 1};
    floe_err_t e;
    if (request(o->s, &r, &e) < 0)
        FLOE_WARN("s3: cannot abort the upload of s3://%s/%s: %s", o->bucket, o->key, e.msg);
    else if (!ok_status(&r) && r.status != 404)
        FLOE_WARN("s3: cannot abort the upload of s3://%s/%s: HTTP %ld", o->bucket, o->key,
                  r.status);
    req_done(&r);
}

static int out_write(floe_outfile_t *f, const void *p, size_t n, floe_err_t *err)
{
    s3_out_t *o = (s3_out_t *)f;
    if (o->failed) {
        if (err) *err = o->err;
        return -1;
    }
    const uint8_t *b = p;
    size_t ps = o->s->part_size;
    while (n) {
        size_t take = n;
        if (!(o->flags & FLOE_IO_EXCL) && o->cur.len + take > ps) take = ps - o->cur.len;
        /* a part's buffer grows to the part size and stops there */
        int rr = (o->flags & FLOE_IO_EXCL) ? floe_buf_reserve(&o->cur, take)
                                           : floe_buf_reserve_settle(&o->cur, take, ps);
        if (rr < 0 || floe_buf_append(&o->cur, b, take) < 0) return floe_err_oom(err);
        if (o->hash) floe_sigv4_hash_update(o->hash, b, take); /* while the bytes are hot */
        b += take;
        n -= take;
        if (!(o->flags & FLOE_IO_EXCL) && o->cur.len == ps && n && ship_part(o, err) < 0) return -1;
    }
    return 0;
}

static int complete_upload(s3_out_t *o, floe_err_t *err)
{
    floe_buf_t body = FLOE_BUF_INIT;
    int rc = floe_buf_append_str(&body, "<CompleteMultipartUpload>");
    for (int i = 0; rc == 0 && i < o->nparts; i++) {
        rc = floe_buf_printf(&body, "<Part><PartNumber>%d</PartNumber><ETag>", i + 1);
        if (rc == 0) rc = s3_xml_escape(o->etags[i], &body);
        if (rc == 0) rc = floe_buf_append_str(&body, "</ETag></Part>");
    }
    if (rc == 0) rc = floe_buf_append_str(&body, "</CompleteMultipartUpload>");
    if (rc < 0) {
        floe_buf_free(&body);
        return floe_err_oom(err);
    }
    floe_sigv4_kv_t q[1] = {{"uploadId", o->upload_id}};
    floe_buf_t ans = FLOE_BUF_INIT;
    req_t r = {.method = "POST",
               .bucket = o->bucket,
               .key = o->key,
               .query = q,
               .nquery = 1,
               .body = body.data,
               .body_len = body.len,
               .answer = &ans};
    rc = request(o->s, &r, err);
    if (rc == 0 && r.status == 404) {
        /* a send again after a lost answer finds the upload completed */
        store_error(&r, FLOE_EUNKNOWN, err);
        rc = -1;
    } else if (rc == 0 && !ok_status(&r)) {
        rc = fail_status(&r, err);
    }
    /* S3 may answer 200 with an <Error> body */
    char code[64];
    if (rc == 0 && s3_xml_text(ans.data, ans.len, "Code", code, sizeof code) &&
        !strstr((const char *)ans.data, "<CompleteMultipartUploadResult"))
        rc = floe_err_set(err, FLOE_EIO, "s3: completing s3://%s/%s: %s", o->bucket, o->key, code);
    req_done(&r);
    floe_buf_free(&ans);
    floe_buf_free(&body);
    return rc;
}

/* A conditional PUT answered 412.  libcurl silently sends a request
 * again when a reused connection dies before any answer, so the object
 * may be this very PUT's, applied by the first send whose answer was
 * lost.  Read it back: the same bytes are ours (success); other bytes are
 * another writer's (FLOE_EEXIST); no answer is FLOE_EUNKNOWN. */
static int settle_412(s3_out_t *o, floe_err_t *err)
{
    floe_buf_t got = FLOE_BUF_INIT;
    req_t r = {.method = "GET",
               .bucket = o->bucket,
               .key = o->key,
               .answer = &got,
               .max_answer = o->cur.len + 1};
    floe_err_t e;
    int rc = request(o->s, &r, &e);
    if (rc == 0 && ok_status(&r) && got.len == o->cur.len &&
        (!got.len || !memcmp(got.data, o->cur.data, got.len)))
        rc = 0;
    else if ((rc == 0 && (ok_status(&r) || r.status == 404)) || (rc < 0 && e.code == FLOE_ERANGE))
        rc = floe_err_set(err, FLOE_EEXIST, "s3: s3://%s/%s exists", o->bucket, o->key);
    else
        rc = floe_err_set(err, FLOE_EUNKNOWN,
                          "s3: PUT s3://%s/%s: refused as existing, and cannot tell whose: %s",
                          o->bucket, o->key, rc < 0 ? e.msg : "HTTP error");
    req_done(&r);
    floe_buf_free(&got);
    return rc;
}

static int out_close(floe_outfile_t *f, floe_err_t *err)
{
    s3_out_t *o = (s3_out_t *)f;
    int rc = 0;
    if (o->failed) {
        if (err) *err = o->err;
        rc = -1;
    } else if (!o->upload_id) {
        floe_sigv4_kv_t hd[1] = {{"if-none-match", "*"}};
        bool excl = (o->flags & FLOE_IO_EXCL) != 0;
        char sha[65] = "";
        if (o->hash) floe_sigv4_hash_final_hex(o->hash, sha);
        req_t r = {.method = "PUT",
                   .bucket = o->bucket,
                   .key = o->key,
                   .headers = hd,
                   .nheaders = excl ? 1 : 0,
                   .body = o->cur.data,
                   .body_len = o->cur.len,
                   .payload_sha = sha[0] ? sha : NULL};
        rc = request(o->s, &r, err);
        if (rc == 0 && excl && r.status == 412) rc = settle_412(o, err);
        else if (rc == 0 && !ok_status(&r))
            rc = fail_status(&r, err);
        req_done(&r);
    } else {
        if (o->cur.len) rc = ship_part(o, err);
        while (o->count) part_join_oldest(o);
        if (rc == 0 && o->failed) {
            if (err) *err = o->err;
            rc = -1;
        }
        if (rc == 0) rc = complete_upload(o, err);
        if (rc < 0 && !(err && err->code == FLOE_EUNKNOWN)) abort_upload(o);
    }
    out_free(o);
    return rc;
}

static void out_abort(floe_outfile_t *f)
{
    s3_out_t *o = (s3_out_t *)f;
    abort_upload(o);
    out_free(o);
}

static const floe_outfile_ops_t s3_out_ops = {out_write, out_close, out_abort};

static int s3_create(floe_fileio_t *io, const char *path, unsigned flags, floe_outfile_t **out,
                     floe_err_t *err)
{
    s3_io_t *s = (s3_io_t *)io;
    s3_out_t *o = calloc(1, sizeof *o);
    if (!o) return floe_err_oom(err);
    o->base.ops = &s3_out_ops;
    o->s = s;
    o->flags = flags;
    if (split_path(path, &o->bucket, &o->key, err) < 0) {
        free(o);
        return -1;
    }
    if (!*o->key) {
        out_free(o);
        return floe_err_set(err, FLOE_EINVAL, "s3: '%s' names no object", path);
    }
    if (!(o->flight = calloc((size_t)s->in_flight, sizeof *o->flight)) ||
        !(o->spare = calloc((size_t)s->in_flight, sizeof *o->spare)) ||
        (s->sign_payload && !(flags & FLOE_IO_EXCL) && !(o->hash = floe_sigv4_hash_new()))) {
        out_free(o);
        return floe_err_oom(err);
    }
    *out = &o->base;
    return 0;
}

/* ---- the FileIO ---- */

static void s3_destroy(floe_fileio_t *io)
{
    s3_io_t *s = (s3_io_t *)io;
    for (int i = 0; i < s->npool; i++) curl_easy_cleanup(s->pool[i]);
    pthread_mutex_destroy(&s->mu);
    free(s->scheme_host);
    free(s->scheme);
    free(s->host);
    free(s->region);
    if (s->secret) memset(s->secret, 0, strlen(s->secret));
    free(s->akid);
    free(s->secret);
    free(s->token);
    free(s->ca_file);
    free(s);
}

static const floe_fileio_ops_t s3_ops = {
    s3_create, s3_read,    s3_exists,       s3_remove,       s3_rename,
    NULL,      s3_destroy, s3_list_entries, s3_remove_batch, s3_read_range,
};

int floe_fileio_s3_metrics(floe_fileio_t *io, floe_buf_t *out)
{
    s3_io_t *s = (s3_io_t *)io;
    s3_io_t *c = malloc(sizeof *c); /* a copy, so the lock is not held while writing */
    if (!c) return -1;
    pthread_mutex_lock(&s->mu);
    memcpy(c, s, sizeof *c);
    pthread_mutex_unlock(&s->mu);
    size_t ns = sizeof STATUSES / sizeof STATUSES[0];
    int rc = floe_buf_append_str(
        out, "# HELP floe_s3_requests_total Object store requests (each attempt) by S3 operation "
             "and HTTP status (0: no answer).\n# TYPE floe_s3_requests_total counter\n");
    for (int op = 0; op < NOPS && rc == 0; op++)
        for (size_t i = 0; i < NSTATUS && rc == 0; i++) {
            if (!c->by_status[op][i]) continue;
            char st[8];
            if (i < ns) snprintf(st, sizeof st, "%d", STATUSES[i]);
            else
                snprintf(st, sizeof st, "%cxx", i == ns ? '2' : i == ns + 1 ? '4' : '5');
            rc = floe_buf_printf(out, "floe_s3_requests_total{op=\"%s\",status=\"%s\"} %llu\n",
                                 OP_NAMES[op], st, c->by_status[op][i]);
        }
    if (rc == 0)
        rc = floe_buf_printf(
            out,
            "# HELP floe_s3_retries_total Object store requests sent again after a failure.\n"
            "# TYPE floe_s3_retries_total counter\nfloe_s3_retries_total %llu\n"
            "# HELP floe_s3_lost_answers_total Writes sent whose answer never came.\n"
            "# TYPE floe_s3_lost_answers_total counter\nfloe_s3_lost_answers_total %llu\n"
            "# HELP floe_s3_bytes_total Bytes sent to and received from the object store.\n"
            "# TYPE floe_s3_bytes_total counter\n"
            "floe_s3_bytes_total{direction=\"up\"} %llu\nfloe_s3_bytes_total{direction=\"down\"} "
            "%llu\n"
            "# HELP floe_s3_request_seconds Object store request latency (each attempt).\n"
            "# TYPE floe_s3_request_seconds histogram\n",
            c->st.retries, c->st.lost_answers, c->st.bytes_up, c->st.bytes_down);
    for (int op = 0; op < NOPS && rc == 0; op++) {
        unsigned long long cum = 0;
        for (size_t b = 0; b <= NBUCKETS; b++) cum += c->lat[op][b];
        if (!cum) continue;
        unsigned long long run = 0;
        for (size_t b = 0; b < NBUCKETS && rc == 0; b++) {
            run += c->lat[op][b];
            rc = floe_buf_printf(out, "floe_s3_request_seconds_bucket{op=\"%s\",le=\"%g\"} %llu\n",
                                 OP_NAMES[op], BUCKETS[b], run);
        }
        if (rc == 0)
            rc = floe_buf_printf(out,
                                 "floe_s3_request_seconds_bucket{op=\"%s\",le=\"+Inf\"} %llu\n"
                                 "floe_s3_request_seconds_sum{op=\"%s\"} %.6f\n"
                                 "floe_s3_request_seconds_count{op=\"%s\"} %llu\n",
                                 OP_NAMES[op], cum, OP_NAMES[op], (double)c->lat_sum_ns[op] / 1e9,
                                 OP_NAMES[op], cum);
    }
    free(c);
    return rc < 0 ? -1 : 0;
}

void floe_fileio_s3_stats(floe_fileio_t *io, floe_s3_stats_t *out)
{
    s3_io_t *s = (s3_io_t *)io;
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    pthread_mutex_unlock(&s->mu);
}

/* aws_access_key_id / aws_secret_access_key / aws_session_token of the
 * [default] profile (or AWS_PROFILE) in ~/.aws/credentials, when absent. */
static void aws_credentials_file(char **akid, char **secret, char **token)
{
    const char *home = getenv("HOME");
    const char *file = getenv("AWS_SHARED_CREDENTIALS_FILE");
    char path[4096];
    if (!file) {
        if (!home) return;
        snprintf(path, sizeof path, "%s/.aws/credentials", home);
        file = path;
    }
    FILE *fp = fopen(file, "r");
    if (!fp) return;
    const char *profile = getenv("AWS_PROFILE") ? getenv("AWS_PROFILE") : "default";
    char line[1024];
    bool in = false;
    while (fgets(line, sizeof line, fp)) {
        char *p = line, *e = line + strlen(line);
        while (e > p && isspace((unsigned char)e[-1])) *--e = 0;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '[') {
            char *q = strchr(p, ']');
            in = q && (size_t)(q - p - 1) == strlen(profile) &&
                 !strncmp(p + 1, profile, strlen(profile));
            continue;
        }
        char *eq = strchr(p, '=');
        if (!in || !eq) continue;
        char *k = p, *v = eq + 1, *ke = eq;
        while (ke > k && isspace((unsigned char)ke[-1])) ke--;
        *ke = 0;
        while (isspace((unsigned char)*v)) v++;
        char **dst = !strcmp(k, "aws_access_key_id")       ? akid
                     : !strcmp(k, "aws_secret_access_key") ? secret
                     : !strcmp(k, "aws_session_token")     ? token
                                                           : NULL;
        if (dst && !*dst) *dst = strdup(v);
    }
    fclose(fp);
}

static char *dup_or_env(const char *v, const char *env)
{
    if (v && *v) return strdup(v);
    const char *e = getenv(env);
    return e && *e ? strdup(e) : NULL;
}

floe_fileio_t *floe_fileio_s3_new(const floe_s3_config_t *c, floe_err_t *err)
{
    s3_io_t *s = calloc(1, sizeof *s);
    if (!s) {
        floe_err_oom(err);
        return NULL;
    }
    s->base.ops = &s3_ops;
    pthread_mutex_init(&s->mu, NULL);
    s->path_style = c->path_style;
    s->part_size = c->part_size ? c->part_size : DEFAULT_PART;
    s->in_flight = c->parts_in_flight > 0 ? c->parts_in_flight : 4;
    s->attempts = c->max_attempts > 0 ? c->max_attempts : 6;
    s->timeout_ms = c->timeout_ms > 0 ? c->timeout_ms : 120000;
    s->connect_timeout_ms = c->connect_timeout_ms > 0 ? c->connect_timeout_ms : 5000;
    s->list_page = c->list_page > 0 ? c->list_page : 1000;
    s->delete_page = c->delete_page > 0 && c->delete_page < 1000 ? c->delete_page : 1000;
    s->region = dup_or_env(c->region, "AWS_REGION");
    if (!s->region) s->region = strdup("us-east-1");
    s->akid = dup_or_env(c->access_key_id, "AWS_ACCESS_KEY_ID");
    s->secret = dup_or_env(c->secret_access_key, "AWS_SECRET_ACCESS_KEY");
    s->token = dup_or_env(c->session_token, "AWS_SESSION_TOKEN");
    s->ca_file = dup_or_env(c->ca_file, "AWS_CA_BUNDLE");
    if (!s->akid && !s->secret) aws_credentials_file(&s->akid, &s->secret, &s->token);
    if (s->part_size < MIN_PART) {
        floe_err_set(err, FLOE_EINVAL, "s3: part size %zu is under %zu bytes", s->part_size,
                     MIN_PART);
        goto fail;
    }
    if (!s->region) goto oom;
    if (!s->akid || !s->secret) {
        floe_err_set(err, FLOE_EINVAL,
                     "s3: no credentials (s3.access-key-id and s3.secret-access-key, "
                     "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials)");
        goto fail;
    }
    char def[300];
    const char *ep = c->endpoint && *c->endpoint ? c->endpoint : NULL;
    if (!ep) {
        snprintf(def, sizeof def, "https://s3.%s.amazonaws.com", s->region);
        ep = def;
    }
    const char *sep = strstr(ep, "://");
    if (!sep || (strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8))) {
        floe_err_set(err, FLOE_EINVAL, "s3: endpoint '%s' is not an http:// or https:// URL", ep);
        goto fail;
    }
    const char *hs = sep + 3;
    size_t hl = strcspn(hs, "/");
    if (!hl || (hs[hl] && strspn(hs + hl, "/") != strlen(hs + hl))) {
        floe_err_set(err, FLOE_EINVAL, "s3: endpoint '%s' must be scheme://host[:port]", ep);
        goto fail;
    }
    if (!(s->scheme = strndup(ep, (size_t)(sep - ep))) || !(s->host = strndup(hs, hl)) ||
        !(s->scheme_host = strndup(ep, (size_t)(hs - ep) + hl)))
        goto oom;
    s->sign_payload = c->payload_signing == FLOE_S3_SIGN_ALWAYS ||
                      (c->payload_signing == FLOE_S3_SIGN_AUTO && !strcmp(s->scheme, "http"));
    return &s->base;
oom:
    floe_err_oom(err);
fail:
    s3_destroy(&s->base);
    return NULL;
}
