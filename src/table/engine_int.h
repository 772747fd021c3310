/* Internals of the engine's top layer, shared by engine.c (thread,
 * discovery, rounds, re-drive requests) and engine_status.c (status JSON
 * and metrics).  The layers below are listed in ttable.h. */
#ifndef FLOE_TABLE_ENGINE_INT_H
#define FLOE_TABLE_ENGINE_INT_H

#include <pthread.h>

#include "format/parquet.h"
#include "table/engine.h"
#include "table/maint.h"
#include "table/ttable.h"

/* A topic asking to be a table whose table.* configs do not load (set
 * before they were checked where they enter): no table is opened; the
 * status lists it as paused with the reason, logged once per reason. */
typedef struct tbadcfg {
    char *topic;
    char table[400]; /* ns.name, as far as the configs tell */
    char reason[640];
    bool seen; /* still bad at the last discovery */
} tbadcfg_t;

struct floe_engine {
    floe_engine_config_t cfg;
    floe_tsource_t *src;
    floe_ttable_t **tables;
    size_t ntables;
    tbadcfg_t *badcfg;
    size_t nbadcfg;
    int64_t next_discover_ms;
    pthread_t thread;
    bool running;
    pthread_mutex_t mu; /* guards stop, redrive and the status snapshot */
    pthread_cond_t cv;
    bool stop;
    floe_buf_t status, metrics;
    struct redrive_req *redrive; /* asked by floe_engine_redrive; under mu */
    /* Parquet temporaries shared by every table's files (one thread writes) */
    floe_pq_scratch_t *pq_scratch;
    floe_tmaint_t *maint; /* the maintenance thread and its tables (maint.h) */
};

/* engine_status.c: take the status JSON and metrics of every table now
 * and publish them for floe_engine_status_json / floe_engine_metrics.
 * Engine thread (or the run_once caller). */
void floe_engine_publish_status(floe_engine_t *e);

#endif
