/* End to end through `floe serve`, for the benchmarks that measure it
 * (bench/ingest/ingest_e2e.c, bench/maintenance/maint_e2e.c): start floe on
 * free ports in a temp dir, create table topic "events" with the caller's
 * configs, produce ~1 KiB JSON events with librdkafka (acks=all) at a rate
 * for some seconds, and measure on every 50th record
 *   - produce latency: from the produce call to its delivery report;
 *   - freshness: from the acknowledgement until a commit covers the
 *     record's offset (floe's /admin/tables, polled every 10 ms);
 * plus floe's RSS idle and at its peak (with the bytes the partitions
 * buffered and the malloc heap in use then), and the table's maintenance
 * counters at the end.  Header-only: one benchmark binary per .c file. */
#ifndef FLOE_BENCH_E2E_RUN_H
#define FLOE_BENCH_E2E_RUN_H

#include <curl/curl.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit/floe_proc.h"
#include "util/buf.h"
#include "util/clock.h"

#define E2E_MAXPARTS 64
#define E2E_MAXS 200000

typedef struct e2e_opts {
    const char *bin; /* the floe binary */
    int parts;
    double rate_mb_s;
    int secs;
    const char *const *configs; /* topic configs: key, value, ..., NULL */
} e2e_opts_t;

typedef struct e2e_result {
    uint64_t sent, bytes;
    double produce_s, mb_s;
    int nsamples, nfresh;
    int64_t p50, p99;                          /* freshness, ms */
    int64_t produce_p50, produce_p99;          /* produce latency, ms */
    double rss_idle, rss_load, buffered, heap; /* MiB; buffered, heap: at the RSS peak */
    long long compactions, compacted_bytes;    /* the table's, at the end */
    long long data_files, files_written;       /* live at the end; written by the engine */
} e2e_result_t;

typedef struct e2e_sample {
    int32_t p;
    int64_t off, ack_ms, fresh_ms, produce_ms;
} e2e_sample_t;

static struct {
    e2e_sample_t samples[E2E_MAXS];
    int nsamples, parts;
    pthread_mutex_t mu;
    volatile int done;
    char http[128];
    pid_t pid;
    long rss_peak_kb;
    double buffered_at_peak, heap_at_peak;
} e2e = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t e2e_sink(char *p, size_t sz, size_t n, void *ctx)
{
    floe_buf_append(ctx, p, sz * n);
    return sz * n;
}

/* GET floe's http://.../path into *b (NUL-terminated); 0 or -1. */
static int e2e_get(CURL *c, const char *path, floe_buf_t *b)
{
    char url[192];
    snprintf(url, sizeof url, "http://%s%s", e2e.http, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, e2e_sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    return curl_easy_perform(c) == CURLE_OK && floe_buf_append(b, "", 1) == 0 ? 0 : -1;
}

/* The table's entry of /admin/tables (caller json_decref's the root in
 * *root), or NULL. */
static json_t *e2e_table(CURL *c, json_t **root)
{
    floe_buf_t b = FLOE_BUF_INIT;
    *root = NULL;
    if (e2e_get(c, "/admin/tables", &b) == 0)
        *root = json_loadb((const char *)b.data, b.len - 1, 0, NULL);
    floe_buf_free(&b);
    return json_array_get(json_object_get(*root, "tables"), 0);
}

/* Committed offsets of the topic's partitions (and the buffered bytes). */
static int e2e_poll(CURL *c, int64_t *committed, double *buffered)
{
    json_t *root, *t = e2e_table(c, &root);
    json_t *ps = json_object_get(t, "partitions");
    int rc = -1;
    *buffered = 0;
    for (size_t i = 0; ps && i < json_array_size(ps) && i < (size_t)e2e.parts; i++) {
        json_t *p = json_array_get(ps, i);
        committed[i] = json_integer_value(json_object_get(p, "committed"));
        *buffered += (double)json_integer_value(json_object_get(p, "buffered_bytes"));
        rc = 0;
    }
    json_decref(root);
    return rc;
}

/* floe's malloc heap in use (floe_heap_bytes{state="in_use"} on /metrics). */
static double e2e_heap(CURL *c)
{
    floe_buf_t b = FLOE_BUF_INIT;
    double v = 0;
    const char *key = "floe_heap_bytes{state=\"in_use\"} ";
    if (e2e_get(c, "/metrics", &b) == 0) {
        const char *at = strstr((const char *)b.data, key);
        if (at) v = atof(at + strlen(key));
    }
    floe_buf_free(&b);
    return v;
}

static void *e2e_monitor(void *arg)
{
    (void)arg;
    CURL *c = curl_easy_init();
    int next = 0; /* samples before this one are resolved */
    while (!e2e.done) {
        int64_t committed[E2E_MAXPARTS];
        for (int i = 0; i < E2E_MAXPARTS; i++) committed[i] = -1;
        double buffered = 0;
        if (e2e_poll(c, committed, &buffered) == 0) {
            int64_t now = floe_wall_ms();
            pthread_mutex_lock(&e2e.mu);
            for (int i = next; i < e2e.nsamples; i++)
                if (e2e.samples[i].fresh_ms < 0 && e2e.samples[i].off < committed[e2e.samples[i].p])
                    e2e.samples[i].fresh_ms = now - e2e.samples[i].ack_ms;
            while (next < e2e.nsamples && e2e.samples[next].fresh_ms >= 0) next++;
            pthread_mutex_unlock(&e2e.mu);
            long kb = floe_proc_rss_kb(e2e.pid);
            if (kb > e2e.rss_peak_kb) {
                e2e.rss_peak_kb = kb;
                e2e.buffered_at_peak = buffered;
                e2e.heap_at_peak = e2e_heap(c);
            }
        }
        floe_sleep_ms(10);
    }
    curl_easy_cleanup(c);
    return NULL;
}

/* Delivery report: a sampled record carries its send time (monotonic ms,
 * plus one) as the opaque. */
static void e2e_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err || !m->_private) return;
    int64_t sent = (int64_t)(intptr_t)m->_private - 1;
    pthread_mutex_lock(&e2e.mu);
    if (e2e.nsamples < E2E_MAXS)
        e2e.samples[e2e.nsamples++] =
            (e2e_sample_t){m->partition, m->offset, floe_wall_ms(), -1, floe_mono_ms() - sent};
    pthread_mutex_unlock(&e2e.mu);
}

static int e2e_cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* p50 and p99 of v[0..n) (sorted here); -1 when empty. */
static void e2e_pcts(int64_t *v, int n, int64_t *p50, int64_t *p99)
{
    qsort(v, (size_t)n, sizeof *v, e2e_cmp64);
    *p50 = n ? v[n / 2] : -1;
    *p99 = n ? v[(n * 99) / 100] : -1;
}

/* One floe, one table topic, o->secs of produce at o->rate_mb_s.  0, or -1
 * (with a line on stderr). */
static int e2e_run(const e2e_opts_t *o, e2e_result_t *r)
{
    memset(r, 0, sizeof *r);
    e2e.parts = o->parts;
    e2e.nsamples = 0;
    e2e.done = 0;
    e2e.rss_peak_kb = 0;
    e2e.buffered_at_peak = e2e.heap_at_peak = 0;
    char dir[] = "/tmp/floe-bench-e2e-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    floe_proc_t fp; /* tests/unit/floe_proc.h */
    char why[1024];
    if (floe_proc_start(&fp, o->bin, dir, NULL, why, sizeof why)) {
        fprintf(stderr, "floe did not start: %s\n", why);
        return -1;
    }
    e2e.pid = fp.pid;
    snprintf(e2e.http, sizeof e2e.http, "%s", fp.http);
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", fp.kafka, errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "acks", "all", errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "linger.ms", "5", errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "batch.size", "1000000", errstr, sizeof errstr);
    rd_kafka_conf_set_dr_msg_cb(conf, e2e_dr);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new("events", o->parts, 1, errstr, sizeof errstr);
    rd_kafka_NewTopic_set_config(nt, "table.enable", "true");
    for (const char *const *kv = o->configs; kv && kv[0]; kv += 2)
        rd_kafka_NewTopic_set_config(nt, kv[0], kv[1]);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 10000);
    int bad = !ev || rd_kafka_event_error(ev);
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    if (bad) {
        fprintf(stderr, "create topic failed\n");
        rd_kafka_destroy(rk);
        floe_proc_stop(&fp, SIGTERM);
        return -1;
    }
    floe_sleep_ms(1500); /* the engine picks the topic up */
    long rss_idle = floe_proc_rss_kb(e2e.pid);

    pthread_t th;
    pthread_create(&th, NULL, e2e_monitor, NULL);
    char msg[1100];
    uint64_t seq = 0;
    int64_t t0 = floe_mono_ms();
    while (floe_mono_ms() - t0 < o->secs * 1000) {
        double elapsed = (double)(floe_mono_ms() - t0) / 1000.0;
        if ((double)r->bytes > o->rate_mb_s * 1e6 * elapsed) { /* pace */
            rd_kafka_poll(rk, 1);
            continue;
        }
        int n = snprintf(
            msg, sizeof msg,
            "{\"seq\":%llu,\"user_id\":%llu,\"event\":\"view\",\"ts\":%lld,\"amount\":%llu.5,"
            "\"url\":\"https://shop.example/p/%llu\",\"pad\":\"%0900llu\"}",
            (unsigned long long)seq, (unsigned long long)(seq * 7919 % 100000),
            (long long)floe_wall_ms(), (unsigned long long)(seq % 1000),
            (unsigned long long)(seq % 5000), (unsigned long long)seq);
        void *tag = seq % 50 == 0 ? (void *)(intptr_t)(floe_mono_ms() + 1) : NULL;
        if (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("events"), RD_KAFKA_V_VALUE(msg, (size_t)n),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(tag),
                              RD_KAFKA_V_END) != 0) {
            rd_kafka_poll(rk, 5);
            continue;
        }
        r->bytes += (uint64_t)n;
        r->sent++;
        seq++;
        rd_kafka_poll(rk, 0);
    }
    rd_kafka_flush(rk, 30000);
    r->produce_s = (double)(floe_mono_ms() - t0) / 1000.0;
    /* wait until every sample is covered by a commit (or 30 s) */
    for (int i = 0; i < 3000; i++) {
        int open = 0;
        pthread_mutex_lock(&e2e.mu);
        for (int k = 0; k < e2e.nsamples; k++) open += e2e.samples[k].fresh_ms < 0;
        pthread_mutex_unlock(&e2e.mu);
        if (!open) break;
        floe_sleep_ms(10);
    }
    e2e.done = 1;
    pthread_join(th, NULL);
    int n = e2e.nsamples ? e2e.nsamples : 1;
    int64_t *f = malloc(sizeof *f * (size_t)n), *p = malloc(sizeof *p * (size_t)n);
    int nf = 0;
    for (int k = 0; k < e2e.nsamples; k++) {
        if (e2e.samples[k].fresh_ms >= 0) f[nf++] = e2e.samples[k].fresh_ms;
        p[k] = e2e.samples[k].produce_ms;
    }
    e2e_pcts(f, nf, &r->p50, &r->p99);
    e2e_pcts(p, e2e.nsamples, &r->produce_p50, &r->produce_p99);
    free(f);
    free(p);
    r->nsamples = e2e.nsamples;
    r->nfresh = nf;
    r->mb_s = r->bytes / 1e6 / r->produce_s;
    r->rss_idle = rss_idle / 1024.0;
    r->rss_load = e2e.rss_peak_kb / 1024.0;
    r->buffered = e2e.buffered_at_peak / 1048576.0;
    r->heap = e2e.heap_at_peak / 1048576.0;
    CURL *c = curl_easy_init();
    json_t *root, *t = e2e_table(c, &root);
    json_t *m = json_object_get(t, "maintenance");
    r->compactions = json_integer_value(json_object_get(m, "compactions"));
    r->compacted_bytes = json_integer_value(json_object_get(m, "compacted_bytes_in"));
    r->data_files = json_integer_value(json_object_get(m, "data_files"));
    r->files_written = json_integer_value(json_object_get(t, "files_written"));
    json_decref(root);
    curl_easy_cleanup(c);
    rd_kafka_destroy(rk);
    floe_proc_stop(&fp, SIGTERM);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s.log", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
