/* The Kafka server: accepts connections (net/tcp), decodes requests,
 * dispatches them to registered handlers (kafka/handler.h) and writes the
 * responses back in request order.  Also answers ApiVersions itself. */
#ifndef FLOE_KAFKA_SERVER_H
#define FLOE_KAFKA_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "http/http.h"
#include "kafka/handler.h"
#include "net/loop.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct floe_kafka_srv_config {
    const char *host;            /* listen address, default 127.0.0.1 */
    int port;                    /* 0 picks a free port */
    const char *advertised_host; /* default: host (127.0.0.1 if a wildcard) */
    int advertised_port;         /* default: the bound port */
    int32_t node_id;             /* default 1 */
    const char *cluster_id;      /* default "floe" */
    size_t max_request_bytes;    /* default 100 MiB */
    int max_connections;         /* default 10000 */
    int max_inflight;            /* per connection before reading pauses; 100 */
    size_t max_inflight_bytes;   /* request bytes per connection before reading
                                  * pauses; default 4 MiB (at most
                                  * max_request_bytes) */
} floe_kafka_srv_config_t;

/* Listen and get ready to dispatch.  loop and broker are borrowed and must
 * outlive the server; broker may be NULL (protocol-only tests).  The
 * config strings are copied.  Caller frees with floe_kafka_srv_free. */
int floe_kafka_srv_new(floe_loop_t *loop, const floe_kafka_srv_config_t *cfg, floe_broker_t *broker,
                       floe_kafka_srv_t **out, floe_err_t *err);

/* Initialize modules (each registers its handlers); they are stopped and
 * freed by floe_kafka_srv_shutdown/free.  mods is a NULL-terminated array,
 * borrowed. */
int floe_kafka_srv_add_modules(floe_kafka_srv_t *srv, const floe_kafka_module_t *const *mods,
                               floe_err_t *err);

/* Stop accepting, stop the modules (they answer what they deferred), let
 * queued responses drain for up to drain_ms, then close every connection. */
void floe_kafka_srv_shutdown(floe_kafka_srv_t *srv, int64_t drain_ms);
void floe_kafka_srv_free(floe_kafka_srv_t *srv);

floe_loop_t *floe_kafka_srv_loop(floe_kafka_srv_t *srv);
/* The port actually bound (floe_kafka_srv_port is the advertised one). */
int floe_kafka_srv_bound_port(const floe_kafka_srv_t *srv);

/* Append Prometheus text for the server's counters.  Any thread. */
int floe_kafka_srv_metrics(floe_kafka_srv_t *srv, floe_buf_t *out);
/* Serve those counters on h's /metrics (before floe_http_start).  srv is
 * borrowed and must outlive h.  -1 with *err when out of memory. */
int floe_kafka_srv_http(floe_kafka_srv_t *srv, floe_http_t *h, floe_err_t *err);
/* Bytes received plus bytes sent so far (any thread): a traffic counter. */
uint64_t floe_kafka_srv_traffic(floe_kafka_srv_t *srv);
/* Give back memory kept for traffic (the pool of large frame buffers);
 * for a server that has gone quiet. */
void floe_kafka_srv_release_memory(floe_kafka_srv_t *srv);

/* The modules floe serve runs (src/kafka/modules.c). */
extern const floe_kafka_module_t *const floe_kafka_modules[];

#endif
