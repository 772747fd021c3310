/* Value transforms (table/transform.h) over Debezium change events written
 * by hand from Debezium's documented format (the MySQL connector's
 * `inventory.customers` examples: create, update, delete, tombstone; with
 * the JsonConverter's schema/payload envelope and without it), then
 * through the converter into the rows buffer. */
#include <stdlib.h>

#include "log/batch.h"
#include "table/convert.h"
#include "table/transform.h"
#include "test.h"

/* A create with schemas.enable=true: the envelope as JsonConverter writes it. */
static const char CREATE_WITH_SCHEMA[] =
    "{\"schema\":{\"type\":\"struct\",\"fields\":["
    "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"first_name\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"last_name\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"email\"}],\"optional\":true,"
    "\"name\":\"mysql-server-1.inventory.customers.Value\",\"field\":\"before\"},"
    "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"first_name\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"last_name\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"email\"}],\"optional\":true,"
    "\"name\":\"mysql-server-1.inventory.customers.Value\",\"field\":\"after\"},"
    "{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":false,\"field\":"
    "\"version\"},{\"type\":\"string\",\"optional\":false,\"field\":\"connector\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"db\"},"
    "{\"type\":\"string\",\"optional\":true,\"field\":\"table\"}],\"optional\":false,"
    "\"name\":\"io.debezium.connector.mysql.Source\",\"field\":\"source\"},"
    "{\"type\":\"string\",\"optional\":false,\"field\":\"op\"},"
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ms\"}],\"optional\":false,"
    "\"name\":\"mysql-server-1.inventory.customers.Envelope\"},"
    "\"payload\":{\"op\":\"c\",\"ts_ms\":1465491411815,\"before\":null,"
    "\"after\":{\"id\":1004,\"first_name\":\"Anne\",\"last_name\":\"Kretchmar\","
    "\"email\":\"annek@noanswer.org\"},"
    "\"source\":{\"version\":\"2.5.0.Final\",\"connector\":\"mysql\",\"db\":\"inventory\","
    "\"table\":\"customers\"}}}";

/* An update with schemas.enable=false: the payload alone. */
static const char UPDATE_NO_SCHEMA[] =
    "{\n  \"before\": {\"id\": 1004, \"first_name\": \"Anne\", \"last_name\": \"Kretchmar\", "
    "\"email\": \"annek@noanswer.org\"},\n"
    "  \"after\": {\"id\": 1004, \"first_name\": \"Anne Marie\", \"last_name\": \"Kretchmar\", "
    "\"email\": \"annek@noanswer.org\"},\n"
    "  \"source\": {\"version\": \"2.5.0.Final\", \"connector\": \"mysql\", \"db\": "
    "\"inventory\", \"table\": \"customers\"},\n"
    "  \"op\": \"u\",\n  \"ts_ms\": 1465581029523\n}";

static const char DELETE_NO_SCHEMA[] =
    "{\"before\":{\"id\":1004,\"first_name\":\"Anne Marie\",\"last_name\":\"Kretchmar\","
    "\"email\":\"annek@noanswer.org\"},\"after\":null,"
    "\"source\":{\"version\":\"2.5.0.Final\",\"connector\":\"mysql\",\"db\":\"inventory\","
    "\"table\":\"customers\"},\"op\":\"d\",\"ts_ms\":1465581902461}";

static const char SOURCE[] = "{\"version\": \"2.5.0.Final\", \"connector\": \"mysql\", \"db\": "
                             "\"inventory\", \"table\": \"customers\"}";

static int apply(const floe_xform_t *x, const char *in, floe_buf_t *out, floe_xform_op_t *op,
                 floe_err_t *e)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    int rc =
        floe_xform_apply(x, rows, (const uint8_t *)in, in ? strlen(in) : 0, in == NULL, out, op, e);
    floe_rows_free(rows);
    return rc;
}

static bool out_is(const floe_buf_t *b, const char *want)
{
    bool ok = b->len == strlen(want) && !memcmp(b->data, want, b->len);
    if (!ok) fprintf(stderr, "got  %.*s\nwant %s\n", (int)b->len, (const char *)b->data, want);
    return ok;
}

static void parse_lists(void)
{
    floe_xform_t x = {0};
    floe_err_t e;
    CHECK_EQ(floe_xform_parse("", &x, &e), 0);
    CHECK_EQ(x.nsteps, 0);
    CHECK_EQ(floe_xform_parse(" debezium_unwrap , flatten", &x, &e), 0);
    CHECK_EQ(x.nsteps, 2);
    CHECK_EQ(x.steps[0], FLOE_XF_DEBEZIUM_UNWRAP);
    CHECK_EQ(x.steps[1], FLOE_XF_FLATTEN);
    CHECK_EQ(floe_xform_parse("debezium_unwrap,flaten", &x, &e), -1);
    CHECK(strstr(e.msg, "unknown transform 'flaten'") != NULL);
    CHECK_EQ(floe_xform_parse("flatten,,flatten", &x, &e), -1);
}

static void unwrap_envelopes(void)
{
    floe_xform_t x = {0};
    floe_err_t e;
    CHECK_EQ(floe_xform_parse("debezium_unwrap", &x, &e), 0);
    floe_buf_t out = FLOE_BUF_INIT;
    floe_xform_op_t op;

    /* create, with the schema envelope: the after image, as it came */
    CHECK_EQ(apply(&x, CREATE_WITH_SCHEMA, &out, &op, &e), 1);
    CHECK_EQ(op, FLOE_XOP_CREATE);
    CHECK(out_is(&out, "{\"id\":1004,\"first_name\":\"Anne\",\"last_name\":\"Kretchmar\","
                       "\"email\":\"annek@noanswer.org\"}"));
    /* update, no envelope: after */
    CHECK_EQ(apply(&x, UPDATE_NO_SCHEMA, &out, &op, &e), 1);
    CHECK_EQ(op, FLOE_XOP_UPDATE);
    CHECK(out_is(&out, "{\"id\": 1004, \"first_name\": \"Anne Marie\", \"last_name\": "
                       "\"Kretchmar\", \"email\": \"annek@noanswer.org\"}"));
    /* delete: before */
    CHECK_EQ(apply(&x, DELETE_NO_SCHEMA, &out, &op, &e), 1);
    CHECK_EQ(op, FLOE_XOP_DELETE);
    CHECK(out_is(&out, "{\"id\":1004,\"first_name\":\"Anne Marie\",\"last_name\":\"Kretchmar\","
                       "\"email\":\"annek@noanswer.org\"}"));
    /* a snapshot read is a create */
    CHECK_EQ(
        apply(&x, "{\"op\":\"r\",\"before\":null,\"after\":{\"id\":7},\"ts_ms\":1}", &out, &op, &e),
        1);
    CHECK_EQ(op, FLOE_XOP_CREATE);
    CHECK(out_is(&out, "{\"id\":7}"));
    /* tombstones: a null value, and a null payload under a schema */
    CHECK_EQ(apply(&x, NULL, &out, &op, &e), 0);
    CHECK_EQ(op, FLOE_XOP_DELETE);
    CHECK_EQ(apply(&x, "{\"schema\":null,\"payload\":null}", &out, &op, &e), 0);
    CHECK_EQ(op, FLOE_XOP_DELETE);

    /* with metadata: _cdc {op, ts (RFC 3339 from ts_ms), source} */
    x.cdc_metadata = true;
    CHECK_EQ(apply(&x, UPDATE_NO_SCHEMA, &out, &op, &e), 1);
    char want[1024];
    snprintf(want, sizeof want,
             "{\"id\": 1004, \"first_name\": \"Anne Marie\", \"last_name\": \"Kretchmar\", "
             "\"email\": \"annek@noanswer.org\",\"_cdc\":{\"op\":\"u\",\"ts\":"
             "\"2016-06-10T17:50:29.523Z\",\"source\":%s}}",
             SOURCE);
    CHECK(out_is(&out, want));
    CHECK_EQ(apply(&x, "{\"op\":\"d\",\"before\":null,\"after\":null,\"ts_ms\":1465581902461}",
                   &out, &op, &e),
             1);
    CHECK(out_is(&out, "{\"_cdc\":{\"op\":\"d\",\"ts\":\"2016-06-10T18:05:02.461Z\","
                       "\"source\":null}}"));

    /* not a change event */
    CHECK_EQ(apply(&x, "{\"id\":1,\"name\":\"x\"}", &out, &op, &e), -1);
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    CHECK(strstr(e.msg, "no Debezium \"op\"") != NULL);
    CHECK_EQ(apply(&x, "{\"op\":\"c\",\"after\":null}", &out, &op, &e), -1);
    CHECK_EQ(apply(&x, "{\"op\":\"x\",\"after\":{}}", &out, &op, &e), -1);
    CHECK_EQ(apply(&x, "{\"op\":\"c\",\"after\":[1]}", &out, &op, &e), -1);
    CHECK_EQ(apply(&x, "{\"op\":\"c\",\"after\":{\"id\":1}", &out, &op, &e), -1);
    floe_buf_free(&out);
}

static void flatten_nested(void)
{
    floe_xform_t x = {0};
    floe_err_t e;
    CHECK_EQ(floe_xform_parse("flatten", &x, &e), 0);
    strcpy(x.delim, "_");
    floe_buf_t out = FLOE_BUF_INIT;
    floe_xform_op_t op;
    CHECK_EQ(apply(&x,
                   "{\"a\":{\"b\":{\"c\":1},\"d\":[{\"e\":2}]},\"f\":\"x\",\"g\":{},\"h\":null}",
                   &out, &op, &e),
             1);
    CHECK_EQ(op, FLOE_XOP_NONE);
    CHECK(out_is(&out, "{\"a_b_c\":1,\"a_d\":[{\"e\":2}],\"f\":\"x\",\"h\":null}"));
    /* escaped names stay escaped once joined; the delimiter is configurable */
    strcpy(x.delim, "__");
    CHECK_EQ(apply(&x, "{\"q\\\"\":{\"r\\u00e9\":true}}", &out, &op, &e), 1);
    CHECK(out_is(&out, "{\"q\\\"__r\xc3\xa9\":true}"));
    /* empty names are path elements too */
    strcpy(x.delim, "_");
    CHECK_EQ(apply(&x, "{\"\":{\"a\":1},\"b\":{\"\":2},\"\":3}", &out, &op, &e), 1);
    CHECK(out_is(&out, "{\"_a\":1,\"b_\":2,\"\":3}"));
    CHECK_EQ(apply(&x, "[1]", &out, &op, &e), -1);
    CHECK_EQ(apply(&x, "{\"a\":1} x", &out, &op, &e), -1);

    /* after debezium_unwrap, with metadata: _cdc flattens as well */
    CHECK_EQ(floe_xform_parse("debezium_unwrap,flatten", &x, &e), 0);
    strcpy(x.delim, "_");
    x.cdc_metadata = true;
    CHECK_EQ(apply(&x,
                   "{\"op\":\"c\",\"after\":{\"id\":1,\"addr\":{\"city\":\"Oslo\"}},"
                   "\"source\":{\"db\":\"inv\"},\"ts_ms\":0}",
                   &out, &op, &e),
             1);
    CHECK_EQ(op, FLOE_XOP_CREATE);
    CHECK(out_is(&out, "{\"id\":1,\"addr_city\":\"Oslo\",\"_cdc_op\":\"c\","
                       "\"_cdc_ts\":\"1970-01-01T00:00:00.000Z\",\"_cdc_source_db\":\"inv\"}"));
    CHECK_EQ(apply(&x, NULL, &out, &op, &e), 0);
    floe_buf_free(&out);
}

/* One record through the converter. */
static int conv_one(floe_conv_t *c, int64_t offset, const char *key, const char *value,
                    floe_err_t *e)
{
    floe_tmsg_t m;
    memset(&m, 0, sizeof m);
    m.kind = FLOE_TMSG_RECORD;
    m.offset = m.last = offset;
    m.timestamp = 1700000000000LL;
    m.key = floe_slice_str(key);
    m.value = floe_slice_str(value);
    m.value_null = value == NULL;
    floe_conv_stage_t st;
    return floe_conv_record(c, 0, &m, &st, e);
}

static void converter_rows(void)
{
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_err_t e;
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    CHECK(c != NULL);
    floe_xform_t x = {0};
    CHECK_EQ(floe_xform_parse("debezium_unwrap", &x, &e), 0);
    x.cdc_metadata = true;
    floe_conv_set_transforms(c, &x);

    CHECK_EQ(conv_one(c, 10, "{\"id\":1004}", CREATE_WITH_SCHEMA, &e), 0);
    CHECK_EQ(floe_conv_last_op(c), FLOE_XOP_CREATE);
    CHECK_EQ(conv_one(c, 11, "{\"id\":1004}", UPDATE_NO_SCHEMA, &e), 0);
    CHECK_EQ(floe_conv_last_op(c), FLOE_XOP_UPDATE);
    CHECK_EQ(conv_one(c, 12, "{\"id\":1004}", DELETE_NO_SCHEMA, &e), 0);
    CHECK_EQ(floe_conv_last_op(c), FLOE_XOP_DELETE);
    CHECK_EQ(floe_rows_count(rows), 3);
    CHECK_EQ(conv_one(c, 13, "{\"id\":1004}", NULL, &e), 0); /* tombstone: no row */
    CHECK_EQ(floe_conv_last_op(c), FLOE_XOP_DELETE);
    CHECK_EQ(floe_rows_count(rows), 3);
    CHECK(conv_one(c, 14, "k", "{\"id\":1}", &e) < 0); /* not a change event */
    CHECK_EQ(floe_rows_count(rows), 3);

    floe_rnode_t *root = floe_rows_root(rows);
    floe_rnode_t *first = floe_rows_child(root, "first_name");
    CHECK(first != NULL);
    CHECK(floe_slice_eq(floe_rcol_bytes(first->col, 0), floe_slice_str("Anne")));
    CHECK(floe_slice_eq(floe_rcol_bytes(first->col, 1), floe_slice_str("Anne Marie")));
    CHECK(floe_rows_child(root, "after") == NULL);
    CHECK(floe_rows_child(root, "op") == NULL);
    floe_rnode_t *cdc = floe_rows_child(root, "_cdc");
    CHECK(cdc != NULL);
    floe_rnode_t *opn = floe_rows_child(cdc, "op"), *ts = floe_rows_child(cdc, "ts");
    CHECK(floe_slice_eq(floe_rcol_bytes(opn->col, 0), floe_slice_str("c")));
    CHECK(floe_slice_eq(floe_rcol_bytes(opn->col, 2), floe_slice_str("d")));
    CHECK_EQ(ts->kind, FLOE_TK_TIMESTAMPTZ);
    CHECK_EQ(floe_rcol_long(ts->col, 1), 1465581029523LL * 1000);
    floe_rnode_t *src = floe_rows_child(cdc, "source");
    CHECK(src != NULL && floe_rows_child(src, "connector") != NULL);
    floe_conv_free(c);
    floe_rows_free(rows);
}

TEST_MAIN(RUN(parse_lists); RUN(unwrap_envelopes); RUN(flatten_nested); RUN(converter_rows))
