/* The json_schema converter (table/jschema_shred.h, convert.h with
 * FLOE_CONV_JSON_SCHEMA): JSON values in the Confluent wire format typed by
 * their JSON Schema (not inferred), schemas by id from a schema source,
 * schema versions evolving the columns, and the reasons a record goes to
 * the DLQ. */
#include "format/jschema.h"
#include "table/convert.h"
#include "table/rows_int.h"
#include "test.h"

/* id 1: every type; 2: v2 of 3 with a new property; 3: v1; 4: v3, a
 * number where v1 had an integer; 5: a recursive schema; 6: a bare
 * nullable string; 7: a union of several types. */
static const char *const SCHEMAS[] = {
    /* 1 */
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
    "\"definitions\":{\"Card\":{\"type\":\"object\",\"properties\":{\"brand\":{\"type\":"
    "\"string\"},\"last4\":{\"type\":\"integer\"}},\"required\":[\"brand\"]}},"
    "\"properties\":{\"id\":{\"type\":\"integer\"},\"amount\":{\"type\":\"number\"},"
    "\"ok\":{\"type\":\"boolean\"},\"who\":{\"type\":\"string\"},"
    "\"memo\":{\"type\":[\"string\",\"null\"]},"
    "\"day\":{\"type\":\"string\",\"format\":\"date\"},"
    "\"at\":{\"type\":\"string\",\"format\":\"date-time\"},"
    "\"tod\":{\"type\":\"string\",\"format\":\"time\"},"
    "\"uid\":{\"type\":\"string\",\"format\":\"uuid\"},"
    "\"state\":{\"enum\":[\"NEW\",\"PAID\"]},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"card\":{\"oneOf\":[{\"type\":\"null\"},{\"$ref\":\"#/definitions/Card\"}]},"
    "\"counts\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}},"
    "\"extra\":{}},"
    "\"required\":[\"id\",\"who\"]}",
    /* 2 */
    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
    "\"b\":{\"type\":\"string\"}}}",
    /* 3 */
    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},"
    "\"additionalProperties\":false}",
    /* 4 */
    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"}}}",
    /* 5 */
    "{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#\"}}}",
    /* 6 */
    "{\"type\":[\"string\",\"null\"]}",
    /* 7 */
    "{\"type\":\"object\",\"properties\":{\"u\":{\"type\":[\"string\",\"integer\"]}}}",
};

static int lookups;

static int by_id(void *arg, int32_t id, floe_jschema_t **out, floe_err_t *err)
{
    (void)arg;
    lookups++;
    if (id < 1 || id > 7) return floe_err_set(err, FLOE_ENOENT, "schema id %d is not known", id);
    const char *t = SCHEMAS[id - 1];
    return floe_jschema_parse(t, strlen(t), NULL, 0, out, err);
}

/* Convert JSON text json of schema id in the wire format. */
static int conv(floe_conv_t *c, int id, const char *json, floe_conv_stage_t *st, floe_err_t *err)
{
    size_t n = strlen(json);
    uint8_t *b = malloc(n + 5);
    b[0] = 0, b[1] = 0, b[2] = 0, b[3] = 0, b[4] = (uint8_t)id;
    memcpy(b + 5, json, n);
    floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .offset = 1, .timestamp = 5, .key_null = true};
    m.value = floe_slice(b, n + 5);
    *err = (floe_err_t){0};
    int rc = floe_conv_record(c, 0, &m, st, err);
    free(b);
    return rc;
}

static floe_conv_t *new_conv(floe_rows_t *rows)
{
    floe_err_t err = {0};
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_JSON_SCHEMA, FLOE_CONV_STRING, &err);
    floe_conv_schemas_t src = {.json = by_id};
    if (c) floe_conv_set_schemas(c, &src);
    return c;
}

static void types_from_the_schema(void)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = new_conv(rows);
    CHECK(c != NULL);
    floe_conv_stage_t st = 0;
    floe_err_t err;
    lookups = 0;
    /* 7 is an integer: a long, typed by the schema, not inferred from the
     * first value; 2.0 an integer too (JSON Schema's integer) */
    static const char *FIRST =
        "{\"id\":7,\"amount\":3,\"ok\":true,\"who\":\"h\\u00e9\",\"memo\":null,"
        "\"day\":\"2026-01-02\",\"at\":\"2026-01-02T03:04:05.678Z\","
        "\"tod\":\"01:02:03.5Z\",\"uid\":\"0b3c5a1e-2f4d-4e6a-8b9c-0d1e2f3a4b5c\","
        "\"state\":\"PAID\",\"tags\":[\"a\",\"b\"],"
        "\"card\":{\"brand\":\"visa\",\"last4\":4242},\"counts\":{\"x\":1,\"y\":-2},"
        "\"extra\":{\"any\":[1,true]},\"ignored\":{\"x\":1}}";
    CHECK_EQ(conv(c, 1, FIRST, &st, &err), 0);
    if (err.msg[0]) fprintf(stderr, "%s\n", err.msg);
    CHECK_EQ(conv(c, 1, "{\"id\":2.0,\"who\":\"w\",\"card\":null,\"tags\":[]}", &st, &err), 0);
    CHECK_EQ(lookups, 1); /* cached by id */
    CHECK_EQ(floe_rows_count(rows), 2);
    floe_rnode_t *root = floe_rows_root(rows), *n;
    const char *names[] = {"id",  "amount", "ok",    "who",  "memo", "day",    "at",
                           "tod", "uid",    "state", "tags", "card", "counts", "extra"};
    floe_tkind_t kinds[] = {FLOE_TK_LONG,   FLOE_TK_DOUBLE, FLOE_TK_BOOL,        FLOE_TK_STRING,
                            FLOE_TK_STRING, FLOE_TK_DATE,   FLOE_TK_TIMESTAMPTZ, FLOE_TK_TIME,
                            FLOE_TK_STRING, FLOE_TK_STRING, FLOE_TK_LIST,        FLOE_TK_STRUCT,
                            FLOE_TK_MAP,    FLOE_TK_STRING};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        n = floe_rows_child(root, names[i]);
        if (!n || n->kind != kinds[i])
            fprintf(stderr, "%s: %s\n", names[i], n ? floe_tkind_name(n->kind) : "missing");
        CHECK(n && n->kind == kinds[i]);
    }
    CHECK(floe_rows_child(root, "ignored") == NULL);
    CHECK((n = floe_rows_child(root, "id")) && floe_rcol_long(n->col, 0) == 7 &&
          floe_rcol_long(n->col, 1) == 2);
    CHECK((n = floe_rows_child(root, "amount")) && floe_rcol_double(n->col, 0) == 3.0 &&
          n->col->nvals == 1);
    CHECK((n = floe_rows_child(root, "day")) && floe_rcol_int(n->col, 0) == 20455);
    CHECK((n = floe_rows_child(root, "at")) && floe_rcol_long(n->col, 0) == 1767323045678000);
    CHECK((n = floe_rows_child(root, "tod")) && floe_rcol_long(n->col, 0) == 3723500000);
    floe_slice_t v = floe_rcol_bytes(floe_rows_child(root, "who")->col, 0);
    CHECK(v.len == 3 && !memcmp(v.ptr, "h\xc3\xa9", 3));
    v = floe_rcol_bytes(floe_rows_child(root, "extra")->col, 0);
    CHECK(v.len == 16 && !memcmp(v.ptr, "{\"any\":[1,true]}", 16));
    n = floe_rows_child(root, "card");
    CHECK(n && n->nkids == 2 && n->kids[1]->kind == FLOE_TK_LONG &&
          floe_rcol_long(n->kids[1]->col, 0) == 4242 && n->kids[0]->col->defs.len == 2);
    n = floe_rows_child(root, "counts");
    CHECK(n && n->kids[1]->kind == FLOE_TK_LONG && floe_rcol_long(n->kids[1]->col, 1) == -2);
    n = floe_rows_child(root, "tags");
    CHECK(n && n->kids[0]->col->nvals == 2 && n->kids[0]->col->defs.len == 3);

    /* a bare nullable string: the `value` column; null is a row */
    CHECK_EQ(conv(c, 6, "\"hi\"", &st, &err), 0);
    CHECK_EQ(conv(c, 6, "null", &st, &err), 0);
    CHECK((n = floe_rows_child(root, "value")) && n->kind == FLOE_TK_STRING);

    /* values that do not match their schema: dead letters with the reason */
    struct {
        int id;
        const char *json, *why;
        floe_conv_stage_t st;
    } bad[] = {
        {1, "{\"who\":\"x\"}", "'id' is required and missing", FLOE_STAGE_CONVERT},
        {1, "{\"id\":1.5,\"who\":\"x\"}", "'id' is not an integer", FLOE_STAGE_CONVERT},
        {1, "{\"id\":\"1\",\"who\":\"x\"}", "'id' is not a number", FLOE_STAGE_CONVERT},
        {1, "{\"id\":1,\"who\":null}", "'who' is null", FLOE_STAGE_CONVERT},
        {1, "{\"id\":1,\"who\":\"x\",\"day\":\"02.01.2026\"}", "RFC 3339 date", FLOE_STAGE_CONVERT},
        {1, "{\"id\":1,\"who\":\"x\",\"card\":{\"last4\":1}}", "'card.brand' is required",
         FLOE_STAGE_CONVERT},
        {1, "{\"id\":1,\"who\":\"x\",\"tags\":[1]}", "is not a string", FLOE_STAGE_CONVERT},
        {1, "{\"id\":1,\"who\":\"x\"", "expected", FLOE_STAGE_CONVERT},
        {1, "{\"id\":1,\"id\":2,\"who\":\"x\"}", "appears twice", FLOE_STAGE_CONVERT},
        {3, "{\"a\":1,\"zz\":2}", "'zz' is not a property", FLOE_STAGE_CONVERT},
        {9, "{}", "schema id 9", FLOE_STAGE_CONVERT},
        {5, "{}", "recursive", FLOE_STAGE_SCHEMA},
        {7, "{\"u\":1}", "has no Iceberg column type", FLOE_STAGE_SCHEMA},
    };
    size_t before = floe_rows_count(rows);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_EQ(conv(c, bad[i].id, bad[i].json, &st, &err), -1);
        if (!strstr(err.msg, bad[i].why) || st != bad[i].st)
            fprintf(stderr, "case %zu: stage %d: %s\n", i, (int)st, err.msg);
        CHECK(strstr(err.msg, bad[i].why) != NULL);
        CHECK_EQ(st, bad[i].st);
    }
    CHECK_EQ(floe_rows_count(rows), before);
    floe_conv_free(c);
    floe_rows_free(rows);
}

/* Version 2 adds a property: a column; version 3 turns an integer into a
 * number: long -> double is no Iceberg promotion, so the column widens as
 * the JSON path's does (in the buffer; held for the engine once the table
 * has the column) or, where it may not, the record is refused with the
 * reason and the buffer keeps going. */
static void schema_versions(void)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = new_conv(rows);
    floe_conv_stage_t st = 0;
    floe_err_t err;
    CHECK_EQ(conv(c, 3, "{\"a\":1}", &st, &err), 0);
    floe_rnode_t *root = floe_rows_root(rows);
    floe_rnode_t *a = floe_rows_child(root, "a");
    CHECK(a && a->kind == FLOE_TK_LONG && floe_rows_child(root, "b") == NULL);
    CHECK_EQ(conv(c, 2, "{\"a\":2,\"b\":\"x\"}", &st, &err), 0);
    floe_rnode_t *b = floe_rows_child(root, "b");
    CHECK(b && b->kind == FLOE_TK_STRING && b->col->defs.len == 2 && b->col->defs.data[0] == 0);
    CHECK(floe_rows_child(root, "a") == a && floe_rcol_long(a->col, 1) == 2);
    CHECK_EQ(conv(c, 3, "{\"a\":3}", &st, &err), 0);
    CHECK(b->col->defs.len == 3);
    /* a column the table holds: the partition waits for the engine */
    a->hold = true;
    a->field_id = 5;
    CHECK_EQ(conv(c, 4, "{\"a\":1.5}", &st, &err), -1);
    CHECK_EQ(floe_rows_held(rows), 5);
    CHECK(strstr(err.msg, "must widen to double first") != NULL);
    /* in the buffer only: widened at once, v1's integers written widened */
    a->hold = false;
    CHECK_EQ(conv(c, 4, "{\"a\":1.5}", &st, &err), 0);
    CHECK(a->kind == FLOE_TK_DOUBLE && floe_rcol_double(a->col, 0) == 1 &&
          floe_rcol_double(a->col, 3) == 1.5);
    CHECK_EQ(conv(c, 2, "{\"a\":4}", &st, &err), 0);
    CHECK(floe_rcol_double(a->col, 4) == 4);
    CHECK_EQ(floe_rows_count(rows), 5);
    floe_conv_free(c);
    floe_rows_free(rows);

    /* where widening is off, the reason */
    floe_rows_opts_t no = {.widen_long_to_double = false};
    rows = floe_rows_new(&no);
    c = new_conv(rows);
    CHECK_EQ(conv(c, 3, "{\"a\":1}", &st, &err), 0);
    CHECK_EQ(conv(c, 4, "{\"a\":1.5}", &st, &err), -1);
    CHECK_EQ(st, FLOE_STAGE_SCHEMA);
    CHECK(strstr(err.msg, "field 'a' is long in the table but double in the schema, and the "
                          "column may not widen") != NULL);
    CHECK_EQ(conv(c, 7, "{\"u\":1}", &st, &err), -1);
    CHECK_EQ(floe_rows_count(rows), 1);
    floe_conv_free(c);
    floe_rows_free(rows);

    /* no schema source: a reason, not a crash */
    rows = floe_rows_new(NULL);
    floe_conv_t *bare = floe_conv_new(rows, FLOE_CONV_JSON_SCHEMA, FLOE_CONV_JSON_SCHEMA, &err);
    CHECK_EQ(conv(bare, 3, "{\"a\":1}", &st, &err), -1);
    CHECK(strstr(err.msg, "no registry of JSON schemas") != NULL);
    floe_conv_free(bare);
    floe_rows_free(rows);
    floe_conv_kind_t k;
    CHECK_EQ(floe_conv_kind_parse("json_schema", &k, &err), 0);
    CHECK_EQ(k, FLOE_CONV_JSON_SCHEMA);
    CHECK_STR(floe_conv_kind_name(k), "json_schema");
}

TEST_MAIN({
    RUN(types_from_the_schema);
    RUN(schema_versions);
})
