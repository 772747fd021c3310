/* table.* configuration parsing and checking (every key from its table),
 * the floe.offsets summary codec, and reading the offsets a table committed. */
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

/* One row per table.* key: a valid value other than the default, and
 * values that must be refused.  Every key of the table needs a row. */
static const struct {
    const char *key, *valid, *bad[4];
} rows[] = {
    {"table.enable", "true", {"ture", "", "2"}},
    {"table.namespace", "lake_2", {"a.b", "x/y", ""}},
    {"table.name", "Clicks-v2", {"a b", "t.x", ""}},
    {"table.commit.interval.ms", "2s", {"abc", "50ms", "2d", "1.5ms"}},
    {"table.commit.max.bytes", "64MiB", {"lots", "1KiB", "2TiB", "-1"}},
    {"table.value.converter", "protobuf", {"xml", "", "json-schema"}},
    {"table.key.converter", "raw", {"bytes", ""}},
    {"table.value.schema.subject", "orders-value", {NULL}},
    {"table.value.schema.version", "3", {"newest", "0", "-1", "2147483648"}},
    {"table.key.schema.subject", "orders-key", {NULL}},
    {"table.flush.bytes", "8MiB", {"12 parsecs", "1023", "5GiB", "-1"}},
    {"table.target.file.size", "128MB", {"big", "100", "2TiB"}},
    {"table.invalid.record.action", "drop", {"ignore", ""}},
    {"table.partition.by", "bucket(user_id, 16)", {NULL}},
    {"table.json.infer.timestamps", "off", {"maybe"}},
    {"table.json.coerce", "yes", {"sure"}},
    {"table.retention.max.lag.bytes", "10GiB", {"lots", "-1", "", "1e9"}},
    {"table.compaction.enable", "false", {"sometimes", ""}},
    {"table.compaction.min.input.files", "12", {"1", "0", "many", "100001"}},
    {"table.compaction.interval.ms", "30s", {"99ms", "8d", "soon"}},
    {"table.compaction.max.bytes.per.run", "256MiB", {"1023", "lots", "-5"}},
    {"table.compaction.delete.percent", "25", {"-1", "101", "half"}},
    {"table.compaction.delete.files", "5", {"-1", "1000001", "many"}},
    {"table.expire.interval.ms", "5min", {"10us", "8d", "x"}},
    {"table.orphan.min.age", "3d", {"999ms", "31d", "old"}},
    {"table.json.widen.max.bytes", "0", {"big", "-5", "2000TiB"}},
    {"table.transforms", "debezium_unwrap, flatten", {"unwrap", "flatten,,flatten", ","}},
    {"table.transforms.flatten.delimiter", ".", {"", "123456789"}},
    {"table.cdc.metadata", "true", {"perhaps"}},
    {"table.write.mode", "upsert", {"merge", ""}},
    {"table.id.columns", "id, a.b", {"a,,b", ".x", "a.", ","}},
    {"table.cdc.field", "_cdc.op", {"a..b", "."}},
    {"table.upsert.delete.mode", "equality", {"none", ""}},
    {"table.upsert.index.memory.bytes", "8MiB", {"65535", "lots", "-1", "2TiB"}},
};

static int check1(const char *key, const char *value, floe_err_t *e)
{
    const char *k[] = {key}, *v[] = {value};
    return floe_table_config_check("orders", k, v, 1, NULL, NULL, e);
}

/* Each key: its valid value passes the check and changes what load
 * returns; each bad value, the range's neighbours and an unknown spelling
 * of the key are refused with a message that starts with the key. */
static void every_key_checked_where_it_enters(void)
{
    size_t n;
    const floe_conf_key_t *keys = floe_table_config_keys(&n);
    CHECK_EQ(n, sizeof rows / sizeof rows[0]);
    floe_table_config_t def, c;
    floe_err_t e;
    const char *none[] = {NULL};
    CHECK_EQ(floe_table_config_load(&def, "orders", lookup, none, NULL, NULL, &e), 0);
    for (size_t i = 0; i < n; i++) {
        const floe_conf_key_t *k = &keys[i];
        size_t r = 0;
        while (r < n && strcmp(rows[r].key, k->name)) r++;
        if (r == n) {
            printf("# no test row for %s\n", k->name);
            CHECK(r < n);
            continue;
        }
        /* valid: accepted, and the field it sets differs from the default
         * (upsert alone too: its id columns default to the key's fields) */
        CHECK_EQ(check1(k->name, rows[r].valid, &e), 0);
        const char *kv[] = {k->name, rows[r].valid, NULL};
        CHECK_EQ(floe_table_config_load(&c, "orders", lookup, kv, NULL, NULL, &e), 0);
        CHECK(memcmp((char *)&c + k->off, (char *)&def + k->off, k->size) != 0);
        /* invalid: refused, the message starts with the key */
        for (size_t b = 0; b < 4 && rows[r].bad[b]; b++) {
            floe_err_clear(&e);
            CHECK_EQ(check1(k->name, rows[r].bad[b], &e), -1);
            CHECK(!strncmp(e.msg, k->name, strlen(k->name)) && e.msg[strlen(k->name)] == ':');
            const char *bad[] = {k->name, rows[r].bad[b], NULL};
            CHECK_EQ(floe_table_config_load(&c, "orders", lookup, bad, NULL, NULL, &e), -1);
        }
        /* ranges: both ends in, one past either end out */
        if (k->type == FLOE_CONF_INT || k->type == FLOE_CONF_SIZE ||
            k->type == FLOE_CONF_DURATION) {
            char v[32];
            snprintf(v, sizeof v, "%lld", (long long)k->min);
            CHECK_EQ(check1(k->name, v, &e), 0);
            snprintf(v, sizeof v, "%lld", (long long)k->max);
            CHECK_EQ(check1(k->name, v, &e), 0);
            snprintf(v, sizeof v, "%llu", (unsigned long long)k->max + 1);
            CHECK_EQ(check1(k->name, v, &e), -1);
            CHECK(strstr(e.msg, "is outside") != NULL);
            if (k->min > 0) {
                snprintf(v, sizeof v, "%lld", (long long)k->min - 1);
                CHECK_EQ(check1(k->name, v, &e), -1);
            }
        }
        for (const floe_conf_enum_t *ev = k->values; ev && ev->name; ev++)
            CHECK_EQ(check1(k->name, ev->name, &e), 0);
        /* a typo: two neighbouring letters swapped */
        char typo[64];
        snprintf(typo, sizeof typo, "%s", k->name);
        size_t L = strlen(typo);
        char t = typo[L - 2];
        typo[L - 2] = typo[L - 1];
        typo[L - 1] = t;
        CHECK_EQ(check1(typo, "true", &e), -1);
        char want[160];
        snprintf(want, sizeof want, "%s: unknown table config (did you mean %s?)", typo, k->name);
        CHECK_STR(e.msg, want);
    }
    CHECK_EQ(check1("table.zzz", "1", &e), -1);
    CHECK_STR(e.msg, "table.zzz: unknown table config");
    /* keys outside table.* are the broker's to judge */
    CHECK_EQ(check1("retention.ms", "soon", &e), 0);
}

/* The messages the issue names, as a client shows them. */
static void messages_name_the_key(void)
{
    floe_err_t e;
    CHECK_EQ(check1("table.enable", "ture", &e), -1);
    CHECK_STR(e.msg, "table.enable: invalid boolean 'ture': expected true or false");
    CHECK_EQ(check1("table.commit.interval.ms", "abc", &e), -1);
    CHECK(!strncmp(e.msg, "table.commit.interval.ms: invalid duration 'abc'", 48));
    CHECK_EQ(check1("table.enabel", "true", &e), -1);
    CHECK_STR(e.msg, "table.enabel: unknown table config (did you mean table.enable?)");
    CHECK_EQ(check1("table.commit.interval.ms", "50ms", &e), -1);
    CHECK_STR(e.msg, "table.commit.interval.ms: 50ms is outside 100ms..1d");
    CHECK_EQ(check1("table.value.converter", "xml", &e), -1);
    CHECK_STR(
        e.msg,
        "table.value.converter: 'xml' is not json, string, raw, avro, protobuf or json_schema");
}

/* table.flush.bytes above table.target.file.size: refused when the topic
 * sets both; a flush size meeting a smaller target from elsewhere is
 * capped, as before. */
static void flush_above_target_file_size(void)
{
    floe_err_t e;
    const char *k[] = {"table.flush.bytes", "table.target.file.size"};
    const char *v[] = {"64MiB", "16MiB"};
    CHECK_EQ(floe_table_config_check("t", k, v, 2, NULL, NULL, &e), -1);
    CHECK(!strncmp(e.msg, "table.flush.bytes: 64MiB is above table.target.file.size 16MiB", 62));
    const char *ok[] = {"16MiB", "16MiB"};
    CHECK_EQ(floe_table_config_check("t", k, ok, 2, NULL, NULL, &e), 0);
    const char *server[] = {"table.flush.bytes", "64MiB", NULL};
    CHECK_EQ(floe_table_config_check("t", k + 1, v + 1, 1, lookup, server, &e), 0);
    const char *topic[] = {"table.target.file.size", "16MiB", NULL};
    floe_table_config_t c;
    CHECK_EQ(floe_table_config_load(&c, "t", lookup, topic, lookup, server, &e), 0);
    CHECK_EQ_U64(c.flush_bytes, 16ull << 20);
}

/* Which keys a running table takes as they come (live) and which rebuild
 * it: the answer comes from the key table, key by key. */
static void live_keys_apply_others_rebuild(void)
{
    size_t n;
    const floe_conf_key_t *keys = floe_table_config_keys(&n);
    floe_err_t e;
    const char *none[] = {NULL};
    floe_table_config_t run, next;
    CHECK_EQ(floe_table_config_load(&run, "t", lookup, none, NULL, NULL, &e), 0);
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = 0;
        while (r < n && strcmp(rows[r].key, keys[i].name)) r++;
        if (r == n) continue;
        const char *kv[] = {keys[i].name, rows[r].valid, NULL};
        floe_table_config_t was;
        CHECK_EQ(floe_table_config_load(&was, "t", lookup, none, NULL, NULL, &e), 0);
        CHECK_EQ(floe_table_config_load(&next, "t", lookup, kv, NULL, NULL, &e), 0);
        CHECK_EQ(floe_table_config_identity_changed(&was, &next), !keys[i].live);
        floe_table_config_t cur = was;
        floe_table_config_apply_live(&cur, &next);
        CHECK_EQ(memcmp(&cur, &next, sizeof cur) == 0, keys[i].live);
        CHECK_EQ(floe_table_config_live_changed(&was, &next), keys[i].live);
        live += keys[i].live;
    }
    CHECK(!floe_table_config_live_changed(&run, &run));
    /* interval, commit size, flush, file size, invalid action, partition
     * spec, widening bound, retention lag (the broker reads it) and the six
     * of maintenance */
    CHECK_EQ(live, 16);
}

static void wanted_unless_a_valid_false(void)
{
    const char *none[] = {NULL}, *on[] = {"table.enable", "true", NULL},
               *off[] = {"table.enable", "false", NULL}, *typo[] = {"table.enable", "ture", NULL};
    CHECK(!floe_table_config_wanted(lookup, none, NULL, NULL));
    CHECK(floe_table_config_wanted(lookup, on, NULL, NULL));
    CHECK(!floe_table_config_wanted(lookup, off, NULL, NULL));
    CHECK(floe_table_config_wanted(lookup, typo, NULL, NULL));
    CHECK(floe_table_config_wanted(lookup, none, lookup, on));
    CHECK(!floe_table_config_wanted(lookup, off, lookup, on));
}

/* The configuration reference has a row per key, and says which are live. */
static void reference_lists_every_key(void)
{
    size_t n;
    const floe_conf_key_t *keys = floe_table_config_keys(&n);
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_conf_markdown(keys, n, true, &b), 0);
    for (size_t i = 0; i < n; i++) {
        char row[80];
        snprintf(row, sizeof row, "\n| `%s` |", keys[i].name);
        const char *p = strstr(floe_buf_cstr(&b), row);
        CHECK(p && !strstr(p + 1, row));
    }
    CHECK(strstr(floe_buf_cstr(&b),
                 "| `table.commit.interval.ms` | duration, 100ms..1d | `10s` | yes |"));
    CHECK(strstr(floe_buf_cstr(&b), "| `table.value.converter` | `json`, `string`, `raw`, `avro`, "
                                    "`protobuf`, `json_schema` | `json` | no |"));
    floe_buf_free(&b);
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

TEST_MAIN(RUN(defaults_and_overrides); RUN(bad_values_named);
          RUN(every_key_checked_where_it_enters); RUN(messages_name_the_key);
          RUN(flush_above_target_file_size); RUN(live_keys_apply_others_rebuild);
          RUN(wanted_unless_a_valid_false); RUN(reference_lists_every_key); RUN(offsets_round_trip);
          RUN(offsets_of_any_partition_count))
