/* The avro converter (table/avro_conv.h, avro_shred.h, convert.h with
 * FLOE_CONV_AVRO): every Avro type to its JSON text (keys, transforms) and
 * to typed columns (values), the Confluent wire format, schemas by id from
 * a schema source, schema versions evolving the columns, and the reasons a
 * record goes to the DLQ. */
#include "format/avro.h"
#include "table/avro_conv.h"
#include "table/convert.h"
#include "table/rows_int.h"
#include "table/schema_map.h"
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

/* id 7: SCHEMA; id 8: a recursive record; id 9: a bare string; 10..: the
 * versions of EVOLVE; else none. */
static const char *const EVOLVE[] = {
    /* 10 */ "{\"type\":\"record\",\"name\":\"V\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
             "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":{\"type\":\"bytes\","
             "\"logicalType\":\"decimal\",\"precision\":5,\"scale\":2}}]}",
    /* 11: a -> long, f -> double, d wider, a new optional field */
    "{\"type\":\"record\",\"name\":\"V\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"
    "{\"name\":\"f\",\"type\":\"double\"},{\"name\":\"d\",\"type\":{\"type\":\"bytes\","
    "\"logicalType\":\"decimal\",\"precision\":12,\"scale\":2}},"
    "{\"name\":\"n\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"N\",\"fields\":"
    "[{\"name\":\"x\",\"type\":\"string\"}]}],\"default\":null}]}",
    /* 12: a -> string: no Iceberg promotion */
    "{\"type\":\"record\",\"name\":\"V\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}",
    /* 13: another decimal scale */
    "{\"type\":\"record\",\"name\":\"V\",\"fields\":[{\"name\":\"d\",\"type\":{\"type\":"
    "\"bytes\",\"logicalType\":\"decimal\",\"precision\":12,\"scale\":3}}]}",
};

/* 14: fields with and without null; 15: s may be null, a new field n */
static const char *const REQ[] = {
    "{\"type\":\"record\",\"name\":\"Q\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
    "{\"name\":\"s\",\"type\":\"string\"},{\"name\":\"o\",\"type\":[\"null\",\"string\"]},"
    "{\"name\":\"r\",\"type\":{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":"
    "\"x\",\"type\":\"int\"}]}}]}",
    "{\"type\":\"record\",\"name\":\"Q\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
    "{\"name\":\"s\",\"type\":[\"null\",\"string\"]},{\"name\":\"o\",\"type\":[\"null\","
    "\"string\"]},{\"name\":\"r\",\"type\":{\"type\":\"record\",\"name\":\"R\",\"fields\":"
    "[{\"name\":\"x\",\"type\":\"int\"}]}},{\"name\":\"n\",\"type\":\"int\",\"default\":0}]}",
};

static int by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    (void)arg;
    lookups++;
    const char *text = id == 7   ? SCHEMA
                       : id == 8 ? "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":"
                                   "\"n\",\"type\":[\"null\",\"L\"]}]}"
                       : id == 9 ? "\"string\""
                       : id >= 10 && id < 14 ? EVOLVE[id - 10]
                       : id >= 14 && id < 16 ? REQ[id - 14]
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
    /* DATUM's uid "abc" is no uuid: refused; the same with a real one */
    uint8_t bad_uuid[5 + sizeof DATUM] = {0, 0, 0, 0, 7};
    memcpy(bad_uuid + 5, DATUM, sizeof DATUM - 1);
    floe_conv_stage_t st = 0;
    lookups = 0;
    CHECK_EQ(convert(c, bad_uuid, sizeof bad_uuid - 1, &st, &err), -1);
    CHECK_EQ(st, FLOE_STAGE_CONVERT);
    CHECK(strstr(err.msg, "uuid") != NULL);
    static const char UUID[] = "0b3c5a1e-2f4d-4e6a-8b9c-0d1e2f3a4b5c";
    uint8_t rec[5 + sizeof DATUM + 33] = {0, 0, 0, 0, 7};
    size_t pre = sizeof DATUM - 1 - 6;
    memcpy(rec + 5, DATUM, pre);
    rec[5 + pre] = 72; /* 36, zigzag */
    memcpy(rec + 6 + pre, UUID, 36);
    rec[42 + pre] = 0; /* lts */
    rec[43 + pre] = 0; /* nul: null */
    size_t rlen = 44 + pre;
    CHECK_EQ(convert(c, rec, rlen, &st, &err), 0);
    CHECK_EQ(convert(c, rec, rlen, &st, &err), 0);
    CHECK_EQ(lookups, 1); /* cached by id */
    CHECK_EQ(floe_rows_count(rows), 2);
    floe_rnode_t *root = floe_rows_root(rows);
    const char *names[] = {"i", "l", "f",  "d",  "b",  "s",   "by", "e",   "o",  "u",
                           "a", "m", "dt", "ts", "tm", "dec", "fx", "uid", "lts"};
    floe_tkind_t kinds[] = {FLOE_TK_INT,    FLOE_TK_LONG,        FLOE_TK_FLOAT,    FLOE_TK_DOUBLE,
                            FLOE_TK_BOOL,   FLOE_TK_STRING,      FLOE_TK_BINARY,   FLOE_TK_STRING,
                            FLOE_TK_STRING, FLOE_TK_STRUCT,      FLOE_TK_LIST,     FLOE_TK_MAP,
                            FLOE_TK_DATE,   FLOE_TK_TIMESTAMPTZ, FLOE_TK_TIME,     FLOE_TK_DECIMAL,
                            FLOE_TK_FIXED,  FLOE_TK_UUID,        FLOE_TK_TIMESTAMP};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        floe_rnode_t *n = floe_rows_child(root, names[i]);
        CHECK(n != NULL);
        if (n && n->kind != kinds[i])
            fprintf(stderr, "%s: %s\n", names[i], floe_tkind_name(n->kind));
        CHECK(n && n->kind == kinds[i]);
    }
    /* values, exactly */
    floe_rnode_t *n;
    CHECK((n = floe_rows_child(root, "i")) && floe_rcol_int(n->col, 1) == -1);
    CHECK((n = floe_rows_child(root, "l")) && floe_rcol_long(n->col, 0) == 300);
    float fv;
    CHECK((n = floe_rows_child(root, "f")) && n->col->nvals == 2);
    memcpy(&fv, n->col->vals.data, 4);
    CHECK(fv == 1.5f);
    CHECK((n = floe_rows_child(root, "dt")) && floe_rcol_int(n->col, 0) == 19000);
    CHECK((n = floe_rows_child(root, "ts")) && floe_rcol_long(n->col, 0) == 1700000000123000);
    CHECK((n = floe_rows_child(root, "tm")) && floe_rcol_long(n->col, 0) == 3723004000);
    CHECK((n = floe_rows_child(root, "lts")) && floe_rcol_long(n->col, 0) == 0);
    n = floe_rows_child(root, "dec");
    CHECK(n && n->precision == 7 && n->scale == 2);
    floe_slice_t v = floe_rcol_bytes(n->col, 0);
    CHECK(v.len == 4 && !memcmp(v.ptr, "\xff\xff\xcf\xc7", 4)); /* -12345 */
    n = floe_rows_child(root, "fx");
    CHECK(n && n->length == 2);
    v = floe_rcol_bytes(n->col, 0);
    CHECK(v.len == 2 && !memcmp(v.ptr, "\xff\x00", 2));
    n = floe_rows_child(root, "uid");
    v = floe_rcol_bytes(n->col, 0);
    CHECK(v.len == 16 && !memcmp(v.ptr, "\x0b\x3c\x5a\x1e\x2f\x4d\x4e\x6a", 8));
    n = floe_rows_child(root, "m"); /* map<string, long>: {k: 7} */
    CHECK(n && n->nkids == 2 && n->kids[1]->kind == FLOE_TK_LONG);
    v = floe_rcol_bytes(n->kids[0]->col, 0);
    CHECK(v.len == 1 && v.ptr[0] == 'k' && floe_rcol_long(n->kids[1]->col, 0) == 7);
    n = floe_rows_child(root, "u"); /* struct of branches: int set, string null */
    CHECK(n && n->nkids == 2 && !strcmp(n->kids[0]->name, "int") &&
          !strcmp(n->kids[1]->name, "string"));
    CHECK(floe_rcol_int(n->kids[0]->col, 0) == 5 && n->kids[1]->col->nvals == 0 &&
          n->kids[1]->col->defs.len == 2);
    /* [null, long] always null: its column is typed by the schema */
    CHECK((n = floe_rows_child(root, "nul")) && n->kind == FLOE_TK_LONG && n->col->nvals == 0);

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
        {rec, rlen - 1, "schema id 7"},
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
    CHECK_EQ(convert(c, rec, rlen, &st, &err), -1);
    CHECK(strstr(err.msg, "no schema registry") != NULL);
    floe_conv_free(c);
    floe_rows_free(rows);
}

/* Convert datum[0..n) of schema id (< 256) in the wire format. */
static int convw(floe_conv_t *c, int id, const char *datum, size_t n, floe_conv_stage_t *st,
                 floe_err_t *err)
{
    uint8_t b[64] = {0, 0, 0, 0, (uint8_t)id};
    memcpy(b + 5, datum, n);
    return convert(c, b, n + 5, st, err);
}

/* An avro converter into rows with by_id as its schema source. */
static floe_conv_t *by_id_conv(floe_rows_t *rows)
{
    floe_err_t err = {0};
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_AVRO, FLOE_CONV_STRING, &err);
    floe_conv_schemas_t src = {.fn = by_id};
    CHECK(c != NULL);
    if (c) floe_conv_set_schemas(c, &src);
    return c;
}

/* Schema versions evolve the columns as Iceberg allows (a new optional
 * field, int -> long, float -> double, a wider decimal), values already
 * held promoted with them; a change Iceberg cannot make is refused at the
 * schema stage with the reason, and the buffer keeps going. */
static void schema_versions(void)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_err_t err = {0};
    floe_conv_t *c = by_id_conv(rows);
    floe_conv_stage_t st = 0;
    /* v10 twice: a=-3, f=0.5, d=1.23 (123 = 0x7b); a=1, f=2, d=-1.28 (0x80) */
    CHECK_EQ(convw(c, 10, "\x05\x00\x00\x00\x3f\x02\x7b", 7, &st, &err), 0);
    CHECK_EQ(convw(c, 10, "\x02\x00\x00\x00\x40\x02\x80", 7, &st, &err), 0);
    floe_rnode_t *root = floe_rows_root(rows);
    floe_rnode_t *a = floe_rows_child(root, "a"), *f = floe_rows_child(root, "f"),
                 *d = floe_rows_child(root, "d");
    CHECK(a && a->kind == FLOE_TK_INT && f && f->kind == FLOE_TK_FLOAT && d && d->precision == 5 &&
          floe_rcol_bytes(d->col, 0).len == 3);
    /* v11: a=2^40, f=0.25, d=-1.00 (-100 = 0x9c), n={x:"y"} */
    CHECK_EQ(convw(c, 11,
                   "\x80\x80\x80\x80\x80\x40\x00\x00\x00\x00\x00\x00\xd0\x3f\x02\x9c"
                   "\x02\x02y",
                   19, &st, &err),
             0);
    CHECK(a->kind == FLOE_TK_LONG && floe_rcol_long(a->col, 0) == -3 &&
          floe_rcol_long(a->col, 1) == 1 && floe_rcol_long(a->col, 2) == (int64_t)1 << 40);
    CHECK(f->kind == FLOE_TK_DOUBLE && floe_rcol_double(f->col, 0) == 0.5 &&
          floe_rcol_double(f->col, 1) == 2 && floe_rcol_double(f->col, 2) == 0.25);
    CHECK(d->precision == 12);
    /* the decimals held re-encoded at the wider width, each sign-extended */
    floe_slice_t v0 = floe_rcol_bytes(d->col, 0), vm = floe_rcol_bytes(d->col, 1),
                 v1 = floe_rcol_bytes(d->col, 2);
    CHECK(vm.len == 6 && !memcmp(vm.ptr, "\xff\xff\xff\xff\xff\x80", 6));
    CHECK(v0.len == 6 &&
          !memcmp(v0.ptr, "\x00\x00\x00\x00\x00\x7b", 6)); /* 6 bytes for 12 digits */
    CHECK(v1.len == 6 && !memcmp(v1.ptr, "\xff\xff\xff\xff\xff\x9c", 6));
    floe_rnode_t *nn = floe_rows_child(root, "n");
    CHECK(nn && nn->kind == FLOE_TK_STRUCT && nn->kids[0]->col->defs.len == 3 &&
          nn->kids[0]->col->defs.data[0] == 0 && nn->kids[0]->col->defs.data[2] == 2);
    /* v10 again after v11: its int and float written widened */
    CHECK_EQ(convw(c, 10, "\x05\x00\x00\x00\x3f\x02\x7b", 7, &st, &err), 0);
    CHECK(floe_rcol_long(a->col, 3) == -3 && floe_rcol_double(f->col, 3) == 0.5);
    CHECK(floe_rcol_bytes(d->col, 3).len == 6);
    /* v12: a string: refused, with the reason, the rows as they were */
    err = (floe_err_t){0};
    CHECK_EQ(convw(c, 12, "\x02z", 2, &st, &err), -1);
    CHECK_EQ(st, FLOE_STAGE_SCHEMA);
    CHECK(strstr(err.msg, "field 'a' is long in the table but string") != NULL);
    err = (floe_err_t){0};
    CHECK_EQ(convw(c, 13, "\x02\x01", 2, &st, &err), -1);
    CHECK_EQ(st, FLOE_STAGE_SCHEMA);
    CHECK(strstr(err.msg, "decimal(12, 2) in the table but decimal(12, 3)") != NULL);
    CHECK_EQ(floe_rows_count(rows), 4);
    CHECK_EQ(convw(c, 10, "\x05\x00\x00\x00\x3f\x02\x7b", 7, &st, &err), 0);
    CHECK_EQ(floe_rows_count(rows), 5);
    floe_conv_free(c);
    floe_rows_free(rows);
}

static bool required(const floe_ice_schema_t *s, const char *name)
{
    const floe_ice_field_t *f = floe_ice_schema_find_name(s, name);
    return f && f->required;
}

/* Fields whose Avro type holds no null are required columns of a table
 * that holds no data yet; a later version allowing null makes the column
 * optional (the buffer's rows kept, seeded required columns included);
 * a field added later is optional. */
static void required_columns(void)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_err_t err = {0};
    floe_conv_t *c = by_id_conv(rows);
    floe_conv_stage_t st = 0;
    /* a=1 s="x" o=null r.x=2 */
    CHECK_EQ(convw(c, 14, "\x02\x02x\x00\x04", 5, &st, &err), 0);
    floe_ice_schema_t *s = floe_ice_schema_new(0, floe_ice_type_struct());
    int32_t last = 0;
    bool changed;
    CHECK_EQ(floe_tschema_merge(rows, s, &last, true, &changed, &err), 0);
    CHECK(required(s, "a") && required(s, "s") && !required(s, "o") && required(s, "r") &&
          required(s, "r.x") && required(s, "_kafka.offset"));
    /* the same data into a table that holds data: all optional */
    floe_ice_schema_t *later = floe_ice_schema_new(0, floe_ice_type_struct());
    int32_t last2 = 0;
    CHECK_EQ(floe_tschema_merge(rows, later, &last2, false, &changed, &err), 0);
    CHECK(!required(later, "a") && !required(later, "r") && required(later, "r.x"));
    floe_ice_schema_free(later);
    floe_conv_free(c);
    floe_rows_free(rows);

    /* after a restart: a buffer seeded from the table, required nodes */
    rows = floe_rows_new(NULL);
    c = by_id_conv(rows);
    CHECK_EQ(floe_tschema_seed(rows, s, &err), 0);
    floe_rnode_t *sn = floe_rows_child(floe_rows_root(rows), "s");
    CHECK(sn && sn->required);
    CHECK_EQ(convw(c, 14, "\x02\x02x\x00\x04", 5, &st, &err), 0);
    /* v15: a=3 s=null o=null r.x=4 n=5 */
    CHECK_EQ(convw(c, 15, "\x06\x00\x00\x08\x0a", 5, &st, &err), 0);
    CHECK(!sn->required && sn->col->defs.len == 2 && sn->col->defs.data[0] == 1 &&
          sn->col->defs.data[1] == 0 && sn->col->nvals == 1);
    CHECK_EQ(floe_tschema_merge(rows, s, &last, false, &changed, &err), 0);
    CHECK(changed && !required(s, "s") && !required(s, "n") && required(s, "a"));
    floe_ice_schema_free(s);
    floe_conv_free(c);
    floe_rows_free(rows);
}

TEST_MAIN({
    RUN(every_type_as_json);
    RUN(recursion_refused);
    RUN(converter_rows_and_dead_letters);
    RUN(schema_versions);
    RUN(required_columns);
})
