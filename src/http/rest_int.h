/* Internals of the REST catalog server (rest.c): its bearer-token and
 * OAuth2 guard (rest_auth.c) and its Idempotency-Key memory
 * (rest_idem.c).  Both are thread-safe: handlers run on microhttpd's
 * threads. */
#ifndef FLOE_HTTP_REST_INT_H
#define FLOE_HTTP_REST_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "http/http.h"
#include "util/err.h"

/* ---- auth ---- */

typedef struct floe_rest_auth floe_rest_auth_t;

/* tokens: static bearer tokens, comma-separated; clients: OAuth2 client
 * credentials "id:secret", comma-separated (both borrowed, may be empty:
 * with both empty, auth is off); ttl_ms: the lifetime of issued tokens.
 * Caller frees with floe_rest_auth_free. */
int floe_rest_auth_new(const char *tokens, const char *clients, int64_t ttl_ms,
                       floe_rest_auth_t **out, floe_err_t *err);
void floe_rest_auth_free(floe_rest_auth_t *a);
bool floe_rest_auth_on(const floe_rest_auth_t *a);
/* Whether the request's Authorization header carries a valid bearer
 * token: true, or false with *why (static text) saying what is wrong. */
bool floe_rest_auth_check(floe_rest_auth_t *a, const floe_http_req_t *rq, const char **why);
/* POST /v1/oauth/tokens: client_credentials and token exchange (also the
 * refresh of a token), answered as the OAuth2 token endpoint answers
 * (OAuthTokenResponse, or OAuthError with 400/401).  0, or -1 (500). */
int floe_rest_auth_token(floe_rest_auth_t *a, const floe_http_req_t *rq, floe_http_resp_t *rs);
/* The value of field name (borrowed) of the form-encoded body[0..len),
 * URL-decoded into out (size bytes): true when present and it fits. */
bool floe_rest_form_field(const uint8_t *body, size_t len, const char *name, char *out,
                          size_t size);
/* The client id and secret of an "Authorization: Basic ..." header value
 * h (NULL: none), each URL-decoded into its buffer of size bytes: true
 * when h is one. */
bool floe_rest_basic_credentials(const char *h, char *id, char *secret, size_t size);
/* Issued tokens alive now (for /metrics). */
size_t floe_rest_auth_live(floe_rest_auth_t *a);
/* Tokens issued since start (for /metrics). */
uint64_t floe_rest_auth_issued(floe_rest_auth_t *a);

/* ---- Idempotency-Key ---- */

typedef struct floe_rest_idem floe_rest_idem_t;
typedef struct floe_rest_idem_slot floe_rest_idem_slot_t;

/* Outcomes kept for lifetime_ms, at most max_bytes of them (the oldest
 * go first).  Caller frees with floe_rest_idem_free. */
floe_rest_idem_t *floe_rest_idem_new(int64_t lifetime_ms, size_t max_bytes);
void floe_rest_idem_free(floe_rest_idem_t *i);
/* Before a mutation carrying Idempotency-Key key (borrowed): fp
 * identifies the request (method, path, body).
 *   0: go on; *slot is the key's, to pass to floe_rest_idem_end.
 *   1: a request with this key finished before: rs holds its answer.
 *      (One still running is waited for.)
 *  -1: rs holds a 422: the key came with another request.
 *  -2: out of memory. */
int floe_rest_idem_begin(floe_rest_idem_t *i, const char *key, uint64_t fp, floe_http_resp_t *rs,
                         floe_rest_idem_slot_t **slot);
/* After it: a final answer (not 5xx) is kept for replay; any other frees
 * the key for a retry. */
void floe_rest_idem_end(floe_rest_idem_t *i, floe_rest_idem_slot_t *slot,
                        const floe_http_resp_t *rs);
/* Replays answered so far (for /metrics). */
uint64_t floe_rest_idem_replays(floe_rest_idem_t *i);

#endif
