/* librdkafka against a real `floe serve` (FLOE_BIN): an idempotent producer
 * fills 6 partitions; a consumer group whose members join and leave
 * mid-stream consumes everything exactly once with synchronously committed
 * offsets; the committed offsets survive a restart of floe. */
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "floe_proc.h"
#include "test.h"

#define NPART 6
#define NMSG 6000
#define TOPIC "grp-events"

static char tmpdir[256];
static char bootstrap[128];
static floe_proc_t floe;
static char floe_why[1024];

/* Start floe serve on free ports (tests/unit/floe_proc.h), on the same
 * data dir each time; 0 or -1 with the reason in floe_why. */
static int floe_start(void)
{
    char bin[PATH_MAX], data[300], cfg[300];
    snprintf(data, sizeof data, "%s/data", tmpdir);
    snprintf(cfg, sizeof cfg, "%s/floe.conf", tmpdir);
    if (floe_proc_bin(bin, sizeof bin, "../floe")) return -1;
    FILE *f = fopen(cfg, "w");
    if (!f) return -1;
    fprintf(f, "group.initial.rebalance.delay.ms=100\n");
    fclose(f);
    if (floe_proc_start(&floe, bin, data, cfg, floe_why, sizeof floe_why)) {
        fprintf(stderr, "floe_start: %s\n", floe_why);
        return -1;
    }
    snprintf(bootstrap, sizeof bootstrap, "%s", floe.kafka);
    return 0;
}

static rd_kafka_conf_t *conf_base(void)
{
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    char e[256];
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, e, sizeof e);
    rd_kafka_conf_set(c, "log_level", "3", e, sizeof e);
    return c;
}

static int create_topic(void)
{
    char e[256];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf_base(), e, sizeof e);
    if (!rk) return -1;
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(TOPIC, NPART, 1, e, sizeof e);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 15000);
    int rc = -1;
    if (ev) {
        const rd_kafka_CreateTopics_result_t *r = rd_kafka_event_CreateTopics_result(ev);
        size_t n;
        const rd_kafka_topic_result_t **tr = r ? rd_kafka_CreateTopics_result_topics(r, &n) : NULL;
        if (tr && n == 1 && rd_kafka_topic_result_error(tr[0]) == 0) rc = 0;
        else
            fprintf(stderr, "create topic: %s\n",
                    tr && n ? rd_kafka_topic_result_error_string(tr[0])
                            : rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
    return rc;
}

static int delivered, delivery_failed;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err) delivery_failed++;
    else
        delivered++;
}

/* Produce values [from, to) with an idempotent producer, value i to
 * partition i % NPART. */
static int produce_range(int from, int to)
{
    char e[256];
    rd_kafka_conf_t *c = conf_base();
    rd_kafka_conf_set(c, "enable.idempotence", "true", e, sizeof e);
    rd_kafka_conf_set(c, "linger.ms", "5", e, sizeof e);
    rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, e, sizeof e);
    if (!rk) return -1;
    for (int i = from; i < to; i++) {
        char key[32], val[32];
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "%d", i);
        rd_kafka_resp_err_t err;
        while ((err = rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC(TOPIC), RD_KAFKA_V_PARTITION(i % NPART),
                    RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE(val, strlen(val)),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END)) ==
               RD_KAFKA_RESP_ERR__QUEUE_FULL)
            rd_kafka_poll(rk, 10);
        if (err) break;
    }
    rd_kafka_flush(rk, 30000);
    rd_kafka_destroy(rk);
    return delivered == to && delivery_failed == 0 ? 0 : -1;
}

static char group_id[64];

static rd_kafka_t *consumer_new(void)
{
    char e[256];
    rd_kafka_conf_t *c = conf_base();
    rd_kafka_conf_set(c, "group.id", group_id, e, sizeof e);
    rd_kafka_conf_set(c, "enable.auto.commit", "false", e, sizeof e);
    rd_kafka_conf_set(c, "auto.offset.reset", "earliest", e, sizeof e);
    rd_kafka_conf_set(c, "session.timeout.ms", "6000", e, sizeof e);
    rd_kafka_conf_set(c, "heartbeat.interval.ms", "100", e, sizeof e);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, e, sizeof e);
    if (!rk) return NULL;
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, TOPIC, RD_KAFKA_PARTITION_UA);
    rd_kafka_subscribe(rk, sub);
    rd_kafka_topic_partition_list_destroy(sub);
    return rk;
}

static void consumer_close(rd_kafka_t *rk)
{
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

static unsigned char seen[NMSG];
static int total, dups, commit_errors, bad_values;

static int per_consumer[4];

static void consume(rd_kafka_t *rk, int who)
{
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 20);
    if (!m) return;
    if (!m->err) {
        char v[32];
        int n = (int)(m->len < sizeof v - 1 ? m->len : sizeof v - 1);
        memcpy(v, m->payload, (size_t)n);
        v[n] = 0;
        int idx = atoi(v);
        if (idx < 0 || idx >= NMSG || idx % NPART != m->partition) {
            bad_values++;
        } else {
            if (seen[idx]) dups++;
            else
                total++;
            per_consumer[who]++;
            seen[idx]++;
        }
        if (rd_kafka_commit_message(rk, m, 0)) commit_errors++;
    }
    rd_kafka_message_destroy(m);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Committed offsets of the group, via a fresh client (not a member). */
static int committed(int64_t out[NPART])
{
    char e[256];
    rd_kafka_conf_t *c = conf_base();
    rd_kafka_conf_set(c, "group.id", group_id, e, sizeof e);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, e, sizeof e);
    if (!rk) return -1;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(NPART);
    for (int p = 0; p < NPART; p++) rd_kafka_topic_partition_list_add(l, TOPIC, p);
    rd_kafka_resp_err_t err = rd_kafka_committed(rk, l, 15000);
    for (int p = 0; p < NPART; p++) out[p] = l->elems[p].err ? -2 : l->elems[p].offset;
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(rk);
    return err ? -1 : 0;
}

static void group_join_leave_exactly_once(void)
{
    snprintf(group_id, sizeof group_id, "g-%d-%lld", (int)getpid(), (long long)now_ms());
    CHECK_EQ(create_topic(), 0);
    CHECK_EQ(produce_range(0, NMSG / 2), 0);

    rd_kafka_t *cs[4] = {consumer_new(), consumer_new(), consumer_new(), NULL};
    bool started3 = false;
    int64_t deadline = now_ms() + 120000; /* a hang guard, not a measure */
    while (total < NMSG && now_ms() < deadline) {
        for (int i = 0; i < 4; i++)
            if (cs[i]) consume(cs[i], i);
        if (total >= NMSG / 4 && cs[2]) { /* a member leaves */
            consumer_close(cs[2]);
            cs[2] = NULL;
            /* the second half arrives while the group rebalances */
            CHECK_EQ(produce_range(NMSG / 2, NMSG), 0);
        }
        if (total >= NMSG / 2 && !started3) { /* a new one joins */
            cs[3] = consumer_new();
            started3 = true;
        }
        if (total >= 3 * NMSG / 4 && cs[0]) { /* the first leaves too */
            consumer_close(cs[0]);
            cs[0] = NULL;
        }
    }
    CHECK_EQ(delivered, NMSG);
    CHECK_EQ(total, NMSG);
    CHECK_EQ(dups, 0);
    CHECK_EQ(bad_values, 0);
    CHECK_EQ(commit_errors, 0);
    /* every member, including the one that left early and the one that
     * joined late, really owned partitions at some point */
    for (int i = 0; i < 4; i++) CHECK(per_consumer[i] > 0);
    for (int i = 0; i < 4; i++)
        if (cs[i]) consumer_close(cs[i]);

    int64_t off[NPART];
    CHECK_EQ(committed(off), 0);
    for (int p = 0; p < NPART; p++) CHECK_EQ(off[p], NMSG / NPART);
}

/* A standalone commit (no membership, generation -1) is accepted for an
 * Empty group, but not for a partition that does not exist. */
static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    (void)rk;
    (void)err;
    int16_t *errs = opaque;
    for (int i = 0; offsets && i < offsets->cnt; i++)
        errs[strcmp(offsets->elems[i].topic, TOPIC) ? 1 : 0] = (int16_t)offsets->elems[i].err;
}

static void standalone_commit(void)
{
    char e[256];
    rd_kafka_conf_t *c = conf_base();
    rd_kafka_conf_set(c, "group.id", group_id, e, sizeof e);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, e, sizeof e);
    CHECK(rk != NULL);
    if (!rk) return;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(2);
    rd_kafka_topic_partition_list_add(l, TOPIC, 0)->offset = 5;
    rd_kafka_topic_partition_list_add(l, "no-such-topic", 0)->offset = 5;
    int16_t errs[2] = {-1, -1};
    rd_kafka_commit_queue(rk, l, NULL, on_commit, errs); /* sync: calls back */
    /* librdkafka spreads a partition's error over the whole result, so
     * only the unknown one is checked here; the known one is checked as
     * stored below */
    CHECK_EQ(errs[1], RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(rk);
    int64_t off[NPART];
    CHECK_EQ(committed(off), 0);
    CHECK_EQ(off[0], 5);
    CHECK_EQ(off[1], NMSG / NPART);
}

/* Static membership (KIP-345): a member with group.instance.id closes
 * without leaving; its restarted incarnation takes the slot back at once.
 * With a 60 s session, a dynamic member would wait for the old one to
 * expire, longer than the 30 s hang guard. */
static rd_kafka_t *static_consumer(const char *group)
{
    char e[256];
    rd_kafka_conf_t *c = conf_base();
    rd_kafka_conf_set(c, "group.id", group, e, sizeof e);
    rd_kafka_conf_set(c, "group.instance.id", "instance-1", e, sizeof e);
    rd_kafka_conf_set(c, "session.timeout.ms", "60000", e, sizeof e);
    rd_kafka_conf_set(c, "heartbeat.interval.ms", "200", e, sizeof e);
    rd_kafka_conf_set(c, "auto.offset.reset", "earliest", e, sizeof e);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, e, sizeof e);
    if (!rk) return NULL;
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, TOPIC, RD_KAFKA_PARTITION_UA);
    rd_kafka_subscribe(rk, sub);
    rd_kafka_topic_partition_list_destroy(sub);
    return rk;
}

static int assigned_count(rd_kafka_t *rk)
{
    rd_kafka_topic_partition_list_t *l = NULL;
    if (rd_kafka_assignment(rk, &l)) return -1;
    int n = l->cnt;
    rd_kafka_topic_partition_list_destroy(l);
    return n;
}

static void static_member_rejoins(void)
{
    char group[80];
    snprintf(group, sizeof group, "%s-static", group_id);
    for (int round = 0; round < 2; round++) {
        rd_kafka_t *rk = static_consumer(group);
        CHECK(rk != NULL);
        if (!rk) return;
        int got = 0;
        int64_t deadline = now_ms() + 30000; /* a hang guard */
        while (now_ms() < deadline && (assigned_count(rk) < NPART || got == 0)) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 50);
            if (m) {
                if (!m->err) got++;
                rd_kafka_message_destroy(m);
            }
        }
        CHECK_EQ(assigned_count(rk), NPART);
        CHECK(got > 0);
        consumer_close(rk); /* a static member does not leave */
    }
}

/* Restart floe (SIGKILL: no clean shutdown): the offsets remain. */
static void offsets_survive_sigkill(void)
{
    CHECK_EQ(floe_proc_stop(&floe, SIGKILL), 128 + SIGKILL);
    CHECK_EQ(floe_start(), 0);
    int64_t off[NPART];
    for (int p = 0; p < NPART; p++) off[p] = -3;
    CHECK_EQ(committed(off), 0);
    CHECK_EQ(off[0], 5);
    for (int p = 1; p < NPART; p++) CHECK_EQ(off[p], NMSG / NPART);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/floe-grp-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("not ok - floe_start: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    if (floe_start()) {
        printf("not ok - floe_start: %s\n", floe_why);
        return 1;
    }
    RUN(group_join_leave_exactly_once);
    RUN(standalone_commit);
    RUN(static_member_rejoins);
    RUN(offsets_survive_sigkill);
    int st = floe_proc_stop(&floe, SIGTERM);
    if (st) {
        printf("not ok - sigterm_clean_exit: floe exited with status %d\n", st);
        t_tests_failed++;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
    return t_tests_failed ? 1 : 0;
}
