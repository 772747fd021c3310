/* AWS Signature Version 4 for S3 requests (HMAC-SHA256 with OpenSSL).
 *
 * Written from AWS's published description of the algorithm: a canonical
 * request (method, URI-encoded path, sorted query, sorted lower-case
 * headers, signed header names, payload hash), a string to sign over its
 * SHA-256, and a signing key derived from the secret by HMACs over date,
 * region, service and "aws4_request".  libcurl's built-in signer does not
 * add x-amz-content-sha256 nor canonicalize the query, so S3 requests are
 * signed here.  Pure functions: no clock, no I/O. */
#ifndef FLOE_STORAGE_SIGV4_H
#define FLOE_STORAGE_SIGV4_H

#include <stddef.h>

#include "util/buf.h"
#include "util/err.h"

/* One header or query parameter (borrowed strings). */
typedef struct floe_sigv4_kv {
    const char *name, *value;
} floe_sigv4_kv_t;

/* What is signed.  Every header in headers is signed (names in any case;
 * they are lower-cased, values trimmed); it must include host,
 * x-amz-date and x-amz-content-sha256 (and x-amz-security-token with
 * temporary credentials), as the request sends them. */
typedef struct floe_sigv4_req {
    const char *method; /* "GET", "PUT", ... */
    const char *path;   /* URI-encoded absolute path, e.g. "/bucket/a%20b" */
    const char *query;  /* canonical query (floe_sigv4_query), "" for none */
    const floe_sigv4_kv_t *headers;
    size_t nheaders;
    const char *payload_sha256; /* lower-case hex, or "UNSIGNED-PAYLOAD" */
    const char *amz_date;       /* "YYYYMMDDTHHMMSSZ", as in the x-amz-date header */
    const char *region;         /* "us-east-1" */
    const char *service;        /* "s3" */
    const char *access_key_id;
    const char *secret_access_key;
} floe_sigv4_req_t;

/* The Authorization header value for r, appended to out as
 * "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...".
 * With canonical (may be NULL) the canonical request is appended there too
 * (for tests and for diagnosing a SignatureDoesNotMatch).  FLOE_EINVAL on
 * a malformed amz_date or more than 64 headers; FLOE_ENOMEM. */
int floe_sigv4_sign(const floe_sigv4_req_t *r, floe_buf_t *out, floe_buf_t *canonical,
                    floe_err_t *err);

/* The canonical query string of params[0..n) (borrowed, raw values):
 * each name and value URI-encoded, sorted by encoded name then value,
 * joined with '&' ("name=" for an empty value).  Appended to out; the
 * same string goes into the URL and into floe_sigv4_req_t.query. */
int floe_sigv4_query(const floe_sigv4_kv_t *params, size_t n, floe_buf_t *out, floe_err_t *err);

/* Append s URI-encoded as SigV4 wants it (unreserved A-Z a-z 0-9 - . _ ~
 * kept, everything else %XX upper-case; '/' kept when keep_slash, for
 * object keys in paths).  -1 only when out of memory. */
int floe_sigv4_uri_encode(const char *s, int keep_slash, floe_buf_t *out);

/* SHA-256 of p[0..n) as 64 lower-case hex digits and a NUL in hex[65]. */
void floe_sigv4_sha256_hex(const void *p, size_t n, char hex[65]);

/* The same, of bytes fed in pieces (a part hashed while it is written).
 * new: NULL when out of memory; caller frees with floe_sigv4_hash_free.
 * final: the hash of what was fed since new or the last final, which
 * starts the next. */
typedef struct floe_sigv4_hash floe_sigv4_hash_t;
floe_sigv4_hash_t *floe_sigv4_hash_new(void);
void floe_sigv4_hash_update(floe_sigv4_hash_t *h, const void *p, size_t n);
void floe_sigv4_hash_final_hex(floe_sigv4_hash_t *h, char hex[65]);
void floe_sigv4_hash_free(floe_sigv4_hash_t *h);

#endif
