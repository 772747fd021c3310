/* The Kafka source (table/source_kafka.h) against librdkafka's in-process
 * mock cluster, a broker floe did not write: JSON records with keys and
 * headers go through a consumer group into a partitioned table that
 * icebird reads back row by row (verify_table.mjs); a second worker joins
 * the group mid-stream and the two share the partitions, every record once;
 * a stopped worker leaves the group after committing, and a restarted one
 * resumes from the table. */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iceberg/catalog.h"
#include "iceberg/metadata.h"
#include "table/engine.h"
#include "table/offsets.h"
#include "table/source_kafka.h"
#include "util/clock.h"
#include "table_verify.h"
#include "test.h"

#define NPARTS 4

static char dir[256];
static rd_kafka_t *prod; /* holds the mock cluster and produces into it */
static rd_kafka_mock_cluster_t *mc;
static const char *bootstraps;
static floe_fileio_t *io;
static floe_ice_catalog_t *cat;
static floe_buf_t dump = FLOE_BUF_INIT; /* "p\to\tjson" of every record produced */
static int64_t ends[NPARTS];
static int produced;

/* Delivery reports: where each record landed, for the dump. */
static void delivered(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err) {
        printf("# delivery failed: %s\n", rd_kafka_err2str(m->err));
        return;
    }
    floe_buf_printf(&dump, "%d\t%lld\t%.*s\n", (int)m->partition, (long long)m->offset, (int)m->len,
                    (const char *)m->payload);
    if (m->offset + 1 > ends[m->partition]) ends[m->partition] = m->offset + 1;
}

static void produce(int n)
{
    static const char *regions[] = {"eu", "us", "ap"};
    for (int i = 0; i < n; i++, produced++) {
        char v[128], k[32];
        snprintf(v, sizeof v, "{\"id\":%d,\"region\":\"%s\",\"amount\":%d.5}", produced,
                 regions[produced % 3], produced % 50);
        snprintf(k, sizeof k, "k%d", produced);
        rd_kafka_resp_err_t e = rd_kafka_producev(
            prod, RD_KAFKA_V_TOPIC("orders"), RD_KAFKA_V_PARTITION(produced % NPARTS),
            RD_KAFKA_V_KEY(k, strlen(k)), RD_KAFKA_V_VALUE(v, strlen(v)),
            RD_KAFKA_V_HEADER("source", "mock", 4), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_END);
        if (e) printf("# produce: %s\n", rd_kafka_err2str(e));
    }
    CHECK_EQ(rd_kafka_flush(prod, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

/* A worker: a consumer source of group "g" and an engine writing
 * default.orders, both running. */
typedef struct worker {
    floe_ksource_t *src;
    floe_engine_t *eng;
} worker_t;

static int resync(void *arg, floe_err_t *err)
{
    return floe_engine_resync(arg, err);
}

static void worker_start(worker_t *w)
{
    const char *pk[] = {"bootstrap.servers", "group.id", "session.timeout.ms",
                        "heartbeat.interval.ms"};
    const char *pv[] = {bootstraps, "g", "6000", "500"};
    const char *tk[] = {"table.partition.by", "table.commit.interval.ms"};
    const char *tv[] = {"region", "500"};
    floe_ksource_table_t t = {.topic = "orders", .nconfigs = 2, .keys = tk, .values = tv};
    floe_ksource_config_t kc = {.nprops = 4,
                                .prop_keys = pk,
                                .prop_values = pv,
                                .ntables = 1,
                                .tables = &t,
                                .metadata_ms = 1000};
    floe_err_t e;
    w->src = floe_ksource_new(&kc, &e);
    CHECK(w->src != NULL);
    if (!w->src) {
        printf("# %s\n", e.msg);
        return;
    }
    floe_engine_config_t ec = {.catalog = cat, .shared = true};
    w->eng = floe_engine_new(&ec, floe_ksource_source(w->src), &e);
    CHECK(w->eng != NULL);
    floe_ksource_set_resync(w->src, resync, w->eng);
    CHECK_EQ(floe_engine_start(w->eng, &e), 0);
    int rc = floe_ksource_start(w->src, &e);
    CHECK_EQ(rc, 0);
    if (rc < 0) printf("# %s\n", e.msg);
}

/* As floe sink stops: leave the group (the engine commits what it read),
 * then stop the engine. */
static void worker_stop(worker_t *w)
{
    floe_ksource_close(w->src);
    floe_engine_stop(w->eng);
    floe_engine_free(w->eng);
    floe_ksource_free(w->src);
    memset(w, 0, sizeof *w);
}

/* Whether default.orders's floe.offsets reached every partition's end. */
static bool caught_up(void)
{
    floe_ice_table_t *t;
    floe_err_t e;
    if (floe_ice_catalog_load_table(cat, "default", "orders", &t, &e) < 0) return false;
    int64_t off[NPARTS];
    bool ok = floe_offsets_read(floe_ice_table_metadata(t), off, NPARTS, &e) == 0;
    for (int i = 0; ok && i < NPARTS; i++) ok = off[i] == ends[i];
    floe_ice_table_free(t);
    return ok;
}

static bool wait_caught_up(void)
{
    int64_t until = floe_mono_ms() + 60000;
    while (!caught_up() && floe_mono_ms() < until) usleep(100 * 1000);
    return caught_up();
}

/* The table holds every record produced once: icebird through
 * verify_table.mjs. */
static void verify(void)
{
    char loc[512], dpath[512];
    snprintf(loc, sizeof loc, "%s/warehouse/default/orders", dir);
    snprintf(dpath, sizeof dpath, "%s/orders.dump", dir);
    CHECK(tverify_table(loc, &dump, dpath, false));
}

static void one_worker_reads_the_topic(void)
{
    produce(2000);
    worker_t a;
    worker_start(&a);
    CHECK(wait_caught_up());
    floe_ksource_stats_t st;
    floe_ksource_stats(a.src, &st);
    CHECK_EQ(st.assigned, NPARTS);
    CHECK(st.records >= 2000);
    /* alone, none of its commits is refused (partitions it had not read
     * yet at its first commit among them) */
    CHECK_EQ(tverify_commit_failures(a.eng), 0);
    worker_stop(&a);
    verify();
}

static void two_workers_share_it(void)
{
    worker_t a, b;
    worker_start(&a); /* resumes from the table, not from offset 0 */
    produce(1000);
    worker_start(&b);
    produce(1000);
    /* both end up with partitions */
    int64_t until = floe_mono_ms() + 60000;
    floe_ksource_stats_t sa, sb;
    do {
        usleep(100 * 1000);
        floe_ksource_stats(a.src, &sa);
        floe_ksource_stats(b.src, &sb);
    } while ((sa.assigned == 0 || sb.assigned == 0 || sa.assigned + sb.assigned != NPARTS) &&
             floe_mono_ms() < until);
    CHECK(sa.assigned > 0 && sb.assigned > 0);
    CHECK_EQ(sa.assigned + sb.assigned, NPARTS);
    produce(1000);
    CHECK(wait_caught_up());
    worker_stop(&a); /* b takes a's partitions */
    produce(500);
    CHECK(wait_caught_up());
    worker_stop(&b);
    verify();
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/floe-test-ksource-%d", (int)getpid());
    mkdir(dir, 0755);
    char errstr[256], path[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "linger.ms", "5", errstr, sizeof errstr);
    rd_kafka_conf_set_dr_msg_cb(conf, delivered);
    prod = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!prod) return 1;
    mc = rd_kafka_mock_cluster_new(prod, 1);
    if (!mc) return 1;
    bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
    rd_kafka_conf_t *pc = rd_kafka_conf_dup(rd_kafka_conf(prod));
    rd_kafka_conf_set(pc, "bootstrap.servers", bootstraps, errstr, sizeof errstr);
    rd_kafka_conf_set_dr_msg_cb(pc, delivered);
    rd_kafka_t *p2 = rd_kafka_new(RD_KAFKA_PRODUCER, pc, errstr, sizeof errstr);
    if (!p2 || rd_kafka_mock_topic_create(mc, "orders", NPARTS, 1)) return 1;
    rd_kafka_t *holder = prod;
    prod = p2; /* produces through the mock's bootstrap */
    floe_err_t e;
    io = floe_fileio_local_new(&e);
    snprintf(path, sizeof path, "%s/warehouse", dir);
    cat = floe_ice_catalog_fs_new(io, path, &e);

    RUN(one_worker_reads_the_topic);
    RUN(two_workers_share_it);

    floe_ice_catalog_free(cat);
    floe_fileio_free(io);
    rd_kafka_destroy(prod);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(holder);
    floe_buf_free(&dump);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return t_tests_failed ? 1 : 0;
}
