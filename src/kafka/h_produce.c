/* Produce: requests are checked and resolved on the loop thread, appended
 * to the logs by one appender thread (so the loop keeps reading sockets
 * while the disk works, and appends to a log keep the order of arrival),
 * and answered back on the loop: at once for acks=1, after fsync for
 * acks=all when acks.all.fsync is on, never for acks=0. */
#include <stdlib.h>
#include <string.h>

#include "kafka/h_int.h"
#include "util/clock.h"
#include "util/diag.h"

enum { PART_FAILED, PART_CHECKED, PART_EACH_BATCH };

typedef struct part_job {
    floe_log_t *log;
    floe_topic_t *t;
    int32_t partition;
    const char *topic;
    floe_kbytes_t recs;
    int64_t log_append_time; /* -1: CreateTime */
    floe_k_produce_resp_partition_produce_response_t *r;
    int64_t last;           /* next offset after the appended records; -1 if none */
    int mode;               /* PART_*, set by check_part */
    floe_log_checked_t chk; /* PART_CHECKED: what floe_log_check found */
} part_job_t;

struct append_job {
    floe_broker_mod_t *bm;
    floe_kafka_req_t *req;
    floe_k_produce_resp_t *rs;
    part_job_t *parts;
    int nparts;
    int16_t acks;
    bool wait_fsync;
    int pending; /* durability waits + 1 */
    append_job_t *next;
};

typedef struct part_wait {
    append_job_t *job;
    part_job_t *pj;
} part_wait_t;

/* Check one partition's records, on the loop thread right after they
 * arrived (the bytes are still in this CPU's cache, so the CRC pass over
 * them is cheap).  Normally the whole buffer goes to the log in one call:
 * floe_log_check runs every check of it here and the appender only
 * appends.  Idempotent batches go one per log call, as the log requires:
 * then every batch is checked whole (CRC too) so that a bad tail appends
 * nothing, and the appender's log calls check each again.  On failure the
 * partition's error is set and part->mode is PART_FAILED. */
static void check_part(part_job_t *pj)
{
    floe_k_produce_resp_partition_produce_response_t *r = pj->r;
    pj->mode = PART_FAILED;
    if (pj->recs.len <= 0) {
        r->error_code = FLOE_KERR_CORRUPT_MESSAGE;
        r->error_message = floe_kstr("no records");
        return;
    }
    const uint8_t *p = (const uint8_t *)pj->recs.ptr;
    size_t n = (size_t)pj->recs.len;
    floe_batch_hdr_t h;
    floe_err_t err;
    int rc = 1, nb = 0;
    bool idem = false;
    for (size_t off = 0; off < n;) { /* headers only: count, find producer ids */
        if (floe_batch_decode_hdr(p + off, n - off, &h, &err)) {
            rc = -1;
            break;
        }
        if (floe_batch_size(&h) > n - off) {
            rc = floe_err_set(&err, FLOE_ETRUNC, "record batch of %zu bytes, only %zu present",
                              floe_batch_size(&h), n - off);
            break;
        }
        nb++;
        idem |= h.producer_id >= 0;
        off += floe_batch_size(&h);
    }
    if (rc > 0 && idem && nb > 1) {
        floe_batch_iter_t it;
        floe_batch_iter_init(&it, p, n);
        while ((rc = floe_batch_iter_next(&it, NULL, NULL, &h, &err)) == 1) {
        }
        if (rc == 0) pj->mode = PART_EACH_BATCH;
    } else if (rc > 0) {
        floe_log_append_result_t res;
        if (floe_log_check(pj->log, p, n, &pj->chk, &res, &err)) {
            r->error_code = res.error_code ? res.error_code : FLOE_KERR_CORRUPT_MESSAGE;
            FLOE_DEBUG("kafka: produce to %s rejected: %s", pj->topic, err.msg);
            return;
        }
        pj->mode = PART_CHECKED;
    }
    if (pj->mode == PART_FAILED) {
        r->error_code = FLOE_KERR_CORRUPT_MESSAGE;
        FLOE_DEBUG("kafka: produce to %s: %s", pj->topic, rc < 0 ? err.msg : "no batch");
    }
}

/* Append one checked partition's records.  Appender thread. */
static void append_records(part_job_t *pj)
{
    floe_k_produce_resp_partition_produce_response_t *r = pj->r;
    pj->last = -1;
    if (pj->mode == PART_FAILED) return;
    uint8_t *p = (uint8_t *)pj->recs.ptr; /* the frame is ours: the log patches it */
    size_t n = (size_t)pj->recs.len;
    floe_batch_iter_t it;
    floe_batch_iter_init(&it, p, n);
    bool first = true;
    for (;;) {
        size_t len;
        const uint8_t *bp;
        uint8_t *at;
        floe_batch_hdr_t h;
        floe_err_t err;
        floe_log_append_result_t res;
        int rc;
        if (pj->mode == PART_EACH_BATCH) {
            if (floe_batch_iter_next(&it, &bp, &len, &h, &err) != 1) break;
            at = (uint8_t *)bp;
            rc = floe_log_append(pj->log, at, len, pj->log_append_time, &res, &err);
        } else {
            if (!first) break;
            rc = floe_log_append_checked(pj->log, p, n, &pj->chk, pj->log_append_time, &res, &err);
        }
        if (rc) {
            r->error_code = res.error_code ? res.error_code : FLOE_KERR_UNKNOWN_SERVER_ERROR;
            if (first) r->base_offset = -1;
            FLOE_DEBUG("kafka: produce to %s rejected: %s", pj->topic, err.msg);
            return;
        }
        if (first) {
            r->base_offset = res.base_offset;
            r->log_append_time_ms = res.log_append_time_ms;
            first = false;
        }
        r->log_start_offset = res.log_start_offset;
        if (res.last_offset + 1 > pj->last) pj->last = res.last_offset + 1;
    }
}

/* Append one checked partition's records and tell the broker's append
 * observer (the table engine's source) when some went in.  Appender
 * thread. */
static void append_part(floe_broker_mod_t *bm, part_job_t *pj)
{
    append_records(pj);
    if (pj->last >= 0) floe_broker_appended(bm->b, pj->t, pj->partition);
}

/* ---- answering, on the loop thread ---- */

static void job_answer(append_job_t *job)
{
    if (job->acks == 0) floe_kafka_respond_none(job->req);
    else
        floe_kafka_respond(job->req, job->rs);
}

static void part_durable(void *arg, bool ok)
{
    part_wait_t *w = arg;
    if (!ok) {
        w->pj->r->error_code = 56; /* KAFKA_STORAGE_ERROR */
        w->pj->r->error_message = floe_kstr("fsync failed");
    }
    if (--w->job->pending == 0) job_answer(w->job);
}

static void job_done(append_job_t *job)
{
    floe_broker_mod_t *bm = job->bm;
    floe_arena_t *a = floe_kafka_req_arena(job->req);
    bool appended = false;
    job->pending = 1;
    for (int i = 0; i < job->nparts; i++) {
        part_job_t *pj = &job->parts[i];
        if (pj->last < 0) continue;
        appended = true;
        if (!job->wait_fsync) continue;
        part_wait_t *w = floe_arena_calloc(a, 1, sizeof *w);
        if (!w) {
            pj->r->error_code = FLOE_KERR_UNKNOWN_SERVER_ERROR;
            continue;
        }
        w->job = job;
        w->pj = pj;
        job->pending++;
        if (floe_broker_when_durable(bm->b, pj->log, pj->last, part_durable, w)) {
            job->pending--;
            pj->r->error_code = FLOE_KERR_UNKNOWN_SERVER_ERROR;
        }
    }
    /* the records are in the log: their frame can go back to the receive
     * pool long before the (fsync-delayed) answer */
    for (int i = 0; i < job->nparts; i++) job->parts[i].recs = (floe_kbytes_t){0};
    floe_kafka_req_release_frame(job->req);
    if (appended) floe_broker_mod_appended(bm);
    if (--job->pending == 0) job_answer(job);
}

/* Take the finished jobs and answer them. */
static void drain_done(floe_broker_mod_t *bm)
{
    pthread_mutex_lock(&bm->app_mu);
    append_job_t *j = bm->done_head;
    bm->done_head = bm->done_tail = NULL;
    pthread_mutex_unlock(&bm->app_mu);
    while (j) {
        append_job_t *n = j->next;
        job_done(j);
        j = n;
    }
}

static void on_done_post(void *arg)
{
    drain_done(arg);
}

/* ---- the appender thread ---- */

static void *appender_main(void *arg)
{
    floe_broker_mod_t *bm = arg;
    pthread_mutex_lock(&bm->app_mu);
    for (;;) {
        while (!bm->app_head && !bm->app_stop) pthread_cond_wait(&bm->app_cv, &bm->app_mu);
        if (!bm->app_head) break;
        append_job_t *j = bm->app_head;
        bm->app_head = j->next;
        if (!bm->app_head) bm->app_tail = NULL;
        bm->app_busy = true;
        pthread_mutex_unlock(&bm->app_mu);
        for (int i = 0; i < j->nparts; i++) append_part(bm, &j->parts[i]);
        pthread_mutex_lock(&bm->app_mu);
        j->next = NULL;
        bool first = !bm->done_head;
        if (bm->done_tail) bm->done_tail->next = j;
        else
            bm->done_head = j;
        bm->done_tail = j;
        bm->app_busy = false;
        if (!bm->app_head) pthread_cond_broadcast(&bm->app_idle);
        /* one post wakes the loop for everything finished meanwhile */
        if (first && !bm->app_stop) {
            pthread_mutex_unlock(&bm->app_mu);
            floe_kafka_post(bm->srv, on_done_post, bm);
            pthread_mutex_lock(&bm->app_mu);
        }
    }
    pthread_mutex_unlock(&bm->app_mu);
    return NULL;
}

int floe_broker_mod_appender_start(floe_broker_mod_t *bm, floe_err_t *err)
{
    pthread_mutex_init(&bm->app_mu, NULL);
    pthread_cond_init(&bm->app_cv, NULL);
    pthread_cond_init(&bm->app_idle, NULL);
    if (pthread_create(&bm->app_thread, NULL, appender_main, bm))
        return floe_err_set(err, FLOE_EIO, "cannot start the appender thread");
    bm->app_started = true;
    return 0;
}

void floe_broker_mod_appender_drain(floe_broker_mod_t *bm)
{
    if (!bm->app_started) return;
    pthread_mutex_lock(&bm->app_mu);
    while (bm->app_head || bm->app_busy) pthread_cond_wait(&bm->app_idle, &bm->app_mu);
    pthread_mutex_unlock(&bm->app_mu);
    drain_done(bm);
}

void floe_broker_mod_appender_stop(floe_broker_mod_t *bm)
{
    if (!bm->app_started) return;
    pthread_mutex_lock(&bm->app_mu);
    bm->app_stop = true;
    pthread_cond_signal(&bm->app_cv);
    pthread_mutex_unlock(&bm->app_mu);
    pthread_join(bm->app_thread, NULL);
    bm->app_started = false;
    drain_done(bm);
    pthread_mutex_destroy(&bm->app_mu);
    pthread_cond_destroy(&bm->app_cv);
    pthread_cond_destroy(&bm->app_idle);
}

/* ---- the handler ---- */

static void h_produce(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_produce_req_t *rq = floe_kafka_req_body(req);
    floe_k_produce_resp_t *rs = floe_k_produce_resp_new(a);
    append_job_t *job = floe_arena_calloc(a, 1, sizeof *job);
    if (!rs || !job) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    job->bm = bm;
    job->req = req;
    job->rs = rs;
    job->acks = rq->acks;
    job->wait_fsync = rq->acks == -1 && floe_broker_config(bm->b)->acks_all_fsync;
    int nt = rq->topic_data.n > 0 ? rq->topic_data.n : 0, total = 0;
    for (int i = 0; i < nt; i++)
        total +=
            rq->topic_data.v[i].partition_data.n > 0 ? rq->topic_data.v[i].partition_data.n : 0;
    rs->responses.v = floe_k_produce_resp_topic_produce_response_new_array(a, nt);
    job->parts = floe_arena_calloc(a, (size_t)(total ? total : 1), sizeof *job->parts);
    if (!rs->responses.v || !job->parts) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    rs->responses.n = nt;
    for (int i = 0; i < nt; i++) {
        const floe_k_produce_req_topic_produce_data_t *q = &rq->topic_data.v[i];
        floe_k_produce_resp_topic_produce_response_t *rt = &rs->responses.v[i];
        rt->name = q->name;
        int np = q->partition_data.n > 0 ? q->partition_data.n : 0;
        rt->partition_responses.v = floe_k_produce_resp_partition_produce_response_new_array(a, np);
        if (!rt->partition_responses.v) {
            floe_kafka_fail(req, "out of memory");
            return;
        }
        rt->partition_responses.n = np;
        floe_topic_t *t = floe_broker_mod_topic(bm, q->name, false);
        for (int j = 0; j < np; j++) {
            const floe_k_produce_req_partition_produce_data_t *qp = &q->partition_data.v[j];
            floe_k_produce_resp_partition_produce_response_t *r = &rt->partition_responses.v[j];
            r->index = qp->index;
            r->base_offset = -1;
            floe_log_t *l = t ? floe_topic_log(t, qp->index) : NULL;
            if (!l) {
                r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            if (rq->acks != 0 && rq->acks != 1 && rq->acks != -1) {
                r->error_code = FLOE_KERR_INVALID_REQUIRED_ACKS;
                continue;
            }
            if (rq->transactional_id.len >= 0) {
                /* transactions are not implemented: refuse, do not pretend */
                r->error_code = FLOE_KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
                continue;
            }
            part_job_t *pj = &job->parts[job->nparts++];
            pj->log = l;
            pj->t = t;
            pj->partition = qp->index;
            pj->topic = floe_topic_name(t);
            pj->recs = qp->records;
            pj->log_append_time = floe_topic_log_append_time(t) ? floe_wall_ms() : -1;
            pj->r = r;
            pj->last = -1;
            check_part(pj);
        }
    }
    if (!job->nparts) {
        job->pending = 1;
        job_done(job);
        return;
    }
    pthread_mutex_lock(&bm->app_mu);
    if (bm->app_tail) bm->app_tail->next = job;
    else
        bm->app_head = job;
    bm->app_tail = job;
    pthread_cond_signal(&bm->app_cv);
    pthread_mutex_unlock(&bm->app_mu);
}

int floe_broker_mod_register_produce(floe_broker_mod_t *bm, floe_err_t *err)
{
    return floe_kafka_register(bm->srv, FLOE_KAPI_PRODUCE, 3, 9, h_produce, bm, err);
}
