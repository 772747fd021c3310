/* Connections, dispatch, in-order responses and ApiVersions. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/broker.h"
#include "kafka/server.h"
#include "net/tcp.h"
#include "util/clock.h"
#include "util/diag.h"

#define MAX_API_KEY 128

typedef struct kconn kconn_t;

struct floe_kafka_req {
    floe_kreq_hdr_t hdr;
    const floe_kapi_t *api;
    void *body;
    floe_arena_t arena;
    uint8_t *mem; /* the frame the body borrows from */
    floe_kafka_srv_t *srv;
    kconn_t *kc; /* NULL once the connection is gone */
    char peer[64];
    int64_t recv_ms;
    floe_buf_t out; /* encoded response, size prefix included */
    bool done, hold, fail;
    void (*on_close)(floe_kafka_req_t *, void *);
    void *on_close_arg;
    size_t size; /* frame bytes, counted against the in-flight cap */
    floe_kafka_req_t *next;
};

struct kconn {
    floe_kafka_srv_t *srv;
    floe_conn_t *c;
    floe_kafka_req_t *head, *tail;
    int inflight;
    size_t inflight_bytes;
};

typedef struct handler {
    floe_kafka_handler_fn fn;
    void *ctx;
    int16_t vmin, vmax;
} handler_t;

typedef struct mod_inst {
    const floe_kafka_module_t *m;
    void *state;
} mod_inst_t;

struct floe_kafka_srv {
    floe_loop_t *loop;
    floe_tcp_srv_t *tcp;
    floe_broker_t *broker;
    handler_t handlers[MAX_API_KEY];
    char *host, *adv_host, *cluster_id;
    int32_t node_id;
    int port, adv_port;
    int max_inflight;
    size_t max_inflight_bytes; /* per connection: reading pauses above it */
    int64_t live_reqs;         /* requests not yet freed (drain waits) */
    mod_inst_t mods[16];
    int nmods;
    bool stopping;
    /* metrics, read by the HTTP thread */
    atomic_uint_fast64_t req_count[MAX_API_KEY];
    atomic_uint_fast64_t bytes_in, bytes_out, conns_total, conns_open, bad_requests;
};

/* ---- request accessors ---- */

int16_t floe_kafka_req_api_key(const floe_kafka_req_t *r)
{
    return r->hdr.api_key;
}
int16_t floe_kafka_req_version(const floe_kafka_req_t *r)
{
    return r->hdr.api_version;
}
int32_t floe_kafka_req_correlation_id(const floe_kafka_req_t *r)
{
    return r->hdr.correlation_id;
}
void *floe_kafka_req_body(const floe_kafka_req_t *r)
{
    return r->body;
}
const char *floe_kafka_req_client_id(const floe_kafka_req_t *r)
{
    return r->hdr.client_id.ptr ? r->hdr.client_id.ptr : "";
}
const char *floe_kafka_req_peer(const floe_kafka_req_t *r)
{
    return r->peer;
}
floe_arena_t *floe_kafka_req_arena(floe_kafka_req_t *r)
{
    return &r->arena;
}
floe_kafka_srv_t *floe_kafka_req_srv(const floe_kafka_req_t *r)
{
    return r->srv;
}
bool floe_kafka_req_closed(const floe_kafka_req_t *r)
{
    return r->kc == NULL;
}
int64_t floe_kafka_req_received_ms(const floe_kafka_req_t *r)
{
    return r->recv_ms;
}
void floe_kafka_req_release_frame(floe_kafka_req_t *r)
{
    floe_tcp_frame_free(r->srv->tcp, r->mem);
    r->mem = NULL;
}
void floe_kafka_req_on_close(floe_kafka_req_t *r, void (*fn)(floe_kafka_req_t *, void *), void *arg)
{
    r->on_close = fn;
    r->on_close_arg = arg;
}

/* ---- server accessors ---- */

floe_broker_t *floe_kafka_srv_broker(floe_kafka_srv_t *s)
{
    return s->broker;
}
int32_t floe_kafka_srv_node_id(const floe_kafka_srv_t *s)
{
    return s->node_id;
}
const char *floe_kafka_srv_host(const floe_kafka_srv_t *s)
{
    return s->adv_host;
}
int32_t floe_kafka_srv_port(const floe_kafka_srv_t *s)
{
    return s->adv_port;
}
const char *floe_kafka_srv_cluster_id(const floe_kafka_srv_t *s)
{
    return s->cluster_id;
}
floe_loop_t *floe_kafka_srv_loop(floe_kafka_srv_t *s)
{
    return s->loop;
}
int floe_kafka_srv_bound_port(const floe_kafka_srv_t *s)
{
    return s->port;
}

floe_kafka_timer_t *floe_kafka_timer_add(floe_kafka_srv_t *s, int64_t delay_ms, void (*fn)(void *),
                                         void *arg)
{
    return (floe_kafka_timer_t *)floe_loop_timer(s->loop, delay_ms, fn, arg);
}
void floe_kafka_timer_cancel(floe_kafka_srv_t *s, floe_kafka_timer_t *t)
{
    floe_timer_cancel(s->loop, (floe_timer_t *)t);
}
int floe_kafka_post(floe_kafka_srv_t *s, void (*fn)(void *), void *arg)
{
    return floe_loop_post(s->loop, fn, arg);
}

/* ---- registry ---- */

int floe_kafka_register(floe_kafka_srv_t *s, int16_t key, int16_t vmin, int16_t vmax,
                        floe_kafka_handler_fn fn, void *ctx, floe_err_t *err)
{
    const floe_kapi_t *api = floe_kapi_find(key);
    if (!api || key < 0 || key >= MAX_API_KEY)
        return floe_err_set(err, FLOE_EINVAL, "api key %d is not declared in messages.def", key);
    if (vmin < api->vmin) vmin = api->vmin;
    if (vmax > api->vmax) vmax = api->vmax;
    if (vmin > vmax || !fn)
        return floe_err_set(err, FLOE_EINVAL, "%s: empty version range", api->name);
    s->handlers[key] = (handler_t){fn, ctx, vmin, vmax};
    return 0;
}

bool floe_kafka_registered(const floe_kafka_srv_t *s, int16_t key, int16_t *vmin, int16_t *vmax)
{
    if (key < 0 || key >= MAX_API_KEY || !s->handlers[key].fn) return false;
    if (vmin) *vmin = s->handlers[key].vmin;
    if (vmax) *vmax = s->handlers[key].vmax;
    return true;
}

/* ---- responses, in order ---- */

static void req_free(floe_kafka_req_t *r)
{
    r->srv->live_reqs--;
    floe_arena_free(&r->arena);
    floe_buf_free(&r->out);
    floe_tcp_frame_free(r->srv->tcp, r->mem);
    free(r);
}

/* Send every finished request at the head of the queue. */
static void kconn_flush(kconn_t *kc)
{
    floe_kafka_srv_t *s = kc->srv;
    while (kc->head && kc->head->done) {
        floe_kafka_req_t *r = kc->head;
        kc->head = r->next;
        if (!kc->head) kc->tail = NULL;
        kc->inflight--;
        kc->inflight_bytes -= r->size;
        bool fail = r->fail;
        int rc = 0;
        if (r->out.len) {
            atomic_fetch_add(&s->bytes_out, r->out.len);
            rc = floe_conn_send(kc->c, r->out.data, r->out.len);
        }
        req_free(r);
        if (rc) return; /* the connection died and kc with it */
        if (fail) {
            floe_conn_close(kc->c, false);
            /* later requests are dropped with the connection */
            return;
        }
    }
    if (kc->inflight < s->max_inflight && kc->inflight_bytes < s->max_inflight_bytes)
        floe_conn_pause(kc->c, false);
}

static void finish(floe_kafka_req_t *r)
{
    r->done = true;
    if (!r->kc) {
        if (!r->hold) req_free(r);
        return;
    }
    kconn_flush(r->kc);
}

void floe_kafka_respond(floe_kafka_req_t *r, const void *resp)
{
    if (r->kc && resp) {
        bool flex = floe_kapi_flexible(r->api, r->hdr.api_version);
        floe_err_t err;
        uint8_t zero[4] = {0};
        if (floe_buf_append(&r->out, zero, 4) ||
            floe_kresp_hdr_encode(r->hdr.api_key, r->hdr.correlation_id, flex, &r->out) ||
            floe_kproto_encode(r->api->resp, r->hdr.api_version, flex, resp, &r->out, &err)) {
            FLOE_ERROR("kafka: %s: cannot encode %s response, closing", r->peer, r->api->name);
            r->out.len = 0;
            r->fail = true;
        } else {
            floe_wr_be32(r->out.data, (uint32_t)(r->out.len - 4));
        }
    }
    finish(r);
}

void floe_kafka_respond_none(floe_kafka_req_t *r)
{
    finish(r);
}

void floe_kafka_fail(floe_kafka_req_t *r, const char *why)
{
    if (r->kc)
        FLOE_WARN("kafka: %s: closing connection: %s (api %d v%d)", r->peer, why, r->hdr.api_key,
                  r->hdr.api_version);
    r->fail = true;
    r->out.len = 0;
    finish(r);
}

/* ---- ApiVersions, answered by the server itself ---- */

static void api_versions_fill(floe_kafka_srv_t *s, floe_arena_t *a, floe_k_api_versions_resp_t *rs)
{
    int n = 0;
    for (int k = 0; k < MAX_API_KEY; k++)
        if (s->handlers[k].fn) n++;
    rs->api_keys.v = floe_k_api_versions_resp_api_version_new_array(a, n);
    if (!rs->api_keys.v) return;
    rs->api_keys.n = n;
    int i = 0;
    for (int k = 0; k < MAX_API_KEY; k++) {
        if (!s->handlers[k].fn) continue;
        rs->api_keys.v[i].api_key = (int16_t)k;
        rs->api_keys.v[i].min_version = s->handlers[k].vmin;
        rs->api_keys.v[i].max_version = s->handlers[k].vmax;
        i++;
    }
}

static void h_api_versions(floe_kafka_req_t *req, void *ctx)
{
    floe_kafka_srv_t *s = ctx;
    floe_k_api_versions_resp_t *rs = floe_k_api_versions_resp_new(&req->arena);
    if (!rs) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    api_versions_fill(s, &req->arena, rs);
    floe_kafka_respond(req, rs);
}

/* An ApiVersions request at a version floe does not know: answer with v0
 * and UNSUPPORTED_VERSION so the client retries with one it sees listed. */
static void api_versions_unsupported(floe_kafka_req_t *req)
{
    floe_kafka_srv_t *s = req->srv;
    floe_k_api_versions_resp_t *rs = floe_k_api_versions_resp_new(&req->arena);
    if (!rs) {
        floe_kafka_fail(req, "out of memory");
        return;
    }
    rs->error_code = FLOE_KERR_UNSUPPORTED_VERSION;
    api_versions_fill(s, &req->arena, rs);
    req->api = floe_kapi_find(FLOE_KAPI_API_VERSIONS);
    req->hdr.api_version = 0;
    floe_kafka_respond(req, rs);
}

/* ---- connections ---- */

static int on_open(floe_conn_t *c, void *arg)
{
    floe_kafka_srv_t *s = arg;
    if (s->stopping) return -1;
    kconn_t *kc = calloc(1, sizeof *kc);
    if (!kc) return -1;
    kc->srv = s;
    kc->c = c;
    floe_conn_set_data(c, kc);
    atomic_fetch_add(&s->conns_total, 1);
    atomic_fetch_add(&s->conns_open, 1);
    FLOE_DEBUG("kafka: %s connected", floe_conn_peer(c));
    return 0;
}

static void on_close(floe_conn_t *c, void *arg)
{
    floe_kafka_srv_t *s = arg;
    kconn_t *kc = floe_conn_data(c);
    if (!kc) return;
    atomic_fetch_sub(&s->conns_open, 1);
    FLOE_DEBUG("kafka: %s disconnected", floe_conn_peer(c));
    floe_kafka_req_t *list = kc->head;
    kc->head = kc->tail = NULL;
    for (floe_kafka_req_t *r = list; r; r = r->next) {
        r->kc = NULL;
        r->hold = true;
    }
    for (floe_kafka_req_t *r = list; r; r = r->next)
        if (!r->done && r->on_close) r->on_close(r, r->on_close_arg);
    while (list) {
        floe_kafka_req_t *n = list->next;
        list->hold = false;
        list->next = NULL;
        if (list->done) req_free(list);
        list = n;
    }
    floe_conn_set_data(c, NULL);
    free(kc);
}

static void on_frame(floe_conn_t *c, uint8_t *mem, const uint8_t *frame, size_t len, void *arg)
{
    floe_kafka_srv_t *s = arg;
    kconn_t *kc = floe_conn_data(c);
    if (!kc) {
        free(mem);
        return;
    }
    atomic_fetch_add(&s->bytes_in, len + 4);
    floe_kafka_req_t *r = calloc(1, sizeof *r);
    if (!r) {
        free(mem);
        floe_conn_close(c, true);
        return;
    }
    r->mem = mem;
    r->srv = s;
    r->size = len;
    s->live_reqs++;
    r->kc = kc;
    r->recv_ms = floe_mono_ms();
    snprintf(r->peer, sizeof r->peer, "%s", floe_conn_peer(c));
    /* decoded structs can be larger than their bytes; cap what a request
     * may make us allocate */
    size_t cap = 16 * len + (1u << 20);
    if (cap > (256u << 20)) cap = 256u << 20;
    floe_arena_init(&r->arena, 4096, cap);
    /* queue first so that any answer keeps the order */
    if (kc->tail) kc->tail->next = r;
    else
        kc->head = r;
    kc->tail = r;
    kc->inflight_bytes += len;
    /* bounded memory: a connection may hold max_inflight requests or about
     * max_inflight_bytes of them (plus one being read) before it is paused */
    if (++kc->inflight >= s->max_inflight || kc->inflight_bytes >= s->max_inflight_bytes)
        floe_conn_pause(c, true);

    floe_err_t err;
    floe_err_clear(&err);
    if (floe_kreq_decode(frame, len, &r->arena, &r->hdr, &r->api, &r->body, &err)) {
        atomic_fetch_add(&s->bad_requests, 1);
        char why[FLOE_ERR_MSG_MAX + 32];
        snprintf(why, sizeof why, "malformed request: %s", err.msg);
        floe_kafka_fail(r, why);
        return;
    }
    int16_t key = r->hdr.api_key;
    if (key >= 0 && key < MAX_API_KEY) atomic_fetch_add(&s->req_count[key], 1);
    handler_t *h = key >= 0 && key < MAX_API_KEY ? &s->handlers[key] : NULL;
    if (key == FLOE_KAPI_API_VERSIONS && h && h->fn && (!r->api || r->hdr.api_version > h->vmax)) {
        api_versions_unsupported(r);
        return;
    }
    if (!r->api || !h || !h->fn || r->hdr.api_version < h->vmin || r->hdr.api_version > h->vmax) {
        atomic_fetch_add(&s->bad_requests, 1);
        floe_kafka_fail(r, "unsupported API or version");
        return;
    }
    FLOE_DEBUG("kafka: %s: %s v%d corr %d", r->peer, r->api->name, r->hdr.api_version,
               r->hdr.correlation_id);
    h->fn(r, h->ctx);
}

/* ---- lifecycle ---- */

static char *dup_or(const char *s, const char *d)
{
    return strdup(s && *s ? s : d);
}

int floe_kafka_srv_new(floe_loop_t *loop, const floe_kafka_srv_config_t *cfg, floe_broker_t *broker,
                       floe_kafka_srv_t **out, floe_err_t *err)
{
    floe_kafka_srv_t *s = calloc(1, sizeof *s);
    if (!s) return floe_err_oom(err);
    s->loop = loop;
    s->broker = broker;
    s->host = dup_or(cfg->host, "127.0.0.1");
    const char *adv = cfg->advertised_host;
    if (!adv || !*adv)
        adv = (!strcmp(s->host, "0.0.0.0") || !strcmp(s->host, "::")) ? "127.0.0.1" : s->host;
    s->adv_host = strdup(adv);
    s->cluster_id = dup_or(cfg->cluster_id, "floe");
    s->node_id = cfg->node_id > 0 ? cfg->node_id : 1;
    s->max_inflight = cfg->max_inflight > 0 ? cfg->max_inflight : 100;
    /* Kafka reads a connection's next request only after answering the
     * last; floe lets a few pipeline (acks=all ones wait for the fsync),
     * but not seconds' worth of produce data: that held tens of MiB of
     * requests in memory at 50 MB/s.  One larger request is still read
     * whole (the pause comes after it). */
    s->max_inflight_bytes = cfg->max_inflight_bytes ? cfg->max_inflight_bytes : (4u << 20);
    if (cfg->max_request_bytes && s->max_inflight_bytes > cfg->max_request_bytes)
        s->max_inflight_bytes = cfg->max_request_bytes;
    if (!s->host || !s->adv_host || !s->cluster_id) {
        floe_kafka_srv_free(s);
        return floe_err_oom(err);
    }
    floe_tcp_opts_t o = {cfg->max_request_bytes, cfg->max_connections};
    static const floe_tcp_cbs_t cbs = {on_open, on_frame, on_close};
    if (floe_tcp_listen(loop, s->host, cfg->port, &o, &cbs, s, &s->tcp, err)) {
        floe_kafka_srv_free(s);
        return -1;
    }
    s->port = floe_tcp_port(s->tcp);
    s->adv_port = cfg->advertised_port > 0 ? cfg->advertised_port : s->port;
    floe_kafka_register(s, FLOE_KAPI_API_VERSIONS, 0, 3, h_api_versions, s, NULL);
    *out = s;
    return 0;
}

int floe_kafka_srv_add_modules(floe_kafka_srv_t *s, const floe_kafka_module_t *const *mods,
                               floe_err_t *err)
{
    for (; *mods; mods++) {
        if (s->nmods == (int)(sizeof s->mods / sizeof s->mods[0]))
            return floe_err_set(err, FLOE_EINVAL, "too many modules");
        void *state = NULL;
        if ((*mods)->init(s, &state, err)) {
            floe_err_wrap(err, "module %s", (*mods)->name);
            return -1;
        }
        s->mods[s->nmods++] = (mod_inst_t){*mods, state};
    }
    return 0;
}

void floe_kafka_srv_shutdown(floe_kafka_srv_t *s, int64_t drain_ms)
{
    if (s->stopping) return;
    s->stopping = true;
    if (s->tcp) floe_tcp_stop_accepting(s->tcp);
    for (int i = s->nmods - 1; i >= 0; i--)
        if (s->mods[i].m->stop) s->mods[i].m->stop(s->mods[i].state);
    /* drain: deferred answers (fsync waits) and queued output */
    int64_t end = floe_mono_ms() + drain_ms;
    while (s->tcp && (s->live_reqs > 0 || !floe_tcp_flushed(s->tcp)) && floe_mono_ms() < end)
        floe_loop_run_for(s->loop, 20, NULL);
    if (s->tcp) {
        floe_tcp_free(s->tcp);
        s->tcp = NULL;
    }
    /* let deferred frees of connections run */
    floe_loop_run_for(s->loop, 1, NULL);
}

void floe_kafka_srv_free(floe_kafka_srv_t *s)
{
    if (!s) return;
    if (s->tcp) floe_kafka_srv_shutdown(s, 0);
    for (int i = s->nmods - 1; i >= 0; i--)
        if (s->mods[i].m->free) s->mods[i].m->free(s->mods[i].state);
    free(s->host);
    free(s->adv_host);
    free(s->cluster_id);
    free(s);
}

uint64_t floe_kafka_srv_traffic(floe_kafka_srv_t *s)
{
    return atomic_load(&s->bytes_in) + atomic_load(&s->bytes_out);
}

void floe_kafka_srv_release_memory(floe_kafka_srv_t *s)
{
    floe_tcp_pool_release(s->tcp);
}

int floe_kafka_srv_metrics(floe_kafka_srv_t *s, floe_buf_t *out)
{
    int rc = 0;
    rc |= floe_buf_printf(out, "# TYPE floe_kafka_requests_total counter\n");
    for (int k = 0; k < MAX_API_KEY; k++) {
        uint64_t n = atomic_load(&s->req_count[k]);
        const floe_kapi_t *api = floe_kapi_find((int16_t)k);
        if (!n && !(api && s->handlers[k].fn)) continue;
        rc |= floe_buf_printf(out, "floe_kafka_requests_total{api=\"%s\"} %llu\n",
                              api ? api->name : "unknown", (unsigned long long)n);
    }
    rc |= floe_buf_printf(
        out,
        "# TYPE floe_kafka_bytes_in_total counter\nfloe_kafka_bytes_in_total %llu\n"
        "# TYPE floe_kafka_bytes_out_total counter\nfloe_kafka_bytes_out_total %llu\n"
        "# TYPE floe_kafka_connections gauge\nfloe_kafka_connections %llu\n"
        "# TYPE floe_kafka_connections_total counter\nfloe_kafka_connections_total %llu\n"
        "# TYPE floe_kafka_bad_requests_total counter\nfloe_kafka_bad_requests_total %llu\n",
        (unsigned long long)atomic_load(&s->bytes_in),
        (unsigned long long)atomic_load(&s->bytes_out),
        (unsigned long long)atomic_load(&s->conns_open),
        (unsigned long long)atomic_load(&s->conns_total),
        (unsigned long long)atomic_load(&s->bad_requests));
    uint64_t reuses = 0;
    size_t held = 0;
    if (s->tcp) floe_tcp_pool_stats(s->tcp, &reuses, &held);
    rc |= floe_buf_printf(
        out,
        "# HELP floe_kafka_frame_pool_bytes Memory of large request frames kept for reuse.\n"
        "# TYPE floe_kafka_frame_pool_bytes gauge\nfloe_kafka_frame_pool_bytes %zu\n"
        "# TYPE floe_kafka_frame_pool_reuses_total counter\n"
        "floe_kafka_frame_pool_reuses_total %llu\n",
        held, (unsigned long long)reuses);
    if (floe_kafka_srv_broker(s)) rc |= floe_broker_cleaner_metrics(floe_kafka_srv_broker(s), out);
    return rc ? -1 : 0;
}

static int http_metrics(void *arg, floe_buf_t *out)
{
    return floe_kafka_srv_metrics(arg, out);
}

int floe_kafka_srv_http(floe_kafka_srv_t *s, floe_http_t *h, floe_err_t *err)
{
    return floe_http_metrics_add(h, http_metrics, s) ? floe_err_oom(err) : 0;
}
