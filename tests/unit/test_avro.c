/* Avro: schemas keep their attributes, values encode to the spec's bytes
 * and back, containers round-trip with every codec, schema resolution,
 * and corrupt or truncated input is refused with a clear error. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "format/avro.h"
#include "test.h"

static floe_avro_schema_t *parse(const char *json)
{
    floe_err_t err = {0};
    floe_avro_schema_t *s = NULL;
    if (floe_avro_schema_parse(json, strlen(json), &s, &err) != 0) {
        fprintf(stderr, "parse failed: %s\n", err.msg);
        return NULL;
    }
    return s;
}

/* JSON texts equal as JSON values. */
static int json_same(const char *a, const char *b)
{
    json_t *ja = json_loads(a, JSON_DECODE_ANY, NULL), *jb = json_loads(b, JSON_DECODE_ANY, NULL);
    int eq = ja && jb && json_equal(ja, jb);
    if (!eq) fprintf(stderr, "JSON differs:\n  %s\n  %s\n", a, b);
    json_decref(ja);
    json_decref(jb);
    return eq;
}

static const char *MANIFEST_ENTRY =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
    "{\"name\":\"file_path\",\"type\":\"string\",\"doc\":\"Location URI\",\"field-id\":100},"
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":["
    "{\"name\":\"day\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"date\"}],\"default\":"
    "null,\"field-id\":1000}]},\"field-id\":102},"
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
    "{\"name\":\"column_sizes\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":"
    "\"record\",\"name\":\"k117_v118\","
    "\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},{\"name\":\"value\",\"type\":"
    "\"long\",\"field-id\":118}]},"
    "\"logicalType\":\"map\"}],\"default\":null,\"field-id\":108},"
    "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\","
    "\"element-id\":133}],\"default\":null,\"field-id\":132},"
    "{\"name\":\"props\",\"type\":{\"type\":\"map\",\"values\":\"string\",\"key-id\":7,\"value-"
    "id\":8},\"field-id\":9}"
    "]},\"field-id\":2}]}";

static void schema_keeps_attributes(void)
{
    floe_avro_schema_t *s = parse(MANIFEST_ENTRY);
    CHECK(s != NULL);
    if (!s) return;
    CHECK_EQ(floe_avro_schema_type(s), FLOE_AVRO_RECORD);
    CHECK_STR(floe_avro_schema_fullname(s), "manifest_entry");
    CHECK_EQ(floe_avro_schema_field_count(s), 3);
    int64_t id = -1;
    CHECK_EQ(floe_avro_schema_field_prop_int(s, 1, "field-id", &id), 0);
    CHECK_EQ(id, 1);
    const floe_avro_schema_t *df = floe_avro_schema_field_type(s, 2);
    int i = floe_avro_schema_field_index(df, "split_offsets");
    CHECK_EQ(i, 4);
    const floe_avro_schema_t *so =
        floe_avro_schema_nullable_inner(floe_avro_schema_field_type(df, 4));
    CHECK(so && floe_avro_schema_type(so) == FLOE_AVRO_ARRAY);
    CHECK_EQ(floe_avro_schema_prop_int(so, "element-id", &id), 0);
    CHECK_EQ(id, 133);
    const floe_avro_schema_t *m = floe_avro_schema_field_type(df, 5);
    CHECK_EQ(floe_avro_schema_prop_int(m, "key-id", &id), 0);
    CHECK_EQ(id, 7);
    CHECK_EQ(floe_avro_schema_prop_int(m, "value-id", &id), 0);
    CHECK_EQ(id, 8);
    const floe_avro_schema_t *part = floe_avro_schema_field_type(df, 1);
    const floe_avro_schema_t *day =
        floe_avro_schema_nullable_inner(floe_avro_schema_field_type(part, 0));
    CHECK_EQ(floe_avro_schema_logical(day), FLOE_AVRO_LOGICAL_DATE);
    char *doc = floe_avro_schema_prop_json(df, 0, "doc");
    CHECK_STR(doc, "\"Location URI\"");
    free(doc);
    /* to JSON and back: the same JSON value, attributes and all */
    floe_err_t err = {0};
    char *j = floe_avro_schema_to_json(s, &err);
    CHECK(j && json_same(j, MANIFEST_ENTRY));
    floe_avro_schema_t *s2 = j ? parse(j) : NULL;
    char *j2 = s2 ? floe_avro_schema_to_json(s2, &err) : NULL;
    CHECK(j2 && strcmp(j, j2) == 0);
    free(j);
    free(j2);
    floe_avro_schema_free(s2);
    floe_avro_schema_free(s);
}

/* Named types by reference, namespaces, recursion, canonical form. */
static void schema_names_and_canonical(void)
{
    const char *js =
        "{\"type\":\"record\",\"name\":\"Node\",\"namespace\":\"a.b\",\"doc\":\"x\",\"fields\":["
        "{\"name\":\"v\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":4}},"
        "{\"name\":\"w\",\"type\":\"F\"},"
        "{\"name\":\"o\",\"type\":\"c.Other\",\"default\":null}"
        "]}";
    floe_err_t err = {0};
    floe_avro_schema_t *s = NULL;
    CHECK_EQ(floe_avro_schema_parse(js, strlen(js), &s, &err), -1);
    CHECK(strstr(err.msg, "unknown type \"c.Other\"") != NULL);

    const char *rec =
        "{\"type\":\"record\",\"name\":\"Node\",\"namespace\":\"a.b\",\"doc\":\"x\",\"fields\":["
        "{\"name\":\"v\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":4}},"
        "{\"name\":\"w\",\"type\":\"F\"},"
        "{\"name\":\"next\",\"type\":[\"null\",\"Node\"],\"default\":null}]}";
    s = parse(rec);
    CHECK(s != NULL);
    if (!s) return;
    CHECK_STR(floe_avro_schema_fullname(s), "a.b.Node");
    const floe_avro_schema_t *f = floe_avro_schema_field_type(s, 0);
    CHECK_STR(floe_avro_schema_fullname(f), "a.b.F");
    CHECK(floe_avro_schema_field_type(s, 1) == f);
    CHECK(floe_avro_schema_branch(floe_avro_schema_field_type(s, 2), 1) == s);
    char *c = floe_avro_schema_canonical(s, &err);
    const char *want_c =
        "{\"name\":\"a.b.Node\",\"type\":\"record\",\"fields\":["
        "{\"name\":\"v\",\"type\":{\"name\":\"a.b.F\",\"type\":\"fixed\",\"size\":4}},"
        "{\"name\":\"w\",\"type\":\"a.b.F\"},"
        "{\"name\":\"next\",\"type\":[\"null\",\"a.b.Node\"]}]}";
    CHECK_STR(c, want_c);
    free(c);
    /* a recursive list round-trips through encode/decode */
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_avro_value_t *v = floe_avro_value_new(&a, s);
    floe_avro_value_t *cur = v;
    for (int k = 0; k < 3; k++) {
        uint8_t four[4] = {(uint8_t)k, 1, 2, 3};
        CHECK_EQ(floe_avro_rec_set_bytes(cur, "v", four, 4, &err), 0);
        CHECK_EQ(floe_avro_rec_set_bytes(cur, "w", four, 4, &err), 0);
        if (k < 2) cur = floe_avro_field(cur, "next");
        CHECK(cur != NULL);
        if (k < 2 && cur)
            cur = floe_avro_field(cur, "v") ? cur : NULL; /* chose the record branch */
    }
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
    floe_slice_t in = floe_buf_slice(&b);
    floe_avro_value_t *back;
    CHECK_EQ(floe_avro_decode(s, &in, &a, &back, &err), 0);
    CHECK_EQ(in.len, 0);
    CHECK(floe_avro_value_equal(v, back));
    const floe_avro_value_t *n2 = floe_avro_get(floe_avro_get(back, "next"), "next");
    CHECK(n2 != NULL && floe_avro_value_is_null(floe_avro_get(n2, "next")));
    floe_buf_free(&b);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

static void schema_errors_are_clear(void)
{
    static const struct {
        const char *json, *msg;
    } bad[] = {
        {"{\"type\":\"record\",\"name\":\"r\"}", "needs a \"fields\" array"},
        {"{\"type\":\"record\",\"name\":\"1r\",\"fields\":[]}", "invalid name"},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"A\",\"A\"]}", "symbol A twice"},
        {"{\"type\":\"fixed\",\"name\":\"f\"}", "needs a \"size\""},
        {"[\"int\",\"int\"]", "union holds int twice"},
        {"[\"null\",[\"int\"]]", "union directly inside a union"},
        {"{\"type\":\"array\"}", "without \"items\""},
        {"\"nosuch\"", "unknown type"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},{"
         "\"name\":\"a\",\"type\":\"int\"}]}",
         "field \"a\" twice"},
        {"{\"type\":", "bad JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        floe_err_t err = {0};
        floe_avro_schema_t *s = NULL;
        CHECK_EQ(floe_avro_schema_parse(bad[i].json, strlen(bad[i].json), &s, &err), -1);
        CHECK(s == NULL);
        if (!strstr(err.msg, bad[i].msg)) {
            fprintf(stderr, "schema %zu: message \"%s\" lacks \"%s\"\n", i, err.msg, bad[i].msg);
            CHECK(0);
        }
    }
}

/* Byte vectors from the spec's "Binary Encoding" section. */
static void binary_spec_vectors(void)
{
    floe_avro_schema_t *l = parse("\"long\""), *str = parse("\"string\"");
    floe_avro_schema_t *u = parse("[\"null\",\"string\"]");
    floe_avro_schema_t *arr = parse("{\"type\":\"array\",\"items\":\"long\"}");
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_err_t err = {0};
    floe_buf_t b = FLOE_BUF_INIT;
    static const struct {
        int64_t v;
        uint8_t bytes[3];
        size_t n;
    } longs[] = {{0, {0x00}, 1}, {-1, {0x01}, 1},  {1, {0x02}, 1},       {-2, {0x03}, 1},
                 {2, {0x04}, 1}, {-64, {0x7f}, 1}, {64, {0x80, 0x01}, 2}};
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
        floe_avro_value_t *v = floe_avro_value_new(&a, l);
        CHECK_EQ(floe_avro_set_long(v, longs[i].v, &err), 0);
        floe_buf_reset(&b);
        CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
        CHECK(b.len == longs[i].n && memcmp(b.data, longs[i].bytes, b.len) == 0);
    }
    floe_avro_value_t *v = floe_avro_value_new(&a, str);
    CHECK_EQ(floe_avro_set_string(v, "foo", &err), 0);
    floe_buf_reset(&b);
    CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
    CHECK(b.len == 4 && memcmp(b.data,
                               "\x06"
                               "foo",
                               4) == 0);
    /* union ["null","string"]: null is 00, "a" is 02 02 61 */
    v = floe_avro_value_new(&a, u);
    CHECK_EQ(floe_avro_set_null(v, &err), 0);
    floe_buf_reset(&b);
    CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
    CHECK(b.len == 1 && b.data[0] == 0);
    CHECK_EQ(floe_avro_set_string(v, "a", &err), 0);
    floe_buf_reset(&b);
    CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
    CHECK(b.len == 3 && memcmp(b.data,
                               "\x02\x02"
                               "a",
                               3) == 0);
    /* array of longs [3, 27]: 04 06 36 00 */
    v = floe_avro_value_new(&a, arr);
    CHECK_EQ(floe_avro_set_long(floe_avro_array_append(v, &err), 3, &err), 0);
    CHECK_EQ(floe_avro_set_long(floe_avro_array_append(v, &err), 27, &err), 0);
    floe_buf_reset(&b);
    CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
    CHECK(b.len == 4 && memcmp(b.data, "\x04\x06\x36\x00", 4) == 0);
    /* the block form with a negative count and a byte size decodes too */
    const uint8_t neg[] = {0x03, 0x04, 0x06, 0x36, 0x00};
    floe_slice_t in = floe_slice(neg, sizeof neg);
    floe_avro_value_t *back;
    CHECK_EQ(floe_avro_decode(arr, &in, &a, &back, &err), 0);
    CHECK(floe_avro_value_equal(v, back));
    in = floe_slice(neg, sizeof neg);
    CHECK_EQ(floe_avro_skip(arr, &in, &err), 0);
    CHECK_EQ(in.len, 0);
    floe_buf_free(&b);
    floe_arena_free(&a);
    floe_avro_schema_free(l);
    floe_avro_schema_free(str);
    floe_avro_schema_free(u);
    floe_avro_schema_free(arr);
}

static const char *ALL_TYPES =
    "{\"type\":\"record\",\"name\":\"all\",\"namespace\":\"t\",\"fields\":["
    "{\"name\":\"n\",\"type\":\"null\"},"
    "{\"name\":\"b\",\"type\":\"boolean\"},"
    "{\"name\":\"i\",\"type\":\"int\"},"
    "{\"name\":\"l\",\"type\":\"long\"},"
    "{\"name\":\"f\",\"type\":\"float\"},"
    "{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"by\",\"type\":\"bytes\"},"
    "{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"color\",\"symbols\":[\"RED\",\"GREEN\","
    "\"BLUE\"]}},"
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"int\"}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"}},"
    "{\"name\":\"u\",\"type\":[\"null\",\"string\",\"long\"]},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"f3\",\"size\":3}},"
    "{\"name\":\"date\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"
    "{\"name\":\"tm\",\"type\":{\"type\":\"long\",\"logicalType\":\"time-micros\"}},"
    "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}},"
    "{\"name\":\"dec\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":10,"
    "\"scale\":2}},"
    "{\"name\":\"decf\",\"type\":{\"type\":\"fixed\",\"name\":\"d5\",\"size\":5,\"logicalType\":"
    "\"decimal\",\"precision\":9,\"scale\":3}},"
    "{\"name\":\"uuid\",\"type\":{\"type\":\"string\",\"logicalType\":\"uuid\"}},"
    "{\"name\":\"opt\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"inner\",\"fields\":[{"
    "\"name\":\"x\",\"type\":\"int\"}]}],\"default\":null},"
    "{\"name\":\"withdef\",\"type\":\"string\",\"default\":\"dflt\"}"
    "]}";

static floe_avro_value_t *all_types_value(floe_arena_t *a, const floe_avro_schema_t *s, int k)
{
    floe_err_t err = {0};
    floe_avro_value_t *v = floe_avro_value_new(a, s);
    int rc = 0;
    rc |= floe_avro_rec_set_null(v, "n", &err);
    rc |= floe_avro_rec_set_bool(v, "b", k & 1, &err);
    rc |= floe_avro_rec_set_int(v, "i", k % 2 ? INT32_MIN + k : INT32_MAX - k, &err);
    rc |= floe_avro_rec_set_long(v, "l", k % 2 ? INT64_MIN + k : INT64_MAX - k, &err);
    rc |= floe_avro_rec_set_float(v, "f", k == 3 ? NAN : 1.5f * (float)k, &err);
    rc |= floe_avro_rec_set_double(v, "d", k == 2 ? -INFINITY : -0.1 * k, &err);
    uint8_t raw[3] = {0, (uint8_t)k, 0xff};
    rc |= floe_avro_rec_set_bytes(v, "by", raw, (size_t)(k % 4), &err);
    rc |= floe_avro_rec_set_string(v, "s", k ? "h\xc3\xa9llo \"q\"\n" : "", &err);
    rc |= floe_avro_rec_set_enum(v, "e", k % 3 == 0 ? "RED" : "BLUE", &err);
    floe_avro_value_t *arr = floe_avro_field(v, "a");
    for (int j = 0; j < k; j++)
        rc |= floe_avro_set_int(floe_avro_array_append(arr, &err), j * 1000, &err);
    floe_avro_value_t *m = floe_avro_field(v, "m");
    for (int j = 0; j < k; j++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", j);
        rc |= floe_avro_set_double(floe_avro_map_put(m, key, &err), j / 3.0, &err);
    }
    floe_avro_value_t *u = floe_avro_field(v, "u");
    if (k % 3 == 1) rc |= floe_avro_set_string(u, "str", &err);
    else if (k % 3 == 2)
        rc |= floe_avro_set_long(u, -5, &err);
    else
        rc |= floe_avro_set_null(u, &err);
    rc |= floe_avro_rec_set_bytes(v, "fx", raw, 3, &err);
    rc |= floe_avro_rec_set_int(v, "date", 19000 + k, &err);
    rc |= floe_avro_rec_set_long(v, "tm", 3600000000LL + k, &err);
    rc |= floe_avro_rec_set_long(v, "ts", 1700000000000000LL + k, &err);
    rc |= floe_avro_set_decimal_i64(floe_avro_field(v, "dec"), k % 2 ? -12345 - k : 99 + k, &err);
    rc |= floe_avro_set_decimal_i64(floe_avro_field(v, "decf"), k % 2 ? -1 : 123456789, &err);
    rc |= floe_avro_rec_set_string(v, "uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", &err);
    if (k % 2) rc |= floe_avro_rec_set_int(floe_avro_field(v, "opt"), "x", k, &err);
    if (k == 5) rc |= floe_avro_rec_set_string(v, "withdef", "given", &err);
    if (rc) fprintf(stderr, "building value %d: %s\n", k, err.msg);
    return rc ? NULL : v;
}

static void values_round_trip(void)
{
    floe_avro_schema_t *s = parse(ALL_TYPES);
    CHECK(s != NULL);
    if (!s) return;
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_err_t err = {0};
    for (int k = 0; k < 6; k++) {
        floe_avro_value_t *v = all_types_value(&a, s, k);
        CHECK(v != NULL);
        if (!v) continue;
        floe_buf_t b = FLOE_BUF_INIT;
        CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
        floe_slice_t in = floe_buf_slice(&b);
        floe_avro_value_t *back = NULL;
        CHECK_EQ(floe_avro_decode(s, &in, &a, &back, &err), 0);
        CHECK_EQ(in.len, 0);
        if (!back) continue;
        /* unset withdef was encoded as its default */
        const char *wd;
        CHECK_EQ(floe_avro_get_string(floe_avro_get(back, "withdef"), &wd, NULL, &err), 0);
        CHECK_STR(wd, k == 5 ? "given" : "dflt");
        if (k != 5) CHECK_EQ(floe_avro_rec_set_string(v, "withdef", "dflt", &err), 0);
        CHECK(floe_avro_value_equal(v, back));
        in = floe_buf_slice(&b);
        CHECK_EQ(floe_avro_skip(s, &in, &err), 0);
        CHECK_EQ(in.len, 0);
        /* getters */
        int64_t l;
        CHECK_EQ(floe_avro_get_long(floe_avro_get(back, "l"), &l, &err), 0);
        CHECK(l == (k % 2 ? INT64_MIN + k : INT64_MAX - k));
        CHECK_EQ(floe_avro_get_long(floe_avro_get(back, "i"), &l, &err), 0); /* int as long */
        CHECK_EQ(floe_avro_get_decimal_i64(floe_avro_get(back, "dec"), &l, &err), 0);
        CHECK_EQ(l, k % 2 ? -12345 - k : 99 + k);
        CHECK_EQ(floe_avro_get_decimal_i64(floe_avro_get(back, "decf"), &l, &err), 0);
        CHECK_EQ(l, k % 2 ? -1 : 123456789);
        CHECK_EQ(floe_avro_array_len(floe_avro_get(back, "a")), k);
        CHECK_EQ(floe_avro_map_len(floe_avro_get(back, "m")), k);
        if (k >= 2) {
            double d;
            CHECK_EQ(
                floe_avro_get_double(floe_avro_map_get(floe_avro_get(back, "m"), "k1"), &d, &err),
                0);
            CHECK(d == 1 / 3.0);
        }
        const char *sym;
        CHECK_EQ(floe_avro_get_enum(floe_avro_get(back, "e"), NULL, &sym, &err), 0);
        CHECK_STR(sym, k % 3 == 0 ? "RED" : "BLUE");
        CHECK_EQ(floe_avro_value_branch(floe_avro_get(back, "u")), k % 3);
        CHECK_EQ(floe_avro_value_is_null(floe_avro_get(back, "opt")), !(k % 2));
        /* every datum is truncated somewhere: decode must fail cleanly */
        for (size_t cut = 0; cut < b.len; cut++) {
            floe_slice_t t = floe_slice(b.data, cut);
            floe_avro_value_t *x;
            floe_err_t e2 = {0};
            CHECK_EQ(floe_avro_decode(s, &t, &a, &x, &e2), -1);
            CHECK(e2.code == FLOE_ETRUNC);
        }
        floe_buf_free(&b);
    }
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

static void setters_choose_branches_and_check(void)
{
    floe_avro_schema_t *s = parse(MANIFEST_ENTRY);
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_err_t err = {0};
    floe_avro_value_t *e = floe_avro_value_new(&a, s);
    /* status unset: encoding names the field */
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_avro_encode(e, &b, &err), -1);
    CHECK(strstr(err.msg, "status") != NULL);
    CHECK_EQ(b.len, 0);
    CHECK_EQ(floe_avro_rec_set_int(e, "status", 1, &err), 0);
    CHECK_EQ(floe_avro_rec_set_long(e, "snapshot_id", 77, &err), 0);
    CHECK_EQ(floe_avro_rec_set_string(e, "status", "x", &err), -1);
    CHECK(strstr(err.msg, "status") != NULL);
    CHECK_EQ(floe_avro_rec_set_int(e, "nosuch", 1, &err), -1);
    CHECK(strstr(err.msg, "nosuch") != NULL);
    floe_avro_value_t *df = floe_avro_field(e, "data_file");
    CHECK_EQ(floe_avro_rec_set_string(df, "file_path", "s3://b/x.parquet", &err), 0);
    CHECK_EQ(floe_avro_rec_set_long(df, "record_count", 10, &err), 0);
    floe_avro_value_t *cs = floe_avro_field(df, "column_sizes");
    for (int k = 1; k <= 2; k++) {
        floe_avro_value_t *kv = floe_avro_array_append(cs, &err);
        CHECK(kv != NULL);
        CHECK_EQ(floe_avro_rec_set_int(kv, "key", k, &err), 0);
        CHECK_EQ(floe_avro_rec_set_long(kv, "value", 100 * k, &err), 0);
    }
    CHECK_EQ(floe_avro_rec_set_int(floe_avro_field(df, "partition"), "day", 19000, &err), 0);
    CHECK_EQ(
        floe_avro_set_string(floe_avro_map_put(floe_avro_field(df, "props"), "k", &err), "v", &err),
        0);
    CHECK_EQ(floe_avro_encode(e, &b, &err), 0);
    floe_slice_t in = floe_buf_slice(&b);
    floe_avro_value_t *back;
    CHECK_EQ(floe_avro_decode(s, &in, &a, &back, &err), 0);
    CHECK(floe_avro_value_equal(e, back));
    int64_t x;
    CHECK_EQ(floe_avro_get_long(floe_avro_get(back, "snapshot_id"), &x, &err), 0);
    CHECK_EQ(x, 77);
    const floe_avro_value_t *bdf = floe_avro_get(back, "data_file");
    CHECK(floe_avro_value_is_null(floe_avro_get(bdf, "split_offsets")));
    CHECK_EQ(floe_avro_array_len(floe_avro_get(bdf, "column_sizes")), 2);
    CHECK_EQ(floe_avro_get_long(
                 floe_avro_get(floe_avro_array_at(floe_avro_get(bdf, "column_sizes"), 1), "value"),
                 &x, &err),
             0);
    CHECK_EQ(x, 200);
    const char *str;
    CHECK_EQ(
        floe_avro_get_string(floe_avro_map_get(floe_avro_get(bdf, "props"), "k"), &str, NULL, &err),
        0);
    CHECK_STR(str, "v");
    floe_buf_t js = FLOE_BUF_INIT;
    CHECK_EQ(floe_avro_value_to_json(back, &js, &err), 0);
    CHECK(json_same(
        floe_buf_cstr(&js),
        "{\"status\":1,\"snapshot_id\":77,\"data_file\":{\"file_path\":\"s3://b/x.parquet\","
        "\"partition\":{\"day\":19000},\"record_count\":10,\"column_sizes\":"
        "[{\"key\":1,\"value\":100},{\"key\":2,\"value\":200}],\"split_offsets\":null,"
        "\"props\":{\"k\":\"v\"}}}"));
    floe_buf_free(&js);
    /* missing fields read as null and fail to write, without crashing */
    CHECK(floe_avro_get(back, "nosuch") == NULL);
    CHECK_EQ(floe_avro_array_len(floe_avro_get(floe_avro_get(back, "nosuch"), "x")), 0);
    CHECK(floe_avro_value_is_null(floe_avro_get(back, "nosuch")));
    CHECK_EQ(floe_avro_get_long(floe_avro_get(back, "nosuch"), &x, &err), -1);
    CHECK_EQ(floe_avro_rec_set_int(floe_avro_field(e, "nosuch"), "x", 1, &err), -1);
    CHECK(strstr(err.msg, "missing field") != NULL);
    CHECK(floe_avro_array_append(floe_avro_field(e, "nosuch"), &err) == NULL);
    CHECK_EQ(floe_avro_set_long(NULL, 1, &err), -1);
    /* a long that does not fit an int; bytes of the wrong fixed size */
    floe_avro_schema_t *fx = parse("{\"type\":\"fixed\",\"name\":\"f\",\"size\":2}");
    floe_avro_value_t *fv = floe_avro_value_new(&a, fx);
    CHECK_EQ(floe_avro_set_bytes(fv, "abc", 3, &err), -1);
    CHECK_EQ(floe_avro_rec_set_long(e, "status", 1LL << 40, &err), -1);
    CHECK_EQ(floe_avro_set_decimal_i64(fv, 40000, &err), -1);
    CHECK_EQ(floe_avro_set_decimal_i64(fv, -32768, &err), 0);
    CHECK_EQ(floe_avro_get_decimal_i64(fv, &x, &err), 0);
    CHECK_EQ(x, -32768);
    floe_avro_schema_free(fx);
    floe_buf_free(&b);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

static void corrupt_datums_rejected(void)
{
    floe_avro_schema_t *s =
        parse("{\"type\":\"record\",\"name\":\"r\",\"fields\":["
              "{\"name\":\"u\",\"type\":[\"null\",\"int\"]},"
              "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}},"
              "{\"name\":\"s\",\"type\":\"string\"},"
              "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"null\"}}]}");
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    static const struct {
        uint8_t b[16];
        size_t n;
        const char *msg;
    } bad[] = {
        {{0x04}, 1, "union index 2 out of range"},
        {{0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 12, "varint"},
        {{0x00, 0x02}, 2, "enum E index 1 out of range"},
        {{0x00, 0x00, 0x01}, 3, "negative string length"},
        {{0x00, 0x00, 0x7e}, 3, "string of 63 bytes but 0 left"},
        {{0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff, 0x0f}, 8, "more than"},
        {{0x02, 0xfe, 0xff, 0xff, 0xff, 0x1f}, 6, "int value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        floe_slice_t in = floe_slice(bad[i].b, bad[i].n);
        floe_avro_value_t *v;
        floe_err_t err = {0};
        CHECK_EQ(floe_avro_decode(s, &in, &a, &v, &err), -1);
        if (!strstr(err.msg, bad[i].msg)) {
            fprintf(stderr, "datum %zu: \"%s\" lacks \"%s\"\n", i, err.msg, bad[i].msg);
            CHECK(0);
        }
        in = floe_slice(bad[i].b, bad[i].n);
        CHECK_EQ(floe_avro_skip(s, &in, &err), -1);
    }
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

/* Every codec, several blocks, header metadata, reading back equal. */
static void container_round_trip(void)
{
    floe_avro_schema_t *s = parse(ALL_TYPES);
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_err_t err = {0};
    for (int c = FLOE_AVRO_CODEC_NULL; c <= FLOE_AVRO_CODEC_ZSTD; c++) {
        floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
        o.codec = (floe_avro_codec_t)c;
        o.block_bytes = 300; /* several blocks */
        floe_avro_writer_t *w;
        CHECK_EQ(floe_avro_writer_new(&w, s, &o, &err), 0);
        CHECK_EQ(floe_avro_writer_set_meta_str(w, "format-version", "2", &err), 0);
        CHECK_EQ(floe_avro_writer_set_meta_str(w, "partition-spec-id", "0", &err), 0);
        CHECK_EQ(floe_avro_writer_set_meta_str(w, "format-version", "3", &err), 0);
        CHECK_EQ(floe_avro_writer_set_meta_str(w, "avro.codec", "x", &err), -1);
        floe_avro_value_t *vals[60];
        for (int k = 0; k < 60; k++) {
            vals[k] = all_types_value(&a, s, k % 6);
            CHECK_EQ(floe_avro_writer_append(w, vals[k], &err), 0);
        }
        CHECK_EQ(floe_avro_writer_set_meta_str(w, "late", "x", &err), -1);
        CHECK_EQ(floe_avro_writer_finish(w, &err), 0);
        CHECK_EQ(floe_avro_writer_count(w), 60);
        floe_slice_t file = floe_avro_writer_bytes(w);
        CHECK_EQ(floe_avro_writer_bytes_written(w), file.len);
        floe_avro_reader_t *r;
        CHECK_EQ(floe_avro_reader_open(&r, file.ptr, file.len, NULL, &err), 0);
        if (!r) {
            floe_avro_writer_free(w);
            continue;
        }
        CHECK_EQ(floe_avro_reader_codec(r), c);
        floe_slice_t mv;
        CHECK(floe_avro_reader_meta(r, "format-version", &mv) && mv.len == 1 && mv.ptr[0] == '3');
        CHECK(floe_avro_reader_meta(r, "partition-spec-id", &mv));
        CHECK_EQ(floe_avro_reader_meta_count(r), 4);
        floe_slice_t sj = floe_avro_reader_schema_json(r);
        char *sjs = strndup((const char *)sj.ptr, sj.len);
        CHECK(json_same(sjs, ALL_TYPES));
        free(sjs);
        floe_arena_t ra;
        floe_arena_init(&ra, 0, 0);
        int n = 0, rc;
        floe_avro_value_t *v;
        while ((rc = floe_avro_reader_next(r, &ra, &v, &err)) == 1) {
            if (n < 60) {
                CHECK_EQ(floe_avro_rec_set_string(vals[n], "withdef",
                                                  (n % 6) == 5 ? "given" : "dflt", &err),
                         0);
                CHECK(floe_avro_value_equal(vals[n], v));
            }
            n++;
            floe_arena_reset(&ra);
        }
        CHECK_EQ(rc, 0);
        CHECK_EQ(n, 60);
        floe_arena_free(&ra);
        floe_avro_reader_free(r);
        floe_avro_writer_free(w);
    }
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

typedef struct sinkbuf {
    floe_buf_t b;
    int calls;
} sinkbuf_t;

static int sink(void *ctx, const void *p, size_t n, floe_err_t *err)
{
    (void)err;
    sinkbuf_t *sb = ctx;
    sb->calls++;
    return floe_buf_append(&sb->b, p, n);
}

static void container_sink_and_empty(void)
{
    floe_avro_schema_t *s = parse("\"long\"");
    floe_err_t err = {0};
    sinkbuf_t sb = {FLOE_BUF_INIT, 0};
    floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
    o.sink = sink;
    o.sink_ctx = &sb;
    o.block_bytes = 100;
    o.codec = FLOE_AVRO_CODEC_DEFLATE;
    floe_avro_writer_t *w;
    CHECK_EQ(floe_avro_writer_new(&w, s, &o, &err), 0);
    uint8_t enc[10];
    for (int i = 0; i < 1000; i++) {
        enc[0] = (uint8_t)((i % 60) * 2);
        CHECK_EQ(floe_avro_writer_append_encoded(w, enc, 1, &err), 0);
    }
    CHECK_EQ(floe_avro_writer_finish(w, &err), 0);
    CHECK(sb.calls > 5);
    CHECK_EQ(floe_avro_writer_bytes(w).len, 0);
    CHECK_EQ(floe_avro_writer_bytes_written(w), sb.b.len);
    floe_avro_writer_free(w);
    floe_avro_reader_t *r;
    CHECK_EQ(floe_avro_reader_open(&r, sb.b.data, sb.b.len, NULL, &err), 0);
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_avro_value_t *v;
    int n = 0;
    while (floe_avro_reader_next(r, &a, &v, &err) == 1) {
        int64_t x;
        CHECK_EQ(floe_avro_get_long(v, &x, &err), 0);
        CHECK_EQ(x, n % 60);
        n++;
    }
    CHECK_EQ(n, 1000);
    floe_avro_reader_free(r);
    floe_buf_free(&sb.b);
    /* an empty file: header only */
    uint8_t *file;
    size_t len;
    CHECK_EQ(floe_avro_write_file(s, NULL, NULL, NULL, 0, NULL, 0, &file, &len, &err), 0);
    CHECK_EQ(floe_avro_reader_open(&r, file, len, NULL, &err), 0);
    CHECK_EQ(floe_avro_reader_next(r, &a, &v, &err), 0);
    floe_avro_reader_free(r);
    free(file);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

/* Read a whole file; returns datums read, or -1 on error (err filled). */
static int read_all(const uint8_t *p, size_t n, floe_err_t *err)
{
    floe_avro_reader_t *r;
    if (floe_avro_reader_open(&r, p, n, NULL, err) != 0) return -1;
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 24);
    floe_avro_value_t *v;
    int count = 0, rc;
    while ((rc = floe_avro_reader_next(r, &a, &v, err)) == 1) {
        count++;
        floe_arena_reset(&a);
    }
    floe_arena_free(&a);
    floe_avro_reader_free(r);
    return rc < 0 ? -1 : count;
}

#define APPEND_LIT(b, lit) floe_buf_append((b), (lit), sizeof(lit) - 1)

static void container_corrupt_rejected(void)
{
    floe_avro_schema_t *s = parse(ALL_TYPES);
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_err_t err = {0};
    for (int c = FLOE_AVRO_CODEC_NULL; c <= FLOE_AVRO_CODEC_ZSTD; c++) {
        floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
        o.codec = (floe_avro_codec_t)c;
        o.block_bytes = 200;
        const floe_avro_value_t *vals[12];
        for (int k = 0; k < 12; k++) vals[k] = all_types_value(&a, s, k % 6);
        uint8_t *file;
        size_t len;
        CHECK_EQ(floe_avro_write_file(s, &o, NULL, NULL, 0, vals, 12, &file, &len, &err), 0);
        CHECK_EQ(read_all(file, len, &err), 12);
        /* every truncation: an error, or (cut at a block end) fewer datums */
        int errors = 0, tries = 0;
        for (size_t cut = 0; cut < len; cut += cut < 300 ? 1 : 5) {
            tries++;
            floe_err_t e = {0};
            int n = read_all(file, cut, &e);
            if (n < 0) {
                errors++;
                CHECK(e.msg[0] != 0);
                CHECK(e.code == FLOE_ETRUNC || e.code == FLOE_ECORRUPT);
            } else {
                CHECK(n < 12);
            }
        }
        CHECK(errors > tries * 9 / 10);
        /* truncated inside the last block: the message says so */
        floe_err_t e = {0};
        CHECK_EQ(read_all(file, len - 20, &e), -1);
        CHECK(strstr(e.msg, "truncated") != NULL);
        /* a flipped sync marker byte at the end of the file */
        file[len - 1] ^= 0x40;
        CHECK_EQ(read_all(file, len, &e), -1);
        CHECK(strstr(e.msg, "sync marker") != NULL);
        file[len - 1] ^= 0x40;
        /* flip every byte in turn: never a crash (ASan watches) */
        for (size_t i = 0; i < len; i += i < 300 ? 1 : 7) {
            file[i] ^= 0xa5;
            (void)read_all(file, len, &e);
            file[i] ^= 0xa5;
        }
        free(file);
    }
    /* bad magic, unknown codec, missing schema, huge block count */
    floe_err_t e = {0};
    CHECK_EQ(read_all((const uint8_t *)"Obj\x02", 4, &e), -1);
    CHECK(strstr(e.msg, "bad magic") != NULL);
    floe_buf_t b = FLOE_BUF_INIT;
    APPEND_LIT(&b, "Obj\x01\x04\x16"
                   "avro.schema\x0c\"long\"\x14"
                   "avro.codec\x08"
                   "lzma\x00");
    APPEND_LIT(&b, "0123456789abcdef");
    CHECK_EQ(read_all(b.data, b.len, &e), -1);
    CHECK(strstr(e.msg, "codec \"lzma\" not supported") != NULL);
    floe_buf_reset(&b);
    APPEND_LIT(&b, "Obj\x01\x02\x14"
                   "avro.codec\x08"
                   "null\x00");
    APPEND_LIT(&b, "0123456789abcdef");
    CHECK_EQ(read_all(b.data, b.len, &e), -1);
    CHECK(strstr(e.msg, "no avro.schema") != NULL);
    floe_buf_reset(&b);
    APPEND_LIT(&b, "Obj\x01\x02\x16"
                   "avro.schema\x0c\"null\"\x00");
    APPEND_LIT(&b, "0123456789abcdef");
    APPEND_LIT(&b, "\xfe\xff\xff\xff\x0f\x00"); /* 2^31-1 nulls in 0 bytes */
    APPEND_LIT(&b, "0123456789abcdef");
    CHECK_EQ(read_all(b.data, b.len, &e), -1);
    CHECK(strstr(e.msg, "block count") != NULL);
    floe_buf_free(&b);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

/* Resolution: added fields with defaults, removed fields, promotions,
 * unions on either side, enum symbols, renamed types by alias. */
static void resolution_cases(void)
{
    const char *wjs = "{\"type\":\"record\",\"name\":\"ev\",\"namespace\":\"w\",\"fields\":["
                      "{\"name\":\"id\",\"type\":\"int\"},"
                      "{\"name\":\"gone\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
                      "{\"name\":\"amount\",\"type\":\"float\"},"
                      "{\"name\":\"name\",\"type\":\"string\"},"
                      "{\"name\":\"raw\",\"type\":\"bytes\"},"
                      "{\"name\":\"maybe\",\"type\":[\"null\",\"int\"]},"
                      "{\"name\":\"plain\",\"type\":\"long\"},"
                      "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"K\",\"symbols\":["
                      "\"A\",\"B\",\"C\"]}},"
                      "{\"name\":\"old_name\",\"type\":\"int\"},"
                      "{\"name\":\"nums\",\"type\":{\"type\":\"map\",\"values\":\"int\"}}]}";
    const char *rjs =
        "{\"type\":\"record\",\"name\":\"ev\",\"namespace\":\"r\",\"fields\":["
        "{\"name\":\"id\",\"type\":\"long\"},"
        "{\"name\":\"amount\",\"type\":\"double\"},"
        "{\"name\":\"name\",\"type\":\"bytes\"},"
        "{\"name\":\"raw\",\"type\":\"string\"},"
        "{\"name\":\"maybe\",\"type\":[\"null\",\"long\"]},"
        "{\"name\":\"plain\",\"type\":[\"null\",\"string\",\"double\"]},"
        "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"K\",\"symbols\":[\"C\",\"A\","
        "\"OTHER\"],\"default\":\"OTHER\"}},"
        "{\"name\":\"new_name\",\"type\":\"int\",\"aliases\":[\"old_name\"]},"
        "{\"name\":\"nums\",\"type\":{\"type\":\"map\",\"values\":\"double\"}},"
        "{\"name\":\"added\",\"type\":\"string\",\"default\":\"hi\"},"
        "{\"name\":\"added_rec\",\"type\":{\"type\":\"record\",\"name\":\"sub\",\"fields\":["
        "{\"name\":\"x\",\"type\":\"int\",\"default\":7},{\"name\":\"y\",\"type\":{\"type\":"
        "\"array\",\"items\":\"long\"}}]},"
        "\"default\":{\"y\":[1,2]}},"
        "{\"name\":\"added_opt\",\"type\":[\"null\",\"int\"],\"default\":null}]}";
    floe_avro_schema_t *ws = parse(wjs), *rs = parse(rjs);
    CHECK(ws && rs);
    if (!ws || !rs) return;
    floe_err_t err = {0};
    floe_avro_resolver_t *res;
    CHECK_EQ(floe_avro_resolver_new(ws, rs, &res, &err), 0);
    if (err.msg[0]) fprintf(stderr, "resolver: %s\n", err.msg);
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_avro_value_t *v = floe_avro_value_new(&a, ws);
    floe_avro_rec_set_int(v, "id", -9, &err);
    floe_avro_set_string(floe_avro_array_append(floe_avro_field(v, "gone"), &err), "zz", &err);
    floe_avro_rec_set_float(v, "amount", 2.5f, &err);
    floe_avro_rec_set_string(v, "name", "nm", &err);
    floe_avro_rec_set_bytes(v, "raw", "rw", 2, &err);
    floe_avro_rec_set_int(v, "maybe", 5, &err);
    floe_avro_rec_set_long(v, "plain", 1LL << 40, &err);
    floe_avro_rec_set_enum(v, "kind", "B", &err);
    floe_avro_rec_set_int(v, "old_name", 42, &err);
    floe_avro_set_int(floe_avro_map_put(floe_avro_field(v, "nums"), "q", &err), 3, &err);
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_avro_encode(v, &b, &err), 0);
    floe_slice_t in = floe_buf_slice(&b);
    floe_avro_value_t *out = NULL;
    CHECK_EQ(floe_avro_resolver_decode(res, &in, &a, &out, &err), 0);
    CHECK_EQ(in.len, 0);
    floe_buf_t js = FLOE_BUF_INIT;
    if (out) CHECK_EQ(floe_avro_value_to_json(out, &js, &err), 0);
    CHECK(json_same(
        floe_buf_cstr(&js),
        "{\"id\":-9,\"amount\":2.5,\"name\":{\"$bytes\":\"6e6d\"},\"raw\":\"rw\",\"maybe\":5,"
        "\"plain\":1099511627776,\"kind\":\"OTHER\",\"new_name\":42,\"nums\":{\"q\":3},"
        "\"added\":\"hi\",\"added_rec\":{\"x\":7,\"y\":[1,2]},\"added_opt\":null}"));
    CHECK(out && floe_avro_value_schema(out) == rs);
    /* the resolved value is the caller's to change (defaults were copied) */
    if (out) {
        floe_avro_value_t *ar = floe_avro_field(out, "added_rec");
        CHECK(floe_avro_array_append(floe_avro_field(ar, "y"), &err) != NULL);
    }
    floe_buf_free(&js);
    floe_buf_free(&b);
    floe_avro_resolver_free(res);

    /* incompatible: a reader field without default, a type change */
    floe_avro_schema_t *r2 =
        parse("{\"type\":\"record\",\"name\":\"ev\",\"fields\":["
              "{\"name\":\"id\",\"type\":\"int\"},{\"name\":\"newf\",\"type\":\"int\"}]}");
    CHECK_EQ(floe_avro_resolver_new(ws, r2, &res, &err), -1);
    CHECK(strstr(err.msg, "newf") && strstr(err.msg, "no default"));
    floe_avro_schema_t *r3 = parse("{\"type\":\"record\",\"name\":\"ev\",\"fields\":["
                                   "{\"name\":\"name\",\"type\":\"int\"}]}");
    CHECK_EQ(floe_avro_resolver_new(ws, r3, &res, &err), -1);
    CHECK(strstr(err.msg, "string cannot be read as int") != NULL);
    floe_avro_schema_t *r4 = parse("{\"type\":\"record\",\"name\":\"other\",\"fields\":[]}");
    CHECK_EQ(floe_avro_resolver_new(ws, r4, &res, &err), -1);

    /* writer union to reader non-union: fails only for the null datum */
    floe_avro_schema_t *wu = parse("[\"null\",\"int\"]"), *rl = parse("\"long\"");
    CHECK_EQ(floe_avro_resolver_new(wu, rl, &res, &err), 0);
    const uint8_t two[] = {0x02, 0x54}, nul[] = {0x00};
    in = floe_slice(two, 2);
    CHECK_EQ(floe_avro_resolver_decode(res, &in, &a, &out, &err), 0);
    int64_t x;
    CHECK_EQ(floe_avro_get_long(out, &x, &err), 0);
    CHECK_EQ(x, 42);
    in = floe_slice(nul, 1);
    CHECK_EQ(floe_avro_resolver_decode(res, &in, &a, &out, &err), -1);
    CHECK(strstr(err.msg, "null") != NULL);
    floe_avro_resolver_free(res);

    /* container reader with a reader schema */
    floe_avro_value_t *vals[1] = {v};
    uint8_t *file;
    size_t len;
    CHECK_EQ(floe_avro_write_file(ws, NULL, NULL, NULL, 0, (const floe_avro_value_t *const *)vals,
                                  1, &file, &len, &err),
             0);
    floe_avro_reader_opts_t ro = FLOE_AVRO_READER_OPTS_INIT;
    ro.reader_schema = rs;
    floe_avro_reader_t *rd;
    CHECK_EQ(floe_avro_reader_open(&rd, file, len, &ro, &err), 0);
    CHECK_EQ(floe_avro_reader_next(rd, &a, &out, &err), 1);
    CHECK_EQ(floe_avro_get_long(floe_avro_get(out, "id"), &x, &err), 0);
    CHECK_EQ(x, -9);
    CHECK(floe_avro_value_schema(out) == rs);
    floe_avro_reader_free(rd);
    ro.reader_schema = r2;
    CHECK_EQ(floe_avro_reader_open(&rd, file, len, &ro, &err), -1);
    free(file);

    floe_arena_free(&a);
    floe_avro_schema_free(wu);
    floe_avro_schema_free(rl);
    floe_avro_schema_free(r2);
    floe_avro_schema_free(r3);
    floe_avro_schema_free(r4);
    floe_avro_schema_free(ws);
    floe_avro_schema_free(rs);
}

/* Arena caps bound what hostile lengths can allocate. */
static void decode_respects_arena_cap(void)
{
    floe_avro_schema_t *s = parse("{\"type\":\"array\",\"items\":\"string\"}");
    floe_buf_t b = FLOE_BUF_INIT;
    /* 100000 empty strings: 100002 bytes, ~3 MB of values */
    uint8_t hdr[8];
    size_t n = 0;
    int64_t cnt = 100000;
    uint64_t zz = ((uint64_t)cnt << 1);
    while (zz >= 0x80) {
        hdr[n++] = (uint8_t)(zz | 0x80);
        zz >>= 7;
    }
    hdr[n++] = (uint8_t)zz;
    floe_buf_append(&b, hdr, n);
    for (int i = 0; i < cnt; i++) floe_buf_append_u8(&b, 0);
    floe_buf_append_u8(&b, 0);
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    floe_slice_t in = floe_buf_slice(&b);
    floe_avro_value_t *v;
    floe_err_t err = {0};
    CHECK_EQ(floe_avro_decode(s, &in, &a, &v, &err), -1);
    CHECK_EQ(err.code, FLOE_ENOMEM);
    floe_arena_free(&a);
    floe_arena_init(&a, 0, 0);
    in = floe_buf_slice(&b);
    CHECK_EQ(floe_avro_decode(s, &in, &a, &v, &err), 0);
    CHECK_EQ(floe_avro_array_len(v), cnt);
    floe_arena_free(&a);
    floe_buf_free(&b);
    floe_avro_schema_free(s);
}

/* Smaller corners of the API: verbatim header schema, codec names, string
 * attributes, unions on both sides of resolution, unknown enum symbols. */
static void api_corners(void)
{
    floe_err_t err = {0};
    floe_avro_codec_t c;
    CHECK_EQ(floe_avro_codec_parse("zstandard", &c, &err), 0);
    CHECK_EQ(c, FLOE_AVRO_CODEC_ZSTD);
    CHECK_EQ(floe_avro_codec_parse("bzip2", &c, &err), -1);
    CHECK_EQ(err.code, FLOE_EUNSUPPORTED);
    CHECK_STR(floe_avro_codec_name(FLOE_AVRO_CODEC_SNAPPY), "snappy");

    const char *text =
        "{ \"type\": \"record\", \"name\": \"r\", \"doc\": \"kept as typed\",\n"
        "  \"fields\": [ {\"name\": \"e\", \"type\": {\"type\": \"enum\", \"name\": \"E\", "
        "\"symbols\": [\"A\", \"B\"]}} ] }";
    floe_avro_schema_t *s = parse(text);
    CHECK_STR(floe_avro_schema_prop_str(s, "doc"), "kept as typed");
    CHECK(floe_avro_schema_prop_str(s, "nope") == NULL);
    floe_avro_writer_t *w;
    CHECK_EQ(floe_avro_writer_new(&w, s, NULL, &err), 0);
    CHECK_EQ(floe_avro_writer_set_meta_str(w, "avro.schema", "\"long\"", &err), -1);
    CHECK(strstr(err.msg, "differs") != NULL);
    CHECK_EQ(floe_avro_writer_set_meta_str(w, "avro.schema", text, &err), 0);
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_avro_value_t *v = floe_avro_value_new(&a, s);
    CHECK_EQ(floe_avro_rec_set_enum(v, "e", "B", &err), 0);
    CHECK_EQ(floe_avro_writer_append(w, v, &err), 0);
    CHECK_EQ(floe_avro_writer_finish(w, &err), 0);
    CHECK_EQ(floe_avro_writer_append(w, v, &err), -1);
    floe_slice_t file = floe_avro_writer_bytes(w);
    floe_avro_reader_t *r;
    CHECK_EQ(floe_avro_reader_open(&r, file.ptr, file.len, NULL, &err), 0);
    floe_slice_t sj = floe_avro_reader_schema_json(r);
    CHECK(sj.len == strlen(text) && memcmp(sj.ptr, text, sj.len) == 0);
    /* a reader enum without B and without a default: fails on that datum */
    floe_avro_schema_t *rs =
        parse("{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"e\",\"type\":"
              "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}}]}");
    floe_avro_reader_free(r);
    floe_avro_reader_opts_t ro = FLOE_AVRO_READER_OPTS_INIT;
    ro.reader_schema = rs;
    CHECK_EQ(floe_avro_reader_open(&r, file.ptr, file.len, &ro, &err), 0);
    floe_avro_value_t *out;
    CHECK_EQ(floe_avro_reader_next(r, &a, &out, &err), -1);
    CHECK(strstr(err.msg, "symbol B is not in the reader's enum") != NULL);
    CHECK_EQ(floe_avro_reader_next(r, &a, &out, &err), -1); /* stays failed */
    floe_avro_reader_free(r);
    floe_avro_writer_free(w);

    /* unions on both sides: [int, string] -> [null, string, long] */
    floe_avro_schema_t *wu = parse("[\"int\",\"string\"]"),
                       *ru = parse("[\"null\",\"string\",\"long\"]");
    floe_avro_resolver_t *res;
    CHECK_EQ(floe_avro_resolver_new(wu, ru, &res, &err), 0);
    const uint8_t i7[] = {0x00, 0x0e}, sx[] = {0x02, 0x02, 'x'};
    floe_slice_t in = floe_slice(i7, 2);
    CHECK_EQ(floe_avro_resolver_decode(res, &in, &a, &out, &err), 0);
    CHECK_EQ(floe_avro_value_branch(out), 2);
    int64_t x;
    CHECK_EQ(floe_avro_get_long(out, &x, &err), 0);
    CHECK_EQ(x, 7);
    in = floe_slice(sx, 3);
    CHECK_EQ(floe_avro_resolver_decode(res, &in, &a, &out, &err), 0);
    CHECK_EQ(floe_avro_value_branch(out), 1);
    floe_avro_resolver_free(res);
    /* an error type and a named reference in a union */
    floe_avro_schema_t *es = parse(
        "{\"type\":\"error\",\"name\":\"Oops\",\"fields\":[{\"name\":\"m\",\"type\":\"string\"}]}");
    char *ej = es ? floe_avro_schema_to_json(es, &err) : NULL;
    CHECK(ej && json_same(ej, "{\"type\":\"error\",\"name\":\"Oops\",\"fields\":[{\"name\":\"m\","
                              "\"type\":\"string\"}]}"));
    free(ej);
    floe_avro_schema_free(es);
    floe_avro_schema_free(wu);
    floe_avro_schema_free(ru);
    floe_avro_schema_free(rs);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

/* Canonical forms and Rabin fingerprints: vectors from the Avro project's
 * shared test data (share/test/data/schema-tests.txt). */
static void canonical_and_fingerprint_vectors(void)
{
    static const struct {
        const char *in, *canon;
        int64_t fp;
    } v[] = {
        {"\"null\"", "\"null\"", 7195948357588979594LL},
        {"{\"type\":\"boolean\"}", "\"boolean\"", -6970731678124411036LL},
        {"\"int\"", "\"int\"", 8247732601305521295LL},
        {"{\"type\":\"long\"}", "\"long\"", -3434872931120570953LL},
        {"\"float\"", "\"float\"", 5583340709985441680LL},
        {"\"double\"", "\"double\"", -8181574048448539266LL},
        {"\"bytes\"", "\"bytes\"", 5746618253357095269LL},
        {"\"string\"", "\"string\"", -8142146995180207161LL},
        {"[  ]", "[]", -1241056759729112623LL},
        {"[ \"int\"  ]", "[\"int\"]", -5232228896498058493LL},
        {"[ \"int\" , {\"type\":\"boolean\"} ]", "[\"int\",\"boolean\"]", 5392556393470105090LL},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\"}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}", -4824392279771201922LL},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", \"namespace\":\"x.y\"}",
         "{\"name\":\"x.y.foo\",\"type\":\"record\",\"fields\":[]}", 5916914534497305771LL},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"a.b.foo\", \"namespace\":\"x.y\"}",
         "{\"name\":\"a.b.foo\",\"type\":\"record\",\"fields\":[]}", -4616218487480524110LL},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", \"doc\":\"foo\", "
         "\"aliases\":[\"foo\",\"bar\"]}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}", -4824392279771201922LL},
        {"{\"fields\":[{\"type\":{\"type\":\"boolean\"}, \"name\":\"f1\"}], \"type\":\"record\", "
         "\"name\":\"foo\"}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[{\"name\":\"f1\",\"type\":\"boolean\"}]"
         "}",
         7843277075252814651LL},
        {"{ \"fields\":[{\"type\":\"boolean\", \"aliases\":[], \"name\":\"f1\", "
         "\"default\":\"true\"},\n"
         " {\"order\":\"descending\",\"name\":\"f2\",\"doc\":\"Hello\",\"type\":\"int\"}],\n"
         " \"type\":\"record\", \"name\":\"foo\"}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[{\"name\":\"f1\",\"type\":\"boolean\"},"
         "{\"name\":\"f2\",\"type\":\"int\"}]}",
         -4860222112080293046LL},
        {"{\"type\":\"enum\", \"name\":\"foo\", \"symbols\":[\"A1\"]}",
         "{\"name\":\"foo\",\"type\":\"enum\",\"symbols\":[\"A1\"]}", -6342190197741309591LL},
        {"{\"namespace\":\"x.y.z\", \"type\":\"enum\", \"name\":\"foo\", \"doc\":\"foo bar\", "
         "\"symbols\":[\"A1\", \"A2\"]}",
         "{\"name\":\"x.y.z.foo\",\"type\":\"enum\",\"symbols\":[\"A1\",\"A2\"]}",
         -4448647247586288245LL},
        {"{\"name\":\"foo\",\"type\":\"fixed\",\"size\":15}",
         "{\"name\":\"foo\",\"type\":\"fixed\",\"size\":15}", 1756455273707447556LL},
        {"{\"namespace\":\"x.y.z\", \"type\":\"fixed\", \"name\":\"foo\", \"doc\":\"foo bar\", "
         "\"size\":32}",
         "{\"name\":\"x.y.z.foo\",\"type\":\"fixed\",\"size\":32}", -3064184465700546786LL},
        {"{ \"items\":{\"type\":\"null\"}, \"type\":\"array\"}",
         "{\"type\":\"array\",\"items\":\"null\"}", -589620603366471059LL},
        {"{ \"values\":\"string\", \"type\":\"map\"}", "{\"type\":\"map\",\"values\":\"string\"}",
         -8732877298790414990LL},
        {"{\"name\":\"PigValue\",\"type\":\"record\",\n"
         " \"fields\":[{\"name\":\"value\", \"type\":[\"null\", \"int\", \"long\", "
         "\"PigValue\"]}]}",
         "{\"name\":\"PigValue\",\"type\":\"record\",\"fields\":[{\"name\":\"value\",\"type\":"
         "[\"null\",\"int\",\"long\",\"PigValue\"]}]}",
         -1759257747318642341LL},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        floe_avro_schema_t *s = parse(v[i].in);
        CHECK(s != NULL);
        if (!s) continue;
        floe_err_t err = {0};
        char *c = floe_avro_schema_canonical(s, &err);
        if (!c || strcmp(c, v[i].canon) != 0) {
            fprintf(stderr, "vector %zu: canonical %s, want %s\n", i, c ? c : "(null)", v[i].canon);
            CHECK(0);
        }
        uint64_t fp = 0;
        CHECK_EQ(floe_avro_schema_fingerprint64(s, &fp, &err), 0);
        CHECK_EQ((int64_t)fp, v[i].fp);
        free(c);
        floe_avro_schema_free(s);
    }
    /* single-object encoding header */
    uint8_t h[FLOE_AVRO_SINGLE_OBJECT_HEADER];
    floe_avro_single_object_header(0x0102030405060708ull, h);
    CHECK(h[0] == 0xc3 && h[1] == 0x01 && h[2] == 0x08 && h[9] == 0x01);
    uint64_t fp;
    floe_err_t err = {0};
    CHECK_EQ(floe_avro_single_object_parse(h, sizeof h, &fp, &err), 0);
    CHECK_EQ_U64(fp, 0x0102030405060708ull);
    CHECK_EQ(floe_avro_single_object_parse(h, 5, &fp, &err), -1);
    CHECK_EQ(err.code, FLOE_ETRUNC);
    h[1] = 2;
    CHECK_EQ(floe_avro_single_object_parse(h, sizeof h, &fp, &err), -1);
    CHECK_EQ(err.code, FLOE_ECORRUPT);
}

/* Blocks larger than the codecs' internal chunks (several MiB), and the
 * reader's block cap. */
static void container_big_blocks(void)
{
    floe_avro_schema_t *s = parse("\"bytes\"");
    floe_err_t err = {0};
    size_t n = 3u << 20;
    uint8_t *big = malloc(n);
    uint32_t x = 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        big[i] = (uint8_t)((i % 1000) < 500 ? 'a' : (x >> 24)); /* half compressible */
    }
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_avro_value_t *v = floe_avro_value_new(&a, s);
    CHECK_EQ(floe_avro_set_bytes(v, big, n, &err), 0);
    for (int c = FLOE_AVRO_CODEC_NULL; c <= FLOE_AVRO_CODEC_ZSTD; c++) {
        floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
        o.codec = (floe_avro_codec_t)c;
        const floe_avro_value_t *vals[2] = {v, v};
        uint8_t *file;
        size_t len;
        CHECK_EQ(floe_avro_write_file(s, &o, NULL, NULL, 0, vals, 2, &file, &len, &err), 0);
        floe_avro_reader_t *r;
        CHECK_EQ(floe_avro_reader_open(&r, file, len, NULL, &err), 0);
        floe_avro_value_t *back;
        int k = 0;
        while (floe_avro_reader_next(r, &a, &back, &err) == 1) {
            CHECK(floe_avro_value_equal(v, back));
            k++;
        }
        CHECK_EQ(k, 2);
        floe_avro_reader_free(r);
        /* a reader capped below the block size refuses it, clearly */
        floe_avro_reader_opts_t ro = FLOE_AVRO_READER_OPTS_INIT;
        ro.max_block_bytes = 1u << 20;
        CHECK_EQ(floe_avro_reader_open(&r, file, len, &ro, &err), 0);
        CHECK_EQ(floe_avro_reader_next(r, &a, &back, &err), -1);
        CHECK(strstr(err.msg, "limit") != NULL || strstr(err.msg, "block size") != NULL);
        floe_avro_reader_free(r);
        free(file);
    }
    free(big);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

/* Strings render as valid JSON whatever their bytes: controls escaped,
 * bytes that are not UTF-8 as U+FFFD. */
static void json_rendering_of_strings_is_valid_utf8(void)
{
    floe_avro_schema_t *s = parse("\"string\"");
    floe_err_t err = {0};
    floe_arena_t a;
    floe_arena_init(&a, 0, 0);
    floe_avro_value_t *v = floe_avro_value_new(&a, s);
    CHECK_EQ(floe_avro_set_stringn(v, "a\"\n\xc3\xa9\xff", 6, &err), 0);
    floe_buf_t js = FLOE_BUF_INIT;
    CHECK_EQ(floe_avro_value_to_json(v, &js, &err), 0);
    CHECK_STR(floe_buf_cstr(&js), "\"a\\\"\\n\xc3\xa9\\ufffd\"");
    floe_buf_free(&js);
    floe_arena_free(&a);
    floe_avro_schema_free(s);
}

TEST_MAIN(RUN(container_big_blocks); RUN(json_rendering_of_strings_is_valid_utf8);
          RUN(canonical_and_fingerprint_vectors); RUN(api_corners); RUN(schema_keeps_attributes);
          RUN(schema_names_and_canonical); RUN(schema_errors_are_clear); RUN(binary_spec_vectors);
          RUN(values_round_trip); RUN(setters_choose_branches_and_check);
          RUN(corrupt_datums_rejected); RUN(container_round_trip); RUN(container_sink_and_empty);
          RUN(container_corrupt_rejected); RUN(resolution_cases); RUN(decode_respects_arena_cap))
