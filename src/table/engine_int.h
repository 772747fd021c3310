/* Internals of the engine's top layer, shared by engine.c (thread,
 * discovery, rounds, requests) and engine_status.c (status JSON and
 * metrics).  The layers below are listed in ttable.h. */
#ifndef FLOE_TABLE_ENGINE_INT_H
#define FLOE_TABLE_ENGINE_INT_H

#include <pthread.h>

#include "format/parquet.h"
#include "table/engine.h"
#include "table/maint.h"
#include "table/pipeline.h"
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

struct engine_req; /* engine.c */

struct floe_engine {
    floe_engine_config_t cfg;
    floe_tsource_t *src;
    floe_ttable_t **tables; /* sorted by topic */
    size_t ntables, captables;
    tbadcfg_t *badcfg;
    size_t nbadcfg;
    /* discovery: when the source's topics are looked at next, the topics
     * version listed last, and whether to list them then whatever the
     * version says (a table to open again, or to rebuild) */
    int64_t next_discover_ms;
    uint64_t topics_seen;
    bool rediscover;
    /* partitions to step (news, or more left to read; p->ready says
     * listed); stepping takes the list and leaves the next round's here */
    floe_tpart_t **ready, **stepping;
    size_t nready, capready, capstepping;
    /* tables with something to commit (t->dirty says listed) */
    floe_ttable_t **dirty;
    size_t ndirty, capdirty;
    uint64_t steps, rounds; /* partition steps and rounds taken, for the metrics */
    pthread_t thread;
    bool running;
    pthread_mutex_t mu; /* guards what follows */
    pthread_cond_t cv;  /* any change of it; the engine thread sleeps on it */
    bool stop;
    bool thread_on;         /* the thread runs rounds: it alone touches the tables */
    bool woken;             /* the source has news */
    struct engine_req *req; /* a request waiting for the engine thread */
    /* status and metrics: built by the engine thread when asked (the
     * asks counted in status_asked, the last served in status_built),
     * kept for the next ask */
    uint64_t status_asked, status_built;
    floe_buf_t status, metrics;
    /* Parquet temporaries shared by every table's files (one thread writes) */
    floe_pq_scratch_t *pq_scratch;
    floe_tmaint_t *maint; /* the maintenance thread and its tables (maint.h) */
};

/* engine_status.c: the status JSON and metrics of every table now, into
 * js and m (appended).  The thread that owns the tables: the engine
 * thread, or the run_once caller when it does not run. */
void floe_engine_status_build(floe_engine_t *e, floe_buf_t *js, floe_buf_t *m);
/* Table t's state as JSON members ("\"state\":...,\"reason\":...,..."),
 * appended to js: the status's and the pause/resume answers'. */
void floe_engine_state_json(floe_buf_t *js, const floe_ttable_t *t);

#endif
