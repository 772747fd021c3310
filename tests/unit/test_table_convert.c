/* Record converters over real RecordBatch bytes (built with the log
 * module's builder, zstd-compressed, then parsed and iterated as the
 * pipeline will): the _kafka struct, raw/string/json values, and bad
 * records that must leave the buffer untouched with a stage and reason. */
#include <stdlib.h>

#include "log/batch.h"
#include "table/convert.h"
#include "table/source_batches.h"
#include "test.h"

typedef struct rec {
    const char *key;   /* NULL: null key */
    const char *value; /* NULL: null value */
    int nheaders;
} rec_t;

/* Build one batch at base offset 100 and feed each record to conv. */
static int feed(floe_conv_t *c, const rec_t *recs, size_t n, int *ok, int *bad,
                floe_conv_stage_t *stages, char reasons[][256])
{
    floe_batch_opts_t o;
    floe_batch_opts_default(&o);
    o.compression = floe_compression_parse("zstd");
    o.base_offset = 100;
    floe_batch_builder_t *b = floe_batch_builder_new(&o);
    floe_err_t e;
    for (size_t i = 0; i < n; i++) {
        floe_slice_t k = floe_slice_str(recs[i].key), v = floe_slice_str(recs[i].value);
        floe_record_header_t h[2] = {{floe_slice_str("trace"), floe_slice_str("t-1"), false},
                                     {floe_slice_str("empty"), floe_slice(NULL, 0), true}};
        if (floe_batch_builder_add(b, 1700000000000LL + (int64_t)i, recs[i].key ? &k : NULL,
                                   recs[i].value ? &v : NULL, h, (size_t)recs[i].nheaders, &e) < 0)
            return -1;
    }
    floe_buf_t batch = FLOE_BUF_INIT, scratch = FLOE_BUF_INIT;
    if (floe_batch_builder_finish(b, &batch, &e) < 0) return -1;
    floe_batch_builder_free(b);
    floe_batch_hdr_t hdr;
    floe_slice_t records;
    if (floe_batch_parse_hdr(batch.data, batch.len, &hdr, &e) < 0 ||
        floe_batch_records(batch.data, batch.len, &hdr, &scratch, FLOE_BATCH_MAX_DECOMPRESSED,
                           &records, &e) < 0)
        return -1;
    floe_record_iter_t it;
    floe_record_iter_init(&it, &hdr, records);
    floe_record_t r;
    *ok = *bad = 0;
    while (floe_record_iter_next(&it, &r, &e) == 1) {
        floe_conv_stage_t st;
        floe_tmsg_t m;
        floe_tmsg_from_record(&m, &r);
        if (floe_conv_record(c, 3, &m, &st, &e) == 0) {
            (*ok)++;
        } else {
            stages[*bad] = st;
            memcpy(reasons[*bad], e.msg, sizeof e.msg);
            (*bad)++;
        }
    }
    floe_buf_free(&batch);
    floe_buf_free(&scratch);
    return 0;
}

static floe_rcol_t *col(floe_rows_t *r, const char *a, const char *b)
{
    floe_rnode_t *n = floe_rows_child(floe_rows_root(r), a);
    if (n && b) n = floe_rows_child(n, b);
    return n ? n->col : NULL;
}

static void json_records_with_kafka_columns(void)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_err_t e;
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    CHECK(c != NULL);
    rec_t recs[] = {
        {"k0", "{\"id\":1,\"name\":\"a\"}", 2},
        {NULL, "{\"id\":2}", 0},
        {"k2", "{\"id\":\"oops\"}", 1},       /* schema: id is long */
        {"k3", "{\"id\":3,", 0},              /* convert: malformed */
        {"\xff", "{\"id\":4}", 0},            /* convert: key not UTF-8 */
        {"k5", NULL, 1},                      /* tombstone: _kafka only */
        {"k6", "{\"id\":6,\"_kafka\":1}", 0}, /* schema: reserved name */
    };
    int ok, bad;
    floe_conv_stage_t st[8];
    char why[8][256];
    CHECK_EQ(feed(c, recs, 7, &ok, &bad, st, why), 0);
    CHECK_EQ(ok, 3);
    CHECK_EQ(bad, 4);
    CHECK_EQ(st[0], FLOE_STAGE_SCHEMA);
    CHECK(strstr(why[0], "'id' is long") != NULL);
    CHECK_EQ(st[1], FLOE_STAGE_CONVERT);
    CHECK(strstr(why[1], "invalid JSON") != NULL);
    CHECK_EQ(st[2], FLOE_STAGE_CONVERT);
    CHECK(strstr(why[2], "key is not valid UTF-8") != NULL);
    CHECK_EQ(st[3], FLOE_STAGE_SCHEMA);
    CHECK(strstr(why[3], "reserved") != NULL);
    CHECK_EQ(floe_rows_count(rows), 3);

    floe_rcol_t *off = col(rows, "_kafka", "offset");
    CHECK_EQ(off->nvals, 3);
    CHECK_EQ(floe_rcol_long(off, 0), 100);
    CHECK_EQ(floe_rcol_long(off, 1), 101);
    CHECK_EQ(floe_rcol_long(off, 2), 105);
    floe_rcol_t *ts = col(rows, "_kafka", "timestamp");
    CHECK_EQ(floe_rcol_long(ts, 2), (1700000000000LL + 5) * 1000);
    CHECK_EQ(floe_rcol_int(col(rows, "_kafka", "partition"), 0), 3);
    floe_rcol_t *key = col(rows, "_kafka", "key");
    CHECK_EQ(key->nvals, 2); /* row 1 has a null key */
    CHECK(floe_slice_eq(floe_rcol_bytes(key, 1), floe_slice_str("k5")));
    /* headers: row 0 has two (one null value), row 1 none, row 2 one */
    floe_rnode_t *hm = floe_rows_child(floe_rows_child(floe_rows_root(rows), "_kafka"), "headers");
    floe_rcol_t *hk = hm->kids[0]->col, *hv = hm->kids[1]->col;
    CHECK_EQ(hk->defs.len, 4);
    CHECK_EQ(hk->nvals, 3);
    CHECK(floe_slice_eq(floe_rcol_bytes(hk, 1), floe_slice_str("empty")));
    CHECK_EQ(hv->nvals, 2);
    CHECK(floe_slice_eq(floe_rcol_bytes(hv, 0), floe_slice_str("t-1")));
    CHECK_EQ(hv->reps.data[1], 1);                    /* second entry of row 0 */
    CHECK_EQ(hv->defs.data[1], hm->kids[1]->def - 1); /* its null value */
    CHECK_EQ(hv->defs.data[2], hm->def);              /* row 1: map present, empty */
    floe_rcol_t *id = col(rows, "id", NULL);
    CHECK_EQ(id->nvals, 2);
    CHECK_EQ(floe_rcol_long(id, 1), 2);
    CHECK_EQ(col(rows, "name", NULL)->nvals, 1);
    floe_conv_free(c);
    floe_rows_free(rows);
}

static void raw_and_string_values(void)
{
    floe_err_t e;
    int ok, bad;
    floe_conv_stage_t st[4];
    char why[4][256];
    rec_t recs[] = {{"k", "plain", 0}, {"k", "\xc3\x28", 0}, {"k", NULL, 0}};

    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_STRING, FLOE_CONV_RAW, &e);
    CHECK_EQ(feed(c, recs, 3, &ok, &bad, st, why), 0);
    CHECK_EQ(ok, 2);
    CHECK_EQ(bad, 1);
    CHECK_EQ(st[0], FLOE_STAGE_CONVERT);
    CHECK(strstr(why[0], "value is not valid UTF-8 (byte 0)") != NULL);
    floe_rnode_t *v = floe_rows_child(floe_rows_root(rows), "value");
    CHECK_EQ(v->kind, FLOE_TK_STRING);
    CHECK_EQ(v->col->nvals, 1);
    floe_conv_free(c);
    floe_rows_free(rows);

    rows = floe_rows_new(NULL);
    c = floe_conv_new(rows, FLOE_CONV_RAW, FLOE_CONV_STRING, &e);
    CHECK_EQ(feed(c, recs, 3, &ok, &bad, st, why), 0);
    CHECK_EQ(ok, 3); /* raw takes any bytes */
    v = floe_rows_child(floe_rows_root(rows), "value");
    CHECK_EQ(v->kind, FLOE_TK_BINARY);
    CHECK(floe_slice_eq(floe_rcol_bytes(v->col, 1), floe_slice_str("\xc3\x28")));
    floe_conv_free(c);
    floe_rows_free(rows);

    floe_conv_kind_t k;
    CHECK_EQ(floe_conv_kind_parse("JSON", &k, &e), 0);
    CHECK_EQ(k, FLOE_CONV_JSON);
    CHECK_EQ(floe_conv_kind_parse("avro", &k, &e), 0);
    CHECK_EQ(k, FLOE_CONV_AVRO);
    CHECK_EQ(floe_conv_kind_parse("protobuf", &k, &e), 0);
    CHECK_EQ(k, FLOE_CONV_PROTOBUF);
    CHECK_STR(floe_conv_kind_name(FLOE_CONV_PROTOBUF), "protobuf");
    CHECK_EQ(floe_conv_kind_parse("json_schema", &k, &e), 0);
    CHECK_EQ(k, FLOE_CONV_JSON_SCHEMA);
    CHECK_EQ(floe_conv_kind_parse("xml", &k, &e), -1);
    CHECK(strstr(e.msg, "raw, string, json, avro, protobuf or json_schema") != NULL);
}

TEST_MAIN(RUN(json_records_with_kafka_columns); RUN(raw_and_string_values))
