/* Upsert tables: the converter's id check and tombstones (table/convert.h),
 * the last change per key (table/upsert.h) and the key index with its
 * saved file (table/keyidx.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/convert.h"
#include "table/keyidx.h"
#include "table/upsert.h"
#include "conv_put.h"
#include "test.h"
#include "tmp_dir.h"

/* An upsert converter into a new buffer (*rows). */
static floe_conv_t *upsert_conv(floe_rows_t **rows, const char *ids, const char *cdc)
{
    floe_err_t e;
    *rows = floe_rows_new(NULL);
    floe_conv_t *c = *rows ? floe_conv_new(*rows, FLOE_CONV_JSON, FLOE_CONV_STRING, &e) : NULL;
    if (!c || floe_conv_set_upsert(c, ids, cdc, &e) < 0) abort();
    return c;
}

/* Schema id 3: an Avro record of a long id and a string. */
static int avro_by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    (void)arg;
    static const char text[] = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":"
                               "\"id\",\"type\":\"long\"},{\"name\":\"v\",\"type\":\"string\"}]}";
    if (id != 3) return floe_err_set(err, FLOE_ENOENT, "schema id %d is not in the registry", id);
    return floe_avro_schema_parse(text, sizeof text - 1, out, err);
}

/* The key of row r of rows as (class, text) pairs joined, e.g. "n:1|s:a". */
static void key_text(floe_rows_t *rows, const floe_tupsert_cols_t *cols, size_t r, char *out,
                     size_t size)
{
    floe_rnode_t *ids[FLOE_TUPSERT_MAX_IDS];
    floe_err_t e;
    floe_buf_t k = FLOE_BUF_INIT;
    out[0] = 0;
    if (floe_tupsert_id_nodes(rows, cols, ids, &e) < 0 ||
        floe_tupsert_key(ids, cols->nids, r, &k) < 0)
        return;
    size_t o = 0;
    for (size_t p = 0; p + 5 <= k.len;) {
        uint32_t len = floe_rd_le32(k.data + p + 1);
        o += (size_t)snprintf(out + o, size - o, "%s%c:%.*s", o ? "|" : "", k.data[p], (int)len,
                              (const char *)k.data + p + 5);
        p += 5 + len;
    }
    floe_buf_free(&k);
}

static void converter_checks_ids_and_turns_tombstones_into_deletes(void)
{
    floe_rows_t *rows;
    floe_err_t e;
    floe_conv_t *c = upsert_conv(&rows, "id, a.b", "op");
    CHECK_EQ(floe_test_conv_put(c, 0, "k", "{\"id\":1,\"a\":{\"b\":\"x\"},\"op\":\"I\"}"), 0);
    CHECK(!floe_conv_last_deletes(c));
    CHECK_EQ(floe_test_conv_put(c, 1, "k", "{\"id\":1,\"a\":{\"b\":\"x\"},\"op\":\"D\"}"), 0);
    CHECK(floe_conv_last_deletes(c));
    CHECK_EQ(floe_test_conv_put(c, 2, "k", "{\"id\":2,\"a\":{}}"), -1); /* a.b missing */
    CHECK_EQ(floe_test_conv_put(c, 3, "k", "{\"id\":null,\"a\":{\"b\":\"y\"}}"), -1); /* id null */
    CHECK_EQ(floe_test_conv_put(c, 4, "k", "{\"id\":[1],\"a\":{\"b\":\"y\"}}"),
             -1); /* not a key kind */
    CHECK_EQ(floe_test_conv_put(c, 5, "{\"id\":3,\"a\":{\"b\":\"z\"}}", NULL), 0); /* tombstone */
    CHECK(floe_conv_last_deletes(c));
    CHECK_EQ(floe_test_conv_put(c, 6, "{\"schema\":{},\"payload\":{\"id\":4,\"a\":{\"b\":\"w\"}}}",
                                NULL),
             0);
    CHECK(floe_conv_last_deletes(c));
    CHECK_EQ(floe_test_conv_put(c, 7, NULL, NULL), -1); /* a tombstone without a key */
    CHECK_EQ(floe_rows_count(rows), 4);
    floe_tupsert_cols_t cols;
    CHECK_EQ(floe_tupsert_cols_parse("id,a.b", "", &cols, &e), 0);
    char k[128];
    key_text(rows, &cols, 2, k, sizeof k);
    CHECK_STR(k, "n:3|s:z");
    key_text(rows, &cols, 3, k, sizeof k);
    CHECK_STR(k, "n:4|s:w");
    floe_conv_free(c);
    floe_rows_free(rows);

    /* a scalar key stands for the one id column */
    c = upsert_conv(&rows, "id", "");
    CHECK_EQ(floe_test_conv_put(c, 0, "17", NULL), 0);
    CHECK_EQ(floe_test_conv_put(c, 1, "18", NULL), 0);
    CHECK_EQ(floe_test_conv_put(c, 2, "abc", NULL), -1); /* a string for the long id column */
    CHECK_EQ(floe_rows_count(rows), 2);
    floe_conv_free(c);
    floe_rows_free(rows);
    c = upsert_conv(&rows, "id", "");
    CHECK_EQ(floe_test_conv_put(c, 0, "abc", NULL), 0);
    CHECK_EQ(floe_test_conv_put(c, 1, "\"d\"", NULL), 0);
    CHECK_EQ(floe_rows_count(rows), 2);
    floe_conv_free(c);
    floe_rows_free(rows);
}

/* Avro values take the typed path; a null value still deletes its key. */
static void avro_values_and_tombstones(void)
{
    floe_err_t e;
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = rows ? floe_conv_new(rows, FLOE_CONV_AVRO, FLOE_CONV_STRING, &e) : NULL;
    if (!c || floe_conv_set_upsert(c, "id", "", &e) < 0) abort();
    floe_conv_schemas_t src = {.fn = avro_by_id};
    floe_conv_set_schemas(c, &src);
    /* Confluent header for id 3, then id=5 (zigzag 10) and v="x" */
    static const uint8_t rec[] = {0, 0, 0, 0, 3, 10, 2, 'x'};
    floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .offset = 0, .last = 0, .timestamp = 1000};
    m.key = floe_slice_str("5");
    m.value = floe_slice(rec, sizeof rec);
    floe_conv_stage_t st;
    CHECK_EQ(floe_conv_record(c, 0, &m, &st, &e), 0);
    CHECK(!floe_conv_last_deletes(c));
    m.offset = m.last = 1;
    m.value_null = true;
    m.value = floe_slice(NULL, 0);
    CHECK_EQ(floe_conv_record(c, 0, &m, &st, &e), 0);
    CHECK(floe_conv_last_deletes(c));
    CHECK_EQ(floe_rows_count(rows), 2);
    floe_tupsert_cols_t cols;
    CHECK_EQ(floe_tupsert_cols_parse("id", "", &cols, &e), 0);
    char k[64];
    key_text(rows, &cols, 0, k, sizeof k);
    CHECK_STR(k, "n:5");
    key_text(rows, &cols, 1, k, sizeof k);
    CHECK_STR(k, "n:5");
    floe_conv_free(c);
    floe_rows_free(rows);
}

static void dedupe_keeps_the_last_change_per_key(void)
{
    floe_rows_t *rows;
    floe_err_t e;
    floe_conv_t *c = upsert_conv(&rows, "id", "op");
    /* rows: 1, 2, 1', 3, 2 deleted, 4 deleted (never written), 5, 5 deleted, 5 again */
    const char *vals[] = {
        "{\"id\":1,\"v\":\"a\"}", "{\"id\":2,\"v\":\"b\"}",  "{\"id\":1,\"v\":\"c\"}",
        "{\"id\":3,\"v\":\"d\"}", "{\"id\":2,\"op\":\"d\"}", "{\"id\":4,\"op\":\"delete\"}",
        "{\"id\":5,\"v\":\"e\"}", "{\"id\":5,\"op\":\"D\"}", "{\"id\":5,\"v\":\"f\",\"op\":\"U\"}"};
    uint8_t ops[9];
    for (int i = 0; i < 9; i++) {
        CHECK_EQ(floe_test_conv_put(c, i, "k", vals[i]), 0);
        ops[i] = floe_conv_last_deletes(c);
    }
    floe_tupsert_cols_t cols;
    CHECK_EQ(floe_tupsert_cols_parse("id", "op", &cols, &e), 0);
    floe_tupsert_batch_t b = {0};
    CHECK_EQ(floe_tupsert_dedupe(rows, &cols, ops, 9, &b, &e), 0);
    CHECK_EQ(b.nsel, 3);
    CHECK_EQ(b.sel[0], 2);
    CHECK_EQ(b.sel[1], 3);
    CHECK_EQ(b.sel[2], 8);
    CHECK_EQ(b.nkeys, 5); /* 1, 2, 3, 4, 5 in first-seen order */
    CHECK_EQ(b.key_row[0], 2);
    CHECK_EQ(b.key_row[1], UINT32_MAX);
    CHECK_EQ(b.key_row[2], 3);
    CHECK_EQ(b.key_row[3], UINT32_MAX);
    CHECK_EQ(b.key_row[4], 8);
    /* ops shorter than the rows: the rest write */
    CHECK_EQ(floe_tupsert_dedupe(rows, &cols, ops, 4, &b, &e), 0);
    CHECK_EQ(b.nsel, 5);
    floe_tupsert_batch_free(&b);
    floe_conv_free(c);
    floe_rows_free(rows);
}

static void key_parts_do_not_run_together(void)
{
    floe_buf_t a = FLOE_BUF_INIT, b = FLOE_BUF_INIT;
    CHECK_EQ(floe_tupsert_key_part(&a, 's', "a", 1), 0);
    CHECK_EQ(floe_tupsert_key_part(&a, 's', "bc", 2), 0);
    CHECK_EQ(floe_tupsert_key_part(&b, 's', "ab", 2), 0);
    CHECK_EQ(floe_tupsert_key_part(&b, 's', "c", 1), 0);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) != 0);
    floe_buf_reset(&a);
    floe_buf_reset(&b);
    CHECK_EQ(floe_tupsert_key_part(&a, 'n', "1", 1), 0);
    CHECK_EQ(floe_tupsert_key_part(&b, 's', "1", 1), 0);
    CHECK(memcmp(a.data, b.data, a.len) != 0);
    floe_buf_free(&a);
    floe_buf_free(&b);
}

static void index_puts_gets_deletes(void)
{
    floe_tkeyidx_t *x = floe_tkeyidx_new();
    floe_tkeyidx_loc_t l;
    CHECK_EQ(floe_tkeyidx_put(x, "k1", 2, "/d/a.parquet", 0, &l), 0);
    CHECK_EQ(floe_tkeyidx_put(x, "k2", 2, "/d/a.parquet", 1, &l), 0);
    CHECK_EQ(floe_tkeyidx_put(x, "k1", 2, "/d/b.parquet", 7, &l), 1);
    CHECK_STR(l.path, "/d/a.parquet");
    CHECK_EQ(l.pos, 0);
    CHECK_EQ(floe_tkeyidx_get(x, "k1", 2, &l), 1);
    CHECK_STR(l.path, "/d/b.parquet");
    CHECK_EQ(l.pos, 7);
    CHECK_EQ(floe_tkeyidx_del(x, "k2", 2, &l), 1);
    CHECK_EQ(l.pos, 1);
    CHECK_EQ(floe_tkeyidx_del(x, "k2", 2, NULL), 0);
    CHECK_EQ(floe_tkeyidx_get(x, "k2", 2, &l), 0);
    CHECK_EQ(floe_tkeyidx_put(x, "k2", 2, "/d/c.parquet", 3, NULL), 0); /* reuse after delete */
    CHECK_EQ(floe_tkeyidx_count(x), 2);
    /* many keys, many deletes: probes still find every live key */
    char k[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(k, sizeof k, "key-%d", i);
        CHECK_EQ(
            floe_tkeyidx_put(x, k, (size_t)n, i % 2 ? "/d/x.parquet" : "/d/y.parquet", i, NULL), 0);
        if (i % 3 == 0) CHECK_EQ(floe_tkeyidx_del(x, k, (size_t)n, NULL), 1);
    }
    int found = 0;
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(k, sizeof k, "key-%d", i);
        if (floe_tkeyidx_get(x, k, (size_t)n, &l) == 1 && l.pos == i) found++;
    }
    CHECK_EQ(found, 100000 - 33334);
    CHECK_EQ(floe_tkeyidx_count(x), 2 + 100000 - 33334);
    floe_tkeyidx_free(x);
    /* memory per key, measured: 1M keys of upsert.h's form for a long id */
    x = floe_tkeyidx_new();
    floe_buf_t kb = FLOE_BUF_INIT;
    for (int i = 0; i < 1000000; i++) {
        kb.len = 0;
        int n = snprintf(k, sizeof k, "%lld", (long long)i * 7919);
        CHECK_EQ(floe_tupsert_key_part(&kb, 'n', k, (size_t)n), 0);
        CHECK_EQ(floe_tkeyidx_put(x, kb.data, kb.len, "/warehouse/ns/t/data/00000-w-00001.parquet",
                                  i, NULL),
                 0);
    }
    printf("# key index: %zu keys of %zu bytes: %zu bytes held, %.1f bytes per key\n",
           floe_tkeyidx_count(x), kb.len, floe_tkeyidx_mem(x),
           (double)floe_tkeyidx_mem(x) / (double)floe_tkeyidx_count(x));
    floe_buf_free(&kb);
    floe_tkeyidx_free(x);
}

static void index_file_round_trips_and_refuses_damage(void)
{
    floe_tkeyidx_t *x = floe_tkeyidx_new();
    floe_tkeyidx_set_state(x, "0c9d8e4a-1111-2222-3333-444455556666", 123456789012345);
    char k[32];
    for (int i = 0; i < 500; i++) {
        int n = snprintf(k, sizeof k, "%d", i);
        CHECK_EQ(floe_tkeyidx_put(x, k, (size_t)n, i < 250 ? "/w/a.parquet" : "/w/b.parquet", i * 3,
                                  NULL),
                 0);
    }
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_tkeyidx_encode(x, &b), 0);
    floe_err_t e;
    floe_tkeyidx_t *y = floe_tkeyidx_decode(b.data, b.len, &e);
    CHECK(y != NULL);
    if (y) {
        CHECK_EQ(floe_tkeyidx_snapshot(y), 123456789012345);
        CHECK_STR(floe_tkeyidx_uuid(y), "0c9d8e4a-1111-2222-3333-444455556666");
        CHECK_EQ(floe_tkeyidx_count(y), 500);
        floe_tkeyidx_loc_t l;
        CHECK_EQ(floe_tkeyidx_get(y, "499", 3, &l), 1);
        CHECK_STR(l.path, "/w/b.parquet");
        CHECK_EQ(l.pos, 499 * 3);
    }
    floe_tkeyidx_free(y);
    /* any flipped bit, any truncation: refused, never a crash */
    int refused = 0;
    for (size_t i = 0; i < b.len; i++) {
        b.data[i] ^= 0x10;
        y = floe_tkeyidx_decode(b.data, b.len, &e);
        refused += y == NULL && e.code == FLOE_ECORRUPT;
        floe_tkeyidx_free(y);
        b.data[i] ^= 0x10;
        y = floe_tkeyidx_decode(b.data, i, &e);
        refused += y == NULL && e.code == FLOE_ECORRUPT;
        floe_tkeyidx_free(y);
    }
    CHECK_EQ(refused, 2 * (int)b.len);
    /* saved and loaded; a missing file is ENOENT */
    char *dir = floe_test_tmpdir("keyidx");
    char path[512];
    snprintf(path, sizeof path, "%s/t.keyidx", dir);
    CHECK(floe_tkeyidx_load(path, &e) == NULL && e.code == FLOE_ENOENT);
    CHECK_EQ(floe_tkeyidx_save(x, path, &e), 0);
    y = floe_tkeyidx_load(path, &e);
    CHECK(y && floe_tkeyidx_count(y) == 500);
    floe_tkeyidx_free(y);
    floe_test_rm_rf(dir);
    free(dir);
    floe_buf_free(&b);
    floe_tkeyidx_free(x);
}

TEST_MAIN(RUN(converter_checks_ids_and_turns_tombstones_into_deletes);
          RUN(avro_values_and_tombstones); RUN(dedupe_keeps_the_last_change_per_key);
          RUN(key_parts_do_not_run_together); RUN(index_puts_gets_deletes);
          RUN(index_file_round_trips_and_refuses_damage))
