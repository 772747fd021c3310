/* libFuzzer target for the typed Avro decoder (src/table/avro_shred.c):
 * the input is a run of records, each a selector byte (which of four
 * schema versions: 0 the base, 1 promotions and a new field, 2 a change
 * Iceberg cannot make, 3 a bare map), a length byte and that many bytes of
 * datum, shredded one after another into one rows buffer through the avro
 * converter, so plans are rebuilt as the shape changes and columns are
 * promoted with rows held.  After every record, taken or refused, the
 * buffer passes the shredders' common check (rows_check.h).  Never a
 * crash, leak or unbounded allocation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/convert.h"
#include "rows_check.h"

#define DEC(p, s) \
    "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":" #p ",\"scale\":" #s "}"

static const char *const SCHEMAS[] = {
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
    "{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"f\",\"type\":\"float\"},"
    "{\"name\":\"d\",\"type\":" DEC(
        5,
        2) "},"
           "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":{\"type\":\"record\",\"name\":"
           "\"X\","
           "\"fields\":[{\"name\":\"x\",\"type\":\"int\"},{\"name\":\"t\",\"type\":{\"type\":"
           "\"array\","
           "\"items\":\"string\"}}]}}},"
           "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"string\",\"int\"]}"
           "},"
           "{\"name\":\"fu\",\"type\":{\"type\":\"fixed\",\"name\":\"U\",\"size\":16,"
           "\"logicalType\":\"uuid\"}},"
           "{\"name\":\"su\",\"type\":[\"null\",{\"type\":\"string\",\"logicalType\":\"uuid\"}]},"
           "{\"name\":\"fd\",\"type\":{\"type\":\"fixed\",\"name\":\"FD\",\"size\":3,"
           "\"logicalType\":\"decimal\",\"precision\":4,\"scale\":1}},"
           "{\"name\":\"u\",\"type\":[\"null\",\"X\",{\"type\":\"enum\",\"name\":\"E\",\"symbols\":"
           "[\"P\","
           "\"Q\"]},{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}]},"
           "{\"name\":\"t\",\"type\":[{\"type\":\"int\",\"logicalType\":\"time-millis\"}]},"
           "{\"name\":\"nul\",\"type\":\"null\"}]}",
    /* promotions, a new field, a field gone */
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
    "{\"name\":\"a\",\"type\":\"long\"},{\"name\":\"f\",\"type\":\"double\"},"
    "{\"name\":\"d\",\"type\":" DEC(
        30,
        2) "},"
           "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"string\",\"int\","
           "\"bytes\"]}},"
           "{\"name\":\"n\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"N\",\"fields\":[{"
           "\"name\":"
           "\"y\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}}]}]}]}",
    /* a change Iceberg cannot make */
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"},"
    "{\"name\":\"d\",\"type\":" DEC(30, 3) "}]}",
    /* not a record: the column `value` */
    "{\"type\":\"map\",\"values\":[\"null\",\"double\"]}",
};

static int by_id(void *arg, int32_t id, floe_avro_schema_t **out, floe_err_t *err)
{
    (void)arg;
    if (id < 0 || id >= 4) return floe_err_set(err, FLOE_ENOENT, "no schema %d", (int)id);
    return floe_avro_schema_parse(SCHEMAS[id], strlen(SCHEMAS[id]), out, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err = {0};
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = rows ? floe_conv_new(rows, FLOE_CONV_AVRO, FLOE_CONV_RAW, &err) : NULL;
    if (!c) abort();
    floe_conv_schemas_t src = {.fn = by_id};
    floe_conv_set_schemas(c, &src);
    uint8_t rec[5 + 255];
    for (size_t at = 0; at + 2 <= size;) {
        size_t n = data[at + 1];
        if (n > size - at - 2) n = size - at - 2;
        rec[0] = rec[1] = rec[2] = rec[3] = 0;
        rec[4] = data[at] & 3;
        memcpy(rec + 5, data + at + 2, n);
        at += 2 + n;
        floe_tmsg_t m = {.kind = FLOE_TMSG_RECORD, .key_null = true};
        m.value = floe_slice(rec, 5 + n);
        floe_conv_stage_t st;
        floe_conv_record(c, 0, &m, &st, &err);
        rows_check(rows);
    }
    floe_conv_free(c);
    floe_rows_free(rows);
    return 0;
}
