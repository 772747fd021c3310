/* The REST catalog client (catalog.h floe_ice_catalog_rest_new): every
 * catalog operation as a call to an Iceberg REST catalog server, with the
 * server's answers mapped onto the catalog's errors.  Commits: 409 is a
 * conflict (nothing published); a 5xx or no answer at all is an unknown
 * outcome, resolved by the caller reloading (design.md, invariant 3). */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/client.h"
#include "iceberg/catalog_int.h"
#include "iceberg/catalog_rest_int.h"
#include "iceberg/metadata_json_int.h"
#include "storage/sigv4.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/json.h"

#define TIMEOUT_MS 30000
#define DEFAULT_SCOPE "catalog"

/* The server's operations, in the spec's literal form of its /v1/config
 * `endpoints` list. */
#define EP_NS_LIST "GET /v1/{prefix}/namespaces"
#define EP_NS_CREATE "POST /v1/{prefix}/namespaces"
#define EP_NS_LOAD "GET /v1/{prefix}/namespaces/{namespace}"
#define EP_NS_DROP "DELETE /v1/{prefix}/namespaces/{namespace}"
#define EP_NS_PROPS "POST /v1/{prefix}/namespaces/{namespace}/properties"
#define EP_T_LIST "GET /v1/{prefix}/namespaces/{namespace}/tables"
#define EP_T_CREATE "POST /v1/{prefix}/namespaces/{namespace}/tables"
#define EP_T_LOAD "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"
#define EP_T_COMMIT "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"
#define EP_T_DROP "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}"
#define EP_T_RENAME "POST /v1/{prefix}/tables/rename"

typedef struct rest_catalog {
    floe_ice_catalog_t base;
    char *v1;   /* URI + "/v1", no trailing slash */
    char *root; /* base [+ "/" prefix] */
    /* the server's endpoints list; NULL when it sent none (then the
     * spec's default set, which has everything this client calls) */
    char **endpoints;
    size_t nendpoints;
    /* OAuth2 client credentials (id may be NULL), or a static token */
    char *client_id, *client_secret, *token_uri, *scope;
    /* SigV4 instead of a bearer token: every request signed */
    bool sigv4;
    char *region, *service, *akid, *secret, *session_token;
    char *ca_file; /* PEM CAs for https; NULL: the system's */
    /* /v1/config asked (prefix and endpoints taken) once it answered:
     * at open, or at the first call after a start without the server */
    pthread_mutex_t cfg_mu; /* guards configured, and the writes of root and endpoints */
    bool configured;
    char *wh; /* the warehouse, URL-encoded ("" for none) */
    unsigned need;
    pthread_mutex_t mu;    /* guards the four below */
    char *auth;            /* "Authorization: Bearer ..." or NULL */
    int64_t refresh_at_ms; /* monotonic; INT64_MAX: never */
    uint64_t generation;   /* counts tokens fetched */
} rest_catalog_t;

/* Form-encode s into b (application/x-www-form-urlencoded). */
static int form_append(floe_buf_t *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (strchr("-_.~", ch) || (ch >= '0' && ch <= '9') ||
            ((ch | 32) >= 'a' && (ch | 32) <= 'z')) {
            if (floe_buf_append_u8(b, ch)) return -1;
        } else if (floe_buf_printf(b, "%%%02X", ch) < 0)
            return -1;
    }
    return 0;
}

int floe_ice_rest_token_answer(json_t *a, char **header, int64_t *life_ms, floe_err_t *err)
{
    *header = NULL;
    /* the token goes into a header line: visible ASCII only */
    const char *tok = json_string_value(json_object_get(a, "access_token"));
    bool ok = tok && *tok;
    for (const char *p = tok; ok && *p; p++) ok = *p > 0x20 && *p < 0x7f;
    if (!ok) return floe_err_set(err, FLOE_EIO, "no usable access_token in its answer");
    /* expires_in: seconds, a number (or a numeric string); anything else,
     * or beyond ten years, is no expiry */
    json_t *ex = json_object_get(a, "expires_in");
    long long secs = json_is_integer(ex)  ? (long long)json_integer_value(ex)
                     : json_is_string(ex) ? strtoll(json_string_value(ex), NULL, 10)
                                          : -1;
    *life_ms = secs > 0 && secs < 315360000LL ? (int64_t)secs * 1000 : -1;
    size_t n = strlen(tok) + 32;
    if (!(*header = malloc(n))) return floe_err_oom(err);
    snprintf(*header, n, "Authorization: Bearer %s", tok);
    return 0;
}

/* Ask the token endpoint for a token (OAuth2 client credentials grant);
 * with mu held.  The next refresh is due a tenth of its lifetime (at most
 * a minute) before it expires. */
static int fetch_token(rest_catalog_t *c, floe_err_t *err)
{
    floe_buf_t body = FLOE_BUF_INIT, ans = FLOE_BUF_INIT;
    int rc = floe_buf_append_str(&body, "grant_type=client_credentials");
    if (rc == 0 && c->client_id)
        rc = floe_buf_append_str(&body, "&client_id=") || form_append(&body, c->client_id);
    if (rc == 0)
        rc = floe_buf_append_str(&body, "&client_secret=") ||
             form_append(&body, c->client_secret) || floe_buf_append_str(&body, "&scope=") ||
             form_append(&body, c->scope);
    if (rc) {
        floe_buf_free(&body);
        return floe_err_oom(err);
    }
    const char *headers[] = {"Content-Type: application/x-www-form-urlencoded",
                             "Accept: application/json", NULL};
    floe_http_call_t hc = {.method = "POST",
                           .url = c->token_uri,
                           .headers = headers,
                           .body = body.data,
                           .body_len = body.len,
                           .timeout_ms = TIMEOUT_MS,
                           .ca_file = c->ca_file};
    long st;
    int64_t t0 = floe_mono_ms();
    rc = floe_http_call(&hc, &st, &ans, err);
    floe_buf_free(&body);
    if (rc < 0) {
        floe_err_wrap(err, "rest catalog: token endpoint %s", c->token_uri);
        return -1;
    }
    json_t *a = ans.len ? json_loadb((const char *)ans.data, ans.len, 0, NULL) : NULL;
    floe_buf_free(&ans);
    if (st != 200) {
        /* RFC 6749's error answer: error, error_description */
        const char *e = json_string_value(json_object_get(a, "error"));
        const char *d = json_string_value(json_object_get(a, "error_description"));
        rc = floe_err_set(err, st >= 400 && st < 500 ? FLOE_EINVAL : FLOE_EIO,
                          "rest catalog: token endpoint %s: HTTP %ld%s%s%s%s%s", c->token_uri, st,
                          e ? " " : "", e ? e : "", d ? " (" : "", d ? d : "", d ? ")" : "");
        json_decref(a);
        return rc;
    }
    char *h;
    int64_t life_ms;
    rc = floe_ice_rest_token_answer(a, &h, &life_ms, err);
    json_decref(a);
    if (rc < 0) {
        floe_err_wrap(err, "rest catalog: token endpoint %s", c->token_uri);
        return -1;
    }
    free(c->auth);
    c->auth = h;
    c->generation++;
    if (life_ms > 0) {
        int64_t early = life_ms / 10 < 60000 ? life_ms / 10 : 60000;
        c->refresh_at_ms = t0 + life_ms - early;
    } else {
        c->refresh_at_ms = INT64_MAX; /* refreshed when the server says 401 */
    }
    return 0;
}

/* The Authorization header to send (copied into out; "" for none), a new
 * token fetched first when the current one is due for refresh, or when
 * force and the token is still the one of generation *gen (another
 * thread may have refreshed it since).  *gen gets the token's generation. */
static int auth_header(rest_catalog_t *c, bool force, uint64_t *gen, char **out, floe_err_t *err)
{
    *out = NULL;
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    if (c->client_secret &&
        (!c->auth || floe_mono_ms() >= c->refresh_at_ms || (force && *gen == c->generation)))
        rc = fetch_token(c, err);
    if (rc == 0 && c->auth && !(*out = strdup(c->auth))) rc = floe_err_oom(err);
    *gen = c->generation;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* The SigV4 headers of a request: Host, X-Amz-Date,
 * X-Amz-Content-Sha256, X-Amz-Security-Token (temporary credentials) and
 * Authorization, as "Name: value" lines into lines[0..5) (each malloc'd;
 * NULL-terminated). */
static int sigv4_headers(rest_catalog_t *c, const char *method, const char *url, const char *body,
                         char *lines[6], floe_err_t *err)
{
    memset(lines, 0, 6 * sizeof *lines);
    const char *h = strstr(url, "://");
    if (!h) return floe_err_set(err, FLOE_EINVAL, "rest catalog: bad url %s", url);
    h += 3;
    const char *path = strchr(h, '/');
    if (!path) path = h + strlen(h);
    const char *q = strchr(path, '?');
    char host[512], amz_date[20], sha[65];
    if ((size_t)(path - h) >= sizeof host)
        return floe_err_set(err, FLOE_ERANGE, "rest catalog: host too long");
    memcpy(host, h, (size_t)(path - h));
    host[path - h] = 0;
    int64_t now = floe_wall_ms() / 1000;
    time_t tt = (time_t)now;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(amz_date, sizeof amz_date, "%Y%m%dT%H%M%SZ", &tm);
    floe_sigv4_sha256_hex(body ? body : "", body ? strlen(body) : 0, sha);
    /* the path as sent is already encoded (floe's names need no encoding,
     * so the double encoding SigV4 asks of services other than S3 is the
     * same string); the query is re-canonicalized
     * from its name=value pairs (they are sent already encoded too) */
    floe_buf_t p = FLOE_BUF_INIT, query = FLOE_BUF_INIT, auth = FLOE_BUF_INIT;
    int rc = floe_buf_append(&p, path, q ? (size_t)(q - path) : strlen(path)) ||
                     floe_buf_append_u8(&p, 0)
                 ? floe_err_oom(err)
                 : 0;
    if (rc == 0 && q && q[1]) {
        /* floe's own queries are one or two name=value pairs with values
         * it encoded: sort them by name */
        char *dup = strdup(q + 1);
        char *pairs[8];
        size_t np = 0;
        for (char *s = dup, *tok; dup && np < 8 && (tok = strsep(&s, "&"));) pairs[np++] = tok;
        for (size_t i = 1; i < np; i++)
            for (size_t j = i; j > 0 && strcmp(pairs[j - 1], pairs[j]) > 0; j--) {
                char *t = pairs[j];
                pairs[j] = pairs[j - 1];
                pairs[j - 1] = t;
            }
        for (size_t i = 0; dup && rc == 0 && i < np; i++)
            if ((i && floe_buf_append_u8(&query, '&')) || floe_buf_append_str(&query, pairs[i]) ||
                (!strchr(pairs[i], '=') && floe_buf_append_u8(&query, '=')))
                rc = floe_err_oom(err);
        if (!dup) rc = floe_err_oom(err);
        free(dup);
    }
    if (rc == 0 && floe_buf_append_u8(&query, 0)) rc = floe_err_oom(err);
    floe_sigv4_kv_t hs[4] = {
        {"host", host}, {"x-amz-content-sha256", sha}, {"x-amz-date", amz_date}};
    size_t nh = 3;
    if (c->session_token) hs[nh++] = (floe_sigv4_kv_t){"x-amz-security-token", c->session_token};
    floe_sigv4_req_t r = {.method = method,
                          .path = (const char *)p.data,
                          .query = (const char *)query.data,
                          .headers = hs,
                          .nheaders = nh,
                          .payload_sha256 = sha,
                          .amz_date = amz_date,
                          .region = c->region,
                          .service = c->service,
                          .access_key_id = c->akid,
                          .secret_access_key = c->secret};
    if (rc == 0) rc = floe_sigv4_sign(&r, &auth, NULL, err);
    if (rc == 0 && floe_buf_append_u8(&auth, 0)) rc = floe_err_oom(err);
    if (rc == 0) {
        const char *fmt[] = {"Host: %s", "X-Amz-Content-Sha256: %s", "X-Amz-Date: %s",
                             "X-Amz-Security-Token: %s"};
        for (size_t i = 0; rc == 0 && i < nh; i++) {
            size_t n = strlen(fmt[i]) + strlen(hs[i].value);
            if (!(lines[i] = malloc(n))) rc = floe_err_oom(err);
            else
                snprintf(lines[i], n, fmt[i], hs[i].value);
        }
        size_t n = auth.len + 32;
        if (rc == 0 && !(lines[nh] = malloc(n))) rc = floe_err_oom(err);
        else if (rc == 0)
            snprintf(lines[nh], n, "Authorization: %s", (const char *)auth.data);
    }
    floe_buf_free(&p);
    floe_buf_free(&query);
    floe_buf_free(&auth);
    if (rc < 0)
        for (int i = 0; i < 6; i++) {
            free(lines[i]);
            lines[i] = NULL;
        }
    return rc;
}

/* Whether the server offers endpoint ep (one of the EP_ strings). */
static bool offers(const rest_catalog_t *c, const char *ep)
{
    if (!c->endpoints) return true;
    for (size_t i = 0; i < c->nendpoints; i++)
        if (!strcmp(c->endpoints[i], ep)) return true;
    return false;
}

static int configure(rest_catalog_t *c, floe_err_t *err);

/* One call: method on root/path (path printf-style) with body (may be
 * NULL), to the server's endpoint ep (NULL: /v1/config, always there).
 * 0 with *status and the parsed answer (*out, NULL when the answer is
 * empty or not JSON; caller json_decrefs), or -1 with *err (EIO: no
 * answer; EUNSUPPORTED: the server does not offer ep; a token that could
 * not be had).  A 401 with OAuth2 credentials fetches a new token and
 * makes the call once more. */
static int call(rest_catalog_t *c, const char *ep, const char *method, const char *body,
                long *status, json_t **out, floe_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static int call(rest_catalog_t *c, const char *ep, const char *method, const char *body,
                long *status, json_t **out, floe_err_t *err, const char *fmt, ...)
{
    *out = NULL;
    if (ep) {
        pthread_mutex_lock(&c->cfg_mu);
        int rc = c->configured ? 0 : configure(c, err);
        pthread_mutex_unlock(&c->cfg_mu);
        if (rc < 0) return -1;
    }
    if (ep && !offers(c, ep))
        return floe_err_set(err, FLOE_EUNSUPPORTED,
                            "rest catalog: the server does not offer %s (not in the endpoints of "
                            "its /v1/config)",
                            ep);
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof path)
        return floe_err_set(err, FLOE_ERANGE, "rest catalog: path too long");
    size_t ul = strlen(c->root) + strlen(path) + 2;
    char *url = malloc(ul);
    if (!url) return floe_err_oom(err);
    snprintf(url, ul, "%s/%s", c->root, path);
    uint64_t gen = 0;
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        char *auth = NULL, *sig[6] = {0};
        if (c->sigv4) rc = sigv4_headers(c, method, url, body, sig, err);
        else
            rc = auth_header(c, attempt > 0, &gen, &auth, err);
        if (rc < 0) break;
        const char *headers[10] = {"Content-Type: application/json", "Accept: application/json"};
        size_t nh = 2;
        if (auth) headers[nh++] = auth;
        for (int i = 0; sig[i]; i++) headers[nh++] = sig[i];
        floe_http_call_t hc = {.method = method,
                               .url = url,
                               .headers = headers,
                               .body = body,
                               .body_len = body ? strlen(body) : 0,
                               .timeout_ms = TIMEOUT_MS,
                               .ca_file = c->ca_file};
        floe_buf_t b = FLOE_BUF_INIT;
        rc = floe_http_call(&hc, status, &b, err);
        free(auth);
        for (int i = 0; sig[i]; i++) free(sig[i]);
        if (rc == 0 && *status == 401 && c->client_secret && attempt == 0) {
            floe_buf_free(&b);
            continue; /* a token the server no longer takes: a new one, once */
        }
        if (rc == 0 && b.len) *out = json_loadb((const char *)b.data, b.len, 0, NULL);
        floe_buf_free(&b);
        break;
    }
    free(url);
    return rc;
}

/* A non-2xx answer as the catalog's error: 404 ENOENT, 409 EEXIST /
 * ECONFLICT / EINVAL (not empty), 4xx EINVAL, 5xx EIO (the caller of a
 * commit makes that EUNKNOWN). */
static int answer_err(long status, json_t *ans, const char *what, floe_err_t *err)
{
    json_t *e = json_object_get(ans, "error");
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (!type) type = "";
    if (!msg) msg = "";
    floe_code_t code = FLOE_EIO;
    if (status == 404) code = FLOE_ENOENT;
    else if (status == 409 && !strcmp(type, "CommitFailedException"))
        code = FLOE_ECONFLICT;
    else if (status == 409 && !strcmp(type, "NamespaceNotEmptyException"))
        code = FLOE_EINVAL;
    else if (status == 409)
        code = FLOE_EEXIST;
    else if (status >= 400 && status < 500)
        code = FLOE_EINVAL;
    return floe_err_set(err, code, "rest catalog: %s: HTTP %ld %s: %s", what, status, type, msg);
}

/* A table from a LoadTableResult / CommitTableResponse. */
static int table_of(json_t *ans, const char *ns, const char *name, floe_ice_table_t **out,
                    floe_err_t *err)
{
    const char *loc = json_string_value(json_object_get(ans, "metadata-location"));
    json_t *m = json_object_get(ans, "metadata");
    if (!loc || !json_is_object(m))
        return floe_err_set(err, FLOE_ECORRUPT, "rest catalog: %s.%s: no metadata in the answer",
                            ns, name);
    char *text = json_dumps(m, JSON_COMPACT);
    if (!text) return floe_err_oom(err);
    floe_ice_metadata_t *md = floe_ice_metadata_from_json(text, strlen(text), err);
    free(text);
    if (!md) return -1;
    /* the version: vN.metadata.json or NNNNN-uuid.metadata.json; 0 when
     * the name says none */
    const char *base = strrchr(loc, '/');
    base = base ? base + 1 : loc;
    if (*base == 'v') base++;
    int64_t v = strtoll(base, NULL, 10);
    if (!out) {
        floe_ice_metadata_free(md);
        return 0;
    }
    *out = floe_ice_table_make(ns, name, loc, v > 0 ? v : 0, md);
    return *out ? 0 : floe_err_oom(err);
}

static char *ns_body(const char *ns, const floe_ice_props_t *props)
{
    json_t *o = json_pack("{s:[s]}", "namespace", ns);
    if (o && props && props->n) json_object_set_new(o, "properties", mj_props_to_json(props));
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static int r_create_namespace(floe_ice_catalog_t *cat, const char *ns, floe_err_t *err)
{
    rest_catalog_t *c = (rest_catalog_t *)cat;
    char *body = ns_body(ns, NULL);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc = call(c, EP_NS_CREATE, "POST", body, &st, &a, err, "namespaces");
    free(body);
    if (rc == 0 && st != 200) rc = answer_err(st, a, "create namespace", err);
    json_decref(a);
    return rc;
}

static int r_drop_namespace(floe_ice_catalog_t *cat, const char *ns, floe_err_t *err)
{
    long st;
    json_t *a;
    int rc =
        call((rest_catalog_t *)cat, EP_NS_DROP, "DELETE", NULL, &st, &a, err, "namespaces/%s", ns);
    if (rc == 0 && st != 204 && st != 200) rc = answer_err(st, a, "drop namespace", err);
    json_decref(a);
    return rc;
}

/* Every page of a listing: member key's items, each through item() into
 * names (a NULL from item: skipped). */
static int list_all(rest_catalog_t *c, const char *ep, const char *path, const char *key,
                    const char *(*item)(json_t *), char ***names, size_t *n, floe_err_t *err)
{
    char *tok = NULL;
    size_t cap = 0;
    int rc = 0;
    do {
        long st;
        json_t *a;
        /* tokens are opaque: sent back as they came (they are names or
         * numbers in practice; anything else is refused) */
        rc = tok ? call(c, ep, "GET", NULL, &st, &a, err, "%s?pageToken=%s", path, tok)
                 : call(c, ep, "GET", NULL, &st, &a, err, "%s", path);
        free(tok);
        tok = NULL;
        if (rc < 0) break;
        if (st != 200) {
            rc = answer_err(st, a, path, err);
            json_decref(a);
            break;
        }
        json_t *arr = json_object_get(a, key), *v;
        size_t i;
        json_array_foreach(arr, i, v)
        {
            const char *s = item(v);
            if (!s) continue;
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                char **nn = realloc(*names, nc * sizeof *nn);
                if (!nn) {
                    rc = floe_err_oom(err);
                    break;
                }
                *names = nn;
                cap = nc;
            }
            if (!((*names)[*n] = strdup(s))) {
                rc = floe_err_oom(err);
                break;
            }
            (*n)++;
        }
        const char *next = json_string_value(json_object_get(a, "next-page-token"));
        if (rc == 0 && next && *next) {
            for (const char *p = next; *p; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.",
                            *p))
                    rc = floe_err_set(err, FLOE_EUNSUPPORTED,
                                      "rest catalog: a page token floe cannot send back");
            if (rc == 0 && !(tok = strdup(next))) rc = floe_err_oom(err);
        }
        json_decref(a);
    } while (rc == 0 && tok);
    free(tok);
    if (rc < 0) {
        floe_fileio_names_free(*names, *n);
        *names = NULL;
        *n = 0;
    }
    return rc;
}

static const char *ns_item(json_t *v)
{
    return json_array_size(v) == 1 ? json_string_value(json_array_get(v, 0)) : NULL;
}

static const char *table_item(json_t *v)
{
    return json_string_value(json_object_get(v, "name"));
}

static int r_list_namespaces(floe_ice_catalog_t *cat, char ***names, size_t *n, floe_err_t *err)
{
    return list_all((rest_catalog_t *)cat, EP_NS_LIST, "namespaces", "namespaces", ns_item, names,
                    n, err);
}

static int r_list_tables(floe_ice_catalog_t *cat, const char *ns, char ***names, size_t *n,
                         floe_err_t *err)
{
    char path[512];
    snprintf(path, sizeof path, "namespaces/%s/tables", ns);
    return list_all((rest_catalog_t *)cat, EP_T_LIST, path, "identifiers", table_item, names, n,
                    err);
}

static int r_create_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                          const floe_ice_schema_t *schema, const floe_ice_spec_t *spec,
                          const floe_ice_sort_order_t *order, const floe_ice_props_t *props,
                          floe_ice_table_t **out, floe_err_t *err)
{
    rest_catalog_t *c = (rest_catalog_t *)cat;
    /* the namespace first, as the filesystem catalog does */
    if (r_create_namespace(cat, ns, err) < 0 && err && err->code != FLOE_EEXIST) return -1;
    json_t *o = json_pack("{s:s,s:o}", "name", name, "schema", mj_schema_to_json(schema));
    if (o && spec) json_object_set_new(o, "partition-spec", mj_spec_to_json(spec));
    if (o && order) json_object_set_new(o, "write-order", mj_order_to_json(order));
    if (o && props) json_object_set_new(o, "properties", mj_props_to_json(props));
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc = call(c, EP_T_CREATE, "POST", body, &st, &a, err, "namespaces/%s/tables", ns);
    free(body);
    if (rc == 0)
        rc = st == 200 ? table_of(a, ns, name, out, err) : answer_err(st, a, "create table", err);
    json_decref(a);
    return rc;
}

static int r_load_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                        floe_ice_table_t **out, floe_err_t *err)
{
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, EP_T_LOAD, "GET", NULL, &st, &a, err,
                  "namespaces/%s/tables/%s", ns, name);
    if (rc == 0)
        rc = st == 200 ? table_of(a, ns, name, out, err) : answer_err(st, a, "load table", err);
    json_decref(a);
    return rc;
}

static int r_drop_table(floe_ice_catalog_t *cat, const char *ns, const char *name, bool purge,
                        floe_err_t *err)
{
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, EP_T_DROP, "DELETE", NULL, &st, &a, err,
                  "namespaces/%s/tables/%s?purgeRequested=%s", ns, name, purge ? "true" : "false");
    if (rc == 0 && st != 204 && st != 200) rc = answer_err(st, a, "drop table", err);
    json_decref(a);
    return rc;
}

static int r_commit(floe_ice_catalog_t *cat, const char *ns, const char *name,
                    const floe_ice_table_t *base, const floe_ice_req_t *reqs, size_t nreqs,
                    const floe_ice_update_t *ups, size_t nups, floe_ice_table_t **out,
                    floe_err_t *err)
{
    (void)base;
    rest_catalog_t *c = (rest_catalog_t *)cat;
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = floe_buf_append_str(&b, "{\"identifier\":{\"namespace\":[") ||
             floe_json_cstr(&b, ns) || floe_buf_append_str(&b, "],\"name\":") ||
             floe_json_cstr(&b, name) || floe_buf_append_str(&b, "},\"requirements\":[");
    for (size_t i = 0; rc == 0 && i < nreqs; i++) {
        if (i && floe_buf_append_u8(&b, ',')) rc = -1;
        else if (floe_ice_req_to_json(&reqs[i], &b, err) < 0)
            rc = -2;
    }
    if (rc == 0 && floe_buf_append_str(&b, "],\"updates\":[")) rc = -1;
    for (size_t i = 0; rc == 0 && i < nups; i++) {
        if (i && floe_buf_append_u8(&b, ',')) rc = -1;
        else if (floe_ice_update_to_json(&ups[i], &b, err) < 0)
            rc = -2;
    }
    if (rc == 0 && (floe_buf_append_str(&b, "]}") || floe_buf_append_u8(&b, 0))) rc = -1;
    if (rc < 0) {
        floe_buf_free(&b);
        return rc == -1 ? floe_err_oom(err) : -1;
    }
    long st;
    json_t *a;
    rc = call(c, EP_T_COMMIT, "POST", (const char *)b.data, &st, &a, err, "namespaces/%s/tables/%s",
              ns, name);
    floe_buf_free(&b);
    if (rc < 0) {
        /* sent, maybe applied: nobody knows until the table is read */
        char m[FLOE_ERR_MSG_MAX];
        snprintf(m, sizeof m, "%s", err ? err->msg : "");
        return floe_err_set(err, FLOE_EUNKNOWN, "commit outcome unknown: %s.%s: %s", ns, name, m);
    }
    if (st == 200) rc = table_of(a, ns, name, out, err);
    else {
        rc = answer_err(st, a, "commit", err);
        if (st >= 500 && err) {
            char m[FLOE_ERR_MSG_MAX];
            snprintf(m, sizeof m, "%s", err->msg);
            floe_err_set(err, FLOE_EUNKNOWN, "commit outcome unknown: %s", m);
        }
    }
    json_decref(a);
    return rc;
}

static int r_load_namespace(floe_ice_catalog_t *cat, const char *ns, floe_ice_props_t *out,
                            floe_err_t *err)
{
    long st;
    json_t *a;
    int rc =
        call((rest_catalog_t *)cat, EP_NS_LOAD, "GET", NULL, &st, &a, err, "namespaces/%s", ns);
    if (rc == 0)
        rc = st == 200 ? mj_props_from_json(json_object_get(a, "properties"), out, NULL, err)
                       : answer_err(st, a, "load namespace", err);
    json_decref(a);
    return rc;
}

static int r_update_namespace(floe_ice_catalog_t *cat, const char *ns,
                              const floe_ice_props_t *updates, const floe_ice_props_t *removals,
                              floe_err_t *err)
{
    json_t *rm = json_array();
    for (size_t i = 0; rm && removals && i < removals->n; i++)
        json_array_append_new(rm, json_string(removals->kv[i].key));
    floe_ice_props_t none = {0};
    json_t *o = json_pack("{s:o,s:o}", "removals", rm, "updates",
                          mj_props_to_json(updates ? updates : &none));
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, EP_NS_PROPS, "POST", body, &st, &a, err,
                  "namespaces/%s/properties", ns);
    free(body);
    if (rc == 0 && st != 200) rc = answer_err(st, a, "update namespace", err);
    json_decref(a);
    return rc;
}

static int r_rename_table(floe_ice_catalog_t *cat, const char *ns, const char *name,
                          const char *to_ns, const char *to_name, floe_err_t *err)
{
    json_t *o = json_pack("{s:{s:[s],s:s},s:{s:[s],s:s}}", "source", "namespace", ns, "name", name,
                          "destination", "namespace", to_ns, "name", to_name);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return floe_err_oom(err);
    long st;
    json_t *a;
    int rc = call((rest_catalog_t *)cat, EP_T_RENAME, "POST", body, &st, &a, err, "tables/rename");
    free(body);
    if (rc == 0 && st != 204 && st != 200) rc = answer_err(st, a, "rename table", err);
    json_decref(a);
    return rc;
}

static int r_create_from(floe_ice_catalog_t *cat, const char *ns, const char *name,
                         const floe_ice_metadata_t *md, floe_ice_table_t **out, floe_err_t *err)
{
    (void)cat;
    (void)md;
    (void)out;
    return floe_err_set(err, FLOE_EUNSUPPORTED,
                        "rest catalog: %s.%s: a table from given metadata is registered by "
                        "the server, not made by the client",
                        ns, name);
}

static int r_table_location(floe_ice_catalog_t *cat, const char *ns, const char *name, char **out,
                            floe_err_t *err)
{
    (void)cat;
    (void)out;
    return floe_err_set(err, FLOE_EUNSUPPORTED,
                        "rest catalog: %s.%s: the server chooses a table's location", ns, name);
}

static void r_destroy(floe_ice_catalog_t *cat)
{
    rest_catalog_t *c = (rest_catalog_t *)cat;
    free(c->v1);
    free(c->root);
    floe_fileio_names_free(c->endpoints, c->nendpoints);
    free(c->client_id);
    free(c->client_secret);
    free(c->token_uri);
    free(c->scope);
    free(c->region);
    free(c->service);
    free(c->akid);
    free(c->secret);
    free(c->session_token);
    free(c->ca_file);
    free(c->auth);
    free(c->wh);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->cfg_mu);
    free(c);
}

static const floe_ice_catalog_ops_t rest_ops = {
    r_create_namespace, r_drop_namespace, r_list_namespaces, r_list_tables,    r_create_table,
    r_load_table,       r_drop_table,     r_commit,          r_load_namespace, r_update_namespace,
    r_rename_table,     r_create_from,    r_table_location,  r_destroy,
};

/* strdup of s, or NULL for NULL or ""; *ok false when out of memory. */
static char *dup_opt(const char *s, bool *ok)
{
    if (!s || !*s) return NULL;
    char *d = strdup(s);
    if (!d) *ok = false;
    return d;
}

/* The endpoints each use of the client needs (floe_ice_rest_config_t.need). */
static const char *const NEED_READ[] = {EP_NS_LIST, EP_T_LIST, EP_T_LOAD, NULL};
static const char *const NEED_COMMIT[] = {EP_NS_CREATE, EP_T_CREATE, EP_T_LOAD, EP_T_COMMIT, NULL};

/* The /v1/config answer a: prefix into root, endpoints kept, and every
 * endpoint the caller needs there. */
int floe_ice_rest_config_answer(json_t *a, char **prefix, char ***eps, size_t *neps,
                                floe_err_t *err)
{
    *prefix = NULL;
    *eps = NULL;
    *neps = 0;
    const char *p = json_string_value(json_object_get(json_object_get(a, "overrides"), "prefix"));
    if (!p) p = json_string_value(json_object_get(json_object_get(a, "defaults"), "prefix"));
    if (!p) p = "";
    /* it goes into every path as it is: URL path characters only */
    for (const char *q = p; *q; q++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/%", *q))
            return floe_err_set(err, FLOE_EUNSUPPORTED,
                                "rest catalog: /v1/config: a prefix floe cannot put in a path");
    if (!(*prefix = strdup(p))) return floe_err_oom(err);
    json_t *list = json_object_get(a, "endpoints"), *v;
    if (!json_is_array(list)) return 0; /* the spec's default set */
    size_t i, cap = json_array_size(list);
    if (!(*eps = calloc(cap + 1, sizeof **eps))) goto oom;
    json_array_foreach(list, i, v)
    {
        const char *e = json_string_value(v);
        if (!e) continue;
        if (!((*eps)[*neps] = strdup(e))) goto oom;
        (*neps)++;
    }
    return 0;
oom:
    free(*prefix);
    *prefix = NULL;
    floe_fileio_names_free(*eps, *neps);
    *eps = NULL;
    *neps = 0;
    return floe_err_oom(err);
}

/* The /v1/config answer a: prefix into root, endpoints kept, and every
 * endpoint the caller needs there. */
static int take_config(rest_catalog_t *c, json_t *a, unsigned need, floe_err_t *err)
{
    char *prefix, **eps;
    size_t neps;
    if (floe_ice_rest_config_answer(a, &prefix, &eps, &neps, err) < 0) return -1;
    size_t n = strlen(c->v1) + strlen(prefix) + 2;
    char *r = malloc(n);
    if (!r) {
        free(prefix);
        floe_fileio_names_free(eps, neps);
        return floe_err_oom(err);
    }
    if (*prefix) snprintf(r, n, "%s/%s", c->v1, prefix);
    else
        snprintf(r, n, "%s", c->v1);
    free(prefix);
    free(c->root);
    c->root = r;
    floe_fileio_names_free(c->endpoints, c->nendpoints);
    c->endpoints = eps;
    c->nendpoints = neps;
    const char *const *lists[] = {need & FLOE_ICE_REST_NEED_READ ? NEED_READ : NULL,
                                  need & FLOE_ICE_REST_NEED_COMMIT ? NEED_COMMIT : NULL};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && lists[l][i]; i++)
            if (!offers(c, lists[l][i]))
                return floe_err_set(err, FLOE_EUNSUPPORTED,
                                    "rest catalog: the server does not offer %s, which floe %s "
                                    "needs (its /v1/config lists %zu endpoints without it)",
                                    lists[l][i], l ? "commits through" : "reads tables through",
                                    c->nendpoints);
    return 0;
}

/* Ask /v1/config and take its answer; with cfg_mu held.  FLOE_EIO when
 * there was no answer or a 5xx one. */
static int configure(rest_catalog_t *c, floe_err_t *err)
{
    long st;
    json_t *a;
    int rc = *c->wh ? call(c, NULL, "GET", NULL, &st, &a, err, "config?warehouse=%s", c->wh)
                    : call(c, NULL, "GET", NULL, &st, &a, err, "config");
    if (rc == 0 && st != 200) rc = answer_err(st, a, "config", err);
    if (rc == 0) rc = take_config(c, a, c->need, err);
    json_decref(a);
    if (rc == 0) c->configured = true;
    return rc;
}

floe_ice_catalog_t *floe_ice_catalog_rest_open(floe_fileio_t *io, const floe_ice_rest_config_t *cfg,
                                               floe_err_t *err)
{
    const char *uri = cfg->uri;
    if (!uri || (strncmp(uri, "http://", 7) && strncmp(uri, "https://", 8))) {
        floe_err_set(err, FLOE_EINVAL, "rest catalog: uri '%s' is not an http(s) URL",
                     uri ? uri : "");
        return NULL;
    }
    if (cfg->credential && *cfg->credential && cfg->token && *cfg->token) {
        floe_err_set(err, FLOE_EINVAL, "rest catalog: a credential or a token, not both");
        return NULL;
    }
    if (cfg->sigv4 && (!cfg->access_key_id || !*cfg->access_key_id || !cfg->secret_access_key ||
                       !*cfg->secret_access_key)) {
        floe_err_set(err, FLOE_EINVAL,
                     "rest catalog: SigV4 signing needs an access key id and a secret "
                     "(s3.access-key-id, s3.secret-access-key or AWS_* variables)");
        return NULL;
    }
    rest_catalog_t *c = calloc(1, sizeof *c);
    if (!c) {
        floe_err_oom(err);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->cfg_mu, NULL);
    c->base.ops = &rest_ops;
    c->base.io = io;
    c->refresh_at_ms = INT64_MAX;
    size_t ul = strlen(uri);
    while (ul && uri[ul - 1] == '/') ul--;
    bool ok = true;
    if ((c->v1 = malloc(ul + 4))) snprintf(c->v1, ul + 4, "%.*s/v1", (int)ul, uri);
    if (!c->v1 || !(c->root = strdup(c->v1))) ok = false;
    if (cfg->token && *cfg->token) {
        size_t n = strlen(cfg->token) + 32;
        if ((c->auth = malloc(n))) snprintf(c->auth, n, "Authorization: Bearer %s", cfg->token);
        else
            ok = false;
    }
    if (cfg->credential && *cfg->credential) {
        /* "id:secret", or a secret alone */
        const char *colon = strchr(cfg->credential, ':');
        if (colon) {
            if ((c->client_id = strndup(cfg->credential, (size_t)(colon - cfg->credential))) ==
                NULL)
                ok = false;
            c->client_secret = strdup(colon + 1);
        } else {
            c->client_secret = strdup(cfg->credential);
        }
        if (!c->client_secret) ok = false;
        c->scope = strdup(cfg->scope && *cfg->scope ? cfg->scope : DEFAULT_SCOPE);
        if (!c->scope) ok = false;
        if (cfg->oauth2_uri && *cfg->oauth2_uri) c->token_uri = dup_opt(cfg->oauth2_uri, &ok);
        else if (c->v1 && (c->token_uri = malloc(strlen(c->v1) + 16)))
            snprintf(c->token_uri, strlen(c->v1) + 16, "%s/oauth/tokens", c->v1);
        else
            ok = false;
    }
    if (cfg->sigv4) {
        c->sigv4 = true;
        c->region = dup_opt(cfg->region && *cfg->region ? cfg->region : "us-east-1", &ok);
        c->service = dup_opt(
            cfg->signing_name && *cfg->signing_name ? cfg->signing_name : "execute-api", &ok);
        c->akid = dup_opt(cfg->access_key_id, &ok);
        c->secret = dup_opt(cfg->secret_access_key, &ok);
        c->session_token = dup_opt(cfg->session_token, &ok);
    }
    if (cfg->ca_file && *cfg->ca_file) c->ca_file = dup_opt(cfg->ca_file, &ok);
    if (!ok) {
        r_destroy(&c->base);
        floe_err_oom(err);
        return NULL;
    }
    char wh[600] = "";
    const char *warehouse = cfg->warehouse;
    for (size_t i = 0, o = 0; warehouse && warehouse[i] && o + 4 < sizeof wh; i++) {
        unsigned char ch = (unsigned char)warehouse[i];
        if (strchr("-_.~", ch) || (ch >= '0' && ch <= '9') ||
            ((ch | 32) >= 'a' && (ch | 32) <= 'z'))
            wh[o++] = (char)ch;
        else
            o += (size_t)snprintf(wh + o, sizeof wh - o, "%%%02X", ch);
        wh[o] = '\0';
    }
    c->need = cfg->need;
    if (!(c->wh = strdup(wh))) {
        r_destroy(&c->base);
        floe_err_oom(err);
        return NULL;
    }
    /* the server's configuration now, so that a wrong one is refused at
     * once; a server that does not answer (yet) is asked again at the
     * first call, and the tables wait for it as for any other outage */
    floe_err_t e;
    pthread_mutex_lock(&c->cfg_mu);
    int rc = configure(c, &e);
    pthread_mutex_unlock(&c->cfg_mu);
    if (rc < 0 && e.code == FLOE_EIO) {
        FLOE_WARN("rest catalog: %s; asked again at the first call", e.msg);
    } else if (rc < 0) {
        if (err) *err = e;
        r_destroy(&c->base);
        return NULL;
    }
    return &c->base;
}

floe_ice_catalog_t *floe_ice_catalog_rest_new(floe_fileio_t *io, const char *uri,
                                              const char *warehouse, const char *token,
                                              floe_err_t *err)
{
    floe_ice_rest_config_t cfg = {.uri = uri, .warehouse = warehouse, .token = token};
    return floe_ice_catalog_rest_open(io, &cfg, err);
}
