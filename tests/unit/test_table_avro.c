/* The avro converter (table/avro_conv.h, convert.h with FLOE_CONV_AVRO):
 * every Avro type to its JSON text, the Confluent wire format, schemas by
 * id from a schema source, and the reasons a record goes to the DLQ. */
#include "format/avro.h"
#include "table/avro_conv.h"
#include "table/convert.h"
#include "test.h"

static const char *SCHEMA =
    "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"t\",\"fields\":["
    "{\"name\":\"i\",\"type\":\"int\"},"
    "{\"name\":\"l\",\"type\":\"long\"},"
    "{\"name\":\"f\",\"type\":\"float\"},"
    "{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"b\",\"type\":\"boolean\"},"
    "{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"by\",\"type\":\"bytes\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"
    "{\"name\":\"o\",\"type\":[\"null\",\"string\"]},"
    "{\"name\":\"u\",\"type\":[\"int\",\"string\"]},"
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"int\"}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"long\"}},"
    "{\"name\":\"dt\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"
    "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
    "{\"name\":\"tm\",\"type\":{\"type\":\"int\",\"logicalType\":\"time-millis\"}},"
    "{\"name\":\"dec\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":7,"
    "\"scale\":2}},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":2}},"
    "{\"name\":\"uid\",\"type\":{\"type\":\"string\",\"logicalType\":\"uuid\"}},"
    "{\"name\":\"lts\",\"type\":{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}},"
    "{\"name\":\"nul\",\"type\":[\"null\",\"long\"]}]}";

/* i=-1 l=300 f=1.5 d=2.0 b=true s="hé" by=01 02 03 e=B o="x" u=int 5
 * a=[1,2] m={k:7} dt=19000 ts=1700000000123 tm=3723004 dec=-12345
 * fx=ff 00 uid="abc" lts=0 nul=null */
static const char DATUM[] =
    "\x01\xd8\x04\x00\x00\xc0\x3f\x00\x00\x00\x00\x00\x00\x00\x40\x01\x06\x68\xc3\xa9\x06\x01"
    "\x02\x03\x02\x02\x02\x78\x00\x0a\x04\x02\x04\x00\x02\x02\x6b\x0e\x00\xf0\xa8\x02\xf6\xa1"
    "\xab\xfe\xf9\x62\xf8\xbb\xc6\x03\x04\xcf\xc7\xff\x00\x06\x61\x62\x63\x00\x00";

static const char *WANT =
    "{\"i\":-1,\"l\":300,\"f\":1.5,\"d\":2.0,\"b\":true,\"s\":\"hé\",\"by\":\"AQID\",\"e\":\"B\","
    "\"o\":\"x\",\"u\":{\"int\":5},\"a\":[1,2],\"m\":[{\"key\":\"k\",\"value\":7}],\"dt\":\"2022-"
    "01-08\","
    "\"ts\":\"2023-11-14T22:13:20.123000Z\",\"tm\":\"01:02:03.004000\",\"dec\":\"-123.45\","
    "\"fx\":\"/wA=\",\"uid\":\"abc\",\"lts\":\"1970-01-01T00:00:00.000000\",\"nul\":null}";

static floe_avro_schema_t *parse(const char *s)
{
    floe_avro_schema_t *out = NULL;
    floe_err_t err = {0};
    if (floe_avro_schema_parse(s, strlen(s), &out, &err)) fprintf(stderr, "%s\n", err.msg);
    return out;
}

static void every_type_as_json(void)
{
    floe_avro_schema_t *s = parse(SCHEMA);
    CHECK(s != NULL);
    floe_err_t err = {0};
    CHECK_EQ(floe_avro_conv_check(s, &err), 0);
    floe_buf_t out = FLOE_BUF_INIT;
    CHECK_EQ(floe_avro_conv_json(s, (const uint8_t *)DATUM, sizeof DATUM - 1, &out, &err), 0);
    floe_buf_append_u8(&out, 0);
    CHECK_STR((const char *)out.data, WANT);
    /* every truncation is an error, never a crash or a partial success */
    for (size_t n = 0; n < sizeof DATUM - 1; n++) {
        floe_buf_reset(&out);
        CHECK(floe_avro_conv_json(s, (const uint8_t *)DATUM, n, &out, &err) == -1);
    }
    /* and trailing bytes too */
    floe_buf_reset(&out);
    char more[sizeof DATUM + 1];
    memcpy(more, DATUM, sizeof DATUM);
    CHECK(floe_avro_conv_json(s, (const uint8_t *)more, sizeof DATUM, &out, &err) == -1);
    CHECK(strstr(err.msg, "left after") != NULL);
    floe_buf_free(&out);
    floe_avro_schema_free(s);
}

static void recursion_refused(void)
{
    floe_avro_schema_t *s = parse("{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"n\","
                                  "\"type\":[\"null\",\"L\"]}]}");
    floe_err_t err = {0};
    CHECK_EQ(floe_avro_conv_check(s, &err), -1);
    CHECK(strstr(err.msg, "L contains itself") != NULL);
    floe_avro_schema_free(s);
}

/* ---- the converter, with schemas by id ---- */

static int lookups;

/* id 7: SCHEMA; id 8: a recursive record; id 9: a bare string; else none. */
static int by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    (void)arg;
    lookups++;
    const char *text = id == 7   ? SCHEMA
                       : id == 8 ? "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":"
                                   "\"n\",\"type\":[\"null\",\"L\"]}]}"
                       : id == 9 ? "\"string\""
                                 : NULL;
    if (!text) return floe_err_set(err, FLOE_ENOENT, "schema id %d is not in the registry", id);
    return floe_avro_schema_parse(text, strlen(text), out, err);
}

static int convert(floe_conv_t *c, const void *value, size_t n, floe_conv_stage_t *st,
                   floe_err_t *err)
{
    floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .offset = 1, .timestamp = 5, .key_null = true};
    m.value = floe_slice(value, n);
    return floe_conv_record(c, 0, &m, st, err);
}

static void converter_rows_and_dead_letters(void)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_err_t err = {0};
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_AVRO, FLOE_CONV_STRING, &err);
    CHECK(c != NULL);
    floe_conv_schemas_t src = {.fn = by_id};
    floe_conv_set_schemas(c, &src);
    uint8_t rec[5 + sizeof DATUM] = {0, 0, 0, 0, 7};
    memcpy(rec + 5, DATUM, sizeof DATUM - 1);
    floe_conv_stage_t st = 0;
    lookups = 0;
    CHECK_EQ(convert(c, rec, sizeof rec - 1, &st, &err), 0);
    CHECK_EQ(convert(c, rec, sizeof rec - 1, &st, &err), 0);
    CHECK_EQ(lookups, 1); /* cached by id */
    CHECK_EQ(floe_rows_count(rows), 2);
    floe_rnode_t *root = floe_rows_root(rows);
    const char *names[] = {"i", "d", "s", "o", "u", "a", "m", "ts", "dec", "nul"};
    floe_tkind_t kinds[] = {FLOE_TK_LONG,   FLOE_TK_DOUBLE,      FLOE_TK_STRING,
                            FLOE_TK_STRING, FLOE_TK_STRUCT,      FLOE_TK_LIST,
                            FLOE_TK_LIST,   FLOE_TK_TIMESTAMPTZ, FLOE_TK_STRING};
    for (size_t i = 0; i < 9; i++) {
        floe_rnode_t *n = floe_rows_child(root, names[i]);
        CHECK(n != NULL);
        if (n && n->kind != kinds[i])
            fprintf(stderr, "%s: %s\n", names[i], floe_tkind_name(n->kind));
        CHECK(n && n->kind == kinds[i]);
    }
    /* a field always null has no type yet: no column */
    CHECK(floe_rows_child(root, "nul") == NULL);

    /* a bare string schema lands in a `value` column */
    uint8_t str[] = {0, 0, 0, 0, 9, 4, 'h', 'i'};
    CHECK_EQ(convert(c, str, sizeof str, &st, &err), 0);
    CHECK(floe_rows_child(root, "value") != NULL);

    struct {
        const uint8_t *p;
        size_t n;
        const char *why;
    } bad[] = {
        {(const uint8_t *)"\x01\x00\x00\x00\x07\x00", 6, "magic byte 1"},
        {(const uint8_t *)"\x00\x00", 2, "fewer than its 5-byte header"},
        {(const uint8_t *)"\x00\x00\x00\x00\x05\x00", 6, "schema id 5"},
        {(const uint8_t *)"\x00\x00\x00\x00\x08\x00", 6, "L contains itself"},
        {rec, 20, "schema id 7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err = (floe_err_t){0};
        CHECK_EQ(convert(c, bad[i].p, bad[i].n, &st, &err), -1);
        CHECK_EQ(st, FLOE_STAGE_CONVERT);
        if (!strstr(err.msg, bad[i].why)) fprintf(stderr, "case %zu: %s\n", i, err.msg);
        CHECK(strstr(err.msg, bad[i].why) != NULL);
    }
    CHECK_EQ(floe_rows_count(rows), 3);
    floe_conv_free(c);
    floe_rows_free(rows);

    /* no schema source (floe sink): a reason, not a crash */
    rows = floe_rows_new(NULL);
    c = floe_conv_new(rows, FLOE_CONV_AVRO, FLOE_CONV_AVRO, &err);
    CHECK_EQ(convert(c, rec, sizeof rec - 1, &st, &err), -1);
    CHECK(strstr(err.msg, "no schema registry") != NULL);
    floe_conv_free(c);
    floe_rows_free(rows);
}

TEST_MAIN({
    RUN(every_type_as_json);
    RUN(recursion_refused);
    RUN(converter_rows_and_dead_letters);
})
