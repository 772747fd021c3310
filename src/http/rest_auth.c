/* The REST catalog's guard (rest_int.h): static bearer tokens from the
 * config, and tokens issued by the OAuth2 token endpoint clients still
 * call (POST /v1/oauth/tokens, form-encoded): client_credentials with a
 * configured id:secret, and token exchange, which is also how a client
 * refreshes a token before it expires (RFC 6749 section 4.4, RFC 8693).
 * Issued tokens are 256 random bits from OpenSSL's CSPRNG, kept in memory
 * only: a restart asks clients to authenticate again. */
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/rest_int.h"
#include "util/base64.h"
#include "util/clock.h"

#define TOKEN_HEX 64
#define MAX_ISSUED 10000
#define MAX_FIELD 4096
#define ACCESS_TOKEN_TYPE "urn:ietf:params:oauth:token-type:access_token"
#define TOKEN_EXCHANGE "urn:ietf:params:oauth:grant-type:token-exchange"

typedef struct issued {
    char tok[TOKEN_HEX + 1];
    int64_t expires_ms;
} issued_t;

struct floe_rest_auth {
    char **tokens, **clients; /* static tokens; "id:secret" */
    size_t ntokens, nclients;
    int64_t ttl_ms;
    pthread_mutex_t mu;
    issued_t *issued;
    size_t nissued;
    uint64_t issued_total; /* tokens issued since start */
};

static int split_list(const char *s, char ***out, size_t *n, floe_err_t *err)
{
    *out = NULL;
    *n = 0;
    for (const char *p = s; p && *p;) {
        while (*p == ' ' || *p == ',') p++;
        size_t len = strcspn(p, ",");
        while (len && p[len - 1] == ' ') len--;
        if (len) {
            char **g = realloc(*out, (*n + 1) * sizeof *g);
            if (!g) return floe_err_oom(err);
            *out = g;
            if (!(g[*n] = strndup(p, len))) return floe_err_oom(err);
            (*n)++;
        }
        p += strcspn(p, ",");
    }
    return 0;
}

static void free_list(char **l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        OPENSSL_cleanse(l[i], strlen(l[i]));
        free(l[i]);
    }
    free(l);
}

int floe_rest_auth_new(const char *tokens, const char *clients, int64_t ttl_ms,
                       floe_rest_auth_t **out, floe_err_t *err)
{
    floe_rest_auth_t *a = calloc(1, sizeof *a);
    if (!a) return floe_err_oom(err);
    pthread_mutex_init(&a->mu, NULL);
    a->ttl_ms = ttl_ms;
    if (split_list(tokens, &a->tokens, &a->ntokens, err) < 0 ||
        split_list(clients, &a->clients, &a->nclients, err) < 0) {
        floe_rest_auth_free(a);
        return -1;
    }
    for (size_t i = 0; i < a->nclients; i++) {
        const char *c = strchr(a->clients[i], ':');
        if (!c || c == a->clients[i] || !c[1]) {
            floe_rest_auth_free(a);
            return floe_err_set(err, FLOE_EINVAL,
                                "rest.auth.clients: each entry is CLIENT_ID:SECRET");
        }
    }
    *out = a;
    return 0;
}

void floe_rest_auth_free(floe_rest_auth_t *a)
{
    if (!a) return;
    free_list(a->tokens, a->ntokens);
    free_list(a->clients, a->nclients);
    if (a->issued) OPENSSL_cleanse(a->issued, a->nissued * sizeof *a->issued);
    free(a->issued);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

bool floe_rest_auth_on(const floe_rest_auth_t *a)
{
    return a && (a->ntokens || a->nclients);
}

/* s equals t, in time that depends on their lengths only. */
static bool same(const char *s, const char *t)
{
    size_t n = strlen(s);
    return n == strlen(t) && CRYPTO_memcmp(s, t, n) == 0;
}

static void drop_expired(floe_rest_auth_t *a, int64_t now)
{
    size_t o = 0;
    for (size_t i = 0; i < a->nissued; i++)
        if (a->issued[i].expires_ms > now) a->issued[o++] = a->issued[i];
    a->nissued = o;
}

/* 1: valid; 0: unknown; -1: issued here but expired. */
static int token_state(floe_rest_auth_t *a, const char *tok)
{
    for (size_t i = 0; i < a->ntokens; i++)
        if (same(tok, a->tokens[i])) return 1;
    int st = 0;
    int64_t now = floe_mono_ms();
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < a->nissued && !st; i++)
        if (same(tok, a->issued[i].tok)) st = a->issued[i].expires_ms > now ? 1 : -1;
    pthread_mutex_unlock(&a->mu);
    return st;
}

bool floe_rest_auth_check(floe_rest_auth_t *a, const floe_http_req_t *rq, const char **why)
{
    if (!floe_rest_auth_on(a)) return true;
    const char *h = floe_http_header(rq, "Authorization");
    if (!h) {
        *why = "no Authorization header: this catalog wants a bearer token";
        return false;
    }
    if (strncasecmp(h, "Bearer ", 7) != 0) {
        *why = "the Authorization header is not a bearer token";
        return false;
    }
    h += 7;
    while (*h == ' ') h++;
    int st = token_state(a, h);
    if (st == 1) return true;
    *why = st < 0 ? "the bearer token has expired" : "the bearer token is not valid";
    return false;
}

size_t floe_rest_auth_live(floe_rest_auth_t *a)
{
    pthread_mutex_lock(&a->mu);
    drop_expired(a, floe_mono_ms());
    size_t n = a->nissued;
    pthread_mutex_unlock(&a->mu);
    return n;
}

uint64_t floe_rest_auth_issued(floe_rest_auth_t *a)
{
    pthread_mutex_lock(&a->mu);
    uint64_t n = a->issued_total;
    pthread_mutex_unlock(&a->mu);
    return n;
}

/* ---- the token endpoint ---- */

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* URL-decode s[0..n) ('+' is a space) into out (size >= n + 1). */
static void url_decode(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') out[o++] = ' ';
        else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else
            out[o++] = s[i];
    }
    out[o] = '\0';
}

bool floe_rest_form_field(const uint8_t *body, size_t len, const char *name, char *out, size_t size)
{
    const char *b = (const char *)body;
    size_t nl = strlen(name);
    for (size_t i = 0; b && i < len;) {
        size_t e = i;
        while (e < len && b[e] != '&') e++;
        const char *eq = memchr(b + i, '=', e - i);
        size_t kl = eq ? (size_t)(eq - (b + i)) : e - i;
        char key[64];
        if (kl < sizeof key) {
            url_decode(b + i, kl, key);
            if (strlen(key) == nl && !memcmp(key, name, nl)) {
                size_t vl = eq ? (size_t)(b + e - eq - 1) : 0;
                if (vl >= size) return false;
                url_decode(eq ? eq + 1 : "", vl, out);
                return true;
            }
        }
        i = e + 1;
    }
    return false;
}

/* RFC 6749 5.1 and 5.2: token answers are never cached; a refused
 * client is told how to authenticate */
#define NO_STORE "Cache-Control: no-store\nPragma: no-cache\n"

static int oauth_error(floe_http_resp_t *rs, int status, const char *code, const char *desc)
{
    rs->status = status;
    rs->content_type = "application/json";
    rs->headers = status == 401 ? NO_STORE "WWW-Authenticate: Basic realm=\"floe\"\n" : NO_STORE;
    floe_buf_reset(&rs->body);
    json_t *j = json_pack("{s:s,s:s}", "error", code, "error_description", desc);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    int rc = s ? floe_buf_append_str(&rs->body, s) : -1;
    free(s);
    return rc;
}

/* A new token, answered as an OAuthTokenResponse. */
static int issue(floe_rest_auth_t *a, const char *scope, floe_http_resp_t *rs)
{
    unsigned char raw[TOKEN_HEX / 2];
    issued_t t;
    if (RAND_bytes(raw, sizeof raw) != 1)
        return oauth_error(rs, 503, "temporarily_unavailable", "no random bytes for a token");
    for (size_t i = 0; i < sizeof raw; i++) snprintf(t.tok + 2 * i, 3, "%02x", raw[i]);
    OPENSSL_cleanse(raw, sizeof raw);
    int64_t now = floe_mono_ms();
    t.expires_ms = now + a->ttl_ms;
    pthread_mutex_lock(&a->mu);
    drop_expired(a, now);
    if (a->nissued == MAX_ISSUED) {
        /* full: the token closest to its end goes */
        memmove(a->issued, a->issued + 1, (a->nissued - 1) * sizeof *a->issued);
        a->nissued--;
    }
    if (!a->issued) a->issued = malloc(MAX_ISSUED * sizeof *a->issued);
    bool kept = a->issued != NULL;
    if (kept) {
        a->issued[a->nissued++] = t;
        a->issued_total++;
    }
    pthread_mutex_unlock(&a->mu);
    if (!kept) return -1;
    json_t *j =
        json_pack("{s:s,s:s,s:I,s:s}", "access_token", t.tok, "token_type", "bearer", "expires_in",
                  (json_int_t)(a->ttl_ms / 1000), "issued_token_type", ACCESS_TOKEN_TYPE);
    if (j && scope && *scope) json_object_set_new(j, "scope", json_string(scope));
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    OPENSSL_cleanse(&t, sizeof t);
    rs->status = 200;
    rs->content_type = "application/json";
    rs->headers = NO_STORE;
    floe_buf_reset(&rs->body);
    int rc = s ? floe_buf_append_str(&rs->body, s) : -1;
    if (s) OPENSSL_cleanse(s, strlen(s));
    free(s);
    return rc;
}

static bool form_field(const floe_http_req_t *rq, const char *name, char *out, size_t size)
{
    return floe_rest_form_field(rq->body, rq->body_len, name, out, size);
}

bool floe_rest_basic_credentials(const char *h, char *id, char *secret, size_t size)
{
    if (!h || strncasecmp(h, "Basic ", 6) != 0) return false;
    h += 6;
    size_t n = strlen(h);
    /* decoded, at most 3/4 of n; each part no longer than the whole */
    if (n == 0 || n % 4 || n / 4 * 3 >= size) return false;
    floe_buf_t dec = FLOE_BUF_INIT;
    bool ok = floe_base64_decode(&dec, h, n) == 0 && floe_buf_cstr(&dec) != NULL;
    char *d = (char *)dec.data, *c = NULL;
    if (ok) ok = memchr(d, '\0', dec.len) == NULL && (c = strchr(d, ':')) != NULL;
    if (ok) {
        url_decode(d, (size_t)(c - d), id);
        url_decode(c + 1, strlen(c + 1), secret);
    }
    if (dec.data) OPENSSL_cleanse(dec.data, dec.cap);
    floe_buf_free(&dec);
    return ok;
}

/* client_id and client_secret from the form, or from HTTP Basic auth. */
static bool client_of(const floe_http_req_t *rq, char *id, char *secret)
{
    if (form_field(rq, "client_id", id, MAX_FIELD) &&
        form_field(rq, "client_secret", secret, MAX_FIELD))
        return true;
    return floe_rest_basic_credentials(floe_http_header(rq, "Authorization"), id, secret,
                                       MAX_FIELD);
}

int floe_rest_auth_token(floe_rest_auth_t *a, const floe_http_req_t *rq, floe_http_resp_t *rs)
{
    if (strcmp(rq->method, "POST"))
        return oauth_error(rs, 400, "invalid_request", "the token endpoint takes POST");
    char grant[128], scope[256] = "";
    char *id = calloc(4, MAX_FIELD);
    if (!id) return -1;
    char *secret = id + MAX_FIELD, *subject = secret + MAX_FIELD, *stype = subject + MAX_FIELD;
    int rc;
    form_field(rq, "scope", scope, sizeof scope);
    if (!form_field(rq, "grant_type", grant, sizeof grant)) {
        rc = oauth_error(rs, 400, "invalid_request", "grant_type is missing");
    } else if (!strcmp(grant, "client_credentials")) {
        bool ok = false;
        if (!client_of(rq, id, secret)) {
            rc = oauth_error(rs, 400, "invalid_request", "client_id and client_secret are missing");
            goto out;
        }
        for (size_t i = 0; i < a->nclients; i++) {
            const char *c = strchr(a->clients[i], ':');
            size_t il = (size_t)(c - a->clients[i]);
            /* every entry is compared, so the time says nothing about
             * which part was wrong */
            bool m = il == strlen(id) && CRYPTO_memcmp(id, a->clients[i], il) == 0;
            ok |= m & same(secret, c + 1);
        }
        /* with auth off, any client gets a token: clients set up with a
         * credential still connect */
        rc = ok || !floe_rest_auth_on(a)
                 ? issue(a, scope, rs)
                 : oauth_error(rs, 401, "invalid_client", "unknown client or wrong secret");
    } else if (!strcmp(grant, TOKEN_EXCHANGE)) {
        /* exchange a token this catalog accepts for a new one: with the
         * expiring token as subject, a refresh */
        if (!form_field(rq, "subject_token", subject, MAX_FIELD) ||
            !form_field(rq, "subject_token_type", stype, MAX_FIELD))
            rc = oauth_error(rs, 400, "invalid_request",
                             "subject_token and subject_token_type are missing");
        else if (strcmp(stype, ACCESS_TOKEN_TYPE))
            rc = oauth_error(rs, 400, "invalid_request",
                             "subject_token_type must be " ACCESS_TOKEN_TYPE);
        else if (floe_rest_auth_on(a) && token_state(a, subject) != 1)
            rc = oauth_error(rs, 400, "invalid_grant",
                             "subject_token is not valid here, or has expired");
        else if (form_field(rq, "actor_token", id, MAX_FIELD) && floe_rest_auth_on(a) &&
                 token_state(a, id) != 1)
            rc = oauth_error(rs, 400, "invalid_grant",
                             "actor_token is not valid here, or has expired");
        else
            rc = issue(a, scope, rs);
    } else {
        rc = oauth_error(rs, 400, "unsupported_grant_type",
                         "grant_type must be client_credentials or token exchange");
    }
out:
    OPENSSL_cleanse(id, 4 * MAX_FIELD);
    free(id);
    return rc;
}
