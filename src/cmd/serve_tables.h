/* `floe serve`'s table topics: the broker's topics mirrored into the table
 * engine's source, and the engine thread. */
#ifndef FLOE_CMD_SERVE_TABLES_H
#define FLOE_CMD_SERVE_TABLES_H

#include "cmd/store.h"
#include "kafka/broker.h"
#include "table/engine.h"
#include "util/err.h"

typedef struct serve_tables serve_tables_t;

/* Tables in the warehouse that store (borrowed for the call) names, by
 * default DATA/warehouse (filesystem catalog), or the REST catalog of
 * catalog.type = rest (floe_store_open_catalog); defaults are the
 * server's topic defaults (table.* keys are read), borrowed for the call.
 * Mirrors every existing topic, installs the broker observer, starts the
 * engine thread.  Caller stops with serve_tables_stop. */
int serve_tables_start(floe_broker_t *b, const char *data_dir, const floe_store_cfg_t *store,
                       const floe_kv_t *defaults, int ndefaults, const floe_conv_schemas_t *schemas,
                       serve_tables_t **out, floe_err_t *err);
/* Last commit, stop the thread, remove the observer, free.  Before the
 * broker closes its logs. */
void serve_tables_stop(serve_tables_t *st);
/* The table engine (borrowed until serve_tables_stop), for its HTTP
 * routes. */
floe_engine_t *serve_tables_engine(serve_tables_t *st);
/* The tables' catalog (borrowed until serve_tables_stop), for the REST
 * catalog server. */
floe_ice_catalog_t *serve_tables_catalog(serve_tables_t *st);
/* The broker's retention floor (floe_retention_floor_fn) of partition p
 * of topic t: for a topic that asks to be a table (table.enable), the
 * offset its table has committed (0 until the engine has said, since
 * this start; st may be NULL before the tables run) and
 * table.retention.max.lag.bytes; 0 for any other topic.  Loop thread. */
int serve_tables_retention_floor(serve_tables_t *st, floe_topic_t *t, int32_t p,
                                 floe_retention_floor_t *out);
/* The tables' FileIO (borrowed until serve_tables_stop), for its metrics. */
floe_fileio_t *serve_tables_io(serve_tables_t *st);

#endif
