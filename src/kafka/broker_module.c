/* The broker module of the Kafka server: the APIs that read and write the
 * broker's topics (h_meta.c: metadata and admin; h_produce.c: Produce;
 * h_data.c: Fetch and offsets) share its state, floe_broker_mod_t
 * (h_int.h), one per server.  The consumer groups are another module
 * (groups_module.h). */
#include <stdlib.h>

#include "kafka/h_int.h"
#include "kafka/server.h"

/* Flush logs whose flush.ms passed and enforce retention, on the broker's
 * flush interval. */
static void tick(void *arg)
{
    floe_broker_mod_t *bm = arg;
    bm->tick = NULL;
    floe_broker_tick(bm->b);
    if (!bm->stopping)
        bm->tick =
            floe_kafka_timer_add(bm->srv, floe_broker_config(bm->b)->flush_interval_ms, tick, bm);
}

static int module_init(floe_kafka_srv_t *srv, void **state, floe_err_t *err)
{
    floe_broker_t *b = floe_kafka_srv_broker(srv);
    if (!b) return floe_err_set(err, FLOE_EINVAL, "the broker module needs a broker");
    floe_broker_mod_t *bm = calloc(1, sizeof *bm);
    if (!bm) return floe_err_oom(err);
    bm->srv = srv;
    bm->b = b;
    if (floe_broker_mod_appender_start(bm, err)) {
        free(bm);
        return -1;
    }
    if (floe_broker_mod_register_meta(bm, err) || floe_broker_mod_register_data(bm, err) ||
        floe_broker_mod_register_produce(bm, err)) {
        floe_broker_mod_appender_stop(bm);
        free(bm);
        return -1;
    }
    *state = bm;
    int64_t iv = floe_broker_config(b)->flush_interval_ms;
    bm->tick = floe_kafka_timer_add(srv, iv > 0 ? iv : 1000, tick, bm);
    return 0;
}

static void module_stop(void *state)
{
    floe_broker_mod_t *bm = state;
    bm->stopping = true;
    if (bm->tick) floe_kafka_timer_cancel(bm->srv, bm->tick);
    bm->tick = NULL;
    floe_broker_mod_appender_stop(bm); /* finishes every queued append */
    floe_broker_mod_flush_fetches(bm);
}

static void module_free(void *state)
{
    floe_broker_mod_t *bm = state;
    floe_broker_mod_appender_stop(bm);
    free(bm);
}

const floe_kafka_module_t floe_broker_module = {"broker", module_init, module_stop, module_free};
