/* Durability waits (broker.h): an acks=all produce waits until its
 * offsets are fsynced.  A flusher thread fsyncs the logs that have
 * waiters, then posts to the loop, where the waiters are answered; an
 * fsync failure fails every waiter of that round. */
#include <stdlib.h>

#include "kafka/broker_int.h"
#include "util/diag.h"

static void flushed_on_loop(void *arg)
{
    floe_broker_t *b = arg;
    for (int i = 0; i < b->nw;) {
        waiter_t w = b->w[i];
        bool failed = false;
        pthread_mutex_lock(&b->fmu);
        failed = b->flush_failed;
        pthread_mutex_unlock(&b->fmu);
        if (failed || floe_log_durable_offset(w.log) >= w.offset) {
            b->w[i] = b->w[--b->nw];
            w.fn(w.arg, !failed);
        } else {
            i++;
        }
    }
    pthread_mutex_lock(&b->fmu);
    b->flush_failed = false;
    pthread_mutex_unlock(&b->fmu);
}

static void *flusher_main(void *arg)
{
    floe_broker_t *b = arg;
    pthread_mutex_lock(&b->fmu);
    for (;;) {
        while (!b->nfq && !b->flusher_stop) pthread_cond_wait(&b->fcv, &b->fmu);
        if (!b->nfq && b->flusher_stop) break;
        floe_log_t **q = b->fq;
        int n = b->nfq;
        b->fq = NULL;
        b->nfq = b->capfq = 0;
        pthread_mutex_unlock(&b->fmu);
        bool failed = false;
        pthread_mutex_lock(&b->flush_mu);
        for (int i = 0; i < n; i++) {
            bool seen = false;
            for (int j = 0; j < i; j++) seen |= q[j] == q[i];
            if (seen) continue;
            floe_err_t e;
            if (floe_log_flush(q[i], &e)) {
                FLOE_ERROR("kafka: fsync failed: %s", e.msg);
                failed = true;
            }
        }
        pthread_mutex_unlock(&b->flush_mu);
        free(q);
        pthread_mutex_lock(&b->fmu);
        if (failed) b->flush_failed = true;
        if (b->loop) floe_loop_post(b->loop, flushed_on_loop, b);
    }
    pthread_mutex_unlock(&b->fmu);
    return NULL;
}

int floe_broker_when_durable(floe_broker_t *b, floe_log_t *l, int64_t offset,
                             void (*fn)(void *, bool), void *arg)
{
    if (floe_log_durable_offset(l) >= offset) {
        fn(arg, true);
        return 0;
    }
    if (b->nw == b->capw) {
        int nc = b->capw ? b->capw * 2 : 64;
        waiter_t *v = realloc(b->w, (size_t)nc * sizeof *v);
        if (!v) return -1;
        b->w = v;
        b->capw = nc;
    }
    pthread_mutex_lock(&b->fmu);
    if (b->nfq == b->capfq) {
        int nc = b->capfq ? b->capfq * 2 : 16;
        floe_log_t **v = realloc(b->fq, (size_t)nc * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&b->fmu);
            return -1;
        }
        b->fq = v;
        b->capfq = nc;
    }
    b->fq[b->nfq++] = l;
    pthread_cond_signal(&b->fcv);
    pthread_mutex_unlock(&b->fmu);
    b->w[b->nw++] = (waiter_t){l, offset, fn, arg};
    return 0;
}

int floe_broker_flusher_start(floe_broker_t *b, floe_err_t *err)
{
    if (pthread_create(&b->flusher, NULL, flusher_main, b))
        return floe_err_set(err, FLOE_EIO, "cannot start the flusher thread");
    b->flusher_started = true;
    return 0;
}

void floe_broker_flusher_stop(floe_broker_t *b)
{
    if (b->flusher_started) {
        pthread_mutex_lock(&b->fmu);
        b->flusher_stop = true;
        pthread_cond_signal(&b->fcv);
        pthread_mutex_unlock(&b->fmu);
        pthread_join(b->flusher, NULL);
        b->flusher_started = false;
    }
    /* answer remaining waiters: their data gets flushed right below */
    for (int i = 0; i < b->ntopics; i++) {
        for (int32_t p = 0; p < b->topics[i]->nparts; p++) {
            floe_err_t e;
            if (floe_log_flush(b->topics[i]->logs[p], &e))
                FLOE_ERROR("kafka: %s-%d: final flush: %s", b->topics[i]->name, p, e.msg);
        }
    }
    for (int i = 0; i < b->nw; i++)
        b->w[i].fn(b->w[i].arg, floe_log_durable_offset(b->w[i].log) >= b->w[i].offset);
    b->nw = 0;
}

void floe_broker_flush_hold(floe_broker_t *b, floe_topic_t *t)
{
    for (int i = 0; i < b->nw;) {
        bool hit = false;
        for (int32_t p = 0; p < t->nparts; p++) hit |= b->w[i].log == t->logs[p];
        if (hit) {
            waiter_t w = b->w[i];
            b->w[i] = b->w[--b->nw];
            w.fn(w.arg, false);
        } else {
            i++;
        }
    }
    pthread_mutex_lock(&b->flush_mu);
    pthread_mutex_lock(&b->fmu);
    for (int i = 0; i < b->nfq;) {
        bool hit = false;
        for (int32_t p = 0; p < t->nparts; p++) hit |= b->fq[i] == t->logs[p];
        if (hit) b->fq[i] = b->fq[--b->nfq];
        else
            i++;
    }
    pthread_mutex_unlock(&b->fmu);
}

void floe_broker_flush_release(floe_broker_t *b)
{
    pthread_mutex_unlock(&b->flush_mu);
}
