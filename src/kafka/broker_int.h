/* Internals of the broker (broker.h) shared by its files: topics.c (the
 * topic registry, topic configs and their JSON files, opening and closing
 * the broker), producer_ids.c (producer-id blocks), durability.c (the
 * flusher thread and the acks=all waits), retention.c (retention and
 * DeleteRecords under a table's floor) and cleaner.c (the log cleaner
 * thread). */
#ifndef FLOE_KAFKA_BROKER_INT_H
#define FLOE_KAFKA_BROKER_INT_H

#include <jansson.h>
#include <pthread.h>

#include "kafka/broker.h"

struct floe_topic {
    floe_broker_t *b; /* owner, for config defaults */
    char *name;
    uint8_t id[16];
    int32_t nparts;
    floe_log_t **logs;
    int64_t *held_warned_ms; /* per partition: last "retention held back"
                                WARN (loop thread) */
    int64_t *clean_floor;    /* per partition: compaction keeps offsets at or
                                above it (a table's committed offset; set on
                                the loop, read by the cleaner; atomic) */
    json_t *configs;         /* object: the topic's own settings */
    floe_log_config_t logcfg;
    bool log_append_time;
};

typedef struct waiter {
    floe_log_t *log;
    int64_t offset;
    void (*fn)(void *, bool);
    void *arg;
} waiter_t;

/* Totals of the log cleaner since start (metrics). */
typedef struct floe_cleaner_stats {
    uint64_t runs, errors, bytes_read, bytes_written, records_removed, tombstones_removed,
        segments_cleaned;
    int64_t last_run_ms;
    double max_dirty_ratio; /* at the last pass */
} floe_cleaner_stats_t;

struct floe_broker {
    floe_broker_config_t cfg;
    char *data_dir;
    json_t *defaults; /* server-wide topic config defaults */
    pthread_mutex_t mu;
    floe_topic_t **topics;
    int ntopics, captopics;
    /* producer ids (under mu) */
    int64_t next_pid, pid_block_end;
    /* flusher */
    floe_loop_t *loop;
    pthread_t flusher;
    bool flusher_started, flusher_stop;
    pthread_mutex_t fmu; /* guards the flush queue and the flag below */
    pthread_cond_t fcv;
    floe_log_t **fq; /* logs to fsync */
    int nfq, capfq;
    pthread_mutex_t flush_mu; /* held while fsyncing: topic deletion waits */
    bool flush_failed;
    int64_t next_retention_ms;
    /* log cleaner (cleaner.c) */
    pthread_t cleaner;
    bool cleaner_started, cleaner_stop; /* under cmu */
    pthread_mutex_t cmu;                /* the flags, the stats */
    pthread_cond_t ccv;
    pthread_mutex_t clean_mu; /* held while a log is cleaned: deletion waits */
    floe_cleaner_stats_t cstats;
    floe_topic_observer_fn observer;
    void *observer_ctx;
    floe_append_observer_fn append_observer;
    void *append_ctx;
    /* waiters, loop thread only */
    waiter_t *w;
    int nw, capw;
};

/* ---- retention.c ---- */

/* Retention of partition p of t under its floor, at wall time now (the
 * retention tick). */
void floe_broker_retention_run(floe_broker_t *b, floe_topic_t *t, int32_t p, int64_t now);
/* Ask the retention floor of partition p of t (a table topic's committed
 * offset) for the cleaner: t->clean_floor[p] (INT64_MAX without one).
 * Loop thread (the tick), where the floor may be asked. */
void floe_broker_clean_floor_update(floe_broker_t *b, floe_topic_t *t, int32_t p);

/* ---- cleaner.c ---- */

/* Start the log cleaner thread unless cfg.cleaner_disable (the locks and
 * condition exist already); stop it (waits for the log being cleaned). */
int floe_broker_cleaner_start(floe_broker_t *b, floe_err_t *err);
void floe_broker_cleaner_stop(floe_broker_t *b);

/* ---- producer_ids.c ---- */

/* Read the next unallocated producer-id block from DATA/meta/producer-ids
 * (0 when the file is absent), at open. */
int floe_broker_pids_load(floe_broker_t *b, floe_err_t *err);

/* ---- durability.c ---- */

/* Start the flusher thread (the locks and condition exist already). */
int floe_broker_flusher_start(floe_broker_t *b, floe_err_t *err);
/* Stop the flusher, fsync every log a last time and answer every waiter;
 * at close, before the topics are freed. */
void floe_broker_flusher_stop(floe_broker_t *b);
/* Topic t is being deleted: fail its waiters, drop its logs from the
 * flush queue and hold off the flusher (no fsync of its logs runs) until
 * floe_broker_flush_release.  Loop thread. */
void floe_broker_flush_hold(floe_broker_t *b, floe_topic_t *t);
void floe_broker_flush_release(floe_broker_t *b);

#endif
