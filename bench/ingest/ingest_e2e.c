/* bench/ingest (part 2): end to end through `floe serve`.
 *
 * Starts floe on free ports in a temp dir, creates a table topic
 * (table.commit.interval.ms=1000), and produces ~1 KiB JSON events with
 * librdkafka (acks=all) at FLOE_E2E_MB_S (50) for FLOE_E2E_SECS (10).
 * Freshness of a record = time from its acknowledgement until a commit
 * covers its offset (floe's /admin/tables, polled every 10 ms); sampled
 * every 50th record.  RSS from /proc: idle, and the peak under load, less
 * the bytes the partitions report buffered at that moment.  Done twice at
 * the same rate, with 4 and with 16 partitions: the growth between the two
 * runs per added partition is the memory per active partition, the rest
 * the fixed cost of the load (FLOE_E2E_PARTS=N: one run of N partitions).
 * Freshness figures are the 4-partition run's.
 * Last line: ingest_e2e mb_s=... p50_ms=... p99_ms=... rss_idle_mb=...
 * rss_load_mb=... rss_per_partition_mb=... rss_fixed_mb=...
 * rss_avg_per_partition_4_mb=... */
#include <curl/curl.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit/floe_proc.h"
#include "util/buf.h"
#include "util/clock.h"

#define MAXPARTS 64
#define MAXS 200000

typedef struct sample {
    int32_t p;
    int64_t off, ack_ms, fresh_ms;
} sample_t;

static sample_t samples[MAXS];
static int nsamples;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int done;
static char http[128];
static pid_t floe_pid;
static long rss_peak_kb;
static double buffered_at_peak, heap_at_peak;
static int PARTS = 4;

static size_t sink(char *p, size_t sz, size_t n, void *ctx)
{
    floe_buf_append(ctx, p, sz * n);
    return sz * n;
}

/* GET floe's http://.../path into *b (NUL-terminated); 0 or -1. */
static int get(CURL *c, const char *path, floe_buf_t *b)
{
    char url[192];
    snprintf(url, sizeof url, "http://%s%s", http, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    return curl_easy_perform(c) == CURLE_OK && floe_buf_append(b, "", 1) == 0 ? 0 : -1;
}

/* Committed offsets of the topic's partitions (and the buffered bytes). */
static int poll_status(CURL *c, int64_t *committed, double *buffered)
{
    floe_buf_t b = FLOE_BUF_INIT;
    int rc = -1;
    if (get(c, "/admin/tables", &b) == 0) {
        json_t *j = json_loadb((const char *)b.data, b.len - 1, 0, NULL);
        json_t *t = json_array_get(json_object_get(j, "tables"), 0);
        json_t *ps = json_object_get(t, "partitions");
        *buffered = 0;
        for (size_t i = 0; ps && i < json_array_size(ps) && i < (size_t)PARTS; i++) {
            json_t *p = json_array_get(ps, i);
            committed[i] = json_integer_value(json_object_get(p, "committed"));
            *buffered += (double)json_integer_value(json_object_get(p, "buffered_bytes"));
            rc = 0;
        }
        json_decref(j);
    }
    floe_buf_free(&b);
    return rc;
}

/* floe's malloc heap in use (floe_heap_bytes{state="in_use"} on /metrics). */
static double heap_in_use(CURL *c)
{
    floe_buf_t b = FLOE_BUF_INIT;
    double v = 0;
    const char *key = "floe_heap_bytes{state=\"in_use\"} ";
    if (get(c, "/metrics", &b) == 0) {
        const char *at = strstr((const char *)b.data, key);
        if (at) v = atof(at + strlen(key));
    }
    floe_buf_free(&b);
    return v;
}

static void *monitor(void *arg)
{
    (void)arg;
    CURL *c = curl_easy_init();
    int next = 0; /* samples before this one are resolved */
    while (!done) {
        int64_t committed[MAXPARTS];
        for (int i = 0; i < MAXPARTS; i++) committed[i] = -1;
        double buffered = 0;
        if (poll_status(c, committed, &buffered) == 0) {
            int64_t now = floe_wall_ms();
            pthread_mutex_lock(&mu);
            for (int i = next; i < nsamples; i++)
                if (samples[i].fresh_ms < 0 && samples[i].off < committed[samples[i].p])
                    samples[i].fresh_ms = now - samples[i].ack_ms;
            while (next < nsamples && samples[next].fresh_ms >= 0) next++;
            pthread_mutex_unlock(&mu);
            long kb = floe_proc_rss_kb(floe_pid);
            if (kb > rss_peak_kb) {
                rss_peak_kb = kb;
                buffered_at_peak = buffered;
                heap_at_peak = heap_in_use(c);
            }
        }
        floe_sleep_ms(10);
    }
    curl_easy_cleanup(c);
    return NULL;
}

static void dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err || !m->_private) return;
    pthread_mutex_lock(&mu);
    if (nsamples < MAXS)
        samples[nsamples++] = (sample_t){m->partition, m->offset, floe_wall_ms(), -1};
    pthread_mutex_unlock(&mu);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct run {
    double mb_s;
    int64_t p50, p99;
    double rss_idle, rss_load, buffered, beyond; /* MiB; beyond = load - idle - buffered */
} run_t;

/* One floe, one table topic of `parts` partitions, `secs` of produce at
 * `rate` MB/s. */
static int run_once(const char *bin, int parts, double rate, int secs, run_t *r)
{
    PARTS = parts;
    nsamples = 0;
    done = 0;
    rss_peak_kb = 0;
    buffered_at_peak = heap_at_peak = 0;
    char dir[] = "/tmp/floe-bench-e2e-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    floe_proc_t fp; /* tests/unit/floe_proc.h */
    char why[1024];
    if (floe_proc_start(&fp, bin, dir, NULL, why, sizeof why)) {
        fprintf(stderr, "floe did not start: %s\n", why);
        return -1;
    }
    floe_pid = fp.pid;
    snprintf(http, sizeof http, "%s", fp.http);
    const char *kafka = fp.kafka;
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", kafka, errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "acks", "all", errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "linger.ms", "5", errstr, sizeof errstr);
    rd_kafka_conf_set(conf, "batch.size", "1000000", errstr, sizeof errstr);
    rd_kafka_conf_set_dr_msg_cb(conf, dr);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    /* the table topic */
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new("events", PARTS, 1, errstr, sizeof errstr);
    rd_kafka_NewTopic_set_config(nt, "table.enable", "true");
    rd_kafka_NewTopic_set_config(nt, "table.commit.interval.ms", "1000");
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 10000);
    if (!ev || rd_kafka_event_error(ev)) {
        fprintf(stderr, "create topic failed\n");
        floe_proc_stop(&fp, SIGTERM);
        return -1;
    }
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    floe_sleep_ms(1500); /* the engine picks the topic up */
    long rss_idle = floe_proc_rss_kb(floe_pid);

    pthread_t th;
    pthread_create(&th, NULL, monitor, NULL);
    char msg[1100];
    uint64_t sent = 0, bytes = 0, seq = 0;
    int64_t t0 = floe_mono_ms();
    while (floe_mono_ms() - t0 < secs * 1000) {
        double elapsed = (double)(floe_mono_ms() - t0) / 1000.0;
        if ((double)bytes > rate * 1e6 * elapsed) { /* pace */
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
        void *tag = (seq % 50 == 0) ? (void *)1 : NULL;
        if (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("events"), RD_KAFKA_V_VALUE(msg, (size_t)n),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(tag),
                              RD_KAFKA_V_END) != 0) {
            rd_kafka_poll(rk, 5);
            continue;
        }
        bytes += (uint64_t)n;
        sent++;
        seq++;
        rd_kafka_poll(rk, 0);
    }
    rd_kafka_flush(rk, 30000);
    double produce_s = (double)(floe_mono_ms() - t0) / 1000.0;
    /* wait until every sample is covered by a commit (or 30 s) */
    for (int i = 0; i < 3000; i++) {
        int open = 0;
        pthread_mutex_lock(&mu);
        for (int k = 0; k < nsamples; k++) open += samples[k].fresh_ms < 0;
        pthread_mutex_unlock(&mu);
        if (!open) break;
        floe_sleep_ms(10);
    }
    done = 1;
    pthread_join(th, NULL);
    int64_t *f = malloc(sizeof *f * (size_t)(nsamples ? nsamples : 1));
    int nf = 0;
    for (int k = 0; k < nsamples; k++)
        if (samples[k].fresh_ms >= 0) f[nf++] = samples[k].fresh_ms;
    qsort(f, (size_t)nf, sizeof *f, cmp64);
    int64_t p50 = nf ? f[nf / 2] : -1, p99 = nf ? f[(nf * 99) / 100] : -1;
    double per_part =
        ((double)(rss_peak_kb - rss_idle) * 1024 - buffered_at_peak) / PARTS / 1048576.0;
    printf("-- %d partitions\n", PARTS);
    printf("produced: %llu records, %.1f MB in %.1f s (%.1f MB/s), acks=all, %d partitions\n",
           (unsigned long long)sent, bytes / 1e6, produce_s, bytes / 1e6 / produce_s, PARTS);
    printf("freshness (ack -> committed snapshot), %d of %d samples: p50 %lld ms, p99 %lld ms\n",
           nf, nsamples, (long long)p50, (long long)p99);
    printf("floe heap in use at the peak: %.1f MiB\n", heap_at_peak / 1048576.0);
    printf(
        "floe RSS: idle %.1f MiB, peak under load %.1f MiB (%.1f MiB buffered then); per partition "
        "beyond buffers %.2f MiB\n",
        rss_idle / 1024.0, rss_peak_kb / 1024.0, buffered_at_peak / 1048576.0, per_part);
    r->mb_s = bytes / 1e6 / produce_s;
    r->p50 = p50;
    r->p99 = p99;
    r->rss_idle = rss_idle / 1024.0;
    r->rss_load = rss_peak_kb / 1024.0;
    r->buffered = buffered_at_peak / 1048576.0;
    r->beyond = r->rss_load - r->rss_idle - r->buffered;
    rd_kafka_destroy(rk);
    floe_proc_stop(&fp, SIGTERM);
    free(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s.log", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    char bin[PATH_MAX];
    if (floe_proc_bin(bin, sizeof bin, "../../floe")) return 1;
    double rate = getenv("FLOE_E2E_MB_S") ? atof(getenv("FLOE_E2E_MB_S")) : 50;
    int secs = getenv("FLOE_E2E_SECS") ? atoi(getenv("FLOE_E2E_SECS")) : 10;
    /* Two runs at the same rate, 4 then 16 partitions: the memory that
     * grows with the partition count is the per-partition cost; what does
     * not (the producer's requests in flight, the shared encode and
     * compress buffers, the heap the memory policy keeps) is the fixed
     * cost of the load. */
    int few = 4, many = 16;
    if (getenv("FLOE_E2E_PARTS")) few = many = atoi(getenv("FLOE_E2E_PARTS"));
    if (few < 1 || few > MAXPARTS) few = many = 4;
    run_t a, b;
    if (run_once(bin, few, rate, secs, &a) < 0) return 1;
    if (many != few && run_once(bin, many, rate, secs, &b) < 0) return 1;
    double slope = many != few ? (b.beyond - a.beyond) / (many - few) : a.beyond / few;
    if (slope < 0) slope = 0;
    double fixed = a.beyond - slope * few;
    printf("-- per partition: %.2f MiB beyond buffers (RSS beyond idle and buffers: %.1f MiB at %d "
           "partitions, %.1f MiB at %d); fixed cost of the load %.1f MiB; %.2f MiB per partition "
           "averaged over %d\n",
           slope, a.beyond, few, many != few ? b.beyond : a.beyond, many, fixed, a.beyond / few,
           few);
    printf("ingest_e2e mb_s=%.1f p50_ms=%lld p99_ms=%lld rss_idle_mb=%.1f rss_load_mb=%.1f "
           "rss_per_partition_mb=%.2f rss_fixed_mb=%.1f rss_avg_per_partition_%d_mb=%.2f\n",
           a.mb_s, (long long)a.p50, (long long)a.p99, a.rss_idle, a.rss_load, slope, fixed, few,
           a.beyond / few);
    return 0;
}
