/* libFuzzer target for src/format/avro*: arbitrary bytes as
 *   0: an object container file (header, codecs, blocks, datums),
 *   1: a binary datum of a fixed schema holding every type (and a
 *      recursive one); decoded values must re-encode and decode equal, and
 *      skip must consume exactly what decode did,
 *   2: schema JSON; a parsed schema must print and re-parse to the same
 *      canonical form,
 *   3: a datum of that schema resolved to an evolved reader schema
 *      (promotions, unions, enum default, added and removed fields),
 * chosen by the first byte.  Never a crash, leak or unbounded allocation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/avro.h"

static const char *SCHEMA =
    "{\"type\":\"record\",\"name\":\"all\",\"fields\":["
    "{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"b\",\"type\":\"boolean\"},"
    "{\"name\":\"i\",\"type\":\"int\"},{\"name\":\"l\",\"type\":\"long\"},"
    "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"by\",\"type\":\"bytes\"},{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"long\"]}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"string\"}},"
    "{\"name\":\"z\",\"type\":{\"type\":\"array\",\"items\":\"null\"}},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":3}},"
    "{\"name\":\"next\",\"type\":[\"null\",\"all\"]}]}";

static const char *READER =
    "{\"type\":\"record\",\"name\":\"all\",\"fields\":["
    "{\"name\":\"i\",\"type\":\"double\"},{\"name\":\"l\",\"type\":[\"null\",\"float\"]},"
    "{\"name\":\"s\",\"type\":\"bytes\"},{\"name\":\"by\",\"type\":[\"string\",\"null\"]},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"B\",\"C\"],"
    "\"default\":\"C\"}},"
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"double\"]}},"
    "{\"name\":\"added\",\"type\":{\"type\":\"map\",\"values\":\"int\"},\"default\":{\"k\":1}},"
    "{\"name\":\"next\",\"type\":[\"null\",\"all\"],\"default\":null}]}";

static floe_avro_schema_t *schema, *reader;
static floe_avro_resolver_t *resolver;

static void container(const uint8_t *data, size_t size)
{
    floe_avro_reader_opts_t o = FLOE_AVRO_READER_OPTS_INIT;
    o.max_block_bytes = 1 << 20;
    o.max_block_count = 1 << 16;
    floe_avro_reader_t *r;
    floe_err_t err;
    if (floe_avro_reader_open(&r, data, size, &o, &err) != 0) return;
    floe_arena_t a;
    floe_arena_init(&a, 0, 8 << 20);
    floe_avro_value_t *v;
    for (int n = 0; n < 1000 && floe_avro_reader_next(r, &a, &v, &err) == 1; n++) {
        floe_buf_t b = FLOE_BUF_INIT;
        floe_avro_value_to_json(v, &b, &err);
        floe_buf_free(&b);
        floe_arena_reset(&a);
    }
    floe_arena_free(&a);
    floe_avro_reader_free(r);
}

static void datum(const uint8_t *data, size_t size)
{
    floe_arena_t a;
    floe_arena_init(&a, 0, 8 << 20);
    floe_slice_t in = floe_slice(data, size), sk = in;
    floe_avro_value_t *v;
    floe_err_t err;
    int rc = floe_avro_decode(schema, &in, &a, &v, &err);
    int rs = floe_avro_skip(schema, &sk, &err);
    if (rc == 0) {
        if (rs != 0 || sk.len != in.len) abort();
        floe_buf_t b = FLOE_BUF_INIT;
        if (floe_avro_encode(v, &b, &err) != 0) abort();
        floe_slice_t again = floe_buf_slice(&b);
        floe_avro_value_t *w;
        floe_arena_t a2; /* its own cap: the re-decode needs as much again */
        floe_arena_init(&a2, 0, 8 << 20);
        if (floe_avro_decode(schema, &again, &a2, &w, &err) != 0 || again.len != 0) abort();
        if (!floe_avro_value_equal(v, w)) abort();
        floe_arena_free(&a2);
        floe_buf_free(&b);
    }
    floe_arena_free(&a);
}

static void schema_text(const uint8_t *data, size_t size)
{
    floe_avro_schema_t *s;
    floe_err_t err;
    if (floe_avro_schema_parse((const char *)data, size, &s, &err) != 0) return;
    char *j = floe_avro_schema_to_json(s, &err);
    char *c1 = floe_avro_schema_canonical(s, &err);
    if (j && c1) {
        floe_avro_schema_t *s2;
        if (floe_avro_schema_parse(j, strlen(j), &s2, &err) != 0) abort();
        char *c2 = floe_avro_schema_canonical(s2, &err);
        if (!c2 || strcmp(c1, c2) != 0) abort();
        free(c2);
        floe_avro_schema_free(s2);
    }
    free(j);
    free(c1);
    floe_avro_schema_free(s);
}

/* data as "REFERENCE\0SCHEMA": the schema parsed with the reference's
 * named types known; its own text (the reference's types by name) parses
 * again with the same reference into the same canonical form. */
static void with_reference(const uint8_t *data, size_t size)
{
    const uint8_t *z = memchr(data, 0, size);
    floe_avro_text_t ref = {(const char *)data, (size_t)(z - data)};
    const char *text = (const char *)z + 1;
    size_t len = size - ref.len - 1;
    floe_avro_schema_t *s;
    floe_err_t err;
    if (floe_avro_schema_parse_refs(text, len, &ref, 1, &s, &err) != 0) return;
    char *own = floe_avro_schema_to_json_own(s, &err);
    char *c1 = floe_avro_schema_canonical(s, &err);
    if (own && c1) {
        floe_avro_schema_t *s2;
        if (floe_avro_schema_parse_refs(own, strlen(own), &ref, 1, &s2, &err) != 0) abort();
        char *c2 = floe_avro_schema_canonical(s2, &err);
        if (!c2 || strcmp(c1, c2) != 0) abort();
        free(c2);
        floe_avro_schema_free(s2);
    }
    free(own);
    free(c1);
    floe_avro_schema_free(s);
}

static void resolved(const uint8_t *data, size_t size)
{
    floe_arena_t a;
    floe_arena_init(&a, 0, 8 << 20);
    floe_slice_t in = floe_slice(data, size);
    floe_avro_value_t *v;
    floe_err_t err;
    if (floe_avro_resolver_decode(resolver, &in, &a, &v, &err) == 0) {
        if (floe_avro_value_schema(v) != reader) abort();
        floe_buf_t b = FLOE_BUF_INIT;
        if (floe_avro_encode(v, &b, &err) != 0) abort(); /* a complete reader value */
        floe_buf_free(&b);
    }
    floe_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!schema) {
        floe_err_t err;
        if (floe_avro_schema_parse(SCHEMA, strlen(SCHEMA), &schema, &err) != 0 ||
            floe_avro_schema_parse(READER, strlen(READER), &reader, &err) != 0 ||
            floe_avro_resolver_new(schema, reader, &resolver, &err) != 0)
            abort();
    }
    if (size == 0) return 0;
    switch (data[0] % 4) {
    case 0: container(data + 1, size - 1); break;
    case 1: datum(data + 1, size - 1); break;
    case 2: /* a NUL byte: a reference, then the schema */
        if (memchr(data + 1, 0, size - 1)) with_reference(data + 1, size - 1);
        else
            schema_text(data + 1, size - 1);
        break;
    default: resolved(data + 1, size - 1); break;
    }
    return 0;
}
