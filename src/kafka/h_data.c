/* Data-path APIs: Fetch (with long poll), ListOffsets,
 * OffsetForLeaderEpoch, DeleteRecords. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/h_int.h"
#include "kafka/server.h"
#include "util/clock.h"
#include "util/diag.h"

/* ---- Fetch ---- */

#define FLOE_FETCH_MAX_RESPONSE (64u << 20)

struct fetch_wait {
    floe_broker_mod_t *bm;
    floe_kafka_req_t *req;
    floe_kafka_timer_t *timer;
    fetch_wait_t *prev, *next;
};

/* Try to answer: read every partition; respond when there is enough data,
 * an error, or `force` (deadline).  Returns true when answered. */
static bool fetch_try(floe_broker_mod_t *bm, floe_kafka_req_t *req, bool force)
{
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_fetch_req_t *rq = floe_kafka_req_body(req);
    int16_t ver = floe_kafka_req_version(req);
    floe_k_fetch_resp_t *rs = floe_k_fetch_resp_new(a);
    if (!rs) {
        floe_kafka_fail(req, "out of memory");
        return true;
    }
    int nt = rq->topics.n > 0 ? rq->topics.n : 0;
    rs->responses.v = floe_k_fetch_resp_fetchable_topic_response_new_array(a, nt);
    if (!rs->responses.v) {
        floe_kafka_fail(req, "out of memory");
        return true;
    }
    rs->responses.n = nt;
    floe_buf_t data = FLOE_BUF_INIT;
    /* a response is built in memory: cap it whatever the client asks
     * (one whole batch still goes out when it alone is larger, KIP-74) */
    size_t max_total =
        ver >= 3 && rq->max_bytes > 0 ? (size_t)rq->max_bytes : FLOE_FETCH_MAX_RESPONSE;
    if (max_total > FLOE_FETCH_MAX_RESPONSE) max_total = FLOE_FETCH_MAX_RESPONSE;
    bool error = false;
    /* offsets into data, patched into pointers once reading is done */
    typedef struct {
        floe_kbytes_t *dst;
        size_t off, len;
    } span_t;
    int nspan = 0, capspan = 0;
    span_t *spans = NULL;
    for (int i = 0; i < nt; i++) {
        const floe_k_fetch_req_fetch_topic_t *q = &rq->topics.v[i];
        floe_k_fetch_resp_fetchable_topic_response_t *rt = &rs->responses.v[i];
        rt->topic = q->topic;
        int np = q->partitions.n > 0 ? q->partitions.n : 0;
        rt->partitions.v = floe_k_fetch_resp_partition_data_new_array(a, np);
        if (!rt->partitions.v) {
            free(spans);
            floe_buf_free(&data);
            floe_kafka_fail(req, "out of memory");
            return true;
        }
        rt->partitions.n = np;
        floe_topic_t *t = floe_broker_mod_topic(bm, q->topic, false);
        for (int j = 0; j < np; j++) {
            const floe_k_fetch_req_fetch_partition_t *qp = &q->partitions.v[j];
            floe_k_fetch_resp_partition_data_t *r = &rt->partitions.v[j];
            r->partition_index = qp->partition;
            r->high_watermark = -1;
            r->records = (floe_kbytes_t){NULL, 0};
            floe_log_t *l = t ? floe_topic_log(t, qp->partition) : NULL;
            if (!l) {
                r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                error = true;
                continue;
            }
            size_t room = data.len < max_total ? max_total - data.len : 0;
            size_t pmax = qp->partition_max_bytes > 0 ? (size_t)qp->partition_max_bytes : 0;
            if (pmax > room) pmax = room;
            size_t before = data.len;
            floe_log_read_info_t info = {0};
            floe_err_t err;
            int rc = 0;
            if (pmax > 0 || data.len == 0) {
                /* KIP-74: the first partition with data may exceed the limits */
                rc = floe_log_read(l, qp->fetch_offset, pmax ? pmax : 1, &data, &info, &err);
            } else {
                /* budget spent: report the offsets, read nothing */
                info.log_start_offset = floe_log_start_offset(l);
                info.high_watermark = info.end_offset = floe_log_end_offset(l);
                if (qp->fetch_offset < info.log_start_offset ||
                    qp->fetch_offset > info.end_offset) {
                    info.error_code = FLOE_KERR_OFFSET_OUT_OF_RANGE;
                    rc = -1;
                }
            }
            r->high_watermark = info.high_watermark;
            r->last_stable_offset = info.high_watermark;
            r->log_start_offset = info.log_start_offset;
            if (rc) {
                r->error_code = info.error_code ? info.error_code : FLOE_KERR_UNKNOWN_SERVER_ERROR;
                data.len = before;
                error = true;
                continue;
            }
            if (data.len > before) {
                if (nspan == capspan) {
                    capspan = capspan ? capspan * 2 : 16;
                    span_t *ns = realloc(spans, (size_t)capspan * sizeof *ns);
                    if (!ns) {
                        free(spans);
                        floe_buf_free(&data);
                        floe_kafka_fail(req, "out of memory");
                        return true;
                    }
                    spans = ns;
                }
                spans[nspan++] = (span_t){&r->records, before, data.len - before};
            }
        }
    }
    size_t min_bytes = rq->min_bytes > 0 ? (size_t)rq->min_bytes : 0;
    if (!force && !error && data.len < min_bytes && rq->max_wait_ms > 0) {
        free(spans);
        floe_buf_free(&data);
        return false;
    }
    for (int i = 0; i < nspan; i++) {
        spans[i].dst->ptr = data.data + spans[i].off;
        spans[i].dst->len = (int32_t)spans[i].len;
    }
    free(spans);
    floe_kafka_respond(req, rs);
    floe_buf_free(&data);
    return true;
}

static void fetch_unlink(floe_broker_mod_t *bm, fetch_wait_t *w)
{
    if (w->prev) w->prev->next = w->next;
    else
        bm->fetches = w->next;
    if (w->next) w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

static void fetch_deadline(void *arg)
{
    fetch_wait_t *w = arg;
    w->timer = NULL;
    fetch_unlink(w->bm, w);
    fetch_try(w->bm, w->req, true);
}

static void fetch_closed(floe_kafka_req_t *req, void *arg)
{
    fetch_wait_t *w = arg;
    if (w->timer) floe_kafka_timer_cancel(w->bm->srv, w->timer);
    w->timer = NULL;
    fetch_unlink(w->bm, w);
    floe_kafka_respond_none(req);
}

void floe_broker_mod_appended(floe_broker_mod_t *bm)
{
    fetch_wait_t *w = bm->fetches;
    while (w) {
        fetch_wait_t *n = w->next;
        floe_kafka_timer_t *timer = w->timer;
        floe_broker_mod_t *b = w->bm;
        floe_kafka_req_t *req = w->req;
        fetch_unlink(bm, w);
        if (fetch_try(b, req, false)) {
            floe_kafka_timer_cancel(b->srv, timer);
        } else {
            w->next = bm->fetches; /* still waiting: back on the list */
            if (bm->fetches) bm->fetches->prev = w;
            bm->fetches = w;
        }
        w = n;
    }
}

void floe_broker_mod_flush_fetches(floe_broker_mod_t *bm)
{
    while (bm->fetches) {
        fetch_wait_t *w = bm->fetches;
        fetch_unlink(bm, w);
        if (w->timer) floe_kafka_timer_cancel(bm->srv, w->timer);
        w->timer = NULL;
        fetch_try(bm, w->req, true);
    }
}

static void h_fetch(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    if (fetch_try(bm, req, bm->stopping)) return;
    const floe_k_fetch_req_t *rq = floe_kafka_req_body(req);
    fetch_wait_t *w = floe_arena_calloc(floe_kafka_req_arena(req), 1, sizeof *w);
    if (!w) OOM(req);
    w->bm = bm;
    w->req = req;
    w->timer = floe_kafka_timer_add(bm->srv, rq->max_wait_ms, fetch_deadline, w);
    if (!w->timer) OOM(req);
    w->next = bm->fetches;
    if (bm->fetches) bm->fetches->prev = w;
    bm->fetches = w;
    floe_kafka_req_on_close(req, fetch_closed, w);
}

/* ---- ListOffsets ---- */

static void h_list_offsets(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_list_offsets_req_t *rq = floe_kafka_req_body(req);
    int16_t ver = floe_kafka_req_version(req);
    floe_k_list_offsets_resp_t *rs = floe_k_list_offsets_resp_new(a);
    if (!rs) OOM(req);
    int nt = rq->topics.n > 0 ? rq->topics.n : 0;
    rs->topics.v = floe_k_list_offsets_resp_list_offsets_topic_response_new_array(a, nt);
    if (!rs->topics.v) OOM(req);
    rs->topics.n = nt;
    for (int i = 0; i < nt; i++) {
        const floe_k_list_offsets_req_list_offsets_topic_t *q = &rq->topics.v[i];
        floe_k_list_offsets_resp_list_offsets_topic_response_t *rt = &rs->topics.v[i];
        rt->name = q->name;
        int np = q->partitions.n > 0 ? q->partitions.n : 0;
        rt->partitions.v =
            floe_k_list_offsets_resp_list_offsets_partition_response_new_array(a, np);
        if (!rt->partitions.v) OOM(req);
        rt->partitions.n = np;
        floe_topic_t *t = floe_broker_mod_topic(bm, q->name, false);
        for (int j = 0; j < np; j++) {
            const floe_k_list_offsets_req_list_offsets_partition_t *qp = &q->partitions.v[j];
            floe_k_list_offsets_resp_list_offsets_partition_response_t *r = &rt->partitions.v[j];
            r->partition_index = qp->partition_index;
            floe_log_t *l = t ? floe_topic_log(t, qp->partition_index) : NULL;
            if (!l) {
                r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            int64_t off, ts = -1;
            if (qp->timestamp == -1 || qp->timestamp == -3) off = floe_log_end_offset(l);
            else if (qp->timestamp == -2)
                off = floe_log_start_offset(l);
            else {
                off = floe_log_offset_for_time(l, qp->timestamp, &ts);
                if (off < 0 && ver == 0) off = floe_log_end_offset(l);
            }
            r->offset = off;
            r->timestamp = off >= 0 ? ts : -1;
            r->leader_epoch = off >= 0 ? 0 : -1;
            if (ver == 0) {
                int64_t *v = floe_arena_alloc(a, sizeof *v);
                if (!v) OOM(req);
                *v = off;
                r->old_style_offsets = (floe_karr_i64_t){v, off >= 0 ? 1 : 0};
            }
        }
    }
    floe_kafka_respond(req, rs);
}

/* ---- OffsetForLeaderEpoch: one epoch (0) for the whole log ---- */

static void h_offset_for_leader_epoch(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_offset_for_leader_epoch_req_t *rq = floe_kafka_req_body(req);
    floe_k_offset_for_leader_epoch_resp_t *rs = floe_k_offset_for_leader_epoch_resp_new(a);
    if (!rs) OOM(req);
    int nt = rq->topics.n > 0 ? rq->topics.n : 0;
    rs->topics.v =
        floe_k_offset_for_leader_epoch_resp_offset_for_leader_topic_result_new_array(a, nt);
    if (!rs->topics.v) OOM(req);
    rs->topics.n = nt;
    for (int i = 0; i < nt; i++) {
        const floe_k_offset_for_leader_epoch_req_offset_for_leader_topic_t *q = &rq->topics.v[i];
        floe_k_offset_for_leader_epoch_resp_offset_for_leader_topic_result_t *rt = &rs->topics.v[i];
        rt->topic = q->topic;
        int np = q->partitions.n > 0 ? q->partitions.n : 0;
        rt->partitions.v = floe_k_offset_for_leader_epoch_resp_epoch_end_offset_new_array(a, np);
        if (!rt->partitions.v) OOM(req);
        rt->partitions.n = np;
        floe_topic_t *t = floe_broker_mod_topic(bm, q->topic, false);
        for (int j = 0; j < np; j++) {
            const floe_k_offset_for_leader_epoch_req_offset_for_leader_partition_t *qp =
                &q->partitions.v[j];
            floe_k_offset_for_leader_epoch_resp_epoch_end_offset_t *r = &rt->partitions.v[j];
            r->partition = qp->partition;
            floe_log_t *l = t ? floe_topic_log(t, qp->partition) : NULL;
            if (!l) {
                r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            if (qp->current_leader_epoch > 0) {
                r->error_code = FLOE_KERR_UNKNOWN_LEADER_EPOCH;
                continue;
            }
            if (qp->leader_epoch <= 0) { /* epoch 0 is the only one: it ends at the log end */
                r->leader_epoch = 0;
                r->end_offset = floe_log_end_offset(l);
            }
        }
    }
    floe_kafka_respond(req, rs);
}

/* ---- DeleteRecords ---- */

static void h_delete_records(floe_kafka_req_t *req, void *ctx)
{
    floe_broker_mod_t *bm = ctx;
    floe_arena_t *a = floe_kafka_req_arena(req);
    const floe_k_delete_records_req_t *rq = floe_kafka_req_body(req);
    floe_k_delete_records_resp_t *rs = floe_k_delete_records_resp_new(a);
    if (!rs) OOM(req);
    int nt = rq->topics.n > 0 ? rq->topics.n : 0;
    rs->topics.v = floe_k_delete_records_resp_delete_records_topic_result_new_array(a, nt);
    if (!rs->topics.v) OOM(req);
    rs->topics.n = nt;
    for (int i = 0; i < nt; i++) {
        const floe_k_delete_records_req_delete_records_topic_t *q = &rq->topics.v[i];
        floe_k_delete_records_resp_delete_records_topic_result_t *rt = &rs->topics.v[i];
        rt->name = q->name;
        int np = q->partitions.n > 0 ? q->partitions.n : 0;
        rt->partitions.v =
            floe_k_delete_records_resp_delete_records_partition_result_new_array(a, np);
        if (!rt->partitions.v) OOM(req);
        rt->partitions.n = np;
        floe_topic_t *t = floe_broker_mod_topic(bm, q->name, false);
        for (int j = 0; j < np; j++) {
            const floe_k_delete_records_req_delete_records_partition_t *qp = &q->partitions.v[j];
            floe_k_delete_records_resp_delete_records_partition_result_t *r = &rt->partitions.v[j];
            r->partition_index = qp->partition_index;
            r->low_watermark = -1;
            if (!t) {
                r->error_code = FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            floe_broker_delete_records(bm->b, t, qp->partition_index, qp->offset, &r->low_watermark,
                                       &r->error_code);
        }
    }
    floe_kafka_respond(req, rs);
}

int floe_broker_mod_register_data(floe_broker_mod_t *bm, floe_err_t *err)
{
    floe_kafka_srv_t *s = bm->srv;
    if (floe_kafka_register(s, FLOE_KAPI_FETCH, 4, 12, h_fetch, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_LIST_OFFSETS, 0, 7, h_list_offsets, bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_OFFSET_FOR_LEADER_EPOCH, 0, 4, h_offset_for_leader_epoch,
                            bm, err) ||
        floe_kafka_register(s, FLOE_KAPI_DELETE_RECORDS, 0, 2, h_delete_records, bm, err))
        return -1;
    return 0;
}
