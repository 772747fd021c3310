/* Internals shared by the broker's own API handlers (h_*.c). */
#ifndef FLOE_KAFKA_H_INT_H
#define FLOE_KAFKA_H_INT_H

#include "kafka/broker.h"
#include "kafka/handler.h"

typedef struct fetch_wait fetch_wait_t;

/* State of the broker module (one per server). */
typedef struct bk {
    floe_kafka_srv_t *srv;
    floe_broker_t *b;
    fetch_wait_t *fetches;      /* long-poll fetches waiting for data */
    floe_kafka_timer_t *tick;   /* periodic flush/retention */
    bool stopping;
} bk_t;

/* Register the handlers of each file. */
int floe_bk_register_meta(bk_t *bk, floe_err_t *err);
int floe_bk_register_data(bk_t *bk, floe_err_t *err);

/* Data was appended: re-check waiting fetches. */
void floe_bk_appended(bk_t *bk);
/* Answer every waiting fetch now (shutdown). */
void floe_bk_flush_fetches(bk_t *bk);

/* Find a topic for a request, creating it when auto-creation is on and
 * `create` is true.  NULL when absent (or the name is invalid). */
floe_topic_t *floe_bk_topic(bk_t *bk, floe_kstr_t name, bool create);

/* An arena copy of a C string as a Kafka string (NULL stays null). */
floe_kstr_t floe_bk_str(floe_arena_t *a, const char *s);

#endif
