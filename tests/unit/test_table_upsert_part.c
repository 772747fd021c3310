/* Partitioned upsert tables: position deletes grouped by the partition of
 * the data file each names (table/upsert.h floe_tupsert_posdel_group), the
 * map of data files to partitions, and the default id columns taken from
 * a record key (floe_tupsert_ids_from_key, and the converter's tombstones
 * of a plain key). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/convert.h"
#include "table/upsert.h"
#include "conv_put.h"
#include "test.h"

static floe_ice_value_t str_value(const char *s)
{
    floe_ice_value_t v = {0};
    if (floe_ice_value_set_bytes(&v, FLOE_ICE_STRING, s, strlen(s)) < 0) abort();
    return v;
}

static floe_ice_value_t int_value(int32_t i)
{
    floe_ice_value_t v = {.kind = FLOE_ICE_INT};
    v.v.i = i;
    return v;
}

/* Put path in spec 1's partition (region, bucket); region NULL: null. */
static void put_file(floe_tupsert_parts_t *p, const char *path, const char *region, int32_t b)
{
    floe_ice_value_t vals[2] = {region ? str_value(region) : (floe_ice_value_t){.is_null = true},
                                int_value(b)};
    floe_err_t e;
    CHECK_EQ(floe_tupsert_parts_put(p, path, 1, vals, 2, &e), 0);
    floe_ice_value_clear(&vals[0]);
}

static void position_deletes_group_by_the_old_rows_partition(void)
{
    floe_tupsert_parts_t *p = floe_tupsert_parts_new();
    CHECK(p != NULL);
    put_file(p, "d/eu-0-a.parquet", "eu", 0);
    put_file(p, "d/eu-0-b.parquet", "eu", 0); /* a second file of the same partition */
    put_file(p, "d/eu-1.parquet", "eu", 1);
    put_file(p, "d/us-0.parquet", "us", 0);
    put_file(p, "d/null-0.parquet", NULL, 0);
    floe_err_t e;
    CHECK_EQ(floe_tupsert_parts_put(p, "d/old.parquet", 0, NULL, 0, &e), 0); /* spec 0 */
    put_file(p, "d/us-0.parquet", "eu", 1); /* known: keeps its first partition */
    CHECK_EQ(floe_tupsert_parts_count(p), 6);

    /* the rows an update of every key replaced, in key order (the new
     * rows are elsewhere: their partitions do not matter here) */
    floe_tupsert_posdel_t d[] = {
        {"d/us-0.parquet", 7, NULL},   {"d/eu-0-b.parquet", 2, NULL}, {"d/eu-1.parquet", 0, NULL},
        {"d/old.parquet", 4, NULL},    {"d/eu-0-a.parquet", 9, NULL}, {"d/null-0.parquet", 1, NULL},
        {"d/eu-0-a.parquet", 3, NULL}, {"d/us-0.parquet", 2, NULL},   {"d/old.parquet", 1, NULL},
    };
    size_t n = sizeof d / sizeof d[0], ends[16], ng = 0;
    CHECK_EQ(floe_tupsert_posdel_group(p, d, n, ends, &ng, &e), 0);
    CHECK_EQ(ng, 5); /* spec 0; (eu,0); (eu,1); (us,0); (null,0) */
    CHECK_EQ(ends[ng - 1], n);
    size_t seen_eu0 = 0;
    for (size_t g = 0, from = 0; g < ng; from = ends[g++]) {
        CHECK(ends[g] > from);
        const floe_tupsert_part_t *pt = d[from].part;
        for (size_t i = from; i < ends[g]; i++) {
            /* one partition per run, and it is the partition of the file */
            CHECK(d[i].part == floe_tupsert_parts_get(p, d[i].path));
            CHECK_EQ(d[i].part->spec_id, pt->spec_id);
            CHECK_EQ(d[i].part->key.len, pt->key.len);
            CHECK(!memcmp(d[i].part->key.data, pt->key.data, pt->key.len));
            /* sorted by path, then position, as the spec wants */
            if (i > from) {
                int c = strcmp(d[i - 1].path, d[i].path);
                CHECK(c < 0 || (c == 0 && d[i - 1].pos < d[i].pos));
            }
        }
        if (!strcmp(d[from].path, "d/eu-0-a.parquet")) {
            seen_eu0 = ends[g] - from;
            CHECK_EQ(pt->nvalues, 2);
            CHECK_EQ((int)pt->values[1].v.i, 0);
            CHECK_EQ(pt->values[0].len, 2);
            CHECK(!memcmp(pt->values[0].bytes, "eu", 2));
            CHECK_STR(d[ends[g] - 1].path, "d/eu-0-b.parquet");
            CHECK_EQ(d[from].pos, 3);
            CHECK_EQ(d[from + 1].pos, 9);
        }
        if (!strcmp(d[from].path, "d/old.parquet")) {
            CHECK_EQ(pt->spec_id, 0);
            CHECK_EQ(pt->nvalues, 0);
            CHECK_EQ(ends[g] - from, 2);
        }
        if (!strcmp(d[from].path, "d/null-0.parquet")) CHECK(pt->values[0].is_null);
    }
    CHECK_EQ(seen_eu0, 3); /* two files of one partition share one delete file */

    /* a path the table does not hold is refused, not put anywhere */
    floe_tupsert_posdel_t bad[] = {{"d/eu-1.parquet", 1, NULL}, {"d/gone.parquet", 0, NULL}};
    CHECK_EQ(floe_tupsert_posdel_group(p, bad, 2, ends, &ng, &e), -1);
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    CHECK(strstr(e.msg, "gone.parquet") != NULL);

    /* the snapshot the map reflects */
    CHECK(!floe_tupsert_parts_reflects(p, "u-1", 5));
    floe_tupsert_parts_set_state(p, "u-1", 5);
    CHECK(floe_tupsert_parts_reflects(p, "u-1", 5));
    CHECK(!floe_tupsert_parts_reflects(p, "u-1", 6));
    CHECK(!floe_tupsert_parts_reflects(p, "u-2", 5));
    floe_tupsert_parts_free(p);
}

static void many_files_keep_their_partitions(void)
{
    floe_tupsert_parts_t *p = floe_tupsert_parts_new();
    char path[64];
    for (int i = 0; i < 5000; i++) {
        snprintf(path, sizeof path, "data/f%d.parquet", i);
        put_file(p, path, i % 3 ? "eu" : "us", i % 7);
    }
    CHECK_EQ(floe_tupsert_parts_count(p), 5000);
    for (int i = 0; i < 5000; i += 37) {
        snprintf(path, sizeof path, "data/f%d.parquet", i);
        const floe_tupsert_part_t *pt = floe_tupsert_parts_get(p, path);
        CHECK(pt != NULL);
        CHECK_EQ((int)pt->values[1].v.i, i % 7);
        CHECK(!memcmp(pt->values[0].bytes, i % 3 ? "eu" : "us", 2));
    }
    CHECK(floe_tupsert_parts_get(p, "data/f5000.parquet") == NULL);
    floe_tupsert_parts_free(p);
}

static void default_ids_are_the_key_fields(void)
{
    char ids[256];
    floe_err_t e;
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("{\"id\":5}"), ids, sizeof ids, &e), 0);
    CHECK_STR(ids, "id");
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("{\"tenant\":\"a\",\"id\":5}"), ids,
                                       sizeof ids, &e),
             0);
    CHECK_STR(ids, "tenant,id");
    /* Debezium's JsonConverter envelope */
    CHECK_EQ(floe_tupsert_ids_from_key(
                 floe_slice_str("{\"schema\":{\"type\":\"struct\"},\"payload\":{\"order_id\":1}}"),
                 ids, sizeof ids, &e),
             0);
    CHECK_STR(ids, "order_id");
    /* any other key: the key converter's column */
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("17"), ids, sizeof ids, &e), 0);
    CHECK_STR(ids, "_kafka.key");
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("user-9"), ids, sizeof ids, &e), 0);
    CHECK_STR(ids, "_kafka.key");
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("[1,2]"), ids, sizeof ids, &e), 0);
    CHECK_STR(ids, "_kafka.key");
    /* no usable field */
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("{}"), ids, sizeof ids, &e), -1);
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("{\"a.b\":1}"), ids, sizeof ids, &e), -1);
    CHECK_EQ(floe_tupsert_ids_from_key(
                 floe_slice_str("{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,"
                                "\"h\":8,\"i\":9}"),
                 ids, sizeof ids, &e),
             -1); /* more than FLOE_TUPSERT_MAX_IDS */
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("{\"id\":5}"), ids, 2, &e), -1);
    /* the result parses as table.id.columns */
    floe_tupsert_cols_t c;
    CHECK_EQ(floe_tupsert_ids_from_key(floe_slice_str("{\"a\":1,\"b\":2}"), ids, sizeof ids, &e),
             0);
    CHECK_EQ(floe_tupsert_cols_parse(ids, "", &c, &e), 0);
    CHECK_EQ(c.nids, 2);
    CHECK_STR(c.ids[1], "b");
}

static void plain_keys_are_the_kafka_key_column(void)
{
    floe_err_t e;
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    CHECK(c != NULL);
    CHECK_EQ(floe_conv_set_upsert(c, "_kafka.key", "op", &e), 0);
    CHECK_EQ(floe_test_conv_put(c, 0, "user-1", "{\"n\":1}"),
             0); /* the value needs no id of its own */
    CHECK(!floe_conv_last_deletes(c));
    CHECK_EQ(floe_test_conv_put(c, 1, "user-1", NULL), 0); /* a tombstone of a plain key */
    CHECK(floe_conv_last_deletes(c));
    CHECK_EQ(floe_test_conv_put(c, 2, "user-2", "{\"op\":\"D\"}"), 0);
    CHECK(floe_conv_last_deletes(c));
    CHECK_EQ(floe_test_conv_put(c, 3, NULL, "{\"n\":2}"), -1); /* no key: no id */
    CHECK_EQ(floe_rows_count(rows), 3);
    /* the three rows' keys: user-1 twice (the tombstone last), user-2 */
    floe_tupsert_cols_t cols;
    CHECK_EQ(floe_tupsert_cols_parse("_kafka.key", "op", &cols, &e), 0);
    uint8_t ops[3] = {0, 1, 1};
    floe_tupsert_batch_t b = {0};
    CHECK_EQ(floe_tupsert_dedupe(rows, &cols, ops, 3, &b, &e), 0);
    CHECK_EQ(b.nkeys, 2);
    CHECK_EQ(b.nsel, 0);
    CHECK_EQ(b.key_row[0], UINT32_MAX);
    CHECK_EQ(b.key_row[1], UINT32_MAX);
    floe_slice_t k = floe_tupsert_batch_key(&b, 0);
    CHECK(k.len == 5 + 6 && k.ptr[0] == 's' && !memcmp(k.ptr + 5, "user-1", 6));
    floe_tupsert_batch_free(&b);
    floe_conv_free(c);
    floe_rows_free(rows);
}

TEST_MAIN(RUN(position_deletes_group_by_the_old_rows_partition);
          RUN(many_files_keep_their_partitions); RUN(default_ids_are_the_key_fields);
          RUN(plain_keys_are_the_kafka_key_column))
