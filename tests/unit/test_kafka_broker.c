/* The broker's topic registry: validation, persistence across reopen,
 * configs with defaults, partitions, deletion, producer-id blocks,
 * durability callbacks, metadata writes that fail; table.* configs checked
 * as a whole at create and alter by the table engine's check, wired as
 * `floe serve` wires it. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kafka/broker.h"
#include "table/config.h"
#include "util/diag.h"
#include "test.h"

static char dir[256];

static void rm_rf(const char *p)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    CHECK(system(cmd) == 0);
}

static floe_broker_t *open_checked(const floe_kv_t *defs, int n, floe_topic_configs_check_fn check,
                                   void *arg)
{
    floe_broker_config_t c = {.data_dir = dir,
                              .auto_create_topics = true,
                              .default_partitions = 2,
                              .acks_all_fsync = true,
                              .flush_interval_ms = 1000,
                              .topic_defaults = defs,
                              .ntopic_defaults = n,
                              .check_configs = check,
                              .check_arg = arg};
    floe_broker_t *b = NULL;
    floe_err_t err;
    CHECK_EQ(floe_broker_open(&c, &b, &err), 0);
    return b;
}

static floe_broker_t *open_b(const floe_kv_t *defs, int n)
{
    return open_checked(defs, n, NULL, NULL);
}

static const char *server_default(void *ctx, const char *key)
{
    for (const floe_kv_t *d = ctx; d->key; d++)
        if (!strcmp(d->key, key)) return d->value;
    return NULL;
}

static int check_tables(void *arg, const char *topic, const char *const *keys,
                        const char *const *values, size_t n, floe_err_t *err)
{
    return floe_table_config_check(topic, keys, values, n, server_default, arg, err);
}

/* Unknown and bad table.* keys are refused with INVALID_CONFIG naming the
 * key, at create and at alter; an alter is checked for the set it makes
 * (a change fine alone, contradicting a kept key, is refused), and
 * validate_only checks without changing anything. */
static void table_configs_checked_where_they_enter(void)
{
    floe_kv_t defs[] = {{"table.target.file.size", "16MiB"}, {NULL, NULL}};
    floe_broker_t *b = open_checked(defs, 1, check_tables, defs);
    if (!b) return;
    floe_err_t err;
    int16_t kerr;
    floe_topic_t *t = NULL;
    const floe_kv_t bad[][2] = {{{"table.enable", "ture"}, {"retention.ms", "1000"}},
                                {{"table.enable", "true"}, {"table.commit.interval.ms", "abc"}},
                                {{"table.enabel", "true"}, {"retention.ms", "1000"}}};
    const char *why[] = {"table.enable: invalid boolean 'ture'",
                         "table.commit.interval.ms: invalid duration 'abc'",
                         "table.enabel: unknown table config (did you mean table.enable?)"};
    for (int i = 0; i < 3; i++)
        for (int vo = 0; vo < 2; vo++) {
            CHECK_EQ(floe_broker_create_topic(b, "t", 1, bad[i], 2, vo, NULL, &kerr, &err), -1);
            CHECK_EQ(kerr, 40);
            CHECK(!strncmp(err.msg, why[i], strlen(why[i])));
        }
    CHECK(floe_broker_topic(b, "t", 1) == NULL);
    floe_kv_t good[] = {{"table.enable", "true"}, {"table.commit.interval.ms", "2s"}};
    CHECK_EQ(floe_broker_create_topic(b, "t", 1, good, 2, false, &t, &kerr, &err), 0);
    if (!t) return;
    /* alter, AlterConfigs (replace) and IncrementalAlterConfigs (merge) */
    const floe_kv_t change[] = {
        {"table.enable", "ture"}, {"table.commit.interval.ms", "abc"}, {"table.enabel", "true"}};
    for (int inc = 0; inc < 2; inc++)
        for (int i = 0; i < 3; i++)
            for (int vo = 0; vo < 2; vo++) {
                CHECK_EQ(floe_broker_alter_configs(b, t, &change[i], 1, !inc, vo, &kerr, &err), -1);
                CHECK_EQ(kerr, 40);
                CHECK(!strncmp(err.msg, why[i], strlen(why[i])));
            }
    bool d;
    CHECK_STR(floe_topic_config(t, "table.commit.interval.ms", &d), "2s");
    /* flush.bytes 32MiB is fine alone over the 16MiB server default; with
     * the topic's own target size of 8MiB (kept from before) it is not */
    floe_kv_t target[] = {{"table.target.file.size", "8MiB"}};
    CHECK_EQ(floe_broker_alter_configs(b, t, target, 1, false, false, &kerr, &err), 0);
    floe_kv_t flush[] = {{"table.flush.bytes", "32MiB"}};
    CHECK_EQ(floe_broker_alter_configs(b, t, flush, 1, true, false, &kerr, &err), 0);
    CHECK_EQ(floe_broker_alter_configs(b, t, target, 1, false, false, &kerr, &err), -1);
    CHECK_EQ(kerr, 40);
    CHECK(!strncmp(err.msg, "table.flush.bytes: 32MiB is above table.target.file.size 8MiB", 60));
    /* validate_only: a good change is checked, not applied */
    floe_kv_t on[] = {{"table.enable", "true"}};
    CHECK_EQ(floe_broker_alter_configs(b, t, on, 1, false, true, &kerr, &err), 0);
    CHECK(floe_topic_config(t, "table.enable", &d) == NULL);
    CHECK_EQ(floe_broker_alter_configs(b, t, on, 1, false, false, &kerr, &err), 0);
    CHECK_STR(floe_topic_config(t, "table.enable", &d), "true");
    CHECK_STR(floe_topic_config(t, "table.flush.bytes", &d), "32MiB");
    floe_broker_close(b);
}

static void topics_persist(void)
{
    floe_kv_t defs[] = {{"retention.bytes", "1000000"}, {"table.namespace", "lake"}};
    floe_broker_t *b = open_b(defs, 2);
    if (!b) return;
    floe_err_t err;
    int16_t kerr;
    floe_topic_t *t;
    floe_kv_t cfg[] = {{"retention.ms", "3600000"}, {"table.enable", "true"}};
    CHECK_EQ(floe_broker_create_topic(b, "orders", 3, cfg, 2, false, &t, &kerr, &err), 0);
    CHECK_EQ(floe_topic_partitions(t), 3);
    CHECK(floe_topic_log(t, 2) != NULL && floe_topic_log(t, 3) == NULL);
    /* errors */
    CHECK_EQ(floe_broker_create_topic(b, "orders", 1, NULL, 0, false, NULL, &kerr, &err), -1);
    CHECK_EQ(kerr, 36);
    CHECK_EQ(floe_broker_create_topic(b, "bad/name", 1, NULL, 0, false, NULL, &kerr, &err), -1);
    CHECK_EQ(kerr, 17);
    floe_kv_t bad[] = {{"no.such.thing", "1"}};
    CHECK_EQ(floe_broker_create_topic(b, "x", 1, bad, 1, false, NULL, &kerr, &err), -1);
    CHECK_EQ(kerr, 40);
    CHECK(strstr(err.msg, "no.such.thing") != NULL);
    floe_kv_t badv[] = {{"message.timestamp.type", "Tomorrow"}};
    CHECK_EQ(floe_broker_create_topic(b, "x", 1, badv, 1, false, NULL, &kerr, &err), -1);
    CHECK_EQ(kerr, 40);
    CHECK_EQ(floe_broker_create_topic(b, "x", 0, NULL, 0, false, NULL, &kerr, &err), -1);
    CHECK_EQ(kerr, 37);
    CHECK_EQ(floe_broker_create_topic(b, "v", 1, NULL, 0, true, NULL, &kerr, &err), 0);
    CHECK(floe_broker_topic(b, "v", 1) == NULL); /* validate only */
    /* configs: own, server default, Kafka default */
    bool d;
    CHECK_STR(floe_topic_config(t, "retention.ms", &d), "3600000");
    CHECK(!d);
    CHECK_STR(floe_topic_config(t, "retention.bytes", &d), "1000000");
    CHECK(d);
    CHECK_STR(floe_topic_config(t, "segment.bytes", &d), "1073741824");
    CHECK_STR(floe_topic_config(t, "table.enable", &d), "true");
    CHECK_STR(floe_topic_config(t, "table.namespace", &d), "lake");
    /* incremental alter: set one, delete one */
    floe_kv_t ch[] = {{"table.enable", NULL}, {"message.timestamp.type", "LogAppendTime"}};
    CHECK_EQ(floe_broker_alter_configs(b, t, ch, 2, false, false, &kerr, &err), 0);
    CHECK(floe_topic_log_append_time(t));
    CHECK_EQ(floe_broker_add_partitions(b, t, 2, false, &kerr, &err), -1);
    CHECK_EQ(kerr, 37);
    CHECK_EQ(floe_broker_add_partitions(b, t, 5, false, &kerr, &err), 0);
    uint8_t id[16];
    memcpy(id, floe_topic_id(t), 16);
    int64_t p1 = floe_broker_next_producer_id(b, &err), p2 = floe_broker_next_producer_id(b, &err);
    CHECK(p1 >= 0 && p2 == p1 + 1);
    floe_broker_close(b);

    b = open_b(defs, 2);
    if (!b) return;
    t = floe_broker_topic(b, "orders", 6);
    CHECK(t != NULL);
    if (!t) return;
    CHECK(floe_broker_topic_by_id(b, id) == t);
    CHECK_EQ(floe_topic_partitions(t), 5);
    CHECK(floe_topic_config(t, "table.enable", &d) == NULL);
    CHECK_STR(floe_topic_config(t, "retention.ms", &d), "3600000");
    CHECK(floe_topic_log_append_time(t));
    int64_t p3 = floe_broker_next_producer_id(b, &err);
    CHECK(p3 > p2);
    /* delete removes the logs and the description */
    CHECK_EQ(floe_broker_delete_topic(b, t, &err), 0);
    char path[400];
    snprintf(path, sizeof path, "%s/log/orders-0", dir);
    struct stat st;
    CHECK(stat(path, &st) != 0);
    floe_broker_close(b);
    b = open_b(NULL, 0);
    CHECK(b && floe_broker_topic(b, "orders", 6) == NULL);
    /* a partition directory without a description (a deletion cut short)
     * does not leak into a new topic of the same name */
    snprintf(path, sizeof path, "%s/log/orders-0/00000000000000000000.log", dir);
    char mk[1200];
    snprintf(mk, sizeof mk, "mkdir -p %s/log/orders-0 && head -c 100 /dev/urandom > %s", dir, path);
    CHECK(system(mk) == 0);
    CHECK_EQ(floe_broker_create_topic(b, "orders", 1, NULL, 0, false, &t, &kerr, &err), 0);
    CHECK_EQ(floe_log_end_offset(floe_topic_log(t, 0)), 0);
    floe_broker_close(b);
}

/* Writing or removing topic metadata and producer-id blocks fails loudly:
 * the caller gets the error and the registry stays as it was; a damaged
 * producer-ids file stops the broker from opening (reusing ids would
 * break idempotent producers). */
static void metadata_failures_are_errors(void)
{
    floe_broker_t *b = open_b(NULL, 0);
    if (!b) return;
    floe_err_t err;
    int16_t kerr = 0;
    char mk[1200];
    /* a directory where the description's temp file goes */
    snprintf(mk, sizeof mk, "mkdir -p %s/meta/topics/blocked.json.tmp/x", dir);
    CHECK(system(mk) == 0);
    CHECK_EQ(floe_broker_create_topic(b, "blocked", 1, NULL, 0, false, NULL, &kerr, &err), -1);
    CHECK_EQ(kerr, FLOE_KERR_UNKNOWN_SERVER_ERROR);
    CHECK(strstr(err.msg, "blocked.json") != NULL);
    CHECK(floe_broker_topic(b, "blocked", 7) == NULL);
    /* the same for a producer-id block */
    snprintf(mk, sizeof mk, "mkdir -p %s/meta/producer-ids.tmp/x", dir);
    CHECK(system(mk) == 0);
    CHECK_EQ(floe_broker_next_producer_id(b, &err), -1);
    CHECK(strstr(err.msg, "producer-ids") != NULL);
    /* a description that cannot be removed: the delete says so */
    floe_topic_t *t;
    CHECK_EQ(floe_broker_create_topic(b, "gone", 1, NULL, 0, false, &t, &kerr, &err), 0);
    snprintf(mk, sizeof mk, "rm %s/meta/topics/gone.json && mkdir -p %s/meta/topics/gone.json/x",
             dir, dir);
    CHECK(system(mk) == 0);
    CHECK_EQ(floe_broker_delete_topic(b, t, &err), -1);
    CHECK(strstr(err.msg, "gone.json") != NULL);
    CHECK(floe_broker_topic(b, "gone", 4) == NULL);
    floe_broker_close(b);
    snprintf(mk, sizeof mk,
             "rm -rf %s/meta/topics/gone.json && echo garbage > %s/meta/producer-ids", dir, dir);
    CHECK(system(mk) == 0);
    floe_broker_config_t c = {.data_dir = dir};
    b = NULL;
    CHECK_EQ(floe_broker_open(&c, &b, &err), -1);
    CHECK_EQ(err.code, FLOE_ECORRUPT);
    CHECK(strstr(err.msg, "producer-ids") != NULL);
}

static int durable_calls, durable_ok;
static void on_durable(void *arg, bool ok)
{
    floe_loop_t *loop = arg;
    durable_calls++;
    durable_ok += ok;
    floe_loop_stop(loop);
}

static void durability_wait(void)
{
    floe_broker_t *b = open_b(NULL, 0);
    if (!b) return;
    floe_loop_t *loop;
    floe_err_t err;
    CHECK_EQ(floe_loop_new(&loop, &err), 0);
    floe_broker_attach_loop(b, loop);
    int16_t kerr;
    floe_topic_t *t;
    CHECK_EQ(floe_broker_create_topic(b, "d", 1, NULL, 0, false, &t, &kerr, &err), 0);
    floe_log_t *l = floe_topic_log(t, 0);
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    floe_batch_builder_t *bb = floe_batch_builder_new(&o);
    CHECK(bb != NULL);
    floe_slice_t k = floe_slice("k", 1), v = floe_slice("v", 1);
    CHECK_EQ(floe_batch_builder_add(bb, 1000, &k, &v, NULL, 0, &err), 0);
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_batch_builder_finish(bb, &out, &err), 0);
    floe_log_append_result_t res;
    CHECK_EQ(floe_log_append(l, out.data, out.len, -1, &res, &err), 0);
    CHECK_EQ(floe_broker_when_durable(b, l, res.last_offset + 1, on_durable, loop), 0);
    CHECK_EQ(floe_loop_run(loop, &err), 0);
    CHECK_EQ(durable_calls, 1);
    CHECK_EQ(durable_ok, 1);
    CHECK(floe_log_durable_offset(l) >= 1);
    /* already durable: called at once */
    CHECK_EQ(floe_broker_when_durable(b, l, 1, on_durable, loop), 0);
    CHECK_EQ(durable_calls, 2);
    floe_buf_free(&out);
    floe_batch_builder_free(bb);
    floe_broker_close(b);
    floe_loop_free(loop);
}

/* ---- retention and DeleteRecords under a table's floor ---- */

static int64_t g_floor, g_max_held;

/* As `floe serve` wires it: topic "tbl" is a table topic whose table has
 * committed up to g_floor; other topics have no floor. */
static int floor_hook(void *arg, floe_topic_t *t, int32_t p, floe_retention_floor_t *out)
{
    (void)arg;
    (void)p;
    if (strcmp(floe_topic_name(t), "tbl")) return 0;
    out->offset = g_floor;
    out->max_held_bytes = g_max_held;
    return 1;
}

static void append_old(floe_log_t *l, int n)
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    floe_err_t err;
    for (int i = 0; i < n; i++) {
        floe_batch_builder_t *bb = floe_batch_builder_new(&o);
        floe_slice_t v = floe_slice("0123456789abcdef", 16);
        CHECK_EQ(floe_batch_builder_add(bb, 1000 + i, NULL, &v, NULL, 0, &err), 0);
        CHECK_EQ(floe_batch_builder_add(bb, 1000 + i, NULL, &v, NULL, 0, &err), 0);
        floe_buf_t out = FLOE_BUF_INIT;
        CHECK_EQ(floe_batch_builder_finish(bb, &out, &err), 0);
        CHECK_EQ(floe_log_append(l, out.data, out.len, -1, NULL, &err), 0);
        floe_buf_free(&out);
        floe_batch_builder_free(bb);
    }
}

/* Run the tick so that retention runs (its interval is 1 ms). */
static void retention_tick(floe_broker_t *b)
{
    usleep(3000);
    floe_broker_tick(b);
}

/* Lines of path holding needle. */
static int count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) n += strstr(line, needle) != NULL;
    if (f) fclose(f);
    return n;
}

/* Time and size retention and DeleteRecords never pass the floor of a
 * table topic (design.md invariant 8): an unknown floor (0) keeps
 * everything, a committed offset keeps what is at or above it, and one
 * WARN line a minute says retention is held back; max_held_bytes lets the
 * oldest go and the offsets past the floor are logged; DeleteRecords
 * stops at the floor with POLICY_VIOLATION and the low watermark reached,
 * whatever max_held_bytes says; a topic without a floor is Kafka's. */
static void retention_waits_for_the_table(void)
{
    floe_broker_config_t c = {.data_dir = dir,
                              .default_partitions = 1,
                              .flush_interval_ms = 1000,
                              .retention_check_ms = 1,
                              .retention_floor = floor_hook};
    floe_broker_t *b = NULL;
    floe_err_t err;
    CHECK_EQ(floe_broker_open(&c, &b, &err), 0);
    if (!b) return;
    floe_kv_t cfg[] = {{"segment.bytes", "500"}, {"retention.ms", "1000"}};
    int16_t kerr;
    floe_topic_t *tbl, *plain;
    CHECK_EQ(floe_broker_create_topic(b, "tbl", 1, cfg, 2, false, &tbl, &kerr, &err), 0);
    CHECK_EQ(floe_broker_create_topic(b, "plain", 1, cfg, 2, false, &plain, &kerr, &err), 0);
    floe_log_t *lt = floe_topic_log(tbl, 0), *lp = floe_topic_log(plain, 0);
    append_old(lt, 50); /* offsets 0..99, every record long expired */
    append_old(lp, 50);
    uint64_t size0 = floe_log_size_bytes(lt);
    g_floor = 0; /* the engine has not said yet */
    g_max_held = -1;
    char path[300];
    snprintf(path, sizeof path, "%s.stderr", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    floe_broker_tick(b); /* the first tick only schedules retention */
    retention_tick(b);
    CHECK_EQ(floe_log_start_offset(lt), 0);
    CHECK_EQ_U64(floe_log_size_bytes(lt), size0);
    CHECK_EQ_U64(floe_log_retention_held(lt), size0);
    CHECK_EQ(floe_log_start_offset(lp), 100); /* plain: all gone */
    /* the table committed [0, 57) */
    g_floor = 57;
    retention_tick(b);
    int64_t start = floe_log_start_offset(lt);
    CHECK(start > 0 && start <= 57);
    CHECK(floe_log_retention_held(lt) > 0);
    /* DeleteRecords: up to the floor, and the client hears it stopped */
    int64_t low;
    floe_broker_delete_records(b, tbl, 0, 90, &low, &kerr);
    CHECK_EQ(kerr, FLOE_KERR_POLICY_VIOLATION);
    CHECK_EQ(low, 57);
    CHECK_EQ(floe_log_start_offset(lt), 57);
    floe_broker_delete_records(b, tbl, 0, -1, &low, &kerr);
    CHECK_EQ(kerr, FLOE_KERR_POLICY_VIOLATION);
    CHECK_EQ(low, 57);
    floe_broker_delete_records(b, tbl, 0, 40, &low, &kerr); /* below: nothing to do */
    CHECK_EQ(kerr, 0);
    CHECK_EQ(low, 57);
    floe_broker_delete_records(b, tbl, 0, 101, &low, &kerr);
    CHECK_EQ(kerr, FLOE_KERR_OFFSET_OUT_OF_RANGE);
    floe_broker_delete_records(b, tbl, 1, 10, &low, &kerr);
    CHECK_EQ(kerr, FLOE_KERR_UNKNOWN_TOPIC_OR_PARTITION);
    /* the limit lets the oldest go, down to 600 held bytes; DeleteRecords
     * still stops at the floor */
    g_max_held = 600;
    retention_tick(b);
    int64_t start2 = floe_log_start_offset(lt);
    CHECK(start2 > 57);
    CHECK(floe_log_retention_held(lt) <= 600);
    floe_broker_delete_records(b, tbl, 0, 100, &low, &kerr);
    CHECK_EQ(kerr, FLOE_KERR_POLICY_VIOLATION);
    CHECK_EQ(low, start2);
    /* caught up: everything may go */
    g_floor = 100;
    retention_tick(b);
    CHECK_EQ(floe_log_start_offset(lt), 100);
    CHECK_EQ_U64(floe_log_retention_held(lt), 0);
    floe_broker_delete_records(b, plain, 0, -1, &low, &kerr);
    CHECK_EQ(kerr, 0);
    CHECK_EQ(low, 100);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    /* three runs held bytes back within a minute: one line */
    CHECK_EQ(count_lines(path, "tbl-0: retention is held back"), 1);
    CHECK_EQ(count_lines(path, "plain-0: retention is held back"), 0);
    char want[200];
    snprintf(want, sizeof want, "tbl-0: retention deleted offsets [57, %lld)", (long long)start2);
    CHECK_EQ(count_lines(path, want), 1);
    CHECK_EQ(count_lines(path, "delete records tbl-0 before 90: held at 57"), 1);
    unlink(path);
    floe_broker_close(b);
}

int main(void)
{
    floe_diag_set_level(FLOE_DIAG_WARN);
    snprintf(dir, sizeof dir, "/tmp/floe-broker-test-%d", (int)getpid());
    rm_rf(dir);
    RUN(topics_persist);
    rm_rf(dir);
    RUN(durability_wait);
    rm_rf(dir);
    RUN(metadata_failures_are_errors);
    rm_rf(dir);
    RUN(table_configs_checked_where_they_enter);
    rm_rf(dir);
    RUN(retention_waits_for_the_table);
    rm_rf(dir);
    return t_tests_failed ? 1 : 0;
}
