/* Internals of the broker module (broker_module.c): its state and what its
 * API handler files (h_meta.c, h_data.c, h_produce.c) share. */
#ifndef FLOE_KAFKA_H_INT_H
#define FLOE_KAFKA_H_INT_H

#include "kafka/broker.h"
#include "kafka/handler.h"

#include <pthread.h>

typedef struct fetch_wait fetch_wait_t;
typedef struct append_job append_job_t;

/* State of the broker module, one per server: the broker (the topic
 * registry and its logs, kafka/broker.h) its handlers serve, plus what
 * they keep between requests.  Not the broker itself. */
typedef struct floe_broker_mod {
    floe_kafka_srv_t *srv;
    floe_broker_t *b;
    fetch_wait_t *fetches;    /* long-poll fetches waiting for data */
    floe_kafka_timer_t *tick; /* periodic flush/retention */
    bool stopping;
    /* the appender thread: produce appends run off the loop thread, in
     * the order the loop queued them */
    pthread_t app_thread;
    bool app_started, app_stop, app_busy;
    pthread_mutex_t app_mu;
    pthread_cond_t app_cv, app_idle;
    append_job_t *app_head, *app_tail;   /* to do */
    append_job_t *done_head, *done_tail; /* done, for the loop */
} floe_broker_mod_t;

/* Register the handlers of each file. */
int floe_broker_mod_register_meta(floe_broker_mod_t *bm, floe_err_t *err);
int floe_broker_mod_register_data(floe_broker_mod_t *bm, floe_err_t *err);
int floe_broker_mod_register_produce(floe_broker_mod_t *bm, floe_err_t *err);

/* Start/stop the appender thread.  Stop waits for queued appends and
 * completes them on the calling (loop) thread; safe to call twice. */
int floe_broker_mod_appender_start(floe_broker_mod_t *bm, floe_err_t *err);
void floe_broker_mod_appender_stop(floe_broker_mod_t *bm);
/* Block until every queued append is done and answered (before deleting a
 * topic, whose logs the appender may be using). Loop thread. */
void floe_broker_mod_appender_drain(floe_broker_mod_t *bm);

/* Data was appended: re-check waiting fetches. */
void floe_broker_mod_appended(floe_broker_mod_t *bm);
/* Answer every waiting fetch now (shutdown). */
void floe_broker_mod_flush_fetches(floe_broker_mod_t *bm);

/* Find a topic for a request, creating it when auto-creation is on and
 * `create` is true.  NULL when absent (or the name is invalid). */
floe_topic_t *floe_broker_mod_topic(floe_broker_mod_t *bm, floe_kstr_t name, bool create);

/* Answer req with "out of memory" and return from the (void) handler. */
#define OOM(req)                                 \
    do {                                         \
        floe_kafka_fail((req), "out of memory"); \
        return;                                  \
    } while (0)

/* An arena copy of a C string as a Kafka string (NULL stays null). */
floe_kstr_t floe_broker_mod_str(floe_arena_t *a, const char *s);

#endif
