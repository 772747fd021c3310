/* floe serve's built-in schema registry (registry/registry.h) with its
 * state in the compacted internal topic `_schemas`. */
#ifndef FLOE_CMD_SERVE_REGISTRY_H
#define FLOE_CMD_SERVE_REGISTRY_H

#include "http/http.h"
#include "kafka/broker.h"
#include "registry/registry.h"
#include "table/convert.h"

/* Where the registry keeps its records, as Confluent's registry does. */
#define FLOE_SCHEMAS_TOPIC "_schemas"

typedef struct serve_registry serve_registry_t;

/* Create `_schemas` (cleanup.policy=compact, 1 partition) when missing
 * and replay it.  b is borrowed and must outlive the registry; stop it
 * after the HTTP server (floe_registry_http) and the table engine are gone
 * and before the broker closes.  Caller frees with serve_registry_stop. */
int serve_registry_start(floe_broker_t *b, serve_registry_t **out, floe_err_t *err);
/* The registry (borrowed until serve_registry_stop). */
floe_registry_t *serve_registry(serve_registry_t *s);
/* The registry as the avro converters' schema source (by id). */
floe_conv_schemas_t serve_registry_schemas(serve_registry_t *s);
void serve_registry_stop(serve_registry_t *s);

#endif
