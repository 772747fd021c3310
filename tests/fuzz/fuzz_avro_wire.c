/* libFuzzer target for the avro table converter (src/table/avro_conv.c and
 * FLOE_CONV_AVRO in convert.c): arbitrary bytes as a Kafka record value in
 * the Confluent wire format, decoded with schema id 1 (every type and
 * logical type), 2 (a bare string) or 3 (a recursive record, refused),
 * through the converter into a rows buffer.  Every datum the decoder takes
 * must come out as valid JSON.  Never a crash, leak or unbounded
 * allocation. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/avro_conv.h"
#include "table/convert.h"

static const char *SCHEMA =
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
    "{\"name\":\"i\",\"type\":\"int\"},{\"name\":\"l\",\"type\":\"long\"},"
    "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"b\",\"type\":\"boolean\"},{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"by\",\"type\":\"bytes\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"
    "{\"name\":\"o\",\"type\":[\"null\",\"string\"]},{\"name\":\"u\",\"type\":[\"int\",\"string\"]}"
    ","
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"long\"]}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"}},"
    "{\"name\":\"dt\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"
    "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
    "{\"name\":\"tu\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}},"
    "{\"name\":\"tm\",\"type\":{\"type\":\"int\",\"logicalType\":\"time-millis\"}},"
    "{\"name\":\"tq\",\"type\":{\"type\":\"long\",\"logicalType\":\"time-micros\"}},"
    "{\"name\":\"dec\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":30,"
    "\"scale\":4}},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":3}},"
    "{\"name\":\"lts\",\"type\":{\"type\":\"long\",\"logicalType\":\"local-timestamp-millis\"}},"
    "{\"name\":\"sub\",\"type\":{\"type\":\"record\",\"name\":\"S\",\"fields\":[{\"name\":\"x\","
    "\"type\":[\"null\",\"E\",\"boolean\"],\"default\":null}]}}]}";
static const char *RECURSIVE =
    "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"n\",\"type\":[\"null\",\"L\"]}]}";

static floe_avro_schema_t *schema;

static int by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    (void)arg;
    const char *t = id == 1 ? SCHEMA : id == 2 ? "\"string\"" : id == 3 ? RECURSIVE : NULL;
    if (!t) return floe_err_set(err, FLOE_ENOENT, "no schema %d", (int)id);
    return floe_avro_schema_parse(t, strlen(t), out, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err = {0};
    if (!schema && floe_avro_schema_parse(SCHEMA, strlen(SCHEMA), &schema, &err)) abort();
    /* the decoder alone: what it takes is valid JSON */
    floe_buf_t out = FLOE_BUF_INIT;
    /* (jansson takes no NUL in object keys: texts with one are not checked) */
    if (floe_avro_conv_json(schema, data, size, &out, &err) == 0 &&
        !memmem(out.data, out.len, "\\u0000", 6)) {
        json_t *j =
            json_loadb((const char *)out.data, out.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (!j) abort();
        json_decref(j);
    }
    floe_buf_free(&out);
    /* the converter: wire header, schema by id, shredding into rows */
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = rows ? floe_conv_new(rows, FLOE_CONV_AVRO, FLOE_CONV_AVRO, &err) : NULL;
    if (c) {
        floe_conv_schemas_t src = {.fn = by_id};
        floe_conv_set_schemas(c, &src);
        floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .value = floe_slice(data, size)};
        m.key = floe_slice(data, size < 8 ? size : 8);
        floe_conv_stage_t st;
        floe_conv_record(c, 0, &m, &st, &err);
        floe_conv_record(c, 0, &m, &st, &err);
        floe_conv_free(c);
    }
    floe_rows_free(rows);
    return 0;
}
