/* floe's table reader (iceberg/read.h, behind `floe table scan`): Parquet
 * files written with floe's writer, holding shapes the table engine does
 * not write yet (maps with long keys, lists of structs with null elements,
 * legacy two-level lists, bare repeated fields, decimals, dates,
 * timestamps, binary), read back as exact JSON lines, with and without an
 * Iceberg schema (renamed, missing, dropped and promoted columns),
 * position deletes and limits; damaged files fail with an error. */
#include "format/parquet.h"
#include "iceberg/metadata.h"
#include "iceberg/read.h"
#include "test.h"

static int add(floe_pq_schema_t *s, floe_pq_node_t n, int parent)
{
    n.parent = parent;
    floe_err_t err;
    int i = floe_pq_schema_add(s, &n, &err);
    if (i < 0) fprintf(stderr, "schema: %s\n", err.msg);
    return i;
}

/* The file of the header comment: 3 rows, 11 leaf columns. */
static void build_file(floe_buf_t *out)
{
    floe_pq_schema_t *s = floe_pq_schema_new();
    add(s, floe_pq_leaf("id", FLOE_PQ_REQUIRED, FLOE_PQ_INT64, 1), -1);
    int m = add(s, floe_pq_group("m", FLOE_PQ_OPTIONAL, FLOE_PQ_LT_MAP, 2), -1);
    int kv = add(s, floe_pq_group("key_value", FLOE_PQ_REPEATED, FLOE_PQ_LT_NONE, -1), m);
    add(s, floe_pq_leaf("key", FLOE_PQ_REQUIRED, FLOE_PQ_INT64, 3), kv);
    floe_pq_node_t v = floe_pq_leaf("value", FLOE_PQ_OPTIONAL, FLOE_PQ_BYTE_ARRAY, 4);
    v.logical = FLOE_PQ_LT_STRING;
    add(s, v, kv);
    int ls = add(s, floe_pq_group("ls", FLOE_PQ_OPTIONAL, FLOE_PQ_LT_LIST, 5), -1);
    int li = add(s, floe_pq_group("list", FLOE_PQ_REPEATED, FLOE_PQ_LT_NONE, -1), ls);
    int el = add(s, floe_pq_group("element", FLOE_PQ_OPTIONAL, FLOE_PQ_LT_NONE, 6), li);
    add(s, floe_pq_leaf("a", FLOE_PQ_OPTIONAL, FLOE_PQ_INT32, 7), el);
    floe_pq_node_t b = floe_pq_leaf("b", FLOE_PQ_OPTIONAL, FLOE_PQ_BYTE_ARRAY, 8);
    b.logical = FLOE_PQ_LT_STRING;
    add(s, b, el);
    floe_pq_node_t d = floe_pq_leaf("d", FLOE_PQ_OPTIONAL, FLOE_PQ_INT32, 9);
    d.logical = FLOE_PQ_LT_DATE;
    add(s, d, -1);
    floe_pq_node_t dec = floe_pq_leaf("dec", FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 10);
    dec.logical = FLOE_PQ_LT_DECIMAL;
    dec.precision = 10;
    dec.scale = 2;
    add(s, dec, -1);
    floe_pq_node_t ts = floe_pq_leaf("ts", FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 11);
    ts.logical = FLOE_PQ_LT_TIMESTAMP;
    ts.unit = FLOE_PQ_MICROS;
    ts.utc = true;
    add(s, ts, -1);
    int lg = add(s, floe_pq_group("legacy", FLOE_PQ_OPTIONAL, FLOE_PQ_LT_LIST, 12), -1);
    add(s, floe_pq_leaf("items", FLOE_PQ_REPEATED, FLOE_PQ_INT32, -1), lg);
    add(s, floe_pq_leaf("r", FLOE_PQ_REPEATED, FLOE_PQ_INT32, 13), -1);
    add(s, floe_pq_leaf("bin", FLOE_PQ_OPTIONAL, FLOE_PQ_BYTE_ARRAY, 14), -1);

    floe_err_t err;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    floe_pq_writer_t *w = floe_pq_writer_new(s, &o, floe_pq_sink_buf, out, &err);
    CHECK(w != NULL);
    if (!w) {
        floe_pq_schema_free(s);
        return;
    }
    int64_t ids[] = {1, 2, 3};
    int64_t keys[] = {10, 20};
    floe_slice_t vals[] = {floe_slice_str("x")};
    int32_t as[] = {1};
    floe_slice_t bs[] = {floe_slice_str("p"), floe_slice_str("q")};
    int32_t ds[] = {0, 19000};
    int64_t decs[] = {12345, -5};
    int64_t tss[] = {1700000000123456LL, 0};
    int32_t legacy[] = {5, 6};
    int32_t rs[] = {1, 2, 7};
    floe_slice_t bins[] = {floe_slice("\x00\xff", 2), floe_slice("", 0)};
    /* levels per column over the three rows (see the header comment) */
    int16_t k_def[] = {2, 2, 0, 1}, k_rep[] = {0, 1, 0, 0};
    int16_t v_def[] = {3, 2, 0, 1}, v_rep[] = {0, 1, 0, 0};
    int16_t a_def[] = {4, 2, 3, 1, 0}, a_rep[] = {0, 1, 1, 0, 0};
    int16_t b_def[] = {4, 2, 4, 1, 0}, b_rep[] = {0, 1, 1, 0, 0};
    int16_t d_def[] = {1, 0, 1}, dec_def[] = {1, 1, 0}, ts_def[] = {1, 0, 1};
    int16_t lg_def[] = {2, 2, 0, 1}, lg_rep[] = {0, 1, 0, 0};
    int16_t r_def[] = {1, 1, 0, 1}, r_rep[] = {0, 1, 0, 0};
    int16_t bin_def[] = {1, 0, 1};
    int rc = floe_pq_write_column(w, 0, 3, NULL, NULL, ids, 3, &err) ||
             floe_pq_write_column(w, 1, 4, k_def, k_rep, keys, 2, &err) ||
             floe_pq_write_column(w, 2, 4, v_def, v_rep, vals, 1, &err) ||
             floe_pq_write_column(w, 3, 5, a_def, a_rep, as, 1, &err) ||
             floe_pq_write_column(w, 4, 5, b_def, b_rep, bs, 2, &err) ||
             floe_pq_write_column(w, 5, 3, d_def, NULL, ds, 2, &err) ||
             floe_pq_write_column(w, 6, 3, dec_def, NULL, decs, 2, &err) ||
             floe_pq_write_column(w, 7, 3, ts_def, NULL, tss, 2, &err) ||
             floe_pq_write_column(w, 8, 4, lg_def, lg_rep, legacy, 2, &err) ||
             floe_pq_write_column(w, 9, 4, r_def, r_rep, rs, 3, &err) ||
             floe_pq_write_column(w, 10, 3, bin_def, NULL, bins, 2, &err) ||
             floe_pq_writer_rows(w, 3, &err) || floe_pq_writer_close(w, &err);
    if (rc) fprintf(stderr, "write: %s\n", err.msg);
    CHECK_EQ(rc, 0);
    floe_pq_writer_free(w);
    floe_pq_schema_free(s);
}

/* Each row as a line. */
static int collect(void *arg, const char *json, size_t len, floe_err_t *err)
{
    floe_buf_t *b = arg;
    if (floe_buf_append(b, json, len) || floe_buf_append_u8(b, '\n')) return floe_err_oom(err);
    return 0;
}

/* Read into a string; caller frees.  NULL (with *err) on failure. */
static char *scan(const floe_buf_t *file, const floe_ice_schema_t *schema, const int64_t *dels,
                  size_t ndels, int64_t limit, floe_err_t *err)
{
    floe_ice_deletes_t *d = floe_ice_deletes_new(err);
    if (!d || floe_ice_deletes_add_positions(d, dels, ndels, err)) {
        floe_ice_deletes_free(d);
        return NULL;
    }
    floe_buf_t out = FLOE_BUF_INIT;
    int rc = floe_ice_read_file(file->data, file->len, "test.parquet", schema, d, &limit, collect,
                                &out, err);
    floe_ice_deletes_free(d);
    if (rc || floe_buf_append_u8(&out, 0)) {
        floe_buf_free(&out);
        return NULL;
    }
    size_t n;
    return (char *)floe_buf_detach(&out, &n);
}

static const char ROW0[] =
    "{\"id\":1,\"m\":[{\"key\":10,\"value\":\"x\"},{\"key\":20,\"value\":null}],"
    "\"ls\":[{\"a\":1,\"b\":\"p\"},null,{\"a\":null,\"b\":\"q\"}],\"d\":\"1970-01-01\",\"dec\":123."
    "45,"
    "\"ts\":\"2023-11-14T22:13:20.123456Z\",\"legacy\":[5,6],\"r\":[1,2],\"bin\":\"AP8=\"}\n";
static const char ROW1[] = "{\"id\":2,\"m\":null,\"ls\":[],\"d\":null,\"dec\":-0.05,\"ts\":null,"
                           "\"legacy\":null,\"r\":[],\"bin\":null}\n";
static const char ROW2[] = "{\"id\":3,\"m\":[],\"ls\":null,\"d\":\"2022-01-08\",\"dec\":null,"
                           "\"ts\":\"1970-01-01T00:00:00.000000Z\","
                           "\"legacy\":[],\"r\":[7],\"bin\":\"\"}\n";

static void nested_shapes_without_schema(void)
{
    floe_buf_t file = FLOE_BUF_INIT;
    build_file(&file);
    floe_err_t err;
    char *got = scan(&file, NULL, NULL, 0, -1, &err);
    char want[2048];
    snprintf(want, sizeof want, "%s%s%s", ROW0, ROW1, ROW2);
    CHECK_STR(got, want);
    free(got);
    floe_buf_free(&file);
}

static void deletes_and_limit(void)
{
    floe_buf_t file = FLOE_BUF_INIT;
    build_file(&file);
    floe_err_t err;
    int64_t dels[] = {1};
    char *got = scan(&file, NULL, dels, 1, -1, &err);
    char want[2048];
    snprintf(want, sizeof want, "%s%s", ROW0, ROW2);
    CHECK_STR(got, want);
    free(got);
    got = scan(&file, NULL, NULL, 0, 1, &err);
    CHECK_STR(got, ROW0);
    free(got);
    int64_t all[] = {0, 1, 2};
    got = scan(&file, NULL, all, 3, -1, &err);
    CHECK_STR(got, "");
    free(got);
    floe_buf_free(&file);
}

/* The current schema decides: names (m renamed mm), a promoted column (id
 * long -> double), a dropped column (bin), columns the file lacks (top
 * level "extra", nested element field "c") read null, in schema order for
 * the missing ones. */
static void schema_mapping(void)
{
    floe_buf_t file = FLOE_BUF_INIT;
    build_file(&file);
    static const char js[] =
        "{\"type\":\"struct\",\"schema-id\":3,\"fields\":["
        "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"double\"},"
        "{\"id\":2,\"name\":\"mm\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":3,"
        "\"key\":\"long\","
        "\"value-id\":4,\"value\":\"string\",\"value-required\":false}},"
        "{\"id\":5,\"name\":\"ls\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":6,"
        "\"element-required\":false,\"element\":{\"type\":\"struct\",\"fields\":["
        "{\"id\":7,\"name\":\"a\",\"required\":false,\"type\":\"int\"},"
        "{\"id\":8,\"name\":\"b\",\"required\":false,\"type\":\"string\"},"
        "{\"id\":98,\"name\":\"c\",\"required\":false,\"type\":\"long\"}]}}},"
        "{\"id\":99,\"name\":\"extra\",\"required\":false,\"type\":\"string\"}]}";
    floe_err_t err;
    floe_ice_schema_t *sc = floe_ice_schema_from_json(js, strlen(js), &err);
    CHECK(sc != NULL);
    if (!sc) {
        fprintf(stderr, "schema: %s\n", err.msg);
        floe_buf_free(&file);
        return;
    }
    char *got = scan(&file, sc, NULL, 0, -1, &err);
    CHECK_STR(got, "{\"id\":1.0,\"mm\":[{\"key\":10,\"value\":\"x\"},{\"key\":20,\"value\":null}],"
                   "\"ls\":[{\"a\":1,\"b\":\"p\",\"c\":null},null,{\"a\":null,\"b\":\"q\",\"c\":"
                   "null}],\"extra\":null}\n"
                   "{\"id\":2.0,\"mm\":null,\"ls\":[],\"extra\":null}\n"
                   "{\"id\":3.0,\"mm\":[],\"ls\":null,\"extra\":null}\n");
    free(got);
    floe_ice_schema_free(sc);
    floe_buf_free(&file);
}

/* Every prefix and a few flipped bytes: an error or rows, never a crash
 * (ASan run of make check). */
static void damaged_files_fail_cleanly(void)
{
    floe_buf_t file = FLOE_BUF_INIT;
    build_file(&file);
    floe_err_t err;
    int failures = 0;
    for (size_t n = 0; n < file.len; n += 7) {
        floe_buf_t cut = FLOE_BUF_INIT;
        floe_buf_append(&cut, file.data, n);
        char *got = scan(&cut, NULL, NULL, 0, -1, &err);
        if (!got) failures++;
        free(got);
        floe_buf_free(&cut);
    }
    CHECK(failures > 0);
    for (size_t i = 4; i + 8 < file.len; i += 13) {
        floe_buf_t bad = FLOE_BUF_INIT;
        floe_buf_append(&bad, file.data, file.len);
        bad.data[i] ^= 0x5a;
        char *got = scan(&bad, NULL, NULL, 0, -1, &err);
        free(got);
        floe_buf_free(&bad);
    }
    floe_buf_free(&file);
}

TEST_MAIN({
    RUN(nested_shapes_without_schema);
    RUN(deletes_and_limit);
    RUN(schema_mapping);
    RUN(damaged_files_fail_cleanly);
})
