/* The REST catalog client's readings of a server's answers (catalog_rest.c),
 * apart so that a fuzzer can feed them anything: the answer is untrusted,
 * whatever its shape. */
#ifndef FLOE_ICEBERG_CATALOG_REST_INT_H
#define FLOE_ICEBERG_CATALOG_REST_INT_H

#include <jansson.h>
#include <stdint.h>

#include "util/err.h"

/* A token endpoint's 200 answer a (borrowed; any JSON, or NULL):
 * *header the "Authorization: Bearer ..." line (caller frees), *life_ms
 * the token's lifetime (-1: none said, or none usable).  FLOE_EIO without
 * an access_token fit for a header line. */
int floe_ice_rest_token_answer(json_t *a, char **header, int64_t *life_ms, floe_err_t *err);

/* A /v1/config answer a (borrowed; any JSON, or NULL): *prefix the
 * overrides' (else the defaults') prefix, "" for none (caller frees);
 * *eps the endpoints list, NULL when the answer has none (caller frees
 * with floe_fileio_names_free(*eps, *neps)).  FLOE_EUNSUPPORTED for a
 * prefix that is not URL path characters. */
int floe_ice_rest_config_answer(json_t *a, char **prefix, char ***eps, size_t *neps,
                                floe_err_t *err);

#endif
