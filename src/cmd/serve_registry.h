/* floe serve's built-in schema registry (registry/registry.h) with its
 * state in the compacted internal topic `_schemas`. */
#ifndef FLOE_CMD_SERVE_REGISTRY_H
#define FLOE_CMD_SERVE_REGISTRY_H

#include "http/http.h"
#include "kafka/broker.h"
#include "registry/registry.h"

/* Where the registry keeps its records, as Confluent's registry does. */
#define FLOE_SCHEMAS_TOPIC "_schemas"

typedef struct serve_registry serve_registry_t;

/* Create `_schemas` (cleanup.policy=compact, 1 partition) when missing,
 * replay it, and route the registry's REST API on http.  b and http are
 * borrowed and must outlive the registry; stop it after http is freed
 * (no request may be running) and before the broker closes.  Caller
 * frees with serve_registry_stop. */
int serve_registry_start(floe_broker_t *b, floe_http_t *http, serve_registry_t **out,
                         floe_err_t *err);
/* The registry (borrowed), for in-process converters. */
floe_registry_t *serve_registry(serve_registry_t *s);
void serve_registry_stop(serve_registry_t *s);

#endif
