/* The Iceberg REST catalog served under /v1/ on the HTTP listener, over an
 * Iceberg catalog (floe's filesystem catalog): namespaces, tables,
 * commits with requirements, renames, registration, metrics reports and
 * multi-table transactions, with the REST spec's error model
 * ({"error": {"message", "type", "code"}}).
 *
 * Namespaces are single-level (the filesystem catalog keeps one level):
 * a multi-level namespace (parts separated by 0x1F, "%1F" in the URL) is
 * a 400 BadRequestException.  Any first path segment other than the API's
 * own (config, namespaces, tables, transactions) is taken as the prefix
 * and ignored: there is one warehouse.  Mutations are serialized among
 * the server's own requests; every other writer of the same warehouse
 * (floe's table engine) is kept apart by the catalog's optimistic
 * commit. */
#ifndef FLOE_HTTP_REST_H
#define FLOE_HTTP_REST_H

#include "http/http.h"
#include "iceberg/catalog.h"

typedef struct floe_rest floe_rest_t;

/* Serve cat (borrowed; must outlive the listener) under /v1/ on h and add
 * the server's counters to h's /metrics.  Call before floe_http_start.
 * *out is the server's state: caller frees with floe_rest_free after
 * floe_http_free. */
int floe_rest_http(floe_http_t *h, floe_ice_catalog_t *cat, floe_rest_t **out, floe_err_t *err);
void floe_rest_free(floe_rest_t *r);

#endif
