/* libFuzzer target for the protobuf table converter (src/table/proto_conv.c
 * and FLOE_CONV_PROTOBUF in convert.c): arbitrary bytes as a Kafka record
 * value in the Confluent wire format with message indexes, decoded with a
 * schema of every field kind (schema id 1) through the converter into a
 * rows buffer (twice: the second time the typed path, proto_shred.c, has
 * the columns the first made), and as a bare message.  Every message the
 * decoder takes must come out as valid JSON.  Never a crash, leak or unbounded
 * allocation. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto.h"
#include "table/convert.h"
#include "table/proto_conv.h"

static const char *SCHEMA =
    "syntax = \"proto3\"; package f; import \"google/protobuf/timestamp.proto\";\n"
    "import \"google/protobuf/wrappers.proto\"; import \"google/protobuf/struct.proto\";\n"
    "message M { int32 a = 1; int64 b = 2; uint32 c = 3; uint64 d = 4; sint32 e = 5;\n"
    "  sint64 f = 6; fixed32 g = 7; fixed64 h = 8; sfixed32 i = 9; sfixed64 j = 10;\n"
    "  float k = 11; double l = 12; bool m = 13; string n = 14; bytes o = 15; E p = 16;\n"
    "  repeated int32 q = 17; repeated string r = 18; map<string, M> s = 19; M t = 20;\n"
    "  optional string u = 21; oneof w { int32 x = 22; N y = 23; }\n"
    "  google.protobuf.Timestamp ts = 24; google.protobuf.Int32Value iv = 25;\n"
    "  google.protobuf.Struct st = 26; repeated double rd = 27; repeated E re = 28;\n"
    "  message N { string z = 1; } }\n"
    "enum E { E0 = 0; E1 = 1; }\n"
    "message Second { N2 n = 1; message N2 { int64 v = 1; } }\n";

static floe_proto_schema_t *schema;

static int parse(floe_proto_schema_t **out, floe_err_t *err)
{
    floe_proto_file_t *f = NULL;
    if (floe_proto_parse(SCHEMA, strlen(SCHEMA), "m.proto", &f, err)) return -1;
    return floe_proto_schema_new(f, NULL, 0, out, err);
}

static int by_id(void *arg, int32_t id, floe_proto_schema_t **out, floe_err_t *err)
{
    (void)arg;
    if (id != 1) return floe_err_set(err, FLOE_ENOENT, "no schema %d", (int)id);
    return parse(out, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err = {0};
    if (!schema && parse(&schema, &err)) abort();
    /* the decoder alone: what it takes is valid JSON */
    floe_buf_t out = FLOE_BUF_INIT;
    const floe_proto_msg_t *m = floe_proto_schema_message(schema, NULL, 0);
    if (floe_proto_conv_json(m, data, size, &out, NULL, &err) == 0 &&
        !memmem(out.data, out.len, "\\u0000", 6)) {
        json_t *j = json_loadb((const char *)out.data, out.len, 0, NULL);
        if (!j) abort();
        json_decref(j);
    }
    floe_buf_free(&out);
    /* the converter: wire header, indexes, schema by id, shredding */
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c =
        rows ? floe_conv_new(rows, FLOE_CONV_PROTOBUF, FLOE_CONV_PROTOBUF, &err) : NULL;
    if (c) {
        floe_conv_schemas_t src = {.proto = by_id};
        floe_conv_set_schemas(c, &src);
        floe_tmsg_t msg = {.kind = FLOE_TMSG_RECORD, .value = floe_slice(data, size)};
        msg.key = floe_slice(data, size < 8 ? size : 8);
        floe_conv_stage_t st;
        floe_conv_record(c, 0, &msg, &st, &err);
        floe_conv_record(c, 0, &msg, &st, &err);
        floe_conv_free(c);
    }
    floe_rows_free(rows);
    return 0;
}
