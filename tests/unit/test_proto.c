/* Protocol Buffers schemas (src/format/proto*.c): .proto text and protoc's
 * own FileDescriptorProto (tests/unit/data/proto_*.pb, written by
 * `protoc -I. -o proto_X.pb proto_X.proto` from the .proto beside them)
 * read into one model, resolved, and written back in both forms. */
#include <stdio.h>

#include <jansson.h>

#include "format/proto.h"
#include "table/proto_conv.h"
#include "util/base64.h"
#include "hex.h"
#include "test.h"

static char *slurp(const char *name, size_t *n)
{
    const char *root = getenv("FLOE_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/unit/data/%s", root ? root : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 20);
    *n = b ? fread(b, 1, (1 << 20) - 1, f) : 0;
    if (b) b[*n] = 0;
    fclose(f);
    return b;
}

/* The first FileDescriptorProto of a FileDescriptorSet. */
static floe_proto_file_t *from_set(const char *name)
{
    size_t n;
    char *b = slurp(name, &n);
    if (!b) return NULL;
    size_t off = 0;
    floe_proto_wire_t w;
    floe_err_t err = {0};
    floe_proto_file_t *f = NULL;
    if (floe_proto_wire_next((const uint8_t *)b, n, &off, &w, &err) == 1 && w.number == 1)
        floe_proto_fdp_decode(w.p, w.len, &f, &err);
    free(b);
    return f;
}

static floe_proto_schema_t *schema_of_text(const char *name, floe_err_t *err)
{
    size_t n;
    char *b = slurp(name, &n);
    floe_proto_file_t *f = NULL;
    floe_proto_schema_t *s = NULL;
    if (b && !floe_proto_parse(b, n, name, &f, err)) floe_proto_schema_new(f, NULL, 0, &s, err);
    free(b);
    return s;
}

static char *text_of(const floe_proto_file_t *f)
{
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_proto_to_text(f, &b)) return NULL;
    return floe_buf_cstr(&b);
}

/* text and protoc's descriptor of the same file resolve to one text, and
 * that text and our own descriptor of it read back to the same again */
static void check_file(const char *proto, const char *pb)
{
    floe_err_t err = {0};
    floe_proto_schema_t *a = schema_of_text(proto, &err);
    CHECK(a != NULL);
    if (!a) {
        fprintf(stderr, "%s: %s\n", proto, err.msg);
        return;
    }
    floe_proto_file_t *pf = from_set(pb);
    CHECK(pf != NULL);
    floe_proto_schema_t *b = NULL;
    CHECK(pf && !floe_proto_schema_new(pf, NULL, 0, &b, &err));
    char *ta = text_of(floe_proto_schema_file(a)), *tb = b ? text_of(floe_proto_schema_file(b)) : 0;
    CHECK_STR(ta, tb);
    /* our descriptor, decoded and resolved, gives the same text */
    floe_buf_t fdp = FLOE_BUF_INIT;
    CHECK(!floe_proto_fdp_encode(floe_proto_schema_file(a), &fdp));
    floe_proto_file_t *back = NULL;
    floe_proto_schema_t *c = NULL;
    CHECK(!floe_proto_fdp_decode(fdp.data, fdp.len, &back, &err));
    CHECK(back && !floe_proto_schema_new(back, NULL, 0, &c, &err));
    char *tc = c ? text_of(floe_proto_schema_file(c)) : NULL;
    CHECK_STR(ta, tc);
    /* the text parses to itself */
    floe_proto_file_t *again = NULL;
    floe_proto_schema_t *d = NULL;
    CHECK(ta && !floe_proto_parse(ta, strlen(ta), proto, &again, &err));
    CHECK(again && !floe_proto_schema_new(again, NULL, 0, &d, &err));
    char *td = d ? text_of(floe_proto_schema_file(d)) : NULL;
    CHECK_STR(ta, td);
    free(ta);
    free(tb);
    free(tc);
    free(td);
    floe_buf_free(&fdp);
    floe_proto_schema_free(a);
    floe_proto_schema_free(b);
    floe_proto_schema_free(c);
    floe_proto_schema_free(d);
}

static void test_proto3_text_and_protoc_agree(void)
{
    check_file("proto_shop.proto", "proto_shop.pb");
}

static void test_proto2_text_and_protoc_agree(void)
{
    check_file("proto_legacy.proto", "proto_legacy.pb");
}

static void test_model(void)
{
    floe_err_t err = {0};
    floe_proto_schema_t *s = schema_of_text("proto_shop.proto", &err);
    CHECK(s != NULL);
    if (!s) return;
    const floe_proto_msg_t *m = floe_proto_schema_message(s, NULL, 0);
    CHECK_STR(m->full, ".shop.v1.Payment");
    const floe_proto_field_t *memo = floe_proto_msg_field(m, 12);
    CHECK(memo->proto3_optional);
    CHECK_STR(m->oneofs[memo->oneof], "_memo");
    CHECK_EQ(memo->oneof, 1); /* after the real oneof "method" */
    const floe_proto_field_t *at = floe_proto_msg_field(m, 9);
    CHECK_STR(at->type_name, ".google.protobuf.Timestamp");
    CHECK(at->msg != NULL);
    const floe_proto_field_t *counts = floe_proto_msg_field(m, 13);
    CHECK(counts->msg && counts->msg->map_entry);
    CHECK_STR(floe_proto_msg_field(m, 8)->en->full, ".shop.v1.State");
    int32_t idx[] = {0, 2};
    const floe_proto_msg_t *card = floe_proto_schema_message(s, idx, 2);
    CHECK(card && !strcmp(card->name, "Card"));
    int32_t bad[] = {0, 9};
    CHECK(floe_proto_schema_message(s, bad, 2) == NULL);
    floe_proto_schema_free(s);
}

static void test_refusals(void)
{
    static const char *bad[] = {
        "syntax = \"proto3\"; message A { B b = 1; }",                  /* unknown type */
        "syntax = \"proto3\"; message A { int32 a = 1; int32 b = 1; }", /* duplicate number */
        "syntax = \"proto3\"; message A { required int32 a = 1; }",     /* proto3 required */
        "syntax = \"proto3\"; import \"x.proto\"; message A {}",        /* missing import */
        "syntax = \"proto3\"; message A { map<float, int32> m = 1; }",  /* map key */
        "syntax = \"proto4\";",
        "message A { int32 a = 0; }",
        "message A { int32 a = 1 }",
        "message A { int32 a = 1; ",
        "syntax = \"proto3\"; message A {} message A {}",
        "edition = \"2023\";",
        "syntax = \"proto2\"; message A { optional group G = 1 { } }",
        /* a quoted default on a number (found by fuzz_proto_parse: it was
         * written back bare, as text that no longer parsed) */
        "syntax = \"proto2\"; message A { optional double d = 1 [default = \"x\"]; }",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        floe_err_t err = {0};
        floe_proto_file_t *f = NULL;
        floe_proto_schema_t *s = NULL;
        int rc = floe_proto_parse(bad[i], strlen(bad[i]), "t.proto", &f, &err);
        if (!rc) rc = floe_proto_schema_new(f, NULL, 0, &s, &err);
        CHECK(rc == -1);
        CHECK(err.msg[0] != 0);
        floe_proto_schema_free(s);
    }
}

static void test_references(void)
{
    /* a file imported through a reference, its names found by package */
    const char *dep = "syntax = \"proto3\"; package common; message Money { int64 units = 1; }";
    const char *main_ = "syntax = \"proto3\"; package shop; import \"common/money.proto\";\n"
                        "message Order { common.Money total = 1; }";
    floe_err_t err = {0};
    floe_proto_file_t *d = NULL, *m = NULL;
    floe_proto_schema_t *s = NULL;
    CHECK(!floe_proto_parse(dep, strlen(dep), "common/money.proto", &d, &err));
    CHECK(!floe_proto_parse(main_, strlen(main_), "shop.proto", &m, &err));
    CHECK(!floe_proto_schema_new(m, &d, 1, &s, &err));
    if (!s) return;
    const floe_proto_msg_t *o = floe_proto_schema_message(s, NULL, 0);
    CHECK_STR(o->fields[0].type_name, ".common.Money");
    CHECK(o->fields[0].msg == floe_proto_schema_find_msg(s, ".common.Money"));
    floe_proto_schema_free(s);
}

/* ---- the wire decoder (src/table/proto_conv.c) ---- */

static floe_proto_schema_t *schema_of(const char *text)
{
    floe_err_t err = {0};
    floe_proto_file_t *f = NULL;
    floe_proto_schema_t *s = NULL;
    if (floe_proto_parse(text, strlen(text), "t.proto", &f, &err) ||
        floe_proto_schema_new(f, NULL, 0, &s, &err))
        printf("# %s\n", err.msg);
    return s;
}

static char *decode(const floe_proto_schema_t *s, const char *hex)
{
    uint8_t b[256];
    size_t n = floe_test_unhex(hex, b);
    floe_buf_t out = FLOE_BUF_INIT;
    floe_err_t err = {0};
    if (floe_proto_conv_json(floe_proto_schema_message(s, NULL, 0), b, n, &out, NULL, &err)) {
        floe_buf_free(&out);
        return strdup(err.msg);
    }
    return floe_buf_cstr(&out);
}

static void test_wire_decoding(void)
{
    floe_proto_schema_t *s = schema_of(
        "syntax = \"proto3\"; message M { int32 a = 1; repeated int32 r = 2; sint64 z = 3;\n"
        "  double d = 4; string t = 5; E e = 6; optional int32 o = 7; N n = 8; float f = 9;\n"
        "  map<string, int32> m = 10; }\n"
        "message N { int64 v = 1; } enum E { E0 = 0; E1 = 1; }");
    CHECK(s != NULL);
    if (!s) return;
    /* empty: proto3 defaults, no presence for o and n, empty lists */
    char *j = decode(s, "");
    CHECK_STR(j, "{\"a\":0,\"r\":[],\"z\":0,\"d\":0.0,\"t\":\"\",\"e\":\"E0\",\"f\":0.0,\"m\":[]}");
    free(j);
    /* a = -1 (ten-byte varint); r packed [1, 150] then one unpacked 3;
     * z = -2 (zigzag 3); an unknown field 15 skipped; d = 0.1; e = 7
     * (unknown number); o = 0 present; n = {v: 5}; f = 0.5f */
    j = decode(s, "08ffffffffffffffffff01 120301 9601 1003 1803 7801"
                  "21 9a9999999999b93f 3007 3800 42020805 4d0000003f");
    CHECK_STR(j, "{\"a\":-1,\"r\":[1,150,3],\"z\":-2,\"d\":0.1,\"t\":\"\",\"e\":\"7\","
                 "\"o\":0,\"n\":{\"v\":5},\"f\":0.5,\"m\":[]}");
    free(j);
    /* fields out of order, a given twice (the last wins), a map entry */
    j = decode(s, "2a026869 0801 0802");
    CHECK(j && strstr(j, "\"a\":2") && strstr(j, "\"t\":\"hi\""));
    free(j);
    j = decode(s, "0801 0802 5205 0a01 61 1001");
    CHECK(j && strstr(j, "\"m\":[{\"key\":\"a\",\"value\":1}]"));
    free(j);
    /* corrupt: a truncated varint, a length past the end, a wrong wire type */
    j = decode(s, "08ff");
    CHECK(j && strstr(j, "varint"));
    free(j);
    j = decode(s, "2a05 6869");
    CHECK(j && strstr(j, "past the end"));
    free(j);
    j = decode(s, "0d00000000");
    CHECK(j && strstr(j, "wrong wire type"));
    free(j);
    floe_proto_schema_free(s);
    /* doubles written short read back exactly; others at full precision */
    s = schema_of("syntax = \"proto3\"; message D { repeated double d = 1; }");
    const double vals[] = {123.451, -0.001, 1e-300, 3.0, 0.1 + 0.2, 9007199254740993.0, -0.0};
    floe_buf_t b = FLOE_BUF_INIT;
    uint8_t tag = 0x09;
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        floe_buf_append(&b, &tag, 1);
        uint64_t bits;
        memcpy(&bits, &vals[i], 8);
        floe_buf_append_le64(&b, bits);
    }
    floe_buf_t out = FLOE_BUF_INIT;
    floe_err_t err = {0};
    CHECK(!floe_proto_conv_json(floe_proto_schema_message(s, NULL, 0), b.data, b.len, &out, NULL,
                                &err));
    json_t *root = json_loadb((const char *)out.data, out.len, 0, NULL);
    json_t *arr = json_object_get(root, "d");
    CHECK_EQ(json_array_size(arr), sizeof vals / sizeof *vals);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        CHECK(json_is_real(json_array_get(arr, i)));
        CHECK(json_real_value(json_array_get(arr, i)) == vals[i]);
    }
    json_decref(root);
    floe_buf_free(&out);
    floe_buf_free(&b);
    floe_proto_schema_free(s);
}

static void test_message_indexes(void)
{
    int32_t idx[FLOE_PROTO_MAX_INDEXES];
    size_t n, used;
    floe_err_t err = {0};
    uint8_t zero[] = {0};
    CHECK(!floe_proto_conv_indexes(zero, 1, idx, &n, &used, &err));
    CHECK(n == 1 && idx[0] == 0 && used == 1);
    uint8_t two[] = {4, 2, 6}; /* zigzag: count 2, indexes 1 and 3 */
    CHECK(!floe_proto_conv_indexes(two, 3, idx, &n, &used, &err));
    CHECK(n == 2 && idx[0] == 1 && idx[1] == 3 && used == 3);
    uint8_t bad[] = {3}; /* count -2 zigzag: 3 plain, and none follow */
    CHECK(floe_proto_conv_indexes(bad, 1, idx, &n, &used, &err) == -1);
    /* plain varints (python3-confluent-kafka 1.7): count 1, index 1; count
     * 3, indexes 2, 0, 130 */
    uint8_t plain1[] = {1, 1, 0x08};
    CHECK(!floe_proto_conv_indexes(plain1, 3, idx, &n, &used, &err));
    CHECK(n == 1 && idx[0] == 1 && used == 2);
    uint8_t plain3[] = {3, 2, 0, 0x82, 0x01};
    CHECK(!floe_proto_conv_indexes(plain3, 5, idx, &n, &used, &err));
    CHECK(n == 3 && idx[0] == 2 && idx[1] == 0 && idx[2] == 130 && used == 5);
    uint8_t many[] = {0x41}; /* 65 plain */
    CHECK(floe_proto_conv_indexes(many, 1, idx, &n, &used, &err) == -1);
    uint8_t cut[] = {4, 2};
    CHECK(floe_proto_conv_indexes(cut, 2, idx, &n, &used, &err) == -1);
}

/* A registry's schema string: .proto text, or base64 of a descriptor
 * (whitespace around), told apart by what parses, not by the alphabet. */
static void test_load(void)
{
    floe_err_t err = {0};
    size_t n;
    char *text = slurp("proto_shop.proto", &n);
    floe_proto_file_t *a = NULL, *b = NULL, *c = NULL, *d = NULL, *pf = from_set("proto_shop.pb");
    CHECK(text && pf);
    if (!text || !pf) return;
    CHECK(!floe_proto_load(text, n, "a.proto", &a, &err));
    CHECK(!floe_proto_parse(text, n, "a.proto", &b, &err));
    char *ta = a ? text_of(a) : NULL, *tb = b ? text_of(b) : NULL;
    CHECK_STR(ta, tb);
    CHECK_STR(a ? a->name : NULL, "a.proto");
    /* protoc's descriptor as base64, named by the caller or by itself */
    floe_buf_t fdp = FLOE_BUF_INIT, b64 = FLOE_BUF_INIT;
    CHECK(!floe_proto_fdp_encode(pf, &fdp));
    CHECK(!floe_buf_append(&b64, "\n ", 2) && !floe_base64_encode(&b64, fdp.data, fdp.len) &&
          !floe_buf_append(&b64, "\r\n", 2));
    CHECK(!floe_proto_load((const char *)b64.data, b64.len, "x.proto", &c, &err));
    CHECK_STR(c ? c->name : NULL, "x.proto");
    char *tc = c ? text_of(c) : NULL, *tp = text_of(pf);
    CHECK_STR(tc, tp);
    CHECK(!floe_proto_load((const char *)b64.data, b64.len, NULL, &d, &err));
    CHECK_STR(d ? d->name : NULL, pf->name);
    /* text that does not parse: the text's error, with its line */
    floe_proto_file_t *e = NULL;
    CHECK(floe_proto_load("syntax = \"proto3\";\nmessage M { int32 a = ; }", 42, NULL, &e, &err) ==
          -1);
    CHECK(e == NULL && err.code == FLOE_EINVAL && strstr(err.msg, "line 2") != NULL);
    /* base64 of what is no descriptor ("ABC"): the descriptor's error */
    CHECK(floe_proto_load("QUJD", 4, NULL, &e, &err) == -1);
    CHECK(e == NULL && err.code == FLOE_ECORRUPT);
    /* valid base64 that is also valid text (a comment) is text */
    CHECK(!floe_proto_load("////", 4, NULL, &e, &err) && e && e->nmsgs == 0);
    floe_proto_file_free(e);
    e = NULL;
    /* the empty file is text */
    CHECK(!floe_proto_load("", 0, NULL, &e, &err) && e && e->nmsgs == 0);
    floe_proto_file_free(e);
    free(ta);
    free(tb);
    free(tc);
    free(tp);
    free(text);
    floe_buf_free(&fdp);
    floe_buf_free(&b64);
    floe_proto_file_free(a);
    floe_proto_file_free(b);
    floe_proto_file_free(c);
    floe_proto_file_free(d);
    floe_proto_file_free(pf);
}

TEST_MAIN({
    RUN(test_proto3_text_and_protoc_agree);
    RUN(test_proto2_text_and_protoc_agree);
    RUN(test_model);
    RUN(test_refusals);
    RUN(test_references);
    RUN(test_wire_decoding);
    RUN(test_message_indexes);
    RUN(test_load);
})
