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
 * default DATA/warehouse (filesystem catalog); defaults are the
 * server's topic defaults (table.* keys are read), borrowed for the call.
 * Mirrors every existing topic, installs the broker observer, starts the
 * engine thread.  Caller stops with serve_tables_stop. */
int serve_tables_start(floe_broker_t *b, const char *data_dir, const floe_store_cfg_t *store,
                       const floe_kv_t *defaults, int ndefaults, serve_tables_t **out,
                       floe_err_t *err);
/* Last commit, stop the thread, remove the observer, free.  Before the
 * broker closes its logs. */
void serve_tables_stop(serve_tables_t *st);
/* The table engine (borrowed until serve_tables_stop), for its HTTP
 * routes. */
floe_engine_t *serve_tables_engine(serve_tables_t *st);
/* The tables' FileIO (borrowed until serve_tables_stop), for its metrics. */
floe_fileio_t *serve_tables_io(serve_tables_t *st);

#endif
