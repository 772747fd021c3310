/* libFuzzer target for the protobuf converter's typed path
 * (src/table/proto_shred.c), checked against its JSON path: arbitrary
 * bytes as a run of records of a message with every field kind (byte 0:
 * bit 0 infers timestamps, bit 1 picks the nested message type; then
 * records as a length byte and that many bytes).  Each record goes
 * through the JSON rendering into one buffer, and through the typed path
 * (or, when it says so, the JSON path) into another; after every record
 * both buffers must hold the same rows and the same columns, so the typed
 * path never takes a record the JSON path refuses, never writes another
 * value and never needs a column the JSON path would not make; both pass
 * the shredders' common check (rows_check.h).  Never a crash, leak or
 * unbounded allocation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto.h"
#include "table/proto_conv.h"
#include "table/proto_shred.h"
#include "table/rows.h"
#include "rows_check.h"

static const char *SCHEMA =
    "syntax = \"proto3\"; package f; import \"google/protobuf/timestamp.proto\";\n"
    "import \"google/protobuf/wrappers.proto\"; import \"google/protobuf/struct.proto\";\n"
    "import \"google/protobuf/empty.proto\";\n"
    "message M { int32 a = 1; int64 b = 2; uint32 c = 3; uint64 d = 4; sint32 e = 5;\n"
    "  sint64 f = 6; fixed32 g = 7; fixed64 h = 8; sfixed32 i = 9; sfixed64 j = 10;\n"
    "  float k = 11; double l = 12; bool m = 13; string n = 14; bytes o = 15; E p = 16;\n"
    "  repeated int32 q = 17; repeated string r = 18; map<string, N> s = 19; N t = 20;\n"
    "  optional string u = 21; oneof w { int32 x = 22; N y = 23; }\n"
    "  google.protobuf.Timestamp ts = 24; google.protobuf.Int32Value iv = 25;\n"
    "  google.protobuf.Struct st = 26; repeated double rd = 27; repeated E re = 28;\n"
    "  google.protobuf.StringValue sv = 29; google.protobuf.Empty em = 30; M self = 31;\n"
    "  repeated N rn = 32; map<int32, string> mi = 33; google.protobuf.Value va = 34; }\n"
    "message N { string z = 1; int64 v = 2; repeated N kids = 3; E e = 4; }\n"
    "enum E { E0 = 0; E1 = 1; }\n";

static floe_proto_schema_t *schema;

/* The record through JSON text into r: 0, or -1 (refused, rolled back). */
static int by_json(floe_rows_t *r, const floe_proto_msg_t *m, const uint8_t *p, size_t n,
                   floe_buf_t *json)
{
    floe_err_t err = {0};
    floe_buf_reset(json);
    if (floe_proto_conv_json(m, p, n, json, NULL, &err) ||
        floe_rows_json(r, floe_rows_root(r), json->data, json->len, &err) ||
        floe_rows_end(r, &err)) {
        floe_rows_rollback(r);
        return -1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err = {0};
    if (!schema) {
        floe_proto_file_t *f = NULL;
        if (floe_proto_parse(SCHEMA, strlen(SCHEMA), "m.proto", &f, &err) ||
            floe_proto_schema_new(f, NULL, 0, &schema, &err))
            abort();
    }
    if (size < 1) return 0;
    floe_rows_opts_t o = {.infer_timestamps = data[0] & 1, .widen_long_to_double = true};
    const floe_proto_msg_t *m = floe_proto_schema_find_msg(schema, data[0] & 2 ? ".f.N" : ".f.M");
    floe_rows_t *ref = floe_rows_new(&o), *typed = floe_rows_new(&o);
    floe_proto_shred_t *sh = typed ? floe_proto_shred_new(typed) : NULL;
    floe_buf_t json = FLOE_BUF_INIT;
    size_t off = 1;
    for (int rec = 0; sh && ref && off < size && rec < 16; rec++) {
        size_t n = data[off++];
        if (n > size - off) n = size - off;
        const uint8_t *p = data + off;
        off += n;
        floe_rows_begin(ref);
        int a = by_json(ref, m, p, n, &json);
        floe_rows_begin(typed);
        int rc = floe_proto_shred(sh, 1, m, p, n, &err);
        int b = 0;
        if (rc == 0 && floe_rows_end(typed, &err) == 0) {
            if (a) { /* typed took what the JSON path refuses */
                fprintf(stderr, "record %d: typed took it, JSON refused\n", rec);
                abort();
            }
        } else {
            floe_rows_rollback(typed);
            floe_rows_begin(typed);
            b = by_json(typed, m, p, n, &json);
        }
        char why[600];
        if (a != b || !floe_rows_same(ref, typed, why, sizeof why)) {
            fprintf(stderr, "record %d: %s\n", rec, a != b ? "refused by one path" : why);
            abort();
        }
        rows_check(ref);
        rows_check(typed);
    }
    floe_buf_free(&json);
    floe_proto_shred_free(sh);
    floe_rows_free(ref);
    floe_rows_free(typed);
    return 0;
}
