/* The Iceberg REST catalog served under /v1/ on the HTTP listener, over an
 * Iceberg catalog (floe's filesystem catalog): namespaces, tables,
 * commits with requirements, renames, registration, metrics reports and
 * multi-table transactions, with the REST spec's error model
 * ({"error": {"message", "type", "code"}}).
 *
 * Namespaces may have several levels (parts separated by 0x1F, "%1F" in
 * the URL; folders in the warehouse).  Auth (off by default): static
 * bearer tokens and OAuth2 client credentials at /v1/oauth/tokens.  A
 * mutation sent with an Idempotency-Key is applied once; a retry with the
 * same key gets the first final answer.  Any first path segment other than the API's
 * own (config, namespaces, tables, transactions) is taken as the prefix
 * and ignored: there is one warehouse.  Mutations are serialized among
 * the server's own requests; every other writer of the same warehouse
 * (floe's table engine) is kept apart by the catalog's optimistic
 * commit. */
#ifndef FLOE_HTTP_REST_H
#define FLOE_HTTP_REST_H

#include "http/http.h"
#include "iceberg/catalog.h"
#include "util/conf.h"

typedef struct floe_rest floe_rest_t;

/* The server's config keys (rest.*), for a floe_rest_cfg_t. */
typedef struct floe_rest_cfg {
    char auth_tokens[4096];          /* rest.auth.tokens */
    char auth_clients[4096];         /* rest.auth.clients */
    int64_t token_ttl_ms;            /* rest.auth.token.ttl.ms */
    int64_t idempotency_lifetime_ms; /* rest.idempotency.lifetime.ms */
    bool vend_credentials;           /* rest.vend.credentials */
    int64_t metadata_cache_bytes;    /* rest.metadata.cache.bytes */
} floe_rest_cfg_t;

/* The keys (static; *n gets the count). */
const floe_conf_key_t *floe_rest_config_keys(size_t *n);

/* Serve cat (borrowed; must outlive the listener) under /v1/ on h and add
 * the server's counters to h's /metrics.  Call before floe_http_start.
 * *out is the server's state: caller frees with floe_rest_free after
 * floe_http_free. */
int floe_rest_http(floe_http_t *h, floe_ice_catalog_t *cat, floe_rest_t **out, floe_err_t *err);
/* Apply cfg (copied; floe_rest_http starts from the keys' defaults) and
 * the FileIO properties an engine needs to read the tables' files:
 * io_config (s3.endpoint, s3.region, s3.path-style-access: in every
 * loadTable answer) and io_secrets (s3.access-key-id, ...: only with
 * rest.vend.credentials); both copied, may be NULL.  Also sizes the
 * catalog's metadata cache.  Call before floe_http_start. */
int floe_rest_configure(floe_rest_t *r, const floe_rest_cfg_t *cfg,
                        const floe_ice_props_t *io_config, const floe_ice_props_t *io_secrets,
                        floe_err_t *err);
void floe_rest_free(floe_rest_t *r);

#endif
