/* Internals shared by the broker's own API handlers (h_*.c). */
#ifndef FLOE_KAFKA_H_INT_H
#define FLOE_KAFKA_H_INT_H

#include "kafka/broker.h"
#include "kafka/handler.h"

#include <pthread.h>

typedef struct fetch_wait fetch_wait_t;
typedef struct append_job append_job_t;

/* State of the broker module (one per server). */
typedef struct bk {
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
} bk_t;

/* Register the handlers of each file. */
int floe_bk_register_meta(bk_t *bk, floe_err_t *err);
int floe_bk_register_data(bk_t *bk, floe_err_t *err);
int floe_bk_register_produce(bk_t *bk, floe_err_t *err);

/* Start/stop the appender thread.  Stop waits for queued appends and
 * completes them on the calling (loop) thread; safe to call twice. */
int floe_bk_appender_start(bk_t *bk, floe_err_t *err);
void floe_bk_appender_stop(bk_t *bk);
/* Block until every queued append is done and answered (before deleting a
 * topic, whose logs the appender may be using). Loop thread. */
void floe_bk_appender_drain(bk_t *bk);

/* Data was appended: re-check waiting fetches. */
void floe_bk_appended(bk_t *bk);
/* Answer every waiting fetch now (shutdown). */
void floe_bk_flush_fetches(bk_t *bk);

/* Find a topic for a request, creating it when auto-creation is on and
 * `create` is true.  NULL when absent (or the name is invalid). */
floe_topic_t *floe_bk_topic(bk_t *bk, floe_kstr_t name, bool create);

/* Answer req with "out of memory" and return from the (void) handler. */
#define OOM(req)                                 \
    do {                                         \
        floe_kafka_fail((req), "out of memory"); \
        return;                                  \
    } while (0)

/* An arena copy of a C string as a Kafka string (NULL stays null). */
floe_kstr_t floe_bk_str(floe_arena_t *a, const char *s);

#endif
