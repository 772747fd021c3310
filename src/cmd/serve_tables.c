#include "cmd/serve_tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/catalog.h"
#include "table/config.h"
#include "table/engine.h"
#include "table/source_logs.h"
#include "util/diag.h"

#define MAX_CONFIGS 64

struct serve_tables {
    floe_broker_t *broker;
    floe_tsource_logs_t *src;
    floe_fileio_t *io;
    floe_ice_catalog_t *cat;
    floe_engine_t *engine;
    floe_kv_t *defaults;
    int ndefaults;
};

typedef struct cfgs {
    const char *keys[MAX_CONFIGS], *values[MAX_CONFIGS];
    size_t n;
} cfgs_t;

static void collect(const char *key, const char *value, bool is_default, bool sensitive, void *arg)
{
    (void)sensitive;
    cfgs_t *c = arg;
    if (is_default || !value || strncmp(key, "table.", 6) || c->n == MAX_CONFIGS) return;
    c->keys[c->n] = key;
    c->values[c->n++] = value;
}

static void mirror(serve_tables_t *st, floe_topic_t *t)
{
    if (floe_topic_internal(t)) return;
    int32_t n = floe_topic_partitions(t);
    floe_log_t **logs = calloc((size_t)n + 1, sizeof *logs);
    if (!logs) return;
    for (int32_t i = 0; i < n; i++) logs[i] = floe_topic_log(t, i);
    cfgs_t c = {.n = 0};
    floe_topic_each_config(t, collect, &c);
    floe_err_t err;
    if (floe_tsource_logs_set(st->src, floe_topic_name(t), n, logs, c.keys, c.values, c.n, &err) <
        0)
        FLOE_ERROR("tables: cannot track topic %s: %s", floe_topic_name(t), err.msg);
    free(logs);
}

static void observe(void *ctx, floe_topic_t *t, floe_topic_event_t ev)
{
    serve_tables_t *st = ctx;
    if (ev == FLOE_TOPIC_DELETING) floe_tsource_logs_remove(st->src, floe_topic_name(t));
    else
        mirror(st, t);
}

/* The produce path appended: the engine hears of it through the source
 * instead of polling every partition. */
static void appended(void *ctx, floe_topic_t *t, int32_t partition)
{
    serve_tables_t *st = ctx;
    if (!floe_topic_internal(t)) floe_tsource_logs_appended(st->src, floe_topic_name(t), partition);
}

static const char *get_default(void *ctx, const char *key)
{
    serve_tables_t *st = ctx;
    for (int i = 0; i < st->ndefaults; i++)
        if (!strcmp(st->defaults[i].key, key)) return st->defaults[i].value;
    return NULL;
}

int serve_tables_start(floe_broker_t *b, const char *data_dir, const floe_store_cfg_t *store,
                       const floe_kv_t *defaults, int ndefaults, const floe_conv_schemas_t *schemas,
                       serve_tables_t **out, floe_err_t *err)
{
    serve_tables_t *st = calloc(1, sizeof *st);
    if (!st) return floe_err_oom(err);
    st->broker = b;
    st->defaults = calloc((size_t)ndefaults + 1, sizeof *st->defaults);
    if (!st->defaults) goto oom;
    for (int i = 0; i < ndefaults; i++) {
        if (strncmp(defaults[i].key, "table.", 6)) continue;
        floe_kv_t *d = &st->defaults[st->ndefaults];
        if (!(d->key = strdup(defaults[i].key)) || !(d->value = strdup(defaults[i].value)))
            goto oom;
        st->ndefaults++;
    }
    char wh[4200];
    if (!(st->src = floe_tsource_logs_new())) goto oom;
    if (floe_store_open_catalog(store, data_dir, FLOE_ICE_REST_NEED_COMMIT, &st->io, &st->cat, wh,
                                sizeof wh, err) < 0)
        goto fail;
    floe_engine_config_t ec = {.catalog = st->cat, .get_default = get_default, .default_ctx = st};
    if (schemas) ec.schemas = *schemas;
    if (!(st->engine = floe_engine_new(&ec, floe_tsource_logs_source(st->src), err))) goto fail;
    floe_topic_t **topics;
    int n = floe_broker_topics(b, &topics);
    for (int i = 0; i < n; i++) mirror(st, topics[i]);
    free(topics);
    floe_broker_set_observer(b, observe, st);
    floe_broker_set_append_observer(b, appended, st);
    if (floe_engine_start(st->engine, err) < 0) goto fail;
    *out = st;
    return 0;
oom:
    floe_err_oom(err);
fail:
    serve_tables_stop(st);
    return -1;
}

void serve_tables_stop(serve_tables_t *st)
{
    if (!st) return;
    if (st->broker) {
        floe_broker_set_observer(st->broker, NULL, NULL);
        floe_broker_set_append_observer(st->broker, NULL, NULL);
    }
    floe_engine_free(st->engine); /* stops the thread after a last commit */
    floe_ice_catalog_free(st->cat);
    floe_fileio_free(st->io);
    floe_tsource_logs_free(st->src);
    for (int i = 0; i < st->ndefaults; i++) {
        free((char *)st->defaults[i].key);
        free((char *)st->defaults[i].value);
    }
    free(st->defaults);
    free(st);
}

floe_engine_t *serve_tables_engine(serve_tables_t *st)
{
    return st->engine;
}

floe_ice_catalog_t *serve_tables_catalog(serve_tables_t *st)
{
    return st->cat;
}

/* A topic's config: its own, else the server default. */
static const char *topic_config(void *ctx, const char *key)
{
    return floe_topic_config(ctx, key, NULL);
}

int serve_tables_retention_floor(serve_tables_t *st, floe_topic_t *t, int32_t p,
                                 floe_retention_floor_t *out)
{
    /* a table.enable that does not parse asks too (its table shows the
     * error): the log keeps its records until it is fixed */
    if (floe_topic_internal(t) || !floe_table_config_wanted(topic_config, t, NULL, NULL)) return 0;
    floe_table_config_t cfg;
    floe_err_t err; /* a bad key leaves its default; the others apply */
    floe_table_config_load(&cfg, floe_topic_name(t), topic_config, t, NULL, NULL, &err);
    int64_t c = st ? floe_tsource_logs_cursor(st->src, floe_topic_name(t), p) : -1;
    out->offset = c > 0 ? c : 0;
    out->max_held_bytes =
        cfg.retention_max_lag_bytes == FLOE_TABLE_UNLIMITED ? -1 : cfg.retention_max_lag_bytes;
    return 1;
}

floe_fileio_t *serve_tables_io(serve_tables_t *st)
{
    return st->io;
}
