/* The protobuf converter's typed path (table/proto_shred.h) against its
 * JSON path (proto_conv.h rendered text through floe_rows_json): for many
 * generated messages of every field kind (scalars of each type, enums
 * known and unknown, nested messages, repeated packed and unpacked, maps,
 * oneofs, proto3 optional, proto2 defaults, well-known types, unknown
 * fields, fields given twice, invalid UTF-8, truncated and damaged bytes)
 * both paths must leave the same columns (shape, levels, values) and
 * refuse the same records, while the typed path takes most rows itself.
 * Then the converter (convert.h) with both paths behind it. */
#include <math.h>

#include "format/proto.h"
#include "table/convert.h"
#include "table/proto_conv.h"
#include "table/proto_shred.h"
#include "table/rows_int.h"
#include "hex.h"
#include "test.h"
#include "util/varint.h"

#include "../../bench/xorshift.h"

static const char *SCHEMA =
    "syntax = \"proto3\"; package t;\n"
    "import \"google/protobuf/timestamp.proto\"; import \"google/protobuf/wrappers.proto\";\n"
    "import \"google/protobuf/struct.proto\"; import \"google/protobuf/duration.proto\";\n"
    "import \"google/protobuf/empty.proto\";\n"
    "message M { int32 a = 1; int64 b = 2; uint32 c = 3; uint64 d = 4; sint32 e = 5;\n"
    "  sint64 f = 6; fixed32 g = 7; fixed64 h = 8; sfixed32 i = 9; sfixed64 j = 10;\n"
    "  float k = 11; double l = 12; bool m = 13; string n = 14; bytes o = 15; E p = 16;\n"
    "  repeated int32 q = 17; repeated string r = 18; map<string, N> s = 19; N t = 20;\n"
    "  optional string u = 21; oneof w { int32 x = 22; N y = 23; string yy = 40; }\n"
    "  google.protobuf.Timestamp ts = 24; google.protobuf.Int32Value iv = 25;\n"
    "  google.protobuf.Struct st = 26; repeated double rd = 27; repeated E re = 28;\n"
    "  google.protobuf.StringValue sv = 29; google.protobuf.Duration du = 30;\n"
    "  repeated N rn = 31; map<int64, string> mi = 32; google.protobuf.Value va = 33;\n"
    "  google.protobuf.BytesValue bv = 34; repeated sint64 rz = 35; optional double od = 36;\n"
    "  google.protobuf.Empty em = 37; repeated fixed32 rf = 38; google.protobuf.ListValue lv = "
    "39;\n"
    "  repeated google.protobuf.Timestamp rt = 41; M self = 42; }\n"
    "message N { string z = 1; int64 v = 2; repeated N kids = 3; E e = 4; }\n"
    "enum E { E0 = 0; E1 = 1; E2 = 2; }\n";

static const char *PROTO2 =
    "syntax = \"proto2\"; package t2;\n"
    "message P { optional int32 a = 1 [default = 7]; optional string s = 2 [default = "
    "\"d\xc3\xa9\"];\n"
    "  optional double x = 3 [default = 2.5]; optional bool b = 4 [default = true];\n"
    "  optional E e = 5 [default = B]; optional int64 n = 6; required string r = 7;\n"
    "  repeated int32 q = 8 [packed = true]; optional uint64 big = 9 [default = 0x10];\n"
    "  optional bytes by = 10 [default = \"x\"]; optional Q sub = 11; }\n"
    "message Q { optional int32 v = 1 [default = -3]; }\n"
    "enum E { A = 0; B = 1; }\n";

static floe_proto_schema_t *schema_of(const char *text)
{
    floe_proto_file_t *f = NULL;
    floe_proto_schema_t *s = NULL;
    floe_err_t err = {0};
    if (floe_proto_parse(text, strlen(text), "t.proto", &f, &err) ||
        floe_proto_schema_new(f, NULL, 0, &s, &err))
        printf("# %s\n", err.msg);
    return s;
}

/* ---- a random message encoder over a descriptor ------------------------ */

static void put_uv(floe_buf_t *b, uint64_t v)
{
    uint8_t t[10];
    floe_buf_append(b, t, floe_uvarint_encode(t, v));
}

static void put_tag(floe_buf_t *b, uint32_t number, int wt)
{
    put_uv(b, (uint64_t)number << 3 | (uint64_t)wt);
}

static uint64_t pick_int(void)
{
    static const uint64_t v[] = {
        0,           1,          2,          127,          128,          300,
        0xffffffffu, 0x7fffffff, 1ull << 63, (uint64_t)-1, (uint64_t)-2, 1700000000,
        42};
    return bench_next() % 3 ? v[bench_next() % (sizeof v / sizeof *v)] : bench_next();
}

static double pick_double(void)
{
    static const double v[] = {0.0, -0.0, 1.5, -2.25, 0.1, 1e300, 123.456, 3.0, 1e-7};
    switch (bench_next() % 12) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return (double)(int64_t)bench_next() / 1000.0;
    default: return v[bench_next() % (sizeof v / sizeof *v)];
    }
}

static void put_text(floe_buf_t *b, uint32_t number)
{
    static const char *v[] = {"",
                              "hello",
                              "h\xc3\xa9llo \xe2\x9c\x93",
                              "bad \xff\xfe utf8",
                              "2026-01-02T03:04:05Z",
                              "q\"uote\\ \n\t",
                              "E1",
                              "nul\0x",
                              "cut \xe2\x9c"};
    size_t k = bench_next() % (sizeof v / sizeof *v);
    size_t n = k == 7 ? 5 : strlen(v[k]);
    put_tag(b, number, 2);
    put_uv(b, n);
    floe_buf_append(b, v[k], n);
}

/* One scalar value of type t (no tag). */
static void put_scalar(floe_buf_t *b, int t)
{
    switch (floe_proto_conv_wire_type(t)) {
    case 1: {
        uint64_t bits;
        if (t == FLOE_PT_DOUBLE) {
            double x = pick_double();
            memcpy(&bits, &x, 8);
        } else {
            bits = pick_int();
        }
        floe_buf_append_le64(b, bits);
        break;
    }
    case 5: {
        uint32_t bits;
        if (t == FLOE_PT_FLOAT) {
            float x = (float)pick_double();
            memcpy(&bits, &x, 4);
        } else {
            bits = (uint32_t)pick_int();
        }
        uint8_t le[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
                         (uint8_t)(bits >> 24)};
        floe_buf_append(b, le, 4);
        break;
    }
    default:
        if (t == FLOE_PT_ENUM) put_uv(b, bench_next() % 5);
        else if (t == FLOE_PT_BOOL)
            put_uv(b, bench_next() % 4 ? bench_next() % 2 : 2);
        else
            put_uv(b, pick_int());
    }
}

static void gen_msg(floe_buf_t *b, const floe_proto_msg_t *m, int depth);

static void gen_sub(floe_buf_t *b, uint32_t number, const floe_proto_msg_t *m, int depth)
{
    floe_buf_t sub = FLOE_BUF_INIT;
    if (!strcmp(m->full, ".google.protobuf.Timestamp") && bench_next() % 4) {
        put_tag(&sub, 1, 0);
        put_uv(&sub, (uint64_t)(int64_t)(1700000000 + (int64_t)(bench_next() % 2000000) - 1000000));
        if (bench_next() % 2) {
            put_tag(&sub, 2, 0);
            put_uv(&sub, bench_next() % 8 ? bench_next() % 1000000000 : (uint64_t)-5);
        }
    } else {
        gen_msg(&sub, m, depth + 1);
    }
    put_tag(b, number, 2);
    put_uv(b, sub.len);
    floe_buf_append(b, sub.data, sub.len);
    floe_buf_free(&sub);
}

/* One occurrence of field f (a repeated one: a run of values, packed or
 * not). */
static void gen_field(floe_buf_t *b, const floe_proto_field_t *f, int depth)
{
    if (f->type == FLOE_PT_MESSAGE) {
        if (depth > 3) return;
        int k = f->label == FLOE_PL_REPEATED ? (int)(bench_next() % 3) : 1;
        for (int i = 0; i < k; i++) gen_sub(b, (uint32_t)f->number, f->msg, depth);
        return;
    }
    if (f->type == FLOE_PT_STRING || f->type == FLOE_PT_BYTES) {
        int k = f->label == FLOE_PL_REPEATED ? (int)(bench_next() % 4) : 1;
        for (int i = 0; i < k; i++) put_text(b, (uint32_t)f->number);
        return;
    }
    if (f->label == FLOE_PL_REPEATED && bench_next() % 2) { /* packed */
        floe_buf_t p = FLOE_BUF_INIT;
        int k = (int)(bench_next() % 4);
        for (int i = 0; i < k; i++) put_scalar(&p, f->type);
        put_tag(b, (uint32_t)f->number, 2);
        put_uv(b, p.len);
        floe_buf_append(b, p.data, p.len);
        floe_buf_free(&p);
        return;
    }
    int k = f->label == FLOE_PL_REPEATED ? (int)(bench_next() % 4) : 1;
    for (int i = 0; i < k; i++) {
        put_tag(b, (uint32_t)f->number, floe_proto_conv_wire_type(f->type));
        put_scalar(b, f->type);
    }
}

static void gen_msg(floe_buf_t *b, const floe_proto_msg_t *m, int depth)
{
    for (size_t i = 0; i < m->nfields; i++) {
        /* fewer fields deeper down; now and then out of order or twice */
        if (bench_next() % 8 < (uint64_t)(2 + 2 * depth)) continue;
        const floe_proto_field_t *f = &m->fields[bench_next() % 16 ? i : bench_next() % m->nfields];
        gen_field(b, f, depth);
        if (bench_next() % 50 == 0) gen_field(b, f, depth);
        if (bench_next() % 20 == 0) { /* an unknown field */
            int wt = (int)(bench_next() % 3);
            put_tag(b, 1000 + (uint32_t)(bench_next() % 100), wt == 2 ? 2 : wt == 1 ? 1 : 0);
            if (wt == 2) {
                put_uv(b, 3);
                floe_buf_append(b, "abc", 3);
            } else if (wt == 1) {
                floe_buf_append_le64(b, 7);
            } else {
                put_uv(b, pick_int());
            }
        }
    }
}

/* ---- the two paths ---------------------------------------------------- */

typedef struct side {
    floe_rows_t *rows;
    floe_proto_shred_t *sh;
    size_t typed, refused;
    floe_buf_t json;
} side_t;

static void side_init(side_t *s, bool timestamps)
{
    memset(s, 0, sizeof *s);
    floe_rows_opts_t o = {.infer_timestamps = timestamps, .widen_long_to_double = true};
    s->rows = floe_rows_new(&o);
    s->sh = floe_proto_shred_new(s->rows);
}

static void side_free(side_t *s)
{
    floe_proto_shred_free(s->sh);
    floe_rows_free(s->rows);
    floe_buf_free(&s->json);
}

/* The record through JSON text: 0 or -1 (refused, rolled back). */
static int by_json(side_t *s, const floe_proto_msg_t *m, const uint8_t *p, size_t n)
{
    floe_err_t err = {0};
    floe_buf_reset(&s->json);
    if (floe_proto_conv_json(m, p, n, &s->json, NULL, &err) ||
        floe_rows_json(s->rows, floe_rows_root(s->rows), s->json.data, s->json.len, &err) ||
        floe_rows_end(s->rows, &err)) {
        floe_rows_rollback(s->rows);
        s->refused++;
        return -1;
    }
    return 0;
}

/* The record as the converter takes it: typed, or JSON when it says so. */
static int by_typed(side_t *s, int32_t id, const floe_proto_msg_t *m, const uint8_t *p, size_t n)
{
    floe_err_t err = {0};
    floe_rows_begin(s->rows);
    int rc = floe_proto_shred(s->sh, id, m, p, n, &err);
    if (rc == 0 && !floe_rows_end(s->rows, &err)) {
        s->typed++;
        return 0;
    }
    if (rc < 0) printf("# typed: %s\n", err.msg);
    floe_rows_rollback(s->rows);
    floe_rows_begin(s->rows);
    return by_json(s, m, p, n);
}

/* n generated messages of m (some truncated or damaged) through both
 * paths; 0 when they agree. */
static void differential(const char *text, const char *msg, int n, bool timestamps,
                         size_t min_typed)
{
    floe_proto_schema_t *s = schema_of(text);
    CHECK(s != NULL);
    if (!s) return;
    const floe_proto_msg_t *m = floe_proto_schema_find_msg(s, msg);
    CHECK(m != NULL);
    side_t ref, typed;
    side_init(&ref, timestamps);
    side_init(&typed, timestamps);
    floe_buf_t b = FLOE_BUF_INIT;
    char why[600] = "";
    bool same = true;
    for (int i = 0; i < n && same; i++) {
        floe_buf_reset(&b);
        gen_msg(&b, m, 0);
        uint64_t damage = bench_next() % 40;
        if (damage == 0 && b.len) b.len = bench_next() % b.len; /* truncated */
        if (damage == 1 && b.len) b.data[bench_next() % b.len] ^= (uint8_t)(1 + bench_next() % 255);
        floe_rows_begin(ref.rows);
        int a = by_json(&ref, m, b.data, b.len);
        int c = by_typed(&typed, 1, m, b.data, b.len);
        if (a != c) {
            snprintf(why, sizeof why, "message %d: json %d, typed %d", i, a, c);
            same = false;
        } else if (!floe_rows_same(ref.rows, typed.rows, why, sizeof why)) {
            same = false;
        }
        if (!same) printf("# %s %s\n", msg, why);
        if (i % 97 == 96) { /* a flush now and then */
            floe_rows_clear(ref.rows);
            floe_rows_clear(typed.rows);
        }
    }
    CHECK(same);
    printf("# %s: %zu of %d typed, %zu refused\n", msg, typed.typed, n, typed.refused);
    CHECK(typed.typed >= min_typed);
    CHECK_EQ(ref.refused, typed.refused);
    floe_buf_free(&b);
    side_free(&ref);
    side_free(&typed);
    floe_proto_schema_free(s);
}

static void typed_rows_equal_json_rows_proto3(void)
{
    differential(SCHEMA, ".t.M", 3000, true, 1500);
}

static void typed_rows_equal_json_rows_without_timestamps(void)
{
    differential(SCHEMA, ".t.M", 1500, false, 700);
}

static void typed_rows_equal_json_rows_nested(void)
{
    differential(SCHEMA, ".t.N", 2000, true, 1500);
}

static void typed_rows_equal_json_rows_proto2(void)
{
    differential(PROTO2, ".t2.P", 2000, true, 1000);
}

/* ---- exact values ----------------------------------------------------- */

static floe_rnode_t *child(floe_rnode_t *st, const char *name)
{
    return floe_rows_child(st, name);
}

static void typed_values(void)
{
    floe_proto_schema_t *s =
        schema_of("syntax = \"proto3\"; import \"google/protobuf/timestamp.proto\";\n"
                  "message M { int32 a = 1; repeated int32 r = 2; sint64 z = 3; double d = 4;\n"
                  "  string t = 5; E e = 6; bytes by = 7; google.protobuf.Timestamp ts = 8; }\n"
                  "enum E { E0 = 0; E1 = 1; }");
    CHECK(s != NULL);
    if (!s) return;
    const floe_proto_msg_t *m = floe_proto_schema_message(s, NULL, 0);
    side_t t;
    side_init(&t, true);
    uint8_t b[128];
    /* a = -1; r packed [1, 150] then 3; z = -2; d = 0.1; t = "hi"; e = 1;
     * by = 01 02 03; ts = 1700000000.5 */
    size_t n = floe_test_unhex("08ffffffffffffffffff01 120301 9601 1003 1803 21 9a9999999999b93f"
                               "2a026869 3001 3a03010203 420c 0880e2cfaa06 1080cab5ee01",
                               b);
    /* the first record makes the columns (JSON path), the second is typed */
    CHECK_EQ(by_typed(&t, 1, m, b, n), 0);
    CHECK_EQ(t.typed, 0);
    CHECK_EQ(by_typed(&t, 1, m, b, n), 0);
    CHECK_EQ(t.typed, 1);
    /* an empty message: proto3 defaults, an empty list, a null timestamp */
    CHECK_EQ(by_typed(&t, 1, m, b, 0), 0);
    CHECK_EQ(t.typed, 2);
    floe_rnode_t *root = floe_rows_root(t.rows);
    floe_rnode_t *a = child(root, "a"), *r = child(root, "r"), *z = child(root, "z"),
                 *d = child(root, "d"), *tt = child(root, "t"), *e = child(root, "e"),
                 *by = child(root, "by"), *ts = child(root, "ts");
    CHECK(a && r && z && d && tt && e && by && ts);
    if (a && r && z && d && tt && e && by && ts) {
        CHECK_EQ(a->kind, FLOE_TK_LONG);
        CHECK_EQ(floe_rcol_long(a->col, 1), -1);
        CHECK_EQ(floe_rcol_long(a->col, 2), 0);
        CHECK_EQ(r->kind, FLOE_TK_LIST);
        floe_rcol_t *rc = r->kids[0]->col;
        CHECK_EQ(rc->nvals, 6);
        CHECK_EQ(floe_rcol_long(rc, 4), 150);
        CHECK_EQ(rc->defs.len, 7); /* 3 + 3 + one empty list */
        CHECK_EQ(floe_rcol_long(z->col, 1), -2);
        CHECK(floe_rcol_double(d->col, 1) == 0.1);
        floe_slice_t v = floe_rcol_bytes(tt->col, 1);
        CHECK(v.len == 2 && !memcmp(v.ptr, "hi", 2));
        v = floe_rcol_bytes(e->col, 1);
        CHECK(v.len == 2 && !memcmp(v.ptr, "E1", 2));
        v = floe_rcol_bytes(e->col, 2);
        CHECK(v.len == 2 && !memcmp(v.ptr, "E0", 2));
        v = floe_rcol_bytes(by->col, 1);
        CHECK(v.len == 4 && !memcmp(v.ptr, "AQID", 4));
        CHECK_EQ(ts->kind, FLOE_TK_TIMESTAMPTZ);
        CHECK_EQ(floe_rcol_long(ts->col, 1), 1700000000500000LL);
        CHECK_EQ(ts->col->nvals, 2); /* the empty message's is null */
    }
    /* damaged bytes: refused by both (the JSON path names why) */
    n = floe_test_unhex("2a05 6869", b);
    CHECK_EQ(by_typed(&t, 1, m, b, n), -1);
    CHECK_EQ(t.refused, 1);
    side_free(&t);
    floe_proto_schema_free(s);
}

/* Repeated values that are all null (NaN) make no column, in either path,
 * and the typed path takes them without one (found by fuzz_proto_shred). */
static void null_elements_make_no_column(void)
{
    floe_proto_schema_t *s =
        schema_of("syntax = \"proto3\"; message M { repeated double rd = 1; int64 a = 2; }");
    CHECK(s != NULL);
    if (!s) return;
    const floe_proto_msg_t *m = floe_proto_schema_message(s, NULL, 0);
    side_t ref, t;
    side_init(&ref, true);
    side_init(&t, true);
    uint8_t b[64];
    const char *recs[] = {"1001", "0a10 000000000000f87f 000000000000f07f 1002",
                          "09000000000000f87f 09000000000000f87f 1003"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = floe_test_unhex(recs[i], b);
        floe_rows_begin(ref.rows);
        CHECK_EQ(by_json(&ref, m, b, n), 0);
        CHECK_EQ(by_typed(&t, 1, m, b, n), 0);
    }
    char why[600];
    CHECK(floe_rows_same(ref.rows, t.rows, why, sizeof why));
    CHECK_EQ(t.typed, 2);
    CHECK(floe_rows_child(floe_rows_root(t.rows), "rd") == NULL);
    side_free(&ref);
    side_free(&t);
    floe_proto_schema_free(s);
}

/* The record value written as hex through converter c, at offset i. */
static int conv_hex(floe_conv_t *c, size_t i, const char *hex, floe_conv_stage_t *st,
                    floe_err_t *err)
{
    uint8_t b[128];
    size_t n = floe_test_unhex(hex, b);
    floe_tmsg_t msg = {.kind = FLOE_TMSG_RECORD,
                       .offset = (int64_t)i,
                       .key_null = true,
                       .value = floe_slice(b, n)};
    return floe_conv_record(c, 0, &msg, st, err);
}

/* The converter: typed rows and JSON rows in one buffer, bad bytes to the
 * caller (the DLQ) with the reason, never a stall. */

static int by_id(void *arg, int32_t id, floe_proto_schema_t **out, floe_err_t *err)
{
    (void)arg;
    if (id != 3) return floe_err_set(err, FLOE_ENOENT, "no schema %d", (int)id);
    *out = schema_of("syntax = \"proto3\"; message M { int64 a = 1; string s = 2; N n = 3; }\n"
                     "message N { int32 v = 1; }");
    return *out ? 0 : -1;
}

static void converter_takes_both_paths(void)
{
    floe_err_t err = {0};
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_PROTOBUF, FLOE_CONV_STRING, &err);
    CHECK(c != NULL);
    if (!c) return;
    floe_conv_schemas_t src = {.proto = by_id};
    floe_conv_set_schemas(c, &src);
    const char *recs[] = {
        "00 00000003 00 0805 12026869", /* a=5 s="hi": makes a, s */
        "00 00000003 00 0806",          /* typed */
        "00 00000003 00 0807 1a020801", /* n={v:1}: makes n */
        "00 00000003 00 12026869 1a00", /* typed: n={} */
        "00 00000003 00 2a05 6869",     /* bad bytes */
        "00 00000004 00 0801",          /* no such schema */
        "00 00000003 02 0801",          /* no message at index 1 */
        "00 00000003 00 0808",          /* typed again */
    };
    int want[] = {0, 0, 0, 0, -1, -1, -1, 0};
    for (size_t i = 0; i < sizeof recs / sizeof *recs; i++) {
        floe_conv_stage_t st = 0;
        int rc = conv_hex(c, i, recs[i], &st, &err);
        CHECK_EQ(rc, want[i]);
        if (rc) CHECK_EQ(st, FLOE_STAGE_CONVERT);
        if (i == 4) CHECK(strstr(err.msg, "past the end") != NULL);
        if (i == 5) CHECK(strstr(err.msg, "no schema 4") != NULL);
    }
    CHECK_EQ(floe_rows_count(rows), 5);
    floe_rnode_t *root = floe_rows_root(rows);
    floe_rnode_t *a = child(root, "a"), *n = child(root, "n");
    CHECK(a && n && n->kind == FLOE_TK_STRUCT);
    if (a) {
        CHECK_EQ(a->col->nvals, 5);
        CHECK_EQ(floe_rcol_long(a->col, 1), 6);
        CHECK_EQ(floe_rcol_long(a->col, 3), 0); /* proto3 default */
        CHECK_EQ(floe_rcol_long(a->col, 4), 8);
    }
    if (n) {
        floe_rcol_t *v = n->kids[0]->col;
        /* rows 0, 1: null struct (backfilled); 2: 1; 3: default 0; 4: null */
        CHECK_EQ(v->defs.len, 5);
        CHECK_EQ(v->nvals, 2);
        CHECK_EQ(v->defs.data[0], 0);
        CHECK_EQ(v->defs.data[3], 2);
        CHECK_EQ(v->defs.data[4], 0);
    }
    floe_conv_free(c);
    floe_rows_free(rows);
}

/* An upsert table keyed by a nested field: the typed path's rows hold
 * their id columns as the JSON path's do. */
static int by_id_nested(void *arg, int32_t id, floe_proto_schema_t **out, floe_err_t *err)
{
    (void)arg;
    (void)id;
    *out = schema_of("syntax = \"proto3\"; message M { int64 id = 1; N n = 2; string s = 3; }\n"
                     "message N { int64 v = 1; }");
    return *out ? 0 : floe_err_set(err, FLOE_EINVAL, "schema");
}

static void upsert_ids_in_typed_rows(void)
{
    floe_err_t err = {0};
    floe_rows_t *rows = floe_rows_new(NULL);
    floe_conv_t *c = floe_conv_new(rows, FLOE_CONV_PROTOBUF, FLOE_CONV_STRING, &err);
    CHECK(c != NULL);
    if (!c) return;
    CHECK_EQ(floe_conv_set_upsert(c, "id, n.v", "", &err), 0);
    floe_conv_schemas_t src = {.proto = by_id_nested};
    floe_conv_set_schemas(c, &src);
    const char *recs[] = {"00 00000001 00 0801 12020802 1a0161", /* makes the columns */
                          "00 00000001 00 0802 12020803",        /* typed */
                          "00 00000001 00 0803",                 /* no n.v: refused */
                          "00 00000001 00 0804 1200"};           /* n.v default 0 */
    int want[] = {0, 0, -1, 0};
    for (size_t i = 0; i < 4; i++) {
        floe_conv_stage_t st = 0;
        int rc = conv_hex(c, i, recs[i], &st, &err);
        CHECK_EQ(rc, want[i]);
        if (rc != want[i]) printf("# record %zu: %s\n", i, err.msg);
    }
    CHECK_EQ(floe_rows_count(rows), 3);
    floe_conv_free(c);
    floe_rows_free(rows);
}

TEST_MAIN({
    RUN(typed_values);
    RUN(converter_takes_both_paths);
    RUN(null_elements_make_no_column);
    RUN(upsert_ids_in_typed_rows);
    RUN(typed_rows_equal_json_rows_proto3);
    RUN(typed_rows_equal_json_rows_without_timestamps);
    RUN(typed_rows_equal_json_rows_nested);
    RUN(typed_rows_equal_json_rows_proto2);
})
