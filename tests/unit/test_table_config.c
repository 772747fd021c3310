/* table.* configuration parsing and the floe.offsets summary codec, and
 * reading the offsets a table committed. */
#include <stdlib.h>
#include <string.h>

#include "table/config.h"
#include "table/offsets.h"
#include "test.h"

static const char *lookup(void *ctx, const char *key)
{
    for (const char **kv = ctx; *kv; kv += 2)
        if (!strcmp(kv[0], key)) return kv[1];
    return NULL;
}

static void defaults_and_overrides(void)
{
    floe_table_config_t c;
    floe_err_t e;
    const char *none[] = {NULL};
    CHECK_EQ(floe_table_config_load(&c, "web.events", lookup, none, NULL, NULL, &e), 0);
    CHECK(!c.enable);
    CHECK_STR(c.namespace_, "default");
    CHECK_STR(c.name, "web_events");
    CHECK_EQ(c.commit_interval_ms, 10000);
    CHECK_EQ(c.value_conv, FLOE_CONV_JSON);
    CHECK_EQ(c.key_conv, FLOE_CONV_STRING);
    CHECK_EQ_U64(c.flush_bytes, 32ull << 20);
    CHECK_EQ_U64(c.target_file_bytes, 64ull << 20);
    CHECK_EQ(c.invalid_action, FLOE_INVALID_DLQ);

    const char *server[] = {"table.commit.interval.ms", "2s", "table.flush.bytes", "8MiB", NULL};
    const char *topic[] = {"table.enable",
                           "true",
                           "table.namespace",
                           "lake",
                           "table.name",
                           "clicks",
                           "table.commit.interval.ms",
                           "500ms",
                           "table.value.converter",
                           "string",
                           "table.invalid.record.action",
                           "pause",
                           "table.partition.by",
                           "day(_kafka.timestamp)",
                           NULL};
    CHECK_EQ(floe_table_config_load(&c, "t", lookup, topic, lookup, server, &e), 0);
    CHECK(c.enable);
    CHECK_STR(c.namespace_, "lake");
    CHECK_STR(c.name, "clicks");
    CHECK_EQ(c.commit_interval_ms, 500);
    CHECK_EQ_U64(c.flush_bytes, 8ull << 20);
    CHECK_EQ(c.value_conv, FLOE_CONV_STRING);
    CHECK_EQ(c.invalid_action, FLOE_INVALID_PAUSE);
    CHECK_STR(c.partition_by, "day(_kafka.timestamp)");
    CHECK(floe_table_config_known("table.flush.bytes"));
    CHECK(!floe_table_config_known("table.bogus"));
}

static void bad_values_named(void)
{
    floe_table_config_t c;
    floe_err_t e;
    const char *bad[][2] = {
        {"table.enable", "perhaps"},          {"table.commit.interval.ms", "10us"},
        {"table.commit.interval.ms", "50ms"}, {"table.value.converter", "xml"},
        {"table.flush.bytes", "12 parsecs"},  {"table.invalid.record.action", "ignore"},
        {"table.namespace", "a.b"},           {"table.name", "x/y"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *kv[] = {bad[i][0], bad[i][1], NULL};
        CHECK_EQ(floe_table_config_load(&c, "orders", lookup, kv, NULL, NULL, &e), -1);
        CHECK(strstr(e.msg, "topic 'orders'") == e.msg);
        CHECK(strstr(e.msg, bad[i][0]) != NULL);
    }
}

static void offsets_round_trip(void)
{
    int64_t in[5] = {10, -1, 0, 9007199254740993LL, -1}, out[8];
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_offsets_encode(in, 5, &b), 0);
    CHECK_STR(floe_buf_cstr(&b), "{\"0\":10,\"2\":0,\"3\":9007199254740993}");
    size_t n;
    floe_err_t e;
    CHECK_EQ(floe_offsets_decode(floe_buf_cstr(&b), out, 8, &n, &e), 0);
    CHECK_EQ(n, 4);
    CHECK_EQ(out[0], 10);
    CHECK_EQ(out[1], -1);
    CHECK(out[3] == 9007199254740993LL);
    CHECK_EQ(out[7], -1);
    const char *bad[] = {
        "", "[]", "{\"x\":1}", "{\"0\":-5}", "{\"9\":1}", "{\"0\":\"1\"}", "{\"0\":1,\"0\":2}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(floe_offsets_decode(bad[i], out, 8, &n, &e), -1);
        CHECK_EQ(e.code, FLOE_ECORRUPT);
    }
    floe_buf_free(&b);
}

/* A snapshot (id, parent) of md whose summary holds floe.offsets = offs
 * (NULL: no offsets), made the current one. */
static void add_snapshot(floe_ice_metadata_t *md, int64_t id, int64_t parent, const char *offs)
{
    floe_ice_update_t u = {.kind = FLOE_ICE_UP_ADD_SNAPSHOT};
    floe_err_t e;
    u.snapshot = calloc(1, sizeof *u.snapshot);
    *u.snapshot = (floe_ice_snapshot_t){.snapshot_id = id,
                                        .parent_id = parent,
                                        .sequence_number = id,
                                        .timestamp_ms = 1700000000000LL + id,
                                        .manifest_list = strdup("/t/metadata/snap.avro"),
                                        .operation = strdup("append"),
                                        .schema_id = 0};
    if (offs) floe_ice_props_set(&u.snapshot->summary, FLOE_OFFSETS_KEY, offs);
    CHECK_EQ(floe_ice_update_apply(md, &u, &e), 0);
    floe_ice_update_clear(&u);
    floe_ice_update_t r = {.kind = FLOE_ICE_UP_SET_SNAPSHOT_REF};
    r.ref = (floe_ice_ref_t){.name = strdup("main"),
                             .snapshot_id = id,
                             .max_ref_age_ms = -1,
                             .max_snapshot_age_ms = -1,
                             .min_snapshots_to_keep = -1};
    CHECK_EQ(floe_ice_update_apply(md, &r, &e), 0);
    floe_ice_update_clear(&r);
}

/* A topic of any partition count resumes from the table: 5,000 partitions
 * (once a hidden limit of 4,096), offsets from the latest snapshot that
 * carries them, entries past the topic's partitions left out. */
static void offsets_of_any_partition_count(void)
{
    floe_err_t e;
    floe_ice_schema_t *s = floe_ice_schema_new(0, floe_ice_type_struct());
    floe_ice_metadata_t *md = floe_ice_metadata_new_table(s, NULL, NULL, "/t", NULL, &e);
    CHECK(md != NULL);
    size_t n = 5000;
    int64_t *out = malloc(n * sizeof *out);
    out[0] = 7;
    CHECK_EQ(floe_offsets_read(md, out, n, &e), 0); /* no snapshot yet */
    CHECK_EQ(out[0], -1);
    add_snapshot(md, 1, -1, "{\"0\":5,\"4096\":11,\"4999\":42,\"6000\":9}");
    add_snapshot(md, 2, 1, NULL); /* e.g. a compaction: no offsets of its own */
    CHECK_EQ(floe_offsets_read(md, out, n, &e), 0);
    CHECK_EQ(out[0], 5);
    CHECK_EQ(out[1], -1);
    CHECK_EQ(out[4096], 11);
    CHECK_EQ(out[4999], 42);
    CHECK_EQ(floe_offsets_read(md, out, 2, &e), 0); /* fewer partitions now */
    CHECK_EQ(out[0], 5);
    add_snapshot(md, 3, 2, "{\"2147483648\":1}"); /* not a Kafka partition */
    CHECK_EQ(floe_offsets_read(md, out, n, &e), -1);
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    free(out);
    floe_ice_metadata_free(md);
    floe_ice_schema_free(s);
}

TEST_MAIN(RUN(defaults_and_overrides); RUN(bad_values_named); RUN(offsets_round_trip);
          RUN(offsets_of_any_partition_count))
