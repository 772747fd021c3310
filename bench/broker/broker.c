/* bench/broker: librdkafka producer and consumer throughput against
 * `floe serve` and, in the same run, against librdkafka's in-process mock
 * cluster (the peer reference), plus floe's RSS idle and under load.
 *
 *   build/bench/broker/broker [SECONDS_PER_PHASE]     (default 10)
 *
 * Finds floe at $FLOE_BIN or next to this binary (../../floe).  Every phase
 * is bounded by SECONDS_PER_PHASE; the last line is
 *   broker key=value ...
 * Messages are 1 KiB, acks=all, 2 partitions, no compression; the same
 * client configuration is used for both brokers.  floe runs with its
 * defaults (acks=all waits for fsync), then once more with
 * acks.all.fsync=false to show what the fsync costs.  Last, the disk's
 * own limit for durable writes (sequential writes and one fdatasync, in the
 * same temp dir), against which floe's and the in-memory mock's rates are
 * put as produce_disk_ratio and mock_disk_ratio. */
#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit/floe_proc.h"

#define MSG_SIZE 1024
#define PARTITIONS 2

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "bench/broker: %s: %s\n", what, why);
    exit(1);
}

/* ---- floe process -------------------------------------------------- */

typedef struct {
    floe_proc_t proc;   /* tests/unit/floe_proc.h */
    char dir[PATH_MAX]; /* temp dir: data/, data.log, serve.conf */
} bench_floe_t;

/* Start `floe serve` in a fresh temp dir; `config` (may be NULL) is written
 * to a file passed with --config. */
static void floe_start(bench_floe_t *fp, const char *bin, const char *config)
{
    snprintf(fp->dir, sizeof fp->dir, "%s/floe-bench.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(fp->dir)) die("mkdtemp", strerror(errno));
    char data[PATH_MAX + 8], conf[PATH_MAX + 16], why[1024];
    snprintf(data, sizeof data, "%s/data", fp->dir);
    snprintf(conf, sizeof conf, "%s/serve.conf", fp->dir);
    FILE *cf = fopen(conf, "w");
    if (!cf) die(conf, strerror(errno));
    fputs(config ? config : "", cf);
    fclose(cf);
    if (floe_proc_start(&fp->proc, bin, data, conf, why, sizeof why)) die("floe serve", why);
}

/* SIGTERM, wait, remove the temp dir; floe's exit status. */
static int floe_stop(bench_floe_t *fp)
{
    int st = floe_proc_stop(&fp->proc, SIGTERM);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fp->dir);
    if (system(cmd) != 0) fprintf(stderr, "bench/broker: could not remove %s\n", fp->dir);
    return st;
}

/* ---- clients ------------------------------------------------------- */

typedef struct {
    long delivered, failed;
    rd_kafka_resp_err_t first_err;
} dr_state_t;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    dr_state_t *s = opaque;
    if (m->err) {
        if (!s->failed++) s->first_err = m->err;
    } else {
        s->delivered++;
    }
}

static void conf_set(rd_kafka_conf_t *c, const char *k, const char *v)
{
    char err[256];
    if (rd_kafka_conf_set(c, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) die(k, err);
}

static void create_topic(const char *bootstrap, const char *topic)
{
    char err[256];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    conf_set(c, "bootstrap.servers", bootstrap);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!rk) die("admin client", err);
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, PARTITIONS, 1, err, sizeof err);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opt = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(opt, 15000, err, sizeof err);
    rd_kafka_CreateTopics(rk, &nt, 1, opt, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 20000);
    const char *why = NULL;
    char whybuf[512];
    if (!ev) {
        why = "no CreateTopics result in 20 s";
    } else if (rd_kafka_event_error(ev)) {
        why = rd_kafka_event_error_string(ev);
    } else {
        size_t n = 0;
        const rd_kafka_topic_result_t **r =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        if (n != 1 || rd_kafka_topic_result_error(r[0])) {
            snprintf(whybuf, sizeof whybuf, "%s",
                     n ? rd_kafka_topic_result_error_string(r[0]) : "no result");
            why = whybuf;
        }
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(opt);
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
    if (why) die("CreateTopics", why);
}

typedef struct {
    double mb_s;
    long messages;
    long rss_peak_kb; /* of watch_pid, sampled during the phase */
} phase_result_t;

/* Produce 1 KiB messages round-robin over the partitions for `seconds`,
 * then wait for every delivery report; throughput counts acked bytes. */
static phase_result_t produce_phase(const char *bootstrap, const char *topic, double seconds,
                                    pid_t watch_pid)
{
    static char payload[MSG_SIZE];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (char)('a' + i % 26);
    char err[256];
    dr_state_t dr = {0, 0, 0};
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    conf_set(c, "bootstrap.servers", bootstrap);
    conf_set(c, "acks", "all");
    conf_set(c, "linger.ms", "5");
    conf_set(c, "batch.size", "1000000");
    conf_set(c, "queue.buffering.max.kbytes", "262144");
    conf_set(c, "compression.codec", "none");
    conf_set(c, "enable.idempotence", "false");
    rd_kafka_conf_set_opaque(c, &dr);
    rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!rk) die("producer", err);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    phase_result_t res = {0, 0, -1};
    double t0 = now_s(), next_sample = t0, end = t0 + seconds;
    long sent = 0;
    for (;;) {
        if ((sent & 1023) == 0) {
            double t = now_s();
            if (t >= end) break;
            if (watch_pid > 0 && t >= next_sample) {
                long kb = floe_proc_rss_kb(watch_pid);
                if (kb > res.rss_peak_kb) res.rss_peak_kb = kb;
                next_sample = t + 0.1;
            }
        }
        if (rd_kafka_produce(rkt, (int32_t)(sent % PARTITIONS), 0, payload, MSG_SIZE, NULL, 0,
                             NULL) == -1) {
            if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                die("produce", rd_kafka_err2str(rd_kafka_last_error()));
            rd_kafka_poll(rk, 1);
            continue;
        }
        sent++;
        rd_kafka_poll(rk, 0);
    }
    while (rd_kafka_outq_len(rk) > 0 && now_s() < end + seconds) {
        rd_kafka_poll(rk, 50);
        if (watch_pid > 0) {
            long kb = floe_proc_rss_kb(watch_pid);
            if (kb > res.rss_peak_kb) res.rss_peak_kb = kb;
        }
    }
    double elapsed = now_s() - t0;
    rd_kafka_flush(rk, 5000);
    if (dr.failed)
        fprintf(stderr, "bench/broker: %ld deliveries failed, first: %s\n", dr.failed,
                rd_kafka_err2str(dr.first_err));
    res.messages = dr.delivered;
    res.mb_s = (double)dr.delivered * MSG_SIZE / elapsed / 1e6;
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    if (dr.delivered == 0) die("produce", "no message was acknowledged");
    return res;
}

/* Read the partitions from the beginning until `want` messages, the end of
 * every partition, or `seconds`.  (The mock keeps only the last ~5 MB per
 * partition, so for it the end comes first.) */
static phase_result_t consume_phase(const char *bootstrap, const char *topic, long want,
                                    double seconds, pid_t watch_pid)
{
    char err[256], group[64];
    snprintf(group, sizeof group, "bench-%d-%ld", (int)getpid(), (long)time(NULL));
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    conf_set(c, "bootstrap.servers", bootstrap);
    conf_set(c, "group.id", group);
    conf_set(c, "enable.auto.commit", "false");
    conf_set(c, "fetch.wait.max.ms", "100");
    conf_set(c, "enable.partition.eof", "true");
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof err);
    if (!rk) die("consumer", err);
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(PARTITIONS);
    for (int p = 0; p < PARTITIONS; p++)
        rd_kafka_topic_partition_list_add(tp, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(rk, tp);
    rd_kafka_topic_partition_list_destroy(tp);
    phase_result_t res = {0, 0, -1};
    long bytes = 0;
    int at_eof[PARTITIONS] = {0}, eofs = 0;
    /* The clock starts at the first message: connection set-up and the
     * first fetch round trip are not throughput. */
    double t0 = now_s(), end = t0 + seconds, next_sample = t0, first = 0;
    while (res.messages < want && eofs < PARTITIONS && now_s() < end) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (watch_pid > 0 && now_s() >= next_sample) {
            long kb = floe_proc_rss_kb(watch_pid);
            if (kb > res.rss_peak_kb) res.rss_peak_kb = kb;
            next_sample = now_s() + 0.1;
        }
        if (!m) continue;
        if (!m->err) {
            if (!res.messages) first = now_s();
            res.messages++;
            bytes += (long)m->len;
            if (m->partition >= 0 && m->partition < PARTITIONS && at_eof[m->partition]) {
                at_eof[m->partition] = 0;
                eofs--;
            }
        } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (m->partition >= 0 && m->partition < PARTITIONS && !at_eof[m->partition]) {
                at_eof[m->partition] = 1;
                eofs++;
            }
        } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            fprintf(stderr, "bench/broker: consume: %s\n", rd_kafka_message_errstr(m));
        }
        rd_kafka_message_destroy(m);
    }
    double elapsed = now_s() - (first > 0 ? first : t0);
    res.mb_s = elapsed > 0 ? (double)bytes / elapsed / 1e6 : 0;
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return res;
}

/* The physical limit of a broker durable on disk: sequential 1 MiB writes
 * into a file where floe keeps its data, for `seconds` or 2 GiB, then one
 * fdatasync (as `dd conv=fdatasync`); bytes over the whole time. */
static double disk_sync_mb_s(double seconds)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/floe-bench-disk.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) die("mkstemp", strerror(errno));
    unlink(path);
    static char block[1 << 20];
    memset(block, 0x5a, sizeof block);
    double t0 = now_s();
    size_t total = 0;
    while (total < (2u << 30) && now_s() - t0 < seconds) {
        ssize_t w = write(fd, block, sizeof block);
        if (w <= 0) die("disk write", strerror(errno));
        total += (size_t)w;
    }
    if (fdatasync(fd) < 0) die("fdatasync", strerror(errno));
    double dt = now_s() - t0;
    close(fd);
    return total / 1e6 / dt;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10.0;
    if (secs <= 0) die("usage", "broker [SECONDS_PER_PHASE > 0]");
    char bin[PATH_MAX + 16];
    if (floe_proc_bin(bin, sizeof bin, "../../floe")) die("floe binary", "path too long");
    if (access(bin, X_OK) != 0) die(bin, "floe binary not found (set FLOE_BIN)");
    char topic[64];
    snprintf(topic, sizeof topic, "bench-%d", (int)getpid());

    /* floe */
    bench_floe_t fp;
    floe_start(&fp, bin, NULL);
    usleep(500000);
    long rss_idle = floe_proc_rss_kb(fp.proc.pid);
    printf("floe at %s (pid %d), idle RSS %.1f MB\n", fp.proc.kafka, (int)fp.proc.pid,
           rss_idle / 1024.0);
    create_topic(fp.proc.kafka, topic);
    double cpu0 = floe_proc_cpu_s(fp.proc.pid);
    phase_result_t fprod = produce_phase(fp.proc.kafka, topic, secs, fp.proc.pid);
    double prod_cpu = floe_proc_cpu_s(fp.proc.pid) - cpu0;
    printf(
        "floe produce: %ld x 1 KiB acked in %.0f s: %.1f MB/s, peak RSS %.1f MB, floe CPU %.1f s\n",
        fprod.messages, secs, fprod.mb_s, fprod.rss_peak_kb / 1024.0, prod_cpu);
    phase_result_t fcons = consume_phase(fp.proc.kafka, topic, fprod.messages, secs, fp.proc.pid);
    printf("floe consume: %ld messages: %.1f MB/s, peak RSS %.1f MB\n", fcons.messages, fcons.mb_s,
           fcons.rss_peak_kb / 1024.0);
    long rss_after = floe_proc_rss_kb(fp.proc.pid);
    int st = floe_stop(&fp);
    if (st != 0) fprintf(stderr, "bench/broker: floe exited with status %d after SIGTERM\n", st);
    long rss_load = fprod.rss_peak_kb > fcons.rss_peak_kb ? fprod.rss_peak_kb : fcons.rss_peak_kb;

    /* floe again with acks=all answered before fsync (acks.all.fsync=false):
     * what the fsync costs. */
    floe_start(&fp, bin, "acks.all.fsync = false\n");
    create_topic(fp.proc.kafka, topic);
    phase_result_t fnosync = produce_phase(fp.proc.kafka, topic, secs, fp.proc.pid);
    printf("floe produce, acks.all.fsync=false: %ld x 1 KiB acked: %.1f MB/s\n", fnosync.messages,
           fnosync.mb_s);
    int st2 = floe_stop(&fp);
    if (st2 != 0)
        fprintf(stderr, "bench/broker: floe (no fsync) exited with status %d after SIGTERM\n", st2);

    /* librdkafka's mock cluster, in this process */
    char err[256];
    rd_kafka_conf_t *mc = rd_kafka_conf_new();
    conf_set(mc, "log_level", "4"); /* no notice about the missing bootstrap.servers */
    rd_kafka_t *mrk = rd_kafka_new(RD_KAFKA_PRODUCER, mc, err, sizeof err);
    if (!mrk) die("mock handle", err);
    rd_kafka_mock_cluster_t *mock = rd_kafka_mock_cluster_new(mrk, 1);
    if (!mock) die("rd_kafka_mock_cluster_new", "failed");
    if (rd_kafka_mock_topic_create(mock, topic, PARTITIONS, 1)) die("mock topic", "create failed");
    const char *mboot = rd_kafka_mock_cluster_bootstraps(mock);
    phase_result_t mprod = produce_phase(mboot, topic, secs, 0);
    printf("mock produce: %ld x 1 KiB acked: %.1f MB/s\n", mprod.messages, mprod.mb_s);
    phase_result_t mcons = consume_phase(mboot, topic, mprod.messages, secs, 0);
    printf("mock consume: %ld messages (all it retains): %.1f MB/s\n", mcons.messages, mcons.mb_s);
    rd_kafka_mock_cluster_destroy(mock);
    rd_kafka_destroy(mrk);

    double disk = disk_sync_mb_s(secs);
    printf("disk: sequential writes + fdatasync: %.1f MB/s (the ceiling of a broker durable on "
           "disk)\n",
           disk);

    int complete = fcons.messages == fprod.messages;
    if (!complete)
        fprintf(stderr, "bench/broker: consumed %ld of %ld messages from floe within %.0f s\n",
                fcons.messages, fprod.messages, secs);
    printf("broker produce_floe_mb_s=%.1f produce_mock_mb_s=%.1f produce_ratio=%.2f "
           "produce_floe_nofsync_mb_s=%.1f produce_nofsync_ratio=%.2f "
           "consume_floe_mb_s=%.1f consume_mock_mb_s=%.1f consume_ratio=%.2f "
           "disk_sync_mb_s=%.1f produce_disk_ratio=%.2f mock_disk_ratio=%.2f "
           "rss_idle_mb=%.1f rss_load_mb=%.1f rss_after_mb=%.1f floe_produce_cpu_s=%.1f "
           "msg_bytes=%d partitions=%d acks=all "
           "phase_s=%.0f floe_consumed_all=%d floe_sigterm_status=%d\n",
           fprod.mb_s, mprod.mb_s, mprod.mb_s > 0 ? fprod.mb_s / mprod.mb_s : 0, fnosync.mb_s,
           mprod.mb_s > 0 ? fnosync.mb_s / mprod.mb_s : 0, fcons.mb_s, mcons.mb_s,
           mcons.mb_s > 0 ? fcons.mb_s / mcons.mb_s : 0, disk, disk > 0 ? fprod.mb_s / disk : 0,
           disk > 0 ? mprod.mb_s / disk : 0, rss_idle / 1024.0, rss_load / 1024.0,
           rss_after / 1024.0, prod_cpu, MSG_SIZE, PARTITIONS, secs, complete, st);
    return 0;
}
